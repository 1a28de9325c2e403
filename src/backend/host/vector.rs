//! Host implementation of [`VectorOps`].

use super::{chunks, chunks_mut, exec, groups_for, HostBackend};
use crate::backend::buffer::{check_len, Buffer, Storage};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{CounterSnapshot, VectorOps};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use bytemuck::Pod;

impl HostBackend {
    /// y_i = f(x_i) for every element (one counted launch; in parallel chunks from
    /// `PARALLEL_MIN` elements), the copies' shared loop.
    fn map_into<S: Pod + Sync, D: Pod + Send>(
        &self,
        what: &str,
        x: &Buffer<S>,
        y: &mut Buffer<D>,
        f: impl Fn(S) -> D + Sync + Send,
    ) -> Result<()> {
        check_len(what, y, x.len())?;
        self.counters.launch();
        let n = x.len();
        let g = groups_for(n);
        let items: Vec<_> = chunks(x.host()?, g)
            .zip(chunks_mut(y.host_mut()?, g))
            .collect();
        exec(n, items, |(x, y)| {
            for (yi, &xi) in y.iter_mut().zip(x) {
                *yi = f(xi);
            }
        });
        Ok(())
    }
}

impl VectorOps for HostBackend {
    fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        self.counters.check_allocation("host", bytes)?;
        let mut v = host_vec::<T>(len)?;
        v.resize(len, T::zeroed());
        let ticket = self.counters.track(bytes);
        Ok(Buffer::from_storage(len, Storage::Host(v), Some(ticket)))
    }

    fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        self.counters
            .check_allocation("host", std::mem::size_of_val(data))?;
        let mut v = host_vec::<T>(data.len())?;
        v.extend_from_slice(data);
        self.counters.transfer();
        let ticket = self.counters.track(std::mem::size_of_val(data));
        Ok(Buffer::from_storage(
            data.len(),
            Storage::Host(v),
            Some(ticket),
        ))
    }

    fn write<T: Pod>(&self, dst: &mut Buffer<T>, data: &[T]) -> Result<()> {
        check_len("write: data length vs buffer", dst, data.len())?;
        self.counters.transfer();
        crate::memory::copy_in_parallel(dst.host_mut()?, data);
        Ok(())
    }

    fn read<T: Pod>(&self, src: &Buffer<T>, out: &mut [T]) -> Result<()> {
        check_len("read: output length vs buffer", src, out.len())?;
        self.counters.transfer();
        out.copy_from_slice(src.host()?);
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn fill<T: Scalar>(&self, x: &mut Buffer<T>, value: T) -> Result<()> {
        self.counters.launch();
        x.host_mut()?.fill(value);
        Ok(())
    }

    fn copy<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        self.map_into("copy: destination length", x, y, |v| v)
    }

    fn copy_from_f32<T: Scalar>(&self, x: &Buffer<f32>, y: &mut Buffer<T>) -> Result<()> {
        self.map_into("copy_from_f32: destination length", x, y, |v| {
            T::from_f64(f64::from(v))
        })
    }

    fn copy_to_f32<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<f32>) -> Result<()> {
        self.map_into("copy_to_f32: destination length", x, y, |v| {
            v.to_f64() as f32
        })
    }

    fn copy_u32(&self, x: &Buffer<u32>, y: &mut Buffer<u32>) -> Result<()> {
        self.map_into("copy_u32: destination length", x, y, |v| v)
    }

    fn axpby<T: Scalar>(&self, alpha: T, x: &Buffer<T>, beta: T, y: &mut Buffer<T>) -> Result<()> {
        check_len("axpby: y length vs x", y, x.len())?;
        self.counters.launch();
        let n = x.len();
        let g = groups_for(n);
        let items: Vec<_> = chunks(x.host()?, g)
            .zip(chunks_mut(y.host_mut()?, g))
            .collect();
        exec(n, items, |(x, y)| {
            for (yi, &xi) in y.iter_mut().zip(x) {
                *yi = alpha * xi + beta * *yi;
            }
        });
        Ok(())
    }

    fn scale<T: Scalar>(&self, alpha: T, x: &mut Buffer<T>) -> Result<()> {
        self.counters.launch();
        let n = x.len();
        let items: Vec<_> = chunks_mut(x.host_mut()?, groups_for(n)).collect();
        exec(n, items, |x| x.iter_mut().for_each(|v| *v *= alpha));
        Ok(())
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
        self.counters.launch();
        let n = x.len();
        let g = partials.groups();
        let out = slot_mut(partials, slot)?;
        let items: Vec<_> = chunks(x.host()?, g)
            .zip(chunks(y.host()?, g))
            .zip(out.iter_mut())
            .collect();
        exec(n, items, |((x, y), o)| *o = local_dot(x, y));
        Ok(())
    }

    fn reduction_groups(&self, n: usize) -> usize {
        groups_for(n)
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

/// An empty vector with room for `len` elements, or [`Error::OutOfMemory`] (never an abort).
fn host_vec<T: Pod>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|e| Error::OutOfMemory {
        device: "host".into(),
        bytes: len.saturating_mul(std::mem::size_of::<T>()),
        detail: e.to_string(),
    })?;
    Ok(v)
}

/// Sequential dot product of one chunk (the work-group's first stage).
#[inline]
pub(crate) fn local_dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    x.iter().zip(y).fold(T::zero(), |acc, (&a, &b)| acc + a * b)
}

/// The mutable slice of one slot.
pub(crate) fn slot_mut<T: Scalar>(partials: &mut Partials<T>, slot: Slot) -> Result<&mut [T]> {
    let g = partials.groups();
    Ok(&mut partials.buffer.host_mut()?[slot.0 * g..(slot.0 + 1) * g])
}

impl crate::backend::ops::FaultInjection for HostBackend {
    fn fail_allocation(&self, nth: Option<u64>) {
        self.counters.fail_allocation(nth);
    }
}
