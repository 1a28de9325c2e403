//! Device-resident pipelined CG and BiCGStab (issue 15): the scalars of an iteration are
//! computed on the device, so the host can enqueue iterations ahead without reading anything
//! back, and the stop test runs on the device (the resident updates set a flag every later
//! update checks first).
//!
//! The device computes exactly what the host would: the sums in double in the finish order (as
//! [`crate::backend::VectorOps::finish`] does), the coefficients with the host's formulas and
//! operation order, no fused multiply-add. The host takes over, from the same partials, at every
//! iteration that is not ordinary (a residual that claims convergence, <r, z> or <p, Ap> not
//! positive, a BiCGStab breakdown, NaN, divergence, the iteration limit), so the iterates, the
//! residual history and the stop are those of the synchronous solve.

use super::vector::VectorOps;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{GpuRuntime, KernelRuntime};
use crate::backend::partials::{Partials, Slot};
use crate::backend::DeviceMatrix;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use enum_dispatch::enum_dispatch;

/// Layout of the state array (doubles).
pub mod layout;

mod checks;
mod launch;

pub(crate) use checks::{
    check_bicgstab_fused, check_bicgstab_slots, check_cg_fused, check_cg_slots, check_s_spmv,
};

/// The device-side state of a device-resident solve: a buffer of `HISTORY + batch` doubles.
#[derive(Debug)]
pub struct ResidentState {
    pub(crate) buffer: Buffer<f64>,
    batch: usize,
}

impl ResidentState {
    /// Allocate the state for batches of up to `batch` iterations.
    pub fn new<B: VectorOps + ?Sized>(backend: &B, batch: usize) -> Result<Self> {
        if batch == 0 {
            return Err(Error::param("batch", "at least one iteration per batch"));
        }
        Ok(Self {
            buffer: backend.alloc(layout::HISTORY + batch)?,
            batch,
        })
    }
    /// Largest batch.
    pub fn batch(&self) -> usize {
        self.batch
    }
    /// The buffer (read it back after a batch).
    pub fn buffer(&self) -> &Buffer<f64> {
        &self.buffer
    }
    /// The buffer, to write the header before a batch.
    pub fn buffer_mut(&mut self) -> &mut Buffer<f64> {
        &mut self.buffer
    }
}

/// A recorded sequence of kernel launches that can be replayed (a CUDA graph).
pub struct Recording {
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) graph: Box<dyn std::any::Any>,
    pub(crate) launches: u64,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recording({} launches)", self.launches)
    }
}

impl Recording {
    /// Kernel launches one replay runs.
    pub fn launches(&self) -> u64 {
        self.launches
    }
}

/// The slots of one pipelined CG iteration that `cg_update_resident` / `pcg_update_resident`
/// finish (CG: `rr`, `ap_ap`, `p_ap`; PCG: `rr`, `p_ap`, `rz`, `ap_q`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgSlots {
    /// <r, r>
    pub rr: Slot,
    /// <Ap, Ap>
    pub ap_ap: Slot,
    /// <p, Ap>
    pub p_ap: Slot,
    /// <r, z> (preconditioned)
    pub rz: Slot,
    /// <Ap, q> (preconditioned)
    pub ap_q: Slot,
}

impl CgSlots {
    /// In the kernel's argument order.
    pub fn all(&self) -> [Slot; 5] {
        [self.rr, self.ap_ap, self.p_ap, self.rz, self.ap_q]
    }

    /// The slots the CG (`with_pc` false) or PCG update finishes, in `cg_sums_resident`'s
    /// argument order: <r, r>, the curvature (<Ap, Ap>, or <Ap, q> with a preconditioner),
    /// <p, Ap>, and <r, z> (<r, r> again without a preconditioner, as the update passes it).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn finished(&self, with_pc: bool) -> [Slot; 4] {
        if with_pc {
            [self.rr, self.ap_q, self.p_ap, self.rz]
        } else {
            [self.rr, self.ap_ap, self.p_ap, self.rr]
        }
    }
}

