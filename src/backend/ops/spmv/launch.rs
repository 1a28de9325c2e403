//! The GPU launches of the SpMV family (`kernels/spmv.kc`), written once for every runtime
//! against [`GpuRuntime`]: the plain and fused products, the residual, the fused CSR update of
//! the Jacobi sweeps and AMG, GMRES's product into its basis and its fused DCGS2 product, each
//! after the long-row pre-pass. [`SpmvOps`](super::SpmvOps)',
//! [`KrylovOps`](crate::backend::KrylovOps)' and [`PrecondOps`](crate::backend::PrecondOps)'
//! default bodies call them on a GPU backend; the host backend implements those methods itself.
//!
//! What differs per runtime is asked of the runtime: the CSR lanes and CUDA's early starts
//! ([`GpuRuntime::csr_lanes_and_early`]), and the grid of a product over rows that writes no
//! partials ([`GpuRuntime::row_product_groups`]). An operand a kernel never reads (a partner
//! vector or partials whose slot is off, absent 16-bit column offsets) is
//! [`KernelArg::Unused`].

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::operands::{check_csr_update, check_spmv, CsrUpdate, SpmvDots};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::matrix::{CompactColumnBuffers, DeviceFormat, DeviceMatrix};
use crate::backend::ops::{checks, Kernel};
use crate::backend::partials::{Partials, Slot};
use crate::backend::Basis;
use crate::error::Result;
use crate::scalar::Scalar;

/// A vector operand of a product: its buffer (or [`KernelArg::Unused`]) and an element offset
/// (GMRES reads and writes basis columns in place).
#[derive(Clone, Copy)]
struct Operand<'a> {
    buffer: KernelArg<'a>,
    off: u64,
}

impl<'a> Operand<'a> {
    /// An operand the kernel never reads.
    const UNUSED: Operand<'static> = Operand {
        buffer: KernelArg::Unused,
        off: 0,
    };

    /// `b` from element `off` on.
    fn at<T: bytemuck::Pod>(b: &'a Buffer<T>, off: usize) -> Self {
        Operand {
            buffer: KernelArg::buffer(b),
            off: off as u64,
        }
    }
}

/// The arguments of a format's kernels before `x`, the format's two kernels (`spmv_dots_*`,
/// `residual_*`) and the grid of a product that writes no partials.
struct MatrixArgs<'a> {
    args: Vec<KernelArg<'a>>,
    kernels: [Kernel; 2],
    plain_groups: usize,
}

/// `b` as a kernel argument.
fn buf<T: bytemuck::Pod>(b: &Buffer<T>) -> KernelArg<'_> {
    KernelArg::buffer(b)
}

/// The `compact, col_off, base` arguments of the stream and SELL kernels: the 16-bit column
/// offsets when the matrix has them, else 0 and two operands the kernels never read.
fn compact_args(c: Option<&CompactColumnBuffers>) -> [KernelArg<'_>; 3] {
    match c {
        Some(c) => [KernelArg::U32(1), buf(&c.offsets), buf(&c.base)],
        None => [KernelArg::U32(0), KernelArg::Unused, KernelArg::Unused],
    }
}

