//! The values-only refresh of a hierarchy set up on the device: every level's strong couplings
//! and aggregates kept ([`KeptLevel`]), so the patterns of P, R = P^T and R A P; the numeric
//! phase (diagonals, the prolongators' weights and rows, R's values on its kept pattern, A P, the
//! values of R (A P) on the kept pattern, the smoothers' data, the coarsest inverse) runs on the device with the
//! setup's kernels, into new arrays, so an error leaves the hierarchy as it was.

use super::coarse::dense_inverse;
use super::device_setup::{
    diagonal, download, finest_for_cycle, lap, prolongator, smoother, KeptLevel, SetupPhases,
    LEVEL_SLOTS,
};
use super::level::DeviceLevel;
use super::options::AmgOptions;
use crate::backend::ops::sparse::{self, CsrRef};
use crate::backend::{Backend, Buffer, DeviceFormat, DeviceMatrix};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::device_a::DeviceA;
use crate::scalar::Scalar;
use std::time::Instant;

/// A level's new values, not yet written into the hierarchy.
pub(super) struct RefreshedLevel<T> {
    /// P's values on its kept pattern.
    pub(super) p: Buffer<T>,
    /// R's values on its kept pattern.
    pub(super) r: Buffer<T>,
    /// The next level's operator values on its kept pattern (`None` for the level above the
    /// coarsest: the coarsest is on the host, in `coarse_inverse`).
    pub(super) next_a: Option<Buffer<T>>,
    /// The smoother's scaling.
    pub(super) s: Buffer<T>,
    /// Chebyshev's first-step scaling (empty otherwise).
    pub(super) s_first: Buffer<T>,
    /// Chebyshev's (theta, delta).
    pub(super) chebyshev: (f64, f64),
}

/// The numeric phase's output for the whole hierarchy.
pub(super) struct Refreshed<T> {
    /// The finest level's operator for the cycle (the solver's copy shared again, or an upload).
    pub(super) finest: DeviceMatrix<T>,
    /// The levels above the coarsest.
    pub(super) levels: Vec<RefreshedLevel<T>>,
    /// The coarsest level's new dense inverse.
    pub(super) coarse_inverse: CsrMatrix<T>,
    /// Where the time went (the aggregation phase is not run: zero).
    pub(super) phases: SetupPhases,
}

