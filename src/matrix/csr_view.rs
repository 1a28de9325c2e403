//! A CSR matrix borrowed from 32-bit index arrays (SciPy's `int32`, C and Fortran codes'),
//! checked once and never copied on the host: a solver set up from it sends its arrays to the
//! device as they are ([`crate::ReusableSolver::builder_view`]).

use super::csr_check::{check_csr, check_lengths};
use super::fingerprint::FingerprintCache;
use super::CsrMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A validated CSR matrix whose arrays belong to the caller: `row_ptr` non-decreasing from 0
/// to nnz, column indices in range and strictly increasing within each row (as
/// [`CsrMatrix::new`] checks).
///
/// ```
/// use pipekrylov::matrix::CsrView;
/// // [[2, -1], [-1, 2]] in the caller's arrays
/// let (row_ptr, col_idx, values) = ([0, 2, 4], [0, 1, 0, 1], [2.0, -1.0, -1.0, 2.0]);
/// let a = CsrView::from_i32(2, 2, &row_ptr, &col_idx, &values).unwrap();
/// assert_eq!(a.nnz(), 4);
/// assert_eq!(a.to_csr().unwrap().row(1), (&[0usize, 1][..], &[-1.0, 2.0][..]));
/// assert!(CsrView::from_i32(2, 2, &[0, 2, 4], &[1, 0, 0, 1], &values).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct CsrView<'a, T> {
    n_rows: usize,
    n_cols: usize,
    row_ptr: &'a [u32],
    col_idx: &'a [u32],
    values: &'a [T],
    /// Fingerprints computed so far (equal to those of the same matrix as a [`CsrMatrix`]).
    hashes: FingerprintCache,
}

impl<'a, T: Scalar> CsrView<'a, T> {
    /// A view of the arrays, checked as [`CsrMatrix::new`] checks; errors as its, and
    /// [`Error::IndexOverflow`] for a dimension beyond 32-bit indices.
    pub fn new(
        n_rows: usize,
        n_cols: usize,
        row_ptr: &'a [u32],
        col_idx: &'a [u32],
        values: &'a [T],
    ) -> Result<Self> {
        check_dimensions(n_rows, n_cols)?;
        check_csr(n_rows, n_cols, row_ptr, col_idx, values.len())?;
        Ok(Self::checked(n_rows, n_cols, row_ptr, col_idx, values))
    }

    /// [`CsrView::new`] of signed 32-bit arrays (read as unsigned; a negative index is named
    /// as one).
    pub fn from_i32(
        n_rows: usize,
        n_cols: usize,
        row_ptr: &'a [i32],
        col_idx: &'a [i32],
        values: &'a [T],
    ) -> Result<Self> {
        check_dimensions(n_rows, n_cols)?;
        let (row_ptr, col_idx) = checked_i32(n_rows, n_cols, row_ptr, col_idx, values.len())?;
        Ok(Self::checked(n_rows, n_cols, row_ptr, col_idx, values))
    }

    /// The view of arrays that passed the checks.
    fn checked(
        n_rows: usize,
        n_cols: usize,
        row_ptr: &'a [u32],
        col_idx: &'a [u32],
        values: &'a [T],
    ) -> Self {
        Self {
            n_rows,
            n_cols,
            row_ptr,
            col_idx,
            values,
            hashes: FingerprintCache::default(),
        }
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Whether the matrix is square.
    pub fn is_square(&self) -> bool {
        self.n_rows == self.n_cols
    }

    /// Row pointers (`n_rows + 1`).
    pub fn row_ptr(&self) -> &'a [u32] {
        self.row_ptr
    }

