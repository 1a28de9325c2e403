//! The long-row split of a CSR matrix on a GPU (issue 16: power-law and circuit matrices).
//!
//! The CSR kernels give each row `k` lanes, with `k` chosen from the *mean* row length. A row
//! far longer than the mean is then summed by a handful of lanes while the rest of the GPU
//! idles: on the H200 a circuit matrix with four rows of 65K entries (n = 4.2M) took 19 ms
//! per CG iteration, 130x the memory-traffic floor. Rows longer than [`LongRowPlan::min_len`]
//! are therefore taken out of the main kernel and summed in fixed-size chunks by whole
//! work-groups, in two extra launches before it:
//!
//! 1. `csr_long_chunks`: one work-group per chunk of at most [`CHUNK_LEN`] entries of a long
//!    row writes the chunk's sum (work-group reduction in a fixed order) to `chunk_sums`;
//! 2. `csr_long_rows`: one work-item per long row adds its chunk sums in chunk order and
//!    writes the row's value of `A x` to the output vector;
//! 3. the main kernel skips the entries of a long row and reads that value back instead, so
//!    the fused inner products and the residual see every row.
//!
//! Every step sums in an order fixed by the matrix alone: the result is deterministic (it
//! differs from a sequential row sum only by rounding). `chunk_sums` is scratch owned by the
//! matrix: products with one matrix must not run concurrently on two queues (a backend has
//! one in-order queue, so calls through one backend are always ordered).

/// Entries per chunk of a long row (8 per work-item of a 256-wide group).
pub const CHUNK_LEN: usize = 2048;

/// A row is long when it has more than `LONG_ROW_FACTOR` times the mean row length (the
/// default of [`super::tuning::Tuning::long_row_factor`]) ...
pub const LONG_ROW_FACTOR: usize = 8;

/// ... and more than `LONG_ROW_MIN` entries.
pub const LONG_ROW_MIN: usize = 64;

/// Host arrays of the long-row split of a CSR matrix (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongRowPlan {
    /// Rows with more than this many entries are long.
    pub min_len: u32,
    /// The long rows, ascending.
    pub rows: Vec<u32>,
    /// Chunks of long row `i`: `chunk_ptr[i] .. chunk_ptr[i + 1]` (length `rows.len() + 1`).
    pub chunk_ptr: Vec<u32>,
    /// First entry of each chunk.
    pub chunk_begin: Vec<u32>,
    /// One past the last entry of each chunk.
    pub chunk_end: Vec<u32>,
}

impl LongRowPlan {
    /// The long rows of the CSR row pointers `row_ptr` (checked to fit `u32` already), or
    /// `None` when no row is long ([`LONG_ROW_FACTOR`]; a backend uploads with its
    /// [`super::tuning::Tuning::long_row_factor`], see [`LongRowPlan::plan_with`]).
    pub fn plan(row_ptr: &[u32]) -> Option<Self> {
        Self::plan_with(row_ptr, LONG_ROW_FACTOR)
    }

    /// [`LongRowPlan::plan`] for the CSR stream kernel: rows are long only above
    /// [`super::row_blocks::STREAM_CAP`] entries too (shorter rows are staged with their
    /// block; see `backend::row_blocks`).
    pub fn plan_for_stream(row_ptr: &[u32]) -> Option<Self> {
        Self::plan_for_stream_with(row_ptr, LONG_ROW_FACTOR)
    }

    /// [`LongRowPlan::plan_for_stream`] with another factor than [`LONG_ROW_FACTOR`] (0: no
    /// plan).
    pub fn plan_for_stream_with(row_ptr: &[u32], factor: usize) -> Option<Self> {
        let min_len = Self::threshold(row_ptr, factor)?;
        Self::plan_above(row_ptr, min_len.max(super::row_blocks::STREAM_CAP))
    }

    /// [`LongRowPlan::plan`] with another factor than [`LONG_ROW_FACTOR`] (0: no plan).
    pub fn plan_with(row_ptr: &[u32], factor: usize) -> Option<Self> {
        Self::plan_above(row_ptr, Self::threshold(row_ptr, factor)?)
    }

    /// The threshold of `factor`: `factor` times the mean row length, at least
    /// [`LONG_ROW_MIN`]; `None` without rows or with factor 0.
    fn threshold(row_ptr: &[u32], factor: usize) -> Option<usize> {
        let n_rows = row_ptr.len().saturating_sub(1);
        if n_rows == 0 || factor == 0 {
            return None;
        }
        let nnz = row_ptr[n_rows] as usize;
        Some((nnz / n_rows).saturating_mul(factor).max(LONG_ROW_MIN))
    }

