//! Preconditioners: one trait, applied as z = M^-1 r with backend kernels.
//!
//! Every preconditioner is built once on a backend from a host matrix, applied with backend
//! kernels only (no host transfer), and reports its setup time (host and device parts), the
//! device memory it holds, its parameters and the launches one application costs. The solvers
//! never know which one they hold.

pub mod amg;
mod bilu0;
pub(crate) mod block_dense;
pub(crate) mod device_a;
pub(crate) mod domain;
pub(crate) mod flat_rows;
pub(crate) mod from_device;
pub(crate) mod fsai;
mod identity;
pub mod ilu;
mod incomplete_poisson;
mod isai;
mod jacobi;
mod kind;
mod narrow;
mod point_block_jacobi;

pub use amg::{Amg, AmgOptions, AmgPrecision, AmgSetup, Coarsening, Hierarchy, Smoother};
pub use bilu0::{
    bilu0, drop_couplings, subdomain_of, Bilu0, Bilu0Options, BiluFactors, Factorization, Levels,
    TriangularSolve, AUTO_EXACT_MAX_LEVELS, AUTO_SWEEPS, AUTO_SWEEP_MAX_RELATIVE_ERROR,
};
pub use fsai::{AfsaiOptions, Fsai, FsaiOptions, FsaiSetupSplit, FsaiVariant, MAX_FSAI_LEVEL};
pub use identity::Identity;
pub use ilu::{Ilu, IluMatching, IluOptions, IluOrdering, IluReport};
pub use incomplete_poisson::{
    incomplete_poisson_matrix, incomplete_poisson_matrix_scaled, IncompletePoisson, IpScaling,
};
pub use isai::{power_pattern, BlockIsai, InverseLayout, IsaiSetupSplit, MAX_ISAI_LEVEL};
pub use jacobi::Jacobi;
pub use kind::{build, build_in, build_on, IpOptions, IsaiOptions, PrecondKind, PrecondSpec};
pub use narrow::{Narrowed, PrecondPrecision};
pub use point_block_jacobi::PointBlockJacobi;

use crate::backend::{Backend, Buffer, DeviceMatrix, Partials, PcgStepVectors, Slot};
use crate::error::Error;
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Where a preconditioner's setup time went.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct SetupTimes {
    /// Seconds on the host (pattern work, factorization, level analysis).
    pub host_seconds: f64,
    /// Seconds on the device (uploads, setup kernels), synchronized.
    pub device_seconds: f64,
}

impl SetupTimes {
    /// Host plus device seconds.
    pub fn total(&self) -> f64 {
        self.host_seconds + self.device_seconds
    }
}

