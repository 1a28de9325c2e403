//! Host implementation of [`PrecondOps`].

use super::bilu;
use super::ip_assemble;
use super::two_slots_mut;
use super::vector::slot_mut;
use super::{chunks, chunks_mut, exec, groups_for, HostBackend, CHUNK};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::ops::bilu::{check_bilu0_scatter, check_bilu0_sweep};
use crate::backend::ops::fsai::{
    check_afsai_compact, check_afsai_grow, check_afsai_place, check_fsai, check_fsai_transpose,
};
use crate::backend::ops::ip::{
    check_ip_pcg_update, check_ip_quad, check_ip_stencil, check_ip_stencil_check,
};
use crate::backend::ops::ip_assemble::check_ip_assemble;
use crate::backend::ops::isai::check_isai;
use crate::backend::ops::spmv::check_csr_update;
use crate::backend::ops::trsv::{check_block_diag_scale, check_level, check_sweep, check_trsv};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{
    AfsaiGrowKernel, AfsaiGrowth, BiluParts, BlockTriangular, CsrUpdate, DeviceFormat,
    DeviceMatrix, FsaiPattern, InversePattern, IpStencil, PcgStepVectors, PrecondOps,
    StencilCoefficients, MAX_BLOCK_SIZE,
};
use crate::error::{Error, Result};
use crate::precond::flat_rows::split_by_lengths;
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::ops::Range;

