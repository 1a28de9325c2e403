//! A on the device for a preconditioner's setup: the solver's CSR copy when it is one of `a`,
//! else an upload of its own (FSAI, aFSAI and the device BILU(0) factorization read A there).

use crate::backend::{Backend, Buffer, CsrKernel, DeviceFormat, DeviceMatrix, MatrixFormat};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// A on the device for the setup: the solver's CSR copy when it fits, else an upload of its own.
pub(crate) enum DeviceA<'d, T> {
    Borrowed(&'d DeviceMatrix<T>),
    /// A copy of the setup's own, with the device bytes it holds alone (less than the matrix's
    /// when it shares the solver's index arrays).
    Owned(Box<DeviceMatrix<T>>, usize),
}

/// Whether `d` is a CSR upload of `a` on one process: same size, `a`'s `fingerprint`, no halo.
fn is_csr_copy_of<S: Scalar>(d: &DeviceMatrix<S>, a: &CsrMatrix<S>, fingerprint: u64) -> bool {
    matches!(d.format(), DeviceFormat::Csr { .. })
        && d.n_rows() == a.n_rows()
        && d.n_cols() == a.n_cols()
        && d.nnz() == a.nnz()
        && d.ranks() == 1
        && d.fingerprint() == fingerprint
}

/// The fingerprint a setup on the device records for `a`: that of `device` when it is a CSR copy
/// of `a`'s shape on one process (the solver's copy, which the setup then reads: its values are
/// taken as `a`'s, and hashing `a` again would cost as much as a device setup's phase at
/// millions of rows), else [`CsrMatrix::fingerprint`] of `a`.
pub(crate) fn trusted_fingerprint<S: Scalar>(
    a: &CsrMatrix<S>,
    device: Option<&DeviceMatrix<S>>,
) -> u64 {
    match device {
        Some(d) if is_csr_copy_of(d, a, d.fingerprint()) => d.fingerprint(),
        _ => a.fingerprint(),
    }
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
            Some(d) if is_csr_copy_of(d, a, fingerprint) => Ok(Self::Borrowed(d)),
            _ => {
                let m = backend.upload_matrix(a, MatrixFormat::Csr)?;
                let own = m.device_bytes();
                Ok(Self::Owned(Box::new(m), own))
            }
        }
    }
    /// A in single precision for a single-precision setup of `a`: the solver's CSR copy
    /// `device` (when it is one of `a`, as in [`DeviceA::of`]) rounded on the device (kernel
    /// `copy_to_f32`) with its row pointers and column indices shared, not copied (GPU backends;
    /// the host backend copies them with `copy_u32`), else `a` rounded on the host and uploaded.
    pub(crate) fn narrowed<B: Backend, S: Scalar>(
        backend: &B,
        a: &CsrMatrix<S>,
        device: Option<&DeviceMatrix<S>>,
        fingerprint: u64,
    ) -> Result<DeviceA<'static, f32>> {
        match device.filter(|d| is_csr_copy_of(d, a, fingerprint)) {
            Some(d) => Self::narrowed_csr(backend, d, fingerprint),
            None => {
                let m = backend.upload_matrix(&a.cast::<f32>(), MatrixFormat::Csr)?;
                let own = m.device_bytes();
                Ok(DeviceA::Owned(Box::new(m), own))
            }
        }
    }

    /// `d` (a CSR matrix on `backend`) in single precision, made on the device as in
    /// [`DeviceA::narrowed`], recorded with `fingerprint`.
    pub(crate) fn narrowed_csr<B: Backend, S: Scalar>(
        backend: &B,
        d: &DeviceMatrix<S>,
        fingerprint: u64,
    ) -> Result<DeviceA<'static, f32>> {
        let DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } = d.format()
        else {
            return Err(Error::param(
                "single-precision setup",
                "the matrix must be in CSR on the device",
            ));
        };
        let index_copy = |src: &Buffer<u32>| -> Result<(Buffer<u32>, usize)> {
            if let Some(shared) = src.share() {
                return Ok((shared, 0));
            }
            let mut copy = backend.alloc::<u32>(src.len())?;
            backend.copy_u32(src, &mut copy)?;
            let bytes = copy.bytes();
            Ok((copy, bytes))
        };
        let (rp, rp_own) = index_copy(row_ptr)?;
        let (ci, ci_own) = index_copy(col_idx)?;
        let mut v = backend.alloc::<f32>(values.len())?;
        backend.copy_to_f32(values, &mut v)?;
        let own = rp_own + ci_own + v.bytes();
        let mut m = csr_matrix(d.n_rows(), rp, ci, v);
        m.n_cols = d.n_cols();
        m.fingerprint = fingerprint;
        Ok(DeviceA::Owned(Box::new(m), own))
    }
    pub(crate) fn get(&self) -> &DeviceMatrix<T> {
        match self {
            Self::Borrowed(d) => d,
            Self::Owned(d, _) => d,
        }
    }
    /// Device bytes the setup itself holds for A (0 when it reads the solver's copy).
    pub(crate) fn own_bytes(&self) -> usize {
        match self {
            Self::Borrowed(_) => 0,
            Self::Owned(_, own) => *own,
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
        uploaded: false,
    }
}

/// `m`, a CSR matrix on the device, laid out anew for the CSR kernel `requested` as `backend`
/// resolves it from the row lengths (any layout `m` had is dropped): the long-row plan and, for
/// the stream kernels, the row blocks, plus 16-bit column offsets when
/// [`CsrKernel::StreamCompact`] is asked for by name (the column indices are read back for
/// them). [`CsrKernel::Auto`] (which the backend's tuning, `csr_kernel`,
/// overrides) takes the automatic choice of an upload but without 16-bit offsets: on the H200
/// reading back and compacting an aFSAI factor's columns cost more setup than the offsets
/// saved in the solve (`bench/results/fsai-kernel-h200.csv`). The row pointers come from
/// `host_row_ptr` when given, else they are read back (n + 1 entries). Backends without the GPU
/// layouts get `m` unchanged.
pub(crate) fn with_kernel_layout<B: Backend, T: Scalar>(
    backend: &B,
    m: DeviceMatrix<T>,
    requested: CsrKernel,
    host_row_ptr: Option<&[u32]>,
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
        uploaded,
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
    let downloaded;
    let rp = match host_row_ptr {
        Some(rp) if rp.len() == n_rows + 1 => rp,
        _ => {
            downloaded = backend.download(&row_ptr)?;
            &downloaded[..]
        }
    };
    // Only a named StreamCompact reads the columns back: an automatic StreamCompact without
    // them lays out the stream kernel with 32-bit indices.
    let ci = match requested {
        CsrKernel::StreamCompact => Some(backend.download(&col_idx)?),
        _ => None,
    };
    let (long_rows, row_blocks) = backend.csr_layouts::<T>(rp, ci.as_deref(), requested)?;
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
        uploaded,
    })
}
