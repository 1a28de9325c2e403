//! The GPU launches of the preconditioner kernels (`kernels/precond.kc`, `trsv.kc`, `bilu.kc`,
//! `isai.kc`, `fsai.kc`, `ip.kc`, `ip_assemble.kc`), written once for every runtime against
//! [`GpuRuntime`]: the arguments checked (the checks live in the families' files), then one
//! launch by typed name. [`PrecondOps`](super::PrecondOps)'s default bodies call them on a GPU
//! backend.

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::{GpuRuntime, KernelArg};
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
    AfsaiGrowKernel, AfsaiGrowth, BiluParts, BlockTriangular, DeviceFormat, DeviceMatrix,
    FsaiPattern, InversePattern, IpStencil, PcgStepVectors, StencilCoefficients,
};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// `b` as a kernel argument.
fn buf<T: bytemuck::Pod>(b: &Buffer<T>) -> KernelArg<'_> {
    KernelArg::buffer(b)
}

/// Kernel `diag_scale`.
pub(super) fn diag_scale<T: Scalar>(
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
pub(super) fn diag_scale_dot<T: Scalar>(
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
pub(super) fn block_diag_scale<T: Scalar>(
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
pub(super) fn bsr_trsv_sweep<T: Scalar>(
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
pub(super) fn bsr_trsv_level<T: Scalar>(
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
pub(super) fn bilu0_scatter<T: Scalar>(
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
pub(super) fn bilu0_sweep<T: Scalar>(
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

/// Kernel `ip_domain_check`.
pub(super) fn ip_domain_check<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let (row_ptr, col_idx, values, n) = check_ip_assemble(a, None, partials, slot)?;
    let args = [
        KernelArg::len("vector length", n)?,
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_domain_check(n, row_ptr, col_idx, values, partials, slot): a is a square
    // CSR matrix validated at upload (row pointers ascending inside the arrays, columns
    // below n), the slot is inside the partials (checked).
    unsafe { rt.launch::<T>(Kernel::IpDomainCheck, partials.groups(), &args) }
}

/// Kernel `ip_assemble`.
pub(super) fn ip_assemble<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    scaled: bool,
    m_values: &mut Buffer<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let (row_ptr, col_idx, values, n) = check_ip_assemble(a, Some(m_values), partials, slot)?;
    let args = [
        KernelArg::len("vector length", n)?,
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(m_values),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
        KernelArg::index("scaled", usize::from(scaled))?,
    ];
    // SAFETY: ip_assemble(n, row_ptr, col_idx, values, m_values, partials, slot, scaled): as
    // ip_domain_check, and m_values holds one value per entry of A (checked). A row without
    // its diagonal only gives a wrong value (the search returns the row's end, inside the
    // arrays for every row but the last, where it is the array's end: the caller runs
    // ip_domain_check first).
    unsafe { rt.launch::<T>(Kernel::IpAssemble, partials.groups(), &args) }
}

/// Kernel `isai_solve`.
pub(super) fn isai_solve<T: Scalar>(
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

/// Kernel `fsai_rows`.
pub(super) fn fsai_rows<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
    let wg = rt.work_group_size();
    let team = pattern.batch_is_team(batch) && wg >= 32 && wg % 32 == 0;
    let args = [
        KernelArg::len("vector length", begin)?,
        KernelArg::len("vector length", rows)?,
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(&pattern.row_ptr),
        buf(&pattern.col_idx),
        buf(&pattern.gt_pos),
        buf(&pattern.scratch_off),
        buf(scratch),
        buf(g_values),
        buf(gt_values),
    ];
    // SAFETY: fsai_rows(row_begin, rows, A csr, g_row_ptr, g_col_idx, gt_pos, scratch_off,
    // scratch, g, gt): the pattern was validated at upload (rows non-empty, ascending, in
    // range; gt_pos a permutation; offsets of this batch within its scratch size), A is a
    // CSR of the pattern's size whose indices were validated at upload, the scratch holds
    // the batch and g, gt hold every entry (checked). fsai_rows_team takes the same
    // arguments, one team of 32 per row.
    unsafe {
        if team {
            rt.launch::<T>(
                Kernel::FsaiRowsTeam,
                rt.elementwise_groups(rows.max(1) * 32),
                &args,
            )
        } else {
            rt.launch::<T>(Kernel::FsaiRows, rt.elementwise_groups(rows.max(1)), &args)
        }
    }
}

/// Kernel `afsai_grow`.
pub(crate) fn afsai_grow<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        KernelArg::len("vector length", rows.start)?,
        KernelArg::len("vector length", count)?,
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        KernelArg::index("afsai_max_steps", growth.max_steps)?,
        KernelArg::index("afsai_step_size", growth.per_step)?,
        KernelArg::scalar(T::from_f64(growth.eps)),
        KernelArg::U32(growth.stop.code()),
    ];
    if !team {
        args.extend([buf(scratch), buf(iscratch)]);
    }
    args.extend([buf(out_cols), buf(out_len)]);
    if team {
        // SAFETY: afsai_grow_team(row_begin, rows, A csr, uint max_steps, uint per_step,
        // eps, stop_rule, out_cols, out_len): A is a square CSR whose indices were
        // validated at upload, the rows lie inside it, cap <= 31 (checked: the kernel's
        // shared arrays), out_cols holds rows * cap and out_len rows entries (checked).
        // One warp per row: the grid covers 32 threads per row.
        return unsafe {
            rt.launch::<T>(
                Kernel::AfsaiGrowTeam,
                rt.elementwise_groups(count * 32),
                &args,
            )
        };
    }
    // SAFETY: afsai_grow(row_begin, rows, A csr, uint max_steps, uint per_step, eps,
    // stop_rule, scratch, iscratch, out_cols, out_len): A is a square CSR whose indices were validated
    // at upload, the rows lie inside it, the scratch buffers hold `rows` rows of the
    // growth's layout, out_cols rows * cap and out_len rows entries (checked).
    unsafe { rt.launch::<T>(Kernel::AfsaiGrow, rt.elementwise_groups(count), &args) }
}

/// Kernel `afsai_compact`.
pub(super) fn afsai_compact<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        KernelArg::U32(count),
        KernelArg::U32(first),
        KernelArg::U32(n),
        KernelArg::U32(nnz),
        KernelArg::index("afsai_cap", cap)?,
        buf(out_cols),
        buf(out_len),
        buf(g_row_ptr),
        buf(g_col_idx),
        buf(col_count),
    ];
    // SAFETY: afsai_compact(rows, first_row, n, nnz, cap, out_cols, out_len, g_row_ptr,
    // g_col_idx, col_count): out_cols holds rows * cap entries, out_len rows, g_row_ptr
    // rows + 1, col_count n, g_col_idx nnz (checked); the kernel skips rows whose entries
    // would pass nnz and columns >= n.
    unsafe {
        rt.launch::<T>(
            Kernel::AfsaiCompact,
            rt.elementwise_groups(count as usize),
            &args,
        )
    }
}

/// Kernel `afsai_place`.
pub(super) fn afsai_place<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        KernelArg::U32(len),
        KernelArg::U32(offset),
        buf(src),
        buf(dst),
    ];
    // SAFETY: afsai_place(len, offset, src, dst): src holds len entries or more and dst
    // offset + len or more (checked).
    unsafe {
        rt.launch::<T>(
            Kernel::AfsaiPlace,
            rt.elementwise_groups(len as usize),
            &args,
        )
    }
}

