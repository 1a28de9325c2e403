//! A solver set up once and used for many right-hand sides: the matrix is uploaded and the
//! preconditioner built by [`SolverBuilder::build`]; each [`ReusableSolver::solve`] only moves
//! `b` and `x` and allocates the Krylov workspace (a few vectors). The transient problems the
//! paper motivates (one matrix, hundreds of time steps) look like this:
//!
//! ```
//! use pipekrylov::matrix::generate::Generator;
//! use pipekrylov::precond::PrecondKind;
//! use pipekrylov::{Method, ReusableSolver};
//! let a = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
//! let mut solver = ReusableSolver::builder(&a)
//!     .method(Method::Cg)
//!     .precond(PrecondKind::Jacobi)
//!     .rtol(1e-10)
//!     .build()
//!     .unwrap();
//! let mut u = vec![1.0; a.n_rows()];
//! for _step in 0..3 {
//!     let sol = solver.solve_from(&u, &u).unwrap(); // b = u, initial guess u
//!     assert!(sol.report.stop_reason.converged());
//!     u = sol.x;
//! }
//! ```

use crate::backend::{AnyBackend, BackendInfo, Buffer, DeviceMatrix, VectorOps};
use crate::error::{Error, Result};
use crate::matrix::{CsrMatrix, CsrView};
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use crate::solve::KrylovSolver;
use crate::solver::{Control, Progress, SolveReport};
use crate::{Solution, SolveOptions};
use std::ops::ControlFlow;
use std::ptr::NonNull;

mod on_device;
mod source;

use source::Source;

/// Builds a [`ReusableSolver`]: the same choices as [`SolveOptions`], set one by one.
#[derive(Debug, Clone)]
pub struct SolverBuilder<'a, T> {
    source: Source<'a, T>,
    options: SolveOptions,
}

impl<'a, T: Scalar> SolverBuilder<'a, T> {
    fn options_mut(&mut self) -> &mut SolveOptions {
        &mut self.options
    }
    crate::solve::option_setters!(options_mut);
    /// All options at once.
    pub fn options(mut self, options: SolveOptions) -> Self {
        self.options = options;
        self
    }

    /// Open the backend, upload the matrix, build the preconditioner and the buffers for b and
    /// x. Errors: as [`crate::solve`] (unavailable backend, bad matrix, preconditioner setup).
    pub fn build(self) -> Result<ReusableSolver<T>> {
        let (n_rows, n_cols) = self.source.shape();
        if n_rows != n_cols {
            return Err(Error::dims(
                "matrix must be square: columns vs rows",
                n_rows,
                n_cols,
            ));
        }
        let (backend, notes) = self.options.backend.create_for(n_rows)?;
        if T::PRECISION == crate::Precision::F64 && !backend.supports_f64() {
            return Err(Error::BackendUnavailable {
                backend: backend.name().into(),
                reason: "the device has no double precision (solve in f32)".into(),
            });
        }
        self.options.params.validate()?;
        let mut copy = None;
        let a = self.source.for_setup(&self.options, &mut copy)?;
        let pattern = a.pattern_fingerprint();
        let matrix = a.upload(&backend, self.options.format)?;
        let precond = a.precond(&backend, &matrix, &self.options)?;
        let rhs = backend.alloc::<T>(n_rows)?;
        let x = backend.alloc::<T>(n_rows)?;
        let parts = Box::new(Parts {
            backend,
            matrix,
            precond,
        });
        Ok(ReusableSolver {
            options: self.options,
            notes,
            pattern: Some(pattern),
            solver: None,
            rhs,
            x,
            parts: NonNull::from(Box::leak(parts)),
            spare: None,
        })
    }
}

/// The Krylov solver in `slot`, set up at the first call and kept.
fn krylov<'s, T: Scalar>(
    slot: &'s mut Option<KrylovSolver<'static, AnyBackend, T>>,
    parts: NonNull<Parts<T>>,
    options: &SolveOptions,
) -> Result<&'s mut KrylovSolver<'static, AnyBackend, T>> {
    if slot.is_none() {
        // SAFETY: the allocation outlives the solver made from it: `Drop` drops the solver
        // before freeing `parts`, and `parts` is never mutated or moved (it is behind a raw
        // pointer to a leaked box), so the `'static` references stay valid for as long as the
        // solver holding them exists.
        let parts: &'static Parts<T> = unsafe { &*parts.as_ptr() };
        *slot = Some(KrylovSolver::new(
            &parts.backend,
            &parts.matrix,
            parts.precond.as_deref(),
            options.params,
            options.method,
        )?);
    }
    slot.as_mut()
        .ok_or_else(|| Error::Unsupported("the solver was not set up".into()))
}

