//! The GPU launches of the Krylov family (`kernels/cg.kc`, `bicgstab.kc`, `gmres.kc`), written
//! once for every runtime against [`GpuRuntime`]: the arguments checked (`ops::checks`), then
//! one launch by typed name. [`KrylovOps`](super::KrylovOps)'s default bodies call them on a
//! GPU backend and the host references otherwise.

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::basis::Basis;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::ops::checks;
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::tuning::Tuning;
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// `b` as a kernel argument.
fn buf<T: bytemuck::Pod>(b: &Buffer<T>) -> KernelArg<'_> {
    KernelArg::buffer(b)
}

/// A basis column index as a kernel `uint` (checked against the basis by the caller).
fn col(j: usize) -> Result<KernelArg<'static>> {
    KernelArg::index("column", j)
}

/// Kernel `cg_update`.
pub(super) fn cg_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    alpha: T,
    beta: T,
    x: &mut Buffer<T>,
    r: &mut Buffer<T>,
    p: &mut Buffer<T>,
    ap: &Buffer<T>,
    partials: &mut Partials<T>,
    rr: Slot,
) -> Result<()> {
    let n = checks::cg_update(x, r, p, ap, partials, rr)?;
    let args = [
        KernelArg::scalar(alpha),
        KernelArg::scalar(beta),
        buf(x),
        buf(r),
        buf(p),
        buf(ap),
        KernelArg::len("vector length", n)?,
        buf(partials.buffer()),
        KernelArg::slot(rr)?,
    ];
    // SAFETY: cg_update(alpha, beta, x, r, p, ap, uint n, partials, uint slot_rr): all
    // vectors hold n elements, the slot is inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::CgUpdate, partials.groups(), &args) }
}

/// Kernel `pcg_update`.
pub(super) fn pcg_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    alpha: T,
    beta: T,
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
    let n = checks::pcg_update(x, r, z, p, ap, q, partials, rr, rz)?;
    let args = [
        KernelArg::scalar(alpha),
        KernelArg::scalar(beta),
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
    ];
    // SAFETY: pcg_update(alpha, beta, x, r, z, p, ap, q, uint n, partials, uint slot_rr,
    // uint slot_rz): all vectors hold n elements, distinct slots inside the partials
    // (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::PcgUpdate, partials.groups(), &args) }
}

/// The arguments of `bicgstab_s_update` and (after the state) `bicgstab_s_update_resident`,
/// checked: vectors hold n elements; the read slots and the written slot differ (so no group
/// overwrites a partial another group still reads) and lie inside the partials; launched with
/// grid = groups, which the kernel also uses as the number of partials to finish.
pub(crate) fn bicgstab_s_update_args<'a, T: Scalar>(
    r: &'a Buffer<T>,
    ap: &'a Buffer<T>,
    s: &'a Buffer<T>,
    partials: &'a Partials<T>,
    rr0: Slot,
    apr0: Slot,
    ss: Slot,
) -> Result<[KernelArg<'a>; 8]> {
    let n = checks::bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
    Ok([
        buf(r),
        buf(ap),
        buf(s),
        KernelArg::len("vector length", n)?,
        buf(partials.buffer()),
        KernelArg::slot(rr0)?,
        KernelArg::slot(apr0)?,
        KernelArg::slot(ss)?,
    ])
}

/// Kernel `bicgstab_s_update`.
pub(super) fn bicgstab_s_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    r: &Buffer<T>,
    ap: &Buffer<T>,
    s: &mut Buffer<T>,
    partials: &mut Partials<T>,
    rr0: Slot,
    apr0: Slot,
    ss: Slot,
) -> Result<()> {
    let args = bicgstab_s_update_args(r, ap, s, partials, rr0, apr0, ss)?;
    // SAFETY: bicgstab_s_update(r, ap, s, uint n, partials, uint slot_rr0, uint slot_apr0,
    // uint slot_ss): see `bicgstab_s_update_args`.
    unsafe { rt.launch::<T>(Kernel::BicgstabSUpdate, partials.groups(), &args) }
}

