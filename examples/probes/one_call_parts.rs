//! The crate's one call taken apart, for the Python binding's per-call overhead (issue 53): on
//! 2D Poisson of n = 16, 1024 and 4096 (CG, no preconditioner, rtol 1e-8, b = 1), the median
//! over alternated rounds of
//! - `from_i32`: SciPy's int32 CSR arrays made into the crate's matrix (what the binding adds);
//! - `build`: `ReusableSolver::builder(..).build()` (backend, upload, preconditioner);
//! - `solve` and `drop` of that solver;
//! - `one_call`: `pipekrylov::solve`, the binding's reference.
//!
//! `cargo run --release --features cuda --example one_call_parts -- cuda [rounds]`
//! (backend: host, cuda or opencl; default host, 300 rounds). Prints one line per n, in us.

use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::{Method, ReusableSolver, SolveOptions};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2] * 1e6
}

fn main() -> pipekrylov::Result<()> {
    let mut args = std::env::args().skip(1);
    let backend = args.next().unwrap_or_else(|| "host".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(300);
    let options = SolveOptions::default()
        .method(Method::Cg)
        .backend(backend.parse()?)
        .rtol(1e-8);
    for n in [16usize, 1024, 4096] {
        let a = Generator::Poisson2d.generate::<f64>(n)?.matrix;
        let to_i32 = |v: &[usize]| v.iter().map(|&i| i as i32).collect::<Vec<i32>>();
        let (row_ptr, col_idx) = (to_i32(a.row_ptr()), to_i32(a.col_idx()));
        let b = vec![1.0; n];
        let mut parts: [Vec<f64>; 5] = Default::default();
        for round in 0..rounds + 20 {
            let t0 = Instant::now();
            let m = CsrMatrix::from_i32(n, n, &row_ptr, &col_idx, a.values())?;
            let t1 = Instant::now();
            let mut solver = ReusableSolver::builder(&m).options(options).build()?;
            let t2 = Instant::now();
            let solution = solver.solve(&b)?;
            let t3 = Instant::now();
            drop(solver);
            let t4 = Instant::now();
            let one = pipekrylov::solve(&a, &b, &options)?;
            let t5 = Instant::now();
            assert_eq!(solution.report.iterations, one.report.iterations);
            if round >= 20 {
                let times = [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4];
                for (part, t) in parts.iter_mut().zip(times) {
                    part.push(t.as_secs_f64());
                }
            }
        }
        let [from_i32, build, solve, dropped, one_call] = parts.map(median);
        println!(
            "{backend} n = {n}: from_i32 {from_i32:.1} build {build:.1} solve {solve:.1} \
             drop {dropped:.1} | one_call {one_call:.1} us"
        );
    }
    Ok(())
}
