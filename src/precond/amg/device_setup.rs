//! The hierarchy set up with the backend's kernels ([`AmgSetup::Device`]): every level's
//! diagonal, strong couplings, aggregates (a distance-2 maximal independent set of the strong
//! couplings as roots, each other node joining a root within distance 2: Bell, Dalton, Olson,
//! "Exposing fine-grained parallelism in algebraic multigrid methods", SIAM J. Sci. Comput. 34
//! (2012)), prolongator, restriction R = P^T and Galerkin product R (A P) stay on the device;
//! only the coarsest level goes to the host, to be inverted densely. Block size 1.
//!
//! [`AmgSetup::Device`]: super::AmgSetup::Device

use super::coarse::dense_inverse;
use super::hierarchy::dense_coarse_limit;
use super::level::DeviceLevel;
use super::options::{AmgOptions, Coarsening, Smoother};
use super::prolongation::{diagonal_error, POWER_ITERATIONS};
use super::smoother::{jacobi_scaling, CHEBYSHEV_LOWER_RATIO, CHEBYSHEV_UPPER_FACTOR};
use crate::backend::ops::amg_setup as kernels;
use crate::backend::ops::sparse::{self, CsrBuffers, CsrRef};
use crate::backend::{Backend, Buffer, DeviceMatrix, MatrixFormat, Partials, Slot};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::device_a::{csr_matrix, DeviceA};
use crate::scalar::Scalar;
use std::time::Instant;

/// A coarse level keeping more than this fraction of its parent's rows ends the coarsening
/// (as the host setup's).
const STALL: f64 = 0.9;

/// A hierarchy set up on the device.
pub(super) struct DeviceHierarchy<T> {
    /// The levels above the coarsest.
    pub(super) levels: Vec<DeviceLevel<T>>,
    /// The coarsest level's dense inverse (computed on the host).
    pub(super) coarse_inverse: CsrMatrix<T>,
    /// Rows and nonzeros of every level, the coarsest last.
    pub(super) stats: Vec<(usize, usize)>,
    /// Seconds of the coarsest level's download and inversion on the host.
    pub(super) host_seconds: f64,
    /// Seconds per phase, summed over the levels (each phase ends with a synchronization).
    pub(super) phases: SetupPhases,
    /// The symbolic setup of every level above the coarsest, kept for a values refresh.
    pub(super) kept: Vec<KeptLevel>,
}

/// What a values refresh of a device-built level keeps of its setup: its strong couplings and
/// aggregates, so the patterns of its prolongator, restriction and coarse operator.
#[derive(Debug)]
pub(super) struct KeptLevel {
    /// 1 for the strong couplings among the level's entries.
    pub(super) flags: Buffer<u32>,
    /// Every row's aggregate ([`kernels::UNAGGREGATED`] for none).
    pub(super) agg: Buffer<u32>,
    /// Number of aggregates: the next level's rows.
    pub(super) n_coarse: usize,
}

impl KeptLevel {
    /// Device bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.flags.bytes() + self.agg.bytes()
    }
}

/// Where the device setup's time goes, summed over the levels (seconds).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub(crate) struct SetupPhases {
    /// The finest level's A for the cycle (shared with the solver's copy or uploaded).
    pub(crate) finest: f64,
    /// Diagonals, strong couplings and aggregation.
    pub(crate) aggregation: f64,
    /// Filtered diagonals, the prolongators' weights (power iterations) and rows.
    pub(crate) prolongator: f64,
    /// R = P^T.
    pub(crate) transpose: f64,
    /// A P and R (A P).
    pub(crate) galerkin: f64,
    /// The smoothers' data (power iterations for Jacobi and Chebyshev).
    pub(crate) smoother: f64,
    /// The coarsest level's download and dense inversion.
    pub(crate) coarsest: f64,
}

/// Adds the seconds since `*t` (after a synchronization) to `slot` and restarts `*t`.
pub(super) fn lap<B: Backend>(backend: &B, t: &mut Instant, slot: &mut f64) -> Result<()> {
    backend.synchronize()?;
    *slot += t.elapsed().as_secs_f64();
    *t = Instant::now();
    Ok(())
}

