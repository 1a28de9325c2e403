//! SELL-C-sigma and ELL formats (Kreutzer, Hager, Wellein, Fehske, Bishop, *A unified sparse
//! matrix data format for efficient general sparse matrix-vector multiplication on modern
//! processors with wide SIMD units*, SIAM J. Sci. Comput. 36(5), 2014).
//!
//! Rows are sorted by decreasing length inside windows of `sigma` rows, then grouped in slices
//! of `c` consecutive sorted rows. Each slice is padded to its longest row and stored
//! column-major, so `c` threads (one per row of a slice) read consecutive memory. ELL is the
//! special case of a single slice holding every row, without sorting.
//!
//! All index arrays are `u32`, ready to be copied to a device.

use crate::error::{Error, Result};
use crate::matrix::csr::CsrMatrix;
use crate::scalar::Scalar;

/// Largest slice height C of [`SellMatrix`]: every slice pads its rows up to C, so a C far above
/// the GPU's work-group size only multiplies the storage (a 100-row matrix with C = 4e8 would
/// need gigabytes).
pub const MAX_SLICE_HEIGHT: usize = 1 << 16;

/// A sparse matrix in SELL-C-sigma format with 32-bit indices.
///
/// Layout: slice `s` holds the sorted positions `s * c .. (s + 1) * c`; entry `j` of local row
/// `l` of slice `s` is stored at `slice_ptr[s] + j * c + l` (column-major inside a slice). The
/// width of slice `s` is `(slice_ptr[s + 1] - slice_ptr[s]) / c`.
///
/// Padding entries (those at `j >= row_len[p]`, and every entry of the padding rows at sorted
/// positions `p >= n_rows` in the last slice) have value zero and a valid column index (the
/// last real column of the row, or 0 for a row without entries), so a kernel may read
/// `x[col_idx[k]]` unconditionally. A kernel may also stop row `p` after `row_len[p]` entries.
///
/// The fields are public so that backends can upload them directly; [`SellMatrix::validate`]
/// checks their consistency after any manual change.
///
/// ```
/// use pipekrylov::matrix::{CsrMatrix, SellMatrix};
/// // [[1, 0, 2], [0, 3, 0], [4, 5, 6]]
/// let a = CsrMatrix::new(3, 3, vec![0, 2, 3, 6], vec![0, 2, 1, 0, 1, 2],
///                        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// let s = SellMatrix::from_csr(&a, 2, 2).unwrap();
/// assert_eq!(s.n_slices(), 2);
/// let mut y = vec![0.0; 3];
/// s.mul_vec(&[1.0, 1.0, 1.0], &mut y).unwrap();
/// assert_eq!(y, vec![3.0, 3.0, 15.0]);
/// assert_eq!(s.to_csr().unwrap(), a);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SellMatrix<T> {
    /// Number of rows of the matrix.
    pub n_rows: usize,
    /// Number of columns of the matrix.
    pub n_cols: usize,
    /// Slice height: number of rows per slice (`>= 1`).
    pub c: usize,
    /// Sorting window in rows (`1`: no sorting; otherwise a multiple of `c`).
    pub sigma: usize,
    /// Number of true stored entries (those of the CSR matrix, without padding).
    pub nnz: usize,
    /// Offsets of the slices in `col_idx` / `values` (length `n_slices + 1`, starts at 0, ends
    /// at the number of stored entries, padding included).
    pub slice_ptr: Vec<u32>,
    /// Column index of every stored entry, padding included (always `< n_cols`).
    pub col_idx: Vec<u32>,
    /// Value of every stored entry; padding entries are zero.
    pub values: Vec<T>,
    /// `row_perm[p]` is the original row stored at sorted position `p` (length `n_rows`;
    /// positions `n_rows .. n_slices * c` of the last slice are padding rows).
    pub row_perm: Vec<u32>,
    /// `row_len[p]` is the true number of entries of the row at sorted position `p` (length
    /// `n_rows`); entries `j >= row_len[p]` of that row are padding.
    pub row_len: Vec<u32>,
}

/// Largest value a device index may take.
const U32_MAX: usize = u32::MAX as usize;

fn to_u32(value: usize, what: &str) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::IndexOverflow {
        what: what.into(),
        value,
        max: U32_MAX,
    })
}

