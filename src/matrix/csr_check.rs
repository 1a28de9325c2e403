//! The checks every CSR matrix passes ([`super::CsrMatrix::new`], [`super::CsrView::new`]): array
//! lengths, row pointers from 0 to nnz that never decrease, columns in range and strictly
//! increasing within each row. Written once for both index widths.

use crate::error::{Error, Result};
use rayon::prelude::*;

/// An index type of CSR arrays: `usize` (the owned matrix) or `u32` (a borrowed view).
pub(crate) trait CsrIndex: Copy + Ord + Send + Sync + std::fmt::Display {
    /// The index as a position.
    fn at(self) -> usize;
    /// `v` as an index, or the largest index where it does not fit.
    fn saturating(v: usize) -> Self;
}

impl CsrIndex for usize {
    fn at(self) -> usize {
        self
    }
    fn saturating(v: usize) -> Self {
        v
    }
}

impl CsrIndex for u32 {
    fn at(self) -> usize {
        self as usize
    }
    fn saturating(v: usize) -> Self {
        u32::try_from(v).unwrap_or(u32::MAX)
    }
}

/// Entries from which the arrays are checked in parallel.
pub(crate) const PARALLEL_CHECK_NNZ: usize = 1 << 16;

/// Check the arrays of an `n_rows x n_cols` CSR matrix with `n_values` values: one pass over
/// the rows (in parallel for a large matrix), and, only when it fails, the serial checks that
/// name the first fault as an [`Error::InvalidMatrix`] (or [`Error::DimensionMismatch`] for
/// the lengths).
pub(crate) fn check_csr<I: CsrIndex>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &[I],
    col_idx: &[I],
    n_values: usize,
) -> Result<()> {
    let parallel = col_idx.len() >= PARALLEL_CHECK_NNZ;
    if valid(n_rows, n_cols, row_ptr, col_idx, n_values, parallel) {
        return Ok(());
    }
    check_shape(n_rows, n_cols, row_ptr, col_idx, n_values)?;
    for r in 0..n_rows {
        let cols = &col_idx[row_ptr[r].at()..row_ptr[r + 1].at()];
        if cols.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidMatrix(format!(
                "row {r}: column indices not strictly increasing (use from_unsorted)"
            )));
        }
    }
    Ok(())
}

/// The array lengths of a CSR matrix: n_rows + 1 row pointers, one value per column index.
pub(crate) fn check_lengths(
    n_rows: usize,
    row_ptr: usize,
    col_idx: usize,
    n_values: usize,
) -> Result<()> {
    if row_ptr.checked_sub(1) != Some(n_rows) {
        return Err(Error::dims(
            "row_ptr length (n_rows + 1)",
            n_rows.saturating_add(1),
            row_ptr,
        ));
    }
    if col_idx != n_values {
        return Err(Error::dims(
            "values length vs column indices",
            col_idx,
            n_values,
        ));
    }
    Ok(())
}

/// Whether the arrays pass every check of [`check_csr`], decided in one pass over the rows;
/// which check fails, and where, is the serial checks' to say.
fn valid<I: CsrIndex>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &[I],
    col_idx: &[I],
    n_values: usize,
    parallel: bool,
) -> bool {
    if check_lengths(n_rows, row_ptr.len(), col_idx.len(), n_values).is_err()
        || row_ptr[0].at() != 0
        || row_ptr[n_rows].at() != col_idx.len()
    {
        return false;
    }
    // The row pointers first: the columns' checks below slice by them.
    if !parallel {
        return non_decreasing(row_ptr) && columns_valid(n_cols, row_ptr, col_idx);
    }
    // Blocks of rows (their last pointer is the next block's first).
    const ROWS: usize = 1 << 14;
    let blocks = || (0..n_rows.div_ceil(ROWS)).into_par_iter();
    let pointers = |b: usize| &row_ptr[b * ROWS..((b + 1) * ROWS).min(n_rows) + 1];
    blocks().all(|b| non_decreasing(pointers(b)))
        && blocks().all(|b| columns_valid(n_cols, pointers(b), col_idx))
}

