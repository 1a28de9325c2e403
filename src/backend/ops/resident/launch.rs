//! The GPU launches of the device-resident family (`kernels/resident.kc`), written once for every
//! runtime against [`GpuRuntime`]: the arguments checked (`ops::checks`, the slot and state
//! checks of `ops/resident.rs`), then one launch by typed name. [`ResidentOps`](super::ResidentOps)'s
//! default bodies call them on a GPU backend; the host backend implements the trait itself.
//! What differs per runtime is asked of the runtime: the CSR lanes and CUDA's early starts
//! ([`GpuRuntime::csr_lanes_and_early`]) and which measured defaults the tuning applies
//! ([`GpuRuntime::tuned_as_cuda`]).

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::{
    check_bicgstab_fused, check_bicgstab_slots, check_cg_fused, check_cg_slots, check_s_spmv,
    BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, ResidentState,
};
use crate::backend::buffer::Buffer;
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::ops::krylov::launch as krylov_launch;
use crate::backend::ops::{checks, Kernel};
use crate::backend::partials::{Partials, Slot};
use crate::backend::tuning::Tuning;
use crate::backend::DeviceMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// `b` as a kernel argument.
fn buf<T: bytemuck::Pod>(b: &Buffer<T>) -> KernelArg<'_> {
    KernelArg::buffer(b)
}

/// A history entry as a kernel `uint`.
fn hist(hist_index: usize) -> Result<KernelArg<'static>> {
    KernelArg::index("hist_index", hist_index)
}

/// The arguments of a CSR matrix without long rows as the fused resident kernels take them:
/// row_ptr, col_idx, values, n, k, early.
fn plain_csr_args<'a, T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &'a DeviceMatrix<T>,
    n: usize,
    may_start_next: bool,
) -> Result<[KernelArg<'a>; 6]> {
    let (row_ptr, col_idx, values) = a.plain_csr().ok_or_else(|| {
        Error::Unsupported("the fused resident kernels take CSR without long rows".into())
    })?;
    let (lanes, early) = rt.csr_lanes_and_early(a.nnz(), n, a.uploaded, may_start_next);
    Ok([
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        KernelArg::len("vector length", n)?,
        KernelArg::U32(lanes),
        KernelArg::U32(early),
    ])
}

/// The arguments of the fused resident iterations (`cg_fused_resident`,
/// `bicgstab_fused_resident`): the state, the `read` slots, the history entry, the matrix
/// (starting the next kernel early), the `vectors`, the partials and the `written` slots.
fn fused_args<'a, T: Scalar>(
    rt: &GpuRuntime<'_>,
    state: &'a ResidentState,
    read: &[Slot],
    hist_index: usize,
    a: &'a DeviceMatrix<T>,
    n: usize,
    vectors: &[&'a Buffer<T>],
    partials: &'a Partials<T>,
    written: &[Slot],
) -> Result<Vec<KernelArg<'a>>> {
    let mut args = vec![buf(&state.buffer)];
    for slot in read {
        args.push(KernelArg::slot(*slot)?);
    }
    args.push(hist(hist_index)?);
    args.extend(plain_csr_args(rt, a, n, true)?);
    args.extend(vectors.iter().map(|v| buf(v)));
    args.push(buf(partials.buffer()));
    for slot in written {
        args.push(KernelArg::slot(*slot)?);
    }
    Ok(args)
}

/// Launch `cg_sums_resident` for the next CG or PCG update (`CgSlots::finished`) where
/// `Tuning::cg_sums_kernel_for` picks it for the partials' group count; whether it did (the
/// update's `sums_ready`).
fn cg_sums<T: Scalar>(
    rt: &GpuRuntime<'_>,
    tuning: &Tuning,
    state: &mut ResidentState,
    partials: &Partials<T>,
    slots: CgSlots,
    with_pc: bool,
) -> Result<bool> {
    if !tuning.cg_sums_kernel_for(rt.tuned_as_cuda(), partials.groups()) {
        return Ok(false);
    }
    let [rr, curvature, p_ap, rz] = slots.finished(with_pc);
    let args = [
        buf(&state.buffer),
        buf(partials.buffer()),
        KernelArg::len("partial groups", partials.groups())?,
        KernelArg::slot(rr)?,
        KernelArg::slot(curvature)?,
        KernelArg::slot(p_ap)?,
        KernelArg::slot(rz)?,
        KernelArg::U32(u32::from(with_pc)),
    ];
    // SAFETY: cg_sums_resident(double* state, partials, uint groups, four uint slots, uint
    // with_pc): the slots were checked inside the partials (check_cg_slots), `groups` is the
    // partials' group count and the state holds layout::SUMS + 4 entries; one block.
    unsafe { rt.launch::<T>(Kernel::CgSumsResident, 1, &args) }?;
    Ok(true)
}

