//! What the CUDA backends of one process keep for the next backend on the same device: a
//! device memory pool that holds freed memory, and the page-locked staging buffers of small
//! reads.
//!
//! Buffers come from a memory pool of the library's own (`cuMemPoolCreate`, one per device)
//! whose release threshold keeps freed memory for the next request: the pool holds on to its
//! reserved memory (in use or free) up to an eighth of the device's memory ([`KEPT_SHARE`]);
//! above that, freed memory goes back to the system at the next synchronization (PyTorch's and
//! CuPy's pools keep all of it). That reserve stays with the process after every backend is
//! dropped, unavailable to other allocators (another library's, the OpenCL backend's) until
//! [`CudaBackend::release_pooled_memory`](super::CudaBackend::release_pooled_memory) or an
//! allocation failure of this pool trims it. With the driver's default
//! pool (release threshold 0) every synchronization handed freed memory back to the system, so
//! each solver built after another one was dropped mapped all its memory again, and so did
//! every temporary after a read. The default pool is left as it is (other libraries in the
//! process use it). A backend's page-locked staging buffer (`cuMemHostAlloc`, freed with
//! `cuMemFreeHost`, both slow driver calls) goes back to a short list when the backend is
//! dropped and serves the next backend.
//!
//! Both belong to the device and outlive backends, as CUDA's primary context does. An
//! allocation that fails for memory waits for its stream, trims the pool and tries once more;
//! a sticky fault forgets the device's pool ([`forget_device`]).

use super::memory::PinnedBuffer;
use cudarc::driver::{result as cu, sys, CudaContext, CudaStream, DriverError};
use std::sync::{Arc, Mutex, MutexGuard};

/// A device memory pool (a driver handle valid for the life of the process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DevicePool(sys::CUmemoryPool);

// SAFETY: a pool handle is a process-wide driver object; the driver's pool calls are
// thread-safe.
unsafe impl Send for DevicePool {}
// SAFETY: as above.
unsafe impl Sync for DevicePool {}

/// The pool of each device that has one: (ordinal, pool).
static POOLS: Mutex<Vec<(usize, DevicePool)>> = Mutex::new(Vec::new());

/// Page-locked staging buffers of dropped backends, for the next backend of the same context.
static SPARE_PINNED: Mutex<Vec<PinnedBuffer>> = Mutex::new(Vec::new());

/// The pool keeps freed memory up to the device's memory divided by this.
pub(crate) const KEPT_SHARE: usize = 8;

/// At most this many staging buffers wait for a backend (each is 64 KiB to 1 MiB).
const MAX_SPARE_PINNED: usize = 4;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every value in these lists is complete: a panic elsewhere leaves them usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pool of `ctx`'s device (of `total_memory` bytes), created on first use with a release
/// threshold that keeps freed memory; `None` where the driver has no stream-ordered allocation
/// (the backend then allocates as cudarc does) or the pool cannot be made.
pub(crate) fn for_device(ctx: &Arc<CudaContext>, total_memory: usize) -> Option<DevicePool> {
    if !ctx.has_async_alloc() {
        return None;
    }
    let ordinal = ctx.ordinal();
    let mut pools = lock(&POOLS);
    if let Some((_, pool)) = pools.iter().find(|(o, _)| *o == ordinal) {
        return Some(*pool);
    }
    let pool = create(ctx, (total_memory / KEPT_SHARE) as u64).ok()?;
    pools.push((ordinal, pool));
    Some(pool)
}

/// A new pool on `ctx`'s device that keeps up to `keep` bytes of freed memory.
fn create(ctx: &Arc<CudaContext>, keep: u64) -> Result<DevicePool, DriverError> {
    ctx.bind_to_thread()?;
    // SAFETY: all-zero is a valid `CUmemPoolProps` (no handle types, no limit); the fields set
    // name pinned device memory on this device.
    let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = ctx.cu_device();
    // SAFETY: `props` is a valid description.
    let pool = unsafe { cu::mem_pool::create(&props) }?;
    let mut keep = keep;
    // SAFETY: a valid pool; the release threshold is a `cuuint64_t`.
    let set = unsafe {
        cu::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut keep as *mut u64).cast(),
        )
    };
    if let Err(e) = set {
        // SAFETY: the pool was created above and nothing was allocated from it.
        let _ = unsafe { cu::mem_pool::destroy(pool) };
        return Err(e);
    }
    Ok(DevicePool(pool))
}

