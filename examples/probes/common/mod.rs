//! Timing helpers shared by the breakdown examples (not an example itself).
#![allow(dead_code)]

use pipekrylov::prelude::*;
use std::time::Instant;

/// (host time to enqueue, time including the final synchronization), us per call of `f`, after
/// `warm_up` calls and a synchronization.
pub fn time_split<F: FnMut()>(
    warm_up: usize,
    reps: usize,
    b: &impl Backend,
    mut f: F,
) -> (f64, f64) {
    for _ in 0..warm_up {
        f();
    }
    b.synchronize().unwrap();
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    let enqueued = t.elapsed().as_secs_f64();
    b.synchronize().unwrap();
    let total = t.elapsed().as_secs_f64();
    let per = |s: f64| s / reps as f64 * 1e6;
    (per(enqueued), per(total))
}

/// us per call of `f` including the final synchronization (see [`time_split`]).
pub fn time<F: FnMut()>(warm_up: usize, reps: usize, b: &impl Backend, f: F) -> f64 {
    time_split(warm_up, reps, b, f).1
}

/// Median over 12 calls of `solve` of the loop time per iteration, us.
pub fn median_us_per_iteration(mut solve: impl FnMut() -> SolveReport) -> f64 {
    let mut samples: Vec<f64> = (0..12)
        .map(|_| {
            let rep = solve();
            rep.loop_seconds / rep.iterations.max(1) as f64 * 1e6
        })
        .collect();
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[6]
}
