//! Time of each kernel of one pipelined BiCGStab iteration (Alg. 4) alone, many back-to-back
//! repetitions with one synchronization, the four together, and a real 30-iteration solve, on
//! each available GPU backend.
//! `cargo run --release --features "cuda opencl" --example bicgstab_breakdown [n]`

use pipekrylov::backend::{Slot, SpmvDots};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::prelude::*;

mod common;
use common::{median_us_per_iteration, time};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(261_121);
    let p = Generator::Poisson2d.generate::<f64>(n).unwrap();
    let n = p.matrix.n_rows();
    println!("poisson2d n = {n}; us per kernel");
    println!("backend | spmv_dots(p) | bicgstab_s_update | spmv_dots(s) | bicgstab_update | all four | + finish | BiCGStab solve");
    for choice in [BackendChoice::Cuda, BackendChoice::OpenCl] {
        let Ok((be, _)) =
            choice.create_with(&pipekrylov::backend::BackendConfig::from_env().unwrap())
        else {
            continue;
        };
        let a = be.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let ones = vec![1.0; n];
        let small: Vec<f64> = (0..n).map(|i| 1e-3 * ((i % 7) as f64 - 3.0)).collect();
        let mut x = be.alloc::<f64>(n).unwrap();
        let mut r = be.upload(&ones).unwrap();
        let r0 = be.upload(&ones).unwrap();
        let mut pv = be.upload(&small).unwrap();
        let mut s = be.upload(&small).unwrap();
        let mut ap = be.alloc::<f64>(n).unwrap();
        let mut as_ = be.alloc::<f64>(n).unwrap();
        let mut partials = be.partials::<f64>(n, 6).unwrap();
        let reps = 1000;
        let mut step = |what: &str| {
            if what.contains('a') {
                let dots = SpmvDots {
                    yy: None,
                    with: [Some((&r0, Slot(1))), None],
                };
                be.spmv_dots(&a, &pv, &mut ap, dots, &mut partials).unwrap();
            }
            if what.contains('s') {
                be.bicgstab_s_update(&r, &ap, &mut s, &mut partials, Slot(0), Slot(1), Slot(2))
                    .unwrap();
            }
            if what.contains('b') {
                let dots = SpmvDots {
                    yy: Some(Slot(3)),
                    with: [Some((&s, Slot(4))), Some((&r0, Slot(5)))],
                };
                be.spmv_dots(&a, &s, &mut as_, dots, &mut partials).unwrap();
            }
            if what.contains('u') {
                be.bicgstab_update(
                    1e-9,
                    1e-9,
                    1e-9,
                    &mut x,
                    &mut r,
                    &mut pv,
                    &s,
                    &ap,
                    &as_,
                    None,
                    None,
                    &r0,
                    &mut partials,
                    Slot(0),
                    Slot(2),
                )
                .unwrap();
            }
            if what.contains('f') {
                be.finish(&partials).unwrap();
            }
        };
        let cols: Vec<f64> = ["a", "s", "b", "u", "asbu", "asbuf"]
            .iter()
            .map(|w| time(20, reps, &be, || step(w)))
            .collect();
        let b = be.upload(&ones).unwrap();
        let params = Params {
            rtol: 0.0,
            max_iter: 30,
            record_history: false,
            dtol: f64::MAX,
            ..Params::default()
        };
        let mut solver = BiCgStab::new(&be, &a, None, params).unwrap();
        let solve_us = median_us_per_iteration(|| {
            be.fill(&mut x, 0.0).unwrap();
            solver.solve(&b, &mut x).unwrap()
        });
        let cells: Vec<String> = cols.iter().map(|c| format!("{c:.2}")).collect();
        println!("{} | {} | {:.2}", be.name(), cells.join(" | "), solve_us);
    }
}
