//! Sparse matrix-matrix product C = A B on the host (the reference of the device SpGEMM kernel
//! family, and the Galerkin products R A P of the multigrid setup).
//!
//! Row-wise Gustavson: row i of C is the sum over the entries a_ik of row i of A of a_ik times
//! row k of B, accumulated in a dense array of B's width with a marker per column. Rows are
//! computed in parallel in fixed chunks, each chunk with its own accumulator; every row is
//! computed by one thread in the order of A's and B's entries and its columns are sorted
//! ascending, so the result (pattern and bits) does not depend on the thread count.
//!
//! The pattern is the symbolic product: an entry that cancels to zero numerically is kept.

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::memory::{check_budget, try_concat, try_filled, try_with_capacity};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// `C = A B` for `A` (`m x k`) and `B` (`k x n`): an `m x n` CSR matrix with columns sorted
/// ascending in every row.
///
/// Errors: [`Error::DimensionMismatch`] when `A`'s columns differ from `B`'s rows;
/// [`Error::OutOfMemory`] when the product does not fit in memory.
///
/// ```
/// use pipekrylov::matrix::{spgemm::spgemm, CsrMatrix};
/// // [[1, 2], [0, 3]] * [[4, 0], [5, 6]] = [[14, 12], [15, 18]]
/// let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0]).unwrap();
/// let b = CsrMatrix::new(2, 2, vec![0, 1, 3], vec![0, 0, 1], vec![4.0, 5.0, 6.0]).unwrap();
/// let c = spgemm(&a, &b).unwrap();
/// assert_eq!(c.values(), &[14.0, 12.0, 15.0, 18.0]);
/// ```
pub fn spgemm<T: Scalar>(a: &CsrMatrix<T>, b: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
    if a.n_cols() != b.n_rows() {
        return Err(Error::dims(
            "SpGEMM: columns of A vs rows of B",
            a.n_cols(),
            b.n_rows(),
        ));
    }
    let n_cols = b.n_cols();
    // Upper bound of every row's length (the products it sums), for the memory check.
    let flops: usize = (0..a.n_rows())
        .into_par_iter()
        .map(|i| {
            let (cols, _) = a.row(i);
            cols.iter()
                .map(|&k| b.row_ptr()[k + 1] - b.row_ptr()[k])
                .sum::<usize>()
        })
        .sum();
    let entry = std::mem::size_of::<usize>() + std::mem::size_of::<T>();
    check_budget(
        "SpGEMM product",
        flops
            .min(a.n_rows().saturating_mul(n_cols))
            .checked_mul(2 * entry),
    )?;
    assemble_rows(
        "SpGEMM product",
        a.n_rows(),
        n_cols,
        || {
            Ok(Accumulator {
                marker: try_filled("SpGEMM accumulator", n_cols, usize::MAX)?,
                sums: try_filled("SpGEMM accumulator", n_cols, T::zero())?,
                touched: Vec::new(),
            })
        },
        |i, acc, cols_out, vals_out| {
            let (a_cols, a_vals) = a.row(i);
            acc.touched.clear();
            for (&k, &aik) in a_cols.iter().zip(a_vals) {
                let (b_cols, b_vals) = b.row(k);
                for (&j, &bkj) in b_cols.iter().zip(b_vals) {
                    if acc.marker[j] != i {
                        acc.marker[j] = i;
                        acc.sums[j] = aik * bkj;
                        acc.touched.push(j);
                    } else {
                        acc.sums[j] += aik * bkj;
                    }
                }
            }
            acc.touched.sort_unstable();
            for &j in &acc.touched {
                cols_out.push(j);
                vals_out.push(acc.sums[j]);
            }
        },
    )
}

/// The dense accumulator of one chunk of rows: `marker[j] == i` when column `j` holds a sum
/// of row `i` in `sums[j]`; `touched` lists those columns.
struct Accumulator<T> {
    marker: Vec<usize>,
    sums: Vec<T>,
    touched: Vec<usize>,
}

