//! OpenCL implementation of [`VectorOps`]: memory and transfers. The BLAS-1 kernels
//! (`kernels/vector.kc`) are launched once for both runtimes by the trait's default bodies
//! (`ops/vector.rs`).

use super::OpenClBackend;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::{CounterSnapshot, VectorOps};
use crate::error::Result;
use bytemuck::Pod;

impl VectorOps for OpenClBackend {
    fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.alloc_zeroed(len)
    }

    fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        let raw = self.create_raw::<T>(data.len())?;
        self.counters.transfer();
        if let Err(e) = self.write_raw(&raw, data) {
            raw.forget_pool();
            return Err(e);
        }
        if !raw.materialized {
            self.resolve_address_early(&raw)?;
        }
        let ticket = self.counters.track(raw.bytes);
        Ok(Buffer::from_storage(
            data.len(),
            crate::backend::buffer::Storage::OpenCl(raw),
            Some(ticket),
        ))
    }

    fn write<T: Pod>(&self, dst: &mut Buffer<T>, data: &[T]) -> Result<()> {
        check_len("write: data length vs buffer", dst, data.len())?;
        self.check_alive()?;
        let raw = self.mem(dst)?;
        self.counters.transfer();
        self.write_raw(raw, data)
    }

    fn read<T: Pod>(&self, src: &Buffer<T>, out: &mut [T]) -> Result<()> {
        check_len("read: output length vs buffer", src, out.len())?;
        self.check_alive()?;
        let raw = self.mem(src)?;
        self.counters.transfer();
        self.read_raw(raw, out)
    }

    fn synchronize(&self) -> Result<()> {
        self.check_alive()?;
        let mark = self.pool.mark();
        super::cl::finish(&self.queue).map_err(|e| self.record(e))?;
        self.queue_idle(mark);
        Ok(())
    }

    fn reduction_groups(&self, n: usize) -> usize {
        self.groups_for(n)
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

impl crate::backend::ops::FaultInjection for OpenClBackend {
    fn fail_allocation(&self, nth: Option<u64>) {
        self.counters.fail_allocation(nth);
    }

    /// This backend only: the context (shared with the process's other backends on the
    /// device) is not really broken.
    fn inject_device_fault(&self) -> bool {
        self.fatal.store(true, std::sync::atomic::Ordering::Relaxed);
        true
    }
}
