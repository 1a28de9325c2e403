//! Checks of arrays the caller put on the device (`kernels/sparse.kc`): a CSR matrix's
//! structure and values (`csr_check`), and a vector's extreme magnitudes (`abs_extremes`), each
//! with its host reference. A few numbers per work-group come back to the host, never the
//! arrays.

use super::CsrRef;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::KernelArg;
use crate::backend::ops::{Kernel, VectorOps};
use crate::error::Result;
use crate::scalar::Scalar;

/// Work-groups of a check at most (each writes three numbers the host reads).
const CHECK_MAX_GROUPS: usize = 1024;

/// What [`csr_check`] found wrong in a CSR matrix's arrays (all zero: a valid matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CsrFaults {
    /// Rows whose pointers decrease or pass nnz, plus one when `row_ptr[0] != 0` or
    /// `row_ptr[n_rows] != nnz`.
    pub(crate) row_pointers: u64,
    /// Entries whose column is out of range or not above the one before it in the row.
    pub(crate) columns: u64,
    /// Non-finite values.
    pub(crate) non_finite: u64,
}

/// What [`abs_extremes`] found in a vector.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct AbsExtremes {
    /// The largest |x_i| of the finite nonzero entries (0 without one).
    pub(crate) largest: f64,
    /// The smallest |x_i| of the finite nonzero entries (`None` without one).
    pub(crate) smallest_nonzero: Option<f64>,
    /// The number of zero or non-finite entries.
    pub(crate) zero_or_non_finite: u64,
}

/// Run `kernel` over `n` items with the group count of a check, its per-group triples
/// summed (f = 0..3 by `combine`) on the host.
fn per_group_triples<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    kernel: Kernel,
    n: usize,
    args: &[KernelArg<'_>],
) -> Result<Vec<[f64; 3]>> {
    let rt = backend.kernel_runtime();
    let groups = rt.elementwise_groups(n).min(CHECK_MAX_GROUPS);
    let out = backend.alloc::<T>(3 * groups)?;
    let mut all = args.to_vec();
    all.push(KernelArg::buffer(&out));
    // SAFETY: the callers pass the kernel's parameter list before its output and checked every
    // buffer's length against the sizes passed; the output holds 3 entries per group.
    unsafe { rt.launch::<T>(kernel, groups, &all)? };
    Ok(backend
        .download(&out)?
        .chunks_exact(3)
        .map(|c| [c[0].to_f64(), c[1].to_f64(), c[2].to_f64()])
        .collect())
}

/// Kernel `csr_check`: the faults of `a`'s arrays (any contents of the right lengths; nothing
/// out of bounds is read). Columns must ascend strictly in every row.
pub(crate) fn csr_check<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
) -> Result<CsrFaults> {
    let nnz = a.nnz();
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v) = (a.row_ptr.host()?, a.col_idx.host()?, a.values.host()?);
        let mut f = CsrFaults {
            row_pointers: u64::from(rp[0] != 0 || rp[a.n_rows] as usize != nnz),
            ..CsrFaults::default()
        };
        for i in 0..a.n_rows {
            let (lo, hi) = (rp[i] as usize, rp[i + 1] as usize);
            if hi < lo || hi > nnz {
                f.row_pointers += 1;
                continue;
            }
            for p in lo..hi {
                let c = ci[p];
                if c as usize >= a.n_cols || (p > lo && c <= ci[p - 1]) {
                    f.columns += 1;
                }
                if !v[p].is_finite() {
                    f.non_finite += 1;
                }
            }
        }
        return Ok(f);
    }
    let triples = per_group_triples::<B, T>(
        backend,
        Kernel::CsrCheck,
        a.n_rows,
        &[
            KernelArg::len("checked rows", a.n_rows)?,
            KernelArg::len("checked columns", a.n_cols)?,
            KernelArg::len("checked nonzeros", nnz)?,
            KernelArg::buffer(a.row_ptr),
            KernelArg::buffer(a.col_idx),
            KernelArg::buffer(a.values),
        ],
    )?;
    let count = |f: usize| triples.iter().map(|t| t[f] as u64).sum::<u64>();
    Ok(CsrFaults {
        row_pointers: count(0),
        columns: count(1),
        non_finite: count(2),
    })
}

/// Kernel `abs_extremes`: the largest and smallest nonzero magnitudes of `x` and its zero or
/// non-finite entries (exact, whatever the order).
pub(crate) fn abs_extremes<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    x: &Buffer<T>,
) -> Result<AbsExtremes> {
    let n = x.len();
    check_len("extremes input", x, n)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let mut e = AbsExtremes::default();
        for a in x.host()?.iter().map(|v| v.to_f64().abs()) {
            if a > 0.0 && a.is_finite() {
                e.largest = e.largest.max(a);
                e.smallest_nonzero = Some(e.smallest_nonzero.map_or(a, |s| s.min(a)));
            } else {
                e.zero_or_non_finite += 1;
            }
        }
        return Ok(e);
    }
    let triples = per_group_triples::<B, T>(
        backend,
        Kernel::AbsExtremes,
        n,
        &[KernelArg::len("extremes input", n)?, KernelArg::buffer(x)],
    )?;
    Ok(AbsExtremes {
        largest: triples.iter().map(|t| t[0]).fold(0.0, f64::max),
        smallest_nonzero: triples
            .iter()
            .map(|t| t[1])
            .filter(|&s| s >= 0.0)
            .reduce(f64::min),
        zero_or_non_finite: triples.iter().map(|t| t[2] as u64).sum(),
    })
}
