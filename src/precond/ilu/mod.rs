//! `ilu`: incomplete LU for real matrices whose diagonal is zero or weak, as SciPy's `spilu`
//! factors them: a maximum-product matching with its scalings (static pivoting, Duff and
//! Koster's MC64 job 5) or plain equilibration, a fill-reducing (AMD) or bandwidth (RCM)
//! ordering on the symmetrized pattern, then ILU(0), ILU(k) or ILUT (Saad's dual threshold),
//! chosen for the user unless asked (DESIGN.md, "Robust factorizations").
//!
//! The application is M^-1 r = Dc Q (L U)^-1 Q^T P Dr r with backend kernels only: the
//! permutation and scaling on each side is one SpMV with a CSR matrix holding one scaled entry
//! per row, and the triangular solves are the `trsv` kernels of BILU(0) with block size 1
//! (exact level by level, or Jacobi sweeps). The user's vectors stay in the original order.

mod factors;
mod iluk;
mod ilut;
mod matching;
mod options;
mod ordering;
mod setup;

pub use factors::{IncompleteLu, PIVOT_SHIFT, PIVOT_TINY};
pub use iluk::{iluk, iluk_numeric, iluk_pattern, IlukPattern};
pub use ilut::{ilut, IlutParams, DEFAULT_DROP_TOL, DEFAULT_FILL_FACTOR};
pub use matching::{equilibrate, max_product_matching, weak_diagonal, Scaling};
pub use options::{
    IluMatching, IluOptions, IluOrdering, DEFAULT_PIVOT_THRESHOLD, STABLE_MAX_GROWTH,
    STABLE_MAX_INVERSE, STABLE_MIN_PIVOT, WEAK_DIAGONAL,
};
pub use ordering::{amd, cholesky_fill};
pub use setup::{IluFactorization, IluHost, IluReport};

use super::bilu0::upload_factors;
use super::Bilu0;
use super::{BiluFactors, Levels, Preconditioner, SetupTimes, TriangularSolve};
use crate::backend::{
    collective_result, Backend, BlockTriangular, Buffer, DeviceMatrix, MatrixFormat,
};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use std::sync::Mutex;
use std::time::Instant;

/// Scratch vectors of one application: y = Q^T P Dr r, f = L^-1 y, g = U^-1 f, and the
/// sweeps' second buffer.
#[derive(Debug)]
struct Work<T> {
    y: Buffer<T>,
    f: Buffer<T>,
    g: Buffer<T>,
    other: Buffer<T>,
}

/// The `ilu` preconditioner: matching, scaling, ordering and an incomplete LU built once on
/// the host, applied on the backend as two one-entry-per-row SpMVs around the triangular
/// solves.
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::backend::VectorOps;
/// use pipekrylov::matrix::CsrMatrix;
/// use pipekrylov::precond::{Ilu, IluOptions, Preconditioner};
/// // A zero diagonal: ILU(0) in this order has no pivot; the matching swaps the rows.
/// let a = CsrMatrix::from_triplets(2, 2, &[(0, 1, 2.0), (1, 0, 4.0)]).unwrap();
/// let host = HostBackend::new();
/// let m = Ilu::new(&host, &a, IluOptions::default()).unwrap();
/// assert_eq!(m.report().matching, "max-product");
/// let r = host.upload(&[2.0, 4.0]).unwrap();
/// let mut z = host.alloc(2).unwrap();
/// m.apply(&host, &r, &mut z).unwrap();
/// // Exact here: A^-1 (2, 4) = (1, 1).
/// assert!(host.download(&z).unwrap().iter().all(|v| (v - 1.0f64).abs() < 1e-14));
/// ```
#[derive(Debug)]
pub struct Ilu<T> {
    n: usize,
    left: Option<DeviceMatrix<T>>,
    right: Option<DeviceMatrix<T>>,
    l: BlockTriangular<T>,
    u: BlockTriangular<T>,
    /// Level rows on the device and level starts on the host (exact solve only).
    levels: Option<(Buffer<u32>, Levels, Buffer<u32>, Levels)>,
    /// Whether the exact solve groups runs of narrow levels (built on a backend that runs
    /// kernels: CUDA, OpenCL).
    grouped_levels: bool,
    solve: TriangularSolve,
    solve_reason: String,
    work: Mutex<Work<T>>,
    times: SetupTimes,
    report: IluReport,
    fingerprint: u64,
    memory: usize,
    /// What a values-only refresh keeps (matching, ordering, factorization choice).
    symbolic: Box<setup::IluSymbolic>,
}

