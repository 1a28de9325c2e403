//! BILU(0): block incomplete LU factorization with zero fill-in on the block pattern of a BSR
//! matrix (seed 000 Section 3.3; the block form of Saad, "Iterative Methods for Sparse Linear
//! Systems", 2nd ed., Algorithm 10.4, IKJ variant), on the host.

use super::super::block_dense::{invert, mul, mul_sub, SingularBlock};
use crate::error::{Error, Result};
use crate::matrix::BsrMatrix;
use crate::scalar::Scalar;

/// The factors of A ~ L U on the pattern of A: L block unit lower triangular (strict part
/// stored), U block upper triangular (strict part stored, diagonal blocks stored inverted, as
/// PETSc does and seed 000's kernels expect). Indices are `u32`, blocks column-major.
#[derive(Debug, Clone, PartialEq)]
pub struct BiluFactors<T> {
    /// Block size s.
    pub block_size: usize,
    /// Number of block rows.
    pub n_block_rows: usize,
    /// Strict lower part of L: block-row pointers.
    pub l_row_ptr: Vec<u32>,
    /// Strict lower part of L: block columns.
    pub l_col_idx: Vec<u32>,
    /// Strict lower part of L: blocks.
    pub l_values: Vec<T>,
    /// Strict upper part of U: block-row pointers.
    pub u_row_ptr: Vec<u32>,
    /// Strict upper part of U: block columns.
    pub u_col_idx: Vec<u32>,
    /// Strict upper part of U: blocks.
    pub u_values: Vec<T>,
    /// U_II^-1 for every block row I (s*s each).
    pub u_inv_diag: Vec<T>,
}

fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::IndexOverflow {
        what: format!("BILU(0) {what}"),
        value: v,
        max: u32::MAX as usize,
    })
}

/// A singular pivot block as the typed error.
pub(crate) fn singular(name: &str, block_row: usize, why: SingularBlock) -> Error {
    Error::SingularPivot {
        preconditioner: name.into(),
        block_row,
        detail: match why {
            SingularBlock::Pivot { column, pivot } => {
                format!("pivot {pivot:e} in column {column} of the diagonal block")
            }
            SingularBlock::NonFinite => "the diagonal block holds NaN or infinity".into(),
        },
    }
}

/// BILU(0) of `a` (square, block columns sorted within each block row, as [`BsrMatrix`]
/// guarantees). For I = 0.., for each K < I in row I: A_IK <- A_IK U_KK^-1, then
/// A_IJ -= A_IK U_KJ for every J > K present in both rows I and K; finally U_II = A_II is
/// inverted. A block row without a diagonal block, or a singular U_II, is
/// [`Error::SingularPivot`] naming the block row; `a` is not modified.
pub fn bilu0<T: Scalar>(a: &BsrMatrix<T>, name: &str) -> Result<BiluFactors<T>> {
    bilu0_owned(a.clone(), name)
}

