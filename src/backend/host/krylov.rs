//! Host implementation of [`KrylovOps`]: every fused update in one pass over its vectors.

use super::vector::{local_dot, slot_mut};
use super::{chunks, chunks_mut, exec, two_slots_mut, HostBackend, CHUNK};
use crate::backend::buffer::Buffer;
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::partials::{sum_slot_f64, sum_slot_in_kernel, Partials, Slot};
use crate::backend::{Basis, KrylovOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// Split a basis into column slices.
fn columns<T>(data: &[T], n: usize) -> Vec<&[T]> {
    if n == 0 {
        return Vec::new();
    }
    data.chunks(n).collect()
}

impl KrylovOps for HostBackend {
    fn cg_update<T: Scalar>(
        &self,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
    ) -> Result<()> {
        let n = checks::cg_update(x, r, p, ap, partials, rr)?;
        self.counters.launch();
        let g = partials.groups();
        let out = slot_mut(partials, rr)?;
        let items: Vec<_> = chunks_mut(x.host_mut()?, g)
            .zip(chunks_mut(r.host_mut()?, g))
            .zip(chunks_mut(p.host_mut()?, g))
            .zip(chunks(ap.host()?, g))
            .zip(out.iter_mut())
            .collect();
        exec(n, items, |((((x, r), p), ap), out)| {
            let mut acc = T::zero();
            for i in 0..x.len() {
                x[i] += alpha * p[i];
                let ri = r[i] - alpha * ap[i];
                r[i] = ri;
                p[i] = ri + beta * p[i];
                acc += ri * ri;
            }
            *out = acc;
        });
        Ok(())
    }

    fn pcg_update<T: Scalar>(
        &self,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        z: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        q: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
        rz: Slot,
    ) -> Result<()> {
        let n = checks::pcg_update(x, r, z, p, ap, q, partials, rr, rz)?;
        self.counters.launch();
        let g = partials.groups();
        let (out_rr, out_rz) = two_slots_mut(partials.buffer.host_mut()?, g, rr.0, rz.0);
        let items: Vec<_> = chunks_mut(x.host_mut()?, g)
            .zip(chunks_mut(r.host_mut()?, g))
            .zip(chunks_mut(z.host_mut()?, g))
            .zip(chunks_mut(p.host_mut()?, g))
            .zip(chunks(ap.host()?, g).zip(chunks(q.host()?, g)))
            .zip(out_rr.iter_mut().zip(out_rz.iter_mut()))
            .collect();
        exec(n, items, |(((((x, r), z), p), (ap, q)), (o_rr, o_rz))| {
            let (mut acc_rr, mut acc_rz) = (T::zero(), T::zero());
            for i in 0..x.len() {
                x[i] += alpha * p[i];
                let ri = r[i] - alpha * ap[i];
                let zi = z[i] - alpha * q[i];
                r[i] = ri;
                z[i] = zi;
                p[i] = zi + beta * p[i];
                acc_rr += ri * ri;
                acc_rz += ri * zi;
            }
            *o_rr = acc_rr;
            *o_rz = acc_rz;
        });
        Ok(())
    }

    fn bicgstab_s_update<T: Scalar>(
        &self,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<()> {
        let n = checks::bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
        self.counters.launch();
        let g = partials.groups();
        let alpha = {
            let data = partials.buffer.host()?;
            crate::backend::partials::bicgstab_alpha(data, g, rr0, apr0)
        };
        let out = slot_mut(partials, ss)?;
        let items: Vec<_> = chunks(r.host()?, g)
            .zip(chunks(ap.host()?, g))
            .zip(chunks_mut(s.host_mut()?, g))
            .zip(out.iter_mut())
            .collect();
        exec(n, items, |(((r, ap), s), out)| {
            let mut acc = T::zero();
            for i in 0..r.len() {
                let si = r[i] - alpha * ap[i];
                s[i] = si;
                acc += si * si;
            }
            *out = acc;
        });
        Ok(())
    }

    fn bicgstab_update<T: Scalar>(
        &self,
        alpha: T,
        omega: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        s: &Buffer<T>,
        ap: &Buffer<T>,
        as_: &Buffer<T>,
        phat: Option<&Buffer<T>>,
        shat: Option<&Buffer<T>>,
        r0star: &Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        rr: Slot,
    ) -> Result<()> {
        let n =
            checks::bicgstab_update(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?;
        self.counters.launch();
        let g = partials.groups();
        let (o_rr0, o_rr) = two_slots_mut(partials.buffer.host_mut()?, g, rr0.0, rr.0);
        let phat = match phat {
            Some(v) => Some(v.host()?),
            None => None,
        };
        let shat = match shat {
            Some(v) => Some(v.host()?),
            None => None,
        };
        let items: Vec<_> = chunks_mut(x.host_mut()?, g)
            .zip(chunks_mut(r.host_mut()?, g))
            .zip(chunks_mut(p.host_mut()?, g))
            .zip(chunks(s.host()?, g).zip(chunks(ap.host()?, g)))
            .zip(chunks(as_.host()?, g).zip(chunks(r0star.host()?, g)))
            .zip(o_rr0.iter_mut().zip(o_rr.iter_mut()))
            .enumerate()
            .collect();
        exec(
            n,
            items,
            |(c, (((((x, r), p), (s, ap)), (as_, r0s)), (o_rr0, o_rr)))| {
                let off = c * CHUNK;
                let (mut acc0, mut acc1) = (T::zero(), T::zero());
                for i in 0..x.len() {
                    let ph = phat.map_or(p[i], |v| v[off + i]);
                    let sh = shat.map_or(s[i], |v| v[off + i]);
                    x[i] += alpha * ph + omega * sh;
                    let ri = s[i] - omega * as_[i];
                    r[i] = ri;
                    p[i] = ri + beta * (p[i] - omega * ap[i]);
                    acc0 += ri * r0s[i];
                    acc1 += ri * ri;
                }
                *o_rr0 = acc0;
                *o_rr = acc1;
            },
        );
        Ok(())
    }

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
        self.counters.launch();
        let g = partials.groups();
        let data = basis.data.host_mut()?;
        let (head, tail) = data.split_at_mut(i * n);
        let prev = &head[(i - 1) * n..];
        let vi = &mut tail[..n];
        let x = match src {
            Some(z) => z.host()?,
            None => prev,
        };
        self.product_slices(a, x, vi)?;
        let vi: &[T] = vi;
        if let Some(s) = prev_slot {
            let out = slot_mut(partials, s)?;
            let items: Vec<_> = chunks(prev, g)
                .zip(chunks(vi, g))
                .zip(out.iter_mut())
                .collect();
            exec(n, items, |((a, b), o)| *o = local_dot(a, b));
        }
        if let Some(s) = self_slot {
            let out = slot_mut(partials, s)?;
            let items: Vec<_> = chunks(vi, g).zip(out.iter_mut()).collect();
            exec(n, items, |(v, o)| *o = local_dot(v, v));
        }
        Ok(())
    }

    fn basis_dots<T: Scalar>(
        &self,
        basis: &Basis<T>,
        w: usize,
        cols: Range<usize>,
        partials: &mut Partials<T>,
        first_slot: Slot,
    ) -> Result<()> {
        let n = basis.n();
        let count = checks::basis_dots(basis, w, &cols, partials, first_slot)?;
        if count == 0 {
            return Ok(());
        }
        self.counters.launch();
        let g = partials.groups();
        let cols_data = columns(basis.data.host()?, n);
        let vw = cols_data[w];
        // One pass over v_w per chunk: all dots of the chunk together.
        let mut local = vec![T::zero(); g * count];
        let items: Vec<_> = local.chunks_mut(count).enumerate().collect();
        exec(n, items, |(c, out)| {
            let r = (c * CHUNK).min(n)..((c + 1) * CHUNK).min(n);
            for (k, o) in out.iter_mut().enumerate() {
                *o = local_dot(&cols_data[cols.start + k][r.clone()], &vw[r.clone()]);
            }
        });
        let data = partials.buffer.host_mut()?;
        for k in 0..count {
            for c in 0..g {
                data[(first_slot.0 + k) * g + c] = local[c * count + k];
            }
        }
        Ok(())
    }

    fn gmres_gram_schmidt<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        first_slot: Slot,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
    ) -> Result<()> {
        checks::gmres_gram_schmidt(basis, i, partials, first_slot, norm_slot, rmat, ld)?;
        let n = basis.n();
        self.counters.launch();
        let g = partials.groups();
        let coeffs: Vec<T> = {
            let data = partials.buffer.host()?;
            (1..i)
                .map(|j| sum_slot_in_kernel(data, g, Slot(first_slot.0 + j - 1)))
                .collect()
        };
        let rm = rmat.host_mut()?;
        for (j, &c) in coeffs.iter().enumerate() {
            rm[j + (i - 1) * ld] = c;
        }
        let data = basis.data.host_mut()?;
        let (head, tail) = data.split_at_mut(i * n);
        let prev = columns(head, n);
        let vi = &mut tail[..n];
        let out = slot_mut(partials, norm_slot)?;
        let items: Vec<_> = chunks_mut(vi, g).zip(out.iter_mut()).enumerate().collect();
        exec(n, items, |(c, (v, o))| {
            let off = c * CHUNK;
            for (j, &rji) in coeffs.iter().enumerate() {
                let vj = &prev[j + 1][off..off + v.len()];
                for (a, &b) in v.iter_mut().zip(vj) {
                    *a -= rji * b;
                }
            }
            *o = local_dot(v, v);
        });
        Ok(())
    }

    fn gmres_normalize<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        i: usize,
        partials: &Partials<T>,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
        xi_partials: &mut Partials<T>,
        xi_slot: Slot,
    ) -> Result<()> {
        checks::gmres_normalize(
            basis,
            i,
            partials,
            norm_slot,
            rmat,
            ld,
            xi_partials,
            xi_slot,
        )?;
        let n = basis.n();
        self.counters.launch();
        let nrm = sum_slot_in_kernel(partials.buffer.host()?, partials.groups(), norm_slot).sqrt();
        rmat.host_mut()?[(i - 1) + (i - 1) * ld] = nrm;
        let inv = if nrm > T::zero() {
            T::one() / nrm
        } else {
            T::one()
        };
        let g = xi_partials.groups();
        let data = basis.data.host_mut()?;
        let (head, tail) = data.split_at_mut(i * n);
        let v0 = &head[..n];
        let vi = &mut tail[..n];
        let out = slot_mut(xi_partials, xi_slot)?;
        let items: Vec<_> = chunks_mut(vi, g)
            .zip(chunks(v0, g))
            .zip(out.iter_mut())
            .collect();
        exec(n, items, |((v, v0), o)| {
            v.iter_mut().for_each(|a| *a *= inv);
            *o = local_dot(v0, v);
        });
        Ok(())
    }

    fn basis_axpy<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        dst: usize,
        src: usize,
        alpha: T,
    ) -> Result<()> {
        checks::basis_axpy(basis, dst, src)?;
        self.counters.launch();
        let n = basis.n();
        let data = basis.data.host_mut()?;
        let (d, s) = if dst < src {
            let (lo, hi) = data.split_at_mut(src * n);
            (&mut lo[dst * n..(dst + 1) * n], &hi[..n])
        } else {
            let (lo, hi) = data.split_at_mut(dst * n);
            (&mut hi[..n], &lo[src * n..(src + 1) * n])
        };
        let items: Vec<_> = d.chunks_mut(CHUNK).zip(s.chunks(CHUNK)).collect();
        exec(n, items, |(d, s)| {
            for (a, &b) in d.iter_mut().zip(s) {
                *a += alpha * b;
            }
        });
        Ok(())
    }

    fn basis_scale<T: Scalar>(&self, basis: &mut Basis<T>, col: usize, alpha: T) -> Result<()> {
        basis.check_col(col)?;
        self.counters.launch();
        let n = basis.n();
        let v = &mut basis.data.host_mut()?[col * n..(col + 1) * n];
        let items: Vec<_> = v.chunks_mut(CHUNK).collect();
        exec(n, items, |v| v.iter_mut().for_each(|a| *a *= alpha));
        Ok(())
    }

    fn basis_load<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        alpha: T,
    ) -> Result<()> {
        checks::basis_vector("basis_load: source length", basis, col, src)?;
        let n = basis.n();
        self.counters.launch();
        let v = &mut basis.data.host_mut()?[col * n..(col + 1) * n];
        for (a, &b) in v.iter_mut().zip(src.host()?) {
            *a = alpha * b;
        }
        Ok(())
    }

    fn basis_load_normalized<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        partials: &Partials<T>,
        slot: Slot,
        out: &mut Buffer<T>,
        out_off: usize,
    ) -> Result<()> {
        checks::basis_load_normalized(basis, col, src, partials, slot, out, out_off)?;
        let rho = crate::solver::cg_norm(sum_slot_f64(
            partials.buffer.host()?,
            partials.groups(),
            slot,
        ));
        out.host_mut()?[out_off] = T::from_f64(rho);
        self.basis_load(basis, col, src, T::from_f64(1.0 / rho))
    }

    fn basis_store<T: Scalar>(
        &self,
        basis: &Basis<T>,
        col: usize,
        dst: &mut Buffer<T>,
    ) -> Result<()> {
        checks::basis_vector("basis_store: destination length", basis, col, dst)?;
        let n = basis.n();
        self.counters.launch();
        dst.host_mut()?
            .copy_from_slice(&basis.data.host()?[col * n..(col + 1) * n]);
        Ok(())
    }

    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        let n = basis.n();
        self.counters.launch();
        let cols_data = columns(basis.data.host()?, n);
        let items: Vec<_> = y.host_mut()?.chunks_mut(CHUNK).enumerate().collect();
        exec(n, items, |(c, y)| {
            let off = c * CHUNK;
            for (k, &a) in coeffs.iter().enumerate() {
                let v = &cols_data[cols.start + k][off..off + y.len()];
                for (yi, &vi) in y.iter_mut().zip(v) {
                    *yi += a * vi;
                }
            }
        });
        Ok(())
    }

    fn multi_axpy_device<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &Buffer<T>,
    ) -> Result<()> {
        checks::multi_axpy_device(y, basis, &cols, coeffs)?;
        let k = cols.len();
        self.multi_axpy(y, basis, cols, &coeffs.host()?[..k])
    }

    fn gmres_dcgs2_last_sums<T: Scalar>(
        &self,
        pa: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_last_sums(pa, count, coef, coef_off)?;
        self.counters.launch();
        let (g, da) = (pa.groups(), pa.buffer.host()?);
        let out = coef.host_mut()?;
        for k in 0..count {
            out[coef_off + k] = sum_slot_in_kernel(da, g, Slot(k));
        }
        out[coef_off + 2 * count + 2] = sum_slot_in_kernel(da, g, Slot(count));
        Ok(())
    }

    fn basis_dots2<T: Scalar>(
        &self,
        basis: &Basis<T>,
        wa: usize,
        wb: usize,
        cols: Range<usize>,
        count_b: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        let count = checks::basis_dots2(basis, wa, wb, &cols, count_b, pa, pb)?;
        if count == 0 {
            return Ok(());
        }
        self.counters.launch();
        let n = basis.n();
        let g = pa.groups();
        let cols_data = columns(basis.data.host()?, n);
        let (va, vb) = (cols_data[wa], cols_data[wb]);
        // Per chunk: every column against both targets (the same sums as two basis_dots).
        let mut local = vec![T::zero(); g * 2 * count];
        let items: Vec<_> = local.chunks_mut(2 * count).enumerate().collect();
        exec(n, items, |(c, out)| {
            let r = (c * CHUNK).min(n)..((c + 1) * CHUNK).min(n);
            for k in 0..count {
                let q = &cols_data[cols.start + k][r.clone()];
                out[k] = local_dot(q, &va[r.clone()]);
                if k < count_b {
                    out[count + k] = local_dot(q, &vb[r.clone()]);
                }
            }
        });
        let da = pa.buffer.host_mut()?;
        for k in 0..count {
            for c in 0..g {
                da[k * g + c] = local[c * 2 * count + k];
            }
        }
        let db = pb.buffer.host_mut()?;
        for k in 0..count_b {
            for c in 0..g {
                db[k * g + c] = local[c * 2 * count + count + k];
            }
        }
        Ok(())
    }

    fn gmres_dcgs2_update<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off)?;
        // The launches of the GPUs (work-groups of 256): gmres_dcgs2_update_small, or
        // gmres_dcgs2_finish and gmres_dcgs2_update.
        self.counters.launch();
        if !self.tuning().dcgs2_small_for(pa.groups(), ucol - 1, 256) {
            self.counters.launch();
        }
        dcgs2_sums(ucol - 1, pa, pc, coef.host_mut()?, coef_off)?;
        dcgs2_apply(basis, ucol, coef.host_mut()?, coef_off)
    }

    fn gmres_dcgs2_sums<T: Scalar>(
        &self,
        basis: &Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off)?;
        self.counters.launch();
        dcgs2_sums(ucol - 1, pa, pc, coef.host_mut()?, coef_off)
    }

    fn gmres_dcgs2_apply<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_apply(basis, ucol, coef, coef_off)?;
        self.counters.launch();
        dcgs2_apply(basis, ucol, coef.host_mut()?, coef_off)
    }
}

