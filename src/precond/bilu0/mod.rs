//! BILU(0) on BSR with exact (level-scheduled) or inexact (block-Jacobi sweep) triangular
//! solves, and block-Jacobi over P subdomains with BILU(0) on each diagonal block (\[Ma21a\],
//! Sections 3.3-3.4, equations (10)-(11), Algorithms 6-7).

mod device;
pub(crate) mod factor;
mod levels;

pub use device::Factorization;
pub(crate) use device::{factor_on, split_pattern, SplitPattern};
pub(crate) use factor::singular as factor_singular;
pub use factor::{bilu0, drop_couplings, subdomain_of, BiluFactors};
pub use levels::Levels;

use super::device_a::DeviceA;
use super::{Preconditioner, SetupTimes};
use crate::backend::ops::trsv_levels::levels_group;
use crate::backend::{
    collective_result, Backend, BlockTriangular, Buffer, DeviceMatrix, MAX_BLOCK_SIZE,
};
use crate::error::{Error, Result};
use crate::matrix::{BsrMatrix, CsrMatrix};
use crate::scalar::Scalar;
use std::sync::Mutex;
use std::time::Instant;

/// How the triangular systems L f = r and U z = f are solved at every application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriangularSolve {
    /// Exactly, level by level: the baseline of \[Ma21a\] (cuSPARSE's `bsrsv2` in the paper).
    /// One launch per level, except that on CUDA and OpenCL a run of consecutive levels of at
    /// most 256 block rows each is one launch (one work-group, a barrier between levels): a
    /// chain-like factor (olm500: 751 levels) takes one or two. H200, GMRES(30) + ILU on
    /// olm500: 0.094 -> 0.012 s (CUDA), 0.158 -> 0.015 s (NVIDIA OpenCL).
    Exact,
    /// Inexactly, by K block-Jacobi sweeps per factor starting from zero (\[Ma21a\] Algorithm
    /// 7, K = it_max): x_{k+1} = D^-1 (b - (T - D) x_k). K launches per factor. K at least the
    /// number of levels gives the exact solve.
    Sweeps(usize),
    /// Chosen at setup from the factors' level counts and the device (the default):
    /// [`TriangularSolve::Exact`] on a CPU or where the two factors have at most
    /// [`AUTO_EXACT_MAX_LEVELS`] levels together, otherwise
    /// [`TriangularSolve::Sweeps`]`(`[`AUTO_SWEEPS`]`)`: on a GPU every wide level is one
    /// launch, so a factor with thousands of levels (a 2D grid in its natural order has about
    /// 2 sqrt(n)) costs milliseconds per application exactly. The preconditioner's parameters
    /// report which ran and why. (The level counts of this rule were measured before runs of
    /// narrow levels shared a launch; the rule still counts levels.)
    Auto,
}

/// Most levels (L's and U's together) for which [`TriangularSolve::Auto`] solves exactly on a
/// GPU. Measured on the H200 (BiCGStab + BILU(0), b = A 1, rtol 1e-8, CUDA and NVIDIA OpenCL;
/// `bench/results/h200-2026-11-28-trisolve/`): an exact level costs 3.5-4.9 us (one launch),
/// an application with 3 sweeps per factor 25-120 us, and the exact solve took 0.55-1.0x the
/// sweeps' iterations, so the exact solve is faster below about 9-47 levels (the model's
/// crossover on these matrices); every matrix measured had 174-4094 levels, where the sweeps
/// won 8-50x in time to solution (2D Poisson 1M: 0.39 s against 20.6 s). 20 is inside the
/// crossover range; no matrix with so few levels was measured.
pub const AUTO_EXACT_MAX_LEVELS: usize = 20;

/// Sweeps per factor of [`TriangularSolve::Auto`] when it does not solve exactly: 2 and 3 took
/// the same solve time within 4% summed over the matrices measured (1 was up to 1.5x slower on
/// the small ones); 3 takes fewer iterations, the more robust choice.
pub const AUTO_SWEEPS: usize = 3;

