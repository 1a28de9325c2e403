//! Kernel arguments and the one place kernels are enqueued.

use super::cl::{self, Kernel, Queue};
use super::packed::WordKind;
use super::raw::RawBuffer;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use ocl::ffi::{self, cl_mem};
use std::ffi::c_void;
use std::ptr;

/// One kernel argument: a buffer or a by-value scalar of up to 8 bytes.
#[derive(Clone, Copy)]
pub(crate) enum Arg<'a> {
    /// A `__global` pointer.
    Mem(&'a RawBuffer),
    /// A by-value argument: its bytes and size.
    Value([u8; 8], usize),
}

impl<'a> Arg<'a> {
    fn value<V: bytemuck::Pod>(v: V) -> Self {
        let bytes = bytemuck::bytes_of(&v);
        let mut out = [0u8; 8];
        out[..bytes.len()].copy_from_slice(bytes);
        Arg::Value(out, bytes.len())
    }
    /// A `uint` argument.
    pub(crate) fn uint(v: u32) -> Self {
        Self::value(v)
    }
    /// An `int` argument.
    pub(crate) fn int(v: i32) -> Self {
        Self::value(v)
    }
    /// A `ulong` argument.
    pub(crate) fn ulong(v: u64) -> Self {
        Self::value(v)
    }
    /// A `SCALAR` argument.
    pub(crate) fn scalar<T: Scalar>(v: T) -> Self {
        Self::value(v)
    }
}

/// What identifies an argument value for the cache of [`CachedKernel`]: a buffer's unique id,
/// or a by-value argument's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ArgKey {
    Mem(u64),
    Value([u8; 8], usize),
}

impl Arg<'_> {
    fn key(&self) -> ArgKey {
        match self {
            Arg::Mem(b) => ArgKey::Mem(b.id),
            Arg::Value(bytes, size) => ArgKey::Value(*bytes, *size),
        }
    }
}

