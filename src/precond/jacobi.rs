//! Point Jacobi: M = diag(A).

use super::{Preconditioner, SetupTimes};
use crate::backend::ops::amg_setup as kernels;
use crate::backend::ops::sparse::{abs_extremes, CsrRef};
use crate::backend::{collective_result, Backend, Buffer, DeviceMatrix, Partials, Slot};
use crate::error::{Error, Result};
use crate::matrix::{CsrMatrix, CsrView};
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::time::Instant;

/// Point Jacobi, z_i = r_i / a_ii, applied by the `diag_scale` kernels.
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::matrix::CsrMatrix;
/// use pipekrylov::precond::Jacobi;
/// let a = CsrMatrix::<f64>::identity(3);
/// let host = HostBackend::new();
/// let m = Jacobi::new(&host, &a).unwrap();
/// # let _ = m;
/// ```
#[derive(Debug)]
pub struct Jacobi<T> {
    inv_diag: Buffer<T>,
    times: SetupTimes,
    fingerprint: u64,
}

impl<T: Scalar> Jacobi<T> {
    /// Build from the diagonal of `a`; a zero or non-finite diagonal entry is
    /// [`Error::PreconditionerSetup`] naming the row.
    /// With a distributed backend (`a` = the rank's local block) a failure on any rank is an
    /// error on every rank.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>) -> Result<Self> {
        let local = Self::build_local(backend, (a.n_rows(), a.n_cols()), || {
            (a.diagonal(), a.fingerprint())
        });
        collective_result(backend, "the Jacobi setup", local)
    }

    /// [`Jacobi::new`] of a borrowed matrix.
    pub fn new_view<B: Backend>(backend: &B, a: &CsrView<'_, T>) -> Result<Self> {
        let local = Self::build_local(backend, (a.n_rows(), a.n_cols()), || {
            (a.diagonal(), a.fingerprint())
        });
        collective_result(backend, "the Jacobi setup", local)
    }

    /// The setup on this rank alone, of the matrix of this shape whose diagonal and
    /// fingerprint `of_matrix` gives.
    fn build_local<B: Backend>(
        backend: &B,
        (n_rows, n_cols): (usize, usize),
        of_matrix: impl FnOnce() -> (Vec<T>, u64),
    ) -> Result<Self> {
        let t0 = Instant::now();
        if n_rows != n_cols {
            return Err(Error::dims("Jacobi: square matrix", n_rows, n_cols));
        }
        let (mut inv, fingerprint) = of_matrix();
        // The first bad row (in row order), then the inverses, both in parallel.
        if let Some(row) = inv
            .par_iter()
            .position_first(|d| *d == T::zero() || !d.is_finite())
        {
            return Err(Error::PreconditionerSetup(format!(
                "Jacobi: zero or non-finite diagonal entry in row {row}"
            )));
        }
        inv.par_iter_mut().for_each(|d| *d = T::one() / *d);
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let inv_diag = backend.upload(&inv)?;
        backend.synchronize()?;
        Ok(Self {
            inv_diag,
            times: SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            fingerprint,
        })
    }
}

impl<T: Scalar> Jacobi<T> {
    /// [`Jacobi::new`] of `a`, a CSR matrix on `backend` with finite values, set up there: the
    /// diagonal found and inverted by kernels (`amg_diagonal`, `abs_extremes`,
    /// `amg_smoother_diag`), the same inverses as the host's. Built for `a`'s fingerprint.
    /// Errors as [`Jacobi::new`] (the diagonal is read back only to name the bad row).
    pub(crate) fn from_device<B: Backend>(backend: &B, a: &DeviceMatrix<T>) -> Result<Self> {
        let local = Self::from_device_local(backend, a);
        collective_result(backend, "the Jacobi setup", local)
    }

