//! OpenCL implementation of [`HaloOps`] (kernels in `kernels-cl/halo.cl`).

use super::launch::Arg;
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{check_gather, check_ghost};
use crate::backend::{GatherList, GhostBlock, HaloOps};
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
}
