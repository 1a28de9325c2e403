//! Host twins of `kernels/ip_assemble.kc`: the Incomplete Poisson domain check and
//! assembly of one CSR row, the kernels' operations in the same order.

use crate::scalar::Scalar;

/// The position of column `key` in the ascending `ci[lo..hi]`, or `hi`.
fn find(ci: &[u32], lo: usize, hi: usize, key: u32) -> usize {
    ci[lo..hi].binary_search(&key).map_or(hi, |k| lo + k)
}

/// The first position of row `x` at or after `p` whose column is at least `x`.
fn lower_end(ci: &[u32], mut p: usize, end: usize, x: usize) -> usize {
    while p < end && (ci[p] as usize) < x {
        p += 1;
    }
    p
}

/// Whether row `i` is inside IP's domain (the `ip_domain_check` kernel's test).
pub(super) fn row_in_domain<T: Scalar>(i: usize, rp: &[u32], ci: &[u32], va: &[T]) -> bool {
    let tol = T::from_f64(64.0) * T::EPSILON;
    let mut has_diag = false;
    for p in rp[i] as usize..rp[i + 1] as usize {
        let (j, v) = (ci[p] as usize, va[p]);
        if !v.is_finite() {
            return false;
        }
        if j == i {
            has_diag = true;
            if v <= T::zero() {
                return false;
            }
        } else if v > T::zero() {
            return false;
        } else {
            let (j0, j1) = (rp[j] as usize, rp[j + 1] as usize);
            let q = find(ci, j0, j1, i as u32);
            if q == j1 {
                return false;
            }
            let w = va[q];
            let larger = if v.abs() > w.abs() { v.abs() } else { w.abs() };
            // NaN differences fail too, as in the kernel.
            let close = (w - v).abs() <= tol * larger;
            if !close {
                return false;
            }
        }
    }
    has_diag
}

/// Row `i` of the IP matrix on A's pattern into `out` (the `ip_assemble` kernel; `scaled`:
/// the IP of D^-1/2 A D^-1/2 scaled back); whether every entry is finite.
pub(super) fn row<T: Scalar>(
    i: usize,
    rp: &[u32],
    ci: &[u32],
    va: &[T],
    scaled: bool,
    out: &mut [T],
) -> bool {
    let (i0, i1) = (rp[i] as usize, rp[i + 1] as usize);
    let ie = lower_end(ci, i0, i1, i);
    let mut finite = true;
    for (e, m) in (i0..i1).zip(out.iter_mut()) {
        let j = ci[e] as usize;
        let (j0, j1) = (rp[j] as usize, rp[j + 1] as usize);
        let je = lower_end(ci, j0, j1, j);
        let (mut p, mut q, mut acc) = (i0, j0, T::zero());
        while p <= ie && q <= je {
            let ck = if p < ie { ci[p] as usize } else { i };
            let cl = if q < je { ci[q] as usize } else { j };
            match ck.cmp(&cl) {
                std::cmp::Ordering::Less => p += 1,
                std::cmp::Ordering::Greater => q += 1,
                std::cmp::Ordering::Equal if scaled => {
                    // C_ik = -a_ik / a_ii, C_jk = -a_jk / a_jj, each product over a_kk
                    // (positions ie and je hold the diagonals: A passed the domain check).
                    let x = if p < ie { -va[p] / va[ie] } else { T::one() };
                    let y = if q < je { -va[q] / va[je] } else { T::one() };
                    let d = if p == ie {
                        va[ie]
                    } else if q == je {
                        va[je]
                    } else {
                        va[find(ci, rp[ck] as usize, rp[ck + 1] as usize, ck as u32)]
                    };
                    acc += x * y / d;
                    p += 1;
                    q += 1;
                }
                std::cmp::Ordering::Equal => {
                    let (mut x, mut y) = (T::one(), T::one());
                    if p < ie || q < je {
                        let (k0, k1) = (rp[ck] as usize, rp[ck + 1] as usize);
                        let d = va[find(ci, k0, k1, ck as u32)];
                        if p < ie {
                            x = -va[p] / d;
                        }
                        if q < je {
                            y = -va[q] / d;
                        }
                    }
                    acc += x * y;
                    p += 1;
                    q += 1;
                }
            }
        }
        *m = acc;
        finite &= acc.is_finite();
    }
    finite
}
