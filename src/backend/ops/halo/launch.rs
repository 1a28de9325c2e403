//! The GPU launches of the halo family (`kernels/halo.kc`), written once for every runtime
//! against [`GpuRuntime`]: the arguments checked (the checks of `ops/halo.rs`), then one launch
//! by typed name. [`HaloOps`](super::HaloOps)' default bodies call them on a GPU backend; the
//! host backend implements the trait itself. The device-to-device links (CUDA) are the
//! backend's own.

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::{
    check_gather, check_ghost, check_ghost_basis, check_ghost_dcgs2, check_ghost_dots,
    check_partials_finish, check_rank_sums, GatherList, GhostBlock,
};
use crate::backend::buffer::Buffer;
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::ops::krylov::Basis;
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::SpmvDots;
use crate::error::Result;
use crate::scalar::Scalar;

/// `b` as a kernel argument.
fn buf<T: bytemuck::Pod>(b: &Buffer<T>) -> KernelArg<'_> {
    KernelArg::buffer(b)
}

/// A length as a kernel `uint`.
fn len(n: usize) -> Result<KernelArg<'static>> {
    KernelArg::len("halo length", n)
}

/// The ghost block's arrays as its kernels take them first: rows, row_ptr, col_idx, values.
fn ghost_args<T: Scalar>(ghost: &GhostBlock<T>) -> [KernelArg<'_>; 4] {
    [
        buf(&ghost.rows),
        buf(&ghost.row_ptr),
        buf(&ghost.col_idx),
        buf(&ghost.values),
    ]
}

/// Kernel `halo_gather`.
pub(super) fn halo_gather<T: Scalar>(
    rt: &GpuRuntime<'_>,
    list: &GatherList,
    x: &Buffer<T>,
    x_off: usize,
    out: &mut Buffer<T>,
) -> Result<()> {
    check_gather(list, x, x_off, out)?;
    let n = list.len();
    if n == 0 {
        return Ok(());
    }
    let args = [
        buf(&list.idx),
        buf(x),
        KernelArg::offset(x_off),
        buf(out),
        len(n)?,
    ];
    // SAFETY: halo_gather(const uint* idx, const SCALAR* x, ulong x_off, SCALAR* out, uint n):
    // idx and out hold n elements, every idx below the list's bound (checked when the list was
    // built) and x_off + bound within x (checked above).
    unsafe { rt.launch::<T>(Kernel::HaloGather, rt.elementwise_groups(n), &args) }
}

/// Kernel `halo_partials_finish`: a warp's 32 work-items per slot where the kernel sums with
/// warp shuffles (`HALO_SLOT_ITEMS`), so the grid covers `slots` warps; elsewhere one
/// work-item per slot, and the grid's other work-items have nothing to do.
pub(super) fn halo_partials_finish<T: Scalar>(
    rt: &GpuRuntime<'_>,
    partials: &Buffer<T>,
    in_off: usize,
    groups: usize,
    slots: usize,
    out: &mut Buffer<f64>,
    out_off: usize,
) -> Result<()> {
    check_partials_finish(partials, in_off, groups, slots, out, out_off)?;
    if slots == 0 {
        return Ok(());
    }
    let warps = (rt.work_group_size() / 32).max(1);
    let args = [
        buf(partials),
        KernelArg::offset(in_off),
        len(groups)?,
        len(slots)?,
        buf(out),
        len(out_off)?,
    ];
    // SAFETY: halo_partials_finish(const SCALAR* partials, ulong in_off, uint groups,
    // uint slots, double* out, uint out_off): partials hold in_off + groups x slots entries and
    // out at least out_off + slots (both checked); a grid-stride loop over the slots.
    unsafe { rt.launch::<T>(Kernel::HaloPartialsFinish, slots.div_ceil(warps), &args) }
}

/// Kernel `halo_rank_sums`.
pub(super) fn halo_rank_sums<T: Scalar>(
    rt: &GpuRuntime<'_>,
    local: &Buffer<f64>,
    gathered: &Buffer<f64>,
    ranks: usize,
    me: usize,
    count: usize,
    sums: &mut Buffer<T>,
    out_off: usize,
    zero: bool,
) -> Result<()> {
    check_rank_sums(local, gathered, ranks, me, count, sums, out_off, zero)?;
    let work = count + usize::from(zero);
    if work == 0 {
        return Ok(());
    }
    let args = [
        buf(local),
        buf(gathered),
        len(ranks)?,
        len(me)?,
        len(local.len())?,
        len(count)?,
        buf(sums),
        KernelArg::offset(out_off),
        KernelArg::U32(u32::from(zero)),
    ];
    // SAFETY: halo_rank_sums(const double* own, const double* gathered, uint ranks, uint me,
    // uint stride, uint count, SCALAR* sums, ulong out_off, uint zero): own holds stride >=
    // count entries, gathered ranks x stride, sums out_off + count (+ 1 with zero), all checked.
    unsafe { rt.launch::<T>(Kernel::HaloRankSums, rt.elementwise_groups(work), &args) }
}

