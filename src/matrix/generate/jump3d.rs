//! Diffusion with strong coefficient jumps, `-div(kappa grad u) = f` on the unit cube: the
//! ill-conditioned SPD case of the robustness and FSAI benchmarks (\[Bernaschi19\]'s geomechanics-like
//! jumps).
//!
//! Homogeneous Dirichlet boundary (eliminated), `k x k x k` interior cells, 7-point
//! finite-volume stencil scaled by `h`: the coupling across a face is the harmonic mean
//! `2 kappa_1 kappa_2 / (kappa_1 + kappa_2)` of the two cells, the diagonal the sum of the six
//! couplings (a boundary face couples to the eliminated Dirichlet value with the cell's own
//! kappa). `kappa` is 1, 1e4 or 1e6 on boxes of 8 x 8 x 8 cells, chosen by
//! `(x/8 + y/8 + z/8) mod 3`: jumps of 1e4 to 1e6 across box faces. Symmetric positive
//! definite, weakly diagonally dominant, an M-matrix.

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Cells per box side of constant conductivity.
const BOX: usize = 8;

/// Conductivity of cell (x, y, z).
fn kappa(x: usize, y: usize, z: usize) -> f64 {
    [1.0, 1e4, 1e6][(x / BOX + y / BOX + z / BOX) % 3]
}

/// The matrix on a `k^3` grid: `k^3` unknowns, at most 7 entries per row.
pub(super) fn jump3d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    fv_diffusion(k, kappa, 1.0)
}

/// Fraction of the cells of [`randjump3d`] at the high conductivity.
pub(super) const RANDJUMP_FRACTION: f64 = 0.3;
/// The high conductivity of [`randjump3d`] (the others are 1).
pub(super) const RANDJUMP_HIGH: f64 = 1e4;

/// Whether cell `i` of [`randjump3d`] has the high conductivity: a fixed hash (splitmix64) of
/// the cell index below [`RANDJUMP_FRACTION`], so the matrix is the same on every machine.
fn randjump_high(i: usize) -> bool {
    let mut z = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 11) as f64 / (1u64 << 53) as f64) < RANDJUMP_FRACTION
}

/// Cell-centred finite-volume diffusion on `k^3` cells with a random 30% of the cells at
/// conductivity 1e4 and the rest at 1: harmonic face averages, Dirichlet outside at half a cell
/// (a boundary face couples with 2 kappa). The variable-coefficient case where the paper's
/// Incomplete Poisson is indefinite (issue 50).
pub(super) fn randjump3d<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let kappa = |x: usize, y: usize, z: usize| {
        if randjump_high(x + k * (y + k * z)) {
            RANDJUMP_HIGH
        } else {
            1.0
        }
    };
    fv_diffusion(k, kappa, 2.0)
}

/// The 7-point finite-volume matrix of conductivity `kappa` on `k^3` cells: harmonic means
/// across inner faces, `boundary * kappa` for a face on the Dirichlet boundary.
fn fv_diffusion<T: Scalar>(
    k: usize,
    kappa: impl Fn(usize, usize, usize) -> f64,
    boundary: f64,
) -> Result<CsrMatrix<T>> {
    let n = k
        .checked_mul(k)
        .and_then(|v| v.checked_mul(k))
        .filter(|&v| v > 0 && v <= super::MAX_UNKNOWNS)
        .ok_or_else(|| Error::param("k", format!("k = {k} gives too many unknowns")))?;
    let word = std::mem::size_of::<usize>();
    let need = (n + 1)
        .checked_mul(word)
        .and_then(|p| p.checked_add(n.checked_mul(7 * (word + std::mem::size_of::<T>()))?));
    crate::memory::check_budget("jump3d matrix", need)?;
    let mut row_ptr = crate::memory::try_with_capacity("jump3d row pointers", n + 1)?;
    let mut cols = crate::memory::try_with_capacity("jump3d column indices", 7 * n)?;
    let mut vals = crate::memory::try_with_capacity("jump3d values", 7 * n)?;
    row_ptr.push(0);
    let face = |a: f64, b: f64| 2.0 * a * b / (a + b);
    let plane = k * k;
    for z in 0..k {
        for y in 0..k {
            for x in 0..k {
                let i = x + k * (y + k * z);
                let c = kappa(x, y, z);
                // (present, column, coupling) in column order.
                let nb = [
                    (
                        z > 0,
                        i.wrapping_sub(plane),
                        z.checked_sub(1).map(|zz| kappa(x, y, zz)),
                    ),
                    (
                        y > 0,
                        i.wrapping_sub(k),
                        y.checked_sub(1).map(|yy| kappa(x, yy, z)),
                    ),
                    (
                        x > 0,
                        i.wrapping_sub(1),
                        x.checked_sub(1).map(|xx| kappa(xx, y, z)),
                    ),
                    (x + 1 < k, i + 1, Some(kappa(x + 1, y, z))),
                    (y + 1 < k, i + k, Some(kappa(x, y + 1, z))),
                    (z + 1 < k, i + plane, Some(kappa(x, y, z + 1))),
                ];
                let mut diag = 0.0;
                for &(present, _, kn) in &nb {
                    diag += match (present, kn) {
                        (true, Some(kn)) => face(c, kn),
                        _ => boundary * c,
                    };
                }
                for (t, &(present, j, kn)) in nb.iter().enumerate() {
                    if t == 3 {
                        cols.push(i);
                        vals.push(T::from_f64(diag));
                    }
                    if let (true, Some(kn)) = (present, kn) {
                        cols.push(j);
                        vals.push(T::from_f64(-face(c, kn)));
                    }
                }
                row_ptr.push(cols.len());
            }
        }
    }
    CsrMatrix::new(n, n, row_ptr, cols, vals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_m_matrix_with_jumps() {
        let a = jump3d::<f64>(17).unwrap();
        assert_eq!(a.n_rows(), 17 * 17 * 17);
        assert_eq!(a, a.transpose());
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for i in 0..a.n_rows() {
            let (c, v) = a.row(i);
            let mut off = 0.0;
            for (&j, &x) in c.iter().zip(v) {
                if j == i {
                    lo = lo.min(x);
                    hi = hi.max(x);
                } else {
                    assert!(x < 0.0);
                    off += -x;
                }
            }
            let d = v[c.iter().position(|&j| j == i).unwrap()];
            assert!(d >= off * (1.0 - 1e-12), "row {i} is diagonally dominant");
        }
        assert!(
            hi / lo > 1e5,
            "coefficient jumps: diagonal from {lo} to {hi}"
        );
    }
}
