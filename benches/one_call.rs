//! What one call of [`pipekrylov::solve`] costs when the process already made one: each call
//! opens its backend, uploads the matrix, sets up the preconditioner and solves from zero. The
//! first call of the process pays what later calls should not (the OpenCL context and program
//! builds, CUDA's module loads); the later calls are what an application or the Python
//! one-call solve pays per system. One CSV row per backend: the first call, the median and
//! the fastest of `--calls` later calls, the solve's own time and the iterations (checked
//! equal across calls); then the same call in phases, medians of `--calls`: opening the backend
//! alone, building the reusable solver (backend, upload, preconditioner), its solve (wall and
//! the report's own time) and dropping it. Last, what a call leaves behind for the code after
//! it: the median time of a fixed host solve (n = 16, host backend) right after each call.
//!
//! `cargo bench --bench one_call -- [--backend host|cuda|opencl]... [--n N] [--calls K]
//! [--out FILE.csv]` (add `--features cuda` or `opencl` for the GPU backends).

use pipekrylov::backend::BackendChoice;
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{PrecondKind, PrecondSpec};
use pipekrylov::{Method, ReusableSolver, SolveOptions};
use std::io::Write;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut backends: Vec<BackendChoice> = Vec::new();
    let mut n = 4096;
    let mut calls = 20;
    let mut out: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--backend" => backends.push(args.next().ok_or("--backend NAME")?.parse()?),
            "--n" => n = args.next().ok_or("--n N")?.parse()?,
            "--calls" => calls = args.next().ok_or("--calls K")?.parse()?,
            "--out" => out = args.next(),
            "--bench" => {}
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if calls == 0 {
        return Err("--calls must be at least 1".into());
    }
    if backends.is_empty() {
        backends.push(BackendChoice::Host);
    }
    let a = Generator::Poisson2d.generate::<f64>(n)?.matrix;
    let b = vec![1.0; a.n_rows()];
    let mut rows = vec![
        "backend,n,nnz,first_call_s,median_call_s,min_call_s,solve_s,iterations,\
              open_backend_s,build_s,solve_wall_s,solve_report_s,drop_s,host_solve_after_s"
            .to_string(),
    ];
    println!(
        "{:<8} {:>7} {:>12} {:>12} {:>12} {:>12} {:>6}",
        "backend", "n", "first s", "median s", "min s", "solve s", "its"
    );
    for backend in backends {
        let options = SolveOptions {
            method: Method::Cg,
            precond: PrecondSpec::from(PrecondKind::Jacobi),
            backend,
            ..SolveOptions::default()
        };
        let timed = || -> Result<(f64, pipekrylov::Solution<f64>), pipekrylov::Error> {
            let start = Instant::now();
            let solution = pipekrylov::solve(&a, &b, &options)?;
            Ok((start.elapsed().as_secs_f64(), solution))
        };
        let (first, reference) = timed()?;
        let mut times = Vec::with_capacity(calls);
        let mut solve_s = f64::INFINITY;
        for _ in 0..calls {
            let (t, s) = timed()?;
            if s.report.iterations != reference.report.iterations {
                return Err(format!(
                    "{}: {} iterations, the first call took {}",
                    s.backend, s.report.iterations, reference.report.iterations
                )
                .into());
            }
            solve_s = solve_s.min(s.report.solve_seconds);
            times.push(t);
        }
        times.sort_by(f64::total_cmp);
        let (median, min) = (times[times.len() / 2], times[0]);
        let phases = phases(&a, &b, &options, calls)?;
        let after = host_solve_after(&timed, calls)?;
        // "opencl (device ...)": the backend's name.
        let name = reference.backend.split_whitespace().next().unwrap_or("?");
        println!(
            "{:<8} {:>7} {:>12.6} {:>12.6} {:>12.6} {:>12.6} {:>6}",
            name,
            a.n_rows(),
            first,
            median,
            min,
            solve_s,
            reference.report.iterations
        );
        rows.push(format!(
            "{name},{},{},{first:.6},{median:.6},{min:.6},{solve_s:.6},{},{},{after:.7}",
            a.n_rows(),
            a.nnz(),
            reference.report.iterations,
            phases
                .iter()
                .map(|t| format!("{t:.6}"))
                .collect::<Vec<_>>()
                .join(",")
        ));
        println!(
            "{:<8} phases: open {:.6}  build {:.6}  solve {:.6} (report {:.6})  drop {:.6}; \
             a host solve after it {:.7}",
            name, phases[0], phases[1], phases[2], phases[3], phases[4], after
        );
    }
    if let Some(path) = out {
        let mut f = std::fs::File::create(path)?;
        for row in rows {
            writeln!(f, "{row}")?;
        }
    }
    Ok(())
}

/// Medians over `calls` of: opening the backend alone (and closing it), building the reusable
/// solver, its solve (wall, and the report's solve time), dropping the solver.
fn phases(
    a: &pipekrylov::matrix::CsrMatrix<f64>,
    b: &[f64],
    options: &SolveOptions,
    calls: usize,
) -> Result<[f64; 5], pipekrylov::Error> {
    let mut samples: [Vec<f64>; 5] = Default::default();
    for _ in 0..calls {
        let start = Instant::now();
        drop(options.backend.create_for(a.n_rows())?);
        samples[0].push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let mut solver = ReusableSolver::builder(a).options(*options).build()?;
        samples[1].push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let solution = solver.solve(b)?;
        samples[2].push(start.elapsed().as_secs_f64());
        samples[3].push(solution.report.solve_seconds);
        let start = Instant::now();
        drop(solver);
        samples[4].push(start.elapsed().as_secs_f64());
    }
    Ok(samples.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }))
}

/// The median time of a host solve at n = 16 run right after each of `calls` calls of `call`.
fn host_solve_after(
    call: &dyn Fn() -> Result<(f64, pipekrylov::Solution<f64>), pipekrylov::Error>,
    calls: usize,
) -> Result<f64, pipekrylov::Error> {
    let small = Generator::Poisson2d.generate::<f64>(16)?.matrix;
    let ones = vec![1.0; small.n_rows()];
    let host = SolveOptions {
        backend: BackendChoice::Host,
        ..SolveOptions::default()
    };
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        call()?;
        let start = Instant::now();
        pipekrylov::solve(&small, &ones, &host)?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
