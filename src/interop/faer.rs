//! [`CsrMatrix`] to and from `faer` sparse matrices (feature `faer`, faer 0.24).
//!
//! From `faer`: a `SparseRowMatRef` or `SparseColMatRef` with any `faer::Index` width (`u32`,
//! `u64`, `usize`), compressed or not (a row's `row_nnz` entries are taken when present); indices
//! are widened to `usize` (faer keeps them below `I::Signed::MAX`). Column-major input is
//! read through its transpose (a row-major view) and transposed back. To `faer`: a `SparseRowMat<usize, T>`. Both
//! directions copy; explicit zeros are kept. Vectors are slices on both sides
//! (`faer::ColRef::try_as_col_major` gives one, `faer::ColRef::from_slice` takes one).
//!
//! ```
//! use pipekrylov::matrix::CsrMatrix;
//! let a = CsrMatrix::from_triplets(2, 2, &[(0, 0, 4.0), (1, 0, -1.0), (1, 1, 4.0)]).unwrap();
//! let m = a.to_faer().unwrap();
//! assert_eq!(m.as_ref().val(), a.values());
//! let back = CsrMatrix::from_faer(m.as_ref()).unwrap();
//! assert_eq!(back.col_idx(), a.col_idx());
//! ```

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use faer::sparse::{SparseColMatRef, SparseRowMat, SparseRowMatRef, SymbolicSparseRowMat};

impl<T: Scalar> CsrMatrix<T> {
    /// A copy of the row-major `faer` matrix `m` (any index width, compressed or not).
    pub fn from_faer<I: faer::Index>(m: SparseRowMatRef<'_, I, T>) -> Result<Self> {
        let s = m.symbolic();
        let (row_ptr, row_nnz, cols, vals) = (s.row_ptr(), s.row_nnz(), s.col_idx(), m.val());
        let mut rp = Vec::with_capacity(m.nrows() + 1);
        let mut ci = Vec::with_capacity(cols.len());
        let mut v = Vec::with_capacity(vals.len());
        rp.push(0);
        for i in 0..m.nrows() {
            let start = row_ptr[i].zx();
            let end = match row_nnz {
                Some(nnz) => start + nnz[i].zx(),
                None => row_ptr[i + 1].zx(),
            };
            let (Some(c), Some(x)) = (cols.get(start..end), vals.get(start..end)) else {
                return Err(Error::InvalidMatrix(format!(
                    "faer matrix: row {i} spans {start}..{end} of {} entries",
                    cols.len()
                )));
            };
            ci.extend(c.iter().map(|c| c.zx()));
            v.extend_from_slice(x);
            rp.push(ci.len());
        }
        CsrMatrix::from_unsorted(m.nrows(), m.ncols(), rp, ci, v)
    }

    /// A copy of the column-major `faer` matrix `m`: its transpose is a row-major view, read
    /// as above and transposed back.
    pub fn from_faer_csc<I: faer::Index>(m: SparseColMatRef<'_, I, T>) -> Result<Self> {
        Ok(Self::from_faer(m.transpose())?.transpose())
    }

    /// A copy as a `faer` row-major matrix with `usize` indices.
    ///
    /// Errors: [`Error::InvalidMatrix`] for a dimension faer cannot index (above `isize::MAX`).
    pub fn to_faer(&self) -> Result<SparseRowMat<usize, T>> {
        if self.n_rows() > isize::MAX as usize || self.n_cols() > isize::MAX as usize {
            return Err(Error::InvalidMatrix(
                "faer matrix: a dimension exceeds isize::MAX".into(),
            ));
        }
        // The CSR invariants (sorted, in-range, duplicate-free rows) are faer's: the check
        // cannot fail.
        let symbolic = SymbolicSparseRowMat::new_checked(
            self.n_rows(),
            self.n_cols(),
            self.row_ptr().to_vec(),
            None,
            self.col_idx().to_vec(),
        );
        Ok(SparseRowMat::new(symbolic, self.values().to_vec()))
    }
}
