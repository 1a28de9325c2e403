//! CUDA implementation of [`SpmvOps`] (`kernels/spmv.kc`): one kernel per format, plain
//! (all slots off) or fused with up to three first-stage inner products, with element offsets
//! so that GMRES reads and writes basis columns in place.

use super::module::Kernel;
use super::{len_arg, opt_slot, Arg, CudaBackend};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::matrix::{CompactColumnBuffers, DeviceFormat, DeviceMatrix};
use crate::backend::ops::spmv::{check_csr_update, check_spmv};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{CsrUpdate, SpmvDots, SpmvOps};
use crate::error::Result;
use crate::scalar::Scalar;

/// Threads per CSR row: the largest power of two not above (mean nonzeros per row) / 6,
/// between 1 and 32. Measured on the H200 (pipelined CG, f64): rows of 5-7 entries run
/// fastest with one thread per row (Poisson 2D, n = 4.2M: 184 us per iteration against 314
/// with 4 threads), rows of 43 entries with 4-8 threads (elasticity 3D: 97-98 us against 153
/// with one and 171 with 32). The SpMV alone prefers more threads (mean / 3: 3D Poisson 115
/// against 127 us, elasticity 3D 56 against 74, `bench/results/spmv-sweeps-h200.csv`), but the
/// fused `spmv_dots` of CG does not: with mean / 3, CG at n = 4.1M took 242 us per iteration
/// on 3D Poisson (202 with mean / 6) and 737 on the 27-point stencil (590), so the rule stays
/// (`bench/results/poisson3d-lanes2-h200.csv`, `irregular-*-csr-sorted-h200.csv`).
/// `forced` (the tuning's [`csr_lanes`](crate::backend::tuning::Tuning::csr_lanes)) replaces
/// the rule.
pub(crate) fn csr_lanes(forced: Option<u32>, nnz: usize, rows: usize) -> u32 {
    if let Some(k) = forced {
        return k;
    }
    if rows == 0 {
        return 1;
    }
    let per_thread = (nnz / rows / 6).clamp(1, 32);
    1u32 << (usize::BITS - 1 - per_thread.leading_zeros())
}

/// `EARLY_MATRIX` of the `early` argument of the CSR kernels (`kernels/spmv.kc`).
const EARLY_MATRIX: u32 = 1;
/// `EARLY_NEXT` of the `early` argument.
const EARLY_NEXT: u32 = 2;

/// Most rows of a product that starts its next kernel early (`EARLY_NEXT`). Measured on the H200
/// (bench/log/, issue 15, 2026-11-25 (h)): the early start gained 0.4-1.1 us per BiCGStab
/// iteration up to 65K unknowns and cost pipelined CG 1.6-1.8% per iteration at 1M and 4.19M,
/// where the products fill the device.
const EARLY_NEXT_MAX_ROWS: usize = 1 << 17;

/// The `early` argument of a CSR kernel reading a matrix of `rows` rows (see the tuning's
/// [`cuda_early_start`](crate::backend::tuning::Tuning::cuda_early_start)): its first rows read
/// before the wait when the matrix was uploaded (`uploaded`, level 2 and up), and, for a product
/// that may start the next kernel early (`may_start_next`), that at level 3 up to
/// [`EARLY_NEXT_MAX_ROWS`] rows.
pub(crate) fn early_bits(
    tuning: &crate::backend::tuning::Tuning,
    rows: usize,
    uploaded: bool,
    may_start_next: bool,
) -> u32 {
    let level = tuning.early_start_level();
    let matrix = if uploaded && level >= 2 {
        EARLY_MATRIX
    } else {
        0
    };
    let next = if may_start_next && level >= 3 && rows <= EARLY_NEXT_MAX_ROWS {
        EARLY_NEXT
    } else {
        0
    };
    matrix | next
}

/// A vector operand of a fused SpMV: device address and element offset (0 when unused).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operand {
    pub(crate) ptr: Arg,
    pub(crate) off: u64,
}

impl Operand {
    /// An operand that the kernel never reads.
    pub(crate) const NONE: Operand = Operand {
        ptr: Arg::Ptr(0),
        off: 0,
    };
}

