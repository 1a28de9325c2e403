//! Preconditioner kernels.

use super::bilu::BiluParts;
use super::krylov::KrylovOps;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{DeviceFormat, DeviceMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use enum_dispatch::enum_dispatch;
use std::ops::Range;

/// Largest block size of the block kernels (`PK_MAX_BLOCK` in `trsv.cl` / `trsv.cu`).
pub const MAX_BLOCK_SIZE: usize = 8;

/// A block triangular factor resident on a backend, as the `trsv` kernels take it: the strict
/// triangular part in block CSR (column-major `s x s` blocks, like
/// [`crate::matrix::BsrMatrix`]) and the inverted diagonal blocks, or none for a unit
/// diagonal (the L factor of BILU(0)).
#[derive(Debug)]
pub struct BlockTriangular<T> {
    /// Block size s (1..=[`MAX_BLOCK_SIZE`]).
    pub(crate) block_size: usize,
    /// Number of block rows.
    pub(crate) n_block_rows: usize,
    /// Block-row pointers of the strict part (n_block_rows + 1).
    pub(crate) row_ptr: Buffer<u32>,
    /// Block columns of the strict part.
    pub(crate) col_idx: Buffer<u32>,
    /// Blocks of the strict part, s*s each, column-major.
    pub(crate) values: Buffer<T>,
    /// Inverted diagonal blocks (s*s per block row), `None` for a unit diagonal.
    pub(crate) inv_diag: Option<Buffer<T>>,
}

impl<T: Scalar> BlockTriangular<T> {
    /// Check the host arrays of a block triangular factor and upload them: `row_ptr` has
    /// `n_block_rows + 1` non-decreasing entries ending at the number of blocks, every block
    /// column is below `n_block_rows`, `values` holds s*s per block and `inv_diag` (if any)
    /// s*s per block row. Anything else is an [`Error::InvalidMatrix`] (the kernels index
    /// with these arrays unchecked).
    pub fn upload<B: super::VectorOps + ?Sized>(
        backend: &B,
        block_size: usize,
        row_ptr: &[u32],
        col_idx: &[u32],
        values: &[T],
        inv_diag: Option<&[T]>,
    ) -> Result<Self> {
        let n_block_rows = check_pattern(block_size, row_ptr, col_idx)?;
        let ss = block_size * block_size;
        if values.len() != col_idx.len() * ss {
            return Err(Error::dims(
                "block triangular: values (blocks * s * s)",
                col_idx.len() * ss,
                values.len(),
            ));
        }
        if let Some(d) = inv_diag {
            if d.len() != n_block_rows * ss {
                return Err(Error::dims(
                    "block triangular: inverted diagonal (block rows * s * s)",
                    n_block_rows * ss,
                    d.len(),
                ));
            }
        }
        Ok(Self {
            block_size,
            n_block_rows,
            row_ptr: backend.upload(row_ptr)?,
            col_idx: backend.upload(col_idx)?,
            values: backend.upload(values)?,
            inv_diag: inv_diag.map(|d| backend.upload(d)).transpose()?,
        })
    }

    /// A factor with the pattern `row_ptr`, `col_idx` (checked as in [`Self::upload`]) and
    /// zero blocks, with zero inverted diagonal blocks when `with_inv_diag`: the output of a
    /// factorization on the device.
    pub fn with_pattern<B: super::VectorOps + ?Sized>(
        backend: &B,
        block_size: usize,
        row_ptr: &[u32],
        col_idx: &[u32],
        with_inv_diag: bool,
    ) -> Result<Self> {
        let n_block_rows = check_pattern(block_size, row_ptr, col_idx)?;
        let ss = block_size * block_size;
        Ok(Self {
            block_size,
            n_block_rows,
            row_ptr: backend.upload(row_ptr)?,
            col_idx: backend.upload(col_idx)?,
            values: backend.alloc(col_idx.len() * ss)?,
            inv_diag: if with_inv_diag {
                Some(backend.alloc(n_block_rows * ss)?)
            } else {
                None
            },
        })
    }
    /// Block size s.
    pub fn block_size(&self) -> usize {
        self.block_size
    }
    /// Number of block rows.
    pub fn n_block_rows(&self) -> usize {
        self.n_block_rows
    }
    /// Number of stored off-diagonal blocks.
    pub fn n_blocks(&self) -> usize {
        self.col_idx.len()
    }
    /// Scalar dimension (n_block_rows * s).
    pub fn n(&self) -> usize {
        self.n_block_rows * self.block_size
    }
    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.row_ptr.bytes()
            + self.col_idx.bytes()
            + self.values.bytes()
            + self.inv_diag.as_ref().map_or(0, |d| d.bytes())
    }
    /// Check the shapes the kernels rely on.
    pub(crate) fn check(&self) -> Result<()> {
        check_block_size(self.block_size)?;
        let (s, nb) = (self.block_size, self.n_block_rows);
        check_len("block triangular: row_ptr length", &self.row_ptr, nb + 1)?;
        check_len(
            "block triangular: values length (blocks * s * s)",
            &self.values,
            self.col_idx.len() * s * s,
        )?;
        if let Some(d) = &self.inv_diag {
            check_len("block triangular: inverted diagonal length", d, nb * s * s)?;
        }
        Ok(())
    }
}

