//! Fused vector updates of the pipelined solvers, and the Krylov-basis operations of GMRES
//! (batched dots, multi-AXPY, fused Gram-Schmidt). Line numbers refer to \[Rupp16\]
//! (Rupp et al.), Algorithms 2, 4 and 6.

use super::spmv::SpmvOps;
mod basis;

use crate::backend::buffer::Buffer;
use crate::backend::launch::{launch_or_reference, KernelRuntime};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::spmv::launch as spmv_launch;
use crate::backend::partials::{Partials, Slot};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
pub use basis::Basis;
use enum_dispatch::enum_dispatch;
use std::ops::Range;

/// Fused solver updates and Krylov-basis kernels.
///
/// The default bodies launch each kernel on a GPU backend, once for both runtimes
/// (`launch.rs`, through [`BackendInfo::kernel_runtime`](crate::backend::BackendInfo)), and
/// run the host references ([`reference`](mod@reference)) otherwise; the methods without a host reference
/// are the host backend's own loops (elsewhere an [`Error::Unsupported`]). The GPU backends
/// override only what goes through their SpMV launch plans and `multi_axpy`'s coefficient
/// transfer.
#[enum_dispatch]
pub trait KrylovOps: SpmvOps {
    /// Allocate a zeroed basis of `cols` vectors of length `n`.
    fn basis<T: Scalar>(&self, n: usize, cols: usize) -> Result<Basis<T>> {
        Basis::from_buffer(self.alloc(n * cols)?, n, cols)
    }

    /// Kernel `cg_update` (Alg. 2 lines 10-12 and the first stage of line 15):
    /// x += alpha p; r -= alpha Ap; p = r + beta p; partial <r, r> into `rr`.
    #[allow(clippy::too_many_arguments)]
    fn cg_update<T: Scalar>(
        &self,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
    ) -> Result<()> {
        launch_or_reference!(self, cg_update(alpha, beta, x, r, p, ap, partials, rr))
    }

    /// Kernel `pcg_update` (preconditioned Alg. 2): x += alpha p; r -= alpha Ap;
    /// z -= alpha q (q = M^-1 Ap, so z stays M^-1 r); p = z + beta p; partials <r, r> into `rr`
    /// and <r, z> into `rz`.
    #[allow(clippy::too_many_arguments)]
    fn pcg_update<T: Scalar>(
        &self,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        z: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        q: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
        rz: Slot,
    ) -> Result<()> {
        launch_or_reference!(
            self,
            pcg_update(alpha, beta, x, r, z, p, ap, q, partials, rr, rz)
        )
    }

    /// Kernel `bicgstab_s_update` (Alg. 4 line 9): every work-group finishes
    /// alpha = <r, r0*> / <Ap, r0*> from the partials in slots `rr0` and `apr0` itself (in
    /// double, in the finish order, exactly as the host finishes them for the x update), then
    /// s = r - alpha Ap and the partial <s, s> into `ss`.
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_s_update<T: Scalar>(
        &self,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<()> {
        launch_or_reference!(self, bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss))
    }

    /// Kernel `bicgstab_update` (Alg. 4 lines 15, 16, 19, 20): x += alpha p^ + omega s^;
    /// r = s - omega As; p = r + beta (p - omega Ap); partials <r, r0*> into `rr0` and
    /// <r, r> into `rr`. `phat`/`shat` are M^-1 p and M^-1 s (right preconditioning); `None`
    /// means p and s themselves.
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_update<T: Scalar>(
        &self,
        alpha: T,
        omega: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        s: &Buffer<T>,
        ap: &Buffer<T>,
        as_: &Buffer<T>,
        phat: Option<&Buffer<T>>,
        shat: Option<&Buffer<T>>,
        r0star: &Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        rr: Slot,
    ) -> Result<()> {
        launch_or_reference!(
            self,
            bicgstab_update(
                alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr
            )
        )
    }

