//! The operands of the static and adaptive FSAI kernels (`kernels/fsai.kc`): the factor's
//! pattern and its scratch layout, the adaptive growth parameters and kernel choice, their
//! constants, and the argument checks of the `fsai_*` / `afsai_*` methods of
//! [`super::PrecondOps`].

use crate::backend::buffer::{check_len, Buffer};
pub use crate::backend::tuning::AfsaiGrowKernel;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// The pattern of a lower triangular FSAI factor G as the `fsai_rows` kernel takes it,
/// resident on a backend: CSR rows with ascending columns ending on the diagonal, the position
/// of every entry in the CSR of G^T, and the scratch layout of the dense systems in batches.
#[derive(Debug)]
pub struct FsaiPattern {
    pub(crate) n: usize,
    pub(crate) row_ptr: Buffer<u32>,
    pub(crate) col_idx: Buffer<u32>,
    pub(crate) gt_pos: Buffer<u32>,
    /// Row i's m_i x m_i system in its batch's scratch: `stride << FSAI_STRIDE_SHIFT | offset`
    /// (entry e at `offset + e * stride`, see [`FSAI_LANES`]).
    pub(crate) scratch_off: Buffer<u64>,
    /// (first row, end row, scratch elements, team) of every batch; a team batch holds rows
    /// of [`FSAI_TEAM_MIN_M`] entries or more on average, each system contiguous.
    pub(crate) batches: Vec<(usize, usize, usize, bool)>,
}

impl FsaiPattern {
    /// Check and upload: `row_ptr` has n + 1 non-decreasing entries, every row is non-empty
    /// with strictly ascending columns ending with the diagonal, and `gt_pos` is a permutation
    /// of the entries. Rows are grouped into batches whose dense systems (m^2 scalars per row)
    /// fit in `scratch_budget` scalars (a group of [`FSAI_LANES`] rows larger than the budget
    /// gets a batch of its own; the layout is [`FSAI_LANES`]'s).
    /// Anything else is an [`Error::InvalidMatrix`].
    pub fn upload<B: super::VectorOps + ?Sized>(
        backend: &B,
        row_ptr: &[u32],
        col_idx: &[u32],
        gt_pos: &[u32],
        scratch_budget: usize,
    ) -> Result<Self> {
        let bad = |m: String| Error::InvalidMatrix(format!("FSAI pattern: {m}"));
        let n = row_ptr
            .len()
            .checked_sub(1)
            .ok_or_else(|| bad("empty row pointer array".into()))?;
        if row_ptr[0] != 0
            || row_ptr.windows(2).any(|w| w[0] > w[1])
            || row_ptr[n] as usize != col_idx.len()
            || gt_pos.len() != col_idx.len()
        {
            return Err(bad(
                "row pointers, columns and G^T positions disagree".into()
            ));
        }
        for i in 0..n {
            let row = &col_idx[row_ptr[i] as usize..row_ptr[i + 1] as usize];
            if row.last() != Some(&(i as u32)) || row.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad(format!(
                    "row {i} must hold ascending columns ending with the diagonal"
                )));
            }
        }
        let (offsets, batches) = fsai_batches(row_ptr, scratch_budget);
        let mut seen = vec![false; gt_pos.len()];
        for &d in gt_pos {
            match seen.get_mut(d as usize) {
                Some(s) if !*s => *s = true,
                _ => return Err(bad(format!("G^T position {d} repeated or out of range"))),
            }
        }
        Ok(Self {
            n,
            row_ptr: backend.upload(row_ptr)?,
            col_idx: backend.upload(col_idx)?,
            gt_pos: backend.upload(gt_pos)?,
            scratch_off: backend.upload(&offsets)?,
            batches,
        })
    }
    /// A pattern laid out on the device by
    /// [`PrecondOps::afsai_compact`](super::PrecondOps::afsai_compact) and
    /// [`PrecondOps::fsai_transpose`](super::PrecondOps::fsai_transpose) (rows ascending,
    /// diagonal last, `gt_pos` a permutation by construction); `row_ptr_host` is the host copy
    /// of `row_ptr`, for the batches.
    pub(crate) fn from_device<B: super::VectorOps + ?Sized>(
        backend: &B,
        row_ptr: Buffer<u32>,
        col_idx: Buffer<u32>,
        gt_pos: Buffer<u32>,
        row_ptr_host: &[u32],
        scratch_budget: usize,
    ) -> Result<Self> {
        let n = row_ptr_host.len().saturating_sub(1);
        if row_ptr.len() != n + 1 || gt_pos.len() != col_idx.len() {
            return Err(Error::InvalidMatrix(
                "FSAI pattern: row pointers, columns and G^T positions disagree".into(),
            ));
        }
        let (offsets, batches) = fsai_batches(row_ptr_host, scratch_budget);
        Ok(Self {
            n,
            row_ptr,
            col_idx,
            gt_pos,
            scratch_off: backend.upload(&offsets)?,
            batches,
        })
    }
    /// G's row pointers and columns, for the factor itself.
    pub(crate) fn into_g_pattern(self) -> (Buffer<u32>, Buffer<u32>) {
        (self.row_ptr, self.col_idx)
    }
    /// Number of rows of G.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of entries of G.
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }
    /// Number of batches.
    pub fn batches(&self) -> usize {
        self.batches.len()
    }
    /// Scratch scalars the largest batch needs.
    pub fn max_scratch(&self) -> usize {
        self.batches.iter().map(|b| b.2).max().unwrap_or(0)
    }
    /// Whether batch `batch` holds long rows for `fsai_rows_team` (false past the last batch).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn batch_is_team(&self, batch: usize) -> bool {
        self.batches.get(batch).is_some_and(|b| b.3)
    }
    /// Number of batches of long rows, each row's system factorized by a team of 32
    /// work-items (`fsai_rows_team` on the GPU backends; see [`FSAI_TEAM_MIN_M`]).
    pub fn team_batches(&self) -> usize {
        self.batches.iter().filter(|b| b.3).count()
    }
    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.row_ptr.bytes() + self.col_idx.bytes() + self.gt_pos.bytes() + self.scratch_off.bytes()
    }
}

