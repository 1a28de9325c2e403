//! Host implementation of [`HaloOps`].

use super::{exec, HostBackend, CHUNK};
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{check_gather, check_ghost};
use crate::backend::{GatherList, GhostBlock, HaloOps};
use crate::error::Result;
use crate::scalar::Scalar;

impl HaloOps for HostBackend {
    fn halo_gather<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        check_gather(list, x, out)?;
        self.counters.launch();
        let (idx, x) = (list.idx.host()?, x.host()?);
        let n = idx.len();
        let items: Vec<_> = out.host_mut()?.chunks_mut(CHUNK).enumerate().collect();
        exec(n, items, |(c, out)| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = x[idx[c * CHUNK + k] as usize];
            }
        });
        Ok(())
    }

    fn halo_spmv_add<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        check_ghost(ghost, xg, y)?;
        self.counters.launch();
        let (rows, rp, ci, v) = (
            ghost.rows.host()?,
            ghost.row_ptr.host()?,
            ghost.col_idx.host()?,
            ghost.values.host()?,
        );
        let (xg, y) = (xg.host()?, y.host_mut()?);
        // Few rows (the boundary) scattered over y: sequential, in row order.
        for (i, &row) in rows.iter().enumerate() {
            let mut acc = T::zero();
            for k in rp[i] as usize..rp[i + 1] as usize {
                acc += v[k] * xg[ci[k] as usize];
            }
            y[row as usize] += acc;
        }
        Ok(())
    }
}
