//! Block compressed sparse row (BSR) format with square blocks stored column-major, as in
//! PETSc's BAIJ format.

use crate::error::{Error, Result};
use crate::matrix::csr::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A sparse matrix of dense `s x s` blocks in block-CSR layout.
///
/// Block `b` (in block-row order, block columns sorted within each block row) has its entry
/// `(i, j)` at `values[b * s * s + j * s + i]` (column-major). Every block that contains at
/// least one stored entry of the source matrix is stored in full, zeros included.
///
/// The fields are public so that backends can upload them directly; [`BsrMatrix::validate`]
/// checks their consistency after any manual change.
///
/// ```
/// use pipekrylov::matrix::{BsrMatrix, CsrMatrix};
/// // [[1, 2], [0, 3]] as a single 2 x 2 block.
/// let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0]).unwrap();
/// let b = BsrMatrix::from_csr(&a, 2).unwrap();
/// assert_eq!(b.block(0), &[1.0, 0.0, 2.0, 3.0]);
/// let mut y = vec![0.0; 2];
/// b.mul_vec(&[1.0, 1.0], &mut y).unwrap();
/// assert_eq!(y, vec![3.0, 3.0]);
/// assert_eq!(b.to_csr_drop_zeros().unwrap(), a);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BsrMatrix<T> {
    /// Block size `s` (blocks are `s x s`, `s >= 1`).
    pub block_size: usize,
    /// Number of block rows (`n_rows / s`).
    pub n_block_rows: usize,
    /// Number of block columns (`n_cols / s`).
    pub n_block_cols: usize,
    /// Block row pointers (length `n_block_rows + 1`, from 0 to the number of blocks).
    pub row_ptr: Vec<usize>,
    /// Block column of every block, strictly increasing within each block row.
    pub col_idx: Vec<usize>,
    /// Block values, `s * s` per block, each block column-major: entry `(i, j)` of block `b`
    /// is `values[b * s * s + j * s + i]`.
    pub values: Vec<T>,
}