/// Rows per lane group of the `fsai_rows` scratch: the kernels run one work-item per row, so a
/// warp takes [`FSAI_LANES`] consecutive rows, and their dense systems are interleaved (entry e of
/// lane l at `e * lanes + l` from the group's base) so that the warp's loads and stores of the
/// same entry are one coalesced access. One work-item per row with each row's m x m system
/// contiguous made every access of a warp touch 32 cache lines: the rows phase of aFSAI on
/// aniso2d (m = 31) took 0.46 s on the H200.
pub const FSAI_LANES: usize = 32;

/// Bit position of a row's entry stride in its `scratch_off` word (the offset of its first
/// entry below it).
pub const FSAI_STRIDE_SHIFT: u32 = 58;

/// Mean entries per row of G from which a group of [`FSAI_LANES`] rows is factorized by teams:
/// `fsai_rows_team` gives each row's m x m system to 32 work-items (the Cholesky's rows of a
/// column shared among them), where one work-item per row would run m^3 / 6 dependent steps
/// (static FSAI of level 2 on elasticity3d, m about 60-80: 2.8 s of row solves on the H200;
/// level 3: 133 s). Such a group keeps each system contiguous and goes into batches of its own.
pub const FSAI_TEAM_MIN_M: usize = 48;

/// The `scratch_off` word of every row and the batches (first row, end row, scratch elements,
/// team). Rows go in groups of [`FSAI_LANES`] (from row 0; batches start on a group). A team
/// group (rows of [`FSAI_TEAM_MIN_M`] entries or more on average, or of three quarters of that
/// right after a team group, so that rows around the threshold do not cut a batch per group)
/// keeps each row's system contiguous and never shares a batch with other groups. Any other
/// group whose systems interleaved (`lanes x max m^2` scalars) take at most twice their own
/// size (`sum m^2`) is interleaved with stride `lanes`; the rest (one large row among small
/// ones) keep each system contiguous (stride 1). Groups go into a batch while its scratch fits
/// in `scratch_budget` scalars (a group larger than the budget gets a batch of its own). The word
/// is `stride << FSAI_STRIDE_SHIFT | offset of the row's first entry`.
#[allow(clippy::type_complexity)]
fn fsai_batches(
    row_ptr: &[u32],
    scratch_budget: usize,
) -> (Vec<u64>, Vec<(usize, usize, usize, bool)>) {
    let n = row_ptr.len().saturating_sub(1);
    let mut offsets = Vec::with_capacity(n);
    let mut batches = Vec::new();
    let (mut begin, mut used, mut team) = (0usize, 0usize, false);
    let m2 = |i: usize| {
        let m = (row_ptr[i + 1] - row_ptr[i]) as usize;
        m * m
    };
    for g0 in (0..n).step_by(FSAI_LANES) {
        let g1 = (g0 + FSAI_LANES).min(n);
        let lanes = g1 - g0;
        let own: usize = (g0..g1).map(m2).sum();
        let widest = (g0..g1).map(m2).max().unwrap_or(0);
        let entries = (row_ptr[g1] - row_ptr[g0]) as usize;
        let group_team = 4 * entries >= FSAI_TEAM_MIN_M * lanes * if team { 3 } else { 4 };
        let interleaved = !group_team && lanes * widest <= 2 * own;
        let cost = if interleaved { lanes * widest } else { own };
        if used > 0 && (used + cost > scratch_budget || group_team != team) {
            batches.push((begin, g0, used, team));
            (begin, used) = (g0, 0);
        }
        team = group_team;
        if interleaved {
            let word = (lanes as u64) << FSAI_STRIDE_SHIFT;
            offsets.extend((0..lanes).map(|l| word | (used + l) as u64));
        } else {
            let mut at = used;
            for i in g0..g1 {
                offsets.push(1u64 << FSAI_STRIDE_SHIFT | at as u64);
                at += m2(i);
            }
        }
        used += cost;
    }
    if n > 0 {
        batches.push((begin, n, used, team));
    }
    (offsets, batches)
}