/// Check what the device setup takes of `a` and `options` (before any device work): the
/// options, block size 1, a square matrix, finite entries.
pub(super) fn check_input<T: Scalar>(a: &CsrMatrix<T>, options: &AmgOptions) -> Result<()> {
    check_shape(a.n_rows(), a.n_cols(), options)?;
    if let Some(index) = a.first_non_finite() {
        return Err(Error::NonFinite {
            what: "matrix".into(),
            index,
        });
    }
    Ok(())
}

/// Check the options and the size the device setup takes: valid options, block size 1, a
/// square matrix.
pub(super) fn check_shape(n_rows: usize, n_cols: usize, options: &AmgOptions) -> Result<()> {
    options.validate()?;
    if options.block_size != 1 {
        return Err(Error::NotApplicable {
            preconditioner: "amg".into(),
            reason: "the device setup takes block size 1 (use setup host)".into(),
        });
    }
    if n_rows != n_cols {
        return Err(Error::dims("AMG: matrix columns vs rows", n_rows, n_cols));
    }
    Ok(())
}

/// Set up the hierarchy (see the module) of A on `backend`, read from `first` (the solver's
/// copy, an upload, or a single-precision copy; [`check_input`] passed on the matrix it holds).
/// The cycle's finest level is `first` itself or shares its arrays; where it cannot, `fallback`
/// (A on the host) is uploaded, else `first` is copied on the device. Errors: a zero or negative
/// diagonal on some level, a matrix that does not coarsen, a singular coarsest level (as
/// [`super::Hierarchy::build`]'s) and device errors (out of memory included).
pub(super) fn build<B: Backend, T: Scalar>(
    backend: &B,
    first: DeviceA<'_, T>,
    fallback: Option<&CsrMatrix<T>>,
    options: &AmgOptions,
) -> Result<DeviceHierarchy<T>> {
    let mut phases = SetupPhases::default();
    let mut t = Instant::now();
    let mut first_level = Some(first);
    let mut levels = Vec::new();
    let mut kept = Vec::new();
    let mut stats = Vec::new();
    // The operator of the level being coarsened when it is not the finest.
    let mut coarse: Option<DeviceMatrix<T>> = None;
    let mut eps = options.strength;
    loop {
        let l = levels.len();
        let current = match (&coarse, &first_level) {
            (Some(m), _) => m,
            (None, Some(f)) => f.get(),
            (None, None) => {
                return Err(Error::PreconditionerSetup(
                    "amg: the finest level was consumed before it was coarsened".into(),
                ))
            }
        };
        let view = CsrRef::of(current)?;
        let n = view.n_rows;
        let mut partials = backend.partials::<T>(n, LEVEL_SLOTS)?;
        let diag = diagonal(backend, view, l, &mut partials)?;
        if n <= options.coarse_size || l + 1 >= options.max_levels {
            break;
        }
        let mut flags = backend.alloc::<u32>(view.nnz())?;
        kernels::strength(backend, view, &diag, T::from_f64(eps), &mut flags)?;
        let (agg, n_coarse) = aggregate(backend, view, &flags, l == 0, &mut partials)?;
        lap(backend, &mut t, &mut phases.aggregation)?;
        if n_coarse == 0 || n_coarse as f64 > STALL * n as f64 {
            break;
        }
        let (p, radius) = prolongator(
            backend,
            view,
            &flags,
            &diag,
            &agg,
            n_coarse,
            options,
            &mut partials,
        )?;
        lap(backend, &mut t, &mut phases.prolongator)?;
        let r = sparse::transpose(backend, p.view())?;
        lap(backend, &mut t, &mut phases.transpose)?;
        let ap = sparse::spgemm(backend, view, p.view())?;
        let next = sparse::spgemm(backend, r.view(), ap.view())?;
        drop(ap);
        lap(backend, &mut t, &mut phases.galerkin)?;
        let (s, s_first, chebyshev) =
            smoother(backend, view, &flags, &diag, options, &mut partials, radius)?;
        lap(backend, &mut t, &mut phases.smoother)?;
        stats.push((n, view.nnz()));
        // (Laid out for the stream kernel the cycle was not faster on the H200: 2D Poisson
        // 4.19M, 1483 against 1479 us per CG iteration, for 34 ms more setup.)
        let (p, r, next) = (p.into_matrix(), r.into_matrix(), next.into_matrix());
        let level_a = match coarse.replace(next) {
            Some(m) => m,
            None => {
                let first = first_level.take().ok_or_else(|| {
                    Error::PreconditionerSetup("amg: the finest level was consumed".into())
                })?;
                let m = finest_for_cycle(backend, first, fallback)?;
                lap(backend, &mut t, &mut phases.finest)?;
                m
            }
        };
        levels.push(DeviceLevel {
            a: level_a,
            p,
            r,
            s,
            s_first,
            chebyshev,
            patterns: [0; 3],
        });
        kept.push(KeptLevel {
            flags,
            agg,
            n_coarse,
        });
        eps *= options.strength_decay;
    }
    let current = match (&coarse, &first_level) {
        (Some(m), _) => m,
        (None, Some(f)) => f.get(),
        (None, None) => {
            return Err(Error::PreconditionerSetup(
                "amg: the finest level was consumed before it was coarsened".into(),
            ))
        }
    };
    let coarsest = download(backend, current)?;
    stats.push((coarsest.n_rows(), coarsest.nnz()));
    let limit = dense_coarse_limit(options.coarse_size);
    if coarsest.n_rows() > limit {
        return Err(Error::NotApplicable {
            preconditioner: "amg".into(),
            reason: format!(
                "the matrix does not coarsen: level {} has {} rows (nonzeros {}), more than the \
                 {limit} a dense coarse solve takes (coarse_size {}, max_levels {})",
                levels.len(),
                coarsest.n_rows(),
                coarsest.nnz(),
                options.coarse_size,
                options.max_levels
            ),
        });
    }
    let coarse_inverse = dense_inverse(&coarsest, levels.len())?;
    phases.coarsest = t.elapsed().as_secs_f64();
    mark_complete(backend, &mut levels)?;
    Ok(DeviceHierarchy {
        levels,
        coarse_inverse,
        stats,
        host_seconds: phases.coarsest,
        phases,
        kept,
    })
}