/// The sums of a DCGS2 step as `gmres_dcgs2_finish` writes them: a_k at `out[coef_off + k]`,
/// c_k at `[coef_off + count + k]`, nu at `[coef_off + 2 count + 2]`, d at `[+ 3]`, each
/// summed as the kernels do.
fn dcgs2_sums<T: Scalar>(
    count: usize,
    pa: &Partials<T>,
    pc: &Partials<T>,
    out: &mut [T],
    coef_off: usize,
) -> Result<()> {
    let g = pa.groups();
    let (da, dc) = (pa.buffer.host()?, pc.buffer.host()?);
    for k in 0..count {
        out[coef_off + k] = sum_slot_in_kernel(da, g, Slot(k));
        out[coef_off + count + k] = sum_slot_in_kernel(dc, g, Slot(k));
    }
    out[coef_off + 2 * count + 2] = sum_slot_in_kernel(da, g, Slot(count));
    out[coef_off + 2 * count + 3] = sum_slot_in_kernel(dc, g, Slot(count));
    Ok(())
}

/// The update of a DCGS2 step from the sums in `coef` (as `gmres_dcgs2_update` does it on a
/// GPU): beta and g to `coef`, then u and w in one pass.
fn dcgs2_apply<T: Scalar>(
    basis: &mut Basis<T>,
    ucol: usize,
    coef: &mut [T],
    coef_off: usize,
) -> Result<()> {
    let n = basis.n();
    let count = ucol - 1;
    let a = coef[coef_off..coef_off + count].to_vec();
    let c = coef[coef_off + count..coef_off + 2 * count].to_vec();
    let (nu, d) = (
        coef[coef_off + 2 * count + 2],
        coef[coef_off + 2 * count + 3],
    );
    let (mut s_aa, mut s_ac) = (T::zero(), T::zero());
    for (&ak, &ck) in a.iter().zip(&c) {
        s_aa += ak * ak;
        s_ac += ak * ck;
    }
    let b2 = nu - s_aa;
    // NaN stays NaN (the solver reports it); a non-positive value is a breakdown.
    let beta = if b2 > T::zero() || !b2.is_finite() {
        b2.sqrt()
    } else {
        T::zero()
    };
    let gl = if beta > T::zero() {
        (d - s_ac) / beta
    } else {
        T::zero()
    };
    coef[coef_off + 2 * count] = beta;
    coef[coef_off + 2 * count + 1] = gl;
    if beta <= T::zero() {
        return Ok(());
    }
    let inv = T::one() / beta;
    let data = basis.data.host_mut()?;
    let (head, tail) = data.split_at_mut(ucol * n);
    let prev = columns(head, n);
    let (u, rest) = tail.split_at_mut(n);
    let w = &mut rest[..n];
    let items: Vec<_> = u
        .chunks_mut(CHUNK)
        .zip(w.chunks_mut(CHUNK))
        .enumerate()
        .collect();
    exec(n, items, |(ch, (u, w))| {
        let off = ch * CHUNK;
        // Column by column over the chunk (streaming), the same per-element order as the
        // kernel: subtract in k order, then scale.
        for k in 0..count {
            let q = &prev[k + 1][off..off + u.len()];
            let (ak, ck) = (a[k], c[k]);
            for ((ue, we), &qe) in u.iter_mut().zip(w.iter_mut()).zip(q) {
                *ue -= ak * qe;
                *we -= ck * qe;
            }
        }
        for (ue, we) in u.iter_mut().zip(w.iter_mut()) {
            *ue *= inv;
            *we = (*we - gl * *ue) * inv;
        }
    });
    Ok(())
}
