//! OpenCL's own parts of [`KrylovOps`]: the products that go through the OpenCL SpMV's launch
//! plan (`basis_spmv_dots`, the fused DCGS2 product) and the coefficient transfer of
//! `multi_axpy`. Every other operation of the family is launched once for both runtimes
//! (`ops/krylov/launch.rs`).

use super::launch::Arg;
use super::spmv::{Dots, View};
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{BufferArg, GpuRuntime, KernelArg};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::ops::krylov::launch;
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{Basis, KrylovOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// A basis column index as a kernel `uint` (checked against the basis by the caller).
fn col(j: usize) -> Arg<'static> {
    Arg::uint(j as u32)
}

impl KrylovOps for OpenClBackend {
    fn basis_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        src: Option<&Buffer<T>>,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        prev_slot: Option<Slot>,
        self_slot: Option<Slot>,
    ) -> Result<()> {
        let n = checks::basis_spmv_dots(a, src, basis, i, partials, prev_slot, self_slot)?;
        let bm = self.mem(basis.buffer())?;
        let prev = View::at(bm, (i - 1) * n);
        let x = match src {
            Some(z) => View::at(self.mem(z)?, 0),
            None => prev,
        };
        let y = View::at(bm, i * n);
        let dots = Dots {
            yy: Self::opt_slot(self_slot)?,
            w0: (prev, Self::opt_slot(prev_slot)?),
            w1: (prev, -1),
        };
        let groups = if prev_slot.is_some() || self_slot.is_some() {
            partials.groups()
        } else {
            self.groups_for(n)
        };
        let pm = self.mem(partials.buffer())?;
        self.launch_spmv_dots(a, x, y, dots, pm, groups)
    }

    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        // The lock is held from the upload to the enqueue, so concurrent callers cannot
        // overwrite coefficients a queued kernel has not read yet (the queue is in order).
        let mut guard = self.coeffs.lock().unwrap_or_else(|p| p.into_inner());
        let cbuf = self.upload_coefficients(&mut guard, coeffs)?;
        // SAFETY: the coefficient buffer holds the cols.len() coefficients just written, in
        // queue order before the launch.
        unsafe {
            launch::launch_multi_axpy(
                &GpuRuntime(self),
                y,
                basis,
                cols,
                KernelArg::Buffer(BufferArg::OpenCl(cbuf)),
            )
        }
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        // CSR: any number of columns (in chunks). SELL: one pass of the group's teams (4
        // columns per team of 32), the sorted positions of a group's tile hold its rows, and
        // only when asked for (measured slower than the two kernels on NVIDIA OpenCL).
        a.plain_csr().is_some()
            || (ucol <= 4 * (self.wg / 32).max(1)
                && a.sell_rows_within_tiles(self.wg)
                && self.tuning().dcgs2_sell_fused_for(false))
    }

    fn gmres_dcgs2_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<bool> {
        if !self.fuses_dcgs2_spmv_dots(a, ucol) {
            return Ok(false);
        }
        let n = checks::gmres_dcgs2_spmv_dots(a, basis, ucol, pa, pb)?;
        let Some((row_ptr, col_idx, values)) = a.plain_csr() else {
            // SELL (fuses_dcgs2_spmv_dots: windows within the group's tiles).
            let (_, mut args) = self.matrix_args(a)?;
            args.extend([
                Arg::Mem(self.mem(basis.buffer())?),
                col(ucol),
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pb.buffer())?),
            ]);
            self.launch::<T>(Kernel::GmresDcgs2SpmvDotsSell, pa.groups(), &args)?;
            return Ok(true);
        };
        self.launch::<T>(
            Kernel::GmresDcgs2SpmvDots,
            pa.groups(),
            &[
                Arg::Mem(self.mem(row_ptr)?),
                Arg::Mem(self.mem(col_idx)?),
                Arg::Mem(self.mem(values)?),
                Arg::uint(self.csr_lanes(a.nnz(), n)),
                // early: the CUDA kernel's early matrix reads (ignored here).
                Arg::uint(0),
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(ucol),
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pb.buffer())?),
            ],
        )?;
        Ok(true)
    }
}
