//! What every solver shares: input checks, the stopping test, the history, the monitor, the
//! final true residual and the report.

use super::params::{Params, Variant};
use super::report::{Progress, SolveReport, StopCriterion, StopReason};
use crate::backend::{
    collective_result, Backend, Buffer, CounterSnapshot, DeviceMatrix, Partials, Slot,
};
use crate::error::{Error, Result};
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use std::time::Instant;

/// An optional per-iteration callback.
pub type Monitor<'m> = Option<&'m mut dyn FnMut(Progress)>;

/// A monitor that can stop the solve: called like a [`Monitor`], it returns
/// `ControlFlow::Break(())` to end the solve after this iteration with
/// [`StopReason::Interrupted`](crate::solver::StopReason::Interrupted) (the iterate so far is
/// kept and reported, as for any other stop). A Ctrl-C handler or a time limit is one.
pub type Control<'m> = Option<&'m mut dyn FnMut(Progress) -> std::ops::ControlFlow<()>>;

/// Run `f` with `monitor` turned into a [`Control`] that never stops the solve (the
/// `solve_with_monitor` entry points are their `solve_with_control` with this).
pub(crate) fn with_monitor<R>(monitor: Monitor<'_>, f: impl FnOnce(Control<'_>) -> R) -> R {
    match monitor {
        Some(m) => f(Some(&mut |p| {
            m(p);
            std::ops::ControlFlow::Continue(())
        })),
        None => f(None),
    }
}

/// Check that the matrix is square, fits the backend (a distributed matrix needs the
/// distributed backend and the other way round) and the preconditioner fits it
/// (RELIABILITY.md row 1).
pub(crate) fn check_operator<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    precond: Option<&dyn Preconditioner<B, T>>,
) -> Result<()> {
    if a.ranks() != backend.ranks() {
        return Err(Error::Distributed(format!(
            "the matrix is distributed over {} rank(s), the backend over {} (build one rank's \
             rows with dist::RankMatrix and solve with dist::DistBackend)",
            a.ranks(),
            backend.ranks()
        )));
    }
    if a.n_rows() != a.n_cols() {
        return Err(Error::dims(
            "matrix must be square: columns vs rows",
            a.n_rows(),
            a.n_cols(),
        ));
    }
    if let Some(m) = precond {
        if m.n() != a.n_rows() {
            return Err(Error::dims(
                "preconditioner size vs matrix rows",
                a.n_rows(),
                m.n(),
            ));
        }
        if let Some(fp) = m.built_for() {
            if fp != a.fingerprint() {
                return Err(Error::PreconditionerMismatch(format!(
                    "the {} preconditioner was built from another matrix (fingerprint {fp:016x}, \
                     this matrix {:016x})",
                    m.name(),
                    a.fingerprint()
                )));
            }
        }
    }
    Ok(())
}

/// The checks of a solver's construction (rows 1, 11) on this rank; the constructor agrees
/// them over the ranks together with its allocations (row 25).
pub(crate) fn check_setup<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    precond: Option<&dyn Preconditioner<B, T>>,
    params: &Params,
) -> Result<()> {
    params.validate()?;
    check_operator(backend, a, precond)
}

/// Check b and x0 (lengths, finiteness: rows 1 and 2) and return ||b||. Costs two dots.
pub(crate) fn check_inputs<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    b: &Buffer<T>,
    x: &Buffer<T>,
    scratch: &mut Partials<T>,
) -> Result<f64> {
    let n = a.n_rows();
    let lengths = if b.len() != n {
        Err(Error::dims(
            "right-hand side length vs matrix rows",
            n,
            b.len(),
        ))
    } else if x.len() != n {
        Err(Error::dims(
            "initial guess length vs matrix rows",
            n,
            x.len(),
        ))
    } else {
        Ok(())
    };
    // Row 25: agreed before the first reduction, which every rank must reach.
    collective_result(
        backend,
        "checking the right-hand side and initial guess lengths",
        lengths,
    )?;
    let mut norms = [0.0; 2];
    for (k, (what, v)) in [("right-hand side", b), ("initial guess", x)]
        .into_iter()
        .enumerate()
    {
        backend.dot_partials(v, v, scratch, Slot(0))?;
        let s = backend.finish(scratch)?.get(Slot(0));
        if !s.is_finite() {
            let host = backend.download(v)?;
            if let Some(index) = crate::scalar::first_non_finite(&host) {
                return Err(Error::NonFinite {
                    what: what.into(),
                    index,
                });
            }
            return Err(Error::NonFinite {
                what: format!("{what} (norm overflows)"),
                index: 0,
            });
        }
        norms[k] = s.sqrt();
    }
    Ok(norms[0])
}