/// The block pattern of an approximate inverse N ~ T^-1 as the `isai_solve` kernel takes it,
/// resident on a backend: block column j holds the rows `row_idx[col_ptr[j]..col_ptr[j+1]]`
/// (ascending), and `dest[e]` is the position of CSC entry e in the block CSR of N that the
/// kernel writes (so no transpose is needed afterwards).
#[derive(Debug)]
pub struct InversePattern {
    pub(crate) n_block_cols: usize,
    pub(crate) col_ptr: Buffer<u32>,
    pub(crate) row_idx: Buffer<u32>,
    pub(crate) dest: Buffer<u32>,
}

impl InversePattern {
    /// Check and upload: `col_ptr` has n_block_cols + 1 non-decreasing entries ending at the
    /// number of entries, the rows of each column are strictly ascending and below
    /// n_block_cols, and `dest` is a permutation of 0..entries (every block of N written by
    /// exactly one column). Anything else is an [`Error::InvalidMatrix`].
    pub fn upload<B: super::VectorOps + ?Sized>(
        backend: &B,
        col_ptr: &[u32],
        row_idx: &[u32],
        dest: &[u32],
    ) -> Result<Self> {
        let bad = |m: String| Error::InvalidMatrix(format!("inverse pattern: {m}"));
        let n_block_cols = col_ptr
            .len()
            .checked_sub(1)
            .ok_or_else(|| bad("empty column pointer array".into()))?;
        if col_ptr[0] != 0 || col_ptr.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad(
                "column pointers must start at 0 and never decrease".into()
            ));
        }
        let entries = row_idx.len();
        if col_ptr[n_block_cols] as usize != entries || dest.len() != entries {
            return Err(bad(format!(
                "last column pointer {}, {} rows and {} destinations disagree",
                col_ptr[n_block_cols],
                entries,
                dest.len()
            )));
        }
        for j in 0..n_block_cols {
            let rows = &row_idx[col_ptr[j] as usize..col_ptr[j + 1] as usize];
            if rows.windows(2).any(|w| w[0] >= w[1])
                || rows.iter().any(|&r| r as usize >= n_block_cols)
            {
                return Err(bad(format!(
                    "rows of block column {j} are not ascending inside 0..{n_block_cols}"
                )));
            }
        }
        let mut seen = vec![false; entries];
        for &d in dest {
            match seen.get_mut(d as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(bad(format!(
                        "destination {d} repeated or outside 0..{entries}"
                    )))
                }
            }
        }
        Ok(Self {
            n_block_cols,
            col_ptr: backend.upload(col_ptr)?,
            row_idx: backend.upload(row_idx)?,
            dest: backend.upload(dest)?,
        })
    }
    /// Number of block columns (and rows) of N.
    pub fn n_block_cols(&self) -> usize {
        self.n_block_cols
    }
    /// Number of blocks of N.
    pub fn n_blocks(&self) -> usize {
        self.row_idx.len()
    }
    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.col_ptr.bytes() + self.row_idx.bytes() + self.dest.bytes()
    }
}

