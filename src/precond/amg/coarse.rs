//! The coarsest level: its matrix inverted as a dense matrix, so the direct solve is one
//! dense product (one SpMV of a fully stored CSR matrix on a device).

use super::gauss_jordan;
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

/// The explicit inverse of the square matrix `a` as a dense CSR matrix (every entry stored,
/// so its `values()` are the inverse in row-major order), computed in f64 by Gauss-Jordan
/// elimination with partial pivoting (blocked, in panels of 16 columns) and rounded to `T`.
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
    gauss_jordan::invert(n, &mut lhs, &mut inv, scale, tol).map_err(|s| {
        let (k, pivot, scale) = (s.column, s.pivot, s.scale);
        Error::SingularPivot {
            preconditioner: "amg".into(),
            block_row: k,
            detail: format!(
                "the coarsest level (level {level}, {n} rows) is singular: pivot {pivot:e} in \
                 column {k} against row scale {scale:e} (a singular operator, e.g. a pure \
                 Neumann problem, keeps its nullspace on every level)"
            ),
        }
    })?;
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

    #[test]
    fn dense_inverse_detects_a_singular_pivot_in_a_later_panel() {
        // The 1D Neumann Laplacian of 40 nodes: singular, its last pivot (column 39, in the
        // third panel) is zero up to rounding.
        let n = 40;
        let mut entries = Vec::new();
        for i in 0..n {
            let ends = usize::from(i > 0) + usize::from(i + 1 < n);
            entries.push((i, i, ends as f64));
            if i + 1 < n {
                entries.push((i, i + 1, -1.0));
                entries.push((i + 1, i, -1.0));
            }
        }
        let a = CsrMatrix::<f64>::from_triplets(n, n, &entries).unwrap();
        match dense_inverse(&a, 3) {
            Err(Error::SingularPivot { block_row, .. }) => assert_eq!(block_row, n - 1),
            other => panic!("{other:?}"),
        }
    }
}