/// Whether `v` never decreases (one branch-free pass).
fn non_decreasing<I: CsrIndex>(v: &[I]) -> bool {
    v.iter().zip(&v[1..]).fold(true, |ok, (a, b)| ok & (a <= b))
}

/// Whether every column of the rows `row_ptr` spans (the pointers of consecutive rows and the
/// end of the last, non-decreasing, within `col_idx`) is in range and strictly increasing
/// within its row. In flat passes rather than row by row (a row of a few entries is mostly
/// loop overhead): the descents (a column not above the one before it) counted over all the
/// entries must all fall on the first entry of a row.
fn columns_valid<I: CsrIndex>(n_cols: usize, row_ptr: &[I], all_cols: &[I]) -> bool {
    let base = row_ptr[0].at();
    let col_idx = &all_cols[base..row_ptr[row_ptr.len() - 1].at()];
    let limit = I::saturating(n_cols);
    let in_range = col_idx.iter().fold(true, |ok, &c| ok & (c < limit));
    // Counted in 32 bits per chunk, which the compiler vectorizes (a usize count halves it).
    let descents: usize = col_idx
        .chunks(1 << 20)
        .zip(col_idx.get(1..).unwrap_or_default().chunks(1 << 20))
        .map(|(a, b)| a.iter().zip(b).map(|(a, b)| u32::from(b <= a)).sum::<u32>() as usize)
        .sum();
    // Each entry after the first starts at most one non-empty row.
    let at_row_starts: usize = row_ptr
        .iter()
        .zip(&row_ptr[1..])
        .map(|(&start, &end)| {
            let k = start.at() - base;
            let starts = k > 0 && k < end.at() - base;
            usize::from(starts && col_idx[k] <= col_idx[k - 1])
        })
        .sum();
    in_range && descents == at_row_starts
}