/// What [`ReusableSolver::update_values`] did and what it cost.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ValuesUpdate {
    /// Seconds to check the new matrix and write its values into the device matrix (format
    /// conversion included).
    pub matrix_seconds: f64,
    /// The preconditioner's numeric phase and what it kept (`None` without one). Its first
    /// setup ([`ReusableSolver::setup_times`]) minus this is the symbolic phase saved.
    pub precond: Option<crate::precond::ValuesRefresh>,
    /// Seconds of the whole update.
    pub seconds: f64,
}

/// What a Krylov solver borrows: set up once, never changed while a solver borrows it.
struct Parts<T: Scalar> {
    backend: AnyBackend,
    matrix: DeviceMatrix<T>,
    precond: Option<Box<dyn Preconditioner<AnyBackend, T>>>,
}

/// A matrix uploaded and a preconditioner built once, solved with many right-hand sides (see
/// the module documentation).
pub struct ReusableSolver<T: Scalar> {
    options: SolveOptions,
    notes: Vec<String>,
    /// [`CsrMatrix::pattern_fingerprint`] of the matrix it was set up for (`None`: set up
    /// from device arrays, [`ReusableSolver::on_device`]).
    pattern: Option<u64>,
    /// The Krylov solver (its workspace, its device-resident state and recorded batches),
    /// made at the first solve and kept: a second solve replays what the first recorded. It
    /// borrows `parts` (hence the `'static` stand-in lifetime): dropped before them in `Drop`,
    /// and dropped before anything in `parts` would change.
    solver: Option<KrylovSolver<'static, AnyBackend, T>>,
    rhs: Buffer<T>,
    x: Buffer<T>,
    /// Backend, matrix and preconditioner, on the heap at a fixed address (a raw pointer
    /// rather than a `Box`, so that moving the solver asserts nothing about the borrows the
    /// cached solver holds); freed in `Drop` after `solver`; changed only by
    /// [`ReusableSolver::update_values`], after it dropped `solver`.
    parts: NonNull<Parts<T>>,
    /// The host backend's matrix values buffer set aside by the last values refresh, which
    /// the next one writes into ([`ReusableSolver::update_values`]).
    spare: Option<Buffer<T>>,
}

/// The old values of the matrix while a values refresh may still fail.
enum ValuesBackup<T> {
    /// The old buffer itself (host backend); the matrix holds a spare with the new values.
    Swapped(Buffer<T>),
    /// A device copy of the old values.
    Copied(Buffer<T>),
}

impl<T: Scalar> Drop for ReusableSolver<T> {
    fn drop(&mut self) {
        // The borrower first, then what it borrows.
        self.solver = None;
        // SAFETY: `parts` came from `Box::leak` in `build` and is freed only here, once; the
        // only borrower (the cached solver) is gone.
        drop(unsafe { Box::from_raw(self.parts.as_ptr()) });
    }
}

impl<T: Scalar> std::fmt::Debug for ReusableSolver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReusableSolver")
            .field("options", &self.options)
            .field("backend", &self.parts().backend.name())
            .field("n", &self.n())
            .finish()
    }
}