/// Kernel `halo_spmv_add`.
pub(super) fn halo_spmv_add<T: Scalar>(
    rt: &GpuRuntime<'_>,
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    y: &mut Buffer<T>,
) -> Result<()> {
    check_ghost(ghost, xg, y)?;
    let n = ghost.n_rows();
    if n == 0 {
        return Ok(());
    }
    let mut args = [KernelArg::U32(0); 7];
    args[..4].copy_from_slice(&ghost_args(ghost));
    args[4..].copy_from_slice(&[buf(xg), buf(y), len(n)?]);
    // SAFETY: halo_spmv_add(rows, row_ptr, col_idx, values, xg, y, uint n_rows): rows are
    // distinct and below y's length, row_ptr monotone up to the entry count, columns below xg's
    // length (all checked when the block was built; lengths checked above).
    unsafe { rt.launch::<T>(Kernel::HaloSpmvAdd, rt.elementwise_groups(n), &args) }
}

/// Kernel `halo_spmv_add_dots` on y and the partners w0, w1 (each a buffer and an element
/// offset); the slots in the order yy, w0, w1.
///
/// # Safety
/// y and the partners must hold the ghost block's n_local elements from their offsets; the
/// ghost block and the partials as checked by `check_ghost_dots` / `check_ghost_basis`.
unsafe fn add_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    y: (KernelArg<'_>, usize),
    w: [(KernelArg<'_>, usize); 2],
    partials: &Partials<T>,
    slots: [Option<Slot>; 3],
) -> Result<()> {
    if ghost.n_rows() == 0 {
        return Ok(()); // no row changes, no correction
    }
    let mut args = [KernelArg::U32(0); 16];
    args[..4].copy_from_slice(&ghost_args(ghost));
    args[4..].copy_from_slice(&[
        buf(xg),
        y.0,
        KernelArg::offset(y.1),
        len(ghost.n_rows())?,
        w[0].0,
        KernelArg::offset(w[0].1),
        w[1].0,
        KernelArg::offset(w[1].1),
        buf(partials.buffer()),
        KernelArg::opt_slot(slots[0])?,
        KernelArg::opt_slot(slots[1])?,
        KernelArg::opt_slot(slots[2])?,
    ]);
    // SAFETY: halo_spmv_add_dots(rows, row_ptr, col_idx, values, xg, y, ulong y_off,
    // uint n_rows, w0, ulong w0_off, w1, ulong w1_off, partials, int slot_yy, int slot_w0,
    // int slot_w1): the ghost block as in halo_spmv_add (checked when built), the vectors as the
    // caller promises, the slots distinct and inside the partials buffer (checked); the grid is
    // its groups.
    unsafe { rt.launch::<T>(Kernel::HaloSpmvAddDots, partials.groups(), &args) }
}

/// Kernel `halo_spmv_add_dots` on y and the partners of `dots`.
pub(super) fn halo_spmv_add_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    y: &mut Buffer<T>,
    dots: SpmvDots<'_, T>,
    partials: &mut Partials<T>,
) -> Result<()> {
    let slots = check_ghost_dots(ghost, xg, y, &dots, partials)?;
    let partner = |k: usize| match dots.with[k] {
        Some((v, _)) => (buf(v), 0),
        None => (buf(y), 0),
    };
    let w = [partner(0), partner(1)];
    // SAFETY: y and the partners hold n_local elements (checked).
    unsafe { add_dots(rt, ghost, xg, (buf(y), 0), w, partials, slots) }
}

/// Kernel `halo_spmv_add_dots` on basis column `i` with partners column i-1 and itself.
pub(super) fn halo_basis_add_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    basis: &mut Basis<T>,
    i: usize,
    partials: &mut Partials<T>,
    prev_slot: Option<Slot>,
    self_slot: Option<Slot>,
) -> Result<()> {
    let slots = check_ghost_basis(ghost, xg, basis, i, partials, prev_slot, self_slot)?;
    let (v, n) = (buf(&basis.data), basis.n());
    let y = (v, i * n);
    // SAFETY: columns i-1 and i of the basis exist and hold n = n_local elements each
    // (checked); y = column i is written, column i-1 only read.
    unsafe { add_dots(rt, ghost, xg, y, [(v, (i - 1) * n), y], partials, slots) }
}

/// Kernel `halo_dcgs2_add_dots`.
pub(super) fn halo_dcgs2_add_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    basis: &mut Basis<T>,
    ucol: usize,
    pb: &mut Partials<T>,
) -> Result<()> {
    check_ghost_dcgs2(ghost, xg, basis, ucol, pb)?;
    if ghost.n_rows() == 0 {
        return Ok(()); // no row changes, no correction
    }
    let mut args = [KernelArg::U32(0); 10];
    args[..4].copy_from_slice(&ghost_args(ghost));
    args[4..].copy_from_slice(&[
        buf(xg),
        buf(&basis.data),
        len(basis.n())?,
        len(ucol)?,
        len(ghost.n_rows())?,
        buf(pb.buffer()),
    ]);
    // SAFETY: halo_dcgs2_add_dots(rows, row_ptr, col_idx, values, xg, basis, uint n, uint ucol,
    // uint n_rows, pb): the ghost block as in halo_spmv_add (checked when built), xg of its
    // ghost length, columns 1..=ucol+1 of n = n_local elements and slots 0..ucol of pb exist
    // (checked); the grid is pb's groups.
    unsafe { rt.launch::<T>(Kernel::HaloDcgs2AddDots, pb.groups(), &args) }
}