/// Marks the levels' device-built matrices complete after a synchronization: every kernel that
/// wrote their arrays has finished, and the next writes (a values refresh) are followed by
/// this again, so the CSR kernels may read them before their dependent-launch wait, as an
/// upload's.
pub(super) fn mark_complete<B: Backend, T: Scalar>(
    backend: &B,
    levels: &mut [DeviceLevel<T>],
) -> Result<()> {
    backend.synchronize()?;
    for level in levels.iter_mut() {
        for m in [&mut level.p, &mut level.r] {
            m.uploaded = true;
        }
    }
    for level in levels.iter_mut().skip(1) {
        level.a.uploaded = true;
    }
    Ok(())
}

/// The finest level's operator for the cycle: `first` when the setup owns it; on a GPU backend
/// the solver's CSR copy shared (its arrays and kernel layout, not copied) when it has no long
/// rows; else `fallback` uploaded (laid out anew) or, without one, `first`'s arrays copied on
/// the device.
pub(super) fn finest_for_cycle<B: Backend, T: Scalar>(
    backend: &B,
    first: DeviceA<'_, T>,
    fallback: Option<&CsrMatrix<T>>,
) -> Result<DeviceMatrix<T>> {
    let d = match first {
        DeviceA::Owned(m, _) => return Ok(*m),
        DeviceA::Borrowed(d) => d,
    };
    if let Some(shared) = d.share_csr() {
        return Ok(shared);
    }
    if let Some(a) = fallback {
        return backend.upload_matrix(a, MatrixFormat::Csr);
    }
    let v = CsrRef::of(d)?;
    let mut row_ptr = backend.alloc::<u32>(v.n_rows + 1)?;
    let mut col_idx = backend.alloc::<u32>(v.nnz())?;
    let mut values = backend.alloc::<T>(v.nnz())?;
    backend.copy_u32(v.row_ptr, &mut row_ptr)?;
    backend.copy_u32(v.col_idx, &mut col_idx)?;
    backend.copy(v.values, &mut values)?;
    let mut m = csr_matrix(v.n_rows, row_ptr, col_idx, values);
    m.fingerprint = d.fingerprint();
    Ok(m)
}

