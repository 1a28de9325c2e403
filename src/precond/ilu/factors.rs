//! What the incomplete factorizations share: the factors as they are built row by row (in the
//! layout of [`BiluFactors`] with block size 1, which the existing triangular solves take),
//! the pivot rule (a tiny pivot is an error or, when asked, shifted and counted) and the
//! factors' statistics.

use crate::error::{Error, Result};
use crate::precond::BiluFactors;

/// A pivot |u_ii| below this times the largest |m_ij| of row i of the factored matrix M is
/// tiny: an error, or shifted when the user asks for it.
pub const PIVOT_TINY: f64 = 1e-12;

/// A tiny pivot is replaced, when shifting is asked for, by sign(u_ii) PIVOT_SHIFT max_j |m_ij|
/// (row i of the factored matrix; sign + for a zero pivot). On nnc1374 (50 zero pivots after
/// the matching and AMD) 1e-2 let GMRES(30) converge where 1e-4 and 1e-8 made the factors'
/// entries grow past 1e10 and the preconditioner useless.
pub const PIVOT_SHIFT: f64 = 1e-2;

/// The incomplete factors M ~ L U of a square matrix M and what the factorization met.
#[derive(Debug, Clone, PartialEq)]
pub struct IncompleteLu {
    /// L (unit lower, strict part) and U (strict upper part, inverted diagonal), block size 1.
    pub factors: BiluFactors<f64>,
    /// Pivots replaced by a shifted value (0 unless shifting was asked for).
    pub shifted_pivots: usize,
    /// The smallest |u_ii| / max_j |m_ij| over the rows (before any shift).
    pub smallest_pivot: f64,
    /// The largest |l_ij| or |u_ij| over the largest |m_ij|: the growth of the entries.
    pub growth: f64,
    /// The column permutation Q of a factorization that pivoted on columns (ILUTP): L U
    /// approximates M Q, whose column j is column `column_order[j]` of M. `None`: Q = I.
    pub column_order: Option<Vec<usize>>,
}

impl IncompleteLu {
    /// Nonzeros of L + U, the diagonal counted once.
    pub fn nnz(&self) -> usize {
        self.factors.l_col_idx.len() + self.factors.u_col_idx.len() + self.factors.n_block_rows
    }

    /// ||(L U)^-1 1||_inf: a cheap lower bound of ||(L U)^-1||_inf, the factors' stability
    /// estimate (a huge value means the triangular solves amplify rounding and the
    /// preconditioner is useless, see Chow and Saad, "Experimental study of ILU
    /// preconditioners for indefinite matrices", 1997).
    pub fn inverse_estimate(&self) -> f64 {
        let f = &self.factors;
        let n = f.n_block_rows;
        let mut y = vec![1.0f64; n];
        for i in 0..n {
            let (a, b) = (f.l_row_ptr[i] as usize, f.l_row_ptr[i + 1] as usize);
            let s: f64 = (a..b)
                .map(|p| f.l_values[p] * y[f.l_col_idx[p] as usize])
                .sum();
            y[i] -= s;
        }
        for i in (0..n).rev() {
            let (a, b) = (f.u_row_ptr[i] as usize, f.u_row_ptr[i + 1] as usize);
            let s: f64 = (a..b)
                .map(|p| f.u_values[p] * y[f.u_col_idx[p] as usize])
                .sum();
            y[i] = (y[i] - s) * f.u_inv_diag[i];
        }
        y.iter().fold(0.0f64, |m, v| {
            if v.is_finite() {
                m.max(v.abs())
            } else {
                f64::INFINITY
            }
        })
    }
}

/// How a tiny pivot is treated.
#[derive(Debug, Clone, Copy)]
pub(super) struct PivotRule {
    /// Replace it by a shifted value (else an error).
    pub(super) shift: bool,
    /// The factorization's name for the error ("ilu0", "ilut", ...).
    pub(super) name: &'static str,
}

/// The factors built one row at a time: row i's strict lower part, its pivot, its strict
/// upper part (columns ascending), readable while later rows are factored.
#[derive(Debug, Default)]
pub(super) struct RowFactors {
    l_ptr: Vec<usize>,
    l_col: Vec<usize>,
    l_val: Vec<f64>,
    u_ptr: Vec<usize>,
    pub(super) u_col: Vec<usize>,
    pub(super) u_val: Vec<f64>,
    pub(super) diag: Vec<f64>,
    shifted: usize,
    smallest: f64,
    largest_entry: f64,
    largest_input: f64,
}

impl RowFactors {
    /// Room for `n` rows and about `nnz` entries.
    pub(super) fn new(n: usize, nnz: usize) -> Self {
        let mut f = Self {
            l_ptr: Vec::with_capacity(n + 1),
            l_col: Vec::with_capacity(nnz),
            l_val: Vec::with_capacity(nnz),
            u_ptr: Vec::with_capacity(n + 1),
            u_col: Vec::with_capacity(nnz),
            u_val: Vec::with_capacity(nnz),
            diag: Vec::with_capacity(n),
            smallest: f64::INFINITY,
            ..Self::default()
        };
        f.l_ptr.push(0);
        f.u_ptr.push(0);
        f
    }

