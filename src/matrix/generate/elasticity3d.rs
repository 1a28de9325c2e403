//! Linear elasticity on the unit cube with linear tetrahedra.
//!
//! Find the displacement `u: Ω → R^3` with `-div σ(u) = f`, where
//! `σ = λ tr(ε(u)) I + 2μ ε(u)`, `ε(u) = (∇u + ∇uᵀ) / 2`, for Young's modulus `E = 1` and
//! Poisson ratio `ν = 0.3` (`λ = Eν / ((1+ν)(1-2ν))`, `μ = E / (2(1+ν))`).
//!
//! Mesh: `m x m x m` cubes of side `h = 1/m`, each split into the 6 tetrahedra of the
//! Kuhn / Freudenthal subdivision (one per permutation `π` of the axes, with vertices
//! `0, e_π1, e_π1 + e_π2, (1,1,1)`); every cube is split the same way, so the mesh is
//! conforming. Each node carries the 3 displacement components, numbered node by node
//! (x fastest), components innermost. The element stiffness matrix is the 12x12
//! `vol * Bᵀ D B` with the constant strain-displacement matrix `B` (Voigt order
//! `ε_xx, ε_yy, ε_zz, γ_xy, γ_yz, γ_xz`) and the isotropic elasticity matrix `D`.
//!
//! Boundary conditions: the face `x = 0` is clamped (`u = 0`, its nodes eliminated), the other
//! five faces are traction-free, so the matrix is symmetric positive definite with
//! `3 m (m+1)^2` unknowns. Every node is connected to at most 14 neighbours (along the axes,
//! the face diagonals `e_i + e_j` and the main diagonal `(1,1,1)`). The matrix keeps this
//! node-connectivity pattern with complete 3x3 blocks, as a finite-element code stores it
//! (ready for block formats): rows have at most 45 entries, about 42 on average for large `m`,
//! of which roughly one in six is an exact zero for this mesh (couplings that cancel, like the
//! diagonal edges of [`fem2d`](super::Generator::Fem2d)). Sizes: `m = 5, 11, 23, 47` give 540, 4752, 39744, 324864 unknowns (the paper's
//! sizes 693, 5265, 40725, 319725 are those of a different mesh; these are the closest).

use super::{assemble_structured, RefElement};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Young's modulus.
pub(super) const YOUNG: f64 = 1.0;
/// Poisson ratio.
pub(super) const POISSON_RATIO: f64 = 0.3;

/// The Lamé parameters `(λ, μ)` for Young's modulus `e` and Poisson ratio `nu`.
pub(super) fn lame(e: f64, nu: f64) -> (f64, f64) {
    (
        e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
        e / (2.0 * (1.0 + nu)),
    )
}

/// Stiffness matrix (row-major 12x12, index `3 * vertex + component`) of the linear
/// tetrahedron with vertices `p`: `vol * Bᵀ D B`. Exactly symmetric.
pub(super) fn p1_tet_stiffness(p: [[f64; 3]; 4], lambda: f64, mu: f64) -> Result<Vec<f64>> {
    // x = p0 + J ξ, J = [p1 - p0, p2 - p0, p3 - p0] (columns); ∇λ_i = row i of J^-1.
    let mut j = [[0.0; 3]; 3];
    for (c, pc) in p[1..].iter().enumerate() {
        for r in 0..3 {
            j[r][c] = pc[r] - p[0][r];
        }
    }
    let cof = |r: usize, c: usize| {
        let (r1, r2) = ((r + 1) % 3, (r + 2) % 3);
        let (c1, c2) = ((c + 1) % 3, (c + 2) % 3);
        j[r1][c1] * j[r2][c2] - j[r1][c2] * j[r2][c1]
    };
    let det = j[0][0] * cof(0, 0) + j[0][1] * cof(0, 1) + j[0][2] * cof(0, 2);
    if det == 0.0 || !det.is_finite() {
        return Err(Error::param("tetrahedron", "degenerate element"));
    }
    // (J^-1)[i][k] = cof(k, i) / det.
    let grad = |i: usize| [cof(0, i) / det, cof(1, i) / det, cof(2, i) / det];
    let (g1, g2, g3) = (grad(0), grad(1), grad(2));
    let g0 = [0, 1, 2].map(|k| -(g1[k] + g2[k] + g3[k]));
    let g = [g0, g1, g2, g3];
    let vol = det.abs() / 6.0;
    // B: 6 x 12.
    let mut b = [[0.0; 12]; 6];
    for (a, ga) in g.iter().enumerate() {
        let [gx, gy, gz] = *ga;
        let c = 3 * a;
        b[0][c] = gx;
        b[1][c + 1] = gy;
        b[2][c + 2] = gz;
        b[3][c] = gy;
        b[3][c + 1] = gx;
        b[4][c + 1] = gz;
        b[4][c + 2] = gy;
        b[5][c] = gz;
        b[5][c + 2] = gx;
    }
    let (l, l2) = (lambda, lambda + 2.0 * mu);
    #[rustfmt::skip]
    let d = [
        [l2, l,  l,  0.0, 0.0, 0.0],
        [l,  l2, l,  0.0, 0.0, 0.0],
        [l,  l,  l2, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, mu, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, mu, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, mu],
    ];
    // DB, then K = vol * Bᵀ (DB), upper triangle mirrored for exact symmetry.
    let mut db = [[0.0; 12]; 6];
    for r in 0..6 {
        for c in 0..12 {
            db[r][c] = (0..6).map(|s| d[r][s] * b[s][c]).sum();
        }
    }
    let mut k = vec![0.0; 144];
    for r in 0..12 {
        for c in r..12 {
            let v: f64 = (0..6).map(|s| b[s][r] * db[s][c]).sum::<f64>() * vol;
            k[12 * r + c] = v;
            k[12 * c + r] = v;
        }
    }
    Ok(k)
}

