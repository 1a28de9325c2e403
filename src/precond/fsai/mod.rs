//! Factored sparse approximate inverse (FSAI), \[Bernaschi19\]: G lower triangular, each row from a
//! small dense SPD system solved on the device (`fsai_rows`), G scaled so that
//! diag(G A G^T) = 1; applied as z = G^T (G r), two SpMVs, the second fused with the dot PCG
//! needs.
//!
//! - Static FSAI ([`Fsai::new`], Section 2): the pattern is the lower triangle of
//!   (prefiltered A)^k, built on the host.
//! - Adaptive FSAI ([`Fsai::adaptive`], Section 2 and Algorithm 1): the pattern of every row
//!   grows from the identity by the largest entries of the Kaporin gradient, on the backend
//!   (kernel `afsai_grow`, every step of every row in one launch per batch of rows; the host
//!   backend runs the same algorithm with rayon), then the rows of G are computed on the final
//!   pattern by the same `fsai_rows` kernel as the static FSAI.
//!
//! A values-only refresh (`update_values`, `refresh.rs`) keeps G's pattern (static or grown)
//! and the device arrays of G and G^T, and runs `fsai_rows` alone on the new values.

mod batches;
pub(crate) mod growth;
mod refresh;

use super::device_a::{csr_matrix, with_kernel_layout, DeviceA};
use super::isai::{layout_of, power_rows};
use super::{Preconditioner, SetupTimes};
use crate::backend::{
    collective_result, AfsaiGrowKernel, AfsaiGrowth, Backend, Buffer, CsrKernel, DeviceFormat,
    DeviceMatrix, FsaiPattern, LongRows, Partials, Slot, SpmvDots,
};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::{Precision, Scalar};
use std::sync::Mutex;
use std::time::Instant;

/// Largest pattern level k of [`Fsai`].
pub const MAX_FSAI_LEVEL: usize = 4;

/// Options of the static [`Fsai`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FsaiOptions {
    /// Pattern level k: G lives on the lower triangle of the pattern of A^k (1..=4).
    pub level: usize,
    /// Prefiltration: entries with |a_ij| < tau sqrt(a_ii a_jj) are left out of the pattern
    /// before the power is taken (0 keeps all).
    pub tau: f64,
    /// Set G up in single precision (A rounded to f32, every setup kernel in f32) and cast it
    /// to the solve precision on the device; no effect on a single-precision solve. The
    /// symmetry check and the prefiltration see A in its own precision.
    pub setup_in_f32: bool,
}

impl Default for FsaiOptions {
    fn default() -> Self {
        Self {
            level: 1,
            tau: 0.0,
            setup_in_f32: false,
        }
    }
}

/// Options of the adaptive FSAI ([`Fsai::adaptive`]); the defaults are the paper's
/// (k_max = 30, s = 1, eps = 1e-3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AfsaiOptions {
    /// The growth: k_max steps of s entries, a row stopping by its rule (by default at
    /// psi_k / psi_0 <= eps).
    pub growth: AfsaiGrowth,
    /// Set G up in single precision (A rounded to f32: the growth, layout and rows in f32)
    /// and cast it to the solve precision on the device; no effect on a single-precision
    /// solve. The symmetry check sees A in its own precision.
    pub setup_in_f32: bool,
    /// At most this many rows per growth launch (`None`: the setup decides from the memory
    /// the G grown so far predicts). Smaller batches hold less scratch and occupy less of a
    /// GPU; the pattern is the same for any value.
    pub max_batch_rows: Option<usize>,
}

impl Default for AfsaiOptions {
    fn default() -> Self {
        Self {
            growth: AfsaiGrowth {
                max_steps: 30,
                per_step: 1,
                eps: 1e-3,
                stop: crate::backend::AfsaiStop::RatioToInitial,
            },
            setup_in_f32: false,
            max_batch_rows: None,
        }
    }
}

/// Which FSAI was built, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FsaiVariant {
    /// Static pattern.
    Static(FsaiOptions),
    /// Adaptive pattern.
    Adaptive(AfsaiOptions),
}

