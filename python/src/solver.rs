//! `_Solver`: a [`ReusableSolver`] in f32 or f64 behind one Python class. The Python wrapper
//! (`pipekrylov/_core.py`) checks dtypes, shapes, contiguity and keeps the arrays alive; this
//! side reads them through their addresses (no copy of `b` or `x0`; the solution is written
//! into the caller's array) and sets the solver up from the SciPy arrays: int32 indices borrowed
//! as the crate's `CsrView` (sent to the device as they are for CSR storage with no
//! preconditioner or Jacobi; copied into the crate's CSR for the other setups), int64 copied into
//! the crate's CSR. The arrays must not change during the call (they are checked once, then read
//! again by the upload with the GIL released).

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use pipekrylov::backend::BackendInfo;
use pipekrylov::matrix::{CsrMatrix, CsrView};
use pipekrylov::solver::{Progress, SolveReport, StopReason};
use pipekrylov::{Error, ReusableSolver, Scalar, SolveOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{crate_error, options_error};

/// How often a solve without a callback looks for Ctrl-C (taking the GIL for it).
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(20);

/// A value that crosses `Python::detach` although it is not `Send`. `detach` releases the GIL
/// and runs its closure on the calling thread, so nothing moves between threads; its `Send`
/// bound keeps Python objects out of the closure, and none is inside this.
struct OnThisThread<T>(T);

// SAFETY: see the type's documentation: the value stays on the thread that made it.
unsafe impl<T> Send for OnThisThread<T> {}

/// The per-iteration control handed to the solver.
type ControlRef<'a> = &'a mut (dyn FnMut(Progress) -> ControlFlow<()> + Send);

/// The set-up solver of either precision.
enum Precision {
    F32(ReusableSolver<f32>),
    F64(ReusableSolver<f64>),
}

/// The raw arrays of a CSR matrix, as the wrapper hands them over: addresses of C-contiguous
/// NumPy arrays with the dtypes named, and their lengths.
#[derive(Clone, Copy)]
pub(crate) struct RawCsr {
    pub(crate) n: usize,
    pub(crate) indptr: usize,
    pub(crate) indices: usize,
    pub(crate) data: usize,
    pub(crate) nnz: usize,
    pub(crate) index_bits: u32,
    pub(crate) value_bits: u32,
}

/// Read an index array (int32 or int64) of `len` entries at `address` as `usize`.
///
/// # Safety
/// `address` points at `len` readable, aligned integers of `bits` bits.
unsafe fn read_indices(address: usize, len: usize, bits: u32) -> Result<Vec<usize>, Error> {
    let negative = || Error::InvalidMatrix("negative index in the CSR arrays".into());
    if len == 0 {
        return Ok(Vec::new());
    }
    match bits {
        32 => std::slice::from_raw_parts(address as *const i32, len)
            .iter()
            .map(|&i| usize::try_from(i).map_err(|_| negative()))
            .collect(),
        64 => std::slice::from_raw_parts(address as *const i64, len)
            .iter()
            .map(|&i| usize::try_from(i).map_err(|_| negative()))
            .collect(),
        _ => Err(Error::param("index dtype", "int32 or int64")),
    }
}

/// A slice of `len` values at `address` (empty when `len` is 0, whatever the address).
///
/// # Safety
/// `address` points at `len` readable, aligned values of `T` that outlive the slice.
unsafe fn slice<'a, T>(address: usize, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(address as *const T, len)
    }
}

impl RawCsr {
    /// A solver of these arrays set up with `opts`: int32 indices borrowed as the crate's
    /// [`CsrView`] (sent to the device as they are where the setup allows), others copied into
    /// its CSR matrix first.
    ///
    /// # Safety
    /// As [`RawCsr::matrix`].
    unsafe fn solver<T: Scalar>(&self, opts: SolveOptions) -> Result<ReusableSolver<T>, Error> {
        if self.index_bits != 32 {
            return ReusableSolver::builder(&self.matrix::<T>()?)
                .options(opts)
                .build();
        }
        ReusableSolver::builder_view(self.view::<T>()?)
            .options(opts)
            .build()
    }