    /// The strict upper part of a finished row k: positions into `u_col` / `u_val`.
    pub(super) fn upper(&self, k: usize) -> std::ops::Range<usize> {
        self.u_ptr[k]..self.u_ptr[k + 1]
    }

    /// Append row i: its strict lower and strict upper entries (each sorted by column), its
    /// pivot, and the largest |m_ij| of the factored matrix's row i (the pivot's scale). A
    /// tiny or non-finite pivot is shifted or an error by `rule`.
    pub(super) fn push_row(
        &mut self,
        lower: &[(usize, f64)],
        pivot: f64,
        upper: &[(usize, f64)],
        row_max: f64,
        rule: PivotRule,
    ) -> Result<()> {
        let i = self.diag.len();
        let ratio = if row_max > 0.0 {
            pivot.abs() / row_max
        } else {
            0.0
        };
        let ratio = if ratio.is_finite() { ratio } else { 0.0 };
        self.smallest = self.smallest.min(ratio);
        let pivot = if ratio <= PIVOT_TINY || !pivot.is_finite() {
            if !rule.shift || !row_max.is_finite() || row_max == 0.0 {
                return Err(Error::SingularPivot {
                    preconditioner: rule.name.into(),
                    block_row: i,
                    detail: format!(
                        "pivot {pivot:e} against {row_max:e} in its row of the permuted, \
                         scaled matrix (tiny below {PIVOT_TINY:e}; --ilu-shift replaces it)"
                    ),
                });
            }
            self.shifted += 1;
            let sign = if pivot < 0.0 { -1.0 } else { 1.0 };
            sign * PIVOT_SHIFT * row_max
        } else {
            pivot
        };
        for &(c, v) in lower {
            self.largest_entry = self.largest_entry.max(v.abs());
            self.l_col.push(c);
            self.l_val.push(v);
        }
        for &(c, v) in upper {
            self.largest_entry = self.largest_entry.max(v.abs());
            self.u_col.push(c);
            self.u_val.push(v);
        }
        self.largest_entry = self.largest_entry.max(pivot.abs());
        self.largest_input = self.largest_input.max(row_max);
        self.l_ptr.push(self.l_col.len());
        self.u_ptr.push(self.u_col.len());
        self.diag.push(pivot);
        Ok(())
    }

    /// The finished factors (indices checked to fit `u32`).
    pub(super) fn finish(self) -> Result<IncompleteLu> {
        let n = self.diag.len();
        let idx = |v: &[usize], what: &str| -> Result<Vec<u32>> {
            v.iter()
                .map(|&x| {
                    u32::try_from(x).map_err(|_| Error::IndexOverflow {
                        what: format!("ILU {what}"),
                        value: x,
                        max: u32::MAX as usize,
                    })
                })
                .collect()
        };
        let growth = if self.largest_input > 0.0 {
            self.largest_entry / self.largest_input
        } else {
            1.0
        };
        Ok(IncompleteLu {
            factors: BiluFactors {
                block_size: 1,
                n_block_rows: n,
                l_row_ptr: idx(&self.l_ptr, "L row pointers")?,
                l_col_idx: idx(&self.l_col, "L columns")?,
                l_values: self.l_val,
                u_row_ptr: idx(&self.u_ptr, "U row pointers")?,
                u_col_idx: idx(&self.u_col, "U columns")?,
                u_values: self.u_val,
                u_inv_diag: self.diag.iter().map(|d| 1.0 / d).collect(),
            },
            shifted_pivots: self.shifted,
            smallest_pivot: if n == 0 { 1.0 } else { self.smallest },
            growth,
            column_order: None,
        })
    }
}

/// A dense work row with the list of its nonzero positions (Saad's sparse accumulator).
#[derive(Debug)]
pub(super) struct WorkRow {
    value: Vec<f64>,
    present: Vec<bool>,
    /// Positions set in this row, in insertion order.
    pub(super) cols: Vec<usize>,
}

impl WorkRow {
    /// A work row of `n` positions, all absent.
    pub(super) fn new(n: usize) -> Self {
        Self {
            value: vec![0.0; n],
            present: vec![false; n],
            cols: Vec::new(),
        }
    }

    /// Whether position j is in the row's pattern.
    pub(super) fn has(&self, j: usize) -> bool {
        self.present[j]
    }

    /// The value at j (0 when absent).
    pub(super) fn get(&self, j: usize) -> f64 {
        self.value[j]
    }

    /// Set position j (added to the pattern if absent); returns whether it was absent.
    pub(super) fn set(&mut self, j: usize, v: f64) -> bool {
        self.value[j] = v;
        if self.present[j] {
            false
        } else {
            self.present[j] = true;
            self.cols.push(j);
            true
        }
    }

    /// Empty the row (only the positions set are touched).
    pub(super) fn clear(&mut self) {
        for &j in &self.cols {
            self.present[j] = false;
            self.value[j] = 0.0;
        }
        self.cols.clear();
    }
}
