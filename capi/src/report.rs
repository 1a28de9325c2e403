//! `pk_report`, what a solve reports to C, and the stop-reason codes with their names.

use std::ffi::{c_char, c_int, CStr};

use pipekrylov::solver::{SolveReport, StopReason};

/// The residual passed the tolerance.
pub const PK_STOP_CONVERGED: c_int = 0;
/// The iteration limit was reached (x is the last iterate; GMRES: the best seen).
pub const PK_STOP_MAX_ITERATIONS: c_int = 1;
/// The residual grew past the divergence bound.
pub const PK_STOP_DIVERGED: c_int = 2;
/// CG found p·Ap <= 0: the matrix is not positive definite.
pub const PK_STOP_INDEFINITE_MATRIX: c_int = 3;
/// Preconditioned CG found (r, z) <= 0: the preconditioner is not positive definite.
pub const PK_STOP_INDEFINITE_PRECONDITIONER: c_int = 4;
/// A breakdown of the BiCGStab or GMRES recurrence.
pub const PK_STOP_BREAKDOWN: c_int = 5;
/// NaN or infinity appeared during the solve.
pub const PK_STOP_NAN_OR_INF: c_int = 6;
/// The true residual stopped decreasing above the tolerance (attainable accuracy reached).
pub const PK_STOP_STAGNATED: c_int = 7;
/// The solve was interrupted.
pub const PK_STOP_INTERRUPTED: c_int = 8;

/// What one solve reports. A solve that stops without converging is not an error: the call
/// returns `PK_OK` and `converged` is 0, `stop_reason` says why.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PkReport {
    /// Iterations performed (Krylov steps for GMRES).
    pub iterations: usize,
    /// 1 if the solve converged, else 0.
    pub converged: c_int,
    /// Why it stopped: a `PK_STOP_*` code (`pk_stop_reason_name` gives its name).
    pub stop_reason: c_int,
    /// ||b - A x|| / ||b||, recomputed from x at the end (||b - A x|| when b = 0).
    pub relative_true_residual: f64,
    /// Seconds `pk_solver_create` took (backend, matrix upload, preconditioner): the same for
    /// every solve of a solver.
    pub setup_seconds: f64,
    /// Seconds this solve took in the library (copies of b, x0 and x included; for
    /// `pk_solver_solve_many` the seconds of the whole call).
    pub solve_seconds: f64,
}

impl PkReport {
    /// The C report of `report`, with the solver's setup and this call's solve seconds.
    pub(crate) fn new(report: &SolveReport, setup_seconds: f64, solve_seconds: f64) -> Self {
        Self {
            iterations: report.iterations,
            converged: c_int::from(report.stop_reason.converged()),
            stop_reason: stop_code(report.stop_reason),
            relative_true_residual: report.relative_true_residual,
            setup_seconds,
            solve_seconds,
        }
    }
}

/// The `PK_STOP_*` code of `reason`.
pub(crate) fn stop_code(reason: StopReason) -> c_int {
    match reason {
        StopReason::Converged => PK_STOP_CONVERGED,
        StopReason::MaxIterations => PK_STOP_MAX_ITERATIONS,
        StopReason::Diverged => PK_STOP_DIVERGED,
        StopReason::IndefiniteMatrix => PK_STOP_INDEFINITE_MATRIX,
        StopReason::IndefinitePreconditioner => PK_STOP_INDEFINITE_PRECONDITIONER,
        StopReason::Breakdown(_) => PK_STOP_BREAKDOWN,
        StopReason::NanOrInf => PK_STOP_NAN_OR_INF,
        StopReason::Stagnated => PK_STOP_STAGNATED,
        StopReason::Interrupted => PK_STOP_INTERRUPTED,
    }
}

/// The name of a `PK_STOP_*` code ("converged", "max_iterations", ..., the names of the
/// library's JSON report), or "unknown" for any other value. The string is static.
#[no_mangle]
pub extern "C" fn pk_stop_reason_name(code: c_int) -> *const c_char {
    let name: &'static CStr = match code {
        PK_STOP_CONVERGED => c"converged",
        PK_STOP_MAX_ITERATIONS => c"max_iterations",
        PK_STOP_DIVERGED => c"diverged",
        PK_STOP_INDEFINITE_MATRIX => c"indefinite_matrix",
        PK_STOP_INDEFINITE_PRECONDITIONER => c"indefinite_preconditioner",
        PK_STOP_BREAKDOWN => c"breakdown",
        PK_STOP_NAN_OR_INF => c"nan_or_inf",
        PK_STOP_STAGNATED => c"stagnated",
        PK_STOP_INTERRUPTED => c"interrupted",
        _ => c"unknown",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_crates_names() {
        for reason in [
            StopReason::Converged,
            StopReason::MaxIterations,
            StopReason::Diverged,
            StopReason::IndefiniteMatrix,
            StopReason::IndefinitePreconditioner,
            StopReason::NanOrInf,
            StopReason::Stagnated,
            StopReason::Interrupted,
        ] {
            // SAFETY: the names are static NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(pk_stop_reason_name(stop_code(reason))) };
            assert_eq!(name.to_str().unwrap(), reason.to_string());
        }
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(pk_stop_reason_name(99)) };
        assert_eq!(unknown.to_str().unwrap(), "unknown");
    }
}
