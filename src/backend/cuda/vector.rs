//! CUDA implementation of [`VectorOps`]: memory, transfers and the partials read back through
//! pinned memory. The BLAS-1 kernels (`kernels/vector.kc`) are launched once for both runtimes
//! by the trait's default bodies (`ops/vector.rs`).

use super::module::Kernel;
use super::CudaBackend;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{sum_slots, Partials, Sums};
use crate::backend::{CounterSnapshot, VectorOps};
use crate::error::Result;
use crate::scalar::Scalar;
use bytemuck::Pod;

impl VectorOps for CudaBackend {
    fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.new_buffer(len, true)
    }

    fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        let buf = self.new_buffer::<T>(data.len(), false)?;
        self.copy_to_device(self.raw(&buf)?, bytemuck::cast_slice(data))?;
        Ok(buf)
    }

    fn write<T: Pod>(&self, dst: &mut Buffer<T>, data: &[T]) -> Result<()> {
        check_len("write: data length vs buffer", dst, data.len())?;
        self.copy_to_device(self.raw(dst)?, bytemuck::cast_slice(data))
    }

    fn read<T: Pod>(&self, src: &Buffer<T>, out: &mut [T]) -> Result<()> {
        check_len("read: output length vs buffer", src, out.len())?;
        self.copy_to_host(self.raw(src)?, bytemuck::cast_slice_mut(out))
    }

    fn synchronize(&self) -> Result<()> {
        self.check_alive()?;
        self.bind()?;
        self.sync()
    }

    fn reduction_groups(&self, n: usize) -> usize {
        self.groups_for(n)
    }

    fn finish<T: Scalar>(&self, partials: &Partials<T>) -> Result<Sums> {
        self.check_alive()?;
        let raw = self.raw(partials.buffer())?;
        let bytes = partials.buffer().bytes();
        let (groups, slots) = (partials.groups(), partials.slots());
        if bytes == 0 || bytes > super::PINNED_MAX {
            let mut data = vec![T::zero(); partials.buffer().len()];
            self.copy_to_host(raw, bytemuck::cast_slice_mut(&mut data))?;
            return Ok(sum_slots(&data, groups, slots));
        }
        // One transfer: the whole buffer into pinned memory, summed there.
        self.counters.transfer();
        self.bind()?;
        self.with_pinned(raw, bytes, |staged| {
            Ok(match bytemuck::try_cast_slice::<u8, T>(staged) {
                Ok(data) => sum_slots(data, groups, slots),
                Err(_) => {
                    let mut data = vec![T::zero(); staged.len() / std::mem::size_of::<T>()];
                    bytemuck::cast_slice_mut::<T, u8>(&mut data).copy_from_slice(staged);
                    sum_slots(&data, groups, slots)
                }
            })
        })
    }

    fn counters(&self) -> CounterSnapshot {
        self.counters.snapshot()
    }

    fn memory_use(&self) -> crate::backend::MemoryUse {
        self.counters.memory_use()
    }

    fn reset_peak_memory(&self) {
        self.counters.reset_peak_memory()
    }
}

impl CudaBackend {
    /// The device address of `buf` as the `buffer_address` kernel sees it, next to the one the
    /// driver reports (testing: the kernel exists in both kernel languages; the OpenCL backend
    /// uses it to pass buffers by address, see `opencl/address.rs`).
    #[doc(hidden)]
    pub fn buffer_address_check<T: Scalar>(&self, buf: &Buffer<T>) -> Result<(u64, u64)> {
        let out = self.alloc::<u64>(1)?;
        let args = [self.ptr(buf)?, self.ptr(&out)?];
        // SAFETY: buffer_address(const uchar* buffer, ulong* address) writes one ulong into
        // `out` (one element) and reads nothing.
        unsafe { self.launch::<T>(Kernel::BufferAddress, 1, &args)? };
        let via_kernel = self.download(&out)?[0];
        Ok((via_kernel, self.raw(buf)?.ptr()))
    }
}

impl crate::backend::ops::FaultInjection for CudaBackend {
    fn fail_allocation(&self, nth: Option<u64>) {
        self.counters.fail_allocation(nth);
    }

    fn inject_device_fault(&self) -> bool {
        self.mark_faulted("injected device fault (testing hook)");
        true
    }
}

impl CudaBackend {
    /// The bytes of freed buffers the device's memory pool keeps for reuse, by this backend
    /// and the process's other backends on the device (see the module documentation of
    /// `pool.rs`; not counted in [`VectorOps::memory_use`]).
    /// 0 where the driver has no stream-ordered allocation.
    pub fn pooled_bytes(&self) -> usize {
        self.state
            .pool
            .and_then(|pool| pool.unused().ok())
            .unwrap_or(0)
    }

    /// Give the memory of freed buffers that the device's pool keeps for reuse back to the
    /// system, after this backend's queued work finished (buffers freed on another backend's
    /// stream that has work queued go back once that work is done): the bytes released. Only
    /// needed to give memory to other users of the device (the pool keeps up to an eighth of
    /// the device's memory after every backend is dropped): an allocation that fails for
    /// memory does this itself.
    pub fn release_pooled_memory(&self) -> crate::Result<usize> {
        let Some(pool) = self.state.pool else {
            return Ok(0);
        };
        self.synchronize()?;
        pool.trim()
            .map_err(|e| self.driver_error("cuMemPoolTrimTo", e, 0))
    }
}