/// [`bilu0`] factoring in the storage of `a` (no copy of the blocks).
pub(crate) fn bilu0_owned<T: Scalar>(a: BsrMatrix<T>, name: &str) -> Result<BiluFactors<T>> {
    let (s, nb) = (a.block_size, a.n_block_rows);
    if a.n_block_cols != nb {
        return Err(Error::dims(
            "BILU(0): square matrix (block columns vs block rows)",
            nb,
            a.n_block_cols,
        ));
    }
    let ss = s * s;
    let BsrMatrix {
        row_ptr: rp,
        col_idx: ci,
        values: mut vals,
        ..
    } = a;
    let (rp, ci) = (&rp, &ci);
    let mut diag_pos = vec![0usize; nb];
    for (i, d) in diag_pos.iter_mut().enumerate() {
        *d = (rp[i]..rp[i + 1])
            .find(|&p| ci[p] == i)
            .ok_or_else(|| Error::SingularPivot {
                preconditioner: name.into(),
                block_row: i,
                detail: "no diagonal block is stored (structurally zero pivot)".into(),
            })?;
    }
    let mut inv_diag = vec![T::zero(); nb * ss];
    // pos[J] = position of block column J in the current row, usize::MAX when absent.
    let mut pos = vec![usize::MAX; nb];
    for i in 0..nb {
        for p in rp[i]..rp[i + 1] {
            pos[ci[p]] = p;
        }
        for p in rp[i]..diag_pos[i] {
            let k = ci[p];
            // A_IK <- A_IK U_KK^-1
            let lik = mul(
                &vals[p * ss..(p + 1) * ss],
                &inv_diag[k * ss..(k + 1) * ss],
                s,
            );
            vals[p * ss..(p + 1) * ss].copy_from_slice(&lik[..ss]);
            // A_IJ -= A_IK U_KJ for J > K in the pattern of row I.
            for q in diag_pos[k] + 1..rp[k + 1] {
                let at = pos[ci[q]];
                if at != usize::MAX {
                    let (ukj, aij) = if at < q {
                        let (lo, hi) = vals.split_at_mut(q * ss);
                        (&hi[..ss], &mut lo[at * ss..(at + 1) * ss])
                    } else {
                        let (lo, hi) = vals.split_at_mut(at * ss);
                        (&lo[q * ss..(q + 1) * ss], &mut hi[..ss])
                    };
                    mul_sub(aij, &lik[..ss], ukj, s);
                }
            }
        }
        let d = diag_pos[i];
        let inv = invert(&vals[d * ss..(d + 1) * ss], s).map_err(|why| singular(name, i, why))?;
        inv_diag[i * ss..(i + 1) * ss].copy_from_slice(&inv);
        for p in rp[i]..rp[i + 1] {
            pos[ci[p]] = usize::MAX;
        }
    }
    // Split into the strict lower and strict upper parts.
    let n_lower: usize = (0..nb).map(|i| diag_pos[i] - rp[i]).sum();
    let n_upper = ci.len() - nb - n_lower;
    let mut f = BiluFactors {
        block_size: s,
        n_block_rows: nb,
        l_row_ptr: Vec::with_capacity(nb + 1),
        l_col_idx: Vec::with_capacity(n_lower),
        l_values: Vec::with_capacity(n_lower * ss),
        u_row_ptr: Vec::with_capacity(nb + 1),
        u_col_idx: Vec::with_capacity(n_upper),
        u_values: Vec::with_capacity(n_upper * ss),
        u_inv_diag: inv_diag,
    };
    f.l_row_ptr.push(0);
    f.u_row_ptr.push(0);
    for i in 0..nb {
        for p in rp[i]..rp[i + 1] {
            let (cols, values) = if p < diag_pos[i] {
                (&mut f.l_col_idx, &mut f.l_values)
            } else if p > diag_pos[i] {
                (&mut f.u_col_idx, &mut f.u_values)
            } else {
                continue;
            };
            cols.push(to_u32(ci[p], "block column")?);
            values.extend_from_slice(&vals[p * ss..(p + 1) * ss]);
        }
        f.l_row_ptr.push(to_u32(f.l_col_idx.len(), "block count")?);
        f.u_row_ptr.push(to_u32(f.u_col_idx.len(), "block count")?);
    }
    Ok(f)
}

