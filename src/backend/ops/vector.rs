//! Memory, BLAS-1 and reductions.

use crate::backend::buffer::Buffer;
use crate::backend::partials::{Partials, Slot, Sums};
use crate::backend::{BackendInfo, CounterSnapshot, MemoryUse};
use crate::error::Result;
use crate::scalar::Scalar;
use bytemuck::Pod;
use enum_dispatch::enum_dispatch;

/// Device memory, BLAS-1 vector kernels and the two-stage reductions.
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
    fn fill<T: Scalar>(&self, x: &mut Buffer<T>, value: T) -> Result<()>;
    /// Kernel `copy`: y = x.
    fn copy<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()>;
    /// Kernel `copy_from_f32`: y = x rounded to T (exact for T = f64), e.g. a factor set up in
    /// single precision for a double-precision solve.
    fn copy_from_f32<T: Scalar>(&self, x: &Buffer<f32>, y: &mut Buffer<T>) -> Result<()>;
    /// Kernel `copy_to_f32`: y = x rounded to single precision (a single-precision setup from
    /// a double-precision matrix already on the device).
    fn copy_to_f32<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<f32>) -> Result<()>;
    /// Kernel `copy_u32`: y = x for index arrays.
    fn copy_u32(&self, x: &Buffer<u32>, y: &mut Buffer<u32>) -> Result<()>;
    /// Kernel `axpby`: y = alpha x + beta y.
    fn axpby<T: Scalar>(&self, alpha: T, x: &Buffer<T>, beta: T, y: &mut Buffer<T>) -> Result<()>;
    /// Kernel `scale`: x = alpha x.
    fn scale<T: Scalar>(&self, alpha: T, x: &mut Buffer<T>) -> Result<()>;
    /// Kernel `dot_partials`: first stage of <x, y> into `slot`.
    fn dot_partials<T: Scalar>(
        &self,
        x: &Buffer<T>,
        y: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()>;

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