/// Kernel `cg_update_resident`.
pub(super) fn cg_update_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    tuning: &Tuning,
    state: &mut ResidentState,
    slots: CgSlots,
    hist_index: usize,
    x: &mut Buffer<T>,
    r: &mut Buffer<T>,
    p: &mut Buffer<T>,
    ap: &Buffer<T>,
    partials: &mut Partials<T>,
    rr: Slot,
) -> Result<()> {
    check_cg_slots(partials, slots, false, hist_index, state, &[rr])?;
    let n = checks::cg_update(x, r, p, ap, partials, rr)?;
    let sums_ready = cg_sums(rt, tuning, state, partials, slots, false)?;
    let args = [
        buf(&state.buffer),
        KernelArg::slot(slots.rr)?,
        KernelArg::slot(slots.ap_ap)?,
        KernelArg::slot(slots.p_ap)?,
        hist(hist_index)?,
        buf(x),
        buf(r),
        buf(p),
        buf(ap),
        KernelArg::len("vector length", n)?,
        buf(partials.buffer()),
        KernelArg::slot(rr)?,
        KernelArg::U32(u32::from(sums_ready)),
    ];
    // SAFETY: cg_update_resident(double* state, uint slot_rr_in, uint slot_apap, uint slot_pap,
    // uint hist_index, x, r, p, ap, uint n, partials, uint slot_rr, uint sums_ready): all
    // vectors hold n elements, the read slots are inside the partials and differ from the
    // written one, the history entry is inside the state (checked); grid = groups.
    unsafe { rt.launch::<T>(Kernel::CgUpdateResident, partials.groups(), &args) }
}

/// Whether `cg_fused_resident` runs on `a` here.
pub(super) fn fuses_cg<T: Scalar>(
    rt: &GpuRuntime<'_>,
    tuning: &Tuning,
    a: &DeviceMatrix<T>,
) -> bool {
    tuning.cg_fused_for(rt.tuned_as_cuda(), a.n_rows()) && a.plain_csr().is_some()
}

/// Kernel `cg_fused_resident` (the caller checked [`fuses_cg`]).
pub(super) fn cg_fused_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    state: &mut ResidentState,
    a: &DeviceMatrix<T>,
    hist_index: usize,
    x: &mut Buffer<T>,
    v: CgFusedVectors<'_, T>,
    partials: &mut Partials<T>,
    read: [Slot; 3],
    written: [Slot; 3],
) -> Result<()> {
    let n = check_cg_fused(state, a, hist_index, x, &v, partials, read, written)?;
    let vectors = [&*x, v.r, v.p, v.ap, &*v.r_out, &*v.p_out, &*v.ap_out];
    let args = fused_args(
        rt, state, &read, hist_index, a, n, &vectors, partials, &written,
    )?;
    // SAFETY: cg_fused_resident(double* state, three uint slots, uint hist_index, row_ptr,
    // col_idx, values, uint n, uint k, uint early, x, r, p, ap, r_out, p_out, ap_out, partials,
    // three uint slots): a is an n x n CSR matrix without long rows (its arrays as
    // spmv_dots_csr reads them), every vector holds n elements and the written ones are other
    // buffers than the read ones (borrows), the read slots and the history entry are inside the
    // partials and the state, the written slots distinct and apart from them (checked);
    // grid = groups.
    unsafe { rt.launch::<T>(Kernel::CgFusedResident, partials.groups(), &args) }
}

