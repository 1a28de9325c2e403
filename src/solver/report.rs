//! What a solve returns.

use crate::backend::CounterSnapshot;

/// Kind of breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BreakdownKind {
    /// BiCGStab: <r_i, r0*> vanished relative to the norms involved.
    Rho,
    /// BiCGStab: <A p_i, r0*> vanished.
    AlphaDenominator,
    /// BiCGStab: omega = 0 with s != 0.
    Omega,
    /// GMRES: h(k+1, k) vanished but the residual did not pass.
    Gmres,
}

/// Why a solve stopped (RELIABILITY.md rows 3-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum StopReason {
    /// The residual passed the tolerance.
    Converged,
    /// The iteration limit was reached.
    MaxIterations,
    /// The residual grew past dtol times the initial one.
    Diverged,
    /// CG found p·Ap <= 0.
    IndefiniteMatrix,
    /// PCG found (r, z) <= 0.
    IndefinitePreconditioner,
    /// A breakdown of the recurrence.
    Breakdown(BreakdownKind),
    /// NaN or Inf appeared in a reduction.
    NanOrInf,
    /// The true residual stopped decreasing above the tolerance: the attainable accuracy of
    /// the precision and the matrix's conditioning is reached (pipelined CG, checked at its
    /// residual replacements).
    Stagnated,
    /// The monitor asked to stop (a [`Control`](crate::solver::Control) callback returned
    /// `ControlFlow::Break`: Ctrl-C in the Python package, a caller's time limit).
    Interrupted,
}

impl StopReason {
    /// True for [`StopReason::Converged`].
    pub fn converged(&self) -> bool {
        matches!(self, StopReason::Converged)
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Converged => f.write_str("converged"),
            StopReason::MaxIterations => f.write_str("max_iterations"),
            StopReason::Diverged => f.write_str("diverged"),
            StopReason::IndefiniteMatrix => f.write_str("indefinite_matrix"),
            StopReason::IndefinitePreconditioner => f.write_str("indefinite_preconditioner"),
            StopReason::Breakdown(k) => write!(f, "breakdown_{k:?}").map(|_| ()),
            StopReason::NanOrInf => f.write_str("nan_or_inf"),
            StopReason::Stagnated => f.write_str("stagnated"),
            StopReason::Interrupted => f.write_str("interrupted"),
        }
    }
}

/// Which tolerance set the convergence threshold max(rtol ||b||, atol) that a converged solve
/// met (PETSc's `KSP_CONVERGED_RTOL` / `KSP_CONVERGED_ATOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum StopCriterion {
    /// ||r|| <= rtol ||b|| (the relative tolerance was the larger bound).
    Relative,
    /// ||r|| <= atol (the absolute tolerance was the larger bound).
    Absolute,
}

impl StopCriterion {
    /// The criterion that sets max(rtol ||b||, atol) for these parameters and ||b|| (ties go to
    /// the relative one).
    pub fn deciding(params: crate::solver::Params, b_norm: f64) -> Self {
        if params.atol > params.rtol * b_norm {
            Self::Absolute
        } else {
            Self::Relative
        }
    }
}

impl std::fmt::Display for StopCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Relative => "rtol",
            Self::Absolute => "atol",
        })
    }
}

/// The result of one solve.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SolveReport {
    /// "cg", "bicgstab" or "gmres".
    pub solver: &'static str,
    /// Pipelined or classical.
    pub variant: crate::solver::Variant,
    /// Iterations performed (Krylov steps for GMRES).
    pub iterations: usize,
    /// Why the solve stopped.
    pub stop_reason: StopReason,
    /// ||b||.
    pub b_norm: f64,
    /// Recursive residual norms: entry 0 is the initial residual, entry i after iteration i.
    pub residual_history: Vec<f64>,
    /// The last recursive residual norm.
    pub recursive_residual: f64,
    /// ||b - A x|| recomputed once at the end.
    pub true_residual: f64,
    /// ||b - A x|| / ||b|| (or the absolute value when b = 0).
    pub relative_true_residual: f64,
    /// Set when the true residual misses the tolerance by more than `accuracy_factor`
    /// although the recurrence claimed convergence (RELIABILITY.md row 13).
    pub accuracy_warning: Option<String>,
    /// Seconds spent setting up the solver (workspace, preconditioner).
    pub setup_seconds: f64,
    /// Seconds spent in this solve (input checks and the final true residual included).
    pub solve_seconds: f64,
    /// Seconds spent in the iteration loop only (what benchmarks divide by the iterations).
    pub loop_seconds: f64,
    /// Counters over the iteration loop (excluding setup and the final true residual).
    pub loop_counters: CounterSnapshot,
    /// Counters over the inner steps only (GMRES: the orthogonalization steps, excluding the
    /// per-restart work; CG and BiCGStab: the same as `loop_counters`).
    pub inner_counters: CounterSnapshot,
    /// Kernel launches per iteration (loop counters / iterations).
    pub launches_per_iteration: f64,
    /// Host transfers per iteration.
    pub transfers_per_iteration: f64,
    /// Times the recursive residual was replaced by the true one (pipelined CG; 0 elsewhere).
    pub residual_replacements: usize,
    /// How the iterations ran: synchronous or device-resident (never `Auto`).
    pub execution: crate::solver::Execution,
    /// The relative tolerance the solve ran with.
    pub rtol: f64,
    /// The absolute tolerance the solve ran with.
    pub atol: f64,
    /// The residual norm it had to reach: max(rtol ||b||, atol).
    pub threshold: f64,
    /// Which tolerance set that threshold, when the solve converged (`None` otherwise: the
    /// stop reason says why it stopped).
    pub criterion: Option<StopCriterion>,
    /// Notes on how the solve ran (e.g. a GMRES restart length capped at n or max_iter).
    pub notes: Vec<String>,
}

impl SolveReport {
    /// Seconds per iteration.
    pub fn seconds_per_iteration(&self) -> f64 {
        if self.iterations == 0 {
            0.0
        } else {
            self.solve_seconds / self.iterations as f64
        }
    }
    /// The last recursive residual relative to ||b||.
    pub fn recursive_relative_residual(&self) -> f64 {
        if self.b_norm > 0.0 {
            self.recursive_residual / self.b_norm
        } else {
            self.recursive_residual
        }
    }
}

/// Progress passed to a monitor callback.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Iteration number (0 = initial residual).
    pub iteration: usize,
    /// Recursive residual norm.
    pub residual: f64,
}