/// The arguments of `bicgstab_update` and `bicgstab_update_resident` after their first (the
/// scalars or the state), checked: every vector holds n elements; without preconditioning
/// phat = p (each work-item reads phat_i before it writes p_i) and shat = s; distinct slots
/// inside the partials; launched with grid = groups.
pub(crate) fn bicgstab_update_args<'a, T: Scalar>(
    x: &'a Buffer<T>,
    r: &'a Buffer<T>,
    p: &'a Buffer<T>,
    s: &'a Buffer<T>,
    ap: &'a Buffer<T>,
    as_: &'a Buffer<T>,
    phat: Option<&'a Buffer<T>>,
    shat: Option<&'a Buffer<T>>,
    r0star: &'a Buffer<T>,
    partials: &'a Partials<T>,
    rr0: Slot,
    rr: Slot,
) -> Result<[KernelArg<'a>; 13]> {
    let n = checks::bicgstab_update(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?;
    Ok([
        buf(x),
        buf(r),
        buf(p),
        buf(s),
        buf(ap),
        buf(as_),
        buf(phat.unwrap_or(p)),
        buf(shat.unwrap_or(s)),
        buf(r0star),
        KernelArg::len("vector length", n)?,
        buf(partials.buffer()),
        KernelArg::slot(rr0)?,
        KernelArg::slot(rr)?,
    ])
}

/// Kernel `bicgstab_update`.
pub(super) fn bicgstab_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    alpha: T,
    omega: T,
    beta: T,
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
    let tail = bicgstab_update_args(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?;
    let mut args = [KernelArg::U32(0); 16];
    args[..3].copy_from_slice(&[
        KernelArg::scalar(alpha),
        KernelArg::scalar(omega),
        KernelArg::scalar(beta),
    ]);
    args[3..].copy_from_slice(&tail);
    // SAFETY: bicgstab_update(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star,
    // uint n, partials, uint slot_rr0, uint slot_rr): see `bicgstab_update_args`.
    unsafe { rt.launch::<T>(Kernel::BicgstabUpdate, partials.groups(), &args) }
}

/// Kernel `basis_dots`.
pub(super) fn basis_dots<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &Basis<T>,
    w: usize,
    cols: Range<usize>,
    partials: &mut Partials<T>,
    first_slot: Slot,
) -> Result<()> {
    let count = checks::basis_dots(basis, w, &cols, partials, first_slot)?;
    if count == 0 {
        return Ok(());
    }
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", basis.n())?,
        col(w)?,
        col(cols.start)?,
        KernelArg::index("columns", count)?,
        buf(partials.buffer()),
        KernelArg::slot(first_slot)?,
    ];
    // SAFETY: basis_dots(basis, uint n, uint w, uint first_col, uint count, partials,
    // uint first_slot): columns w and first_col .. first_col + count exist and slots
    // first_slot .. first_slot + count lie inside the partials (checked); grid = groups.
    unsafe { rt.launch::<T>(Kernel::BasisDots, partials.groups(), &args) }
}

/// Kernel `gmres_gram_schmidt`.
pub(super) fn gmres_gram_schmidt<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    i: usize,
    partials: &mut Partials<T>,
    first_slot: Slot,
    norm_slot: Slot,
    rmat: &mut Buffer<T>,
    ld: usize,
) -> Result<()> {
    checks::gmres_gram_schmidt(basis, i, partials, first_slot, norm_slot, rmat, ld)?;
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", basis.n())?,
        col(i)?,
        buf(partials.buffer()),
        KernelArg::slot(first_slot)?,
        KernelArg::slot(norm_slot)?,
        buf(rmat),
        KernelArg::offset((i - 1) * ld),
    ];
    // SAFETY: gmres_gram_schmidt(basis, uint n, uint i, partials, uint first_slot,
    // uint norm_slot, rmat, ulong r_off): columns 1..=i exist; slots first_slot ..
    // first_slot + i - 1 and norm_slot are inside the partials and norm_slot is not read
    // (checked); rmat[r_off .. r_off + i - 1] is inside rmat (ld >= i, len >= ld i);
    // grid = groups, which the kernel uses as the number of partials per slot.
    unsafe { rt.launch::<T>(Kernel::GmresGramSchmidt, partials.groups(), &args) }
}

