//! OpenCL implementation of [`SpmvOps`]: one kernel of `kernels/spmv.kc` per call, for CSR
//! (k work-items per row), SELL-C-sigma and BSR, fused with up to three first-stage dots.

use super::launch::Arg;
use super::raw::RawBuffer;
use super::OpenClBackend;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::matrix::{CompactColumnBuffers, DeviceFormat, DeviceMatrix};
use crate::backend::ops::spmv::{check_csr_update, check_spmv};
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{CsrUpdate, SpmvDots, SpmvOps};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::sync::atomic::Ordering;

/// A vector argument: a buffer and an element offset into it.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) mem: &'a RawBuffer,
    pub(super) off: u64,
}

impl<'a> View<'a> {
    pub(super) fn at(mem: &'a RawBuffer, off: usize) -> Self {
        Self {
            mem,
            off: off as u64,
        }
    }
}

/// The optional dots of a fused SpMV: <y, y>, <y, w0>, <y, w1> (slot -1 = off; an unused
/// vector may be any buffer).
pub(super) struct Dots<'a> {
    pub(super) yy: i32,
    pub(super) w0: (View<'a>, i32),
    pub(super) w1: (View<'a>, i32),
}

/// The device format of a matrix, naming its two kernels.
#[derive(Clone, Copy)]
pub(super) enum Fmt {
    Csr,
    CsrStream,
    Sell,
    Bsr,
}

impl Fmt {
    fn spmv_dots(self) -> Kernel {
        match self {
            Fmt::Csr => Kernel::SpmvDotsCsr,
            Fmt::CsrStream => Kernel::SpmvDotsCsrStream,
            Fmt::Sell => Kernel::SpmvDotsSell,
            Fmt::Bsr => Kernel::SpmvDotsBsr,
        }
    }
    fn residual(self) -> Kernel {
        match self {
            Fmt::Csr => Kernel::ResidualCsr,
            Fmt::CsrStream => Kernel::ResidualCsrStream,
            Fmt::Sell => Kernel::ResidualSell,
            Fmt::Bsr => Kernel::ResidualBsr,
        }
    }
}

impl OpenClBackend {
    /// Work-items per CSR row: 1 on CPUs; on GPUs the largest power of two not above
    /// mean-nonzeros-per-row / 8, between 1 and min(32, WG). Measured on the H200 (NVIDIA
    /// OpenCL): one work-item per row wins clearly up to ~15 nonzeros per row (2D/3D Poisson:
    /// 1.6x faster than 4 lanes, the barriers of the lane reduction cost more than the
    /// uncoalesced reads); 3D elasticity (~43 per row) is fastest with 4 lanes.
    pub(super) fn csr_lanes(&self, nnz: usize, rows: usize) -> u32 {
        let forced = self.csr_lanes_override.load(Ordering::Relaxed);
        if forced != 0 {
            return forced;
        }
        if !self.is_gpu() || rows == 0 {
            return 1;
        }
        if let Some(k) = self.tuning().csr_lanes {
            return k.min(self.work_group_size() as u32);
        }
        let k = (nnz / rows / 8).max(1);
        let pow = 1usize << (usize::BITS - 1 - k.leading_zeros());
        pow.min(32).min(self.work_group_size()) as u32
    }

    /// The `compact, col_off, base` arguments of the stream and SELL kernels: the 16-bit column
    /// offsets when the matrix has them, else 0 and `stand_in` twice (never read).
    fn compact_args<'a>(
        &self,
        c: Option<&'a CompactColumnBuffers>,
        stand_in: &'a Buffer<u32>,
    ) -> Result<[Arg<'a>; 3]> {
        Ok(match c {
            Some(c) => [
                Arg::uint(1),
                Arg::Mem(self.mem(&c.offsets)?),
                Arg::Mem(self.mem(&c.base)?),
            ],
            None => [
                Arg::uint(0),
                Arg::Mem(self.mem(stand_in)?),
                Arg::Mem(self.mem(stand_in)?),
            ],
        })
    }

    /// The matrix arguments of a kernel (everything before x), per format.
    pub(super) fn matrix_args<'a, T: Scalar>(
        &self,
        a: &'a DeviceMatrix<T>,
    ) -> Result<(Fmt, Vec<Arg<'a>>)> {
        let n_rows = Self::len_u32(a.n_rows())?;
        Ok(match &a.format {
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                values,
                long_rows,
                row_blocks: Some(blocks),
            } => (
                Fmt::CsrStream,
                vec![
                    Arg::Mem(self.mem(row_ptr)?),
                    Arg::Mem(self.mem(col_idx)?),
                    Arg::Mem(self.mem(values)?),
                    Arg::uint(n_rows),
                    Arg::Mem(self.mem(&blocks.block_row)?),
                    Arg::uint(Self::len_u32(blocks.n_blocks)?),
                    Arg::uint(long_rows.as_ref().map_or(u32::MAX, |l| l.min_len)),
                ]
                .into_iter()
                .chain(self.compact_args(blocks.compact.as_ref(), &blocks.block_row)?)
                .collect(),
            ),
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                values,
                long_rows,
                row_blocks: None,
            } => (
                Fmt::Csr,
                vec![
                    Arg::Mem(self.mem(row_ptr)?),
                    Arg::Mem(self.mem(col_idx)?),
                    Arg::Mem(self.mem(values)?),
                    Arg::uint(n_rows),
                    Arg::uint(self.csr_lanes(a.nnz(), a.n_rows())),
                    Arg::uint(long_rows.as_ref().map_or(u32::MAX, |l| l.min_len)),
                    // early: the CUDA kernels' early matrix reads (ignored here).
                    Arg::uint(0),
                ],
            ),
            DeviceFormat::Sell {
                c,
                slice_ptr,
                col_idx,
                values,
                row_perm,
                row_len,
                compact,
                ..
            } => (
                Fmt::Sell,
                vec![
                    Arg::uint(
                        u32::try_from(*c)
                            .map_err(|_| Error::param("c", "slice height too large"))?,
                    ),
                    Arg::Mem(self.mem(slice_ptr)?),
                    Arg::Mem(self.mem(col_idx)?),
                    Arg::Mem(self.mem(values)?),
                    Arg::Mem(self.mem(row_perm)?),
                    Arg::Mem(self.mem(row_len)?),
                    Arg::uint(n_rows),
                ]
                .into_iter()
                .chain(self.compact_args(compact.as_ref(), row_len)?)
                .collect(),
            ),
            DeviceFormat::Bsr {
                block_size,
                row_ptr,
                col_idx,
                values,
            } => (
                Fmt::Bsr,
                vec![
                    Arg::uint(
                        u32::try_from(*block_size)
                            .map_err(|_| Error::param("block_size", "block size too large"))?,
                    ),
                    Arg::Mem(self.mem(row_ptr)?),
                    Arg::Mem(self.mem(col_idx)?),
                    Arg::Mem(self.mem(values)?),
                    Arg::uint(n_rows),
                ],
            ),
        })
    }

    /// [`PrecondOps::csr_update`](crate::backend::PrecondOps::csr_update) with kernel
    /// `csr_update`; `false` (nothing launched) for a matrix it does not take: not plain CSR
    /// (no row blocks), or long rows with `base` `None` (their pre-pass writes `out`).
    pub(super) fn launch_csr_update<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
    ) -> Result<bool> {
        check_csr_update(a, x, update, out)?;
        let (fmt, mut args) = self.matrix_args(a)?;
        let DeviceFormat::Csr { long_rows, .. } = &a.format else {
            return Ok(false);
        };
        if !matches!(fmt, Fmt::Csr)
            || (long_rows.is_some() && matches!(update, CsrUpdate::Add { base: None }))
        {
            return Ok(false);
        }
        let (xm, outm) = (self.mem(x)?, self.mem(out)?);
        self.launch_long_rows(a, View::at(xm, 0), View::at(outm, 0))?;
        let (base, b, s, mode, in_place) = match update {
            CsrUpdate::Sweep { b, s } => (xm, self.mem(b)?, self.mem(s)?, 0, 0),
            CsrUpdate::Add { base: Some(base) } => (self.mem(base)?, outm, outm, 1, 0),
            CsrUpdate::Add { base: None } => (outm, outm, outm, 1, 1),
        };
        args.extend([
            Arg::Mem(xm),
            Arg::Mem(base),
            Arg::Mem(b),
            Arg::Mem(s),
            Arg::Mem(outm),
            Arg::uint(mode),
            Arg::uint(in_place),
        ]);
        let groups = self.spmv_reduction_groups(a);
        self.launch::<T>(Kernel::CsrUpdate, groups, &args)?;
        Ok(true)
    }

    /// The long rows of a CSR matrix (none for other formats): `csr_long_chunks` and
    /// `csr_long_rows` write their values of A x to y, for the main kernel to read back (see
    /// `backend::long_rows`). The caller has checked the lengths and offsets of x and y.
    pub(super) fn launch_long_rows<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: View<'_>,
        y: View<'_>,
    ) -> Result<()> {
        let DeviceFormat::Csr {
            col_idx,
            values,
            long_rows: Some(long),
            ..
        } = &a.format
        else {
            return Ok(());
        };
        let sums = self.mem(&long.chunk_sums)?;
        self.launch::<T>(
            Kernel::CsrLongChunks,
            self.groups_for(long.n_chunks.saturating_mul(self.wg)),
            &[
                Arg::Mem(self.mem(col_idx)?),
                Arg::Mem(self.mem(values)?),
                Arg::Mem(self.mem(&long.chunk_begin)?),
                Arg::Mem(self.mem(&long.chunk_end)?),
                Arg::uint(Self::len_u32(long.n_chunks)?),
                Arg::Mem(x.mem),
                Arg::ulong(x.off),
                Arg::Mem(sums),
            ],
        )?;
        self.launch::<T>(
            Kernel::CsrLongRows,
            self.groups_for(long.n_rows),
            &[
                Arg::Mem(self.mem(&long.rows)?),
                Arg::Mem(self.mem(&long.chunk_ptr)?),
                Arg::uint(Self::len_u32(long.n_rows)?),
                Arg::Mem(sums),
                Arg::Mem(y.mem),
                Arg::ulong(y.off),
            ],
        )
    }

    /// Launch `spmv_dots_<fmt>`: y = A x (views with offsets) and the dots, `groups` groups.
    /// The caller has checked every length, offset and slot.
    pub(super) fn launch_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: View<'_>,
        y: View<'_>,
        dots: Dots<'_>,
        partials: &RawBuffer,
        groups: usize,
    ) -> Result<()> {
        let (fmt, mut args) = self.matrix_args(a)?;
        self.launch_long_rows(a, x, y)?;
        args.extend([
            Arg::Mem(x.mem),
            Arg::ulong(x.off),
            Arg::Mem(y.mem),
            Arg::ulong(y.off),
            Arg::Mem(dots.w0.0.mem),
            Arg::ulong(dots.w0.0.off),
            Arg::Mem(dots.w1.0.mem),
            Arg::ulong(dots.w1.0.off),
            Arg::Mem(partials),
            Arg::int(dots.yy),
            Arg::int(dots.w0.1),
            Arg::int(dots.w1.1),
        ]);
        self.launch::<T>(fmt.spmv_dots(), groups, &args)
    }
}