/// The Incomplete Poisson preconditioner of a constant-coefficient 5/7-point stencil on an
/// `nx x ny x nz` grid, applied matrix-free by the `ip_stencil` kernels: only the three
/// off-diagonal weights w = -a_axis / a_center are stored (\[Ament10\] eq. (29), see `ip.cl`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IpStencil<T> {
    /// Grid points per axis (x fastest).
    pub dims: [usize; 3],
    /// Weights w_x, w_y, w_z of the x, y and z neighbours.
    pub weights: [T; 3],
}

impl<T> IpStencil<T> {
    /// Number of unknowns nx * ny * nz.
    pub fn n(&self) -> usize {
        self.dims.iter().product()
    }
}

/// The coefficients of a constant-coefficient 5/7-point stencil matrix on an `nx x ny x nz`
/// grid (Dirichlet neighbours eliminated, zero coefficients not stored), which the
/// `ip_stencil_check` kernel compares a CSR matrix with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StencilCoefficients<T> {
    /// Grid points per axis (x fastest).
    pub dims: [usize; 3],
    /// The diagonal entry.
    pub center: T,
    /// The x, y and z neighbour coefficients.
    pub neighbours: [T; 3],
}

/// The PCG coefficients and vectors of [`PrecondOps::ip_pcg_update`]: x += alpha p,
/// r_next = r - alpha Ap, z = M^-1 r_next, p = z + beta p.
#[derive(Debug)]
pub struct PcgStepVectors<'a, T> {
    /// Step length alpha.
    pub alpha: T,
    /// Direction coefficient beta.
    pub beta: T,
    /// The iterate, updated in place.
    pub x: &'a mut Buffer<T>,
    /// The residual before the step (read at the neighbours of every row).
    pub r: &'a Buffer<T>,
    /// The residual after the step (a buffer other than `r`).
    pub r_next: &'a mut Buffer<T>,
    /// The search direction, updated in place.
    pub p: &'a mut Buffer<T>,
    /// A p.
    pub ap: &'a Buffer<T>,
}

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
    /// A pattern laid out on the device by [`PrecondOps::afsai_compact`] and
    /// [`PrecondOps::fsai_transpose`] (rows ascending, diagonal last, `gt_pos` a permutation
    /// by construction); `row_ptr_host` is the host copy of `row_ptr`, for the batches.
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

/// The kernel that grows the adaptive FSAI pattern ([`PrecondOps::afsai_grow`]); both give the
/// same pattern bit for bit (the same arithmetic in the same order as the host's
/// `afsai_row`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfsaiGrowKernel {
    /// `afsai_grow`: one work-item per row, running the multiple-arrays merge through a binary
    /// heap; its Cholesky factor, heap and cursors live in device scratch
    /// ([`AfsaiGrowth::scalars_per_row`], [`AfsaiGrowth::indices_per_row`] per row). Any cap.
    Row,
    /// `afsai_grow_team`: a team of 32 work-items per row, one merge list per work-item (the
    /// smallest current column found across the team, the equal columns summed in list order),
    /// the Cholesky factor of the row in local memory, extended and solved by the team's first
    /// work-item. No device scratch; cap <= [`AFSAI_TEAM_CAP`] and a work-group of at least 32.
    Team,
}

impl AfsaiGrowKernel {
    /// The kernel's name (the report's `growth_kernel`).
    pub fn name(self) -> &'static str {
        match self {
            AfsaiGrowKernel::Row => "afsai_grow",
            AfsaiGrowKernel::Team => "afsai_grow_team",
        }
    }

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

impl std::str::FromStr for AfsaiGrowKernel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "row" | "afsai_grow" => Ok(AfsaiGrowKernel::Row),
            "team" | "afsai_grow_team" => Ok(AfsaiGrowKernel::Team),
            other => Err(Error::param(
                "afsai_grow_kernel",
                format!("`{other}` is not one of row, team"),
            )),
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

