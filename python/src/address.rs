//! The address of a contiguous NumPy array's first element, read from its `__array_struct__` capsule (the
//! C side of NumPy's array interface protocol): a tenth of the time of `ndarray.ctypes.data`,
//! which builds a ctypes object per call (2.4 against 0.3 us on the workstation; five
//! addresses per one-call solve).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::os::raw::{c_char, c_int, c_void};

/// NumPy's `PyArrayInterface` (numpy/ndarraytypes.h; the C side of `__array_struct__`): the
/// layout in full, of which `two`, `flags` and `data` are read.
#[repr(C)]
#[allow(dead_code)]
struct ArrayInterface {
    two: c_int,
    nd: c_int,
    typekind: c_char,
    itemsize: c_int,
    flags: c_int,
    shape: *const isize,
    strides: *const isize,
    data: *mut c_void,
    descr: *mut pyo3::ffi::PyObject,
}

/// `ARRAY_C_CONTIGUOUS` and `ARRAY_F_CONTIGUOUS` of the interface's flags.
const CONTIGUOUS: c_int = 0x0001 | 0x0002;

/// The address of the first element of `array`, an object with NumPy's `__array_struct__`
/// (a NumPy array) whose data is contiguous (C or Fortran order); a `TypeError` for anything
/// else. The caller keeps `array` alive while the address is used and has checked its dtype,
/// shape and order.
#[pyfunction]
pub fn address(array: &Bound<'_, PyAny>) -> PyResult<usize> {
    let capsule = array.getattr("__array_struct__")?;
    // SAFETY: PyCapsule_IsValid / PyCapsule_GetPointer accept any object (they check its type
    // and the capsule's name, NULL for NumPy's) and return NULL (IsValid: 0) otherwise; a
    // valid capsule of `__array_struct__` points at a PyArrayInterface that lives as long as
    // the capsule, which is held here while the fields are read.
    let interface = unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule.as_ptr(), std::ptr::null()) == 0 {
            return Err(PyTypeError::new_err(
                "__array_struct__ is not an array capsule",
            ));
        }
        let p = pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), std::ptr::null());
        if p.is_null() {
            return Err(PyErr::fetch(array.py()));
        }
        &*(p as *const ArrayInterface)
    };
    if interface.two != 2 {
        return Err(PyTypeError::new_err(
            "__array_struct__ is not NumPy's array interface",
        ));
    }
    if interface.flags & CONTIGUOUS == 0 {
        return Err(PyTypeError::new_err("the array's data is not contiguous"));
    }
    Ok(interface.data as usize)
}