/// Check `fsai_rows`: A square CSR of the pattern's size, the batch exists, the scratch holds
/// it, and G and G^T hold every entry.
pub(crate) fn check_fsai<T: Scalar>(
    a: &crate::backend::DeviceMatrix<T>,
    pattern: &FsaiPattern,
    batch: usize,
    scratch: &Buffer<T>,
    g_values: &Buffer<T>,
    gt_values: &Buffer<T>,
) -> Result<(usize, usize)> {
    if !matches!(a.format(), crate::backend::DeviceFormat::Csr { .. }) {
        return Err(Error::param("format", "fsai_rows needs A in CSR"));
    }
    if a.n_rows() != pattern.n || a.n_cols() != pattern.n {
        return Err(Error::dims(
            "fsai_rows: A vs pattern size",
            pattern.n,
            a.n_rows(),
        ));
    }
    let &(begin, end, need, _) = pattern.batches.get(batch).ok_or_else(|| {
        Error::param(
            "batch",
            format!("batch {batch} of {}", pattern.batches.len()),
        )
    })?;
    if scratch.len() < need {
        return Err(Error::dims("fsai_rows: scratch", need, scratch.len()));
    }
    check_len("fsai_rows: G values", g_values, pattern.nnz())?;
    check_len("fsai_rows: G^T values", gt_values, pattern.nnz())?;
    Ok((begin, end))
}

/// Largest number of entries added per growth step in [`AfsaiGrowth`] (`AFSAI_MAX_PER_STEP` in
/// the kernels).
pub const AFSAI_MAX_PER_STEP: usize = 8;

/// Growth parameters of the adaptive FSAI pattern (kernel `afsai_grow`, \[Bernaschi19\] Algorithm 1):
/// at most `max_steps` steps per row, `per_step` entries added per step where the Kaporin
/// gradient is largest, a row stops by `stop` (by default psi_k / psi_0 <= `eps`, eq. 17).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AfsaiGrowth {
    /// k_max, the number of growth steps per row (>= 1).
    pub max_steps: usize,
    /// s, the entries added per step (1..=[`AFSAI_MAX_PER_STEP`]).
    pub per_step: usize,
    /// The tolerance epsilon of the stopping rule, >= 0.
    pub eps: f64,
    /// The stopping rule `eps` belongs to.
    pub stop: AfsaiStop,
}