/// Check `isai_solve`: factor and pattern of the same size, `out` sized for every block of N.
pub(crate) fn check_isai<T: Scalar>(
    t: &BlockTriangular<T>,
    pattern: &InversePattern,
    out: &Buffer<T>,
) -> Result<()> {
    t.check()?;
    if pattern.n_block_cols != t.n_block_rows {
        return Err(Error::dims(
            "isai_solve: pattern block columns vs factor block rows",
            t.n_block_rows,
            pattern.n_block_cols,
        ));
    }
    let s = t.block_size;
    check_len(
        "isai_solve: pattern column pointers",
        &pattern.col_ptr,
        pattern.n_block_cols + 1,
    )?;
    check_len(
        "isai_solve: destinations",
        &pattern.dest,
        pattern.n_blocks(),
    )?;
    check_len(
        "isai_solve: output (blocks * s * s)",
        out,
        pattern.n_blocks() * s * s,
    )
}

/// Check the `ip_stencil` kernels: the grid fits in 32-bit indices, r and z hold nx*ny*nz.
pub(crate) fn check_ip_stencil<T: Scalar>(
    st: &IpStencil<T>,
    r: &Buffer<T>,
    z: &Buffer<T>,
) -> Result<()> {
    let n = check_ip_grid(st.dims)?;
    check_len("ip_stencil: r length", r, n)?;
    check_len("ip_stencil: z length", z, n)
}

/// Check `ip_stencil_quad`: the grid, v of its length.
pub(crate) fn check_ip_quad<T: Scalar>(st: &IpStencil<T>, v: &Buffer<T>) -> Result<()> {
    check_len("ip_stencil_quad: v length", v, check_ip_grid(st.dims)?)
}

/// The number of points of an `ip_stencil` grid, checked to be positive and below 2^31 (the
/// kernels' chunk bounds, up to n plus the number of groups, stay below 2^32).
pub(crate) fn check_ip_grid(dims: [usize; 3]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n < 1 << 31 && dims.iter().all(|&d| d > 0))
        .ok_or_else(|| {
            Error::param(
                "grid",
                format!("ip stencil grid {dims:?} is empty or has 2^31 points or more"),
            )
        })
}

/// Check `ip_pcg_update`: the grid, every vector of its length, the slots.
pub(crate) fn check_ip_pcg_update<T: Scalar>(
    st: &IpStencil<T>,
    v: &PcgStepVectors<'_, T>,
    partials: &Partials<T>,
    slots: (Slot, Slot),
) -> Result<usize> {
    let n = check_ip_grid(st.dims)?;
    check_len("ip_pcg_update: x length", v.x, n)?;
    check_len("ip_pcg_update: r length", v.r, n)?;
    check_len("ip_pcg_update: r_next length", v.r_next, n)?;
    check_len("ip_pcg_update: p length", v.p, n)?;
    check_len("ip_pcg_update: ap length", v.ap, n)?;
    if slots.0 == slots.1 {
        return Err(Error::param(
            "ip_pcg_update",
            "the <r, r> and <r, z> slots must differ",
        ));
    }
    partials.check(slots.0, n)?;
    partials.check(slots.1, n)?;
    Ok(n)
}

/// Check `ip_stencil_check`: a CSR matrix of the grid's size, the slot. Returns the CSR arrays
/// (row pointers, column indices, values) and n.
#[allow(clippy::type_complexity)]
pub(crate) fn check_ip_stencil_check<'a, T: Scalar>(
    st: &StencilCoefficients<T>,
    a: &'a DeviceMatrix<T>,
    partials: &Partials<T>,
    slot: Slot,
) -> Result<(&'a Buffer<u32>, &'a Buffer<u32>, &'a Buffer<T>, usize)> {
    let n = check_ip_grid(st.dims)?;
    if a.n_rows() != n || a.n_cols() != n {
        return Err(Error::param(
            "ip_stencil_check",
            format!(
                "the matrix is {} x {}, the grid has {n} points",
                a.n_rows(),
                a.n_cols()
            ),
        ));
    }
    partials.check(slot, n)?;
    match a.format() {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } => Ok((row_ptr, col_idx, values, n)),
        _ => Err(Error::param(
            "ip_stencil_check",
            "the stencil check reads CSR matrices only",
        )),
    }
}