impl PrecondOps for HostBackend {
    fn csr_update<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
        scratch: &mut Buffer<T>,
    ) -> Result<()> {
        check_csr_update(a, x, update, out)?;
        let n = a.n_rows();
        self.counters.launch();
        let g = groups_for(n);
        match update {
            CsrUpdate::Sweep { b, s } => {
                // out = v, then out = x + s (b - v).
                self.product_slices(a, x.host()?, out.host_mut()?)?;
                let items: Vec<_> = chunks_mut(out.host_mut()?, g)
                    .zip(chunks(x.host()?, g))
                    .zip(chunks(b.host()?, g).zip(chunks(s.host()?, g)))
                    .collect();
                exec(n, items, |((o, x), (b, s))| {
                    for i in 0..o.len() {
                        o[i] = x[i] + s[i] * (b[i] - o[i]);
                    }
                });
            }
            CsrUpdate::Add { base: Some(base) } => {
                self.product_slices(a, x.host()?, out.host_mut()?)?;
                let items: Vec<_> = chunks_mut(out.host_mut()?, g)
                    .zip(chunks(base.host()?, g))
                    .collect();
                exec(n, items, |(o, base)| {
                    for i in 0..o.len() {
                        o[i] = base[i] + o[i];
                    }
                });
            }
            CsrUpdate::Add { base: None } => {
                check_len("update: scratch length vs matrix rows", scratch, n)?;
                self.product_slices(a, x.host()?, scratch.host_mut()?)?;
                let items: Vec<_> = chunks_mut(out.host_mut()?, g)
                    .zip(chunks(scratch.host()?, g))
                    .collect();
                exec(n, items, |(o, v)| {
                    for i in 0..o.len() {
                        o[i] += v[i];
                    }
                });
            }
        }
        Ok(())
    }

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

    fn bilu0_scatter<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        diag: &mut Buffer<T>,
    ) -> Result<()> {
        let (a_rp, a_ci, a_v) = check_bilu0_scatter(a, l, u, diag)?;
        self.counters.launch();
        let lp = bilu::Pattern {
            row_ptr: l.row_ptr.host()?,
            col_idx: l.col_idx.host()?,
        };
        let up = bilu::Pattern {
            row_ptr: u.row_ptr.host()?,
            col_idx: u.col_idx.host()?,
        };
        bilu::scatter(
            l.block_size,
            (a_rp.host()?, a_ci.host()?, a_v.host()?),
            lp,
            up,
            l.values.host_mut()?,
            u.values.host_mut()?,
            diag.host_mut()?,
        );
        Ok(())
    }

    fn bilu0_sweep<T: Scalar>(
        &self,
        a: &BiluParts<'_, T>,
        old: Option<&BiluParts<'_, T>>,
        report: bool,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        bad_row: &mut Buffer<u32>,
    ) -> Result<()> {
        check_bilu0_sweep(a, old, l, u, bad_row)?;
        self.counters.launch();
        let inputs = bilu::SweepInputs {
            s: l.block_size,
            l: bilu::Pattern {
                row_ptr: l.row_ptr.host()?,
                col_idx: l.col_idx.host()?,
            },
            u: bilu::Pattern {
                row_ptr: u.row_ptr.host()?,
                col_idx: u.col_idx.host()?,
            },
            a: host_parts(a)?,
            old: old.map(host_parts).transpose()?,
        };
        let inv_new = u
            .inv_diag
            .as_mut()
            .ok_or_else(|| Error::param("bilu0", "U without a diagonal"))?;
        let bad = bilu::sweep(
            &inputs,
            report,
            l.values.host_mut()?,
            u.values.host_mut()?,
            inv_new.host_mut()?,
        );
        if let Some(bi) = bad {
            let flag = &mut bad_row.host_mut()?[0];
            *flag = (*flag).min(bi as u32);
        }
        Ok(())
    }

    fn ip_domain_check<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let (row_ptr, col_idx, values, n) = check_ip_assemble(a, None, partials, slot)?;
        self.counters.launch();
        let (rp, ci, va) = (row_ptr.host()?, col_idx.host()?, values.host()?);
        let out = slot_mut(partials, slot)?;
        let items: Vec<_> = out.iter_mut().enumerate().collect();
        exec(n, items, |(c, o)| {
            let rows = c * CHUNK..((c + 1) * CHUNK).min(n);
            *o = T::from_f64(
                rows.filter(|&i| !ip_assemble::row_in_domain(i, rp, ci, va))
                    .count() as f64,
            );
        });
        Ok(())
    }

    fn ip_assemble<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        scaled: bool,
        m_values: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let (row_ptr, col_idx, values, n) = check_ip_assemble(a, Some(m_values), partials, slot)?;
        self.counters.launch();
        let (rp, ci, va) = (row_ptr.host()?, col_idx.host()?, values.host()?);
        let out = slot_mut(partials, slot)?;
        // Each group's rows own the entries rp[first row] .. rp[last row + 1] of M.
        let groups: Vec<Range<usize>> = (0..out.len())
            .map(|c| (c * CHUNK).min(n)..((c + 1) * CHUNK).min(n))
            .collect();
        let lengths = groups.iter().map(|r| (rp[r.end] - rp[r.start]) as usize);
        let pieces: Vec<_> = groups
            .iter()
            .cloned()
            .zip(split_by_lengths(m_values.host_mut()?, lengths))
            .collect();
        let items: Vec<_> = out.iter_mut().zip(pieces).collect();
        exec(n, items, |(o, (rows, m))| {
            let base = rp[rows.start] as usize;
            let mut bad = 0usize;
            for i in rows {
                let entries = rp[i] as usize..rp[i + 1] as usize;
                let row = &mut m[entries.start - base..entries.end - base];
                if !ip_assemble::row(i, rp, ci, va, scaled, row) {
                    bad += 1;
                }
            }
            *o = T::from_f64(bad as f64);
        });
        Ok(())
    }

    fn isai_solve<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        upper: bool,
        pattern: &InversePattern,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        check_isai(t, pattern, out)?;
        self.counters.launch();
        let ht = HostTriangular::new(t)?;
        let s = t.block_size;
        let (col_ptr, row_idx) = (pattern.col_ptr.host()?, pattern.row_idx.host()?);
        let dest = pattern.dest.host()?;
        // The columns in CSC order into one buffer, in chunks of columns (each chunk one
        // contiguous slice) solved in parallel, then scattered by `dest`.
        let bb = s * s;
        let n_cols = pattern.n_block_cols;
        let mut csc = vec![T::zero(); col_ptr[n_cols] as usize * bb];
        let chunks = chunks_by_pointers(&mut csc, col_ptr, 0..n_cols, ISAI_HOST_CHUNK, bb);
        let solve = |(cols, out): (std::ops::Range<usize>, &mut [T])| {
            let base = col_ptr[cols.start] as usize;
            for j in cols {
                let (cb, ce) = (col_ptr[j] as usize, col_ptr[j + 1] as usize);
                let col = &mut out[(cb - base) * bb..(ce - base) * bb];
                for c in 0..s {
                    ht.isai_column(j, c, upper, &row_idx[cb..ce], col);
                }
            }
        };
        if pattern.n_blocks() * s >= super::PARALLEL_MIN {
            chunks.into_par_iter().for_each(solve);
        } else {
            chunks.into_iter().for_each(solve);
        }
        let out = out.host_mut()?;
        for (blk, &d) in csc.chunks(bb).zip(dest) {
            let d = d as usize;
            out[d * bb..(d + 1) * bb].copy_from_slice(blk);
        }
        Ok(())
    }

    fn fsai_rows<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        pattern: &FsaiPattern,
        batch: usize,
        scratch: &mut Buffer<T>,
        g_values: &mut Buffer<T>,
        gt_values: &mut Buffer<T>,
    ) -> Result<()> {
        let (begin, end) = check_fsai(a, pattern, batch, scratch, g_values, gt_values)?;
        self.counters.launch();
        let DeviceFormat::Csr {
            row_ptr: arp,
            col_idx: aci,
            values: av,
            ..
        } = a.format()
        else {
            return Err(Error::param("format", "fsai_rows needs A in CSR"));
        };
        let (arp, aci, av) = (arp.host()?, aci.host()?, av.host()?);
        let (grp, gci, gtp) = (
            pattern.row_ptr.host()?,
            pattern.col_idx.host()?,
            pattern.gt_pos.host()?,
        );
        // G's rows of the batch in place, in chunks of rows (each chunk's rows are one
        // contiguous slice of G's values) with one dense scratch per chunk; then G^T's copies.
        let (g, gt) = (g_values.host_mut()?, gt_values.host_mut()?);
        let (first, last) = (grp[begin] as usize, grp[end] as usize);
        let chunks = chunks_by_pointers(&mut g[first..last], grp, begin..end, FSAI_HOST_CHUNK, 1);
        let chunk = |(rows, out): (std::ops::Range<usize>, &mut [T])| {
            let mut mat = Vec::new();
            let base = grp[rows.start] as usize;
            for i in rows {
                let (b, e) = (grp[i] as usize, grp[i + 1] as usize);
                fsai_row(
                    arp,
                    aci,
                    av,
                    &gci[b..e],
                    &mut mat,
                    &mut out[b - base..e - base],
                );
            }
        };
        if chunks.len() > 1 {
            chunks.into_par_iter().for_each(chunk);
        } else {
            chunks.into_iter().for_each(chunk);
        }
        for (v, &q) in g[first..last].iter().zip(&gtp[first..last]) {
            gt[q as usize] = *v;
        }
        Ok(())
    }

    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, _mean_row_len: f64) -> AfsaiGrowKernel {
        // The host grows each row in its own vectors whichever kernel is named: the one that
        // needs no device scratch where it fits.
        if AfsaiGrowKernel::Team.fits(growth) {
            AfsaiGrowKernel::Team
        } else {
            AfsaiGrowKernel::Row
        }
    }

    fn afsai_grow<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        growth: AfsaiGrowth,
        kernel: AfsaiGrowKernel,
        rows: Range<usize>,
        scratch: &mut Buffer<T>,
        iscratch: &mut Buffer<u32>,
        out_cols: &mut Buffer<u32>,
        out_len: &mut Buffer<u32>,
    ) -> Result<()> {
        check_afsai_grow(
            a, &growth, kernel, &rows, scratch, iscratch, out_cols, out_len,
        )?;
        self.counters.launch();
        let DeviceFormat::Csr {
            row_ptr: arp,
            col_idx: aci,
            values: av,
            ..
        } = a.format()
        else {
            return Err(Error::param("format", "afsai_grow needs A in CSR"));
        };
        let (arp, aci, av) = (arp.host()?, aci.host()?, av.host()?);
        // The host keeps each row's scratch in its own vectors (the device layout is only
        // needed for coalescing); the result is the same pattern.
        let grown: Vec<Option<Vec<u32>>> = rows
            .clone()
            .into_par_iter()
            .map(|i| crate::precond::fsai::growth::afsai_row(arp, aci, av, i, &growth))
            .collect();
        let cap = growth.cap();
        let (cols, lens) = (out_cols.host_mut()?, out_len.host_mut()?);
        for (t, p) in grown.into_iter().enumerate() {
            match p {
                Some(p) => {
                    lens[t] = p.len() as u32;
                    cols[t * cap..t * cap + p.len()].copy_from_slice(&p);
                }
                None => lens[t] = u32::MAX,
            }
        }
        Ok(())
    }

    fn afsai_compact<T: Scalar>(
        &self,
        cap: usize,
        rows: Range<usize>,
        out_cols: &Buffer<u32>,
        out_len: &Buffer<u32>,
        g_row_ptr: &Buffer<u32>,
        g_col_idx: &mut Buffer<u32>,
        col_count: &mut Buffer<u32>,
    ) -> Result<()> {
        let (count, first, n, nnz) = check_afsai_compact(
            cap, &rows, out_cols, out_len, g_row_ptr, g_col_idx, col_count,
        )?;
        self.counters.launch();
        let (count, first, n, nnz) = (count as usize, first as usize, n as usize, nnz as usize);
        let (cols, lens, rp) = (out_cols.host()?, out_len.host()?, g_row_ptr.host()?);
        let gci = g_col_idx.host_mut()?;
        // The rows that fit (the kernel's rule), each with its own slice of g_col_idx.
        let mut rows: Vec<(usize, &mut [u32])> = Vec::with_capacity(count);
        let mut rest: &mut [u32] = gci;
        let mut offset = 0usize;
        for t in 0..count {
            let (m, gb) = (lens[t] as usize, rp[t] as usize);
            if m > cap || gb > nnz || nnz - gb <= m || gb < offset {
                continue; // inconsistent input: no write (rows overlapping earlier ones too)
            }
            let tail = std::mem::take(&mut rest);
            let (_, from_gb) = tail.split_at_mut(gb - offset);
            let (row, after) = from_gb.split_at_mut(m + 1);
            rows.push((t, row));
            rest = after;
            offset = gb + m + 1;
        }
        rows.par_iter_mut().for_each(|(t, row)| {
            let m = row.len() - 1;
            row[..m].copy_from_slice(&cols[*t * cap..*t * cap + m]);
            row[..m].sort_unstable();
            row[m] = (first + *t) as u32;
        });
        let counts = col_count.host_mut()?;
        for (_, row) in &rows {
            for &c in row.iter() {
                if (c as usize) < n {
                    counts[c as usize] += 1;
                }
            }
        }
        Ok(())
    }

    fn afsai_place<T: Scalar>(
        &self,
        src: &Buffer<u32>,
        len: usize,
        dst: &mut Buffer<u32>,
        offset: usize,
    ) -> Result<()> {
        check_afsai_place(src, len, dst, offset)?;
        self.counters.launch();
        dst.host_mut()?[offset..offset + len].copy_from_slice(&src.host()?[..len]);
        Ok(())
    }

    fn fsai_transpose<T: Scalar>(
        &self,
        g_row_ptr: &Buffer<u32>,
        g_col_idx: &Buffer<u32>,
        gt_col_ptr: &Buffer<u32>,
        cursor: &mut Buffer<u32>,
        gt_row_idx: &mut Buffer<u32>,
        gt_entry: &mut Buffer<u32>,
        gt_pos: &mut Buffer<u32>,
    ) -> Result<()> {
        let (n, nnz) = check_fsai_transpose(
            g_row_ptr, g_col_idx, gt_col_ptr, cursor, gt_row_idx, gt_entry, gt_pos,
        )?;
        self.counters.launch();
        self.counters.launch();
        let (n, nnz) = (n as usize, nnz as usize);
        let (rp, ci, cp) = (g_row_ptr.host()?, g_col_idx.host()?, gt_col_ptr.host()?);
        let (cur, ri, ent) = (
            cursor.host_mut()?,
            gt_row_idx.host_mut()?,
            gt_entry.host_mut()?,
        );
        // Rows in ascending order fill every column in ascending row order: the kernels'
        // canonical (sorted) result, without the sort.
        for i in 0..n {
            let end = (rp[i + 1] as usize).min(nnz);
            let begin = (rp[i] as usize).min(end);
            for (e, &c) in ci.iter().enumerate().take(end).skip(begin) {
                let c = c as usize;
                if c >= n {
                    continue;
                }
                let p = cur[c] as usize;
                cur[c] = cur[c].wrapping_add(1);
                if p < nnz {
                    ri[p] = i as u32;
                    ent[p] = e as u32;
                }
            }
        }
        let pos = gt_pos.host_mut()?;
        for j in 0..n {
            let (b, end) = (cp[j] as usize, cp[j + 1] as usize);
            if b > end || end > nnz {
                continue;
            }
            for p in b..end {
                if (ent[p] as usize) < nnz {
                    pos[ent[p] as usize] = p as u32;
                }
            }
        }
        Ok(())
    }

    fn ip_stencil<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
    ) -> Result<()> {
        check_ip_stencil(st, r, z)?;
        self.counters.launch();
        let n = r.len();
        let r = r.host()?;
        let items: Vec<_> = z.host_mut()?.chunks_mut(CHUNK).enumerate().collect();
        exec(n, items, |(c, z)| {
            for (k, zi) in z.iter_mut().enumerate() {
                *zi = ip_row(st, c * CHUNK + k, r);
            }
        });
        Ok(())
    }

    fn ip_stencil_dot<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        check_ip_stencil(st, r, z)?;
        let n = r.len();
        partials.check(slot, n)?;
        self.counters.launch();
        let g = partials.groups();
        let out = slot_mut(partials, slot)?;
        let r = r.host()?;
        let items: Vec<_> = chunks_mut(z.host_mut()?, g)
            .zip(out.iter_mut())
            .enumerate()
            .collect();
        exec(n, items, |(c, (z, o))| {
            let mut acc = T::zero();
            for (k, zi) in z.iter_mut().enumerate() {
                let i = c * CHUNK + k;
                *zi = ip_row(st, i, r);
                acc += r[i] * *zi;
            }
            *o = acc;
        });
        Ok(())
    }

    fn ip_stencil_quad<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        check_ip_quad(st, v)?;
        let n = v.len();
        partials.check(slot, n)?;
        self.counters.launch();
        let out = slot_mut(partials, slot)?;
        let v = v.host()?;
        let items: Vec<_> = out.iter_mut().enumerate().collect();
        exec(n, items, |(c, o)| {
            let mut acc = T::zero();
            for i in (c * CHUNK..(c + 1) * CHUNK).take_while(|&i| i < n) {
                acc += ip_quad_term(st, i, v);
            }
            *o = acc;
        });
        Ok(())
    }

    fn ip_pcg_update<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: PcgStepVectors<'_, T>,
        partials: &mut Partials<T>,
        slots: (Slot, Slot),
    ) -> Result<()> {
        let n = check_ip_pcg_update(st, &v, partials, slots)?;
        self.counters.launch();
        let g = partials.groups();
        let (out_rr, out_rz) =
            two_slots_mut(partials.buffer.host_mut()?, g, slots.0 .0, slots.1 .0);
        let (alpha, beta) = (v.alpha, v.beta);
        let (r, ap) = (v.r.host()?, v.ap.host()?);
        let items: Vec<_> = chunks_mut(v.x.host_mut()?, g)
            .zip(chunks_mut(v.r_next.host_mut()?, g))
            .zip(chunks_mut(v.p.host_mut()?, g))
            .zip(out_rr.iter_mut().zip(out_rz.iter_mut()))
            .enumerate()
            .collect();
        exec(n, items, |(c, (((x, r_next), p), (o_rr, o_rz)))| {
            let (mut acc_rr, mut acc_rz) = (T::zero(), T::zero());
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                let pi = p[k];
                x[k] += alpha * pi;
                let ri = r[i] - alpha * ap[i];
                let zi = ip_row_of(st, i, |j| r[j] - alpha * ap[j]);
                r_next[k] = ri;
                p[k] = zi + beta * pi;
                acc_rr += ri * ri;
                acc_rz += ri * zi;
            }
            *o_rr = acc_rr;
            *o_rz = acc_rz;
        });
        Ok(())
    }

    fn ip_stencil_check<T: Scalar>(
        &self,
        st: &StencilCoefficients<T>,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let (row_ptr, col_idx, values, n) = check_ip_stencil_check(st, a, partials, slot)?;
        self.counters.launch();
        let out = slot_mut(partials, slot)?;
        let (rp, ci, va) = (row_ptr.host()?, col_idx.host()?, values.host()?);
        let items: Vec<_> = out.iter_mut().enumerate().collect();
        exec(n, items, |(c, o)| {
            let mut acc = T::zero();
            for i in (c * CHUNK..(c + 1) * CHUNK).take_while(|&i| i < n) {
                if !stencil_row_matches(st, i, rp, ci, va) {
                    acc += T::one();
                }
            }
            *o = acc;
        });
        Ok(())
    }
}

