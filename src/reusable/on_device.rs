//! A solver of a matrix whose arrays already live on the device
//! ([`DeviceMatrix::from_csr_buffers`]): the arrays are the solver's matrix, used in place.

use super::{Parts, ReusableSolver};
use crate::backend::{AnyBackend, BackendInfo, DeviceMatrix, MatrixFormat, VectorOps};
use crate::error::{Error, Result};
use crate::precond::from_device::build_from_device;
use crate::scalar::Scalar;
use crate::SolveOptions;
use std::ptr::NonNull;

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
    /// preconditioner's setup errors. [`ReusableSolver::update_values`] is
    /// [`Error::Unsupported`] on such a solver (build a new one for new values).
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
        let built = build_from_device(&backend, &mut a, options.precond)?;
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
        })
    }
}
