//! Static pivoting and scaling before an incomplete factorization: the maximum-product
//! bipartite matching of Duff and Koster (MC64's job 5; I. S. Duff and J. Koster, "On
//! algorithms for permuting large entries to the diagonal of a sparse matrix", SIAM J. Matrix
//! Anal. Appl. 22(4), 2001), and plain row/column equilibration as the cheap option.
//!
//! The matching minimizes the sum of the costs c_ij = log(max_k |a_kj|) - log |a_ij| >= 0 over
//! the stored nonzero entries, i.e. maximizes the product of the matched entries' magnitudes,
//! by shortest augmenting paths (Dijkstra on the reduced costs c_ij - u_i - v_j >= 0), one
//! column at a time. The dual variables u (rows) and v (columns) at the optimum give the
//! scalings Dr = exp(u), Dc = exp(v) / colmax: every entry of Dr A Dc has magnitude
//! exp(u_i + v_j - c_ij) <= 1, with equality on the matched entries.

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::memory::try_filled;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A row permutation and the row and column scalings that go with it: row `row_of_col[j]` of
/// `Dr A Dc` moved to position j has its diagonal entry on column j.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// The row matched to column j (the identity for equilibration).
    pub row_of_col: Vec<usize>,
    /// Row scaling Dr (one factor per original row).
    pub row_scale: Vec<f64>,
    /// Column scaling Dc (one factor per column).
    pub col_scale: Vec<f64>,
}

impl Scaling {
    /// The matrix `P Dr A Dc`: row j of the result is row `row_of_col[j]` of `Dr A Dc`. Its
    /// explicit zeros are kept (they are part of the pattern the factorization sees).
    pub fn apply(&self, a: &CsrMatrix<f64>) -> Result<CsrMatrix<f64>> {
        let n = a.n_rows();
        if self.row_of_col.len() != n || self.col_scale.len() != a.n_cols() {
            return Err(Error::dims(
                "scaling: size of the matrix",
                self.row_of_col.len(),
                n,
            ));
        }
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut cols = Vec::with_capacity(a.nnz());
        let mut vals = Vec::with_capacity(a.nnz());
        row_ptr.push(0);
        for &i in &self.row_of_col {
            let (c, v) = a.row(i);
            let dr = self.row_scale[i];
            cols.extend_from_slice(c);
            vals.extend(c.iter().zip(v).map(|(&j, &x)| dr * x * self.col_scale[j]));
            row_ptr.push(cols.len());
        }
        CsrMatrix::new(n, a.n_cols(), row_ptr, cols, vals)
    }
}

/// Check that `a` is square, finite and has no empty row or column; returns the column
/// maxima of |a_ij|. An empty row or column (or one holding only zeros) is
/// [`Error::SingularPivot`] ("structurally singular").
pub(super) fn column_maxima(a: &CsrMatrix<f64>, name: &str) -> Result<Vec<f64>> {
    if !a.is_square() {
        return Err(Error::dims(
            "ILU: square matrix (columns)",
            a.n_rows(),
            a.n_cols(),
        ));
    }
    if let Some(i) = a.first_non_finite() {
        return Err(Error::NonFinite {
            what: "matrix value (ILU setup)".into(),
            index: i,
        });
    }
    let n = a.n_rows();
    let mut colmax = try_filled("ILU column maxima", n, 0.0f64)?;
    for i in 0..n {
        let (c, v) = a.row(i);
        let rowmax = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if rowmax == 0.0 {
            return Err(Error::SingularPivot {
                preconditioner: name.into(),
                block_row: i,
                detail: "the row holds no nonzero entry (structurally singular matrix)".into(),
            });
        }
        for (&j, &x) in c.iter().zip(v) {
            colmax[j] = colmax[j].max(x.abs());
        }
    }
    if let Some(j) = colmax.iter().position(|&m| m == 0.0) {
        return Err(Error::SingularPivot {
            preconditioner: name.into(),
            block_row: j,
            detail: format!("column {j} holds no nonzero entry (structurally singular matrix)"),
        });
    }
    Ok(colmax)
}