/// `a` without the blocks that couple different subdomains: the block rows split into `p`
/// contiguous parts of sizes differing by at most one (seed 000 eq. (12)), and a block (I, J)
/// kept only when I and J lie in the same part. Block-Jacobi over subdomains.
pub fn drop_couplings<T: Scalar>(a: &BsrMatrix<T>, p: usize) -> BsrMatrix<T> {
    let nb = a.n_block_rows;
    let p = p.clamp(1, nb.max(1));
    if p == 1 {
        return a.clone();
    }
    let part = subdomain_of(nb, p);
    let ss = a.block_size * a.block_size;
    let mut out = BsrMatrix {
        block_size: a.block_size,
        n_block_rows: nb,
        n_block_cols: a.n_block_cols,
        row_ptr: vec![0],
        col_idx: Vec::new(),
        values: Vec::new(),
    };
    for i in 0..nb {
        for q in a.row_ptr[i]..a.row_ptr[i + 1] {
            let j = a.col_idx[q];
            if j < nb && part(j) == part(i) {
                out.col_idx.push(j);
                out.values
                    .extend_from_slice(&a.values[q * ss..(q + 1) * ss]);
            }
        }
        out.row_ptr.push(out.col_idx.len());
    }
    out
}

/// The part of block row `i` when `nb` block rows split into `p` contiguous parts, the first
/// `nb % p` of them one row longer.
pub fn subdomain_of(nb: usize, p: usize) -> impl Fn(usize) -> usize {
    let (base, extra) = (nb / p.max(1), nb % p.max(1));
    move |i| {
        let long = extra * (base + 1);
        if i < long {
            i / (base + 1)
        } else {
            extra + (i - long) / base.max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::CsrMatrix;

    #[test]
    fn subdomains_are_contiguous_and_balanced() {
        let part = subdomain_of(10, 3);
        let parts: Vec<usize> = (0..10).map(&part).collect();
        assert_eq!(parts, vec![0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        let part = subdomain_of(4, 4);
        assert_eq!((0..4).map(part).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn tridiagonal_ilu0_is_exact_lu() {
        // ILU(0) of a tridiagonal matrix has no dropped fill: L U = A exactly.
        let n = 6;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 4.0 + i as f64));
            if i > 0 {
                t.push((i, i - 1, -1.0 - 0.1 * i as f64));
            }
            if i + 1 < n {
                t.push((i, i + 1, -2.0));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        let f = bilu0(&BsrMatrix::from_csr(&a, 1).unwrap(), "ilu0").unwrap();
        // Rebuild L U densely and compare.
        let mut l = vec![vec![0.0; n]; n];
        let mut u = vec![vec![0.0; n]; n];
        for i in 0..n {
            l[i][i] = 1.0;
            u[i][i] = 1.0 / f.u_inv_diag[i];
            for p in f.l_row_ptr[i]..f.l_row_ptr[i + 1] {
                l[i][f.l_col_idx[p as usize] as usize] = f.l_values[p as usize];
            }
            for p in f.u_row_ptr[i]..f.u_row_ptr[i + 1] {
                u[i][f.u_col_idx[p as usize] as usize] = f.u_values[p as usize];
            }
        }
        for i in 0..n {
            for j in 0..n {
                let lu: f64 = (0..n).map(|k| l[i][k] * u[k][j]).sum();
                let (cols, vals) = a.row(i);
                let aij = cols.iter().position(|&c| c == j).map_or(0.0, |q| vals[q]);
                assert!((lu - aij).abs() < 1e-13, "({i}, {j}): {lu} vs {aij}");
            }
        }
    }

    #[test]
    fn zero_pivot_names_the_row() {
        let a = CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 0, 1.0),
                (1, 1, 1.0),
                (1, 0, 1.0),
                (0, 1, 1.0),
                (2, 2, 1.0),
            ],
        )
        .unwrap();
        match bilu0(&BsrMatrix::from_csr(&a, 1).unwrap(), "ilu0") {
            Err(Error::SingularPivot { block_row, .. }) => assert_eq!(block_row, 1),
            other => panic!("expected a singular pivot, got {other:?}"),
        }
        let no_diag =
            CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 0, 1.0), (0, 1, 1.0)]).unwrap();
        assert!(matches!(
            bilu0(&BsrMatrix::from_csr(&no_diag, 1).unwrap(), "ilu0"),
            Err(Error::SingularPivot { block_row: 1, .. })
        ));
    }
}
