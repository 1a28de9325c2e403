//! Where the time of one pipelined CG iteration goes on each available GPU backend: every step
//! of the iteration timed alone (many back-to-back repetitions, device synchronized once), and
//! the whole iteration. `cargo run --release --features "cuda opencl" --example latency_breakdown [n]`

use pipekrylov::backend::{Slot, SpmvDots};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::prelude::*;

mod common;
use common::{median_us_per_iteration, time_split};

/// The dots of pipelined CG's SpMV: <Ap, Ap> and <p, Ap>.
fn dots(p: &Buffer<f64>) -> SpmvDots<'_, f64> {
    SpmvDots {
        yy: Some(Slot(1)),
        with: [Some((p, Slot(2))), None],
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(225);
    let p = Generator::Poisson2d.generate::<f64>(n).unwrap();
    println!("poisson2d n = {}", p.matrix.n_rows());
    println!(
        "backend | fill(1) | cg_update | spmv_dots | finish | update+spmv | update+spmv+finish"
    );
    for choice in [
        BackendChoice::Cuda,
        BackendChoice::OpenCl,
        BackendChoice::Host,
    ] {
        let Ok((be, _)) =
            choice.create_with(&pipekrylov::backend::BackendConfig::from_env().unwrap())
        else {
            continue;
        };
        let a = be.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let n = a.n_rows();
        let mut x = be.alloc::<f64>(n).unwrap();
        let mut r = be.upload(&vec![1.0; n]).unwrap();
        let mut pv = be.upload(&vec![1.0; n]).unwrap();
        let mut ap = be.alloc::<f64>(n).unwrap();
        let mut tiny = be.alloc::<f64>(1).unwrap();
        let mut partials = be.partials::<f64>(n, 3).unwrap();
        let reps = 2000;
        // One step of the iteration each; `alpha` varies per call when asked (re-set arguments).
        let mut k = 0u64;
        let mut step = |what: &str, vary: bool| {
            k += 1;
            let alpha = if vary {
                1e-9 * (1.0 + (k % 7) as f64)
            } else {
                1e-9
            };
            if what.contains('u') {
                be.cg_update(
                    alpha,
                    0.0,
                    &mut x,
                    &mut r,
                    &mut pv,
                    &ap,
                    &mut partials,
                    Slot(0),
                )
                .unwrap();
            }
            if what.contains('s') {
                be.spmv_dots(&a, &pv, &mut ap, dots(&pv), &mut partials)
                    .unwrap();
            }
            if what.contains('f') {
                be.finish(&partials).unwrap();
            }
        };
        let t_fill = common::time(20, reps, &be, || be.fill(&mut tiny, 0.0).unwrap());
        let (q_upd, t_upd) = time_split(20, reps, &be, || step("u", false));
        let (q_spmv, t_spmv) = time_split(20, reps, &be, || step("s", false));
        let t_fin = common::time(20, reps, &be, || step("f", false));
        let t_two = common::time(20, reps, &be, || step("us", false));
        let t_it = common::time(20, reps, &be, || step("usf", false));
        let t_it_vary = common::time(20, reps, &be, || step("usf", true));
        // A real pipelined CG solve of 30 iterations (what `bench` measures).
        let b = be.upload(&vec![1.0; n]).unwrap();
        let params = Params {
            rtol: 0.0,
            max_iter: 30,
            record_history: false,
            dtol: f64::MAX,
            ..Params::default()
        };
        let mut cg = Cg::new(&be, &a, None, params).unwrap();
        let solve_us = median_us_per_iteration(|| {
            be.fill(&mut x, 0.0).unwrap();
            cg.solve(&b, &mut x).unwrap()
        });
        println!(
            "{} | {t_fill:.2} | {t_upd:.2} (enqueue {q_upd:.2}) | {t_spmv:.2} (enqueue {q_spmv:.2}) | {t_fin:.2} | {t_two:.2} | {t_it:.2} | varying alpha {t_it_vary:.2} | CG solve {:.2}  (us)",
            be.name(),
            solve_us
        );
    }
}