/// The `compact, col_off, base` arguments of the stream and SELL kernels: the 16-bit column
/// offsets when the matrix has them, else 0 and two pointers the kernels never read.
fn compact_args(b: &CudaBackend, c: Option<&CompactColumnBuffers>) -> Result<[Arg; 3]> {
    Ok(match c {
        Some(c) => [Arg::U32(1), b.ptr(&c.offsets)?, b.ptr(&c.base)?],
        None => [Arg::U32(0), Arg::Ptr(0), Arg::Ptr(0)],
    })
}

/// The arguments before `x` of every kernel of a format (see `kernels/spmv.kc`).
pub(super) fn matrix_args<T: Scalar>(
    b: &CudaBackend,
    a: &DeviceMatrix<T>,
) -> Result<(Vec<Arg>, [Kernel; 2], usize)> {
    let rows = len_arg(a.n_rows())?;
    Ok(match &a.format {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows,
            row_blocks: Some(blocks),
        } => (
            vec![
                b.ptr(row_ptr)?,
                b.ptr(col_idx)?,
                b.ptr(values)?,
                rows,
                b.ptr(&blocks.block_row)?,
                len_arg(blocks.n_blocks)?,
                Arg::U32(long_rows.as_ref().map_or(u32::MAX, |l| l.min_len)),
            ]
            .into_iter()
            .chain(compact_args(b, blocks.compact.as_ref())?)
            .collect(),
            [Kernel::SpmvDotsCsrStream, Kernel::ResidualCsrStream],
            blocks.n_blocks.saturating_mul(b.block as usize),
        ),
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows,
            row_blocks: None,
        } => {
            let k = csr_lanes(b.tuning().csr_lanes, a.nnz(), a.n_rows());
            (
                vec![
                    b.ptr(row_ptr)?,
                    b.ptr(col_idx)?,
                    b.ptr(values)?,
                    rows,
                    Arg::U32(k),
                    Arg::U32(long_rows.as_ref().map_or(u32::MAX, |l| l.min_len)),
                    Arg::U32(early_bits(b.tuning(), a.n_rows, a.uploaded, true)),
                ],
                [Kernel::SpmvDotsCsr, Kernel::ResidualCsr],
                a.n_rows().saturating_mul(k as usize),
            )
        }
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
            vec![
                super::index_arg("SELL slice height", *c)?,
                b.ptr(slice_ptr)?,
                b.ptr(col_idx)?,
                b.ptr(values)?,
                b.ptr(row_perm)?,
                b.ptr(row_len)?,
                rows,
            ]
            .into_iter()
            .chain(compact_args(b, compact.as_ref())?)
            .collect(),
            [Kernel::SpmvDotsSell, Kernel::ResidualSell],
            a.n_rows(),
        ),
        DeviceFormat::Bsr {
            block_size,
            row_ptr,
            col_idx,
            values,
        } => (
            vec![
                super::index_arg("BSR block size", *block_size)?,
                b.ptr(row_ptr)?,
                b.ptr(col_idx)?,
                b.ptr(values)?,
                rows,
            ],
            [Kernel::SpmvDotsBsr, Kernel::ResidualBsr],
            a.n_rows(),
        ),
    })
}

