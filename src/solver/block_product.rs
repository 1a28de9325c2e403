//! The products of several right-hand sides' recurrences with one matrix: the columns
//! multiplied by groups of up to eight with one read of A each (kernel `csr_spmm`), where A is
//! a CSR matrix of one process; one product per column otherwise (other formats, and the rows
//! of a distributed matrix, whose products exchange their halo).

use crate::backend::ops::sparse::{spmm, CsrRef, SPMM_MAX_COLUMNS};
use crate::backend::{Backend, Buffer, DeviceMatrix};
use crate::error::Result;
use crate::scalar::Scalar;

/// y_c = A x_c for every column c.
pub(crate) fn products<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    x: &[&Buffer<T>],
    y: &mut [&mut Buffer<T>],
) -> Result<()> {
    match CsrRef::of(a) {
        Ok(csr) if a.ranks() <= 1 => {
            for (xs, ys) in x
                .chunks(SPMM_MAX_COLUMNS)
                .zip(y.chunks_mut(SPMM_MAX_COLUMNS))
            {
                spmm(backend, csr, xs, ys)?;
            }
            Ok(())
        }
        _ => {
            for (xc, yc) in x.iter().zip(y.iter_mut()) {
                backend.spmv(a, xc, yc)?;
            }
            Ok(())
        }
    }
}

/// Whether [`products`] reads A once per group of columns (else once per column).
pub(crate) fn shares_matrix_reads<T: Scalar>(a: &DeviceMatrix<T>) -> bool {
    CsrRef::of(a).is_ok() && a.ranks() <= 1
}

/// The note every column's report of a block solve carries.
pub(crate) fn note<T: Scalar>(k: usize, a: &DeviceMatrix<T>) -> String {
    format!(
        "one of {k} right-hand sides solved together (classical recurrences; the products {} \
         the matrix reads)",
        if shares_matrix_reads(a) {
            "share"
        } else {
            "do not share"
        }
    )
}