    /// Kernel `basis_spmv_dots` (Alg. 6 line 7): v_i = A z (z = `src`, or v_{i-1} when `None`)
    /// with the partials <v_{i-1}, v_i> into `prev_slot` and <v_i, v_i> into `self_slot` when
    /// given.
    #[allow(clippy::too_many_arguments)]
    fn basis_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        src: Option<&Buffer<T>>,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        prev_slot: Option<Slot>,
        self_slot: Option<Slot>,
    ) -> Result<()> {
        match self.kernel_runtime() {
            KernelRuntime::Gpu(rt) => {
                spmv_launch::basis_spmv_dots(&rt, a, src, basis, i, partials, prev_slot, self_slot)
            }
            KernelRuntime::Host(_) => {
                reference::basis_spmv_dots(self, a, src, basis, i, partials, prev_slot, self_slot)
            }
        }
    }

    /// Kernel `basis_dots` (batched dot, Alg. 6 line 9): partials of <v_j, v_w> for j in `cols`
    /// into slots `first_slot + (j - cols.start)`, one pass over v_w.
    fn basis_dots<T: Scalar>(
        &self,
        basis: &Basis<T>,
        w: usize,
        cols: Range<usize>,
        partials: &mut Partials<T>,
        first_slot: Slot,
    ) -> Result<()> {
        launch_or_reference!(self, basis_dots(basis, w, cols, partials, first_slot))
    }

    /// Kernel `gmres_gram_schmidt` (Alg. 6 lines 9-12, fused): every work-group finishes
    /// R_{j,i} = <v_j, v_i> for j = 1..i-1 from the partials in slots `first_slot + j - 1`, the
    /// first group stores them in column i of `rmat` (column-major, leading dimension `ld`,
    /// R_{j,i} at `(j-1) + (i-1) ld`); then v_i -= sum_j R_{j,i} v_j and the partial <v_i, v_i>
    /// into `norm_slot`, which must not be one of the coefficient slots.
    #[allow(clippy::too_many_arguments)]
    fn gmres_gram_schmidt<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        first_slot: Slot,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
    ) -> Result<()> {
        launch_or_reference!(
            self,
            gmres_gram_schmidt(basis, i, partials, first_slot, norm_slot, rmat, ld)
        )
    }

    /// Kernel `gmres_normalize` (Alg. 6 lines 14-15): every group finishes ||v_i|| from slot
    /// `norm_slot`, the first stores it as R_{i,i}; v_i /= ||v_i|| (skipped when the norm is
    /// zero: happy breakdown); partial <v_0, v_i> into `xi_slot` of `xi_partials`.
    #[allow(clippy::too_many_arguments)]
    fn gmres_normalize<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        i: usize,
        partials: &Partials<T>,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
        xi_partials: &mut Partials<T>,
        xi_slot: Slot,
    ) -> Result<()> {
        launch_or_reference!(
            self,
            gmres_normalize(
                basis,
                i,
                partials,
                norm_slot,
                rmat,
                ld,
                xi_partials,
                xi_slot
            )
        )
    }

    /// Kernel `basis_dots2`: partials of <v_j, v_wa> for j in `cols` into slots 0.. of `pa`
    /// and of <v_j, v_wb> for the first `count_b` of them into slots 0.. of `pb`, one pass over
    /// the columns for both targets.
    #[allow(clippy::too_many_arguments)]
    fn basis_dots2<T: Scalar>(
        &self,
        basis: &Basis<T>,
        wa: usize,
        wb: usize,
        cols: Range<usize>,
        count_b: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        launch::basis_dots2(
            self.kernel_runtime().gpu("basis_dots2")?,
            basis,
            wa,
            wb,
            cols,
            count_b,
            pa,
            pb,
        )
    }

    /// Kernel `gmres_dcgs2_spmv_dots`: one DCGS2 step's product and dots in one launch, the
    /// results of `basis_spmv_dots(a, None, basis, ucol + 1, pb, Some(Slot(ucol - 1)), None)`
    /// followed by `basis_dots2(basis, ucol, ucol + 1, 1..ucol + 1, ucol - 1, pa, pb)` (w = A u
    /// bit for bit; the partials summed in another order, so equal to rounding). `Ok(false)`
    /// (nothing enqueued) where the backend has no such kernel or `a` does not suit it (GPU
    /// backends: CSR without long rows, `gmres_dcgs2_spmv_dots`, or SELL sorted within windows
    /// that divide the block size, `gmres_dcgs2_spmv_dots_sell`, at most `4 WG / 32` columns;
    /// OpenCL takes any number of columns for CSR; SELL as
    /// [`Tuning::dcgs2_sell_fused_for`](crate::backend::tuning::Tuning::dcgs2_sell_fused_for)
    /// says: on CUDA by default); the caller then runs the two kernels.
    fn gmres_dcgs2_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<bool> {
        match self.kernel_runtime() {
            KernelRuntime::Gpu(rt) if self.fuses_dcgs2_spmv_dots(a, ucol) => {
                spmv_launch::gmres_dcgs2_spmv_dots(&rt, a, basis, ucol, pa, pb)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Whether [`KrylovOps::gmres_dcgs2_spmv_dots`] does the fused product and dots for `a` at
    /// `ucol` (it returns true exactly then; false where the backend has no fused kernel).
    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, _a: &DeviceMatrix<T>, _ucol: usize) -> bool {
        false
    }

    /// Kernel `gmres_dcgs2_update` (one Arnoldi step with delayed CGS2; see `gmres.cl`):
    /// u = column `ucol` (once orthogonalized, unnormalized) and w = column `ucol + 1`
    /// (= A M^-1 u); `pa` holds the partials of <v_k, u> (slots 0..ucol-2, columns 1..ucol-1)
    /// and <u, u> (slot ucol-1), `pc` those of <v_k, w> and <u, w>. Reorthogonalizes and
    /// normalizes u in place and orthogonalizes w once (scaled by 1/beta) in one pass; the
    /// coefficients a (count = ucol - 1 of them), c, beta and g go to `coef` at `coef_off`,
    /// followed by the finished sums nu = <u, u> and d = <u, w> (2 count + 4 values). GPU
    /// backends launch two kernels, `gmres_dcgs2_finish` (every sum once, one group per slot)
    /// and `gmres_dcgs2_update`, or, when [`Tuning::dcgs2_small_for`](crate::backend::Tuning::dcgs2_small_for) holds, one: `gmres_dcgs2_update_small`
    /// (every group sums the few partials itself).
    #[allow(clippy::too_many_arguments)]
    fn gmres_dcgs2_update<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        launch::gmres_dcgs2_update(
            self.kernel_runtime().gpu("gmres_dcgs2_update")?,
            self.tuning(),
            basis,
            ucol,
            pa,
            pc,
            coef,
            coef_off,
        )
    }

    /// Kernel `basis_axpy`: v_dst += alpha v_src.
    fn basis_axpy<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        dst: usize,
        src: usize,
        alpha: T,
    ) -> Result<()> {
        launch::basis_axpy(
            self.kernel_runtime().gpu("basis_axpy")?,
            basis,
            dst,
            src,
            alpha,
        )
    }

    /// Kernel `basis_scale`: v_col = alpha v_col.
    fn basis_scale<T: Scalar>(&self, basis: &mut Basis<T>, col: usize, alpha: T) -> Result<()> {
        launch::basis_scale(self.kernel_runtime().gpu("basis_scale")?, basis, col, alpha)
    }

    /// Kernel `basis_load`: v_col = alpha src.
    fn basis_load<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        alpha: T,
    ) -> Result<()> {
        launch::basis_load(
            self.kernel_runtime().gpu("basis_load")?,
            basis,
            col,
            src,
            alpha,
        )
    }

    /// Kernel `basis_load_normalized` (GMRES's restart, Alg. 6 lines 3-4, on the device):
    /// rho = ||src|| finished from the partials of `slot` in the finish order in f64 (what
    /// [`VectorOps::finish`](super::VectorOps::finish) and the solvers' norm compute, so the same
    /// value), stored rounded to `T` at `out[out_off]`, and v_col = T(1 / rho) src. Nothing is
    /// transferred, so a cycle can start without the host (device-resident GMRES).
    #[allow(clippy::too_many_arguments)]
    fn basis_load_normalized<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        partials: &Partials<T>,
        slot: Slot,
        out: &mut Buffer<T>,
        out_off: usize,
    ) -> Result<()> {
        launch::basis_load_normalized(
            self.kernel_runtime().gpu("basis_load_normalized")?,
            basis,
            col,
            src,
            partials,
            slot,
            out,
            out_off,
        )
    }

    /// Kernel `basis_store`: dst = v_col.
    fn basis_store<T: Scalar>(
        &self,
        basis: &Basis<T>,
        col: usize,
        dst: &mut Buffer<T>,
    ) -> Result<()> {
        launch::basis_store(self.kernel_runtime().gpu("basis_store")?, basis, col, dst)
    }

    /// Kernel `multi_axpy` (\[Ma21a\]'s VecAXPYKernel_j): y += sum_k coeffs_k v_{cols.start + k},
    /// one pass over y. The coefficients travel with the launch (one host transfer on GPUs).
    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()>;

    /// Kernel `multi_axpy` with the coefficients read from the device, `coeffs[0..cols.len()]`:
    /// y += sum_k coeffs_k v_{cols.start + k}, the same arithmetic as [`KrylovOps::multi_axpy`].
    /// Nothing is transferred, so a recording (CUDA graph) can hold it while the host rewrites
    /// the coefficient buffer before each replay.
    fn multi_axpy_device<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &Buffer<T>,
    ) -> Result<()> {
        launch::multi_axpy_device(
            self.kernel_runtime().gpu("multi_axpy_device")?,
            y,
            basis,
            cols,
            coeffs,
        )
    }

    /// The first half of [`KrylovOps::gmres_dcgs2_update`] alone: kernel `gmres_dcgs2_finish`
    /// writes the step's sums a_k (`count` of them), c_k, nu and d to `coef` at `coef_off`
    /// (positions 0..count, count..2 count, 2 count + 2 and 2 count + 3; the two between are
    /// left for beta and g). The distributed backend sums those 2 count + 2 values over the
    /// ranks before [`KrylovOps::gmres_dcgs2_apply`], instead of moving the partials.
    #[allow(clippy::too_many_arguments)]
    fn gmres_dcgs2_sums<T: Scalar>(
        &self,
        basis: &Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        launch::gmres_dcgs2_sums(
            self.kernel_runtime().gpu("gmres_dcgs2_sums")?,
            basis,
            ucol,
            pa,
            pc,
            coef,
            coef_off,
        )
    }

    /// The second half of [`KrylovOps::gmres_dcgs2_update`] alone: kernel `gmres_dcgs2_update`
    /// from the sums at `coef_off` (as [`KrylovOps::gmres_dcgs2_sums`] wrote them, or their
    /// sums over the ranks): beta and g to `coef`, u reorthogonalized and normalized, w
    /// orthogonalized once, in one pass.
    fn gmres_dcgs2_apply<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        launch::gmres_dcgs2_apply(
            self.kernel_runtime().gpu("gmres_dcgs2_apply")?,
            basis,
            ucol,
            coef,
            coef_off,
        )
    }

    /// Kernel `gmres_dcgs2_finish` for the last column of a DCGS2 cycle: the sums of slots
    /// 0..count of `pa` (a = Q^T u) to `coef[coef_off + k]` and of slot `count` (nu = <u, u>)
    /// to `coef[coef_off + 2 count + 2]`, where [`KrylovOps::gmres_dcgs2_update`] keeps them
    /// for a step with `count` final columns (GPU backends: one launch of `count + 1` groups).
    fn gmres_dcgs2_last_sums<T: Scalar>(
        &self,
        pa: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        launch::gmres_dcgs2_last_sums(
            self.kernel_runtime().gpu("gmres_dcgs2_last_sums")?,
            pa,
            count,
            coef,
            coef_off,
        )
    }
}