/// Largest [`BiluFactors::sweep_relative_error`] of [`AUTO_SWEEPS`] sweeps for which
/// [`TriangularSolve::Auto`] takes sweeps on a GPU; beyond it the solve is exact (slower per
/// application on many levels, but the preconditioner that was factored). Measured
/// (2026-11-29, host): 0.06-0.23 on the BILU(0) factors of the 5-point, 7-point, FEM,
/// jump, convection-diffusion and elasticity generators, where 3 sweeps converged in 1.0-1.4x
/// the exact solve's iterations on the H200 (`bench/results/h200-2026-11-28-trisolve/`);
/// 0.67 on the ILUT factors of 494_bus and 1.7-11 on the factors of olm500/olm1000, where
/// GMRES(30) with 3 sweeps stalled for 3000 iterations on the H200 and converges in 1-27 with
/// the exact solve. aniso2d (0.95) moves to the exact solve by this rule, unmeasured.
pub const AUTO_SWEEP_MAX_RELATIVE_ERROR: f64 = 0.5;

impl TriangularSolve {
    /// The solve `Auto` resolves to for factors of `levels` levels (L's and U's together) on a
    /// device that is a GPU or not, whose [`AUTO_SWEEPS`] sweeps are `sweep_error` away from
    /// the exact solve ([`BiluFactors::sweep_relative_error`], when the factors were on the
    /// host to measure it), and why; `Exact` and `Sweeps` resolve to themselves.
    pub fn resolve(
        self,
        levels: usize,
        gpu: bool,
        sweep_error: Option<f64>,
    ) -> (TriangularSolve, String) {
        match self {
            TriangularSolve::Auto if !gpu => (
                TriangularSolve::Exact,
                format!("auto: exact on a CPU device ({levels} levels cost no launches)"),
            ),
            TriangularSolve::Auto if levels <= AUTO_EXACT_MAX_LEVELS => (
                TriangularSolve::Exact,
                format!("auto: exact, {levels} levels <= {AUTO_EXACT_MAX_LEVELS}"),
            ),
            TriangularSolve::Auto
                if sweep_error.is_some_and(|q| q.is_nan() || q > AUTO_SWEEP_MAX_RELATIVE_ERROR) =>
            {
                (
                    TriangularSolve::Exact,
                    format!(
                        "auto: exact on {levels} levels, since {AUTO_SWEEPS} sweeps are far from \
                         it on these factors (relative error {:.2e} > \
                         {AUTO_SWEEP_MAX_RELATIVE_ERROR})",
                        sweep_error.unwrap_or(f64::NAN)
                    ),
                )
            }
            TriangularSolve::Auto => (
                TriangularSolve::Sweeps(AUTO_SWEEPS),
                format!(
                    "auto: sweeps:{AUTO_SWEEPS}, {levels} levels > {AUTO_EXACT_MAX_LEVELS} \
                     (one launch each on a GPU)"
                ),
            ),
            fixed => (fixed, "requested".into()),
        }
    }
}

impl std::fmt::Display for TriangularSolve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TriangularSolve::Exact => f.write_str("exact"),
            TriangularSolve::Sweeps(k) => write!(f, "sweeps:{k}"),
            TriangularSolve::Auto => f.write_str("auto"),
        }
    }
}

