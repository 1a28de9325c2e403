//! Memory, BLAS-1 and reductions.

use crate::backend::buffer::Buffer;
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot, Sums};
use crate::backend::{BackendInfo, CounterSnapshot, MemoryUse};
use crate::error::Result;
use crate::scalar::Scalar;
use bytemuck::Pod;
use enum_dispatch::enum_dispatch;

/// Device memory, BLAS-1 vector kernels and the two-stage reductions.
///
/// The kernels' default bodies launch them on a GPU backend, once for both runtimes (the
/// `launch` module below); the host backend has its own loops (elsewhere a kernel method is
/// [`crate::Error::Unsupported`]). Memory, transfers and the reductions' second stage are each
/// backend's own.
#[enum_dispatch]
pub trait VectorOps: BackendInfo {
    /// Allocate `len` zeroed elements. Out of memory is [`crate::Error::OutOfMemory`].
    fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>>;
    /// Allocate and copy `data` to the device (one host transfer).
    fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>>;
    /// Overwrite a buffer with `data` (one host transfer); lengths must agree.
    fn write<T: Pod>(&self, dst: &mut Buffer<T>, data: &[T]) -> Result<()>;
    /// Copy a buffer into `out` (one host transfer, blocking); lengths must agree.
    fn read<T: Pod>(&self, src: &Buffer<T>, out: &mut [T]) -> Result<()>;
    /// Copy a buffer to a new vector (one host transfer, blocking).
    fn download<T: Pod>(&self, src: &Buffer<T>) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); src.len()];
        self.read(src, &mut out)?;
        Ok(out)
    }
    /// Wait for all queued work.
    fn synchronize(&self) -> Result<()>;

    /// Kernel `fill`: x_i = value.
    fn fill<T: Scalar>(&self, x: &mut Buffer<T>, value: T) -> Result<()> {
        launch::fill(self.kernel_runtime().gpu("fill")?, x, value)
    }
    /// Kernel `copy`: y = x.
    fn copy<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let rt = self.kernel_runtime();
        launch::copy::<T, T>(
            rt.gpu("copy")?,
            Kernel::Copy,
            "copy: destination length",
            x,
            y,
        )
    }
    /// Kernel `copy_from_f32`: y = x rounded to T (exact for T = f64), e.g. a factor set up in
    /// single precision for a double-precision solve.
    fn copy_from_f32<T: Scalar>(&self, x: &Buffer<f32>, y: &mut Buffer<T>) -> Result<()> {
        let rt = self.kernel_runtime();
        launch::copy::<T, _>(
            rt.gpu("copy_from_f32")?,
            Kernel::CopyFromF32,
            "copy_from_f32: destination length",
            x,
            y,
        )
    }
    /// Kernel `copy_to_f32`: y = x rounded to single precision (a single-precision setup from
    /// a double-precision matrix already on the device).
    fn copy_to_f32<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<f32>) -> Result<()> {
        let rt = self.kernel_runtime();
        launch::copy::<T, _>(
            rt.gpu("copy_to_f32")?,
            Kernel::CopyToF32,
            "copy_to_f32: destination length",
            x,
            y,
        )
    }
    /// Kernel `copy_u32`: y = x for index arrays.
    fn copy_u32(&self, x: &Buffer<u32>, y: &mut Buffer<u32>) -> Result<()> {
        let rt = self.kernel_runtime();
        // The f32 build's kernel (it moves 32-bit words).
        launch::copy::<f32, _>(
            rt.gpu("copy_u32")?,
            Kernel::CopyU32,
            "copy_u32: destination length",
            x,
            y,
        )
    }
    /// Kernel `axpby`: y = alpha x + beta y.
    fn axpby<T: Scalar>(&self, alpha: T, x: &Buffer<T>, beta: T, y: &mut Buffer<T>) -> Result<()> {
        launch::axpby(self.kernel_runtime().gpu("axpby")?, alpha, x, beta, y)
    }
    /// Kernel `scale`: x = alpha x.
    fn scale<T: Scalar>(&self, alpha: T, x: &mut Buffer<T>) -> Result<()> {
        launch::scale(self.kernel_runtime().gpu("scale")?, alpha, x)
    }
    /// Kernel `dot_partials`: first stage of <x, y> into `slot`.
    fn dot_partials<T: Scalar>(
        &self,
        x: &Buffer<T>,
        y: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        launch::dot_partials(
            self.kernel_runtime().gpu("dot_partials")?,
            x,
            y,
            partials,
            slot,
        )
    }

    /// Work-groups the first stage of a reduction over `n` elements uses on this backend. A
    /// function of `n` and the device only, so reductions are deterministic.
    fn reduction_groups(&self, n: usize) -> usize;
    /// A partials buffer with `slots` slots for vectors of length `n`.
    fn partials<T: Scalar>(&self, n: usize, slots: usize) -> Result<Partials<T>> {
        let groups = self.reduction_groups(n);
        let buffer = self.alloc::<T>(groups * slots.max(1))?;
        Ok(Partials::from_buffer(buffer, n, groups, slots))
    }
    /// Second stage: one transfer of the whole partials buffer, then every slot summed on the
    /// host in the finish order (32 lanes of group-order sums, then added pairwise).
    fn finish<T: Scalar>(&self, partials: &Partials<T>) -> Result<Sums> {
        let data = self.download(partials.buffer())?;
        Ok(crate::backend::partials::sum_slots(
            &data,
            partials.groups(),
            partials.slots(),
        ))
    }
    /// [`VectorOps::finish`] over this process's partials alone: the same as `finish` except on
    /// `dist::DistBackend`, where `finish` sums over the ranks (a collective) and this does not.
    /// For rank-local checks of a setup (a non-finite entry in this rank's factor).
    fn finish_local<T: Scalar>(&self, partials: &Partials<T>) -> Result<Sums> {
        self.finish(partials)
    }

    /// Kernel launches and host transfers so far.
    fn counters(&self) -> CounterSnapshot;
    /// The bytes of this backend's buffers now and at their peak ([`MemoryUse`]).
    fn memory_use(&self) -> MemoryUse;
    /// Start a new peak of [`Self::memory_use`] at the bytes held now (to measure one phase,
    /// e.g. a preconditioner's setup: reset, set up, read the peak).
    fn reset_peak_memory(&self);
}

