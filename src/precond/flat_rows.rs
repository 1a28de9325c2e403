//! Sparsity patterns held as one flat array of sorted rows, built in parallel without an
//! allocation per row (on a many-core host, parallel tasks that allocate a vector per row scale
//! badly), and the split of a slice into consecutive pieces of given lengths.

use rayon::prelude::*;

/// `v` cut into consecutive pieces of the given lengths (their sum at most `v.len()`).
pub(crate) fn split_by_lengths<T>(
    mut v: &mut [T],
    lengths: impl IntoIterator<Item = usize>,
) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    for len in lengths {
        let (head, tail) = std::mem::take(&mut v).split_at_mut(len);
        out.push(head);
        v = tail;
    }
    out
}

/// Sorted rows of a pattern, flat: row i is `cols[ptr[i]..ptr[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FlatRows {
    pub(crate) ptr: Vec<usize>,
    pub(crate) cols: Vec<u32>,
}

impl FlatRows {
    /// Row i.
    pub(crate) fn row(&self, i: usize) -> &[u32] {
        &self.cols[self.ptr[i]..self.ptr[i + 1]]
    }
    /// Number of rows.
    pub(crate) fn n_rows(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
}

/// `n` rows built in parallel without an allocation per row: row i has at most `bound(i)`
/// entries, and `fill(i, out, scratch)` writes it into `out` (sorted, without duplicates; the
/// reused `scratch` is the task's own) and returns its length.
pub(crate) fn build_rows(
    n: usize,
    bound: impl Fn(usize) -> usize + Sync,
    fill: impl Fn(usize, &mut [u32], &mut Vec<u32>) -> usize + Sync,
) -> FlatRows {
    let bounds: Vec<usize> = (0..n).into_par_iter().map(&bound).collect();
    let mut wide = vec![0u32; bounds.iter().sum()];
    let slots = split_by_lengths(&mut wide, bounds.iter().copied());
    let lens: Vec<usize> = slots
        .into_par_iter()
        .enumerate()
        .map_init(Vec::new, |scratch, (i, out)| fill(i, out, scratch))
        .collect();
    let mut ptr = Vec::with_capacity(n + 1);
    ptr.push(0usize);
    for &l in &lens {
        ptr.push(ptr[ptr.len() - 1] + l);
    }
    let mut cols = vec![0u32; ptr[n]];
    let pieces = split_by_lengths(&mut cols, lens.iter().copied());
    let starts: Vec<usize> = bounds
        .iter()
        .scan(0usize, |acc, &b| {
            let s = *acc;
            *acc += b;
            Some(s)
        })
        .collect();
    pieces.into_par_iter().enumerate().for_each(|(i, out)| {
        out.copy_from_slice(&wide[starts[i]..starts[i] + out.len()]);
    });
    FlatRows { ptr, cols }
}
