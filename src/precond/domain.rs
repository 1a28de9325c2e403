//! The structural check shared by the preconditioners for symmetric matrices (Incomplete
//! Poisson, FSAI): square, finite, symmetric and with a positive diagonal.

use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

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
    let tol = T::EPSILON.to_f64() * 64.0;
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
            let (tc, tv) = a.row(j);
            match tc.binary_search(&i).ok().map(|k| tv[k]) {
                Some(w)
                    if (w - v).abs().to_f64() <= tol * v.abs().to_f64().max(w.abs().to_f64()) => {}
                Some(w) => {
                    return Some(format!(
                        "the matrix is not symmetric: ({i}, {j}) = {} but ({j}, {i}) = {}",
                        v.to_f64(),
                        w.to_f64()
                    ))
                }
                None => {
                    return Some(format!(
                        "the pattern is not symmetric: ({i}, {j}) is stored, ({j}, {i}) is not"
                    ))
                }
            }
        }
        (!has_diag).then(|| format!("row {i} has no diagonal entry"))
    })
}
