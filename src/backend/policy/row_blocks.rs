//! The CSR stream kernel's row blocks, for rows of very unequal lengths (issue 16: power-law
//! matrices).
//!
//! The vector CSR kernels give every row the same `k` lanes, chosen from the *mean* row length:
//! when neighbouring rows differ widely in length, the lanes of a short row idle while a long
//! row of the same warp finishes (on the H200 the power-law matrix at n = 4.2M took 816 us per
//! SpMV, cuSPARSE 468). The stream kernels (`spmv_dots_csr_stream`, `residual_csr_stream`) cut
//! the rows into blocks of consecutive rows holding at most [`STREAM_CAP`] entries (and at most
//! [`STREAM_CAP`] rows); one work-group takes a block at a time:
//!
//! 1. every work-item stages the products `values[j] * x[col_idx[j]]` of the block's entries
//!    `j = e0 + lid, e0 + lid + WG, ...` in local memory (coalesced loads, the same work for
//!    every work-item whatever the row lengths);
//! 2. every work-item sums whole rows from local memory in entry order (rows `r0 + lid`,
//!    `r0 + lid + WG`, ...) and writes y and the fused inner products.
//!
//! A row of more than [`STREAM_CAP`] entries is a block of its own: its value comes from the
//! long-row path (`backend::long_rows`, whose threshold is raised to at least [`STREAM_CAP`]
//! for these matrices), or, when it is not long by that path's measure, from a work-group-wide
//! strided sum. Every sum has an order fixed by the matrix alone: deterministic.

/// Entries (and rows) per row block; the kernels' `CSR_STREAM_CAP` (both kernel trees,
/// checked by a test) sizes their local-memory staging buffer.
pub const STREAM_CAP: usize = 2048;

/// Rows per group of the imbalance estimate (a warp of one-lane rows).
pub const IMBALANCE_GROUP: usize = 32;

/// The stream kernel is chosen when [`imbalance`] is at least this ...
pub const STREAM_MIN_IMBALANCE: f64 = 2.0;

/// ... or when the rows hold at least this many entries on average. Measured on the H200
/// (CG, pipelined, f64, CSR, `bench/results/stream-*-h200.csv`): the 27-point stencil (26.6
/// per row) and elasticity3d (43) run faster with the stream kernel, 2D/3D Poisson (5, 7) and
/// the circuit matrix (5) slower.
pub const STREAM_MIN_MEAN: usize = 16;

/// The automatic choice keeps the vector kernel below this many entries: a product is then a
/// few microseconds, latency-bound, and the fused latency kernels (BiCGStab's resident
/// s-update with its product, GMRES's one-kernel DCGS2 step) read rows the vector kernel's way
/// and decline stream matrices.
pub const STREAM_MIN_NNZ: usize = 1 << 20;

/// Which CSR kernel a GPU backend runs for a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsrKernel {
    /// On GPUs ([`crate::backend::SpmvOps::auto_csr_stream`]), [`CsrKernel::StreamCompact`]
    /// for at least [`STREAM_MIN_NNZ`] entries when the row lengths are unequal enough
    /// ([`imbalance`] >= [`STREAM_MIN_IMBALANCE`]) or the rows long enough (mean >=
    /// [`STREAM_MIN_MEAN`]), else [`CsrKernel::Vector`].
    #[default]
    Auto,
    /// `k` lanes per row, `k` from the mean row length (`spmv_dots_csr`).
    Vector,
    /// Row blocks staged in local memory (`spmv_dots_csr_stream`), 32-bit column indices.
    Stream,
    /// [`CsrKernel::Stream`] reading 16-bit column offsets from a per-block base column
    /// ([`compact_columns`]: 2 bytes less per entry) when every staged block's columns span
    /// at most 65536, else [`CsrKernel::Stream`]. What [`CsrKernel::Auto`] picks for the
    /// stream kernel.
    StreamCompact,
}

impl std::fmt::Display for CsrKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CsrKernel::Auto => "auto",
            CsrKernel::Vector => "vector",
            CsrKernel::Stream => "stream",
            CsrKernel::StreamCompact => "stream-compact",
        })
    }
}

impl std::str::FromStr for CsrKernel {
    type Err = crate::error::Error;
    /// `auto`, `vector`, `stream` or `stream-compact` (the names [`CsrKernel`] displays).
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s {
            "auto" => Ok(CsrKernel::Auto),
            "vector" => Ok(CsrKernel::Vector),
            "stream" => Ok(CsrKernel::Stream),
            "stream-compact" => Ok(CsrKernel::StreamCompact),
            other => Err(crate::error::Error::param(
                "csr_kernel",
                format!("{other:?} is not auto, vector, stream or stream-compact"),
            )),
        }
    }
}

