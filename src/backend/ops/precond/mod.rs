//! Preconditioner kernels: the [`PrecondOps`] trait. Its operands, constants and argument
//! checks live in the files of their kernel families (`trsv`, `isai`, `bilu`, `ip`,
//! `ip_assemble`, `fsai`) and are re-exported here.

use super::krylov::KrylovOps;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{launch_or_reference, KernelRuntime};
use crate::backend::partials::{Partials, Slot};
use crate::backend::DeviceMatrix;
use crate::error::Result;
use crate::scalar::Scalar;
use enum_dispatch::enum_dispatch;
use std::ops::Range;

use super::bilu::BiluParts;
pub use super::fsai::{
    AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, FsaiPattern, AFSAI_MAX_PER_STEP, AFSAI_TEAM_CAP,
    AFSAI_TEAM_MIN_ROW_LEN, FSAI_LANES, FSAI_STRIDE_SHIFT, FSAI_TEAM_MIN_M,
};
pub use super::ip::{IpStencil, PcgStepVectors, StencilCoefficients};
pub use super::isai::InversePattern;
use super::spmv::check_csr_update;
pub use super::spmv::CsrUpdate;
pub use super::trsv::{BlockTriangular, MAX_BLOCK_SIZE};
use crate::backend::buffer::check_len;

/// Kernels used by the preconditioners.
///
/// The default bodies launch each kernel on a GPU backend, once for both runtimes
/// (`launch.rs`), and run the host references otherwise (`reference`, or the host backend's
/// own loops: elsewhere a method without a host reference is
/// [`Error::Unsupported`](crate::Error::Unsupported)). The GPU backends override only
/// `csr_update` (through their SpMV launch plans) and the choice of the aFSAI growth kernel.
#[enum_dispatch]
pub trait PrecondOps: KrylovOps {
    /// Kernel `diag_scale` (Jacobi): y_i = d_i x_i.
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        launch::diag_scale(self.kernel_runtime().gpu("diag_scale")?, d, x, y)
    }

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
        launch_or_reference!(self, diag_scale_dot(d, x, y, partials, slot))
    }

    /// Kernel `csr_update` (CSR; the other formats, and a CSR matrix with long rows updated in
    /// place, run the reference): `out = x + s .* (b - A x)` ([`CsrUpdate::Sweep`]: a
    /// damped-Jacobi sweep) or `out = base + A x` ([`CsrUpdate::Add`]: AMG's prolongation and
    /// correction; `base` `None`: `out` itself). `scratch` (n rows) holds the reference's
    /// intermediate. Each entry rounds as the unfused sequence (the product, `s (b - v)`, then
    /// the sum).
    fn csr_update<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
        scratch: &mut Buffer<T>,
    ) -> Result<()> {
        if let KernelRuntime::Gpu(rt) = self.kernel_runtime() {
            if crate::backend::ops::spmv::launch::csr_update(&rt, a, x, update, out)? {
                return Ok(());
            }
        }
        reference::csr_update(self, a, x, update, out, scratch)
    }

    /// Kernel `block_diag_scale` (point-block Jacobi): y_I = D_I^-1 x_I for every block row I,
    /// with `inv_blocks` holding the s x s inverted blocks column-major.
    fn block_diag_scale<T: Scalar>(
        &self,
        block_size: usize,
        inv_blocks: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        launch::block_diag_scale(
            self.kernel_runtime().gpu("block_diag_scale")?,
            block_size,
            inv_blocks,
            x,
            y,
        )
    }

    /// Kernel `bsr_trsv_sweep`: one block-Jacobi sweep of the triangular system T x = b
    /// (\[Ma21a\] eq. (10) for U, eq. (11) for L; Algorithm 6 is one launch):
    /// x_new_I = D_I^-1 (b_I - sum_{J != I} T_IJ x_old_J), with x_old = 0 when `x_old` is `None`.
    fn bsr_trsv_sweep<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        b: &Buffer<T>,
        x_old: Option<&Buffer<T>>,
        x_new: &mut Buffer<T>,
    ) -> Result<()> {
        launch::bsr_trsv_sweep(
            self.kernel_runtime().gpu("bsr_trsv_sweep")?,
            t,
            b,
            x_old,
            x_new,
        )
    }

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
    ) -> Result<()> {
        launch::bsr_trsv_level(
            self.kernel_runtime().gpu("bsr_trsv_level")?,
            t,
            level_rows,
            level,
            b,
            x,
        )
    }

    /// Kernel `bilu0_scatter` (BILU(0) factored on the device, `kernels/bilu.kc`): A, in
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
    ) -> Result<()> {
        launch::bilu0_scatter(self.kernel_runtime().gpu("bilu0_scatter")?, a, l, u, diag)
    }

    /// Kernel `bilu0_sweep`: one fixed-point sweep of the BILU(0) factorization (Chow and
    /// Patel, block form; equations in `kernels/bilu.kc`): `l`'s blocks, `u`'s blocks and
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
    ) -> Result<()> {
        launch::bilu0_sweep(
            self.kernel_runtime().gpu("bilu0_sweep")?,
            a,
            old,
            report,
            l,
            u,
            bad_row,
        )
    }

    /// Kernel `ip_domain_check` (Incomplete Poisson assembled on the device,
    /// `kernels/ip_assemble.kc`): the count of A's rows outside IP's domain (no positive
    /// finite diagonal, a positive or non-finite off-diagonal entry, a transpose entry missing
    /// or more than 64 ulps away) as partials into `slot`. A must be in CSR on one rank.
    fn ip_domain_check<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        launch::ip_domain_check(
            self.kernel_runtime().gpu("ip_domain_check")?,
            a,
            partials,
            slot,
        )
    }

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
    ) -> Result<()> {
        launch::ip_assemble(
            self.kernel_runtime().gpu("ip_assemble")?,
            a,
            scaled,
            m_values,
            partials,
            slot,
        )
    }

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
    ) -> Result<()> {
        launch::isai_solve(
            self.kernel_runtime().gpu("isai_solve")?,
            t,
            upper,
            pattern,
            out,
        )
    }

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
    ) -> Result<()> {
        launch::fsai_rows(
            self.kernel_runtime().gpu("fsai_rows")?,
            a,
            pattern,
            batch,
            scratch,
            g_values,
            gt_values,
        )
    }

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
    ) -> Result<()> {
        launch::afsai_grow(
            self.kernel_runtime().gpu("afsai_grow")?,
            a,
            growth,
            kernel,
            rows,
            scratch,
            iscratch,
            out_cols,
            out_len,
        )
    }

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
    ) -> Result<()> {
        launch::afsai_compact::<T>(
            self.kernel_runtime().gpu("afsai_compact")?,
            cap,
            rows,
            out_cols,
            out_len,
            g_row_ptr,
            g_col_idx,
            col_count,
        )
    }

    /// Kernel `afsai_place`: `dst[offset + e] = src[e]` for e < `len` (the batches of
    /// [`PrecondOps::afsai_compact`] joined into G's column indices).
    /// [`Error::DimensionMismatch`](crate::error::Error::DimensionMismatch) unless
    /// `len <= src.len()` and `offset + len <= dst.len()` < 2^32.
    fn afsai_place<T: Scalar>(
        &self,
        src: &Buffer<u32>,
        len: usize,
        dst: &mut Buffer<u32>,
        offset: usize,
    ) -> Result<()> {
        launch::afsai_place::<T>(
            self.kernel_runtime().gpu("afsai_place")?,
            src,
            len,
            dst,
            offset,
        )
    }

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
    ) -> Result<()> {
        launch::fsai_transpose::<T>(
            self.kernel_runtime().gpu("fsai_transpose")?,
            g_row_ptr,
            g_col_idx,
            gt_col_ptr,
            cursor,
            gt_row_idx,
            gt_entry,
            gt_pos,
        )
    }

    /// Kernel `ip_stencil` (matrix-free Incomplete Poisson, \[Ament10\]): z = M^-1 r.
    fn ip_stencil<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
    ) -> Result<()> {
        launch::ip_stencil(self.kernel_runtime().gpu("ip_stencil")?, st, r, z)
    }

    /// Kernel `ip_stencil_dot`: z = M^-1 r with the first stage of <r, z> into `slot`.
    fn ip_stencil_dot<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        match self.kernel_runtime() {
            KernelRuntime::Gpu(rt) => launch::ip_stencil_dot(&rt, st, r, z, partials, slot),
            KernelRuntime::Host(_) => {
                self.ip_stencil(st, r, z)?;
                self.dot_partials(r, z, partials, slot)
            }
        }
    }

    /// Kernel `ip_stencil_quad`: the first stage of <v, M^-1 v> into `slot`, nothing stored.
    fn ip_stencil_quad<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        launch::ip_stencil_quad(
            self.kernel_runtime().gpu("ip_stencil_quad")?,
            st,
            v,
            partials,
            slot,
        )
    }

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
    ) -> Result<()> {
        launch::ip_pcg_update(
            self.kernel_runtime().gpu("ip_pcg_update")?,
            st,
            v,
            partials,
            slots,
        )
    }

    /// Kernel `ip_stencil_check`: the first stage of the number of rows of the CSR matrix `a`
    /// that differ from the stencil `st` into `slot` (0 exactly when `a` is the stencil's
    /// matrix). Errors for another format or size.
    fn ip_stencil_check<T: Scalar>(
        &self,
        st: &StencilCoefficients<T>,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        launch::ip_stencil_check(
            self.kernel_runtime().gpu("ip_stencil_check")?,
            st,
            a,
            partials,
            slot,
        )
    }
}

