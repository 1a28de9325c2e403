//! OpenCL implementation of [`PrecondOps`]: kernels of `kernels/precond.kc`.

use super::launch::Arg;
use super::program::afsai_team_local_bytes;
use super::OpenClBackend;
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
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{
    AfsaiGrowKernel, AfsaiGrowth, BiluParts, BlockTriangular, CsrUpdate, DeviceFormat,
    DeviceMatrix, FsaiPattern, InversePattern, IpStencil, PcgStepVectors, PrecondOps,
    StencilCoefficients,
};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

impl PrecondOps for OpenClBackend {
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
        self.launch::<T>(
            Kernel::DiagScale,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(d)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(y)?),
                Arg::uint(Self::len_u32(n)?),
            ],
        )
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
        self.launch::<T>(
            Kernel::DiagScaleDot,
            partials.groups(),
            &[
                Arg::Mem(self.mem(d)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(y)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(slot)?,
            ],
        )
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
        self.launch::<T>(
            Kernel::BlockDiagScale,
            self.elementwise_groups(n),
            &[
                Arg::uint(s as u32),
                Arg::uint(Self::len_u32(n / s)?),
                Arg::Mem(self.mem(inv_blocks)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(y)?),
            ],
        )
    }

    fn bsr_trsv_sweep<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        b: &Buffer<T>,
        x_old: Option<&Buffer<T>>,
        x_new: &mut Buffer<T>,
    ) -> Result<()> {
        check_sweep(t, b, x_old, x_new)?;
        let mut args = vec![
            Arg::uint(t.block_size as u32),
            Arg::uint(Self::len_u32(t.n_block_rows)?),
        ];
        args.extend(self.triangular_args(t)?);
        let b_mem = self.mem(b)?;
        args.extend([
            Arg::Mem(b_mem),
            // x_old = 0 (from_zero): not read; any valid buffer.
            Arg::Mem(match x_old {
                Some(x) => self.mem(x)?,
                None => b_mem,
            }),
            Arg::uint(u32::from(x_old.is_none())),
            Arg::Mem(self.mem(x_new)?),
        ]);
        self.launch::<T>(
            Kernel::BsrTrsvSweep,
            self.elementwise_groups(t.n_block_rows),
            &args,
        )
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
        let mut args = vec![
            Arg::uint(t.block_size as u32),
            Arg::Mem(self.mem(level_rows)?),
            Arg::uint(Self::len_u32(level.start)?),
            Arg::uint(Self::len_u32(len)?),
        ];
        args.extend(self.triangular_args(t)?);
        args.extend([Arg::Mem(self.mem(b)?), Arg::Mem(self.mem(x)?)]);
        self.launch::<T>(Kernel::BsrTrsvLevel, self.elementwise_groups(len), &args)
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
            Arg::uint(l.block_size as u32),
            Arg::uint(Self::len_u32(n)?),
            Arg::Mem(self.mem(a_rp)?),
            Arg::Mem(self.mem(a_ci)?),
            Arg::Mem(self.mem(a_v)?),
            Arg::Mem(self.mem(&l.row_ptr)?),
            Arg::Mem(self.mem(&l.col_idx)?),
            Arg::Mem(self.mem(&u.row_ptr)?),
            Arg::Mem(self.mem(&u.col_idx)?),
            Arg::Mem(self.mem(&l.values)?),
            Arg::Mem(self.mem(&u.values)?),
            Arg::Mem(self.mem(diag)?),
        ];
        self.launch::<T>(Kernel::Bilu0Scatter, self.elementwise_groups(n), &args)
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
            Arg::uint(l.block_size as u32),
            Arg::uint(Self::len_u32(l.n_block_rows)?),
            Arg::Mem(self.mem(&l.row_ptr)?),
            Arg::Mem(self.mem(&l.col_idx)?),
            Arg::Mem(self.mem(&u.row_ptr)?),
            Arg::Mem(self.mem(&u.col_idx)?),
            Arg::Mem(self.mem(a.lower)?),
            Arg::Mem(self.mem(a.upper)?),
            Arg::Mem(self.mem(a.diag)?),
            Arg::Mem(self.mem(prev.lower)?),
            Arg::Mem(self.mem(prev.upper)?),
            Arg::Mem(self.mem(prev.diag)?),
            Arg::uint(u32::from(old.is_none())),
            Arg::uint(u32::from(report)),
            Arg::Mem(self.mem(&l.values)?),
            Arg::Mem(self.mem(&u.values)?),
            Arg::Mem(self.mem(inv_new)?),
            Arg::Mem(self.mem(bad_row)?),
        ];
        self.launch::<T>(
            Kernel::Bilu0Sweep,
            self.elementwise_groups(l.n_block_rows),
            &args,
        )
    }

    fn ip_domain_check<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let (row_ptr, col_idx, values, n) = check_ip_assemble(a, None, partials, slot)?;
        let args = [
            Arg::uint(Self::len_u32(n)?),
            Arg::Mem(self.mem(row_ptr)?),
            Arg::Mem(self.mem(col_idx)?),
            Arg::Mem(self.mem(values)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Arg::uint(slot.0 as u32),
        ];
        self.launch::<T>(Kernel::IpDomainCheck, partials.groups(), &args)
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
            Arg::uint(Self::len_u32(n)?),
            Arg::Mem(self.mem(row_ptr)?),
            Arg::Mem(self.mem(col_idx)?),
            Arg::Mem(self.mem(values)?),
            Arg::Mem(self.mem(m_values)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Arg::uint(slot.0 as u32),
            Arg::uint(u32::from(scaled)),
        ];
        self.launch::<T>(Kernel::IpAssemble, partials.groups(), &args)
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
        let mut args = vec![
            Arg::uint(t.block_size as u32),
            Arg::uint(Self::len_u32(pattern.n_block_cols)?),
        ];
        args.extend(self.triangular_args(t)?);
        Self::len_u32(work)?;
        args.extend([
            Arg::uint(u32::from(upper)),
            Arg::Mem(self.mem(&pattern.col_ptr)?),
            Arg::Mem(self.mem(&pattern.row_idx)?),
            Arg::Mem(self.mem(&pattern.dest)?),
            Arg::Mem(self.mem(out)?),
        ]);
        self.launch::<T>(Kernel::IsaiSolve, self.elementwise_groups(work), &args)
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
        // Batches of long rows by teams of 32 work-items where the work-groups hold whole teams.
        let team = pattern.batch_is_team(batch) && self.wg >= 32 && self.wg % 32 == 0;
        let (kernel, items) = if team {
            (Kernel::FsaiRowsTeam, rows * 32)
        } else {
            (Kernel::FsaiRows, rows)
        };
        self.launch::<T>(
            kernel,
            self.elementwise_groups(items),
            &[
                Arg::uint(Self::len_u32(begin)?),
                Arg::uint(Self::len_u32(rows)?),
                Arg::Mem(self.mem(row_ptr)?),
                Arg::Mem(self.mem(col_idx)?),
                Arg::Mem(self.mem(values)?),
                Arg::Mem(self.mem(&pattern.row_ptr)?),
                Arg::Mem(self.mem(&pattern.col_idx)?),
                Arg::Mem(self.mem(&pattern.gt_pos)?),
                Arg::Mem(self.mem(&pattern.scratch_off)?),
                Arg::Mem(self.mem(scratch)?),
                Arg::Mem(self.mem(g_values)?),
                Arg::Mem(self.mem(gt_values)?),
            ],
        )
    }

    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel {
        // The team kernel needs work-groups of whole teams and its local arrays in the
        // device's local memory (sized for f64, the larger precision).
        // GPUs only: a CPU device runs a team's work-items one after another, a barrier per
        // merge round (the tests still run the team kernel there when they name it).
        let team_allowed = self.device.is_gpu
            && super::program::afsai_team_fits(
                self.wg,
                crate::scalar::Precision::F64,
                self.device.local_mem_bytes,
            );
        AfsaiGrowKernel::choose(
            growth,
            team_allowed,
            mean_row_len,
            self.tuning().afsai_grow_kernel,
        )
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
        if kernel == AfsaiGrowKernel::Team
            && !super::program::afsai_team_fits(self.wg, T::PRECISION, self.device.local_mem_bytes)
        {
            return Err(crate::error::Error::Unsupported(format!(
                "afsai_grow_team needs work-groups of whole 32-wide teams and {} bytes of local \
                 memory (work-group {}, {} bytes)",
                afsai_team_local_bytes(self.wg, std::mem::size_of::<T>()),
                self.wg,
                self.device.local_mem_bytes
            )));
        }
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
            Arg::uint(Self::len_u32(rows.start)?),
            Arg::uint(Self::len_u32(count)?),
            Arg::Mem(self.mem(row_ptr)?),
            Arg::Mem(self.mem(col_idx)?),
            Arg::Mem(self.mem(values)?),
            Arg::uint(Self::len_u32(growth.max_steps)?),
            Arg::uint(Self::len_u32(growth.per_step)?),
            Arg::scalar(T::from_f64(growth.eps)),
            Arg::uint(growth.stop.code()),
        ];
        if !team {
            args.extend([Arg::Mem(self.mem(scratch)?), Arg::Mem(self.mem(iscratch)?)]);
        }
        args.extend([Arg::Mem(self.mem(out_cols)?), Arg::Mem(self.mem(out_len)?)]);
        // The team kernel: one 32-wide team per row, as many work-items as 32 per row.
        let (name, items) = if team {
            (Kernel::AfsaiGrowTeam, count * 32)
        } else {
            (Kernel::AfsaiGrow, count)
        };
        self.launch::<T>(name, self.elementwise_groups(items), &args)
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
        self.launch::<T>(
            Kernel::AfsaiCompact,
            self.elementwise_groups(count as usize),
            &[
                Arg::uint(count),
                Arg::uint(first),
                Arg::uint(n),
                Arg::uint(nnz),
                Arg::uint(Self::len_u32(cap)?),
                Arg::Mem(self.mem(out_cols)?),
                Arg::Mem(self.mem(out_len)?),
                Arg::Mem(self.mem(g_row_ptr)?),
                Arg::Mem(self.mem(g_col_idx)?),
                Arg::Mem(self.mem(col_count)?),
            ],
        )
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
        self.launch::<T>(
            Kernel::AfsaiPlace,
            self.elementwise_groups(len as usize),
            &[
                Arg::uint(len),
                Arg::uint(offset),
                Arg::Mem(self.mem(src)?),
                Arg::Mem(self.mem(dst)?),
            ],
        )
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
        let groups = self.elementwise_groups(n as usize);
        self.launch::<T>(
            Kernel::FsaiTransposeFill,
            groups,
            &[
                Arg::uint(n),
                Arg::uint(nnz),
                Arg::Mem(self.mem(g_row_ptr)?),
                Arg::Mem(self.mem(g_col_idx)?),
                Arg::Mem(self.mem(cursor)?),
                Arg::Mem(self.mem(gt_row_idx)?),
                Arg::Mem(self.mem(gt_entry)?),
            ],
        )?;
        self.launch::<T>(
            Kernel::FsaiTransposeSort,
            groups,
            &[
                Arg::uint(n),
                Arg::uint(nnz),
                Arg::Mem(self.mem(gt_col_ptr)?),
                Arg::Mem(self.mem(gt_row_idx)?),
                Arg::Mem(self.mem(gt_entry)?),
                Arg::Mem(self.mem(gt_pos)?),
            ],
        )
    }

    fn ip_stencil<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
    ) -> Result<()> {
        check_ip_stencil(st, r, z)?;
        let mut args = Self::ip_args(st);
        args.extend([Arg::Mem(self.mem(r)?), Arg::Mem(self.mem(z)?)]);
        self.launch::<T>(Kernel::IpStencil, self.elementwise_groups(r.len()), &args)
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
        let mut args = Self::ip_args(st);
        args.extend([
            Arg::Mem(self.mem(r)?),
            Arg::Mem(self.mem(z)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Self::slot_arg(slot)?,
        ]);
        self.launch::<T>(Kernel::IpStencilDot, partials.groups(), &args)
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
        let mut args = Self::ip_args(st);
        args.extend([
            Arg::Mem(self.mem(v)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Self::slot_arg(slot)?,
        ]);
        self.launch::<T>(Kernel::IpStencilQuad, partials.groups(), &args)
    }

    fn ip_pcg_update<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: PcgStepVectors<'_, T>,
        partials: &mut Partials<T>,
        slots: (Slot, Slot),
    ) -> Result<()> {
        check_ip_pcg_update(st, &v, partials, slots)?;
        let mut args = Self::ip_args(st);
        args.extend([
            Arg::scalar(v.alpha),
            Arg::scalar(v.beta),
            Arg::Mem(self.mem(v.x)?),
            Arg::Mem(self.mem(v.r)?),
            Arg::Mem(self.mem(v.r_next)?),
            Arg::Mem(self.mem(v.p)?),
            Arg::Mem(self.mem(v.ap)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Self::slot_arg(slots.0)?,
            Self::slot_arg(slots.1)?,
        ]);
        self.launch::<T>(Kernel::IpPcgUpdate, partials.groups(), &args)
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
            Arg::uint(nx as u32),
            Arg::uint(ny as u32),
            Arg::uint(nz as u32),
            Arg::scalar(st.center),
            Arg::scalar(ax),
            Arg::scalar(ay),
            Arg::scalar(az),
            Arg::Mem(self.mem(row_ptr)?),
            Arg::Mem(self.mem(col_idx)?),
            Arg::Mem(self.mem(values)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Self::slot_arg(slot)?,
        ];
        self.launch::<T>(Kernel::IpStencilCheck, partials.groups(), &args)
    }
}

impl OpenClBackend {
    /// The grid and weights of the `ip_stencil` kernels (checked to fit in 32 bits).
    fn ip_args<'a, T: Scalar>(st: &IpStencil<T>) -> Vec<Arg<'a>> {
        let [nx, ny, nz] = st.dims;
        let [wx, wy, wz] = st.weights;
        vec![
            Arg::uint(nx as u32),
            Arg::uint(ny as u32),
            Arg::uint(nz as u32),
            Arg::scalar(wx),
            Arg::scalar(wy),
            Arg::scalar(wz),
        ]
    }

    /// The factor's arguments up to and including `unit_diag`, after `bs` (and the level
    /// arguments, for `bsr_trsv_level`).
    fn triangular_args<'a, T: Scalar>(&self, t: &'a BlockTriangular<T>) -> Result<Vec<Arg<'a>>> {
        let values = self.mem(&t.values)?;
        let inv = match &t.inv_diag {
            Some(d) => self.mem(d)?,
            // Not read when unit_diag is set; any valid buffer.
            None => values,
        };
        Ok(vec![
            Arg::Mem(self.mem(&t.row_ptr)?),
            Arg::Mem(self.mem(&t.col_idx)?),
            Arg::Mem(values),
            Arg::Mem(inv),
            Arg::uint(u32::from(t.inv_diag.is_none())),
        ])
    }
}
