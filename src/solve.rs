//! The one-call entry point: [`solve`] a system with a solver and a preconditioner chosen by
//! name on the best available backend (like the command line's `--backend auto`), the solution
//! returned as a `Vec`.

use crate::backend::{Backend, BackendChoice, Buffer, DeviceMatrix, MatrixFormat};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::{PrecondSpec, Preconditioner};
use crate::scalar::Scalar;
use crate::solver::{BiCgStab, Cg, Control, Gmres, Params, Progress, SolveReport};

/// Which Krylov method [`solve`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Conjugate gradients (symmetric positive definite matrices).
    Cg,
    /// BiCGStab.
    BiCgStab,
    /// GMRES(m), m = `Params::restart` (the default: it converges wherever anything does).
    #[default]
    Gmres,
}

impl std::str::FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cg" => Ok(Self::Cg),
            "bicgstab" => Ok(Self::BiCgStab),
            "gmres" => Ok(Self::Gmres),
            _ => Err(Error::param(
                "solver",
                format!("unknown solver '{s}' (cg, bicgstab or gmres)"),
            )),
        }
    }
}

/// One of the three solvers, set up (workspace allocated) and ready to solve: the dispatch on
/// [`Method`] that the reusable solver and the command line share.
pub(crate) enum KrylovSolver<'a, B: Backend, T: Scalar> {
    /// CG.
    Cg(Cg<'a, B, T>),
    /// BiCGStab.
    BiCgStab(BiCgStab<'a, B, T>),
    /// GMRES(m).
    Gmres(Gmres<'a, B, T>),
}

impl<'a, B: Backend, T: Scalar> KrylovSolver<'a, B, T> {
    /// Set up the solver of `method`.
    pub(crate) fn new(
        backend: &'a B,
        m: &'a DeviceMatrix<T>,
        precond: Option<&'a dyn Preconditioner<B, T>>,
        params: Params,
        method: Method,
    ) -> Result<Self> {
        Ok(match method {
            Method::Cg => Self::Cg(Cg::new(backend, m, precond, params)?),
            Method::BiCgStab => Self::BiCgStab(BiCgStab::new(backend, m, precond, params)?),
            Method::Gmres => Self::Gmres(Gmres::new(backend, m, precond, params)?),
        })
    }

    /// Solve from the guess in `x`, with `monitor` after every iteration when given.
    pub(crate) fn solve(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        monitor: Control<'_>,
    ) -> Result<SolveReport> {
        match self {
            Self::Cg(s) => s.solve_with_control(b, x, monitor),
            Self::BiCgStab(s) => s.solve_with_control(b, x, monitor),
            Self::Gmres(s) => s.solve_with_control(b, x, monitor),
        }
    }

    /// Solve for every column `b[c]` from the guess in `x[c]`: the columns' recurrences run
    /// together ([`Cg::solve_many`], [`BiCgStab::solve_many`], [`Gmres::solve_many`]).
    pub(crate) fn solve_many(
        &mut self,
        b: &[&Buffer<T>],
        x: &mut [&mut Buffer<T>],
    ) -> Result<Vec<SolveReport>> {
        match self {
            Self::Cg(s) => s.solve_many(b, x),
            Self::BiCgStab(s) => s.solve_many(b, x),
            Self::Gmres(s) => s.solve_many(b, x),
        }
    }
}

/// What [`solve`] does: method, preconditioner, tolerances and where it runs.
///
/// Every field has a builder method, so options read as a chain from the defaults:
///
/// ```
/// use pipekrylov::precond::PrecondKind;
/// use pipekrylov::solver::Execution;
/// use pipekrylov::{Method, SolveOptions};
/// let opts = SolveOptions::default()
///     .method(Method::Gmres)
///     .restart(50)
///     .precond(PrecondKind::Jacobi)
///     .rtol(1e-10)
///     .atol(1e-14)
///     .max_iter(500)
///     .execution(Execution::Synchronous);
/// assert_eq!(opts.params.gmres.restart, 50);
/// assert_eq!(opts.params.max_iter, 500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolveOptions {
    /// The Krylov method. Default: [`Method::Gmres`].
    pub method: Method,
    /// The preconditioner and its parameters. Default: `PrecondSpec::default()`, no
    /// preconditioner.
    pub precond: PrecondSpec,
    /// The precision the preconditioner stores its data in and runs in. Default:
    /// [`PrecondPrecision::Solve`](crate::precond::PrecondPrecision::Solve), the solve's.
    pub precond_precision: crate::precond::PrecondPrecision,
    /// Tolerances, iteration limit, restart, pipelined or classical, execution mode. Default:
    /// [`Params::default`] (each field's default is stated there: rtol 1e-8, atol 0, at most
    /// 10,000 iterations, restart 30, pipelined, automatic execution).
    pub params: Params,
    /// Where to run. Default: [`BackendChoice::Auto`], the best compiled-in GPU backend that
    /// works, else the host (the host also for systems of at most
    /// [`AUTO_HOST_MAX_N`](crate::backend::AUTO_HOST_MAX_N) unknowns).
    pub backend: BackendChoice,
    /// Storage format of the matrix on the device. Default: [`MatrixFormat::Csr`].
    pub format: MatrixFormat,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            method: Method::default(),
            precond: PrecondSpec::default(),
            precond_precision: Default::default(),
            params: Params::default(),
            backend: BackendChoice::Auto,
            format: MatrixFormat::Csr,
        }
    }
}