/// Build an `n_rows x n_cols` CSR matrix row by row, in parallel over fixed chunks of rows:
/// `row(i, state, cols, vals)` appends row `i`'s columns (strictly increasing) and values;
/// `init` makes the scratch state of one chunk. The result does not depend on the thread
/// count (each row is computed by one call).
pub(crate) fn assemble_rows<T, S, I, F>(
    what: &str,
    n_rows: usize,
    n_cols: usize,
    init: I,
    row: F,
) -> Result<CsrMatrix<T>>
where
    T: Scalar,
    I: Fn() -> Result<S> + Sync,
    F: Fn(usize, &mut S, &mut Vec<usize>, &mut Vec<T>) + Sync,
{
    let chunks = (rayon::current_num_threads() * 4).clamp(1, n_rows.max(1));
    let chunk_rows = n_rows.div_ceil(chunks).max(1);
    type Part<T> = (Vec<usize>, Vec<usize>, Vec<T>);
    let parts: Vec<Result<Part<T>>> = (0..n_rows.div_ceil(chunk_rows))
        .into_par_iter()
        .map(|c| {
            let rows = c * chunk_rows..((c + 1) * chunk_rows).min(n_rows);
            let mut state = init()?;
            let mut ends = try_with_capacity(what, rows.len())?;
            let mut cols = Vec::new();
            let mut vals = Vec::new();
            for i in rows {
                row(i, &mut state, &mut cols, &mut vals);
                ends.push(cols.len());
            }
            Ok((ends, cols, vals))
        })
        .collect();
    let checked = parts.into_iter().collect::<Result<Vec<Part<T>>>>()?;
    // Each chunk's first entry in the whole matrix, then the chunks copied in parallel.
    let mut bases = Vec::with_capacity(checked.len());
    let mut total = 0usize;
    for part in &checked {
        bases.push(total);
        total += part.1.len();
    }
    let mut row_ptr: Vec<usize> = try_with_capacity(what, n_rows + 1)?;
    row_ptr.push(0);
    {
        let mut rest = &mut row_ptr.spare_capacity_mut()[..n_rows];
        let mut pieces = Vec::with_capacity(checked.len());
        for ((ends, _, _), &base) in checked.iter().zip(&bases) {
            let (dst, tail) = rest.split_at_mut(ends.len());
            pieces.push((dst, ends, base));
            rest = tail;
        }
        pieces.into_par_iter().for_each(|(dst, ends, base)| {
            for (d, &e) in dst.iter_mut().zip(ends.iter()) {
                d.write(base + e);
            }
        });
    }
    // SAFETY: the chunks' rows partition 0..n_rows, so the pieces above wrote the n_rows
    // entries after the leading 0.
    unsafe { row_ptr.set_len(n_rows + 1) };
    let cols: Vec<&[usize]> = checked.iter().map(|p| p.1.as_slice()).collect();
    let col_idx = try_concat(what, &cols)?;
    let vals: Vec<&[T]> = checked.iter().map(|p| p.2.as_slice()).collect();
    let values = try_concat(what, &vals)?;
    CsrMatrix::new(n_rows, n_cols, row_ptr, col_idx, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random stream in [0, 1).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn random(m: usize, n: usize, density: f64, seed: u64) -> CsrMatrix<f64> {
        let mut rng = Lcg(seed);
        let mut t = Vec::new();
        for i in 0..m {
            for j in 0..n {
                if rng.next() < density {
                    t.push((i, j, rng.next() * 2.0 - 1.0));
                }
            }
        }
        CsrMatrix::from_triplets(m, n, &t).unwrap()
    }

    fn dense(a: &CsrMatrix<f64>) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; a.n_cols()]; a.n_rows()];
        for (i, row) in d.iter_mut().enumerate() {
            let (c, v) = a.row(i);
            for (&c, &v) in c.iter().zip(v) {
                row[c] = v;
            }
        }
        d
    }

    fn check(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) {
        let c = spgemm(a, b).unwrap();
        assert_eq!((c.n_rows(), c.n_cols()), (a.n_rows(), b.n_cols()));
        for i in 0..c.n_rows() {
            assert!(c.row(i).0.windows(2).all(|w| w[0] < w[1]));
        }
        let (da, db, dc) = (dense(a), dense(b), dense(&c));
        for i in 0..a.n_rows() {
            for j in 0..b.n_cols() {
                let want: f64 = (0..a.n_cols()).map(|k| da[i][k] * db[k][j]).sum();
                assert!(
                    (dc[i][j] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                    "C[{i}][{j}] = {} vs {want}",
                    dc[i][j]
                );
            }
        }
    }

    #[test]
    fn spgemm_matches_dense_product_on_random_rectangular_matrices() {
        for (seed, (m, k, n, d)) in [
            (37, 23, 51, 0.1),
            (1, 1, 1, 1.0),
            (60, 5, 70, 0.3),
            (13, 97, 4, 0.05),
            (200, 150, 120, 0.02),
        ]
        .into_iter()
        .enumerate()
        {
            let a = random(m, k, d, seed as u64 + 1);
            let b = random(k, n, d, seed as u64 + 100);
            check(&a, &b);
        }
    }

    #[test]
    fn spgemm_handles_empty_rows_and_a_dense_row() {
        // Rows 0, 3, 7 empty in A; row 5 of A dense; B has an empty row and a dense row.
        let mut a = random(40, 30, 0.1, 7);
        let mut t = Vec::new();
        for i in 0..40 {
            if [0, 3, 7].contains(&i) {
                continue;
            }
            let (c, v) = a.row(i);
            t.extend(c.iter().zip(v).map(|(&c, &v)| (i, c, v)));
        }
        t.extend((0..30).map(|j| (5, j, 1.0 + j as f64)));
        a = CsrMatrix::from_triplets(40, 30, &t).unwrap();
        let mut tb: Vec<_> = (0..25).map(|j| (2, j, 0.5 - j as f64)).collect();
        let b0 = random(30, 25, 0.15, 9);
        for i in 0..30 {
            if i == 2 || i == 11 {
                continue;
            }
            let (c, v) = b0.row(i);
            tb.extend(c.iter().zip(v).map(|(&c, &v)| (i, c, v)));
        }
        let b = CsrMatrix::from_triplets(30, 25, &tb).unwrap();
        check(&a, &b);
        let c = spgemm(&a, &b).unwrap();
        assert_eq!(c.row(0).0.len(), 0);
        assert_eq!(c.row(5).0.len(), 25);
        // Empty operands.
        let e = CsrMatrix::<f64>::new(0, 30, vec![0], vec![], vec![]).unwrap();
        assert_eq!(spgemm(&e, &b).unwrap().n_rows(), 0);
        let z = CsrMatrix::<f64>::new(30, 0, vec![0; 31], vec![], vec![]).unwrap();
        let c = spgemm(&a, &z).unwrap();
        assert_eq!((c.n_rows(), c.n_cols(), c.nnz()), (40, 0, 0));
    }

    #[test]
    fn spgemm_rejects_mismatched_dimensions() {
        let a = random(4, 5, 0.5, 3);
        let b = random(4, 5, 0.5, 4);
        assert!(matches!(
            spgemm(&a, &b),
            Err(Error::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn spgemm_is_deterministic_and_works_in_f32() {
        let a = random(300, 200, 0.03, 21);
        let b = random(200, 250, 0.03, 22);
        let c1 = spgemm(&a, &b).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let c2 = pool.install(|| spgemm(&a, &b)).unwrap();
        assert_eq!(c1, c2);
        let c32 = spgemm(&a.cast::<f32>(), &b.cast::<f32>()).unwrap();
        assert_eq!(c32.col_idx(), c1.col_idx());
        for (x, y) in c32.values().iter().zip(c1.values()) {
            assert!((*x as f64 - y).abs() < 1e-5 * (1.0 + y.abs()));
        }
    }
}
