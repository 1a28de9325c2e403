//! A kernel timeline from CUDA events, for finding where a device sits idle (issue 14: the time a
//! distributed iteration loses besides its kernels). Off unless [`TRACE_ENV`] names a file.
//!
//! With it set, every kernel launched outside a stream capture is bracketed by two timing
//! events on the compute stream. The first completes when the stream reaches the launch, i.e.
//! when the work before it on the stream (and any event it waits for) is done *and* the host
//! has enqueued it; the second when the kernel ends. So `start(k) - end(k - 1)` is the time the
//! stream sat idle before kernel k: waiting for the host, or for another stream's copy it
//! depends on (a halo upload). The events cost the host about a microsecond per launch and
//! separate the kernels of a programmatic dependent launch, so absolute times shift a little;
//! the idle map is what the trace is for. [`write_trace`] writes `kernel,start_us,end_us`
//! (from the first event) to the file, suffixed with `.rank<R>` under Open MPI.

use cudarc::driver::{result as cu, sys};
use std::sync::{Mutex, OnceLock};

/// Environment variable naming the CSV the timeline goes to (unset: no trace).
pub const TRACE_ENV: &str = "PIPEKRYLOV_CUDA_TRACE";

/// Events of the traced launches, in launch order.
struct Timeline {
    context: sys::CUcontext,
    marks: Vec<(&'static str, sys::CUevent, sys::CUevent)>,
}

// SAFETY: the handles are only used under the mutex, with their context bound first.
unsafe impl Send for Timeline {}

/// At most this many launches are traced (a few MB of events).
const MAX_MARKS: usize = 200_000;

fn timeline() -> Option<&'static Mutex<Timeline>> {
    static TIMELINE: OnceLock<Option<Mutex<Timeline>>> = OnceLock::new();
    TIMELINE
        .get_or_init(|| {
            std::env::var_os(TRACE_ENV).map(|_| {
                Mutex::new(Timeline {
                    context: std::ptr::null_mut(),
                    marks: Vec::new(),
                })
            })
        })
        .as_ref()
}

fn record(stream: sys::CUstream) -> Option<sys::CUevent> {
    let event = cu::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).ok()?;
    // SAFETY: a fresh event of the bound context, recorded on that context's stream.
    let r = unsafe { sys::cuEventRecord(event, stream) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(event)
}

fn capturing(stream: sys::CUstream) -> bool {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a query on a live stream of the bound context.
    let r = unsafe { sys::cuStreamIsCapturing(stream, &mut status) };
    r != sys::CUresult::CUDA_SUCCESS
        || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// Run `launch` (a kernel launch on `stream`, whose context is bound) between two timing
/// events when tracing; only `launch` otherwise. Tracing never fails a launch: a missing
/// event just leaves that launch out.
pub(crate) fn traced<R>(
    name: &'static str,
    stream: sys::CUstream,
    launch: impl FnOnce() -> R,
) -> R {
    let Some(timeline) = timeline() else {
        return launch();
    };
    if capturing(stream) {
        return launch();
    }
    let before = record(stream);
    let result = launch();
    let after = record(stream);
    if let (Some(b), Some(a), Ok(mut t)) = (before, after, timeline.lock()) {
        if t.marks.len() < MAX_MARKS {
            if t.context.is_null() {
                // SAFETY: reads the bound context (the launch's).
                unsafe { sys::cuCtxGetCurrent(&mut t.context) };
            }
            t.marks.push((name, b, a));
        }
    }
    result
}

/// Write the timeline to the file [`TRACE_ENV`] names (nothing when it is unset or no launch
/// was traced); waits for the traced work.
pub fn write_trace() -> std::io::Result<()> {
    let (Some(timeline), Some(path)) = (timeline(), std::env::var_os(TRACE_ENV)) else {
        return Ok(());
    };
    let t = timeline
        .lock()
        .map_err(|_| std::io::Error::other("trace lock poisoned"))?;
    let Some(&(_, first, _)) = t.marks.first() else {
        return Ok(());
    };
    // SAFETY: the events belong to `t.context`, bound here; synchronizing an event and reading
    // elapsed times between recorded events of one context are plain queries.
    let elapsed = |e: sys::CUevent| -> f64 {
        let mut ms = 0f32;
        unsafe {
            sys::cuEventSynchronize(e);
            sys::cuEventElapsedTime_v2(&mut ms, first, e);
        }
        f64::from(ms) * 1e3
    };
    unsafe { sys::cuCtxSetCurrent(t.context) };
    let mut out = String::from("kernel,start_us,end_us\n");
    for &(name, b, a) in &t.marks {
        out.push_str(&format!("{name},{:.3},{:.3}\n", elapsed(b), elapsed(a)));
    }
    let mut path = std::path::PathBuf::from(path);
    if let Ok(rank) = std::env::var("OMPI_COMM_WORLD_RANK") {
        path.as_mut_os_string().push(format!(".rank{rank}"));
    }
    std::fs::write(path, out)
}
