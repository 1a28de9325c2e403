//! The OpenCL C API boundary: reference-counted handles with `Drop`, status codes turned into
//! [`Error`]s, and the info queries. Everything here calls `ocl::ffi` (cl-sys) directly: the
//! higher `ocl` / `ocl-core` layers panic on status codes they do not know (NVIDIA returns
//! vendor codes such as -9999 after a device fault), and the library must never panic.

use crate::error::{Error, Result};
use ocl::ffi::{
    self, cl_command_queue, cl_context, cl_device_id, cl_int, cl_kernel, cl_mem, cl_platform_id,
    cl_program, cl_uint,
};
use std::ffi::c_void;
use std::ptr;

/// The backend name used in errors.
pub(crate) const BACKEND: &str = "opencl";

/// NVIDIA's status for a kernel that faulted (illegal address); sticky for the context.
const NV_ILLEGAL_ADDRESS: cl_int = -9999;

/// The symbolic name of an OpenCL status code.
pub(crate) fn status_name(code: cl_int) -> &'static str {
    match code {
        0 => "CL_SUCCESS",
        -1 => "CL_DEVICE_NOT_FOUND",
        -2 => "CL_DEVICE_NOT_AVAILABLE",
        -3 => "CL_COMPILER_NOT_AVAILABLE",
        -4 => "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -11 => "CL_BUILD_PROGRAM_FAILURE",
        -14 => "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
        -30 => "CL_INVALID_VALUE",
        -32 => "CL_INVALID_PLATFORM",
        -33 => "CL_INVALID_DEVICE",
        -34 => "CL_INVALID_CONTEXT",
        -36 => "CL_INVALID_COMMAND_QUEUE",
        -38 => "CL_INVALID_MEM_OBJECT",
        -43 => "CL_INVALID_BUILD_OPTIONS",
        -44 => "CL_INVALID_PROGRAM",
        -45 => "CL_INVALID_PROGRAM_EXECUTABLE",
        -46 => "CL_INVALID_KERNEL_NAME",
        -48 => "CL_INVALID_KERNEL",
        -49 => "CL_INVALID_ARG_INDEX",
        -50 => "CL_INVALID_ARG_VALUE",
        -51 => "CL_INVALID_ARG_SIZE",
        -52 => "CL_INVALID_KERNEL_ARGS",
        -54 => "CL_INVALID_WORK_GROUP_SIZE",
        -55 => "CL_INVALID_WORK_ITEM_SIZE",
        -61 => "CL_INVALID_BUFFER_SIZE",
        -63 => "CL_INVALID_GLOBAL_WORK_SIZE",
        -1001 => "CL_PLATFORM_NOT_FOUND_KHR",
        NV_ILLEGAL_ADDRESS => "CL_NV_ILLEGAL_ADDRESS (vendor code)",
        _ => "unknown OpenCL status",
    }
}

/// Statuses that mean "not enough memory" (device or host side).
pub(crate) fn is_out_of_memory(code: cl_int) -> bool {
    matches!(
        code,
        ffi::CL_MEM_OBJECT_ALLOCATION_FAILURE
            | ffi::CL_OUT_OF_RESOURCES
            | ffi::CL_OUT_OF_HOST_MEMORY
    )
}

/// Statuses after which the context cannot be trusted any more: NVIDIA's illegal address, an
/// event's execution error, and an invalid command queue (NVIDIA's `clFinish` after a kernel
/// made an illegal address: measured on the H200, driver 580; the backend's queue never becomes
/// invalid otherwise).
pub(crate) fn is_fatal(code: cl_int) -> bool {
    matches!(
        code,
        NV_ILLEGAL_ADDRESS | -14 | ffi::CL_INVALID_COMMAND_QUEUE
    )
}

/// A driver error for `call` with status `code`.
pub(crate) fn driver_error(call: &str, code: cl_int) -> Error {
    if is_fatal(code) {
        return Error::DeviceFault {
            backend: BACKEND.into(),
            message: format!("{call}: {} ({code})", status_name(code)),
        };
    }
    Error::Driver {
        backend: BACKEND.into(),
        call: call.into(),
        message: format!("{} ({code})", status_name(code)),
    }
}

/// `Ok` for `CL_SUCCESS`, the driver error otherwise.
pub(crate) fn check(code: cl_int, call: &str) -> Result<()> {
    if code == ffi::CL_SUCCESS {
        Ok(())
    } else {
        Err(driver_error(call, code))
    }
}

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $raw:ty, $release:ident) => {
        $(#[$doc])*
        pub(crate) struct $name(pub(crate) $raw);

        impl Drop for $name {
            fn drop(&mut self) {
                if !self.0.is_null() {
                    // SAFETY: the handle holds exactly one reference, obtained from the
                    // matching clCreate* call, and is released exactly once here. The status is
                    // ignored: nothing useful can be done with a failed release in a destructor.
                    unsafe {
                        ffi::$release(self.0);
                    }
                }
            }
        }

        // SAFETY: OpenCL objects are reference counted and every API call on them is
        // thread-safe (OpenCL 1.2, appendix A.2), with the one exception of clSetKernelArg on
        // the same kernel object: kernels are only used under the backend's kernel-cache Mutex.
        unsafe impl Send for $name {}
    };
}

