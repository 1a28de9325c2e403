//! CUDA implementation of [`VectorOps`]: memory, BLAS-1 kernels (`kernels/vector.kc`) and
//! the partials read back through pinned memory.

use super::module::Kernel;
use super::{index_arg, len_arg, scalar, CudaBackend};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{sum_slots, Partials, Slot, Sums};
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

    fn fill<T: Scalar>(&self, x: &mut Buffer<T>, value: T) -> Result<()> {
        let n = x.len();
        let args = [self.ptr(x)?, len_arg(n)?, scalar(value)];
        // SAFETY: fill(SCALAR* x, uint n, SCALAR value) writes x[0..n), and x has n elements.
        unsafe { self.launch::<T>(Kernel::Fill, self.grid(n), &args) }
    }

    fn copy<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        check_len("copy: destination length", y, x.len())?;
        let n = x.len();
        let args = [self.ptr(x)?, self.ptr(y)?, len_arg(n)?];
        // SAFETY: copy(const SCALAR* x, SCALAR* y, uint n); both hold n elements (checked).
        unsafe { self.launch::<T>(Kernel::Copy, self.grid(n), &args) }
    }

    fn copy_from_f32<T: Scalar>(&self, x: &Buffer<f32>, y: &mut Buffer<T>) -> Result<()> {
        check_len("copy_from_f32: destination length", y, x.len())?;
        let n = x.len();
        let args = [self.ptr(x)?, self.ptr(y)?, len_arg(n)?];
        // SAFETY: copy_from_f32(const float* x, SCALAR* y, uint n); both hold n elements
        // (checked).
        unsafe { self.launch::<T>(Kernel::CopyFromF32, self.grid(n), &args) }
    }

    fn copy_to_f32<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<f32>) -> Result<()> {
        check_len("copy_to_f32: destination length", y, x.len())?;
        let n = x.len();
        let args = [self.ptr(x)?, self.ptr(y)?, len_arg(n)?];
        // SAFETY: copy_to_f32(const SCALAR* x, float* y, uint n); both hold n elements
        // (checked).
        unsafe { self.launch::<T>(Kernel::CopyToF32, self.grid(n), &args) }
    }

    fn copy_u32(&self, x: &Buffer<u32>, y: &mut Buffer<u32>) -> Result<()> {
        check_len("copy_u32: destination length", y, x.len())?;
        let n = x.len();
        let args = [self.ptr(x)?, self.ptr(y)?, len_arg(n)?];
        // SAFETY: copy_u32(const uint* x, uint* y, uint n); both hold n elements (checked).
        unsafe { self.launch::<f32>(Kernel::CopyU32, self.grid(n), &args) }
    }

    fn axpby<T: Scalar>(&self, alpha: T, x: &Buffer<T>, beta: T, y: &mut Buffer<T>) -> Result<()> {
        check_len("axpby: y length vs x", y, x.len())?;
        let n = x.len();
        let args = [
            scalar(alpha),
            self.ptr(x)?,
            scalar(beta),
            self.ptr(y)?,
            len_arg(n)?,
        ];
        // SAFETY: axpby(SCALAR alpha, const SCALAR* x, SCALAR beta, SCALAR* y, uint n); both
        // vectors hold n elements (checked).
        unsafe { self.launch::<T>(Kernel::Axpby, self.grid(n), &args) }
    }

    fn scale<T: Scalar>(&self, alpha: T, x: &mut Buffer<T>) -> Result<()> {
        let n = x.len();
        let args = [scalar(alpha), self.ptr(x)?, len_arg(n)?];
        // SAFETY: scale(SCALAR alpha, SCALAR* x, uint n); x holds n elements.
        unsafe { self.launch::<T>(Kernel::Scale, self.grid(n), &args) }
    }

    fn dot_partials<T: Scalar>(
        &self,
        x: &Buffer<T>,
        y: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        check_len("dot: y length vs x", y, x.len())?;
        partials.check(slot, x.len())?;
        let args = [
            self.ptr(x)?,
            self.ptr(y)?,
            len_arg(x.len())?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: dot_partials(const SCALAR* x, const SCALAR* y, uint n, SCALAR* partials,
        // uint slot); x and y hold n elements; slot < slots (checked) and the grid is
        // partials.groups(), so every block writes inside the buffer.
        unsafe { self.launch::<T>(Kernel::DotPartials, partials.groups(), &args) }
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