    /// The crate's borrowed view of these int32 arrays (checked as [`RawCsr::matrix`]).
    ///
    /// # Safety
    /// As [`RawCsr::matrix`], with 32-bit indices; the arrays stay alive and unchanged for as
    /// long as the view is used.
    unsafe fn view<T: Scalar>(&self) -> Result<CsrView<'_, T>, Error> {
        CsrView::from_i32(
            self.n,
            self.n,
            slice::<i32>(self.indptr, self.n + 1),
            slice::<i32>(self.indices, self.nnz),
            slice::<T>(self.data, self.nnz),
        )
    }

    /// The crate's CSR matrix of these arrays (checked: sorted columns, bounds, lengths).
    ///
    /// # Safety
    /// The addresses point at live arrays of the lengths and dtypes given.
    unsafe fn matrix<T: Scalar>(&self) -> Result<CsrMatrix<T>, Error> {
        if self.index_bits == 32 {
            // SciPy's usual int32 arrays: widened and checked in one pass.
            return CsrMatrix::from_i32(
                self.n,
                self.n,
                slice::<i32>(self.indptr, self.n + 1),
                slice::<i32>(self.indices, self.nnz),
                slice::<T>(self.data, self.nnz),
            );
        }
        let row_ptr = read_indices(self.indptr, self.n + 1, self.index_bits)?;
        let col_idx = read_indices(self.indices, self.nnz, self.index_bits)?;
        let values = slice::<T>(self.data, self.nnz).to_vec();
        CsrMatrix::new(self.n, self.n, row_ptr, col_idx, values)
    }
}

/// A matrix uploaded and a preconditioner built once; `solve` many times.
#[pyclass(module = "pipekrylov._pipekrylov", name = "_Solver", unsendable)]
pub struct PySolver {
    solver: Precision,
    backend: String,
    notes: Vec<String>,
    /// Seconds spent in Rust by the constructor (backend, upload, preconditioner).
    setup_seconds: f64,
    /// The last solve's report and the seconds it spent in Rust.
    last: Option<(SolveReport, f64)>,
    /// The last `solve_many`'s reports, per column, with the seconds the call spent in Rust.
    last_many: Vec<(SolveReport, f64)>,
}

impl PySolver {
    /// The class around `solver`, set up since `started`.
    fn set_up(solver: Precision, started: Instant) -> Self {
        let (backend, notes) = match &solver {
            Precision::F32(s) => describe(s),
            Precision::F64(s) => describe(s),
        };
        Self {
            solver,
            backend,
            notes,
            setup_seconds: started.elapsed().as_secs_f64(),
            last: None,
            last_many: Vec::new(),
        }
    }
}