/// The vectors of `cg_fused_resident`: the iteration's r, p and A p, and where the next ones go
/// (other buffers: the product reads the old vectors at every row's neighbours).
#[derive(Debug)]
pub struct CgFusedVectors<'a, T: Scalar> {
    /// r_i
    pub r: &'a Buffer<T>,
    /// p_i
    pub p: &'a Buffer<T>,
    /// A p_i
    pub ap: &'a Buffer<T>,
    /// r_{i+1} (written)
    pub r_out: &'a mut Buffer<T>,
    /// p_{i+1} (written)
    pub p_out: &'a mut Buffer<T>,
    /// A p_{i+1} (written)
    pub ap_out: &'a mut Buffer<T>,
}

/// The vectors of `bicgstab_fused_resident`: the iteration's vectors, and where the next p and
/// A p go (other buffers: the product reads the old p and A p at every row's neighbours).
#[derive(Debug)]
pub struct BicgstabFusedVectors<'a, T: Scalar> {
    /// r_i (r_{i+1} written in place)
    pub r: &'a mut Buffer<T>,
    /// p_i
    pub p: &'a Buffer<T>,
    /// s_i
    pub s: &'a Buffer<T>,
    /// A p_i
    pub ap: &'a Buffer<T>,
    /// A s_i
    pub as_: &'a Buffer<T>,
    /// r0*
    pub r0star: &'a Buffer<T>,
    /// p_{i+1} (written)
    pub p_out: &'a mut Buffer<T>,
    /// A p_{i+1} (written)
    pub ap_out: &'a mut Buffer<T>,
}

/// The slots of one pipelined BiCGStab iteration that `bicgstab_update_resident` finishes (rho
/// comes from the state, stored there by `bicgstab_s_update_resident`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BicgstabSlots {
    /// <A p_i, r0*>
    pub ap_r0: Slot,
    /// <s_i, s_i>
    pub s_s: Slot,
    /// <A s_i, s_i>
    pub as_s: Slot,
    /// <A s_i, A s_i>
    pub as_as: Slot,
    /// <A s_i, r0*>
    pub as_r0: Slot,
}

impl BicgstabSlots {
    /// In the kernel's argument order.
    pub fn all(&self) -> [Slot; 5] {
        [self.ap_r0, self.s_s, self.as_s, self.as_as, self.as_r0]
    }
}

