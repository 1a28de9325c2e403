//! The launches of Jacobi, block-Jacobi and the factor kernels: `diag_scale*`,
//! `block_diag_scale`, the block triangular solves, BILU(0)'s scatter and sweep, ISAI's solve.

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::buf;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::ops::bilu::{check_bilu0_scatter, check_bilu0_sweep};
use crate::backend::ops::isai::check_isai;
use crate::backend::ops::trsv::{check_block_diag_scale, check_level, check_sweep, check_trsv};
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{BiluParts, BlockTriangular, DeviceMatrix, InversePattern};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// Kernel `diag_scale`.
pub(crate) fn diag_scale<T: Scalar>(
    rt: &GpuRuntime<'_>,
    d: &Buffer<T>,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
) -> Result<()> {
    let n = d.len();
    check_len("diag_scale: x length", x, n)?;
    check_len("diag_scale: y length", y, n)?;
    let args = [buf(d), buf(x), buf(y), KernelArg::len("vector length", n)?];
    // SAFETY: diag_scale(const SCALAR* d, const SCALAR* x, SCALAR* y, uint n): all three
    // hold n elements (checked).
    unsafe { rt.launch::<T>(Kernel::DiagScale, rt.elementwise_groups(n), &args) }
}

/// Kernel `diag_scale_dot`.
pub(crate) fn diag_scale_dot<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        buf(d),
        buf(x),
        buf(y),
        KernelArg::len("vector length", n)?,
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: diag_scale_dot(d, x, y, uint n, partials, uint slot): vectors hold n
    // elements, the slot is inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::DiagScaleDot, partials.groups(), &args) }
}

/// Kernel `block_diag_scale`.
pub(crate) fn block_diag_scale<T: Scalar>(
    rt: &GpuRuntime<'_>,
    block_size: usize,
    inv_blocks: &Buffer<T>,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
) -> Result<()> {
    check_block_diag_scale(block_size, inv_blocks, x, y)?;
    let (s, n) = (block_size, x.len());
    let args = [
        KernelArg::index("block size", s)?,
        KernelArg::len("vector length", n / s)?,
        buf(inv_blocks),
        buf(x),
        buf(y),
    ];
    // SAFETY: block_diag_scale(uint bs, uint n_block_rows, inv_blocks, x, y): x and y hold
    // n = n_block_rows * bs elements and inv_blocks n * bs (checked); 1 <= bs <= 8.
    unsafe { rt.launch::<T>(Kernel::BlockDiagScale, rt.elementwise_groups(n), &args) }
}

/// Kernel `bsr_trsv_sweep`.
pub(crate) fn bsr_trsv_sweep<T: Scalar>(
    rt: &GpuRuntime<'_>,
    t: &BlockTriangular<T>,
    b: &Buffer<T>,
    x_old: Option<&Buffer<T>>,
    x_new: &mut Buffer<T>,
) -> Result<()> {
    check_sweep(t, b, x_old, x_new)?;
    let b_ptr = buf(b);
    let [rp, ci, v, inv, unit] = triangular_args(t);
    let args = [
        KernelArg::index("block size", t.block_size)?,
        KernelArg::len("vector length", t.n_block_rows)?,
        rp,
        ci,
        v,
        inv,
        unit,
        b_ptr,
        // Not read when from_zero is set.
        match x_old {
            Some(x) => buf(x),
            None => b_ptr,
        },
        KernelArg::U32(u32::from(x_old.is_none())),
        buf(x_new),
    ];
    // SAFETY: bsr_trsv_sweep(bs, n_block_rows, row_ptr, col_idx, values, inv_diag,
    // unit_diag, b, x_old, from_zero, x_new): the factor was validated at upload (indices in
    // range, values and inv_diag sized), b, x_old and x_new hold n_block_rows * bs (checked).
    unsafe {
        rt.launch::<T>(
            Kernel::BsrTrsvSweep,
            rt.elementwise_groups(t.n_block_rows.max(1)),
            &args,
        )
    }
}

/// Kernel `bsr_trsv_level`.
pub(crate) fn bsr_trsv_level<T: Scalar>(
    rt: &GpuRuntime<'_>,
    t: &BlockTriangular<T>,
    level_rows: &Buffer<u32>,
    level: Range<usize>,
    b: &Buffer<T>,
    x: &mut Buffer<T>,
) -> Result<()> {
    check_trsv(t, b, x)?;
    check_level(level_rows, &level)?;
    let len = level.end - level.start;
    let [rp, ci, v, inv, unit] = triangular_args(t);
    let args = [
        KernelArg::index("block size", t.block_size)?,
        buf(level_rows),
        KernelArg::len("vector length", level.start)?,
        KernelArg::len("vector length", len)?,
        rp,
        ci,
        v,
        inv,
        unit,
        buf(b),
        buf(x),
    ];
    // SAFETY: bsr_trsv_level(bs, level_rows, level_begin, level_len, row_ptr, col_idx,
    // values, inv_diag, unit_diag, b, x): the level range lies inside level_rows (checked),
    // whose entries are block rows of the factor (built by the preconditioner setup); the
    // factor was validated at upload; b and x hold n_block_rows * bs (checked).
    unsafe {
        rt.launch::<T>(
            Kernel::BsrTrsvLevel,
            rt.elementwise_groups(len.max(1)),
            &args,
        )
    }
}