#[pymethods]
impl PySolver {
    /// Set up: the CSR arrays by address (`index_bits` 32/64, `value_bits` 32/64) and the
    /// options dict (see `options::NAMES`). The GIL is released while the backend starts, the
    /// matrix is uploaded and the preconditioner built.
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        n: usize,
        indptr: usize,
        indices: usize,
        data: usize,
        nnz: usize,
        index_bits: u32,
        value_bits: u32,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let opts = crate::options::read(options).map_err(|e| options_error(py, e))?;
        let raw = RawCsr {
            n,
            indptr,
            indices,
            data,
            nnz,
            index_bits,
            value_bits,
        };
        let started = Instant::now();
        let built = py.detach(move || OnThisThread(build(raw, opts)));
        let solver = built.0.map_err(|e| crate_error(py, e))?;
        Ok(Self::set_up(solver, started))
    }

    /// Set up from a CSR matrix in CUDA memory of the solver's device (addresses of CuPy's
    /// `indptr` and `indices`, int32 with canonical rows, and `data`, float32/float64 by
    /// `value_bits`), used in place (the crate's `DeviceMatrix::from_csr_buffers` and
    /// `ReusableSolver::on_device`): checked on the device, no copy of the arrays unless the
    /// preconditioner's setup runs on the host (the report's notes say so). The caller keeps
    /// the arrays alive and unchanged for the solver's life and has synchronized its stream.
    /// `options`' backend must be CUDA.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn on_device(
        py: Python<'_>,
        n: usize,
        indptr: u64,
        indices: u64,
        data: u64,
        nnz: usize,
        value_bits: u32,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let opts = crate::options::read(options).map_err(|e| options_error(py, e))?;
        let arrays = DeviceCsr {
            n,
            indptr,
            indices,
            data,
            nnz,
        };
        let started = Instant::now();
        let built = py.detach(move || OnThisThread(build_on_device(arrays, value_bits, opts)));
        let solver = built.0.map_err(|e| crate_error(py, e))?;
        Ok(Self::set_up(solver, started))
    }

    /// Solve with `b` (address, length n) from `x0` (address, or 0 for zero), the solution
    /// written to `x` (address). `check` calls `callback(residual_norm)` after every iteration
    /// when it is not `None`; without a callback Ctrl-C is looked for every 20 ms (on a GPU in
    /// device-resident mode only at the end: see the package README). Returns (converged,
    /// broke down, iterations); `last_report_json` has the whole report.
    #[pyo3(signature = (b, x0, x, callback=None))]
    fn solve(
        &mut self,
        py: Python<'_>,
        b: usize,
        x0: usize,
        x: usize,
        callback: Option<Py<PyAny>>,
    ) -> PyResult<(bool, bool, usize)> {
        self.controlled(py, callback, move |solver, control| match solver {
            Precision::F32(s) => run(s, b, x0, x, control),
            Precision::F64(s) => run(s, b, x0, x, control),
        })
    }

    /// Solve with `b` and `x` in CUDA device memory of this solver's device (addresses of `n`
    /// values of the solver's dtype, e.g. CuPy arrays' `data.ptr`): `x` holds the initial guess
    /// and receives the solution; nothing passes through the host. The caller has finished
    /// its own work on both (synchronized its stream). `zero_x`: start from zero (the solver
    /// fills `x` on its stream) instead of the guess in `x`. Callback and Ctrl-C as `solve`.
    #[pyo3(signature = (b, x, callback=None, zero_x=false))]
    fn solve_device(
        &mut self,
        py: Python<'_>,
        b: u64,
        x: u64,
        callback: Option<Py<PyAny>>,
        zero_x: bool,
    ) -> PyResult<(bool, bool, usize)> {
        self.controlled(py, callback, move |solver, control| match solver {
            Precision::F32(s) => run_device(s, b, x, zero_x, control),
            Precision::F64(s) => run_device(s, b, x, zero_x, control),
        })
    }

    /// Solve for `k` right-hand sides at once from zero: `b` and `x` are addresses of n x k
    /// column-major arrays (column j at offset j n) of the solver's dtype; `x` is written after
    /// every column of `b` was read. The crate's `ReusableSolver::solve_many` (CG, BiCGStab and
    /// classical GMRES run the columns together, pipelined GMRES one after another), with the
    /// GIL released; Ctrl-C is
    /// looked for when it returns. Returns (converged, broke down, iterations) per column;
    /// `last_report_json(j)` has column j's report.
    fn solve_many(
        &mut self,
        py: Python<'_>,
        b: usize,
        k: usize,
        x: usize,
    ) -> PyResult<Vec<(bool, bool, usize)>> {
        let started = Instant::now();
        let solver = OnThisThread(&mut self.solver);
        let result = py.detach(move || {
            let solver = solver;
            OnThisThread(match solver.0 {
                Precision::F32(s) => run_many(s, b, k, x),
                Precision::F64(s) => run_many(s, b, k, x),
            })
        });
        let rust_seconds = started.elapsed().as_secs_f64();
        py.check_signals()?;
        let reports = result.0.map_err(|e| crate_error(py, e))?;
        let outcomes = reports
            .iter()
            .map(|r| {
                (
                    r.stop_reason.converged(),
                    breakdown(r.stop_reason),
                    r.iterations,
                )
            })
            .collect();
        self.last = reports.first().cloned().map(|r| (r, rust_seconds));
        self.last_many = reports.into_iter().map(|r| (r, rust_seconds)).collect();
        Ok(outcomes)
    }

    /// The report of column `j` of the last `solve_many` as JSON (as `last_report_json`), or
    /// `None` when there is no such column.
    fn last_column_report_json(&self, py: Python<'_>, j: usize) -> PyResult<Option<String>> {
        let Some((report, rust_seconds)) = self.last_many.get(j) else {
            return Ok(None);
        };
        report_json(report, &self.backend, &self.notes, *rust_seconds)
            .map(Some)
            .map_err(|e| crate_error(py, e))
    }

    /// Take new values of the matrix on the pattern it was set up for: the CSR arrays by
    /// address as in the constructor (the same value dtype). Only the values are written to
    /// the device and the preconditioner's numeric phase runs again (the crate's
    /// `ReusableSolver::update_values`), with the GIL released. Returns the update as JSON
    /// (`matrix_seconds`, `precond` with its numeric phase's `times` and what it `kept`,
    /// `seconds`).
    #[allow(clippy::too_many_arguments)]
    fn update_values(
        &mut self,
        py: Python<'_>,
        n: usize,
        indptr: usize,
        indices: usize,
        data: usize,
        nnz: usize,
        index_bits: u32,
        value_bits: u32,
    ) -> PyResult<String> {
        let raw = RawCsr {
            n,
            indptr,
            indices,
            data,
            nnz,
            index_bits,
            value_bits,
        };
        let solver = OnThisThread(&mut self.solver);
        let updated = py.detach(move || {
            let solver = solver;
            OnThisThread(update(solver.0, raw))
        });
        let update = updated.0.map_err(|e| crate_error(py, e))?;
        serde_json::to_string(&update)
            .map_err(|e| crate_error(py, Error::Unsupported(format!("report as JSON: {e}"))))
    }

    /// New values for a solver set up by `on_device`: `data`, the address of `nnz` values of the
    /// solver's dtype in CUDA memory of its device, on the pattern it was set up with (the
    /// wrapper compared it), used in place from now on (the crate's
    /// `ReusableSolver::update_device_values`), with the GIL released. The caller keeps the
    /// array alive and unchanged for the solver's life and has synchronized its stream. Returns
    /// the update as JSON, as `update_values`.
    fn update_device_values(&mut self, py: Python<'_>, data: u64, nnz: usize) -> PyResult<String> {
        let solver = OnThisThread(&mut self.solver);
        let updated = py.detach(move || {
            let solver = solver;
            OnThisThread(match solver.0 {
                Precision::F32(s) => update_on_device(s, data, nnz),
                Precision::F64(s) => update_on_device(s, data, nnz),
            })
        });
        let update = updated.0.map_err(|e| crate_error(py, e))?;
        serde_json::to_string(&update)
            .map_err(|e| crate_error(py, Error::Unsupported(format!("report as JSON: {e}"))))
    }

    /// The number of unknowns.
    #[getter]
    fn n(&self) -> usize {
        match &self.solver {
            Precision::F32(s) => s.n(),
            Precision::F64(s) => s.n(),
        }
    }

    /// The backend and device that run the solves.
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }

    /// The notes of the backend choice (why a GPU backend was passed over, ...).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// The report of the last solve as JSON (the crate's report, the stop reason's name,
    /// whether it converged or broke down, the backend and the seconds spent in Rust), or
    /// `None` before the first solve.
    fn last_report_json(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let Some((report, rust_seconds)) = &self.last else {
            return Ok(None);
        };
        report_json(report, &self.backend, &self.notes, *rust_seconds)
            .map(Some)
            .map_err(|e| crate_error(py, e))
    }

    /// Seconds the constructor spent in Rust (the rest of a Python call is the wrapper's).
    #[getter]
    fn rust_setup_seconds(&self) -> f64 {
        self.setup_seconds
    }

    /// The value dtype the solver works in ("float32" or "float64").
    #[getter]
    fn dtype(&self) -> &'static str {
        match &self.solver {
            Precision::F32(_) => "float32",
            Precision::F64(_) => "float64",
        }
    }
}

