//! The bandwidth benchmark's irregular matrices (issue 16): a 27-point 3D stencil, a matrix with
//! power-law row lengths and a circuit-like matrix with a few very long rows. All three are
//! symmetric, strictly or weakly diagonally dominant with a positive diagonal and non-positive
//! off-diagonals (M-matrices), hence SPD: CG, BiCGStab and GMRES all apply.
//!
//! The random ones are deterministic (xorshift from a fixed seed): the same `n` gives the same
//! matrix on every machine.

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Deterministic xorshift64* stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn check_n(n: usize, what: &str) -> Result<()> {
    if n == 0 || n > super::MAX_UNKNOWNS {
        return Err(Error::param(what, format!("{n} unknowns out of range")));
    }
    Ok(())
}

/// 3D Laplacian with the full 27-point stencil on a `k^3` grid (Dirichlet neighbours dropped):
/// 26 on the diagonal, -1 for each of the up to 26 neighbours.
pub(super) fn stencil27<T: Scalar>(k: usize) -> Result<CsrMatrix<T>> {
    let n = k
        .checked_mul(k)
        .and_then(|v| v.checked_mul(k))
        .ok_or_else(|| Error::param("k", format!("k = {k} overflows")))?;
    check_n(n, "k")?;
    let word = std::mem::size_of::<usize>();
    let need = n
        .checked_mul(27 * (word + std::mem::size_of::<T>()))
        .and_then(|v| v.checked_add((n + 1) * word));
    crate::memory::check_budget("stencil27 matrix", need)?;
    let mut row_ptr = crate::memory::try_with_capacity("stencil27 row pointers", n + 1)?;
    let mut cols = crate::memory::try_with_capacity("stencil27 column indices", 27 * n)?;
    let mut vals = crate::memory::try_with_capacity("stencil27 values", 27 * n)?;
    row_ptr.push(0);
    let (c, o) = (T::from_f64(26.0), T::from_f64(-1.0));
    for z in 0..k {
        for y in 0..k {
            for x in 0..k {
                let i = x + k * (y + k * z);
                // Offsets in increasing column order: dz, then dy, then dx.
                for dz in -1i64..=1 {
                    for dy in -1i64..=1 {
                        for dx in -1i64..=1 {
                            let (xx, yy, zz) = (x as i64 + dx, y as i64 + dy, z as i64 + dz);
                            let k = k as i64;
                            if xx < 0 || yy < 0 || zz < 0 || xx >= k || yy >= k || zz >= k {
                                continue;
                            }
                            let j = (xx + k * (yy + k * zz)) as usize;
                            cols.push(j);
                            vals.push(if j == i { c } else { o });
                        }
                    }
                }
                row_ptr.push(cols.len());
            }
        }
    }
    CsrMatrix::new(n, n, row_ptr, cols, vals)
}

/// Symmetric matrix from undirected weighted edges: off-diagonals -w (duplicates summed), the
/// diagonal the row's total weight plus `leak` (strict dominance, so SPD).
fn laplacian_plus_leak<T: Scalar>(
    n: usize,
    edges: &[(usize, usize, f64)],
    leak: f64,
) -> Result<CsrMatrix<T>> {
    let mut triplets = Vec::new();
    triplets
        .try_reserve_exact(2 * edges.len() + n)
        .map_err(|_| Error::OutOfMemory {
            device: "host".into(),
            bytes: (2 * edges.len() + n) * 24,
            detail: "generator triplets".into(),
        })?;
    let mut diag = vec![leak; n];
    for &(i, j, w) in edges {
        triplets.push((i, j, T::from_f64(-w)));
        triplets.push((j, i, T::from_f64(-w)));
        diag[i] += w;
        diag[j] += w;
    }
    for (i, d) in diag.into_iter().enumerate() {
        triplets.push((i, i, T::from_f64(d)));
    }
    CsrMatrix::from_triplets(n, n, &triplets)
}

