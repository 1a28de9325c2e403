//! A solver of a matrix whose arrays already live on the device
//! ([`DeviceMatrix::from_csr_buffers`]): the arrays are the solver's matrix, used in place.

use super::{Parts, ReusableSolver, ValuesUpdate};
use crate::backend::ops::sparse::{csr_check, CsrRef};
use crate::backend::{AnyBackend, BackendInfo, Buffer, DeviceMatrix, MatrixFormat, VectorOps};
use crate::device_csr::{download_csr, new_fingerprint};
use crate::error::{Error, Result};
use crate::precond::from_device::build_from_device;
use crate::scalar::Scalar;
use crate::SolveOptions;
use std::ptr::NonNull;
use std::time::Instant;

impl<T: Scalar> ReusableSolver<T> {
    /// A solver of `a`, a CSR matrix on `backend` ([`DeviceMatrix::from_csr_buffers`], e.g. of
    /// CuPy's arrays), with `options` (their `backend` is not read: `backend` is the one).
    /// Nothing of `a` is copied: its arrays are the solver's matrix. The preconditioner is set
    /// up from them on the device when its setup runs there (none, Jacobi, AMG set up on the
    /// device: [`crate::precond::AmgSetup::Auto`] on a GPU); any other preconditioner gets one
    /// copy of the matrix on the host for its setup, and the solutions' notes say so. Solve
    /// with host vectors ([`ReusableSolver::solve`]) or, without any copy, with buffers of
    /// `backend` ([`ReusableSolver::solve_buffers`]).
    ///
    /// ```
    /// use pipekrylov::backend::host::HostBackend;
    /// use pipekrylov::backend::{AnyBackend, DeviceMatrix, VectorOps};
    /// use pipekrylov::matrix::generate::Generator;
    /// use pipekrylov::precond::PrecondKind;
    /// use pipekrylov::{Method, ReusableSolver, SolveOptions};
    /// let a = Generator::Poisson2d.generate::<f64>(1024).unwrap().matrix;
    /// let backend = AnyBackend::Host(HostBackend::new());
    /// let index = |x: &[usize]| x.iter().map(|&i| i as u32).collect::<Vec<_>>();
    /// let on_device = DeviceMatrix::from_csr_buffers(
    ///     &backend,
    ///     a.n_rows(),
    ///     a.n_cols(),
    ///     backend.upload(&index(a.row_ptr())).unwrap(),
    ///     backend.upload(&index(a.col_idx())).unwrap(),
    ///     backend.upload(a.values()).unwrap(),
    /// )
    /// .unwrap();
    /// let options = SolveOptions::default()
    ///     .method(Method::Cg)
    ///     .precond(PrecondKind::Jacobi);
    /// let mut solver = ReusableSolver::on_device(backend, on_device, options).unwrap();
    /// let sol = solver.solve(&vec![1.0; a.n_rows()]).unwrap();
    /// assert!(sol.report.stop_reason.converged());
    /// ```
    ///
    /// Errors: a matrix that is not square ([`Error::DimensionMismatch`]), a format other than
    /// CSR in `options` ([`Error::InvalidParameter`]: the arrays are used as they are), a
    /// backend without double precision for `T` = f64, `options`' own errors, and the
    /// preconditioner's setup errors. New values come by
    /// [`ReusableSolver::update_device_values`] ([`ReusableSolver::update_values`] is
    /// [`Error::Unsupported`] on such a solver).
    pub fn on_device(
        backend: AnyBackend,
        mut a: DeviceMatrix<T>,
        options: SolveOptions,
    ) -> Result<Self> {
        if a.n_rows() != a.n_cols() {
            return Err(Error::dims(
                "matrix must be square: columns vs rows",
                a.n_rows(),
                a.n_cols(),
            ));
        }
        if options.format != MatrixFormat::Csr {
            return Err(Error::param(
                "format",
                format!(
                    "a matrix given on the device is used in place, in CSR ({} was asked for)",
                    options.format
                ),
            ));
        }
        if T::PRECISION == crate::Precision::F64 && !backend.supports_f64() {
            return Err(Error::BackendUnavailable {
                backend: backend.name().into(),
                reason: "the device has no double precision (solve in f32)".into(),
            });
        }
        options.params.validate()?;
        let built =
            build_from_device(&backend, &mut a, options.precond, options.precond_precision)?;
        let mut notes = vec!["the matrix's device arrays are used in place".to_string()];
        notes.extend(built.host_copy);
        let rhs = backend.alloc::<T>(a.n_rows())?;
        let x = backend.alloc::<T>(a.n_rows())?;
        let parts = Box::new(Parts {
            backend,
            matrix: a,
            precond: built.precond,
        });
        Ok(ReusableSolver {
            options,
            notes,
            pattern: None,
            solver: None,
            rhs,
            x,
            parts: NonNull::from(Box::leak(parts)),
            spare: None,
        })
    }

