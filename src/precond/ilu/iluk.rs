//! ILU(k): incomplete LU with the fill of level at most k (Saad, "Iterative Methods for Sparse
//! Linear Systems", 2nd ed., Section 10.3.3, Algorithm 10.5), a symbolic phase (the pattern:
//! lev(i, j) = 0 on A's entries, lev(i, j) = min(lev(i, j), lev(i, k) + lev(k, j) + 1) for the
//! eliminated k, kept when <= k) and a numeric phase (the IKJ loop restricted to that
//! pattern). ILU(0) is k = 0: A's pattern, plus the diagonal where it is not stored.

use super::factors::{IncompleteLu, PivotRule, RowFactors, WorkRow};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The pattern of the ILU(k) factors: row i's columns (ascending, the diagonal included) are
/// `cols[row_ptr[i]..row_ptr[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IlukPattern {
    /// Row pointers (n + 1).
    pub row_ptr: Vec<usize>,
    /// Columns, ascending within each row.
    pub cols: Vec<usize>,
    /// The level of fill of each entry (0 on A's pattern and the diagonal).
    pub levels: Vec<usize>,
}

/// The symbolic phase of ILU(`k`) on the pattern of the square matrix `m` (stored zeros are
/// part of the pattern).
pub fn iluk_pattern(m: &CsrMatrix<f64>, k: usize) -> Result<IlukPattern> {
    let n = m.n_rows();
    if m.n_cols() != n {
        return Err(Error::dims(
            "ILU(k): square matrix (columns)",
            n,
            m.n_cols(),
        ));
    }
    let mut p = IlukPattern {
        row_ptr: Vec::with_capacity(n + 1),
        cols: Vec::with_capacity(m.nnz() + n),
        levels: Vec::with_capacity(m.nnz() + n),
    };
    p.row_ptr.push(0);
    // Where row i's strict upper part starts in `cols`.
    let mut upper_start = Vec::with_capacity(n);
    let mut lev = vec![usize::MAX; n];
    let mut present: Vec<usize> = Vec::new();
    let mut heap: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    for i in 0..n {
        for &j in m.row(i).0.iter().chain(std::iter::once(&i)) {
            if lev[j] == usize::MAX {
                present.push(j);
                if j < i {
                    heap.push(Reverse(j));
                }
            }
            lev[j] = 0;
        }
        while let Some(Reverse(r)) = heap.pop() {
            let lr = lev[r];
            let end = p.row_ptr[r + 1];
            for q in upper_start[r]..end {
                let j = p.cols[q];
                let new = lr + p.levels[q] + 1;
                if new > k {
                    continue;
                }
                if lev[j] == usize::MAX {
                    present.push(j);
                    if j < i {
                        heap.push(Reverse(j));
                    }
                    lev[j] = new;
                } else {
                    lev[j] = lev[j].min(new);
                }
            }
        }
        present.sort_unstable();
        for &j in &present {
            if j == i {
                upper_start.push(p.cols.len() + 1);
            }
            p.cols.push(j);
            p.levels.push(lev[j]);
            lev[j] = usize::MAX;
        }
        present.clear();
        p.row_ptr.push(p.cols.len());
    }
    Ok(p)
}

/// The numeric phase: the IKJ loop of `m` restricted to `pattern` (from [`iluk_pattern`] of
/// a matrix with `m`'s pattern). A tiny pivot is [`Error::SingularPivot`] naming the row, or
/// shifted (and counted) when `shift`.
pub fn iluk_numeric(
    m: &CsrMatrix<f64>,
    pattern: &IlukPattern,
    shift: bool,
    name: &'static str,
) -> Result<IncompleteLu> {
    let n = m.n_rows();
    if pattern.row_ptr.len() != n + 1 {
        return Err(Error::dims(
            "ILU(k): pattern rows + 1",
            n + 1,
            pattern.row_ptr.len(),
        ));
    }
    let rule = PivotRule { shift, name };
    let mut f = RowFactors::new(n, pattern.cols.len());
    let mut w = WorkRow::new(n);
    let mut lower = Vec::new();
    let mut upper = Vec::new();
    for i in 0..n {
        let row = &pattern.cols[pattern.row_ptr[i]..pattern.row_ptr[i + 1]];
        for &j in row {
            w.set(j, 0.0);
        }
        let (cols, vals) = m.row(i);
        let row_max = vals.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (&j, &v) in cols.iter().zip(vals) {
            if !w.has(j) {
                return Err(Error::InvalidMatrix(format!(
                    "ILU(k): entry ({i}, {j}) is outside the symbolic pattern"
                )));
            }
            w.set(j, v);
        }
        lower.clear();
        upper.clear();
        for &k in row.iter().take_while(|&&k| k < i) {
            let wk = w.get(k) / f.diag[k];
            w.set(k, wk);
            lower.push((k, wk));
            for q in f.upper(k) {
                let j = f.u_col[q];
                if w.has(j) {
                    w.set(j, w.get(j) - wk * f.u_val[q]);
                }
            }
        }
        upper.extend(row.iter().filter(|&&j| j > i).map(|&j| (j, w.get(j))));
        f.push_row(&lower, w.get(i), &upper, row_max, rule)?;
        w.clear();
    }
    f.finish()
}

/// ILU(`k`) of `m`: [`iluk_pattern`] then [`iluk_numeric`].
pub fn iluk(m: &CsrMatrix<f64>, k: usize, shift: bool) -> Result<IncompleteLu> {
    let pattern = iluk_pattern(m, k)?;
    iluk_numeric(m, &pattern, shift, if k == 0 { "ilu0" } else { "iluk" })
}
