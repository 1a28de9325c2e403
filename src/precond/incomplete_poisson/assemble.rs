//! The Incomplete Poisson matrix M^-1 = (I - L D^-1)(I - D^-1 L^T) cut to the pattern of A
//! (\[Ament10\] eq. (15)), or its symmetrically scaled form D^-1/2 IP(D^-1/2 A D^-1/2) D^-1/2 =
//! (I - D^-1 L) D^-1 (I - L^T D^-1) cut to the same pattern, built on the host, and the check
//! that A is in its domain.

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// Why `a` is outside the domain of the IP preconditioner (a symmetric matrix with a positive
/// diagonal and nonpositive off-diagonal entries, e.g. an M-matrix), or `None`.
///
/// Symmetry is checked on the pattern exactly and on the values up to 64 ulps of the larger
/// entry (assembly round-off).
pub(super) fn outside_domain<T: Scalar>(a: &CsrMatrix<T>) -> Option<String> {
    crate::precond::domain::symmetric_violation(a, |i, j, v| {
        (v > T::zero()).then(|| {
            format!(
                "entry ({i}, {j}) = {} is positive (IP needs nonpositive off-diagonals)",
                v.to_f64()
            )
        })
    })
}

/// M^-1 on the pattern of `a`.
///
/// Unscaled (`scaled` false, the paper's eq. (15)): K K^T with K = I - L D^-1, entry (i, j)
/// sum_{k <= min(i, j)} K_ik K_jk with K_ii = 1 and K_ik = -a_ik / a_kk (k < i).
///
/// Scaled: C D^-1 C^T with C = I - D^-1 L, entry (i, j) sum_{k <= min(i, j)} C_ik C_jk / a_kk
/// with C_ii = 1 and C_ik = -a_ik / a_ii (k < i): the IP of D^-1/2 A D^-1/2, scaled back. On a
/// constant diagonal d it is the unscaled matrix divided by d; where the diagonal varies it
/// stays positive definite for 5- and 7-point M-matrices (it is D^-1/2 (2I + S - Ã) D^-1/2 with
/// S >= 0 diagonal and lambda_max(Ã) <= 2), where the unscaled one need not.
///
/// Summed in ascending k (so M^-1 is exactly symmetric). `a` must pass [`outside_domain`].
pub(super) fn ip_matrix<T: Scalar>(a: &CsrMatrix<T>, scaled: bool) -> Result<CsrMatrix<T>> {
    let n = a.n_rows();
    let diag = a.diagonal();
    // Row i of K (or C): (k, K_ik) for k < i ascending, then (i, 1).
    let k_rows: Vec<Vec<(usize, T)>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (cols, vals) = a.row(i);
            let mut row: Vec<(usize, T)> = cols
                .iter()
                .zip(vals)
                .filter(|(&k, _)| k < i)
                .map(|(&k, &v)| (k, -v / diag[if scaled { i } else { k }]))
                .collect();
            row.push((i, T::one()));
            row
        })
        .collect();
    let weight = |k: usize| if scaled { Some(diag[k]) } else { None };
    let values: Vec<T> = (0..n)
        .into_par_iter()
        .flat_map_iter(|i| {
            let ki = &k_rows[i];
            let k_rows = &k_rows;
            a.row(i)
                .0
                .iter()
                .map(move |&j| merge_dot(ki, &k_rows[j], weight))
        })
        .collect();
    if let Some(pos) = values.iter().position(|v| !v.is_finite()) {
        let row = a.row_ptr().partition_point(|&p| p <= pos) - 1;
        return Err(Error::NotApplicable {
            preconditioner: "ip".into(),
            reason: format!("the IP entries of row {row} overflow"),
        });
    }
    CsrMatrix::new(n, n, a.row_ptr().to_vec(), a.col_idx().to_vec(), values)
}

/// sum over the common columns k of two ascending sparse rows of the products, each divided by
/// `divisor(k)` when it gives one.
fn merge_dot<T: Scalar>(
    x: &[(usize, T)],
    y: &[(usize, T)],
    divisor: impl Fn(usize) -> Option<T>,
) -> T {
    let (mut p, mut q, mut acc) = (0, 0, T::zero());
    while p < x.len() && q < y.len() {
        match x[p].0.cmp(&y[q].0) {
            std::cmp::Ordering::Less => p += 1,
            std::cmp::Ordering::Greater => q += 1,
            std::cmp::Ordering::Equal => {
                acc += match divisor(x[p].0) {
                    Some(d) => x[p].1 * y[q].1 / d,
                    None => x[p].1 * y[q].1,
                };
                p += 1;
                q += 1;
            }
        }
    }
    acc
}

/// Whether the diagonal of `a` varies (entries more than 64 ulps of the largest apart): where
/// it does, [`super::IpScaling::Auto`] builds the scaled IP.
pub(super) fn diagonal_varies<T: Scalar>(a: &CsrMatrix<T>) -> bool {
    let d = a.diagonal();
    let (lo, hi) = d
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            let v = v.to_f64();
            (lo.min(v), hi.max(v))
        });
    hi - lo > 64.0 * T::EPSILON.to_f64() * hi.abs()
}
