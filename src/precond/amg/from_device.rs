//! AMG of a matrix given on the device alone ([`crate::ReusableSolver::on_device`]): the
//! device setup reads it in place, and the high-contrast rule's diagonal extremes are found
//! there too (kernels `amg_diagonal` and `abs_extremes`), so no array of the matrix goes to the
//! host.

use super::device::Amg;
use super::device_setup;
use super::options::{AmgOptions, AmgPrecision};
use crate::backend::ops::amg_setup as kernels;
use crate::backend::ops::sparse::{abs_extremes, CsrRef};
use crate::backend::{collective_result, Backend, DeviceMatrix, Slot};
use crate::error::Result;
use crate::precond::device_a::DeviceA;
use crate::scalar::{Precision, Scalar};
use std::time::Instant;

impl<T: Scalar> Amg<T> {
    /// The device setup ([`crate::precond::AmgSetup::Device`]) of `a`, a CSR matrix on
    /// `backend` with finite values (as [`DeviceMatrix::from_csr_buffers`] checks), read in
    /// place; the finest level of the cycle shares its arrays. The options are those of
    /// [`AmgOptions::for_contrast`] for `a`'s diagonal contrast, found on the device (a few
    /// numbers per work-group read back). Built for `a`'s fingerprint. Errors: as the device
    /// setup of [`Amg::new_on`].
    pub(crate) fn from_device_matrix<B: Backend>(
        backend: &B,
        a: &DeviceMatrix<T>,
        options: AmgOptions,
    ) -> Result<Self> {
        let local = Self::from_device_matrix_local(backend, a, options);
        collective_result(backend, "the AMG setup", local)
    }

    fn from_device_matrix_local<B: Backend>(
        backend: &B,
        a: &DeviceMatrix<T>,
        options: AmgOptions,
    ) -> Result<Self> {
        let t0 = Instant::now();
        device_setup::check_shape(a.n_rows(), a.n_cols(), &options)?;
        let options = options.for_contrast(diagonal_contrast(backend, a)?);
        let fingerprint = a.fingerprint();
        if options.precision == AmgPrecision::F32 && T::PRECISION == Precision::F64 {
            let inner = AmgOptions {
                precision: AmgPrecision::Solve,
                ..options
            };
            let first = DeviceA::<f32>::narrowed_csr(backend, a, fingerprint)?;
            let amg = Amg::<f32>::from_device_a(backend, first, None, fingerprint, inner, t0)?;
            return Self::wrap_narrow(backend, amg, a.n_rows(), fingerprint, options, t0);
        }
        Self::from_device_a(
            backend,
            DeviceA::Borrowed(a),
            None,
            fingerprint,
            options,
            t0,
        )
    }
}

/// `a`'s diagonal contrast as [`super::options::diagonal_contrast`] computes it on the host
/// (largest over smallest nonzero diagonal magnitude, 1 without one), on the device.
pub(super) fn diagonal_contrast<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
) -> Result<f64> {
    let view = CsrRef::of(a)?;
    let mut diag = backend.alloc::<T>(view.n_rows)?;
    // Its count of rows without a positive diagonal is the setup's to report.
    let mut partials = backend.partials::<T>(view.n_rows, 1)?;
    kernels::diagonal(backend, view, &mut diag, &mut partials, Slot(0))?;
    let e = abs_extremes(backend, &diag)?;
    Ok(e.smallest_nonzero.map_or(1.0, |lo| e.largest / lo))
}