/// When a row of the adaptive FSAI stops growing, besides after `max_steps` steps or when no
/// column has a nonzero Kaporin gradient. psi_k = G~_k(i, :) A G~_k(i, :)^T is the row's share
/// of the Kaporin number after step k (psi_0 = a_ii).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AfsaiStop {
    /// psi_k / psi_0 <= eps: \[Bernaschi19\] eq. (17), the default. On matrices whose psi cannot fall
    /// far below a_ii (Laplacians: psi tends to the squared Cholesky pivot, about a_ii / 2)
    /// small eps never stops a row, and every row takes all `max_steps` steps.
    #[default]
    RatioToInitial,
    /// (psi_{k-1} - psi_k) / psi_{k-1} <= eps: the last step reduced psi by a relative eps or
    /// less (the rule of hypre's adaptive FSAI); rows stop once growing stops paying.
    StepReduction,
}

impl std::str::FromStr for AfsaiStop {
    type Err = Error;
    /// `ratio` ([`AfsaiStop::RatioToInitial`]) or `step` ([`AfsaiStop::StepReduction`]).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "ratio" => Ok(AfsaiStop::RatioToInitial),
            "step" => Ok(AfsaiStop::StepReduction),
            other => Err(Error::param(
                "afsai_stop",
                format!("{other:?} is not ratio or step"),
            )),
        }
    }
}

impl AfsaiStop {
    /// The kernels' `stop_rule` argument.
    pub fn code(self) -> u32 {
        match self {
            AfsaiStop::RatioToInitial => 0,
            AfsaiStop::StepReduction => 1,
        }
    }
}

impl AfsaiGrowth {
    /// The most off-diagonal entries a row can get: max_steps * per_step.
    pub fn cap(&self) -> usize {
        self.max_steps * self.per_step
    }
    /// Scratch scalars per row of a launch: the packed Cholesky factor, y and G~(i, P).
    pub fn scalars_per_row(&self) -> usize {
        let c = self.cap();
        c * (c + 1) / 2 + 2 * c
    }
    /// Scratch indices per row of a launch: P, P sorted, the merge cursors and their heap.
    pub fn indices_per_row(&self) -> usize {
        5 * self.cap() + 3
    }
    /// [`Error::InvalidParameter`] unless max_steps >= 1, per_step in 1..=8, eps >= 0 and the
    /// scratch of one row is addressable with 32-bit indices.
    pub fn validate(&self) -> Result<()> {
        if self.max_steps == 0 {
            return Err(Error::param("afsai_max_steps", "must be at least 1"));
        }
        if !(1..=AFSAI_MAX_PER_STEP).contains(&self.per_step) {
            return Err(Error::param(
                "afsai_step_size",
                format!("{} is outside 1..={AFSAI_MAX_PER_STEP}", self.per_step),
            ));
        }
        if self.eps.is_nan() || self.eps < 0.0 || !self.eps.is_finite() {
            return Err(Error::param(
                "afsai_eps",
                format!("{} must be finite and >= 0", self.eps),
            ));
        }
        if self.cap() > 4096 {
            return Err(Error::param(
                "afsai_max_steps",
                format!(
                    "max_steps x step_size = {} exceeds 4096 entries per row",
                    self.cap()
                ),
            ));
        }
        Ok(())
    }
}

/// The most off-diagonal entries per row (`max_steps * per_step`) that
/// [`AfsaiGrowKernel::Team`] grows: one list of the merge per work-item of a 32-wide team, the
/// last work-item holding row i's own list (`AFSAI_TEAM_CAP` in the kernels).
pub const AFSAI_TEAM_CAP: usize = 31;

