//! The keyword options of the Python calls, read into the crate's [`SolveOptions`] through the
//! crate's one table of option names ([`pipekrylov::options_kv`], which the C API shares).
//!
//! An unknown name is a `TypeError` (as an unexpected keyword argument is in Python), a value of
//! a type that has no text form here (a list, a dict, ...) a `TypeError` naming the option, and
//! a bad value the crate's own `InvalidParameter` error.

use pipekrylov::{options_kv, Error, Method, SolveOptions};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

/// The option names the package accepts (the Python wrapper's keyword arguments).
pub const NAMES: &[&str] = options_kv::NAMES;

/// A value of the options dictionary that failed to convert or parse.
pub enum OptionError {
    /// A Python error (wrong type, unknown key).
    Python(PyErr),
    /// The crate's error (a bad value).
    Crate(Error),
}

impl From<PyErr> for OptionError {
    fn from(e: PyErr) -> Self {
        Self::Python(e)
    }
}

impl From<Error> for OptionError {
    fn from(e: Error) -> Self {
        Self::Crate(e)
    }
}

/// Read `options` (a dict of the names above, `None` values skipped) into solve options.
pub fn read(options: &Bound<'_, PyDict>) -> Result<SolveOptions, OptionError> {
    let mut o = SolveOptions::default();
    options_kv::set_all(&mut o, pairs(options)?)?;
    o.params.validate()?;
    Ok(o)
}

/// The options of the plain call on `n` unknowns: what [`read`] makes of the dict of `extra`'s
/// items with `method`, `rtol`, `atol`, `maxiter` (`None`: 10 n, at least 1) and `restart` (20
/// unless `extra` has it) added, those four given typed instead of as text.
pub fn read_plain(
    method: Method,
    (rtol, atol): (f64, f64),
    maxiter: Option<usize>,
    n: usize,
    extra: &Bound<'_, PyDict>,
) -> Result<SolveOptions, OptionError> {
    let mut o = SolveOptions {
        method,
        ..SolveOptions::default()
    };
    o.params.rtol = rtol;
    o.params.atol = atol;
    o.params.max_iter = maxiter.unwrap_or_else(|| n.saturating_mul(10).max(1));
    o.params.gmres.restart = 20;
    // The preconditioner first: its options apply to it whatever the dict's order.
    options_kv::set_all(&mut o, pairs(extra)?)?;
    o.params.validate()?;
    Ok(o)
}

/// The (name, text value) pairs of `options`, `None` values skipped; an unknown name is a
/// `TypeError`.
fn pairs(options: &Bound<'_, PyDict>) -> Result<Vec<(String, String)>, OptionError> {
    let mut pairs = Vec::with_capacity(options.len());
    for (key, value) in options.iter() {
        let key: String = key.extract()?;
        if !NAMES.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "unexpected keyword argument '{key}' (the options are: {})",
                NAMES.join(", ")
            ))
            .into());
        }
        if value.is_none() {
            continue;
        }
        let value = text(&key, &value)?;
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// The text form of an option's value: strings as they are, booleans as `true`/`false`,
/// numbers (and integer-like objects such as NumPy integers) as Python writes them; anything
/// else a `TypeError` naming the option.
fn text(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyBool>() {
        return Ok(if value.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .into());
    }
    if value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyInt>()
        || value.is_instance_of::<PyFloat>()
    {
        return Ok(value.str()?.to_string());
    }
    // NumPy integers and other integer-like objects.
    if let Ok(i) = value.call_method0("__index__") {
        return Ok(i.str()?.to_string());
    }
    Err(PyTypeError::new_err(format!(
        "option '{key}': expected a string, a number or a bool, got {}",
        value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}
