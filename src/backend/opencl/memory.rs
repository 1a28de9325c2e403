//! Device memory: byte-typed OpenCL buffers behind [`crate::backend::Buffer`], with the limit
//! checks (max allocation, global memory) done before allocating and out-of-memory statuses
//! turned into [`Error::OutOfMemory`].

use super::cl::{self, Mem, BACKEND};
use super::raw::{RawBuffer, Staging};
use super::{OpenClBackend, WaitMode};
use crate::backend::buffer::{Buffer, Storage};
use crate::error::{Error, Result};
use bytemuck::Pod;
use ocl::ffi::{self, cl_int};
use std::ffi::c_void;
use std::ptr;

/// Reads up to this size go through the pinned staging buffer.
const STAGING_MAX_BYTES: usize = 1 << 20;

/// The OpenCL storage of a buffer, or [`Error::WrongBackend`].
pub(crate) fn raw<T: Pod>(buf: &Buffer<T>) -> Result<&RawBuffer> {
    match &buf.storage {
        Storage::OpenCl(r) => Ok(r),
        #[allow(unreachable_patterns)]
        _ => Err(Error::WrongBackend {
            expected: BACKEND.into(),
            found: buf.owner().into(),
        }),
    }
}

impl OpenClBackend {
    /// The storage of `buf`, checked to belong to this backend's context.
    pub(crate) fn mem<'a, T: Pod>(&self, buf: &'a Buffer<T>) -> Result<&'a RawBuffer> {
        let r = raw(buf)?;
        if r.owner != self.owner {
            return Err(Error::WrongBackend {
                expected: format!("{BACKEND} ({})", self.device_label()),
                found: format!("{BACKEND} (another context)"),
            });
        }
        Ok(r)
    }

    /// A runtime-neutral kernel argument ([`crate::backend::launch`]) as this runtime's;
    /// [`KernelArg::Unused`](crate::backend::launch::KernelArg::Unused) becomes the first buffer
    /// of `launch_args` (the launch it belongs to: OpenCL takes no null buffer in every address
    /// mode), looked for only then.
    pub(crate) fn kernel_arg<'a>(
        &self,
        a: &crate::backend::launch::KernelArg<'a>,
        launch_args: &[crate::backend::launch::KernelArg<'a>],
    ) -> Result<super::launch::Arg<'a>> {
        use super::launch::Arg;
        use crate::backend::launch::{BufferArg, KernelArg};
        Ok(match a {
            KernelArg::Unused => match launch_args.iter().find_map(|a| match a {
                KernelArg::Buffer(BufferArg::OpenCl(r)) => Some(*r),
                _ => None,
            }) {
                Some(r) => Arg::Mem(r),
                None => {
                    return Err(Error::param(
                        "kernel arguments",
                        "an unused buffer operand in a launch without buffers",
                    ))
                }
            },
            KernelArg::Buffer(BufferArg::OpenCl(r)) if r.owner == self.owner => Arg::Mem(r),
            KernelArg::Buffer(BufferArg::OpenCl(_)) => {
                return Err(Error::WrongBackend {
                    expected: format!("{BACKEND} ({})", self.device_label()),
                    found: format!("{BACKEND} (another context)"),
                })
            }
            KernelArg::Buffer(_) => {
                return Err(Error::WrongBackend {
                    expected: BACKEND.into(),
                    found: "another backend's buffer".into(),
                })
            }
            KernelArg::U32(v) => Arg::uint(*v),
            KernelArg::F32(v) => Arg::scalar(*v),
            KernelArg::F64(v) => Arg::scalar(*v),
            KernelArg::U64(v) => Arg::ulong(*v),
            KernelArg::I32(v) => Arg::int(*v),
        })
    }

    fn oom(&self, bytes: usize, detail: String) -> Error {
        Error::OutOfMemory {
            device: self.device_label(),
            bytes,
            detail,
        }
    }

    /// Map a status of an allocating call: out-of-memory codes become [`Error::OutOfMemory`].
    pub(crate) fn alloc_error(&self, call: &str, bytes: usize, code: cl_int) -> Error {
        if cl::is_out_of_memory(code) {
            return self.oom(bytes, format!("{call}: {} ({code})", cl::status_name(code)));
        }
        self.record(cl::driver_error(call, code))
    }

    /// Create a buffer of `len` elements of `T` (contents undefined), after the limit checks:
    /// a pooled memory object of the same size when there is one (`pool.rs`), else a new one.
    pub(crate) fn create_raw<T: Pod>(&self, len: usize) -> Result<RawBuffer> {
        self.check_alive()?;
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| self.oom(usize::MAX, format!("{len} elements overflow usize bytes")))?;
        self.counters.check_allocation("opencl", bytes)?;
        let info = self.device();
        if bytes as u64 > info.max_alloc_bytes {
            return Err(self.oom(
                bytes,
                format!(
                    "above CL_DEVICE_MAX_MEM_ALLOC_SIZE = {} bytes",
                    info.max_alloc_bytes
                ),
            ));
        }
        if bytes as u64 > info.global_mem_bytes {
            return Err(self.oom(
                bytes,
                format!(
                    "above CL_DEVICE_GLOBAL_MEM_SIZE = {} bytes",
                    info.global_mem_bytes
                ),
            ));
        }
        let alloc = bytes.max(8);
        let queue = cl::retain_queue(&self.queue).map_err(|e| self.record(e))?;
        let (mem, address, materialized) = match self.pool.take(alloc) {
            Some(r) => (r.mem, r.address, true),
            None => match self.carve(alloc)? {
                Some(c) => (c.mem, c.address, true),
                None => (self.create_mem(alloc)?, 0, false),
            },
        };
        let mut raw = RawBuffer::new(mem, alloc, self.owner, queue);
        *raw.address.get_mut() = address;
        *raw.pool.get_mut().unwrap_or_else(|p| p.into_inner()) =
            Some(std::sync::Arc::clone(&self.pool));
        raw.materialized = materialized;
        Ok(raw)
    }

    /// A new memory object of `bytes` bytes; an out-of-memory status empties the pool (and
    /// retires the current slab) and tries once more.
    pub(crate) fn create_mem(&self, bytes: usize) -> Result<Mem> {
        let create = || {
            let mut err: cl_int = 0;
            // SAFETY: valid context, no host pointer, non-zero size within the device limit.
            let mem = unsafe {
                ffi::clCreateBuffer(
                    self.shared.context.0,
                    ffi::CL_MEM_READ_WRITE,
                    bytes,
                    ptr::null_mut(),
                    &mut err,
                )
            };
            (Mem(mem), err)
        };
        let (mut mem, mut err) = create();
        if cl::is_out_of_memory(err) && self.release_kept_memory() {
            (mem, err) = create();
        }
        if err != ffi::CL_SUCCESS {
            return Err(self.alloc_error("clCreateBuffer", bytes, err));
        }
        Ok(mem)
    }

    /// A zero-filled buffer of `len` elements. A new memory object's fill is waited for so
    /// that a lazy allocation failure is reported here (allocation is setup work, never in a
    /// solver loop); after an out-of-memory failure the pool is emptied and the allocation
    /// tried once more. A pooled memory object or a sub-buffer is filled without waiting.
    pub(crate) fn alloc_zeroed<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let raw = self.create_raw::<T>(len)?;
        let raw = match self.zero_fill(&raw) {
            Ok(()) => raw,
            Err(e) => {
                raw.forget_pool();
                drop(raw);
                if !(matches!(e, Error::OutOfMemory { .. }) && self.release_kept_memory()) {
                    return Err(e);
                }
                let raw = self.create_raw::<T>(len)?;
                if let Err(e) = self.zero_fill(&raw) {
                    raw.forget_pool();
                    return Err(e);
                }
                raw
            }
        };
        let ticket = self.counters.track(raw.bytes);
        Ok(Buffer::from_storage(
            len,
            Storage::OpenCl(raw),
            Some(ticket),
        ))
    }

    /// Empty the pool and retire the current slab: whether there was anything to release.
    pub(crate) fn release_kept_memory(&self) -> bool {
        let slab = self.slab.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.pool.clear() | slab.is_some()
    }

    /// Zero `raw` whole; a new memory object is waited for and gets its device address.
    pub(crate) fn zero_fill(&self, raw: &RawBuffer) -> Result<()> {
        let pattern = [0u8; 4];
        let psize = if raw.bytes % 4 == 0 { 4 } else { 1 };
        // SAFETY: valid queue and buffer; the pattern is copied at enqueue time; the filled
        // range is the whole allocation, a multiple of the pattern size.
        let code = unsafe {
            ffi::clEnqueueFillBuffer(
                self.queue.0,
                raw.mem.0,
                pattern.as_ptr().cast::<c_void>(),
                psize,
                0,
                raw.bytes,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        if code != ffi::CL_SUCCESS {
            return Err(self.alloc_error("clEnqueueFillBuffer", raw.bytes, code));
        }
        if raw.materialized {
            return Ok(());
        }
        self.wait_for_new_buffer(raw)
    }

    /// Blocking copy of `data` into the start of `dst` (no count).
    pub(crate) fn write_raw<T: Pod>(&self, dst: &RawBuffer, data: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(data);
        if bytes == 0 {
            return Ok(());
        }
        if bytes > dst.bytes {
            return Err(Error::dims("write: bytes vs buffer size", dst.bytes, bytes));
        }
        let mark = self.pool.mark();
        // SAFETY: blocking write of `bytes` readable bytes from `data` into a buffer of at
        // least that size; the host slice outlives the (blocking) call.
        let code = unsafe {
            ffi::clEnqueueWriteBuffer(
                self.queue.0,
                dst.mem.0,
                ffi::CL_TRUE,
                0,
                bytes,
                data.as_ptr().cast::<c_void>(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        if code != ffi::CL_SUCCESS {
            return Err(self.alloc_error("clEnqueueWriteBuffer", bytes, code));
        }
        self.queue_idle(mark);
        Ok(())
    }

    /// A mapped pinned buffer of at least `bytes` bytes, or `None` when the device refuses one
    /// (then reads go straight to pageable memory).
    pub(crate) fn new_staging(&self, bytes: usize) -> Option<Staging> {
        let mut err: cl_int = 0;
        // SAFETY: valid context, no host pointer, non-zero size.
        let mem = unsafe {
            ffi::clCreateBuffer(
                self.shared.context.0,
                ffi::CL_MEM_READ_WRITE | ffi::CL_MEM_ALLOC_HOST_PTR,
                bytes,
                ptr::null_mut(),
                &mut err,
            )
        };
        if err != ffi::CL_SUCCESS || mem.is_null() {
            return None;
        }
        let mem = Mem(mem);
        // SAFETY: blocking map of the whole (valid) buffer on this backend's queue.
        let ptr = unsafe {
            ffi::clEnqueueMapBuffer(
                self.queue.0,
                mem.0,
                ffi::CL_TRUE,
                ffi::CL_MAP_READ | ffi::CL_MAP_WRITE,
                0,
                bytes,
                0,
                ptr::null(),
                ptr::null_mut(),
                &mut err,
            )
        };
        if err != ffi::CL_SUCCESS || ptr.is_null() {
            return None;
        }
        Some(Staging {
            mem,
            ptr,
            bytes,
            queue: self.queue.0,
        })
    }

    /// Blocking read of `bytes` bytes of `src` through the pinned staging buffer; `Ok(false)`
    /// when no staging buffer is available.
    fn read_staged<T: Pod>(&self, src: &RawBuffer, out: &mut [T], bytes: usize) -> Result<bool> {
        let mut guard = self
            .staging
            .lock()
            .map_err(|_| Error::param("opencl", "staging lock poisoned"))?;
        if guard.as_ref().map_or(true, |s| s.bytes < bytes) {
            *guard = None;
            *guard = self.new_staging(bytes.next_power_of_two().max(4096));
        }
        let Some(st) = guard.as_ref() else {
            return Ok(false);
        };
        let mark = self.pool.mark();
        match self.wait {
            WaitMode::Block => {
                // SAFETY: blocking read of `bytes` bytes into the mapped staging memory, which
                // has at least that many bytes and stays mapped while the lock is held.
                let code = unsafe {
                    ffi::clEnqueueReadBuffer(
                        self.queue.0,
                        src.mem.0,
                        ffi::CL_TRUE,
                        0,
                        bytes,
                        st.ptr,
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    )
                };
                if code != ffi::CL_SUCCESS {
                    return Err(self.record(cl::driver_error("clEnqueueReadBuffer", code)));
                }
            }
            WaitMode::Spin => self.read_polled(src, st.ptr, bytes)?,
        }
        self.queue_idle(mark);
        // SAFETY: `bytes` bytes were just written at `st.ptr`; `out` has exactly `bytes` bytes
        // and any bit pattern is a valid `T: Pod`; the regions do not overlap.
        unsafe {
            ptr::copy_nonoverlapping(st.ptr.cast::<u8>(), out.as_mut_ptr().cast::<u8>(), bytes);
        }
        Ok(true)
    }

    /// Blocking copy of the start of `src` into `out` (no count).
    pub(crate) fn read_raw<T: Pod>(&self, src: &RawBuffer, out: &mut [T]) -> Result<()> {
        let bytes = std::mem::size_of_val(out);
        if bytes == 0 {
            return Ok(());
        }
        if bytes > src.bytes {
            return Err(Error::dims("read: bytes vs buffer size", src.bytes, bytes));
        }
        if bytes <= STAGING_MAX_BYTES && self.read_staged(src, out, bytes)? {
            return Ok(());
        }
        let mark = self.pool.mark();
        // SAFETY: blocking read of `bytes` bytes into `out`, which has exactly that many
        // writable bytes and outlives the call; any bit pattern is a valid `T: Pod`.
        let code = unsafe {
            ffi::clEnqueueReadBuffer(
                self.queue.0,
                src.mem.0,
                ffi::CL_TRUE,
                0,
                bytes,
                out.as_mut_ptr().cast::<c_void>(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        if code != ffi::CL_SUCCESS {
            return Err(self.record(cl::driver_error("clEnqueueReadBuffer", code)));
        }
        self.queue_idle(mark);
        Ok(())
    }

    /// Non-blocking read of `bytes` bytes of `src` into `dst`, flushed, then the read's event
    /// polled until it completes ([`WaitMode::Spin`]). `dst` must stay valid and untouched until
    /// this returns (it waits for the read in every case, errors included).
    fn read_polled(&self, src: &RawBuffer, dst: *mut c_void, bytes: usize) -> Result<()> {
        let mut event: ffi::cl_event = ptr::null_mut();
        // SAFETY: non-blocking read of `bytes` bytes into `dst`, which the caller keeps valid
        // until the event completes (waited for below before returning).
        let code = unsafe {
            ffi::clEnqueueReadBuffer(
                self.queue.0,
                src.mem.0,
                ffi::CL_FALSE,
                0,
                bytes,
                dst,
                0,
                ptr::null(),
                &mut event,
            )
        };
        if code != ffi::CL_SUCCESS {
            return Err(self.record(cl::driver_error("clEnqueueReadBuffer", code)));
        }
        let event = cl::Event(event);
        let waited = cl::flush(&self.queue).and_then(|()| cl::spin_until_complete(&event));
        if let Err(e) = waited {
            // Never return while the read may still write into `dst`.
            let _ = cl::finish(&self.queue);
            return Err(self.record(e));
        }
        Ok(())
    }
}
