//! BILU(0): block incomplete LU factorization with zero fill-in on the block pattern of a BSR
//! matrix (\[Ma21a\] Section 3.3; the block form of Saad, "Iterative Methods for Sparse Linear
//! Systems", 2nd ed., Algorithm 10.4, IKJ variant), on the host.

use super::super::block_dense::{invert, mul, mul_sub, SingularBlock};
use crate::error::{Error, Result};
use crate::matrix::BsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// The factors of A ~ L U on the pattern of A: L block unit lower triangular (strict part
/// stored), U block upper triangular (strict part stored, diagonal blocks stored inverted, as
/// PETSc does and \[Ma21a\]'s kernels expect). Indices are `u32`, blocks column-major.
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

impl<T: Scalar> BiluFactors<T> {
    /// How far `sweeps` block-Jacobi sweeps per factor (from zero, L then U, as the device
    /// applies them) are from the exact triangular solves on a fixed pseudo-random vector r:
    /// ||z_sweeps - z_exact|| / ||z_exact|| with z = (L U)^-1 r. Near 0: the sweeps are the
    /// exact solve for practical purposes; near or above 1: they are a different (often poor)
    /// preconditioner. O(sweeps nnz) on the host.
    pub fn sweep_relative_error(&self, sweeps: usize) -> f64 {
        let s = self.block_size;
        let nb = self.n_block_rows;
        let n = nb * s;
        let r: Vec<f64> = (0..n)
            .map(|i| ((i as f64 + 1.0) * 0.618_033_988_75).fract() - 0.5)
            .collect();
        let exact = self.solve_u_exact(&self.solve_l_exact(&r));
        let swept = self.sweep_u(&self.sweep_l(&r, sweeps), sweeps);
        let diff: f64 = exact
            .iter()
            .zip(&swept)
            .map(|(e, w)| (e - w) * (e - w))
            .sum();
        let norm: f64 = exact.iter().map(|e| e * e).sum();
        if norm > 0.0 && norm.is_finite() {
            (diff / norm).sqrt()
        } else {
            f64::INFINITY
        }
    }

    /// y += sign * B x_J for the stored block k (column-major) into block row rows `y`.
    fn block_mul_add(&self, values: &[T], k: usize, x: &[f64], y: &mut [f64], sign: f64) {
        let s = self.block_size;
        let b = &values[k * s * s..(k + 1) * s * s];
        for c in 0..s {
            for r in 0..s {
                y[r] += sign * b[c * s + r].to_f64() * x[c];
            }
        }
    }

    /// (N_I x) for the strict part `ptr/cols/values` of block row i.
    fn strict_row(&self, ptr: &[u32], cols: &[u32], values: &[T], i: usize, x: &[f64]) -> Vec<f64> {
        let s = self.block_size;
        let mut y = vec![0.0; s];
        let range = ptr[i] as usize..ptr[i + 1] as usize;
        for (k, &j) in range.clone().zip(&cols[range]) {
            let j = j as usize;
            self.block_mul_add(values, k, &x[j * s..(j + 1) * s], &mut y, 1.0);
        }
        y
    }