/// Row then column equilibration: Dr_i = 1 / max_j |a_ij|, Dc_j = 1 / max_i |Dr_i a_ij|, no
/// permutation. Every entry of Dr A Dc is at most 1 in magnitude and every row and column
/// holds an entry of magnitude 1. Errors as [`max_product_matching`] for bad input.
pub fn equilibrate(a: &CsrMatrix<f64>) -> Result<Scaling> {
    column_maxima(a, "ilu")?;
    let n = a.n_rows();
    let row_scale: Vec<f64> = (0..n)
        .map(|i| 1.0 / a.row(i).1.iter().fold(0.0f64, |m, x| m.max(x.abs())))
        .collect();
    let mut colmax = vec![0.0f64; n];
    for (i, &dr) in row_scale.iter().enumerate() {
        let (c, v) = a.row(i);
        for (&j, &x) in c.iter().zip(v) {
            colmax[j] = colmax[j].max((dr * x).abs());
        }
    }
    Ok(Scaling {
        row_of_col: (0..n).collect(),
        row_scale,
        col_scale: colmax.iter().map(|&m| 1.0 / m).collect(),
    })
}

/// A row's tentative distance in the Dijkstra heap (smallest first).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tentative(f64, usize);

impl Eq for Tentative {}

impl Ord for Tentative {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl PartialOrd for Tentative {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The maximum-product matching of `a` (square, finite) and its scalings: with
/// `s = max_product_matching(a)`, `s.apply(a)` has diagonal entries of magnitude 1 and every
/// other entry at most 1 in magnitude (to rounding). Explicitly stored zeros are not matched.
///
/// Errors: [`Error::DimensionMismatch`] for a matrix that is not square,
/// [`Error::NonFinite`] for NaN or infinity, [`Error::SingularPivot`] for an empty row or
/// column and for a structurally singular matrix (the message says how many rows could not be
/// matched).
pub fn max_product_matching(a: &CsrMatrix<f64>) -> Result<Scaling> {
    let colmax = column_maxima(a, "ilu")?;
    let n = a.n_rows();
    // Column-wise costs c_ij = log colmax_j - log |a_ij| of the nonzero entries (CSC).
    let at = a.transpose();
    let (cp, ri, av) = (at.row_ptr(), at.col_idx(), at.values());
    let cost: Vec<f64> = (0..n)
        .flat_map(|j| {
            let lc = colmax[j].ln();
            av[cp[j]..cp[j + 1]].iter().map(move |x| {
                if *x == 0.0 {
                    f64::INFINITY
                } else {
                    lc - x.abs().ln()
                }
            })
        })
        .collect();
    let mut u = try_filled("matching row duals", n, 0.0f64)?;
    let mut v = try_filled("matching column duals", n, 0.0f64)?;
    let mut row_match = try_filled("matching rows", n, usize::MAX)?;
    let mut col_match = try_filled("matching columns", n, usize::MAX)?;
    // Cheap start: a column takes a free row of a zero-cost entry (its column maximum).
    for j in 0..n {
        for p in cp[j]..cp[j + 1] {
            if cost[p] == 0.0 && row_match[ri[p]] == usize::MAX {
                row_match[ri[p]] = j;
                col_match[j] = ri[p];
                break;
            }
        }
    }
    let mut dist = try_filled("matching distances", n, f64::INFINITY)?;
    let mut pred = try_filled("matching predecessors", n, usize::MAX)?;
    let mut done = try_filled("matching finished rows", n, false)?;
    let mut touched: Vec<usize> = Vec::new();
    let mut finished: Vec<usize> = Vec::new();
    let mut heap = BinaryHeap::new();
    let mut unmatched = 0usize;
    for j0 in 0..n {
        if col_match[j0] != usize::MAX {
            continue;
        }
        // Dijkstra from column j0 over the reduced costs; rows are the nodes.
        let relax = |j: usize,
                     base: f64,
                     dist: &mut [f64],
                     pred: &mut [usize],
                     touched: &mut Vec<usize>,
                     heap: &mut BinaryHeap<Tentative>,
                     done: &[bool]| {
            for p in cp[j]..cp[j + 1] {
                let i = ri[p];
                if done[i] || cost[p].is_infinite() {
                    continue;
                }
                let d = base + (cost[p] - u[i] - v[j]).max(0.0);
                if d < dist[i] {
                    if dist[i].is_infinite() {
                        touched.push(i);
                    }
                    dist[i] = d;
                    pred[i] = j;
                    heap.push(Tentative(d, i));
                }
            }
        };
        relax(
            j0,
            0.0,
            &mut dist,
            &mut pred,
            &mut touched,
            &mut heap,
            &done,
        );
        let mut end = None;
        while let Some(Tentative(d, i)) = heap.pop() {
            if done[i] || d > dist[i] {
                continue;
            }
            done[i] = true;
            finished.push(i);
            if row_match[i] == usize::MAX {
                end = Some((i, d));
                break;
            }
            relax(
                row_match[i],
                d,
                &mut dist,
                &mut pred,
                &mut touched,
                &mut heap,
                &done,
            );
        }
        if let Some((i_end, dmin)) = end {
            // Duals: potentials min(d, dmin) - dmin keep every reduced cost >= 0 and make
            // the tree's edges up to the end row tight.
            v[j0] += dmin;
            for &r in &finished {
                if dist[r] < dmin {
                    u[r] += dist[r] - dmin;
                    v[row_match[r]] += dmin - dist[r];
                }
            }
            // Augment along the predecessors back to j0.
            let mut i = i_end;
            loop {
                let j = pred[i];
                let next = col_match[j];
                col_match[j] = i;
                row_match[i] = j;
                if j == j0 {
                    break;
                }
                i = next;
            }
        } else {
            unmatched += 1;
        }
        for &i in &touched {
            dist[i] = f64::INFINITY;
            pred[i] = usize::MAX;
        }
        for &i in &finished {
            done[i] = false;
        }
        touched.clear();
        finished.clear();
        heap.clear();
    }
    if unmatched > 0 {
        let first = col_match.iter().position(|&r| r == usize::MAX).unwrap_or(0);
        return Err(Error::SingularPivot {
            preconditioner: "ilu".into(),
            block_row: first,
            detail: format!(
                "structurally singular matrix: {unmatched} of {n} rows cannot be matched to a \
                 column with a nonzero entry (maximum matching of size {}); the first \
                 unmatched column is {first}",
                n - unmatched
            ),
        });
    }
    // Dr = exp(u), Dc = exp(v) / colmax; the matched entries' reduced costs are 0, so
    // |Dr_i a_ij Dc_j| = exp(u_i + v_j - c_ij) = 1 on them.
    Ok(Scaling {
        row_of_col: col_match,
        row_scale: u.iter().map(|x| x.exp()).collect(),
        col_scale: v.iter().zip(&colmax).map(|(x, m)| x.exp() / m).collect(),
    })
}

/// Rows whose diagonal is zero, missing or weak: |a_ii| < `ratio` max_j |a_ij|; returns their
/// count and the smallest |a_ii| / max_j |a_ij| over the rows (0 for a missing diagonal).
pub fn weak_diagonal(a: &CsrMatrix<f64>, ratio: f64) -> (usize, f64) {
    let mut weak = 0;
    let mut smallest = f64::INFINITY;
    for i in 0..a.n_rows() {
        let (c, v) = a.row(i);
        let max = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let d = c.iter().position(|&j| j == i).map_or(0.0, |p| v[p].abs());
        let r = if max > 0.0 { d / max } else { 0.0 };
        smallest = smallest.min(r);
        if r < ratio {
            weak += 1;
        }
    }
    (weak, if a.n_rows() == 0 { 1.0 } else { smallest })
}