/// How much longer the rows' lanes are busy than the entries need when rows run side by side
/// in groups of [`IMBALANCE_GROUP`] consecutive rows, every row as long as its group's longest:
/// `sum over groups (rows * longest) / nnz`, rows of more than `long_len` entries left out
/// (summed apart). 1 for equal rows; the power-law generator's matrix gives about 5.
pub fn imbalance(row_ptr: &[u32], long_len: u32) -> f64 {
    let lens = row_ptr
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .filter(|&l| l <= long_len);
    let (mut busy, mut used) = (0u64, 0u64);
    let (mut in_group, mut longest) = (0u64, 0u64);
    for len in lens {
        used += u64::from(len);
        longest = longest.max(u64::from(len));
        in_group += 1;
        if in_group == IMBALANCE_GROUP as u64 {
            busy += in_group * longest;
            (in_group, longest) = (0, 0);
        }
    }
    busy += in_group * longest;
    if used == 0 {
        1.0
    } else {
        busy as f64 / used as f64
    }
}

/// The kernel to run for rows `row_ptr` when `requested`: [`CsrKernel::Auto`] resolves, for at
/// least [`STREAM_MIN_NNZ`] entries, to the stream kernel when the mean row length reaches
/// [`STREAM_MIN_MEAN`] or [`imbalance`] (rows above `long_len` left out) reaches
/// [`STREAM_MIN_IMBALANCE`], else to the vector kernel. (A backend's
/// [`crate::backend::tuning::Tuning::csr_kernel`] replaces the automatic choice, see
/// [`crate::backend::SpmvOps::resolve_csr_kernel`].)
pub fn choose(row_ptr: &[u32], long_len: u32, requested: CsrKernel) -> CsrKernel {
    let n_rows = row_ptr.len().saturating_sub(1);
    let nnz = row_ptr.last().map_or(0, |&e| e as usize);
    let mean = nnz / n_rows.max(1);
    match requested {
        CsrKernel::Auto => {
            let unequal = || imbalance(row_ptr, long_len) >= STREAM_MIN_IMBALANCE;
            if nnz >= STREAM_MIN_NNZ && (mean >= STREAM_MIN_MEAN || unequal()) {
                CsrKernel::StreamCompact
            } else {
                CsrKernel::Vector
            }
        }
        fixed => fixed,
    }
}

/// The first row of every row block, then the number of rows (`n_blocks + 1` entries): blocks
/// of consecutive rows with at most [`STREAM_CAP`] entries and [`STREAM_CAP`] rows each; a row
/// of more than [`STREAM_CAP`] entries is a block alone.
pub fn row_blocks(row_ptr: &[u32]) -> Vec<u32> {
    let n_rows = row_ptr.len().saturating_sub(1);
    let mut starts = vec![0u32];
    let (mut rows, mut entries) = (0usize, 0usize);
    for (row, w) in row_ptr.windows(2).enumerate() {
        let len = w[1].saturating_sub(w[0]) as usize;
        if rows > 0 && (rows == STREAM_CAP || entries + len > STREAM_CAP) {
            starts.push(row as u32);
            (rows, entries) = (0, 0);
        }
        rows += 1;
        entries += len;
    }
    if n_rows > 0 {
        starts.push(n_rows as u32);
    } else {
        starts.clear();
    }
    starts
}

/// The 16-bit column offsets of a stream matrix: `offsets[j] = col_idx[j] - base[b]` for every
/// entry j of a staged block b (at most [`STREAM_CAP`] entries), `base[b]` the block's smallest
/// column; the entries of a block alone above [`STREAM_CAP`] (read through the 32-bit
/// indices) get 0. `None` when some staged block's columns span more than 65536.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactColumns {
    /// Column offsets, one per entry.
    pub offsets: Vec<u16>,
    /// Base column of each block.
    pub base: Vec<u32>,
}

