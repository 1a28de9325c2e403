//! Prolongators of aggregation multigrid: the tentative P_tent and the smoothed
//! P = (I - w D_f^-1 A_f) P_tent (Vanek, Mandel, Brezina 1996, section 4), and the spectral
//! estimate that sets w.

use super::aggregate::Aggregates;
use super::strength::StrengthGraph;
use crate::error::{Error, Result};
use crate::matrix::spgemm::assemble_rows;
use crate::matrix::CsrMatrix;
use crate::memory::check_budget;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// Power iterations of [`spectral_radius`].
pub const POWER_ITERATIONS: usize = 10;

/// The coarse unknown of fine row `row`: aggregate of its node times `block_size` plus its
/// component; `None` for a node in no aggregate.
fn coarse_column(aggregates: &Aggregates, block_size: usize, row: usize) -> Option<usize> {
    let agg = aggregates.of_node[row / block_size];
    (agg != super::aggregate::UNAGGREGATED).then(|| agg as usize * block_size + row % block_size)
}

/// The tentative prolongator, `(nodes b) x (aggregates b)` for block size b: row i holds a 1
/// in column `aggregate(node(i)) b + component(i)`, one entry per row. Its columns are the
/// b unit vectors (one constant per component) restricted to each aggregate, not normalized:
/// a diagonal scaling of P changes neither the coarse correction nor the strength and
/// smoothing of the coarser levels (both are invariant under symmetric diagonal scaling).
pub fn tentative_prolongator<T: Scalar>(
    aggregates: &Aggregates,
    block_size: usize,
) -> Result<CsrMatrix<T>> {
    let b = block_size.max(1);
    let rows = aggregates.of_node.len() * b;
    assemble_rows(
        "AMG tentative prolongator",
        rows,
        aggregates.count * b,
        || Ok(()),
        |i, _, cols, vals| {
            if let Some(col) = coarse_column(aggregates, b, i) {
                cols.push(col);
                vals.push(T::one());
            }
        },
    )
}

/// The filtered matrix A_f of `a`: the diagonal block of every node and its strong couplings
/// kept, the weak couplings dropped and added to the diagonal (lumped, as in AMGCL's smoothed
/// aggregation), so A_f's row sums equal A's. Where lumping would make a diagonal entry
/// nonpositive (weak couplings of the sign of the diagonal outweighing it) the row keeps A's
/// diagonal. `a` must have a positive diagonal.
pub fn filtered_matrix<T: Scalar>(
    a: &CsrMatrix<T>,
    strength: &StrengthGraph,
    block_size: usize,
) -> Result<CsrMatrix<T>> {
    filtered_rows(a, block_size, |node, other| strength.is_strong(node, other))
}

/// [`filtered_matrix`] of the rows of `a` (of any width, its column `i` being row `i`'s
/// diagonal) with the strong couplings between node `node` and another node `other` (a column
/// node) as `is_strong` says.
pub(super) fn filtered_rows<T: Scalar>(
    a: &CsrMatrix<T>,
    block_size: usize,
    is_strong: impl Fn(usize, usize) -> bool + Sync,
) -> Result<CsrMatrix<T>> {
    let b = block_size.max(1);
    assemble_rows(
        "AMG filtered matrix",
        a.n_rows(),
        a.n_cols(),
        || Ok(()),
        |i, _, cols, vals| {
            let (c, v) = a.row(i);
            let node = i / b;
            let mut lumped = T::zero();
            let mut diag_at = None;
            let mut diag = T::zero();
            for (&j, &aij) in c.iter().zip(v) {
                if j == i {
                    diag_at = Some(cols.len());
                    diag = aij;
                    cols.push(j);
                    vals.push(aij);
                } else if j / b == node || is_strong(node, j / b) {
                    cols.push(j);
                    vals.push(aij);
                } else {
                    lumped += aij;
                }
            }
            if let Some(k) = diag_at {
                if (diag + lumped).to_f64() > 0.0 {
                    vals[k] = diag + lumped;
                }
            }
        },
    )
}