/// Where the setup time went, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct FsaiSetupSplit {
    /// The host part of the pattern: for the static FSAI the symmetry check, prefiltration,
    /// power pattern and the layouts of G and G^T; for the adaptive one the symmetry check,
    /// the read-back of the row lengths and column counts (n entries each) and their prefix
    /// sums.
    pub pattern: f64,
    /// Adaptive FSAI: the Kaporin-gradient growth of every row (device, synchronized; 0 for
    /// the static FSAI).
    pub growth: f64,
    /// Adaptive FSAI: the layout of the grown pattern on the device (rows of G sorted, G^T by
    /// the transpose kernels; synchronized; 0 for the static FSAI).
    pub layout: f64,
    /// Uploads of A, the pattern and the allocations (device).
    pub upload: f64,
    /// Gather, Cholesky and the two triangular solves of every row, written into G and G^T
    /// (device, synchronized; no separate transpose).
    pub rows: f64,
    /// Single-precision setup: G and G^T cast to the solve precision (device, synchronized;
    /// 0 otherwise). Rounding A to f32 counts in `upload` (on the device from the solver's
    /// copy, else on the host before its upload).
    pub cast: f64,
    /// G and G^T laid out for the CSR kernels chosen from their row lengths: the long-row
    /// plans and the stream kernel's row blocks from the host's row pointers, uploaded (and,
    /// only when [`Fsai::with_factor_kernel`] asks for 16-bit column offsets, the column
    /// indices read back and compacted); synchronized, 0 on the host backend.
    pub kernel_layout: f64,
}

impl FsaiSetupSplit {
    /// The device part: growth, layout, uploads, rows, cast and kernel layout.
    fn device_seconds(&self) -> f64 {
        self.growth + self.layout + self.upload + self.rows + self.cast + self.kernel_layout
    }
}

/// Factored sparse approximate inverse preconditioner M^-1 = G^T G for symmetric positive
/// definite matrices, static ([`Fsai::new`]) or adaptive ([`Fsai::adaptive`]).
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::{AfsaiOptions, Fsai, FsaiOptions, Preconditioner};
/// let a = Generator::Poisson2d.generate_with_param::<f64>(8).unwrap().matrix;
/// let host = HostBackend::new();
/// let m = Fsai::new(&host, &a, FsaiOptions::default()).unwrap();
/// assert_eq!(Preconditioner::<HostBackend, f64>::launches_per_apply(&m), 2);
/// let adaptive = Fsai::adaptive(&host, &a, AfsaiOptions::default()).unwrap();
/// assert!(adaptive.density() > m.density());
/// ```
#[derive(Debug)]
pub struct Fsai<T> {
    variant: FsaiVariant,
    n: usize,
    g: DeviceMatrix<T>,
    gt: DeviceMatrix<T>,
    work: Mutex<Buffer<T>>,
    times: SetupTimes,
    split: FsaiSetupSplit,
    density: f64,
    peak_bytes: usize,
    /// Adaptive FSAI: the `afsai_grow` launches (batches of rows) of the setup; 0 otherwise.
    growth_batches: usize,
    /// Adaptive FSAI: the kernel that grew the pattern.
    growth_kernel: Option<AfsaiGrowKernel>,
    fingerprint: u64,
    /// The row pointers of G and of G^T on the host (n + 1 entries each), kept for
    /// [`Preconditioner::update_values`] (the batches of the row solves, the transpose's
    /// cursor).
    host_row_ptrs: Box<(Vec<u32>, Vec<u32>)>,
    /// What the values refreshes keep from the first one on (`None` before one).
    kept: Option<Box<refresh::KeptForRefresh<T>>>,
}

/// The part of the setup before the rows of G: A and the pattern of G and G^T on the device,
/// G's row pointers on the host, the seconds so far and the peak device bytes so far.
struct FactorStage<'d, T> {
    a_dev: DeviceA<'d, T>,
    /// [`CsrMatrix::fingerprint`] of A, hashed once per setup.
    fingerprint: u64,
    pattern: FsaiPattern,
    gt_col_ptr: Buffer<u32>,
    gt_row_idx: Buffer<u32>,
    row_ptr: Vec<u32>,
    /// G^T's row pointers on the host (for its kernel layout).
    gt_row_ptr: Vec<u32>,
    split: FsaiSetupSplit,
    peak_bytes: usize,
    growth_batches: usize,
    growth_kernel: Option<AfsaiGrowKernel>,
}

