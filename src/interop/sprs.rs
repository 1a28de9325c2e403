//! [`CsrMatrix`] to and from `sprs` matrices (feature `sprs`).
//!
//! From `sprs`: any index types (`CsMatI<T, I, Iptr>`, e.g. `u32` or `i64` indices), CSR or CSC
//! storage (CSC is converted), indices widened to `usize` (they are non-negative and in range:
//! `sprs` checks its structure). To `sprs`: a `CsMat<T>` (`usize` indices), CSR storage. Both
//! directions copy; neither reorders or drops entries (explicit zeros are kept).
//!
//! ```
//! use pipekrylov::matrix::CsrMatrix;
//! let m = sprs::CsMat::new((2, 2), vec![0, 1, 3], vec![0, 0, 1], vec![4.0, -1.0, 4.0]);
//! let a = CsrMatrix::from_sprs(&m).unwrap();
//! assert_eq!(a.row(1), (&[0usize, 1][..], &[-1.0, 4.0][..]));
//! assert_eq!(a.to_sprs().unwrap(), m);
//! ```

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use sprs::{CsMat, CsMatI, SpIndex};

impl<T: Scalar> CsrMatrix<T> {
    /// A copy of the `sprs` matrix `m` (CSR or CSC, any index width; see the module
    /// documentation).
    pub fn from_sprs<I: SpIndex, Iptr: SpIndex>(m: &CsMatI<T, I, Iptr>) -> Result<Self> {
        let csr;
        let m = if m.is_csr() {
            m
        } else {
            csr = m.to_csr();
            &csr
        };
        let row_ptr: Vec<usize> = m.indptr().to_proper().iter().map(|p| p.index()).collect();
        let col_idx: Vec<usize> = m.indices().iter().map(|c| c.index()).collect();
        CsrMatrix::from_unsorted(m.rows(), m.cols(), row_ptr, col_idx, m.data().to_vec())
    }

    /// A copy as an `sprs` CSR matrix with `usize` indices.
    pub fn to_sprs(&self) -> Result<CsMat<T>> {
        CsMat::try_new(
            (self.n_rows(), self.n_cols()),
            self.row_ptr().to_vec(),
            self.col_idx().to_vec(),
            self.values().to_vec(),
        )
        .map_err(|(_, _, _, e)| Error::InvalidMatrix(format!("sprs refused the structure: {e}")))
    }
}

impl<T: Scalar, I: SpIndex, Iptr: SpIndex> TryFrom<&CsMatI<T, I, Iptr>> for CsrMatrix<T> {
    type Error = Error;
    /// [`CsrMatrix::from_sprs`].
    fn try_from(m: &CsMatI<T, I, Iptr>) -> Result<Self> {
        Self::from_sprs(m)
    }
}
