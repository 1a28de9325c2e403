//! A CSR matrix whose arrays already live on a backend: the caller's device memory (CuPy's
//! arrays through `CudaBackend::borrow_device_memory`, OpenCL memory objects through
//! `OpenClBackend::borrow_cl_mem`) or buffers of the backend. The arrays are checked on the
//! device and used in place; only the row pointers come back to the host, for the SpMV
//! kernel's layout plan.

use crate::backend::ops::sparse::{csr_check, CsrRef};
use crate::backend::{Backend, Buffer, CsrKernel, DeviceMatrix};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::device_a::{csr_matrix, with_kernel_layout};
use crate::scalar::Scalar;
use std::sync::atomic::{AtomicU64, Ordering};

/// The fingerprints given to matrices made from device arrays (a counter, mixed).
static NEXT_DEVICE_FINGERPRINT: AtomicU64 = AtomicU64::new(1);

/// A fingerprint no other device matrix of this process has (their values are not hashed:
/// that would read them all). A preconditioner built from the matrix records it, so the
/// solvers refuse that preconditioner with any other matrix.
pub(crate) fn new_fingerprint() -> u64 {
    let mut z = NEXT_DEVICE_FINGERPRINT.fetch_add(1, Ordering::Relaxed);
    // splitmix64's finalizer: distinct counters give distinct values.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<T: Scalar> DeviceMatrix<T> {
    /// An `n_rows` x `n_cols` CSR matrix from arrays already on `backend` (`row_ptr`: n_rows + 1
    /// offsets, `col_idx` and `values`: one per stored entry), used in place: no copy of them
    /// is made, on the host or the device. The arrays are checked on the device (kernel
    /// `csr_check`, one pass): row pointers from 0 to nnz that never decrease, columns in range
    /// and strictly ascending in every row (SciPy's canonical format: sorted, no duplicates),
    /// finite values. Then the row pointers are read back (4 bytes per row) to plan the CSR
    /// kernel's layout, as an upload does; the column indices and values never leave the
    /// device. The matrix's fingerprint is a new value of this process (its values are not
    /// hashed).
    ///
    /// The arrays must not change while the matrix is in use except through the library
    /// (a solver may read them in any of its kernels).
    ///
    /// ```
    /// use pipekrylov::backend::host::HostBackend;
    /// use pipekrylov::backend::{DeviceMatrix, VectorOps};
    /// let host = HostBackend::new();
    /// // [[2, -1], [-1, 2]]
    /// let row_ptr = host.upload(&[0u32, 2, 4]).unwrap();
    /// let col_idx = host.upload(&[0u32, 1, 0, 1]).unwrap();
    /// let values = host.upload(&[2.0, -1.0, -1.0, 2.0]).unwrap();
    /// let a = DeviceMatrix::from_csr_buffers(&host, 2, 2, row_ptr, col_idx, values).unwrap();
    /// assert_eq!(a.nnz(), 4);
    /// ```
    ///
    /// Errors: lengths that do not fit the sizes ([`Error::DimensionMismatch`]), faulty
    /// arrays or non-finite values ([`Error::InvalidMatrix`], with how many rows or entries
    /// are wrong), buffers of another backend ([`Error::WrongBackend`]),
    /// sizes beyond the kernels' 32-bit range ([`Error::IndexOverflow`]) and device errors.
    pub fn from_csr_buffers<B: Backend>(
        backend: &B,
        n_rows: usize,
        n_cols: usize,
        row_ptr: Buffer<u32>,
        col_idx: Buffer<u32>,
        values: Buffer<T>,
    ) -> Result<Self> {
        let view = CsrRef::new(n_rows, n_cols, &row_ptr, &col_idx, &values)?;
        let faults = csr_check(backend, view)?;
        if faults.row_pointers > 0 || faults.columns > 0 {
            return Err(Error::InvalidMatrix(format!(
                "the device CSR arrays ({n_rows} x {n_cols}, {} entries) have {} faulty row \
                 pointers (they must run from 0 to the number of entries and never decrease) and \
                 {} entries whose column is out of range or not above the one before it in its row \
                 (columns must be sorted, without duplicates)",
                col_idx.len(),
                faults.row_pointers,
                faults.columns
            )));
        }
        if faults.non_finite > 0 {
            return Err(Error::InvalidMatrix(format!(
                "the device CSR values hold {} NaN or infinite entries",
                faults.non_finite
            )));
        }
        let mut m = csr_matrix(n_rows, row_ptr, col_idx, values);
        m.n_cols = n_cols;
        m.fingerprint = new_fingerprint();
        let mut m = with_kernel_layout(backend, m, CsrKernel::Auto, None)?;
        backend.synchronize()?;
        // Complete, and no kernel of the library writes them: read as an upload's arrays.
        m.uploaded = true;
        Ok(m)
    }
}

/// `m` (a CSR matrix on `backend`) copied to the host, for a setup that runs there.
pub(crate) fn download_csr<B: Backend, T: Scalar>(
    backend: &B,
    m: &DeviceMatrix<T>,
) -> Result<CsrMatrix<T>> {
    let v = CsrRef::of(m)?;
    let widen = |x: Vec<u32>| x.into_iter().map(|i| i as usize).collect::<Vec<_>>();
    CsrMatrix::new(
        m.n_rows(),
        m.n_cols(),
        widen(backend.download(v.row_ptr)?),
        widen(backend.download(v.col_idx)?),
        backend.download(v.values)?,
    )
}