    /// The rows of more than `min_len` entries, or `None` when there are none.
    fn plan_above(row_ptr: &[u32], min_len: usize) -> Option<Self> {
        let mut plan = Self {
            min_len: u32::try_from(min_len).unwrap_or(u32::MAX),
            rows: Vec::new(),
            chunk_ptr: vec![0],
            chunk_begin: Vec::new(),
            chunk_end: Vec::new(),
        };
        for (row, w) in row_ptr.windows(2).enumerate() {
            let (begin, end) = (w[0] as usize, w[1] as usize);
            if end.saturating_sub(begin) <= min_len {
                continue;
            }
            plan.rows.push(row as u32);
            for start in (begin..end).step_by(CHUNK_LEN) {
                plan.chunk_begin.push(start as u32);
                plan.chunk_end.push((start + CHUNK_LEN).min(end) as u32);
            }
            // At most nnz / 64 chunks and rows: far below u32::MAX when nnz fits u32.
            plan.chunk_ptr.push(plan.chunk_begin.len() as u32);
        }
        (!plan.rows.is_empty()).then_some(plan)
    }

    /// Number of chunks.
    pub fn n_chunks(&self) -> usize {
        self.chunk_begin.len()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// CSR row pointers of rows with the lengths `lens`.
    pub(in crate::backend) fn row_ptr(lens: &[usize]) -> Vec<u32> {
        let mut rp = vec![0u32];
        for &l in lens {
            rp.push(rp.last().unwrap() + l as u32);
        }
        rp
    }

    #[test]
    fn regular_rows_have_no_plan() {
        assert_eq!(
            LongRowPlan::plan_with(&row_ptr(&[5; 1000]), LONG_ROW_FACTOR),
            None
        );
        assert_eq!(LongRowPlan::plan_with(&[0], LONG_ROW_FACTOR), None);
        assert_eq!(LongRowPlan::plan_with(&[], LONG_ROW_FACTOR), None);
        // 64 entries is not long (the threshold is exclusive).
        let mut lens = vec![1; 1000];
        lens[3] = 64;
        assert_eq!(
            LongRowPlan::plan_with(&row_ptr(&lens), LONG_ROW_FACTOR),
            None
        );
    }

    #[test]
    fn long_rows_are_cut_into_chunks_in_row_order() {
        let mut lens = vec![2; 1000];
        lens[7] = 65;
        lens[500] = 2 * CHUNK_LEN + 1;
        let rp = row_ptr(&lens);
        let plan = LongRowPlan::plan_with(&rp, LONG_ROW_FACTOR).unwrap();
        assert_eq!(plan.min_len, 64);
        assert_eq!(plan.rows, vec![7, 500]);
        assert_eq!(plan.chunk_ptr, vec![0, 1, 4]);
        assert_eq!(plan.n_chunks(), 4);
        assert_eq!(plan.chunk_begin[0], rp[7]);
        assert_eq!(plan.chunk_end[0], rp[8]);
        let b = rp[500];
        assert_eq!(
            plan.chunk_begin[1..],
            [b, b + CHUNK_LEN as u32, b + 2 * CHUNK_LEN as u32]
        );
        assert_eq!(plan.chunk_end[3], rp[501]);
        assert_eq!(plan.chunk_end[1], b + CHUNK_LEN as u32);
    }

    #[test]
    fn factor_zero_turns_the_path_off() {
        let mut lens = vec![2; 100];
        lens[0] = 1000;
        assert_eq!(LongRowPlan::plan_with(&row_ptr(&lens), 0), None);
        assert!(LongRowPlan::plan_with(&row_ptr(&lens), 8).is_some());
    }

    #[test]
    fn the_threshold_follows_the_mean_row_length() {
        // Mean 20: long means more than 160.
        let mut lens = vec![20; 100];
        lens[0] = 160;
        assert_eq!(
            LongRowPlan::plan_with(&row_ptr(&lens), LONG_ROW_FACTOR),
            None
        );
        lens[0] = 400;
        let plan = LongRowPlan::plan_with(&row_ptr(&lens), LONG_ROW_FACTOR).unwrap();
        assert_eq!(plan.rows, vec![0]);
        assert_eq!(plan.min_len, 8 * (lens.iter().sum::<usize>() / 100) as u32);
    }
}
