//! Preconditioners of a matrix given on the device ([`crate::ReusableSolver::on_device`]):
//! those whose setup runs on the device read it there, the others get one copy of it on the
//! host.

use super::kind::build_in;
use super::narrow::nothing_to_narrow;
use super::{Amg, AmgOptions, Jacobi, PrecondPrecision, PrecondSpec, Preconditioner};
use crate::backend::{Backend, DeviceMatrix};
use crate::device_csr::download_csr;
use crate::error::Result;
use crate::scalar::Scalar;

/// A preconditioner built from a device matrix, and whether the matrix went to the host for it.
pub(crate) struct FromDevice<B, T> {
    /// The preconditioner (`None` for [`PrecondSpec::None`]).
    pub(crate) precond: Option<Box<dyn Preconditioner<B, T>>>,
    /// Why the matrix was copied to the host, when it was.
    pub(crate) host_copy: Option<String>,
}

/// Build `spec` for `a`, a CSR matrix on `backend` checked by
/// [`DeviceMatrix::from_csr_buffers`]:
/// - none, Jacobi, and AMG set up on the device ([`crate::precond::AmgOptions::sets_up_on_device`])
///   read `a` in place;
/// - every other preconditioner (their setups run on the host) from `a` downloaded once, whose
///   fingerprint `a` then takes (it is that matrix), so that setups reading A on the device
///   share `a`'s arrays as they share an upload's.
///
/// In `precision` ([`build_in`]): an f32 AMG hierarchy is set up as AMG's is; every other
/// preconditioner in f32 is set up from the copy on the host.
pub(crate) fn build_from_device<B: Backend + 'static, T: Scalar>(
    backend: &B,
    a: &mut DeviceMatrix<T>,
    spec: PrecondSpec,
    precision: PrecondPrecision,
) -> Result<FromDevice<B, T>> {
    let on_device = |precond: Option<Box<dyn Preconditioner<B, T>>>| FromDevice {
        precond,
        host_copy: None,
    };
    let narrows = precision.narrows::<T>();
    let spec = match spec {
        PrecondSpec::Amg(options) if narrows => PrecondSpec::Amg(AmgOptions {
            precision: PrecondPrecision::F32,
            ..options
        }),
        spec => spec,
    };
    match spec {
        PrecondSpec::None if !narrows => Ok(on_device(None)),
        PrecondSpec::None => Err(nothing_to_narrow()),
        PrecondSpec::Jacobi if !narrows => {
            Ok(on_device(Some(Box::new(Jacobi::from_device(backend, a)?))))
        }
        PrecondSpec::Amg(options) if options.sets_up_on_device(backend) => Ok(on_device(Some(
            Box::new(Amg::from_device_matrix(backend, a, options)?),
        ))),
        spec => {
            let host = download_csr(backend, a)?;
            a.fingerprint = host.fingerprint();
            Ok(FromDevice {
                precond: build_in(backend, &host, Some(a), spec, precision)?,
                host_copy: Some(format!(
                    "the matrix was copied to the host once for the {} setup, which runs there",
                    spec.kind()
                )),
            })
        }
    }
}
