//! The structural check shared by the preconditioners for symmetric matrices (Incomplete
//! Poisson, FSAI): square, finite, symmetric and with a positive diagonal.

use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// How the transpose entry (j, i) of a stored (i, j) = v disagrees with it.
enum Mismatch<T> {
    /// (j, i) is stored with this value, more than 64 ulps of the larger away.
    Value(T),
    /// (j, i) is not stored.
    Missing,
}

/// Whether (j, i) of `a` matches the stored (i, j) = `v` up to 64 ulps of the larger entry
/// (`None`) or how it does not.
fn transpose_mismatch<T: Scalar>(
    a: &CsrMatrix<T>,
    i: usize,
    j: usize,
    v: T,
) -> Option<Mismatch<T>> {
    let tol = T::EPSILON.to_f64() * 64.0;
    let (tc, tv) = a.row(j);
    match tc.binary_search(&i).ok().map(|k| tv[k]) {
        Some(w) if (w - v).abs().to_f64() <= tol * v.abs().to_f64().max(w.abs().to_f64()) => None,
        Some(w) => Some(Mismatch::Value(w)),
        None => Some(Mismatch::Missing),
    }
}

/// Why `a` is not square, finite and symmetric with a positive diagonal, or why `offdiag`
/// refuses one of its off-diagonal entries (i, j, a_ij); `None` when it passes. Symmetry is
/// checked on the pattern exactly and on the values up to 64 ulps of the larger entry
/// (assembly round-off).
pub(crate) fn symmetric_violation<T: Scalar>(
    a: &CsrMatrix<T>,
    offdiag: impl Fn(usize, usize, T) -> Option<String> + Sync,
) -> Option<String> {
    if !a.is_square() {
        return Some(format!(
            "the matrix is {} x {}, not square",
            a.n_rows(),
            a.n_cols()
        ));
    }
    if let Some(row) = a.first_non_finite() {
        return Some(format!("row {row} holds a NaN or infinite entry"));
    }
    (0..a.n_rows()).into_par_iter().find_map_first(|i| {
        let (cols, vals) = a.row(i);
        let mut has_diag = false;
        for (&j, &v) in cols.iter().zip(vals) {
            if j == i {
                has_diag = true;
                if v <= T::zero() {
                    return Some(format!(
                        "diagonal entry {} in row {i} is not positive",
                        v.to_f64()
                    ));
                }
                continue;
            }
            if let Some(why) = offdiag(i, j, v) {
                return Some(why);
            }
            match transpose_mismatch(a, i, j, v) {
                Some(Mismatch::Value(w)) => {
                    return Some(format!(
                        "the matrix is not symmetric: ({i}, {j}) = {} but ({j}, {i}) = {}",
                        v.to_f64(),
                        w.to_f64()
                    ))
                }
                Some(Mismatch::Missing) => {
                    return Some(format!(
                        "the pattern is not symmetric: ({i}, {j}) is stored, ({j}, {i}) is not"
                    ))
                }
                None => {}
            }
        }
        (!has_diag).then(|| format!("row {i} has no diagonal entry"))
    })
}

/// Why `a` is not symmetric (pattern exactly, values up to 64 ulps of the larger entry), or
/// `None` when it is. Used to explain a CG stop on a nonsymmetric matrix.
pub(crate) fn asymmetry<T: Scalar>(a: &CsrMatrix<T>) -> Option<String> {
    if !a.is_square() {
        return Some(format!(
            "the matrix is {} x {}, not square",
            a.n_rows(),
            a.n_cols()
        ));
    }
    (0..a.n_rows()).into_par_iter().find_map_first(|i| {
        let (cols, vals) = a.row(i);
        cols.iter()
            .zip(vals)
            .find_map(|(&j, &v)| match transpose_mismatch(a, i, j, v)? {
                Mismatch::Value(w) => Some(format!(
                    "({i}, {j}) = {:.6e} but ({j}, {i}) = {:.6e}",
                    v.to_f64(),
                    w.to_f64()
                )),
                Mismatch::Missing if v == T::zero() => None,
                Mismatch::Missing => Some(format!("({i}, {j}) is stored, ({j}, {i}) is not")),
            })
    })
}

/// The hint a report of CG carries when it stopped on divergence or indefiniteness (or did
/// not converge) on a matrix that is not symmetric: CG needs a symmetric positive definite
/// matrix, GMRES and BiCGStab do not.
pub(crate) fn cg_nonsymmetric_hint<T: Scalar>(
    a: &CsrMatrix<T>,
    report: &crate::solver::SolveReport,
) -> Option<String> {
    use crate::solver::StopReason;
    let suspicious = matches!(
        report.stop_reason,
        StopReason::Diverged
            | StopReason::IndefiniteMatrix
            | StopReason::IndefinitePreconditioner
            | StopReason::MaxIterations
            | StopReason::Stagnated
            | StopReason::NanOrInf
    );
    if report.solver != "cg" || !suspicious {
        return None;
    }
    asymmetry(a).map(|why| {
        format!(
            "the matrix is not symmetric ({why}): CG needs a symmetric positive definite \
             matrix; try GMRES or BiCGStab"
        )
    })
}
