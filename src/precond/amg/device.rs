//! The AMG preconditioner on a backend: the hierarchy set up on the host ([`Hierarchy`]) and
//! uploaded, one V-cycle per application from backend kernels only (`spmv`, `residual`,
//! `diag_scale`, `axpby`, `copy`), the same cycle as [`Hierarchy::vcycle_host`].
//!
//! Per level and Jacobi sweep pair (one sweep before, one after the coarse correction) a cycle
//! launches 8 kernels: x = s .* b (the first sweep from x = 0), r = b - A x, b_c = R r, the
//! coarse cycle, t = P x_c, x += t, then r = b - A x, t = s .* r, x += t; the coarsest level
//! is one product with its dense inverse. No host transfer.

use super::device_setup;
use super::hierarchy::{Hierarchy, LevelPattern};
pub(super) use super::level::DeviceLevel;
use super::options::{AmgOptions, AmgPrecision, Smoother};
use super::smoother::LevelSmoother;
use crate::backend::{
    collective_result, Backend, Buffer, CsrUpdate, DeviceMatrix, MatrixFormat, Partials,
};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::device_a::{trusted_fingerprint, DeviceA};
use crate::precond::{Preconditioner, SetupTimes};
use crate::scalar::{Precision, Scalar};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Right-hand side and solution of a level below the finest (the finest uses the caller's r
/// and z).
#[derive(Debug)]
struct CoarseVectors<T> {
    b: Buffer<T>,
    x: Buffer<T>,
}

/// The scratch vectors of a smoothed level: residual, a product and Chebyshev's direction
/// (empty for the Jacobi smoothers).
#[derive(Debug)]
struct LevelScratch<T> {
    r: Buffer<T>,
    t: Buffer<T>,
    d: Buffer<T>,
}

/// The workspace of one application.
#[derive(Debug)]
struct Work<T> {
    /// Levels 1 ..= the coarsest.
    vectors: Vec<CoarseVectors<T>>,
    /// Levels 0 .. the coarsest (excluded).
    scratch: Vec<LevelScratch<T>>,
    /// Partials the residual kernel wants (no slot is written).
    partials: Partials<T>,
}

/// Algebraic multigrid by smoothed aggregation as a preconditioner: one V-cycle per
/// application (symmetric with as many sweeps before as after, so CG may use it).
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, MatrixFormat, SpmvOps, VectorOps};
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::{Amg, AmgOptions};
/// use pipekrylov::solver::{Cg, Params};
/// let a = Generator::Poisson2d.generate_with_param::<f64>(100).unwrap().matrix;
/// let host = HostBackend::new();
/// let amg = Amg::new(&host, &a, AmgOptions::default()).unwrap();
/// let m = host.upload_matrix(&a, MatrixFormat::Csr).unwrap();
/// let b = host.upload(&vec![1.0; a.n_rows()]).unwrap();
/// let mut x = host.alloc(a.n_rows()).unwrap();
/// let report = Cg::new(&host, &m, Some(&amg), Params::default()).unwrap().solve(&b, &mut x).unwrap();
/// assert!(report.stop_reason.converged() && report.iterations <= 15);
/// ```
#[derive(Debug)]
pub struct Amg<T> {
    pub(super) n: usize,
    pub(super) options: AmgOptions,
    pub(super) levels: Vec<DeviceLevel<T>>,
    pub(super) coarse_inverse: DeviceMatrix<T>,
    work: Mutex<Work<T>>,
    /// Rows and nonzeros per level (the coarsest last), operator and grid complexity.
    pub(super) stats: Vec<(usize, usize)>,
    pub(super) operator_complexity: f64,
    pub(super) grid_complexity: f64,
    pub(super) times: SetupTimes,
    pub(super) memory: usize,
    pub(super) fingerprint: u64,
    launches: usize,
    /// The symbolic setup of every level above the coarsest (strong couplings, aggregates),
    /// kept on the host for [`Preconditioner::update_values`] (none when set up on the
    /// device).
    pub(super) patterns: Vec<Arc<LevelPattern>>,
    /// Where the time of a setup on the device
    /// ([`AmgSetup::Device`](crate::precond::AmgSetup::Device)) went; `None` for a setup on the
    /// host.
    pub(super) on_device: Option<device_setup::SetupPhases>,
    /// The symbolic setup of every level above the coarsest kept on the device for
    /// [`Preconditioner::update_values`] (empty for a setup on the host).
    pub(super) device_kept: Vec<device_setup::KeptLevel>,
    /// Where the time of the last values refresh on the device went (`None` before one).
    pub(super) refresh_phases: Option<device_setup::SetupPhases>,
    /// The single-precision hierarchy that replaces this one's levels
    /// ([`AmgPrecision::F32`] in a double-precision solve; `levels` is then empty).
    pub(super) narrow: Option<Box<Narrow>>,
    /// Set up across the ranks of a distributed backend (`Amg::new_distributed`): every
    /// rank runs the cycle, even one without rows, for its collective products.
    pub(super) distributed: bool,
}