/// The mean entries per row of A from which the GPU backends grow the adaptive FSAI pattern by
/// [`AfsaiGrowKernel::Team`]: below it the merge's lists are short, a team spends 32 lanes on
/// what one work-item does in a few heap steps, and the row kernel wins. Measured on the H200
/// (issue 13, bench/log/ 2026-11-25 (h), growth seconds row / team, f64, CUDA and OpenCL):
/// 5 per row (aniso2d 2.7M, fem2d 1M) 0.25 / 1.05 and 0.13 / 0.32, 7 per row (poisson3d 1M)
/// 0.18 / 0.35, jump3d 1M 0.35 / 0.36 (equal); 26.5 per row (27-point stencil 1M) 0.71 / 0.59
/// on CUDA and 0.72 / 0.57 on OpenCL; 43 per row (elasticity3d 305K) 0.75 / 0.28 (section
/// (c)). The limit lies between 7 and 26.5; 16 is their geometric mean.
pub const AFSAI_TEAM_MIN_ROW_LEN: f64 = 16.0;

impl AfsaiGrowKernel {
    /// Whether the kernel can grow rows of `growth` (the team kernel: cap <= [`AFSAI_TEAM_CAP`]).
    pub fn fits(self, growth: &AfsaiGrowth) -> bool {
        match self {
            AfsaiGrowKernel::Row => true,
            AfsaiGrowKernel::Team => growth.cap() <= AFSAI_TEAM_CAP,
        }
    }

    /// Device scratch scalars per row of a launch.
    pub fn scalars_per_row(self, growth: &AfsaiGrowth) -> usize {
        match self {
            AfsaiGrowKernel::Row => growth.scalars_per_row(),
            AfsaiGrowKernel::Team => 0,
        }
    }

    /// Device scratch indices per row of a launch.
    pub fn indices_per_row(self, growth: &AfsaiGrowth) -> usize {
        match self {
            AfsaiGrowKernel::Row => growth.indices_per_row(),
            AfsaiGrowKernel::Team => 0,
        }
    }

    /// The team kernel where it fits `growth`, the backend allows it (`team_allowed`) and A's
    /// rows hold [`AFSAI_TEAM_MIN_ROW_LEN`] entries or more on average (`mean_row_len`), the
    /// row kernel otherwise; `forced` (the tuning's
    /// [`afsai_grow_kernel`](crate::backend::tuning::Tuning::afsai_grow_kernel): `row`, `team`)
    /// overrides the row-length rule (a team that does not fit still falls back to rows).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn choose(
        growth: &AfsaiGrowth,
        team_allowed: bool,
        mean_row_len: f64,
        forced: Option<AfsaiGrowKernel>,
    ) -> Self {
        let team_ok = team_allowed && AfsaiGrowKernel::Team.fits(growth);
        match forced {
            Some(AfsaiGrowKernel::Row) => AfsaiGrowKernel::Row,
            Some(AfsaiGrowKernel::Team) if team_ok => AfsaiGrowKernel::Team,
            None if team_ok && mean_row_len >= AFSAI_TEAM_MIN_ROW_LEN => AfsaiGrowKernel::Team,
            _ => AfsaiGrowKernel::Row,
        }
    }
}

