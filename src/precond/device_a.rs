//! A on the device for a preconditioner's setup: the solver's CSR copy when it is one of `a`,
//! else an upload of its own (FSAI, aFSAI and the device BILU(0) factorization read A there).

use crate::backend::CsrKernel;
use crate::backend::{Backend, Buffer, DeviceFormat, DeviceMatrix, MatrixFormat};
use crate::error::{Error, Result};
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

/// `m`, a CSR matrix on the device, laid out anew for the CSR kernel `requested` as `backend`
/// resolves it from the row lengths ([`CsrKernel::Auto`]: the automatic choice, which the
/// `PIPEKRYLOV_CSR_KERNEL` environment variable overrides): the long-row plan and, for the
/// stream kernels, the row blocks and 16-bit column offsets (any layout `m` had is dropped).
/// Reads the row pointers back (n + 1 entries), and the column indices when 16-bit offsets are
/// chosen. Backends without the GPU layouts get `m` unchanged.
pub(crate) fn with_kernel_layout<B: Backend, T: Scalar>(
    backend: &B,
    m: DeviceMatrix<T>,
    requested: CsrKernel,
) -> Result<DeviceMatrix<T>> {
    if !backend.uses_device_layouts() {
        return Ok(m);
    }
    let DeviceMatrix {
        n_rows,
        n_cols,
        nnz,
        format,
        fingerprint,
        halo,
    } = m;
    let DeviceFormat::Csr {
        row_ptr,
        col_idx,
        values,
        ..
    } = format
    else {
        return Err(Error::PreconditionerSetup(
            "a factor to lay out must be a CSR matrix".into(),
        ));
    };
    let rp = backend.download(&row_ptr)?;
    let kernel = backend.resolve_csr_kernel(&rp, requested);
    let ci = match kernel {
        CsrKernel::StreamCompact => Some(backend.download(&col_idx)?),
        _ => None,
    };
    let (long_rows, row_blocks) = backend.csr_layouts::<T>(&rp, ci.as_deref(), kernel)?;
    Ok(DeviceMatrix {
        n_rows,
        n_cols,
        nnz,
        format: DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows,
            row_blocks,
        },
        fingerprint,
        halo,
    })
}