pub(crate) mod launch;

/// Default bodies of the fused preconditioner kernels.
pub mod reference {
    use super::*;

    /// `csr_update` composed: Sweep as spmv and axpby (b - A x into `scratch`), diag_scale and
    /// axpby; Add as spmv and axpby (each entry rounds as the fused kernel's).
    pub fn csr_update<B: PrecondOps + ?Sized, T: Scalar>(
        be: &B,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
        scratch: &mut Buffer<T>,
    ) -> Result<()> {
        check_csr_update(a, x, update, out)?;
        check_len("update: scratch length vs matrix rows", scratch, a.n_rows())?;
        match update {
            CsrUpdate::Sweep { b, s } => {
                // scratch = b - A x (as `residual`'s reference, without its partials).
                be.spmv(a, x, scratch)?;
                be.axpby(T::one(), b, -T::one(), scratch)?;
                be.diag_scale(s, scratch, out)?;
                be.axpby(T::one(), x, T::one(), out)
            }
            CsrUpdate::Add { base: Some(base) } => {
                be.spmv(a, x, out)?;
                be.axpby(T::one(), base, T::one(), out)
            }
            CsrUpdate::Add { base: None } => {
                be.spmv(a, x, scratch)?;
                be.axpby(T::one(), scratch, T::one(), out)
            }
        }
    }

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