/// Kernel `fsai_transpose`.
pub(super) fn fsai_transpose<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        KernelArg::U32(n),
        KernelArg::U32(nnz),
        buf(g_row_ptr),
        buf(g_col_idx),
        buf(cursor),
        buf(gt_row_idx),
        buf(gt_entry),
    ];
    // SAFETY: fsai_transpose_fill(n, nnz, g_row_ptr, g_col_idx, cursor, gt_row_idx,
    // gt_entry): g_row_ptr holds n + 1, cursor n, the others nnz entries (checked); the
    // kernel reads entries below min(g_row_ptr[i + 1], nnz), skips columns >= n and slots
    // >= nnz.
    unsafe {
        rt.launch::<T>(
            Kernel::FsaiTransposeFill,
            rt.elementwise_groups(n as usize),
            &fill,
        )?
    };
    let sort = [
        KernelArg::U32(n),
        KernelArg::U32(nnz),
        buf(gt_col_ptr),
        buf(gt_row_idx),
        buf(gt_entry),
        buf(gt_pos),
    ];
    // SAFETY: fsai_transpose_sort(n, nnz, gt_col_ptr, gt_row_idx, gt_entry, gt_pos):
    // gt_col_ptr holds n + 1, the others nnz entries (checked); the kernel skips columns
    // whose range is not inside 0..nnz and entries >= nnz.
    unsafe {
        rt.launch::<T>(
            Kernel::FsaiTransposeSort,
            rt.elementwise_groups(n as usize),
            &sort,
        )
    }
}

