//! Steady heat conduction `-div(kappa grad u) = f` on the unit square with a piecewise-constant
//! conductivity, P1 finite elements: a stand-in for SuiteSparse's `thermal2` (2D thermal FEM,
//! 1.2M unknowns) in the preconditioner benchmarks of \[Ma21a\].
//!
//! The square is cut into `(k+1) x (k+1)` cells, each cell into two right triangles along its
//! diagonal; homogeneous Dirichlet boundary (eliminated), `k x k` interior unknowns. Each cell
//! has a conductivity `kappa` in {1, 10, 100, 1000}, constant on square patches of 16 x 16
//! cells and chosen by a fixed hash of the patch (so the matrix is reproducible). For right
//! triangles the P1 element matrix couples only the two legs of the right angle, so the
//! matrix has the 5-point pattern: the coupling across a grid edge is `-(kappa_1 + kappa_2) /
//! 2` over the two cells sharing the edge, and the diagonal is the sum of the four couplings
//! of the node (Dirichlet neighbours included). It is symmetric positive definite, weakly
//! diagonally dominant, with coefficient jumps of 10^3 across patch boundaries.

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Cells per patch side of constant conductivity.
const PATCH: usize = 16;

/// Conductivity of cell (cx, cy), 0 <= cx, cy <= k.
fn kappa(cx: usize, cy: usize) -> f64 {
    let (px, py) = ((cx / PATCH) as u64, (cy / PATCH) as u64);
    let mut h = px.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ py.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    [1.0, 10.0, 100.0, 1000.0][(h % 4) as usize]
}

/// The `k^2 x k^2` matrix (row-major node numbering, x fastest).
pub(super) fn thermal2d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let n = k
        .checked_mul(k)
        .ok_or_else(|| Error::param("k", format!("k = {k} overflows k^2")))?;
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(5 * n);
    let mut values = Vec::with_capacity(5 * n);
    row_ptr.push(0);
    // Node (i, j) (1-based grid coordinates i, j in 1..=k) touches cells (i-1 or i, j-1 or j).
    for j in 1..=k {
        for i in 1..=k {
            // Couplings to the four neighbours: the two cells sharing each edge.
            let south = (kappa(i - 1, j - 1) + kappa(i, j - 1)) / 2.0;
            let north = (kappa(i - 1, j) + kappa(i, j)) / 2.0;
            let west = (kappa(i - 1, j - 1) + kappa(i - 1, j)) / 2.0;
            let east = (kappa(i, j - 1) + kappa(i, j)) / 2.0;
            let diag = south + north + west + east;
            let node = |i: usize, j: usize| (j - 1) * k + (i - 1);
            let mut push = |c: usize, v: f64| {
                col_idx.push(c);
                values.push(T::from_f64(v));
            };
            if j > 1 {
                push(node(i, j - 1), -south);
            }
            if i > 1 {
                push(node(i - 1, j), -west);
            }
            push(node(i, j), diag);
            if i < k {
                push(node(i + 1, j), -east);
            }
            if j < k {
                push(node(i, j + 1), -north);
            }
            row_ptr.push(col_idx.len());
        }
    }
    CsrMatrix::new(n, n, row_ptr, col_idx, values)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{diag_dominant, quad, rand_vec};
    use super::*;

    #[test]
    fn symmetric_positive_definite_with_jumps() {
        let a = thermal2d::<f64>(40).unwrap();
        assert_eq!(a.n_rows(), 1600);
        assert_eq!(a, a.transpose());
        assert!(diag_dominant(&a));
        for s in 0..4 {
            assert!(quad(&a, &rand_vec(1600, s)) > 0.0);
        }
        let d = a.diagonal();
        let (lo, hi) = d
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(hi / lo >= 100.0, "coefficient jumps expected: {lo}..{hi}");
    }
}