/// The host slices of a BILU(0) part triple.
fn host_parts<'a, T: Scalar>(p: &BiluParts<'a, T>) -> Result<(&'a [T], &'a [T], &'a [T])> {
    Ok((p.lower.host()?, p.upper.host()?, p.diag.host()?))
}

/// Whether CSR row `i` holds exactly the stencil's entries (the `ip_stencil_check` kernel's
/// test: present nonzero coefficients in ascending column order, nothing else).
fn stencil_row_matches<T: Scalar>(
    st: &StencilCoefficients<T>,
    i: usize,
    rp: &[u32],
    ci: &[u32],
    va: &[T],
) -> bool {
    let [nx, ny, nz] = st.dims;
    let [ax, ay, az] = st.neighbours;
    let plane = nx * ny;
    let (zc, rem) = (i / plane, i % plane);
    let (yc, xc) = (rem / nx, rem % nx);
    let (mut k, end) = (rp[i] as usize, rp[i + 1] as usize);
    let mut ok = true;
    let expected = [
        (zc > 0, i.wrapping_sub(plane), az),
        (yc > 0, i.wrapping_sub(nx), ay),
        (xc > 0, i.wrapping_sub(1), ax),
        (true, i, st.center),
        (xc + 1 < nx, i + 1, ax),
        (yc + 1 < ny, i + nx, ay),
        (zc + 1 < nz, i + plane, az),
    ];
    for (present, col, val) in expected {
        if present && val != T::zero() {
            ok &= k < end && ci[k] as usize == col && va[k] == val;
            k += 1;
        }
    }
    ok && k == end
}