impl<T: Scalar> Fsai<T> {
    /// Build the static FSAI G for `a` on `backend`.
    ///
    /// Errors: [`Error::NotApplicable`] when `a` is not square and symmetric with a positive
    /// diagonal; [`Error::InvalidParameter`] for a level outside 1..=4 or a negative or NaN tau;
    /// [`Error::SingularPivot`] naming the first row whose dense system is not positive
    /// definite (a Cholesky pivot <= 0: `a` is not SPD); device errors.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>, opts: FsaiOptions) -> Result<Self> {
        Self::new_on(backend, a, None, opts)
    }

    /// [`Fsai::new`] reading A from `device` (the solver's copy of `a`) instead of uploading
    /// its own, when `device` is a CSR upload of `a` on `backend` (same fingerprint); any other
    /// `device` is ignored. Saves the setup's largest upload and its memory (a single-precision
    /// setup rounds `device` into an f32 copy of its own on the device, without an upload).
    pub fn new_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: FsaiOptions,
    ) -> Result<Self> {
        let local = Self::new_on_local(backend, a, device, opts);
        collective_result(backend, "the FSAI setup", local)
    }

    /// The setup on this rank alone.
    fn new_on_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: FsaiOptions,
    ) -> Result<Self> {
        let t0 = Instant::now();
        if !(1..=MAX_FSAI_LEVEL).contains(&opts.level) {
            return Err(Error::param(
                "fsai_level",
                format!("level {} is outside 1..={MAX_FSAI_LEVEL}", opts.level),
            ));
        }
        if opts.tau.is_nan() || opts.tau < 0.0 || !opts.tau.is_finite() {
            return Err(Error::param(
                "fsai_tau",
                format!("{} must be >= 0", opts.tau),
            ));
        }
        check_domain(a)?;
        Self::in_setup_precision(
            backend,
            a,
            device,
            opts.setup_in_f32,
            |device_a| Fsai::<f32>::static_from(backend, a, device_a, opts, t0),
            |device_a| Self::static_from(backend, a, device_a, opts, t0),
        )
    }

    /// The static FSAI of `a` (checked) with G computed in precision T from the device copy of
    /// A that `device_a` makes (given `a`'s fingerprint); `t0` is the setup's start.
    fn static_from<'d, B: Backend, S: Scalar>(
        backend: &B,
        a: &CsrMatrix<S>,
        device_a: impl FnOnce(u64) -> Result<DeviceA<'d, T>>,
        opts: FsaiOptions,
        t0: Instant,
    ) -> Result<Self> {
        let (rp, ci) = filtered_pattern(a, opts.tau)?;
        let rows = power_rows(&rp, &ci, opts.level, |i, j| j <= i);
        let lay = layout_of(&rows, "FSAI pattern entries")?;
        drop(rows);
        let mut gt_pos = vec![0u32; lay.n_blocks()];
        for (e, &d) in lay.dest.iter().enumerate() {
            gt_pos[d as usize] = e as u32;
        }
        let t_pattern = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let fingerprint = a.fingerprint();
        let a_dev = device_a(fingerprint)?;
        let budget = scratch_budget(lay.n_blocks());
        let pattern = FsaiPattern::upload(backend, &lay.row_ptr, &lay.col_idx, &gt_pos, budget)?;
        let gt_col_ptr = backend.upload(&lay.col_ptr)?;
        let gt_row_idx = backend.upload(&lay.row_idx)?;
        backend.synchronize()?;
        let stage = FactorStage {
            fingerprint,
            peak_bytes: a_dev.own_bytes()
                + pattern.bytes()
                + gt_col_ptr.bytes()
                + gt_row_idx.bytes(),
            a_dev,
            pattern,
            gt_col_ptr,
            gt_row_idx,
            growth_batches: 0,
            growth_kernel: None,
            row_ptr: lay.row_ptr,
            gt_row_ptr: lay.col_ptr,
            split: FsaiSetupSplit {
                pattern: t_pattern,
                upload: t1.elapsed().as_secs_f64(),
                ..Default::default()
            },
        };
        Self::from_layout(backend, a, stage, FsaiVariant::Static(opts))
    }

    /// Build the adaptive FSAI G for `a` on `backend` (\[Bernaschi19\] Algorithm 1): the pattern of
    /// every row grows on the backend from the identity by `opts.growth.per_step` entries per
    /// step where the Kaporin gradient is largest, for at most `opts.growth.max_steps` steps
    /// or until its stopping rule `opts.growth.stop` holds; the pattern is laid out on the
    /// backend (G's rows sorted, G^T by a transpose; only n row lengths and n column counts
    /// reach the host), then G is computed on that pattern.
    ///
    /// Errors: [`Error::NotApplicable`] when `a` is not square and symmetric with a positive
    /// diagonal; [`Error::InvalidParameter`] for growth parameters out of range;
    /// [`Error::SingularPivot`] naming the first row whose growth met a non-positive Cholesky
    /// pivot (`a` is not SPD); device errors (out of memory included).
    pub fn adaptive<B: Backend>(backend: &B, a: &CsrMatrix<T>, opts: AfsaiOptions) -> Result<Self> {
        Self::adaptive_on(backend, a, None, opts)
    }

    /// [`Fsai::adaptive`] reading A from `device` (the solver's copy of `a`) instead of
    /// uploading its own, when `device` is a CSR upload of `a` on `backend` (same fingerprint);
    /// any other `device` is ignored (a single-precision setup rounds `device` into an f32 copy
    /// of its own on the device, without an upload).
    pub fn adaptive_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: AfsaiOptions,
    ) -> Result<Self> {
        let local = Self::adaptive_on_local(backend, a, device, opts).map_err(named_afsai);
        collective_result(backend, "the adaptive FSAI setup", local)
    }

    /// The setup on this rank alone.
    fn adaptive_on_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        opts: AfsaiOptions,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let growth = opts.growth;
        growth.validate()?;
        if opts.max_batch_rows == Some(0) {
            return Err(Error::param("afsai_batch_rows", "must be at least 1"));
        }
        check_domain(a)?;
        Self::in_setup_precision(
            backend,
            a,
            device,
            opts.setup_in_f32,
            |device_a| Fsai::<f32>::adaptive_from(backend, a, device_a, opts, t0),
            |device_a| Self::adaptive_from(backend, a, device_a, opts, t0),
        )
    }

    /// A setup in the precision its options ask for: `in_f32` with T = f64 runs `build_f32`
    /// with A rounded on the device from the solver's copy `device` (else on the host) and
    /// widens the factors; otherwise `build` runs in T with the solver's copy or an upload.
    /// Each gets a maker of its device copy of A, given `a`'s fingerprint.
    fn in_setup_precision<'d, B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&'d DeviceMatrix<T>>,
        in_f32: bool,
        build_f32: impl FnOnce(&dyn Fn(u64) -> Result<DeviceA<'static, f32>>) -> Result<Fsai<f32>>,
        build: impl FnOnce(&dyn Fn(u64) -> Result<DeviceA<'d, T>>) -> Result<Self>,
    ) -> Result<Self> {
        if in_f32 && T::PRECISION == Precision::F64 {
            build_f32(&|fingerprint| DeviceA::<f32>::narrowed(backend, a, device, fingerprint))?
                .widen(backend)
        } else {
            build(&|fingerprint| DeviceA::of(backend, a, device, fingerprint))
        }
    }

    /// The adaptive FSAI of `a` (checked) grown and computed in precision T from the device
    /// copy of A that `device_a` makes (given `a`'s fingerprint); `t0` is the setup's start.
    fn adaptive_from<'d, B: Backend, S: Scalar>(
        backend: &B,
        a: &CsrMatrix<S>,
        device_a: impl FnOnce(u64) -> Result<DeviceA<'d, T>>,
        opts: AfsaiOptions,
        t0: Instant,
    ) -> Result<Self> {
        let growth = opts.growth;
        let n = a.n_rows();
        let t_check = t0.elapsed().as_secs_f64();

        let t1 = Instant::now();
        let fingerprint = a.fingerprint();
        let a_dev = device_a(fingerprint)?;
        // The growth, batch by batch, each batch compacted at once (batches.rs): the peak
        // follows the G being built. The fixed budget factor (the most a batch takes): 2 for
        // eq. (17), whose rows mostly take every step (the wider launches grew 5-35% faster on
        // the H200), 1 for the step rule; the backend's tuning factor overrides both.
        let factor = backend
            .tuning()
            .afsai_batch_factor
            .unwrap_or(match growth.stop {
                crate::backend::AfsaiStop::RatioToInitial => 2,
                crate::backend::AfsaiStop::StepReduction => 1,
            });
        let grow_kernel = backend.afsai_grow_kernel(&growth, a.nnz() as f64 / n.max(1) as f64);
        let plan =
            batches::BatchPlan::new::<T>(n, &growth, grow_kernel, factor, opts.max_batch_rows);
        backend.synchronize()?;
        let t_upload = t1.elapsed().as_secs_f64();
        let grown = batches::grow_in_batches(
            backend,
            a_dev.get(),
            growth,
            plan,
            a_dev.own_bytes(),
            not_spd,
        )?;
        let batches::GrownPattern {
            row_ptr,
            g_row_ptr,
            g_col_idx,
            col_count,
            growth_s: t_growth,
            layout_s: mut t_layout,
            host_s,
            peak_bytes: peak_compact,
            batches: growth_batches,
        } = grown;
        let nnz_g = row_ptr[n] as usize;
        let mut t_pattern = t_check + host_s;

        // G^T's row pointers from the column counts (host: n entries).
        let t5 = Instant::now();
        let mut counts = vec![0u32; n];
        backend.read(&col_count, &mut counts)?;
        drop(col_count);
        let col_ptr = prefix_sum(counts.iter().copied(), "aFSAI pattern entries")?;
        drop(counts);
        if col_ptr[n] as usize != nnz_g {
            return Err(Error::PreconditionerSetup(format!(
                "afsai: the columns count {} entries, the rows {nnz_g}",
                col_ptr[n]
            )));
        }
        t_pattern += t5.elapsed().as_secs_f64();

        // G^T's pattern and the position in G^T of every entry of G, on the device.
        let t6 = Instant::now();
        let gt_col_ptr = backend.upload(&col_ptr)?;
        let mut cursor = backend.upload(&col_ptr[..n])?;
        let mut gt_row_idx = backend.alloc::<u32>(nnz_g)?;
        let mut gt_entry = backend.alloc::<u32>(nnz_g)?;
        let mut gt_pos = backend.alloc::<u32>(nnz_g)?;
        let peak_transpose = a_dev.own_bytes()
            + g_row_ptr.bytes()
            + g_col_idx.bytes()
            + gt_col_ptr.bytes()
            + cursor.bytes()
            + gt_row_idx.bytes()
            + gt_entry.bytes()
            + gt_pos.bytes();
        backend.fsai_transpose::<T>(
            &g_row_ptr,
            &g_col_idx,
            &gt_col_ptr,
            &mut cursor,
            &mut gt_row_idx,
            &mut gt_entry,
            &mut gt_pos,
        )?;
        drop((cursor, gt_entry));
        let budget = scratch_budget(nnz_g);
        let pattern =
            FsaiPattern::from_device(backend, g_row_ptr, g_col_idx, gt_pos, &row_ptr, budget)?;
        backend.synchronize()?;
        t_layout += t6.elapsed().as_secs_f64();
        let stage = FactorStage {
            fingerprint,
            a_dev,
            pattern,
            gt_col_ptr,
            gt_row_idx,
            row_ptr,
            gt_row_ptr: col_ptr,
            split: FsaiSetupSplit {
                pattern: t_pattern,
                growth: t_growth,
                layout: t_layout,
                upload: t_upload,
                ..Default::default()
            },
            peak_bytes: peak_compact.max(peak_transpose),
            growth_batches,
            growth_kernel: backend.is_gpu().then_some(grow_kernel),
        };
        Self::from_layout(backend, a, stage, FsaiVariant::Adaptive(opts))
    }

    /// The rows of G on the pattern of `stage` (batched `fsai_rows`), G and G^T resident.
    fn from_layout<B: Backend, S: Scalar>(
        backend: &B,
        a: &CsrMatrix<S>,
        stage: FactorStage<'_, T>,
        variant: FsaiVariant,
    ) -> Result<Self> {
        let FactorStage {
            a_dev,
            fingerprint,
            pattern,
            gt_col_ptr,
            gt_row_idx,
            row_ptr,
            gt_row_ptr,
            mut split,
            peak_bytes: peak_before,
            growth_batches,
            growth_kernel,
        } = stage;
        let n = a.n_rows();
        let nnz_g = pattern.nnz();

        let t1 = Instant::now();
        let mut scratch = backend.alloc::<T>(pattern.max_scratch().max(1))?;
        let mut g_vals = backend.alloc::<T>(nnz_g)?;
        let mut gt_vals = backend.alloc::<T>(nnz_g)?;
        let work = backend.alloc::<T>(n)?;
        backend.synchronize()?;
        split.upload += t1.elapsed().as_secs_f64();
        let peak_bytes = peak_before.max(
            a_dev.own_bytes()
                + pattern.bytes()
                + gt_col_ptr.bytes()
                + gt_row_idx.bytes()
                + scratch.bytes()
                + g_vals.bytes()
                + gt_vals.bytes()
                + work.bytes(),
        );

        let t2 = Instant::now();
        for batch in 0..pattern.batches() {
            backend.fsai_rows(
                a_dev.get(),
                &pattern,
                batch,
                &mut scratch,
                &mut g_vals,
                &mut gt_vals,
            )?;
        }
        check_rows(backend, &g_vals, &row_ptr)?;
        split.rows = t2.elapsed().as_secs_f64();
        drop((a_dev, scratch));

        let (g_row_ptr, g_col_idx) = pattern.into_g_pattern();
        let t3 = Instant::now();
        let g = with_kernel_layout(
            backend,
            csr_matrix(n, g_row_ptr, g_col_idx, g_vals),
            CsrKernel::Auto,
            Some(&row_ptr),
        )?;
        let gt = with_kernel_layout(
            backend,
            csr_matrix(n, gt_col_ptr, gt_row_idx, gt_vals),
            CsrKernel::Auto,
            Some(&gt_row_ptr),
        )?;
        backend.synchronize()?;
        split.kernel_layout = t3.elapsed().as_secs_f64();
        Ok(Self {
            variant,
            n,
            density: nnz_g as f64 / a.nnz().max(1) as f64,
            g,
            gt,
            work: Mutex::new(work),
            times: SetupTimes {
                host_seconds: split.pattern,
                device_seconds: split.device_seconds(),
            },
            split,
            peak_bytes,
            growth_batches,
            growth_kernel,
            fingerprint,
            host_row_ptrs: Box::new((row_ptr, gt_row_ptr)),
            kept: None,
        })
    }

    /// This preconditioner with G and G^T run by the CSR kernel `kernel`, resolved per factor
    /// from its row lengths (the setup lays them out for [`CsrKernel::Auto`]: an upload's
    /// automatic choice without 16-bit column offsets; name [`CsrKernel::StreamCompact`] to
    /// have them, at the price of reading the column indices back). The values are untouched:
    /// a different kernel only sums each row in another order. No effect on backends without
    /// the GPU layouts.
    ///
    /// Errors: device errors (out of memory included).
    pub fn with_factor_kernel<B: Backend>(
        mut self,
        backend: &B,
        kernel: CsrKernel,
    ) -> Result<Self> {
        let t0 = Instant::now();
        self.g = with_kernel_layout(backend, self.g, kernel, None)?;
        self.gt = with_kernel_layout(backend, self.gt, kernel, None)?;
        backend.synchronize()?;
        // Added to the setup's own layout: that one ran too.
        self.split.kernel_layout += t0.elapsed().as_secs_f64();
        let work = self.work.get_mut().map_or(0, |w| w.bytes());
        self.peak_bytes = self
            .peak_bytes
            .max(self.g.device_bytes() + self.gt.device_bytes() + work);
        self.times.device_seconds = self.split.device_seconds();
        Ok(self)
    }

    /// The setup time split into pattern, growth, layout, uploads, the batched row solves, the
    /// cast of a single-precision setup and the factors' kernel layout.
    pub fn setup_split(&self) -> FsaiSetupSplit {
        self.split
    }

    /// Static or adaptive, with the parameters it was built with.
    pub fn variant(&self) -> FsaiVariant {
        self.variant
    }

    /// G and G^T as resident on the backend (CSR, each with the kernel layout the backend
    /// chose from its row lengths: [`DeviceMatrix::csr_kernel`]).
    pub fn factors(&self) -> (&DeviceMatrix<T>, &DeviceMatrix<T>) {
        (&self.g, &self.gt)
    }

    /// Density mu = nnz(G) / nnz(A).
    pub fn density(&self) -> f64 {
        self.density
    }

    /// Device bytes held during the setup at its peak (A, pattern or growth scratch, G, G^T,
    /// work).
    pub fn peak_setup_bytes(&self) -> usize {
        self.peak_bytes
    }

    /// Adaptive FSAI: how many `afsai_grow` launches (batches of rows) the setup took; 0 for
    /// the static FSAI.
    pub fn growth_batches(&self) -> usize {
        self.growth_batches
    }

    /// Adaptive FSAI on a GPU backend: the kernel that grew the pattern
    /// ([`PrecondOps::afsai_grow_kernel`] of the backend); `None` for the static FSAI and on the
    /// host backend (which grows every row in its own vectors, `afsai_row`).
    ///
    /// [`PrecondOps::afsai_grow_kernel`]: crate::backend::PrecondOps::afsai_grow_kernel
    pub fn growth_kernel(&self) -> Option<AfsaiGrowKernel> {
        self.growth_kernel
    }
}

