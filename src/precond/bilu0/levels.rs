//! Level scheduling of block triangular solves (Anderson and Saad 1989; Saad, "Iterative
//! Methods for Sparse Linear Systems", 2nd ed., Section 11.6.1): block row I is in level
//! 1 + max(level of the rows it reads). The rows of one level are independent and solved by
//! one `bsr_trsv_level` launch; on CUDA and OpenCL a run of narrow levels is solved by one
//! `bsr_trsv_levels_group` launch (one work-group, a barrier between levels).

use crate::backend::ops::trsv_levels::NARROW_LEVEL_ROWS;
use crate::backend::{Buffer, VectorOps};
use crate::error::{Error, Result};
use std::ops::Range;

/// The rows of every level, level after level, and where each level starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels {
    /// Block rows sorted by level (ascending row within a level).
    pub rows: Vec<u32>,
    /// Level k is `rows[start[k] .. start[k + 1]]`.
    pub start: Vec<usize>,
}

impl Levels {
    /// Number of levels (launches per exact solve).
    pub fn count(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// The levels solved by the launch that starts at level `k` (`k < count()`), and whether
    /// that launch is one work-group's run of levels: with `grouped` (a backend that runs kernels) a run of
    /// two or more consecutive levels of at most [`NARROW_LEVEL_ROWS`] rows each, otherwise
    /// level k alone. A chain-like factor (olm500: 751 levels of one or two rows) then takes
    /// a launch or two instead of one per level.
    pub(crate) fn launch_at(&self, k: usize, grouped: bool) -> (Range<usize>, bool) {
        let narrow = |l: usize| self.start[l + 1] - self.start[l] <= NARROW_LEVEL_ROWS;
        let mut end = k;
        if grouped {
            while end < self.count() && narrow(end) {
                end += 1;
            }
        }
        if end - k >= 2 {
            (k..end, true)
        } else {
            (k..k + 1, false)
        }
    }

    /// Launches of one exact solve ([`Levels::launch_at`] from level 0 on).
    pub(crate) fn launches(&self, grouped: bool) -> usize {
        let (mut k, mut launches) = (0, 0);
        while k < self.count() {
            k = self.launch_at(k, grouped).0.end;
            launches += 1;
        }
        launches
    }

    /// The rows, then the level starts, as one u32 buffer on `backend` (what
    /// `bsr_trsv_level` and `bsr_trsv_levels_group` read; the starts from index
    /// `rows.len()`).
    pub(crate) fn upload<B: VectorOps + ?Sized>(&self, backend: &B) -> Result<Buffer<u32>> {
        let mut packed = crate::memory::try_with_capacity(
            "triangular solve levels",
            self.rows.len() + self.start.len(),
        )?;
        packed.extend_from_slice(&self.rows);
        for &s in &self.start {
            packed.push(u32::try_from(s).map_err(|_| Error::IndexOverflow {
                what: "triangular solve levels".into(),
                value: s,
                max: u32::MAX as usize,
            })?);
        }
        backend.upload(&packed)
    }

    /// Levels of the strict triangular pattern (`row_ptr`, `col_idx`); `lower` says whether
    /// the rows read earlier rows (L, solved top-down) or later ones (U, bottom-up).
    pub fn of(row_ptr: &[u32], col_idx: &[u32], lower: bool) -> Self {
        let nb = row_ptr.len().saturating_sub(1);
        let mut level = vec![0usize; nb];
        let mut compute = |i: usize| {
            let deps = &col_idx[row_ptr[i] as usize..row_ptr[i + 1] as usize];
            level[i] = deps
                .iter()
                .map(|&j| level[j as usize] + 1)
                .max()
                .unwrap_or(0);
        };
        if lower {
            (0..nb).for_each(&mut compute);
        } else {
            (0..nb).rev().for_each(&mut compute);
        }
        let n_levels = level.iter().max().map_or(0, |&m| m + 1);
        // Counting sort of the rows by level.
        let mut start = vec![0usize; n_levels + 1];
        for &l in &level {
            start[l + 1] += 1;
        }
        for k in 0..n_levels {
            start[k + 1] += start[k];
        }
        let mut next = start.clone();
        let mut rows = vec![0u32; nb];
        for (i, &l) in level.iter().enumerate() {
            rows[next[l]] = i as u32;
            next[l] += 1;
        }
        Self { rows, start }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidiagonal_has_one_row_per_level_and_diagonal_one_level() {
        // L strict part of a lower bidiagonal 4 x 4: row i reads i - 1.
        let l = Levels::of(&[0, 0, 1, 2, 3], &[0, 1, 2], true);
        assert_eq!(l.count(), 4);
        assert_eq!(l.rows, vec![0, 1, 2, 3]);
        // U strict part of an upper bidiagonal: row i reads i + 1, so the last row goes first.
        let u = Levels::of(&[0, 1, 2, 3, 3], &[1, 2, 3], false);
        assert_eq!(u.rows, vec![3, 2, 1, 0]);
        let d = Levels::of(&[0, 0, 0, 0], &[], true);
        assert_eq!((d.count(), d.start.clone()), (1, vec![0, 3]));
    }
}