impl PySolver {
    /// Run `work` on the solver with the GIL released and a control that calls `callback`
    /// after every iteration and looks for Ctrl-C; the callback's exception or
    /// `KeyboardInterrupt` is raised after the solver stopped cleanly.
    fn controlled(
        &mut self,
        py: Python<'_>,
        callback: Option<Py<PyAny>>,
        work: impl FnOnce(&mut Precision, Option<ControlRef<'_>>) -> Result<SolveReport, Error> + Send,
    ) -> PyResult<(bool, bool, usize)> {
        let solver = OnThisThread(&mut self.solver);
        let (report, rust_seconds) = run_controlled(
            py,
            callback,
            move || {
                let solver = solver;
                let watch = watches(solver.0);
                Ok((solver, watch))
            },
            |solver, control| work(solver.0, control),
        )?;
        let outcome = outcome(&report);
        // Kept for `last_report_json`, with the seconds this call spent in Rust (the per-call
        // overhead of the wrapper is the rest): the JSON is made only when asked for.
        self.last = Some((report, rust_seconds));
        Ok(outcome)
    }
}

/// (converged, broke down, iterations) of a report, as the wrapper's `info` reads them.
fn outcome(report: &SolveReport) -> (bool, bool, usize) {
    (
        report.stop_reason.converged(),
        breakdown(report.stop_reason),
        report.iterations,
    )
}

/// Whether a solve of `solver` without a callback looks for Ctrl-C between iterations: where it
/// is synchronous anyway (the host, or synchronous execution), since a monitor makes CG and
/// BiCGStab synchronous.
fn watches(solver: &Precision) -> bool {
    let (gpu, options) = match solver {
        Precision::F32(s) => (s.backend().0.name() != "host", s.options()),
        Precision::F64(s) => (s.backend().0.name() != "host", s.options()),
    };
    !gpu || options.params.execution == pipekrylov::solver::Execution::Synchronous
}

/// Run `work` with the GIL released on what `prepare` makes there (a solver, and whether its
/// solve looks for Ctrl-C without a callback: [`watches`]), with a control that calls
/// `callback` after every iteration and looks for Ctrl-C every 20 ms; the callback's exception
/// or `KeyboardInterrupt` is raised after the solver stopped cleanly. Returns the report and
/// the seconds spent with the GIL released.
fn run_controlled<S>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    prepare: impl FnOnce() -> Result<(S, bool), Error> + Send,
    work: impl FnOnce(S, Option<ControlRef<'_>>) -> Result<SolveReport, Error> + Send,
) -> PyResult<(SolveReport, f64)> {
    let has_callback = callback.is_some();
    let mut failure: Option<PyErr> = None;
    let mut last_check = Instant::now();
    let mut control = |p: Progress| -> ControlFlow<()> {
        if callback.is_none() && last_check.elapsed() < SIGNAL_CHECK_INTERVAL {
            return ControlFlow::Continue(());
        }
        last_check = Instant::now();
        let outcome = Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            if let Some(cb) = &callback {
                cb.call1(py, (p.residual,))?;
            }
            Ok(())
        });
        match outcome {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failure = Some(e);
                ControlFlow::Break(())
            }
        }
    };
    let control: ControlRef<'_> = &mut control;
    let started = Instant::now();
    let (result, watched) = py.detach(move || match prepare() {
        Err(e) => (Err(e), true),
        Ok((target, watch)) => {
            let watch = watch || has_callback;
            (work(target, watch.then_some(control)), watch)
        }
    });
    let rust_seconds = started.elapsed().as_secs_f64();
    if let Some(e) = failure {
        return Err(e);
    }
    if !watched {
        py.check_signals()?;
    }
    let report = result.map_err(|e| crate_error(py, e))?;
    Ok((report, rust_seconds))
}