/// The 6 Kuhn tetrahedra of the unit cube, as corner offsets.
pub(super) fn kuhn_tets() -> [[[usize; 3]; 4]; 6] {
    const PERMS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    PERMS.map(|p| {
        let mut v = [[0usize; 3]; 4];
        for step in 0..3 {
            v[step + 1] = v[step];
            v[step + 1][p[step]] = 1;
        }
        v
    })
}

/// Assemble on `m^3` cubes; with `clamp` the nodes on `x = 0` are eliminated, without it the
/// matrix is the singular stiffness matrix of the free body (for tests).
fn assemble<T: Scalar>(m: usize, clamp: bool) -> Result<CsrMatrix<T>> {
    if m == 0 {
        return Err(Error::param("m", "at least one cube per axis is needed"));
    }
    let h = 1.0 / m as f64;
    let (lambda, mu) = lame(YOUNG, POISSON_RATIO);
    let elements = kuhn_tets()
        .iter()
        .map(|t| {
            let p = t.map(|c| c.map(|v| v as f64 * h));
            Ok(RefElement {
                corners: t.to_vec(),
                local: p1_tet_stiffness(p, lambda, mu)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let free = move |p: [usize; 3]| !clamp || p[0] > 0;
    // Keep the full node-connectivity pattern (complete 3x3 blocks), as a finite-element code
    // stores it, although some entries vanish exactly for this mesh.
    assemble_structured([m, m, m], 3, &elements, &free, None)
}

/// The clamped elasticity matrix on `m^3` cubes: `3 m (m+1)^2` unknowns.
pub(super) fn elasticity3d<T: Scalar>(m: usize) -> Result<CsrMatrix<T>> {
    assemble(m, true)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{quad, rand_vec};
    use super::*;

    fn mul(a: &CsrMatrix<f64>, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; a.n_rows()];
        a.mul_vec(x, &mut y).unwrap();
        y
    }

    #[test]
    fn kuhn_split_fills_the_cube() {
        let tets = kuhn_tets();
        let mut vol = 0.0;
        for (i, t) in tets.iter().enumerate() {
            assert_eq!(t[0], [0, 0, 0]);
            assert_eq!(t[3], [1, 1, 1]);
            let e = |v: usize, c: usize| t[v][c] as f64 - t[0][c] as f64;
            let det = e(1, 0) * (e(2, 1) * e(3, 2) - e(2, 2) * e(3, 1))
                - e(2, 0) * (e(1, 1) * e(3, 2) - e(1, 2) * e(3, 1))
                + e(3, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1));
            assert_eq!(det.abs(), 1.0);
            vol += det.abs() / 6.0;
            for u in &tets[..i] {
                assert_ne!(t, u);
            }
        }
        assert!((vol - 1.0f64).abs() < 1e-15);
    }

    #[test]
    fn element_rigid_modes() {
        let (lambda, mu) = lame(YOUNG, POISSON_RATIO);
        let p = [
            [0.1, 0.0, 0.2],
            [1.0, 0.1, 0.0],
            [0.2, 0.9, 0.1],
            [0.3, 0.2, 1.1],
        ];
        let k = p1_tet_stiffness(p, lambda, mu).unwrap();
        let apply = |u: &[f64; 12]| -> f64 {
            (0..12)
                .map(|r| (0..12).map(|c| k[12 * r + c] * u[c]).sum::<f64>().abs())
                .fold(0.0, f64::max)
        };
        // Translations and the three infinitesimal rotations are in the kernel.
        for dir in 0..3 {
            let mut u = [0.0; 12];
            for a in 0..4 {
                u[3 * a + dir] = 1.0;
            }
            assert!(apply(&u) < 1e-14);
            let mut w = [0.0; 3];
            w[dir] = 1.0;
            let mut u = [0.0; 12];
            for (a, x) in p.iter().enumerate() {
                // w x x
                u[3 * a] = w[1] * x[2] - w[2] * x[1];
                u[3 * a + 1] = w[2] * x[0] - w[0] * x[2];
                u[3 * a + 2] = w[0] * x[1] - w[1] * x[0];
            }
            assert!(apply(&u) < 1e-14);
        }
        // A uniform stretch in x costs energy (E-related), positive.
        let mut u = [0.0; 12];
        for (a, x) in p.iter().enumerate() {
            u[3 * a] = x[0];
        }
        let e: f64 = (0..12)
            .map(|r| u[r] * (0..12).map(|c| k[12 * r + c] * u[c]).sum::<f64>())
            .sum();
        assert!(e > 0.0);
        assert!(p1_tet_stiffness([[0.0; 3]; 4], lambda, mu).is_err());
    }

    #[test]
    fn free_body_kernel() {
        // Without clamping, translations and rotations are in the kernel of the assembled
        // stiffness matrix.
        let m = 3;
        let a = assemble::<f64>(m, false).unwrap();
        let nodes = (m + 1) * (m + 1) * (m + 1);
        assert_eq!(a.n_rows(), 3 * nodes);
        let h = 1.0 / m as f64;
        let coord = |i: usize| {
            [
                (i % (m + 1)) as f64 * h,
                (i / (m + 1) % (m + 1)) as f64 * h,
                (i / (m + 1) / (m + 1)) as f64 * h,
            ]
        };
        for dir in 0..3 {
            let mut t = vec![0.0; 3 * nodes];
            for i in 0..nodes {
                t[3 * i + dir] = 1.0;
            }
            let y = mul(&a, &t);
            assert!(y.iter().all(|v| v.abs() < 1e-13), "translation {dir}");
            let mut w = [0.0; 3];
            w[dir] = 1.0;
            let mut r = vec![0.0; 3 * nodes];
            for i in 0..nodes {
                let x = coord(i);
                r[3 * i] = w[1] * x[2] - w[2] * x[1];
                r[3 * i + 1] = w[2] * x[0] - w[0] * x[2];
                r[3 * i + 2] = w[0] * x[1] - w[1] * x[0];
            }
            let y = mul(&a, &r);
            assert!(y.iter().all(|v| v.abs() < 1e-13), "rotation {dir}");
        }
        assert_eq!(a, a.transpose());
    }

    #[test]
    fn clamped_is_spd() {
        for m in [1, 2, 4] {
            let a = elasticity3d::<f64>(m).unwrap();
            assert_eq!(a.n_rows(), 3 * m * (m + 1) * (m + 1));
            assert_eq!(a, a.transpose());
            assert!(a.diagonal().iter().all(|&d| d > 0.0));
            for s in 0..5 {
                assert!(quad(&a, &rand_vec(a.n_rows(), s)) > 0.0);
            }
        }
    }

    #[test]
    fn row_lengths() {
        let a = elasticity3d::<f64>(6).unwrap();
        assert_eq!(a.max_row_len(), 45);
        let avg = a.nnz() as f64 / a.n_rows() as f64;
        assert!(avg > 30.0 && avg <= 45.0, "{avg}");
        // Complete 3x3 blocks: every row of a node has the same columns.
        for node in 0..a.n_rows() / 3 {
            let c0 = a.row(3 * node).0;
            assert_eq!(c0, a.row(3 * node + 1).0);
            assert_eq!(c0, a.row(3 * node + 2).0);
            assert_eq!(c0.len() % 3, 0);
        }
    }
}