/// The arguments before `x` of every kernel of `a`'s format (see `kernels/spmv.kc`).
fn matrix_args<'a, T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &'a DeviceMatrix<T>,
) -> Result<MatrixArgs<'a>> {
    let rows = KernelArg::len("matrix rows", a.n_rows())?;
    let mut args = Vec::with_capacity(24);
    Ok(match &a.format {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows,
            row_blocks: Some(blocks),
        } => {
            args.extend([
                buf(row_ptr),
                buf(col_idx),
                buf(values),
                rows,
                buf(&blocks.block_row),
                KernelArg::len("row blocks", blocks.n_blocks)?,
                KernelArg::U32(long_rows.as_ref().map_or(u32::MAX, |l| l.min_len)),
            ]);
            args.extend(compact_args(blocks.compact.as_ref()));
            MatrixArgs {
                args,
                kernels: [Kernel::SpmvDotsCsrStream, Kernel::ResidualCsrStream],
                plain_groups: rt
                    .elementwise_groups(blocks.n_blocks.saturating_mul(rt.work_group_size())),
            }
        }
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows,
            row_blocks: None,
        } => {
            let (lanes, early) = rt.csr_lanes_and_early(a.nnz(), a.n_rows(), a.uploaded, true);
            args.extend([
                buf(row_ptr),
                buf(col_idx),
                buf(values),
                rows,
                KernelArg::U32(lanes),
                KernelArg::U32(long_rows.as_ref().map_or(u32::MAX, |l| l.min_len)),
                KernelArg::U32(early),
            ]);
            MatrixArgs {
                args,
                kernels: [Kernel::SpmvDotsCsr, Kernel::ResidualCsr],
                plain_groups: rt.row_product_groups(a.n_rows().saturating_mul(lanes as usize)),
            }
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
        } => {
            args.extend([
                KernelArg::index("SELL slice height", *c)?,
                buf(slice_ptr),
                buf(col_idx),
                buf(values),
                buf(row_perm),
                buf(row_len),
                rows,
            ]);
            args.extend(compact_args(compact.as_ref()));
            MatrixArgs {
                args,
                kernels: [Kernel::SpmvDotsSell, Kernel::ResidualSell],
                plain_groups: rt.elementwise_groups(a.n_rows()),
            }
        }
        DeviceFormat::Bsr {
            block_size,
            row_ptr,
            col_idx,
            values,
        } => {
            args.extend([
                KernelArg::index("BSR block size", *block_size)?,
                buf(row_ptr),
                buf(col_idx),
                buf(values),
                rows,
            ]);
            MatrixArgs {
                args,
                kernels: [Kernel::SpmvDotsBsr, Kernel::ResidualBsr],
                plain_groups: rt.row_product_groups(a.n_rows()),
            }
        }
    })
}

/// The long rows of a CSR matrix (none for other formats): `csr_long_chunks` and
/// `csr_long_rows` write their values of A x\[x.off ..\] to y\[y.off ..\], for the main kernel to
/// read back (see `backend::long_rows`).
///
/// # Safety
/// `x` must cover `x.off + n_cols` elements and `y` `y.off + n_rows`.
unsafe fn long_rows<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    x: Operand<'_>,
    y: Operand<'_>,
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
    let chunks = long.n_chunks.saturating_mul(rt.work_group_size());
    // SAFETY: csr_long_chunks(col_idx, values, chunk_begin, chunk_end, uint n_chunks, x,
    // ulong x_off, chunk_sums): the chunks lie inside the matrix's entries (built from its row
    // pointers at upload), so every column index read is < n_cols and x covers them;
    // chunk_sums has n_chunks elements.
    unsafe {
        rt.launch::<T>(
            Kernel::CsrLongChunks,
            rt.row_product_groups(chunks),
            &[
                buf(col_idx),
                buf(values),
                buf(&long.chunk_begin),
                buf(&long.chunk_end),
                KernelArg::len("long-row chunks", long.n_chunks)?,
                x.buffer,
                KernelArg::U64(x.off),
                buf(&long.chunk_sums),
            ],
        )?;
    }
    // SAFETY: csr_long_rows(rows, chunk_ptr, uint n_long, chunk_sums, y, ulong y_off): rows
    // holds n_long rows < n_rows and chunk_ptr n_long + 1 indices <= n_chunks; y covers
    // y.off + n_rows elements.
    unsafe {
        rt.launch::<T>(
            Kernel::CsrLongRows,
            rt.row_product_groups(long.n_rows),
            &[
                buf(&long.rows),
                buf(&long.chunk_ptr),
                KernelArg::len("long rows", long.n_rows)?,
                buf(&long.chunk_sums),
                y.buffer,
                KernelArg::U64(y.off),
            ],
        )
    }
}