impl CudaBackend {
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
        let DeviceFormat::Csr {
            long_rows,
            row_blocks: None,
            ..
        } = &a.format
        else {
            return Ok(false);
        };
        if long_rows.is_some() && matches!(update, CsrUpdate::Add { base: None }) {
            return Ok(false);
        }
        let (mut args, _, work) = matrix_args(self, a)?;
        let (xo, outo) = (
            Operand {
                ptr: self.ptr(x)?,
                off: 0,
            },
            Operand {
                ptr: self.ptr(out)?,
                off: 0,
            },
        );
        // SAFETY: x has n_cols and out n_rows elements (checked).
        unsafe { self.launch_long_rows(a, xo, outo)? };
        let (base, b, s, mode, in_place) = match update {
            CsrUpdate::Sweep { b, s } => (xo.ptr, self.ptr(b)?, self.ptr(s)?, 0, 0),
            CsrUpdate::Add { base: Some(base) } => (self.ptr(base)?, outo.ptr, outo.ptr, 1, 0),
            CsrUpdate::Add { base: None } => (outo.ptr, outo.ptr, outo.ptr, 1, 1),
        };
        args.extend([
            xo.ptr,
            base,
            b,
            s,
            outo.ptr,
            Arg::U32(mode),
            Arg::U32(in_place),
        ]);
        // SAFETY: csr_update(row_ptr, col_idx, values, uint n_rows, uint k, uint long_len,
        // uint early, x, base, b, s, out, uint mode, uint in_place): x has n_cols, base, b, s
        // and out n_rows elements (checked; out stands in for the ones the mode never reads).
        unsafe { self.launch::<T>(Kernel::CsrUpdate, self.grid(work), &args)? };
        Ok(true)
    }

    /// The long rows of a CSR matrix (none for other formats): `csr_long_chunks` and
    /// `csr_long_rows` write their values of A x[x.off ..] to y[y.off ..], for the main kernel
    /// to read back (see `backend::long_rows`).
    ///
    /// # Safety
    /// `x` must cover `x.off + n_cols` elements and `y` `y.off + n_rows`.
    pub(crate) unsafe fn launch_long_rows<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: Operand,
        y: Operand,
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
        let chunk_args = [
            self.ptr(col_idx)?,
            self.ptr(values)?,
            self.ptr(&long.chunk_begin)?,
            self.ptr(&long.chunk_end)?,
            len_arg(long.n_chunks)?,
            x.ptr,
            Arg::U64(x.off),
            self.ptr(&long.chunk_sums)?,
        ];
        let grid = self.grid(long.n_chunks.saturating_mul(self.block as usize));
        // SAFETY: csr_long_chunks(col_idx, values, chunk_begin, chunk_end, uint n_chunks,
        // x, ulong x_off, chunk_sums): the chunks lie inside the matrix's entries (built from
        // its row pointers at upload), so every column index read is < n_cols and x covers
        // them; chunk_sums has n_chunks elements.
        self.launch::<T>(Kernel::CsrLongChunks, grid, &chunk_args)?;
        let row_args = [
            self.ptr(&long.rows)?,
            self.ptr(&long.chunk_ptr)?,
            len_arg(long.n_rows)?,
            self.ptr(&long.chunk_sums)?,
            y.ptr,
            Arg::U64(y.off),
        ];
        // SAFETY: csr_long_rows(rows, chunk_ptr, uint n_long, chunk_sums, y, ulong y_off):
        // rows holds n_long rows < n_rows and chunk_ptr n_long + 1 indices <= n_chunks; y covers
        // y.off + n_rows elements.
        self.launch::<T>(Kernel::CsrLongRows, self.grid(long.n_rows), &row_args)
    }

    /// One `spmv_dots_<format>` launch: y[y_off ..] = A x[x_off ..] with the partials
    /// <y, y> (`slots[0]`), <y, w0> (`slots[1]`), <y, w1> (`slots[2]`).
    ///
    /// # Safety
    /// `x` must cover `x.off + n_cols` elements and `y` `y.off + n_rows`; `w[k]` must cover
    /// `w[k].off + n_rows` elements when `slots[k + 1]` is set; when any slot is set,
    /// `partials` must be a buffer of this backend with `groups` groups holding every slot.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn launch_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: Operand,
        y: Operand,
        w: [Operand; 2],
        partials: Arg,
        slots: [Option<Slot>; 3],
        groups: usize,
    ) -> Result<()> {
        let (mut args, [kernel, _], work) = matrix_args(self, a)?;
        self.launch_long_rows(a, x, y)?;
        args.extend([
            x.ptr,
            Arg::U64(x.off),
            y.ptr,
            Arg::U64(y.off),
            w[0].ptr,
            Arg::U64(w[0].off),
            w[1].ptr,
            Arg::U64(w[1].off),
            partials,
            opt_slot(slots[0])?,
            opt_slot(slots[1])?,
            opt_slot(slots[2])?,
        ]);
        let grid = if slots.iter().any(Option::is_some) {
            groups
        } else {
            self.grid(work)
        };
        self.launch::<T>(kernel, grid, &args)
    }
}

