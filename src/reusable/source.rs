//! What a [`super::SolverBuilder`] sets a solver up from: the caller's [`CsrMatrix`], or a
//! [`CsrView`] of the caller's 32-bit arrays, sent to the device as they are where the setup
//! needs nothing else of them (CSR storage, no preconditioner or Jacobi, in the solve's
//! precision) and copied into a [`CsrMatrix`] for every other setup.

use crate::backend::{AnyBackend, DeviceMatrix, MatrixFormat, SpmvOps};
use crate::error::Result;
use crate::matrix::{CsrMatrix, CsrView};
use crate::precond::{self, Jacobi, PrecondSpec, Preconditioner};
use crate::scalar::Scalar;
use crate::SolveOptions;

/// The matrix a solver is set up from.
#[derive(Debug, Clone)]
pub(super) enum Source<'a, T> {
    /// The caller's matrix.
    Owned(&'a CsrMatrix<T>),
    /// The caller's arrays.
    View(CsrView<'a, T>),
}

/// The setup's preconditioner, boxed.
type Precond<T> = Option<Box<dyn Preconditioner<AnyBackend, T>>>;

impl<T: Scalar> Source<'_, T> {
    /// Whether a setup with `options` reads nothing of a view but its arrays (else the view is
    /// copied first, [`Source::for_setup`]).
    fn view_suffices(options: &SolveOptions) -> bool {
        options.format == MatrixFormat::Csr
            && matches!(options.precond, PrecondSpec::None | PrecondSpec::Jacobi)
            && !options.precond_precision.narrows::<T>()
    }

    /// What the setup with `options` reads: `self`, or a view's copy made in `copy`.
    pub(super) fn for_setup<'s>(
        &'s self,
        options: &SolveOptions,
        copy: &'s mut Option<CsrMatrix<T>>,
    ) -> Result<Source<'s, T>> {
        Ok(match self {
            Source::View(v) if !Self::view_suffices(options) => {
                Source::Owned(copy.insert(v.to_csr()?))
            }
            Source::View(v) => Source::View(v.clone()),
            Source::Owned(a) => Source::Owned(a),
        })
    }

    /// Rows and columns.
    pub(super) fn shape(&self) -> (usize, usize) {
        match self {
            Source::Owned(a) => (a.n_rows(), a.n_cols()),
            Source::View(v) => (v.n_rows(), v.n_cols()),
        }
    }

    /// The pattern's fingerprint ([`CsrMatrix::pattern_fingerprint`]).
    pub(super) fn pattern_fingerprint(&self) -> u64 {
        match self {
            Source::Owned(a) => a.pattern_fingerprint(),
            Source::View(v) => v.pattern_fingerprint(),
        }
    }

    /// The matrix on `backend` in `format` (a view: CSR, see [`Source::for_setup`]).
    pub(super) fn upload(
        &self,
        backend: &AnyBackend,
        format: MatrixFormat,
    ) -> Result<DeviceMatrix<T>> {
        match self {
            Source::Owned(a) => backend.upload_matrix(a, format),
            Source::View(v) => backend.upload_view(v),
        }
    }

    /// The preconditioner of `options` for the matrix `device` holds.
    pub(super) fn precond(
        &self,
        backend: &AnyBackend,
        device: &DeviceMatrix<T>,
        options: &SolveOptions,
    ) -> Result<Precond<T>> {
        match self {
            Source::Owned(a) => precond::build_in(
                backend,
                a,
                Some(device),
                options.precond,
                options.precond_precision,
            ),
            // `for_setup` made a view only for these two.
            Source::View(v) => Ok(match options.precond {
                PrecondSpec::Jacobi => Some(Box::new(Jacobi::new_view(backend, v)?)),
                _ => None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MatrixFormat;
    use crate::precond::PrecondPrecision;

    /// A view is sent as it is for CSR storage with no preconditioner or Jacobi in the solve's
    /// precision, and copied for everything else.
    #[test]
    fn a_view_is_copied_only_where_the_setup_needs_a_matrix() {
        let (rp, ci, v) = ([0u32, 1, 2], [0u32, 1], [2.0f64, 3.0]);
        let view = Source::View(CsrView::new(2, 2, &rp, &ci, &v).unwrap());
        let sell = MatrixFormat::Sell { c: 32, sigma: 1 };
        for (options, copied) in [
            (SolveOptions::default(), false),
            (SolveOptions::default().precond(PrecondSpec::Jacobi), false),
            (
                SolveOptions::default().precond(PrecondSpec::Bilu0(Default::default())),
                true,
            ),
            (SolveOptions::default().format(sell), true),
            (
                SolveOptions::default()
                    .precond(PrecondSpec::Jacobi)
                    .precond_precision(PrecondPrecision::F32),
                true,
            ),
        ] {
            let mut copy = None;
            let owned = matches!(
                view.for_setup(&options, &mut copy).unwrap(),
                Source::Owned(_)
            );
            assert_eq!((owned, copy.is_some()), (copied, copied), "{options:?}");
        }
    }
}
