//! NumPy arrays read through their `__array_struct__` capsule (the C side of NumPy's array
//! interface protocol): the address of a contiguous array's first element ([`address`]; a tenth
//! of the time of `ndarray.ctypes.data`, which builds a ctypes object per call: 2.4 against
//! 0.3 us on the workstation, five addresses per one-call solve), and a one-dimensional array's
//! length, element type and address for the plain call ([`vector`]).

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

/// `ARRAY_C_CONTIGUOUS` of the interface's flags.
const C_CONTIGUOUS: c_int = 0x0001;

/// `ARRAY_C_CONTIGUOUS` and `ARRAY_F_CONTIGUOUS` of the interface's flags.
const CONTIGUOUS: c_int = C_CONTIGUOUS | 0x0002;

/// `ARRAY_ALIGNED` of the interface's flags.
const ALIGNED: c_int = 0x0100;

/// `ARRAY_NOTSWAPPED` of the interface's flags: the data in the machine's byte order.
const NOT_SWAPPED: c_int = 0x0200;

/// What the plain call reads of a NumPy array: its one dimension's length, its element kind
/// (`b'f'` floating, `b'i'` signed integer, ...) and size in bytes, and its first element's
/// address.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vector {
    /// Number of elements.
    pub len: usize,
    /// NumPy's type kind character.
    pub kind: u8,
    /// Bytes per element.
    pub itemsize: usize,
    /// Address of the first element.
    pub address: usize,
}

/// `array` as a [`Vector`] when it is a one-dimensional, C-contiguous, aligned NumPy array in the
/// machine's byte order (read from its `__array_struct__` capsule, as [`address`]); `None` for
/// anything else. The caller keeps `array` alive while the address is used.
pub fn vector(array: &Bound<'_, PyAny>) -> Option<Vector> {
    let capsule = array.getattr("__array_struct__").ok()?;
    // SAFETY: as in `address`; the shape is read while the capsule is held.
    unsafe {
        let interface = interface(&capsule)?;
        if interface.nd != 1
            || interface.flags & C_CONTIGUOUS == 0
            || interface.flags & ALIGNED == 0
            || interface.flags & NOT_SWAPPED == 0
            || interface.itemsize <= 0
        {
            return None;
        }
        let len = usize::try_from(*interface.shape).ok()?;
        Some(Vector {
            len,
            kind: interface.typekind as u8,
            itemsize: interface.itemsize as usize,
            address: interface.data as usize,
        })
    }
}

/// NumPy's array interface behind `capsule`, or `None` when it is not a valid, unnamed capsule
/// of one (version 2).
///
/// # Safety
/// The reference lives as long as the caller holds `capsule`.
unsafe fn interface<'a>(capsule: &'a Bound<'_, PyAny>) -> Option<&'a ArrayInterface> {
    // PyCapsule_IsValid / PyCapsule_GetPointer accept any object (they check its type and the
    // capsule's name, NULL for NumPy's) and return NULL (IsValid: 0) otherwise; a valid capsule
    // of `__array_struct__` points at a PyArrayInterface that lives as long as the capsule.
    if pyo3::ffi::PyCapsule_IsValid(capsule.as_ptr(), std::ptr::null()) == 0 {
        return None;
    }
    let p = pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), std::ptr::null());
    if p.is_null() {
        pyo3::ffi::PyErr_Clear();
        return None;
    }
    let interface = &*(p as *const ArrayInterface);
    (interface.two == 2).then_some(interface)
}

/// The address of the first element of `array`, an object with NumPy's `__array_struct__`
/// (a NumPy array) whose data is contiguous (C or Fortran order); a `TypeError` for anything
/// else. The caller keeps `array` alive while the address is used and has checked its dtype,
/// shape and order.
#[pyfunction]
pub fn address(array: &Bound<'_, PyAny>) -> PyResult<usize> {
    let capsule = array.getattr("__array_struct__")?;
    // SAFETY: the fields are read while the capsule is held.
    let interface = unsafe { interface(&capsule) }.ok_or_else(|| {
        PyTypeError::new_err("__array_struct__ is not NumPy's array interface capsule")
    })?;
    if interface.flags & CONTIGUOUS == 0 {
        return Err(PyTypeError::new_err("the array's data is not contiguous"));
    }
    Ok(interface.data as usize)
}
