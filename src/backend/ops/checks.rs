//! Argument checks shared by every backend's kernels (lengths, slots, basis columns), so that
//! host, OpenCL and CUDA refuse the same calls with the same errors before launching anything.

use crate::backend::buffer::{check_len, Buffer};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::partials::{Partials, Slot};
use crate::backend::Basis;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// Every buffer has length `n`.
pub(crate) fn same_len<T: Scalar>(n: usize, bufs: &[(&str, &Buffer<T>)]) -> Result<()> {
    for (what, b) in bufs {
        check_len(what, b, n)?;
    }
    Ok(())
}

/// Slots exist for vectors of length `n` and are pairwise distinct.
pub(crate) fn slots<T: Scalar>(
    kernel: &str,
    partials: &Partials<T>,
    n: usize,
    slots: &[Slot],
) -> Result<()> {
    for &s in slots {
        partials.check(s, n)?;
    }
    if slots
        .iter()
        .enumerate()
        .any(|(i, s)| slots[..i].contains(s))
    {
        return Err(Error::param(
            "slots",
            format!("{kernel}: slots must be distinct"),
        ));
    }
    Ok(())
}

/// `cg_update`: returns n.
pub(crate) fn cg_update<T: Scalar>(
    x: &Buffer<T>,
    r: &Buffer<T>,
    p: &Buffer<T>,
    ap: &Buffer<T>,
    partials: &Partials<T>,
    rr: Slot,
) -> Result<usize> {
    let n = x.len();
    same_len(
        n,
        &[
            ("cg_update: r", r),
            ("cg_update: p", p),
            ("cg_update: Ap", ap),
        ],
    )?;
    slots("cg_update", partials, n, &[rr])?;
    Ok(n)
}

/// `pcg_update`: returns n.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pcg_update<T: Scalar>(
    x: &Buffer<T>,
    r: &Buffer<T>,
    z: &Buffer<T>,
    p: &Buffer<T>,
    ap: &Buffer<T>,
    q: &Buffer<T>,
    partials: &Partials<T>,
    rr: Slot,
    rz: Slot,
) -> Result<usize> {
    let n = x.len();
    same_len(
        n,
        &[
            ("pcg_update: r", r),
            ("pcg_update: z", z),
            ("pcg_update: p", p),
            ("pcg_update: Ap", ap),
            ("pcg_update: q", q),
        ],
    )?;
    slots("pcg_update", partials, n, &[rr, rz])?;
    Ok(n)
}

/// `bicgstab_s_update`: returns n. `ss` must differ from the slots it reads.
pub(crate) fn bicgstab_s_update<T: Scalar>(
    r: &Buffer<T>,
    ap: &Buffer<T>,
    s: &Buffer<T>,
    partials: &Partials<T>,
    rr0: Slot,
    apr0: Slot,
    ss: Slot,
) -> Result<usize> {
    let n = r.len();
    same_len(
        n,
        &[("bicgstab_s_update: Ap", ap), ("bicgstab_s_update: s", s)],
    )?;
    for slot in [rr0, apr0, ss] {
        partials.check(slot, n)?;
    }
    if ss == rr0 || ss == apr0 {
        return Err(Error::param("slots", "bicgstab_s_update: ss must differ"));
    }
    Ok(n)
}

/// `bicgstab_update`: returns n.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bicgstab_update<T: Scalar>(
    x: &Buffer<T>,
    r: &Buffer<T>,
    p: &Buffer<T>,
    s: &Buffer<T>,
    ap: &Buffer<T>,
    as_: &Buffer<T>,
    phat: Option<&Buffer<T>>,
    shat: Option<&Buffer<T>>,
    r0star: &Buffer<T>,
    partials: &Partials<T>,
    rr0: Slot,
    rr: Slot,
) -> Result<usize> {
    let n = x.len();
    same_len(
        n,
        &[
            ("bicgstab_update: r", r),
            ("bicgstab_update: p", p),
            ("bicgstab_update: s", s),
            ("bicgstab_update: Ap", ap),
            ("bicgstab_update: As", as_),
            ("bicgstab_update: r0*", r0star),
        ],
    )?;
    if let Some(v) = phat {
        check_len("bicgstab_update: phat", v, n)?;
    }
    if let Some(v) = shat {
        check_len("bicgstab_update: shat", v, n)?;
    }
    slots("bicgstab_update", partials, n, &[rr0, rr])?;
    Ok(n)
}

