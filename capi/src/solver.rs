//! `pk_solver`: a [`ReusableSolver`] in `float` or `double` behind an opaque handle, and the
//! entry points that create, use and destroy it.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::time::Instant;

use pipekrylov::solver::SolveReport;
use pipekrylov::{ReusableSolver, Scalar};

use crate::error::{guard, Failure, PK_ERR_PANIC};
use crate::input::{product, slice, slice_mut, RawCsr};
use crate::report::PkReport;

/// A matrix uploaded and a preconditioner built once, solved with many right-hand sides. Made
/// by `pk_solver_create`, freed by `pk_solver_destroy`; use it from one thread at a time.
pub struct PkSolver {
    /// The set-up solver of the matrix's precision.
    inner: Precision,
    /// Seconds `pk_solver_create` spent (backend, upload, preconditioner).
    setup_seconds: f64,
    /// Set while a call runs; still set at the next call only if that call panicked, after
    /// which the solver refuses work (its state is unknown).
    busy: bool,
}

/// The solver of either precision.
enum Precision {
    F32(ReusableSolver<f32>),
    F64(ReusableSolver<f64>),
}

impl PkSolver {
    /// Run `work` on the solver, refusing it when an earlier call panicked inside.
    fn run(
        &mut self,
        work: impl FnOnce(&mut Precision, f64) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        if self.busy {
            return Err(Failure {
                code: PK_ERR_PANIC,
                message: "an earlier call on this solver panicked: destroy it".into(),
            });
        }
        self.busy = true;
        let result = work(&mut self.inner, self.setup_seconds);
        self.busy = false;
        result
    }
}

/// Create a solver of the n x n CSR matrix (`row_ptr`: n + 1 offsets, `col_idx` and `values`:
/// `nnz` entries, read during the call and not kept). `index_bits` is 32 (`int32_t`
/// indices) or 64 (`int64_t`); `value_bits` 32 (`float`) or 64 (`double`): the precision of the
/// solves. `options` is `"key=value;key=value"` (NULL or "" for the defaults: GMRES, no
/// preconditioner, rtol 1e-8, the best backend available); the keys are those of the Python
/// package: method, rtol, atol, maxiter, restart, precond, precond_precision, block_size, trisolve, subdomains,
/// isai_level, ip_scaling, fsai_level, amg_coarsening, amg_smoother, amg_sweeps, amg_strength, amg_strength_decay,
/// amg_high_contrast, amg_max_levels, amg_coarse_size, amg_setup, amg_precision, ilu_matching, ilu_ordering, ilu_fill, ilu_drop,
/// ilu_max_fill, ilu_shift, ilu_pivot, variant, execution, backend, format, history.
///
/// Opens the backend, uploads the matrix and builds the preconditioner. On success `*out` is
/// the new solver and the result `PK_OK`; on failure `*out` is NULL (when `out` is not) and the
/// result a `PK_ERR_*` code, with `pk_last_error` saying why.
///
/// # Safety
/// `row_ptr` points at n + 1 integers and `col_idx` at `nnz` integers of `index_bits` bits,
/// `values` at `nnz` values of `value_bits` bits (`col_idx` and `values` may be NULL when `nnz`
/// is 0); `options` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pk_solver_create(
    n: usize,
    row_ptr: *const c_void,
    col_idx: *const c_void,
    values: *const c_void,
    nnz: usize,
    index_bits: c_int,
    value_bits: c_int,
    options: *const c_char,
    out: *mut *mut PkSolver,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: `out` is writable (the caller's promise) and not NULL (checked).
        unsafe { out.write(std::ptr::null_mut()) };
        let options = if options.is_null() {
            Default::default()
        } else {
            // SAFETY: a NUL-terminated string (the caller's promise).
            let text = unsafe { CStr::from_ptr(options) }
                .to_str()
                .map_err(|_| Failure::invalid("options is not UTF-8"))?;
            crate::options::parse(text)?
        };
        let raw = RawCsr {
            n,
            row_ptr,
            col_idx,
            values,
            nnz,
            index_bits,
        };
        let started = Instant::now();
        // SAFETY: the arrays as the caller promises.
        let inner = unsafe {
            match value_bits {
                32 => Precision::F32(raw.solver::<f32>(options)?),
                64 => Precision::F64(raw.solver::<f64>(options)?),
                _ => {
                    return Err(Failure::invalid(format!(
                        "value_bits is {value_bits}: 32 (float) or 64 (double)"
                    )))
                }
            }
        };
        let solver = Box::new(PkSolver {
            inner,
            setup_seconds: started.elapsed().as_secs_f64(),
            busy: false,
        });
        // SAFETY: as above.
        unsafe { out.write(Box::into_raw(solver)) };
        Ok(())
    })
}

