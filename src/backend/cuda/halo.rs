//! CUDA implementation of [`HaloOps`] (kernels in `kernels-cu/halo.cu`).

use super::module::Kernel;
use super::{len_arg, CudaBackend};
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{check_gather, check_ghost};
use crate::backend::{GatherList, GhostBlock, HaloOps};
use crate::error::Result;
use crate::scalar::Scalar;

impl HaloOps for CudaBackend {
    fn halo_gather<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        check_gather(list, x, out)?;
        let n = list.len();
        if n == 0 {
            return Ok(());
        }
        let args = [
            self.ptr(&list.idx)?,
            self.ptr(x)?,
            self.ptr(out)?,
            len_arg(n)?,
        ];
        // SAFETY: halo_gather(const uint* idx, const SCALAR* x, SCALAR* out, uint n): idx and
        // out hold n elements, every idx below x's length (checked when the list was built).
        unsafe { self.launch::<T>(Kernel::HaloGather, self.grid(n), &args) }
    }

    fn halo_spmv_add<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        check_ghost(ghost, xg, y)?;
        let n = ghost.n_rows();
        if n == 0 {
            return Ok(());
        }
        let args = [
            self.ptr(&ghost.rows)?,
            self.ptr(&ghost.row_ptr)?,
            self.ptr(&ghost.col_idx)?,
            self.ptr(&ghost.values)?,
            self.ptr(xg)?,
            self.ptr(y)?,
            len_arg(n)?,
        ];
        // SAFETY: halo_spmv_add(rows, row_ptr, col_idx, values, xg, y, uint n_rows): rows are
        // distinct and below y's length, row_ptr monotone up to the entry count, columns below
        // xg's length (all checked when the block was built; lengths checked above).
        unsafe { self.launch::<T>(Kernel::HaloSpmvAdd, self.grid(n), &args) }
    }
}
