//! Compressed sparse row format, the host-side master format.

use super::csr_check::{check_csr, check_shape, PARALLEL_CHECK_NNZ};
use super::csr_view;
pub(crate) use super::fingerprint::fnv1a;
use super::fingerprint::FingerprintCache;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A validated CSR matrix: `row_ptr` non-decreasing from 0 to nnz, column indices in range and
/// strictly increasing within each row (unsorted input is sorted and duplicates summed by
/// [`CsrMatrix::from_unsorted`]).
///
/// ```
/// use pipekrylov::matrix::CsrMatrix;
/// // [[2, -1], [-1, 2]]
/// let a = CsrMatrix::new(2, 2, vec![0, 2, 4], vec![0, 1, 0, 1], vec![2.0, -1.0, -1.0, 2.0]).unwrap();
/// let mut y = vec![0.0; 2];
/// a.mul_vec(&[1.0, 1.0], &mut y).unwrap();
/// assert_eq!(y, vec![1.0, 1.0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix<T> {
    n_rows: usize,
    n_cols: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    values: Vec<T>,
    /// Fingerprints computed so far (reset by [`CsrMatrix::values_mut`]).
    hashes: FingerprintCache,
}

impl<T: Scalar> CsrMatrix<T> {
    /// Build from arrays that must already be sorted and duplicate-free; anything else is an
    /// [`Error::InvalidMatrix`] naming the row.
    pub fn new(
        n_rows: usize,
        n_cols: usize,
        row_ptr: Vec<usize>,
        col_idx: Vec<usize>,
        values: Vec<T>,
    ) -> Result<Self> {
        check_csr(n_rows, n_cols, &row_ptr, &col_idx, values.len())?;
        Ok(Self {
            n_rows,
            n_cols,
            row_ptr,
            col_idx,
            values,
            hashes: FingerprintCache::default(),
        })
    }

    /// Arrays that passed [`check_csr`] (a [`super::CsrView`]'s), with the fingerprints known
    /// of them.
    pub(crate) fn from_checked(
        n_rows: usize,
        n_cols: usize,
        (row_ptr, col_idx, values): (Vec<usize>, Vec<usize>, Vec<T>),
        hashes: FingerprintCache,
    ) -> Self {
        Self {
            n_rows,
            n_cols,
            row_ptr,
            col_idx,
            values,
            hashes,
        }
    }

    /// [`CsrMatrix::new`] from 32-bit index arrays (SciPy's, and C or Fortran codes'): the
    /// indices are widened, the values copied, and the result checked as `new` checks (row
    /// pointers from 0 to nnz that never decrease, columns in range and strictly increasing
    /// within each row). Errors as [`CsrMatrix::new`]'s; a negative index is named as one.
    ///
    /// ```
    /// use pipekrylov::matrix::CsrMatrix;
    /// let a = CsrMatrix::from_i32(2, 2, &[0, 2, 3], &[0, 1, 1], &[2.0, -1.0, 3.0]).unwrap();
    /// assert_eq!(a.row(0), (&[0usize, 1][..], &[2.0, -1.0][..]));
    /// assert!(CsrMatrix::from_i32(2, 2, &[0, 2, 3], &[1, 0, 1], &[2.0, -1.0, 3.0]).is_err());
    /// ```
    pub fn from_i32(
        n_rows: usize,
        n_cols: usize,
        row_ptr: &[i32],
        col_idx: &[i32],
        values: &[T],
    ) -> Result<Self> {
        let (row_ptr, col_idx) =
            csr_view::checked_i32(n_rows, n_cols, row_ptr, col_idx, values.len())?;
        csr_view::widened(
            (n_rows, n_cols),
            (row_ptr, col_idx, values),
            FingerprintCache::default(),
        )
    }