/// Default bodies of the fused kernels, composed of primitives: the specification the fused
/// kernels of every backend are tested against.
pub mod reference {
    use super::*;
    use crate::backend::partials::sum_slot_in_kernel;

    /// `cg_update` as three axpby and a dot.
    #[allow(clippy::too_many_arguments)]
    pub fn cg_update<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
    ) -> Result<()> {
        b.axpby(alpha, p, T::one(), x)?;
        b.axpby(-alpha, ap, T::one(), r)?;
        b.axpby(T::one(), r, beta, p)?;
        b.dot_partials(r, r, partials, rr)
    }

    /// `pcg_update` as four axpby and two dots.
    #[allow(clippy::too_many_arguments)]
    pub fn pcg_update<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        z: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        q: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
        rz: Slot,
    ) -> Result<()> {
        b.axpby(alpha, p, T::one(), x)?;
        b.axpby(-alpha, ap, T::one(), r)?;
        b.axpby(-alpha, q, T::one(), z)?;
        b.axpby(T::one(), z, beta, p)?;
        b.dot_partials(r, r, partials, rr)?;
        b.dot_partials(r, z, partials, rz)
    }

    /// `bicgstab_s_update` as a download of the partials, copy, axpby and dot.
    #[allow(clippy::too_many_arguments)]
    pub fn bicgstab_s_update<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<()> {
        let data = b.download(partials.buffer())?;
        let g = partials.groups();
        let alpha = crate::backend::partials::bicgstab_alpha(&data, g, rr0, apr0);
        b.copy(r, s)?;
        b.axpby(-alpha, ap, T::one(), s)?;
        b.dot_partials(s, s, partials, ss)
    }

    /// `bicgstab_update` as axpby chains and dots.
    #[allow(clippy::too_many_arguments)]
    pub fn bicgstab_update<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        alpha: T,
        omega: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        s: &Buffer<T>,
        ap: &Buffer<T>,
        as_: &Buffer<T>,
        phat: Option<&Buffer<T>>,
        shat: Option<&Buffer<T>>,
        r0star: &Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        rr: Slot,
    ) -> Result<()> {
        match phat {
            Some(ph) => b.axpby(alpha, ph, T::one(), x)?,
            None => b.axpby(alpha, p, T::one(), x)?,
        }
        b.axpby(omega, shat.unwrap_or(s), T::one(), x)?;
        b.copy(s, r)?;
        b.axpby(-omega, as_, T::one(), r)?;
        b.axpby(-omega, ap, T::one(), p)?;
        b.axpby(T::one(), r, beta, p)?;
        b.dot_partials(r, r0star, partials, rr0)?;
        b.dot_partials(r, r, partials, rr)
    }

    fn column<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        basis: &Basis<T>,
        j: usize,
    ) -> Result<Buffer<T>> {
        let mut v = b.alloc(basis.n())?;
        b.basis_store(basis, j, &mut v)?;
        Ok(v)
    }

    /// `basis_spmv_dots` through temporary vectors.
    #[allow(clippy::too_many_arguments)]
    pub fn basis_spmv_dots<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        a: &DeviceMatrix<T>,
        src: Option<&Buffer<T>>,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        prev_slot: Option<Slot>,
        self_slot: Option<Slot>,
    ) -> Result<()> {
        if i == 0 {
            return Err(Error::param("i", "basis_spmv_dots needs i >= 1"));
        }
        let prev = column(b, basis, i - 1)?;
        let mut y = b.alloc(basis.n())?;
        b.spmv(a, src.unwrap_or(&prev), &mut y)?;
        if let Some(s) = prev_slot {
            b.dot_partials(&prev, &y, partials, s)?;
        }
        if let Some(s) = self_slot {
            b.dot_partials(&y, &y, partials, s)?;
        }
        b.basis_load(basis, i, &y, T::one())
    }

    /// `basis_dots` as one dot per column.
    pub fn basis_dots<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        basis: &Basis<T>,
        w: usize,
        cols: Range<usize>,
        partials: &mut Partials<T>,
        first_slot: Slot,
    ) -> Result<()> {
        basis.check_range(&cols)?;
        let vw = column(b, basis, w)?;
        for (k, j) in cols.enumerate() {
            let vj = column(b, basis, j)?;
            b.dot_partials(&vj, &vw, partials, Slot(first_slot.0 + k))?;
        }
        Ok(())
    }

    /// `gmres_gram_schmidt` through a download of the partials, one axpy per column and a dot.
    #[allow(clippy::too_many_arguments)]
    pub fn gmres_gram_schmidt<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        first_slot: Slot,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
    ) -> Result<()> {
        let data = b.download(partials.buffer())?;
        let mut r = b.download(rmat)?;
        for j in 1..i {
            let rji = sum_slot_in_kernel(&data, partials.groups(), Slot(first_slot.0 + j - 1));
            r[(j - 1) + (i - 1) * ld] = rji;
            b.basis_axpy(basis, i, j, -rji)?;
        }
        b.write(rmat, &r)?;
        let vi = column(b, basis, i)?;
        b.dot_partials(&vi, &vi, partials, norm_slot)
    }

    /// `gmres_normalize` through a download of the partials, a scale and a dot.
    #[allow(clippy::too_many_arguments)]
    pub fn gmres_normalize<B: KrylovOps + ?Sized, T: Scalar>(
        b: &B,
        basis: &mut Basis<T>,
        i: usize,
        partials: &Partials<T>,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
        xi_partials: &mut Partials<T>,
        xi_slot: Slot,
    ) -> Result<()> {
        let data = b.download(partials.buffer())?;
        let nrm = sum_slot_in_kernel(&data, partials.groups(), norm_slot).sqrt();
        let mut r = b.download(rmat)?;
        r[(i - 1) + (i - 1) * ld] = nrm;
        b.write(rmat, &r)?;
        if nrm > T::zero() {
            b.basis_scale(basis, i, T::one() / nrm)?;
        }
        let v0 = column(b, basis, 0)?;
        let vi = column(b, basis, i)?;
        b.dot_partials(&v0, &vi, xi_partials, xi_slot)
    }
}

pub(crate) mod launch;