impl Fsai<f32> {
    /// This single-precision setup (of a matrix in precision U, whose fingerprint it holds) as
    /// the preconditioner in precision U: G and G^T cast on the device (`copy_from_f32`), the
    /// f32 values freed.
    fn widen<B: Backend, U: Scalar>(self, backend: &B) -> Result<Fsai<U>> {
        let t0 = Instant::now();
        let factors_f32 = self.g.device_bytes() + self.gt.device_bytes();
        let g = widen_csr(backend, self.g)?;
        let gt = widen_csr(backend, self.gt)?;
        let work = backend.alloc::<U>(self.n)?;
        backend.synchronize()?;
        let mut split = self.split;
        split.cast = t0.elapsed().as_secs_f64();
        // Casting G^T: both f32 patterns, G^T's f32 values and both wide value arrays (G's f32
        // values are freed by then); at the end both wide factors and the work vector.
        let nnz = g.nnz();
        let casting = factors_f32 - nnz * 4 + 2 * nnz * std::mem::size_of::<U>();
        let done = g.device_bytes() + gt.device_bytes() + work.bytes();
        let peak_bytes = self.peak_bytes.max(casting).max(done);
        Ok(Fsai {
            variant: self.variant,
            n: self.n,
            g,
            gt,
            work: Mutex::new(work),
            times: SetupTimes {
                host_seconds: split.pattern,
                device_seconds: split.device_seconds(),
            },
            split,
            density: self.density,
            peak_bytes,
            growth_batches: self.growth_batches,
            growth_kernel: self.growth_kernel,
            fingerprint: self.fingerprint,
            host_row_ptrs: self.host_row_ptrs,
            kept: None,
        })
    }
}