impl<T: Scalar> SellMatrix<T> {
    /// Convert a CSR matrix to SELL-C-sigma with slice height `c` and sorting window `sigma`.
    ///
    /// Rows are sorted by decreasing length (stable) inside each window of `sigma` consecutive
    /// rows; `sigma == 1` keeps the original order. Errors: [`Error::InvalidParameter`] when
    /// `c` is not in 1..=[`MAX_SLICE_HEIGHT`] or `sigma` is neither 1 nor a positive multiple of
    /// `c`; [`Error::IndexOverflow`] when a dimension or the padded number of stored entries
    /// does not fit in `u32`; [`Error::OutOfMemory`] when the padded arrays do not fit in the
    /// host's memory.
    pub fn from_csr(a: &CsrMatrix<T>, c: usize, sigma: usize) -> Result<Self> {
        if c == 0 {
            return Err(Error::param("c", "slice height must be at least 1"));
        }
        if c > MAX_SLICE_HEIGHT {
            return Err(Error::param(
                "c",
                format!("slice height {c} exceeds {MAX_SLICE_HEIGHT}"),
            ));
        }
        if sigma == 0 || (sigma != 1 && sigma % c != 0) {
            return Err(Error::param(
                "sigma",
                format!("sorting window {sigma} must be 1 or a positive multiple of c = {c}"),
            ));
        }
        Self::build(a, c, sigma)
    }

    /// Convert a CSR matrix to ELL: a single slice holding all rows (`c = n_rows`, no sorting),
    /// so entry `j` of row `r` is at `j * n_rows + r` and every row is padded to the longest.
    ///
    /// A matrix without rows gives zero slices (with `c = 1`). Errors: [`Error::IndexOverflow`]
    /// when `n_rows * max_row_len` or a dimension does not fit in `u32`.
    pub fn ell_from_csr(a: &CsrMatrix<T>) -> Result<Self> {
        Self::build(a, a.n_rows().max(1), 1)
    }

    fn build(a: &CsrMatrix<T>, c: usize, sigma: usize) -> Result<Self> {
        let n_rows = a.n_rows();
        let n_cols = a.n_cols();
        to_u32(n_rows, "n_rows")?;
        to_u32(n_cols, "n_cols")?;
        let row_ptr = a.row_ptr();
        let len = |r: usize| row_ptr[r + 1] - row_ptr[r];

        // Sorted order: stable sort by decreasing length inside each window of sigma rows.
        let mut perm: Vec<usize> = (0..n_rows).collect();
        if sigma > 1 {
            for window in perm.chunks_mut(sigma) {
                window.sort_by_key(|&r| std::cmp::Reverse(len(r)));
            }
        }

        let n_slices = n_rows.div_ceil(c);
        // Kernels index padded rows `s * c + l` with 32-bit integers.
        let padded_rows = n_slices.saturating_mul(c);
        to_u32(padded_rows, "padded rows (n_slices * c)")?;
        let mut widths = Vec::with_capacity(n_slices);
        let mut total = 0usize;
        for s in 0..n_slices {
            let rows = &perm[s * c..((s + 1) * c).min(n_rows)];
            let width = rows.iter().map(|&r| len(r)).max().unwrap_or(0);
            let size = width.checked_mul(c).ok_or(Error::IndexOverflow {
                what: "stored entries of a slice".into(),
                value: usize::MAX,
                max: U32_MAX,
            })?;
            total = total.checked_add(size).ok_or(Error::IndexOverflow {
                what: "stored entries".into(),
                value: usize::MAX,
                max: U32_MAX,
            })?;
            to_u32(total, "stored entries (padded)")?;
            widths.push(width);
        }

        let mut slice_ptr = Vec::with_capacity(n_slices + 1);
        slice_ptr.push(0u32);
        let mut col_idx = crate::memory::try_filled("SELL column indices", total, 0u32)?;
        let mut values = crate::memory::try_filled("SELL values", total, T::zero())?;
        let mut row_len = Vec::with_capacity(n_rows);
        let cols = a.col_idx();
        let vals = a.values();
        let mut offset = 0usize;
        for (s, &width) in widths.iter().enumerate() {
            // Padding rows of the last slice keep the zeros in column 0 filled above.
            for (l, &r) in perm[s * c..((s + 1) * c).min(n_rows)].iter().enumerate() {
                let (start, end) = (row_ptr[r], row_ptr[r + 1]);
                let pad_col = if end > start { cols[end - 1] } else { 0 };
                let pad_col = to_u32(pad_col, "column index")?;
                for j in 0..width {
                    let k = offset + j * c + l;
                    if start + j < end {
                        col_idx[k] = to_u32(cols[start + j], "column index")?;
                        values[k] = vals[start + j];
                    } else {
                        col_idx[k] = pad_col;
                    }
                }
                row_len.push(to_u32(end - start, "row length")?);
            }
            offset += width * c;
            slice_ptr.push(to_u32(offset, "slice offset")?);
        }

        let row_perm = perm
            .iter()
            .map(|&r| to_u32(r, "row index"))
            .collect::<Result<Vec<u32>>>()?;
        Ok(Self {
            n_rows,
            n_cols,
            c,
            sigma,
            nnz: a.nnz(),
            slice_ptr,
            col_idx,
            values,
            row_perm,
            row_len,
        })
    }

