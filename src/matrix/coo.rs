//! Coordinate (triplet) format: the assembly format, converted to CSR for everything else.

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A sparse matrix as a list of `(row, col, value)` triplets. Duplicates are allowed and
/// summed on conversion to CSR; order is arbitrary.
///
/// ```
/// use pipekrylov::matrix::CooMatrix;
/// let mut a = CooMatrix::<f64>::new(2, 2);
/// a.push(0, 0, 2.0).unwrap();
/// a.push(1, 1, 3.0).unwrap();
/// a.push(1, 1, 1.0).unwrap(); // summed
/// let csr = a.to_csr().unwrap();
/// assert_eq!(csr.values(), &[2.0, 4.0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CooMatrix<T> {
    n_rows: usize,
    n_cols: usize,
    rows: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<T>,
}

impl<T: Scalar> CooMatrix<T> {
    /// An empty `n_rows x n_cols` matrix.
    pub fn new(n_rows: usize, n_cols: usize) -> Self {
        Self {
            n_rows,
            n_cols,
            rows: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
        }
    }

    /// An empty matrix with room for `cap` entries.
    pub fn with_capacity(n_rows: usize, n_cols: usize, cap: usize) -> Self {
        Self {
            n_rows,
            n_cols,
            rows: Vec::with_capacity(cap),
            cols: Vec::with_capacity(cap),
            vals: Vec::with_capacity(cap),
        }
    }

    /// Append an entry; out-of-range indices are an error.
    pub fn push(&mut self, row: usize, col: usize, val: T) -> Result<()> {
        if row >= self.n_rows || col >= self.n_cols {
            return Err(Error::InvalidMatrix(format!(
                "entry ({row}, {col}) outside a {} x {} matrix",
                self.n_rows, self.n_cols
            )));
        }
        self.rows.push(row);
        self.cols.push(col);
        self.vals.push(val);
        Ok(())
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }
    /// Number of stored triplets (duplicates counted).
    pub fn nnz(&self) -> usize {
        self.vals.len()
    }
    /// Iterate over `(row, col, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, T)> + '_ {
        self.rows
            .iter()
            .zip(&self.cols)
            .zip(&self.vals)
            .map(|((&r, &c), &v)| (r, c, v))
    }

    /// Convert to CSR: columns sorted within each row, duplicates summed.
    pub fn to_csr(&self) -> Result<super::CsrMatrix<T>> {
        let n = self.n_rows;
        let nnz = self.nnz();
        // Everything this conversion and the sort after it hold at once, checked before any
        // of it is allocated (hostile headers: RELIABILITY.md rows 16 and 22).
        crate::memory::check_row_pointers(n, nnz)?;
        let word = std::mem::size_of::<usize>();
        let entry = word + std::mem::size_of::<T>();
        let total = n
            .checked_add(1)
            .and_then(|p| p.checked_mul(3 * word))
            .and_then(|p| p.checked_add(nnz.checked_mul(2 * entry)?));
        crate::memory::check_budget("COO to CSR", total)?;
        let mut counts = crate::memory::try_filled("CSR row pointers", n + 1, 0usize)?;
        for &r in &self.rows {
            counts[r + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut next = crate::memory::try_filled("CSR fill positions", n + 1, 0usize)?;
        next.copy_from_slice(&counts);
        let mut cols = crate::memory::try_filled("CSR column indices", nnz, 0usize)?;
        let mut vals = crate::memory::try_filled("CSR values", nnz, T::zero())?;
        for ((&r, &c), &v) in self.rows.iter().zip(&self.cols).zip(&self.vals) {
            let k = next[r];
            cols[k] = c;
            vals[k] = v;
            next[r] += 1;
        }
        super::CsrMatrix::from_unsorted(n, self.n_cols, counts, cols, vals)
    }
}
