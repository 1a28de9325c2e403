//! The operands of the device BILU(0) factorization (`kernels/bilu.kc`): the three parts of
//! a block matrix on the L/U pattern, and the shape checks of [`super::PrecondOps::bilu0_scatter`]
//! and [`super::PrecondOps::bilu0_sweep`].

use super::trsv::BlockTriangular;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::{DeviceFormat, DeviceMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A block matrix split on the pattern of a BILU(0) factorization: the blocks of the strict
/// lower pattern (L's layout), of the strict upper pattern (U's layout) and one s x s block per
/// block row for the diagonal (A's diagonal blocks, or U's inverted ones for a sweep's
/// previous factors).
#[derive(Debug, Clone, Copy)]
pub struct BiluParts<'a, T> {
    /// Blocks on the strict lower pattern.
    pub lower: &'a Buffer<T>,
    /// Blocks on the strict upper pattern.
    pub upper: &'a Buffer<T>,
    /// Diagonal blocks, s*s per block row.
    pub diag: &'a Buffer<T>,
}

/// The shared shape of the two factors: same block size and block rows, U with a diagonal.
fn check_factors<T: Scalar>(l: &BlockTriangular<T>, u: &BlockTriangular<T>) -> Result<usize> {
    l.check()?;
    u.check()?;
    if l.block_size != u.block_size || l.n_block_rows != u.n_block_rows {
        return Err(Error::param(
            "bilu0",
            format!(
                "L is {} block rows of size {}, U {} of size {}",
                l.n_block_rows, l.block_size, u.n_block_rows, u.block_size
            ),
        ));
    }
    if u.inv_diag.is_none() {
        return Err(Error::param(
            "bilu0",
            "U needs its inverted diagonal blocks",
        ));
    }
    Ok(l.n_block_rows * l.block_size * l.block_size)
}

/// Check `bilu0_scatter`'s operands; A's CSR arrays.
#[allow(clippy::type_complexity)]
pub(crate) fn check_bilu0_scatter<'a, T: Scalar>(
    a: &'a DeviceMatrix<T>,
    l: &BlockTriangular<T>,
    u: &BlockTriangular<T>,
    diag: &Buffer<T>,
) -> Result<(&'a Buffer<u32>, &'a Buffer<u32>, &'a Buffer<T>)> {
    let diag_len = check_factors(l, u)?;
    check_len("bilu0_scatter: diagonal blocks", diag, diag_len)?;
    if a.n_rows() != l.n() || a.n_cols() != l.n() {
        return Err(Error::dims(
            "bilu0_scatter: A's rows and columns vs the factors' rows",
            l.n(),
            a.n_rows().max(a.n_cols()),
        ));
    }
    match a.format() {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } if a.ranks() == 1 => Ok((row_ptr, col_idx, values)),
        _ => Err(Error::param(
            "bilu0_scatter",
            "the device factorization reads A in CSR on one rank",
        )),
    }
}

/// Check `bilu0_sweep`'s operands: every part sized for the factors' patterns.
pub(crate) fn check_bilu0_sweep<T: Scalar>(
    a: &BiluParts<'_, T>,
    old: Option<&BiluParts<'_, T>>,
    l: &BlockTriangular<T>,
    u: &BlockTriangular<T>,
    bad_row: &Buffer<u32>,
) -> Result<()> {
    let diag_len = check_factors(l, u)?;
    for parts in std::iter::once(a).chain(old) {
        check_len("bilu0_sweep: lower blocks", parts.lower, l.values.len())?;
        check_len("bilu0_sweep: upper blocks", parts.upper, u.values.len())?;
        check_len("bilu0_sweep: diagonal blocks", parts.diag, diag_len)?;
    }
    if bad_row.is_empty() {
        return Err(Error::dims("bilu0_sweep: bad-row flag", 1, 0));
    }
    Ok(())
}