/// Forget the pool and the staging buffers of device `ordinal` (after a sticky fault: the
/// context they belong to is unusable).
pub(crate) fn forget_device(ordinal: usize) {
    lock(&POOLS).retain(|(o, _)| *o != ordinal);
    let gone: Vec<PinnedBuffer> = {
        let mut spare = lock(&SPARE_PINNED);
        let (gone, kept) = spare.drain(..).partition(|p| p.ordinal() == ordinal);
        *spare = kept;
        gone
    };
    // Freed outside the lock (each free is a driver call).
    drop(gone);
}

impl DevicePool {
    /// `bytes` bytes (at least 1) on `stream`, stream-ordered; a failure for memory trims the
    /// pool and tries once more.
    pub(crate) fn alloc(
        self,
        stream: &Arc<CudaStream>,
        bytes: usize,
    ) -> Result<cudarc::driver::CudaSlice<u8>, DriverError> {
        let bytes = bytes.max(1);
        let from_pool = || {
            let mut ptr: sys::CUdeviceptr = 0;
            // SAFETY: a valid pool and stream; one pointer is written.
            unsafe { sys::cuMemAllocFromPoolAsync(&mut ptr, bytes, self.0, stream.cu_stream()) }
                .result()
                .map(|()| ptr)
        };
        let ptr = match from_pool() {
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => {
                // Frees still queued on this stream reach the pool first; whatever the trim
                // says, the second attempt's error is the one reported.
                let _ = stream.synchronize();
                let _ = self.trim();
                from_pool()?
            }
            other => other?,
        };
        // SAFETY: a stream-ordered allocation of `bytes` bytes on `stream`'s device; the slice
        // frees it with cuMemFreeAsync (the context allocates asynchronously), which returns
        // it to this pool.
        Ok(unsafe { stream.upgrade_device_ptr::<u8>(ptr, bytes) })
    }

    /// Give the pool's unused memory back to the system: the bytes released.
    pub(crate) fn trim(self) -> Result<usize, DriverError> {
        let before = self.reserved()?;
        // SAFETY: a valid pool.
        unsafe { cu::mem_pool::trim_to(self.0, 0) }?;
        Ok(before.saturating_sub(self.reserved()?))
    }

    /// Bytes the pool holds and no buffer uses.
    pub(crate) fn unused(self) -> Result<usize, DriverError> {
        let used = self.attribute(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
        Ok(self.reserved()?.saturating_sub(used))
    }

    fn reserved(self) -> Result<usize, DriverError> {
        self.attribute(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
    }

    fn attribute(self, attr: sys::CUmemPool_attribute) -> Result<usize, DriverError> {
        let mut value: u64 = 0;
        // SAFETY: a valid pool; the memory attributes are `cuuint64_t`.
        unsafe { cu::mem_pool::get_attribute(self.0, attr, (&mut value as *mut u64).cast()) }?;
        Ok(usize::try_from(value).unwrap_or(usize::MAX))
    }
}

/// A staging buffer of a dropped backend of `ctx`'s context holding at least `bytes` bytes.
pub(crate) fn take_pinned(ctx: &Arc<CudaContext>, bytes: usize) -> Option<PinnedBuffer> {
    let mut spare = lock(&SPARE_PINNED);
    let at = spare
        .iter()
        .position(|p| p.context() == ctx.cu_ctx() && p.len() >= bytes)?;
    Some(spare.swap_remove(at))
}

/// Keep the staging buffer of a backend being dropped for the next one (freed when the list is
/// full).
pub(crate) fn keep_pinned(buffer: PinnedBuffer) {
    let mut spare = lock(&SPARE_PINNED);
    if spare.len() < MAX_SPARE_PINNED {
        spare.push(buffer);
    } else {
        drop(spare);
        drop(buffer);
    }
}
