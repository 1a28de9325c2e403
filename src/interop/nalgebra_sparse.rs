//! [`CsrMatrix`] to and from `nalgebra-sparse` matrices (feature `nalgebra-sparse`).
//!
//! Both crates store `usize` indices, so the conversions copy the three arrays as they are;
//! `nalgebra-sparse` checks the structure (sorted, duplicate-free rows), and a refusal comes
//! back as [`Error::InvalidMatrix`]. A `CscMatrix` converts through `nalgebra-sparse`'s own CSC
//! to CSR conversion. Explicit zeros are kept.
//!
//! ```
//! use pipekrylov::matrix::CsrMatrix;
//! let a = CsrMatrix::from_triplets(2, 2, &[(0, 0, 4.0), (1, 0, -1.0), (1, 1, 4.0)]).unwrap();
//! let m = a.to_nalgebra_sparse().unwrap();
//! assert_eq!(m.nnz(), 3);
//! let back = CsrMatrix::from_nalgebra_sparse(&m).unwrap();
//! assert_eq!(back.values(), a.values());
//! ```

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use nalgebra_sparse::{CscMatrix, CsrMatrix as NaCsr};

impl<T: Scalar + nalgebra_sparse::na::Scalar> CsrMatrix<T> {
    /// A copy of the `nalgebra-sparse` CSR matrix `m`.
    pub fn from_nalgebra_sparse(m: &NaCsr<T>) -> Result<Self> {
        CsrMatrix::new(
            m.nrows(),
            m.ncols(),
            m.row_offsets().to_vec(),
            m.col_indices().to_vec(),
            m.values().to_vec(),
        )
    }

    /// A copy of the `nalgebra-sparse` CSC matrix `m` (converted to CSR by `nalgebra-sparse`).
    pub fn from_nalgebra_sparse_csc(m: &CscMatrix<T>) -> Result<Self> {
        Self::from_nalgebra_sparse(&NaCsr::from(m))
    }

    /// A copy as a `nalgebra-sparse` CSR matrix.
    pub fn to_nalgebra_sparse(&self) -> Result<NaCsr<T>> {
        NaCsr::try_from_csr_data(
            self.n_rows(),
            self.n_cols(),
            self.row_ptr().to_vec(),
            self.col_idx().to_vec(),
            self.values().to_vec(),
        )
        .map_err(|e| Error::InvalidMatrix(format!("nalgebra-sparse refused the structure: {e}")))
    }
}
