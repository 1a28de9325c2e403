//! The extension module `pipekrylov._pipekrylov` of the Python package: a set-up solver class
//! over the crate's [`pipekrylov::ReusableSolver`] and the backend report. The public API is
//! the Python package around it (`pipekrylov/__init__.py`), which checks every input before
//! an address reaches this module.

mod address;
mod errors;
mod options;
mod plain;
mod solver;

use pyo3::prelude::*;

/// The backends compiled into this module and what each sees on this machine, as JSON (the
/// crate's `pipekrylov info`).
#[pyfunction]
fn backends_json() -> String {
    let statuses = pipekrylov::backend::available_backends();
    serde_json::to_string(&statuses).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The option names the solve calls accept.
#[pyfunction]
fn option_names() -> Vec<&'static str> {
    options::NAMES.to_vec()
}

#[pymodule]
fn _pipekrylov(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<solver::PySolver>()?;
    m.add("RustError", m.py().get_type::<errors::RustError>())?;
    m.add_function(wrap_pyfunction!(backends_json, m)?)?;
    m.add_function(wrap_pyfunction!(option_names, m)?)?;
    m.add_function(wrap_pyfunction!(address::address, m)?)?;
    m.add_function(wrap_pyfunction!(solver::solve_once, m)?)?;
    m.add_function(wrap_pyfunction!(plain::solve_plain, m)?)?;
    m.add_function(wrap_pyfunction!(plain::register_plain, m)?)?;
    m.add_function(wrap_pyfunction!(solver::rust_one_call_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(solver::rust_one_call_steps, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
