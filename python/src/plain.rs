//! The plain one call: `pipekrylov.cg(A, b)` and its siblings on a SciPy CSR matrix in canonical
//! form and NumPy vectors, without a report. Its inputs are read and checked here, in a few
//! attribute reads, so that little Python runs between two calls into the library (Python code
//! runs several times slower right after a CUDA call than on its own: see the 2026-12-01 note
//! on the one call in the repository's `bench/log/`). Anything this path does not take is left
//! to the wrapper's general path, which converts or rejects it.

use pipekrylov::Method;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use crate::address::{vector, Vector};
use crate::errors::options_error;
use crate::solver::{solve_arrays, RawCsr};

/// What the wrapper registers at import: the SciPy CSR types the plain call takes, and
/// NumPy's `empty`.
struct Registered {
    csr_types: Py<PyTuple>,
    empty: Py<PyAny>,
}

static REGISTERED: PyOnceLock<Registered> = PyOnceLock::new();

/// Register the SciPy CSR types that [`solve_plain`] takes (exactly these types, no
/// subclasses) and NumPy's `empty`, which makes the solution. The first registration stays.
#[pyfunction]
pub fn register_plain(
    py: Python<'_>,
    csr_types: Bound<'_, PyTuple>,
    empty: Bound<'_, PyAny>,
) -> PyResult<()> {
    let _ = REGISTERED.get_or_init(py, || Registered {
        csr_types: csr_types.unbind(),
        empty: empty.unbind(),
    });
    Ok(())
}

/// The option names that the plain call takes as its own arguments; an options dict with one
/// of them goes to the general path, which gives the arguments precedence.
const OWN: [&str; 4] = ["method", "rtol", "atol", "maxiter"];

/// Solve `a x = b` (from `x0`, or zero) with `method` ("cg", "bicgstab" or "gmres") in one call
/// into the library, as `_pipekrylov.solve_once` does, when the inputs are the plain case: `a` of
/// a registered SciPy CSR type, square, in canonical form, float32/float64 values and
/// int32/int64 indices (one type for both), `b` and `x0` one-dimensional, C-contiguous, aligned
/// arrays of `a`'s dtype and length n. `rtol` and `atol` are numbers, `maxiter` an integer or
/// `None` (10 n, at least 1), `options` the other keyword options (`restart` 20 unless given).
///
/// Returns `(x, info)` with `info` as SciPy's, or `None` when the inputs are not the plain case
/// (the wrapper then takes its general path). Errors: the options' (as `solve_once`'s) and the
/// library's.
#[pyfunction]
#[pyo3(signature = (method, a, b, x0, rtol, atol, maxiter, options, callback=None))]
#[allow(clippy::too_many_arguments)]
pub fn solve_plain(
    py: Python<'_>,
    method: &str,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    x0: Option<&Bound<'_, PyAny>>,
    rtol: &Bound<'_, PyAny>,
    atol: &Bound<'_, PyAny>,
    maxiter: Option<&Bound<'_, PyAny>>,
    options: &Bound<'_, PyDict>,
    callback: Option<Py<PyAny>>,
) -> PyResult<Option<(Py<PyAny>, i64)>> {
    let Some(registered) = REGISTERED.get(py) else {
        return Ok(None);
    };
    let Ok(method) = method.parse::<Method>() else {
        return Ok(None);
    };
    for key in OWN {
        if options.contains(key)? {
            return Ok(None);
        }
    }
    let (Ok(rtol), Ok(atol)) = (rtol.extract::<f64>(), atol.extract::<f64>()) else {
        return Ok(None);
    };
    let maxiter = match maxiter {
        None => None,
        Some(m) => match m.extract::<usize>() {
            Ok(m) => Some(m),
            Err(_) => return Ok(None),
        },
    };
    let Some(csr) = PlainCsr::of(a, registered.csr_types.bind(py))? else {
        return Ok(None);
    };
    let n = csr.raw.n;
    let value = csr.values;
    let same = |v: &Vector| v.kind == b'f' && v.itemsize == value.itemsize && v.len == n;
    let Some(bv) = vector(b).filter(same) else {
        return Ok(None);
    };
    let x0v = match x0 {
        None => None,
        Some(x0) => match vector(x0).filter(same) {
            Some(v) => Some(v),
            None => return Ok(None),
        },
    };
    let dtype = if value.itemsize == 4 {
        "float32"
    } else {
        "float64"
    };
    let x = registered.empty.bind(py).call1((n, dtype))?;
    let Some(xv) = vector(&x).filter(same) else {
        return Ok(None);
    };
    let opts = crate::options::read_plain(method, (rtol, atol), maxiter, n, options)
        .map_err(|e| options_error(py, e))?;
    let addresses = (bv.address, x0v.map_or(0, |v| v.address), xv.address);
    let (converged, broke_down, iterations) = solve_arrays(py, csr.raw, addresses, opts, callback)?;
    // The arrays of `a` are held (in `csr`) until the library is done with them.
    drop(csr);
    let info = if converged {
        0
    } else if broke_down {
        -1
    } else {
        i64::try_from(iterations.max(1)).unwrap_or(i64::MAX)
    };
    Ok(Some((x.unbind(), info)))
}

/// A SciPy CSR matrix's arrays, held while the library reads them, the library's view of them
/// and what was read of the values array.
struct PlainCsr<'py> {
    raw: RawCsr,
    values: Vector,
    _arrays: [Bound<'py, PyAny>; 3],
}

impl<'py> PlainCsr<'py> {
    /// `a`'s arrays when `a` is the plain case (see [`solve_plain`]), else `None`.
    fn of(a: &Bound<'py, PyAny>, csr_types: &Bound<'py, PyTuple>) -> PyResult<Option<Self>> {
        let a_type = a.get_type();
        if !csr_types.iter().any(|t| t.is(&a_type)) {
            return Ok(None);
        }
        let Ok((rows, cols)) = a.getattr("shape")?.extract::<(usize, usize)>() else {
            return Ok(None);
        };
        if rows != cols || !a.getattr("has_canonical_format")?.extract::<bool>()? {
            return Ok(None);
        }
        let (indptr, indices, data) = (
            a.getattr("indptr")?,
            a.getattr("indices")?,
            a.getattr("data")?,
        );
        let (Some(p), Some(i), Some(d)) = (vector(&indptr), vector(&indices), vector(&data)) else {
            return Ok(None);
        };
        let index_ok = p.kind == b'i' && matches!(p.itemsize, 4 | 8) && i.kind == p.kind;
        if !index_ok
            || i.itemsize != p.itemsize
            || d.kind != b'f'
            || !matches!(d.itemsize, 4 | 8)
            || p.len != rows + 1
            || i.len != d.len
        {
            return Ok(None);
        }
        let raw = RawCsr {
            n: rows,
            indptr: p.address,
            indices: i.address,
            data: d.address,
            nnz: d.len,
            index_bits: 8 * p.itemsize as u32,
            value_bits: 8 * d.itemsize as u32,
        };
        Ok(Some(Self {
            raw,
            values: d,
            _arrays: [indptr, indices, data],
        }))
    }
}