/// Check `afsai_grow`: A square CSR, valid growth parameters the kernel can grow, the rows
/// inside A, the kernel's scratch
/// and the outputs (`out_cols` rows * cap, `out_len` rows entries) holding `rows.len()` rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_afsai_grow<T: Scalar>(
    a: &crate::backend::DeviceMatrix<T>,
    growth: &AfsaiGrowth,
    kernel: AfsaiGrowKernel,
    rows: &Range<usize>,
    scratch: &Buffer<T>,
    iscratch: &Buffer<u32>,
    out_cols: &Buffer<u32>,
    out_len: &Buffer<u32>,
) -> Result<()> {
    growth.validate()?;
    if !kernel.fits(growth) {
        return Err(Error::param(
            "afsai_grow_kernel",
            format!(
                "{} grows at most {AFSAI_TEAM_CAP} entries per row, not {}",
                kernel.name(),
                growth.cap()
            ),
        ));
    }
    if !matches!(a.format(), crate::backend::DeviceFormat::Csr { .. }) {
        return Err(Error::param("format", "afsai_grow needs A in CSR"));
    }
    let n = a.n_rows();
    if a.n_cols() != n {
        return Err(Error::dims("afsai_grow: A not square", n, a.n_cols()));
    }
    if rows.start > rows.end || rows.end > n {
        return Err(Error::param(
            "rows",
            format!("afsai_grow: rows {rows:?} of a matrix with {n}"),
        ));
    }
    let k = rows.len();
    let too_big = |what: &str| Error::IndexOverflow {
        what: format!("afsai_grow: {what}"),
        value: usize::MAX,
        max: u32::MAX as usize,
    };
    let need_s = k
        .checked_mul(kernel.scalars_per_row(growth))
        .ok_or_else(|| too_big("scratch"))?;
    let need_i = k
        .checked_mul(kernel.indices_per_row(growth))
        .ok_or_else(|| too_big("index scratch"))?;
    let need_c = k
        .checked_mul(growth.cap())
        .ok_or_else(|| too_big("pattern"))?;
    if scratch.len() < need_s {
        return Err(Error::dims("afsai_grow: scratch", need_s, scratch.len()));
    }
    if iscratch.len() < need_i {
        return Err(Error::dims(
            "afsai_grow: index scratch",
            need_i,
            iscratch.len(),
        ));
    }
    if out_cols.len() < need_c {
        return Err(Error::dims(
            "afsai_grow: pattern columns",
            need_c,
            out_cols.len(),
        ));
    }
    if out_len.len() < k {
        return Err(Error::dims("afsai_grow: pattern lengths", k, out_len.len()));
    }
    Ok(())
}

/// Check `afsai_compact`: the rows inside n = `col_count.len()`, `out_cols` and `out_len`
/// holding `rows.len()` rows (cap entries each), `g_row_ptr` rows + 1 entries or more; returns
/// (rows, first row, n, nnz = `g_col_idx.len()`), all below 2^32.
pub(crate) fn check_afsai_compact(
    cap: usize,
    rows: &Range<usize>,
    out_cols: &Buffer<u32>,
    out_len: &Buffer<u32>,
    g_row_ptr: &Buffer<u32>,
    g_col_idx: &Buffer<u32>,
    col_count: &Buffer<u32>,
) -> Result<(u32, u32, u32, u32)> {
    let n = col_count.len();
    if rows.start > rows.end || rows.end > n {
        return Err(Error::param(
            "rows",
            format!("afsai_compact: rows {rows:?} of a pattern with {n}"),
        ));
    }
    let k = rows.len();
    let need = k.checked_mul(cap).ok_or_else(|| Error::IndexOverflow {
        what: "afsai_compact: pattern".into(),
        value: usize::MAX,
        max: u32::MAX as usize,
    })?;
    if out_cols.len() < need {
        return Err(Error::dims(
            "afsai_compact: pattern columns",
            need,
            out_cols.len(),
        ));
    }
    if out_len.len() < k {
        return Err(Error::dims(
            "afsai_compact: pattern lengths",
            k,
            out_len.len(),
        ));
    }
    if g_row_ptr.len() < k + 1 {
        return Err(Error::dims(
            "afsai_compact: row pointers",
            k + 1,
            g_row_ptr.len(),
        ));
    }
    Ok((
        index_u32("afsai_compact: rows", k)?,
        index_u32("afsai_compact: first row", rows.start)?,
        index_u32("afsai_compact: n", n)?,
        index_u32("afsai_compact: nnz", g_col_idx.len())?,
    ))
}

/// Check `afsai_place`: `len <= src.len()`, `offset + len <= dst.len()` < 2^32; returns
/// (len, offset).
pub(crate) fn check_afsai_place(
    src: &Buffer<u32>,
    len: usize,
    dst: &Buffer<u32>,
    offset: usize,
) -> Result<(u32, u32)> {
    if len > src.len() {
        return Err(Error::dims("afsai_place: source", len, src.len()));
    }
    let end = offset.saturating_add(len);
    if end > dst.len() {
        return Err(Error::dims("afsai_place: destination", end, dst.len()));
    }
    index_u32("afsai_place: destination", dst.len())?;
    Ok((len as u32, offset as u32))
}

