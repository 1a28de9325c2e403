//! The values-only refresh of [`Amg`]: the kept symbolic setup (every level's strong
//! couplings and aggregates), the numeric phase on the host ([`Hierarchy::refresh`]'s), the
//! new values written into the device arrays.

use super::device::{smoother_scalings, Amg, DeviceLevel};
use super::hierarchy::Hierarchy;
use super::{device_refresh, device_setup};
use crate::backend::{collective_result, Backend, DeviceMatrix, MatrixFormat};
use crate::error::Error;
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::precond::device_a::{trusted_fingerprint, DeviceA};
use crate::precond::{check_same_size, SetupTimes, ValuesRefresh};
use crate::scalar::Scalar;
use std::time::Instant;

impl<T: Scalar> Amg<T> {
    /// See the `update_values` of [`Amg`]'s [`crate::precond::Preconditioner`] impl.
    pub(super) fn refresh<B: Backend>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<ValuesRefresh> {
        if self.distributed {
            return Err(Error::Unsupported(
                "a values-only refresh of the distributed AMG (build it anew)".into(),
            ));
        }
        check_same_size("amg", self.n, a)?;
        if self.narrow.is_some() {
            return self.refresh_narrow(backend, a, device);
        }
        if self.on_device.is_some() {
            return self.refresh_on_device(backend, a, device);
        }
        let t0 = Instant::now();
        let local = Hierarchy::numeric(a, &self.options, &self.patterns, self.n);
        let hierarchy = collective_result(backend, "the AMG refresh", local)?;
        let fingerprint = a.fingerprint();
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let local = self
            .write(backend, &hierarchy)
            .and_then(|uploaded| backend.synchronize().map(|()| uploaded));
        let uploaded = match collective_result(backend, "the AMG refresh's writes", local) {
            Ok(uploaded) => uploaded,
            Err(e) => {
                // Some levels may hold the new values already: refuse every matrix.
                self.fingerprint = !fingerprint;
                return Err(e);
            }
        };
        self.fingerprint = fingerprint;
        self.stats = hierarchy
            .level_stats()
            .iter()
            .map(|s| (s.rows, s.nnz))
            .collect();
        self.operator_complexity = hierarchy.operator_complexity();
        self.grid_complexity = hierarchy.grid_complexity();
        let levels = self.levels.len();
        let mut kept = format!(
            "the strong couplings and aggregates (the tentative prolongators) of {levels} level{} \
             above the coarsest, the patterns of their Galerkin products (from the first \
             refresh on) and every device array",
            if levels == 1 { "" } else { "s" }
        );
        if !uploaded.is_empty() {
            kept += &format!(
                " but those of levels {uploaded:?} (their patterns changed: uploaded anew)"
            );
        }
        Ok(ValuesRefresh::new(
            SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            kept,
        ))
    }

    /// The refresh of a hierarchy set up on the device: the numeric phase on the device
    /// ([`device_refresh::numeric`]) into new arrays, then swapped in.
    fn refresh_on_device<B: Backend>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<ValuesRefresh> {
        let t0 = Instant::now();
        let fingerprint = trusted_fingerprint(a, device);
        let local = DeviceA::of(backend, a, device, fingerprint)
            .and_then(|first| self.device_numeric(backend, first, Some(a)));
        self.finish_device_refresh(backend, local, fingerprint, t0)
    }

    /// [`Amg::refresh_on_device`] from the new matrix on the device alone (a solver's of device
    /// arrays), read in place; `Unsupported` where the refresh needs the matrix on the host (the
    /// host setup, the f32 hierarchy).
    pub(super) fn refresh_from_device<B: Backend>(
        &mut self,
        backend: &B,
        device: &DeviceMatrix<T>,
    ) -> Result<ValuesRefresh> {
        if self.distributed || self.narrow.is_some() || self.on_device.is_none() {
            return Err(Error::Unsupported(
                "amg: this hierarchy refreshes from the matrix on the host".into(),
            ));
        }
        if device.n_rows() != self.n {
            return Err(Error::dims(
                "amg: new matrix rows vs preconditioner size",
                self.n,
                device.n_rows(),
            ));
        }
        let t0 = Instant::now();
        let local = self.device_numeric(backend, DeviceA::Borrowed(device), None);
        self.finish_device_refresh(backend, local, device.fingerprint(), t0)
    }

