//! The OpenCL backend's raw memory objects, named by [`crate::backend::Buffer`]'s storage: a
//! buffer ([`RawBuffer`]) and the pinned staging memory of small reads ([`Staging`]). Only the
//! OpenCL API is used here; allocation and its checks are in `memory.rs`.

use super::cl::{self, Mem};
use super::pool::BufferPool;
use ocl::ffi;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex};

/// The storage of an OpenCL [`Buffer`](crate::backend::Buffer): a `cl_mem` of at least one byte (OpenCL forbids empty
/// buffers; a zero-length `Buffer` owns a small dummy), tagged with its context.
pub struct RawBuffer {
    pub(crate) mem: Mem,
    /// Bytes allocated (>= the buffer's logical size).
    pub(crate) bytes: usize,
    /// The owning backend instance (`OpenClBackend::owner`), to
    /// refuse buffers of another OpenCL backend instance (backends on one device share a
    /// context, `shared.rs`).
    pub(crate) owner: usize,
    /// Unique for the life of the process (a released `cl_mem` value can be reused), so the
    /// kernel-argument cache can tell buffers apart.
    pub(crate) id: u64,
    /// The device address once read for device-address arguments (0 = not read).
    pub(crate) address: std::sync::atomic::AtomicU64,
    /// The backend's queue (retained): a buffer whose address was handed out is released only
    /// after the queue drained, since the runtime does not know which kernels use it.
    pub(crate) queue: cl::Queue,
    /// Where the memory object goes when the buffer is dropped (`pool.rs`); `None` for a
    /// caller's memory object, and taken when the memory object is shared.
    pub(crate) pool: Mutex<Option<Arc<BufferPool>>>,
    /// Whether the memory is already allocated and touched (a pooled memory object or a
    /// sub-buffer of a slab): a fill of it needs no wait.
    pub(crate) materialized: bool,
}

impl RawBuffer {
    /// A buffer on `mem` (whose reference it takes) of `bytes` bytes of backend `owner`, with a new
    /// id, no address read yet, not pooled, not materialized.
    pub(crate) fn new(mem: Mem, bytes: usize, owner: usize, queue: cl::Queue) -> Self {
        Self {
            mem,
            bytes,
            owner,
            id: NEXT_BUFFER_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            address: std::sync::atomic::AtomicU64::new(0),
            queue,
            pool: Mutex::new(None),
            materialized: false,
        }
    }
    /// A second buffer on the same memory object (one more reference to it and to the queue,
    /// released when it is dropped; the memory lives until both are dropped).
    pub(crate) fn share(&self) -> Self {
        // Two handles on one memory object: neither may hand it to the pool.
        self.forget_pool();
        // SAFETY: both handles are valid (this buffer holds a reference to each); each retain
        // is matched by the release in the new handles' Drop.
        unsafe {
            ffi::clRetainMemObject(self.mem.0);
            ffi::clRetainCommandQueue(self.queue.0);
        }
        Self {
            mem: Mem(self.mem.0),
            bytes: self.bytes,
            owner: self.owner,
            id: NEXT_BUFFER_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            address: std::sync::atomic::AtomicU64::new(self.device_address()),
            queue: cl::Queue(self.queue.0),
            pool: Mutex::new(None),
            materialized: false,
        }
    }
    /// Release the memory object when dropped instead of pooling it (after a failed
    /// allocation or transfer).
    pub(crate) fn forget_pool(&self) {
        *self.pool.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    /// The device address, 0 when it was not read (yet).
    pub(crate) fn device_address(&self) -> u64 {
        self.address.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        let pool = self
            .pool
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(pool) = pool {
            let mem = std::mem::replace(&mut self.mem, Mem(ptr::null_mut()));
            pool.put(mem, self.bytes, self.device_address());
            return;
        }
        if self.device_address() != 0 {
            // SAFETY: a valid (retained) queue. Kernels that got this buffer's address by value
            // are not tracked by the runtime: wait for them before the memory is released. A
            // failure (device fault) leaves nothing better to do than releasing anyway.
            unsafe {
                ffi::clFinish(self.queue.0);
            }
        }
    }
}

/// The buffer small new buffers are carved from (`slab.rs`): a buffer (not pooled), the bytes
/// handed out from its start, and the alignment of a sub-buffer's origin.
pub(crate) struct Slab {
    pub(crate) buffer: RawBuffer,
    pub(crate) used: usize,
    pub(crate) align: usize,
}

/// Source of [`RawBuffer::id`].
static NEXT_BUFFER_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl std::fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawBuffer({} bytes)", self.bytes)
    }
}

/// Pinned host memory for small blocking reads (the partials every `finish` reads back): a buffer
/// created with `CL_MEM_ALLOC_HOST_PTR` and mapped once, NVIDIA's recommended way to obtain
/// page-locked memory in OpenCL. Reading into its mapped pointer avoids the driver's staging copy
/// of pageable memory, a cost that grows with the number of partials.
pub(crate) struct Staging {
    pub(crate) mem: Mem,
    pub(crate) ptr: *mut c_void,
    pub(crate) bytes: usize,
    pub(crate) queue: ffi::cl_command_queue,
}

// SAFETY: the mapped pointer is only dereferenced while the mutex that owns the staging memory
// is held (the backend's `staging` lock for reads, its `coeffs` lock for coefficient uploads).
unsafe impl Send for Staging {}

impl Drop for Staging {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by clEnqueueMapBuffer for `mem` on `queue`, which outlives
        // the staging buffer (it is declared before the queue in `OpenClBackend`); unmapped once.
        unsafe {
            ffi::clEnqueueUnmapMemObject(
                self.queue,
                self.mem.0,
                self.ptr,
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            ffi::clFinish(self.queue);
        }
    }
}

/// The device buffer a kernel reads its coefficients from, the pinned memory they are written
/// from, and the write in flight. Field order is drop order: the staging memory's drop waits for
/// the queue, so the write finished before the device buffer is released.
pub(crate) struct CoefficientUpload {
    /// The last non-blocking write out of `staging`; waited for before `staging` is rewritten.
    pub(crate) pending: Option<cl::Event>,
    /// `None` when the device refused pinned memory (then writes block).
    pub(crate) staging: Option<Staging>,
    /// The coefficients as the kernels see them.
    pub(crate) device: RawBuffer,
}