/// Solve A x = b: `b` and `x` hold n values of the solver's precision (`float` or `double`),
/// `x0` the initial guess (NULL: zero). `x` may be the same array as `b` or `x0` (it is written
/// after the solve). `report`, when not NULL, receives the report. A solve that stops without
/// converging returns `PK_OK`: look at `report->converged` and `report->stop_reason`.
///
/// # Safety
/// `s` is NULL or a solver from `pk_solver_create` not yet destroyed, used by no other thread
/// meanwhile; `b` and `x0` (unless NULL) point at n readable values, `x` at n writable ones;
/// `report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn pk_solver_solve(
    s: *mut PkSolver,
    b: *const c_void,
    x0: *const c_void,
    x: *mut c_void,
    report: *mut PkReport,
) -> c_int {
    guard(|| {
        // SAFETY: a live solver or NULL, not used elsewhere meanwhile (the caller's promise).
        let s = unsafe { s.as_mut() }.ok_or_else(|| Failure::null("solver"))?;
        s.run(|inner, setup_seconds| {
            let started = Instant::now();
            // SAFETY: the arrays as the caller promises.
            let r = unsafe {
                match inner {
                    Precision::F32(s) => solve_one(s, b, x0, x)?,
                    Precision::F64(s) => solve_one(s, b, x0, x)?,
                }
            };
            let solve_seconds = started.elapsed().as_secs_f64();
            // SAFETY: NULL or writable (the caller's promise).
            unsafe { write_report(report, 0, PkReport::new(&r, setup_seconds, solve_seconds)) }
        })
    })
}

/// Solve A X = B for `k` right-hand sides: `B` and `X` are n x k column-major arrays (column j
/// at offset j n) of the solver's precision; every column starts from zero. `reports`, when not
/// NULL, receives k reports. CG and BiCGStab run the columns' recurrences together, each
/// product reading the matrix once for up to 8 columns (a CSR matrix), each column stopping on
/// its own test (the classical recurrences, whatever the variant); GMRES does so with the
/// classical variant and solves the columns one after another with the pipelined one (faster).
/// Every report's solve seconds are the whole call's. On an error nothing of `X`
/// or `reports` is written.
///
/// # Safety
/// As `pk_solver_solve`: `B` points at n k readable values, `X` at n k writable ones (it may be
/// `B`), `reports` is NULL or points at k writable reports.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn pk_solver_solve_many(
    s: *mut PkSolver,
    k: usize,
    B: *const c_void,
    X: *mut c_void,
    reports: *mut PkReport,
) -> c_int {
    guard(|| {
        // SAFETY: as in `pk_solver_solve`.
        let s = unsafe { s.as_mut() }.ok_or_else(|| Failure::null("solver"))?;
        s.run(|inner, setup_seconds| {
            let n = match inner {
                Precision::F32(s) => s.n(),
                Precision::F64(s) => s.n(),
            };
            product(n, k, "n x k")?;
            if k > 0 && n > 0 && (B.is_null() || X.is_null()) {
                return Err(Failure::null(if B.is_null() { "B" } else { "X" }));
            }
            let started = Instant::now();
            // SAFETY: the caller's promise (n k values each, `X` written after `B` is read).
            let solved = unsafe {
                match inner {
                    Precision::F32(s) => solve_block(s, k, B, X)?,
                    Precision::F64(s) => solve_block(s, k, B, X)?,
                }
            };
            let solve_seconds = started.elapsed().as_secs_f64();
            for (j, r) in solved.iter().enumerate() {
                // SAFETY: NULL or k writable reports (the caller's promise).
                unsafe {
                    write_report(reports, j, PkReport::new(r, setup_seconds, solve_seconds))?
                };
            }
            Ok(())
        })
    })
}

/// The k columns of `b` (n k values) solved together into `x` (n k values, written after `b`
/// is read, so it may alias `b`); nothing written on an error.
///
/// # Safety
/// `b` points at n k readable values of `T` and `x` at n k writable ones (n the solver's size;
/// NULL allowed when n k = 0).
unsafe fn solve_block<T: Scalar>(
    s: &mut ReusableSolver<T>,
    k: usize,
    b: *const c_void,
    x: *mut c_void,
) -> Result<Vec<SolveReport>, Failure> {
    let n = s.n();
    let total = n * k; // checked by the caller
    let columns: Vec<Vec<T>> = {
        // SAFETY: the caller's promise.
        let b = unsafe { slice::<T>(b, total, "B")? };
        (0..k).map(|j| b[j * n..(j + 1) * n].to_vec()).collect()
    };
    let refs: Vec<&[T]> = columns.iter().map(|c| &c[..]).collect();
    let solutions = s.solve_many(&refs)?;
    // SAFETY: the caller's promise; no other view of the array is alive.
    let x = unsafe { slice_mut::<T>(x, total, "X")? };
    for (j, solution) in solutions.iter().enumerate() {
        x[j * n..(j + 1) * n].copy_from_slice(&solution.x);
    }
    Ok(solutions.into_iter().map(|s| s.report).collect())
}