    /// [`device_refresh::numeric`] on this hierarchy's levels and kept symbolic setup.
    fn device_numeric<B: Backend>(
        &self,
        backend: &B,
        first: DeviceA<'_, T>,
        fallback: Option<&CsrMatrix<T>>,
    ) -> Result<device_refresh::Refreshed<T>> {
        device_refresh::numeric(
            backend,
            first,
            fallback,
            &self.levels,
            &self.device_kept,
            &self.options,
        )
    }

    /// The refresh of a single-precision hierarchy inside this solve's precision: A rounded to
    /// f32 (on the device from the solver's copy when set up there, else on the host) and the
    /// inner hierarchy refreshed with it. On an error that left the inner hierarchy refusing
    /// every matrix, this one refuses them too.
    fn refresh_narrow<B: Backend>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<ValuesRefresh> {
        let t0 = Instant::now();
        let Some(narrow) = self.narrow.as_mut() else {
            return Err(Error::PreconditionerSetup(
                "amg: no single-precision hierarchy to refresh".into(),
            ));
        };
        let inner = &mut narrow.amg;
        let before = inner.fingerprint;
        let (result, fingerprint) = if inner.on_device.is_some() {
            let fingerprint = trusted_fingerprint(a, device);
            let local = DeviceA::<f32>::narrowed(backend, a, device, fingerprint)
                .and_then(|first| inner.device_numeric(backend, first, None));
            let result = inner.finish_device_refresh(backend, local, fingerprint, t0);
            (result, fingerprint)
        } else {
            (
                inner.refresh(backend, &a.cast::<f32>(), None),
                a.fingerprint(),
            )
        };
        match result {
            Ok(refresh) => {
                self.fingerprint = fingerprint;
                self.refresh_phases = inner.refresh_phases;
                Ok(refresh)
            }
            Err(e) => {
                if inner.fingerprint != before {
                    self.fingerprint = !fingerprint;
                }
                Err(e)
            }
        }
    }

    /// The end of a device refresh: the numeric phase's result `local` (agreed across ranks)
    /// swapped in, the preconditioner built for `fingerprint`.
    pub(super) fn finish_device_refresh<B: Backend>(
        &mut self,
        backend: &B,
        local: Result<device_refresh::Refreshed<T>>,
        fingerprint: u64,
        t0: Instant,
    ) -> Result<ValuesRefresh> {
        let fresh = collective_result(backend, "the AMG refresh", local)?;
        let host_seconds = fresh.phases.coarsest;
        // From here on only device writes can fail: then refuse every matrix.
        let local = self.swap_in(backend, fresh);
        if let Err(e) = collective_result(backend, "the AMG refresh's writes", local) {
            self.fingerprint = !fingerprint;
            return Err(e);
        }
        self.fingerprint = fingerprint;
        let levels = self.levels.len();
        let total = t0.elapsed().as_secs_f64();
        Ok(ValuesRefresh::new(
            SetupTimes {
                host_seconds,
                device_seconds: total - host_seconds,
            },
            format!(
                "the strong couplings and aggregates of {levels} level{} above the coarsest (on \
                 the device), so the patterns of P, R and the coarse operators; the numeric \
                 phase ran on the device",
                if levels == 1 { "" } else { "s" }
            ),
        ))
    }

    /// The new values of `fresh` swapped into the levels' arrays (patterns kept), the
    /// coarsest inverse written in place.
    fn swap_in<B: Backend>(
        &mut self,
        backend: &B,
        fresh: device_refresh::Refreshed<T>,
    ) -> Result<()> {
        self.refresh_phases = Some(fresh.phases);
        let mut finest = Some(fresh.finest);
        for (l, new) in fresh.levels.into_iter().enumerate() {
            let level = &mut self.levels[l];
            if let Some(m) = finest.take() {
                self.memory = self.memory + m.device_bytes() - level.a.device_bytes();
                level.a = m;
            }
            let mut p = new.p;
            let mut r = new.r;
            std::mem::swap(level.p.values_mut(), &mut p);
            std::mem::swap(level.r.values_mut(), &mut r);
            level.s = new.s;
            level.s_first = new.s_first;
            level.chebyshev = new.chebyshev;
            if let (Some(mut values), Some(next)) = (new.next_a, self.levels.get_mut(l + 1)) {
                std::mem::swap(next.a.values_mut(), &mut values);
            }
        }
        self.write_coarse_inverse(backend, &fresh.coarse_inverse)?;
        device_setup::mark_complete(backend, &mut self.levels)
    }

