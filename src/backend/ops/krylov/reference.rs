//! Default bodies of the fused kernels, composed of primitives: the specification the fused
//! kernels of every backend are tested against.

use super::*;
use crate::backend::partials::sum_slot_in_kernel;

/// `cg_update` as three axpby and a dot.
#[allow(clippy::too_many_arguments)]
pub fn cg_update<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    alpha: T,
    beta: T,
    x: &mut Buffer<T>,
    r: &mut Buffer<T>,
    p: &mut Buffer<T>,
    ap: &Buffer<T>,
    partials: &mut Partials<T>,
    rr: Slot,
) -> Result<()> {
    b.axpby(alpha, p, T::one(), x)?;
    b.axpby(-alpha, ap, T::one(), r)?;
    b.axpby(T::one(), r, beta, p)?;
    b.dot_partials(r, r, partials, rr)
}

/// `pcg_update` as four axpby and two dots.
#[allow(clippy::too_many_arguments)]
pub fn pcg_update<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
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
    b.axpby(alpha, p, T::one(), x)?;
    b.axpby(-alpha, ap, T::one(), r)?;
    b.axpby(-alpha, q, T::one(), z)?;
    b.axpby(T::one(), z, beta, p)?;
    b.dot_partials(r, r, partials, rr)?;
    b.dot_partials(r, z, partials, rz)
}

/// `bicgstab_s_update` as a download of the partials, copy, axpby and dot.
#[allow(clippy::too_many_arguments)]
pub fn bicgstab_s_update<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    r: &Buffer<T>,
    ap: &Buffer<T>,
    s: &mut Buffer<T>,
    partials: &mut Partials<T>,
    rr0: Slot,
    apr0: Slot,
    ss: Slot,
) -> Result<()> {
    let data = b.download(partials.buffer())?;
    let g = partials.groups();
    let alpha = crate::backend::partials::bicgstab_alpha(&data, g, rr0, apr0);
    b.copy(r, s)?;
    b.axpby(-alpha, ap, T::one(), s)?;
    b.dot_partials(s, s, partials, ss)
}

/// `bicgstab_update` as axpby chains and dots.
#[allow(clippy::too_many_arguments)]
pub fn bicgstab_update<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
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
    match phat {
        Some(ph) => b.axpby(alpha, ph, T::one(), x)?,
        None => b.axpby(alpha, p, T::one(), x)?,
    }
    b.axpby(omega, shat.unwrap_or(s), T::one(), x)?;
    b.copy(s, r)?;
    b.axpby(-omega, as_, T::one(), r)?;
    b.axpby(-omega, ap, T::one(), p)?;
    b.axpby(T::one(), r, beta, p)?;
    b.dot_partials(r, r0star, partials, rr0)?;
    b.dot_partials(r, r, partials, rr)
}

fn column<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    basis: &Basis<T>,
    j: usize,
) -> Result<Buffer<T>> {
    let mut v = b.alloc(basis.n())?;
    b.basis_store(basis, j, &mut v)?;
    Ok(v)
}

/// `basis_spmv_dots` through temporary vectors.
#[allow(clippy::too_many_arguments)]
pub fn basis_spmv_dots<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    a: &DeviceMatrix<T>,
    src: Option<&Buffer<T>>,
    basis: &mut Basis<T>,
    i: usize,
    partials: &mut Partials<T>,
    prev_slot: Option<Slot>,
    self_slot: Option<Slot>,
) -> Result<()> {
    if i == 0 {
        return Err(Error::param("i", "basis_spmv_dots needs i >= 1"));
    }
    let prev = column(b, basis, i - 1)?;
    let mut y = b.alloc(basis.n())?;
    b.spmv(a, src.unwrap_or(&prev), &mut y)?;
    if let Some(s) = prev_slot {
        b.dot_partials(&prev, &y, partials, s)?;
    }
    if let Some(s) = self_slot {
        b.dot_partials(&y, &y, partials, s)?;
    }
    b.basis_load(basis, i, &y, T::one())
}

/// `basis_dots` as one dot per column.
pub fn basis_dots<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    basis: &Basis<T>,
    w: usize,
    cols: Range<usize>,
    partials: &mut Partials<T>,
    first_slot: Slot,
) -> Result<()> {
    basis.check_range(&cols)?;
    let vw = column(b, basis, w)?;
    for (k, j) in cols.enumerate() {
        let vj = column(b, basis, j)?;
        b.dot_partials(&vj, &vw, partials, Slot(first_slot.0 + k))?;
    }
    Ok(())
}

/// `gmres_gram_schmidt` through a download of the partials, one axpy per column and a dot.
#[allow(clippy::too_many_arguments)]
pub fn gmres_gram_schmidt<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    basis: &mut Basis<T>,
    i: usize,
    partials: &mut Partials<T>,
    first_slot: Slot,
    norm_slot: Slot,
    rmat: &mut Buffer<T>,
    ld: usize,
) -> Result<()> {
    let data = b.download(partials.buffer())?;
    let mut r = b.download(rmat)?;
    for j in 1..i {
        let rji = sum_slot_in_kernel(&data, partials.groups(), Slot(first_slot.0 + j - 1));
        r[(j - 1) + (i - 1) * ld] = rji;
        b.basis_axpy(basis, i, j, -rji)?;
    }
    b.write(rmat, &r)?;
    let vi = column(b, basis, i)?;
    b.dot_partials(&vi, &vi, partials, norm_slot)
}

/// `gmres_normalize` through a download of the partials, a scale and a dot.
#[allow(clippy::too_many_arguments)]
pub fn gmres_normalize<B: KrylovOps + ?Sized, T: Scalar>(
    b: &B,
    basis: &mut Basis<T>,
    i: usize,
    partials: &Partials<T>,
    norm_slot: Slot,
    rmat: &mut Buffer<T>,
    ld: usize,
    xi_partials: &mut Partials<T>,
    xi_slot: Slot,
) -> Result<()> {
    let data = b.download(partials.buffer())?;
    let nrm = sum_slot_in_kernel(&data, partials.groups(), norm_slot).sqrt();
    let mut r = b.download(rmat)?;
    r[(i - 1) + (i - 1) * ld] = nrm;
    b.write(rmat, &r)?;
    if nrm > T::zero() {
        b.basis_scale(basis, i, T::one() / nrm)?;
    }
    let v0 = column(b, basis, 0)?;
    let vi = column(b, basis, i)?;
    b.dot_partials(&v0, &vi, xi_partials, xi_slot)
}