/// Kernel `ip_stencil`.
pub(super) fn ip_stencil<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &IpStencil<T>,
    r: &Buffer<T>,
    z: &mut Buffer<T>,
) -> Result<()> {
    check_ip_stencil(st, r, z)?;
    let [nx, ny, nz, wx, wy, wz] = ip_args(st);
    let args = [nx, ny, nz, wx, wy, wz, buf(r), buf(z)];
    // SAFETY: ip_stencil(nx, ny, nz, wx, wy, wz, r, z): r and z hold nx*ny*nz < 2^31
    // elements (checked).
    unsafe { rt.launch::<T>(Kernel::IpStencil, rt.elementwise_groups(r.len()), &args) }
}

/// Kernel `ip_stencil_dot`.
pub(super) fn ip_stencil_dot<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        buf(r),
        buf(z),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_stencil_dot(nx, ny, nz, wx, wy, wz, r, z, partials, slot): r and z hold
    // nx*ny*nz < 2^31 elements, the slot is inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::IpStencilDot, partials.groups(), &args) }
}

/// Kernel `ip_stencil_quad`.
pub(super) fn ip_stencil_quad<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        buf(v),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_stencil_quad(nx, ny, nz, wx, wy, wz, v, partials, slot): v holds
    // nx*ny*nz < 2^31 elements, the slot is inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::IpStencilQuad, partials.groups(), &args) }
}

/// Kernel `ip_pcg_update`.
pub(super) fn ip_pcg_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
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
        KernelArg::scalar(v.alpha),
        KernelArg::scalar(v.beta),
        buf(v.x),
        buf(v.r),
        buf(v.r_next),
        buf(v.p),
        buf(v.ap),
        buf(partials.buffer()),
        KernelArg::index("slot", slots.0 .0)?,
        KernelArg::index("slot", slots.1 .0)?,
    ];
    // SAFETY: ip_pcg_update(nx, ny, nz, wx, wy, wz, alpha, beta, x, r, r_next, p, ap,
    // partials, slot_rr, slot_rz): every vector holds nx*ny*nz < 2^31 elements, r_next is
    // not r, the slots are distinct and inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::IpPcgUpdate, partials.groups(), &args) }
}

/// Kernel `ip_stencil_check`.
pub(super) fn ip_stencil_check<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &StencilCoefficients<T>,
    a: &DeviceMatrix<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let (row_ptr, col_idx, values, _) = check_ip_stencil_check(st, a, partials, slot)?;
    let [nx, ny, nz] = st.dims;
    let [ax, ay, az] = st.neighbours;
    let args = [
        KernelArg::U32(nx as u32),
        KernelArg::U32(ny as u32),
        KernelArg::U32(nz as u32),
        KernelArg::scalar(st.center),
        KernelArg::scalar(ax),
        KernelArg::scalar(ay),
        KernelArg::scalar(az),
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_stencil_check(nx, ny, nz, d, ax, ay, az, row_ptr, col_idx, values,
    // partials, slot): a is a CSR matrix of nx*ny*nz < 2^31 rows validated at upload (row
    // pointers ascending inside the arrays), the slot is inside the partials (checked).
    unsafe { rt.launch::<T>(Kernel::IpStencilCheck, partials.groups(), &args) }
}

/// The grid and weights of the `ip_stencil` kernels (the grid was checked to fit in 32 bits).
fn ip_args<T: Scalar>(st: &IpStencil<T>) -> [KernelArg<'static>; 6] {
    let [nx, ny, nz] = st.dims;
    let [wx, wy, wz] = st.weights;
    [
        KernelArg::U32(nx as u32),
        KernelArg::U32(ny as u32),
        KernelArg::U32(nz as u32),
        KernelArg::scalar(wx),
        KernelArg::scalar(wy),
        KernelArg::scalar(wz),
    ]
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
