//! A kernel timeline from CUDA events, for finding where a device sits idle (issue 14: the time a
//! distributed iteration loses besides its kernels). Off unless the backend's tuning has a
//! [`cuda_trace`](crate::backend::tuning::Tuning::cuda_trace) file (`PIPEKRYLOV_CUDA_TRACE` or
//! `--tune cuda_trace=FILE` on the command line).
//!
//! With it set, every kernel launched outside a stream capture is bracketed by two timing
//! events on the compute stream. The first completes when the stream reaches the launch, i.e.
//! when the work before it on the stream (and any event it waits for) is done *and* the host
//! has enqueued it; the second when the kernel ends. So `start(k) - end(k - 1)` is the time the
//! stream sat idle before kernel k: waiting for the host, or for another stream's copy it
//! depends on (a halo upload). The events add about 3 us at every kernel boundary (on an H200)
//! and separate the kernels of a programmatic dependent launch, so absolute times shift; the
//! idle map is what the trace is for. [`write_trace`] writes `kernel,start_us,end_us`
//! (from the first event) to a file (the command line's: the tuning's, suffixed with `.rank<R>`
//! under an MPI launcher) and starts a new timeline. One CUDA context per process is traced (the
//! first traced backend that launches).

use cudarc::driver::{result as cu, sys};
use std::sync::Mutex;

/// Events of the traced launches, in launch order.
struct Timeline {
    context: sys::CUcontext,
    marks: Vec<(&'static str, sys::CUevent, sys::CUevent)>,
}

// SAFETY: the handles are only used under the mutex, with their context bound first.
unsafe impl Send for Timeline {}

/// At most this many launches are traced (a few MB of events).
const MAX_MARKS: usize = 200_000;

/// The process's timeline (empty until a traced backend launches).
static TIMELINE: Mutex<Timeline> = Mutex::new(Timeline {
    context: std::ptr::null_mut(),
    marks: Vec::new(),
});

fn record(stream: sys::CUstream) -> Option<sys::CUevent> {
    let event = cu::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).ok()?;
    // SAFETY: a fresh event of the bound context, recorded on that context's stream.
    let r = unsafe { sys::cuEventRecord(event, stream) };
    if r == sys::CUresult::CUDA_SUCCESS {
        Some(event)
    } else {
        destroy(Some(event));
        None
    }
}

fn destroy(event: Option<sys::CUevent>) {
    if let Some(e) = event {
        // SAFETY: an event this module created and no longer keeps.
        let _ = unsafe { cu::event::destroy(e) };
    }
}

/// The bound context (null when none).
fn current_context() -> sys::CUcontext {
    let mut context: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes the calling thread's current context handle.
    unsafe { sys::cuCtxGetCurrent(&mut context) };
    context
}

fn capturing(stream: sys::CUstream) -> bool {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a query on a live stream of the bound context.
    let r = unsafe { sys::cuStreamIsCapturing(stream, &mut status) };
    r != sys::CUresult::CUDA_SUCCESS
        || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// Run `launch` (a kernel launch on `stream`, whose context is bound) between two timing
/// events when `tracing` (the backend's tuning has a trace file); only `launch` otherwise.
/// Tracing never fails a launch: a missing event just leaves that launch out.
pub(crate) fn traced<R>(
    tracing: bool,
    name: &'static str,
    stream: sys::CUstream,
    launch: impl FnOnce() -> R,
) -> R {
    if !tracing {
        return launch();
    }
    let timeline = &TIMELINE;
    let traced_here = match timeline.lock() {
        Ok(mut t) => {
            let context = current_context();
            if t.context.is_null() {
                t.context = context;
            }
            t.marks.len() < MAX_MARKS && t.context == context
        }
        Err(_) => false,
    };
    if !traced_here || capturing(stream) {
        return launch();
    }
    let before = record(stream);
    let result = launch();
    let after = record(stream);
    match (before, after, timeline.lock()) {
        (Some(b), Some(a), Ok(mut t)) if t.marks.len() < MAX_MARKS => t.marks.push((name, b, a)),
        (b, a, _) => {
            destroy(b);
            destroy(a);
        }
    }
    result
}

/// Write the timeline to `path` (nothing when no launch was traced: no backend's tuning had a
/// [`cuda_trace`](crate::backend::tuning::Tuning::cuda_trace) file) and start a new one; waits
/// for the traced work. A failed event query is an error (the file is not written).
pub fn write_trace(path: &std::path::Path) -> std::io::Result<()> {
    let mut t = TIMELINE
        .lock()
        .map_err(|_| std::io::Error::other("trace lock poisoned"))?;
    let marks = std::mem::take(&mut t.marks);
    let Some(&(_, first, _)) = marks.first() else {
        return Ok(());
    };
    let check = |what: &str, r: sys::CUresult| {
        if r == sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("{what}: {r:?}")))
        }
    };
    let previous = current_context();
    // SAFETY: binds the context the events were recorded in (restored below).
    check("cuCtxSetCurrent", unsafe {
        sys::cuCtxSetCurrent(t.context)
    })?;
    let elapsed = |e: sys::CUevent| -> std::io::Result<f64> {
        let mut ms = 0f32;
        // SAFETY: `first` and `e` are recorded events of the bound context.
        check("cuEventSynchronize", unsafe { sys::cuEventSynchronize(e) })?;
        check("cuEventElapsedTime", unsafe {
            sys::cuEventElapsedTime_v2(&mut ms, first, e)
        })?;
        Ok(f64::from(ms) * 1e3)
    };
    let mut out = String::from("kernel,start_us,end_us\n");
    let mut failed = None;
    for &(name, b, a) in &marks {
        match (elapsed(b), elapsed(a)) {
            (Ok(s), Ok(e)) => out.push_str(&format!("{name},{s:.3},{e:.3}\n")),
            (Err(e), _) | (_, Err(e)) => {
                failed = Some(e);
                break;
            }
        }
    }
    for &(_, b, a) in &marks {
        destroy(Some(b));
        destroy(Some(a));
    }
    // SAFETY: rebinds what the thread had bound before.
    unsafe { sys::cuCtxSetCurrent(previous) };
    if let Some(e) = failed {
        return Err(e);
    }
    std::fs::write(path, out)
}
