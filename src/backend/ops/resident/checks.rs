//! The argument checks of the device-resident kernels (`kernels/resident.kc`), shared by their
//! launch (`launch.rs`) and the host backend's implementation.

use super::{BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, ResidentState};
use crate::backend::buffer::Buffer;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{DeviceMatrix, SpmvDots};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Check the arguments of `bicgstab_s_spmv_resident` (those of `bicgstab_s_update` with
/// `update_slots` = [rr0, apr0, ss] and of `spmv_dots(a, s, as_)` with `products` = [<As, As>,
/// <As, s>, <As, r0*>], every written slot distinct from the others and from the read ones);
/// returns n.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_s_spmv<T: Scalar>(
    a: &DeviceMatrix<T>,
    r: &Buffer<T>,
    ap: &Buffer<T>,
    s: &Buffer<T>,
    as_: &Buffer<T>,
    r0star: &Buffer<T>,
    partials: &Partials<T>,
    update_slots: [Slot; 3],
    products: [Slot; 3],
) -> Result<usize> {
    let [rr0, apr0, ss] = update_slots;
    let n = crate::backend::ops::checks::bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
    let dots = SpmvDots {
        yy: Some(products[0]),
        with: [Some((s, products[1])), Some((r0star, products[2]))],
    };
    crate::backend::ops::checks::spmv_dots(a, s, as_, &dots, partials)?;
    for (i, p) in products.iter().enumerate() {
        if update_slots.contains(p) || products[..i].contains(p) {
            return Err(Error::param(
                "slots",
                "bicgstab_s_spmv_resident: every written slot must differ from the others and \
                 from the read ones",
            ));
        }
    }
    Ok(n)
}

/// Check the read slots and the history entry of the resident updates.
pub(crate) fn check_scalars<T: Scalar>(
    partials: &Partials<T>,
    slots: &[Slot],
    hist_index: usize,
    state: &ResidentState,
) -> Result<()> {
    for &s in slots {
        if s.0 >= partials.slots() {
            return Err(Error::param(
                "slot",
                format!("slot {} out of range ({} slots)", s.0, partials.slots()),
            ));
        }
    }
    if hist_index >= state.batch {
        return Err(Error::param(
            "hist_index",
            format!("{hist_index} beyond the batch of {}", state.batch),
        ));
    }
    Ok(())
}

/// Check the operands of `cg_fused_resident`: a square matrix, every vector of its size, the
/// read slots inside the partials, the written ones distinct and apart from them, the history
/// entry inside the state. Returns n.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_cg_fused<T: Scalar>(
    state: &ResidentState,
    a: &DeviceMatrix<T>,
    hist_index: usize,
    x: &Buffer<T>,
    v: &CgFusedVectors<'_, T>,
    partials: &Partials<T>,
    read: [Slot; 3],
    written: [Slot; 3],
) -> Result<usize> {
    let lengths = [
        ("x", x.len()),
        ("r", v.r.len()),
        ("p", v.p.len()),
        ("ap", v.ap.len()),
        ("r_out", v.r_out.len()),
        ("p_out", v.p_out.len()),
        ("ap_out", v.ap_out.len()),
    ];
    check_fused_operands(
        "cg_fused_resident",
        state,
        a,
        hist_index,
        &lengths,
        partials,
        &read,
        &written,
    )
}

/// Check the operands of `bicgstab_fused_resident`: a square matrix, every vector of its size,
/// the read slots inside the partials, the written ones distinct and apart from them, the history
/// entry inside the state. Returns n.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_bicgstab_fused<T: Scalar>(
    state: &ResidentState,
    a: &DeviceMatrix<T>,
    hist_index: usize,
    x: &Buffer<T>,
    v: &BicgstabFusedVectors<'_, T>,
    partials: &Partials<T>,
    read: [Slot; 4],
    written: [Slot; 3],
) -> Result<usize> {
    let lengths = [
        ("x", x.len()),
        ("r", v.r.len()),
        ("p", v.p.len()),
        ("s", v.s.len()),
        ("ap", v.ap.len()),
        ("as", v.as_.len()),
        ("r0star", v.r0star.len()),
        ("p_out", v.p_out.len()),
        ("ap_out", v.ap_out.len()),
    ];
    check_fused_operands(
        "bicgstab_fused_resident",
        state,
        a,
        hist_index,
        &lengths,
        partials,
        &read,
        &written,
    )
}

/// What the fused checks share: a square matrix, the vectors' `lengths` equal to its rows, the
/// read slots and the history entry inside the partials and the state, the written slots inside
/// the partials, distinct and apart from the read ones. Returns n.
#[allow(clippy::too_many_arguments)]
fn check_fused_operands<T: Scalar>(
    kernel: &str,
    state: &ResidentState,
    a: &DeviceMatrix<T>,
    hist_index: usize,
    lengths: &[(&str, usize)],
    partials: &Partials<T>,
    read: &[Slot],
    written: &[Slot],
) -> Result<usize> {
    let n = a.n_rows();
    if a.n_cols() != n {
        return Err(Error::dims(
            format!("{kernel}: matrix columns vs rows"),
            n,
            a.n_cols(),
        ));
    }
    if let Some((name, len)) = lengths.iter().find(|(_, l)| *l != n) {
        return Err(Error::dims(
            format!("{kernel}: {name} length vs matrix rows"),
            n,
            *len,
        ));
    }
    check_scalars(partials, read, hist_index, state)?;
    for (i, w) in written.iter().enumerate() {
        partials.check(*w, n)?;
        if read.contains(w) || written[..i].contains(w) {
            return Err(Error::param(
                "slot",
                format!(
                    "{kernel}: every written slot must differ from the others and from the read \
                     ones"
                ),
            ));
        }
    }
    Ok(n)
}

/// Check the slots of `cg_update_resident` / `pcg_update_resident`: the read ones inside the
/// partials and none of them written.
pub(crate) fn check_cg_slots<T: Scalar>(
    partials: &Partials<T>,
    slots: CgSlots,
    with_pc: bool,
    hist_index: usize,
    state: &ResidentState,
    written: &[Slot],
) -> Result<()> {
    let read = cg_read_slots(slots, with_pc);
    check_scalars(partials, &read, hist_index, state)?;
    if read.iter().any(|s| written.contains(s)) {
        return Err(Error::param(
            "slot",
            "cg_update_resident: a slot it finishes is also one it writes",
        ));
    }
    Ok(())
}

/// The slots the CG update finishes, in the kernels' order: rr, curvature (<Ap, Ap> or
/// <Ap, q>), <p, Ap>, <r, z> (rr again without a preconditioner).
fn cg_read_slots(slots: CgSlots, with_pc: bool) -> [Slot; 4] {
    if with_pc {
        [slots.rr, slots.ap_q, slots.p_ap, slots.rz]
    } else {
        [slots.rr, slots.ap_ap, slots.p_ap, slots.rr]
    }
}

/// Check the slots of `bicgstab_update_resident`: the read ones inside the partials and none
/// of them written.
pub(crate) fn check_bicgstab_slots<T: Scalar>(
    partials: &Partials<T>,
    slots: BicgstabSlots,
    hist_index: usize,
    state: &ResidentState,
    written: [Slot; 2],
) -> Result<()> {
    check_scalars(partials, &slots.all(), hist_index, state)?;
    if slots.all().iter().any(|s| written.contains(s)) {
        return Err(Error::param(
            "slot",
            "bicgstab_update_resident: a slot it finishes is also one it writes",
        ));
    }
    Ok(())
}