/// A preconditioner built on a backend for one matrix.
///
/// The pipelined solvers call [`Preconditioner::apply_dot`] inside their pipeline, so a
/// preconditioner that can fuse the inner product with its application (Jacobi) adds no pass
/// over memory.
pub trait Preconditioner<B: Backend, T: Scalar> {
    /// Short name ("jacobi", "bilu0", ...).
    fn name(&self) -> &'static str;
    /// Dimension of the matrix it was built for.
    fn n(&self) -> usize;
    /// z = M^-1 r (`r` and `z` distinct), backend kernels only.
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()>;
    /// z = M^-1 r with the first stage of <r, z> into `slot`.
    fn apply_dot(
        &self,
        backend: &B,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.apply(backend, r, z)?;
        backend.dot_partials(r, z, partials, slot)
    }
    /// Kernel launches of one [`Preconditioner::apply`] (`apply_dot` adds one unless the
    /// preconditioner fuses the dot, see [`Preconditioner::fuses_dot`]).
    fn launches_per_apply(&self) -> usize;
    /// Whether [`Preconditioner::apply_dot`] costs no launch more than `apply`.
    fn fuses_dot(&self) -> bool {
        false
    }
    /// The groups of partials on which the product [`Preconditioner::apply_dot`] fuses the dot
    /// into runs best ([`crate::backend::SpmvOps::spmv_reduction_groups`] of that matrix; 0:
    /// no product of its own). A solver sizes its partials for the larger of this and its
    /// operator's groups, since every kernel writing them runs on their grid.
    fn fused_reduction_groups(&self, _backend: &B) -> usize {
        0
    }
    /// Whether [`crate::solver::Execution::Auto`] may pick the device-resident mode with this
    /// preconditioner (default true). A preconditioner whose application costs many iterations'
    /// worth of a host transfer, and that converges in few iterations, says false: the
    /// resident mode's batches then enqueue iterations past the stop that cost more than the
    /// transfers they save (AMG: see [`Amg`]'s).
    fn suits_device_resident(&self) -> bool {
        true
    }
    /// Whether CG's [`Variant::Auto`](crate::solver::Variant::Auto) runs the pipelined
    /// recurrences with this preconditioner (else the classical ones). Pipelined PCG makes
    /// more vector passes per iteration than classical PCG to hide a reduction's latency; a
    /// preconditioner whose application costs many such passes (AMG's cycle) says false, and so
    /// does one that is not exactly linear (an f32 hierarchy inside an f64 solve), whose
    /// rounding the pipelined recurrences amplify.
    fn suits_pipelined(&self) -> bool {
        true
    }
    /// Whether the preconditioner provides pipelined PCG's update with z = M^-1 r recomputed
    /// at every row from r and Ap ([`Preconditioner::pcg_update`]) and <v, M^-1 v> without
    /// storing M^-1 v ([`Preconditioner::quad_dot`]): a stencil preconditioner can, which saves
    /// pipelined CG the vectors z and q = M^-1 Ap and their passes over memory.
    fn fuses_pcg_update(&self) -> bool {
        false
    }
    /// The first stage of <v, M^-1 v> into `slot`, M^-1 v not stored (when
    /// [`Preconditioner::fuses_pcg_update`]; an error otherwise).
    fn quad_dot(
        &self,
        _backend: &B,
        _v: &Buffer<T>,
        _partials: &mut Partials<T>,
        _slot: Slot,
    ) -> Result<()> {
        Err(no_fused_step(self.name()))
    }
    /// Pipelined PCG's update x += alpha p, r_next = r - alpha Ap, z = M^-1 r_next,
    /// p = z + beta p with the first stages of <r_next, r_next> into `slots.0` and
    /// <r_next, z> into `slots.1` (when [`Preconditioner::fuses_pcg_update`]; an error
    /// otherwise).
    fn pcg_update(
        &self,
        _backend: &B,
        _vectors: PcgStepVectors<'_, T>,
        _partials: &mut Partials<T>,
        _slots: (Slot, Slot),
    ) -> Result<()> {
        Err(no_fused_step(self.name()))
    }
    /// Setup time, host and device parts.
    fn setup_times(&self) -> SetupTimes;
    /// Seconds spent building it (host plus device).
    fn setup_seconds(&self) -> f64 {
        self.setup_times().total()
    }
    /// Device memory it holds, in bytes.
    fn memory_bytes(&self) -> usize;
    /// Its parameters, for reports (a JSON object).
    fn params(&self) -> serde_json::Value {
        serde_json::json!({})
    }
    /// [`crate::matrix::CsrMatrix::fingerprint`] of the matrix it was built from, if it
    /// depends on the values; the solvers refuse a device matrix with another fingerprint.
    fn built_for(&self) -> Option<u64> {
        None
    }
    /// Take new values of the matrix it was built for: `a` has that matrix's pattern (the
    /// caller checked it, see [`crate::ReusableSolver::update_values`]) and new values; only
    /// the numeric setup runs again, on the kept symbolic setup (patterns, level schedules,
    /// orderings, matchings, aggregates; [`ValuesRefresh::kept`] says what). `device` is the
    /// solver's device copy of `a`, its values already refreshed. Returns the time of this
    /// numeric phase. On an error (a zero pivot, a matrix no longer SPD for FSAI, ...) the
    /// preconditioner is left as it was, built for the old values.
    ///
    /// Every preconditioner of the crate has one; the default (for a preconditioner of the
    /// caller's own) is [`Error::Unsupported`].
    fn update_values(
        &mut self,
        _backend: &B,
        _a: &CsrMatrix<T>,
        _device: Option<&DeviceMatrix<T>>,
    ) -> Result<ValuesRefresh> {
        Err(Error::Unsupported(format!(
            "the preconditioner '{}' has no values-only refresh (build a new solver)",
            self.name()
        )))
    }