/// `values`, the entries of the rows (or columns) `range` of a compressed matrix whose
/// pointer array is `ptr` (`width` values per entry), split into one contiguous slice per run
/// of `chunk` rows, each with its rows: the tasks of a parallel loop that writes every row's
/// entries in place.
fn chunks_by_pointers<'v, T>(
    values: &'v mut [T],
    ptr: &[u32],
    range: std::ops::Range<usize>,
    chunk: usize,
    width: usize,
) -> Vec<(std::ops::Range<usize>, &'v mut [T])> {
    let mut chunks = Vec::with_capacity(range.len().div_ceil(chunk));
    let mut rest = values;
    for c0 in range.clone().step_by(chunk) {
        let c1 = (c0 + chunk).min(range.end);
        let (head, tail) = rest.split_at_mut((ptr[c1] - ptr[c0]) as usize * width);
        chunks.push((c0..c1, head));
        rest = tail;
    }
    chunks
}

/// Block columns of an approximate inverse that one task of the host backend's `isai_solve`
/// solves.
const ISAI_HOST_CHUNK: usize = 256;

/// Rows of G that the host backend's `fsai_rows` computes with one dense scratch.
const FSAI_HOST_CHUNK: usize = 1024;

/// One row of G on the pattern `p` (ascending, diagonal last) into `y` (`p.len()` entries) in
/// the order of `fsai.cl`: the gathered A[p, p] (in `mat`, resized), its Cholesky factor,
/// L z = e_last, L^T y = z, y / sqrt(y_last); NaN in every entry when a pivot is not positive.
fn fsai_row<T: Scalar>(
    arp: &[u32],
    aci: &[u32],
    av: &[T],
    p: &[u32],
    mat: &mut Vec<T>,
    y: &mut [T],
) {
    let m = p.len();
    mat.clear();
    mat.resize(m * m, T::zero());
    for (a, &r) in p.iter().enumerate() {
        for k in arp[r as usize] as usize..arp[r as usize + 1] as usize {
            if let Ok(b) = p.binary_search(&aci[k]) {
                mat[a * m + b] = av[k];
            }
        }
    }
    for j in 0..m {
        let mut d = mat[j * m + j];
        for k in 0..j {
            d -= mat[j * m + k] * mat[j * m + k];
        }
        if !d.is_finite() || d <= T::zero() {
            y.fill(T::from_f64(f64::NAN));
            return;
        }
        let ljj = d.sqrt();
        mat[j * m + j] = ljj;
        for r in j + 1..m {
            let mut v = mat[r * m + j];
            for k in 0..j {
                v -= mat[r * m + k] * mat[j * m + k];
            }
            mat[r * m + j] = v / ljj;
        }
    }
    let l = m - 1;
    y.fill(T::zero());
    y[l] = (T::one() / mat[l * m + l]) / mat[l * m + l];
    for r in (0..l).rev() {
        let mut v = T::zero();
        for k in r + 1..m {
            v -= mat[k * m + r] * y[k];
        }
        y[r] = v / mat[r * m + r];
    }
    let scale = T::one() / y[l].sqrt();
    y.iter_mut().for_each(|v| *v *= scale);
}

