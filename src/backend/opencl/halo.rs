//! OpenCL implementation of [`HaloOps`] (kernels in `kernels-cl/halo.cl`).

use super::launch::Arg;
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{check_gather, check_ghost, check_ghost_dots};
use crate::backend::{GatherList, GhostBlock, HaloOps, Partials, SpmvDots};
use crate::error::Result;
use crate::scalar::Scalar;

impl HaloOps for OpenClBackend {
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
        self.launch::<T>(
            "halo_gather",
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(&list.idx)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(out)?),
                Arg::uint(Self::len_u32(n)?),
            ],
        )
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
        self.launch::<T>(
            "halo_spmv_add",
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(&ghost.rows)?),
                Arg::Mem(self.mem(&ghost.row_ptr)?),
                Arg::Mem(self.mem(&ghost.col_idx)?),
                Arg::Mem(self.mem(&ghost.values)?),
                Arg::Mem(self.mem(xg)?),
                Arg::Mem(self.mem(y)?),
                Arg::uint(Self::len_u32(n)?),
            ],
        )
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
        let ym = self.mem(y)?;
        let partner = |k: usize| -> Result<_> {
            match dots.with[k] {
                Some((v, _)) => self.mem(v),
                None => Ok(ym),
            }
        };
        self.launch::<T>(
            "halo_spmv_add_dots",
            partials.groups(),
            &[
                Arg::Mem(self.mem(&ghost.rows)?),
                Arg::Mem(self.mem(&ghost.row_ptr)?),
                Arg::Mem(self.mem(&ghost.col_idx)?),
                Arg::Mem(self.mem(&ghost.values)?),
                Arg::Mem(self.mem(xg)?),
                Arg::Mem(ym),
                Arg::uint(Self::len_u32(ghost.n_rows())?),
                Arg::Mem(partner(0)?),
                Arg::Mem(partner(1)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Arg::int(Self::opt_slot(slots[0])?),
                Arg::int(Self::opt_slot(slots[1])?),
                Arg::int(Self::opt_slot(slots[2])?),
            ],
        )
    }
}