impl std::str::FromStr for TriangularSolve {
    type Err = Error;
    /// `auto`, `exact` or `sweeps:K` with K >= 1.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::param(
                "trisolve",
                format!("'{s}' is not a triangular solve (auto, exact or sweeps:K with K >= 1)"),
            )
        };
        match s.split_once(':') {
            None if s == "exact" => Ok(Self::Exact),
            None if s == "auto" => Ok(Self::Auto),
            Some(("sweeps", k)) => match k.parse::<usize>() {
                Ok(k) if k >= 1 => Ok(Self::Sweeps(k)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

/// Options of [`Bilu0`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bilu0Options {
    /// Block size s (1..=8); n must be a multiple of it.
    pub block_size: usize,
    /// Triangular solve (default [`TriangularSolve::Auto`]).
    pub solve: TriangularSolve,
    /// Number of contiguous subdomains P whose couplings are dropped (1 = plain BILU(0)).
    pub subdomains: usize,
    /// Where and how the factors are computed.
    pub factorization: Factorization,
}

impl Default for Bilu0Options {
    fn default() -> Self {
        Self {
            block_size: 1,
            solve: TriangularSolve::Auto,
            subdomains: 1,
            factorization: Factorization::Host,
        }
    }
}

/// Scratch vectors of one application: f = L^-1 r and the sweeps' second buffer.
#[derive(Debug)]
struct Work<T> {
    f: Buffer<T>,
    other: Buffer<T>,
}

/// Factors of a values-only refresh, before they replace the old ones.
enum NewFactors<T> {
    /// Computed on the host, to be written into the kept device arrays.
    Host(Box<BiluFactors<T>>),
    /// Computed on the device by the sweeps.
    Device(Box<(BlockTriangular<T>, BlockTriangular<T>)>),
}

/// BILU(0) preconditioner M = L U on the block pattern of A, applied as z = U^-1 (L^-1 r)
/// with the `trsv` kernels. With `subdomains` = P > 1 it is block-Jacobi: the blocks coupling
/// different contiguous parts are dropped before the factorization.
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::{Bilu0, Bilu0Options, Preconditioner, TriangularSolve};
/// let a = Generator::Poisson2d.generate_with_param::<f64>(8).unwrap().matrix;
/// let host = HostBackend::new();
/// let opts = Bilu0Options {
///     block_size: 2,
///     solve: TriangularSolve::Sweeps(3),
///     ..Bilu0Options::default()
/// };
/// let m = Bilu0::new(&host, &a, opts).unwrap();
/// // Two factors, three sweeps each.
/// assert_eq!(Preconditioner::<HostBackend, f64>::launches_per_apply(&m), 6);
/// ```
#[derive(Debug)]
pub struct Bilu0<T> {
    name: &'static str,
    opts: Bilu0Options,
    n: usize,
    l: BlockTriangular<T>,
    u: BlockTriangular<T>,
    /// Level rows on the device and level starts on the host (exact solve only).
    levels: Option<(Buffer<u32>, Levels, Buffer<u32>, Levels)>,
    /// Whether the exact solve groups runs of narrow levels (built on a backend that runs
    /// kernels: CUDA, OpenCL).
    grouped_levels: bool,
    /// Why the triangular solve in `opts.solve` runs (`Auto` resolved at setup).
    solve_reason: String,
    work: Mutex<Work<T>>,
    times: SetupTimes,
    fingerprint: u64,
    memory: usize,
}

impl<T: Scalar> Bilu0<T> {
    /// Factor `a` (on the host, or on the backend with [`Factorization::Sweeps`]) and keep
    /// the factors on the backend (with the levels for the exact solve).
    ///
    /// Errors: [`Error::InvalidParameter`] for a block size outside 1..=8, one that does not
    /// divide n, K = 0 sweeps or P = 0 subdomains; [`Error::SingularPivot`] naming the block
    /// row of a missing or singular pivot block; device errors from the uploads. With a
    /// distributed backend a failure on any rank is an error on every rank.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>, opts: Bilu0Options) -> Result<Self> {
        Self::new_on(backend, a, None, opts)
    }

    /// [`Self::new`] with the solver's device copy of `a`: the device factorization reads A
    /// there when it is a CSR upload of `a` (else it uploads its own CSR copy for the setup).
    pub fn new_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: Bilu0Options,
    ) -> Result<Self> {
        let name = if opts.subdomains > 1 {
            "block-jacobi"
        } else {
            "bilu0"
        };
        Self::build(backend, a, device, opts, name)
    }

    /// Block-Jacobi over `opts.subdomains` contiguous parts with BILU(0) on each diagonal
    /// block (reported as "block-jacobi" even for P = 1).
    pub fn block_jacobi<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        opts: Bilu0Options,
    ) -> Result<Self> {
        Self::block_jacobi_on(backend, a, None, opts)
    }

    /// [`Self::block_jacobi`] with the solver's device copy of `a` (see [`Self::new_on`]).
    pub fn block_jacobi_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: Bilu0Options,
    ) -> Result<Self> {
        Self::build(backend, a, device, opts, "block-jacobi")
    }

    /// [`Self::build_local`] agreed over the ranks of a distributed backend (RELIABILITY.md
    /// row 25: a singular pivot on one rank's block is an error on every rank).
    fn build<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: Bilu0Options,
        name: &'static str,
    ) -> Result<Self> {
        let local = Self::build_local(backend, a, device, opts, name);
        collective_result(backend, "the BILU(0) setup", local)
    }

    fn build_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: Bilu0Options,
        name: &'static str,
    ) -> Result<Self> {
        let t0 = Instant::now();
        check_options(a, &opts)?;
        let fingerprint = a.fingerprint();
        let checks_seconds = t0.elapsed().as_secs_f64();
        let (l, u, levels, times, sweep_error) = match opts.factorization {
            Factorization::Host => Self::factor_host(backend, a, &opts, name)?,
            Factorization::Sweeps(f) => {
                let (l, u, levels, times) =
                    Self::factor_device(backend, a, device, fingerprint, &opts, f, name)?;
                (l, u, levels, times, None)
            }
        };
        // `Auto` becomes exact or sweeps from the level counts (computed for it) and, with
        // host factors, how close the sweeps come to the exact solve on them.
        let total_levels = levels.as_ref().map_or(0, |(l, u)| l.count() + u.count());
        let (solve, solve_reason) = opts
            .solve
            .resolve(total_levels, backend.is_gpu(), sweep_error);
        let opts = Bilu0Options { solve, ..opts };
        let levels = levels.filter(|_| solve == TriangularSolve::Exact);
        let levels = match levels {
            Some((ll, ul)) => Some((ll.upload(backend)?, ll, ul.upload(backend)?, ul)),
            None => None,
        };
        let n = a.n_rows();
        let t1 = Instant::now();
        let work = Work {
            f: backend.alloc(n)?,
            other: backend.alloc(n)?,
        };
        backend.synchronize()?;
        let times = SetupTimes {
            host_seconds: checks_seconds + times.host_seconds,
            device_seconds: times.device_seconds + t1.elapsed().as_secs_f64(),
        };
        let memory = l.bytes()
            + u.bytes()
            + work.f.bytes()
            + work.other.bytes()
            + levels
                .as_ref()
                .map_or(0, |(lr, _, ur, _)| lr.bytes() + ur.bytes());
        Ok(Self {
            name,
            opts,
            n,
            l,
            u,
            levels,
            grouped_levels: !backend.kernel_runtime().is_host(),
            solve_reason,
            work: Mutex::new(work),
            times,
            fingerprint,
            memory,
        })
    }

    /// The factors from the host factorization, uploaded.
    #[allow(clippy::type_complexity)]
    fn factor_host<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        opts: &Bilu0Options,
        name: &'static str,
    ) -> Result<(
        BlockTriangular<T>,
        BlockTriangular<T>,
        Option<(Levels, Levels)>,
        SetupTimes,
        Option<f64>,
    )> {
        let t0 = Instant::now();
        let s = opts.block_size;
        let bsr = BsrMatrix::from_csr(a, s)?;
        let bsr = if opts.subdomains > 1 {
            drop_couplings(&bsr, opts.subdomains)
        } else {
            bsr
        };
        let f = factor::bilu0_owned(bsr, name)?;
        let levels = Self::levels_of(opts, &f.l_row_ptr, &f.l_col_idx, &f.u_row_ptr, &f.u_col_idx);
        let sweep_error =
            (opts.solve == TriangularSolve::Auto).then(|| f.sweep_relative_error(AUTO_SWEEPS));
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let (l, u) = upload_factors(backend, &f)?;
        backend.synchronize()?;
        let times = SetupTimes {
            host_seconds,
            device_seconds: t1.elapsed().as_secs_f64(),
        };
        Ok((l, u, levels, times, sweep_error))
    }

    /// The factors computed on the backend by `sweeps` fixed-point sweeps.
    #[allow(clippy::type_complexity)]
    fn factor_device<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        fingerprint: u64,
        opts: &Bilu0Options,
        sweeps: usize,
        name: &'static str,
    ) -> Result<(
        BlockTriangular<T>,
        BlockTriangular<T>,
        Option<(Levels, Levels)>,
        SetupTimes,
    )> {
        let t0 = Instant::now();
        let s = opts.block_size;
        let p = device::split_pattern(a, s, opts.subdomains, name)?;
        let levels = Self::levels_of(opts, &p.l_row_ptr, &p.l_col_idx, &p.u_row_ptr, &p.u_col_idx);
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let a_dev = DeviceA::of(backend, a, device, fingerprint)?;
        let (l, u) = device::factor_on(backend, a_dev.get(), &p, s, sweeps, name)?;
        backend.synchronize()?;
        let times = SetupTimes {
            host_seconds,
            device_seconds: t1.elapsed().as_secs_f64(),
        };
        Ok((l, u, levels, times))
    }

    /// The levels of both factors for the exact solve (and for `Auto`, which decides from
    /// them), `None` for sweeps.
    fn levels_of(
        opts: &Bilu0Options,
        l_row_ptr: &[u32],
        l_col_idx: &[u32],
        u_row_ptr: &[u32],
        u_col_idx: &[u32],
    ) -> Option<(Levels, Levels)> {
        match opts.solve {
            TriangularSolve::Exact | TriangularSolve::Auto => Some((
                Levels::of(l_row_ptr, l_col_idx, true),
                Levels::of(u_row_ptr, u_col_idx, false),
            )),
            TriangularSolve::Sweeps(_) => None,
        }
    }

    /// The numeric factorization of `a` (the pattern of the matrix it was built from) for the
    /// kept block pattern, on this rank alone; nothing of `self` changes (see
    /// [`Bilu0::commit`]).
    fn refresh_local<B: Backend>(
        &self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<(NewFactors<T>, SetupTimes)> {
        let t0 = Instant::now();
        let s = self.opts.block_size;
        match self.opts.factorization {
            Factorization::Host => {
                let bsr = BsrMatrix::from_csr(a, s)?;
                let bsr = if self.opts.subdomains > 1 {
                    drop_couplings(&bsr, self.opts.subdomains)
                } else {
                    bsr
                };
                let f = factor::bilu0_owned(bsr, self.name)?;
                if f.l_values.len() != self.l.values.len()
                    || f.u_values.len() != self.u.values.len()
                {
                    return Err(Error::PatternMismatch(format!(
                        "{}: the factors of the new values have another pattern",
                        self.name
                    )));
                }
                let times = SetupTimes {
                    host_seconds: t0.elapsed().as_secs_f64(),
                    device_seconds: 0.0,
                };
                Ok((NewFactors::Host(Box::new(f)), times))
            }
            Factorization::Sweeps(sweeps) => {
                let p = device::split_pattern(a, s, self.opts.subdomains, self.name)?;
                let host_seconds = t0.elapsed().as_secs_f64();
                let t1 = Instant::now();
                let a_dev = DeviceA::of(backend, a, device, a.fingerprint())?;
                let (l, u) = device::factor_on(backend, a_dev.get(), &p, s, sweeps, self.name)?;
                backend.synchronize()?;
                let times = SetupTimes {
                    host_seconds,
                    device_seconds: t1.elapsed().as_secs_f64(),
                };
                Ok((NewFactors::Device(Box::new((l, u))), times))
            }
        }
    }

    /// Put the factors of [`Bilu0::refresh_local`] in place (host factors written into the
    /// kept device arrays); the time of the writes is added to `times`.
    fn commit<B: Backend>(
        &mut self,
        backend: &B,
        factors: NewFactors<T>,
        fingerprint: u64,
        mut times: SetupTimes,
    ) -> Result<SetupTimes> {
        let t0 = Instant::now();
        match factors {
            NewFactors::Host(f) => {
                let inv = self.u.inv_diag.as_mut().ok_or_else(|| {
                    Error::PreconditionerSetup("BILU(0): U without a diagonal".into())
                })?;
                backend.write(inv, &f.u_inv_diag)?;
                backend.write(&mut self.l.values, &f.l_values)?;
                backend.write(&mut self.u.values, &f.u_values)?;
                backend.synchronize()?;
            }
            NewFactors::Device(factors) => {
                (self.l, self.u) = *factors;
            }
        }
        self.fingerprint = fingerprint;
        times.device_seconds += t0.elapsed().as_secs_f64();
        Ok(times)
    }

    /// What a values-only refresh keeps.
    fn kept(&self) -> String {
        let mut kept = format!(
            "the block pattern of L and U ({} and {} blocks), the triangular solve ({})",
            self.l.n_blocks(),
            self.u.n_blocks(),
            self.opts.solve
        );
        if let Some((l, u)) = self.level_counts() {
            kept += &format!(" and its levels ({l} + {u})");
        }
        if let Factorization::Sweeps(_) = self.opts.factorization {
            // The device factorization lays the factors out anew from A's pattern.
            kept += "; the device factors' pattern is rebuilt (one host pass, one upload)";
        }
        kept
    }

    /// The options it was built with, `Auto` resolved to the triangular solve that runs.
    pub fn options(&self) -> Bilu0Options {
        self.opts
    }

    /// Why the triangular solve of [`Bilu0::options`] runs ("requested", or the automatic
    /// choice with the level count that decided it).
    pub fn solve_reason(&self) -> &str {
        &self.solve_reason
    }

    /// The factors as they are on the backend (L's and U's strict parts, U's inverted
    /// diagonal blocks), downloaded: for inspection and for comparing the factorizations.
    pub fn download_factors<B: Backend>(&self, backend: &B) -> Result<BiluFactors<T>> {
        let inv =
            self.u.inv_diag.as_ref().ok_or_else(|| {
                Error::PreconditionerSetup("BILU(0): U without a diagonal".into())
            })?;
        Ok(BiluFactors {
            block_size: self.opts.block_size,
            n_block_rows: self.l.n_block_rows(),
            l_row_ptr: backend.download(&self.l.row_ptr)?,
            l_col_idx: backend.download(&self.l.col_idx)?,
            l_values: backend.download(&self.l.values)?,
            u_row_ptr: backend.download(&self.u.row_ptr)?,
            u_col_idx: backend.download(&self.u.col_idx)?,
            u_values: backend.download(&self.u.values)?,
            u_inv_diag: backend.download(inv)?,
        })
    }

    /// Levels of the L and U solves (exact solve only).
    pub fn level_counts(&self) -> Option<(usize, usize)> {
        self.levels
            .as_ref()
            .map(|(_, l, _, u)| (l.count(), u.count()))
    }

    /// x = T^-1 b for one factor, exactly (level by level, in place in `x`;
    /// on CUDA and OpenCL runs of narrow levels by one work-group each, [`Levels::launch_at`]). `rows` is
    /// [`Levels::upload`]'s buffer. Also `Ilu`'s.
    pub(crate) fn solve_exact<B: Backend>(
        backend: &B,
        t: &BlockTriangular<T>,
        rows: &Buffer<u32>,
        levels: &Levels,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
    ) -> Result<()> {
        let grouped = !backend.kernel_runtime().is_host();
        let mut k = 0;
        while k < levels.count() {
            let (run, group) = levels.launch_at(k, grouped);
            if group {
                let starts_at = levels.rows.len();
                levels_group(
                    backend,
                    t,
                    rows,
                    &levels.start,
                    starts_at,
                    run.clone(),
                    b,
                    x,
                )?;
            } else {
                backend.bsr_trsv_level(t, rows, levels.start[k]..levels.start[k + 1], b, x)?;
            }
            k = run.end;
        }
        Ok(())
    }

    /// x ~ T^-1 b by `k` sweeps from zero (Algorithm 7), alternating between `x` and `other`
    /// so that the last sweep writes `x`. Also `Ilu`'s.
    pub(crate) fn solve_sweeps<B: Backend>(
        backend: &B,
        t: &BlockTriangular<T>,
        k: usize,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        other: &mut Buffer<T>,
    ) -> Result<()> {
        // Sweep j (1-based) writes x when k - j is even.
        for j in 1..=k {
            let into_x = (k - j) % 2 == 0;
            match (j, into_x) {
                (1, true) => backend.bsr_trsv_sweep(t, b, None, x)?,
                (1, false) => backend.bsr_trsv_sweep(t, b, None, other)?,
                (_, true) => backend.bsr_trsv_sweep(t, b, Some(other), x)?,
                (_, false) => backend.bsr_trsv_sweep(t, b, Some(x), other)?,
            }
        }
        Ok(())
    }
}

