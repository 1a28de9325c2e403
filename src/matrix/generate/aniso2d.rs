//! Anisotropic diffusion `-(ε u_xx + u_yy) = f` on the unit square, `ε = 1e-3`.
//!
//! Homogeneous Dirichlet boundary (eliminated), 5-point central differences on a `k x k`
//! interior grid, `h = 1/(k+1)`, scaled by `h^2`: `2 + 2ε` on the diagonal, `-ε` for the x
//! neighbours and `-1` for the y neighbours. The matrix is symmetric positive definite and
//! weakly diagonally dominant. Its eigenvectors are the grid sine modes
//! `sin(pπx) sin(qπy)`, with eigenvalues `4ε sin^2(pπh/2) + 4 sin^2(qπh/2)`: the extreme
//! eigenvalues (`(1+ε) π^2 h^2` and `≈ 4(1+ε)`) are those of the Poisson matrix, so the
//! condition number is not larger, but the spectrum is very different — `k` tight clusters
//! of width `4ε`, one per y mode — and the x coupling is a thousand times weaker than the y
//! coupling, which is what defeats point smoothers and incomplete factorizations.

use super::{stencil7, Stencil7};
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// The anisotropy ratio `ε` (diffusion coefficient in x; it is 1 in y).
pub(super) const EPSILON: f64 = 1e-3;

/// 5-point anisotropic Laplacian on a `k x k` interior grid: `k^2` unknowns.
pub(super) fn aniso2d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let (dims, s) = aniso2d_stencil(k);
    stencil7(dims, &s)
}

/// The grid and stencil of [`aniso2d`].
pub(super) fn aniso2d_stencil(k: usize) -> ([usize; 3], Stencil7) {
    let s = Stencil7 {
        center: 2.0 + 2.0 * EPSILON,
        west: -EPSILON,
        east: -EPSILON,
        south: -1.0,
        north: -1.0,
        down: 0.0,
        up: 0.0,
    };
    ([k, k, 1], s)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{diag_dominant, quad, rand_vec};
    use super::*;

    #[test]
    fn structure() {
        let a = aniso2d::<f64>(4).unwrap();
        assert_eq!((a.n_rows(), a.nnz()), (16, 5 * 16 - 16));
        let (c, v) = a.row(5);
        assert_eq!(c, &[1, 4, 5, 6, 9]);
        assert_eq!(v, &[-1.0, -1e-3, 2.002, -1e-3, -1.0]);
        assert_eq!(a, a.transpose());
        assert!(diag_dominant(&a));
        for s in 0..4 {
            assert!(quad(&a, &rand_vec(16, s)) > 0.0);
        }
    }

    #[test]
    fn sine_modes_are_eigenvectors() {
        let k = 31;
        let a = aniso2d::<f64>(k).unwrap();
        let h = 1.0 / (k as f64 + 1.0);
        let pi = std::f64::consts::PI;
        for (p, q) in [(1, 1), (k, 1), (1, k), (7, 3)] {
            let v: Vec<f64> = (0..k * k)
                .map(|i| {
                    let (x, y) = ((i % k + 1) as f64 * h, (i / k + 1) as f64 * h);
                    (p as f64 * pi * x).sin() * (q as f64 * pi * y).sin()
                })
                .collect();
            let s2 = |m: usize| (m as f64 * pi * h / 2.0).sin().powi(2);
            let lambda = 4.0 * EPSILON * s2(p) + 4.0 * s2(q);
            let mut y = vec![0.0; k * k];
            a.mul_vec(&v, &mut y).unwrap();
            let err = y
                .iter()
                .zip(&v)
                .map(|(y, v)| (y - lambda * v).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-12, "mode ({p}, {q}): {err}");
        }
    }
}
