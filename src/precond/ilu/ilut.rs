//! ILUT(p, tau): Saad's dual-threshold incomplete LU (Y. Saad, "ILUT: a dual threshold
//! incomplete LU factorization", Numer. Linear Algebra Appl. 1(4), 1994; "Iterative Methods
//! for Sparse Linear Systems", 2nd ed., Algorithm 10.6), row-wise IKJ with a sparse work row.
//!
//! Row i: w = m_i*; for k < i in w, ascending: w_k /= u_kk, dropped when |w_k| < tau_i
//! (tau_i = tau ||m_i*||_2), else w_j -= w_k u_kj for the stored u_kj (fill created where
//! needed). Then the entries below tau_i are dropped and the `lfil_i` largest of the lower part
//! (into L) and of the upper part (into U) are kept; the diagonal always stays.
//!
//! With a pivot threshold t > 0 it is ILUTP (Saad, Algorithm 10.7 and SPARSKIT's `ilutp`):
//! when the kept |w_j| of some j > i exceeds |w_i| / t, the largest of them becomes the pivot
//! and columns i and j trade places for the rows after i. The factors are then those of M Q
//! for the column permutation Q the pivots made ([`IncompleteLu::column_order`]).

use super::factors::{IncompleteLu, PivotRule, RowFactors, WorkRow};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Default drop tolerance tau of ILUT (SciPy's `spilu` default `drop_tol`).
pub const DEFAULT_DROP_TOL: f64 = 1e-4;

/// Default fill factor of ILUT (SciPy's `spilu` default `fill_factor`): nnz(L + U) stays
/// below about this times nnz(A).
pub const DEFAULT_FILL_FACTOR: f64 = 10.0;

/// Parameters of [`ilut`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IlutParams {
    /// Drop tolerance tau >= 0, relative to each row's 2-norm.
    pub drop_tol: f64,
    /// Fill factor p > 0: row i of L and of U keeps at most [`IlutParams::row_fill`]
    /// entries besides the diagonal (p/2 times the longer of row i of A and the average
    /// row, or half the budget the earlier rows left unused).
    pub fill_factor: f64,
    /// Replace tiny pivots by a shifted value (counted) instead of failing.
    pub shift: bool,
    /// Column pivoting (ILUTP): row i takes as pivot its largest kept entry w_j (j > i)
    /// instead of w_i when |w_i| < `pivot_threshold` |w_j|. 0 (the default) never pivots;
    /// in [0, 1].
    pub pivot_threshold: f64,
}

impl Default for IlutParams {
    fn default() -> Self {
        Self {
            drop_tol: DEFAULT_DROP_TOL,
            fill_factor: DEFAULT_FILL_FACTOR,
            shift: false,
            pivot_threshold: 0.0,
        }
    }
}

impl IlutParams {
    /// Entries kept in row i of L and of U (besides the diagonal) for a matrix of `n` rows
    /// and `nnz` entries: ceil(p max(row_nnz, nnz / n) / 2), where row i of A holds
    /// `row_nnz`, or half the unused budget if larger: `budget` = p times the entries of A's
    /// rows 0..=i less the strict entries kept in the factors' rows 0..i (SciPy's fill factor
    /// bounds nnz(L + U) / nnz(A) globally; the carried budget lets the long rows that a
    /// fill-reducing ordering puts last keep their fill).
    pub fn row_fill(&self, n: usize, nnz: usize, row_nnz: usize, budget: f64) -> usize {
        if n == 0 {
            return 0;
        }
        let base = (row_nnz as f64).max(nnz as f64 / n as f64);
        let lfil = (self.fill_factor * base / 2.0)
            .ceil()
            .max((budget / 2.0).floor());
        if lfil.is_finite() && lfil >= 1.0 {
            (lfil as usize).min(n)
        } else {
            1
        }
    }

