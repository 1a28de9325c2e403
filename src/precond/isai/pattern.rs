//! Sparsity patterns of the block-ISAI inverses (\[Ma21b\] Algorithm 1, step 1): the block
//! pattern of (I + |T|)^k for a strict triangular factor T, in block CSR (for the BSpMV) and
//! block CSC (one gathered system per column) with the map between the two.

use crate::error::{Error, Result};
use crate::precond::flat_rows::{build_rows, FlatRows};

/// The pattern of an approximate inverse N ~ (D + T)^-1 in both layouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InverseLayout {
    /// Block-row pointers (block CSR).
    pub row_ptr: Vec<u32>,
    /// Block columns of each block row, ascending.
    pub col_idx: Vec<u32>,
    /// Block-column pointers (block CSC).
    pub col_ptr: Vec<u32>,
    /// Block rows of each block column, ascending.
    pub row_idx: Vec<u32>,
    /// `dest[e]`: the block-CSR position of CSC entry e.
    pub dest: Vec<u32>,
}

impl InverseLayout {
    /// Number of blocks.
    pub fn n_blocks(&self) -> usize {
        self.col_idx.len()
    }
}

/// Pattern of (I + |T|)^k, k >= 1, for the strict triangular block pattern (row_ptr, col_idx)
/// with n = row_ptr.len() - 1 block rows: row i of the power is the union over p in
/// {i} ∪ T(i) of row p of the (k-1)-th power. Includes the diagonal.
pub fn power_pattern(row_ptr: &[u32], col_idx: &[u32], k: usize) -> Result<InverseLayout> {
    let rows = power_rows(row_ptr, col_idx, k, |_, _| true);
    layout_of(&rows, "block-ISAI pattern blocks")
}

/// Rows of the pattern of (I + |T|)^k for any square pattern T (row_ptr, col_idx), sorted,
/// keeping only the entries (i, j) for which `keep(i, j)` holds in the result.
pub(crate) fn power_rows(
    row_ptr: &[u32],
    col_idx: &[u32],
    k: usize,
    keep: impl Fn(usize, usize) -> bool + Sync,
) -> FlatRows {
    let n = row_ptr.len().saturating_sub(1);
    let t_row = |i: usize| &col_idx[row_ptr[i] as usize..row_ptr[i + 1] as usize];
    // Write the sorted, deduplicated `scratch` (filtered by `keep` when `last`) into `out`.
    let emit = |i: usize, last: bool, out: &mut [u32], scratch: &mut Vec<u32>| {
        scratch.sort_unstable();
        scratch.dedup();
        if last {
            scratch.retain(|&j| keep(i, j as usize));
        }
        out[..scratch.len()].copy_from_slice(scratch);
        scratch.len()
    };
    let base = build_rows(
        n,
        |i| t_row(i).len() + 1,
        |i, out, scratch: &mut Vec<u32>| {
            scratch.clear();
            scratch.extend_from_slice(t_row(i));
            scratch.push(i as u32);
            emit(i, k <= 1, out, scratch)
        },
    );
    // Row i of the power is the union of the previous power's rows p in base row i, each
    // column taken once (a task's stamps, one per column of the matrix: the union costs its
    // inputs, and only the distinct columns are sorted); the last step applies `keep` as it
    // forms the rows (no second pass over the result).
    let step = |power: &FlatRows, last: bool| -> FlatRows {
        build_rows(
            n,
            |i| {
                base.row(i)
                    .iter()
                    .map(|&p| power.row(p as usize).len())
                    .sum()
            },
            |i, out, scratch: &mut UnionScratch| {
                let UnionScratch { list, stamp } = scratch;
                if stamp.len() < n {
                    stamp.resize(n, 0);
                }
                // Row i's stamp: i + 1 (<= n < 2^32: the columns are u32).
                let mark = i as u32 + 1;
                list.clear();
                for &p in base.row(i) {
                    for &c in power.row(p as usize) {
                        let seen = &mut stamp[c as usize];
                        if *seen != mark {
                            *seen = mark;
                            list.push(c);
                        }
                    }
                }
                emit(i, last, out, list)
            },
        )
    };
    if k <= 1 {
        return base;
    }
    let mut power = step(&base, k == 2);
    for s in 3..=k {
        power = step(&power, s == k);
    }
    power
}

/// A power step's task scratch: the row's distinct columns and the stamp of every column.
#[derive(Default)]
struct UnionScratch {
    list: Vec<u32>,
    stamp: Vec<u32>,
}

/// Both layouts of the pattern given by its sorted rows.
pub(crate) fn layout_of(rows: &FlatRows, what: &str) -> Result<InverseLayout> {
    let n = rows.n_rows();
    let total = rows.cols.len();
    u32::try_from(total).map_err(|_| Error::IndexOverflow {
        what: what.into(),
        value: total,
        max: u32::MAX as usize,
    })?;
    // Every pointer is at most `total`, which fits.
    let row_ptr_out: Vec<u32> = rows.ptr.iter().map(|&p| p as u32).collect();
    let col_idx_out = rows.cols.clone();
    // The CSC by a counting transpose (rows come out ascending in every column).
    let mut col_ptr = vec![0u32; n + 1];
    for &c in &col_idx_out {
        col_ptr[c as usize + 1] += 1;
    }
    for j in 0..n {
        col_ptr[j + 1] += col_ptr[j];
    }
    let mut next = col_ptr.clone();
    let mut row_idx = vec![0u32; total];
    let mut dest = vec![0u32; total];
    for i in 0..n {
        let (begin, end) = (row_ptr_out[i] as usize, row_ptr_out[i + 1] as usize);
        for (pos, &c) in col_idx_out.iter().enumerate().take(end).skip(begin) {
            let c = c as usize;
            let e = next[c] as usize;
            row_idx[e] = i as u32;
            dest[e] = pos as u32;
            next[c] += 1;
        }
    }
    Ok(InverseLayout {
        row_ptr: row_ptr_out,
        col_idx: col_idx_out,
        col_ptr,
        row_idx,
        dest,
    })
}