/// The numeric phase of the device setup on A's new values, read from `first` (the pattern of
/// the matrix the hierarchy was built for: the caller checked it), with the kept symbolic setup
/// `kept` of `levels`. The finest level for the cycle comes from `first` and `fallback` as in
/// the setup ([`finest_for_cycle`]). Nothing of `levels` is written.
///
/// Errors: a zero, negative or non-finite diagonal on some level, a singular coarsest level
/// (as the setup's), device errors; [`Error::PreconditionerSetup`] when a product's pattern is
/// not the kept one (it cannot be, for a matrix of the kept pattern).
pub(super) fn numeric<B: Backend, T: Scalar>(
    backend: &B,
    first: DeviceA<'_, T>,
    fallback: Option<&CsrMatrix<T>>,
    levels: &[DeviceLevel<T>],
    kept: &[KeptLevel],
    options: &AmgOptions,
) -> Result<Refreshed<T>> {
    if kept.len() != levels.len() {
        return Err(Error::PreconditionerSetup(
            "amg: the refresh has no kept symbolic setup for every level".into(),
        ));
    }
    let mut phases = SetupPhases::default();
    let mut t = Instant::now();
    let mut out = Vec::with_capacity(levels.len());
    let mut coarsest = None;
    for (l, (level, kept)) in levels.iter().zip(kept).enumerate() {
        // This level's operator: A itself, or the values just computed on the kept pattern.
        let view = match out.last() {
            None => CsrRef::of(first.get())?,
            Some(RefreshedLevel { next_a, .. }) => {
                let values = next_a.as_ref().ok_or_else(|| {
                    Error::PreconditionerSetup(format!("amg: level {l} has no refreshed values"))
                })?;
                with_values(&level.a, values)?
            }
        };
        let n = view.n_rows;
        let mut partials = backend.partials::<T>(n, LEVEL_SLOTS)?;
        let diag = diagonal(backend, view, l, &mut partials)?;
        lap(backend, &mut t, &mut phases.aggregation)?;
        let (p, radius) = prolongator(
            backend,
            view,
            &kept.flags,
            &diag,
            &kept.agg,
            kept.n_coarse,
            options,
            &mut partials,
        )?;
        same_pattern("P", l, p.view().nnz(), level.p.nnz())?;
        lap(backend, &mut t, &mut phases.prolongator)?;
        // R = P^T: its values alone, on the kept pattern.
        let mut r_values = backend.alloc::<T>(level.r.nnz())?;
        sparse::transpose_values(backend, p.view(), csr_pattern(&level.r)?, &mut r_values)?;
        let r = with_values(&level.r, &r_values)?;
        lap(backend, &mut t, &mut phases.transpose)?;
        let ap = sparse::spgemm(backend, view, p.view())?;
        let next_a = match levels.get(l + 1) {
            Some(next) => {
                let (row_ptr, col_idx) = csr_pattern(&next.a)?;
                let mut values = backend.alloc::<T>(next.a.nnz())?;
                sparse::spgemm_values(backend, r, ap.view(), (row_ptr, col_idx), &mut values)?;
                Some(values)
            }
            None => {
                let c = sparse::spgemm(backend, r, ap.view())?;
                coarsest = Some(c.into_matrix());
                None
            }
        };
        drop(ap);
        lap(backend, &mut t, &mut phases.galerkin)?;
        let (s, s_first, chebyshev) = smoother(
            backend,
            view,
            &kept.flags,
            &diag,
            options,
            &mut partials,
            radius,
        )?;
        lap(backend, &mut t, &mut phases.smoother)?;
        out.push(RefreshedLevel {
            p: p.values,
            r: r_values,
            next_a,
            s,
            s_first,
            chebyshev,
        });
    }
    // The coarsest level: its diagonal checked as the setup's, then inverted on the host (with
    // no level above it, the matrix itself is the coarsest).
    let coarsest = coarsest.as_ref().unwrap_or_else(|| first.get());
    let view = CsrRef::of(coarsest)?;
    let mut partials = backend.partials::<T>(view.n_rows, 2)?;
    diagonal(backend, view, levels.len(), &mut partials)?;
    let coarse_inverse = dense_inverse(&download(backend, coarsest)?, levels.len())?;
    lap(backend, &mut t, &mut phases.coarsest)?;
    let finest = finest_for_cycle(backend, first, fallback)?;
    lap(backend, &mut t, &mut phases.finest)?;
    Ok(Refreshed {
        finest,
        levels: out,
        coarse_inverse,
        phases,
    })
}

/// `m`'s row pointers and column indices with `values` (the same length as its values).
fn with_values<'a, T: Scalar>(
    m: &'a DeviceMatrix<T>,
    values: &'a Buffer<T>,
) -> Result<CsrRef<'a, T>> {
    let (row_ptr, col_idx) = csr_pattern(m)?;
    CsrRef::new(m.n_rows(), m.n_cols(), row_ptr, col_idx, values)
}

/// The row pointers and column indices of a CSR device matrix.
fn csr_pattern<T: Scalar>(m: &DeviceMatrix<T>) -> Result<(&Buffer<u32>, &Buffer<u32>)> {
    match m.format() {
        DeviceFormat::Csr {
            row_ptr, col_idx, ..
        } => Ok((row_ptr, col_idx)),
        _ => Err(Error::PreconditionerSetup(
            "amg: a device-built level is not in CSR".into(),
        )),
    }
}

/// [`Error::PreconditionerSetup`] unless a product of level `l` has its kept number of entries.
fn same_pattern(what: &str, l: usize, new: usize, old: usize) -> Result<()> {
    if new == old {
        Ok(())
    } else {
        Err(Error::PreconditionerSetup(format!(
            "amg: the refreshed {what} of level {l} has {new} entries, the kept pattern {old}"
        )))
    }
}