impl<T: Scalar> Ilu<T> {
    /// Build the preconditioner of `a` on `backend` (the host setup of [`IluHost::new`], then
    /// the uploads). Errors: those of [`IluHost::new`], [`Error::InvalidParameter`] for zero
    /// sweeps, device errors from the uploads; with a distributed backend a failure on any
    /// rank is an error on every rank.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>, opts: IluOptions) -> Result<Self> {
        let local = Self::build_local(backend, a, opts);
        collective_result(backend, "the ILU setup", local)
    }

    fn build_local<B: Backend>(backend: &B, a: &CsrMatrix<T>, opts: IluOptions) -> Result<Self> {
        if let TriangularSolve::Sweeps(0) = opts.solve {
            return Err(Error::param("trisolve", "at least one sweep"));
        }
        let t0 = Instant::now();
        let fingerprint = a.fingerprint();
        let host = IluHost::new(a, &opts)?;
        let symbolic = Box::new(setup::IluSymbolic::of(&host, &opts));
        let host_setup = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let f = &host.factors.factors;
        let levels = match opts.solve {
            TriangularSolve::Sweeps(_) => None,
            _ => Some((
                Levels::of(&f.l_row_ptr, &f.l_col_idx, true),
                Levels::of(&f.u_row_ptr, &f.u_col_idx, false),
            )),
        };
        let total_levels = levels.as_ref().map_or(0, |(l, u)| l.count() + u.count());
        let sweep_error = (opts.solve == TriangularSolve::Auto)
            .then(|| f.sweep_relative_error(super::AUTO_SWEEPS));
        let (solve, solve_reason) = opts
            .solve
            .resolve(total_levels, backend.is_gpu(), sweep_error);
        let levels = levels.filter(|_| solve == TriangularSolve::Exact);
        let operators = if host.is_unpermuted() {
            None
        } else {
            Some((
                host.left_operator()?.cast::<T>(),
                host.right_operator()?.cast::<T>(),
            ))
        };
        let typed = cast_factors::<T>(f);
        let analysis_seconds = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        let (l, u) = upload_factors(backend, &typed)?;
        let levels = match levels {
            Some((ll, ul)) => Some((ll.upload(backend)?, ll, ul.upload(backend)?, ul)),
            None => None,
        };
        let (left, right) = match operators {
            Some((lo, ro)) => (
                Some(backend.upload_matrix(&lo, MatrixFormat::Csr)?),
                Some(backend.upload_matrix(&ro, MatrixFormat::Csr)?),
            ),
            None => (None, None),
        };
        let n = a.n_rows();
        let work = Work {
            y: backend.alloc(n)?,
            f: backend.alloc(n)?,
            g: backend.alloc(n)?,
            other: backend.alloc(n)?,
        };
        backend.synchronize()?;
        let upload_seconds = t2.elapsed().as_secs_f64();
        let memory = l.bytes()
            + u.bytes()
            + [&work.y, &work.f, &work.g, &work.other]
                .iter()
                .map(|b| b.bytes())
                .sum::<usize>()
            + levels
                .as_ref()
                .map_or(0, |(lr, _, ur, _)| lr.bytes() + ur.bytes())
            + left.as_ref().map_or(0, |m| m.device_bytes())
            + right.as_ref().map_or(0, |m| m.device_bytes());
        let mut report = host.report;
        report.analysis_seconds = analysis_seconds;
        report.upload_seconds = upload_seconds;
        Ok(Self {
            n,
            left,
            right,
            l,
            u,
            levels,
            grouped_levels: !backend.kernel_runtime().is_host(),
            solve,
            solve_reason,
            work: Mutex::new(work),
            times: SetupTimes {
                host_seconds: host_setup + analysis_seconds,
                device_seconds: upload_seconds,
            },
            report,
            fingerprint,
            memory,
            symbolic,
        })
    }

    /// Put refreshed factors `f` in place: written into the kept device arrays when their
    /// pattern is the old one (ILU(k)), else uploaded anew with new levels for the exact
    /// solve (ILUT); the report's factor statistics updated.
    fn commit<B: Backend>(&mut self, backend: &B, f: IncompleteLu) -> Result<()> {
        let typed = cast_factors::<T>(&f.factors);
        let same_pattern = self.symbolic.keeps_factor_pattern()
            && typed.l_values.len() == self.l.values.len()
            && typed.u_values.len() == self.u.values.len();
        if same_pattern {
            let inv =
                self.u.inv_diag.as_mut().ok_or_else(|| {
                    Error::PreconditionerSetup("ILU: U without a diagonal".into())
                })?;
            backend.write(inv, &typed.u_inv_diag)?;
            backend.write(&mut self.l.values, &typed.l_values)?;
            backend.write(&mut self.u.values, &typed.u_values)?;
        } else {
            let (l, u) = upload_factors(backend, &typed)?;
            let levels = match self.levels {
                Some(_) => {
                    let ll = Levels::of(&typed.l_row_ptr, &typed.l_col_idx, true);
                    let ul = Levels::of(&typed.u_row_ptr, &typed.u_col_idx, false);
                    Some((ll.upload(backend)?, ll, ul.upload(backend)?, ul))
                }
                None => None,
            };
            let old = self.l.bytes() + self.u.bytes() + level_bytes(&self.levels);
            let new = l.bytes() + u.bytes() + level_bytes(&levels);
            self.memory = self.memory.saturating_sub(old) + new;
            (self.l, self.u, self.levels) = (l, u, levels);
        }
        backend.synchronize()?;
        let r = &mut self.report;
        r.nnz_factors = f.nnz();
        r.fill_ratio = f.nnz() as f64 / r.nnz_a.max(1) as f64;
        r.shifted_pivots = f.shifted_pivots;
        r.smallest_pivot = f.smallest_pivot;
        r.growth = f.growth;
        Ok(())
    }

    /// Every choice the setup made, the fill ratio and where the setup time went.
    pub fn report(&self) -> &IluReport {
        &self.report
    }

    /// The triangular solve that runs (`Auto` resolved) and why.
    pub fn solve(&self) -> (TriangularSolve, &str) {
        (self.solve, &self.solve_reason)
    }

    /// out = U^-1 L^-1 y with the triangular solve chosen at setup.
    fn triangular<B: Backend>(
        &self,
        backend: &B,
        y: &Buffer<T>,
        f: &mut Buffer<T>,
        other: &mut Buffer<T>,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        match (&self.levels, self.solve) {
            (Some((lr, ll, ur, ul)), _) => {
                Bilu0::<T>::solve_exact(backend, &self.l, lr, ll, y, f)?;
                Bilu0::<T>::solve_exact(backend, &self.u, ur, ul, f, out)
            }
            (None, TriangularSolve::Sweeps(k)) => {
                Bilu0::<T>::solve_sweeps(backend, &self.l, k, y, f, other)?;
                Bilu0::<T>::solve_sweeps(backend, &self.u, k, f, out, other)
            }
            (None, _) => Err(Error::PreconditionerSetup(
                "ILU: exact solve without levels".into(),
            )),
        }
    }
}