/// The GPU launches of `kernels/vector.kc`, written once for every runtime (the default bodies
/// above call them on a GPU backend; the host backend has its own loops).
mod launch {
    use crate::backend::buffer::{check_len, Buffer};
    use crate::backend::launch::{GpuRuntime, KernelArg};
    use crate::backend::ops::Kernel;
    use crate::backend::partials::{Partials, Slot};
    use crate::error::Result;
    use crate::scalar::Scalar;
    use bytemuck::Pod;

    /// Kernel `fill`.
    pub(super) fn fill<T: Scalar>(rt: &GpuRuntime<'_>, x: &mut Buffer<T>, value: T) -> Result<()> {
        let n = x.len();
        let args = [
            KernelArg::buffer(x),
            KernelArg::len("vector length", n)?,
            KernelArg::scalar(value),
        ];
        // SAFETY: fill(SCALAR* x, uint n, SCALAR value) writes x[0..n), and x has n elements.
        unsafe { rt.launch::<T>(Kernel::Fill, rt.elementwise_groups(n), &args) }
    }

    /// Kernel `kernel` of precision `P` with the arguments (x, y, uint n): `copy`,
    /// `copy_from_f32`, `copy_to_f32` or `copy_u32`; `what` names y's length in the error.
    pub(super) fn copy<P: Scalar, U: Pod>(
        rt: &GpuRuntime<'_>,
        kernel: Kernel,
        what: &str,
        x: &Buffer<impl Pod>,
        y: &mut Buffer<U>,
    ) -> Result<()> {
        check_len(what, y, x.len())?;
        let n = x.len();
        let args = [
            KernelArg::buffer(x),
            KernelArg::buffer(y),
            KernelArg::len("vector length", n)?,
        ];
        // SAFETY: copy(const SCALAR* x, SCALAR* y, uint n) and its typed variants
        // (copy_from_f32: const float* x; copy_to_f32: float* y; copy_u32: uint* both); both
        // hold n elements of the kernel's types (checked, the callers' signatures).
        unsafe { rt.launch::<P>(kernel, rt.elementwise_groups(n), &args) }
    }

    /// Kernel `axpby`.
    pub(super) fn axpby<T: Scalar>(
        rt: &GpuRuntime<'_>,
        alpha: T,
        x: &Buffer<T>,
        beta: T,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        check_len("axpby: y length vs x", y, x.len())?;
        let n = x.len();
        let args = [
            KernelArg::scalar(alpha),
            KernelArg::buffer(x),
            KernelArg::scalar(beta),
            KernelArg::buffer(y),
            KernelArg::len("vector length", n)?,
        ];
        // SAFETY: axpby(SCALAR alpha, const SCALAR* x, SCALAR beta, SCALAR* y, uint n); both
        // vectors hold n elements (checked).
        unsafe { rt.launch::<T>(Kernel::Axpby, rt.elementwise_groups(n), &args) }
    }

    /// Kernel `scale`.
    pub(super) fn scale<T: Scalar>(rt: &GpuRuntime<'_>, alpha: T, x: &mut Buffer<T>) -> Result<()> {
        let n = x.len();
        let args = [
            KernelArg::scalar(alpha),
            KernelArg::buffer(x),
            KernelArg::len("vector length", n)?,
        ];
        // SAFETY: scale(SCALAR alpha, SCALAR* x, uint n); x holds n elements.
        unsafe { rt.launch::<T>(Kernel::Scale, rt.elementwise_groups(n), &args) }
    }

    /// Kernel `dot_partials`.
    pub(super) fn dot_partials<T: Scalar>(
        rt: &GpuRuntime<'_>,
        x: &Buffer<T>,
        y: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        check_len("dot: y length vs x", y, x.len())?;
        partials.check(slot, x.len())?;
        let args = [
            KernelArg::buffer(x),
            KernelArg::buffer(y),
            KernelArg::len("vector length", x.len())?,
            KernelArg::buffer(partials.buffer()),
            KernelArg::slot(slot)?,
        ];
        // SAFETY: dot_partials(const SCALAR* x, const SCALAR* y, uint n, SCALAR* partials,
        // uint slot); x and y hold n elements; slot < slots (checked) and the grid is
        // partials.groups(), so every group writes inside the buffer.
        unsafe { rt.launch::<T>(Kernel::DotPartials, partials.groups(), &args) }
    }
}
