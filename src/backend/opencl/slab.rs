//! Small buffers carved out of larger ones: a new small buffer is a sub-buffer of the current
//! slab, which is already allocated, touched and whose device address is known.
//!
//! Why: a new memory object on NVIDIA's OpenCL costs about 45 us of allocation at its first use
//! and a blocking address read (`address.rs`) before its first kernel; a sub-buffer costs a host
//! call (measured on the H200 with `examples/probes/opencl_alloc_cost.rs`: the first fill of a
//! new 64 KiB buffer with its wait 59 us, a second one 13 us). The multigrid setup asks for
//! about a hundred small buffers that the pool (`pool.rs`) cannot serve (2D Poisson 1M: 99 of
//! the 174 new buffers are below 1 MiB, 15 MB together).
//!
//! Which: requests up to an eighth of the slab size; the slab size follows the most the
//! backend's buffers held at once (a sixteenth of it, a power of two from 1 to 16 MiB). A slab
//! is retired when the next request does not fit; its memory is freed by the runtime once its
//! last sub-buffer is released (a sub-buffer keeps its parent). Freed sub-buffers go to the pool
//! like other buffers. Slabs are the runtime's own memory, not counted in
//! [`crate::backend::MemoryUse`], and outside the pool's bound: the current slab (at most
//! 16 MiB) and, in retired slabs, the regions of released sub-buffers whose siblings still
//! live. A refused sub-buffer falls back to a new memory object.

use super::cl::{self, Mem};
use super::raw::{RawBuffer, Slab};
use super::OpenClBackend;
use crate::error::Result;
use ocl::ffi;

/// The smallest and largest slab.
const SLAB_BYTES: (usize, usize) = (1 << 20, 16 << 20);

/// A sub-buffer carved from a slab.
pub(crate) struct Carved {
    pub(crate) mem: Mem,
    /// Its device address when the slab's is known, else 0.
    pub(crate) address: u64,
}

/// Drop a slab that no longer serves requests: its sub-buffers keep its memory, and no kernel
/// gets the slab itself, so dropping it needs no wait for the queue (each sub-buffer waits
/// when it is released). Its alignment.
fn retire(slab: Slab) -> usize {
    slab.buffer
        .address
        .store(0, std::sync::atomic::Ordering::Release);
    slab.align
}

impl OpenClBackend {
    /// A sub-buffer of `bytes` bytes from the current slab (a new slab when it does not fit),
    /// or `None` for a request too large to carve or a refused sub-buffer.
    pub(crate) fn carve(&self, bytes: usize) -> Result<Option<Carved>> {
        let slab_bytes = (self.pool.high_water() / 16)
            .next_power_of_two()
            .clamp(SLAB_BYTES.0, SLAB_BYTES.1);
        if bytes > slab_bytes / 8 {
            return Ok(None);
        }
        let mut guard = self.slab.lock().unwrap_or_else(|p| p.into_inner());
        let fits = |s: &Slab| s.used.next_multiple_of(s.align) + bytes <= s.buffer.bytes;
        if !guard.as_ref().is_some_and(fits) {
            // Retire the current slab and start another, without the lock: an allocation
            // failure empties the pool and retires the slab itself (`create_mem`).
            let align = guard.take().map_or_else(|| self.sub_buffer_align(), retire);
            drop(guard);
            let buffer = self.new_slab(slab_bytes)?;
            guard = self.slab.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(other) = guard.take() {
                retire(other);
            }
            *guard = Some(Slab {
                buffer,
                used: 0,
                align,
            });
        }
        let Some(slab) = guard.as_mut() else {
            return Ok(None);
        };
        let origin = slab.used.next_multiple_of(slab.align);
        let region = ffi::cl_buffer_region {
            origin,
            size: bytes,
        };
        let mut err = 0;
        // SAFETY: a valid buffer; the region lies inside it (checked by `fits`) and its origin
        // is a multiple of the device's base address alignment.
        let mem = unsafe {
            ffi::clCreateSubBuffer(
                slab.buffer.mem.0,
                ffi::CL_MEM_READ_WRITE,
                ffi::CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const ffi::cl_buffer_region).cast(),
                &mut err,
            )
        };
        if err != ffi::CL_SUCCESS || mem.is_null() {
            return Ok(None);
        }
        slab.used = origin + bytes;
        let base = slab.buffer.device_address();
        Ok(Some(Carved {
            mem: Mem(mem),
            address: if base == 0 { 0 } else { base + origin as u64 },
        }))
    }

    /// A new slab: allocated, zero-filled and waited for, its address read when programs use
    /// device addresses.
    fn new_slab(&self, bytes: usize) -> Result<RawBuffer> {
        let mem = self.create_mem(bytes)?;
        let queue = cl::retain_queue(&self.queue).map_err(|e| self.record(e))?;
        let slab = RawBuffer::new(mem, bytes, self.owner, queue);
        self.zero_fill(&slab)?;
        Ok(slab)
    }

    /// The alignment of a sub-buffer's origin in bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN is in
    /// bits), at least 256.
    fn sub_buffer_align(&self) -> usize {
        let bits = cl::device_uint(self.device.device, ffi::CL_DEVICE_MEM_BASE_ADDR_ALIGN)
            .unwrap_or(4096) as usize;
        (bits / 8).max(256)
    }
}