/// The host factors in the backend's scalar type.
fn cast_factors<T: Scalar>(f: &BiluFactors<f64>) -> BiluFactors<T> {
    let cast = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect();
    BiluFactors {
        block_size: 1,
        n_block_rows: f.n_block_rows,
        l_row_ptr: f.l_row_ptr.clone(),
        l_col_idx: f.l_col_idx.clone(),
        l_values: cast(&f.l_values),
        u_row_ptr: f.u_row_ptr.clone(),
        u_col_idx: f.u_col_idx.clone(),
        u_values: cast(&f.u_values),
        u_inv_diag: cast(&f.u_inv_diag),
    }
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Ilu<T> {
    fn name(&self) -> &'static str {
        "ilu"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        let mut guard = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("ILU workspace poisoned".into()))?;
        let Work { y, f, g, other } = &mut *guard;
        match (&self.left, &self.right) {
            (Some(left), Some(right)) => {
                // y = Q^T P Dr r; g = (L U)^-1 y; z = Dc Q g.
                backend.spmv(left, r, y)?;
                self.triangular(backend, y, f, other, g)?;
                backend.spmv(right, g, z)
            }
            _ => self.triangular(backend, r, f, other, z),
        }
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.memory
    }
    fn launches_per_apply(&self) -> usize {
        let spmvs = if self.left.is_some() { 2 } else { 0 };
        spmvs
            + match (&self.levels, self.solve) {
                (Some((_, ll, _, ul)), _) => {
                    ll.launches(self.grouped_levels) + ul.launches(self.grouped_levels)
                }
                (None, TriangularSolve::Sweeps(k)) => 2 * k,
                (None, _) => 0,
            }
    }
    fn params(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.report).unwrap_or_default();
        v["factorization"] = self.report.factorization.to_string().into();
        v["trisolve"] = self.solve.to_string().into();
        v["trisolve_reason"] = self.solve_reason.clone().into();
        if let Some((_, l, _, u)) = &self.levels {
            v["levels_l"] = l.count().into();
            v["levels_u"] = u.count().into();
        }
        v
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    fn refresh_reads_device_matrix(&self) -> bool {
        false
    }
    /// The factorization again on the host for the new values with the kept matching (its
    /// permutation and scalings: new values are not matched again), ordering and
    /// factorization choice: ILU(k) (ILU(0) included) as a numeric phase on the kept pattern,
    /// written into the kept device arrays and levels; ILUT again (its pattern follows the
    /// values: the factors are uploaded anew, with new levels for the exact solve). The
    /// triangular solve chosen at setup is kept. Errors (a tiny pivot without shifting, ...)
    /// leave it as it was.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        _device: Option<&DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size("ilu", self.n, a)?;
        let t0 = Instant::now();
        let local = self.symbolic.refactor(a);
        let f = collective_result(backend, "the ILU refresh", local)?;
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        self.commit(backend, f)?;
        self.fingerprint = a.fingerprint();
        Ok(super::ValuesRefresh::new(
            SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            self.symbolic.kept(),
        ))
    }
}

/// Device bytes of the exact solve's level rows.
fn level_bytes(levels: &Option<(Buffer<u32>, Levels, Buffer<u32>, Levels)>) -> usize {
    levels
        .as_ref()
        .map_or(0, |(lr, _, ur, _)| lr.bytes() + ur.bytes())
}