/// Build the solver of the matrix's precision.
fn build(raw: RawCsr, opts: SolveOptions) -> Result<Precision, Error> {
    // SAFETY: the wrapper passes live, C-contiguous arrays of the lengths and dtypes named and
    // holds them for the duration of this call.
    unsafe {
        match raw.value_bits {
            32 => Ok(Precision::F32(raw.solver::<f32>(opts)?)),
            64 => Ok(Precision::F64(raw.solver::<f64>(opts)?)),
            _ => Err(Error::param("value dtype", "float32 or float64")),
        }
    }
}

/// The device addresses of a CSR matrix's arrays (int32 indices) and its sizes.
#[derive(Clone, Copy)]
struct DeviceCsr {
    n: usize,
    indptr: u64,
    indices: u64,
    data: u64,
    nnz: usize,
}

/// A solver of the matrix `arrays` in CUDA memory, in the precision `value_bits` names.
fn build_on_device(
    arrays: DeviceCsr,
    value_bits: u32,
    opts: SolveOptions,
) -> Result<Precision, Error> {
    match value_bits {
        32 => Ok(Precision::F32(solver_on_device::<f32>(arrays, opts)?)),
        64 => Ok(Precision::F64(solver_on_device::<f64>(arrays, opts)?)),
        _ => Err(Error::param("value dtype", "float32 or float64")),
    }
}

/// [`build_on_device`] in precision `T`: the arrays borrowed by the CUDA backend `opts` names.
fn solver_on_device<T: Scalar>(
    arrays: DeviceCsr,
    opts: SolveOptions,
) -> Result<ReusableSolver<T>, Error> {
    let (backend, _) = opts.backend.create_for(arrays.n)?;
    #[cfg(feature = "cuda")]
    if let pipekrylov::backend::AnyBackend::Cuda(cuda) = &backend {
        let DeviceCsr {
            n,
            indptr,
            indices,
            data,
            nnz,
        } = arrays;
        // SAFETY: the wrapper passes addresses of live CuPy arrays on this device of the
        // lengths given (n + 1 and nnz int32 indices, nnz values of T), which it keeps alive
        // and unchanged for the solver's life, after synchronizing CuPy's stream; the borrowed
        // buffers never free them.
        let (rp, ci, v) = unsafe {
            (
                cuda.borrow_device_memory::<u32>(indptr, n + 1)?,
                cuda.borrow_device_memory::<u32>(indices, nnz)?,
                cuda.borrow_device_memory::<T>(data, nnz)?,
            )
        };
        let matrix = pipekrylov::backend::DeviceMatrix::from_csr_buffers(cuda, n, n, rp, ci, v)?;
        return ReusableSolver::on_device(backend, matrix, opts);
    }
    Err(Error::WrongBackend {
        expected: "cuda".into(),
        found: backend.name().into(),
    })
}

