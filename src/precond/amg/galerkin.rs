//! The Galerkin product A_{l+1} = R (A P) of a level, and its numeric phase alone on kept
//! patterns: a values-only refresh keeps the aggregates, so the patterns of A P and of
//! A_{l+1} do not change, and the refreshes after the first skip the host SpGEMM's symbolic
//! work (the marker array and each row's sort).

use crate::error::{Error, Result};
use crate::matrix::spgemm::spgemm;
use crate::matrix::CsrMatrix;
use crate::memory::{try_copy, try_filled, try_filled_in_parallel};
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::sync::OnceLock;

/// The fewest rows of C per parallel task of [`product_values`], which makes about four tasks
/// per thread, as the host SpGEMM's row assembly does: each task allocates and fills a position
/// array of B's width (at the finest level a task per 1024 rows filled about 1 GB of them).
const MIN_CHUNK_ROWS: usize = 1024;

/// The patterns (row pointers, column indices) of a level's A P and A_{l+1} = R (A P), kept
/// by its first values-only refresh for the next ones.
#[derive(Debug)]
pub(super) struct ProductPatterns {
    ap: (Vec<usize>, Vec<usize>),
    next: (Vec<usize>, Vec<usize>),
}

/// A CSR matrix's arrays and width.
#[derive(Clone, Copy)]
struct CsrArrays<'m, T> {
    row_ptr: &'m [usize],
    col_idx: &'m [usize],
    values: &'m [T],
    n_cols: usize,
}

impl<'m, T: Scalar> CsrArrays<'m, T> {
    fn of(m: &'m CsrMatrix<T>) -> Self {
        Self {
            row_ptr: m.row_ptr(),
            col_idx: m.col_idx(),
            values: m.values(),
            n_cols: m.n_cols(),
        }
    }
}

/// A_{l+1} = R (A P) for `a`, `p` and `r` = P^T. With patterns in `kept` (a refresh after
/// the first), only the numeric phase runs on them (the same values as the SpGEMM, bit for
/// bit); otherwise, or when a product falls outside them (`a` of another pattern), the host
/// SpGEMM runs, and `keep` stores its patterns in `kept` when it holds none.
///
/// Errors: [`Error::DimensionMismatch`], [`Error::OutOfMemory`].
pub(super) fn galerkin<T: Scalar>(
    a: &CsrMatrix<T>,
    p: &CsrMatrix<T>,
    r: &CsrMatrix<T>,
    kept: &OnceLock<ProductPatterns>,
    keep: bool,
) -> Result<CsrMatrix<T>> {
    if let Some(patterns) = kept.get() {
        match numeric(a, p, r, patterns) {
            Err(Error::PatternMismatch(_)) => {}
            other => return other,
        }
    }
    let ap = spgemm(a, p)?;
    let next = spgemm(r, &ap)?;
    if keep && kept.get().is_none() {
        // (A concurrent refresh of a hierarchy sharing this level may have set it: the same
        // patterns.)
        let _ = kept.set(ProductPatterns {
            ap: (ap.row_ptr().to_vec(), ap.col_idx().to_vec()),
            next: (next.row_ptr().to_vec(), next.col_idx().to_vec()),
        });
    }
    Ok(next)
}

/// R (A P) on the kept patterns; [`Error::PatternMismatch`] when a product falls outside.
fn numeric<T: Scalar>(
    a: &CsrMatrix<T>,
    p: &CsrMatrix<T>,
    r: &CsrMatrix<T>,
    patterns: &ProductPatterns,
) -> Result<CsrMatrix<T>> {
    let (ap_ptr, ap_cols) = (&patterns.ap.0[..], &patterns.ap.1[..]);
    let ap_values = product_values(CsrArrays::of(a), CsrArrays::of(p), (ap_ptr, ap_cols))?;
    let ap = CsrArrays {
        row_ptr: ap_ptr,
        col_idx: ap_cols,
        values: &ap_values,
        n_cols: p.n_cols(),
    };
    let (next_ptr, next_cols) = (&patterns.next.0, &patterns.next.1);
    let values = product_values(CsrArrays::of(r), ap, (next_ptr, next_cols))?;
    CsrMatrix::new(
        r.n_rows(),
        p.n_cols(),
        try_copy("AMG Galerkin product", next_ptr)?,
        try_copy("AMG Galerkin product", next_cols)?,
        values,
    )
}