impl SpmvOps for OpenClBackend {
    fn auto_csr_stream(&self) -> bool {
        self.is_gpu()
    }

    /// SELL on GPUs: the element-wise grid (8 groups per compute unit) instead of the
    /// reduction plan's 4, as on CUDA (measured on the H200 with NVIDIA OpenCL,
    /// `bench/results/groups-sell-h200.csv`: CG on the 27-point stencil, SELL-32-256, n = 4.1M,
    /// 488 us per iteration against 627). CPUs keep the reduction plan.
    ///
    /// The CSR stream kernel gets the element-wise grid over its row blocks too (as on CUDA;
    /// NVIDIA OpenCL on the H200, `bench/results/stream-grid-h200.csv`: CG on the 27-point
    /// stencil 468 against 631 us per iteration, power-law 808 against 837).
    ///
    /// Products that write no partials (the plain SpMV, the residual) use the same grid. SELL's
    /// plain product ran on the reduction plan until 2026-11-24 (i): on the H200 its SpMV alone
    /// took 534 us on the 27-point stencil at n = 4.1M, 366 on this grid (CUDA: 342).
    ///
    /// Plain CSR gets the reduction plan over its rows times their lanes. It had the plan over
    /// its rows alone until 2026-11-30: a matrix of long rows ran on a few groups (AMG's
    /// coarsest level, 479 dense rows of 32 lanes each, on 2 work-groups: 251 us against CUDA's
    /// 8 per product). The element-wise grid over rows times lanes (CUDA's `grid(work)`) was as
    /// fast on AMG's coarse levels but 3-7% slower per CG + AMG iteration at 16.8M, where the
    /// finest products (one lane) got twice the groups (`bench/log/2026-11-30-amg-jacobi-weight.md`).
    fn spmv_reduction_groups<T: Scalar>(&self, a: &DeviceMatrix<T>) -> usize {
        match a.format() {
            DeviceFormat::Sell { .. } => self.elementwise_groups(a.n_rows()),
            DeviceFormat::Csr {
                row_blocks: Some(blocks),
                ..
            } => self.elementwise_groups(blocks.n_blocks.saturating_mul(self.wg)),
            DeviceFormat::Csr { .. } => self.groups_for(
                a.n_rows()
                    .saturating_mul(self.csr_lanes(a.nnz(), a.n_rows()) as usize),
            ),
            _ => self.groups_for(a.n_rows()),
        }
    }