/// A single-precision CSR factor in precision U on the device (pattern and kernel layout
/// moved, values cast; the long rows' scratch sums allocated in U).
fn widen_csr<B: Backend, U: Scalar>(backend: &B, m: DeviceMatrix<f32>) -> Result<DeviceMatrix<U>> {
    let n = m.n_rows;
    let DeviceFormat::Csr {
        row_ptr,
        col_idx,
        values,
        long_rows,
        row_blocks,
    } = m.format
    else {
        return Err(Error::PreconditionerSetup("FSAI factors are CSR".into()));
    };
    let mut wide = backend.alloc::<U>(values.len())?;
    backend.copy_from_f32(&values, &mut wide)?;
    drop(values);
    let long_rows = match long_rows {
        Some(l) => {
            let l = *l;
            Some(Box::new(LongRows {
                chunk_sums: backend.alloc::<U>(l.n_chunks)?,
                min_len: l.min_len,
                rows: l.rows,
                chunk_ptr: l.chunk_ptr,
                chunk_begin: l.chunk_begin,
                chunk_end: l.chunk_end,
                n_rows: l.n_rows,
                n_chunks: l.n_chunks,
            }))
        }
        None => None,
    };
    let mut widened = csr_matrix(n, row_ptr, col_idx, wide);
    if let DeviceFormat::Csr {
        long_rows: lr,
        row_blocks: rb,
        ..
    } = &mut widened.format
    {
        *lr = long_rows;
        *rb = row_blocks;
    }
    Ok(widened)
}

