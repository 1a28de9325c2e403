//! `pipekrylov solve`.

use super::problem::{load_matrix, load_rhs};
use super::{EXIT_CONVERGED, EXIT_NOT_CONVERGED};
use crate::backend::{
    AnyBackend, Backend, BackendChoice, BackendInfo, MatrixFormat, SpmvOps, VectorOps,
};
use crate::error::{Error, Result};
use crate::precond::{Jacobi, PrecondKind, Preconditioner};
use crate::scalar::{Precision, Scalar};
use crate::solver::{BiCgStab, Cg, Gmres, Params, SolveReport, Variant};
use std::time::Instant;

/// Arguments of `solve` (parsed by the binary).
#[derive(Debug, Clone)]
pub struct SolveArgs {
    /// `--matrix FILE.mtx`
    pub matrix: Option<String>,
    /// `--generate NAME:N`
    pub generate: Option<String>,
    /// `--rhs ones|random|FILE.mtx`
    pub rhs: String,
    /// `--solver cg|bicgstab|gmres`
    pub solver: String,
    /// `--restart M`
    pub restart: usize,
    /// `--variant`
    pub variant: Variant,
    /// `--precond`
    pub precond: PrecondKind,
    /// `--backend`
    pub backend: BackendChoice,
    /// `--precision`
    pub precision: Precision,
    /// `--tol`
    pub tol: f64,
    /// `--atol`
    pub atol: f64,
    /// `--maxit`
    pub maxit: usize,
    /// `--format csr|sell|ell`
    pub format: MatrixFormat,
    /// `--json`
    pub json: bool,
}

/// Run a solve; returns the exit code and the text for stdout. Backend notes go to `notes`.
pub fn run(args: &SolveArgs, notes: &mut Vec<String>) -> Result<(i32, String)> {
    let (backend, why) = args.backend.create()?;
    notes.extend(why);
    match args.precision {
        Precision::F64 => {
            if !backend.supports_f64() {
                return Err(Error::BackendUnavailable {
                    backend: backend.name().into(),
                    reason: "the device has no double precision (use --precision f32)".into(),
                });
            }
            typed::<f64>(&backend, args)
        }
        Precision::F32 => typed::<f32>(&backend, args),
    }
}

fn typed<T: Scalar>(backend: &AnyBackend, args: &SolveArgs) -> Result<(i32, String)> {
    let t0 = Instant::now();
    let system = load_matrix::<T>(args.matrix.as_deref(), args.generate.as_deref())?;
    let a = &system.matrix;
    let n = a.n_rows();
    let rhs = load_rhs::<T>(&args.rhs, n)?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let m = backend.upload_matrix(a, args.format)?;
    let jacobi;
    let precond: Option<&dyn Preconditioner<AnyBackend, T>> = match args.precond {
        PrecondKind::None => None,
        PrecondKind::Jacobi => {
            jacobi = Jacobi::new(backend, a)?;
            Some(&jacobi)
        }
    };
    let params = Params {
        rtol: args.tol,
        atol: args.atol,
        max_iter: args.maxit,
        restart: args.restart,
        variant: args.variant,
        ..Params::default()
    };
    let b = backend.upload(&rhs)?;
    let mut x = backend.alloc::<T>(n)?;
    let report = solve_with(backend, &m, precond, params, &args.solver, &b, &mut x)?;
    let code = if report.stop_reason.converged() {
        EXIT_CONVERGED
    } else {
        EXIT_NOT_CONVERGED
    };
    let text = if args.json {
        json(
            backend,
            &system.name,
            a.nnz(),
            n,
            args,
            &report,
            load_seconds,
        )
    } else {
        human(backend, &system.name, a.nnz(), n, args, &report)
    };
    Ok((code, text))
}

fn solve_with<B: Backend, T: Scalar>(
    backend: &B,
    m: &crate::backend::DeviceMatrix<T>,
    precond: Option<&dyn Preconditioner<B, T>>,
    params: Params,
    solver: &str,
    b: &crate::backend::Buffer<T>,
    x: &mut crate::backend::Buffer<T>,
) -> Result<SolveReport> {
    match solver {
        "cg" => Cg::new(backend, m, precond, params)?.solve(b, x),
        "bicgstab" => BiCgStab::new(backend, m, precond, params)?.solve(b, x),
        "gmres" => Gmres::new(backend, m, precond, params)?.solve(b, x),
        other => Err(Error::param(
            "solver",
            format!("unknown solver '{other}' (cg, bicgstab or gmres)"),
        )),
    }
}

fn json(
    backend: &AnyBackend,
    problem: &str,
    nnz: usize,
    n: usize,
    args: &SolveArgs,
    r: &SolveReport,
    load_seconds: f64,
) -> String {
    let v = serde_json::json!({
        "solver": r.solver,
        "variant": args.variant.to_string(),
        "backend": backend.name(),
        "device": backend.device_name(),
        "precision": args.precision.to_string(),
        "precond": format!("{:?}", args.precond).to_lowercase(),
        "problem": problem,
        "n": n,
        "nnz": nnz,
        "iterations": r.iterations,
        "stop_reason": r.stop_reason.to_string(),
        "converged": r.stop_reason.converged(),
        "relative_residual": r.relative_true_residual,
        "true_residual": r.true_residual,
        "recursive_relative_residual": r.recursive_relative_residual(),
        "accuracy_warning": r.accuracy_warning,
        "load_seconds": load_seconds,
        "setup_seconds": r.setup_seconds,
        "solve_seconds": r.solve_seconds,
        "seconds_per_iteration": r.seconds_per_iteration(),
        "launches_per_iteration": r.launches_per_iteration,
        "transfers_per_iteration": r.transfers_per_iteration,
    });
    v.to_string()
}

fn human(
    backend: &AnyBackend,
    problem: &str,
    nnz: usize,
    n: usize,
    args: &SolveArgs,
    r: &SolveReport,
) -> String {
    let mut s = format!(
        "{} ({}) on {} [{}]\nsystem: {problem}, n = {n}, nnz = {nnz}, {} precision, preconditioner {:?}\n",
        r.solver,
        args.variant,
        backend.device_name(),
        backend.name(),
        args.precision,
        args.precond
    );
    s += &format!(
        "stop: {} after {} iterations\nrelative residual ||b - Ax||/||b|| = {:.3e} (recursive {:.3e})\n",
        r.stop_reason,
        r.iterations,
        r.relative_true_residual,
        r.recursive_relative_residual()
    );
    if let Some(w) = &r.accuracy_warning {
        s += &format!("warning: {w}\n");
    }
    s += &format!(
        "time: setup {:.3} ms, solve {:.3} ms, {:.2} us per iteration; {:.2} launches and {:.2} transfers per iteration",
        r.setup_seconds * 1e3,
        r.solve_seconds * 1e3,
        r.seconds_per_iteration() * 1e6,
        r.launches_per_iteration,
        r.transfers_per_iteration
    );
    s
}