/// The checks of everything but the order within rows, each naming the first fault.
pub(crate) fn check_shape<I: CsrIndex>(
    n_rows: usize,
    n_cols: usize,
    row_ptr: &[I],
    col_idx: &[I],
    n_values: usize,
) -> Result<()> {
    check_lengths(n_rows, row_ptr.len(), col_idx.len(), n_values)?;
    if row_ptr[0].at() != 0 || row_ptr[n_rows].at() != col_idx.len() {
        return Err(Error::InvalidMatrix(format!(
            "row_ptr must start at 0 and end at nnz = {}, found {} .. {}",
            col_idx.len(),
            row_ptr[0],
            row_ptr[n_rows]
        )));
    }
    if let Some(r) = row_ptr.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::InvalidMatrix(format!(
            "row_ptr decreases at row {r}"
        )));
    }
    if let Some(k) = col_idx.iter().position(|&c| c.at() >= n_cols) {
        return Err(Error::InvalidMatrix(format!(
            "column index {} at position {k} out of range (n_cols = {n_cols})",
            col_idx[k]
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks row by row, as they were written before the flat passes: the reference.
    fn valid_by_rows(n_rows: usize, n_cols: usize, row_ptr: &[u32], col_idx: &[u32]) -> bool {
        row_ptr[0] == 0
            && row_ptr[n_rows] as usize == col_idx.len()
            && row_ptr.windows(2).all(|w| w[0] <= w[1])
            && (0..n_rows).all(|r| {
                let cols = &col_idx[row_ptr[r] as usize..row_ptr[r + 1] as usize];
                cols.iter().all(|&c| (c as usize) < n_cols) && cols.windows(2).all(|w| w[0] < w[1])
            })
    }

    /// A deterministic pseudo-random stream (SplitMix64).
    struct Stream(u64);

    impl Stream {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n.max(1)
        }
    }

    /// Valid CSR arrays with empty rows and rows of up to `width` entries, then one fault of
    /// the kinds the checks look for (or none), placed at random.
    fn arrays(s: &mut Stream, n_rows: usize, n_cols: usize, width: u64) -> (Vec<u32>, Vec<u32>) {
        let (mut row_ptr, mut col_idx) = (vec![0u32], vec![]);
        for _ in 0..n_rows {
            let mut cols: Vec<u32> = (0..s.below(width + 1))
                .map(|_| s.below(n_cols as u64) as u32)
                .collect();
            cols.sort_unstable();
            cols.dedup();
            col_idx.extend(cols);
            row_ptr.push(col_idx.len() as u32);
        }
        let nnz = col_idx.len();
        match s.below(7) {
            0 if nnz > 1 => {
                // Two neighbours swapped or made equal (perhaps across a row's end).
                let k = 1 + s.below(nnz as u64 - 1) as usize;
                match s.below(2) {
                    0 => col_idx.swap(k - 1, k),
                    _ => col_idx[k] = col_idx[k - 1],
                }
            }
            1 if nnz > 0 => {
                let k = s.below(nnz as u64) as usize;
                col_idx[k] = n_cols as u32 + s.below(3) as u32;
            }
            2 if n_rows > 1 => {
                // A row pointer moved (perhaps below its predecessor).
                let r = 1 + s.below(n_rows as u64 - 1) as usize;
                row_ptr[r] = s.below(nnz as u64 + 1) as u32;
            }
            3 if nnz > 1 => {
                // A row's first column below the last of the row before (valid) or a row's
                // last above the next row's first, moved into it: a descent inside a row.
                let r = 1 + s.below(n_rows as u64 - 1) as usize;
                let k = row_ptr[r] as usize;
                if k > 0 && k < nnz {
                    col_idx[k] = col_idx[k - 1].saturating_sub(s.below(2) as u32);
                }
            }
            _ => {}
        }
        (row_ptr, col_idx)
    }

    #[test]
    fn flat_checks_agree_with_the_checks_row_by_row() {
        let mut s = Stream(7);
        let (mut valid_seen, mut invalid_seen) = (0, 0);
        for case in 0..4000 {
            let n_rows = s.below(40) as usize;
            let n_cols = s.below(12) as usize;
            let width = 1 + s.below(6);
            let (row_ptr, col_idx) = arrays(&mut s, n_rows, n_cols, width);
            let expected = valid_by_rows(n_rows, n_cols, &row_ptr, &col_idx);
            for parallel in [false, true] {
                let got = valid(n_rows, n_cols, &row_ptr, &col_idx, col_idx.len(), parallel);
                assert_eq!(
                    got, expected,
                    "case {case}: {row_ptr:?} {col_idx:?} ({n_cols} columns)"
                );
            }
            let check = check_csr(n_rows, n_cols, &row_ptr, &col_idx, col_idx.len());
            assert_eq!(check.is_ok(), expected, "case {case}");
            if expected {
                valid_seen += 1;
            } else {
                invalid_seen += 1;
            }
        }
        assert!(
            valid_seen > 500 && invalid_seen > 500,
            "{valid_seen} {invalid_seen}"
        );
    }

    #[test]
    fn flat_checks_agree_across_blocks_of_rows() {
        // More rows than a parallel block, faults near the blocks' borders.
        let mut s = Stream(11);
        for case in 0..12 {
            let n_rows = (1 << 14) + 5 + s.below(1 << 14) as usize;
            let (mut row_ptr, mut col_idx) = arrays(&mut s, n_rows, 9, 4);
            let k = (row_ptr[1 << 14] as usize).min(col_idx.len() - 1);
            match case % 3 {
                0 => col_idx[k] = col_idx[k.saturating_sub(1)],
                1 => row_ptr[(1 << 14) + 1] = row_ptr[1 << 14].saturating_sub(1),
                _ => {}
            }
            let expected = valid_by_rows(n_rows, 9, &row_ptr, &col_idx);
            for parallel in [false, true] {
                let got = valid(n_rows, 9, &row_ptr, &col_idx, col_idx.len(), parallel);
                assert_eq!(got, expected, "case {case}");
            }
        }
    }
}