    fn spmv<T: Scalar>(&self, a: &DeviceMatrix<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        check_spmv(a, x, y)?;
        let (xm, ym) = (self.mem(x)?, self.mem(y)?);
        let yv = View::at(ym, 0);
        let dots = Dots {
            yy: -1,
            w0: (yv, -1),
            w1: (yv, -1),
        };
        self.launch_spmv_dots(
            a,
            View::at(xm, 0),
            yv,
            dots,
            ym,
            self.spmv_reduction_groups(a),
        )
    }

    fn spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        crate::backend::ops::checks::spmv_dots(a, x, y, &dots, partials)?;
        let (xm, ym, pm) = (self.mem(x)?, self.mem(y)?, self.mem(partials.buffer())?);
        let yv = View::at(ym, 0);
        let with = |k: usize| -> Result<(View<'_>, i32)> {
            match dots.with[k] {
                Some((v, s)) => Ok((View::at(self.mem(v)?, 0), Self::opt_slot(Some(s))?)),
                None => Ok((yv, -1)),
            }
        };
        let d = Dots {
            yy: Self::opt_slot(dots.yy)?,
            w0: with(0)?,
            w1: with(1)?,
        };
        let no_dots = dots.yy.is_none() && dots.with.iter().all(Option::is_none);
        let groups = if no_dots {
            self.spmv_reduction_groups(a)
        } else {
            partials.groups()
        };
        self.launch_spmv_dots(a, View::at(xm, 0), yv, d, pm, groups)
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
        let (fmt, mut args) = self.matrix_args(a)?;
        let (xm, rm) = (self.mem(x)?, self.mem(r)?);
        self.launch_long_rows(a, View::at(xm, 0), View::at(rm, 0))?;
        args.extend([
            Arg::Mem(xm),
            Arg::Mem(self.mem(b)?),
            Arg::Mem(rm),
            Arg::Mem(self.mem(partials.buffer())?),
            Arg::int(Self::opt_slot(rr)?),
        ]);
        let groups = if rr.is_some() {
            partials.groups()
        } else {
            self.spmv_reduction_groups(a)
        };
        self.launch::<T>(fmt.residual(), groups, &args)
    }
}