/// The smoothed prolongator P = (I - w D_f^-1 A_f) P_tent, computed row by row without forming
/// P_tent: row i is (1 - w) at i's coarse column plus -w a_f_ij / a_f_ii at the coarse column
/// of every other j of row i of A_f (merged where two share a column). `filtered` must have a
/// positive diagonal.
pub fn smoothed_prolongator<T: Scalar>(
    filtered: &CsrMatrix<T>,
    aggregates: &Aggregates,
    block_size: usize,
    weight: f64,
) -> Result<CsrMatrix<T>> {
    let b = block_size.max(1);
    check_budget(
        "AMG smoothed prolongator",
        filtered
            .nnz()
            .checked_mul(2 * (std::mem::size_of::<usize>() + std::mem::size_of::<T>())),
    )?;
    let w = T::from_f64(weight);
    assemble_rows(
        "AMG smoothed prolongator",
        filtered.n_rows(),
        aggregates.count * b,
        || Ok(Vec::<(usize, T)>::new()),
        |i, row, cols, vals| {
            let (c, v) = filtered.row(i);
            let diag = c
                .binary_search(&i)
                .map(|k| v[k])
                .unwrap_or_else(|_| T::one());
            let scale = w / diag;
            row.clear();
            if let Some(col) = coarse_column(aggregates, b, i) {
                row.push((col, T::one()));
            }
            for (&j, &aij) in c.iter().zip(v) {
                if let Some(col) = coarse_column(aggregates, b, j) {
                    row.push((col, -(scale * aij)));
                }
            }
            row.sort_by_key(|&(col, _)| col);
            let start = cols.len();
            for &(col, val) in row.iter() {
                if cols.len() > start && cols.last() == Some(&col) {
                    if let Some(last) = vals.last_mut() {
                        *last += val;
                    }
                } else {
                    cols.push(col);
                    vals.push(val);
                }
            }
        },
    )
}

/// The diagonal of `a` as f64, or an error naming the first row whose diagonal is missing,
/// zero, negative or not finite (`level` for the message).
pub fn positive_diagonal<T: Scalar>(a: &CsrMatrix<T>, level: usize) -> Result<Vec<f64>> {
    let diag: Vec<f64> = a.diagonal().iter().map(|d| d.to_f64()).collect();
    if let Some(r) = diag.iter().position(|&d| !(d > 0.0 && d.is_finite())) {
        return Err(diagonal_error(level, r, diag[r]));
    }
    Ok(diag)
}

/// The error of a level whose row `r` has the diagonal entry `d` (missing or zero: a singular
/// pivot; negative or not finite: not applicable).
pub(super) fn diagonal_error(level: usize, r: usize, d: f64) -> Error {
    if d == 0.0 || !d.is_finite() {
        return Error::SingularPivot {
            preconditioner: "amg".into(),
            block_row: r,
            detail: format!(
                "level {level}: the diagonal entry of row {r} is {d} (missing or zero); the \
                 Jacobi-type smoothers and the prolongator smoothing divide by it"
            ),
        };
    }
    Error::NotApplicable {
        preconditioner: "amg".into(),
        reason: format!(
            "level {level}: row {r} has a negative diagonal entry {d}; smoothed aggregation \
             needs a positive diagonal (a symmetric positive definite or M-matrix-like \
             operator; negate the system if it is negative definite)"
        ),
    }
}

/// An estimate of the spectral radius of D^-1 A (`diag` the positive diagonal D of `a`):
/// [`POWER_ITERATIONS`] power iterations from a fixed pseudo-random start vector (so the
/// result is deterministic), the estimate being the largest ratio ||D^-1 A x||_D / ||x||_D
/// met (a lower bound of the largest eigenvalue when A is symmetric), capped by the Gershgorin
/// bound max_i sum_j |a_ij| / a_ii (an upper bound). Computed in f64.
pub fn spectral_radius<T: Scalar>(a: &CsrMatrix<T>, diag: &[f64]) -> f64 {
    if a.n_rows() == 0 {
        return 0.0;
    }
    let apply = |x: &[f64], y: &mut [f64]| {
        scaled_product(a, diag, x, y);
        Ok(())
    };
    // One process: the reductions are the local values (and no error can arise).
    power_estimate(diag, 0, gershgorin_bound(a, diag), apply, &|s| s, &|m| m).unwrap_or(0.0)
}

/// y = D^-1 A x in f64 (`diag` the diagonal D of `a`'s rows, `x` of `a`'s width).
pub(super) fn scaled_product<T: Scalar>(a: &CsrMatrix<T>, diag: &[f64], x: &[f64], y: &mut [f64]) {
    y.par_iter_mut().enumerate().for_each(|(i, yi)| {
        let (c, v) = a.row(i);
        *yi = c
            .iter()
            .zip(v)
            .map(|(&j, &aij)| aij.to_f64() * x[j])
            .sum::<f64>()
            / diag[i];
    });
}

/// max_i sum_j |a_ij| / a_ii over the rows of `a` (`diag` its diagonal): an upper bound of the
/// spectral radius of D^-1 A.
pub(super) fn gershgorin_bound<T: Scalar>(a: &CsrMatrix<T>, diag: &[f64]) -> f64 {
    (0..a.n_rows())
        .into_par_iter()
        .map(|i| a.row(i).1.iter().map(|v| v.to_f64().abs()).sum::<f64>() / diag[i])
        .reduce(|| 0.0, f64::max)
}