/// The diagonal of level `l`, or the error naming its first row that is not positive and
/// finite (read back only then).
pub(super) fn diagonal<B: Backend, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    l: usize,
    partials: &mut Partials<T>,
) -> Result<Buffer<T>> {
    let mut diag = backend.alloc::<T>(a.n_rows)?;
    kernels::diagonal(backend, a, &mut diag, partials, Slot(0))?;
    if backend.finish(partials)?.get(Slot(0)) > 0.0 {
        let d = backend.download(&diag)?;
        let bad = d.iter().position(|x| {
            let x = x.to_f64();
            !(x > 0.0 && x.is_finite())
        });
        if let Some(r) = bad {
            return Err(diagonal_error(l, r, d[r].to_f64()));
        }
    }
    Ok(diag)
}

/// Every node's aggregate and the number of aggregates, in three phases (as the host's
/// greedy aggregation, whose passes 1 and 3 they follow in parallel):
///
/// 1. the roots of a distance-2 maximal independent set of the strong couplings, each with its
///    strong neighbours;
/// 2. among the nodes left, the roots of such a set of their own couplings that have at least
///    [`kernels::SECOND_SET_MIN_FREE`] neighbours left (on the finest level, `finest`, also at
///    least [`kernels::SECOND_SET_FINEST_FREE_PERCENT`] percent of their strong neighbours),
///    each with those;
/// 3. every node still left joins an aggregate of a strong neighbour.
///
/// A node without strong couplings stays in none. The ties of every choice are broken by a
/// fixed hash of the node, so the aggregates do not depend on the backend.
fn aggregate<B: Backend, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    finest: bool,
    partials: &mut Partials<T>,
) -> Result<(Buffer<u32>, usize)> {
    let n = a.n_rows;
    let mut agg = backend.alloc::<u32>(n)?;
    sparse::fill_u32::<T, B>(backend, &mut agg, kernels::UNAGGREGATED)?;
    let mut joined = backend.alloc::<u32>(n)?;
    let mut count = 0;
    for phase in 0..2 {
        let mask = (phase > 0).then_some(&agg);
        let free_percent = if finest {
            kernels::SECOND_SET_FINEST_FREE_PERCENT
        } else {
            0
        };
        let (tuple, root_scan, roots) =
            independent_set(backend, a, flags, mask, free_percent, partials)?;
        if roots > 0 {
            kernels::root_ids::<T, B>(backend, &tuple, &root_scan, count, &mut agg)?;
            kernels::join(backend, a, flags, count as u32, &agg, &mut joined)?;
            std::mem::swap(&mut agg, &mut joined);
            count += roots;
        }
    }
    kernels::join(backend, a, flags, 0, &agg, &mut joined)?;
    Ok((joined, count))
}

/// The tuples of a distance-2 maximal independent set of the strong couplings (among the nodes
/// in no aggregate of `mask`, with it; `free_percent` as [`kernels::mis2_init`]'s), the roots'
/// ranks (n + 1 prefix sums) and their number: rounds of two max passes and a selection until
/// no node is undecided.
fn independent_set<B: Backend, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    mask: Option<&Buffer<u32>>,
    free_percent: u32,
    partials: &mut Partials<T>,
) -> Result<(Buffer<u64>, Buffer<u32>, usize)> {
    let n = a.n_rows;
    let mut tuple = backend.alloc::<u64>(n)?;
    let mut max1 = backend.alloc::<u64>(n)?;
    let mut max2 = backend.alloc::<u64>(n)?;
    kernels::mis2_init(backend, a, flags, mask, free_percent, &mut tuple)?;
    // Every round decides at least the undecided node of the largest tuple.
    // The count of undecided nodes is read (a synchronization) after rounds 3, 5, 7, ... only:
    // a round after the last changes nothing, and the sets took 3-9 rounds on the generated
    // problems, so this halves the reads for at most one round more.
    for round in 0.. {
        kernels::mis2_max(backend, a, flags, mask, &tuple, &mut max1)?;
        kernels::mis2_max(backend, a, flags, mask, &max1, &mut max2)?;
        kernels::mis2_select(backend, &mut tuple, &max2, partials, Slot(0))?;
        if round >= 2 && round % 2 == 0 && backend.finish(partials)?.get(Slot(0)) == 0.0 {
            break;
        }
        if round > n {
            return Err(Error::PreconditionerSetup(
                "amg: the independent-set rounds of the aggregation did not finish".into(),
            ));
        }
    }
    let mut is_root = backend.alloc::<u32>(n)?;
    kernels::root_flags::<T, B>(backend, &tuple, &mut is_root)?;
    let mut scan = backend.alloc::<u32>(n + 1)?;
    let roots = sparse::scan_u32::<T, B>(backend, "amg aggregates", &is_root, &mut scan)?;
    Ok((tuple, scan, roots))
}

