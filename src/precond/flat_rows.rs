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

/// Bound entries a [`build_rows`] holds at once: it works through the rows in chunks whose bounds
/// sum to at most this (at least one row each), since the bounds of a power pattern can be many
/// times its size (the rows of A^3 for elasticity3d: about 8,000 bound entries against 480
/// entries, some 10 GB of bounds for 305K rows if held at once).
const CHUNK_BOUND_ENTRIES: usize = 1 << 26;

/// `n` rows built in parallel without an allocation per row: row i has at most `bound(i)`
/// entries, and `fill(i, out, scratch)` writes it into `out` (sorted, without duplicates; the
/// reused `scratch`, `S::default()` at first, is the task's own) and returns its length. The
/// rows go in chunks of at most [`CHUNK_BOUND_ENTRIES`] bound entries, each filled in parallel.
pub(crate) fn build_rows<S: Default + Send>(
    n: usize,
    bound: impl Fn(usize) -> usize + Sync,
    fill: impl Fn(usize, &mut [u32], &mut S) -> usize + Sync,
) -> FlatRows {
    build_rows_in_chunks(n, bound, fill, CHUNK_BOUND_ENTRIES)
}

fn build_rows_in_chunks<S: Default + Send>(
    n: usize,
    bound: impl Fn(usize) -> usize + Sync,
    fill: impl Fn(usize, &mut [u32], &mut S) -> usize + Sync,
    chunk_entries: usize,
) -> FlatRows {
    let bounds: Vec<usize> = (0..n).into_par_iter().map(&bound).collect();
    let mut ptr = Vec::with_capacity(n + 1);
    ptr.push(0usize);
    let mut cols: Vec<u32> = Vec::new();
    let mut start = 0usize;
    while start < n {
        let (mut end, mut wide_len) = (start, 0usize);
        while end < n && (end == start || wide_len + bounds[end] <= chunk_entries) {
            wide_len += bounds[end];
            end += 1;
        }
        let chunk = &bounds[start..end];
        let mut wide = vec![0u32; wide_len];
        let slots = split_by_lengths(&mut wide, chunk.iter().copied());
        let lens: Vec<usize> = slots
            .into_par_iter()
            .enumerate()
            .map_init(S::default, |scratch, (k, out)| {
                fill(start + k, out, scratch)
            })
            .collect();
        let starts: Vec<usize> = chunk
            .iter()
            .scan(0usize, |acc, &b| {
                let s = *acc;
                *acc += b;
                Some(s)
            })
            .collect();
        let base = cols.len();
        cols.resize(base + lens.iter().sum::<usize>(), 0);
        let pieces = split_by_lengths(&mut cols[base..], lens.iter().copied());
        pieces.into_par_iter().enumerate().for_each(|(k, out)| {
            out.copy_from_slice(&wide[starts[k]..starts[k] + out.len()]);
        });
        for &l in &lens {
            ptr.push(ptr[ptr.len() - 1] + l);
        }
        start = end;
    }
    FlatRows { ptr, cols }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows are the same whatever the chunks: one row per chunk, a few, all at once.
    #[test]
    fn chunks_do_not_change_the_rows() {
        let n = 50;
        let bound = |i: usize| i % 7 + 2;
        let fill = |i: usize, out: &mut [u32], scratch: &mut Vec<u32>| {
            scratch.clear();
            scratch.extend((0..bound(i) as u32).map(|k| (k * 3 + i as u32) % 5));
            scratch.sort_unstable();
            scratch.dedup();
            out[..scratch.len()].copy_from_slice(scratch);
            scratch.len()
        };
        let all = build_rows_in_chunks(n, bound, fill, usize::MAX);
        assert_eq!(all.n_rows(), n);
        assert!(all.cols.len() < (0..n).map(bound).sum::<usize>());
        for chunk in [0, 1, 5, 40] {
            assert_eq!(
                build_rows_in_chunks(n, bound, fill, chunk),
                all,
                "chunk {chunk}"
            );
        }
        assert_eq!(build_rows(n, bound, fill), all);
    }
}