/// Kernels of the device-resident CG and BiCGStab. The default bodies launch them on a GPU
/// backend, written once for both runtimes (`ops/resident/launch.rs`); the host backend
/// implements the trait itself (the reference the kernels are tested against).
#[enum_dispatch]
pub trait ResidentOps: VectorOps {
    /// Kernel `cg_update_resident`: every work-group finishes the previous iteration's sums of
    /// `slots`, decides as [`cg_scalars_reference`] does and, for an ordinary iteration, runs
    /// `cg_update` with its alpha and beta, writing the partials of `rr` (which must differ from
    /// the read slots); work-group 0 records ||r|| in history entry `hist_index` or sets the
    /// flag. Nothing when the flag is set.
    #[allow(clippy::too_many_arguments)]
    fn cg_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: CgSlots,
        hist_index: usize,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        let rt = resident_runtime(self, &runtime, "cg_update_resident")?;
        let tuning = self.tuning();
        launch::cg_update_resident(
            rt, tuning, state, slots, hist_index, x, r, p, ap, partials, rr,
        )
    }

    /// Whether [`ResidentOps::cg_fused_resident`] runs on `a` (so that a solver allocates its
    /// second vectors only then).
    fn fuses_cg_resident<T: Scalar>(&self, a: &DeviceMatrix<T>) -> bool {
        match self.kernel_runtime() {
            KernelRuntime::Gpu(rt) => {
                self.supports_f64() && launch::fuses_cg(&rt, self.tuning(), a)
            }
            KernelRuntime::Host(_) => false,
        }
    }

    /// Kernel `cg_fused_resident`: one whole unpreconditioned pipelined CG iteration in one
    /// launch. Every work-group finishes the sums of `read` (<r, r>, <Ap, Ap>, <p, Ap>) and
    /// decides as `cg_update_resident` does; for an ordinary iteration it runs `cg_update` with x
    /// in place and the new r and p into `v.r_out` and `v.p_out` (<r, r> into `written[0]`),
    /// then `spmv_dots` of the new p into `v.ap_out` with <Ap, Ap> and <p, Ap> into `written[1]`
    /// and `written[2]`: bit for bit those two kernels. Otherwise (or with the flag set) nothing
    /// is written. The written slots differ from the read ones. `Ok(false)`, nothing enqueued,
    /// where the backend has no such kernel, it is switched off (the tuning's `cg_fused`) or `a`
    /// does not suit it (GPU backends: CSR without long rows); the caller then runs the two.
    #[allow(clippy::too_many_arguments)]
    fn cg_fused_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        a: &DeviceMatrix<T>,
        hist_index: usize,
        x: &mut Buffer<T>,
        v: CgFusedVectors<'_, T>,
        partials: &mut Partials<T>,
        read: [Slot; 3],
        written: [Slot; 3],
    ) -> Result<bool> {
        if !self.fuses_cg_resident(a) {
            return Ok(false);
        }
        let runtime = self.kernel_runtime();
        let rt = resident_runtime(self, &runtime, "cg_fused_resident")?;
        launch::cg_fused_resident(rt, state, a, hist_index, x, v, partials, read, written)?;
        Ok(true)
    }

    /// Start recording the kernel launches that follow instead of running them (CUDA: stream
    /// capture into a graph). `Ok(false)`: this backend does not record, the launches run.
    fn begin_recording(&self) -> Result<bool> {
        Ok(false)
    }

    /// Stop recording: the launches since [`ResidentOps::begin_recording`] as a replayable
    /// recording (not run yet), or `None` when recording failed (nothing ran: launch them
    /// again).
    fn end_recording(&self) -> Result<Option<Recording>> {
        Ok(None)
    }

    /// Run a recording made on this backend.
    fn replay(&self, _recording: &Recording) -> Result<()> {
        Err(Error::Unsupported(
            "this backend has no recordings to replay".into(),
        ))
    }

    /// Kernel `pcg_update_resident`: `cg_update_resident` for preconditioned CG (`pcg_update`,
    /// writing the partials of `rr` and `rz`).
    #[allow(clippy::too_many_arguments)]
    fn pcg_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: CgSlots,
        hist_index: usize,
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
        let runtime = self.kernel_runtime();
        let rt = resident_runtime(self, &runtime, "pcg_update_resident")?;
        let tuning = self.tuning();
        launch::pcg_update_resident(
            rt, tuning, state, slots, hist_index, x, r, z, p, ap, q, partials, rr, rz,
        )
    }

    /// Kernel `bicgstab_s_update_resident`: `bicgstab_s_update`, and work-group 0 stores rho
    /// (the finished <r, r0*>) in the state and copies `ITER` / `R_NORM` to `ITER_CUR` /
    /// `R_NORM_CUR`.
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_s_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        let rt = resident_runtime(self, &runtime, "bicgstab_s_update_resident")?;
        launch::bicgstab_s_update_resident(rt, state, r, ap, s, partials, rr0, apr0, ss)
    }

    /// Kernel `bicgstab_s_spmv_resident`: [`ResidentOps::bicgstab_s_update_resident`] followed
    /// by `spmv_dots(a, s, as_)` with <As, As>, <As, s>, <As, r0*> into `products` (in that
    /// order), in one launch, bit for bit the two kernels' results (the product computes each
    /// s_j it reads as the s-update does). `Ok(false)` (nothing enqueued) where the backend
    /// has no such kernel or `a` does not suit it (GPU backends: CSR without long rows); the
    /// caller then runs the two kernels.
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_s_spmv_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        a: &DeviceMatrix<T>,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        as_: &mut Buffer<T>,
        r0star: &Buffer<T>,
        partials: &mut Partials<T>,
        update_slots: [Slot; 3],
        products: [Slot; 3],
    ) -> Result<bool> {
        let runtime = self.kernel_runtime();
        if runtime.is_host() || a.plain_csr().is_none() {
            return Ok(false);
        }
        let rt = resident_runtime(self, &runtime, "bicgstab_s_spmv_resident")?;
        let fused_next = self.fuses_bicgstab_resident(a);
        launch::bicgstab_s_spmv_resident(
            rt,
            state,
            a,
            r,
            ap,
            s,
            as_,
            r0star,
            partials,
            update_slots,
            products,
            fused_next,
        )?;
        Ok(true)
    }

    /// Whether [`ResidentOps::bicgstab_fused_resident`] runs on `a` (so that a solver allocates
    /// its second vectors only then).
    fn fuses_bicgstab_resident<T: Scalar>(&self, a: &DeviceMatrix<T>) -> bool {
        match self.kernel_runtime() {
            KernelRuntime::Gpu(rt) => {
                self.supports_f64() && launch::fuses_bicgstab(&rt, self.tuning(), a)
            }
            KernelRuntime::Host(_) => false,
        }
    }

    /// Kernel `bicgstab_fused_resident`: an unpreconditioned pipelined BiCGStab update and the
    /// next iteration's A p in one launch. Every work-group finishes the sums of `read`
    /// (<s, s>, <As, s>, <As, As>, <As, r0*>; rho and <Ap, r0*> come from the state, where the
    /// s-update stored them) and decides as `bicgstab_update_resident` does; for an ordinary
    /// iteration it runs `bicgstab_update` with x and r in place and the new p into `v.p_out`
    /// (<r, r0*>, <r, r> into `written[0]`, `written[1]`), then `spmv_dots` of the new p into
    /// `v.ap_out` with <Ap, r0*> into `written[2]`: bit for bit those kernels. Otherwise (or
    /// with the flag set) nothing is written, and the s-updates after it, which check the flag,
    /// write nothing either. The written slots differ from the read ones. `Ok(false)`, nothing
    /// enqueued, where the backend has no such kernel, it is switched off
    /// (the tuning's `bicgstab_fused`) or `a` does not suit it (GPU backends: CSR without long
    /// rows); the caller then runs the update and the product.
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_fused_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        a: &DeviceMatrix<T>,
        hist_index: usize,
        x: &mut Buffer<T>,
        v: BicgstabFusedVectors<'_, T>,
        partials: &mut Partials<T>,
        read: [Slot; 4],
        written: [Slot; 3],
    ) -> Result<bool> {
        if !self.fuses_bicgstab_resident(a) {
            return Ok(false);
        }
        let runtime = self.kernel_runtime();
        let rt = resident_runtime(self, &runtime, "bicgstab_fused_resident")?;
        launch::bicgstab_fused_resident(rt, state, a, hist_index, x, v, partials, read, written)?;
        Ok(true)
    }

    /// Kernel `bicgstab_update_resident`: every work-group finishes the sums of `slots`, decides
    /// as [`bicgstab_scalars_reference`] does and, for an ordinary iteration, runs
    /// `bicgstab_update` with the coefficients (writing the partials of `rr0` and `rr`, which
    /// must differ from `slots`); work-group 0 records ||r_{i+1}|| in history entry
    /// `hist_index` or sets the flag. Nothing when the flag is set.
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: BicgstabSlots,
        hist_index: usize,
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
        let runtime = self.kernel_runtime();
        let rt = resident_runtime(self, &runtime, "bicgstab_update_resident")?;
        launch::bicgstab_update_resident(
            rt, state, slots, hist_index, x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0,
            rr,
        )
    }
}

