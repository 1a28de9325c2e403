//! The launches of the FSAI and aFSAI setup kernels (`kernels/fsai.kc`).

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::buf;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::ops::fsai::{
    check_afsai_compact, check_afsai_grow, check_afsai_place, check_fsai, check_fsai_transpose,
};
use crate::backend::ops::Kernel;
use crate::backend::{AfsaiGrowKernel, AfsaiGrowth, DeviceFormat, DeviceMatrix, FsaiPattern};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// Kernel `fsai_rows`.
pub(crate) fn fsai_rows<T: Scalar>(
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
pub(crate) fn afsai_compact<T: Scalar>(
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
pub(crate) fn afsai_place<T: Scalar>(
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
pub(crate) fn fsai_transpose<T: Scalar>(
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
