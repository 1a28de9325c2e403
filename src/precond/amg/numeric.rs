//! The numeric phase of a level and of the coarsest level: everything of the setup after the
//! aggregation, shared by [`Hierarchy::build`] and the values-only refresh
//! ([`Hierarchy::refresh`]), which keeps the strong couplings and aggregates.
//!
//! [`Hierarchy::build`]: super::Hierarchy::build
//! [`Hierarchy::refresh`]: super::Hierarchy::refresh

use super::coarse::dense_inverse;
use super::galerkin::galerkin;
use super::hierarchy::{CoarseLevel, Level, LevelPattern};
use super::options::{AmgOptions, Coarsening};
use super::prolongation::{
    filtered_matrix, positive_diagonal, smoothed_prolongator, spectral_radius,
    tentative_prolongator,
};
use super::restriction::restriction;
use super::smoother::LevelSmoother;
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::memory::check_budget;
use crate::scalar::Scalar;
use std::sync::Arc;

/// Level `l` of operator `a` on its symbolic setup `pattern`, and the next level's operator:
/// the positive diagonal (checked), the prolongator (smoothed: the filtered matrix, the weight
/// w = 4/3 / rho(D_f^-1 A_f) unless the options fix it, P = (I - w D_f^-1 A_f) P_tent; plain:
/// P_tent), R = P^T, A_{l+1} = R (A P) (two host SpGEMMs, or their numeric phase alone on
/// the patterns `pattern` keeps; `keep_products`: keep them when it has none, see
/// [`galerkin`]), and the smoother's data.
///
/// Errors: a zero, missing or negative diagonal entry of `a` or of its filtered matrix
/// ([`Error::SingularPivot`] or [`Error::NotApplicable`] naming the row); [`Error::OutOfMemory`].
pub(super) fn numeric_level<T: Scalar>(
    a: CsrMatrix<T>,
    pattern: Arc<LevelPattern>,
    l: usize,
    options: &AmgOptions,
    keep_products: bool,
) -> Result<(Level<T>, CsrMatrix<T>)> {
    let b = options.block_size;
    let diag = positive_diagonal(&a, l)?;
    let (p, weight) = match options.coarsening {
        Coarsening::Aggregation => (tentative_prolongator(&pattern.aggregates, b)?, 0.0),
        Coarsening::SmoothedAggregation => {
            let filtered = filtered_matrix(&a, &pattern.graph, b)?;
            let weight = match options.prolongation_weight {
                Some(w) => w,
                None => {
                    let d = positive_diagonal(&filtered, l)?;
                    let rho = spectral_radius(&filtered, &d);
                    if rho > 0.0 && rho.is_finite() {
                        4.0 / 3.0 / rho
                    } else {
                        2.0 / 3.0
                    }
                }
            };
            (
                smoothed_prolongator(&filtered, &pattern.aggregates, b, weight)?,
                weight,
            )
        }
    };
    check_budget(
        "AMG restriction",
        p.nnz()
            .checked_mul(std::mem::size_of::<usize>() + std::mem::size_of::<T>())
            .and_then(|x| x.checked_add(8 * (p.n_cols() + 1))),
    )?;
    let r = restriction(&p, &pattern.restriction, keep_products)?;
    let next = galerkin(&a, &p, &r, &pattern.products, keep_products)?;
    let smoother = LevelSmoother::new(&a, &diag, options.smoother, options.jacobi_weight)?;
    let level = Level {
        a,
        p,
        r,
        smoother,
        pattern,
        prolongation_weight: weight,
    };
    Ok((level, next))
}

/// The coarsest level `l` of operator `a`: its dense inverse.
///
/// Errors: a NaN or infinite entry ([`Error::NonFinite`]), a singular matrix
/// ([`Error::SingularPivot`]), [`Error::OutOfMemory`].
pub(super) fn coarse_level<T: Scalar>(a: CsrMatrix<T>, l: usize) -> Result<CoarseLevel<T>> {
    if let Some(index) = a.first_non_finite() {
        return Err(Error::NonFinite {
            what: format!("AMG coarse matrix (level {l})"),
            index,
        });
    }
    let inverse = dense_inverse(&a, l)?;
    Ok(CoarseLevel { a, inverse })
}
