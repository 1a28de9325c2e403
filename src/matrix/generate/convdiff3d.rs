//! Convection-diffusion `-ε Δu + b·∇u = f` on the unit cube, nonsymmetric.
//!
//! `ε = 1` and the constant velocity `b = (100, 50, 25)`, homogeneous Dirichlet boundary
//! (eliminated). On the `k x k x k` interior grid (`h = 1/(k+1)`) the diffusion uses the
//! 7-point central stencil and the convection first-order upwind differences, which for
//! `b > 0` are backward differences `b_x (u_i - u_{i-1}) / h`. Scaled by `h^2`:
//!
//! ```text
//! diagonal     6ε + h (b_x + b_y + b_z)
//! x-1, y-1, z-1   -ε - h b_x,  -ε - h b_y,  -ε - h b_z
//! x+1, y+1, z+1   -ε
//! ```
//!
//! Upwinding makes the matrix an M-matrix for every `k` (non-positive off-diagonal entries,
//! weakly diagonally dominant rows, strictly so next to the boundary, irreducible), so it is
//! nonsingular with a positive inverse. The physical problem is fixed, so the mesh Péclet
//! number `Pe = |b_x| h / (2ε)` shrinks as the grid is refined: 25 at `k = 1`, 5.6 at `k = 8`,
//! 2.9 at `k = 16`, 0.78 at `k = 63`, 0.31 at `k = 160`. The skew part is `h |b| / 2` against a
//! symmetric part of order 1, so even at `k = 160` the backward x coupling is
//! `-1 - 100/161 ≈ -1.62` against `-1` forward: clearly nonsymmetric.

use super::{stencil7, Stencil7};
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Diffusion coefficient `ε`.
pub(super) const DIFFUSION: f64 = 1.0;
/// Convection velocity `b`.
pub(super) const VELOCITY: [f64; 3] = [100.0, 50.0, 25.0];

/// Upwind 7-point convection-diffusion matrix on a `k x k x k` interior grid: `k^3` unknowns,
/// `7k^3 - 6k^2` nonzeros.
pub(super) fn convdiff3d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let h = 1.0 / (k as f64 + 1.0);
    let eps = DIFFUSION;
    let [bx, by, bz] = VELOCITY;
    let s = Stencil7 {
        center: 6.0 * eps + h * (bx + by + bz),
        west: -eps - h * bx,
        east: -eps,
        south: -eps - h * by,
        north: -eps,
        down: -eps - h * bz,
        up: -eps,
    };
    stencil7([k, k, k], &s)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::diag_dominant;
    use super::*;

    #[test]
    fn m_matrix_and_nonsymmetric() {
        for k in [1, 2, 8, 20] {
            let a = convdiff3d::<f64>(k).unwrap();
            assert_eq!(a.n_rows(), k * k * k);
            assert_eq!(a.nnz(), 7 * k * k * k - 6 * k * k);
            assert!(diag_dominant(&a), "k = {k}");
            for r in 0..a.n_rows() {
                let (c, v) = a.row(r);
                for (&c, &v) in c.iter().zip(v) {
                    assert!(if c == r { v > 0.0 } else { v < 0.0 });
                }
            }
            if k > 1 {
                assert_ne!(a, a.transpose());
            }
        }
    }

    #[test]
    fn consistent_on_linear_functions() {
        // Upwinding is exact for linear functions: in the interior, h^2 (b·∇u) for u = x + 2y + 3z.
        let k = 6;
        let a = convdiff3d::<f64>(k).unwrap();
        let h = 1.0 / (k as f64 + 1.0);
        let idx = |x: usize, y: usize, z: usize| x + k * (y + k * z);
        let mut u = vec![0.0; k * k * k];
        for z in 0..k {
            for y in 0..k {
                for x in 0..k {
                    u[idx(x, y, z)] =
                        h * ((x + 1) as f64 + 2.0 * (y + 1) as f64 + 3.0 * (z + 1) as f64);
                }
            }
        }
        let mut r = vec![0.0; u.len()];
        a.mul_vec(&u, &mut r).unwrap();
        let [bx, by, bz] = VELOCITY;
        let expect = h * h * (bx + 2.0 * by + 3.0 * bz);
        for z in 1..k - 1 {
            for y in 1..k - 1 {
                for x in 1..k - 1 {
                    let got = r[idx(x, y, z)];
                    assert!((got - expect).abs() < 1e-12, "{got} vs {expect}");
                }
            }
        }
    }
}
