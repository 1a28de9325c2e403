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

use crate::backend::{AnyBackend, BackendInfo, Buffer, DeviceMatrix, SpmvOps, VectorOps};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::{self, Preconditioner};
use crate::scalar::Scalar;
use crate::solve::KrylovSolver;
use crate::solver::{Control, Progress, SolveReport};
use crate::{Solution, SolveOptions};
use std::ops::ControlFlow;

/// Builds a [`ReusableSolver`]: the same choices as [`SolveOptions`], set one by one.
#[derive(Debug, Clone)]
pub struct SolverBuilder<'a, T> {
    a: &'a CsrMatrix<T>,
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
        let a = self.a;
        if !a.is_square() {
            return Err(Error::dims(
                "matrix must be square: columns vs rows",
                a.n_rows(),
                a.n_cols(),
            ));
        }
        let (backend, notes) = self.options.backend.create_for(a.n_rows())?;
        if T::PRECISION == crate::Precision::F64 && !backend.supports_f64() {
            return Err(Error::BackendUnavailable {
                backend: backend.name().into(),
                reason: "the device has no double precision (solve in f32)".into(),
            });
        }
        self.options.params.validate()?;
        let matrix = backend.upload_matrix(a, self.options.format)?;
        let precond = precond::build_on(&backend, a, Some(&matrix), self.options.precond)?;
        let rhs = backend.alloc::<T>(a.n_rows())?;
        let x = backend.alloc::<T>(a.n_rows())?;
        Ok(ReusableSolver {
            options: self.options,
            notes,
            precond,
            matrix,
            rhs,
            x,
            backend,
        })
    }
}

/// A matrix uploaded and a preconditioner built once, solved with many right-hand sides (see
/// the module documentation).
pub struct ReusableSolver<T: Scalar> {
    options: SolveOptions,
    notes: Vec<String>,
    precond: Option<Box<dyn Preconditioner<AnyBackend, T>>>,
    matrix: DeviceMatrix<T>,
    rhs: Buffer<T>,
    x: Buffer<T>,
    backend: AnyBackend,
}

impl<T: Scalar> std::fmt::Debug for ReusableSolver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReusableSolver")
            .field("options", &self.options)
            .field("backend", &self.backend.name())
            .field("n", &self.matrix.n_rows())
            .finish()
    }
}

impl<T: Scalar> ReusableSolver<T> {
    /// Start building a solver for `a` (defaults as [`SolveOptions::default`]).
    pub fn builder(a: &CsrMatrix<T>) -> SolverBuilder<'_, T> {
        SolverBuilder {
            a,
            options: SolveOptions::default(),
        }
    }

    /// The backend it runs on and the notes of its choice.
    pub fn backend(&self) -> (&AnyBackend, &[String]) {
        (&self.backend, &self.notes)
    }

    /// Solve A x = b from x = 0.
    pub fn solve(&mut self, b: &[T]) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        self.backend.fill(&mut self.x, T::zero())?;
        self.run(b, None)
    }

    /// Solve A x = b from the initial guess `x0`.
    pub fn solve_from(&mut self, b: &[T], x0: &[T]) -> Result<Solution<T>> {
        self.check_len("right-hand side", b.len())?;
        self.check_len("initial guess", x0.len())?;
        self.backend.write(&mut self.x, x0)?;
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
        self.backend.fill(&mut self.x, T::zero())?;
        self.run(
            b,
            Some(&mut |p| {
                monitor(p);
                ControlFlow::Continue(())
            }),
        )
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
        self.backend.write(&mut self.x, x0)?;
        self.run(
            b,
            Some(&mut |p| {
                monitor(p);
                ControlFlow::Continue(())
            }),
        )
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
        match x0 {
            Some(x0) => {
                self.check_len("initial guess", x0.len())?;
                self.backend.write(&mut self.x, x0)?;
            }
            None => self.backend.fill(&mut self.x, T::zero())?,
        }
        self.run(b, Some(control))
    }

    /// Solve A x = b with vectors that already live on the solver's backend: `x` holds the
    /// initial guess on entry and the solution on exit; nothing is copied to or from the host
    /// (the caller's device arrays through
    /// [`CudaBackend::borrow_device_memory`](crate::backend::cuda::CudaBackend::borrow_device_memory),
    /// or buffers from [`ReusableSolver::backend`]'s `alloc`/`upload`). `control` as in
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
        let (m, pc, p) = (&self.matrix, self.precond.as_deref(), self.options.params);
        KrylovSolver::new(&self.backend, m, pc, p, self.options.method)?.solve(b, x, control)
    }

    /// The number of rows (and columns) of the matrix it solves with.
    pub fn n(&self) -> usize {
        self.matrix.n_rows()
    }

    /// The options it was built with.
    pub fn options(&self) -> &SolveOptions {
        &self.options
    }

    fn check_len(&self, what: &str, len: usize) -> Result<()> {
        if len != self.matrix.n_rows() {
            return Err(Error::dims(
                format!("{what} length vs matrix rows"),
                self.matrix.n_rows(),
                len,
            ));
        }
        Ok(())
    }

    fn run(&mut self, b: &[T], monitor: Control<'_>) -> Result<Solution<T>> {
        let Self {
            options,
            notes,
            precond,
            matrix,
            rhs,
            x,
            backend,
        } = self;
        backend.write(rhs, b)?;
        let (m, pc, p) = (&*matrix, precond.as_deref(), options.params);
        let report =
            KrylovSolver::new(&*backend, m, pc, p, options.method)?.solve(rhs, x, monitor)?;
        Ok(Solution {
            x: backend.download(x)?,
            report,
            backend: format!("{} ({})", backend.name(), backend.device_name()),
            notes: notes.clone(),
        })
    }
}
