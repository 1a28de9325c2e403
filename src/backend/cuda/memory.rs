//! Device allocations behind [`crate::backend::Buffer`], the pinned host staging buffer and the
//! halo exchange's staging (copy stream, pinned buffers, events).

use cudarc::driver::{result as cu, sys, CudaContext, CudaSlice, CudaStream, DriverError};
use std::sync::Arc;

/// A CUDA device allocation: untyped bytes, so that any `Pod` element type can live in it.
/// The owning backend passes its address to kernels; the allocation is freed (stream-ordered)
/// when the last buffer holding it (see `RawBuffer::share`) is dropped.
pub struct RawBuffer {
    /// The allocation, or `None` for memory the caller owns
    /// ([`super::CudaBackend::borrow_device_memory`]): never freed here.
    slice: Option<Arc<CudaSlice<u8>>>,
    ptr: u64,
    bytes: usize,
    owner: u64,
}

impl RawBuffer {
    /// Wrap an allocation of at least `bytes` bytes made by backend `owner`.
    pub(crate) fn new(slice: CudaSlice<u8>, ptr: u64, bytes: usize, owner: u64) -> Self {
        Self {
            slice: Some(Arc::new(slice)),
            ptr,
            bytes,
            owner,
        }
    }
    /// Memory the caller allocated and frees: `bytes` bytes at device address `ptr`, used by
    /// backend `owner` and never freed by it.
    pub(crate) fn borrowed(ptr: u64, bytes: usize, owner: u64) -> Self {
        Self {
            slice: None,
            ptr,
            bytes,
            owner,
        }
    }
    /// A second buffer on the same allocation (freed when both are dropped).
    pub(crate) fn share(&self) -> Self {
        Self {
            slice: self.slice.clone(),
            ptr: self.ptr,
            bytes: self.bytes,
            owner: self.owner,
        }
    }
    /// Device address of the first byte.
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }
    /// Usable size in bytes (the allocation may be larger: empty buffers hold one byte).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
    /// Identifier of the backend object that allocated it.
    pub(crate) fn owner(&self) -> u64 {
        self.owner
    }
    /// Bytes actually allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.slice.as_ref().map_or(self.bytes, |s| s.len())
    }
}

impl std::fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawBuffer({} bytes at {:#x})", self.bytes, self.ptr)
    }
}

/// Page-locked host memory used to read partials (and other small buffers) back in one
/// transfer. Cached memory, not write-combined: the host reads it.
pub(crate) struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the buffer is plain page-locked host memory owned by this value; the backend only
// touches it while holding the mutex around it.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    /// Allocate `bytes` bytes of page-locked memory.
    pub(crate) fn new(ctx: &Arc<CudaContext>, bytes: usize) -> Result<Self, cu::DriverError> {
        ctx.bind_to_thread()?;
        // SAFETY: flags 0 (cached, portable to this context only); the memory is freed in Drop
        // with cuMemFreeHost.
        let ptr = unsafe { cu::malloc_host(bytes, 0) }?;
        Ok(Self {
            ptr: ptr.cast::<u8>(),
            bytes,
            ctx: ctx.clone(),
        })
    }
    /// Size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.bytes
    }
    /// The context it belongs to.
    pub(crate) fn context(&self) -> sys::CUcontext {
        self.ctx.cu_ctx()
    }
    /// The ordinal of its device.
    pub(crate) fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }
    /// The first `bytes` bytes.
    pub(crate) fn bytes_mut(&mut self, bytes: usize) -> &mut [u8] {
        let n = bytes.min(self.bytes);
        // SAFETY: `ptr` points to `self.bytes` bytes owned by this value, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, n) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // Errors cannot be returned from drop; the context records them.
        self.ctx.record_err(self.ctx.bind_to_thread());
        // SAFETY: `ptr` came from cuMemHostAlloc and is freed once; no copy into it is pending
        // (every use synchronizes the stream before releasing the lock).
        self.ctx
            .record_err(unsafe { cu::free_host(self.ptr.cast()) });
    }
}

/// The asynchronous side of the halo exchange on CUDA: a copy stream, page-locked send and
/// receive staging, and the three events that order it against the compute stream
/// (`gathered`: the send entries are packed; `sent`: they are on the host; `received`: the
/// ghost entries are on the device).
pub(crate) struct HaloStaging {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) copy: Arc<CudaStream>,
    pub(crate) send: Option<PinnedBuffer>,
    pub(crate) recv: Option<PinnedBuffer>,
    pub(crate) gathered: sys::CUevent,
    pub(crate) sent: sys::CUevent,
    pub(crate) received: sys::CUevent,
}

// SAFETY: the events are driver handles owned by this value; the backend touches them only
// while holding the mutex around it.
unsafe impl Send for HaloStaging {}

impl HaloStaging {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> std::result::Result<Self, DriverError> {
        ctx.bind_to_thread()?;
        let copy = ctx.new_stream()?;
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        Ok(Self {
            ctx: ctx.clone(),
            copy,
            send: None,
            recv: None,
            gathered: cu::event::create(flags)?,
            sent: cu::event::create(flags)?,
            received: cu::event::create(flags)?,
        })
    }

    /// Page-locked staging of at least `bytes` bytes in `slot`, grown when needed.
    pub(crate) fn staging<'a>(
        ctx: &Arc<CudaContext>,
        slot: &'a mut Option<PinnedBuffer>,
        bytes: usize,
    ) -> std::result::Result<&'a mut PinnedBuffer, DriverError> {
        if slot.as_ref().map_or(true, |p| p.len() < bytes) {
            *slot = None;
            *slot = Some(PinnedBuffer::new(ctx, bytes.next_power_of_two())?);
        }
        slot.as_mut()
            .ok_or(DriverError(sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE))
    }
}

impl Drop for HaloStaging {
    fn drop(&mut self) {
        // Errors cannot be returned from drop; the context records them.
        self.ctx.record_err(self.ctx.bind_to_thread());
        // Nothing may still copy into the page-locked buffers when they are freed.
        self.ctx.record_err(self.copy.synchronize());
        for e in [self.gathered, self.sent, self.received] {
            // SAFETY: each event was created in `new` and is destroyed once, here.
            self.ctx.record_err(unsafe { cu::event::destroy(e) });
        }
    }
}
