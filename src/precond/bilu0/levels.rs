//! Level scheduling of block triangular solves (Anderson and Saad 1989; Saad, "Iterative
//! Methods for Sparse Linear Systems", 2nd ed., Section 11.6.1): block row I is in level
//! 1 + max(level of the rows it reads). The rows of one level are independent and solved by
//! one `bsr_trsv_level` launch.

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