/// `basis_spmv_dots`: returns n.
pub(crate) fn basis_spmv_dots<T: Scalar>(
    a: &DeviceMatrix<T>,
    src: Option<&Buffer<T>>,
    basis: &Basis<T>,
    i: usize,
    partials: &Partials<T>,
    prev_slot: Option<Slot>,
    self_slot: Option<Slot>,
) -> Result<usize> {
    if i == 0 {
        return Err(Error::param("i", "basis_spmv_dots needs i >= 1"));
    }
    basis.check_col(i)?;
    let n = basis.n();
    if a.n_rows() != n || a.n_cols() != n {
        return Err(Error::dims("basis length vs square matrix", n, a.n_rows()));
    }
    if let Some(z) = src {
        check_len("basis_spmv_dots: source length", z, n)?;
    }
    let wanted: Vec<Slot> = prev_slot.into_iter().chain(self_slot).collect();
    slots("basis_spmv_dots", partials, n, &wanted)?;
    Ok(n)
}

/// `basis_dots`: returns the number of columns (0: nothing to do).
pub(crate) fn basis_dots<T: Scalar>(
    basis: &Basis<T>,
    w: usize,
    cols: &Range<usize>,
    partials: &Partials<T>,
    first_slot: Slot,
) -> Result<usize> {
    basis.check_col(w)?;
    basis.check_range(cols)?;
    let count = cols.len();
    if count > 0 {
        partials.check(Slot(first_slot.0 + count - 1), basis.n())?;
    }
    Ok(count)
}

/// `basis_dots2`: both targets and the columns exist, count_b <= the column count, the slots lie
/// inside the partials, which share their group count.
pub(crate) fn basis_dots2<T: Scalar>(
    basis: &Basis<T>,
    wa: usize,
    wb: usize,
    cols: &Range<usize>,
    count_b: usize,
    pa: &Partials<T>,
    pb: &Partials<T>,
) -> Result<usize> {
    basis.check_col(wa)?;
    basis.check_col(wb)?;
    basis.check_range(cols)?;
    let count = cols.len();
    if count_b > count {
        return Err(Error::param(
            "count_b",
            "basis_dots2: more b dots than columns",
        ));
    }
    if pa.groups() != pb.groups() {
        return Err(Error::param(
            "partials",
            "basis_dots2: the partials differ in groups",
        ));
    }
    if count > 0 {
        pa.check(Slot(count - 1), basis.n())?;
    }
    if count_b > 0 {
        pb.check(Slot(count_b - 1), basis.n())?;
    }
    Ok(count)
}

/// Column i of R (leading dimension `ld`) fits in `rmat`.
fn r_column<T: Scalar>(i: usize, rmat: &Buffer<T>, ld: usize) -> Result<()> {
    if i == 0 || ld < i || rmat.len() < ld * i {
        return Err(Error::param("rmat", "R matrix too small for column i"));
    }
    Ok(())
}