/// [`ReusableSolver::update_device_values`] with `nnz` values of `T` at `data` in CUDA memory.
fn update_on_device<T: Scalar>(
    s: &mut ReusableSolver<T>,
    data: u64,
    nnz: usize,
) -> Result<pipekrylov::ValuesUpdate, Error> {
    let backend = s.backend().0;
    #[cfg(feature = "cuda")]
    if let pipekrylov::backend::AnyBackend::Cuda(cuda) = backend {
        // SAFETY: the wrapper passes the address of a live CuPy array of nnz values of T on
        // this device, which it keeps alive and unchanged for the solver's life, after
        // synchronizing CuPy's stream; the borrowed buffer never frees it.
        let values = unsafe { cuda.borrow_device_memory::<T>(data, nnz)? };
        return s.update_device_values(values);
    }
    let _ = (data, nnz);
    Err(Error::WrongBackend {
        expected: "cuda".into(),
        found: backend.name().into(),
    })
}

/// New values for the solver (the same value dtype as its matrix).
fn update(solver: &mut Precision, raw: RawCsr) -> Result<pipekrylov::ValuesUpdate, Error> {
    // SAFETY: as in `build`: live, C-contiguous arrays of the lengths and dtypes named, held
    // by the wrapper for the duration of this call.
    unsafe {
        match (solver, raw.value_bits) {
            (Precision::F32(s), 32) => s.update_values(&raw.matrix::<f32>()?),
            (Precision::F64(s), 64) => s.update_values(&raw.matrix::<f64>()?),
            (Precision::F32(_), _) => Err(Error::param("value dtype", "float32, as at setup")),
            (Precision::F64(_), _) => Err(Error::param("value dtype", "float64, as at setup")),
        }
    }
}

/// The backend's name and device, the notes of its choice, and whether it is a GPU backend.
fn describe<T: Scalar>(s: &ReusableSolver<T>) -> (String, Vec<String>) {
    let (backend, notes) = s.backend();
    (
        format!("{} ({})", backend.name(), backend.device_name()),
        notes.to_vec(),
    )
}

/// One solve into the caller's `x`.
fn run<T: Scalar>(
    s: &mut ReusableSolver<T>,
    b: usize,
    x0: usize,
    x: usize,
    control: Option<ControlRef<'_>>,
) -> Result<SolveReport, Error> {
    let n = s.n();
    // SAFETY: the wrapper passes C-contiguous arrays of n values of T that it holds alive, `x`
    // writable and not aliased by `b` or `x0` (it allocates `x` itself).
    let (b, x0) = unsafe { (slice::<T>(b, n), (x0 != 0).then(|| slice::<T>(x0, n))) };
    let out: &mut [T] = match n {
        0 => &mut [],
        // SAFETY: as above; `x` holds n values of T.
        _ => unsafe { std::slice::from_raw_parts_mut(x as *mut T, n) },
    };
    match control {
        Some(c) => s.solve_into(b, x0, out, Some(c)),
        None => s.solve_into(b, x0, out, None),
    }
}

/// `k` columns solved together into the caller's `x`.
fn run_many<T: Scalar>(
    s: &mut ReusableSolver<T>,
    b: usize,
    k: usize,
    x: usize,
) -> Result<Vec<SolveReport>, Error> {
    let n = s.n();
    let total = n
        .checked_mul(k)
        .ok_or_else(|| Error::param("solve_many", "n k overflows"))?;
    let columns: Vec<Vec<T>> = {
        // SAFETY: the wrapper passes a Fortran-ordered array of n k values of T that it holds
        // alive (NULL-free when n k > 0).
        let b = unsafe { slice::<T>(b, total) };
        (0..k).map(|j| b[j * n..(j + 1) * n].to_vec()).collect()
    };
    let refs: Vec<&[T]> = columns.iter().map(|c| &c[..]).collect();
    let solutions = s.solve_many(&refs)?;
    if total > 0 {
        // SAFETY: as above; `x` holds n k writable values of T the wrapper allocated.
        let out = unsafe { std::slice::from_raw_parts_mut(x as *mut T, total) };
        for (j, solution) in solutions.iter().enumerate() {
            out[j * n..(j + 1) * n].copy_from_slice(&solution.x);
        }
    }
    Ok(solutions.into_iter().map(|s| s.report).collect())
}