    /// U_II^-1 v.
    fn inv_diag(&self, i: usize, v: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.block_size];
        self.block_mul_add(&self.u_inv_diag, i, v, &mut y, 1.0);
        y
    }

    fn solve_l_exact(&self, r: &[f64]) -> Vec<f64> {
        let s = self.block_size;
        let mut x = r.to_vec();
        for i in 0..self.n_block_rows {
            let y = self.strict_row(&self.l_row_ptr, &self.l_col_idx, &self.l_values, i, &x);
            for (q, v) in y.iter().enumerate() {
                x[i * s + q] -= v;
            }
        }
        x
    }

    fn solve_u_exact(&self, r: &[f64]) -> Vec<f64> {
        let s = self.block_size;
        let mut x = r.to_vec();
        for i in (0..self.n_block_rows).rev() {
            let y = self.strict_row(&self.u_row_ptr, &self.u_col_idx, &self.u_values, i, &x);
            let rhs: Vec<f64> = (0..s).map(|q| r[i * s + q] - y[q]).collect();
            let xi = self.inv_diag(i, &rhs);
            x[i * s..(i + 1) * s].copy_from_slice(&xi);
        }
        x
    }

    fn sweep_l(&self, r: &[f64], sweeps: usize) -> Vec<f64> {
        let s = self.block_size;
        let mut x = vec![0.0; r.len()];
        for _ in 0..sweeps {
            let mut next = r.to_vec();
            for i in 0..self.n_block_rows {
                let y = self.strict_row(&self.l_row_ptr, &self.l_col_idx, &self.l_values, i, &x);
                for (q, v) in y.iter().enumerate() {
                    next[i * s + q] -= v;
                }
            }
            x = next;
        }
        x
    }

    fn sweep_u(&self, r: &[f64], sweeps: usize) -> Vec<f64> {
        let s = self.block_size;
        let mut x = vec![0.0; r.len()];
        for _ in 0..sweeps {
            let mut next = vec![0.0; r.len()];
            for i in 0..self.n_block_rows {
                let y = self.strict_row(&self.u_row_ptr, &self.u_col_idx, &self.u_values, i, &x);
                let rhs: Vec<f64> = (0..s).map(|q| r[i * s + q] - y[q]).collect();
                next[i * s..(i + 1) * s].copy_from_slice(&self.inv_diag(i, &rhs));
            }
            x = next;
        }
        x
    }
}