/// The values of C = A B on C's pattern `(row_ptr, col_idx)`, which must hold the symbolic
/// product: every row is summed in the order of A's and B's entries, as the SpGEMM does, so
/// the values equal its values bit for bit (but for the sign of a zero sum). No sort and no
/// symbolic pass: each task maps its row's columns to their positions in a dense array of
/// B's width.
///
/// Errors: [`Error::PatternMismatch`] when the sizes disagree or a product falls outside the
/// pattern; [`Error::OutOfMemory`].
fn product_values<T: Scalar>(
    a: CsrArrays<'_, T>,
    b: CsrArrays<'_, T>,
    (row_ptr, col_idx): (&[usize], &[usize]),
) -> Result<Vec<T>> {
    let n_rows = a.row_ptr.len().saturating_sub(1);
    let mismatch = |what: String| Error::PatternMismatch(format!("AMG Galerkin product: {what}"));
    if a.n_cols + 1 != b.row_ptr.len()
        || row_ptr.len() != n_rows + 1
        || row_ptr[n_rows] != col_idx.len()
        || col_idx.iter().any(|&j| j >= b.n_cols)
    {
        return Err(mismatch("the kept pattern does not fit the factors".into()));
    }
    let mut values = try_filled_in_parallel("AMG Galerkin product", col_idx.len(), T::zero())?;
    // The value array cut at the tasks' first rows.
    let chunk_rows = n_rows
        .div_ceil(rayon::current_num_threads() * 4)
        .max(MIN_CHUNK_ROWS);
    let tasks = n_rows.div_ceil(chunk_rows);
    let mut slices = Vec::with_capacity(tasks);
    let mut rest = &mut values[..];
    for c in 0..tasks {
        let end = row_ptr[((c + 1) * chunk_rows).min(n_rows)];
        let (head, tail) = rest.split_at_mut(end - row_ptr[c * chunk_rows]);
        slices.push((c, head));
        rest = tail;
    }
    slices
        .into_par_iter()
        .map(|(c, out)| -> Result<()> {
            let mut position = try_filled("AMG Galerkin product", b.n_cols, usize::MAX)?;
            let base = row_ptr[c * chunk_rows];
            for i in c * chunk_rows..((c + 1) * chunk_rows).min(n_rows) {
                let (begin, end) = (row_ptr[i], row_ptr[i + 1]);
                for (k, &j) in col_idx[begin..end].iter().enumerate() {
                    position[j] = begin - base + k;
                }
                let row = a.row_ptr[i]..a.row_ptr[i + 1];
                for (&k, &aik) in a.col_idx[row.clone()].iter().zip(&a.values[row]) {
                    let row_b = b.row_ptr[k]..b.row_ptr[k + 1];
                    for (&j, &bkj) in b.col_idx[row_b.clone()].iter().zip(&b.values[row_b]) {
                        match out.get_mut(position[j]) {
                            Some(v) => *v += aik * bkj,
                            None => return Err(mismatch(format!("({i}, {j}) is not kept"))),
                        }
                    }
                }
                for &j in &col_idx[begin..end] {
                    position[j] = usize::MAX;
                }
            }
            Ok(())
        })
        .collect::<Result<()>>()?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generate::Generator;

    #[test]
    fn the_numeric_phase_equals_the_spgemm_bit_for_bit() {
        let a = Generator::Poisson3d
            .generate_with_param::<f64>(12)
            .unwrap()
            .matrix;
        // A prolongator-like P (1728 x 300): entries of A's pattern folded onto 300 columns.
        let t: Vec<(usize, usize, f64)> = (0..a.n_rows())
            .flat_map(|i| {
                let (c, v) = a.row(i);
                c.iter()
                    .zip(v)
                    .map(move |(&j, &x)| (i, (j * 7) % 300, x + i as f64 * 1e-3))
                    .collect::<Vec<_>>()
            })
            .collect();
        let p = CsrMatrix::from_triplets(a.n_rows(), 300, &t).unwrap();
        let r = p.transpose();
        let want = spgemm(&r, &spgemm(&a, &p).unwrap()).unwrap();
        let kept = OnceLock::new();
        assert!(galerkin(&a, &p, &r, &kept, true).unwrap() == want);
        assert!(kept.get().is_some());
        // Numeric phase only, new values.
        let mut a2 = a.clone();
        a2.values_mut()
            .iter_mut()
            .for_each(|v| *v = 3.0 * *v + 0.25);
        let want = spgemm(&r, &spgemm(&a2, &p).unwrap()).unwrap();
        let got = numeric(&a2, &p, &r, kept.get().unwrap()).unwrap();
        assert!(got == want);
        // A product outside the kept patterns: a mismatch alone, the SpGEMM takes over.
        let wider = spgemm(&a, &a).unwrap();
        assert!(matches!(
            numeric(&wider, &p, &r, kept.get().unwrap()),
            Err(Error::PatternMismatch(_))
        ));
        let want = spgemm(&r, &spgemm(&wider, &p).unwrap()).unwrap();
        assert!(galerkin(&wider, &p, &r, &kept, true).unwrap() == want);
    }
}