/// `e` with the preconditioner it names changed from "fsai" to "afsai": the adaptive setup
/// shares the static one's checks, and its errors must name the preconditioner that failed.
fn named_afsai(e: Error) -> Error {
    match e {
        Error::NotApplicable {
            preconditioner,
            reason,
        } if preconditioner == "fsai" => Error::NotApplicable {
            preconditioner: "afsai".into(),
            reason,
        },
        Error::SingularPivot {
            preconditioner,
            block_row,
            detail,
        } if preconditioner == "fsai" => Error::SingularPivot {
            preconditioner: "afsai".into(),
            block_row,
            detail,
        },
        Error::PreconditionerSetup(message) if message.starts_with("fsai") => {
            Error::PreconditionerSetup(format!("afsai{}", &message["fsai".len()..]))
        }
        other => other,
    }
}

/// [`Error::NotApplicable`] unless `a` can be symmetric positive definite.
fn check_domain<T: Scalar>(a: &CsrMatrix<T>) -> Result<()> {
    match not_spd_candidate(a) {
        Some(reason) => Err(Error::NotApplicable {
            preconditioner: "fsai".into(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The typed error for a row whose dense system is not positive definite.
fn not_spd(row: usize) -> Error {
    Error::SingularPivot {
        preconditioner: "fsai".into(),
        block_row: row,
        detail: format!(
            "the dense system of row {row} on its pattern is not positive definite (a Cholesky \
             pivot <= 0): the matrix is not SPD"
        ),
    }
}

/// Why `a` cannot be symmetric positive definite (not square, not symmetric up to 64 ulps,
/// a diagonal entry that is missing or not positive, NaN), or `None`.
fn not_spd_candidate<T: Scalar>(a: &CsrMatrix<T>) -> Option<String> {
    super::domain::symmetric_violation(a, |_, _, _| None)
}

/// The off-diagonal pattern of `a` without the entries below tau sqrt(a_ii a_jj), as u32 CSR.
fn filtered_pattern<T: Scalar>(a: &CsrMatrix<T>, tau: f64) -> Result<(Vec<u32>, Vec<u32>)> {
    let max = u32::MAX as usize;
    if a.nnz() > max || a.n_rows() > max {
        return Err(Error::IndexOverflow {
            what: "FSAI: nnz or dimension".into(),
            value: a.nnz().max(a.n_rows()),
            max,
        });
    }
    let d = a.diagonal();
    let mut row_ptr = Vec::with_capacity(a.n_rows() + 1);
    let mut col_idx = Vec::with_capacity(a.nnz());
    row_ptr.push(0u32);
    for i in 0..a.n_rows() {
        let (cols, vals) = a.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            let keep =
                j != i && v.abs().to_f64() >= tau * (d[i].to_f64() * d[j].to_f64()).abs().sqrt();
            if keep {
                col_idx.push(j as u32);
            }
        }
        row_ptr.push(col_idx.len() as u32);
    }
    Ok((row_ptr, col_idx))
}

/// Scalars of `fsai_rows` scratch per batch for a G of `nnz_g` entries (the batches of
/// [`FsaiPattern`]): 8 Mi, or twice the entries.
fn scratch_budget(nnz_g: usize) -> usize {
    (8usize << 20).max(2 * nnz_g)
}

/// The prefix sum 0, v0, v0 + v1, .. of `values`, or [`Error::IndexOverflow`] past u32.
fn prefix_sum(values: impl Iterator<Item = u32>, what: &str) -> Result<Vec<u32>> {
    let (lo, _) = values.size_hint();
    let mut out = Vec::with_capacity(lo + 1);
    let mut acc = 0u32;
    out.push(0);
    for v in values {
        acc = acc.checked_add(v).ok_or_else(|| Error::IndexOverflow {
            what: what.into(),
            value: acc as usize + v as usize,
            max: u32::MAX as usize,
        })?;
        out.push(acc);
    }
    Ok(out)
}

/// [`Error::SingularPivot`] naming the first row of G with a NaN (its dense system was not
/// positive definite), found by [`super::first_non_finite`].
fn check_rows<B: Backend, T: Scalar>(backend: &B, g: &Buffer<T>, row_ptr: &[u32]) -> Result<()> {
    let Some(pos) = super::first_non_finite(backend, g)? else {
        return Ok(());
    };
    let row = row_ptr
        .partition_point(|&p| p as usize <= pos)
        .saturating_sub(1);
    Err(not_spd(row))
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Fsai<T> {
    fn name(&self) -> &'static str {
        match self.variant {
            FsaiVariant::Static(_) => "fsai",
            FsaiVariant::Adaptive(_) => "afsai",
        }
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        let mut t = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("FSAI workspace poisoned".into()))?;
        backend.spmv(&self.g, r, &mut t)?;
        backend.spmv(&self.gt, &t, z)
    }
    fn apply_dot(
        &self,
        backend: &B,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let mut t = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("FSAI workspace poisoned".into()))?;
        backend.spmv(&self.g, r, &mut t)?;
        let dots = SpmvDots {
            yy: None,
            with: [Some((r, slot)), None],
        };
        backend.spmv_dots(&self.gt, &t, z, dots, partials)
    }
    fn launches_per_apply(&self) -> usize {
        2
    }
    fn fuses_dot(&self) -> bool {
        true
    }
    fn fused_reduction_groups(&self, backend: &B) -> usize {
        backend.spmv_reduction_groups(&self.gt)
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        // A GPU's refresh pattern shares G's index arrays (`Buffer::share`); the host
        // backend's holds copies (host memory is never shared).
        let shares_g = match self.g.format() {
            DeviceFormat::Csr { col_idx, .. } => col_idx.owner() != "host",
            _ => false,
        };
        self.g.device_bytes()
            + self.gt.device_bytes()
            + self.work.lock().map_or(0, |w| w.bytes())
            + self.kept.as_ref().map_or(0, |k| k.bytes(shares_g))
    }
    fn params(&self) -> serde_json::Value {
        let variant = match self.variant {
            FsaiVariant::Static(o) => serde_json::json!({
                "variant": "static",
                "level": o.level,
                "tau": o.tau,
                "setup_precision": if o.setup_in_f32 { "f32" } else { "solve" },
            }),
            FsaiVariant::Adaptive(o) => serde_json::json!({
                "variant": "adaptive",
                "max_steps": o.growth.max_steps,
                "step_size": o.growth.per_step,
                "eps": o.growth.eps,
                "setup_precision": if o.setup_in_f32 { "f32" } else { "solve" },
                "stop": match o.growth.stop {
                    crate::backend::AfsaiStop::RatioToInitial => "ratio",
                    crate::backend::AfsaiStop::StepReduction => "step",
                },
            }),
        };
        let mut v = serde_json::json!({
            "nnz_g": self.g.nnz(),
            "density": self.density,
            "peak_setup_bytes": self.peak_bytes,
            "growth_batches": self.growth_batches,
            "growth_kernel": self.growth_kernel.map(AfsaiGrowKernel::name),
            "setup_split_seconds": self.split,
            "g_kernel": self.g.spmv_kernel(),
            "gt_kernel": self.gt.spmv_kernel(),
        });
        if let (Some(obj), serde_json::Value::Object(extra)) = (v.as_object_mut(), variant) {
            obj.extend(extra);
        }
        v
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    /// Keeps the pattern of G (the static FSAI's lower triangle of the power pattern, or the
    /// adaptive FSAI's grown pattern, not grown again), both factors' device arrays and their
    /// kernel layout ([`Fsai::with_factor_kernel`]'s choice), and computes G's values for `a`
    /// on that pattern with the setup's kernel (`fsai_rows`, in the setup's precision): the
    /// positions of G's entries in G^T by the transpose kernels from the kept index arrays,
    /// the rows' dense systems solved, then the new values of G and G^T replace the old ones.
    /// `device` (the solver's CSR copy of `a`) is read instead of an upload when it is one.
    /// For the static FSAI the result equals a fresh [`Fsai::new`] on `a` when the pattern
    /// does not depend on the values (a prefiltration tau of 0, the default).
    ///
    /// Errors (the preconditioner unchanged): `a` of another size
    /// ([`Error::PatternMismatch`]); the setup's errors for a matrix that is no longer SPD:
    /// [`Error::NotApplicable`] (not symmetric, a diagonal entry not positive) or
    /// [`Error::SingularPivot`] naming the first row whose dense system is not positive
    /// definite; device errors.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        self.refresh(backend, a, device)
    }
}
