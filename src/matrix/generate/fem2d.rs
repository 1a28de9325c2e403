//! Linear finite elements for Poisson's equation `-Δu = f` on the unit square.
//!
//! Uniform triangulation of level `L`: the square is divided into `2^L x 2^L` squares of side
//! `h = 2^-L`, each cut into two triangles along its `(0,0)-(1,1)` diagonal. The P1 basis
//! functions are the barycentric coordinates `λ_a` of the triangles, whose gradients are
//! constant, so the element stiffness matrix is `K_ab = area * ∇λ_a · ∇λ_b`. The element
//! matrices are assembled, the Dirichlet boundary nodes eliminated (their rows and columns
//! dropped), which leaves `n = (2^L - 1)^2` unknowns: 225, 961, 3969, 16129, 65025, 261121 for
//! `L = 4..9`, the sizes of the paper.
//!
//! For this mesh the assembled matrix is the 5-point stencil (4 on the diagonal, -1 for the
//! axis neighbours, independent of `h` in 2D): the contributions along the diagonal edges are
//! exactly zero (the triangles are right-angled there) and such exact zeros are dropped.

use super::{assemble_structured, RefElement};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// The two triangles of a reference square, as corner offsets `(x, y, 0)`.
const TRIANGLES: [[[usize; 3]; 3]; 2] = [
    [[0, 0, 0], [1, 0, 0], [1, 1, 0]],
    [[0, 0, 0], [1, 1, 0], [0, 1, 0]],
];

/// Stiffness matrix (row-major 3x3) of the P1 triangle with vertices `p`:
/// `area * ∇λ_a · ∇λ_b`.
pub(super) fn p1_triangle_stiffness(p: [[f64; 2]; 3]) -> Result<[f64; 9]> {
    // x = p0 + J ξ with J = [p1 - p0, p2 - p0]; ∇λ_1, ∇λ_2 are the rows of J^-1.
    let j = [
        [p[1][0] - p[0][0], p[2][0] - p[0][0]],
        [p[1][1] - p[0][1], p[2][1] - p[0][1]],
    ];
    let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
    if det == 0.0 || !det.is_finite() {
        return Err(Error::param("triangle", "degenerate element"));
    }
    let g1 = [j[1][1] / det, -j[0][1] / det];
    let g2 = [-j[1][0] / det, j[0][0] / det];
    let g = [[-g1[0] - g2[0], -g1[1] - g2[1]], g1, g2];
    let area = det.abs() / 2.0;
    let mut k = [0.0; 9];
    for a in 0..3 {
        for b in 0..3 {
            k[3 * a + b] = area * (g[a][0] * g[b][0] + g[a][1] * g[b][1]);
        }
    }
    Ok(k)
}

/// The reference elements of the level-`level` mesh (`h = 2^-level`).
fn elements(level: usize) -> Result<Vec<RefElement>> {
    let h = 0.5f64.powi(level as i32);
    TRIANGLES
        .iter()
        .map(|t| {
            let p = t.map(|c| [c[0] as f64 * h, c[1] as f64 * h]);
            Ok(RefElement {
                corners: t.to_vec(),
                local: p1_triangle_stiffness(p)?.to_vec(),
            })
        })
        .collect()
}

/// Assembled P1 stiffness matrix of level `level` (`1 <= level < 32`), boundary eliminated:
/// `(2^level - 1)^2` unknowns.
pub(super) fn fem2d<T: Scalar>(level: usize) -> Result<CsrMatrix<T>> {
    if level == 0 || level >= 32 {
        return Err(Error::param(
            "level",
            format!("must be in 1..32, got {level}"),
        ));
    }
    let cells = 1usize << level;
    let free = move |p: [usize; 3]| p[0] > 0 && p[1] > 0 && p[0] < cells && p[1] < cells;
    assemble_structured([cells, cells, 0], 1, &elements(level)?, &free, Some(0.0))
}

#[cfg(test)]
mod tests {
    use super::super::poisson::poisson2d;
    use super::super::test_util::{diag_dominant, quad, rand_vec};
    use super::*;

    #[test]
    fn element_matrix() {
        let k = p1_triangle_stiffness([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]).unwrap();
        assert_eq!(k, [0.5, -0.5, 0.0, -0.5, 1.0, -0.5, 0.0, -0.5, 0.5]);
        // Invariant under scaling in 2D and rows sum to zero for any shape.
        let k2 = p1_triangle_stiffness([[0.1, 0.2], [0.7, -0.3], [0.4, 0.9]]).unwrap();
        for a in 0..3 {
            let s: f64 = k2[3 * a..3 * a + 3].iter().sum();
            assert!(s.abs() < 1e-14);
            for b in 0..3 {
                assert_eq!(k2[3 * a + b], k2[3 * b + a]);
            }
        }
        // Equilateral triangle: cot 60° / 2 off the diagonal.
        let s3 = 3f64.sqrt();
        let ke = p1_triangle_stiffness([[0.0, 0.0], [1.0, 0.0], [0.5, s3 / 2.0]]).unwrap();
        assert!((ke[1] + 1.0 / (2.0 * s3)).abs() < 1e-14);
        assert!(p1_triangle_stiffness([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]).is_err());
    }

    #[test]
    fn paper_sizes() {
        let sizes = [225, 961, 3969, 16129];
        for (l, n) in (4..8).zip(sizes) {
            let a = fem2d::<f64>(l).unwrap();
            assert_eq!(a.n_rows(), n);
            let k = (1usize << l) - 1;
            assert_eq!(a.nnz(), 5 * k * k - 4 * k);
        }
    }

    #[test]
    fn equals_five_point_stencil() {
        for l in 1..7 {
            let a = fem2d::<f64>(l).unwrap();
            let p = poisson2d::<f64>((1 << l) - 1).unwrap();
            assert_eq!(a, p, "level {l}");
        }
        let a = fem2d::<f32>(3).unwrap();
        assert_eq!(a, poisson2d::<f32>(7).unwrap());
    }

    #[test]
    fn spd() {
        let a = fem2d::<f64>(4).unwrap();
        assert_eq!(a, a.transpose());
        assert!(diag_dominant(&a));
        for s in 0..4 {
            assert!(quad(&a, &rand_vec(a.n_rows(), s)) > 0.0);
        }
    }

    #[test]
    fn bad_levels() {
        assert!(fem2d::<f64>(0).is_err());
        assert!(fem2d::<f64>(40).is_err());
    }
}