    /// Build from arrays whose rows may be unsorted and contain duplicates: columns are sorted
    /// and duplicates summed. Indices out of range are still an error.
    pub fn from_unsorted(
        n_rows: usize,
        n_cols: usize,
        row_ptr: Vec<usize>,
        col_idx: Vec<usize>,
        values: Vec<T>,
    ) -> Result<Self> {
        check_shape(n_rows, n_cols, &row_ptr, &col_idx, values.len())?;
        let mut out_ptr = crate::memory::try_with_capacity("CSR row pointers", n_rows + 1)?;
        let mut out_cols = crate::memory::try_with_capacity("CSR column indices", col_idx.len())?;
        let mut out_vals = crate::memory::try_with_capacity("CSR values", values.len())?;
        out_ptr.push(0);
        let mut row: Vec<(usize, T)> = Vec::new();
        for r in 0..n_rows {
            row.clear();
            row.extend(
                col_idx[row_ptr[r]..row_ptr[r + 1]]
                    .iter()
                    .copied()
                    .zip(values[row_ptr[r]..row_ptr[r + 1]].iter().copied()),
            );
            row.sort_by_key(|&(c, _)| c);
            for &(c, v) in &row {
                if out_cols.len() > *out_ptr.last().unwrap_or(&0) && out_cols.last() == Some(&c) {
                    if let Some(last) = out_vals.last_mut() {
                        *last += v;
                    }
                } else {
                    out_cols.push(c);
                    out_vals.push(v);
                }
            }
            out_ptr.push(out_cols.len());
        }
        Ok(Self {
            n_rows,
            n_cols,
            row_ptr: out_ptr,
            col_idx: out_cols,
            values: out_vals,
            hashes: FingerprintCache::default(),
        })
    }

    /// Build from `(row, col, value)` triplets in any order; duplicates are summed.
    ///
    /// ```
    /// use pipekrylov::matrix::CsrMatrix;
    /// let a = CsrMatrix::from_triplets(2, 2, &[(1, 0, 2.0), (0, 0, 1.0), (1, 0, 1.0)]).unwrap();
    /// assert_eq!(a.row(1), (&[0usize][..], &[3.0][..]));
    /// ```
    pub fn from_triplets(
        n_rows: usize,
        n_cols: usize,
        triplets: &[(usize, usize, T)],
    ) -> Result<Self> {
        let mut coo = super::CooMatrix::with_capacity(n_rows, n_cols, triplets.len());
        for &(r, c, v) in triplets {
            coo.push(r, c, v)?;
        }
        coo.to_csr()
    }

    /// A 64-bit hash (FNV-1a in four chains) of the shape, the pattern and the value bits: preconditioners
    /// remember it to refuse being used with another matrix
    /// ([`crate::Error::PreconditionerMismatch`]). Computed once (in parallel) and kept
    /// until [`CsrMatrix::values_mut`] is called.
    pub fn fingerprint(&self) -> u64 {
        self.hashes
            .full_hash(|| self.pattern_fingerprint(), &self.values)
    }

    /// [`CsrMatrix::fingerprint`] without the values: the shape and the pattern (row pointers
    /// and column indices). A solver set up once compares it before taking new values
    /// ([`crate::ReusableSolver::update_values`]). Computed once and kept.
    pub fn pattern_fingerprint(&self) -> u64 {
        self.hashes
            .pattern_hash(self.n_rows, self.n_cols, &self.row_ptr, &self.col_idx)
    }

