//! CUDA implementation of [`HaloOps`] (kernels in `kernels-cu/halo.cu`).

use super::module::Kernel;
use super::{len_arg, opt_slot, CudaBackend};
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{check_gather, check_ghost, check_ghost_dots};
use crate::backend::{GatherList, GhostBlock, HaloOps, Partials, SpmvDots};
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

    fn halo_spmv_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        let slots = check_ghost_dots(ghost, xg, y, &dots, partials)?;
        if ghost.n_rows() == 0 {
            return Ok(()); // no row changes, no correction
        }
        let yp = self.ptr(y)?;
        let partner = |k: usize| match dots.with[k] {
            Some((v, _)) => self.ptr(v),
            None => Ok(yp),
        };
        let args = [
            self.ptr(&ghost.rows)?,
            self.ptr(&ghost.row_ptr)?,
            self.ptr(&ghost.col_idx)?,
            self.ptr(&ghost.values)?,
            self.ptr(xg)?,
            yp,
            len_arg(ghost.n_rows())?,
            partner(0)?,
            partner(1)?,
            self.ptr(partials.buffer())?,
            opt_slot(slots[0])?,
            opt_slot(slots[1])?,
            opt_slot(slots[2])?,
        ];
        // SAFETY: halo_spmv_add_dots(rows, row_ptr, col_idx, values, xg, y, uint n_rows, w0, w1,
        // partials, int slot_yy, int slot_w0, int slot_w1): the ghost block as in halo_spmv_add
        // (checked when built, lengths checked above), the partners hold n_local elements, the
        // slots are distinct and inside the partials buffer; the grid is its groups.
        unsafe { self.launch::<T>(Kernel::HaloSpmvAddDots, partials.groups(), &args) }
    }
}
