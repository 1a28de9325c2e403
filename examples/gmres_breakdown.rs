//! Time of each kernel of one pipelined GMRES step (step i of a cycle) on each available
//! backend. `cargo run --release --features "cuda opencl" --example gmres_breakdown [n] [i]`

use pipekrylov::backend::{Basis, Slot};
use pipekrylov::prelude::*;

mod common;
use common::{median_us_per_iteration, time};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4_190_209);
    let i: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(16);
    let m = 30;
    let p = pipekrylov::matrix::generate::Generator::Poisson2d
        .generate::<f64>(n)
        .unwrap();
    let n = p.matrix.n_rows();
    println!("poisson2d n = {n}, step i = {i} of GMRES({m}); us per kernel");
    println!("backend | basis_spmv_dots | basis_dots (i-2 cols) | gmres_gram_schmidt | gmres_normalize | multi_axpy (m cols) | one step (4 kernels) | GMRES solve per iteration");
    for choice in [BackendChoice::Cuda, BackendChoice::OpenCl] {
        let Ok((be, _)) = choice.create() else {
            continue;
        };
        let a = be.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let init: Vec<f64> = (0..n * (m + 1))
            .map(|k| ((k % 97) as f64 - 48.0) / 97.0)
            .collect();
        let mut basis = Basis::from_buffer(be.upload(&init).unwrap(), n, m + 1).unwrap();
        let mut partials = be.partials::<f64>(n, m + 1).unwrap();
        let mut xi = be.partials::<f64>(n, m).unwrap();
        let mut rmat = be.alloc::<f64>(m * m).unwrap();
        let mut y = be.alloc::<f64>(n).unwrap();
        let coeffs = vec![1e-3; m];
        let reps = 50;
        let t_spmv = time(5, reps, &be, || {
            be.basis_spmv_dots(
                &a,
                None,
                &mut basis,
                i,
                &mut partials,
                Some(Slot(i - 2)),
                None,
            )
            .unwrap()
        });
        let t_dots = time(5, reps, &be, || {
            be.basis_dots(&basis, i, 1..i - 1, &mut partials, Slot(0))
                .unwrap()
        });
        let t_gs = time(5, reps, &be, || {
            be.gmres_gram_schmidt(&mut basis, i, &mut partials, Slot(0), Slot(m), &mut rmat, m)
                .unwrap()
        });
        let t_norm = time(5, reps, &be, || {
            be.gmres_normalize(
                &mut basis,
                i,
                &partials,
                Slot(m),
                &mut rmat,
                m,
                &mut xi,
                Slot(i - 1),
            )
            .unwrap()
        });
        let t_axpy = time(5, reps, &be, || {
            be.multi_axpy(&mut y, &basis, 0..m, &coeffs).unwrap()
        });
        let t_step = time(5, reps, &be, || {
            be.basis_spmv_dots(
                &a,
                None,
                &mut basis,
                i,
                &mut partials,
                Some(Slot(i - 2)),
                None,
            )
            .unwrap();
            be.basis_dots(&basis, i, 1..i - 1, &mut partials, Slot(0))
                .unwrap();
            be.gmres_gram_schmidt(&mut basis, i, &mut partials, Slot(0), Slot(m), &mut rmat, m)
                .unwrap();
            be.gmres_normalize(
                &mut basis,
                i,
                &partials,
                Slot(m),
                &mut rmat,
                m,
                &mut xi,
                Slot(i - 1),
            )
            .unwrap();
        });
        // The host interactions of a cycle's end, each alone (blocking).
        let mut rhost = vec![0.0; m * m];
        let t_read = time(5, reps, &be, || be.read(&rmat, &mut rhost).unwrap());
        let t_fin = time(5, reps, &be, || {
            be.finish(&xi).unwrap();
        });
        let b = be.upload(&vec![1.0; n]).unwrap();
        let mut scratch = be.partials::<f64>(n, 1).unwrap();
        let mut r = be.alloc::<f64>(n).unwrap();
        let t_res = time(5, reps, &be, || {
            be.residual(&a, &y, &b, &mut r, &mut scratch, Some(Slot(0)))
                .unwrap();
            be.finish(&scratch).unwrap();
        });
        println!(
            "{}: read rmat {t_read:.1} | finish xi {t_fin:.1} | residual + finish {t_res:.1} | multi_axpy {t_axpy:.1}",
            be.name()
        );
        // A real GMRES(m) solve of exactly m iterations (one cycle), us per iteration.
        let params = Params {
            rtol: 0.0,
            max_iter: m,
            restart: m,
            record_history: false,
            dtol: f64::MAX,
            ..Params::default()
        };
        let mut solver = Gmres::new(&be, &a, None, params).unwrap();
        let solve_us = median_us_per_iteration(|| {
            be.fill(&mut y, 0.0).unwrap();
            solver.solve(&b, &mut y).unwrap()
        });
        println!(
            "{} | {t_spmv:.1} | {t_dots:.1} | {t_gs:.1} | {t_norm:.1} | {t_axpy:.1} | {t_step:.1} | {:.1}",
            be.name(),
            solve_us
        );
    }
}