    /// Number of slices (`ceil(n_rows / c)`).
    pub fn n_slices(&self) -> usize {
        self.slice_ptr.len().saturating_sub(1)
    }

    /// Number of stored entries, padding included.
    pub fn stored_entries(&self) -> usize {
        self.values.len()
    }

    /// Check that the public fields are mutually consistent (sizes, offsets, permutation,
    /// column range, row lengths); [`Error::InvalidMatrix`] naming the first problem otherwise.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidMatrix(m));
        if self.c == 0 {
            return bad("SELL slice height c is 0".into());
        }
        let n_slices = self.n_rows.div_ceil(self.c);
        if self.slice_ptr.len() != n_slices + 1 {
            return bad(format!(
                "SELL slice_ptr has length {}, expected n_slices + 1 = {}",
                self.slice_ptr.len(),
                n_slices + 1
            ));
        }
        if self.slice_ptr.first() != Some(&0) {
            return bad("SELL slice_ptr must start at 0".into());
        }
        for (s, w) in self.slice_ptr.windows(2).enumerate() {
            if w[1] < w[0] || (w[1] - w[0]) as usize % self.c != 0 {
                return bad(format!(
                    "SELL slice {s}: size {} .. {} is not a non-negative multiple of c = {}",
                    w[0], w[1], self.c
                ));
            }
        }
        let total = self.slice_ptr.last().map_or(0, |&t| t as usize);
        if self.col_idx.len() != total || self.values.len() != total {
            return bad(format!(
                "SELL stores {} column indices and {} values, slice_ptr ends at {total}",
                self.col_idx.len(),
                self.values.len()
            ));
        }
        if self.row_perm.len() != self.n_rows || self.row_len.len() != self.n_rows {
            return bad(format!(
                "SELL row_perm / row_len have lengths {} / {}, expected n_rows = {}",
                self.row_perm.len(),
                self.row_len.len(),
                self.n_rows
            ));
        }
        let mut seen = vec![false; self.n_rows];
        for (p, &r) in self.row_perm.iter().enumerate() {
            match seen.get_mut(r as usize) {
                Some(flag) if !*flag => *flag = true,
                _ => return bad(format!("SELL row_perm is not a permutation (position {p})")),
            }
        }
        let mut true_nnz = 0usize;
        for (p, &len) in self.row_len.iter().enumerate() {
            let s = p / self.c;
            let width = (self.slice_ptr[s + 1] - self.slice_ptr[s]) as usize / self.c;
            if len as usize > width {
                return bad(format!(
                    "SELL row_len[{p}] = {len} exceeds the width {width} of slice {s}"
                ));
            }
            true_nnz += len as usize;
        }
        if true_nnz != self.nnz {
            return bad(format!(
                "SELL nnz = {} but row lengths sum to {true_nnz}",
                self.nnz
            ));
        }
        if let Some(k) = self.col_idx.iter().position(|&c| c as usize >= self.n_cols) {
            return bad(format!(
                "SELL column index {} at position {k} out of range (n_cols = {})",
                self.col_idx[k], self.n_cols
            ));
        }
        Ok(())
    }

    /// `y = A x` (sequential reference implementation; each row stops after its true length,
    /// so the result equals the CSR product bit for bit).
    pub fn mul_vec(&self, x: &[T], y: &mut [T]) -> Result<()> {
        if x.len() != self.n_cols {
            return Err(Error::dims(
                "x length vs matrix columns",
                self.n_cols,
                x.len(),
            ));
        }
        if y.len() != self.n_rows {
            return Err(Error::dims("y length vs matrix rows", self.n_rows, y.len()));
        }
        self.validate()?;
        for (p, (&r, &len)) in self.row_perm.iter().zip(&self.row_len).enumerate() {
            let (s, l) = (p / self.c, p % self.c);
            let base = self.slice_ptr[s] as usize + l;
            y[r as usize] = (0..len as usize)
                .map(|j| {
                    let k = base + j * self.c;
                    self.values[k] * x[self.col_idx[k] as usize]
                })
                .sum();
        }
        Ok(())
    }

    /// Back to CSR, in the original row order. Only padding is dropped: explicit zeros of the
    /// original matrix (entries within each row's true length) are kept.
    pub fn to_csr(&self) -> Result<CsrMatrix<T>> {
        self.validate()?;
        let mut row_ptr = vec![0usize; self.n_rows + 1];
        for (&r, &len) in self.row_perm.iter().zip(&self.row_len) {
            row_ptr[r as usize + 1] = len as usize;
        }
        for i in 0..self.n_rows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let mut col_idx = vec![0usize; self.nnz];
        let mut values = vec![T::zero(); self.nnz];
        for (p, (&r, &len)) in self.row_perm.iter().zip(&self.row_len).enumerate() {
            let (s, l) = (p / self.c, p % self.c);
            let base = self.slice_ptr[s] as usize + l;
            let out = row_ptr[r as usize];
            for j in 0..len as usize {
                let k = base + j * self.c;
                col_idx[out + j] = self.col_idx[k] as usize;
                values[out + j] = self.values[k];
            }
        }
        CsrMatrix::new(self.n_rows, self.n_cols, row_ptr, col_idx, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CsrMatrix<f64> {
        // Row lengths 1, 0, 3, 2, 1.
        CsrMatrix::new(
            5,
            4,
            vec![0, 1, 1, 4, 6, 7],
            vec![2, 0, 1, 3, 1, 2, 0],
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        )
        .unwrap()
    }

    #[test]
    fn sell_layout_is_column_major_per_slice() {
        let s = SellMatrix::from_csr(&sample(), 2, 4).unwrap();
        // Window 0..4 sorted by decreasing length: rows 2 (3), 3 (2), 0 (1), 1 (0); then row 4.
        assert_eq!(s.row_perm, vec![2, 3, 0, 1, 4]);
        assert_eq!(s.row_len, vec![3, 2, 1, 0, 1]);
        assert_eq!(s.slice_ptr, vec![0, 6, 8, 10]);
        // Slice 0 (rows 2, 3), width 3, column-major.
        assert_eq!(&s.values[0..6], &[2.0, 5.0, 3.0, 6.0, 4.0, 0.0]);
        assert_eq!(&s.col_idx[0..6], &[0, 1, 1, 2, 3, 2]);
        // Slice 1 (rows 0, 1), width 1; row 1 is empty: padding in column 0.
        assert_eq!(&s.values[6..8], &[1.0, 0.0]);
        assert_eq!(&s.col_idx[6..8], &[2, 0]);
        // Slice 2 (row 4 and a padding row).
        assert_eq!(&s.values[8..10], &[7.0, 0.0]);
        assert_eq!(&s.col_idx[8..10], &[0, 0]);
        assert_eq!(s.stored_entries(), 10);
        assert_eq!(s.nnz, 7);
        assert_eq!(s.to_csr().unwrap(), sample());
    }

    #[test]
    fn ell_has_one_slice_of_all_rows() {
        let e = SellMatrix::ell_from_csr(&sample()).unwrap();
        assert_eq!(e.c, 5);
        assert_eq!(e.n_slices(), 1);
        assert_eq!(e.row_perm, vec![0, 1, 2, 3, 4]);
        assert_eq!(e.stored_entries(), 15);
        // Entry j of row r at j * n_rows + r.
        assert_eq!(e.values[5 + 2], 3.0);
        assert_eq!(e.col_idx[2 * 5 + 3], 2); // padding of row 3 repeats its last column
        let empty = SellMatrix::ell_from_csr(&CsrMatrix::<f64>::identity(0)).unwrap();
        assert_eq!(empty.n_slices(), 0);
        assert_eq!(empty.slice_ptr, vec![0]);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let a = sample();
        assert!(matches!(
            SellMatrix::from_csr(&a, 0, 1),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            SellMatrix::from_csr(&a, 4, 6),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            SellMatrix::from_csr(&a, 4, 0),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