    /// Column indices, row by row.
    pub fn col_idx(&self) -> &'a [u32] {
        self.col_idx
    }

    /// Values, in the order of the column indices.
    pub fn values(&self) -> &'a [T] {
        self.values
    }

    /// The diagonal (zero where a row stores none), as [`CsrMatrix::diagonal`].
    pub fn diagonal(&self) -> Vec<T> {
        (0..self.n_rows.min(self.n_cols))
            .into_par_iter()
            .map(|r| {
                let span = self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize;
                self.col_idx[span.clone()]
                    .binary_search(&(r as u32))
                    .map(|k| self.values[span.start + k])
                    .unwrap_or_else(|_| T::zero())
            })
            .collect()
    }

    /// Position of the first NaN or infinite value.
    pub fn first_non_finite(&self) -> Option<usize> {
        crate::scalar::first_non_finite(self.values)
    }

    /// [`CsrMatrix::fingerprint`] of this matrix (the same number as for its copy).
    pub fn fingerprint(&self) -> u64 {
        self.hashes
            .full_hash(|| self.pattern_fingerprint(), self.values)
    }

    /// [`CsrMatrix::pattern_fingerprint`] of this matrix (the same number as for its copy).
    pub fn pattern_fingerprint(&self) -> u64 {
        self.hashes
            .pattern_hash(self.n_rows, self.n_cols, self.row_ptr, self.col_idx)
    }

    /// The matrix copied into a [`CsrMatrix`] (indices widened; no second check), or
    /// [`Error::OutOfMemory`].
    pub fn to_csr(&self) -> Result<CsrMatrix<T>> {
        widened(
            (self.n_rows, self.n_cols),
            (self.row_ptr, self.col_idx, self.values),
            self.hashes.clone(),
        )
    }
}

/// Dimensions that 32-bit indices can address, else [`Error::IndexOverflow`].
pub(crate) fn check_dimensions(n_rows: usize, n_cols: usize) -> Result<()> {
    let max = u32::MAX as usize;
    if n_rows.max(n_cols) > max {
        return Err(Error::IndexOverflow {
            what: "dimension".into(),
            value: n_rows.max(n_cols),
            max,
        });
    }
    Ok(())
}

/// Signed 32-bit CSR arrays read as unsigned and checked as [`check_csr`] checks; a negative
/// index is named as one. Read as unsigned, a negative index is one of at least 2^31, out of
/// range while the columns and entries are fewer than that; with more, the arrays are first
/// searched for one.
pub(crate) fn checked_i32<'a>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &'a [i32],
    col_idx: &'a [i32],
    n_values: usize,
) -> Result<(&'a [u32], &'a [u32])> {
    check_lengths(n_rows, row_ptr.len(), col_idx.len(), n_values)?;
    let negative = |v: &[i32]| v.iter().position(|&i| i < 0);
    let named = |e: Error| match (negative(row_ptr), negative(col_idx)) {
        (Some(k), _) => Error::InvalidMatrix(format!(
            "negative row pointer {} at position {k}",
            row_ptr[k]
        )),
        (None, Some(k)) => Error::InvalidMatrix(format!(
            "negative column index {} at position {k}",
            col_idx[k]
        )),
        (None, None) => e,
    };
    let large = i32::MAX as usize;
    if (n_cols > large || col_idx.len() > large)
        && (negative(row_ptr).is_some() || negative(col_idx).is_some())
    {
        return Err(named(Error::InvalidMatrix("negative index".into())));
    }
    let unsigned = |v: &'a [i32]| -> &'a [u32] { bytemuck::cast_slice(v) };
    let (row_ptr32, col_idx32) = (unsigned(row_ptr), unsigned(col_idx));
    check_csr(n_rows, n_cols, row_ptr32, col_idx32, n_values).map_err(named)?;
    Ok((row_ptr32, col_idx32))
}

/// Checked 32-bit arrays copied into a [`CsrMatrix`] (indices widened), with the fingerprints
/// known of them; or [`Error::OutOfMemory`].
pub(crate) fn widened<T: Scalar>(
    (n_rows, n_cols): (usize, usize),
    (row_ptr, col_idx, values): (&[u32], &[u32], &[T]),
    hashes: FingerprintCache,
) -> Result<CsrMatrix<T>> {
    let widen = |what: &str, v: &[u32]| -> Result<Vec<usize>> {
        let mut out = crate::memory::try_with_capacity(what, v.len())?;
        // A loop the compiler vectorizes.
        out.extend(v.iter().map(|&i| i as usize));
        Ok(out)
    };
    let row_ptr = widen("CSR row pointers", row_ptr)?;
    let col_idx = widen("CSR column indices", col_idx)?;
    let mut copy = crate::memory::try_with_capacity("CSR values", values.len())?;
    copy.extend_from_slice(values);
    Ok(CsrMatrix::from_checked(
        n_rows,
        n_cols,
        (row_ptr, col_idx, copy),
        hashes,
    ))
}