    /// The `n x n` identity.
    pub fn identity(n: usize) -> Self {
        Self {
            n_rows: n,
            n_cols: n,
            row_ptr: (0..=n).collect(),
            col_idx: (0..n).collect(),
            values: vec![T::one(); n],
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
    /// True when the matrix is square.
    pub fn is_square(&self) -> bool {
        self.n_rows == self.n_cols
    }
    /// Row pointers (length `n_rows + 1`).
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }
    /// Column indices.
    pub fn col_idx(&self) -> &[usize] {
        &self.col_idx
    }
    /// Values.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Mutable values (the pattern stays fixed).
    pub fn values_mut(&mut self) -> &mut [T] {
        self.hashes.values_changed();
        &mut self.values
    }
    /// Column indices and values of row `r`.
    pub fn row(&self, r: usize) -> (&[usize], &[T]) {
        let (a, b) = (self.row_ptr[r], self.row_ptr[r + 1]);
        (&self.col_idx[a..b], &self.values[a..b])
    }

    /// The diagonal (zero where no entry is stored).
    pub fn diagonal(&self) -> Vec<T> {
        use rayon::prelude::*;
        (0..self.n_rows.min(self.n_cols))
            .into_par_iter()
            .map(|r| {
                let (c, v) = self.row(r);
                c.binary_search(&r)
                    .map(|k| v[k])
                    .unwrap_or_else(|_| T::zero())
            })
            .collect()
    }

    /// A copy made in parallel (a large matrix's arrays), or [`Error::OutOfMemory`] (where
    /// `clone` would abort).
    pub(crate) fn try_clone(&self) -> Result<Self> {
        use crate::memory::try_copy;
        Ok(Self {
            n_rows: self.n_rows,
            n_cols: self.n_cols,
            row_ptr: try_copy("matrix copy: row pointers", &self.row_ptr)?,
            col_idx: try_copy("matrix copy: column indices", &self.col_idx)?,
            values: try_copy("matrix copy: values", &self.values)?,
            hashes: self.hashes.clone(),
        })
    }

    /// Index of the first non-finite value, if any.
    pub fn first_non_finite(&self) -> Option<usize> {
        crate::scalar::first_non_finite(&self.values)
    }

    /// Longest row length.
    pub fn max_row_len(&self) -> usize {
        self.row_ptr
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// `y = A x` (sequential reference implementation).
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
        for (r, yr) in y.iter_mut().enumerate() {
            let (c, v) = self.row(r);
            *yr = c.iter().zip(v).map(|(&c, &v)| v * x[c]).sum();
        }
        Ok(())
    }

    /// The transpose. A large matrix is transposed in parallel over blocks of its columns
    /// (each block's rows of the result gathered from every row, in row order), with the same
    /// result as the serial count-and-scatter.
    pub fn transpose(&self) -> Self {
        let blocks = rayon::current_num_threads().min(self.n_cols);
        if self.nnz() < PARALLEL_CHECK_NNZ || blocks < 2 {
            return self.transpose_serial();
        }
        // Columns [bounds[b], bounds[b + 1]) are block b's: its rows of the result.
        let bounds: Vec<usize> = (0..=blocks).map(|b| b * self.n_cols / blocks).collect();
        // The part of row r whose columns lie in [c0, c1) (the columns ascend in a row).
        let part = |r: usize, c0: usize, c1: usize| {
            let (c, _) = self.row(r);
            c.partition_point(|&j| j < c0)..c.partition_point(|&j| j < c1)
        };
        // Each block counts its columns' entries, then the counts become the row pointers.
        let counts: Vec<Vec<usize>> = (0..blocks)
            .into_par_iter()
            .map(|b| {
                let (c0, c1) = (bounds[b], bounds[b + 1]);
                let mut counts = vec![0usize; c1 - c0];
                for r in 0..self.n_rows {
                    let (c, _) = self.row(r);
                    for &j in &c[part(r, c0, c1)] {
                        counts[j - c0] += 1;
                    }
                }
                counts
            })
            .collect();
        let mut row_ptr = Vec::with_capacity(self.n_cols + 1);
        row_ptr.push(0usize);
        for &k in counts.iter().flatten() {
            row_ptr.push(row_ptr[row_ptr.len() - 1] + k);
        }
        // Not zeroed first: every entry is written once below, by the block of its column,
        // so the new pages are first touched by the blocks' threads, not by one.
        let nnz = self.nnz();
        let mut cols: Vec<usize> = Vec::with_capacity(nnz);
        let mut vals: Vec<T> = Vec::with_capacity(nnz);
        // Block b writes entries row_ptr[bounds[b]] .. row_ptr[bounds[b + 1]]: disjoint slices.
        let mut pieces = Vec::with_capacity(blocks);
        let (mut cols_rest, mut vals_rest) = (
            &mut cols.spare_capacity_mut()[..nnz],
            &mut vals.spare_capacity_mut()[..nnz],
        );
        for b in 0..blocks {
            let len = row_ptr[bounds[b + 1]] - row_ptr[bounds[b]];
            let (c, c_tail) = cols_rest.split_at_mut(len);
            let (v, v_tail) = vals_rest.split_at_mut(len);
            pieces.push((b, c, v));
            cols_rest = c_tail;
            vals_rest = v_tail;
        }
        pieces.into_par_iter().for_each(|(b, out_cols, out_vals)| {
            let (c0, c1) = (bounds[b], bounds[b + 1]);
            let base = row_ptr[c0];
            let mut next: Vec<usize> = row_ptr[c0..c1].iter().map(|&p| p - base).collect();
            for r in 0..self.n_rows {
                let (c, v) = self.row(r);
                let range = part(r, c0, c1);
                for (&j, &x) in c[range.clone()].iter().zip(&v[range]) {
                    out_cols[next[j - c0]].write(r);
                    out_vals[next[j - c0]].write(x);
                    next[j - c0] += 1;
                }
            }
        });
        // SAFETY: the blocks' slices partition 0..nnz (their lengths are the counts of their
        // columns' entries, which sum to nnz), and each block wrote every entry of its slice
        // once: row_ptr[j] .. row_ptr[j + 1] for each of its columns j, counted above.
        unsafe {
            cols.set_len(nnz);
            vals.set_len(nnz);
        }
        Self {
            n_rows: self.n_cols,
            n_cols: self.n_rows,
            row_ptr,
            col_idx: cols,
            values: vals,
            hashes: FingerprintCache::default(),
        }
    }

    /// [`CsrMatrix::transpose`] by one count and one scatter.
    fn transpose_serial(&self) -> Self {
        let mut counts = vec![0usize; self.n_cols + 1];
        for &c in &self.col_idx {
            counts[c + 1] += 1;
        }
        for i in 0..self.n_cols {
            counts[i + 1] += counts[i];
        }
        let mut next = counts.clone();
        let mut cols = vec![0usize; self.nnz()];
        let mut vals = vec![T::zero(); self.nnz()];
        for r in 0..self.n_rows {
            let (c, v) = self.row(r);
            for (&c, &v) in c.iter().zip(v) {
                cols[next[c]] = r;
                vals[next[c]] = v;
                next[c] += 1;
            }
        }
        Self {
            n_rows: self.n_cols,
            n_cols: self.n_rows,
            row_ptr: counts,
            col_idx: cols,
            values: vals,
            hashes: FingerprintCache::default(),
        }
    }

    /// Convert the values to another precision.
    pub fn cast<U: Scalar>(&self) -> CsrMatrix<U> {
        CsrMatrix {
            n_rows: self.n_rows,
            n_cols: self.n_cols,
            row_ptr: self.row_ptr.clone(),
            col_idx: self.col_idx.clone(),
            values: self
                .values
                .par_iter()
                .map(|v| U::from_f64(v.to_f64()))
                .collect(),
            // The same pattern; the values' bits are not.
            hashes: FingerprintCache {
                pattern: self.hashes.pattern.clone(),
                ..FingerprintCache::default()
            },
        }
    }

    /// Row pointers and column indices as `u32`, as devices store them; an error when the
    /// matrix does not fit 32-bit indices.
    pub fn indices_u32(&self) -> Result<(Vec<u32>, Vec<u32>)> {
        let max = u32::MAX as usize;
        if self.nnz() > max {
            return Err(Error::IndexOverflow {
                what: "nnz".into(),
                value: self.nnz(),
                max,
            });
        }
        csr_view::check_dimensions(self.n_rows, self.n_cols)?;
        Ok((
            self.row_ptr.iter().map(|&p| p as u32).collect(),
            self.col_idx.iter().map(|&c| c as u32).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::fingerprint::lanes_hash;
    use super::*;

    /// A tridiagonal n x n pattern (columns ascending in every row) with ones.
    fn tridiagonal(n: usize) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let mut row_ptr = vec![0];
        let mut col_idx = Vec::new();
        for i in 0..n {
            col_idx.extend((i.saturating_sub(1)..(i + 2).min(n)).collect::<Vec<_>>());
            row_ptr.push(col_idx.len());
        }
        let values = vec![1.0; col_idx.len()];
        (row_ptr, col_idx, values)
    }

    /// The parallel transpose equals the serial one: a wide and a tall random matrix with
    /// empty rows and columns, on a pool of several threads, and transposing twice gives the
    /// matrix back.
    #[test]
    fn parallel_transpose_equals_the_serial_one() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for (n_rows, n_cols) in [(30_000, 5_000), (20_000, 70_000)] {
            let mut row_ptr = vec![0];
            let mut col_idx = Vec::new();
            for r in 0..n_rows {
                if r % 11 != 0 {
                    let mut row: Vec<usize> =
                        (0..1 + rand(9)).map(|_| rand(n_cols / 2) * 2).collect();
                    row.sort_unstable();
                    row.dedup();
                    col_idx.extend(row);
                }
                row_ptr.push(col_idx.len());
            }
            let values: Vec<f64> = (0..col_idx.len()).map(|k| k as f64 * 0.5 - 3.0).collect();
            let a = CsrMatrix::new(n_rows, n_cols, row_ptr, col_idx, values).unwrap();
            assert!(a.nnz() >= PARALLEL_CHECK_NNZ);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(5)
                .build()
                .unwrap();
            let t = pool.install(|| a.transpose());
            assert_eq!(t, a.transpose_serial());
            assert_eq!(pool.install(|| t.transpose()), a);
        }
    }

    /// Above the parallel check's size, every fault is still found and named as the serial
    /// check names it: the first unsorted row, the first decreasing row pointer, the first
    /// column out of range; and a valid matrix (and its parallel copy) is accepted.
    #[test]
    fn large_matrices_are_checked_as_small_ones() {
        let n = 40_000;
        let (rp, ci, v) = tridiagonal(n);
        assert!(ci.len() >= PARALLEL_CHECK_NNZ);
        let a = CsrMatrix::new(n, n, rp.clone(), ci.clone(), v.clone()).unwrap();
        assert_eq!(a.try_clone().unwrap(), a);
        let mut bad = ci.clone();
        let k = rp[n - 7];
        bad.swap(k, k + 1);
        let e = CsrMatrix::new(n, n, rp.clone(), bad, v.clone()).unwrap_err();
        assert!(e.to_string().contains(&format!("row {}", n - 7)), "{e}");
        let mut bad = ci.clone();
        bad[ci.len() - 1] = n;
        let e = CsrMatrix::new(n, n, rp.clone(), bad, v.clone()).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let mut bad = rp.clone();
        bad[n / 2] = bad[n / 2 + 1] + 1;
        let e = CsrMatrix::new(n, n, bad, ci.clone(), v.clone()).unwrap_err();
        assert!(e.to_string().contains("decreases"), "{e}");
        let e = CsrMatrix::new(n, n, rp, ci, vec![1.0; 3]).unwrap_err();
        assert!(e.to_string().contains("values length"), "{e}");
    }

    #[test]
    fn from_i32_checks_as_new_does() {
        let a = CsrMatrix::from_i32(
            3,
            3,
            &[0, 2, 3, 5],
            &[0, 2, 1, 0, 2],
            &[1.0, 2.0, 3.0, 4.0, 5.0],
        )
        .unwrap();
        let b = CsrMatrix::new(
            3,
            3,
            vec![0, 2, 3, 5],
            vec![0, 2, 1, 0, 2],
            vec![1.0, 2.0, 3.0, 4.0, 5.0],
        )
        .unwrap();
        assert_eq!(a, b);
        let v = [1.0; 5];
        let bad: [(&[i32], &[i32]); 7] = [
            (&[0, 2, 3], &[0, 2, 1, 0, 2]),     // row_ptr too short
            (&[1, 2, 3, 5], &[0, 2, 1, 0, 2]),  // not from 0
            (&[0, 2, 3, 4], &[0, 2, 1, 0, 2]),  // not to nnz
            (&[0, 3, 2, 5], &[0, 1, 2, 0, 2]),  // decreasing
            (&[0, 9, 3, 5], &[0, 1, 2, 0, 2]),  // above nnz in the middle
            (&[0, 2, 3, 5], &[0, -1, 1, 0, 2]), // negative column
            (&[0, 2, 3, 5], &[0, 3, 1, 0, 2]),  // column out of range
        ];
        for (rp, ci) in bad {
            assert!(
                CsrMatrix::from_i32(3, 3, rp, ci, &v).is_err(),
                "{rp:?} {ci:?}"
            );
        }
        // A negative index is named as one, not as the huge number it widens to.
        for (rp, ci, what) in [
            (
                &[0, 2, 3, 5][..],
                &[0, -1, 1, 0, 2][..],
                "negative column index -1 at position 1",
            ),
            (
                &[0, -2, 3, 5][..],
                &[0, 1, 1, 0, 2][..],
                "negative row pointer -2 at position 1",
            ),
        ] {
            let e = CsrMatrix::from_i32(3, 3, rp, ci, &v)
                .unwrap_err()
                .to_string();
            assert!(e.contains(what), "{e}");
        }
        // Unsorted and repeated columns.
        assert!(CsrMatrix::from_i32(3, 3, &[0, 2, 3, 5], &[2, 0, 1, 0, 2], &v).is_err());
        assert!(CsrMatrix::from_i32(3, 3, &[0, 2, 3, 5], &[0, 0, 1, 0, 2], &v).is_err());
        assert!(CsrMatrix::from_i32(3, 3, &[0, 2, 3, 5], &[0, 2, 1, 0, 2], &v[..4]).is_err());
    }

    #[test]
    fn fingerprints_are_kept_until_the_values_change() {
        let mut a =
            CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![2.0, -1.0, 3.0]).unwrap();
        // Below one chunk: one hash per array, then FNV-1a over the shape and those.
        let words = |v: &[usize]| lanes_hash(v, |&x| x as u64);
        let pattern = fnv1a([2, 2, words(&[0, 2, 3]), words(&[0, 1, 1])]);
        let values = lanes_hash(&[2.0f64, -1.0, 3.0], |v| v.to_bits());
        assert_eq!(a.pattern_fingerprint(), pattern);
        assert_eq!(
            a.fingerprint(),
            fnv1a([2, 2, words(&[0, 2, 3]), words(&[0, 1, 1]), values])
        );
        let before = a.fingerprint();
        assert_eq!(a.clone().fingerprint(), before);
        a.values_mut()[2] = 4.0;
        assert_ne!(
            a.fingerprint(),
            before,
            "a stale fingerprint after values_mut"
        );
        assert_eq!(a.pattern_fingerprint(), pattern);
        let b = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![2.0, -1.0, 4.0]).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_eq!(a, b);
        assert_eq!(a.cast::<f32>().pattern_fingerprint(), pattern);
    }