/// The GPU runtime that runs `operation` for `backend`: [`Error::Unsupported`] on the host
/// runtime (the host backend implements the trait itself) and on a device without fp64 (the
/// state is double; such a device's program holds float stubs of the kernels).
fn resident_runtime<'r, B: ResidentOps + ?Sized>(
    backend: &B,
    runtime: &'r KernelRuntime<'_>,
    operation: &str,
) -> Result<&'r GpuRuntime<'r>> {
    let rt = runtime.gpu(operation)?;
    if !backend.supports_f64() {
        return Err(Error::Unsupported(
            "device-resident iterations need fp64 on the device".into(),
        ));
    }
    Ok(rt)
}

/// What `cg_update_resident` / `pcg_update_resident` decide and record, on host values: the
/// reference the kernels are tested against. `sums` in [`CgSlots::all`] order; the tests and the
/// formulas are those of the synchronous pipelined CG, in its order. Returns alpha and beta when
/// the update runs.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN must not pass: !(x <= t), not x > t
pub fn cg_scalars_reference(
    sums: [f64; 5],
    with_pc: bool,
    hist_index: usize,
    state: &mut [f64],
) -> Option<[f64; 2]> {
    use layout::*;
    if state[FLAG] != 0.0 {
        return None;
    }
    let rr = sums[0];
    let curvature = if with_pc { sums[4] } else { sums[1] };
    let delta = sums[2];
    let gamma = if with_pc { sums[3] } else { rr };
    let rnorm = crate::solver::cg_norm(rr);
    let it = state[ITER_PAR + hist_index % 2] + 1.0;
    let ordinary = rnorm.is_finite()
        && !(rnorm <= state[TARGET])
        && !(rnorm > state[DTOL_R0])
        && it < state[MAX_ITER]
        && delta.is_finite()
        && gamma.is_finite()
        && curvature.is_finite()
        && !(with_pc && gamma <= 0.0)
        && delta > 0.0;
    if !ordinary {
        state[FLAG] = 1.0;
        return None;
    }
    let alpha = gamma / delta;
    let beta = alpha * alpha * curvature / gamma - 1.0;
    state[ALPHA] = alpha;
    state[BETA] = beta;
    state[ITER] = it;
    state[ITER_PAR + (hist_index + 1) % 2] = it;
    state[HISTORY + hist_index] = rnorm;
    Some([alpha, beta])
}