/// One solve on the caller's CUDA memory (CUDA backend only).
fn run_device<T: Scalar>(
    s: &mut ReusableSolver<T>,
    b: u64,
    x: u64,
    zero_x: bool,
    control: Option<ControlRef<'_>>,
) -> Result<SolveReport, Error> {
    let n = s.n();
    let backend = s.backend().0;
    #[cfg(feature = "cuda")]
    if let pipekrylov::backend::AnyBackend::Cuda(cuda) = backend {
        // SAFETY: the wrapper passes addresses of CuPy arrays of n values of T on this device
        // that it holds alive, after synchronizing CuPy's stream; `x` is not aliased by `b`.
        let (b, mut x) = unsafe {
            (
                cuda.borrow_device_memory::<T>(b, n)?,
                cuda.borrow_device_memory::<T>(x, n)?,
            )
        };
        if zero_x {
            use pipekrylov::backend::VectorOps;
            cuda.fill(&mut x, T::zero())?;
        }
        let control = control.map(|c| c as &mut dyn FnMut(Progress) -> ControlFlow<()>);
        return s.solve_buffers(&b, &mut x, control);
    }
    let _ = (b, x, n, zero_x, control);
    Err(Error::WrongBackend {
        expected: "cuda".into(),
        found: backend.name().into(),
    })
}

/// The report as the JSON the wrapper reads: the crate's report plus the stop reason's name,
/// whether it converged or broke down, and the backend.
fn report_json(
    solution_report: &SolveReport,
    backend: &str,
    notes: &[String],
    rust_seconds: f64,
) -> Result<String, Error> {
    let mut report = serde_json::to_value(solution_report)
        .map_err(|e| Error::Unsupported(format!("report to JSON: {e}")))?;
    report["stop"] = solution_report.stop_reason.to_string().into();
    report["converged"] = solution_report.stop_reason.converged().into();
    report["info_breakdown"] = breakdown(solution_report.stop_reason).into();
    report["backend"] = backend.into();
    report["backend_notes"] = notes.into();
    report["rust_solve_seconds"] = rust_seconds.into();
    Ok(report.to_string())
}

/// Whether `reason` is a breakdown in SciPy's sense (`info` < 0).
fn breakdown(reason: StopReason) -> bool {
    matches!(
        reason,
        StopReason::Breakdown(_)
            | StopReason::IndefiniteMatrix
            | StopReason::IndefinitePreconditioner
            | StopReason::NanOrInf
    )
}

/// One solve, set up and dropped in one call with the GIL released: what `pipekrylov.cg` and
/// its siblings run for a plain call (no report asked for, NumPy vectors). The matrix's arrays
/// and `options` as `_Solver`'s constructor takes them; `b`, `x0` and `x` as `_Solver.solve`'s,
/// in the matrix's dtype. Returns (converged, broke down, iterations).
#[pyfunction]
#[pyo3(signature = (n, indptr, indices, data, nnz, index_bits, value_bits, b, x0, x, options, callback=None))]
#[allow(clippy::too_many_arguments)]
pub fn solve_once(
    py: Python<'_>,
    n: usize,
    indptr: usize,
    indices: usize,
    data: usize,
    nnz: usize,
    index_bits: u32,
    value_bits: u32,
    b: usize,
    x0: usize,
    x: usize,
    options: &Bound<'_, PyDict>,
    callback: Option<Py<PyAny>>,
) -> PyResult<(bool, bool, usize)> {
    let opts = crate::options::read(options).map_err(|e| options_error(py, e))?;
    let raw = RawCsr {
        n,
        indptr,
        indices,
        data,
        nnz,
        index_bits,
        value_bits,
    };
    solve_arrays(py, raw, (b, x0, x), opts, callback)
}

/// Build the solver of `raw` with `opts`, solve with `b` and `x0` (addresses, 0 for none) into
/// `x` and drop it, with the GIL released once (Ctrl-C and `callback` as `_Solver.solve`'s).
/// Returns (converged, broke down, iterations).
///
/// The caller holds live arrays as [`RawCsr`] names them, and `b`, `x0`, `x` of n values of
/// the matrix's dtype, `x` writable and aliased by neither.
pub(crate) fn solve_arrays(
    py: Python<'_>,
    raw: RawCsr,
    (b, x0, x): (usize, usize, usize),
    opts: SolveOptions,
    callback: Option<Py<PyAny>>,
) -> PyResult<(bool, bool, usize)> {
    let (report, _) = run_controlled(
        py,
        callback,
        move || {
            let solver = build(raw, opts)?;
            let watch = watches(&solver);
            Ok((solver, watch))
        },
        move |mut solver, control| match &mut solver {
            Precision::F32(s) => run(s, b, x0, x, control),
            Precision::F64(s) => run(s, b, x0, x, control),
        },
    )?;
    Ok(outcome(&report))
}

