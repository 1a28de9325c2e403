//! Host implementation of [`HaloOps`].

use super::{exec, HostBackend, CHUNK};
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{check_gather, check_ghost, check_ghost_dots};
use crate::backend::{GatherList, GhostBlock, HaloOps, Partials, SpmvDots};
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
        self.counters.launch();
        let (rows, rp, ci, v) = (
            ghost.rows.host()?,
            ghost.row_ptr.host()?,
            ghost.col_idx.host()?,
            ghost.values.host()?,
        );
        let w = [
            dots.with[0].map(|(b, _)| b.host()).transpose()?,
            dots.with[1].map(|(b, _)| b.host()).transpose()?,
        ];
        let (xg, y) = (xg.host()?, y.host_mut()?);
        // Boundary rows in `groups` contiguous runs, run g corrects partial g of each slot.
        let groups = partials.groups();
        let mut sums = vec![[T::zero(); 3]; groups];
        for (i, &row) in rows.iter().enumerate() {
            let mut g = T::zero();
            for k in rp[i] as usize..rp[i + 1] as usize {
                g += v[k] * xg[ci[k] as usize];
            }
            let r = row as usize;
            let old = y[r];
            let now = old + g;
            y[r] = now;
            let change = now - old;
            let acc = &mut sums[i * groups / rows.len()];
            acc[0] += change * (now + old);
            for k in 0..2 {
                if let Some(w) = w[k] {
                    acc[k + 1] += change * w[r];
                }
            }
        }
        let buf = partials.buffer.host_mut()?;
        for (k, slot) in slots.iter().enumerate() {
            if let Some(s) = slot {
                for (g, acc) in sums.iter().enumerate() {
                    buf[s.0 * groups + g] += acc[k];
                }
            }
        }
        Ok(())
    }
}