/// A single-precision hierarchy inside a solve of another precision ([`AmgPrecision::F32`]):
/// the f32 preconditioner, and the f32 residual and correction of the cycle's entry and exit.
#[derive(Debug)]
pub(super) struct Narrow {
    pub(super) amg: Amg<f32>,
    vectors: Mutex<(Buffer<f32>, Buffer<f32>)>,
}

impl<T: Scalar> Amg<T> {
    /// Set up the hierarchy of `a` on the host ([`Hierarchy::build`]) and upload it.
    ///
    /// Errors: those of [`Hierarchy::build`] (not square, non-finite entries, a zero or
    /// negative diagonal, a matrix that does not coarsen, a singular coarsest level, options
    /// out of range) and device errors (out of memory included). With a distributed backend
    /// it is the rank's diagonal block's AMG (block-Jacobi) and a failure on one rank is an
    /// error on every rank.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>, options: AmgOptions) -> Result<Self> {
        Self::new_on(backend, a, None, options)
    }

    /// [`Amg::new`] with the solver's device copy of `a`: a setup on the device reads A there
    /// and the cycle shares its arrays instead of uploading its own, when `device` is a CSR
    /// matrix of `a`'s shape on `backend` (one process); any other `device` is ignored. Its
    /// values are taken as `a`'s (it is not compared with `a`, whose hash would cost as much as
    /// a phase of the setup at millions of rows), and the preconditioner is built for its
    /// fingerprint. The host setup reads `a` alone.
    pub fn new_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        options: AmgOptions,
    ) -> Result<Self> {
        let local = Self::new_local(backend, a, device, options);
        collective_result(backend, "the AMG setup", local)
    }

    fn new_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        options: AmgOptions,
    ) -> Result<Self> {
        if options.precision == AmgPrecision::F32 && T::PRECISION == Precision::F64 {
            let options = options.for_contrast(super::options::diagonal_contrast(a));
            return Self::new_narrow(backend, a, device, options);
        }
        // (The high-contrast rule's options: the device setup finds the diagonal's extremes
        // there, the host setup on the host.)
        if options.sets_up_on_device(backend) {
            return Self::new_on_device(backend, a, device, options);
        }
        let options = options.for_contrast(super::options::diagonal_contrast(a));
        let t0 = Instant::now();
        let hierarchy = Hierarchy::build(a, &options)?;
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let mut levels = Vec::with_capacity(hierarchy.levels().len());
        for level in hierarchy.levels() {
            let smoother = level.smoother();
            let (chebyshev, s_first) = smoother_scalings(smoother);
            levels.push(DeviceLevel {
                a: backend.upload_matrix(level.a(), MatrixFormat::Csr)?,
                p: backend.upload_matrix(level.p(), MatrixFormat::Csr)?,
                r: backend.upload_matrix(level.r(), MatrixFormat::Csr)?,
                s: backend.upload(smoother.scaled_inv_diag())?,
                s_first: backend.upload(&s_first)?,
                chebyshev,
                patterns: [level.a(), level.p(), level.r()].map(CsrMatrix::pattern_fingerprint),
            });
        }
        let coarse_inverse =
            backend.upload_matrix(hierarchy.coarsest().inverse(), MatrixFormat::Csr)?;
        let stats = hierarchy
            .level_stats()
            .iter()
            .map(|s| (s.rows, s.nnz))
            .collect();
        let mut amg = Self::assemble(
            backend,
            a.n_rows(),
            a.fingerprint(),
            options,
            levels,
            coarse_inverse,
            stats,
        )?;
        amg.times = SetupTimes {
            host_seconds,
            device_seconds: t1.elapsed().as_secs_f64(),
        };
        amg.patterns = hierarchy.patterns();
        Ok(amg)
    }

    /// The setup on the device ([`AmgSetup::Device`](crate::precond::AmgSetup::Device)), with
    /// the options of [`AmgOptions::for_contrast`] for the diagonal contrast found there: the
    /// coarsest level's inversion is the host part of the setup time.
    fn new_on_device<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        options: AmgOptions,
    ) -> Result<Self> {
        let t0 = Instant::now();
        device_setup::check_input(a, &options)?;
        let fingerprint = trusted_fingerprint(a, device);
        let first = DeviceA::of(backend, a, device, fingerprint)?;
        let options =
            options.for_contrast(super::from_device::diagonal_contrast(backend, first.get())?);
        Self::from_device_a(backend, first, Some(a), fingerprint, options, t0)
    }

    /// The setup on the device from A there (`first`; `fallback`: A on the host, see
    /// [`device_setup::build`]), built for `fingerprint`, its time counted from `t0`.
    pub(super) fn from_device_a<B: Backend>(
        backend: &B,
        first: DeviceA<'_, T>,
        fallback: Option<&CsrMatrix<T>>,
        fingerprint: u64,
        options: AmgOptions,
        t0: Instant,
    ) -> Result<Self> {
        let n = first.get().n_rows();
        let built = device_setup::build(backend, first, fallback, &options)?;
        let coarse_inverse = backend.upload_matrix(&built.coarse_inverse, MatrixFormat::Csr)?;
        let mut amg = Self::assemble(
            backend,
            n,
            fingerprint,
            options,
            built.levels,
            coarse_inverse,
            built.stats,
        )?;
        let total = t0.elapsed().as_secs_f64();
        amg.times = SetupTimes {
            host_seconds: built.host_seconds,
            device_seconds: total - built.host_seconds,
        };
        amg.on_device = Some(built.phases);
        amg.memory += built
            .kept
            .iter()
            .map(device_setup::KeptLevel::bytes)
            .sum::<usize>();
        amg.device_kept = built.kept;
        Ok(amg)
    }

    /// The single-precision hierarchy of `a` ([`AmgPrecision::F32`]) set up where the options
    /// say (on the device: from the solver's copy rounded there, its index arrays shared; on the
    /// host: from `a` rounded there), wrapped with the f32 vectors of the cycle's entry and exit.
    fn new_narrow<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        options: AmgOptions,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let inner_options = AmgOptions {
            precision: AmgPrecision::Solve,
            ..options
        };
        let (amg, fingerprint) = if options.sets_up_on_device(backend) {
            device_setup::check_input(a, &options)?;
            let fingerprint = trusted_fingerprint(a, device);
            let first = DeviceA::<f32>::narrowed(backend, a, device, fingerprint)?;
            let amg =
                Amg::<f32>::from_device_a(backend, first, None, fingerprint, inner_options, t0)?;
            (amg, fingerprint)
        } else {
            // (A value beyond f32's range rounds to infinity: the setup's NonFinite error.)
            let amg = Amg::<f32>::new_local(backend, &a.cast::<f32>(), None, inner_options)?;
            (amg, a.fingerprint())
        };
        Self::wrap_narrow(backend, amg, a.n_rows(), fingerprint, options, t0)
    }

    /// The f32 hierarchy `amg` of an n-row matrix of `fingerprint` as a preconditioner of this
    /// precision: the f32 vectors of the cycle's entry and exit allocated, times counted from
    /// `t0`.
    pub(super) fn wrap_narrow<B: Backend>(
        backend: &B,
        amg: Amg<f32>,
        n: usize,
        fingerprint: u64,
        options: AmgOptions,
        t0: Instant,
    ) -> Result<Self> {
        let vectors = (backend.alloc::<f32>(n)?, backend.alloc::<f32>(n)?);
        let none = CsrMatrix::<T>::new(0, 0, vec![0], Vec::new(), Vec::new())?;
        let none = backend.upload_matrix(&none, MatrixFormat::Csr)?;
        let mut outer = Self::assemble(
            backend,
            n,
            fingerprint,
            options,
            Vec::new(),
            none,
            amg.stats.clone(),
        )?;
        outer.times = SetupTimes {
            host_seconds: amg.times.host_seconds,
            device_seconds: t0.elapsed().as_secs_f64() - amg.times.host_seconds,
        };
        outer.memory = amg.memory + 2 * n * std::mem::size_of::<f32>();
        // The rounding of r and the widening of z.
        outer.launches = amg.launches + 2;
        outer.on_device = amg.on_device;
        outer.narrow = Some(Box::new(Narrow {
            amg,
            vectors: Mutex::new(vectors),
        }));
        Ok(outer)
    }

    /// The preconditioner of `levels` and the coarsest inverse: the cycle's vectors and
    /// scratch allocated, the memory and complexities counted (times and kept patterns are
    /// the caller's).
    pub(super) fn assemble<B: Backend>(
        backend: &B,
        n: usize,
        fingerprint: u64,
        options: AmgOptions,
        levels: Vec<DeviceLevel<T>>,
        coarse_inverse: DeviceMatrix<T>,
        stats: Vec<(usize, usize)>,
    ) -> Result<Self> {
        let mut vectors = Vec::with_capacity(levels.len());
        let mut scratch = Vec::with_capacity(levels.len());
        let mut memory = coarse_inverse.device_bytes();
        for (l, dl) in levels.iter().enumerate() {
            let n = dl.a.n_rows();
            memory += dl.a.device_bytes()
                + dl.p.device_bytes()
                + dl.r.device_bytes()
                + dl.s.bytes()
                + dl.s_first.bytes();
            // The finest level's b and x are the caller's r and z.
            if l > 0 {
                vectors.push(CoarseVectors {
                    b: backend.alloc(n)?,
                    x: backend.alloc(n)?,
                });
                memory += 2 * n * std::mem::size_of::<T>();
            }
            let d_len = if dl.chebyshev.0 > 0.0 { n } else { 0 };
            scratch.push(LevelScratch {
                r: backend.alloc(n)?,
                t: backend.alloc(n)?,
                d: backend.alloc(d_len)?,
            });
            memory += (2 * n + d_len) * std::mem::size_of::<T>();
        }
        // The coarsest level's b and x when it is not the finest.
        if !levels.is_empty() {
            let nc = coarse_inverse.n_rows();
            vectors.push(CoarseVectors {
                b: backend.alloc(nc)?,
                x: backend.alloc(nc)?,
            });
            memory += 2 * nc * std::mem::size_of::<T>();
        }
        let work = Work {
            vectors,
            scratch,
            partials: backend.partials(1, 1)?,
        };
        backend.synchronize()?;
        let launches = cycle_launches(&options, levels.len());
        let (operator_complexity, grid_complexity) = complexities(&stats);
        Ok(Self {
            n,
            options,
            levels,
            coarse_inverse,
            work: Mutex::new(work),
            stats,
            operator_complexity,
            grid_complexity,
            times: SetupTimes::default(),
            memory,
            fingerprint,
            launches,
            patterns: Vec::new(),
            on_device: None,
            device_kept: Vec::new(),
            refresh_phases: None,
            narrow: None,
            distributed: false,
        })
    }

    /// Levels, the coarsest included.
    pub fn num_levels(&self) -> usize {
        self.stats.len()
    }

    /// Rows and nonzeros of every level, the finest first.
    pub fn level_sizes(&self) -> &[(usize, usize)] {
        &self.stats
    }

    /// Sum of the levels' nonzeros over the finest level's.
    pub fn operator_complexity(&self) -> f64 {
        self.operator_complexity
    }

    /// Sum of the levels' rows over the finest level's.
    pub fn grid_complexity(&self) -> f64 {
        self.grid_complexity
    }

    /// `sweeps` smoothing sweeps on level `l`: x += poly(D^-1 A) D^-1 (b - A x); from x = 0
    /// when `from_zero` (the first sweep then needs no product).
    #[allow(clippy::too_many_arguments)]
    fn smooth<B: Backend>(
        &self,
        backend: &B,
        l: usize,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        w: &mut LevelScratch<T>,
        scratch: &mut Partials<T>,
        sweeps: usize,
        mut from_zero: bool,
    ) -> Result<()> {
        let level = &self.levels[l];
        let LevelScratch { r, t, d } = w;
        for _ in 0..sweeps {
            match self.options.smoother {
                Smoother::Jacobi | Smoother::L1Jacobi => {
                    if from_zero {
                        // x = s .* b
                        backend.diag_scale(&level.s, b, x)?;
                    } else {
                        // r = b - A x; t = s .* r; x += t
                        backend.residual(&level.a, x, b, r, scratch, None)?;
                        backend.diag_scale(&level.s, r, t)?;
                        backend.axpby(T::one(), t, T::one(), x)?;
                    }
                }
                Smoother::Chebyshev { degree } => {
                    let (theta, delta) = level.chebyshev;
                    let sigma = theta / delta;
                    let mut rho = 1.0 / sigma;
                    // d = s .* (b - A x) / theta
                    if from_zero {
                        backend.diag_scale(&level.s_first, b, d)?;
                        backend.copy(d, x)?;
                    } else {
                        backend.residual(&level.a, x, b, r, scratch, None)?;
                        backend.diag_scale(&level.s_first, r, d)?;
                        backend.axpby(T::one(), d, T::one(), x)?;
                    }
                    for _ in 1..degree {
                        // r = s .* (b - A x); d = rho' rho d + (2 rho' / delta) r; x += d
                        backend.residual(&level.a, x, b, r, scratch, None)?;
                        backend.diag_scale(&level.s, r, t)?;
                        let rho_next = 1.0 / (2.0 * sigma - rho);
                        backend.axpby(
                            T::from_f64(2.0 * rho_next / delta),
                            t,
                            T::from_f64(rho_next * rho),
                            d,
                        )?;
                        backend.axpby(T::one(), d, T::one(), x)?;
                        rho = rho_next;
                    }
                }
            }
            from_zero = false;
        }
        Ok(())
    }

    /// The V-cycle from level `l`: `b`, `x` are level l's right-hand side and solution,
    /// `vectors` those of levels l + 1 ..= the coarsest, `scratch` the scratch of levels l ..
    /// the coarsest.
    #[allow(clippy::too_many_arguments)]
    fn cycle<B: Backend>(
        &self,
        backend: &B,
        l: usize,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        vectors: &mut [CoarseVectors<T>],
        scratch: &mut [LevelScratch<T>],
        partials: &mut Partials<T>,
    ) -> Result<()> {
        let (Some((coarse, deeper)), Some((w, deeper_scratch))) =
            (vectors.split_first_mut(), scratch.split_first_mut())
        else {
            // The coarsest level: x = A_c^-1 b.
            return backend.spmv(&self.coarse_inverse, b, x);
        };
        let level = &self.levels[l];
        let pre = self.options.pre_sweeps;
        if pre == 0 {
            backend.fill(x, T::zero())?;
        }
        self.smooth(backend, l, b, x, w, partials, pre, true)?;
        // r = b - A x; b_c = R r
        backend.residual(&level.a, x, b, &mut w.r, partials, None)?;
        backend.spmv(&level.r, &w.r, &mut coarse.b)?;
        self.cycle(
            backend,
            l + 1,
            &coarse.b,
            &mut coarse.x,
            deeper,
            deeper_scratch,
            partials,
        )?;
        let post = self.options.post_sweeps;
        if matches!(self.options.smoother, Smoother::Chebyshev { .. }) {
            // x += P x_c
            backend.spmv(&level.p, &coarse.x, &mut w.t)?;
            backend.axpby(T::one(), &w.t, T::one(), x)?;
            return self.smooth(backend, l, b, x, w, partials, post, false);
        }
        // x += P x_c, then the post-sweeps x = x + s (b - A x), each one fused kernel
        // (`csr_update`): with an odd number of sweeps the correction goes to t and the sweeps
        // alternate t -> x -> t ..., with an even one it goes to x in place, so the last
        // sweep writes x.
        let LevelScratch { r, t, .. } = w;
        let in_t = post % 2 == 1;
        if in_t {
            let add = CsrUpdate::Add { base: Some(x) };
            backend.csr_update(&level.p, &coarse.x, add, t, r)?;
        } else {
            let add = CsrUpdate::Add { base: None };
            backend.csr_update(&level.p, &coarse.x, add, x, r)?;
        }
        let sweep = CsrUpdate::Sweep { b, s: &level.s };
        for k in 0..post {
            if in_t == (k % 2 == 0) {
                backend.csr_update(&level.a, t, sweep, x, r)?;
            } else {
                backend.csr_update(&level.a, x, sweep, t, r)?;
            }
        }
        Ok(())
    }
}