handle!(
    /// An OpenCL context (one device).
    Context, cl_context, clReleaseContext
);
handle!(
    /// An in-order command queue.
    Queue, cl_command_queue, clReleaseCommandQueue
);
handle!(
    /// A built program.
    Program, cl_program, clReleaseProgram
);
handle!(
    /// A kernel object (its arguments are mutable state: used under a Mutex only).
    Kernel, cl_kernel, clReleaseKernel
);
handle!(
    /// A memory object.
    Mem, cl_mem, clReleaseMemObject
);
handle!(
    /// An event of one enqueued command.
    Event, ffi::cl_event, clReleaseEvent
);

// SAFETY: see `handle!`; contexts, queues, programs and memory objects have no mutable state
// reachable through `&self` outside thread-safe OpenCL calls.
unsafe impl Sync for Context {}
// SAFETY: as above.
unsafe impl Sync for Queue {}
// SAFETY: as above.
unsafe impl Sync for Program {}
// SAFETY: as above.
unsafe impl Sync for Mem {}

/// A platform id (platforms are never released).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlatformId(pub(crate) cl_platform_id);
/// A root device id (root devices are never released).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeviceId(pub(crate) cl_device_id);

// SAFETY: platform and root-device ids are opaque, immutable, process-wide identifiers that
// stay valid for the life of the process.
unsafe impl Send for PlatformId {}
// SAFETY: as above.
unsafe impl Sync for PlatformId {}
// SAFETY: as above.
unsafe impl Send for DeviceId {}
// SAFETY: as above.
unsafe impl Sync for DeviceId {}

/// Every platform; none installed (the ICD loader finds no vendor) is an empty list.
pub(crate) fn platform_ids() -> Result<Vec<PlatformId>> {
    let mut count: cl_uint = 0;
    // SAFETY: a size query with a null output array and a valid count pointer.
    let code = unsafe { ffi::clGetPlatformIDs(0, ptr::null_mut(), &mut count) };
    if code == ffi::CL_PLATFORM_NOT_FOUND_KHR || count == 0 {
        return Ok(Vec::new());
    }
    check(code, "clGetPlatformIDs")?;
    let mut ids: Vec<cl_platform_id> = vec![ptr::null_mut(); count as usize];
    // SAFETY: `ids` has room for `count` entries.
    let code = unsafe { ffi::clGetPlatformIDs(count, ids.as_mut_ptr(), ptr::null_mut()) };
    check(code, "clGetPlatformIDs")?;
    Ok(ids.into_iter().map(PlatformId).collect())
}

/// Every device of a platform; none is an empty list.
pub(crate) fn device_ids(platform: PlatformId) -> Result<Vec<DeviceId>> {
    let mut count: cl_uint = 0;
    // SAFETY: a size query with a null output array and a valid count pointer.
    let code = unsafe {
        ffi::clGetDeviceIDs(
            platform.0,
            ffi::CL_DEVICE_TYPE_ALL,
            0,
            ptr::null_mut(),
            &mut count,
        )
    };
    if code == ffi::CL_DEVICE_NOT_FOUND || count == 0 {
        return Ok(Vec::new());
    }
    check(code, "clGetDeviceIDs")?;
    let mut ids: Vec<cl_device_id> = vec![ptr::null_mut(); count as usize];
    // SAFETY: `ids` has room for `count` entries.
    let code = unsafe {
        ffi::clGetDeviceIDs(
            platform.0,
            ffi::CL_DEVICE_TYPE_ALL,
            count,
            ids.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    check(code, "clGetDeviceIDs")?;
    Ok(ids.into_iter().map(DeviceId).collect())
}

/// Run a clGet*Info-style query twice (size, then data).
fn info_bytes(
    call: &str,
    query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int,
) -> Result<Vec<u8>> {
    let mut size = 0usize;
    check(query(0, ptr::null_mut(), &mut size), call)?;
    let mut out = vec![0u8; size];
    if size > 0 {
        check(query(size, out.as_mut_ptr().cast(), ptr::null_mut()), call)?;
    }
    Ok(out)
}

/// A string from info bytes (NUL-terminated, trimmed).
fn info_string(bytes: Vec<u8>) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).trim().to_string()
}