impl<T: Scalar> BsrMatrix<T> {
    /// Convert a CSR matrix to BSR with blocks of size `s`.
    ///
    /// Errors: [`Error::InvalidParameter`] when `s == 0` or when `n_rows` or `n_cols` is not a
    /// multiple of `s`.
    pub fn from_csr(a: &CsrMatrix<T>, s: usize) -> Result<Self> {
        if s == 0 {
            return Err(Error::param("block_size", "block size must be at least 1"));
        }
        let (n_rows, n_cols) = (a.n_rows(), a.n_cols());
        if n_rows % s != 0 || n_cols % s != 0 {
            return Err(Error::param(
                "block_size",
                format!(
                    "n_rows = {n_rows} and n_cols = {n_cols} must both be multiples of the \
                     block size {s}"
                ),
            ));
        }
        let ss = s.checked_mul(s).ok_or_else(|| {
            Error::param("block_size", format!("block size {s} squared overflows"))
        })?;
        let (n_block_rows, n_block_cols) = (n_rows / s, n_cols / s);
        // The sorted block columns of block row br, in `scratch`.
        let block_cols = |br: usize, scratch: &mut Vec<usize>| {
            scratch.clear();
            for r in br * s..(br + 1) * s {
                scratch.extend(a.row(r).0.iter().map(|&c| c / s));
            }
            scratch.sort_unstable();
            scratch.dedup();
        };
        // Pass 1 (parallel): blocks per block row, then the row pointers.
        let counts: Vec<usize> = (0..n_block_rows)
            .into_par_iter()
            .map_init(Vec::new, |scratch, br| {
                block_cols(br, scratch);
                scratch.len()
            })
            .collect();
        let mut row_ptr = Vec::with_capacity(n_block_rows + 1);
        row_ptr.push(0usize);
        for c in &counts {
            row_ptr.push(row_ptr[row_ptr.len() - 1] + c);
        }
        drop(counts);
        let n_blocks = row_ptr[n_block_rows];
        let n_values_total = n_blocks
            .checked_mul(ss)
            .ok_or_else(|| Error::InvalidMatrix("number of BSR values overflows usize".into()))?;
        // Pass 2 (parallel): every block row fills its own columns and blocks (missing
        // entries of a touched block stay explicit zeros); blocks column-major.
        let mut col_idx = vec![0usize; n_blocks];
        let mut values = vec![T::zero(); n_values_total];
        let mut rows: Vec<(usize, &mut [usize], &mut [T])> = Vec::with_capacity(n_block_rows);
        let (mut cols_rest, mut vals_rest) = (&mut col_idx[..], &mut values[..]);
        for br in 0..n_block_rows {
            let len = row_ptr[br + 1] - row_ptr[br];
            let (c, cr) = std::mem::take(&mut cols_rest).split_at_mut(len);
            let (v, vr) = std::mem::take(&mut vals_rest).split_at_mut(len * ss);
            rows.push((br, c, v));
            (cols_rest, vals_rest) = (cr, vr);
        }
        rows.into_par_iter()
            .for_each_init(Vec::new, |scratch, (br, cols, vals)| {
                block_cols(br, scratch);
                cols.copy_from_slice(scratch);
                for r in br * s..(br + 1) * s {
                    let i = r - br * s;
                    let (rc, rv) = a.row(r);
                    for (&c, &v) in rc.iter().zip(rv) {
                        let (bc, j) = (c / s, c % s);
                        // Present: the columns were built from these entries.
                        let at = scratch.binary_search(&bc).unwrap_or(0);
                        vals[at * ss + j * s + i] = v;
                    }
                }
            });
        Ok(Self {
            block_size: s,
            n_block_rows,
            n_block_cols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// Number of scalar rows (`n_block_rows * block_size`).
    pub fn n_rows(&self) -> usize {
        self.n_block_rows * self.block_size
    }

    /// Number of scalar columns (`n_block_cols * block_size`).
    pub fn n_cols(&self) -> usize {
        self.n_block_cols * self.block_size
    }

    /// Number of stored blocks.
    pub fn nnz_blocks(&self) -> usize {
        self.col_idx.len()
    }

    /// The `s * s` values of block `b`, column-major; empty when `b >= nnz_blocks()`.
    pub fn block(&self, b: usize) -> &[T] {
        let ss = self.block_size * self.block_size;
        b.checked_mul(ss)
            .and_then(|start| self.values.get(start..start.checked_add(ss)?))
            .unwrap_or(&[])
    }

    /// Check that the public fields are mutually consistent (sizes, sorted in-range block
    /// columns); [`Error::InvalidMatrix`] naming the first problem otherwise.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidMatrix(m));
        let s = self.block_size;
        if s == 0 {
            return bad("BSR block size is 0".into());
        }
        if self.n_block_rows.checked_mul(s).is_none() || self.n_block_cols.checked_mul(s).is_none()
        {
            return bad("BSR dimensions overflow usize".into());
        }
        if self.row_ptr.len() != self.n_block_rows + 1 {
            return bad(format!(
                "BSR row_ptr has length {}, expected n_block_rows + 1 = {}",
                self.row_ptr.len(),
                self.n_block_rows + 1
            ));
        }
        if self.row_ptr.first() != Some(&0) || self.row_ptr.last() != Some(&self.col_idx.len()) {
            return bad(format!(
                "BSR row_ptr must run from 0 to the number of blocks {}",
                self.col_idx.len()
            ));
        }
        if let Some(br) = self.row_ptr.windows(2).position(|w| w[0] > w[1]) {
            return bad(format!("BSR row_ptr decreases at block row {br}"));
        }
        if s.checked_mul(s)
            .and_then(|ss| ss.checked_mul(self.col_idx.len()))
            != Some(self.values.len())
        {
            return bad(format!(
                "BSR has {} values, expected {} blocks of {s} x {s}",
                self.values.len(),
                self.col_idx.len()
            ));
        }
        for br in 0..self.n_block_rows {
            let cols = &self.col_idx[self.row_ptr[br]..self.row_ptr[br + 1]];
            if cols.windows(2).any(|w| w[0] >= w[1]) {
                return bad(format!(
                    "BSR block row {br}: block columns not strictly increasing"
                ));
            }
            if let Some(&bc) = cols.iter().find(|&&bc| bc >= self.n_block_cols) {
                return bad(format!(
                    "BSR block row {br}: block column {bc} out of range (n_block_cols = {})",
                    self.n_block_cols
                ));
            }
        }
        Ok(())
    }

    /// `y = A x` (sequential reference implementation).
    pub fn mul_vec(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.validate()?;
        if x.len() != self.n_cols() {
            return Err(Error::dims(
                "x length vs matrix columns",
                self.n_cols(),
                x.len(),
            ));
        }
        if y.len() != self.n_rows() {
            return Err(Error::dims(
                "y length vs matrix rows",
                self.n_rows(),
                y.len(),
            ));
        }
        let s = self.block_size;
        for (br, yb) in y.chunks_exact_mut(s).enumerate() {
            yb.fill(T::zero());
            for b in self.row_ptr[br]..self.row_ptr[br + 1] {
                let xb = &x[self.col_idx[b] * s..(self.col_idx[b] + 1) * s];
                let blk = &self.values[b * s * s..(b + 1) * s * s];
                for (j, &xj) in xb.iter().enumerate() {
                    for (i, yi) in yb.iter_mut().enumerate() {
                        *yi += blk[j * s + i] * xj;
                    }
                }
            }
        }
        Ok(())
    }

    /// Back to CSR with every stored block entry, zeros within blocks included.
    pub fn to_csr(&self) -> Result<CsrMatrix<T>> {
        self.to_csr_filtered(|_| true)
    }

    /// Back to CSR without the entries that are exactly zero (this drops the zero fill of the
    /// blocks and also explicit zeros of the original matrix).
    pub fn to_csr_drop_zeros(&self) -> Result<CsrMatrix<T>> {
        self.to_csr_filtered(|v| v != T::zero())
    }

    fn to_csr_filtered(&self, keep: impl Fn(T) -> bool) -> Result<CsrMatrix<T>> {
        self.validate()?;
        let s = self.block_size;
        let mut row_ptr = Vec::with_capacity(self.n_rows() + 1);
        row_ptr.push(0usize);
        let mut col_idx = Vec::new();
        let mut values = Vec::new();
        for br in 0..self.n_block_rows {
            for i in 0..s {
                for b in self.row_ptr[br]..self.row_ptr[br + 1] {
                    let bc = self.col_idx[b];
                    for j in 0..s {
                        let v = self.values[b * s * s + j * s + i];
                        if keep(v) {
                            col_idx.push(bc * s + j);
                            values.push(v);
                        }
                    }
                }
                row_ptr.push(col_idx.len());
            }
        }
        CsrMatrix::new(self.n_rows(), self.n_cols(), row_ptr, col_idx, values)
    }

    /// Block row pointers and block column indices as `u32`, as devices store them; an
    /// [`Error::IndexOverflow`] when the number of blocks, the number of stored values or a
    /// block dimension does not fit 32-bit indices.
    pub fn indices_u32(&self) -> Result<(Vec<u32>, Vec<u32>)> {
        let max = u32::MAX as usize;
        let overflow = |what: &str, value: usize| Error::IndexOverflow {
            what: what.into(),
            value,
            max,
        };
        if self.nnz_blocks() > max {
            return Err(overflow("nnz_blocks", self.nnz_blocks()));
        }
        if self.values.len() > max {
            return Err(overflow("stored values", self.values.len()));
        }
        if self.n_block_rows > max || self.n_block_cols > max {
            return Err(overflow(
                "block dimension",
                self.n_block_rows.max(self.n_block_cols),
            ));
        }
        let row_ptr = self
            .row_ptr
            .iter()
            .map(|&p| u32::try_from(p).map_err(|_| overflow("block row pointer", p)))
            .collect::<Result<Vec<u32>>>()?;
        let col_idx = self
            .col_idx
            .iter()
            .map(|&c| u32::try_from(c).map_err(|_| overflow("block column index", c)))
            .collect::<Result<Vec<u32>>>()?;
        Ok((row_ptr, col_idx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 6 x 6 example of the paper, section 2.1.
    fn paper_example() -> CsrMatrix<f64> {
        let dense = [
            [14., 15., 1., 3., 0., 0.],
            [17., 11., 5., 7., 0., 0.],
            [0., 0., 5., 20., 27., 20.],
            [0., 0., 33., 15., 10., 15.],
            [36., 0., 32., 7., 12., 16.],
            [4., 31., 6., 13., 19., 11.],
        ];
        let mut row_ptr = vec![0];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for row in &dense {
            for (c, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    cols.push(c);
                    vals.push(v);
                }
            }
            row_ptr.push(cols.len());
        }
        CsrMatrix::new(6, 6, row_ptr, cols, vals).unwrap()
    }

    #[test]
    fn paper_example_blocks() {
        let b = BsrMatrix::from_csr(&paper_example(), 2).unwrap();
        assert_eq!(b.row_ptr, vec![0, 2, 4, 7]);
        assert_eq!(b.col_idx, vec![0, 1, 1, 2, 0, 1, 2]);
        let expected: [[f64; 4]; 7] = [
            [14., 17., 15., 11.],
            [1., 5., 3., 7.],
            [5., 33., 20., 15.],
            [27., 10., 20., 15.],
            [36., 4., 0., 31.],
            [32., 6., 7., 13.],
            [12., 19., 16., 11.],
        ];
        for (k, e) in expected.iter().enumerate() {
            assert_eq!(b.block(k), e, "block {k}");
        }
        assert!(b.block(7).is_empty());
        assert_eq!(b.to_csr_drop_zeros().unwrap(), paper_example());
        assert_eq!(b.to_csr().unwrap().nnz(), 28);
    }

    #[test]
    fn conversion_round_trips_and_touches_exactly_the_needed_blocks() {
        use crate::matrix::generate::Generator;
        // Generated matrices, and one with empty rows and a dense row.
        let mut cases: Vec<(CsrMatrix<f64>, usize)> = vec![
            (Generator::ConvDiff3d.generate(4096).unwrap().matrix, 4),
            (Generator::Elasticity3d.generate(3000).unwrap().matrix, 3),
            (Generator::Poisson2d.generate(4900).unwrap().matrix, 7),
        ];
        let n = 60;
        let mut t: Vec<(usize, usize, f64)> = (0..n).map(|c| (17, c, 1.0 + c as f64)).collect();
        t.extend(
            (0..n)
                .filter(|i| i % 5 != 3 && *i != 17)
                .map(|i| (i, (i * 7) % n, 2.0)),
        );
        cases.push((CsrMatrix::from_triplets(n, n, &t).unwrap(), 6));
        for (a, s) in cases {
            let b = BsrMatrix::from_csr(&a, s).unwrap();
            b.validate().unwrap();
            // Every stored nonzero lands in its block (explicit zeros of `a` may vanish).
            let nonzeros: Vec<(usize, usize, f64)> = (0..a.n_rows())
                .flat_map(|r| {
                    let (c, v) = a.row(r);
                    c.iter()
                        .zip(v)
                        .filter(|(_, v)| **v != 0.0)
                        .map(move |(&c, &v)| (r, c, v))
                })
                .collect();
            let want = CsrMatrix::from_triplets(a.n_rows(), a.n_cols(), &nonzeros).unwrap();
            assert!(
                b.to_csr_drop_zeros().unwrap() == want,
                "block size {s}: values"
            );
            let mut touched: Vec<(usize, usize)> = (0..a.n_rows())
                .flat_map(|r| a.row(r).0.iter().map(move |&c| (r / s, c / s)))
                .collect();
            touched.sort_unstable();
            touched.dedup();
            assert_eq!(b.nnz_blocks(), touched.len(), "block size {s}");
        }
    }

    #[test]
    fn non_multiple_dimensions_are_errors() {
        let a = paper_example();
        let e = BsrMatrix::from_csr(&a, 4).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }));
        assert!(e.to_string().contains("n_rows = 6") && e.to_string().contains("n_cols = 6"));
        assert!(BsrMatrix::from_csr(&a, 0).is_err());
    }
}