/// The [`CompactColumns`] of rows `row_ptr`, columns `col_idx` cut into the blocks `starts`
/// ([`row_blocks`]), or `None` when a staged block's columns do not fit 16-bit offsets.
pub fn compact_columns(row_ptr: &[u32], col_idx: &[u32], starts: &[u32]) -> Option<CompactColumns> {
    use rayon::prelude::*;
    // Blocks in parallel (the FSAI factors lay out tens of millions of entries at setup): each
    // block's entries are a slice of their own.
    let ranges: Vec<(usize, usize)> = starts
        .windows(2)
        .map(|w| {
            (
                row_ptr[w[0] as usize] as usize,
                row_ptr[w[1] as usize] as usize,
            )
        })
        .collect();
    let first = ranges.first().map_or(0, |r| r.0);
    let mut offsets = vec![0u16; col_idx.len()];
    let slices = crate::precond::flat_rows::split_by_lengths(
        &mut offsets[first..],
        ranges.iter().map(|&(e0, e1)| e1 - e0),
    );
    let base = slices
        .into_par_iter()
        .zip(ranges.par_iter())
        .map(|(out, &(e0, e1))| {
            let cols = &col_idx[e0..e1];
            if e1 - e0 > STREAM_CAP || cols.is_empty() {
                return Some(0);
            }
            let lo = *cols.iter().min()?;
            for (o, &c) in out.iter_mut().zip(cols) {
                *o = u16::try_from(c - lo).ok()?;
            }
            Some(lo)
        })
        .collect::<Option<Vec<u32>>>()?;
    Some(CompactColumns { offsets, base })
}

/// The 16-bit column offsets of a SELL-C-sigma matrix: per slice the smallest column of its
/// stored rows' entries (padding left out), per stored entry the offset from it (0 for
/// padding, which the kernels never read); `None` when some slice's columns span more than
/// 65536.
pub fn sell_compact_columns<T>(s: &crate::matrix::SellMatrix<T>) -> Option<CompactColumns> {
    let mut offsets = vec![0u16; s.col_idx.len()];
    let mut base = Vec::with_capacity(s.slice_ptr.len().saturating_sub(1));
    for (slice, w) in s.slice_ptr.windows(2).enumerate() {
        let start = w[0] as usize;
        // Entry j of lane l sits at start + j c + l; lane l holds row position slice c + l.
        let lanes = (0..s.c).filter_map(|l| {
            let len = *s.row_len.get(slice * s.c + l)? as usize;
            Some((l, len))
        });
        let entries = |(l, len): (usize, usize)| (0..len).map(move |j| start + j * s.c + l);
        let lo = lanes.clone().flat_map(entries).map(|e| s.col_idx[e]).min();
        let Some(lo) = lo else {
            base.push(0);
            continue;
        };
        for e in lanes.flat_map(entries) {
            offsets[e] = u16::try_from(s.col_idx[e] - lo).ok()?;
        }
        base.push(lo);
    }
    Some(CompactColumns { offsets, base })
}

#[cfg(test)]
mod tests {
    use super::super::long_rows::tests::row_ptr;
    use super::*;

    /// Every block: consecutive rows, within the caps, or one row longer than the cap.
    fn check_blocks(rp: &[u32], blocks: &[u32]) {
        let n = rp.len() - 1;
        assert_eq!((blocks[0], *blocks.last().unwrap()), (0, n as u32));
        for w in blocks.windows(2) {
            let (r0, r1) = (w[0] as usize, w[1] as usize);
            assert!(r1 > r0, "empty block {r0}..{r1}");
            let entries = (rp[r1] - rp[r0]) as usize;
            assert!(
                (r1 - r0 <= STREAM_CAP && entries <= STREAM_CAP) || r1 - r0 == 1,
                "block {r0}..{r1}: {entries} entries"
            );
        }
    }

    #[test]
    fn blocks_fill_up_to_the_cap_in_entries_and_rows() {
        let rp = row_ptr(&[5; 1000]);
        let b = row_blocks(&rp);
        check_blocks(&rp, &b);
        // 409 rows of 5 = 2045 entries per block.
        assert_eq!(b[..3], [0, 409, 818]);
        let rp = row_ptr(&vec![0; 5000]);
        let b = row_blocks(&rp);
        check_blocks(&rp, &b);
        assert_eq!(b, vec![0, 2048, 4096, 5000]);
        assert!(row_blocks(&[0]).is_empty());
        assert!(row_blocks(&[]).is_empty());
    }

    #[test]
    fn a_row_above_the_cap_is_a_block_alone() {
        let mut lens = vec![3; 100];
        lens[40] = STREAM_CAP + 1;
        lens[41] = STREAM_CAP;
        let rp = row_ptr(&lens);
        let b = row_blocks(&rp);
        check_blocks(&rp, &b);
        assert_eq!(b, vec![0, 40, 41, 42, 100]);
    }