/// The estimates of the spectral radius of D^-1 A for every `(filtered, diag)` of `which` (with
/// `filtered`: of the filtered D_f^-1 A_f, `diag` then D_f): [`POWER_ITERATIONS`] power
/// iterations each from the kernels' fixed start vector, the largest ratio
/// ||D^-1 A x||_D / ||x||_D met (the host setup's estimate, without its Gershgorin cap). The
/// estimates run side by side and their sums are read once per [`STEPS_PER_READ`] steps (slot
/// 2 (e S + k) and the next for estimate e's step k of a read, S = [`STEPS_PER_READ`]): each
/// step's ratio is taken as the host's (an estimate stops at its first step whose sums are not
/// positive and finite, its later steps in that read ignored), and the iterate is normalized at
/// each read instead of at every step, so its norm grows by at most the ratio to the power S
/// between reads (a matrix would need a ratio over 10^4 to overflow single precision). The
/// estimates are the host's up to rounding: the iterates differ from its by a scale only.
fn spectral_radii<B: Backend, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    which: &[(bool, &Buffer<T>)],
    partials: &mut Partials<T>,
) -> Result<Vec<f64>> {
    let mut vectors = Vec::with_capacity(which.len());
    for _ in which {
        let mut x = backend.alloc::<T>(a.n_rows)?;
        kernels::power_start(backend, &mut x)?;
        vectors.push((x, backend.alloc::<T>(a.n_rows)?));
    }
    let mut estimates = vec![0.0f64; which.len()];
    let mut live = vec![true; which.len()];
    let mut done = 0;
    while done < POWER_ITERATIONS && live.contains(&true) {
        let steps = STEPS_PER_READ.min(POWER_ITERATIONS - done);
        for k in 0..steps {
            for (e, (&(filtered, diag), (x, y))) in which.iter().zip(&mut vectors).enumerate() {
                if live[e] {
                    let slot = Slot(2 * (e * STEPS_PER_READ + k));
                    kernels::power_step(backend, a, flags, filtered, diag, x, y, partials, slot)?;
                    std::mem::swap(x, y);
                }
            }
        }
        done += steps;
        let sums = backend.finish(partials)?;
        for (e, (x, _)) in vectors.iter_mut().enumerate() {
            if !live[e] {
                continue;
            }
            let mut last = 0.0;
            for k in 0..steps {
                let slot = 2 * (e * STEPS_PER_READ + k);
                let (yy, xx) = (sums.get(Slot(slot)), sums.get(Slot(slot + 1)));
                if !(yy > 0.0 && xx > 0.0 && yy.is_finite()) {
                    live[e] = false;
                    break;
                }
                estimates[e] = estimates[e].max((yy / xx).sqrt());
                last = yy;
            }
            if live[e] {
                backend.scale(T::from_f64(1.0 / last.sqrt()), x)?;
            }
        }
    }
    Ok(estimates)
}

/// Power-iteration steps between two reads of their sums (see [`spectral_radii`]).
const STEPS_PER_READ: usize = 4;

/// Slots of the partial sums a level's setup uses: two per step of a spectral-radius estimate
/// between reads, two estimates at most.
pub(super) const LEVEL_SLOTS: usize = 2 * 2 * STEPS_PER_READ;

/// Whether the smoother's data need the spectral radius of D^-1 A.
fn smoother_needs_radius(options: &AmgOptions) -> bool {
    matches!(
        options.smoother,
        Smoother::Jacobi | Smoother::Chebyshev { .. }
    )
}

