//! Host implementation of [`HaloOps`].

use super::{exec, HostBackend, CHUNK};
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{
    check_gather, check_ghost, check_ghost_basis, check_ghost_dcgs2, check_ghost_dots,
    check_partials_finish, check_rank_sums,
};
use crate::backend::{Basis, GatherList, GhostBlock, HaloOps, Partials, Slot, SpmvDots};
use crate::error::Result;
use crate::scalar::Scalar;

impl HaloOps for HostBackend {
    fn halo_gather<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        check_gather(list, x, x_off, out)?;
        self.counters.launch();
        let (idx, x) = (list.idx.host()?, &x.host()?[x_off..]);
        let n = idx.len();
        let items: Vec<_> = out.host_mut()?[..n].chunks_mut(CHUNK).enumerate().collect();
        exec(n, items, |(c, out)| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = x[idx[c * CHUNK + k] as usize];
            }
        });
        Ok(())
    }

    fn halo_partials_finish<T: Scalar>(
        &self,
        partials: &Buffer<T>,
        in_off: usize,
        groups: usize,
        slots: usize,
        out: &mut Buffer<f64>,
        out_off: usize,
    ) -> Result<()> {
        check_partials_finish(partials, in_off, groups, slots, out, out_off)?;
        self.counters.launch();
        let data = &partials.host()?[in_off..in_off + groups * slots];
        let sums = crate::backend::partials::sum_slots(data, groups, slots);
        out.host_mut()?[out_off..out_off + slots].copy_from_slice(&sums.0);
        Ok(())
    }

    fn halo_rank_sums<T: Scalar>(
        &self,
        local: &Buffer<f64>,
        gathered: &Buffer<f64>,
        ranks: usize,
        me: usize,
        count: usize,
        sums: &mut Buffer<T>,
        out_off: usize,
        zero: bool,
    ) -> Result<()> {
        check_rank_sums(local, gathered, ranks, me, count, sums, out_off, zero)?;
        self.counters.launch();
        let (local, gathered, out) = (local.host()?, gathered.host()?, sums.host_mut()?);
        let stride = local.len();
        for (j, o) in out[out_off..out_off + count].iter_mut().enumerate() {
            let acc = (0..ranks).fold(0.0f64, |acc, r| {
                acc + if r == me {
                    local[j]
                } else {
                    gathered[r * stride + j]
                }
            });
            *o = T::from_f64(acc);
        }
        if zero {
            out[out_off + count] = T::zero();
        }
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
        let w = [
            dots.with[0].map(|(b, _)| b.host()).transpose()?,
            dots.with[1].map(|(b, _)| b.host()).transpose()?,
        ];
        let sums = add_with_corrections(ghost, xg.host()?, y.host_mut()?, w, partials.groups())?;
        add_corrections(partials, &slots, &sums)
    }

    fn halo_basis_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        prev_slot: Option<Slot>,
        self_slot: Option<Slot>,
    ) -> Result<()> {
        let slots = check_ghost_basis(ghost, xg, basis, i, partials, prev_slot, self_slot)?;
        if ghost.n_rows() == 0 {
            return Ok(());
        }
        self.counters.launch();
        let n = basis.n();
        let data = basis.data.host_mut()?;
        let (head, tail) = data.split_at_mut(i * n);
        let prev = &head[(i - 1) * n..];
        let w = [prev_slot.map(|_| prev), None];
        let sums = add_with_corrections(ghost, xg.host()?, &mut tail[..n], w, partials.groups())?;
        add_corrections(partials, &slots, &sums)
    }

    fn halo_dcgs2_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        check_ghost_dcgs2(ghost, xg, basis, ucol, pb)?;
        if ghost.n_rows() == 0 {
            return Ok(());
        }
        self.counters.launch();
        let (n, groups) = (basis.n(), pb.groups());
        let (rows, rp, ci, v) = (
            ghost.rows.host()?,
            ghost.row_ptr.host()?,
            ghost.col_idx.host()?,
            ghost.values.host()?,
        );
        let xg = xg.host()?;
        let data = basis.data.host_mut()?;
        let (head, tail) = data.split_at_mut((ucol + 1) * n);
        let w = &mut tail[..n];
        // Per slot j (column j + 1) and group: boundary rows in `groups` contiguous runs.
        let mut sums = vec![T::zero(); ucol * groups];
        for (i, &row) in rows.iter().enumerate() {
            let mut g = T::zero();
            for k in rp[i] as usize..rp[i + 1] as usize {
                g += v[k] * xg[ci[k] as usize];
            }
            let r = row as usize;
            let old = w[r];
            let now = old + g;
            w[r] = now;
            let change = now - old;
            let group = i * groups / rows.len();
            for j in 0..ucol {
                sums[j * groups + group] += change * head[(j + 1) * n + r];
            }
        }
        let buf = pb.buffer.host_mut()?;
        for (at, s) in sums.iter().enumerate() {
            buf[at] += *s;
        }
        Ok(())
    }
}

/// y += A_ghost xg on the boundary rows, and per group the changes of <y, y>, <y, w0>,
/// <y, w1>: boundary rows in `groups` contiguous runs, run g for partial g.
fn add_with_corrections<T: Scalar>(
    ghost: &GhostBlock<T>,
    xg: &[T],
    y: &mut [T],
    w: [Option<&[T]>; 2],
    groups: usize,
) -> Result<Vec<[T; 3]>> {
    let (rows, rp, ci, v) = (
        ghost.rows.host()?,
        ghost.row_ptr.host()?,
        ghost.col_idx.host()?,
        ghost.values.host()?,
    );
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
        for (k, wk) in w.iter().enumerate() {
            if let Some(wk) = wk {
                acc[k + 1] += change * wk[r];
            }
        }
    }
    Ok(sums)
}

/// Add the per-group corrections to the wanted slots (order yy, w0, w1).
fn add_corrections<T: Scalar>(
    partials: &mut Partials<T>,
    slots: &[Option<Slot>; 3],
    sums: &[[T; 3]],
) -> Result<()> {
    let groups = partials.groups();
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
