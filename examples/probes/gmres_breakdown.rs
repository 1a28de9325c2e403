//! Time of each kernel of one pipelined GMRES step (step i of a cycle) on each available
//! backend, as "time per kernel including the final synchronization / host time to enqueue it".
//! `cargo run --release --features "cuda opencl" --example gmres_breakdown [n] [i] [poisson2d|poisson3d]`

use pipekrylov::backend::{Basis, Slot};
use pipekrylov::prelude::*;
use pipekrylov::solver::GmresOrthogonalization;

mod common;
use common::{median_us_per_iteration, time_split};

/// "total/enqueue" in us.
fn split((q, t): (f64, f64)) -> String {
    format!("{t:.1}/{q:.1}")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4_190_209);
    let i: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(16);
    let problem = args.next().unwrap_or_else(|| "poisson2d".into());
    let generator: pipekrylov::matrix::generate::Generator = problem.parse().unwrap();
    let m = 30;
    let p = generator.generate::<f64>(n).unwrap();
    let n = p.matrix.n_rows();
    println!("{problem} n = {n}, step i = {i} of GMRES({m}); us per kernel, total/enqueue");
    println!("backend | basis_spmv_dots | basis_dots (i-2 cols) | gmres_gram_schmidt | gmres_normalize | multi_axpy (m cols) | one step (4 kernels) | GMRES solve per iteration");
    for choice in [BackendChoice::Cuda, BackendChoice::OpenCl] {
        let Ok((be, _)) =
            choice.create_with(&pipekrylov::backend::BackendConfig::from_env().unwrap())
        else {
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
        let t_spmv = split(time_split(5, reps, &be, || {
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
        }));
        let t_dots = split(time_split(5, reps, &be, || {
            be.basis_dots(&basis, i, 1..i - 1, &mut partials, Slot(0))
                .unwrap()
        }));
        let t_gs = split(time_split(5, reps, &be, || {
            be.gmres_gram_schmidt(&mut basis, i, &mut partials, Slot(0), Slot(m), &mut rmat, m)
                .unwrap()
        }));
        let t_norm = split(time_split(5, reps, &be, || {
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
        }));
        let t_axpy = split(time_split(5, reps, &be, || {
            be.multi_axpy(&mut y, &basis, 0..m, &coeffs).unwrap()
        }));
        let t_step = split(time_split(5, reps, &be, || {
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
        }));
        // Steps 2..m-1 in turn, as in a solve: the arguments differ from launch to launch.
        let mut step_i = 1;
        let t_steps = split(time_split(5, reps, &be, || {
            step_i = if step_i + 1 >= m { 2 } else { step_i + 1 };
            let i = step_i;
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
            if i >= 3 {
                be.basis_dots(&basis, i, 1..i - 1, &mut partials, Slot(0))
                    .unwrap();
            }
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
        }));
        println!("{}: steps 2..{} in turn {t_steps}", be.name(), m - 1);
        // The host interactions of a cycle's end, each alone (blocking).
        let mut rhost = vec![0.0; m * m];
        let t_read = split(time_split(5, reps, &be, || {
            be.read(&rmat, &mut rhost).unwrap()
        }));
        let t_fin = split(time_split(5, reps, &be, || {
            be.finish(&xi).unwrap();
        }));
        let b = be.upload(&vec![1.0; n]).unwrap();
        let mut scratch = be.partials::<f64>(n, 1).unwrap();
        let mut r = be.alloc::<f64>(n).unwrap();
        let t_res = split(time_split(5, reps, &be, || {
            be.residual(&a, &y, &b, &mut r, &mut scratch, Some(Slot(0)))
                .unwrap();
            be.finish(&scratch).unwrap();
        }));
        println!(
            "{}: read rmat {t_read} | finish xi {t_fin} | residual + finish {t_res} | multi_axpy {t_axpy}",
            be.name()
        );
        // The default DCGS2 step s (u = column s, w = column s + 1): SpMV with <u, w>, the dots
        // of u and w against the basis in one pass, the sums finished and the update (the last
        // two are one backend call, two kernels on GPUs).
        let mut pc = be.partials::<f64>(n, m + 1).unwrap();
        let mut coef = be.alloc::<f64>(m * (2 * m + 2)).unwrap();
        for s in [2usize, 16, 29] {
            let t_dots2 = split(time_split(5, reps, &be, || {
                be.basis_dots2(&basis, s, s + 1, 1..s + 1, s - 1, &mut partials, &mut pc)
                    .unwrap()
            }));
            let t_update = split(time_split(5, reps, &be, || {
                be.gmres_dcgs2_update(
                    &mut basis,
                    s,
                    &partials,
                    &pc,
                    &mut coef,
                    (s - 1) * (2 * m + 2),
                )
                .unwrap()
            }));
            let off = (s - 1) * (2 * m + 2);
            let t_sums = split(time_split(5, reps, &be, || {
                be.gmres_dcgs2_sums(&basis, s, &partials, &pc, &mut coef, off)
                    .unwrap()
            }));
            let t_apply = split(time_split(5, reps, &be, || {
                be.gmres_dcgs2_apply(&mut basis, s, &mut coef, off).unwrap()
            }));
            // The product w = A u with d = <u, w>, and the fused product + dots (CSR, GPUs).
            let t_spmv_w = split(time_split(5, reps, &be, || {
                be.basis_spmv_dots(
                    &a,
                    None,
                    &mut basis,
                    s + 1,
                    &mut pc,
                    Some(Slot(s - 1)),
                    None,
                )
                .unwrap()
            }));
            let fused = be.fuses_dcgs2_spmv_dots(&a, s);
            let t_fused = if fused {
                split(time_split(5, reps, &be, || {
                    be.gmres_dcgs2_spmv_dots(&a, &mut basis, s, &mut partials, &mut pc)
                        .unwrap();
                }))
            } else {
                "-".into()
            };
            println!(
                "{}: DCGS2 step {s}: basis_dots2 {t_dots2} | finish + update {t_update} \
                 (sums {t_sums}, apply {t_apply}) | product w {t_spmv_w} | fused product + dots {t_fused}",
                be.name()
            );
        }
        // A real GMRES(m) solve of exactly m iterations (one cycle), us per iteration.
        let params = Params {
            rtol: 0.0,
            max_iter: m,
            gmres: pipekrylov::solver::GmresParams {
                restart: m,
                ..Default::default()
            },
            record_history: false,
            dtol: f64::MAX,
            ..Params::default()
        };
        let mut solver = Gmres::new(&be, &a, None, params).unwrap();
        let solve_us = median_us_per_iteration(|| {
            be.fill(&mut y, 0.0).unwrap();
            solver.solve(&b, &mut y).unwrap()
        });
        let simpler = Params {
            gmres: pipekrylov::solver::GmresParams {
                orthogonalization: GmresOrthogonalization::SimplerCgs,
                ..Default::default()
            },
            ..params
        };
        let mut solver = Gmres::new(&be, &a, None, simpler).unwrap();
        let simpler_us = median_us_per_iteration(|| {
            be.fill(&mut y, 0.0).unwrap();
            solver.solve(&b, &mut y).unwrap()
        });
        println!(
            "{}: GMRES({m}) us per iteration: DCGS2 {solve_us:.1}, simpler {simpler_us:.1}",
            be.name()
        );
        println!(
            "{} | {t_spmv} | {t_dots} | {t_gs} | {t_norm} | {t_axpy} | {t_step} | {:.1}",
            be.name(),
            solve_us
        );
    }
}