/// `gmres_gram_schmidt`: the norm slot must not be one of the coefficient slots (other groups
/// still read those while the norm partials are written).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gmres_gram_schmidt<T: Scalar>(
    basis: &Basis<T>,
    i: usize,
    partials: &Partials<T>,
    first_slot: Slot,
    norm_slot: Slot,
    rmat: &Buffer<T>,
    ld: usize,
) -> Result<()> {
    basis.check_col(i)?;
    let n = basis.n();
    partials.check(norm_slot, n)?;
    if i >= 2 {
        partials.check(Slot(first_slot.0 + i - 2), n)?;
    }
    r_column(i, rmat, ld)?;
    if i >= 2 && (first_slot.0..first_slot.0 + i - 1).contains(&norm_slot.0) {
        return Err(Error::param(
            "norm_slot",
            "gmres_gram_schmidt: norm_slot overlaps the coefficient slots",
        ));
    }
    Ok(())
}

/// `gmres_normalize`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gmres_normalize<T: Scalar>(
    basis: &Basis<T>,
    i: usize,
    partials: &Partials<T>,
    norm_slot: Slot,
    rmat: &Buffer<T>,
    ld: usize,
    xi_partials: &Partials<T>,
    xi_slot: Slot,
) -> Result<()> {
    basis.check_col(i)?;
    r_column(i, rmat, ld)?;
    partials.check(norm_slot, basis.n())?;
    xi_partials.check(xi_slot, basis.n())
}

/// `gmres_dcgs2_spmv_dots`: the checks of the two kernels it replaces (ucol >= 1); returns n.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn gmres_dcgs2_spmv_dots<T: Scalar>(
    a: &DeviceMatrix<T>,
    basis: &Basis<T>,
    ucol: usize,
    pa: &Partials<T>,
    pb: &Partials<T>,
) -> Result<usize> {
    if ucol == 0 {
        return Err(Error::param(
            "column",
            "gmres_dcgs2_spmv_dots: u is a column after v_0",
        ));
    }
    let n = basis_spmv_dots(a, None, basis, ucol + 1, pb, Some(Slot(ucol - 1)), None)?;
    basis_dots2(basis, ucol, ucol + 1, &(1..ucol + 1), ucol - 1, pa, pb)?;
    Ok(n)
}

/// `gmres_dcgs2_apply` (and the first checks of `gmres_dcgs2_update`): columns ucol and
/// ucol + 1 exist (ucol >= 1) and `coef` holds the step's 2 (ucol - 1) + 4 values at
/// `coef_off`.
pub(crate) fn gmres_dcgs2_apply<T: Scalar>(
    basis: &Basis<T>,
    ucol: usize,
    coef: &Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    if ucol == 0 {
        return Err(Error::param("ucol", "DCGS2 step: ucol must be at least 1"));
    }
    basis.check_col(ucol)?;
    basis.check_col(ucol + 1)?;
    let need = coef_off + 2 * (ucol - 1) + 4;
    if coef.len() < need {
        return Err(Error::dims("DCGS2 step: coefficients", need, coef.len()));
    }
    Ok(())
}

/// `gmres_dcgs2_update`: columns ucol and ucol + 1 exist, both partials hold slots 0..=ucol-1
/// for vectors of the basis's length with the same group count, and `coef` holds the step's
/// 2 (ucol - 1) + 4 values at `coef_off` (a, c, beta, g and the two finished sums nu, d).
pub(crate) fn gmres_dcgs2_update<T: Scalar>(
    basis: &Basis<T>,
    ucol: usize,
    pa: &Partials<T>,
    pc: &Partials<T>,
    coef: &Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    gmres_dcgs2_apply(basis, ucol, coef, coef_off)?;
    pa.check(Slot(ucol - 1), basis.n())?;
    pc.check(Slot(ucol - 1), basis.n())?;
    if pa.groups() != pc.groups() {
        return Err(Error::param(
            "partials",
            "gmres_dcgs2_update: both partials must have the same group count",
        ));
    }
    Ok(())
}

/// `basis_axpy`.
pub(crate) fn basis_axpy<T: Scalar>(basis: &Basis<T>, dst: usize, src: usize) -> Result<()> {
    basis.check_col(dst)?;
    basis.check_col(src)?;
    if dst == src {
        return Err(Error::param(
            "columns",
            "basis_axpy: dst and src must differ",
        ));
    }
    Ok(())
}

