//! Poisson's equation `-Δu = f` with homogeneous Dirichlet boundary, finite differences.
//!
//! * 2D: unit square, `k x k` interior grid, `h = 1/(k+1)`, 5-point stencil
//!   `(4 u_ij - u_i-1,j - u_i+1,j - u_i,j-1 - u_i,j+1) / h^2`.
//! * 3D: unit cube, `k x k x k` interior grid, 7-point stencil with 6 on the diagonal.
//!
//! Both are scaled by `h^2` (integer entries, like the benchmark anchors: `k = 15` in 2D gives
//! 225 unknowns and 1065 nonzeros). The boundary values are eliminated, so neighbours outside
//! the grid are simply dropped. Lexicographic numbering, x fastest.

use super::{stencil7, Stencil7};
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// 5-point Laplacian on a `k x k` interior grid (scaled by `h^2`): `k^2` unknowns,
/// `5k^2 - 4k` nonzeros.
pub(super) fn poisson2d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let (dims, s) = poisson2d_stencil(k);
    stencil7(dims, &s)
}

/// The grid and stencil of [`poisson2d`].
pub(super) fn poisson2d_stencil(k: usize) -> ([usize; 3], Stencil7) {
    let s = Stencil7 {
        center: 4.0,
        west: -1.0,
        east: -1.0,
        south: -1.0,
        north: -1.0,
        down: 0.0,
        up: 0.0,
    };
    ([k, k, 1], s)
}

/// 7-point Laplacian on a `k x k x k` interior grid (scaled by `h^2`): `k^3` unknowns,
/// `7k^3 - 6k^2` nonzeros.
pub(super) fn poisson3d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let (dims, s) = poisson3d_stencil(k);
    stencil7(dims, &s)
}

/// The grid and stencil of [`poisson3d`].
pub(super) fn poisson3d_stencil(k: usize) -> ([usize; 3], Stencil7) {
    let s = Stencil7 {
        center: 6.0,
        west: -1.0,
        east: -1.0,
        south: -1.0,
        north: -1.0,
        down: -1.0,
        up: -1.0,
    };
    ([k, k, k], s)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{diag_dominant, quad, rand_vec};
    use super::*;

    #[test]
    fn anchors_2d() {
        let a = poisson2d::<f64>(15).unwrap();
        assert_eq!((a.n_rows(), a.nnz()), (225, 1065));
        for k in 1..20 {
            assert_eq!(poisson2d::<f64>(k).unwrap().nnz(), 5 * k * k - 4 * k);
        }
        assert_eq!(poisson2d::<f64>(1).unwrap().values(), &[4.0]);
    }

    #[test]
    fn anchors_3d() {
        let a = poisson3d::<f64>(8).unwrap();
        assert_eq!((a.n_rows(), a.nnz()), (512, 3200));
        assert_eq!(poisson3d::<f32>(16).unwrap().nnz(), 27136);
    }

    #[test]
    fn structure_2d() {
        let k = 4;
        let a = poisson2d::<f64>(k).unwrap();
        // Interior point (1, 1) -> index 5: neighbours 1, 4, 6, 9.
        let (c, v) = a.row(5);
        assert_eq!(c, &[1, 4, 5, 6, 9]);
        assert_eq!(v, &[-1.0, -1.0, 4.0, -1.0, -1.0]);
        // Corner row 0: neighbours 1 and 4.
        assert_eq!(a.row(0).0, &[0, 1, 4]);
        assert_eq!(a, a.transpose());
        assert!(diag_dominant(&a));
        // A applied to a constant vector vanishes in the interior.
        let mut y = vec![0.0; k * k];
        a.mul_vec(&vec![1.0; k * k], &mut y).unwrap();
        assert_eq!(y[5], 0.0);
        assert_eq!(y[0], 2.0);
    }

    #[test]
    fn spd_3d() {
        let a = poisson3d::<f64>(5).unwrap();
        assert_eq!(a, a.transpose());
        assert!(diag_dominant(&a));
        for s in 0..4 {
            assert!(quad(&a, &rand_vec(125, s)) > 0.0);
        }
        // Row of the centre point (2,2,2) = 62 has all 7 entries.
        assert_eq!(a.row(62).0, &[37, 57, 61, 62, 63, 67, 87]);
    }
}