/// One `spmv_dots_<format>` launch: y\[y.off ..\] = A x\[x.off ..\] with the partials <y, y>
/// (`slots[0]`), <y, w0> (`slots[1]`) and <y, w1> (`slots[2]`), on `groups` groups when a slot
/// is set (the partials' own), else on the format's plain grid.
///
/// # Safety
/// `x` must cover `x.off + n_cols` elements and `y` `y.off + n_rows`, without overlapping what
/// is read; `w[k]` must cover `w[k].off + n_rows` elements when `slots[k + 1]` is set; when any
/// slot is set, `partials` must be a buffer with `groups` groups holding every slot.
unsafe fn spmv_dots_at<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    x: Operand<'_>,
    y: Operand<'_>,
    w: [Operand<'_>; 2],
    partials: KernelArg<'_>,
    slots: [Option<Slot>; 3],
    groups: usize,
) -> Result<()> {
    let MatrixArgs {
        mut args,
        kernels: [kernel, _],
        plain_groups,
    } = matrix_args(rt, a)?;
    // SAFETY: x and y as this function requires.
    unsafe { long_rows(rt, a, x, y)? };
    args.extend([
        x.buffer,
        KernelArg::U64(x.off),
        y.buffer,
        KernelArg::U64(y.off),
        w[0].buffer,
        KernelArg::U64(w[0].off),
        w[1].buffer,
        KernelArg::U64(w[1].off),
        partials,
        KernelArg::opt_slot(slots[0])?,
        KernelArg::opt_slot(slots[1])?,
        KernelArg::opt_slot(slots[2])?,
    ]);
    let grid = match slots.iter().any(Option::is_some) {
        true => groups,
        false => plain_groups,
    };
    // SAFETY: spmv_dots_<fmt>(matrix..., x, ulong x_off, y, ulong y_off, w0, ulong w0_off, w1,
    // ulong w1_off, partials, int slot_yy, int slot_w0, int slot_w1): as this function
    // requires; an operand whose slot is off is never read.
    unsafe { rt.launch::<T>(kernel, grid, &args) }
}

/// [`SpmvOps::spmv`](super::SpmvOps::spmv): y = A x.
pub(crate) fn spmv<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
) -> Result<()> {
    check_spmv(a, x, y)?;
    let unused = Operand::UNUSED;
    // SAFETY: x has n_cols and y n_rows elements (checked); every slot is off, so neither the
    // partner vectors nor the partials are read.
    unsafe {
        spmv_dots_at(
            rt,
            a,
            Operand::at(x, 0),
            Operand::at(y, 0),
            [unused; 2],
            KernelArg::Unused,
            [None; 3],
            1,
        )
    }
}

/// [`SpmvOps::spmv_dots`](super::SpmvOps::spmv_dots): y = A x with the first stage of `dots`.
pub(crate) fn spmv_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
    dots: SpmvDots<'_, T>,
    partials: &mut Partials<T>,
) -> Result<()> {
    checks::spmv_dots(a, x, y, &dots, partials)?;
    let mut w = [Operand::UNUSED; 2];
    for (wk, with) in w.iter_mut().zip(dots.with) {
        if let Some((v, _)) = with {
            *wk = Operand::at(v, 0);
        }
    }
    let slots = [
        dots.yy,
        dots.with[0].map(|w| w.1),
        dots.with[1].map(|w| w.1),
    ];
    // SAFETY: x has n_cols, y and every partner n_rows elements; the slots are distinct,
    // inside the partials buffer and planned for n rows (checked); the grid is its groups.
    unsafe {
        spmv_dots_at(
            rt,
            a,
            Operand::at(x, 0),
            Operand::at(y, 0),
            w,
            buf(partials.buffer()),
            slots,
            partials.groups(),
        )
    }
}