impl SpmvOps for CudaBackend {
    /// SELL: a full-occupancy grid (every SM full of blocks) instead of the reduction plan's 4
    /// blocks per SM. Measured on the H200 with every partials buffer at 8 blocks per SM
    /// (`bench/results/groups-sell-h200.csv`, SELL-32-256, n = 4.1M): CG on the 27-point
    /// stencil 478 us per iteration against 594, BiCGStab 949 against 1155, 3D Poisson CG 204
    /// against 244; CSR did not gain (3D Poisson CG 215 against 196, `groups-h200.csv`) and
    /// GMRES lost (its kernels sum the partials in every block), so only the partials of
    /// products with SELL matrices (CG, BiCGStab) get the larger grid.
    ///
    /// The CSR stream kernel gets the full-occupancy grid too (its blocks wait on a barrier
    /// between staging and summing, and 4 blocks per SM leave the loads' latency exposed): on
    /// the H200 (`bench/results/stream-grid-h200.csv`, n = 4.1M) CG took 543 against 825 us
    /// per iteration on the 27-point stencil and 661 against 749 on the power-law matrix.
    fn spmv_reduction_groups<T: Scalar>(&self, a: &DeviceMatrix<T>) -> usize {
        match a.format() {
            DeviceFormat::Sell { .. } => self.grid(a.n_rows()),
            DeviceFormat::Csr {
                row_blocks: Some(blocks),
                ..
            } => self.grid(blocks.n_blocks.saturating_mul(self.block as usize)),
            _ => self.groups_for(a.n_rows()),
        }
    }

    fn spmv<T: Scalar>(&self, a: &DeviceMatrix<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        check_spmv(a, x, y)?;
        let xo = Operand {
            ptr: self.ptr(x)?,
            off: 0,
        };
        let yo = Operand {
            ptr: self.ptr(y)?,
            off: 0,
        };
        // SAFETY: x has n_cols and y n_rows elements (checked); every slot is off, so neither
        // the partner vectors nor the partials are touched.
        unsafe { self.launch_spmv_dots(a, xo, yo, [Operand::NONE; 2], Arg::Ptr(0), [None; 3], 1) }
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
        let slots = [
            dots.yy,
            dots.with[0].map(|w| w.1),
            dots.with[1].map(|w| w.1),
        ];
        let mut w = [Operand::NONE; 2];
        for (k, with) in dots.with.iter().enumerate() {
            if let Some((v, _)) = with {
                w[k] = Operand {
                    ptr: self.ptr(v)?,
                    off: 0,
                };
            }
        }
        let no_dots = slots.iter().all(Option::is_none);
        let pp = if no_dots {
            Arg::Ptr(0)
        } else {
            self.ptr(partials.buffer())?
        };
        let xo = Operand {
            ptr: self.ptr(x)?,
            off: 0,
        };
        let yo = Operand {
            ptr: self.ptr(y)?,
            off: 0,
        };
        // SAFETY: x has n_cols, y and every partner n_rows elements; the slots are distinct,
        // inside the partials buffer and planned for n rows (checked); the grid is its groups.
        unsafe { self.launch_spmv_dots(a, xo, yo, w, pp, slots, partials.groups()) }
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
        if let Some(s) = rr {
            partials.check(s, a.n_rows())?;
        }
        let (mut args, [_, kernel], work) = matrix_args(self, a)?;
        let (xo, ro) = (
            Operand {
                ptr: self.ptr(x)?,
                off: 0,
            },
            Operand {
                ptr: self.ptr(r)?,
                off: 0,
            },
        );
        // SAFETY: x has n_cols and r n_rows elements (checked).
        unsafe { self.launch_long_rows(a, xo, ro)? };
        let pp = match rr {
            Some(_) => self.ptr(partials.buffer())?,
            None => Arg::Ptr(0),
        };
        args.extend([xo.ptr, self.ptr(b)?, ro.ptr, pp, opt_slot(rr)?]);
        let grid = match rr {
            Some(_) => partials.groups(),
            None => self.grid(work),
        };
        // SAFETY: residual_<fmt>(matrix..., const SCALAR* x, const SCALAR* b, SCALAR* r,
        // SCALAR* partials, int slot_rr): x has n_cols, b and r n_rows elements (checked); the
        // partials are touched only with a checked slot, with grid = partials.groups().
        unsafe { self.launch::<T>(kernel, grid, &args) }
    }
}

#[cfg(test)]
mod tests {
    use super::csr_lanes;

    #[test]
    fn lanes_follow_the_mean_row_length() {
        assert_eq!(csr_lanes(None, 0, 0), 1);
        assert_eq!(csr_lanes(None, 0, 10), 1);
        assert_eq!(csr_lanes(None, 50, 10), 1);
        assert_eq!(csr_lanes(None, 70, 10), 1);
        assert_eq!(csr_lanes(None, 120, 10), 2);
        assert_eq!(csr_lanes(None, 435, 10), 4);
        assert_eq!(csr_lanes(None, 810, 10), 8);
        assert_eq!(csr_lanes(None, 10_000, 10), 32);
    }
}
