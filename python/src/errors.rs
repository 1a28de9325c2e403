//! The crate's errors as Python exceptions: the extension raises `_pipekrylov.RustError` with
//! the error's class name and message; the wrapper (`pipekrylov/_errors.py`) re-raises it as the
//! package's exception of that class (`InvalidInputError`, `PreconditionerError`,
//! `BackendError`, `OutOfMemoryError`, all `SolverError`s).

use pipekrylov::{Error, ErrorClass};
use pyo3::prelude::*;

use crate::options::OptionError;

pyo3::create_exception!(
    _pipekrylov,
    RustError,
    pyo3::exceptions::PyException,
    "An error of the Rust library: args = (class name, message)."
);

/// The Python exception class name for `e`.
pub fn class_of(e: &Error) -> &'static str {
    match e.class() {
        ErrorClass::InvalidInput => "InvalidInputError",
        ErrorClass::Preconditioner => "PreconditionerError",
        ErrorClass::OutOfMemory => "OutOfMemoryError",
        ErrorClass::Backend => "BackendError",
    }
}

/// `e` as the exception the wrapper maps to the package's class.
pub fn crate_error(_py: Python<'_>, e: Error) -> PyErr {
    RustError::new_err((class_of(&e), e.to_string()))
}

/// An options error: Python errors as they are, the crate's mapped.
pub fn options_error(py: Python<'_>, e: OptionError) -> PyErr {
    match e {
        OptionError::Python(e) => e,
        OptionError::Crate(e) => crate_error(py, e),
    }
}