/// The setters shared by [`SolveOptions`] and [`crate::SolverBuilder`]: `$options` is a method
/// of the type that returns its `&mut SolveOptions`.
macro_rules! option_setters {
    ($options:ident) => {
        /// The Krylov method (default GMRES).
        pub fn method(mut self, method: $crate::Method) -> Self {
            self.$options().method = method;
            self
        }
        /// The preconditioner (default none): a `PrecondKind` at its default options, or a
        /// `PrecondSpec` with its own.
        pub fn precond(mut self, precond: impl Into<$crate::precond::PrecondSpec>) -> Self {
            self.$options().precond = precond.into();
            self
        }
        /// The preconditioner with all its options (the same as [`Self::precond`] with a
        /// `PrecondSpec`).
        pub fn precond_spec(mut self, spec: $crate::precond::PrecondSpec) -> Self {
            self.$options().precond = spec;
            self
        }
        /// The preconditioner's precision (default: the solve's): `PrecondPrecision::F32`
        /// stores it in f32 and applies it in f32 inside a double-precision solve.
        pub fn precond_precision(mut self, precision: $crate::precond::PrecondPrecision) -> Self {
            self.$options().precond_precision = precision;
            self
        }
        /// Every solver parameter at once (tolerances, iteration limit, restart, variant, ...).
        pub fn params(mut self, params: $crate::solver::Params) -> Self {
            self.$options().params = params;
            self
        }
        /// The relative tolerance: stop when ||r|| <= max(rtol ||b||, atol) (default 1e-8).
        pub fn rtol(mut self, rtol: f64) -> Self {
            self.$options().params.rtol = rtol;
            self
        }
        /// The absolute tolerance (default 0).
        pub fn atol(mut self, atol: f64) -> Self {
            self.$options().params.atol = atol;
            self
        }
        /// The iteration limit (Krylov steps for GMRES; default 10,000).
        pub fn max_iter(mut self, max_iter: usize) -> Self {
            self.$options().params.max_iter = max_iter;
            self
        }
        /// The GMRES restart length m (default 30; capped at min(m, n, max_iter) by the solver).
        pub fn restart(mut self, restart: usize) -> Self {
            self.$options().params.gmres.restart = restart;
            self
        }
        /// The orthogonalization of the pipelined GMRES (default DCGS2).
        pub fn gmres_orthogonalization(
            mut self,
            orthogonalization: $crate::solver::GmresOrthogonalization,
        ) -> Self {
            self.$options().params.gmres.orthogonalization = orthogonalization;
            self
        }
        /// Pipelined or classical (default pipelined).
        pub fn variant(mut self, variant: $crate::solver::Variant) -> Self {
            self.$options().params.variant = variant;
            self
        }
        /// Synchronous or device-resident iterations (default automatic).
        pub fn execution(mut self, execution: $crate::solver::Execution) -> Self {
            self.$options().params.execution = execution;
            self
        }
        /// Whether the report keeps the residual history (default true).
        pub fn record_history(mut self, record: bool) -> Self {
            self.$options().params.record_history = record;
            self
        }
        /// Where to run (default: the best compiled-in GPU backend that works, else the host).
        pub fn backend(mut self, backend: $crate::backend::BackendChoice) -> Self {
            self.$options().backend = backend;
            self
        }
        /// The matrix's storage format on the device (default CSR).
        pub fn format(mut self, format: $crate::backend::MatrixFormat) -> Self {
            self.$options().format = format;
            self
        }
    };
}
pub(crate) use option_setters;