impl<T: Scalar> ReusableSolver<T> {
    /// Start building a solver for `a` (defaults as [`SolveOptions::default`]).
    pub fn builder(a: &CsrMatrix<T>) -> SolverBuilder<'_, T> {
        SolverBuilder {
            source: Source::Owned(a),
            options: SolveOptions::default(),
        }
    }

    /// Start building a solver for the caller's arrays `a` (defaults as
    /// [`SolveOptions::default`]). With CSR storage and no preconditioner or Jacobi, in the
    /// solve's precision, the arrays go to the device as they are (nothing copied on the host);
    /// any other setup copies them into a [`CsrMatrix`] first. The solver holds no borrow of
    /// them once built.
    ///
    /// ```
    /// use pipekrylov::matrix::CsrView;
    /// use pipekrylov::{Method, ReusableSolver};
    /// // 1D Laplacian, 4 unknowns, in 32-bit arrays as SciPy or a C code holds them
    /// let row_ptr = [0, 2, 5, 8, 10];
    /// let col_idx = [0, 1, 0, 1, 2, 1, 2, 3, 2, 3];
    /// let values = [2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0];
    /// let a = CsrView::from_i32(4, 4, &row_ptr, &col_idx, &values).unwrap();
    /// let mut solver = ReusableSolver::builder_view(a).method(Method::Cg).build().unwrap();
    /// let sol = solver.solve(&[1.0; 4]).unwrap();
    /// assert!(sol.report.stop_reason.converged());
    /// ```
    pub fn builder_view(a: CsrView<'_, T>) -> SolverBuilder<'_, T> {
        SolverBuilder {
            source: Source::View(a),
            options: SolveOptions::default(),
        }
    }

    /// The backend it runs on and the notes of its choice.
    pub fn backend(&self) -> (&AnyBackend, &[String]) {
        (&self.parts().backend, &self.notes)
    }

    /// Backend, matrix and preconditioner.
    fn parts(&self) -> &Parts<T> {
        // SAFETY: `parts` points at the live allocation made in `build` (freed only in
        // `Drop`); it is mutated only in `update_values` through `&mut self`, so never while
        // this shared reference (tied to `&self`) lives.
        unsafe { self.parts.as_ref() }
    }

    /// Set the solver's x to `x0`, or zero.
    fn set_x(&mut self, x0: Option<&[T]>) -> Result<()> {
        // SAFETY: as in `parts`; the reference is not tied to `self`, whose `x` is written.
        let backend = unsafe { &(*self.parts.as_ptr()).backend };
        match x0 {
            Some(x0) => backend.write(&mut self.x, x0),
            None => backend.fill(&mut self.x, T::zero()),
        }
    }

    /// Solve A x = b from x = 0.
    pub fn solve(&mut self, b: &[T]) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        self.set_x(None)?;
        self.run(b, None)
    }

    /// Solve A x_c = b_c for several right-hand sides at once (`b[c]`, from x = 0), one
    /// solution per column. CG and BiCGStab run the columns' recurrences together: each product
    /// reads the matrix once for all of them (up to 8 per read; a CSR matrix), each column keeps
    /// its own scalars and stops on its own test, and a stopped column costs nothing more
    /// ([`crate::solver::Cg::solve_many`], [`crate::solver::BiCgStab::solve_many`]; the
    /// classical recurrences whatever the options' variant). GMRES does so with the classical
    /// variant (its restart cycles in lockstep) and solves the columns one after another with
    /// the pipelined one, which is faster ([`crate::solver::Gmres::solve_many`]).
    ///
    /// Errors: a column of another length ([`Error::DimensionMismatch`]); those of
    /// [`ReusableSolver::solve`].
    pub fn solve_many(&mut self, b: &[&[T]]) -> Result<Vec<Solution<T>>> {
        for bc in b {
            self.check_len("right-hand side", bc.len())?;
        }
        // SAFETY: as in `parts`; the reference is not tied to `self`, whose fields are used.
        let backend = unsafe { &(*self.parts.as_ptr()).backend };
        let rhs = b
            .iter()
            .map(|bc| backend.upload(bc))
            .collect::<Result<Vec<_>>>()?;
        let mut xs = b
            .iter()
            .map(|bc| backend.alloc::<T>(bc.len()))
            .collect::<Result<Vec<_>>>()?;
        let rhs_refs: Vec<&Buffer<T>> = rhs.iter().collect();
        let mut x_refs: Vec<&mut Buffer<T>> = xs.iter_mut().collect();
        let reports = krylov(&mut self.solver, self.parts, &self.options)?
            .solve_many(&rhs_refs, &mut x_refs)?;
        reports
            .into_iter()
            .zip(&xs)
            .map(|(report, x)| {
                Ok(Solution {
                    x: backend.download(x)?,
                    report,
                    backend: format!("{} ({})", backend.name(), backend.device_name()),
                    notes: self.notes.clone(),
                })
            })
            .collect()
    }

    /// Solve A x = b from the initial guess `x0`.
    pub fn solve_from(&mut self, b: &[T], x0: &[T]) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        self.check_len("initial guess", x0.len())?;
        self.set_x(Some(x0))?;
        self.run(b, None)
    }

    /// [`ReusableSolver::solve`] with `monitor` called after every iteration (see
    /// [`crate::solve_with_monitor`]).
    pub fn solve_with_monitor(
        &mut self,
        b: &[T],
        monitor: &mut dyn FnMut(Progress),
    ) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        self.set_x(None)?;
        crate::solver::with_monitor(Some(monitor), |c| self.run(b, c))
    }

    /// [`ReusableSolver::solve_from`] with `monitor` called after every iteration.
    pub fn solve_from_with_monitor(
        &mut self,
        b: &[T],
        x0: &[T],
        monitor: &mut dyn FnMut(Progress),
    ) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        self.check_len("initial guess", x0.len())?;
        self.set_x(Some(x0))?;
        crate::solver::with_monitor(Some(monitor), |c| self.run(b, c))
    }

    /// Solve A x = b from `x0` (zero when `None`) with `control` called after every iteration;
    /// it stops the solve by returning `ControlFlow::Break(())` (the report's stop reason is
    /// then [`StopReason::Interrupted`](crate::solver::StopReason::Interrupted) and `x` the
    /// iterate so far). The Python package's Ctrl-C check is one.
    pub fn solve_with_control(
        &mut self,
        b: &[T],
        x0: Option<&[T]>,
        control: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    ) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        if let Some(x0) = x0 {
            self.check_len("initial guess", x0.len())?;
        }
        self.set_x(x0)?;
        self.run(b, Some(control))
    }

    /// [`ReusableSolver::solve_with_control`] into the caller's `x` (the solution read straight
    /// into it, no vector allocated), from `x0` (or zero), `control` optional. Returns the
    /// report. Errors: a `b`, `x0` or `x` of the wrong length, and what a solve reports.
    ///
    /// ```
    /// use pipekrylov::matrix::generate::Generator;
    /// use pipekrylov::ReusableSolver;
    /// let a = Generator::Poisson2d.generate::<f64>(400).unwrap().matrix;
    /// let mut solver = ReusableSolver::builder(&a).rtol(1e-10).build().unwrap();
    /// let mut x = vec![0.0; a.n_rows()];
    /// let report = solver.solve_into(&vec![1.0; a.n_rows()], None, &mut x, None).unwrap();
    /// assert!(report.stop_reason.converged() && x[0] > 0.0);
    /// ```
    pub fn solve_into(
        &mut self,
        b: &[T],
        x0: Option<&[T]>,
        x: &mut [T],
        control: Option<&mut dyn FnMut(Progress) -> ControlFlow<()>>,
    ) -> Result<SolveReport> {
        self.check_len("right-hand side", b.len())?;
        self.check_len("solution", x.len())?;
        if let Some(x0) = x0 {
            self.check_len("initial guess", x0.len())?;
        }
        self.set_x(x0)?;
        let report = self.run_report(b, control)?;
        self.parts().backend.read(&self.x, x)?;
        Ok(report)
    }

    /// Solve A x = b with vectors that already live on the solver's backend: `x` holds the
    /// initial guess on entry and the solution on exit; nothing is copied to or from the host
    /// (the caller's device arrays through `CudaBackend::borrow_device_memory` with the
    /// `cuda` feature, or buffers from [`ReusableSolver::backend`]'s `alloc`/`upload`). `control` as in
    /// [`ReusableSolver::solve_with_control`]. Errors: a buffer of another backend
    /// ([`Error::WrongBackend`]) or of the wrong length, and what a solve reports.
    pub fn solve_buffers(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        control: Option<&mut dyn FnMut(Progress) -> ControlFlow<()>>,
    ) -> Result<SolveReport> {
        self.check_len("right-hand side", b.len())?;
        self.check_len("initial guess", x.len())?;
        krylov(&mut self.solver, self.parts, &self.options)?.solve(b, x, control)
    }

    /// Take new values of the matrix, on the pattern it was set up for, and keep everything
    /// else: the device matrix's arrays and layouts (the values are written in place, in its
    /// device format) and the preconditioner's symbolic setup (patterns, level schedules,
    /// orderings, aggregates: [`Preconditioner::update_values`]), whose numeric phase alone
    /// runs again. This is the step of a nonlinear or time-dependent code whose matrix changes
    /// values at every step (AmgX's `replace_coefficients`, PETSc's `SAME_NONZERO_PATTERN`).
    ///
    /// ```
    /// use pipekrylov::matrix::generate::Generator;
    /// use pipekrylov::precond::PrecondKind;
    /// use pipekrylov::ReusableSolver;
    /// let mut a = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
    /// let mut solver = ReusableSolver::builder(&a).precond(PrecondKind::Bilu0).build().unwrap();
    /// a.values_mut().iter_mut().for_each(|v| *v *= 2.0); // a new time step's coefficients
    /// let update = solver.update_values(&a).unwrap();
    /// assert!(update.precond.is_some());
    /// let sol = solver.solve(&vec![1.0; a.n_rows()]).unwrap();
    /// assert!(sol.report.stop_reason.converged());
    /// ```
    ///
    /// Errors: [`Error::PatternMismatch`] when `a`'s size or pattern differs from the
    /// original matrix's (compared by size, nonzeros and
    /// [`CsrMatrix::pattern_fingerprint`]), [`Error::NonFinite`] for a NaN or infinite value,
    /// [`Error::Unsupported`] for a solver of device arrays ([`ReusableSolver::on_device`]),
    /// and what the preconditioner's numeric phase reports (a zero pivot, a matrix no longer
    /// SPD for FSAI, ...). On any error the solver is left as it was, with the old values, and
    /// stays usable.
    pub fn update_values(&mut self, a: &CsrMatrix<T>) -> Result<ValuesUpdate> {
        let t0 = std::time::Instant::now();
        let Some(pattern) = self.pattern else {
            return Err(Error::Unsupported(
                "new host values for a solver set up from device arrays \
                 (ReusableSolver::on_device): pass them on the device (update_device_values)"
                    .into(),
            ));
        };
        if a.n_rows() != self.n() || a.n_cols() != self.n() || a.nnz() != self.parts().matrix.nnz()
        {
            return Err(Error::PatternMismatch(format!(
                "the solver was set up for {} x {} with {} nonzeros, the new matrix is {} x {} \
                 with {}",
                self.n(),
                self.n(),
                self.parts().matrix.nnz(),
                a.n_rows(),
                a.n_cols(),
                a.nnz()
            )));
        }
        if a.pattern_fingerprint() != pattern {
            return Err(Error::PatternMismatch(
                "the new matrix has other row pointers or column indices than the one the solver \
                 was set up for (build a new solver for a new pattern)"
                    .into(),
            ));
        }
        if let Some(k) = a.first_non_finite() {
            return Err(Error::NonFinite {
                what: "matrix".into(),
                index: k,
            });
        }
        // The cached Krylov solver borrows the parts: it goes first (the next solve makes its
        // workspace again).
        self.solver = None;
        // SAFETY: the only borrower of `parts` is gone, and `&mut self` excludes every other
        // reference to them (`parts()` references are tied to `&self`).
        let parts = unsafe { self.parts.as_mut() };
        let checked = t0.elapsed().as_secs_f64();
        if let Some(m) = parts
            .precond
            .as_mut()
            .filter(|m| !m.refresh_reads_device_matrix())
        {
            // A numeric phase that reads `a` alone runs first: its error leaves the
            // preconditioner and the matrix as they were, with no device copy of the old values
            // to put back.
            let refresh = m.update_values(&parts.backend, a, None)?;
            let t1 = std::time::Instant::now();
            parts.matrix.write_values(&parts.backend, a)?;
            parts.backend.synchronize()?;
            return Ok(ValuesUpdate {
                matrix_seconds: checked + t1.elapsed().as_secs_f64(),
                precond: Some(refresh),
                seconds: t0.elapsed().as_secs_f64(),
            });
        }
        // The old values kept while the preconditioner's numeric phase may still fail (skipped
        // when there is no room: then a failure leaves the new values).
        let backup = match parts.precond {
            Some(_) => Self::values_backup(&parts.backend, &mut parts.matrix, &mut self.spare),
            None => None,
        };
        let old_fingerprint = parts.matrix.fingerprint();
        // Checked above: the pattern (hence size and nonzeros) and finite values.
        let written = parts
            .matrix
            .write_values(&parts.backend, a)
            .and_then(|()| parts.backend.synchronize());
        let matrix_seconds = t0.elapsed().as_secs_f64();
        let refreshed = written.and_then(|()| match parts.precond.as_mut() {
            None => Ok(None),
            Some(m) => m
                .update_values(&parts.backend, a, Some(&parts.matrix))
                .map(Some),
        });
        match (refreshed, backup) {
            (Ok(precond), backup) => {
                if let Some(ValuesBackup::Swapped(old)) = backup {
                    // The old values' buffer serves the next refresh.
                    self.spare = Some(old);
                }
                Ok(ValuesUpdate {
                    matrix_seconds,
                    precond,
                    seconds: t0.elapsed().as_secs_f64(),
                })
            }
            (Err(e), backup) => {
                match backup {
                    Some(ValuesBackup::Swapped(mut old)) => {
                        std::mem::swap(parts.matrix.values_mut(), &mut old);
                        self.spare = Some(old);
                    }
                    Some(ValuesBackup::Copied(old)) => {
                        parts.backend.copy(&old, parts.matrix.values_mut())?
                    }
                    None => return Err(e),
                }
                parts.matrix.fingerprint = old_fingerprint;
                Err(e)
            }
        }
    }

    /// The old values of `matrix` kept aside before new ones are written, or `None` when there
    /// is no room. On a device, a copy (a preconditioner may share the solver's value array
    /// there, and must see the new values in it). On the host backend nothing shares host
    /// storage: the old buffer itself is set aside and `spare` (the buffer the last refresh set
    /// aside, or a new one) takes its place, so that a time-stepping loop writes its values
    /// into memory it already touched.
    fn values_backup(
        backend: &AnyBackend,
        matrix: &mut DeviceMatrix<T>,
        spare: &mut Option<Buffer<T>>,
    ) -> Option<ValuesBackup<T>> {
        let len = matrix.values().len();
        if matrix.values().owner() == "host" {
            let mut fresh = match spare.take().filter(|s| s.len() == len) {
                Some(s) => s,
                None => backend.alloc::<T>(len).ok()?,
            };
            std::mem::swap(matrix.values_mut(), &mut fresh);
            return Some(ValuesBackup::Swapped(fresh));
        }
        let mut copy = backend.alloc::<T>(len).ok()?;
        backend.copy(matrix.values(), &mut copy).ok()?;
        Some(ValuesBackup::Copied(copy))
    }

    /// The preconditioner's setup time when it was built (symbolic and numeric phases; a
    /// [`ValuesUpdate`] has the numeric phase's alone), zero without one.
    pub fn setup_times(&self) -> crate::precond::SetupTimes {
        self.parts()
            .precond
            .as_ref()
            .map_or_else(Default::default, |m| m.setup_times())
    }

    /// The number of rows (and columns) of the matrix it solves with.
    pub fn n(&self) -> usize {
        self.parts().matrix.n_rows()
    }

    /// The options it was built with.
    pub fn options(&self) -> &SolveOptions {
        &self.options
    }

    fn check_len(&self, what: &str, len: usize) -> Result<()> {
        if len != self.n() {
            return Err(Error::dims(
                format!("{what} length vs matrix rows"),
                self.n(),
                len,
            ));
        }
        Ok(())
    }

    fn run(&mut self, b: &[T], monitor: Control<'_>) -> Result<Solution<T>> {
        let report = self.run_report(b, monitor)?;
        let backend = &self.parts().backend;
        Ok(Solution {
            x: backend.download(&self.x)?,
            report,
            backend: format!("{} ({})", backend.name(), backend.device_name()),
            notes: self.notes.clone(),
        })
    }

    /// `b` written and the solve run from the solver's x; the solution stays in it.
    fn run_report(&mut self, b: &[T], monitor: Control<'_>) -> Result<SolveReport> {
        // SAFETY: as in `parts`; the reference is not tied to `self`, whose fields are used.
        let backend = unsafe { &(*self.parts.as_ptr()).backend };
        backend.write(&mut self.rhs, b)?;
        krylov(&mut self.solver, self.parts, &self.options)?.solve(&self.rhs, &mut self.x, monitor)
    }
}