/// [`rust_one_call_seconds`] in steps: the seconds from entering this function to the end of
/// each step (`options` read, GIL `detached`, `matrix` made into the crate's CSR, `rhs` copied,
/// `solve` returned, `solution` dropped, `inputs` dropped, GIL `attached` again), for finding
/// where the binding's per-call time goes. With `borrowed` (int32 indices only), the Rust call
/// that borrows the arrays instead: `matrix` is [`CsrView::from_i32`] and `solve` a solver built
/// from it ([`ReusableSolver::builder_view`]) solving once.
#[pyfunction]
#[pyo3(signature = (n, indptr, indices, data, nnz, index_bits, value_bits, b, options, borrowed=false))]
#[allow(clippy::too_many_arguments)]
pub fn rust_one_call_steps(
    py: Python<'_>,
    n: usize,
    indptr: usize,
    indices: usize,
    data: usize,
    nnz: usize,
    index_bits: u32,
    value_bits: u32,
    b: usize,
    options: &Bound<'_, PyDict>,
    borrowed: bool,
) -> PyResult<Vec<(&'static str, f64)>> {
    let entered = Instant::now();
    let opts = crate::options::read(options).map_err(|e| options_error(py, e))?;
    let mut steps = vec![("options", entered.elapsed().as_secs_f64())];
    let raw = RawCsr {
        n,
        indptr,
        indices,
        data,
        nnz,
        index_bits,
        value_bits,
    };
    fn timed<T: Scalar>(
        raw: &RawCsr,
        (b, borrowed): (usize, bool),
        opts: &SolveOptions,
        entered: Instant,
        steps: &mut Vec<(&'static str, f64)>,
    ) -> Result<(), Error> {
        let mut mark = |what| steps.push((what, entered.elapsed().as_secs_f64()));
        mark("detached");
        // SAFETY: as in `build` and `run`: live arrays of the lengths and dtypes named.
        let (owned, view) = unsafe {
            match borrowed && raw.index_bits == 32 {
                false => (Some(raw.matrix::<T>()?), None),
                true => (None, Some(raw.view::<T>()?)),
            }
        };
        mark("matrix");
        let b = unsafe { slice::<T>(b, raw.n).to_vec() };
        mark("rhs");
        let solution = match (&owned, view) {
            (Some(a), _) => pipekrylov::solve(a, &b, opts)?,
            (None, Some(v)) => ReusableSolver::builder_view(v)
                .options(*opts)
                .build()?
                .solve(&b)?,
            (None, None) => return Err(Error::Unsupported("no matrix".into())),
        };
        mark("solve");
        drop(solution);
        mark("solution");
        drop((owned, b));
        mark("inputs");
        Ok(())
    }
    let result = py.detach(|| match raw.value_bits {
        32 => timed::<f32>(&raw, (b, borrowed), &opts, entered, &mut steps),
        64 => timed::<f64>(&raw, (b, borrowed), &opts, entered, &mut steps),
        _ => Err(Error::param("value dtype", "float32 or float64")),
    });
    steps.push(("attached", entered.elapsed().as_secs_f64()));
    result.map_err(|e| crate_error(py, e))?;
    Ok(steps)
}

/// The reference of the binding's per-call overhead: seconds of the crate's own one-call
/// `pipekrylov::solve(&a, &b, &options)` (backend, upload, setup, solve, everything dropped)
/// on the matrix of these arrays, made into the crate's CSR beforehand (untimed, as a Rust
/// program would hold it already). `b`: address of n values of the matrix's dtype.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn rust_one_call_seconds(
    py: Python<'_>,
    n: usize,
    indptr: usize,
    indices: usize,
    data: usize,
    nnz: usize,
    index_bits: u32,
    value_bits: u32,
    b: usize,
    options: &Bound<'_, PyDict>,
) -> PyResult<f64> {
    let steps = rust_one_call_steps(
        py, n, indptr, indices, data, nnz, index_bits, value_bits, b, options, false,
    )?;
    let at = |name| {
        steps
            .iter()
            .find(|(step, _)| *step == name)
            .map_or(0.0, |s| s.1)
    };
    // From the right-hand side copied to the solution dropped.
    Ok(at("solution") - at("rhs"))
}
