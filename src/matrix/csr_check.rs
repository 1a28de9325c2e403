//! The checks every CSR matrix passes ([`super::CsrMatrix::new`], [`super::CsrView::new`]): array
//! lengths, row pointers from 0 to nnz that never decrease, columns in range and strictly
//! increasing within each row. Written once for both index widths.

use crate::error::{Error, Result};
use rayon::prelude::*;

/// An index type of CSR arrays: `usize` (the owned matrix) or `u32` (a borrowed view).
pub(crate) trait CsrIndex: Copy + Ord + Send + Sync + std::fmt::Display {
    /// The index as a position.
    fn at(self) -> usize;
}

impl CsrIndex for usize {
    fn at(self) -> usize {
        self
    }
}

impl CsrIndex for u32 {
    fn at(self) -> usize {
        self as usize
    }
}

/// Entries from which the arrays are checked in parallel.
pub(crate) const PARALLEL_CHECK_NNZ: usize = 1 << 16;

/// Check the arrays of an `n_rows x n_cols` CSR matrix with `n_values` values: one pass over
/// the rows (in parallel for a large matrix), and, only when it fails, the serial checks that
/// name the first fault as an [`Error::InvalidMatrix`] (or [`Error::DimensionMismatch`] for
/// the lengths).
pub(crate) fn check_csr<I: CsrIndex>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &[I],
    col_idx: &[I],
    n_values: usize,
) -> Result<()> {
    let parallel = col_idx.len() >= PARALLEL_CHECK_NNZ;
    if valid(n_rows, n_cols, row_ptr, col_idx, n_values, parallel) {
        return Ok(());
    }
    check_shape(n_rows, n_cols, row_ptr, col_idx, n_values)?;
    for r in 0..n_rows {
        let cols = &col_idx[row_ptr[r].at()..row_ptr[r + 1].at()];
        if cols.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidMatrix(format!(
                "row {r}: column indices not strictly increasing (use from_unsorted)"
            )));
        }
    }
    Ok(())
}

/// The array lengths of a CSR matrix: n_rows + 1 row pointers, one value per column index.
pub(crate) fn check_lengths(
    n_rows: usize,
    row_ptr: usize,
    col_idx: usize,
    n_values: usize,
) -> Result<()> {
    if row_ptr.checked_sub(1) != Some(n_rows) {
        return Err(Error::dims(
            "row_ptr length (n_rows + 1)",
            n_rows.saturating_add(1),
            row_ptr,
        ));
    }
    if col_idx != n_values {
        return Err(Error::dims(
            "values length vs column indices",
            col_idx,
            n_values,
        ));
    }
    Ok(())
}

/// Whether the arrays pass every check of [`check_csr`], decided in one pass over the rows;
/// which check fails, and where, is the serial checks' to say.
fn valid<I: CsrIndex>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &[I],
    col_idx: &[I],
    n_values: usize,
    parallel: bool,
) -> bool {
    if check_lengths(n_rows, row_ptr.len(), col_idx.len(), n_values).is_err()
        || row_ptr[0].at() != 0
        || row_ptr[n_rows].at() != col_idx.len()
    {
        return false;
    }
    // The row pointers first: the rows' checks below slice by them.
    let row_valid = |r: usize| {
        let cols = &col_idx[row_ptr[r].at()..row_ptr[r + 1].at()];
        cols.last().map_or(true, |&c| c.at() < n_cols) && cols.windows(2).all(|w| w[0] < w[1])
    };
    if parallel {
        row_ptr.par_windows(2).all(|w| w[0] <= w[1]) && (0..n_rows).into_par_iter().all(row_valid)
    } else {
        row_ptr.windows(2).all(|w| w[0] <= w[1]) && (0..n_rows).all(row_valid)
    }
}

/// The checks of everything but the order within rows, each naming the first fault.
pub(crate) fn check_shape<I: CsrIndex>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &[I],
    col_idx: &[I],
    n_values: usize,
) -> Result<()> {
    check_lengths(n_rows, row_ptr.len(), col_idx.len(), n_values)?;
    if row_ptr[0].at() != 0 || row_ptr[n_rows].at() != col_idx.len() {
        return Err(Error::InvalidMatrix(format!(
            "row_ptr must start at 0 and end at nnz = {}, found {} .. {}",
            col_idx.len(),
            row_ptr[0],
            row_ptr[n_rows]
        )));
    }
    if let Some(r) = row_ptr.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::InvalidMatrix(format!(
            "row_ptr decreases at row {r}"
        )));
    }
    if let Some(k) = col_idx.iter().position(|&c| c.at() >= n_cols) {
        return Err(Error::InvalidMatrix(format!(
            "column index {} at position {k} out of range (n_cols = {n_cols})",
            col_idx[k]
        )));
    }
    Ok(())
}