    /// Whether [`Preconditioner::update_values`] reads the solver's device matrix (its
    /// `device` argument). When it does not, [`crate::ReusableSolver::update_values`] runs it
    /// before writing the new values (passing `None`) and keeps no device copy of the old
    /// values to put back after an error. The default, `true`, is always safe.
    fn refresh_reads_device_matrix(&self) -> bool {
        true
    }

    /// [`Preconditioner::update_values`] from the new matrix on the device alone: `device`, a
    /// CSR matrix of the pattern it was built for with the new values (the matrix of a solver
    /// of device arrays, [`crate::ReusableSolver::update_device_values`]). Jacobi and AMG set
    /// up on the device have one; the default is [`Error::Unsupported`], and the caller then
    /// gives the matrix on the host to [`Preconditioner::update_values`].
    fn update_values_on_device(
        &mut self,
        _backend: &B,
        _device: &DeviceMatrix<T>,
    ) -> Result<ValuesRefresh> {
        Err(Error::Unsupported(format!(
            "the preconditioner '{}' refreshes from the matrix on the host",
            self.name()
        )))
    }
}

/// What a preconditioner's [`Preconditioner::update_values`] kept and what its numeric phase
/// cost.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ValuesRefresh {
    /// The numeric phase's time, host and device parts.
    pub times: SetupTimes,
    /// What was kept from the first setup ("the pattern of L and U and their levels", ...;
    /// empty when there is no symbolic phase to keep).
    pub kept: String,
}

impl ValuesRefresh {
    /// A refresh that took `times` and kept `kept`.
    pub(crate) fn new(times: SetupTimes, kept: impl Into<String>) -> Self {
        Self {
            times,
            kept: kept.into(),
        }
    }
}

/// The check of every [`Preconditioner::update_values`]: `a` has the size of the matrix the
/// preconditioner `name` was built for (n rows); the caller checked the pattern itself.
pub(crate) fn check_same_size<T: Scalar>(name: &str, n: usize, a: &CsrMatrix<T>) -> Result<()> {
    if a.n_rows() != n || a.n_cols() != n {
        return Err(Error::PatternMismatch(format!(
            "{name}: built for {n} x {n}, new values for {} x {}",
            a.n_rows(),
            a.n_cols()
        )));
    }
    Ok(())
}

/// The error of the fused PCG methods of a preconditioner (named `name`) that does not fuse.
pub(crate) fn no_fused_step(name: &str) -> Error {
    Error::NotApplicable {
        preconditioner: name.into(),
        reason: "it does not fuse the PCG update".into(),
    }
}

/// Position of the first NaN or infinite entry of a device vector, or `None`: one reduction
/// <v, 0> on the device (NaN exactly when v holds a NaN or an infinity, inf * 0, and unlike
/// <v, v> it cannot overflow on large finite entries); the values are read back only when it
/// finds one.
pub(crate) fn first_non_finite<B: Backend, T: Scalar>(
    backend: &B,
    values: &Buffer<T>,
) -> Result<Option<usize>> {
    if values.is_empty() {
        return Ok(None);
    }
    let mut zeros = backend.alloc::<T>(values.len())?;
    backend.fill(&mut zeros, T::zero())?;
    let mut partials = backend.partials::<T>(values.len().max(1), 1)?;
    backend.dot_partials(values, &zeros, &mut partials, Slot(0))?;
    // This rank's values alone: no collective inside a (rank-local) setup.
    if backend.finish_local(&partials)?.get(Slot(0)).is_finite() {
        return Ok(None);
    }
    let host = backend.download(values)?;
    Ok(Some(host.iter().position(|v| !v.is_finite()).unwrap_or(0)))
}