/// Set the arguments of `kernel` that differ from the last launch and enqueue it with `groups`
/// work-groups of `wg` work-items on `queue` (no wait: the queue is in order). With
/// `address_args` every buffer is passed by value as its device address (already read, see
/// `address.rs`), for programs built with `-D PK_ADDRESS_ARGS`; a kernel with packed arguments
/// (`packed.rs`) gets them all as its one struct argument.
pub(crate) fn enqueue(
    queue: &Queue,
    cached: &mut CachedKernel,
    name: &str,
    args: &[Arg<'_>],
    (groups, wg): (usize, usize),
    address_args: bool,
) -> Result<()> {
    if cached.packed_words.is_some() {
        set_packed(cached, name, args)?;
        return enqueue_now(queue, &cached.kernel, name, (groups, wg));
    }
    let kernel: &Kernel = &cached.kernel;
    if cached.last.len() < args.len() {
        cached.last.resize(args.len(), None);
    }
    for (index, arg) in args.iter().enumerate() {
        let key = arg.key();
        if cached.last[index] == Some(key) {
            continue;
        }
        // Forget the entry until the call succeeds.
        cached.last[index] = None;
        let code = match arg {
            Arg::Mem(buf) if address_args => {
                let address = buf.device_address();
                if address == 0 {
                    return Err(Error::param(
                        "opencl",
                        format!("{name}: argument {index} has no device address"),
                    ));
                }
                // SAFETY: the program declares this parameter as a by-value `ulong`
                // (PK_ADDRESS_ARGS); 8 bytes are read from the local for the call.
                unsafe {
                    ffi::clSetKernelArg(
                        kernel.0,
                        index as u32,
                        std::mem::size_of::<u64>(),
                        (&address as *const u64).cast::<c_void>(),
                    )
                }
            }
            Arg::Mem(buf) => {
                let mem: cl_mem = buf.mem.0;
                // SAFETY: a cl_mem argument is passed as a pointer to the handle, which lives
                // on the stack for the duration of the call; the kernel is not used by any
                // other thread (the caller holds the kernel-cache lock).
                unsafe {
                    ffi::clSetKernelArg(
                        kernel.0,
                        index as u32,
                        std::mem::size_of::<cl_mem>(),
                        (&mem as *const cl_mem).cast::<c_void>(),
                    )
                }
            }
            Arg::Value(bytes, size) => {
                // SAFETY: `bytes` holds `size` <= 8 initialized bytes of the argument value;
                // the kernel is not used by any other thread (kernel-cache lock held).
                unsafe {
                    ffi::clSetKernelArg(
                        kernel.0,
                        index as u32,
                        *size,
                        bytes.as_ptr().cast::<c_void>(),
                    )
                }
            }
        };
        if code != ffi::CL_SUCCESS {
            return Err(cl::driver_error(
                &format!("clSetKernelArg({name}, argument {index})"),
                code,
            ));
        }
        cached.last[index] = Some(key);
    }
    enqueue_now(queue, kernel, name, (groups, wg))
}

/// The packed argument words of `args` (see `packed.rs`): device addresses and zero-extended
/// value bytes, set as the kernel's one argument when they differ from the last launch.
fn set_packed(cached: &mut CachedKernel, name: &str, args: &[Arg<'_>]) -> Result<()> {
    let kinds = cached.packed_words.as_deref().unwrap_or(&[]);
    let words = kinds.len();
    if args.len() != words {
        return Err(Error::param(
            "opencl",
            format!("{name}: {} arguments for {words} packed words", args.len()),
        ));
    }
    if words > super::packed::MAX_WORDS {
        return Err(Error::param(
            "opencl",
            format!(
                "{name}: {words} arguments, at most {} can be packed",
                super::packed::MAX_WORDS
            ),
        ));
    }
    let mut packed = [0u64; super::packed::MAX_WORDS];
    for (index, ((arg, kind), word)) in args.iter().zip(kinds).zip(packed.iter_mut()).enumerate() {
        // The checks clSetKernelArg does for separate arguments: a buffer where the kernel
        // takes a pointer, a value of the parameter's size elsewhere.
        *word = match (arg, kind) {
            (Arg::Mem(buf), WordKind::Address) => {
                let address = buf.device_address();
                if address == 0 {
                    return Err(Error::param(
                        "opencl",
                        format!("{name}: argument {index} has no device address"),
                    ));
                }
                address
            }
            (Arg::Value(bytes, size), WordKind::Value(expected)) if size == expected => {
                u64::from_le_bytes(*bytes)
            }
            _ => {
                return Err(Error::param(
                    "opencl",
                    format!(
                        "{name}: argument {index} does not match the kernel's parameter ({kind:?})"
                    ),
                ))
            }
        };
    }
    let packed = &packed[..words];
    if cached.last_packed == packed {
        return Ok(());
    }
    cached.last_packed.clear();
    // SAFETY: the kernel's one parameter is a struct of `words` ulongs (packed.rs); `packed`
    // holds exactly that many bytes for the call; the kernel-cache lock is held by the caller.
    let code = unsafe {
        ffi::clSetKernelArg(
            cached.kernel.0,
            0,
            std::mem::size_of_val(packed),
            packed.as_ptr().cast::<c_void>(),
        )
    };
    if code != ffi::CL_SUCCESS {
        return Err(cl::driver_error(
            &format!("clSetKernelArg({name}, packed arguments)"),
            code,
        ));
    }
    cached.last_packed.extend_from_slice(packed);
    Ok(())
}

/// Enqueue `kernel` with all its arguments set: `groups` work-groups of `wg` work-items.
fn enqueue_now(
    queue: &Queue,
    kernel: &Kernel,
    name: &str,
    (groups, wg): (usize, usize),
) -> Result<()> {
    let global = groups
        .checked_mul(wg)
        .ok_or_else(|| Error::param("groups", format!("{groups} groups of {wg} overflow")))?;
    let local = wg;
    // SAFETY: every argument of the kernel was set above with the type its OpenCL signature
    // declares (the argument lists are mirrored from the `.cl` headers and checked by the
    // conformance tests); buffers are kept alive by their `Buffer` owners until the in-order
    // queue has run the kernel (reads are blocking and buffers release through
    // clReleaseMemObject, which defers the free until queued commands finish); all indices a
    // kernel touches are bounded by the lengths the caller validated.
    let tracing = super::trace::tracing();
    let mut event: ffi::cl_event = ptr::null_mut();
    let code = unsafe {
        ffi::clEnqueueNDRangeKernel(
            queue.0,
            kernel.0,
            1,
            ptr::null(),
            &global,
            &local,
            0,
            ptr::null(),
            if tracing { &mut event } else { ptr::null_mut() },
        )
    };
    if tracing && code == ffi::CL_SUCCESS && !event.is_null() {
        super::trace::record(name, super::cl::Event(event));
    }
    if code != ffi::CL_SUCCESS {
        return Err(cl::driver_error(
            &format!("clEnqueueNDRangeKernel({name})"),
            code,
        ));
    }
    Ok(())
}

/// A kernel with the arguments last set on it, so a launch only re-sets what changed
/// (`clSetKernelArg` is a driver call per argument, a visible part of small-system latency).
pub(crate) struct CachedKernel {
    pub(crate) kernel: Kernel,
    /// Per argument index: the buffer id (`Mem`) or value bytes last set.
    pub(crate) last: Vec<Option<ArgKey>>,
    /// For a kernel taking packed arguments (`packed.rs`): what each word must be.
    pub(crate) packed_words: Option<Vec<super::packed::WordKind>>,
    /// The packed words last set.
    pub(crate) last_packed: Vec<u64>,
}

impl CachedKernel {
    pub(crate) fn new(kernel: Kernel, packed_words: Option<Vec<super::packed::WordKind>>) -> Self {
        Self {
            kernel,
            last: Vec::new(),
            packed_words,
            last_packed: Vec::new(),
        }
    }
}