/// Check `fsai_transpose`: n + 1 row and column pointers, an n-entry cursor, and row indices,
/// entries and positions as long as `g_col_idx` (nnz), n and nnz below 2^32.
pub(crate) fn check_fsai_transpose(
    g_row_ptr: &Buffer<u32>,
    g_col_idx: &Buffer<u32>,
    gt_col_ptr: &Buffer<u32>,
    cursor: &Buffer<u32>,
    gt_row_idx: &Buffer<u32>,
    gt_entry: &Buffer<u32>,
    gt_pos: &Buffer<u32>,
) -> Result<(u32, u32)> {
    let n = g_row_ptr
        .len()
        .checked_sub(1)
        .ok_or_else(|| Error::param("g_row_ptr", "fsai_transpose: empty row pointer array"))?;
    let nnz = g_col_idx.len();
    check_len("fsai_transpose: column pointers", gt_col_ptr, n + 1)?;
    check_len("fsai_transpose: cursor", cursor, n)?;
    check_len("fsai_transpose: G^T rows", gt_row_idx, nnz)?;
    check_len("fsai_transpose: G^T entries", gt_entry, nnz)?;
    check_len("fsai_transpose: G^T positions", gt_pos, nnz)?;
    Ok((
        index_u32("fsai_transpose: n", n)?,
        index_u32("fsai_transpose: nnz", nnz)?,
    ))
}

/// `v` as a kernel's uint argument, or [`Error::IndexOverflow`].
fn index_u32(what: &str, v: usize) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::IndexOverflow {
        what: what.into(),
        value: v,
        max: u32::MAX as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn growth(max_steps: usize, per_step: usize) -> AfsaiGrowth {
        AfsaiGrowth {
            max_steps,
            per_step,
            eps: 1e-3,
            stop: AfsaiStop::RatioToInitial,
        }
    }

    /// The growth kernel by row length, cap and the backend's permission, and the tuning's
    /// override.
    #[test]
    fn afsai_grow_kernel_choice() {
        use AfsaiGrowKernel::{Row, Team};
        assert_eq!("team".parse::<AfsaiGrowKernel>().unwrap(), Team);
        assert_eq!("afsai_grow".parse::<AfsaiGrowKernel>().unwrap(), Row);
        assert!("warp".parse::<AfsaiGrowKernel>().is_err());
        let (g, wide) = (growth(30, 1), growth(12, 3));
        assert!(Team.fits(&g) && !Team.fits(&wide) && Row.fits(&wide));
        assert_eq!((Team.scalars_per_row(&g), Team.indices_per_row(&g)), (0, 0));
        assert_eq!(Row.scalars_per_row(&g), g.scalars_per_row());
        assert_eq!(AfsaiGrowKernel::choose(&g, true, 43.0, None), Team);
        assert_eq!(AfsaiGrowKernel::choose(&g, true, 26.5, None), Team);
        assert_eq!(AfsaiGrowKernel::choose(&g, true, 9.0, None), Row);
        assert_eq!(AfsaiGrowKernel::choose(&g, true, 6.94, None), Row);
        assert_eq!(AfsaiGrowKernel::choose(&g, false, 43.0, None), Row);
        assert_eq!(AfsaiGrowKernel::choose(&wide, true, 81.0, None), Row);
        // Forced: rows always, a team where it fits and is allowed.
        assert_eq!(AfsaiGrowKernel::choose(&g, true, 43.0, Some(Row)), Row);
        assert_eq!(AfsaiGrowKernel::choose(&g, true, 6.94, Some(Team)), Team);
        assert_eq!(AfsaiGrowKernel::choose(&g, false, 43.0, Some(Team)), Row);
        assert_eq!(AfsaiGrowKernel::choose(&wide, true, 81.0, Some(Team)), Row);
    }
}
