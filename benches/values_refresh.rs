//! What a values-only refresh ([`ReusableSolver::update_values`]) costs against a full setup,
//! per preconditioner, on problems of about `--n` unknowns (default 1M): the preconditioner's
//! full setup and the matrix upload (what a new solver for the new values would do, the
//! backend already open) against the refresh (values written in place, the numeric phase
//! alone). The refreshed solver's solve is checked against a solver set up for the new values
//! from scratch (iterations and iterates). Then the steady state of a time-stepping loop: two
//! more refreshes (values touched in place), the faster one reported, and the largest change
//! of the solve they lead back to. One CSV row per preconditioner.
//!
//! `cargo bench --bench values_refresh -- [--backend host|cuda|opencl] [--n N] [--only NAME]
//! [--out FILE.csv]` (add `--features cuda` or `opencl` for the GPU backends).

use pipekrylov::backend::{BackendChoice, MatrixFormat, SpmvOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{PrecondKind, PrecondSpec};
use pipekrylov::{Method, ReusableSolver};
use std::io::Write;
use std::time::Instant;

/// A new time step's values on `a`'s pattern: W A W with W = diag(1 + 0.5 sin i) (symmetric
/// and positive definite when A is) and the diagonal 10% larger.
fn new_values(a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let w = |i: usize| 1.0 + 0.5 * (i as f64).sin();
    let mut b = a.clone();
    let (rp, ci) = (a.row_ptr().to_vec(), a.col_idx().to_vec());
    let v = b.values_mut();
    for i in 0..a.n_rows() {
        for p in rp[i]..rp[i + 1] {
            v[p] *= w(i) * w(ci[p]) * if ci[p] == i { 1.1 } else { 1.0 };
        }
    }
    b
}

/// (name, method, the problem is SPD, the preconditioner).
fn cases() -> Vec<(&'static str, Method, bool, PrecondSpec)> {
    let spec = |kind| PrecondSpec::from(kind);
    vec![
        ("none", Method::Cg, true, spec(PrecondKind::None)),
        ("jacobi", Method::Cg, true, spec(PrecondKind::Jacobi)),
        (
            "point-block-jacobi",
            Method::Cg,
            true,
            PrecondSpec::PointBlockJacobi { block_size: 2 },
        ),
        ("ip", Method::Cg, true, spec(PrecondKind::Ip)),
        ("fsai", Method::Cg, true, spec(PrecondKind::Fsai)),
        ("afsai", Method::Cg, true, spec(PrecondKind::Afsai)),
        ("amg", Method::Cg, true, spec(PrecondKind::Amg)),
        (
            "block-jacobi",
            Method::BiCgStab,
            false,
            PrecondSpec::BlockJacobi(pipekrylov::precond::Bilu0Options {
                subdomains: 64,
                ..Default::default()
            }),
        ),
        ("bilu0", Method::BiCgStab, false, spec(PrecondKind::Bilu0)),
        ("isai", Method::BiCgStab, false, spec(PrecondKind::Isai)),
        ("ilu", Method::BiCgStab, false, spec(PrecondKind::Ilu)),
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut backend = BackendChoice::Host;
    let mut n = 1_000_000;
    let mut only: Option<String> = None;
    let mut out: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--backend" => backend = args.next().ok_or("--backend NAME")?.parse()?,
            "--n" => n = args.next().ok_or("--n N")?.parse()?,
            "--only" => only = args.next(),
            "--out" => out = args.next(),
            "--bench" => {}
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let spd = Generator::Poisson3d.generate::<f64>(n)?.matrix;
    let nonsym = Generator::ConvDiff3d.generate::<f64>(n)?.matrix;
    let mut rows = vec![
        "backend,precond,method,n,nnz,precond_setup_s,matrix_upload_s,full_setup_s,refresh_s,\
         refresh_matrix_s,refresh_precond_s,refresh_precond_host_s,refresh_precond_device_s,\
         refresh_over_full,steady_refresh_s,steady_over_full,steady_max_diff,iterations,fresh_iterations,\
         max_rel_diff,kept"
            .to_string(),
    ];
    println!(
        "{:<20} {:>8} {:>10} {:>10} {:>8} {:>6} {:>10}",
        "precond", "n", "full s", "refresh s", "ratio", "its", "diff"
    );
    for (name, method, symmetric, spec) in cases() {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let a1 = if symmetric { &spd } else { &nonsym };
        let a2 = new_values(a1);
        let build = |a: &CsrMatrix<f64>| {
            ReusableSolver::builder(a)
                .backend(backend)
                .method(method)
                .precond_spec(spec)
                .rtol(1e-8)
                .max_iter(20_000)
                .build()
        };
        let mut solver = build(a1)?;
        let precond_setup = solver.setup_times().total();
        // The matrix upload a new solver would do, on the open backend.
        let t = Instant::now();
        let (be, _) = solver.backend();
        let m = be.upload_matrix(a1, MatrixFormat::Csr)?;
        pipekrylov::backend::VectorOps::synchronize(be)?;
        let matrix_upload = t.elapsed().as_secs_f64();
        drop(m);
        let b = vec![1.0; a1.n_rows()];
        solver.solve(&b)?; // warm: the workspace and resident batches exist
        let update = solver.update_values(&a2)?;
        let refreshed = solver.solve(&b)?;
        // The steady state of a time-stepping loop: two more refreshes (back to A1's values,
        // then A2's again), each matrix's values touched in place as such a code does (the
        // fingerprint of its values is computed again, that of its pattern is kept); the last
        // solve must repeat the first refreshed one.
        let mut steady = Vec::new();
        for a in [a1, &a2] {
            let mut next = a.clone();
            next.values_mut();
            steady.push(solver.update_values(&next)?.seconds);
        }
        let again = solver.solve(&b)?;
        let steady_diff = again
            .x
            .iter()
            .zip(&refreshed.x)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        let steady = steady.iter().copied().fold(f64::INFINITY, f64::min);
        drop(solver);
        let fresh = build(&a2)?.solve(&b)?;
        let scale = fresh.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = refreshed
            .x
            .iter()
            .zip(&fresh.x)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
            / scale;
        let full = precond_setup + matrix_upload;
        let precond_refresh = update.precond.as_ref().map_or(0.0, |p| p.times.total());
        let (precond_host, precond_device) = update.precond.as_ref().map_or((0.0, 0.0), |p| {
            (p.times.host_seconds, p.times.device_seconds)
        });
        let kept = update
            .precond
            .as_ref()
            .map_or(String::new(), |p| p.kept.clone());
        rows.push(format!(
            "{},{name},{method:?},{},{},{precond_setup:.6},{matrix_upload:.6},{full:.6},{:.6},{:.6},\
             {precond_refresh:.6},{precond_host:.6},{precond_device:.6},{:.4},{steady:.6},{:.4},{steady_diff:.3e},{},{},{diff:.3e},\"{}\"",
            refreshed.backend.split(' ').next().unwrap_or(""),
            a1.n_rows(),
            a1.nnz(),
            update.seconds,
            update.matrix_seconds,
            update.seconds / full,
            steady / full,
            refreshed.report.iterations,
            fresh.report.iterations,
            kept.replace('"', "'")
        ));
        println!(
            "{name:<20} {:>8} {full:>10.4} {:>10.4} {:>8.3} {:>6} {diff:>10.2e}",
            a1.n_rows(),
            update.seconds,
            update.seconds / full,
            refreshed.report.iterations
        );
    }
    match out {
        Some(path) => {
            std::fs::File::create(path)?.write_all((rows.join("\n") + "\n").as_bytes())?
        }
        None => println!("{}", rows.join("\n")),
    }
    Ok(())
}