/// Row i of the matrix-free Incomplete Poisson product (the order of `ip.cl`).
fn ip_row<T: Scalar>(st: &IpStencil<T>, i: usize, r: &[T]) -> T {
    ip_row_of(st, i, |j| r[j])
}

/// Point i's term of <v, M^-1 v> as the `ip_stencil_quad` kernel forms it (M^-1 symmetric):
/// v_i (m_i v_i + 2 sum over the lower neighbours j of w v_j).
fn ip_quad_term<T: Scalar>(st: &IpStencil<T>, i: usize, v: &[T]) -> T {
    let ([xc, yc, zc], m) = ip_point(st, i);
    let [nx, ny, _] = st.dims;
    let [wx, wy, wz] = st.weights;
    let mut lower = T::zero();
    if zc > 0 {
        lower += wz * v[i - nx * ny];
    }
    if yc > 0 {
        lower += wy * v[i - nx];
    }
    if xc > 0 {
        lower += wx * v[i - 1];
    }
    v[i] * (m * v[i] + T::from_f64(2.0) * lower)
}

/// The coordinates (x, y, z) of point i of the grid and the diagonal m_i of M^-1 there,
/// ((0 + w_z^2) + w_y^2) + w_x^2 + 1 over the lower neighbours present.
fn ip_point<T: Scalar>(st: &IpStencil<T>, i: usize) -> ([usize; 3], T) {
    let [nx, ny, _] = st.dims;
    let [wx, wy, wz] = st.weights;
    let plane = nx * ny;
    let (zc, rem) = (i / plane, i % plane);
    let (yc, xc) = (rem / nx, rem % nx);
    let mut m = T::zero();
    if zc > 0 {
        m += wz * wz;
    }
    if yc > 0 {
        m += wy * wy;
    }
    if xc > 0 {
        m += wx * wx;
    }
    m += T::one();
    ([xc, yc, zc], m)
}