/// A string platform parameter (CL_PLATFORM_NAME, ...).
pub(crate) fn platform_string(platform: PlatformId, param: cl_uint) -> Result<String> {
    let bytes = info_bytes("clGetPlatformInfo", |size, value, ret| {
        // SAFETY: `value` is null or points to `size` writable bytes; `ret` is null or valid.
        unsafe { ffi::clGetPlatformInfo(platform.0, param, size, value, ret) }
    })?;
    Ok(info_string(bytes))
}

/// Raw bytes of a device parameter.
pub(crate) fn device_bytes(device: DeviceId, param: cl_uint) -> Result<Vec<u8>> {
    info_bytes("clGetDeviceInfo", |size, value, ret| {
        // SAFETY: `value` is null or points to `size` writable bytes; `ret` is null or valid.
        unsafe { ffi::clGetDeviceInfo(device.0, param, size, value, ret) }
    })
}

/// A string device parameter (CL_DEVICE_NAME, CL_DEVICE_EXTENSIONS, ...).
pub(crate) fn device_string(device: DeviceId, param: cl_uint) -> Result<String> {
    device_bytes(device, param).map(info_string)
}

/// An integer device parameter of any width up to 8 bytes (cl_uint, cl_ulong, size_t,
/// cl_bitfield), little-endian as the host.
pub(crate) fn device_uint(device: DeviceId, param: cl_uint) -> Result<u64> {
    let bytes = device_bytes(device, param)?;
    let mut buf = [0u8; 8];
    let n = bytes.len().min(8);
    buf[..n].copy_from_slice(&bytes[..n]);
    Ok(u64::from_ne_bytes(buf))
}

/// A context on one device.
pub(crate) fn create_context(platform: PlatformId, device: DeviceId) -> Result<Context> {
    let props: [ffi::cl_context_properties; 3] = [
        ffi::CL_CONTEXT_PLATFORM as ffi::cl_context_properties,
        platform.0 as ffi::cl_context_properties,
        0,
    ];
    let mut err: cl_int = 0;
    // SAFETY: `props` is a zero-terminated property list, `device` one valid device id, no
    // callback.
    let ctx = unsafe {
        ffi::clCreateContext(
            props.as_ptr(),
            1,
            &device.0,
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    check(err, "clCreateContext")?;
    Ok(Context(ctx))
}

/// An in-order queue, with profiling when `profiling` (the kernel timeline of `trace.rs`).
pub(crate) fn create_queue(ctx: &Context, device: DeviceId, profiling: bool) -> Result<Queue> {
    let mut err: cl_int = 0;
    let properties = if profiling {
        ffi::CL_QUEUE_PROFILING_ENABLE
    } else {
        0
    };
    // SAFETY: valid context and device of that context, a valid property bit field.
    let q = unsafe { ffi::clCreateCommandQueue(ctx.0, device.0, properties, &mut err) };
    check(err, "clCreateCommandQueue")?;
    Ok(Queue(q))
}

/// Wait for everything queued.
pub(crate) fn finish(queue: &Queue) -> Result<()> {
    // SAFETY: a valid queue.
    check(unsafe { ffi::clFinish(queue.0) }, "clFinish")
}

/// Hand everything queued to the device without waiting.
pub(crate) fn flush(queue: &Queue) -> Result<()> {
    // SAFETY: a valid queue.
    check(unsafe { ffi::clFlush(queue.0) }, "clFlush")
}

/// Poll `event` until its command completed; a negative execution status (the command or the
/// device failed) is the driver error for it.
pub(crate) fn spin_until_complete(event: &Event) -> Result<()> {
    loop {
        let mut status: cl_int = 0;
        // SAFETY: a valid event; the value written is one `cl_int` into `status`.
        let code = unsafe {
            ffi::clGetEventInfo(
                event.0,
                ffi::CL_EVENT_COMMAND_EXECUTION_STATUS,
                std::mem::size_of::<cl_int>(),
                (&mut status as *mut cl_int).cast::<c_void>(),
                ptr::null_mut(),
            )
        };
        check(code, "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)")?;
        if status == ffi::CL_COMPLETE as cl_int {
            return Ok(());
        }
        if status < 0 {
            return Err(driver_error("read (event status)", status));
        }
        std::hint::spin_loop();
    }
}

/// Block until `event`'s command completed (the runtime's own wait).
pub(crate) fn wait_for(event: &Event) -> Result<()> {
    // SAFETY: one valid event.
    check(
        unsafe { ffi::clWaitForEvents(1, &event.0) },
        "clWaitForEvents",
    )
}

/// Another reference to `queue` (released when the returned handle drops).
pub(crate) fn retain_queue(queue: &Queue) -> Result<Queue> {
    // SAFETY: a valid queue; the new handle owns the extra reference.
    check(
        unsafe { ffi::clRetainCommandQueue(queue.0) },
        "clRetainCommandQueue",
    )?;
    Ok(Queue(queue.0))
}
