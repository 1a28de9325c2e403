//! A on the device for a preconditioner's setup: the solver's CSR copy when it is one of `a`,
//! else an upload of its own (FSAI, aFSAI and the device BILU(0) factorization read A there).

use crate::backend::{Backend, Buffer, DeviceFormat, DeviceMatrix, MatrixFormat};
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// A on the device for the setup: the solver's CSR copy when it fits, else an upload of its own.
pub(crate) enum DeviceA<'d, T> {
    Borrowed(&'d DeviceMatrix<T>),
    Owned(Box<DeviceMatrix<T>>),
}

impl<'d, T: Scalar> DeviceA<'d, T> {
    /// `device` when it is a CSR upload of `a` (same size, `a`'s `fingerprint`, no halo), else an
    /// upload of `a` in CSR.
    pub(crate) fn of<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&'d DeviceMatrix<T>>,
        fingerprint: u64,
    ) -> Result<Self> {
        match device {
            Some(d)
                if matches!(d.format(), DeviceFormat::Csr { .. })
                    && d.n_rows() == a.n_rows()
                    && d.n_cols() == a.n_cols()
                    && d.nnz() == a.nnz()
                    && d.ranks() == 1
                    && d.fingerprint() == fingerprint =>
            {
                Ok(Self::Borrowed(d))
            }
            _ => Ok(Self::Owned(Box::new(
                backend.upload_matrix(a, MatrixFormat::Csr)?,
            ))),
        }
    }
    pub(crate) fn get(&self) -> &DeviceMatrix<T> {
        match self {
            Self::Borrowed(d) => d,
            Self::Owned(d) => d,
        }
    }
    /// Device bytes the setup itself holds for A (0 when it reads the solver's copy).
    pub(crate) fn own_bytes(&self) -> usize {
        match self {
            Self::Borrowed(_) => 0,
            Self::Owned(d) => d.device_bytes(),
        }
    }
}

/// A CSR device matrix from its arrays, already on the device.
pub(crate) fn csr_matrix<T: Scalar>(
    n: usize,
    row_ptr: Buffer<u32>,
    col_idx: Buffer<u32>,
    values: Buffer<T>,
) -> DeviceMatrix<T> {
    DeviceMatrix {
        n_rows: n,
        n_cols: n,
        nnz: col_idx.len(),
        format: DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows: None,
            row_blocks: None,
        },
        fingerprint: 0,
        halo: Default::default(),
    }
}