/// [`SpmvOps::residual`](super::SpmvOps::residual): r = b - A x with the first stage of
/// <r, r> into `rr`.
pub(crate) fn residual<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
    let MatrixArgs {
        mut args,
        kernels: [_, kernel],
        plain_groups,
    } = matrix_args(rt, a)?;
    let (xo, ro) = (Operand::at(x, 0), Operand::at(r, 0));
    // SAFETY: x has n_cols and r n_rows elements (checked).
    unsafe { long_rows(rt, a, xo, ro)? };
    let (pp, grid) = match rr {
        Some(_) => (buf(partials.buffer()), partials.groups()),
        None => (KernelArg::Unused, plain_groups),
    };
    args.extend([xo.buffer, buf(b), ro.buffer, pp, KernelArg::opt_slot(rr)?]);
    // SAFETY: residual_<fmt>(matrix..., x, b, r, partials, int slot_rr): x has n_cols, b and r
    // n_rows elements (checked); the partials are touched only with a checked slot, on the
    // partials' groups.
    unsafe { rt.launch::<T>(kernel, grid, &args) }
}

/// [`PrecondOps::csr_update`](crate::backend::PrecondOps::csr_update) with kernel `csr_update`;
/// `false` (nothing launched) for a matrix it does not take: not plain CSR (row blocks), or long
/// rows with `base` `None` (their pre-pass writes `out`).
pub(crate) fn csr_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    x: &Buffer<T>,
    update: CsrUpdate<'_, T>,
    out: &mut Buffer<T>,
) -> Result<bool> {
    check_csr_update(a, x, update, out)?;
    let DeviceFormat::Csr {
        long_rows: long,
        row_blocks: None,
        ..
    } = &a.format
    else {
        return Ok(false);
    };
    if long.is_some() && matches!(update, CsrUpdate::Add { base: None }) {
        return Ok(false);
    }
    let MatrixArgs {
        mut args,
        plain_groups,
        ..
    } = matrix_args(rt, a)?;
    let (xo, outo) = (Operand::at(x, 0), Operand::at(out, 0));
    // SAFETY: x has n_cols and out n_rows elements (checked).
    unsafe { long_rows(rt, a, xo, outo)? };
    let (base, b, s, mode, in_place) = match update {
        CsrUpdate::Sweep { b, s } => (xo.buffer, buf(b), buf(s), 0, 0),
        CsrUpdate::Add { base: Some(base) } => (buf(base), outo.buffer, outo.buffer, 1, 0),
        CsrUpdate::Add { base: None } => (outo.buffer, outo.buffer, outo.buffer, 1, 1),
    };
    args.extend([
        xo.buffer,
        base,
        b,
        s,
        outo.buffer,
        KernelArg::U32(mode),
        KernelArg::U32(in_place),
    ]);
    // SAFETY: csr_update(row_ptr, col_idx, values, uint n_rows, uint k, uint long_len, uint
    // early, x, base, b, s, out, uint mode, uint in_place): x has n_cols, base, b, s and out
    // n_rows elements (checked; out stands in for the ones the mode never reads).
    unsafe { rt.launch::<T>(Kernel::CsrUpdate, plain_groups, &args)? };
    Ok(true)
}

