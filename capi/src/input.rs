//! The caller's arrays: checked views of raw pointers (NULL, alignment, length overflow) and the
//! CSR matrix built from them.

use std::ffi::{c_int, c_void};

use pipekrylov::matrix::{CsrMatrix, CsrView};
use pipekrylov::{ReusableSolver, Scalar, SolveOptions};

use crate::error::Failure;

/// `len` values of `T` at `ptr`, as a slice; empty when `len` is 0 whatever `ptr` is.
/// Errors: `ptr` NULL ([`crate::PK_ERR_NULL`]) or not aligned for `T`.
///
/// # Safety
/// Unless `len` is 0, `ptr` points at `len` readable values of `T` that stay alive and unwritten
/// while the slice is used.
pub(crate) unsafe fn slice<'a, T>(
    ptr: *const c_void,
    len: usize,
    what: &str,
) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    checked::<T>(ptr, what)?;
    // SAFETY: non-NULL and aligned (checked); the caller promises `len` readable values.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), len) })
}

/// `len` values of `T` at `ptr`, writable; empty when `len` is 0 whatever `ptr` is.
///
/// # Safety
/// Unless `len` is 0, `ptr` points at `len` writable values of `T` that nothing else reads or
/// writes while the slice is used.
pub(crate) unsafe fn slice_mut<'a, T>(
    ptr: *mut c_void,
    len: usize,
    what: &str,
) -> Result<&'a mut [T], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    checked::<T>(ptr, what)?;
    // SAFETY: non-NULL and aligned (checked); the caller promises `len` writable values that
    // nothing else uses meanwhile.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<T>(), len) })
}

