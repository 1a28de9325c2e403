//! A kernel timeline from OpenCL profiling events (a diagnosis aid, the OpenCL side of
//! `backend::cuda::write_trace`). Off unless the backend's tuning has an
//! [`opencl_trace`](crate::backend::tuning::Tuning::opencl_trace) file (`--tune
//! opencl_trace=FILE` on the command line): the queue is then created with profiling and every
//! kernel launch keeps its event. [`write_trace`] waits for them, writes `kernel,start_us,end_us`
//! (the device's start and end of each kernel, from the first start) to a file and starts a new
//! timeline. Once a traced backend exists, every OpenCL launch of the process keeps its event
//! until the next [`write_trace`] (at most 200,000); a queue without profiling has no times and
//! its launches are left out of the file.

use super::cl::{self, Event};
use crate::error::{Error, Result};
use ocl::ffi;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// At most this many launches are traced.
const MAX_MARKS: usize = 200_000;

/// Whether a traced backend exists in this process.
static TRACING: AtomicBool = AtomicBool::new(false);

/// The events of the traced launches, in launch order.
static TIMELINE: Mutex<Vec<(String, Event)>> = Mutex::new(Vec::new());

/// Turn the timeline on (a backend with a trace file was opened).
pub(super) fn enable() {
    TRACING.store(true, Ordering::Relaxed);
}

/// Whether launches keep their events.
pub(super) fn tracing() -> bool {
    TRACING.load(Ordering::Relaxed)
}

/// Keep the event of the launch of `name` (dropped beyond [`MAX_MARKS`]).
pub(super) fn record(name: &str, event: Event) {
    let mut marks = TIMELINE.lock().unwrap_or_else(|p| p.into_inner());
    if marks.len() < MAX_MARKS {
        marks.push((name.to_string(), event));
    }
}

/// One profiling time of `event` in ns (None when the driver has none).
fn profiling_ns(event: &Event, what: ffi::cl_profiling_info) -> Option<u64> {
    let mut ns: u64 = 0;
    // SAFETY: a live event of a profiling queue; the value is a cl_ulong written into `ns`.
    let code = unsafe {
        ffi::clGetEventProfilingInfo(
            event.0,
            what,
            std::mem::size_of::<u64>(),
            (&mut ns as *mut u64).cast(),
            std::ptr::null_mut(),
        )
    };
    (code == ffi::CL_SUCCESS).then_some(ns)
}

/// Write the timeline so far to `path` as `kernel,start_us,end_us` and start a new one. The
/// events are waited for first. Errors: the file cannot be written ([`Error::Io`]); a driver
/// error of the wait.
pub fn write_trace(path: &Path) -> Result<()> {
    let marks = std::mem::take(&mut *TIMELINE.lock().unwrap_or_else(|p| p.into_inner()));
    if let Some((_, last)) = marks.last() {
        // SAFETY: one live event.
        let code = unsafe { ffi::clWaitForEvents(1, &last.0) };
        if code != ffi::CL_SUCCESS {
            return Err(cl::driver_error("clWaitForEvents(trace)", code));
        }
    }
    let times: Vec<(&str, u64, u64)> = marks
        .iter()
        .filter_map(|(name, e)| {
            let start = profiling_ns(e, ffi::CL_PROFILING_COMMAND_START)?;
            let end = profiling_ns(e, ffi::CL_PROFILING_COMMAND_END)?;
            Some((name.as_str(), start, end))
        })
        .collect();
    let origin = times.iter().map(|t| t.1).min().unwrap_or(0);
    let io = |e: std::io::Error| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    writeln!(out, "kernel,start_us,end_us").map_err(io)?;
    for (name, start, end) in times {
        let us = |t: u64| t.saturating_sub(origin) as f64 / 1e3;
        writeln!(out, "{name},{:.3},{:.3}", us(start), us(end)).map_err(io)?;
    }
    out.flush().map_err(io)
}
