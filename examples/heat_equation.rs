//! Transient heat conduction on the unit square, the paper's motivating use: many solves with
//! one matrix. Implicit Euler for u_t = Laplace(u) with u = 0 on the boundary and a hot square
//! in the middle at t = 0:
//!
//!   (I + dt A) u_{k+1} = u_k,   A = the 5-point Laplacian / h^2,
//!
//! one CG solver (matrix uploaded, Jacobi preconditioner and work vectors set up once) reused
//! for every time step, the previous step as the initial guess.
//!
//! `cargo run --release --example heat_equation [GRID] [STEPS] [BACKEND]` (defaults 127, 200 and
//! `auto`; add `--features cuda` or `opencl` to run on a GPU: `auto` picks it like the command
//! line's `--backend auto`).

use pipekrylov::backend::{BackendChoice, BackendInfo, MatrixFormat, SpmvOps, VectorOps};
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::Jacobi;
use pipekrylov::solver::{Cg, Params};

/// Bad arguments and solver errors end the program with the error's message and exit code 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The positional argument `name` as a number (`default` when absent).
fn number(arg: Option<String>, name: &str, default: usize) -> Result<usize, pipekrylov::Error> {
    arg.map_or(Ok(default), |s| {
        s.parse()
            .map_err(|_| pipekrylov::Error::param(name, format!("'{s}' is not a whole number")))
    })
}

fn run() -> Result<(), pipekrylov::Error> {
    let mut args = std::env::args().skip(1);
    let k = number(args.next(), "GRID", 127)?;
    let steps = number(args.next(), "STEPS", 200)?;
    let choice: BackendChoice = args.next().as_deref().unwrap_or("auto").parse()?;
    let (n, h) = (k * k, 1.0 / (k + 1) as f64);
    let dt = 1e-4;

    // I + dt A on the k x k interior grid.
    let c = dt / (h * h);
    let mut triplets = Vec::with_capacity(5 * n);
    for i in 0..k {
        for j in 0..k {
            let row = i * k + j;
            triplets.push((row, row, 1.0 + 4.0 * c));
            for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                let (ni, nj) = (i as i64 + di, j as i64 + dj);
                if (0..k as i64).contains(&ni) && (0..k as i64).contains(&nj) {
                    triplets.push((row, ni as usize * k + nj as usize, -c));
                }
            }
        }
    }
    let a = CsrMatrix::from_triplets(n, n, &triplets)?;

    // Initial temperature: 1 in the middle third of the square, 0 elsewhere.
    let u0: Vec<f64> = (0..n)
        .map(|row| {
            let (i, j) = (row / k, row % k);
            let mid = |t: usize| (k / 3..2 * k / 3).contains(&t);
            if mid(i) && mid(j) {
                1.0
            } else {
                0.0
            }
        })
        .collect();

    let (backend, notes) = choice.create()?;
    println!("backend: {} ({})", backend.name(), backend.device_name());
    for note in notes {
        println!("  note: {note}");
    }
    // Set up once: the matrix on the device, the preconditioner, the solver's workspace.
    let m = backend.upload_matrix(&a, MatrixFormat::Csr)?;
    let jacobi = Jacobi::new(&backend, &a)?;
    let params = Params {
        rtol: 1e-10,
        ..Params::default()
    };
    let mut cg = Cg::new(&backend, &m, Some(&jacobi), params)?;
    let mut u = backend.upload(&u0)?;
    let mut rhs = backend.alloc::<f64>(n)?;

    let heat = |v: &[f64]| v.iter().sum::<f64>() * h * h;
    println!("step       t     heat  iterations  true residual");
    let mut total_iterations = 0;
    for step in 1..=steps {
        backend.copy(&u, &mut rhs)?; // b = u_k; u (the guess) stays u_k
        let report = cg.solve(&rhs, &mut u)?;
        if !report.stop_reason.converged() {
            return Err(pipekrylov::Error::param(
                "time step",
                format!("step {step} did not converge: {}", report.stop_reason),
            ));
        }
        total_iterations += report.iterations;
        if step == 1 || step % 50 == 0 || step == steps {
            let v = backend.download(&u)?;
            println!(
                "{step:4} {:9.4} {:8.5} {:11} {:14.2e}",
                step as f64 * dt,
                heat(&v),
                report.iterations,
                report.relative_true_residual
            );
        }
    }
    let v = backend.download(&u)?;
    // The heat only leaks out through the cold boundary: it never grows, and the maximum
    // principle keeps every temperature in [0, 1].
    assert!(heat(&v) < heat(&u0));
    assert!(v.iter().all(|&t| (-1e-9..=1.0 + 1e-9).contains(&t)));
    println!(
        "{steps} steps, {total_iterations} CG iterations in all ({:.1} per step)",
        total_iterations as f64 / steps as f64
    );
    Ok(())
}