/// The power iterations of [`spectral_radius`] on rows of D^-1 A held by this process
/// (`diag` their diagonal; `first` the global index of the first, for the start vector):
/// `apply(x, y)` sets y = D^-1 A x on these rows; `sums` and `max` complete the local norms
/// and the local Gershgorin bound `gershgorin` over every process holding rows (identities on
/// one process; over the ranks of a distributed setup, where `apply` exchanges the halo), so
/// every process returns the same estimate and takes the same branches.
pub(super) fn power_estimate(
    diag: &[f64],
    first: usize,
    gershgorin: f64,
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<()>,
    sums: &dyn Fn([f64; 2]) -> [f64; 2],
    max: &dyn Fn(f64) -> f64,
) -> Result<f64> {
    let n = diag.len();
    let gershgorin = max(gershgorin);
    let mut x: Vec<f64> = (first..first + n).map(start_value).collect();
    let mut y = vec![0.0; n];
    let mut estimate = 0.0f64;
    for _ in 0..POWER_ITERATIONS {
        apply(&x, &mut y)?;
        // ||y||_D^2 and ||x||_D^2, summed over fixed chunks (the same bits on any thread
        // count).
        let local = (0..n.div_ceil(SUM_CHUNK))
            .into_par_iter()
            .map(|c| {
                (c * SUM_CHUNK..((c + 1) * SUM_CHUNK).min(n)).fold((0.0, 0.0), |s, i| {
                    (s.0 + diag[i] * y[i] * y[i], s.1 + diag[i] * x[i] * x[i])
                })
            })
            .collect::<Vec<(f64, f64)>>()
            .into_iter()
            .fold((0.0, 0.0), |p, q| (p.0 + q.0, p.1 + q.1));
        let [yy, xx] = sums([local.0, local.1]);
        if !(yy > 0.0 && xx > 0.0 && yy.is_finite()) {
            break;
        }
        estimate = estimate.max((yy / xx).sqrt());
        let scale = 1.0 / yy.sqrt();
        x.par_iter_mut()
            .zip(&y)
            .for_each(|(xi, &yi)| *xi = yi * scale);
    }
    Ok(if estimate > 0.0 {
        estimate.min(gershgorin)
    } else {
        gershgorin
    })
}

/// Rows per partial sum of the power iterations' norms.
const SUM_CHUNK: usize = 4096;

/// The fixed start vector of the power iterations: a hash of the index into [-1, 1].
fn start_value(i: usize) -> f64 {
    let mut h = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

#[cfg(test)]
mod tests {
    use super::super::aggregate::aggregate;
    use super::super::strength::strength_graph;
    use super::*;
    use crate::matrix::generate::Generator;

    #[test]
    fn prolongators_have_no_zero_row_and_preserve_constants() {
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(30)
            .unwrap()
            .matrix;
        let s = strength_graph(&a, 0.08, 1).unwrap();
        let agg = aggregate(&s).unwrap();
        let pt = tentative_prolongator::<f64>(&agg, 1).unwrap();
        assert_eq!(pt.nnz(), a.n_rows());
        let af = filtered_matrix(&a, &s, 1).unwrap();
        assert_eq!(af, a, "every Poisson coupling is strong");
        let diag = positive_diagonal(&af, 0).unwrap();
        let rho = spectral_radius(&af, &diag);
        assert!(rho > 1.8 && rho <= 2.0, "{rho}");
        let p = smoothed_prolongator(&af, &agg, 1, 4.0 / 3.0 / rho).unwrap();
        let ones = vec![1.0; p.n_cols()];
        let mut y = vec![0.0; p.n_rows()];
        p.mul_vec(&ones, &mut y).unwrap();
        for (i, yi) in y.iter().enumerate() {
            assert!(!p.row(i).0.is_empty(), "row {i}");
            // Interior rows (zero row sum of A) reproduce the constant exactly.
            let row_sum: f64 = a.row(i).1.iter().sum();
            if row_sum == 0.0 {
                assert!((yi - 1.0).abs() < 1e-14, "row {i}: {yi}");
            }
        }
    }

    #[test]
    fn spectral_estimate_is_close_and_below_the_gershgorin_bound() {
        // 1D Laplacian: D^-1 A has eigenvalues 1 - cos(k pi / (n + 1)), radius near 2.
        let n = 50;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0));
            if i > 0 {
                t.push((i, i - 1, -1.0));
                t.push((i - 1, i, -1.0));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        let rho = spectral_radius(&a, &vec![2.0; n]);
        let exact = 1.0 + (std::f64::consts::PI / (n as f64 + 1.0)).cos();
        assert!(
            rho <= exact + 1e-12 && rho > 0.9 * exact,
            "{rho} vs {exact}"
        );
    }
}
