//! CUDA's own parts of [`KrylovOps`]: the products that go through the CUDA SpMV's launch
//! plan (`basis_spmv_dots`, the fused DCGS2 product) and the coefficient transfer of
//! `multi_axpy`. Every other operation of the family is launched once for both runtimes
//! (`ops/krylov/launch.rs`).

use super::module::Kernel;
use super::spmv::Operand;
use super::{index_arg, len_arg, Arg, CudaBackend};
use crate::backend::buffer::Buffer;
use crate::backend::launch::{BufferArg, GpuRuntime, KernelArg};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::ops::krylov::launch;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{Basis, KrylovOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// Element offset of basis column `j`.
fn col_off(j: usize, n: usize) -> u64 {
    (j as u64) * (n as u64)
}

impl KrylovOps for CudaBackend {
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
        let v = self.ptr(&basis.data)?;
        let prev = Operand {
            ptr: v,
            off: col_off(i - 1, n),
        };
        let x = match src {
            Some(z) => Operand {
                ptr: self.ptr(z)?,
                off: 0,
            },
            None => prev,
        };
        let y = Operand {
            ptr: v,
            off: col_off(i, n),
        };
        let w0 = if prev_slot.is_some() {
            prev
        } else {
            Operand::NONE
        };
        let pp = if prev_slot.is_some() || self_slot.is_some() {
            self.ptr(partials.buffer())?
        } else {
            Arg::Ptr(0)
        };
        // SAFETY: spmv_dots_<fmt> with x = z or column i-1, y = column i, w0 = column i-1 of
        // the basis (columns i-1 and i exist, the matrix is n x n: checked), so y never
        // overlaps what is read; <y, y> into self_slot and <y, v_{i-1}> into prev_slot,
        // distinct and inside the partials (checked); grid = groups when a slot is set.
        unsafe {
            self.launch_spmv_dots(
                a,
                x,
                y,
                [w0, Operand::NONE],
                pp,
                [self_slot, prev_slot, None],
                partials.groups(),
            )
        }
    }

    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        self.check_alive()?;
        if coeffs.is_empty() {
            // SAFETY: no column, so the kernel reads no coefficient (the basis stands in).
            return unsafe {
                launch::launch_multi_axpy(
                    &GpuRuntime(self),
                    y,
                    basis,
                    cols,
                    KernelArg::buffer(basis.buffer()),
                )
            };
        }
        self.with_coefficients(coeffs, |c| {
            // SAFETY: the coefficient buffer holds the cols.len() coefficients copied just
            // before on the same stream, and stays locked until the launch is enqueued.
            unsafe {
                launch::launch_multi_axpy(
                    &GpuRuntime(self),
                    y,
                    basis,
                    cols,
                    KernelArg::Buffer(BufferArg::Cuda(c)),
                )
            }
        })
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        // The kernels' warps take every column in one pass: 4 per warp. SELL: the sorted
        // positions of a block's tile hold its rows.
        let block = self.block as usize;
        ucol <= 4 * (block / 32)
            && (a.plain_csr().is_some()
                || (a.sell_rows_within_tiles(block) && self.tuning().dcgs2_sell_fused_for(true)))
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
            // SELL (fuses_dcgs2_spmv_dots: windows within the block's tiles).
            let (mut args, _, _) = super::spmv::matrix_args(self, a)?;
            args.extend([
                self.ptr(&basis.data)?,
                index_arg("column", ucol)?,
                self.ptr(pa.buffer())?,
                self.ptr(pb.buffer())?,
            ]);
            // SAFETY: gmres_dcgs2_spmv_dots_sell(SELL arguments of spmv_dots_sell up to
            // slice_col, basis, uint ucol, pa, pb): a is an n x n SELL matrix whose sorting
            // windows divide the block size, columns 1..=ucol + 1 exist, slots 0..ucol-1 of
            // pa and pb exist with the launch's group count, ucol <= the columns one pass of
            // the block's warps takes (checked).
            unsafe { self.launch::<T>(Kernel::GmresDcgs2SpmvDotsSell, pa.groups(), &args) }?;
            return Ok(true);
        };
        let args = [
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            Arg::U32(super::spmv::csr_lanes(self.tuning().csr_lanes, a.nnz(), n)),
            Arg::U32(super::spmv::early_bits(
                self.tuning(),
                a.n_rows,
                a.uploaded,
                false,
            )),
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", ucol)?,
            self.ptr(pa.buffer())?,
            self.ptr(pb.buffer())?,
        ];
        // SAFETY: gmres_dcgs2_spmv_dots(row_ptr, col_idx, values, uint k, uint early, basis, uint n,
        // uint ucol, pa, pb): a is an n x n CSR matrix without long rows, columns 1..=ucol + 1
        // exist (u = ucol is read, w = ucol + 1 written, never read as a column), slots
        // 0..ucol-1 of pa and pb exist and both partials have the launch's group count, ucol
        // <= the columns one pass of the block's warps takes (checked).
        unsafe { self.launch::<T>(Kernel::GmresDcgs2SpmvDots, pa.groups(), &args) }?;
        Ok(true)
    }
}