/// [`KrylovOps::basis_spmv_dots`](crate::backend::KrylovOps::basis_spmv_dots): v_i = A z (z =
/// `src`, or v_{i-1}) with <v_{i-1}, v_i> into `prev_slot` and <v_i, v_i> into `self_slot`.
pub(crate) fn basis_spmv_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    src: Option<&Buffer<T>>,
    basis: &mut Basis<T>,
    i: usize,
    partials: &mut Partials<T>,
    prev_slot: Option<Slot>,
    self_slot: Option<Slot>,
) -> Result<()> {
    let n = checks::basis_spmv_dots(a, src, basis, i, partials, prev_slot, self_slot)?;
    let v = basis.buffer();
    let prev = Operand::at(v, (i - 1) * n);
    let x = src.map_or(prev, |z| Operand::at(z, 0));
    let w0 = match prev_slot {
        Some(_) => prev,
        None => Operand::UNUSED,
    };
    let pp = match prev_slot.or(self_slot) {
        Some(_) => buf(partials.buffer()),
        None => KernelArg::Unused,
    };
    // SAFETY: spmv_dots_<fmt> with x = z or column i-1, y = column i, w0 = column i-1 of the
    // basis (columns i-1 and i exist, the matrix is n x n: checked), so y never overlaps what
    // is read; <y, y> into self_slot and <y, v_{i-1}> into prev_slot, distinct and inside the
    // partials (checked); the partials' groups when a slot is set.
    unsafe {
        spmv_dots_at(
            rt,
            a,
            x,
            Operand::at(v, i * n),
            [w0, Operand::UNUSED],
            pp,
            [self_slot, prev_slot, None],
            partials.groups(),
        )
    }
}

/// [`KrylovOps::gmres_dcgs2_spmv_dots`](crate::backend::KrylovOps::gmres_dcgs2_spmv_dots) for a
/// matrix and column the backend fuses
/// ([`KrylovOps::fuses_dcgs2_spmv_dots`](crate::backend::KrylovOps::fuses_dcgs2_spmv_dots),
/// asked by the caller): plain CSR (`gmres_dcgs2_spmv_dots`) or SELL
/// (`gmres_dcgs2_spmv_dots_sell`).
pub(crate) fn gmres_dcgs2_spmv_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    basis: &mut Basis<T>,
    ucol: usize,
    pa: &mut Partials<T>,
    pb: &mut Partials<T>,
) -> Result<()> {
    let n = checks::gmres_dcgs2_spmv_dots(a, basis, ucol, pa, pb)?;
    let column = KernelArg::index("column", ucol)?;
    let Some((row_ptr, col_idx, values)) = a.plain_csr() else {
        // SELL (the backend fuses it only with sorting windows within a group's tiles).
        let MatrixArgs { mut args, .. } = matrix_args(rt, a)?;
        args.extend([
            buf(basis.buffer()),
            column,
            buf(pa.buffer()),
            buf(pb.buffer()),
        ]);
        // SAFETY: gmres_dcgs2_spmv_dots_sell(SELL arguments of spmv_dots_sell up to slice_col,
        // basis, uint ucol, pa, pb): a is an n x n SELL matrix whose sorting windows divide the
        // group size, columns 1..=ucol + 1 exist, slots 0..ucol-1 of pa and pb exist with the
        // launch's group count (checked), ucol within one pass of the group (the caller asked
        // the backend).
        return unsafe { rt.launch::<T>(Kernel::GmresDcgs2SpmvDotsSell, pa.groups(), &args) };
    };
    let (lanes, early) = rt.csr_lanes_and_early(a.nnz(), n, a.uploaded, false);
    // SAFETY: gmres_dcgs2_spmv_dots(row_ptr, col_idx, values, uint k, uint early, basis, uint
    // n, uint ucol, pa, pb): a is an n x n CSR matrix without long rows, columns 1..=ucol + 1
    // exist (u = ucol is read, w = ucol + 1 written, never read as a column), slots 0..ucol-1
    // of pa and pb exist and both partials have the launch's group count (checked); ucol as
    // the backend fuses (asked by the caller).
    unsafe {
        rt.launch::<T>(
            Kernel::GmresDcgs2SpmvDots,
            pa.groups(),
            &[
                buf(row_ptr),
                buf(col_idx),
                buf(values),
                KernelArg::U32(lanes),
                KernelArg::U32(early),
                buf(basis.buffer()),
                KernelArg::len("vector length", n)?,
                column,
                buf(pa.buffer()),
                buf(pb.buffer()),
            ],
        )
    }
}