    #[test]
    fn unsorted_duplicate_and_impossible_shapes_are_rejected_by_new() {
        // RELIABILITY.md row 24: `new` takes sorted, duplicate-free rows only.
        let unsorted = CsrMatrix::new(1, 3, vec![0, 2], vec![2, 0], vec![1.0, 2.0]);
        assert!(
            matches!(unsorted, Err(Error::InvalidMatrix(_))),
            "{unsorted:?}"
        );
        let duplicate = CsrMatrix::new(1, 3, vec![0, 2], vec![1, 1], vec![1.0, 2.0]);
        assert!(
            matches!(duplicate, Err(Error::InvalidMatrix(_))),
            "{duplicate:?}"
        );
        // n_rows + 1 does not exist: an error, not an overflow.
        for bad in [
            CsrMatrix::<f64>::new(usize::MAX, 1, vec![], vec![], vec![]),
            CsrMatrix::<f64>::from_unsorted(usize::MAX, 1, vec![0], vec![], vec![]),
        ] {
            assert!(
                matches!(bad, Err(Error::DimensionMismatch { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn unsorted_input_is_sorted_and_duplicates_summed() {
        let a = CsrMatrix::from_unsorted(
            2,
            3,
            vec![0, 3, 4],
            vec![2, 0, 2, 1],
            vec![1.0, 2.0, 3.0, 4.0],
        )
        .unwrap();
        assert_eq!(a.row_ptr(), &[0, 2, 3]);
        assert_eq!(a.col_idx(), &[0, 2, 1]);
        assert_eq!(a.values(), &[2.0, 4.0, 4.0]);
    }

    #[test]
    fn out_of_range_column_is_an_error() {
        let e = CsrMatrix::<f64>::new(1, 2, vec![0, 1], vec![5], vec![1.0]).unwrap_err();
        assert!(matches!(e, Error::InvalidMatrix(_)));
    }

    #[test]
    fn bad_row_ptr_is_an_error() {
        assert!(CsrMatrix::<f64>::new(2, 2, vec![0, 2, 1], vec![0, 1], vec![1.0, 1.0]).is_err());
        assert!(CsrMatrix::<f64>::new(2, 2, vec![0, 1], vec![0], vec![1.0]).is_err());
    }

    #[test]
    fn transpose_twice_is_identity() {
        let a = CsrMatrix::from_unsorted(2, 3, vec![0, 2, 3], vec![2, 0, 1], vec![1.0, 2.0, 3.0])
            .unwrap();
        assert_eq!(a.transpose().transpose(), a);
    }
}