/// The start of every solve: check b and x0, set x = 0 when b = 0 (row 10), and a tracker.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start_solve<'m, B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    b: &Buffer<T>,
    x: &mut Buffer<T>,
    scratch: &mut Partials<T>,
    params: Params,
    monitor: Control<'m>,
) -> Result<Tracker<'m>> {
    // Ranks that stop on different tolerances or limits would wait in different reductions.
    backend.same_across_ranks("the solver parameters", params.fingerprint())?;
    let b_norm = check_inputs(backend, a, b, x, scratch)?;
    if b_norm == 0.0 {
        backend.fill(x, T::zero())?;
    }
    Ok(Tracker::new(params, b_norm, monitor))
}

/// Iteration bookkeeping: history, monitor, stopping test, counters, time.
pub(crate) struct Tracker<'m> {
    params: Params,
    start: Instant,
    pub b_norm: f64,
    pub target: f64,
    r0: f64,
    history: Vec<f64>,
    last: f64,
    monitor: Control<'m>,
    loop_start: CounterSnapshot,
    loop_started: Instant,
    inner: CounterSnapshot,
    inner_start: Option<CounterSnapshot>,
    /// A warning from the solver itself (GMRES: a cycle increased the true residual).
    pub solver_warning: Option<String>,
    /// Residual replacements so far (pipelined CG).
    pub residual_replacements: usize,
    /// Counters when the loop ended early (a final check that is not part of an iteration).
    loop_end: Option<CounterSnapshot>,
    /// The execution mode that ran.
    pub execution: crate::solver::Execution,
    /// Notes for the report (a capped restart length, ...).
    pub notes: Vec<String>,
}

impl<'m> Tracker<'m> {
    pub fn new(params: Params, b_norm: f64, monitor: Control<'m>) -> Self {
        Self {
            params,
            start: Instant::now(),
            b_norm,
            solver_warning: None,
            residual_replacements: 0,
            loop_end: None,
            execution: crate::solver::Execution::Synchronous,
            notes: Vec::new(),
            target: (params.rtol * b_norm).max(params.atol),
            r0: f64::NAN,
            history: Vec::new(),
            last: f64::NAN,
            monitor,
            loop_start: CounterSnapshot::default(),
            loop_started: Instant::now(),
            inner: CounterSnapshot::default(),
            inner_start: None,
        }
    }

    /// Mark the start of the iteration loop (after the setup of the first iteration).
    pub fn start_loop(&mut self, c: CounterSnapshot) {
        self.loop_start = c;
        self.loop_started = Instant::now();
    }

    /// Mark the end of the iteration loop before a final check (like the report's true
    /// residual, it is not counted per iteration).
    pub fn end_loop(&mut self, c: CounterSnapshot) {
        self.loop_end = Some(c);
    }

    /// Mark the start of a stretch of inner steps.
    pub fn start_inner(&mut self, c: CounterSnapshot) {
        self.inner_start = Some(c);
    }

    /// Mark the end of a stretch of inner steps.
    pub fn end_inner(&mut self, c: CounterSnapshot) {
        if let Some(s) = self.inner_start.take() {
            let d = c - s;
            self.inner.launches += d.launches;
            self.inner.transfers += d.transfers;
        }
    }