/// Fail when `ptr` is NULL or not aligned for `T`.
fn checked<T>(ptr: *const c_void, what: &str) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    if (ptr as usize) % std::mem::align_of::<T>() != 0 {
        return Err(Failure::invalid(format!(
            "{what} is not aligned to {} bytes",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// `a * b`, or an invalid-input failure naming `what` when it overflows.
pub(crate) fn product(a: usize, b: usize, what: &str) -> Result<usize, Failure> {
    a.checked_mul(b)
        .ok_or_else(|| Failure::invalid(format!("{what}: {a} x {b} overflows size_t")))
}

/// The raw CSR arrays of `pk_solver_create`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawCsr {
    /// Rows and columns.
    pub n: usize,
    /// n + 1 row offsets.
    pub row_ptr: *const c_void,
    /// nnz column indices.
    pub col_idx: *const c_void,
    /// nnz values.
    pub values: *const c_void,
    /// Stored entries.
    pub nnz: usize,
    /// 32 or 64: the width of the signed integers of `row_ptr` and `col_idx`.
    pub index_bits: c_int,
}

impl RawCsr {
    /// The crate's CSR matrix of these arrays (copied; checked by `CsrMatrix::new`: offsets,
    /// bounds, lengths; unsorted columns sorted and duplicates summed).
    ///
    /// # Safety
    /// The pointers point at live arrays of the lengths and widths given (`values`: `T`).
    pub unsafe fn matrix<T: Scalar>(&self) -> Result<CsrMatrix<T>, Failure> {
        let rows = self.row_pointers()?;
        // SAFETY: the caller's promise on the arrays.
        let (row_ptr, col_idx, values) = unsafe {
            (
                indices(self.row_ptr, rows, self.index_bits, "row_ptr")?,
                indices(self.col_idx, self.nnz, self.index_bits, "col_idx")?,
                slice::<T>(self.values, self.nnz, "values")?.to_vec(),
            )
        };
        Ok(CsrMatrix::new(self.n, self.n, row_ptr, col_idx, values)?)
    }

    /// How many row pointers there are (n + 1); errors: `row_ptr` NULL, n + 1 overflowing.
    fn row_pointers(&self) -> Result<usize, Failure> {
        if self.row_ptr.is_null() {
            return Err(Failure::null("row_ptr"));
        }
        self.n
            .checked_add(1)
            .ok_or_else(|| Failure::invalid("n + 1 overflows size_t"))
    }

    /// A solver of these arrays set up with `options`: `int32_t` indices borrowed as the
    /// crate's [`CsrView`] (sent to the device as they are for CSR storage with no
    /// preconditioner or Jacobi, copied for the other setups), `int64_t` ones copied into its
    /// CSR matrix ([`RawCsr::matrix`]). Nothing of the arrays is kept after the call.
    ///
    /// # Safety
    /// As [`RawCsr::matrix`]; the arrays do not change during the call.
    pub unsafe fn solver<T: Scalar>(
        &self,
        options: SolveOptions,
    ) -> Result<ReusableSolver<T>, Failure> {
        if self.index_bits != 32 {
            // SAFETY: the caller's promise on the arrays.
            let a = unsafe { self.matrix::<T>()? };
            return Ok(ReusableSolver::builder(&a).options(options).build()?);
        }
        let rows = self.row_pointers()?;
        // SAFETY: the caller's promise on the arrays.
        let (row_ptr, col_idx, values) = unsafe {
            (
                slice::<i32>(self.row_ptr, rows, "row_ptr")?,
                slice::<i32>(self.col_idx, self.nnz, "col_idx")?,
                slice::<T>(self.values, self.nnz, "values")?,
            )
        };
        let view = CsrView::from_i32(self.n, self.n, row_ptr, col_idx, values)?;
        Ok(ReusableSolver::builder_view(view)
            .options(options)
            .build()?)
    }
}

/// `len` signed integers of `bits` bits at `ptr`, as `usize`. Errors: `bits` not 32 or 64, a
/// negative index, NULL or misaligned `ptr`.
///
/// # Safety
/// As [`slice`], for integers of `bits` bits.
unsafe fn indices(
    ptr: *const c_void,
    len: usize,
    bits: c_int,
    what: &str,
) -> Result<Vec<usize>, Failure> {
    let negative = || Failure::invalid(format!("negative index in {what}"));
    // SAFETY (both arms): the caller's promise, for the width named.
    match bits {
        32 => unsafe { slice::<i32>(ptr, len, what)? }
            .iter()
            .map(|&i| usize::try_from(i).map_err(|_| negative()))
            .collect(),
        64 => unsafe { slice::<i64>(ptr, len, what)? }
            .iter()
            .map(|&i| usize::try_from(i).map_err(|_| negative()))
            .collect(),
        _ => Err(Failure::invalid(format!(
            "index_bits is {bits}: 32 (int32_t indices) or 64 (int64_t)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{PK_ERR_INVALID_INPUT, PK_ERR_NULL};

    fn raw(row_ptr: &[i32], col_idx: &[i32], values: &[f64], bits: c_int) -> RawCsr {
        RawCsr {
            n: row_ptr.len() - 1,
            row_ptr: row_ptr.as_ptr().cast(),
            col_idx: col_idx.as_ptr().cast(),
            values: values.as_ptr().cast(),
            nnz: values.len(),
            index_bits: bits,
        }
    }

    #[test]
    fn a_valid_matrix_is_read_and_bad_ones_are_typed() {
        let (rp, ci, v) = ([0, 2, 3], [0, 1, 1], [2.0, -1.0, 2.0]);
        // SAFETY: the arrays are live and of the lengths given.
        unsafe {
            let a = raw(&rp, &ci, &v, 32).matrix::<f64>().unwrap();
            assert_eq!((a.n_rows(), a.nnz()), (2, 3));
            let e = raw(&rp, &ci, &v, 16).matrix::<f64>().unwrap_err();
            assert_eq!(e.code, PK_ERR_INVALID_INPUT);
            let e = raw(&rp, &[0, -1, 1], &v, 32).matrix::<f64>().unwrap_err();
            assert_eq!(e.code, PK_ERR_INVALID_INPUT);
            let e = raw(&rp, &[0, 5, 1], &v, 32).matrix::<f64>().unwrap_err();
            assert_eq!(e.code, PK_ERR_INVALID_INPUT, "{}", e.message);
            let mut r = raw(&rp, &ci, &v, 32);
            r.values = std::ptr::null();
            assert_eq!(r.matrix::<f64>().unwrap_err().code, PK_ERR_NULL);
            let mut r = raw(&rp, &ci, &v, 32);
            r.values = v.as_ptr().cast::<u8>().add(1).cast();
            assert_eq!(r.matrix::<f64>().unwrap_err().code, PK_ERR_INVALID_INPUT);
        }
    }
}
