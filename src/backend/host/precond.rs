//! Host implementation of [`PrecondOps`].

use super::vector::slot_mut;
use super::{chunks, chunks_mut, exec, groups_for, HostBackend, CHUNK};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::ops::precond::{check_block_diag_scale, check_level, check_sweep, check_trsv};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{BlockTriangular, PrecondOps, MAX_BLOCK_SIZE};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

impl PrecondOps for HostBackend {
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let n = d.len();
        check_len("diag_scale: x length", x, n)?;
        check_len("diag_scale: y length", y, n)?;
        self.counters.launch();
        let g = groups_for(n);
        let items: Vec<_> = chunks(d.host()?, g)
            .zip(chunks(x.host()?, g))
            .zip(chunks_mut(y.host_mut()?, g))
            .collect();
        exec(n, items, |((d, x), y)| {
            for i in 0..y.len() {
                y[i] = d[i] * x[i];
            }
        });
        Ok(())
    }

    fn diag_scale_dot<T: Scalar>(
        &self,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let n = d.len();
        check_len("diag_scale_dot: x length", x, n)?;
        check_len("diag_scale_dot: y length", y, n)?;
        partials.check(slot, n)?;
        self.counters.launch();
        let g = partials.groups();
        let out = slot_mut(partials, slot)?;
        let items: Vec<_> = chunks(d.host()?, g)
            .zip(chunks(x.host()?, g))
            .zip(chunks_mut(y.host_mut()?, g))
            .zip(out.iter_mut())
            .collect();
        exec(n, items, |(((d, x), y), o)| {
            let mut acc = T::zero();
            for i in 0..y.len() {
                let yi = d[i] * x[i];
                y[i] = yi;
                acc += x[i] * yi;
            }
            *o = acc;
        });
        Ok(())
    }

    fn block_diag_scale<T: Scalar>(
        &self,
        block_size: usize,
        inv_blocks: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        check_block_diag_scale(block_size, inv_blocks, x, y)?;
        self.counters.launch();
        let (s, n) = (block_size, x.len());
        let (inv, x) = (inv_blocks.host()?, x.host()?);
        let rows_per_item = (CHUNK / s).max(1);
        let items: Vec<_> = y
            .host_mut()?
            .chunks_mut(rows_per_item * s)
            .enumerate()
            .collect();
        exec(n, items, |(c, y)| {
            for (k, yb) in y.chunks_mut(s).enumerate() {
                let br = c * rows_per_item + k;
                let d = &inv[br * s * s..(br + 1) * s * s];
                let xb = &x[br * s..(br + 1) * s];
                for (i, yi) in yb.iter_mut().enumerate() {
                    let mut acc = T::zero();
                    for j in 0..s {
                        acc += d[j * s + i] * xb[j];
                    }
                    *yi = acc;
                }
            }
        });
        Ok(())
    }

    fn bsr_trsv_sweep<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        b: &Buffer<T>,
        x_old: Option<&Buffer<T>>,
        x_new: &mut Buffer<T>,
    ) -> Result<()> {
        check_sweep(t, b, x_old, x_new)?;
        self.counters.launch();
        let ht = HostTriangular::new(t)?;
        let (s, n) = (t.block_size, t.n());
        let b = b.host()?;
        let x_old = x_old.map(|x| x.host()).transpose()?;
        let rows_per_item = (CHUNK / s).max(1);
        let items: Vec<_> = x_new
            .host_mut()?
            .chunks_mut(rows_per_item * s)
            .enumerate()
            .collect();
        exec(n, items, |(c, out)| {
            for (k, ob) in out.chunks_mut(s).enumerate() {
                ht.row_solve(c * rows_per_item + k, b, x_old, ob);
            }
        });
        Ok(())
    }

    fn bsr_trsv_level<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        level_rows: &Buffer<u32>,
        level: Range<usize>,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
    ) -> Result<()> {
        check_trsv(t, b, x)?;
        check_level(level_rows, &level)?;
        self.counters.launch();
        let ht = HostTriangular::new(t)?;
        let s = t.block_size;
        let (rows, b, x) = (&level_rows.host()?[level], b.host()?, x.host_mut()?);
        let mut out = [T::zero(); MAX_BLOCK_SIZE];
        for &br in rows {
            let br = br as usize;
            if br >= t.n_block_rows {
                return Err(Error::param(
                    "level_rows",
                    format!("block row {br} outside 0..{}", t.n_block_rows),
                ));
            }
            ht.row_solve(br, b, Some(x), &mut out);
            x[br * s..(br + 1) * s].copy_from_slice(&out[..s]);
        }
        Ok(())
    }
}

/// The host arrays of a block triangular factor.
struct HostTriangular<'a, T> {
    s: usize,
    row_ptr: &'a [u32],
    col_idx: &'a [u32],
    values: &'a [T],
    inv_diag: Option<&'a [T]>,
}

impl<'a, T: Scalar> HostTriangular<'a, T> {
    fn new(t: &'a BlockTriangular<T>) -> Result<Self> {
        Ok(Self {
            s: t.block_size,
            row_ptr: t.row_ptr.host()?,
            col_idx: t.col_idx.host()?,
            values: t.values.host()?,
            inv_diag: t.inv_diag.as_ref().map(|d| d.host()).transpose()?,
        })
    }

    /// x_I = D_I^-1 (b_I - sum_J T_IJ x_J) for block row `br` (the order of `trsv.cl`);
    /// `x = None` means x = 0.
    fn row_solve(&self, br: usize, b: &[T], x: Option<&[T]>, out: &mut [T]) {
        let s = self.s;
        let mut t = [T::zero(); MAX_BLOCK_SIZE];
        t[..s].copy_from_slice(&b[br * s..(br + 1) * s]);
        if let Some(x) = x {
            for k in self.row_ptr[br] as usize..self.row_ptr[br + 1] as usize {
                let c0 = self.col_idx[k] as usize * s;
                let blk = &self.values[k * s * s..(k + 1) * s * s];
                for j in 0..s {
                    let xj = x[c0 + j];
                    for i in 0..s {
                        t[i] -= blk[j * s + i] * xj;
                    }
                }
            }
        }
        match self.inv_diag {
            None => out[..s].copy_from_slice(&t[..s]),
            Some(d) => {
                let d = &d[br * s * s..(br + 1) * s * s];
                for (i, o) in out[..s].iter_mut().enumerate() {
                    let mut acc = T::zero();
                    for j in 0..s {
                        acc += d[j * s + i] * t[j];
                    }
                    *o = acc;
                }
            }
        }
    }
}