/// Kernel `gmres_normalize`.
pub(super) fn gmres_normalize<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    i: usize,
    partials: &Partials<T>,
    norm_slot: Slot,
    rmat: &mut Buffer<T>,
    ld: usize,
    xi_partials: &mut Partials<T>,
    xi_slot: Slot,
) -> Result<()> {
    checks::gmres_normalize(
        basis,
        i,
        partials,
        norm_slot,
        rmat,
        ld,
        xi_partials,
        xi_slot,
    )?;
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", basis.n())?,
        col(i)?,
        buf(partials.buffer()),
        KernelArg::index("groups", partials.groups())?,
        KernelArg::slot(norm_slot)?,
        buf(rmat),
        KernelArg::offset((i - 1) + (i - 1) * ld),
        buf(xi_partials.buffer()),
        KernelArg::slot(xi_slot)?,
    ];
    // SAFETY: gmres_normalize(basis, uint n, uint i, partials, uint read_groups,
    // uint norm_slot, rmat, ulong r_idx, xi_partials, uint xi_slot): columns 0 and i exist;
    // norm_slot with read_groups partials is read from one buffer and xi_slot of another
    // (distinct borrows) is written, both checked; r_idx < ld i <= rmat.len();
    // grid = xi_partials.groups().
    unsafe { rt.launch::<T>(Kernel::GmresNormalize, xi_partials.groups(), &args) }
}

/// Kernel `basis_dots2`.
pub(super) fn basis_dots2<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &Basis<T>,
    wa: usize,
    wb: usize,
    cols: Range<usize>,
    count_b: usize,
    pa: &mut Partials<T>,
    pb: &mut Partials<T>,
) -> Result<()> {
    let count = checks::basis_dots2(basis, wa, wb, &cols, count_b, pa, pb)?;
    if count == 0 {
        return Ok(());
    }
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", basis.n())?,
        col(wa)?,
        col(wb)?,
        col(cols.start)?,
        KernelArg::index("columns", count)?,
        KernelArg::index("columns", count_b)?,
        buf(pa.buffer()),
        buf(pb.buffer()),
    ];
    // SAFETY: basis_dots2(basis, uint n, uint wa, uint wb, uint first_col, uint count_a,
    // uint count_b, pa, pb): the columns exist, count_b <= count_a and the slots lie inside
    // both partials, which have the launch's group count (checked).
    unsafe { rt.launch::<T>(Kernel::BasisDots2, pa.groups(), &args) }
}

/// Kernel `gmres_dcgs2_update_small`, or `gmres_dcgs2_finish` then `gmres_dcgs2_update`, as
/// [`Tuning::dcgs2_small_for`] decides.
pub(super) fn gmres_dcgs2_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    tuning: &Tuning,
    basis: &mut Basis<T>,
    ucol: usize,
    pa: &Partials<T>,
    pc: &Partials<T>,
    coef: &mut Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    checks::gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off)?;
    let count = ucol - 1;
    if tuning.dcgs2_small_for(pa.groups(), count, rt.work_group_size()) {
        let args = [
            buf(basis.buffer()),
            KernelArg::len("vector length", basis.n())?,
            col(ucol)?,
            buf(pa.buffer()),
            buf(pc.buffer()),
            buf(coef),
            KernelArg::offset(coef_off),
            rt.start_next(pa.groups()),
        ];
        // SAFETY: gmres_dcgs2_update_small(basis, uint n, uint ucol, pa, pc, coef,
        // ulong coef_off, uint start_next): columns 1..=ucol+1 exist, both partials hold slots
        // 0..=count with `groups` groups (the grid), 2 (count + 1) <= the group size, and coef
        // holds 2 count + 4 values at coef_off (checked).
        return unsafe { rt.launch::<T>(Kernel::GmresDcgs2UpdateSmall, pa.groups(), &args) };
    }
    // The step's sums once, then the update reads them (2 launches; every group of a single
    // fused kernel re-summing all 2 (count + 1) slots cost more than a launch).
    launch_dcgs2_finish(rt, pa, pc, count, coef, coef_off, 2 * (count + 1))?;
    launch_dcgs2_update(rt, basis, ucol, coef, coef_off, pa.groups())
}

/// Kernel `gmres_dcgs2_finish` (the first half of [`gmres_dcgs2_update`]).
pub(super) fn gmres_dcgs2_sums<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &Basis<T>,
    ucol: usize,
    pa: &Partials<T>,
    pc: &Partials<T>,
    coef: &mut Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    checks::gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off)?;
    launch_dcgs2_finish(rt, pa, pc, ucol - 1, coef, coef_off, 2 * ucol)
}