/// Check a block triangular pattern (block size, row pointers from 0 never decreasing and
/// ending at the block count, block columns below the block rows); the number of block rows.
fn check_pattern(block_size: usize, row_ptr: &[u32], col_idx: &[u32]) -> Result<usize> {
    check_block_size(block_size)?;
    let n_block_rows = row_ptr
        .len()
        .checked_sub(1)
        .ok_or_else(|| Error::InvalidMatrix("block triangular: empty row pointer array".into()))?;
    let bad = |m: String| Error::InvalidMatrix(format!("block triangular: {m}"));
    if row_ptr[0] != 0 || row_ptr.windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("row pointers must start at 0 and never decrease".into()));
    }
    if row_ptr[n_block_rows] as usize != col_idx.len() {
        return Err(bad(format!(
            "last row pointer {} vs {} blocks",
            row_ptr[n_block_rows],
            col_idx.len()
        )));
    }
    if let Some(&c) = col_idx.iter().find(|&&c| c as usize >= n_block_rows) {
        return Err(bad(format!("block column {c} outside 0..{n_block_rows}")));
    }
    Ok(n_block_rows)
}

/// Check the operands of `ip_domain_check` / `ip_assemble` (`m_values`: one per entry of A);
/// A's CSR arrays and n.
#[allow(clippy::type_complexity)]
pub(crate) fn check_ip_assemble<'a, T: Scalar>(
    a: &'a DeviceMatrix<T>,
    m_values: Option<&Buffer<T>>,
    partials: &Partials<T>,
    slot: Slot,
) -> Result<(&'a Buffer<u32>, &'a Buffer<u32>, &'a Buffer<T>, usize)> {
    let n = a.n_rows();
    if a.n_cols() != n {
        return Err(Error::dims("ip_assemble: square matrix", n, a.n_cols()));
    }
    partials.check(slot, n)?;
    if let Some(m) = m_values {
        check_len("ip_assemble: M values (one per entry of A)", m, a.nnz())?;
    }
    match a.format() {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } if a.ranks() == 1 => Ok((row_ptr, col_idx, values, n)),
        _ => Err(Error::param(
            "ip_assemble",
            "the IP assembly reads A in CSR on one rank",
        )),
    }
}

/// Block sizes the kernels support: 1..=[`MAX_BLOCK_SIZE`].
pub(crate) fn check_block_size(s: usize) -> Result<()> {
    if s == 0 || s > MAX_BLOCK_SIZE {
        return Err(Error::param(
            "block_size",
            format!("block size {s} is outside 1..={MAX_BLOCK_SIZE}"),
        ));
    }
    Ok(())
}

/// Kernels used by the preconditioners.
#[enum_dispatch]
pub trait PrecondOps: KrylovOps {
    /// Kernel `diag_scale` (Jacobi): y_i = d_i x_i.
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()>;

    /// Kernel `diag_scale_dot`: y_i = d_i x_i with the partial <x, y> into `slot` (Jacobi
    /// applied inside pipelined PCG: q = M^-1 Ap and <Ap, q> in one pass).
    fn diag_scale_dot<T: Scalar>(
        &self,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        reference::diag_scale_dot(self, d, x, y, partials, slot)
    }

    /// Kernel `block_diag_scale` (point-block Jacobi): y_I = D_I^-1 x_I for every block row I,
    /// with `inv_blocks` holding the s x s inverted blocks column-major.
    fn block_diag_scale<T: Scalar>(
        &self,
        block_size: usize,
        inv_blocks: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()>;

    /// Kernel `bsr_trsv_sweep`: one block-Jacobi sweep of the triangular system T x = b
    /// (\[Ma21a\] eq. (10) for U, eq. (11) for L; Algorithm 6 is one launch):
    /// x_new_I = D_I^-1 (b_I - sum_{J != I} T_IJ x_old_J), with x_old = 0 when `x_old` is `None`.
    fn bsr_trsv_sweep<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        b: &Buffer<T>,
        x_old: Option<&Buffer<T>>,
        x_new: &mut Buffer<T>,
    ) -> Result<()>;