impl SolveOptions {
    fn options_mut(&mut self) -> &mut SolveOptions {
        self
    }
    option_setters!(options_mut);
}

/// The result of [`solve`].
#[derive(Debug, Clone)]
pub struct Solution<T> {
    /// The last iterate (the best one seen, for GMRES; see the report).
    pub x: Vec<T>,
    /// Iterations, stop reason, true residual, times.
    pub report: SolveReport,
    /// The backend that ran it and why others were passed over.
    pub backend: String,
    /// Notes from the backend choice (why a GPU backend was not used, ...).
    pub notes: Vec<String>,
}

/// Solve A x = b from x = 0.
///
/// Errors: everything the parts can report (unavailable backend, bad sizes or values,
/// preconditioner setup and domain errors, device faults). A solve that stops without
/// converging is not an error: look at `report.stop_reason`.
///
/// ```
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::PrecondKind;
/// use pipekrylov::{solve, Method, SolveOptions};
/// let a = Generator::Poisson2d.generate::<f64>(10_000).unwrap().matrix;
/// let b = vec![1.0; a.n_rows()];
/// let opts = SolveOptions::default().method(Method::Cg).precond(PrecondKind::Jacobi).rtol(1e-10);
/// let sol = solve(&a, &b, &opts).unwrap();
/// assert!(sol.report.stop_reason.converged() && sol.report.relative_true_residual < 1e-9);
/// ```
pub fn solve<T: Scalar>(a: &CsrMatrix<T>, b: &[T], options: &SolveOptions) -> Result<Solution<T>> {
    checked(a, b)?;
    // The reusable solver, used once: the same checks, setup and solve from x = 0.
    let solution = crate::ReusableSolver::builder(a)
        .options(*options)
        .build()?
        .solve(b)?;
    Ok(with_hints(a, solution))
}

/// [`solve`] with `monitor` called after every iteration (GMRES: at the end of each cycle on
/// the pipelined DCGS2 path) with the iteration number and the recursive residual norm. A
/// monitor makes pipelined CG and BiCGStab run synchronously (it must see every iteration as it
/// happens).
///
/// ```
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::solver::Progress;
/// use pipekrylov::{solve_with_monitor, Method, SolveOptions};
/// let a = Generator::Poisson2d.generate::<f64>(400).unwrap().matrix;
/// let b = vec![1.0; a.n_rows()];
/// let mut seen = Vec::new();
/// let opts = SolveOptions::default().method(Method::Cg);
/// let sol = solve_with_monitor(&a, &b, &opts, &mut |p: Progress| seen.push(p.iteration)).unwrap();
/// assert_eq!(seen.len(), sol.report.iterations + 1); // iteration 0 is the initial residual
/// ```
pub fn solve_with_monitor<T: Scalar>(
    a: &CsrMatrix<T>,
    b: &[T],
    options: &SolveOptions,
    monitor: &mut dyn FnMut(Progress),
) -> Result<Solution<T>> {
    checked(a, b)?;
    let solution = crate::ReusableSolver::builder(a)
        .options(*options)
        .build()?
        .solve_with_monitor(b, monitor)?;
    Ok(with_hints(a, solution))
}

/// The solution with a note in its report when CG stopped without converging on a matrix that
/// is not symmetric (the report suggests GMRES or BiCGStab).
fn with_hints<T: Scalar>(a: &CsrMatrix<T>, mut solution: Solution<T>) -> Solution<T> {
    if let Some(hint) = crate::precond::domain::cg_nonsymmetric_hint(a, &solution.report) {
        solution.report.notes.push(hint);
    }
    solution
}

/// The length check of the one-call API, before anything is set up.
fn checked<T: Scalar>(a: &CsrMatrix<T>, b: &[T]) -> Result<()> {
    if b.len() != a.n_rows() {
        return Err(Error::dims(
            "right-hand side length vs matrix rows",
            a.n_rows(),
            b.len(),
        ));
    }
    Ok(())
}
