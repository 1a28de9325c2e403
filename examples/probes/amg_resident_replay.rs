//! CG + AMG in the device-resident mode once its batches are recorded (issue 56): a
//! `ReusableSolver` solving the same system again replays its recorded batches (CUDA graphs:
//! a batch is recorded the second time it runs, `solver/resident.rs`), so its iterations are
//! not launched by the host. On 2D Poisson of n = 4096, 16384, 65536 (b = 1, rtol 1e-8, AMG with
//! its defaults, device setup), pipelined CG synchronous and resident, classical CG synchronous:
//! 3 untimed solves (the first one's time per iteration printed too: nothing recorded yet),
//! then the median over `rounds` solves of the solve's loop time per iteration
//! (`SolveReport::loop_seconds / iterations`), and the launches per iteration.
//! `cargo run --release --features cuda --example amg_resident_replay -- cuda [rounds]`
//! (backend cuda or opencl; default cuda, 20 rounds). Prints one line per n and mode, in us.

use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::PrecondKind;
use pipekrylov::solver::{Execution, Variant};
use pipekrylov::{Method, ReusableSolver, SolveOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> pipekrylov::Result<()> {
    let mut args = std::env::args().skip(1);
    let backend = args.next().unwrap_or_else(|| "cuda".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);
    for n in [4096usize, 16384, 65536] {
        let a = Generator::Poisson2d.generate::<f64>(n)?.matrix;
        let b = vec![1.0; n];
        for (variant, execution, name) in [
            (Variant::Pipelined, Execution::Synchronous, "pipelined sync"),
            (
                Variant::Pipelined,
                Execution::DeviceResident,
                "pipelined resident",
            ),
            (Variant::Classical, Execution::Synchronous, "classical sync"),
        ] {
            let options = SolveOptions::default()
                .method(Method::Cg)
                .precond(PrecondKind::Amg)
                .variant(variant)
                .execution(execution)
                .backend(backend.parse()?)
                .rtol(1e-8);
            let mut solver = ReusableSolver::builder(&a).options(options).build()?;
            let (mut per_it, mut launches, mut its) = (Vec::new(), Vec::new(), 0);
            let mut first = 0.0;
            for round in 0..rounds + 3 {
                let report = solver.solve(&b)?.report;
                its = report.iterations;
                if round == 0 {
                    first = report.loop_seconds / its.max(1) as f64 * 1e6;
                }
                if round >= 3 {
                    per_it.push(report.loop_seconds / its.max(1) as f64 * 1e6);
                    launches.push(report.loop_counters.launches as f64 / its.max(1) as f64);
                }
            }
            println!(
                "{backend} n = {n} {name}: {its} its, {:.1} us per iteration (min {:.1}; first solve \
                 {first:.1}), {:.1} launches per iteration",
                median(per_it.clone()),
                per_it.iter().copied().fold(f64::INFINITY, f64::min),
                median(launches)
            );
        }
    }
    Ok(())
}
