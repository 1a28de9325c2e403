//! Blocked Gauss-Jordan elimination with partial pivoting: the coarsest level's dense inverse
//! ([`super::coarse::dense_inverse`]).
//!
//! [A | I] is reduced a panel of [`PANEL`] columns at a time. With K the panel's pivot rows
//! (chosen by an LU factorization with partial pivoting of the panel's columns, rows at or
//! below the panel) and A_KK, A_RK the panel's columns of those rows and of every other row
//! before the panel is applied, the panel's steps of scalar Gauss-Jordan are together
//!   X_K <- A_KK^-1 X_K (the pivot rows), X_R <- X_R - A_RK (A_KK^-1 X_K) (every other row)
//! on the columns right of the panel and on the right half. So each panel takes two parallel
//! passes (the triangular solves by column blocks, the rank-`PANEL` update by rows) where the
//! scalar elimination took one per column: on coarsest levels of a few hundred rows the
//! scheduling of n parallel steps cost more than their arithmetic.
//!
//! The right half's columns are kept in pivot order (column k is I's column of the row that
//! became pivot k): before a panel it is zero outside the columns of earlier panels, so a row's
//! update covers n entries in all (n^3 multiply-adds for the inverse, not 2 n^3).

use rayon::prelude::*;

/// Columns per panel.
const PANEL: usize = 16;

/// Columns of the panel's right-hand sides per task of the triangular solves.
const SOLVE_BLOCK: usize = 64;

/// Entries of a row's update one task covers (a few rows per task on small matrices).
const UPDATE_TASK_ENTRIES: usize = 8192;

/// Why the elimination stopped: pivot `column` of value `pivot`, not above the tolerance times
/// `scale` (its original row's largest |entry|), or not finite.
#[derive(Debug)]
pub(super) struct SingularPivot {
    pub(super) column: usize,
    pub(super) pivot: f64,
    pub(super) scale: f64,
}

/// Inverts the n x n row-major matrix `lhs` (destroyed) into `inv` (n x n row-major, zero on
/// entry) by blocked Gauss-Jordan elimination with partial pivoting. `scale[r]` is the largest
/// |entry| of row r of `lhs`; a pivot not above `tol * scale` of its row is singular.
pub(super) fn invert(
    n: usize,
    lhs: &mut [f64],
    inv: &mut [f64],
    mut scale: Vec<f64>,
    tol: f64,
) -> Result<(), SingularPivot> {
    // `orig[r]`: the row of A that row r started as.
    let mut orig: Vec<usize> = (0..n).collect();
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + PANEL).min(n);
        let lu = factor_panel(n, k0, k1, lhs, inv, &mut scale, &mut orig, tol)?;
        // The pivot rows' columns of I join the right half (in pivot order).
        for k in k0..k1 {
            inv[k * n + k] = 1.0;
        }
        let y_lhs = solve_pivot_rows(n, k0, k1, lhs, k1..n, &lu);
        let y_inv = solve_pivot_rows(n, k0, k1, inv, 0..k1, &lu);
        update_rows(n, k0, k1, lhs, inv, &y_lhs, &y_inv);
        k0 = k1;
    }
    // Column c of the right half is I's column orig[c]: A^-1 in A's column order.
    inv.par_chunks_mut(n.max(1)).for_each(|row| {
        let pivot_order = row.to_vec();
        for (c, &v) in pivot_order.iter().enumerate() {
            row[orig[c]] = v;
        }
    });
    Ok(())
}

/// The LU factors of A_KK (b x b row-major: unit lower L below the diagonal, U on and above).
struct PanelLu {
    b: usize,
    factors: Vec<f64>,
}

/// Chooses the pivots of columns k0..k1 (partial pivoting, by an LU factorization of a copy of
/// those columns of rows k0..n) and swaps the rows of `lhs` and `inv` (and `scale`, `orig`)
/// into place: rows k0..k1 become the panel's pivot rows. `lhs`'s panel columns stay as they
/// were (A_KK, A_RK); the factors of A_KK are returned.
#[allow(clippy::too_many_arguments)]
fn factor_panel(
    n: usize,
    k0: usize,
    k1: usize,
    lhs: &mut [f64],
    inv: &mut [f64],
    scale: &mut [f64],
    orig: &mut [usize],
    tol: f64,
) -> Result<PanelLu, SingularPivot> {
    let b = k1 - k0;
    let mut panel: Vec<f64> = (k0..n)
        .flat_map(|r| lhs[r * n + k0..r * n + k1].iter().copied())
        .collect();
    for k in k0..k1 {
        let c = k - k0;
        // Partial pivoting: the largest |entry| of column k at or below row k.
        let mut p = k;
        for r in k + 1..n {
            if panel[(r - k0) * b + c].abs() > panel[(p - k0) * b + c].abs() {
                p = r;
            }
        }
        let pivot = panel[(p - k0) * b + c];
        // (NaN fails the finiteness test.)
        if !pivot.is_finite() || pivot.abs() <= tol * scale[p] {
            return Err(SingularPivot {
                column: k,
                pivot,
                scale: scale[p],
            });
        }
        if p != k {
            for j in 0..b {
                panel.swap((p - k0) * b + j, (k - k0) * b + j);
            }
            // Rows at or below k0 are zero left of k0 in `lhs` and right of k0 in `inv`.
            for j in k0..n {
                lhs.swap(p * n + j, k * n + j);
            }
            for j in 0..k0 {
                inv.swap(p * n + j, k * n + j);
            }
            scale.swap(p, k);
            orig.swap(p, k);
        }
        let (above, below) = panel.split_at_mut((k - k0 + 1) * b);
        let pivot_row = &above[(k - k0) * b..];
        for row in below.chunks_mut(b) {
            let l = row[c] / pivot;
            row[c] = l;
            for (x, &u) in row[c + 1..].iter_mut().zip(&pivot_row[c + 1..]) {
                *x -= l * u;
            }
        }
    }
    panel.truncate(b * b);
    Ok(PanelLu { b, factors: panel })
}