/// Chebyshev's (theta, delta) and the first step's scaling s / theta of `smoother` (zeros and
/// an empty vector for the Jacobi smoothers).
pub(super) fn smoother_scalings<T: Scalar>(smoother: &LevelSmoother<T>) -> ((f64, f64), Vec<T>) {
    let chebyshev = match smoother.kind() {
        Smoother::Chebyshev { .. } => {
            let (lower, upper) = smoother.bounds();
            ((upper + lower) / 2.0, (upper - lower) / 2.0)
        }
        _ => (0.0, 0.0),
    };
    let s_first: Vec<T> = if chebyshev.0 > 0.0 {
        let theta = T::from_f64(chebyshev.0);
        smoother
            .scaled_inv_diag()
            .iter()
            .map(|&s| s / theta)
            .collect()
    } else {
        Vec::new()
    };
    (chebyshev, s_first)
}

/// Kernel launches of one V-cycle over `levels` smoothed levels.
fn cycle_launches(options: &AmgOptions, levels: usize) -> usize {
    let per_sweep = match options.smoother {
        Smoother::Jacobi | Smoother::L1Jacobi => 3,
        Smoother::Chebyshev { degree } => 3 + 4 * (degree - 1),
    };
    // The first pre-sweep from zero saves the residual (Jacobi: 1 launch instead of 3;
    // Chebyshev: 2 instead of 3).
    let first_saving = match options.smoother {
        Smoother::Jacobi | Smoother::L1Jacobi => 2,
        Smoother::Chebyshev { .. } => 1,
    };
    // No pre-sweep: x = 0 is one fill.
    let pre = if options.pre_sweeps == 0 {
        1
    } else {
        options.pre_sweeps * per_sweep - first_saving
    };
    // The correction and the post-sweeps: one launch each, fused, for the Jacobi smoothers.
    let post = match options.smoother {
        Smoother::Jacobi | Smoother::L1Jacobi => 1 + options.post_sweeps,
        Smoother::Chebyshev { .. } => 2 + options.post_sweeps * per_sweep,
    };
    let per_level = pre + 1 + 1 + post;
    levels * per_level + 1
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Amg<T> {
    fn name(&self) -> &'static str {
        "amg"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        if r.len() != self.n || z.len() != self.n {
            return Err(Error::dims("AMG: vector length vs rows", self.n, r.len()));
        }
        if self.n == 0 && !self.distributed {
            return Ok(());
        }
        if let Some(narrow) = &self.narrow {
            // The cycle in single precision: r rounded, z widened.
            let mut guard = narrow
                .vectors
                .lock()
                .map_err(|_| Error::PreconditionerSetup("AMG workspace poisoned".into()))?;
            let (r32, z32) = &mut *guard;
            backend.copy_to_f32(r, r32)?;
            Preconditioner::<B, f32>::apply(&narrow.amg, backend, r32, z32)?;
            return backend.copy_from_f32(z32, z);
        }
        let mut guard = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("AMG workspace poisoned".into()))?;
        let Work {
            vectors,
            scratch,
            partials,
        } = &mut *guard;
        self.cycle(backend, 0, r, z, vectors, scratch, partials)
    }
    fn launches_per_apply(&self) -> usize {
        self.launches
    }
    /// False: a V-cycle costs hundreds of microseconds at n >= 1M and CG converges in 10-30
    /// iterations, so the resident mode's batches cost more than they save. H200, 2D Poisson
    /// 4.19M, pipelined CG + AMG, 16 iterations: 1481 us per iteration resident, 1090
    /// synchronous (classical CG: 989).
    fn suits_device_resident(&self) -> bool {
        false
    }
    /// False: classical CG is faster with the cycle (H200, 2D Poisson 4.19M, 16 iterations:
    /// 987-989 us per iteration against 1090 pipelined), and the pipelined recurrences need more
    /// iterations with an f32 hierarchy (2D Poisson 512^2 to 1e-8: 19 against 14).
    fn suits_pipelined(&self) -> bool {
        false
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.memory
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({
            "coarsening": format!("{:?}", self.options.coarsening),
            "smoother": format!("{:?}", self.options.smoother),
            "pre_sweeps": self.options.pre_sweeps,
            "post_sweeps": self.options.post_sweeps,
            "strength": self.options.strength,
            "strength_decay": self.options.strength_decay,
            "high_contrast": if self.options.high_contrast.is_finite() {
                serde_json::json!(self.options.high_contrast)
            } else {
                serde_json::json!("inf")
            },
            "coarse_size": self.options.coarse_size,
            "block_size": self.options.block_size,
            "levels": self.stats.len(),
            "level_rows": self.stats.iter().map(|s| s.0).collect::<Vec<_>>(),
            "level_nnz": self.stats.iter().map(|s| s.1).collect::<Vec<_>>(),
            "operator_complexity": self.operator_complexity,
            "grid_complexity": self.grid_complexity,
            "setup": if self.distributed {
                "across the ranks, on their hosts (aggregates within each rank), uploaded"
            } else if self.on_device.is_some() {
                "on the device (MIS-2 aggregation, device SpGEMM; coarsest inverted on the host)"
            } else {
                "hierarchy on the host, uploaded"
            },
            "precision": match &self.narrow {
                Some(_) => "f32",
                None => if T::PRECISION == Precision::F64 { "f64" } else { "f32" },
            },
            "setup_phases_s": self.on_device,
            "refresh_phases_s": self.refresh_phases,
        })
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    /// Keeps every level's strong couplings and aggregates (so the tentative prolongators,
    /// the level count and the coarse sizes) and runs the numeric phase of the setup on the
    /// host for the new values ([`Hierarchy::refresh`]): the filtered matrices, the
    /// prolongators' weights (power iterations) and the smoothed prolongators, R = P^T, the
    /// coarse operators R (A P) (the first refresh runs the host SpGEMM and the transpose and
    /// keeps the patterns of A P and R A P and R's pattern with its entries' positions in P
    /// on the host, index arrays of nnz(A P) + nnz(A_{l+1}) + 2 nnz(P) words per level; the
    /// next ones run only the products' numeric phase on them, 2-3x faster, and gather R's
    /// values), the smoothers' data and the coarsest inverse. The new values are then
    /// written into the device arrays in place (operators, transfers, smoother scalings,
    /// coarsest inverse: their patterns follow from the kept aggregates and `a`'s pattern, so
    /// they are unchanged); a matrix whose pattern did change (`a` of another pattern, which
    /// a direct caller may pass) is uploaded anew, and [`crate::precond::ValuesRefresh::kept`]
    /// names its level. Equals a fresh [`Amg::new`] on `a` wherever that would find the same
    /// strong couplings. `device` is not used by a hierarchy set up on the host.
    ///
    /// Errors (the preconditioner unchanged): `a` of another size
    /// ([`Error::PatternMismatch`]), what the numeric phase of [`Hierarchy::build`] reports
    /// (a NaN, a zero or negative diagonal entry on a level, a singular coarsest matrix). A
    /// device error while writing, after every check passed, leaves some levels with the new
    /// values: the preconditioner then refuses every matrix (`built_for` matches none).
    ///
    /// A hierarchy set up on the device ([`super::AmgSetup::Device`]) keeps its strong
    /// couplings and aggregates on the device (one `u32` per entry and per row of every level
    /// above the coarsest, counted in the report's memory) and runs the numeric phase there
    /// with the setup's kernels: the diagonals, the prolongators' weights and rows, R's values,
    /// A P, the values of R (A P) on the kept pattern of the next level, the smoothers' data;
    /// the coarsest level is downloaded and inverted on the host. Everything is computed into
    /// new arrays and swapped in at the end, so a numeric error leaves the preconditioner as it
    /// was. `device` (the solver's copy with the new values) is read, and shared by the finest
    /// level, as in the setup; without it `a` is uploaded.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<crate::precond::ValuesRefresh> {
        self.refresh(backend, a, device)
    }

    /// The device refresh of a hierarchy set up on the device in the solve's precision, from
    /// `device` alone (the finest level shares its arrays); `Unsupported` for the host setup and
    /// the f32 hierarchy, which refresh from the matrix on the host.
    fn update_values_on_device(
        &mut self,
        backend: &B,
        device: &DeviceMatrix<T>,
    ) -> Result<crate::precond::ValuesRefresh> {
        self.refresh_from_device(backend, device)
    }
}

/// Operator and grid complexity of levels of (rows, nonzeros): their sums over the finest
/// level's (1 when that is 0).
fn complexities(stats: &[(usize, usize)]) -> (f64, f64) {
    let ratio = |size: fn(&(usize, usize)) -> usize| {
        let fine = stats.first().map_or(0, size);
        if fine == 0 {
            1.0
        } else {
            stats.iter().map(size).sum::<usize>() as f64 / fine as f64
        }
    };
    (ratio(|s| s.1), ratio(|s| s.0))
}