/// What `bicgstab_update_resident` decides and records, on host values: the reference the
/// kernels are tested against. `sums` in [`BicgstabSlots::all`] order, rho from `state[RHO]`;
/// the tests and the formulas are those of the synchronous pipelined BiCGStab
/// (`solver::BiCgStab`), in its order. Returns alpha, omega and beta when the update runs.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN must not pass: !(x <= t), not x > t
pub fn bicgstab_scalars_reference(
    sums: [f64; 5],
    hist_index: usize,
    state: &mut [f64],
) -> Option<[f64; 3]> {
    use layout::*;
    if state[FLAG] != 0.0 {
        return None;
    }
    let rho = state[RHO];
    let [ap_r0, ss, as_s, as_as, as_r0] = sums;
    let norm = crate::solver::cg_norm;
    let usable = rho.is_finite()
        && ap_r0.is_finite()
        && ap_r0 != 0.0
        && !(rho.abs() <= state[EPS2] * state[R_NORM_CUR] * state[R0STAR_NORM])
        && ss.is_finite()
        && as_s.is_finite()
        && as_as.is_finite()
        && as_r0.is_finite()
        && !(norm(ss) <= state[TARGET]);
    let omega = if as_as > 0.0 { as_s / as_as } else { 0.0 };
    let rr = ss - 2.0 * omega * as_s + omega * omega * as_as;
    let rnorm = norm(rr);
    let it = state[ITER_CUR] + 1.0;
    let ordinary = usable
        && omega != 0.0
        && rnorm.is_finite()
        && !(rnorm <= state[TARGET])
        && !(rnorm > state[DTOL_R0])
        && it < state[MAX_ITER];
    if !ordinary {
        state[FLAG] = 1.0;
        return None;
    }
    let coefficients = [rho / ap_r0, omega, -as_r0 / ap_r0];
    [state[ALPHA], state[OMEGA], state[BETA]] = coefficients;
    state[R_NORM] = rnorm;
    state[ITER] = it;
    state[HISTORY + hist_index] = rnorm;
    Some(coefficients)
}