    /// Record the residual norm after `iteration` and test for a stop. Iteration 0 is the
    /// initial residual.
    pub fn record(&mut self, iteration: usize, residual: f64) -> Option<StopReason> {
        if iteration == 0 {
            self.r0 = residual;
        }
        self.last = residual;
        if self.params.record_history {
            self.history.push(residual);
        }
        let interrupted = self.monitor.as_mut().is_some_and(|m| {
            m(Progress {
                iteration,
                residual,
            })
            .is_break()
        });
        if !residual.is_finite() {
            return Some(StopReason::NanOrInf);
        }
        if residual <= self.target {
            return Some(StopReason::Converged);
        }
        if interrupted {
            return Some(StopReason::Interrupted);
        }
        if iteration > 0 && residual > self.params.dtol * self.r0 {
            return Some(StopReason::Diverged);
        }
        if iteration >= self.params.max_iter {
            return Some(StopReason::MaxIterations);
        }
        None
    }

    /// The tolerance test alone (no recording).
    pub fn passes(&self, residual: f64) -> bool {
        residual <= self.target
    }

    /// Whether a monitor callback is installed.
    pub fn has_monitor(&self) -> bool {
        self.monitor.is_some()
    }

    /// dtol ||r_0|| (the divergence bound; infinite before iteration 0 is recorded).
    pub fn divergence_bound(&self) -> f64 {
        if self.r0.is_nan() {
            f64::INFINITY
        } else {
            self.params.dtol * self.r0
        }
    }

    /// Build the report: compute the true residual once (one launch, one transfer).
    #[allow(clippy::too_many_arguments)]
    pub fn report<B: Backend, T: Scalar>(
        self,
        solver: &'static str,
        variant: Variant,
        iterations: usize,
        stop_reason: StopReason,
        backend: &B,
        a: &DeviceMatrix<T>,
        b: &Buffer<T>,
        x: &Buffer<T>,
        r_scratch: &mut Buffer<T>,
        partials: &mut Partials<T>,
        setup_seconds: f64,
        inner_is_loop: bool,
    ) -> Result<SolveReport> {
        let loop_counters = self.loop_end.unwrap_or_else(|| backend.counters()) - self.loop_start;
        backend.synchronize()?;
        let loop_seconds = self.loop_started.elapsed().as_secs_f64();
        backend.residual(a, x, b, r_scratch, partials, Some(Slot(0)))?;
        let true_residual = backend.finish(partials)?.get(Slot(0)).max(0.0).sqrt();
        let solve_seconds = self.start.elapsed().as_secs_f64();
        let relative_true_residual = if self.b_norm > 0.0 {
            true_residual / self.b_norm
        } else {
            true_residual
        };
        let accuracy_warning = (stop_reason.converged()
            && true_residual > self.params.accuracy_factor * self.target.max(f64::MIN_POSITIVE))
        .then(|| {
            format!(
                "loss of accuracy: the recurrence claimed convergence but ||b - Ax|| = {true_residual:.3e} exceeds {} x the target {:.3e}",
                self.params.accuracy_factor, self.target
            )
        });
        let accuracy_warning = match (accuracy_warning, self.solver_warning.clone()) {
            (Some(a), Some(w)) => Some(format!("{a}; {w}")),
            (a, w) => a.or(w),
        };
        let per = |v: u64| {
            if iterations == 0 {
                0.0
            } else {
                v as f64 / iterations as f64
            }
        };
        Ok(SolveReport {
            solver,
            variant,
            iterations,
            stop_reason,
            b_norm: self.b_norm,
            residual_history: self.history,
            recursive_residual: self.last,
            true_residual,
            relative_true_residual,
            accuracy_warning,
            setup_seconds,
            solve_seconds,
            loop_seconds,
            loop_counters,
            inner_counters: if inner_is_loop {
                loop_counters
            } else {
                self.inner
            },
            launches_per_iteration: per(loop_counters.launches),
            transfers_per_iteration: per(loop_counters.transfers),
            residual_replacements: self.residual_replacements,
            execution: self.execution,
            rtol: self.params.rtol,
            atol: self.params.atol,
            threshold: self.target,
            criterion: stop_reason
                .converged()
                .then(|| StopCriterion::deciding(self.params, self.b_norm)),
            notes: self.notes,
        })
    }
}

/// Shorthand: T from f64.
#[inline]
pub(crate) fn t<T: Scalar>(v: f64) -> T {
    T::from_f64(v)
}
