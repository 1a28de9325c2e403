//! Read a Matrix Market file, solve A x = b with the method, preconditioner and backend named on
//! the command line, check the answer and write the solution:
//!
//! `cargo run --release --example solve_matrix_market -- [FILE.mtx] [cg|bicgstab|gmres]
//!  [none|jacobi|bilu0|isai|fsai|...] [auto|host|opencl|cuda]`
//!
//! Defaults: `tests/data/494_bus.mtx` (a SuiteSparse power network, SPD), `cg`, `jacobi`, `auto`.
//! The right-hand side is b = A 1, so the exact solution is all ones.

use pipekrylov::matrix::matrix_market;
use pipekrylov::precond::PrecondKind;
use pipekrylov::{solve, Method, SolveOptions};

/// Exit codes: 0 converged, 2 ran without converging, 1 an error (its message on stderr).
fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The solve; `Ok(converged)`.
fn run() -> Result<bool, pipekrylov::Error> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "tests/data/494_bus.mtx".to_string());
    let method: Method = args.next().as_deref().unwrap_or("cg").parse()?;
    let precond: PrecondKind = args.next().as_deref().unwrap_or("jacobi").parse()?;
    let backend = args.next().as_deref().unwrap_or("auto").parse()?;

    let a = matrix_market::read_csr::<f64>(&path)?;
    println!(
        "{path}: {} x {}, {} nonzeros",
        a.n_rows(),
        a.n_cols(),
        a.nnz()
    );
    let ones = vec![1.0; a.n_cols()];
    let mut b = vec![0.0; a.n_rows()];
    a.mul_vec(&ones, &mut b)?;

    let options = SolveOptions::default()
        .method(method)
        .precond(precond)
        .rtol(1e-10)
        .backend(backend);
    let sol = solve(&a, &b, &options)?;
    let r = &sol.report;
    println!(
        "{} on {}: {} after {} iterations, true relative residual {:.2e}",
        format!("{method:?}").to_lowercase(),
        sol.backend,
        r.stop_reason,
        r.iterations,
        r.relative_true_residual
    );
    let err = sol.x.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
    println!("max |x - 1| = {err:.2e}");
    let out = std::env::temp_dir().join("solution.mtx");
    matrix_market::write_vector_file(&out, &sol.x)?;
    println!("solution written to {}", out.display());
    Ok(r.stop_reason.converged())
}