/// Kernel `bilu0_scatter`.
pub(crate) fn bilu0_scatter<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    l: &mut BlockTriangular<T>,
    u: &mut BlockTriangular<T>,
    diag: &mut Buffer<T>,
) -> Result<()> {
    let (a_rp, a_ci, a_v) = check_bilu0_scatter(a, l, u, diag)?;
    let n = l.n();
    let args = [
        KernelArg::index("block size", l.block_size)?,
        KernelArg::len("vector length", n)?,
        buf(a_rp),
        buf(a_ci),
        buf(a_v),
        buf(&l.row_ptr),
        buf(&l.col_idx),
        buf(&u.row_ptr),
        buf(&u.col_idx),
        buf(&l.values),
        buf(&u.values),
        buf(diag),
    ];
    // SAFETY: bilu0_scatter(bs, n_rows, a_row_ptr, a_col_idx, a_values, l_row_ptr,
    // l_col_idx, u_row_ptr, u_col_idx, l_values, u_values, d_values): A is a validated CSR
    // upload with n_rows rows and columns; both factors were validated at creation (indices
    // in range, values sized for their blocks) and have n_rows / bs block rows, diag holds
    // s*s per block row (checked).
    unsafe { rt.launch::<T>(Kernel::Bilu0Scatter, rt.elementwise_groups(n.max(1)), &args) }
}

/// Kernel `bilu0_sweep`.
pub(crate) fn bilu0_sweep<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        KernelArg::index("block size", l.block_size)?,
        KernelArg::len("vector length", l.n_block_rows)?,
        buf(&l.row_ptr),
        buf(&l.col_idx),
        buf(&u.row_ptr),
        buf(&u.col_idx),
        buf(a.lower),
        buf(a.upper),
        buf(a.diag),
        buf(prev.lower),
        buf(prev.upper),
        buf(prev.diag),
        KernelArg::U32(u32::from(old.is_none())),
        KernelArg::U32(u32::from(report)),
        buf(&l.values),
        buf(&u.values),
        buf(inv_new),
        buf(bad_row),
    ];
    // SAFETY: bilu0_sweep(bs, n_block_rows, l_row_ptr, l_col_idx, u_row_ptr, u_col_idx,
    // a_l, a_u, a_d, l_old, u_old, inv_old, first, report, l_new, u_new, inv_new,
    // bad_row): the factors were validated at creation (indices below n_block_rows, values
    // sized for their blocks, U's inverted diagonal present); every part is sized like the
    // factor it belongs to and bad_row holds at least one entry (checked). The outputs are
    // the factors' own buffers, distinct from the inputs (Rust borrows).
    unsafe {
        rt.launch::<T>(
            Kernel::Bilu0Sweep,
            rt.elementwise_groups(l.n_block_rows.max(1)),
            &args,
        )
    }
}

/// Kernel `isai_solve`.
pub(crate) fn isai_solve<T: Scalar>(
    rt: &GpuRuntime<'_>,
    t: &BlockTriangular<T>,
    upper: bool,
    pattern: &InversePattern,
    out: &mut Buffer<T>,
) -> Result<()> {
    check_isai(t, pattern, out)?;
    let work = pattern.n_block_cols * t.block_size;
    KernelArg::len("vector length", work)?;
    let [rp, ci, v, inv, unit] = triangular_args(t);
    let args = [
        KernelArg::index("block size", t.block_size)?,
        KernelArg::len("vector length", pattern.n_block_cols)?,
        rp,
        ci,
        v,
        inv,
        unit,
        KernelArg::U32(u32::from(upper)),
        buf(&pattern.col_ptr),
        buf(&pattern.row_idx),
        buf(&pattern.dest),
        buf(out),
    ];
    // SAFETY: isai_solve(bs, n_block_cols, row_ptr, col_idx, values, inv_diag, unit_diag,
    // upper, col_ptr, row_idx, dest, out): the factor and the pattern were validated at
    // upload (indices in range, dest a permutation of the blocks), the pattern matches the
    // factor and out holds every block of N (checked).
    unsafe { rt.launch::<T>(Kernel::IsaiSolve, rt.elementwise_groups(work.max(1)), &args) }
}

/// The factor's arguments `row_ptr .. unit_diag` of the `trsv` kernels.
fn triangular_args<T: Scalar>(t: &BlockTriangular<T>) -> [KernelArg<'_>; 5] {
    let values = buf(&t.values);
    [
        buf(&t.row_ptr),
        buf(&t.col_idx),
        values,
        // Not read when unit_diag is set.
        t.inv_diag.as_ref().map_or(values, buf),
        KernelArg::U32(u32::from(t.inv_diag.is_none())),
    ]
}
