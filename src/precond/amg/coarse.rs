//! The coarsest level: its matrix inverted as a dense matrix, so the direct solve is one
//! dense product (one SpMV of a fully stored CSR matrix on a device).

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::memory::{check_budget, try_filled};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A pivot of the coarsest matrix not above this fraction of its row's largest entry is taken
/// as zero: eps_T^(2/3), 3.6e-11 in f64 and 2.4e-5 in f32 (relative to the row, so independent
/// of the scaling of the matrix). The rounding left by the Galerkin products in a singular
/// coarse matrix is far above eps: the last pivot of the 8-row coarsest matrix of the 200-node
/// 1D Neumann Laplacian is 2.3e-13 of its row in f64 (1000 eps), so a tolerance of a few eps
/// would pass it and return an inverse with entries of 1e13.
pub fn singular_pivot_tolerance<T: Scalar>() -> f64 {
    T::EPSILON.to_f64().powf(2.0 / 3.0)
}

/// Entries of [A | I]'s left half one task of the elimination updates (a few rows): fewer
/// tasks than rows keep the scheduling cost of a step below its arithmetic on coarsest levels
/// of a few hundred rows.
const ELIMINATION_TASK_ENTRIES: usize = 4096;

/// The explicit inverse of the square matrix `a` as a dense CSR matrix (every entry stored,
/// so its `values()` are the inverse in row-major order), computed in f64 by Gauss-Jordan
/// elimination with partial pivoting and rounded to `T`.
///
/// Errors: [`Error::SingularPivot`] (preconditioner "amg", the pivot's column as the row) when
/// a pivot is not larger than [`singular_pivot_tolerance`] times the largest entry of its
/// original row (a singular or numerically singular coarsest matrix, e.g. a pure Neumann
/// problem: the constant is kept on every level);
/// [`Error::OutOfMemory`].
pub fn dense_inverse<T: Scalar>(a: &CsrMatrix<T>, level: usize) -> Result<CsrMatrix<T>> {
    let n = a.n_rows();
    if !a.is_square() {
        return Err(Error::dims("AMG coarsest matrix columns", n, a.n_cols()));
    }
    check_budget(
        "AMG coarsest inverse",
        n.checked_mul(n)
            .and_then(|nn| nn.checked_mul(2 * 8 + std::mem::size_of::<T>() + 8)),
    )?;
    // Row-major [A | I] as two n x n arrays; `scale[r]`: the largest |a_rj| of original row r.
    // The right half's columns are kept in pivot order: column k is I's column of the row that
    // became pivot k (`orig[k]`), written when it does. Before step k the right half is zero
    // outside columns 0..k and the left half's columns 0..k are zero in every row but the
    // pivots', so each step updates n entries of a row (n^3 flops in all, not 2 n^3), each
    // half on a contiguous range.
    let mut lhs = try_filled("AMG coarsest inverse", n * n, 0.0f64)?;
    let mut inv = try_filled("AMG coarsest inverse", n * n, 0.0f64)?;
    let mut scale = vec![0.0f64; n];
    for r in 0..n {
        let (c, v) = a.row(r);
        for (&j, &x) in c.iter().zip(v) {
            lhs[r * n + j] = x.to_f64();
            scale[r] = scale[r].max(x.to_f64().abs());
        }
    }
    let tol = singular_pivot_tolerance::<T>();
    // `orig[r]`: the row of A that row r started as.
    let mut orig: Vec<usize> = (0..n).collect();
    let rows_per_task = (ELIMINATION_TASK_ENTRIES / n.max(1)).max(1);
    for k in 0..n {
        // Partial pivoting: the largest |entry| of column k at or below row k.
        let mut p = k;
        for r in k + 1..n {
            if lhs[r * n + k].abs() > lhs[p * n + k].abs() {
                p = r;
            }
        }
        let pivot = lhs[p * n + k];
        // (NaN fails the finiteness test.)
        if !pivot.is_finite() || pivot.abs() <= tol * scale[p] {
            return Err(Error::SingularPivot {
                preconditioner: "amg".into(),
                block_row: k,
                detail: format!(
                    "the coarsest level (level {level}, {n} rows) is singular: pivot {pivot:e} in \
                     column {k} against row scale {:e} (a singular operator, e.g. a pure \
                     Neumann problem, keeps its nullspace on every level)",
                    scale[p]
                ),
            });
        }
        if p != k {
            for j in k..n {
                lhs.swap(p * n + j, k * n + j);
            }
            for j in 0..k {
                inv.swap(p * n + j, k * n + j);
            }
            scale.swap(p, k);
            orig.swap(p, k);
        }
        // Row k's own column of I joins the right half.
        inv[k * n + k] = 1.0;
        let inv_pivot = 1.0 / pivot;
        lhs[k * n + k] = 1.0;
        for x in &mut lhs[k * n + k + 1..(k + 1) * n] {
            *x *= inv_pivot;
        }
        for x in &mut inv[k * n..k * n + k + 1] {
            *x *= inv_pivot;
        }
        let pivot_lhs: Vec<f64> = lhs[k * n + k + 1..(k + 1) * n].to_vec();
        let pivot_inv: Vec<f64> = inv[k * n..k * n + k + 1].to_vec();
        // Eliminate column k from every other row: row_r -= a_rk row_k.
        let eliminate = |r: usize, lrow: &mut [f64], irow: &mut [f64]| {
            let f = lrow[k];
            if r != k && f != 0.0 {
                lrow[k] = 0.0;
                for (x, &y) in lrow[k + 1..].iter_mut().zip(&pivot_lhs) {
                    *x -= f * y;
                }
                for (x, &y) in irow[..=k].iter_mut().zip(&pivot_inv) {
                    *x -= f * y;
                }
            }
        };
        lhs.par_chunks_mut(n.max(1) * rows_per_task)
            .zip(inv.par_chunks_mut(n.max(1) * rows_per_task))
            .enumerate()
            .for_each(|(t, (lrows, irows))| {
                for (i, (lrow, irow)) in lrows
                    .chunks_mut(n.max(1))
                    .zip(irows.chunks_mut(n.max(1)))
                    .enumerate()
                {
                    eliminate(t * rows_per_task + i, lrow, irow);
                }
            });
    }
    // Column c of the right half is I's column orig[c]: A^-1 in A's column order.
    inv.par_chunks_mut(n.max(1)).for_each(|row| {
        let pivot_order = row.to_vec();
        for (c, &v) in pivot_order.iter().enumerate() {
            row[orig[c]] = v;
        }
    });
    drop(lhs);
    let mut row_ptr = try_filled("AMG coarsest inverse", n + 1, 0usize)?;
    for (r, p) in row_ptr.iter_mut().enumerate() {
        *p = r * n;
    }
    let mut col_idx = try_filled("AMG coarsest inverse", n * n, 0usize)?;
    col_idx
        .par_chunks_mut(n.max(1))
        .for_each(|row| row.iter_mut().enumerate().for_each(|(j, c)| *c = j));
    let values = inv.par_iter().map(|&v| T::from_f64(v)).collect();
    CsrMatrix::new(n, n, row_ptr, col_idx, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_inverse_inverts_and_detects_singular_matrices() {
        // A nonsymmetric matrix that needs pivoting (zero in the (0, 0) corner).
        let a = CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 1, 2.0),
                (0, 2, 1.0),
                (1, 0, 3.0),
                (1, 1, 1.0),
                (2, 0, 1.0),
                (2, 2, 4.0),
            ],
        )
        .unwrap();
        let inv = dense_inverse(&a, 0).unwrap();
        assert_eq!(inv.nnz(), 9);
        for j in 0..3 {
            let e: Vec<f64> = (0..3).map(|r| inv.values()[r * 3 + j]).collect();
            let mut y = vec![0.0; 3];
            a.mul_vec(&e, &mut y).unwrap();
            for (i, yi) in y.iter().enumerate() {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((yi - want).abs() < 1e-14, "{yi}");
            }
        }
        // The 1D Neumann Laplacian is singular.
        let s = CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 0, 1.0),
                (0, 1, -1.0),
                (1, 0, -1.0),
                (1, 1, 2.0),
                (1, 2, -1.0),
                (2, 1, -1.0),
                (2, 2, 1.0),
            ],
        )
        .unwrap();
        assert!(matches!(
            dense_inverse(&s, 2),
            Err(Error::SingularPivot { .. })
        ));
        let empty = CsrMatrix::<f32>::new(0, 0, vec![0], vec![], vec![]).unwrap();
        assert_eq!(dense_inverse(&empty, 0).unwrap().nnz(), 0);
    }

    /// A random dense matrix with a small diagonal (every step pivots): A A^-1 = I.
    #[test]
    fn dense_inverse_of_a_matrix_that_pivots_at_every_step() {
        let n = 97;
        let mut entries = Vec::new();
        let mut s = 12345u64;
        for i in 0..n {
            for j in 0..n {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let v = ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5;
                entries.push((i, j, if i == j { 0.01 * v } else { v }));
            }
        }
        let a = CsrMatrix::<f64>::from_triplets(n, n, &entries).unwrap();
        let inv = dense_inverse(&a, 0).unwrap();
        let (mut e, mut y) = (vec![0.0; n], vec![0.0; n]);
        for j in 0..n {
            for (r, x) in e.iter_mut().enumerate() {
                *x = inv.values()[r * n + j];
            }
            a.mul_vec(&e, &mut y).unwrap();
            for (i, yi) in y.iter().enumerate() {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((yi - want).abs() < 1e-11, "({i}, {j}): {yi}");
            }
        }
    }
}