/// Kernel `gmres_dcgs2_update` (the second half of [`gmres_dcgs2_update`]) over the grid of
/// a reduction.
pub(super) fn gmres_dcgs2_apply<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    ucol: usize,
    coef: &mut Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    checks::gmres_dcgs2_apply(basis, ucol, coef, coef_off)?;
    let groups = rt.reduction_groups(basis.n());
    launch_dcgs2_update(rt, basis, ucol, coef, coef_off, groups)
}

/// Kernel `gmres_dcgs2_finish` with `count + 1` groups, which reads only `pa`.
pub(super) fn gmres_dcgs2_last_sums<T: Scalar>(
    rt: &GpuRuntime<'_>,
    pa: &Partials<T>,
    count: usize,
    coef: &mut Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    checks::gmres_dcgs2_last_sums(pa, count, coef, coef_off)?;
    // With count + 1 groups the kernel reads only pa (slots 0..=count, checked) and writes
    // coef[coef_off + k], k < count, and coef[coef_off + 2 count + 2] (inside `coef`,
    // checked); pa stands in for pc.
    launch_dcgs2_finish(rt, pa, pa, count, coef, coef_off, count + 1)
}

/// Launch `gmres_dcgs2_finish` with `groups` groups, one per slot (2 (count + 1): both
/// partials' sums; count + 1: `pa`'s alone) on partials and coefficients the caller checked
/// (`checks::gmres_dcgs2_update` or `checks::gmres_dcgs2_last_sums`).
fn launch_dcgs2_finish<T: Scalar>(
    rt: &GpuRuntime<'_>,
    pa: &Partials<T>,
    pc: &Partials<T>,
    count: usize,
    coef: &mut Buffer<T>,
    coef_off: usize,
    groups: usize,
) -> Result<()> {
    let args = [
        buf(pa.buffer()),
        buf(pc.buffer()),
        KernelArg::index("groups", pa.groups())?,
        KernelArg::index("columns", count)?,
        buf(coef),
        KernelArg::offset(coef_off),
    ];
    // SAFETY: gmres_dcgs2_finish(pa, pc, uint read_groups, uint count, coef, ulong coef_off):
    // the partials hold slots 0..=count with read_groups groups and coef holds 2 count + 4
    // values at coef_off (checked by the callers); one group per slot, at most 2 (count + 1).
    unsafe { rt.launch::<T>(Kernel::GmresDcgs2Finish, groups, &args) }
}

/// Launch `gmres_dcgs2_update` with `groups` groups on columns and coefficients the caller
/// checked (`checks::gmres_dcgs2_update` or `checks::gmres_dcgs2_apply`).
fn launch_dcgs2_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    ucol: usize,
    coef: &mut Buffer<T>,
    coef_off: usize,
    groups: usize,
) -> Result<()> {
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", basis.n())?,
        col(ucol)?,
        buf(coef),
        KernelArg::offset(coef_off),
        rt.start_next(groups),
    ];
    // SAFETY: gmres_dcgs2_update(basis, uint n, uint ucol, coef, ulong coef_off,
    // uint start_next): columns 1..=ucol+1 exist and coef holds the 2 count + 4 values at
    // coef_off that gmres_dcgs2_finish (or the ranks' sums) wrote, on the same queue
    // (checked); the kernel strides over n, any grid works.
    unsafe { rt.launch::<T>(Kernel::GmresDcgs2Update, groups, &args) }
}

/// Kernel `basis_axpy`.
pub(super) fn basis_axpy<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    dst: usize,
    src: usize,
    alpha: T,
) -> Result<()> {
    checks::basis_axpy(basis, dst, src)?;
    let n = basis.n();
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", n)?,
        col(dst)?,
        col(src)?,
        KernelArg::scalar(alpha),
    ];
    // SAFETY: basis_axpy(basis, uint n, uint dst, uint src, SCALAR alpha): two distinct
    // existing columns (checked).
    unsafe { rt.launch::<T>(Kernel::BasisAxpy, rt.elementwise_groups(n), &args) }
}

/// Kernel `basis_scale`.
pub(super) fn basis_scale<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    c: usize,
    alpha: T,
) -> Result<()> {
    basis.check_col(c)?;
    let n = basis.n();
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", n)?,
        col(c)?,
        KernelArg::scalar(alpha),
    ];
    // SAFETY: basis_scale(basis, uint n, uint col, SCALAR alpha): an existing column.
    unsafe { rt.launch::<T>(Kernel::BasisScale, rt.elementwise_groups(n), &args) }
}

