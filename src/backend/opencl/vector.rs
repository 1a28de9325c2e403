//! OpenCL implementation of [`VectorOps`]: memory, BLAS-1 kernels of `kernels/vector.kc`.

use super::launch::Arg;
use super::OpenClBackend;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{CounterSnapshot, VectorOps};
use crate::error::Result;
use crate::scalar::Scalar;
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
        super::cl::finish(&self.queue).map_err(|e| self.record(e))?;
        self.queue_idle();
        Ok(())
    }

    fn fill<T: Scalar>(&self, x: &mut Buffer<T>, value: T) -> Result<()> {
        let n = Self::len_u32(x.len())?;
        let xm = self.mem(x)?;
        self.launch::<T>(
            Kernel::Fill,
            self.elementwise_groups(x.len()),
            &[Arg::Mem(xm), Arg::uint(n), Arg::scalar(value)],
        )
    }

    fn copy<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        check_len("copy: destination length", y, x.len())?;
        let n = Self::len_u32(x.len())?;
        let (xm, ym) = (self.mem(x)?, self.mem(y)?);
        self.launch::<T>(
            Kernel::Copy,
            self.elementwise_groups(x.len()),
            &[Arg::Mem(xm), Arg::Mem(ym), Arg::uint(n)],
        )
    }

    fn copy_from_f32<T: Scalar>(&self, x: &Buffer<f32>, y: &mut Buffer<T>) -> Result<()> {
        check_len("copy_from_f32: destination length", y, x.len())?;
        let n = Self::len_u32(x.len())?;
        let (xm, ym) = (self.mem(x)?, self.mem(y)?);
        self.launch::<T>(
            Kernel::CopyFromF32,
            self.elementwise_groups(x.len()),
            &[Arg::Mem(xm), Arg::Mem(ym), Arg::uint(n)],
        )
    }

    fn copy_to_f32<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<f32>) -> Result<()> {
        check_len("copy_to_f32: destination length", y, x.len())?;
        let n = Self::len_u32(x.len())?;
        let (xm, ym) = (self.mem(x)?, self.mem(y)?);
        self.launch::<T>(
            Kernel::CopyToF32,
            self.elementwise_groups(x.len()),
            &[Arg::Mem(xm), Arg::Mem(ym), Arg::uint(n)],
        )
    }

    fn copy_u32(&self, x: &Buffer<u32>, y: &mut Buffer<u32>) -> Result<()> {
        check_len("copy_u32: destination length", y, x.len())?;
        let n = Self::len_u32(x.len())?;
        let (xm, ym) = (self.mem(x)?, self.mem(y)?);
        self.launch::<f32>(
            Kernel::CopyU32,
            self.elementwise_groups(x.len()),
            &[Arg::Mem(xm), Arg::Mem(ym), Arg::uint(n)],
        )
    }

    fn axpby<T: Scalar>(&self, alpha: T, x: &Buffer<T>, beta: T, y: &mut Buffer<T>) -> Result<()> {
        check_len("axpby: y length vs x", y, x.len())?;
        let n = Self::len_u32(x.len())?;
        let (xm, ym) = (self.mem(x)?, self.mem(y)?);
        self.launch::<T>(
            Kernel::Axpby,
            self.elementwise_groups(x.len()),
            &[
                Arg::scalar(alpha),
                Arg::Mem(xm),
                Arg::scalar(beta),
                Arg::Mem(ym),
                Arg::uint(n),
            ],
        )
    }

    fn scale<T: Scalar>(&self, alpha: T, x: &mut Buffer<T>) -> Result<()> {
        let n = Self::len_u32(x.len())?;
        let xm = self.mem(x)?;
        self.launch::<T>(
            Kernel::Scale,
            self.elementwise_groups(x.len()),
            &[Arg::scalar(alpha), Arg::Mem(xm), Arg::uint(n)],
        )
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
        let n = Self::len_u32(x.len())?;
        let (xm, ym, pm) = (self.mem(x)?, self.mem(y)?, self.mem(partials.buffer())?);
        self.launch::<T>(
            Kernel::DotPartials,
            partials.groups(),
            &[
                Arg::Mem(xm),
                Arg::Mem(ym),
                Arg::uint(n),
                Arg::Mem(pm),
                Self::slot_arg(slot)?,
            ],
        )
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

    fn inject_device_fault(&self) -> bool {
        self.record(crate::Error::DeviceFault {
            backend: super::cl::BACKEND.into(),
            message: "injected device fault (testing hook)".into(),
        });
        true
    }
}