    /// Write the operators, transfers, smoother data and coarsest inverse of `h` (the numeric
    /// phase on this preconditioner's aggregates) to the device: in place where a matrix keeps
    /// its pattern, as a new upload where it does not. Returns the levels uploaded anew (the
    /// coarsest counted as `levels.len()`).
    fn write<B: Backend>(&mut self, backend: &B, h: &Hierarchy<T>) -> Result<Vec<usize>> {
        let mut uploaded = Vec::new();
        for (l, (dl, level)) in self.levels.iter_mut().zip(h.levels()).enumerate() {
            let host = [level.a(), level.p(), level.r()];
            let patterns = host.map(CsrMatrix::pattern_fingerprint);
            let mut new_upload = false;
            let device: [&mut DeviceMatrix<T>; 3] = [&mut dl.a, &mut dl.p, &mut dl.r];
            for ((d, m), (&old, &new)) in device
                .into_iter()
                .zip(host)
                .zip(dl.patterns.iter().zip(&patterns))
            {
                if old == new && same_shape(d, m) {
                    d.update_values(backend, m)?;
                } else {
                    let fresh = backend.upload_matrix(m, MatrixFormat::Csr)?;
                    self.memory = self.memory + fresh.device_bytes() - d.device_bytes();
                    *d = fresh;
                    new_upload = true;
                }
            }
            dl.patterns = patterns;
            write_smoother(backend, dl, level.smoother())?;
            if new_upload {
                uploaded.push(l);
            }
        }
        if self.write_coarse_inverse(backend, h.coarsest().inverse())? {
            uploaded.push(self.levels.len());
        }
        Ok(uploaded)
    }

    /// The coarsest level's new dense inverse written in place (the same size is the same
    /// pattern), or uploaded anew (returns true) when its size changed; an empty one is not
    /// written.
    fn write_coarse_inverse<B: Backend>(
        &mut self,
        backend: &B,
        inverse: &CsrMatrix<T>,
    ) -> Result<bool> {
        if inverse.nnz() == 0 {
            return Ok(false);
        }
        if same_shape(&self.coarse_inverse, inverse) {
            self.coarse_inverse.update_values(backend, inverse)?;
            return Ok(false);
        }
        let fresh = backend.upload_matrix(inverse, MatrixFormat::Csr)?;
        self.memory = self.memory + fresh.device_bytes() - self.coarse_inverse.device_bytes();
        self.coarse_inverse = fresh;
        Ok(true)
    }
}

/// Whether the device matrix `d` has the size and nonzeros of `m`.
fn same_shape<T: Scalar>(d: &DeviceMatrix<T>, m: &CsrMatrix<T>) -> bool {
    d.n_rows() == m.n_rows() && d.n_cols() == m.n_cols() && d.nnz() == m.nnz()
}

/// The smoother's scalings of `smoother` written into `dl` (the same lengths: the level keeps
/// its rows).
fn write_smoother<B: Backend, T: Scalar>(
    backend: &B,
    dl: &mut DeviceLevel<T>,
    smoother: &super::smoother::LevelSmoother<T>,
) -> Result<()> {
    let (chebyshev, s_first) = smoother_scalings(smoother);
    // (An empty write is skipped: not every driver takes a transfer of 0 bytes.)
    for (buffer, values) in [
        (&mut dl.s, smoother.scaled_inv_diag()),
        (&mut dl.s_first, &s_first[..]),
    ] {
        if !values.is_empty() {
            backend.write(buffer, values)?;
        }
    }
    dl.chebyshev = chebyshev;
    Ok(())
}