/// Y = A_KK^-1 X_K for the columns `cols` of `m` (`lhs` or `inv`), X_K its pivot rows k0..k1:
/// returned as blocks of up to [`SOLVE_BLOCK`] columns, each b x width row-major, solved in
/// parallel (forward with L, backward with U).
fn solve_pivot_rows(
    n: usize,
    k0: usize,
    k1: usize,
    m: &[f64],
    cols: std::ops::Range<usize>,
    lu: &PanelLu,
) -> Vec<Vec<f64>> {
    let b = lu.b;
    let starts: Vec<usize> = cols.clone().step_by(SOLVE_BLOCK).collect();
    starts
        .into_par_iter()
        .map(|c0| {
            let c1 = (c0 + SOLVE_BLOCK).min(cols.end);
            let w = c1 - c0;
            let mut y: Vec<f64> = (k0..k1)
                .flat_map(|r| m[r * n + c0..r * n + c1].iter().copied())
                .collect();
            // L y = x (unit lower).
            for i in 1..b {
                let (done, rest) = y.split_at_mut(i * w);
                let yi = &mut rest[..w];
                for j in 0..i {
                    let l = lu.factors[i * b + j];
                    if l != 0.0 {
                        for (x, &v) in yi.iter_mut().zip(&done[j * w..(j + 1) * w]) {
                            *x -= l * v;
                        }
                    }
                }
            }
            // U y = y.
            for i in (0..b).rev() {
                let (head, tail) = y.split_at_mut((i + 1) * w);
                let yi = &mut head[i * w..];
                for j in i + 1..b {
                    let u = lu.factors[i * b + j];
                    if u != 0.0 {
                        for (x, &v) in yi.iter_mut().zip(&tail[(j - i - 1) * w..(j - i) * w]) {
                            *x -= u * v;
                        }
                    }
                }
                let d = 1.0 / lu.factors[i * b + i];
                for x in yi.iter_mut() {
                    *x *= d;
                }
            }
            y
        })
        .collect()
}

/// The panel applied to every row: the pivot rows take Y (and the identity in the panel's
/// columns), every other row r subtracts A_rK Y from its columns right of the panel and from
/// the right half, its panel columns zeroed.
fn update_rows(
    n: usize,
    k0: usize,
    k1: usize,
    lhs: &mut [f64],
    inv: &mut [f64],
    y_lhs: &[Vec<f64>],
    y_inv: &[Vec<f64>],
) {
    let b = k1 - k0;
    let rows_per_task = (UPDATE_TASK_ENTRIES / n.max(1)).max(1);
    // Writes Y's row i into `out` (the columns the blocks cover, from the first).
    let copy_row = |i: usize, blocks: &[Vec<f64>], out: &mut [f64]| {
        let mut at = 0;
        for block in blocks {
            let w = block.len() / b;
            out[at..at + w].copy_from_slice(&block[i * w..(i + 1) * w]);
            at += w;
        }
    };
    // out -= a Y, four of Y's rows at a time (each entry's sum in a fixed order).
    let subtract = |a: &[f64], blocks: &[Vec<f64>], out: &mut [f64]| {
        let mut at = 0;
        for block in blocks {
            let w = block.len() / b;
            let o = &mut out[at..at + w];
            let mut i = 0;
            while i + 4 <= b {
                let (a0, a1, a2, a3) = (a[i], a[i + 1], a[i + 2], a[i + 3]);
                if a0 != 0.0 || a1 != 0.0 || a2 != 0.0 || a3 != 0.0 {
                    let r0 = &block[i * w..(i + 1) * w];
                    let r1 = &block[(i + 1) * w..(i + 2) * w];
                    let r2 = &block[(i + 2) * w..(i + 3) * w];
                    let r3 = &block[(i + 3) * w..(i + 4) * w];
                    for ((((x, &v0), &v1), &v2), &v3) in
                        o.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3)
                    {
                        *x -= a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3;
                    }
                }
                i += 4;
            }
            for (j, &aj) in a.iter().enumerate().skip(i) {
                if aj != 0.0 {
                    for (x, &v) in o.iter_mut().zip(&block[j * w..(j + 1) * w]) {
                        *x -= aj * v;
                    }
                }
            }
            at += w;
        }
    };
    lhs.par_chunks_mut(n.max(1) * rows_per_task)
        .zip(inv.par_chunks_mut(n.max(1) * rows_per_task))
        .enumerate()
        .for_each(|(t, (lrows, irows))| {
            let mut a = vec![0.0; b];
            for (i, (lrow, irow)) in lrows
                .chunks_mut(n.max(1))
                .zip(irows.chunks_mut(n.max(1)))
                .enumerate()
            {
                let r = t * rows_per_task + i;
                if (k0..k1).contains(&r) {
                    let p = r - k0;
                    for (j, x) in lrow[k0..k1].iter_mut().enumerate() {
                        *x = if j == p { 1.0 } else { 0.0 };
                    }
                    copy_row(p, y_lhs, &mut lrow[k1..]);
                    copy_row(p, y_inv, &mut irow[..k1]);
                } else {
                    a.copy_from_slice(&lrow[k0..k1]);
                    if a.iter().all(|&x| x == 0.0) {
                        continue;
                    }
                    lrow[k0..k1].fill(0.0);
                    subtract(&a, y_lhs, &mut lrow[k1..]);
                    subtract(&a, y_inv, &mut irow[..k1]);
                }
            }
        });
}