pub(crate) fn check_options<T: Scalar>(a: &CsrMatrix<T>, opts: &Bilu0Options) -> Result<()> {
    if !a.is_square() {
        return Err(Error::dims(
            "BILU(0): square matrix",
            a.n_rows(),
            a.n_cols(),
        ));
    }
    let s = opts.block_size;
    if s == 0 || s > MAX_BLOCK_SIZE {
        return Err(Error::param(
            "block_size",
            format!("block size {s} is outside 1..={MAX_BLOCK_SIZE}"),
        ));
    }
    if a.n_rows() % s != 0 {
        return Err(Error::param(
            "block_size",
            format!("n = {} is not a multiple of the block size {s}", a.n_rows()),
        ));
    }
    if opts.subdomains == 0 {
        return Err(Error::param("subdomains", "at least one subdomain"));
    }
    if let TriangularSolve::Sweeps(0) = opts.solve {
        return Err(Error::param("trisolve", "at least one sweep"));
    }
    if let Some(i) = a.first_non_finite() {
        return Err(Error::NonFinite {
            what: "matrix value (BILU(0) setup)".into(),
            index: i,
        });
    }
    Ok(())
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Bilu0<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        let mut guard = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("BILU(0) workspace poisoned".into()))?;
        let Work { f, other } = &mut *guard;
        match (&self.levels, self.opts.solve) {
            (Some((lr, ll, ur, ul)), _) => {
                // f = L^-1 r, z = U^-1 f, level by level.
                Self::solve_exact(backend, &self.l, lr, ll, r, f)?;
                Self::solve_exact(backend, &self.u, ur, ul, f, z)
            }
            (None, TriangularSolve::Sweeps(k)) => {
                // Algorithm 7: K sweeps of eq. (11) on L, then K of eq. (10) on U.
                Self::solve_sweeps(backend, &self.l, k, r, f, other)?;
                Self::solve_sweeps(backend, &self.u, k, f, z, other)
            }
            (None, TriangularSolve::Exact | TriangularSolve::Auto) => Err(
                Error::PreconditionerSetup("BILU(0): exact solve without levels".into()),
            ),
        }
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.memory
    }
    fn launches_per_apply(&self) -> usize {
        match (&self.levels, self.opts.solve) {
            (Some((_, ll, _, ul)), _) => {
                ll.launches(self.grouped_levels) + ul.launches(self.grouped_levels)
            }
            (None, TriangularSolve::Sweeps(k)) => 2 * k,
            (None, TriangularSolve::Exact | TriangularSolve::Auto) => 0,
        }
    }
    fn params(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "block_size": self.opts.block_size,
            "trisolve": self.opts.solve.to_string(),
            "trisolve_reason": self.solve_reason,
            "subdomains": self.opts.subdomains,
            "factorization": self.opts.factorization.to_string(),
            "factor_blocks_l": self.l.n_blocks(),
            "factor_blocks_u": self.u.n_blocks(),
        });
        if let Some((l, u)) = self.level_counts() {
            v["levels_l"] = l.into();
            v["levels_u"] = u.into();
        }
        v
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    /// The host factorization reads `a` alone; the device sweeps read the solver's copy.
    fn refresh_reads_device_matrix(&self) -> bool {
        !matches!(self.opts.factorization, Factorization::Host)
    }
    /// The numeric factorization again (on the host, or by the device sweeps, as at setup) on
    /// the kept block pattern, levels and triangular solve; the automatic choice of the solve
    /// is not revisited. A singular pivot of the new values is [`Error::SingularPivot`] with
    /// nothing changed (on every rank of a distributed backend).
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size(self.name, self.n, a)?;
        let local = self.refresh_local(backend, a, device);
        let (factors, times) = collective_result(backend, "the BILU(0) refresh", local)?;
        let times = self.commit(backend, factors, a.fingerprint(), times)?;
        Ok(super::ValuesRefresh::new(times, self.kept()))
    }
}

