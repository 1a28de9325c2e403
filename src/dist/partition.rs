//! Contiguous row blocks balanced by nonzeros.

use crate::error::{Error, Result};

/// Rows `offsets[r] .. offsets[r + 1]` belong to rank `r`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowPartition {
    offsets: Vec<usize>,
}

impl RowPartition {
    /// Split the rows of a CSR row-pointer array into `ranks` contiguous blocks with about the
    /// same number of nonzeros: rank r starts at the first row whose preceding nonzeros reach
    /// r * nnz / ranks (rows + nnz when the matrix has few nonzeros, so empty rows still
    /// spread). Deterministic; ranks may get zero rows when there are fewer rows than ranks.
    pub fn balanced_by_nnz(row_ptr: &[usize], ranks: usize) -> Result<Self> {
        if ranks == 0 {
            return Err(Error::param("ranks", "need at least one rank"));
        }
        if row_ptr.is_empty() {
            return Err(Error::InvalidMatrix("empty row pointer array".into()));
        }
        if row_ptr.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::InvalidMatrix(
                "row pointers must not decrease".into(),
            ));
        }
        let n = row_ptr.len() - 1;
        // Weight of the rows before row i: nonzeros plus one per row, so that a block of empty
        // rows is split too.
        let weight = |i: usize| row_ptr[i] - row_ptr[0] + i;
        let total = weight(n) as u128;
        let mut offsets = Vec::with_capacity(ranks + 1);
        offsets.push(0);
        let mut row = 0;
        for r in 1..ranks {
            let target = (total * r as u128).div_ceil(ranks as u128) as usize;
            while row < n && weight(row) < target {
                row += 1;
            }
            offsets.push(row);
        }
        offsets.push(n);
        Ok(Self { offsets })
    }

    /// The same balance as [`RowPartition::balanced_by_nnz`] from a row-length function instead
    /// of a row-pointer array (two passes over the rows, no O(n) memory): what a rank that builds
    /// its rows itself uses, with every rank computing the same partition.
    pub fn balanced_by_row_len(
        n: usize,
        ranks: usize,
        row_len: impl Fn(usize) -> usize,
    ) -> Result<Self> {
        if ranks == 0 {
            return Err(Error::param("ranks", "need at least one rank"));
        }
        let total: u128 = (0..n).map(|i| row_len(i) as u128 + 1).sum();
        let mut offsets = Vec::with_capacity(ranks + 1);
        offsets.push(0);
        let (mut row, mut weight) = (0usize, 0u128);
        for r in 1..ranks {
            let target = (total * r as u128).div_ceil(ranks as u128);
            while row < n && weight < target {
                weight += row_len(row) as u128 + 1;
                row += 1;
            }
            offsets.push(row);
        }
        offsets.push(n);
        Ok(Self { offsets })
    }

    /// The partition with the given block starts (`offsets[0] = 0`, non-decreasing).
    pub fn from_offsets(offsets: Vec<usize>) -> Result<Self> {
        if offsets.len() < 2 || offsets[0] != 0 || offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::param(
                "partition",
                "offsets must start at 0 and not decrease",
            ));
        }
        Ok(Self { offsets })
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.offsets.len() - 1
    }
    /// Global number of rows.
    pub fn n(&self) -> usize {
        *self.offsets.last().unwrap_or(&0)
    }
    /// The rows of rank `r` (empty for a rank past the partition's ranks).
    pub fn rows(&self, r: usize) -> std::ops::Range<usize> {
        match (self.offsets.get(r), self.offsets.get(r.saturating_add(1))) {
            (Some(&start), Some(&end)) => start..end,
            _ => self.n()..self.n(),
        }
    }
    /// The block starts and the end (ranks + 1 entries).
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }
    /// The rank owning global row (or column) `i` (< n).
    pub fn owner(&self, i: usize) -> usize {
        // The last block start <= i among non-empty blocks.
        self.offsets
            .partition_point(|&o| o <= i)
            .saturating_sub(1)
            .min(self.ranks() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decreasing_row_pointers_and_ranks_past_the_end_do_not_panic() {
        assert!(matches!(
            RowPartition::balanced_by_nnz(&[0, 5, 3, 7], 2),
            Err(Error::InvalidMatrix(_))
        ));
        let p = RowPartition::balanced_by_nnz(&[0, 1, 2, 3], 2).unwrap();
        assert!(p.rows(2).is_empty() && p.rows(usize::MAX).is_empty());
    }

    #[test]
    fn balances_nonzeros_and_covers_every_row() {
        // Rows with 1, 1, 1, 1, 8, 8 nonzeros.
        let rp = [0, 1, 2, 3, 4, 12, 20];
        let p = RowPartition::balanced_by_nnz(&rp, 2).unwrap();
        assert_eq!(p.offsets(), &[0, 5, 6]);
        for ranks in 1..9 {
            let p = RowPartition::balanced_by_nnz(&rp, ranks).unwrap();
            assert_eq!(p.ranks(), ranks);
            assert_eq!(p.n(), 6);
            for i in 0..6 {
                assert!(p.rows(p.owner(i)).contains(&i), "ranks {ranks} row {i}");
            }
        }
    }

    #[test]
    fn row_length_function_gives_the_row_pointer_partition() {
        let rp = [0usize, 1, 2, 3, 4, 12, 20, 21, 23];
        for ranks in 1..7 {
            let a = RowPartition::balanced_by_nnz(&rp, ranks).unwrap();
            let b = RowPartition::balanced_by_row_len(8, ranks, |i| rp[i + 1] - rp[i]).unwrap();
            assert_eq!(a, b, "{ranks} ranks");
        }
    }

    #[test]
    fn more_ranks_than_rows_leaves_empty_blocks() {
        let rp = [0, 1, 2];
        let p = RowPartition::balanced_by_nnz(&rp, 4).unwrap();
        assert_eq!(p.n(), 2);
        assert_eq!((0..4).map(|r| p.rows(r).len()).sum::<usize>(), 2);
        assert!((0..4).any(|r| p.rows(r).is_empty()));
        assert!(RowPartition::balanced_by_nnz(&rp, 0).is_err());
        assert!(RowPartition::from_offsets(vec![0, 3, 2]).is_err());
    }
}