/// Kernel `pcg_update_resident`.
pub(super) fn pcg_update_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    tuning: &Tuning,
    state: &mut ResidentState,
    slots: CgSlots,
    hist_index: usize,
    x: &mut Buffer<T>,
    r: &mut Buffer<T>,
    z: &mut Buffer<T>,
    p: &mut Buffer<T>,
    ap: &Buffer<T>,
    q: &Buffer<T>,
    partials: &mut Partials<T>,
    rr: Slot,
    rz: Slot,
) -> Result<()> {
    check_cg_slots(partials, slots, true, hist_index, state, &[rr, rz])?;
    let n = checks::pcg_update(x, r, z, p, ap, q, partials, rr, rz)?;
    let sums_ready = cg_sums(rt, tuning, state, partials, slots, true)?;
    let args = [
        buf(&state.buffer),
        KernelArg::slot(slots.rr)?,
        KernelArg::slot(slots.p_ap)?,
        KernelArg::slot(slots.rz)?,
        KernelArg::slot(slots.ap_q)?,
        hist(hist_index)?,
        buf(x),
        buf(r),
        buf(z),
        buf(p),
        buf(ap),
        buf(q),
        KernelArg::len("vector length", n)?,
        buf(partials.buffer()),
        KernelArg::slot(rr)?,
        KernelArg::slot(rz)?,
        KernelArg::U32(u32::from(sums_ready)),
    ];
    // SAFETY: pcg_update_resident(double* state, uint slot_rr_in, uint slot_pap,
    // uint slot_rz_in, uint slot_apq, uint hist_index, x, r, z, p, ap, q, uint n, partials,
    // uint slot_rr, uint slot_rz, uint sums_ready): as cg_update_resident (checked).
    unsafe { rt.launch::<T>(Kernel::PcgUpdateResident, partials.groups(), &args) }
}

/// Kernel `bicgstab_s_update_resident`.
pub(super) fn bicgstab_s_update_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    state: &mut ResidentState,
    r: &Buffer<T>,
    ap: &Buffer<T>,
    s: &mut Buffer<T>,
    partials: &mut Partials<T>,
    rr0: Slot,
    apr0: Slot,
    ss: Slot,
) -> Result<()> {
    let tail = krylov_launch::bicgstab_s_update_args(r, ap, s, partials, rr0, apr0, ss)?;
    let mut args = [KernelArg::U32(0); 9];
    args[0] = buf(&state.buffer);
    args[1..].copy_from_slice(&tail);
    // SAFETY: bicgstab_s_update_resident(double* state, r, ap, s, uint n, partials,
    // uint slot_rr0, uint slot_apr0, uint slot_ss): see `bicgstab_s_update_args`; block 0
    // writes three entries of the state's header.
    unsafe { rt.launch::<T>(Kernel::BicgstabSUpdateResident, partials.groups(), &args) }
}

/// Kernel `bicgstab_s_spmv_resident` (`a` is CSR without long rows); `fused_next`: its
/// successor is the fused update, which reads its matrix before its wait, so this one may start
/// it early (the plain update, which waits first, is not started early).
pub(super) fn bicgstab_s_spmv_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    state: &mut ResidentState,
    a: &DeviceMatrix<T>,
    r: &Buffer<T>,
    ap: &Buffer<T>,
    s: &mut Buffer<T>,
    as_: &mut Buffer<T>,
    r0star: &Buffer<T>,
    partials: &mut Partials<T>,
    update_slots: [Slot; 3],
    products: [Slot; 3],
    fused_next: bool,
) -> Result<()> {
    let n = check_s_spmv(a, r, ap, s, as_, r0star, partials, update_slots, products)?;
    let [rr0, apr0, ss] = update_slots;
    let mut args = [KernelArg::U32(0); 19];
    args[0] = buf(&state.buffer);
    args[1..7].copy_from_slice(&plain_csr_args(rt, a, n, fused_next)?);
    args[7..13].copy_from_slice(&[
        buf(r),
        buf(ap),
        buf(s),
        buf(as_),
        buf(r0star),
        buf(partials.buffer()),
    ]);
    for (arg, slot) in
        args[13..]
            .iter_mut()
            .zip([rr0, apr0, ss, products[0], products[1], products[2]])
    {
        *arg = KernelArg::slot(slot)?;
    }
    // SAFETY: bicgstab_s_spmv_resident(double* state, row_ptr, col_idx, values, uint n,
    // uint k, uint early, r, ap, s, as_, r0star, partials, six uint slots): a is an n x n CSR
    // matrix without long rows (its arrays as spmv_dots_csr reads them), every vector holds n
    // elements, the slots are inside the partials, the written ones distinct from each other and
    // from the read ones (checked); grid = groups, as spmv_dots and bicgstab_s_update use;
    // block 0 writes three entries of the state's header.
    unsafe { rt.launch::<T>(Kernel::BicgstabSSpmvResident, partials.groups(), &args) }
}