/// L (unit, strict part) and U (strict part, inverted diagonal blocks) of host factors `f` on
/// `backend`, as the triangular solves take them.
pub(crate) fn upload_factors<B: Backend, T: Scalar>(
    backend: &B,
    f: &factor::BiluFactors<T>,
) -> Result<(BlockTriangular<T>, BlockTriangular<T>)> {
    let s = f.block_size;
    let l = BlockTriangular::upload(backend, s, &f.l_row_ptr, &f.l_col_idx, &f.l_values, None)?;
    let u = BlockTriangular::upload(
        backend,
        s,
        &f.u_row_ptr,
        &f.u_col_idx,
        &f.u_values,
        Some(&f.u_inv_diag),
    )?;
    Ok((l, u))
}

#[cfg(test)]
mod auto_tests {
    use super::{TriangularSolve, AUTO_EXACT_MAX_LEVELS, AUTO_SWEEPS};

    #[test]
    fn auto_is_exact_on_a_cpu_or_with_few_levels_else_sweeps() {
        let (s, why) = TriangularSolve::Auto.resolve(5000, false, None);
        assert_eq!(s, TriangularSolve::Exact);
        assert!(why.contains("CPU"), "{why}");
        let (s, _) = TriangularSolve::Auto.resolve(AUTO_EXACT_MAX_LEVELS, true, None);
        assert_eq!(s, TriangularSolve::Exact);
        let (s, why) = TriangularSolve::Auto.resolve(AUTO_EXACT_MAX_LEVELS + 1, true, Some(0.2));
        assert_eq!(s, TriangularSolve::Sweeps(AUTO_SWEEPS));
        assert!(why.contains("levels"), "{why}");
        // Factors on which sweeps would not contract: exact, with the reason.
        for q in [0.67, f64::NAN, f64::INFINITY] {
            let (s, why) = TriangularSolve::Auto.resolve(AUTO_EXACT_MAX_LEVELS + 1, true, Some(q));
            assert_eq!(s, TriangularSolve::Exact, "{q}");
            assert!(why.contains("far from"), "{why}");
        }
        // Unknown error (factors computed on the device): sweeps as before.
        let (s, _) = TriangularSolve::Auto.resolve(AUTO_EXACT_MAX_LEVELS + 1, true, None);
        assert_eq!(s, TriangularSolve::Sweeps(AUTO_SWEEPS));
        // Fixed choices stay as asked.
        assert_eq!(
            TriangularSolve::Exact.resolve(5000, true, None).0,
            TriangularSolve::Exact
        );
        assert_eq!(
            TriangularSolve::Sweeps(2).resolve(1, false, None).0,
            TriangularSolve::Sweeps(2)
        );
        assert_eq!(
            "auto".parse::<TriangularSolve>().unwrap(),
            TriangularSolve::Auto
        );
    }
}