/// Give the solver new values of its matrix, on the pattern it was created with (a time step's
/// or a Newton step's matrix): `row_ptr`, `col_idx`, `values`, `nnz`, `index_bits` as in
/// `pk_solver_create` (the arrays are read, not kept), `value_bits` the solver's precision.
/// Only the values are written to the device and the preconditioner's numeric phase runs again
/// (its patterns, orderings, level schedules and aggregates are kept). `update`, when not NULL,
/// receives the times.
///
/// Errors: `PK_ERR_INVALID_INPUT` for another size, pattern or precision and for NaN or
/// infinite values; `PK_ERR_PRECONDITIONER` when the new values cannot be factored (a zero
/// pivot, ...). On any error the solver keeps its old values and stays usable.
///
/// # Safety
/// As `pk_solver_solve` for `s`; the arrays as in `pk_solver_create` for n = the solver's size;
/// `update` is NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pk_solver_update_values(
    s: *mut PkSolver,
    row_ptr: *const c_void,
    col_idx: *const c_void,
    values: *const c_void,
    nnz: usize,
    index_bits: c_int,
    value_bits: c_int,
    update: *mut PkValuesUpdate,
) -> c_int {
    guard(|| {
        // SAFETY: as in `pk_solver_solve`.
        let s = unsafe { s.as_mut() }.ok_or_else(|| Failure::null("solver"))?;
        s.run(|inner, _| {
            let n = match inner {
                Precision::F32(s) => s.n(),
                Precision::F64(s) => s.n(),
            };
            let raw = RawCsr {
                n,
                row_ptr,
                col_idx,
                values,
                nnz,
                index_bits,
            };
            // SAFETY: the arrays as the caller promises.
            let done = unsafe {
                match (inner, value_bits) {
                    (Precision::F32(s), 32) => s.update_values(&raw.matrix::<f32>()?)?,
                    (Precision::F64(s), 64) => s.update_values(&raw.matrix::<f64>()?)?,
                    (Precision::F32(_), _) | (Precision::F64(_), _) => {
                        return Err(Failure::invalid(format!(
                            "value_bits is {value_bits}: the solver's precision was set at \
                             pk_solver_create"
                        )))
                    }
                }
            };
            if !update.is_null() {
                let times = done.precond.map(|p| p.times).unwrap_or_default();
                let out = PkValuesUpdate {
                    seconds: done.seconds,
                    matrix_seconds: done.matrix_seconds,
                    precond_host_seconds: times.host_seconds,
                    precond_device_seconds: times.device_seconds,
                };
                // SAFETY: the caller's promise; alignment checked by `slice_mut`.
                unsafe { slice_mut::<PkValuesUpdate>(update.cast(), 1, "update")?[0] = out };
            }
            Ok(())
        })
    })
}

/// The times of `pk_solver_update_values`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PkValuesUpdate {
    /// Seconds of the whole update.
    pub seconds: f64,
    /// Seconds to check the new values and write them into the device matrix.
    pub matrix_seconds: f64,
    /// Seconds of the preconditioner's numeric phase on the host (0 without one).
    pub precond_host_seconds: f64,
    /// Seconds of the preconditioner's numeric phase on the device (0 without one).
    pub precond_device_seconds: f64,
}

/// Free a solver (its device memory included). NULL is ignored.
///
/// # Safety
/// `s` is NULL or a solver from `pk_solver_create` not yet destroyed, used by no other thread;
/// it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn pk_solver_destroy(s: *mut PkSolver) {
    if s.is_null() {
        return;
    }
    // A panic while freeing is caught (and its message kept for `pk_last_error`); the memory
    // of a solver whose drop panicked is leaked rather than freed twice.
    let _ = guard(|| {
        // SAFETY: made by `Box::into_raw` in `pk_solver_create`, freed only here (the caller's
        // promise).
        drop(unsafe { Box::from_raw(s) });
        Ok(())
    });
}

/// One solve of `s` with the caller's `b`, `x0` (NULL: zero) into `x`.
///
/// # Safety
/// `b`, `x0` (unless NULL) and `x` point at `s.n()` values of `T` (`x` writable).
unsafe fn solve_one<T: Scalar>(
    s: &mut ReusableSolver<T>,
    b: *const c_void,
    x0: *const c_void,
    x: *mut c_void,
) -> Result<SolveReport, Failure> {
    let n = s.n();
    if n > 0 && x.is_null() {
        return Err(Failure::null("x"));
    }
    // The input views end before `x` is written, so `x` may alias `b` or `x0`.
    let solution = {
        // SAFETY: the caller's promise.
        let b = unsafe { slice::<T>(b, n, "b")? };
        if x0.is_null() {
            s.solve(b)?
        } else {
            // SAFETY: as above.
            s.solve_from(b, unsafe { slice::<T>(x0, n, "x0")? })?
        }
    };
    // SAFETY: the caller's promise; no other view of the array is alive.
    unsafe { slice_mut::<T>(x, n, "x")? }.copy_from_slice(&solution.x);
    Ok(solution.report)
}

/// Write `report` to `reports[index]` unless `reports` is NULL.
///
/// # Safety
/// `reports` is NULL or points at more than `index` writable reports.
unsafe fn write_report(
    reports: *mut PkReport,
    index: usize,
    report: PkReport,
) -> Result<(), Failure> {
    if reports.is_null() {
        return Ok(());
    }
    // SAFETY: the caller's promise; alignment checked by `slice_mut`.
    unsafe { slice_mut::<PkReport>(reports.cast(), index + 1, "report")?[index] = report };
    Ok(())
}