    fn check(&self) -> Result<()> {
        if !(self.drop_tol >= 0.0 && self.drop_tol.is_finite()) {
            return Err(Error::param(
                "ilu-drop",
                format!(
                    "drop tolerance {} is not a finite number >= 0",
                    self.drop_tol
                ),
            ));
        }
        if !(self.fill_factor > 0.0 && self.fill_factor.is_finite()) {
            return Err(Error::param(
                "ilu-max-fill",
                format!(
                    "fill factor {} is not a finite number > 0",
                    self.fill_factor
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.pivot_threshold) {
            return Err(Error::param(
                "ilu-pivot",
                format!(
                    "pivot threshold {} is not a number in [0, 1]",
                    self.pivot_threshold
                ),
            ));
        }
        Ok(())
    }
}

/// The `keep` largest entries in magnitude (ties to the smaller column), sorted by column.
pub(super) fn largest(mut entries: Vec<(usize, f64)>, keep: usize) -> Vec<(usize, f64)> {
    if entries.len() > keep {
        entries.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
        entries.truncate(keep);
    }
    entries.sort_unstable_by_key(|e| e.0);
    entries
}

/// ILUT(p, tau) of the square matrix `m` (finite values; the diagonal need not be stored: a
/// missing one is a zero pivot), ILUTP with `params.pivot_threshold` > 0. A tiny pivot (see
/// [`super::factors::PIVOT_TINY`]) is [`Error::SingularPivot`] naming the row, or shifted when
/// `params.shift`.
pub fn ilut(m: &CsrMatrix<f64>, params: IlutParams) -> Result<IncompleteLu> {
    params.check()?;
    let n = m.n_rows();
    if m.n_cols() != n {
        return Err(Error::dims("ILUT: square matrix (columns)", n, m.n_cols()));
    }
    let rule = PivotRule {
        shift: params.shift,
        name: if params.pivot_threshold > 0.0 {
            "ilutp"
        } else {
            "ilut"
        },
    };
    let mut f = RowFactors::new(n, m.nnz().saturating_mul(4));
    let mut w = WorkRow::new(n);
    let mut heap: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    let mut lower: Vec<(usize, f64)> = Vec::new();
    // Column pivoting: position j of the work row holds column column_of[j] of m, and
    // position_of is its inverse. Positions below i are final; U's entries are stored by
    // column of m while rows are factored and renumbered by position at the end (when a row
    // pivoted: else positions and columns agree).
    let mut column_of: Vec<usize> = (0..n).collect();
    let mut position_of: Vec<usize> = (0..n).collect();
    let mut pivoted = false;
    // Entries of A's rows so far, strict entries kept in the factors so far.
    let (mut seen, mut kept) = (0usize, 0usize);
    for i in 0..n {
        let (cols, vals) = m.row(i);
        seen += cols.len();
        let budget = params.fill_factor * seen as f64 - kept as f64;
        let lfil = params.row_fill(n, m.nnz(), cols.len(), budget);
        let norm = vals.iter().map(|v| v * v).sum::<f64>().sqrt();
        let row_max = vals.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let tau = params.drop_tol * norm;
        for (&c, &v) in cols.iter().zip(vals) {
            let j = position_of[c];
            w.set(j, v);
            if j < i {
                heap.push(Reverse(j));
            }
        }
        w.set(i, w.get(i));
        lower.clear();
        while let Some(Reverse(k)) = heap.pop() {
            let wk = w.get(k) / f.diag[k];
            if wk.abs() < tau || wk == 0.0 {
                w.set(k, 0.0);
                continue;
            }
            w.set(k, wk);
            lower.push((k, wk));
            for p in f.upper(k) {
                let j = position_of[f.u_col[p]];
                if w.set(j, w.get(j) - wk * f.u_val[p]) && j < i {
                    heap.push(Reverse(j));
                }
            }
        }
        let mut upper: Vec<(usize, f64)> = w
            .cols
            .iter()
            .filter(|&&j| j > i)
            .map(|&j| (j, w.get(j)))
            .filter(|&(_, v)| v.abs() >= tau && v != 0.0)
            .collect();
        let mut pivot = w.get(i);
        if params.pivot_threshold > 0.0 {
            // The largest kept entry right of the diagonal (ties to the smaller position).
            let best = upper.iter().enumerate().max_by(|a, b| {
                a.1 .1
                    .abs()
                    .total_cmp(&b.1 .1.abs())
                    .then(b.1 .0.cmp(&a.1 .0))
            });
            if let Some((at, &(j, v))) = best {
                if pivot.abs() < params.pivot_threshold * v.abs() {
                    // Columns i and j trade places: w_j is the pivot, w_i joins U at j.
                    upper[at].1 = pivot;
                    if pivot == 0.0 || pivot.abs() < tau {
                        upper.remove(at);
                    }
                    pivot = v;
                    let (ci, cj) = (column_of[i], column_of[j]);
                    column_of.swap(i, j);
                    position_of[ci] = j;
                    position_of[cj] = i;
                    pivoted = true;
                }
            }
        }
        let l = largest(std::mem::take(&mut lower), lfil);
        let mut u = largest(upper, lfil);
        // Stored by column of m (positions right of i may still move).
        for e in &mut u {
            e.0 = column_of[e.0];
        }
        f.push_row(&l, pivot, &u, row_max, rule)?;
        kept += l.len() + u.len();
        lower = l;
        w.clear();
    }
    let mut lu = f.finish()?;
    if pivoted {
        renumber_upper(&mut lu, &position_of);
        lu.column_order = Some(column_of);
    }
    Ok(lu)
}

/// U's columns, stored as columns of the factored matrix, renumbered by their final positions
/// and sorted in every row.
fn renumber_upper(lu: &mut IncompleteLu, position_of: &[usize]) {
    let f = &mut lu.factors;
    let mut row: Vec<(u32, f64)> = Vec::new();
    for i in 0..f.n_block_rows {
        let (a, b) = (f.u_row_ptr[i] as usize, f.u_row_ptr[i + 1] as usize);
        row.clear();
        row.extend(
            f.u_col_idx[a..b]
                .iter()
                .zip(&f.u_values[a..b])
                .map(|(&c, &v)| (position_of[c as usize] as u32, v)),
        );
        row.sort_unstable_by_key(|e| e.0);
        for (p, &(c, v)) in (a..b).zip(&row) {
            f.u_col_idx[p] = c;
            f.u_values[p] = v;
        }
    }
}