    fn from_device_local<B: Backend>(backend: &B, a: &DeviceMatrix<T>) -> Result<Self> {
        let t0 = Instant::now();
        if a.n_rows() != a.n_cols() {
            return Err(Error::dims("Jacobi: square matrix", a.n_rows(), a.n_cols()));
        }
        let view = CsrRef::of(a)?;
        let mut diag = backend.alloc::<T>(view.n_rows)?;
        let mut partials = backend.partials::<T>(view.n_rows, 1)?;
        kernels::diagonal(backend, view, &mut diag, &mut partials, Slot(0))?;
        if abs_extremes(backend, &diag)?.zero_or_non_finite > 0 {
            let d = backend.download(&diag)?;
            let row = d
                .iter()
                .position(|d| *d == T::zero() || !d.is_finite())
                .unwrap_or(0);
            return Err(Error::PreconditionerSetup(format!(
                "Jacobi: zero or non-finite diagonal entry in row {row}"
            )));
        }
        let mut inv_diag = backend.alloc::<T>(view.n_rows)?;
        kernels::smoother_diag(backend, view, &diag, false, T::one(), &mut inv_diag)?;
        backend.synchronize()?;
        Ok(Self {
            inv_diag,
            times: SetupTimes {
                host_seconds: 0.0,
                device_seconds: t0.elapsed().as_secs_f64(),
            },
            fingerprint: a.fingerprint(),
        })
    }
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Jacobi<T> {
    fn name(&self) -> &'static str {
        "jacobi"
    }
    fn n(&self) -> usize {
        self.inv_diag.len()
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        backend.diag_scale(&self.inv_diag, r, z)
    }
    fn apply_dot(
        &self,
        backend: &B,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        backend.diag_scale_dot(&self.inv_diag, r, z, partials, slot)
    }
    fn launches_per_apply(&self) -> usize {
        1
    }
    fn fuses_dot(&self) -> bool {
        true
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    fn memory_bytes(&self) -> usize {
        self.inv_diag.bytes()
    }
    fn refresh_reads_device_matrix(&self) -> bool {
        false
    }
    /// No symbolic phase: the new diagonal's inverses, in place of the old ones.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        _device: Option<&crate::backend::DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size("jacobi", self.inv_diag.len(), a)?;
        *self = Self::new(backend, a)?;
        Ok(super::ValuesRefresh::new(self.times, ""))
    }

    fn update_values_on_device(
        &mut self,
        backend: &B,
        device: &DeviceMatrix<T>,
    ) -> Result<super::ValuesRefresh> {
        if device.n_rows() != self.inv_diag.len() {
            return Err(Error::dims(
                "jacobi: new matrix rows vs preconditioner size",
                self.inv_diag.len(),
                device.n_rows(),
            ));
        }
        *self = Self::from_device(backend, device)?;
        Ok(super::ValuesRefresh::new(self.times, ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostBackend;
    use crate::backend::VectorOps;

    /// Diagonal 1..n with the given rows replaced by `bad`.
    fn diag_matrix(n: usize, bad: &[usize], value: f64) -> CsrMatrix<f64> {
        let t: Vec<(usize, usize, f64)> = (0..n)
            .map(|i| {
                (
                    i,
                    i,
                    if bad.contains(&i) {
                        value
                    } else {
                        1.0 + i as f64
                    },
                )
            })
            .collect();
        CsrMatrix::from_triplets(n, n, &t).unwrap()
    }

    #[test]
    fn the_first_bad_diagonal_entry_is_named() {
        let be = HostBackend::new();
        for (bad, value) in [(vec![70_000, 3], 0.0), (vec![5, 9], f64::NAN)] {
            let a = diag_matrix(100_000, &bad, value);
            let first = *bad.iter().min().unwrap();
            match Jacobi::new(&be, &a) {
                Err(Error::PreconditionerSetup(m)) => {
                    assert!(m.ends_with(&format!("row {first}")), "{m}")
                }
                other => panic!("expected a setup error, got {other:?}"),
            }
        }
        let ok = Jacobi::new(&be, &diag_matrix(1000, &[], 0.0)).unwrap();
        let mut inv = vec![0.0; 1000];
        be.read(&ok.inv_diag, &mut inv).unwrap();
        assert!(inv
            .iter()
            .enumerate()
            .all(|(i, &d)| d == 1.0 / (1.0 + i as f64)));
    }
}
