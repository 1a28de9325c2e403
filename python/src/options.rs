//! The keyword options of the Python calls, read into the crate's [`SolveOptions`].
//!
//! Every option has one Python name; an unknown name is a `TypeError` (as an unexpected
//! keyword argument is in Python), a bad value the crate's own `InvalidParameter` error.

use pipekrylov::precond::{PrecondKind, PrecondSpec};
use pipekrylov::{Error, Method, SolveOptions};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The option names the package accepts (the Python wrapper's keyword arguments).
pub const NAMES: &[&str] = &[
    "method",
    "rtol",
    "atol",
    "maxiter",
    "restart",
    "precond",
    "block_size",
    "trisolve",
    "subdomains",
    "isai_level",
    "ip_scaling",
    "fsai_level",
    "amg_coarsening",
    "amg_smoother",
    "amg_sweeps",
    "amg_strength",
    "amg_max_levels",
    "amg_coarse_size",
    "ilu_matching",
    "ilu_ordering",
    "ilu_fill",
    "ilu_drop",
    "ilu_max_fill",
    "ilu_shift",
    "variant",
    "execution",
    "backend",
    "format",
    "history",
];

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
    for key in options.keys() {
        let key: String = key.extract()?;
        if !NAMES.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "unexpected keyword argument '{key}' (the options are: {})",
                NAMES.join(", ")
            ))
            .into());
        }
    }
    let mut o = SolveOptions::default();
    if let Some(v) = text(options, "method")? {
        o.method = v.parse::<Method>()?;
    }
    if let Some(v) = number::<f64>(options, "rtol")? {
        o.params.rtol = v;
    }
    if let Some(v) = number::<f64>(options, "atol")? {
        o.params.atol = v;
    }
    if let Some(v) = number::<usize>(options, "maxiter")? {
        o.params.max_iter = v;
    }
    if let Some(v) = number::<usize>(options, "restart")? {
        o.params.restart = v;
    }
    if let Some(v) = text(options, "variant")? {
        o.params.variant = v.parse()?;
    }
    if let Some(v) = text(options, "execution")? {
        o.params.execution = v.parse()?;
    }
    if let Some(v) = number::<bool>(options, "history")? {
        o.params.record_history = v;
    }
    if let Some(v) = text(options, "backend")? {
        o.backend = v.parse()?;
    }
    if let Some(v) = text(options, "format")? {
        o.format = v.parse()?;
    }
    o.precond = precond(options)?;
    o.params.validate()?;
    Ok(o)
}

/// The preconditioner and its parameters.
fn precond(options: &Bound<'_, PyDict>) -> Result<PrecondSpec, OptionError> {
    let mut spec = PrecondSpec::default();
    if let Some(v) = text(options, "precond")? {
        spec.kind = v.parse::<PrecondKind>()?;
    }
    if let Some(v) = number::<usize>(options, "block_size")? {
        spec.block_size = v;
        spec.amg.block_size = v;
    }
    if let Some(v) = text(options, "trisolve")? {
        spec.solve = v.parse()?;
    }
    if let Some(v) = number::<usize>(options, "subdomains")? {
        spec.subdomains = v;
    }
    if let Some(v) = number::<usize>(options, "isai_level")? {
        spec.isai_level = v;
    }
    if let Some(v) = text(options, "ip_scaling")? {
        spec.ip_scaling = v.parse()?;
    }
    if let Some(v) = number::<usize>(options, "fsai_level")? {
        spec.fsai.level = v;
    }
    if let Some(v) = text(options, "amg_coarsening")? {
        spec.amg.coarsening = v.parse()?;
    }
    if let Some(v) = text(options, "amg_smoother")? {
        spec.amg.smoother = v.parse()?;
    }
    if let Some(v) = number::<usize>(options, "amg_sweeps")? {
        spec.amg.pre_sweeps = v;
        spec.amg.post_sweeps = v;
    }
    if let Some(v) = number::<f64>(options, "amg_strength")? {
        spec.amg.strength = v;
    }
    if let Some(v) = number::<usize>(options, "amg_max_levels")? {
        spec.amg.max_levels = v;
    }
    if let Some(v) = number::<usize>(options, "amg_coarse_size")? {
        spec.amg.coarse_size = v;
    }
    if let Some(v) = text(options, "ilu_matching")? {
        spec.ilu.matching = v.parse()?;
    }
    if let Some(v) = text(options, "ilu_ordering")? {
        spec.ilu.ordering = v.parse()?;
    }
    spec.ilu.fill_level = number::<usize>(options, "ilu_fill")?.or(spec.ilu.fill_level);
    spec.ilu.drop_tol = number::<f64>(options, "ilu_drop")?.or(spec.ilu.drop_tol);
    spec.ilu.max_fill = number::<f64>(options, "ilu_max_fill")?.or(spec.ilu.max_fill);
    if let Some(v) = number::<bool>(options, "ilu_shift")? {
        spec.ilu.shift = v;
    }
    Ok(spec)
}

/// The string option `key`, if given and not `None`.
fn text(options: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<String>> {
    number::<String>(options, key)
}

/// The option `key` converted to `T`, if given and not `None`; a `TypeError` naming the key
/// otherwise.
fn number<T: for<'py> FromPyObjectOwned<'py>>(
    options: &Bound<'_, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    match options.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract::<T>().map(Some).map_err(|e| {
            let e: PyErr = e.into();
            PyTypeError::new_err(format!(
                "option '{key}': {} (got {})",
                e.value(v.py()),
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        }),
    }
}