/// `n` unknowns; row i draws d_i = 2 * u^(-1/1.5) partners (a Pareto tail of exponent 2.5, capped
/// at n/4) uniformly at random, weights in [0.1, 1]; symmetrized, so a row holds its own draws
/// plus the rows that drew it: mean about 10 entries, the longest rows thousands.
pub(super) fn powerlaw<T: Scalar>(n: usize) -> Result<CsrMatrix<T>> {
    check_n(n, "n")?;
    if n < 2 {
        return laplacian_plus_leak(n, &[], 1.0);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    let cap = (n / 4).max(1);
    let mut edges = Vec::new();
    for i in 0..n {
        let d = ((2.0 * rng.unit().powf(-1.0 / 1.5)) as usize).clamp(1, cap);
        for _ in 0..d {
            let j = rng.below(n);
            if j != i {
                edges.push((i, j, 0.1 + 0.9 * rng.unit()));
            }
        }
    }
    laplacian_plus_leak(n, &edges, 1e-2)
}

/// `n` unknowns of a circuit-like network: a chain and a mesh-like link to node i + s
/// (s = sqrt(n)) with conductances in [0.1, 1], plus 4 rails (nodes 0..4, like supply and
/// ground nets) each tied to every 64th node: four rows and columns with n/64 entries.
pub(super) fn circuit<T: Scalar>(n: usize) -> Result<CsrMatrix<T>> {
    check_n(n, "n")?;
    let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ n as u64);
    let s = ((n as f64).sqrt() as usize).max(2);
    let mut edges = Vec::new();
    for i in 0..n {
        if i + 1 < n {
            edges.push((i, i + 1, 0.1 + 0.9 * rng.unit()));
        }
        if i + s < n {
            edges.push((i, i + s, 0.1 + 0.9 * rng.unit()));
        }
    }
    let rails = 4.min(n);
    for r in 0..rails {
        for j in (rails + r..n).step_by(64) {
            edges.push((r, j, 0.1 + 0.9 * rng.unit()));
        }
    }
    laplacian_plus_leak(n, &edges, 1e-3)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::diag_dominant;
    use super::*;

    fn symmetric(a: &CsrMatrix<f64>) -> bool {
        let t = a.transpose();
        t.row_ptr() == a.row_ptr() && t.col_idx() == a.col_idx() && t.values() == a.values()
    }

    #[test]
    fn stencil27_counts_and_structure() {
        let a = stencil27::<f64>(4).unwrap();
        // Entries: sum over points of the in-grid 3x3x3 neighbourhood = (3k - 2)^3.
        assert_eq!((a.n_rows(), a.nnz()), (64, 10 * 10 * 10));
        assert!(symmetric(&a) && diag_dominant(&a));
        assert_eq!(a.max_row_len(), 27);
        assert_eq!(stencil27::<f64>(1).unwrap().values(), &[26.0]);
    }

    #[test]
    fn powerlaw_rows_have_a_heavy_tail_and_the_matrix_is_spd_shaped() {
        let a = powerlaw::<f64>(1 << 14).unwrap();
        let n = a.n_rows();
        assert!(symmetric(&a) && diag_dominant(&a));
        let mean = a.nnz() as f64 / n as f64;
        assert!((6.0..20.0).contains(&mean), "mean row length {mean}");
        assert!(
            a.max_row_len() as f64 > 20.0 * mean,
            "longest row {}",
            a.max_row_len()
        );
        assert_eq!(a, powerlaw::<f64>(1 << 14).unwrap(), "deterministic");
    }

    #[test]
    fn circuit_has_four_long_rows() {
        let n = 1 << 14;
        let a = circuit::<f64>(n).unwrap();
        assert!(symmetric(&a) && diag_dominant(&a));
        let long = (0..n)
            .filter(|&r| a.row_ptr()[r + 1] - a.row_ptr()[r] > n / 80)
            .count();
        assert_eq!(long, 4);
        assert!(circuit::<f64>(0).is_err() && powerlaw::<f64>(0).is_err());
        assert_eq!(circuit::<f64>(1).unwrap().nnz(), 1);
    }
}
