//! CUDA implementation of [`PrecondOps`] (`kernels/precond.kc`).

use super::module::Kernel;
use super::{index_arg, len_arg, scalar, Arg, CudaBackend};
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
use crate::backend::ops::trsv::{check_block_diag_scale, check_level, check_sweep, check_trsv};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{
    AfsaiGrowKernel, AfsaiGrowth, BiluParts, BlockTriangular, CsrUpdate, DeviceFormat,
    DeviceMatrix, FsaiPattern, InversePattern, IpStencil, PcgStepVectors, PrecondOps,
    StencilCoefficients,
};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

impl PrecondOps for CudaBackend {
    fn csr_update<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
        scratch: &mut Buffer<T>,
    ) -> Result<()> {
        if self.launch_csr_update(a, x, update, out)? {
            return Ok(());
        }
        crate::backend::ops::precond::reference::csr_update(self, a, x, update, out, scratch)
    }

    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let n = d.len();
        check_len("diag_scale: x length", x, n)?;
        check_len("diag_scale: y length", y, n)?;
        let args = [self.ptr(d)?, self.ptr(x)?, self.ptr(y)?, len_arg(n)?];
        // SAFETY: diag_scale(const SCALAR* d, const SCALAR* x, SCALAR* y, uint n): all three
        // hold n elements (checked).
        unsafe { self.launch::<T>(Kernel::DiagScale, self.grid(n), &args) }
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
        let args = [
            self.ptr(d)?,
            self.ptr(x)?,
            self.ptr(y)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: diag_scale_dot(d, x, y, uint n, partials, uint slot): vectors hold n
        // elements, the slot is inside the partials (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::DiagScaleDot, partials.groups(), &args) }
    }

    fn block_diag_scale<T: Scalar>(
        &self,
        block_size: usize,
        inv_blocks: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        check_block_diag_scale(block_size, inv_blocks, x, y)?;
        let (s, n) = (block_size, x.len());
        let args = [
            index_arg("block size", s)?,
            len_arg(n / s)?,
            self.ptr(inv_blocks)?,
            self.ptr(x)?,
            self.ptr(y)?,
        ];
        // SAFETY: block_diag_scale(uint bs, uint n_block_rows, inv_blocks, x, y): x and y hold
        // n = n_block_rows * bs elements and inv_blocks n * bs (checked); 1 <= bs <= 8.
        unsafe { self.launch::<T>(Kernel::BlockDiagScale, self.grid(n), &args) }
    }

    fn bsr_trsv_sweep<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        b: &Buffer<T>,
        x_old: Option<&Buffer<T>>,
        x_new: &mut Buffer<T>,
    ) -> Result<()> {
        check_sweep(t, b, x_old, x_new)?;
        let b_ptr = self.ptr(b)?;
        let [rp, ci, v, inv, unit] = self.triangular_args(t)?;
        let args = [
            index_arg("block size", t.block_size)?,
            len_arg(t.n_block_rows)?,
            rp,
            ci,
            v,
            inv,
            unit,
            b_ptr,
            // Not read when from_zero is set.
            match x_old {
                Some(x) => self.ptr(x)?,
                None => b_ptr,
            },
            Arg::U32(u32::from(x_old.is_none())),
            self.ptr(x_new)?,
        ];
        // SAFETY: bsr_trsv_sweep(bs, n_block_rows, row_ptr, col_idx, values, inv_diag,
        // unit_diag, b, x_old, from_zero, x_new): the factor was validated at upload (indices in
        // range, values and inv_diag sized), b, x_old and x_new hold n_block_rows * bs (checked).
        unsafe {
            self.launch::<T>(
                Kernel::BsrTrsvSweep,
                self.grid(t.n_block_rows.max(1)),
                &args,
            )
        }
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
        let len = level.end - level.start;
        let [rp, ci, v, inv, unit] = self.triangular_args(t)?;
        let args = [
            index_arg("block size", t.block_size)?,
            self.ptr(level_rows)?,
            len_arg(level.start)?,
            len_arg(len)?,
            rp,
            ci,
            v,
            inv,
            unit,
            self.ptr(b)?,
            self.ptr(x)?,
        ];
        // SAFETY: bsr_trsv_level(bs, level_rows, level_begin, level_len, row_ptr, col_idx,
        // values, inv_diag, unit_diag, b, x): the level range lies inside level_rows (checked),
        // whose entries are block rows of the factor (built by the preconditioner setup); the
        // factor was validated at upload; b and x hold n_block_rows * bs (checked).
        unsafe { self.launch::<T>(Kernel::BsrTrsvLevel, self.grid(len.max(1)), &args) }
    }

    fn bilu0_scatter<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        diag: &mut Buffer<T>,
    ) -> Result<()> {
        let (a_rp, a_ci, a_v) = check_bilu0_scatter(a, l, u, diag)?;
        let n = l.n();
        let args = [
            index_arg("block size", l.block_size)?,
            len_arg(n)?,
            self.ptr(a_rp)?,
            self.ptr(a_ci)?,
            self.ptr(a_v)?,
            self.ptr(&l.row_ptr)?,
            self.ptr(&l.col_idx)?,
            self.ptr(&u.row_ptr)?,
            self.ptr(&u.col_idx)?,
            self.ptr(&l.values)?,
            self.ptr(&u.values)?,
            self.ptr(diag)?,
        ];
        // SAFETY: bilu0_scatter(bs, n_rows, a_row_ptr, a_col_idx, a_values, l_row_ptr,
        // l_col_idx, u_row_ptr, u_col_idx, l_values, u_values, d_values): A is a validated CSR
        // upload with n_rows rows and columns; both factors were validated at creation (indices
        // in range, values sized for their blocks) and have n_rows / bs block rows, diag holds
        // s*s per block row (checked).
        unsafe { self.launch::<T>(Kernel::Bilu0Scatter, self.grid(n.max(1)), &args) }
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
        // With no previous sweep the old factors are not read: A's parts stand in.
        let prev = old.unwrap_or(a);
        let inv_new = u
            .inv_diag
            .as_ref()
            .ok_or_else(|| crate::error::Error::param("bilu0", "U without a diagonal"))?;
        let args = [
            index_arg("block size", l.block_size)?,
            len_arg(l.n_block_rows)?,
            self.ptr(&l.row_ptr)?,
            self.ptr(&l.col_idx)?,
            self.ptr(&u.row_ptr)?,
            self.ptr(&u.col_idx)?,
            self.ptr(a.lower)?,
            self.ptr(a.upper)?,
            self.ptr(a.diag)?,
            self.ptr(prev.lower)?,
            self.ptr(prev.upper)?,
            self.ptr(prev.diag)?,
            Arg::U32(u32::from(old.is_none())),
            Arg::U32(u32::from(report)),
            self.ptr(&l.values)?,
            self.ptr(&u.values)?,
            self.ptr(inv_new)?,
            self.ptr(bad_row)?,
        ];
        // SAFETY: bilu0_sweep(bs, n_block_rows, l_row_ptr, l_col_idx, u_row_ptr, u_col_idx,
        // a_l, a_u, a_d, l_old, u_old, inv_old, first, report, l_new, u_new, inv_new,
        // bad_row): the factors were validated at creation (indices below n_block_rows, values
        // sized for their blocks, U's inverted diagonal present); every part is sized like the
        // factor it belongs to and bad_row holds at least one entry (checked). The outputs are
        // the factors' own buffers, distinct from the inputs (Rust borrows).
        unsafe { self.launch::<T>(Kernel::Bilu0Sweep, self.grid(l.n_block_rows.max(1)), &args) }
    }

    fn ip_domain_check<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let (row_ptr, col_idx, values, n) = check_ip_assemble(a, None, partials, slot)?;
        let args = [
            len_arg(n)?,
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: ip_domain_check(n, row_ptr, col_idx, values, partials, slot): a is a square
        // CSR matrix validated at upload (row pointers ascending inside the arrays, columns
        // below n), the slot is inside the partials (checked).
        unsafe { self.launch::<T>(Kernel::IpDomainCheck, partials.groups(), &args) }
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
        let args = [
            len_arg(n)?,
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            self.ptr(m_values)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
            index_arg("scaled", usize::from(scaled))?,
        ];
        // SAFETY: ip_assemble(n, row_ptr, col_idx, values, m_values, partials, slot, scaled): as
        // ip_domain_check, and m_values holds one value per entry of A (checked). A row without
        // its diagonal only gives a wrong value (the search returns the row's end, inside the
        // arrays for every row but the last, where it is the array's end: the caller runs
        // ip_domain_check first).
        unsafe { self.launch::<T>(Kernel::IpAssemble, partials.groups(), &args) }
    }

    fn isai_solve<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        upper: bool,
        pattern: &InversePattern,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        check_isai(t, pattern, out)?;
        let work = pattern.n_block_cols * t.block_size;
        len_arg(work)?;
        let [rp, ci, v, inv, unit] = self.triangular_args(t)?;
        let args = [
            index_arg("block size", t.block_size)?,
            len_arg(pattern.n_block_cols)?,
            rp,
            ci,
            v,
            inv,
            unit,
            Arg::U32(u32::from(upper)),
            self.ptr(&pattern.col_ptr)?,
            self.ptr(&pattern.row_idx)?,
            self.ptr(&pattern.dest)?,
            self.ptr(out)?,
        ];
        // SAFETY: isai_solve(bs, n_block_cols, row_ptr, col_idx, values, inv_diag, unit_diag,
        // upper, col_ptr, row_idx, dest, out): the factor and the pattern were validated at
        // upload (indices in range, dest a permutation of the blocks), the pattern matches the
        // factor and out holds every block of N (checked).
        unsafe { self.launch::<T>(Kernel::IsaiSolve, self.grid(work.max(1)), &args) }
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
        let DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } = a.format()
        else {
            return Err(crate::error::Error::param(
                "format",
                "fsai_rows needs A in CSR",
            ));
        };
        let rows = end - begin;
        let args = [
            len_arg(begin)?,
            len_arg(rows)?,
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            self.ptr(&pattern.row_ptr)?,
            self.ptr(&pattern.col_idx)?,
            self.ptr(&pattern.gt_pos)?,
            self.ptr(&pattern.scratch_off)?,
            self.ptr(scratch)?,
            self.ptr(g_values)?,
            self.ptr(gt_values)?,
        ];
        // SAFETY: fsai_rows(row_begin, rows, A csr, g_row_ptr, g_col_idx, gt_pos, scratch_off,
        // scratch, g, gt): the pattern was validated at upload (rows non-empty, ascending, in
        // range; gt_pos a permutation; offsets of this batch within its scratch size), A is a
        // CSR of the pattern's size whose indices were validated at upload, the scratch holds
        // the batch and g, gt hold every entry (checked). fsai_rows_team takes the same
        // arguments, one warp per row.
        unsafe {
            if pattern.batch_is_team(batch) {
                self.launch::<T>(Kernel::FsaiRowsTeam, self.grid(rows.max(1) * 32), &args)
            } else {
                self.launch::<T>(Kernel::FsaiRows, self.grid(rows.max(1)), &args)
            }
        }
    }

    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel {
        // Every block is a whole number of warps (WG a multiple of 32, at most 256: the team
        // kernel's shared memory stays under 48 KiB).
        AfsaiGrowKernel::choose(growth, true, mean_row_len, self.tuning().afsai_grow_kernel)
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
        let DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } = a.format()
        else {
            return Err(crate::error::Error::param(
                "format",
                "afsai_grow needs A in CSR",
            ));
        };
        let count = rows.len();
        if count == 0 {
            return Ok(());
        }
        let team = kernel == AfsaiGrowKernel::Team;
        let mut args = vec![
            len_arg(rows.start)?,
            len_arg(count)?,
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            index_arg("afsai_max_steps", growth.max_steps)?,
            index_arg("afsai_step_size", growth.per_step)?,
            scalar(T::from_f64(growth.eps)),
            Arg::U32(growth.stop.code()),
        ];
        if !team {
            args.extend([self.ptr(scratch)?, self.ptr(iscratch)?]);
        }
        args.extend([self.ptr(out_cols)?, self.ptr(out_len)?]);
        if team {
            // SAFETY: afsai_grow_team(row_begin, rows, A csr, uint max_steps, uint per_step,
            // eps, stop_rule, out_cols, out_len): A is a square CSR whose indices were
            // validated at upload, the rows lie inside it, cap <= 31 (checked: the kernel's
            // shared arrays), out_cols holds rows * cap and out_len rows entries (checked).
            // One warp per row: the grid covers 32 threads per row.
            return unsafe {
                self.launch::<T>(Kernel::AfsaiGrowTeam, self.grid(count * 32), &args)
            };
        }
        // SAFETY: afsai_grow(row_begin, rows, A csr, uint max_steps, uint per_step, eps,
        // stop_rule, scratch, iscratch, out_cols, out_len): A is a square CSR whose indices were validated
        // at upload, the rows lie inside it, the scratch buffers hold `rows` rows of the
        // growth's layout, out_cols rows * cap and out_len rows entries (checked).
        unsafe { self.launch::<T>(Kernel::AfsaiGrow, self.grid(count), &args) }
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
        if count == 0 {
            return Ok(());
        }
        let args = [
            Arg::U32(count),
            Arg::U32(first),
            Arg::U32(n),
            Arg::U32(nnz),
            index_arg("afsai_cap", cap)?,
            self.ptr(out_cols)?,
            self.ptr(out_len)?,
            self.ptr(g_row_ptr)?,
            self.ptr(g_col_idx)?,
            self.ptr(col_count)?,
        ];
        // SAFETY: afsai_compact(rows, first_row, n, nnz, cap, out_cols, out_len, g_row_ptr,
        // g_col_idx, col_count): out_cols holds rows * cap entries, out_len rows, g_row_ptr
        // rows + 1, col_count n, g_col_idx nnz (checked); the kernel skips rows whose entries
        // would pass nnz and columns >= n.
        unsafe { self.launch::<T>(Kernel::AfsaiCompact, self.grid(count as usize), &args) }
    }

    fn afsai_place<T: Scalar>(
        &self,
        src: &Buffer<u32>,
        len: usize,
        dst: &mut Buffer<u32>,
        offset: usize,
    ) -> Result<()> {
        let (len, offset) = check_afsai_place(src, len, dst, offset)?;
        if len == 0 {
            return Ok(());
        }
        let args = [
            Arg::U32(len),
            Arg::U32(offset),
            self.ptr(src)?,
            self.ptr(dst)?,
        ];
        // SAFETY: afsai_place(len, offset, src, dst): src holds len entries or more and dst
        // offset + len or more (checked).
        unsafe { self.launch::<T>(Kernel::AfsaiPlace, self.grid(len as usize), &args) }
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
        let fill = [
            Arg::U32(n),
            Arg::U32(nnz),
            self.ptr(g_row_ptr)?,
            self.ptr(g_col_idx)?,
            self.ptr(cursor)?,
            self.ptr(gt_row_idx)?,
            self.ptr(gt_entry)?,
        ];
        // SAFETY: fsai_transpose_fill(n, nnz, g_row_ptr, g_col_idx, cursor, gt_row_idx,
        // gt_entry): g_row_ptr holds n + 1, cursor n, the others nnz entries (checked); the
        // kernel reads entries below min(g_row_ptr[i + 1], nnz), skips columns >= n and slots
        // >= nnz.
        unsafe { self.launch::<T>(Kernel::FsaiTransposeFill, self.grid(n as usize), &fill)? };
        let sort = [
            Arg::U32(n),
            Arg::U32(nnz),
            self.ptr(gt_col_ptr)?,
            self.ptr(gt_row_idx)?,
            self.ptr(gt_entry)?,
            self.ptr(gt_pos)?,
        ];
        // SAFETY: fsai_transpose_sort(n, nnz, gt_col_ptr, gt_row_idx, gt_entry, gt_pos):
        // gt_col_ptr holds n + 1, the others nnz entries (checked); the kernel skips columns
        // whose range is not inside 0..nnz and entries >= nnz.
        unsafe { self.launch::<T>(Kernel::FsaiTransposeSort, self.grid(n as usize), &sort) }
    }

    fn ip_stencil<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
    ) -> Result<()> {
        check_ip_stencil(st, r, z)?;
        let [nx, ny, nz, wx, wy, wz] = ip_args(st);
        let args = [nx, ny, nz, wx, wy, wz, self.ptr(r)?, self.ptr(z)?];
        // SAFETY: ip_stencil(nx, ny, nz, wx, wy, wz, r, z): r and z hold nx*ny*nz < 2^31
        // elements (checked).
        unsafe { self.launch::<T>(Kernel::IpStencil, self.grid(r.len()), &args) }
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
        partials.check(slot, r.len())?;
        let [nx, ny, nz, wx, wy, wz] = ip_args(st);
        let args = [
            nx,
            ny,
            nz,
            wx,
            wy,
            wz,
            self.ptr(r)?,
            self.ptr(z)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: ip_stencil_dot(nx, ny, nz, wx, wy, wz, r, z, partials, slot): r and z hold
        // nx*ny*nz < 2^31 elements, the slot is inside the partials (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::IpStencilDot, partials.groups(), &args) }
    }

    fn ip_stencil_quad<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        check_ip_quad(st, v)?;
        partials.check(slot, v.len())?;
        let [nx, ny, nz, wx, wy, wz] = ip_args(st);
        let args = [
            nx,
            ny,
            nz,
            wx,
            wy,
            wz,
            self.ptr(v)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: ip_stencil_quad(nx, ny, nz, wx, wy, wz, v, partials, slot): v holds
        // nx*ny*nz < 2^31 elements, the slot is inside the partials (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::IpStencilQuad, partials.groups(), &args) }
    }

    fn ip_pcg_update<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: PcgStepVectors<'_, T>,
        partials: &mut Partials<T>,
        slots: (Slot, Slot),
    ) -> Result<()> {
        check_ip_pcg_update(st, &v, partials, slots)?;
        let [nx, ny, nz, wx, wy, wz] = ip_args(st);
        let args = [
            nx,
            ny,
            nz,
            wx,
            wy,
            wz,
            scalar(v.alpha),
            scalar(v.beta),
            self.ptr(v.x)?,
            self.ptr(v.r)?,
            self.ptr(v.r_next)?,
            self.ptr(v.p)?,
            self.ptr(v.ap)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slots.0 .0)?,
            index_arg("slot", slots.1 .0)?,
        ];
        // SAFETY: ip_pcg_update(nx, ny, nz, wx, wy, wz, alpha, beta, x, r, r_next, p, ap,
        // partials, slot_rr, slot_rz): every vector holds nx*ny*nz < 2^31 elements, r_next is
        // not r, the slots are distinct and inside the partials (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::IpPcgUpdate, partials.groups(), &args) }
    }

    fn ip_stencil_check<T: Scalar>(
        &self,
        st: &StencilCoefficients<T>,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let (row_ptr, col_idx, values, _) = check_ip_stencil_check(st, a, partials, slot)?;
        let [nx, ny, nz] = st.dims;
        let [ax, ay, az] = st.neighbours;
        let args = [
            Arg::U32(nx as u32),
            Arg::U32(ny as u32),
            Arg::U32(nz as u32),
            scalar(st.center),
            scalar(ax),
            scalar(ay),
            scalar(az),
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: ip_stencil_check(nx, ny, nz, d, ax, ay, az, row_ptr, col_idx, values,
        // partials, slot): a is a CSR matrix of nx*ny*nz < 2^31 rows validated at upload (row
        // pointers ascending inside the arrays), the slot is inside the partials (checked).
        unsafe { self.launch::<T>(Kernel::IpStencilCheck, partials.groups(), &args) }
    }
}

/// The grid and weights of the `ip_stencil` kernels (the grid was checked to fit in 32 bits).
fn ip_args<T: Scalar>(st: &IpStencil<T>) -> [Arg; 6] {
    let [nx, ny, nz] = st.dims;
    let [wx, wy, wz] = st.weights;
    [
        Arg::U32(nx as u32),
        Arg::U32(ny as u32),
        Arg::U32(nz as u32),
        scalar(wx),
        scalar(wy),
        scalar(wz),
    ]
}

impl CudaBackend {
    /// The factor's arguments `row_ptr .. unit_diag` of the `trsv` kernels.
    fn triangular_args<T: Scalar>(&self, t: &BlockTriangular<T>) -> Result<[Arg; 5]> {
        let values = self.ptr(&t.values)?;
        let inv = match &t.inv_diag {
            Some(d) => self.ptr(d)?,
            // Not read when unit_diag is set.
            None => values,
        };
        Ok([
            self.ptr(&t.row_ptr)?,
            self.ptr(&t.col_idx)?,
            values,
            inv,
            Arg::U32(u32::from(t.inv_diag.is_none())),
        ])
    }
}