/// Kernel `bicgstab_update_resident`.
pub(super) fn bicgstab_update_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    state: &mut ResidentState,
    slots: BicgstabSlots,
    hist_index: usize,
    x: &mut Buffer<T>,
    r: &mut Buffer<T>,
    p: &mut Buffer<T>,
    s: &Buffer<T>,
    ap: &Buffer<T>,
    as_: &Buffer<T>,
    phat: Option<&Buffer<T>>,
    shat: Option<&Buffer<T>>,
    r0star: &Buffer<T>,
    partials: &mut Partials<T>,
    rr0: Slot,
    rr: Slot,
) -> Result<()> {
    check_bicgstab_slots(partials, slots, hist_index, state, [rr0, rr])?;
    let tail = krylov_launch::bicgstab_update_args(
        x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr,
    )?;
    let mut args = [KernelArg::U32(0); 20];
    args[0] = buf(&state.buffer);
    for (arg, slot) in args[1..6].iter_mut().zip(slots.all()) {
        *arg = KernelArg::slot(slot)?;
    }
    args[6] = hist(hist_index)?;
    args[7..].copy_from_slice(&tail);
    // SAFETY: bicgstab_update_resident(double* state, five slots, uint hist_index, x, r, p, s,
    // ap, as_, phat, shat, r0star, uint n, partials, uint slot_rr0, uint slot_rr): see
    // `bicgstab_update_args`; the finished slots are inside the partials and differ from the
    // written ones, the history entry is inside the state (checked).
    unsafe { rt.launch::<T>(Kernel::BicgstabUpdateResident, partials.groups(), &args) }
}

/// Whether `bicgstab_fused_resident` runs on `a` here.
pub(super) fn fuses_bicgstab<T: Scalar>(
    rt: &GpuRuntime<'_>,
    tuning: &Tuning,
    a: &DeviceMatrix<T>,
) -> bool {
    tuning.bicgstab_fused_for(rt.tuned_as_cuda(), a.n_rows()) && a.plain_csr().is_some()
}

/// Kernel `bicgstab_fused_resident` (the caller checked [`fuses_bicgstab`]).
pub(super) fn bicgstab_fused_resident<T: Scalar>(
    rt: &GpuRuntime<'_>,
    state: &mut ResidentState,
    a: &DeviceMatrix<T>,
    hist_index: usize,
    x: &mut Buffer<T>,
    v: BicgstabFusedVectors<'_, T>,
    partials: &mut Partials<T>,
    read: [Slot; 4],
    written: [Slot; 3],
) -> Result<()> {
    let n = check_bicgstab_fused(state, a, hist_index, x, &v, partials, read, written)?;
    let vectors = [
        &*x, &*v.r, v.p, v.s, v.ap, v.as_, v.r0star, &*v.p_out, &*v.ap_out,
    ];
    let args = fused_args(
        rt, state, &read, hist_index, a, n, &vectors, partials, &written,
    )?;
    // SAFETY: bicgstab_fused_resident(double* state, four uint slots, uint hist_index, row_ptr,
    // col_idx, values, uint n, uint k, uint early, x, r, p, s, ap, as_, r0star, p_out, ap_out,
    // partials, three uint slots): a is an n x n CSR matrix without long rows (its arrays as
    // spmv_dots_csr reads them), every vector holds n elements and the written p_out, ap_out are
    // other buffers than the read ones (borrows), the read slots and the history entry are
    // inside the partials and the state, the written slots distinct and apart from them
    // (checked); grid = groups.
    unsafe { rt.launch::<T>(Kernel::BicgstabFusedResident, partials.groups(), &args) }
}