pub(super) fn to_u32(v: usize, what: &str) -> Result<u32> {
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
/// [`Error::SingularPivot`] naming the first such block row; `a` is not modified.
///
/// The rows are factored in parallel (rayon) level by level: row I needs only the finished
/// rows K < I of its lower part, so the rows of one level of the lower triangle's dependency
/// graph are independent. Each row does exactly the sequential algorithm's operations in the
/// same order, so the factors are bitwise those of the sequential IKJ loop.
pub fn bilu0<T: Scalar>(a: &BsrMatrix<T>, name: &str) -> Result<BiluFactors<T>> {
    bilu0_owned(a.clone(), name)
}

/// A pointer shared by the rayon tasks of one level; each task writes only its own block row
/// and reads rows finished in earlier levels (see the SAFETY notes at the uses).
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: the tasks that share it write disjoint block rows and read only rows written before
// the current level began (rayon's join orders the levels).
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

/// The rows of the lower triangle's dependency graph by level: `order[starts[l]..starts[l+1]]`
/// are the rows of level l (a row's level is one more than the highest level of the rows K < I
/// of its lower part), in increasing row order.
fn lower_levels(rp: &[usize], ci: &[usize], diag_pos: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let nb = diag_pos.len();
    let mut level = vec![0usize; nb];
    let mut count = Vec::new();
    for i in 0..nb {
        let l = (rp[i]..diag_pos[i])
            .map(|p| level[ci[p]] + 1)
            .max()
            .unwrap_or(0);
        level[i] = l;
        if count.len() <= l {
            count.resize(l + 1, 0);
        }
        count[l] += 1;
    }
    let mut starts = vec![0usize; count.len() + 1];
    for (l, c) in count.iter().enumerate() {
        starts[l + 1] = starts[l] + c;
    }
    let mut next = starts.clone();
    let mut order = vec![0usize; nb];
    for (i, &l) in level.iter().enumerate() {
        order[next[l]] = i;
        next[l] += 1;
    }
    (order, starts)
}

/// Factor block row `i` in place (the sequential IKJ step) and store U_II^-1.
///
/// # Safety
/// `vals` and `inv` point to the factored matrix's blocks and the inverted diagonal blocks;
/// every row K < I of row I's lower part is finished, no other task touches row I, and no
/// task writes the rows K read here.
unsafe fn factor_row<T: Scalar>(
    i: usize,
    s: usize,
    (rp, ci, diag_pos): (&[usize], &[usize], &[usize]),
    vals: Shared<T>,
    inv: Shared<T>,
) -> std::result::Result<(), SingularBlock> {
    let ss = s * s;
    // SAFETY (all blocks below): positions and rows are inside the matrix (rp, ci come from
    // a valid BsrMatrix); row i's blocks are this task's alone, rows k are finished.
    let block = |q: usize| unsafe { std::slice::from_raw_parts_mut(vals.0.add(q * ss), ss) };
    // Blocks of the finished rows K, read-only (other tasks of this level may read them too).
    let finished = |q: usize| unsafe { std::slice::from_raw_parts(vals.0.add(q * ss), ss) };
    let end = rp[i + 1];
    for p in rp[i]..diag_pos[i] {
        let k = ci[p];
        let inv_k = unsafe { std::slice::from_raw_parts(inv.0.add(k * ss), ss) };
        // A_IK <- A_IK U_KK^-1
        let lik = mul(block(p), inv_k, s);
        block(p).copy_from_slice(&lik[..ss]);
        // A_IJ -= A_IK U_KJ for J > K in both rows: merge row K's upper part with the rest
        // of row I (both sorted), in the sequential loop's order (ascending J).
        let (mut a, mut b) = (p + 1, diag_pos[k] + 1);
        while a < end && b < rp[k + 1] {
            match ci[a].cmp(&ci[b]) {
                std::cmp::Ordering::Less => a += 1,
                std::cmp::Ordering::Greater => b += 1,
                std::cmp::Ordering::Equal => {
                    mul_sub(block(a), &lik[..ss], finished(b), s);
                    a += 1;
                    b += 1;
                }
            }
        }
    }
    let inv_i = invert(block(diag_pos[i]), s)?;
    unsafe { std::slice::from_raw_parts_mut(inv.0.add(i * ss), ss) }.copy_from_slice(&inv_i[..ss]);
    Ok(())
}

/// [`bilu0`] factoring in the storage of `a` (no copy of the blocks).
pub(crate) fn bilu0_owned<T: Scalar>(a: BsrMatrix<T>, name: &str) -> Result<BiluFactors<T>> {
    bilu0_with_symbolic(a, name).map(|(factors, _)| factors)
}

/// [`bilu0_owned`] with its symbolic part, for a preconditioner that refactors new values
/// later ([`BiluSymbolic::refactor`]).
pub(crate) fn bilu0_with_symbolic<T: Scalar>(
    a: BsrMatrix<T>,
    name: &str,
) -> Result<(BiluFactors<T>, BiluSymbolic)> {
    let symbolic = BiluSymbolic::of(&a, name)?;
    let mut vals = a.values;
    let inv_diag = symbolic.factor_in_place(&mut vals, name)?;
    Ok((split(&symbolic, &vals, inv_diag), symbolic))
}

/// The symbolic part of BILU(0) for one block pattern: the diagonal blocks' positions, the
/// lower triangle's level schedule and the factors' block-row pointers. Kept by a
/// preconditioner that refactors new values on the same pattern ([`BiluSymbolic::refactor`]).
#[derive(Debug)]
pub(crate) struct BiluSymbolic {
    block_size: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    diag_pos: Vec<usize>,
    order: Vec<usize>,
    starts: Vec<usize>,
    l_row_ptr: Vec<u32>,
    u_row_ptr: Vec<u32>,
}

impl BiluSymbolic {
    /// The symbolic part of [`bilu0`] of `a`: a block row without a diagonal block is
    /// [`Error::SingularPivot`], a pattern beyond 32-bit indices [`Error::IndexOverflow`].
    pub(crate) fn of<T: Scalar>(a: &BsrMatrix<T>, name: &str) -> Result<Self> {
        let nb = a.n_block_rows;
        if a.n_block_cols != nb {
            return Err(Error::dims(
                "BILU(0): square matrix (block columns vs block rows)",
                nb,
                a.n_block_cols,
            ));
        }
        to_u32(nb, "block rows")?;
        to_u32(a.col_idx.len(), "block count")?;
        let (rp, ci) = (&a.row_ptr, &a.col_idx);
        let found: Vec<Option<usize>> = (0..nb)
            .into_par_iter()
            .map(|i| (rp[i]..rp[i + 1]).find(|&p| ci[p] == i))
            .collect();
        if let Some(i) = found.iter().position(Option::is_none) {
            return Err(Error::SingularPivot {
                preconditioner: name.into(),
                block_row: i,
                detail: "no diagonal block is stored (structurally zero pivot)".into(),
            });
        }
        let diag_pos: Vec<usize> = found.into_iter().flatten().collect();
        let (order, starts) = lower_levels(rp, ci, &diag_pos);
        let mut l_row_ptr = Vec::with_capacity(nb + 1);
        let mut u_row_ptr = Vec::with_capacity(nb + 1);
        let (mut nl, mut nu) = (0usize, 0usize);
        l_row_ptr.push(0u32);
        u_row_ptr.push(0u32);
        for i in 0..nb {
            nl += diag_pos[i] - rp[i];
            nu += rp[i + 1] - diag_pos[i] - 1;
            // Both below the block count, checked to fit u32 above.
            l_row_ptr.push(nl as u32);
            u_row_ptr.push(nu as u32);
        }
        Ok(Self {
            block_size: a.block_size,
            row_ptr: a.row_ptr.clone(),
            col_idx: a.col_idx.clone(),
            diag_pos,
            order,
            starts,
            l_row_ptr,
            u_row_ptr,
        })
    }

    /// Factor `vals` (the blocks of a matrix with this pattern, in its block CSR order) in
    /// place, level by level; returns U_II^-1 for every block row. A singular U_II is
    /// [`Error::SingularPivot`] naming the first such block row (the sequential loop's).
    fn factor_in_place<T: Scalar>(&self, vals: &mut [T], name: &str) -> Result<Vec<T>> {
        let (s, nb) = (self.block_size, self.diag_pos.len());
        let ss = s * s;
        debug_assert_eq!(vals.len(), self.col_idx.len() * ss);
        let mut inv_diag = vec![T::zero(); nb * ss];
        let (vp, ip) = (Shared(vals.as_mut_ptr()), Shared(inv_diag.as_mut_ptr()));
        let pattern = (&self.row_ptr[..], &self.col_idx[..], &self.diag_pos[..]);
        // Every level is factored even after a failure: the rows below the first failing row
        // never depend on a failed row, so the smallest failing row is the sequential loop's.
        let mut first_failure: Option<(usize, SingularBlock)> = None;
        for level in self.starts.windows(2) {
            let failure = self.order[level[0]..level[1]]
                .par_iter()
                .filter_map(|&i| {
                    // SAFETY: rows of one level are distinct and depend only on rows of earlier
                    // levels, finished before this par_iter began; vp and ip cover the matrix.
                    unsafe { factor_row(i, s, pattern, vp, ip) }
                        .err()
                        .map(|why| (i, why))
                })
                .min_by_key(|&(i, _)| i);
            if let Some(f) = failure {
                if first_failure.map_or(true, |(j, _)| f.0 < j) {
                    first_failure = Some(f);
                }
            }
        }
        if let Some((i, why)) = first_failure {
            return Err(singular(name, i, why));
        }
        Ok(inv_diag)
    }

    /// The numeric phase again for `vals`, the blocks of new values on this pattern (block CSR
    /// order): the strict blocks of L and U and U's inverted diagonal blocks, bitwise those
    /// [`bilu0`] computes for the same matrix. Errors as [`bilu0`]'s (nothing is kept).
    pub(crate) fn refactor<T: Scalar>(
        &self,
        mut vals: Vec<T>,
        name: &str,
    ) -> Result<(Vec<T>, Vec<T>, Vec<T>)> {
        let ss = self.block_size * self.block_size;
        if vals.len() != self.col_idx.len() * ss {
            return Err(Error::PatternMismatch(format!(
                "{name}: {} values for a pattern of {} blocks",
                vals.len(),
                self.col_idx.len()
            )));
        }
        let inv_diag = self.factor_in_place(&mut vals, name)?;
        let (l_values, u_values) = self.split_values(&vals);
        Ok((l_values, u_values, inv_diag))
    }

    /// The strict lower and upper blocks of `vals` (block CSR order of this pattern) as L's and
    /// U's value arrays, rows copied in parallel.
    fn split_values<T: Scalar>(&self, vals: &[T]) -> (Vec<T>, Vec<T>) {
        let ss = self.block_size * self.block_size;
        let (nl, nu) = (self.n_lower_blocks(), self.n_upper_blocks());
        let mut l_values = vec![T::zero(); nl * ss];
        let mut u_values = vec![T::zero(); nu * ss];
        let out = (Shared(l_values.as_mut_ptr()), Shared(u_values.as_mut_ptr()));
        let (rp, dp) = (&self.row_ptr, &self.diag_pos);
        (0..dp.len()).into_par_iter().for_each(|i| {
            let (lv, uv) = out;
            let (l0, u0) = (self.l_row_ptr[i] as usize, self.u_row_ptr[i] as usize);
            let (lower, upper) = (dp[i] - rp[i], rp[i + 1] - dp[i] - 1);
            // SAFETY: row i's blocks go to its own ranges of L and U (the row pointers made
            // from the same pattern), inside the vectors allocated with those totals.
            unsafe {
                let src = vals.as_ptr();
                std::ptr::copy_nonoverlapping(src.add(rp[i] * ss), lv.0.add(l0 * ss), lower * ss);
                std::ptr::copy_nonoverlapping(
                    src.add((dp[i] + 1) * ss),
                    uv.0.add(u0 * ss),
                    upper * ss,
                );
            }
        });
        (l_values, u_values)
    }

    /// Strict blocks of L.
    pub(crate) fn n_lower_blocks(&self) -> usize {
        self.l_row_ptr.last().map_or(0, |&n| n as usize)
    }

    /// Strict blocks of U.
    pub(crate) fn n_upper_blocks(&self) -> usize {
        self.u_row_ptr.last().map_or(0, |&n| n as usize)
    }
}

/// The factored matrix split into the strict lower part (L) and the strict upper part (U,
/// with the inverted diagonal blocks beside it); rows copied in parallel.
fn split<T: Scalar>(symbolic: &BiluSymbolic, vals: &[T], u_inv_diag: Vec<T>) -> BiluFactors<T> {
    let (rp, ci, dp) = (&symbolic.row_ptr, &symbolic.col_idx, &symbolic.diag_pos);
    let (l_values, u_values) = symbolic.split_values(vals);
    // The block columns: below and above the diagonal block of every row, in its order.
    let columns = |range: fn(usize, &[usize], &[usize]) -> std::ops::Range<usize>| -> Vec<u32> {
        (0..dp.len())
            .into_par_iter()
            .flat_map_iter(|i| ci[range(i, rp, dp)].iter().map(|&c| c as u32))
            .collect()
    };
    // Below the block count, checked to fit u32 by `BiluSymbolic::of`.
    let l_col_idx = columns(|i, rp, dp| rp[i]..dp[i]);
    let u_col_idx = columns(|i, rp, dp| dp[i] + 1..rp[i + 1]);
    BiluFactors {
        block_size: symbolic.block_size,
        n_block_rows: dp.len(),
        l_row_ptr: symbolic.l_row_ptr.clone(),
        l_col_idx,
        l_values,
        u_row_ptr: symbolic.u_row_ptr.clone(),
        u_col_idx,
        u_values,
        u_inv_diag,
    }
}

/// `a` without the blocks that couple different subdomains: the block rows split into `p`
/// contiguous parts of sizes differing by at most one (\[Ma21a\] eq. (12)), and a block (I, J)
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

    /// The sequential IKJ loop (the algorithm as written in Saad), for the bitwise check.
    #[allow(clippy::needless_range_loop)]
    fn bilu0_sequential(a: &BsrMatrix<f64>) -> (Vec<f64>, Vec<f64>) {
        let (s, nb) = (a.block_size, a.n_block_rows);
        let ss = s * s;
        let (rp, ci, mut vals) = (&a.row_ptr, &a.col_idx, a.values.clone());
        let diag: Vec<usize> = (0..nb)
            .map(|i| (rp[i]..rp[i + 1]).find(|&p| ci[p] == i).unwrap())
            .collect();
        let mut inv_diag = vec![0.0; nb * ss];
        let mut pos = vec![usize::MAX; nb];
        for i in 0..nb {
            for p in rp[i]..rp[i + 1] {
                pos[ci[p]] = p;
            }
            for p in rp[i]..diag[i] {
                let k = ci[p];
                let lik = mul(
                    &vals[p * ss..(p + 1) * ss],
                    &inv_diag[k * ss..(k + 1) * ss],
                    s,
                );
                vals[p * ss..(p + 1) * ss].copy_from_slice(&lik[..ss]);
                for q in diag[k] + 1..rp[k + 1] {
                    let at = pos[ci[q]];
                    if at != usize::MAX {
                        let ukj = vals[q * ss..(q + 1) * ss].to_vec();
                        mul_sub(&mut vals[at * ss..(at + 1) * ss], &lik[..ss], &ukj, s);
                    }
                }
            }
            let d = diag[i];
            let inv = invert(&vals[d * ss..(d + 1) * ss], s).unwrap();
            inv_diag[i * ss..(i + 1) * ss].copy_from_slice(&inv[..ss]);
            for p in rp[i]..rp[i + 1] {
                pos[ci[p]] = usize::MAX;
            }
        }
        (vals, inv_diag)
    }

    #[test]
    fn level_parallel_factors_equal_the_sequential_loop_bitwise() {
        use crate::matrix::generate::Generator;
        for (g, n, s) in [
            (Generator::ConvDiff3d, 4096, 4),
            (Generator::Elasticity3d, 3000, 3),
            (Generator::Thermal2d, 2500, 5),
            (Generator::ConvDiff3d, 1000, 1),
        ] {
            let a = g.generate::<f64>(n).unwrap().matrix;
            let b = BsrMatrix::from_csr(&a, s).unwrap();
            let (vals, inv) = bilu0_sequential(&b);
            let f = bilu0(&b, "bilu0").unwrap();
            assert_eq!(f.u_inv_diag, inv, "{g:?}: inverted diagonal blocks");
            let ss = s * s;
            for i in 0..b.n_block_rows {
                let (l0, u0) = (f.l_row_ptr[i] as usize, f.u_row_ptr[i] as usize);
                let (mut nl, mut nu) = (0, 0);
                for p in b.row_ptr[i]..b.row_ptr[i + 1] {
                    let c = b.col_idx[p];
                    let (cols, values, at) = match c.cmp(&i) {
                        std::cmp::Ordering::Less => {
                            nl += 1;
                            (&f.l_col_idx, &f.l_values, l0 + nl - 1)
                        }
                        std::cmp::Ordering::Greater => {
                            nu += 1;
                            (&f.u_col_idx, &f.u_values, u0 + nu - 1)
                        }
                        std::cmp::Ordering::Equal => continue,
                    };
                    assert_eq!(cols[at] as usize, c, "{g:?} row {i}");
                    assert_eq!(
                        &values[at * ss..(at + 1) * ss],
                        &vals[p * ss..(p + 1) * ss],
                        "{g:?} block ({i}, {c})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_first_failing_row_is_named_when_several_fail() {
        // Rows 1 and 3 have zero pivots; row 3 (no lower part) is factored on level 0, before
        // row 1 (level 1): the error must still name row 1, as the sequential loop does.
        let a = CsrMatrix::from_triplets(
            4,
            4,
            &[
                (0, 0, 1.0),
                (0, 1, 1.0),
                (1, 0, 1.0),
                (1, 1, 1.0),
                (2, 2, 1.0),
                (3, 3, 0.0),
            ],
        )
        .unwrap();
        match bilu0(&BsrMatrix::from_csr(&a, 1).unwrap(), "ilu0") {
            Err(Error::SingularPivot { block_row, .. }) => assert_eq!(block_row, 1),
            other => panic!("expected a singular pivot, got {other:?}"),
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