/// [`ip_row`] of the vector whose entry j is `r(j)` (`ip_pcg_update` passes r_j - alpha Ap_j).
fn ip_row_of<T: Scalar>(st: &IpStencil<T>, i: usize, r: impl Fn(usize) -> T) -> T {
    let ([xc, yc, zc], m) = ip_point(st, i);
    let [nx, ny, nz] = st.dims;
    let [wx, wy, wz] = st.weights;
    let plane = nx * ny;
    let mut acc = T::zero();
    if zc > 0 {
        acc += wz * r(i - plane);
    }
    if yc > 0 {
        acc += wy * r(i - nx);
    }
    if xc > 0 {
        acc += wx * r(i - 1);
    }
    acc += m * r(i);
    if xc + 1 < nx {
        acc += wx * r(i + 1);
    }
    if yc + 1 < ny {
        acc += wy * r(i + nx);
    }
    if zc + 1 < nz {
        acc += wz * r(i + plane);
    }
    acc
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

    /// Column c of block column j of N ~ T^-1 on the row set `rows` (the order of
    /// `isai.cl`), into `col` (s*s per row of `rows`, column-major blocks).
    fn isai_column(&self, j: usize, c: usize, upper: bool, rows: &[u32], col: &mut [T]) {
        let s = self.s;
        let m = rows.len();
        for step in 0..m {
            let pos = if upper { m - 1 - step } else { step };
            let r = rows[pos] as usize;
            let mut t = [T::zero(); MAX_BLOCK_SIZE];
            if r == j {
                t[c] = T::one();
            }
            let solved = if upper { pos + 1..m } else { 0..pos };
            for k in self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize {
                let Ok(q) = rows[solved.clone()].binary_search(&self.col_idx[k]) else {
                    continue;
                };
                let q = solved.start + q;
                let blk = &self.values[k * s * s..(k + 1) * s * s];
                for jj in 0..s {
                    let xj = col[q * s * s + c * s + jj];
                    for i in 0..s {
                        t[i] -= blk[jj * s + i] * xj;
                    }
                }
            }
            let xr = &mut col[pos * s * s + c * s..pos * s * s + (c + 1) * s];
            match self.inv_diag {
                None => xr.copy_from_slice(&t[..s]),
                Some(d) => {
                    let d = &d[r * s * s..(r + 1) * s * s];
                    for (i, o) in xr.iter_mut().enumerate() {
                        let mut acc = T::zero();
                        for jj in 0..s {
                            acc += d[jj * s + i] * t[jj];
                        }
                        *o = acc;
                    }
                }
            }
        }
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
