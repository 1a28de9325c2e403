//! The one-call entry point: [`solve`] a system with a solver and a preconditioner chosen by
//! name on the best available backend (like the command line's `--backend auto`), the solution
//! returned as a `Vec`.

use crate::backend::{BackendChoice, MatrixFormat};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::{PrecondKind, PrecondSpec};
use crate::scalar::Scalar;
use crate::solver::{Params, SolveReport};

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

/// What [`solve`] does: method, preconditioner, tolerances and where it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolveOptions {
    /// The Krylov method.
    pub method: Method,
    /// The preconditioner and its parameters (`PrecondSpec::default()` is none).
    pub precond: PrecondSpec,
    /// Tolerances, iteration limit, restart, pipelined or classical.
    pub params: Params,
    /// Where to run (`Auto`: the best compiled-in GPU backend that works, else the host).
    pub backend: BackendChoice,
    /// Storage format of the matrix on the device.
    pub format: MatrixFormat,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            method: Method::default(),
            precond: PrecondSpec::default(),
            params: Params::default(),
            backend: BackendChoice::Auto,
            format: MatrixFormat::Csr,
        }
    }
}

impl SolveOptions {
    /// These options with the method `method`.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }
    /// These options with the preconditioner `kind` at its default parameters.
    pub fn precond(mut self, kind: PrecondKind) -> Self {
        self.precond.kind = kind;
        self
    }
    /// These options with the relative tolerance `rtol`.
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.params.rtol = rtol;
        self
    }
    /// These options on the backend `backend`.
    pub fn backend(mut self, backend: BackendChoice) -> Self {
        self.backend = backend;
        self
    }
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
    if b.len() != a.n_rows() {
        return Err(Error::dims(
            "right-hand side length vs matrix rows",
            a.n_rows(),
            b.len(),
        ));
    }
    // The reusable solver, used once: the same checks, setup and solve from x = 0.
    crate::ReusableSolver::builder(a)
        .options(*options)
        .build()?
        .solve(b)
}
