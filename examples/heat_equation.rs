//! Transient heat conduction on the unit square with a conductivity that changes in time,
//! the use the paper motivates (many solves with one matrix pattern). Implicit Euler for
//! u_t = div(kappa(x, t) grad u) with u = 0 on the boundary and a hot square in the middle at
//! t = 0:
//!
//!   (I + dt A(t_{k+1})) u_{k+1} = u_k,   A(t) = the 5-point finite-volume operator of kappa / h^2,
//!
//! kappa(x, t) = 1 + 0.9 x sin^2(pi t / 0.01): the coefficient, and so the matrix's values,
//! change at every step while its pattern stays. One CG solver is set up once (matrix uploaded,
//! BILU(0) pattern and levels analysed, work vectors allocated); every step hands it the new
//! values with `update_values` (only BILU(0)'s numeric factorization runs again) and solves
//! from the previous step.
//!
//! `cargo run --release --example heat_equation [GRID] [STEPS] [BACKEND]` (defaults 127, 200 and
//! `auto`; add `--features cuda` or `opencl` to run on a GPU: `auto` picks it like the command
//! line's `--backend auto`).

use pipekrylov::backend::{BackendChoice, BackendInfo};
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::PrecondKind;
use pipekrylov::{Method, ReusableSolver};

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

/// The conductivity at x at time t.
fn kappa(x: f64, t: f64) -> f64 {
    let s = (std::f64::consts::PI * t / 0.01).sin();
    1.0 + 0.9 * x * s * s
}

/// I + dt A(t) on the k x k interior grid: each edge between neighbouring cells conducts with
/// kappa at its midpoint (the same pattern for every t).
fn system(k: usize, dt: f64, t: f64) -> Result<CsrMatrix<f64>, pipekrylov::Error> {
    let h = 1.0 / (k + 1) as f64;
    let c = dt / (h * h);
    let mut triplets = Vec::with_capacity(5 * k * k);
    for i in 0..k {
        for j in 0..k {
            let row = i * k + j;
            let mut diagonal = 1.0;
            for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                // x of the edge's midpoint (j runs along x).
                let x = (j as f64 + 1.0 + 0.5 * dj as f64) * h;
                let w = c * kappa(x, t);
                diagonal += w;
                let (ni, nj) = (i as i64 + di, j as i64 + dj);
                if (0..k as i64).contains(&ni) && (0..k as i64).contains(&nj) {
                    triplets.push((row, ni as usize * k + nj as usize, -w));
                }
            }
            triplets.push((row, row, diagonal));
        }
    }
    CsrMatrix::from_triplets(k * k, k * k, &triplets)
}

fn run() -> Result<(), pipekrylov::Error> {
    let mut args = std::env::args().skip(1);
    let k = number(args.next(), "GRID", 127)?;
    let steps = number(args.next(), "STEPS", 200)?;
    let choice: BackendChoice = args.next().as_deref().unwrap_or("auto").parse()?;
    let (n, h) = (k * k, 1.0 / (k + 1) as f64);
    let dt = 1e-4;

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

    // Set up once: the matrix on the device, BILU(0)'s pattern and levels, the workspace.
    let mut solver = ReusableSolver::builder(&system(k, dt, dt)?)
        .method(Method::Cg)
        .precond(PrecondKind::Bilu0)
        .rtol(1e-10)
        .backend(choice)
        .build()?;
    let (backend, notes) = solver.backend();
    println!("backend: {} ({})", backend.name(), backend.device_name());
    for note in notes {
        println!("  note: {note}");
    }
    let setup = solver.setup_times().total();

    let heat = |v: &[f64]| v.iter().sum::<f64>() * h * h;
    println!("step       t     heat  iterations  true residual");
    let (mut total_iterations, mut refresh_seconds) = (0, 0.0);
    let mut u = u0.clone();
    for step in 1..=steps {
        let t = step as f64 * dt;
        if step > 1 {
            // The new coefficient: new values on the same pattern.
            refresh_seconds += solver.update_values(&system(k, dt, t)?)?.seconds;
        }
        let sol = solver.solve_from(&u, &u)?; // b = u_k, initial guess u_k
        if !sol.report.stop_reason.converged() {
            return Err(pipekrylov::Error::param(
                "time step",
                format!("step {step} did not converge: {}", sol.report.stop_reason),
            ));
        }
        total_iterations += sol.report.iterations;
        u = sol.x;
        if step == 1 || step % 50 == 0 || step == steps {
            println!(
                "{step:4} {t:9.4} {:8.5} {:11} {:14.2e}",
                heat(&u),
                sol.report.iterations,
                sol.report.relative_true_residual
            );
        }
    }
    // The heat only leaks out through the cold boundary: it never grows, and the maximum
    // principle keeps every temperature in [0, 1].
    assert!(heat(&u) < heat(&u0));
    assert!(u.iter().all(|&t| (-1e-9..=1.0 + 1e-9).contains(&t)));
    println!(
        "{steps} steps, {total_iterations} CG iterations in all ({:.1} per step)",
        total_iterations as f64 / steps as f64
    );
    println!(
        "setup {setup:.2e} s once; new values {:.2e} s per step (numeric phase only)",
        refresh_seconds / steps.saturating_sub(1).max(1) as f64
    );
    Ok(())
}
