//! Host implementation of [`SpmvOps`]: CSR fused with the first reduction stage; SELL and BSR
//! through a plain product followed by the same per-chunk partials.

use super::vector::{local_dot, slot_mut};
use super::{chunks, chunks_mut, exec, groups_for, HostBackend, CHUNK};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::matrix::{DeviceFormat, DeviceMatrix};
use crate::backend::ops::spmv::check_spmv;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{SpmvDots, SpmvOps};
use crate::error::Result;
use crate::scalar::Scalar;

/// y_r = sum_k values[k] x[col[k]] over rows `first_row ..`, one chunk.
#[inline]
fn csr_rows<T: Scalar>(rp: &[u32], ci: &[u32], v: &[T], x: &[T], first_row: usize, y: &mut [T]) {
    for (k, yr) in y.iter_mut().enumerate() {
        let r = first_row + k;
        let (a, b) = (rp[r] as usize, rp[r + 1] as usize);
        let mut acc = T::zero();
        for j in a..b {
            acc += v[j] * x[ci[j] as usize];
        }
        *yr = acc;
    }
}

impl HostBackend {
    /// Plain product for every format (no counting).
    pub(super) fn product_slices<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &[T],
        y: &mut [T],
    ) -> Result<()> {
        let n = y.len();
        match &a.format {
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                values,
                ..
            } => {
                let (rp, ci, v) = (row_ptr.host()?, col_idx.host()?, values.host()?);
                let items: Vec<_> = y.chunks_mut(CHUNK).enumerate().collect();
                exec(n, items, |(c, y)| csr_rows(rp, ci, v, x, c * CHUNK, y));
            }
            DeviceFormat::Sell {
                c,
                n_slices,
                slice_ptr,
                col_idx,
                values,
                row_perm,
                row_len,
                ..
            } => {
                let (sp, ci, v) = (slice_ptr.host()?, col_idx.host()?, values.host()?);
                let (perm, len) = (row_perm.host()?, row_len.host()?);
                let c = *c;
                let mut sorted = vec![T::zero(); n_slices * c];
                let items: Vec<_> = sorted.chunks_mut(c.max(1)).enumerate().collect();
                exec(n, items, |(s, out)| {
                    let base = sp[s] as usize;
                    for (l, o) in out.iter_mut().enumerate() {
                        let p = s * c + l;
                        let width = if p < len.len() { len[p] as usize } else { 0 };
                        let mut acc = T::zero();
                        for j in 0..width {
                            let k = base + j * c + l;
                            acc += v[k] * x[ci[k] as usize];
                        }
                        *o = acc;
                    }
                });
                for (p, &row) in perm.iter().enumerate() {
                    y[row as usize] = sorted[p];
                }
            }
            DeviceFormat::Bsr {
                block_size,
                row_ptr,
                col_idx,
                values,
            } => {
                let s = *block_size;
                let (rp, ci, v) = (row_ptr.host()?, col_idx.host()?, values.host()?);
                let items: Vec<_> = y.chunks_mut(s).enumerate().collect();
                exec(n, items, |(br, yb)| {
                    yb.fill(T::zero());
                    for b in rp[br] as usize..rp[br + 1] as usize {
                        let col0 = ci[b] as usize * s;
                        let blk = &v[b * s * s..(b + 1) * s * s];
                        for j in 0..s {
                            let xj = x[col0 + j];
                            for i in 0..s {
                                yb[i] += blk[j * s + i] * xj;
                            }
                        }
                    }
                });
            }
        }
        Ok(())
    }
}

impl SpmvOps for HostBackend {
    fn uses_device_layouts(&self) -> bool {
        false
    }

    fn spmv<T: Scalar>(&self, a: &DeviceMatrix<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        check_spmv(a, x, y)?;
        self.counters.launch();
        self.product_slices(a, x.host()?, y.host_mut()?)
    }

    fn spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        let n = crate::backend::ops::checks::spmv_dots(a, x, y, &dots, partials)?;
        self.counters.launch();
        let xs = x.host()?;
        let ys = y.host_mut()?;
        let g = partials.groups();
        // Per-chunk dots: [yy, with0, with1].
        let mut local = vec![[T::zero(); 3]; g];
        let w0 = match dots.with[0] {
            Some((v, _)) => Some(v.host()?),
            None => None,
        };
        let w1 = match dots.with[1] {
            Some((v, _)) => Some(v.host()?),
            None => None,
        };
        let want_yy = dots.yy.is_some();
        if let DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } = &a.format
        {
            let (rp, ci, v) = (row_ptr.host()?, col_idx.host()?, values.host()?);
            let items: Vec<_> = chunks_mut(ys, g)
                .zip(local.iter_mut())
                .enumerate()
                .collect();
            exec(n, items, |(c, (y, out))| {
                csr_rows(rp, ci, v, xs, c * CHUNK, y);
                let r = c * CHUNK..c * CHUNK + y.len();
                if want_yy {
                    out[0] = local_dot(y, y);
                }
                if let Some(w) = w0 {
                    out[1] = local_dot(y, &w[r.clone()]);
                }
                if let Some(w) = w1 {
                    out[2] = local_dot(y, &w[r]);
                }
            });
        } else {
            self.product_slices(a, xs, ys)?;
            let ys: &[T] = ys;
            let items: Vec<_> = chunks(ys, g).zip(local.iter_mut()).enumerate().collect();
            exec(n, items, |(c, (y, out))| {
                let r = c * CHUNK..c * CHUNK + y.len();
                if want_yy {
                    out[0] = local_dot(y, y);
                }
                if let Some(w) = w0 {
                    out[1] = local_dot(y, &w[r.clone()]);
                }
                if let Some(w) = w1 {
                    out[2] = local_dot(y, &w[r]);
                }
            });
        }
        let targets = [
            dots.yy,
            dots.with[0].map(|(_, s)| s),
            dots.with[1].map(|(_, s)| s),
        ];
        for (k, target) in targets.iter().enumerate() {
            if let Some(s) = target {
                let out = slot_mut(partials, *s)?;
                for (o, l) in out.iter_mut().zip(&local) {
                    *o = l[k];
                }
            }
        }
        Ok(())
    }

    fn residual<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        b: &Buffer<T>,
        r: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr: Option<Slot>,
    ) -> Result<()> {
        check_spmv(a, x, r)?;
        check_len("residual: b length vs matrix rows", b, a.n_rows())?;
        let n = a.n_rows();
        if let Some(s) = rr {
            partials.check(s, n)?;
        }
        self.counters.launch();
        self.product_slices(a, x.host()?, r.host_mut()?)?;
        let bs = b.host()?;
        let g = if rr.is_some() {
            partials.groups()
        } else {
            groups_for(n)
        };
        let mut local = vec![T::zero(); g];
        let items: Vec<_> = chunks_mut(r.host_mut()?, g)
            .zip(chunks(bs, g))
            .zip(local.iter_mut())
            .collect();
        exec(n, items, |((r, b), out)| {
            for (ri, &bi) in r.iter_mut().zip(b) {
                *ri = bi - *ri;
            }
            *out = local_dot(r, r);
        });
        if let Some(s) = rr {
            slot_mut(partials, s)?.copy_from_slice(&local);
        }
        Ok(())
    }
}