    #[test]
    fn imbalance_is_one_for_equal_rows_and_large_for_a_heavy_tail() {
        assert_eq!(imbalance(&row_ptr(&[7; 640]), u32::MAX), 1.0);
        let mut lens = vec![2; 640];
        for g in 0..20 {
            lens[32 * g] = 64;
        }
        // Each group: 32 x 64 busy, 31 x 2 + 64 used.
        let want = (20.0 * 32.0 * 64.0) / (20.0 * (31.0 * 2.0 + 64.0));
        assert!((imbalance(&row_ptr(&lens), u32::MAX) - want).abs() < 1e-12);
        // Rows above long_len are left out.
        assert_eq!(imbalance(&row_ptr(&lens), 63), 1.0);
        assert_eq!(imbalance(&[0], 5), 1.0);
        assert_eq!(
            choose(&row_ptr(&lens), u32::MAX, CsrKernel::Vector),
            CsrKernel::Vector
        );
        let auto = |lens: &[usize]| choose(&row_ptr(lens), u32::MAX, CsrKernel::Auto);
        let big = |lens: &[usize]| lens.repeat(STREAM_MIN_NNZ.div_ceil(lens.len()));
        assert_eq!(auto(&big(&lens)), CsrKernel::StreamCompact);
        assert_eq!(auto(&lens), CsrKernel::Vector, "small: the vector kernel");
        assert_eq!(auto(&big(&[7; 640])), CsrKernel::Vector);
        assert_eq!(auto(&big(&[16; 64])), CsrKernel::StreamCompact);
        assert_eq!(auto(&[16; 64]), CsrKernel::Vector);
    }

    #[test]
    fn compact_columns_fit_16_bits_per_staged_block() {
        // Two blocks of 2 rows: columns 70000.. and 5 .. 65540.
        let rp = [0u32, 2, 4, 5, 7];
        let ci = [70_000u32, 70_003, 70_001, 70_002, 5, 5, 65_540];
        let starts = [0u32, 2, 4];
        let c = compact_columns(&rp, &ci, &starts).unwrap();
        assert_eq!(c.base, vec![70_000, 5]);
        assert_eq!(c.offsets, vec![0, 3, 1, 2, 0, 0, 65_535]);
        let wide = [70_000u32, 70_003, 70_001, 70_002, 5, 5, 65_541];
        assert_eq!(compact_columns(&rp, &wide, &starts), None);
        let mut lens = vec![1usize; 3];
        lens[1] = STREAM_CAP + 1;
        let rp = row_ptr(&lens);
        let ci: Vec<u32> = (0..rp[3]).map(|j| j * 1000).collect();
        let starts = row_blocks(&rp);
        assert_eq!(starts, vec![0, 1, 2, 3]);
        let c = compact_columns(&rp, &ci, &starts).unwrap();
        assert_eq!(c.base, vec![0, 0, ci[rp[2] as usize]]);
        assert!(c.offsets.iter().all(|&o| o == 0));
        assert_eq!(
            compact_columns(&[0], &[], &[]),
            Some(CompactColumns {
                offsets: vec![],
                base: vec![]
            })
        );
    }

    #[test]
    fn sell_offsets_cover_the_stored_entries_of_each_slice() {
        use crate::matrix::{CsrMatrix, SellMatrix};
        // Rows of a 5-point-like band: row i has columns i and i + 1000 (when below n).
        let n = 3000;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0));
            if i + 1000 < n {
                t.push((i, i + 1000, -1.0));
            }
        }
        let a = CsrMatrix::<f64>::from_triplets(n, n, &t).unwrap();
        let s = SellMatrix::from_csr(&a, 4, 1).unwrap();
        let c = sell_compact_columns(&s).unwrap();
        assert_eq!(c.base.len(), s.slice_ptr.len() - 1);
        for (slice, w) in s.slice_ptr.windows(2).enumerate() {
            for l in 0..s.c {
                let Some(&len) = s.row_len.get(slice * s.c + l) else {
                    continue;
                };
                for j in 0..len as usize {
                    let e = w[0] as usize + j * s.c + l;
                    assert_eq!(c.base[slice] + u32::from(c.offsets[e]), s.col_idx[e]);
                }
            }
        }
        // One slice spanning more than 2^16 columns: no offsets.
        let t = [(0, 0, 1.0), (0, 70_000, 1.0), (1, 1, 1.0)];
        let a = CsrMatrix::<f64>::from_triplets(70_001, 70_001, &t).unwrap();
        assert_eq!(
            sell_compact_columns(&SellMatrix::from_csr(&a, 4, 1).unwrap()),
            None
        );
    }

    #[test]
    fn the_kernels_stage_cap_entries() {
        let src = include_str!("../../../kernels/spmv.kc");
        assert!(src.contains(&format!("#define CSR_STREAM_CAP {STREAM_CAP}")));
    }
}