/// `basis_load` / `basis_store`: the column exists and the vector has length n.
pub(crate) fn basis_vector<T: Scalar>(
    what: &str,
    basis: &Basis<T>,
    col: usize,
    v: &Buffer<T>,
) -> Result<()> {
    basis.check_col(col)?;
    check_len(what, v, basis.n())
}

/// `basis_load_normalized`: the column exists, the source and the partials' plan have n
/// elements, the slot lies inside the partials and `out_off` inside `out`.
pub(crate) fn basis_load_normalized<T: Scalar>(
    basis: &Basis<T>,
    col: usize,
    src: &Buffer<T>,
    partials: &Partials<T>,
    slot: Slot,
    out: &Buffer<T>,
    out_off: usize,
) -> Result<()> {
    basis_vector("basis_load_normalized: source length", basis, col, src)?;
    partials.check(slot, basis.n())?;
    if out_off >= out.len() {
        return Err(Error::dims(
            "basis_load_normalized: output",
            out_off + 1,
            out.len(),
        ));
    }
    Ok(())
}

/// `multi_axpy_device`: as `multi_axpy`, with at least `cols.len()` device coefficients.
pub(crate) fn multi_axpy_device<T: Scalar>(
    y: &Buffer<T>,
    basis: &Basis<T>,
    cols: &Range<usize>,
    coeffs: &Buffer<T>,
) -> Result<()> {
    basis.check_range(cols)?;
    check_len("multi_axpy_device: y length", y, basis.n())?;
    if coeffs.len() < cols.len() {
        return Err(Error::dims(
            "multi_axpy_device: coefficients vs columns",
            cols.len(),
            coeffs.len(),
        ));
    }
    Ok(())
}

/// `gmres_dcgs2_last_sums`: slots 0..=count inside the partials and room for 2 count + 3 values
/// at `coef_off`.
pub(crate) fn gmres_dcgs2_last_sums<T: Scalar>(
    pa: &Partials<T>,
    count: usize,
    coef: &Buffer<T>,
    coef_off: usize,
) -> Result<()> {
    pa.check(Slot(count), pa.n())?;
    let need = coef_off + 2 * count + 3;
    if coef.len() < need {
        return Err(Error::dims(
            "gmres_dcgs2_last_sums: coefficients",
            need,
            coef.len(),
        ));
    }
    Ok(())
}

/// `multi_axpy`.
pub(crate) fn multi_axpy<T: Scalar>(
    y: &Buffer<T>,
    basis: &Basis<T>,
    cols: &Range<usize>,
    coeffs: &[T],
) -> Result<()> {
    basis.check_range(cols)?;
    check_len("multi_axpy: y length", y, basis.n())?;
    if coeffs.len() != cols.len() {
        return Err(Error::dims(
            "multi_axpy: coefficients vs columns",
            cols.len(),
            coeffs.len(),
        ));
    }
    Ok(())
}

/// `spmv_dots`: shapes, partner lengths, distinct slots; returns n (rows).
pub(crate) fn spmv_dots<T: Scalar>(
    a: &DeviceMatrix<T>,
    x: &Buffer<T>,
    y: &Buffer<T>,
    dots: &crate::backend::SpmvDots<'_, T>,
    partials: &Partials<T>,
) -> Result<usize> {
    crate::backend::ops::spmv::check_spmv(a, x, y)?;
    let n = a.n_rows();
    for (v, _) in dots.with.iter().flatten() {
        check_len("spmv_dots: partner vector length", v, n)?;
    }
    let wanted: Vec<Slot> = dots
        .yy
        .into_iter()
        .chain(dots.with.iter().flatten().map(|&(_, s)| s))
        .collect();
    slots("spmv_dots", partials, n, &wanted)?;
    Ok(n)
}