/// Kernel `basis_load`.
pub(super) fn basis_load<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    c: usize,
    src: &Buffer<T>,
    alpha: T,
) -> Result<()> {
    checks::basis_vector("basis_load: source length", basis, c, src)?;
    let n = basis.n();
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", n)?,
        col(c)?,
        buf(src),
        KernelArg::scalar(alpha),
    ];
    // SAFETY: basis_load(basis, uint n, uint col, const SCALAR* src, SCALAR alpha): an
    // existing column and a source of n elements (checked).
    unsafe { rt.launch::<T>(Kernel::BasisLoad, rt.elementwise_groups(n), &args) }
}

/// Kernel `basis_load_normalized`.
pub(super) fn basis_load_normalized<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &mut Basis<T>,
    c: usize,
    src: &Buffer<T>,
    partials: &Partials<T>,
    slot: Slot,
    out: &mut Buffer<T>,
    out_off: usize,
) -> Result<()> {
    checks::basis_load_normalized(basis, c, src, partials, slot, out, out_off)?;
    let n = basis.n();
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", n)?,
        col(c)?,
        buf(src),
        buf(partials.buffer()),
        KernelArg::index("groups", partials.groups())?,
        KernelArg::slot(slot)?,
        buf(out),
        KernelArg::offset(out_off),
    ];
    // SAFETY: basis_load_normalized(basis, uint n, uint col, src, partials, uint groups,
    // uint slot, out, ulong out_off): an existing column, a source of n elements, a slot of
    // `groups` partials inside the buffer and out_off inside `out` (checked).
    unsafe { rt.launch::<T>(Kernel::BasisLoadNormalized, rt.elementwise_groups(n), &args) }
}

/// Kernel `basis_store`.
pub(super) fn basis_store<T: Scalar>(
    rt: &GpuRuntime<'_>,
    basis: &Basis<T>,
    c: usize,
    dst: &mut Buffer<T>,
) -> Result<()> {
    checks::basis_vector("basis_store: destination length", basis, c, dst)?;
    let n = basis.n();
    let args = [
        buf(basis.buffer()),
        KernelArg::len("vector length", n)?,
        col(c)?,
        buf(dst),
    ];
    // SAFETY: basis_store(const SCALAR* basis, uint n, uint col, SCALAR* dst): an existing
    // column and a destination of n elements (checked).
    unsafe { rt.launch::<T>(Kernel::BasisStore, rt.elementwise_groups(n), &args) }
}

/// Kernel `multi_axpy` with the coefficients read from `coeffs` on the device.
pub(super) fn multi_axpy_device<T: Scalar>(
    rt: &GpuRuntime<'_>,
    y: &mut Buffer<T>,
    basis: &Basis<T>,
    cols: Range<usize>,
    coeffs: &Buffer<T>,
) -> Result<()> {
    checks::multi_axpy_device(y, basis, &cols, coeffs)?;
    // SAFETY: coeffs holds at least cols.len() values (checked).
    unsafe { launch_multi_axpy(rt, y, basis, cols, KernelArg::buffer(coeffs)) }
}

/// Launch `multi_axpy` (y, basis, uint n, uint first_col, uint count, coeffs) on y and columns
/// the caller checked.
///
/// # Safety
/// `coeffs` must be a buffer of at least `cols.len()` coefficients of this runtime, valid until
/// the kernel has run on its queue.
pub(crate) unsafe fn launch_multi_axpy<T: Scalar>(
    rt: &GpuRuntime<'_>,
    y: &mut Buffer<T>,
    basis: &Basis<T>,
    cols: Range<usize>,
    coeffs: KernelArg<'_>,
) -> Result<()> {
    let n = basis.n();
    let args = [
        buf(y),
        buf(basis.buffer()),
        KernelArg::len("vector length", n)?,
        col(cols.start)?,
        KernelArg::index("columns", cols.len())?,
        coeffs,
    ];
    // SAFETY: multi_axpy(y, basis, uint n, uint first_col, uint count, coeffs): y holds n
    // elements and the columns exist (checked by the callers); the coefficients are the
    // caller's promise.
    unsafe { rt.launch::<T>(Kernel::MultiAxpy, rt.elementwise_groups(n), &args) }
}