/// The level's prolongator (smoothed or tentative, by the options), `n_coarse` columns, and the
/// spectral radius of D^-1 A when the smoother needs it and it was estimated beside the
/// prolongator's (see [`smoother`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn prolongator<B: Backend, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    diag: &Buffer<T>,
    agg: &Buffer<u32>,
    n_coarse: usize,
    options: &AmgOptions,
    partials: &mut Partials<T>,
) -> Result<(CsrBuffers<T>, Option<f64>)> {
    let n = a.n_rows;
    let mut fdiag = backend.alloc::<T>(n)?;
    // The smoother's estimate, when it runs beside the prolongator's.
    let mut smoother_radius = None;
    let weight = match options.coarsening {
        Coarsening::Aggregation => None,
        Coarsening::SmoothedAggregation => {
            kernels::filtered_diag(backend, a, flags, diag, &mut fdiag)?;
            let w = match options.prolongation_weight {
                Some(w) => w,
                None => {
                    let mut which = vec![(true, &fdiag)];
                    if smoother_needs_radius(options) {
                        which.push((false, diag));
                    }
                    let radii = spectral_radii(backend, a, flags, &which, partials)?;
                    smoother_radius = radii.get(1).copied();
                    let rho = radii[0];
                    if rho > 0.0 && rho.is_finite() {
                        4.0 / 3.0 / rho
                    } else {
                        2.0 / 3.0
                    }
                }
            };
            Some(T::from_f64(w))
        }
    };
    let room = a.nnz() + n;
    if room > u32::MAX as usize {
        return Err(Error::IndexOverflow {
            what: "amg prolongator scratch".into(),
            value: room,
            max: u32::MAX as usize,
        });
    }
    let mut cols = backend.alloc::<u32>(room)?;
    let mut vals = backend.alloc::<T>(room)?;
    let mut counts = backend.alloc::<u32>(n)?;
    kernels::prolong_rows(
        backend,
        a,
        flags,
        &fdiag,
        agg,
        weight,
        (&mut cols, &mut vals),
        &mut counts,
    )?;
    let p = sparse::compact_rows(
        backend,
        (n, n_coarse),
        (a.row_ptr, 1),
        &counts,
        (&cols, &vals),
    )?;
    Ok((p, smoother_radius))
}

/// A level's smoother data: the scaling s, Chebyshev's first-step scaling s / theta (empty
/// otherwise) and its (theta, delta).
pub(super) type SmootherData<T> = (Buffer<T>, Buffer<T>, (f64, f64));

/// The smoother's data, as [`super::LevelSmoother`] defines them; `radius`: the spectral radius
/// of D^-1 A when [`prolongator`] estimated it.
pub(super) fn smoother<B: Backend, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    diag: &Buffer<T>,
    options: &AmgOptions,
    partials: &mut Partials<T>,
    radius: Option<f64>,
) -> Result<SmootherData<T>> {
    let mut s = backend.alloc::<T>(a.n_rows)?;
    let mut spectral_radius = || match radius {
        Some(rho) => Ok(rho),
        None => Ok(spectral_radii(backend, a, flags, &[(false, diag)], partials)?[0]),
    };
    match options.smoother {
        Smoother::Jacobi => {
            let rho: f64 = spectral_radius()?;
            let w = jacobi_scaling(options.jacobi_weight, rho);
            kernels::smoother_diag(backend, a, diag, false, T::from_f64(w), &mut s)?;
            Ok((s, backend.alloc(0)?, (0.0, 0.0)))
        }
        Smoother::L1Jacobi => {
            kernels::smoother_diag(backend, a, diag, true, T::one(), &mut s)?;
            Ok((s, backend.alloc(0)?, (0.0, 0.0)))
        }
        Smoother::Chebyshev { .. } => {
            let rho: f64 = spectral_radius()?;
            let upper = CHEBYSHEV_UPPER_FACTOR * rho;
            let lower = upper / CHEBYSHEV_LOWER_RATIO;
            let (theta, delta) = ((upper + lower) / 2.0, (upper - lower) / 2.0);
            kernels::smoother_diag(backend, a, diag, false, T::one(), &mut s)?;
            let mut s_first = backend.alloc::<T>(a.n_rows)?;
            backend.copy(&s, &mut s_first)?;
            backend.scale(T::from_f64(1.0 / theta), &mut s_first)?;
            Ok((s, s_first, (theta, delta)))
        }
    }
}

/// A CSR device matrix copied to the host.
pub(super) fn download<B: Backend, T: Scalar>(
    backend: &B,
    m: &DeviceMatrix<T>,
) -> Result<CsrMatrix<T>> {
    let v = CsrRef::of(m)?;
    let row_ptr = backend.download(v.row_ptr)?;
    let col_idx = backend.download(v.col_idx)?;
    CsrMatrix::new(
        v.n_rows,
        v.n_cols,
        row_ptr.iter().map(|&p| p as usize).collect(),
        col_idx.iter().map(|&c| c as usize).collect(),
        backend.download(v.values)?,
    )
}
