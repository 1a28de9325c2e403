//! Hardware probes measured through a backend: copy bandwidth, back-to-back launch cost and the
//! kernel + small readback round trip (`pipekrylov info --probe`). Floors are computed from the
//! bandwidth measured on the machine that runs the benchmark.

use crate::backend::{Backend, Slot};
use crate::error::Result;
use std::time::Instant;

/// Results of [`probe`].
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Probe {
    /// Device-to-device copy bandwidth, bytes read + written per second (median of repeats).
    pub copy_bandwidth: f64,
    /// Seconds per back-to-back tiny kernel launch (throughput).
    pub launch_seconds: f64,
    /// Seconds for one tiny kernel + 8-byte readback.
    pub roundtrip_seconds: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Measure the probes. `copy_bytes` is the size of each of the two copy buffers.
pub fn probe<B: Backend>(b: &B, copy_bytes: usize) -> Result<Probe> {
    let n = (copy_bytes / 8).max(1);
    let mut src = b.alloc::<f64>(n)?;
    let mut dst = b.alloc::<f64>(n)?;
    // Touch every page first (fresh host allocations map the shared zero page).
    b.fill(&mut src, 1.0)?;
    b.fill(&mut dst, 0.0)?;
    b.copy(&src, &mut dst)?;
    b.synchronize()?;
    let mut bw = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..5 {
            b.copy(&src, &mut dst)?;
        }
        b.synchronize()?;
        bw.push(5.0 * 2.0 * (n * 8) as f64 / t.elapsed().as_secs_f64());
    }
    let mut tiny = b.alloc::<f64>(1)?;
    let mut partials = b.partials::<f64>(1, 1)?;
    b.scale(1.0, &mut tiny)?;
    b.synchronize()?;
    let mut launch = Vec::new();
    let mut rt = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..200 {
            b.scale(1.0, &mut tiny)?;
        }
        b.synchronize()?;
        launch.push(t.elapsed().as_secs_f64() / 200.0);
        let t = Instant::now();
        for _ in 0..50 {
            b.dot_partials(&tiny, &tiny, &mut partials, Slot(0))?;
            b.finish(&partials)?;
        }
        rt.push(t.elapsed().as_secs_f64() / 50.0);
    }
    Ok(Probe {
        copy_bandwidth: median(bw),
        launch_seconds: median(launch),
        roundtrip_seconds: median(rt),
    })
}