    /// Kernel `bsr_trsv_level`: the block rows `level_rows[level]` of an exact level-scheduled
    /// solve of T x = b, in place: x_I = D_I^-1 (b_I - sum_{J != I} T_IJ x_J). Every row J read
    /// must belong to an earlier level.
    fn bsr_trsv_level<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        level_rows: &Buffer<u32>,
        level: Range<usize>,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
    ) -> Result<()>;

    /// Kernel `bilu0_scatter` (BILU(0) factored on the device, `kernels-cl/bilu.cl`): A, in
    /// CSR, written into the blocks of `l`'s strict lower and `u`'s strict upper patterns
    /// (their `values`) and the diagonal blocks `diag` (s*s per block row); an entry whose
    /// block is in neither pattern is dropped (block-Jacobi's couplings). The patterns' block
    /// columns must ascend within each row.
    fn bilu0_scatter<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        diag: &mut Buffer<T>,
    ) -> Result<()>;

    /// Kernel `bilu0_sweep`: one fixed-point sweep of the BILU(0) factorization (Chow and
    /// Patel, block form; equations in `kernels-cl/bilu.cl`): `l`'s blocks, `u`'s blocks and
    /// its inverted diagonal from A's parts `a` and the previous sweep's factors `old` (`None`:
    /// the first sweep, from L = 0). With `report`, `bad_row[0]` = min(`bad_row[0]`, I) for
    /// every block row I whose U_II is singular or whose new blocks are not finite.
    fn bilu0_sweep<T: Scalar>(
        &self,
        a: &BiluParts<'_, T>,
        old: Option<&BiluParts<'_, T>>,
        report: bool,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        bad_row: &mut Buffer<u32>,
    ) -> Result<()>;

    /// Kernel `ip_domain_check` (Incomplete Poisson assembled on the device,
    /// `kernels-cl/ip_assemble.cl`): the count of A's rows outside IP's domain (no positive
    /// finite diagonal, a positive or non-finite off-diagonal entry, a transpose entry missing
    /// or more than 64 ulps away) as partials into `slot`. A must be in CSR on one rank.
    fn ip_domain_check<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()>;

    /// Kernel `ip_assemble`: the IP matrix K K^T (K = I - L D^-1) on A's pattern, or with
    /// `scaled` the IP of D^-1/2 A D^-1/2 scaled back, C D^-1 C^T (C = I - D^-1 L), into
    /// `m_values` (one value per stored entry of A, the host assembly's bits), and the count
    /// of rows with a non-finite entry as partials into `slot`. A must be in CSR on one rank
    /// and pass [`PrecondOps::ip_domain_check`].
    fn ip_assemble<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        scaled: bool,
        m_values: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()>;

    /// Kernel `isai_solve` (block-ISAI setup, \[Ma21b\] Algorithm 1): the blocks of N ~ T^-1 on
    /// `pattern`, one small block triangular system T[P_j, P_j] N[P_j, j] = E_j per block column
    /// j, forward for a lower factor, backward for an `upper` one, written into `out` (the
    /// values of N in block CSR, s*s per block, at the pattern's destinations).
    fn isai_solve<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        upper: bool,
        pattern: &InversePattern,
        out: &mut Buffer<T>,
    ) -> Result<()>;

    /// Kernel `fsai_rows` (static FSAI setup, \[Bernaschi19\]): for the rows of batch `batch`, row i
    /// of G from A[P_i, P_i] y = e_last by Cholesky, G(i, P_i) = y / sqrt(y_last), written to
    /// G and through the pattern's positions to G^T; a non-SPD system writes NaN into the row.
    /// One work-item per row, or on the GPU backends a team of 32 per row for the batches of
    /// long rows ([`FSAI_TEAM_MIN_M`], kernel `fsai_rows_team`): the same results bit for bit.
    /// A must be in CSR.
    #[allow(clippy::too_many_arguments)]
    fn fsai_rows<T: Scalar>(
        &self,
        a: &crate::backend::DeviceMatrix<T>,
        pattern: &FsaiPattern,
        batch: usize,
        scratch: &mut Buffer<T>,
        g_values: &mut Buffer<T>,
        gt_values: &mut Buffer<T>,
    ) -> Result<()>;

    /// The kernel [`PrecondOps::afsai_grow`] should run for `growth` on this backend, for a
    /// matrix with `mean_row_len` entries per row on average: the team kernel where it fits,
    /// the device's work-groups and local memory allow it and the rows are long
    /// ([`AFSAI_TEAM_MIN_ROW_LEN`]), unless the backend's
    /// [`Tuning::afsai_grow_kernel`](crate::backend::tuning::Tuning::afsai_grow_kernel) says
    /// otherwise. The
    /// host backend, which keeps each row's work in its own vectors, answers the kernel whose
    /// scratch it needs (none where the team kernel fits).
    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel;

    /// Kernel `afsai_grow` or `afsai_grow_team` (`kernel`; adaptive FSAI pattern, \[Bernaschi19\]
    /// Algorithm 1): for every row i in `rows`, `growth.max_steps` steps of the
    /// Kaporin-gradient growth from G~ = I, every step in the one launch. Writes the
    /// off-diagonal pattern of row i = `rows.start` + t (insertion order, columns < i) at
    /// `out_cols[t * cap ..]` and its length at `out_len[t]` (0xffffffff: a Cholesky pivot
    /// <= 0, A is not SPD): the outputs are the launch's own, `rows.len()` rows long.
    /// `scratch` and `iscratch` hold [`AfsaiGrowKernel::scalars_per_row`] and
    /// [`AfsaiGrowKernel::indices_per_row`] per row of the launch. Both kernels give the same
    /// pattern. A must be in CSR with ascending columns and symmetric.
    #[allow(clippy::too_many_arguments)]
    fn afsai_grow<T: Scalar>(
        &self,
        a: &crate::backend::DeviceMatrix<T>,
        growth: AfsaiGrowth,
        kernel: AfsaiGrowKernel,
        rows: Range<usize>,
        scratch: &mut Buffer<T>,
        iscratch: &mut Buffer<u32>,
        out_cols: &mut Buffer<u32>,
        out_len: &mut Buffer<u32>,
    ) -> Result<()>;

    /// Kernel `afsai_compact` (the adaptive FSAI pattern laid out on the device): for the
    /// rows i = `rows.start` + t of one [`PrecondOps::afsai_grow`] launch (its outputs
    /// `out_cols`, `out_len`), row i of G's pattern is `out_cols[t * cap ..][.. out_len[t]]`
    /// sorted ascending, then i, written at `g_row_ptr[t]` of `g_col_idx`, and `col_count[c]`
    /// grows by one for every column c of the row (`col_count`, n = `col_count.len()` entries,
    /// zeroed before the first launch). `g_row_ptr` must be the prefix sum of `out_len[t] + 1`
    /// from 0; entries that do not fit are skipped, never written out of bounds.
    #[allow(clippy::too_many_arguments)]
    fn afsai_compact<T: Scalar>(
        &self,
        cap: usize,
        rows: Range<usize>,
        out_cols: &Buffer<u32>,
        out_len: &Buffer<u32>,
        g_row_ptr: &Buffer<u32>,
        g_col_idx: &mut Buffer<u32>,
        col_count: &mut Buffer<u32>,
    ) -> Result<()>;

    /// Kernel `afsai_place`: `dst[offset + e] = src[e]` for e < `len` (the batches of
    /// [`PrecondOps::afsai_compact`] joined into G's column indices).
    /// [`Error::DimensionMismatch`] unless `len <= src.len()` and `offset + len <= dst.len()`
    /// < 2^32.
    fn afsai_place<T: Scalar>(
        &self,
        src: &Buffer<u32>,
        len: usize,
        dst: &mut Buffer<u32>,
        offset: usize,
    ) -> Result<()>;

    /// Kernels `fsai_transpose_fill` and `fsai_transpose_sort`: the pattern of G^T (CSR, rows
    /// ascending in every row of G^T) from G's (`g_row_ptr`, `g_col_idx`) and G^T's row
    /// pointers `gt_col_ptr` (the prefix sum of G's column counts), with `gt_pos[e]` the
    /// position in G^T of entry e of G. `cursor` must hold `gt_col_ptr[..n]` on entry (it is
    /// consumed); `gt_entry` is scratch. The result is unique (the same on every backend).
    #[allow(clippy::too_many_arguments)]
    fn fsai_transpose<T: Scalar>(
        &self,
        g_row_ptr: &Buffer<u32>,
        g_col_idx: &Buffer<u32>,
        gt_col_ptr: &Buffer<u32>,
        cursor: &mut Buffer<u32>,
        gt_row_idx: &mut Buffer<u32>,
        gt_entry: &mut Buffer<u32>,
        gt_pos: &mut Buffer<u32>,
    ) -> Result<()>;

    /// Kernel `ip_stencil` (matrix-free Incomplete Poisson, \[Ament10\]): z = M^-1 r.
    fn ip_stencil<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
    ) -> Result<()>;

    /// Kernel `ip_stencil_dot`: z = M^-1 r with the first stage of <r, z> into `slot`.
    fn ip_stencil_dot<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.ip_stencil(st, r, z)?;
        self.dot_partials(r, z, partials, slot)
    }

    /// Kernel `ip_stencil_quad`: the first stage of <v, M^-1 v> into `slot`, nothing stored.
    fn ip_stencil_quad<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()>;

    /// Kernel `ip_pcg_update`: pipelined PCG's update with z = M^-1 r recomputed from r and Ap
    /// at the neighbours instead of recurred (z and M^-1 Ap are never stored):
    /// x += alpha p; r_next = r - alpha Ap; z = M^-1 r_next; p = z + beta p, with the first
    /// stages of <r_next, r_next> into `slots.0` and <r_next, z> into `slots.1`.
    fn ip_pcg_update<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: PcgStepVectors<'_, T>,
        partials: &mut Partials<T>,
        slots: (Slot, Slot),
    ) -> Result<()>;

    /// Kernel `ip_stencil_check`: the first stage of the number of rows of the CSR matrix `a`
    /// that differ from the stencil `st` into `slot` (0 exactly when `a` is the stencil's
    /// matrix). Errors for another format or size.
    fn ip_stencil_check<T: Scalar>(
        &self,
        st: &StencilCoefficients<T>,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()>;
}