    /// New values for a solver of device arrays ([`ReusableSolver::on_device`]): `values`, one
    /// per stored entry on the solver's backend (e.g. the caller's memory borrowed by address),
    /// becomes the matrix's values array, used in place like the first; the row pointers and
    /// columns are kept (`values` must follow them: the caller's promise, as the pattern is not
    /// given again). The values are checked on the device (kernel `csr_check`), then the
    /// preconditioner's numeric phase runs again: on the device for Jacobi and AMG set up
    /// there ([`crate::precond::Preconditioner::update_values_on_device`]), for the others from
    /// one host copy of the matrix, as at setup. The old values array is dropped (a borrowed
    /// one is left to its owner).
    ///
    /// Errors: a solver of a host matrix ([`Error::Unsupported`]: use
    /// [`ReusableSolver::update_values`]), another length ([`Error::PatternMismatch`]), NaN or
    /// infinite values ([`Error::InvalidMatrix`]), a buffer of another backend
    /// ([`Error::WrongBackend`]) and what the preconditioner's numeric phase reports. On any
    /// error the solver keeps its old values and preconditioner and stays usable.
    pub fn update_device_values(&mut self, values: Buffer<T>) -> Result<ValuesUpdate> {
        let t0 = Instant::now();
        if self.pattern.is_some() {
            return Err(Error::Unsupported(
                "device values for a solver of a host matrix (use update_values)".into(),
            ));
        }
        let nnz = self.parts().matrix.nnz();
        if values.len() != nnz {
            return Err(Error::PatternMismatch(format!(
                "the solver's matrix has {nnz} stored entries, the new values {}",
                values.len()
            )));
        }
        // The cached Krylov solver borrows the parts: it goes first.
        self.solver = None;
        // SAFETY: the only borrower of `parts` is gone, and `&mut self` excludes every other
        // reference to them (`parts()` references are tied to `&self`).
        let parts = unsafe { self.parts.as_mut() };
        let faults = {
            let m = &parts.matrix;
            let (rp, ci) = match m.format() {
                crate::backend::DeviceFormat::Csr {
                    row_ptr, col_idx, ..
                } => (row_ptr, col_idx),
                _ => return Err(Error::param("update_device_values", "a CSR matrix")),
            };
            csr_check(
                &parts.backend,
                CsrRef::new(m.n_rows(), m.n_cols(), rp, ci, &values)?,
            )?
        };
        if faults.non_finite > 0 {
            return Err(Error::InvalidMatrix(format!(
                "the new device values hold {} NaN or infinite entries",
                faults.non_finite
            )));
        }
        let old_fingerprint = parts.matrix.fingerprint;
        let old_values = std::mem::replace(parts.matrix.values_mut(), values);
        parts.matrix.fingerprint = new_fingerprint();
        let matrix_seconds = t0.elapsed().as_secs_f64();
        let refreshed = match parts.precond.as_mut() {
            None => Ok(None),
            Some(m) => match m.update_values_on_device(&parts.backend, &parts.matrix) {
                Err(Error::Unsupported(_)) => download_csr(&parts.backend, &parts.matrix)
                    .and_then(|host| {
                        parts.matrix.fingerprint = host.fingerprint();
                        m.update_values(&parts.backend, &host, Some(&parts.matrix))
                    })
                    .map(Some),
                other => other.map(Some),
            },
        };
        match refreshed {
            Ok(precond) => Ok(ValuesUpdate {
                matrix_seconds,
                precond,
                seconds: t0.elapsed().as_secs_f64(),
            }),
            Err(e) => {
                *parts.matrix.values_mut() = old_values;
                parts.matrix.fingerprint = old_fingerprint;
                Err(e)
            }
        }
    }
}