/// Check the shapes of the `trsv` kernels.
pub(crate) fn check_trsv<T: Scalar>(
    t: &BlockTriangular<T>,
    b: &Buffer<T>,
    x: &Buffer<T>,
) -> Result<()> {
    t.check()?;
    check_len("triangular solve: b length", b, t.n())?;
    check_len("triangular solve: x length", x, t.n())
}

/// Check the shapes of `block_diag_scale`: x and y of the same length, a multiple of s, and s*s
/// inverted-block entries per block row.
pub(crate) fn check_block_diag_scale<T: Scalar>(
    s: usize,
    inv_blocks: &Buffer<T>,
    x: &Buffer<T>,
    y: &Buffer<T>,
) -> Result<()> {
    check_block_size(s)?;
    let n = x.len();
    if n % s != 0 {
        return Err(Error::param(
            "block_size",
            format!("vector length {n} is not a multiple of the block size {s}"),
        ));
    }
    check_len("block_diag_scale: y length", y, n)?;
    check_len("block_diag_scale: inverted blocks", inv_blocks, n * s)
}

/// Check the shapes of `bsr_trsv_sweep`.
pub(crate) fn check_sweep<T: Scalar>(
    t: &BlockTriangular<T>,
    b: &Buffer<T>,
    x_old: Option<&Buffer<T>>,
    x_new: &Buffer<T>,
) -> Result<()> {
    check_trsv(t, b, x_new)?;
    if let Some(x) = x_old {
        check_len("triangular sweep: x_old length", x, t.n())?;
    }
    Ok(())
}

/// Check a level range against the level-rows array.
pub(crate) fn check_level(level_rows: &Buffer<u32>, level: &Range<usize>) -> Result<()> {
    if level.start > level.end || level.end > level_rows.len() {
        return Err(Error::param(
            "level",
            format!(
                "level rows {}..{} outside 0..{}",
                level.start,
                level.end,
                level_rows.len()
            ),
        ));
    }
    Ok(())
}

/// Default bodies of the fused preconditioner kernels.
pub mod reference {
    use super::*;

    /// `diag_scale_dot` as diag_scale and a dot.
    pub fn diag_scale_dot<B: PrecondOps + ?Sized, T: Scalar>(
        b: &B,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        b.diag_scale(d, x, y)?;
        b.dot_partials(x, y, partials, slot)
    }
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
