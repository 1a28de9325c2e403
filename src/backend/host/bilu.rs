//! Host twins of `kernels/bilu.kc` (BILU(0) factored by fixed-point sweeps): the same
//! arithmetic in the same order, one rayon task per block row.

use crate::precond::block_dense::{invert, mul, mul_sub};
use crate::precond::flat_rows::split_by_lengths;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A block CSR pattern on the host (row pointers and ascending block columns).
#[derive(Clone, Copy)]
pub(super) struct Pattern<'a> {
    pub(super) row_ptr: &'a [u32],
    pub(super) col_idx: &'a [u32],
}

impl Pattern<'_> {
    fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.row_ptr[i] as usize..self.row_ptr[i + 1] as usize
    }
}

/// `values` cut into the blocks of every row of `p` (s*s scalars per block).
fn rows_mut<'a, T>(values: &'a mut [T], p: Pattern<'_>, ss: usize) -> Vec<&'a mut [T]> {
    split_by_lengths(
        values,
        p.row_ptr.windows(2).map(|w| (w[1] - w[0]) as usize * ss),
    )
}

/// A's CSR rows written into the L and U patterns' blocks and the diagonal blocks (the
/// `bilu0_scatter` kernel; entries of blocks in neither pattern are dropped).
#[allow(clippy::too_many_arguments)]
pub(super) fn scatter<T: Scalar>(
    s: usize,
    (a_rp, a_ci, a_v): (&[u32], &[u32], &[T]),
    l: Pattern<'_>,
    u: Pattern<'_>,
    l_values: &mut [T],
    u_values: &mut [T],
    d_values: &mut [T],
) {
    let ss = s * s;
    let l_rows = rows_mut(l_values, l, ss);
    let u_rows = rows_mut(u_values, u, ss);
    l_rows
        .into_par_iter()
        .zip(u_rows)
        .zip(d_values.par_chunks_mut(ss))
        .enumerate()
        .for_each(|(bi, ((lr, ur), dr))| {
            lr.fill(T::zero());
            ur.fill(T::zero());
            dr.fill(T::zero());
            for i in 0..s {
                let r = bi * s + i;
                for k in a_rp[r] as usize..a_rp[r + 1] as usize {
                    let c = a_ci[k] as usize;
                    let (bj, j) = (c / s, c % s);
                    let (blocks, at) = match bj.cmp(&bi) {
                        std::cmp::Ordering::Less => (&mut *lr, find(l, bi, bj)),
                        std::cmp::Ordering::Greater => (&mut *ur, find(u, bi, bj)),
                        std::cmp::Ordering::Equal => (&mut *dr, Some(0)),
                    };
                    if let Some(q) = at {
                        blocks[q * ss + j * s + i] += a_v[k];
                    }
                }
            }
        });
}

/// The position of block column `bj` within row `bi` of `p` (0 = the row's first block).
fn find(p: Pattern<'_>, bi: usize, bj: usize) -> Option<usize> {
    let r = p.row(bi);
    p.col_idx[r].binary_search(&(bj as u32)).ok()
}

/// One sweep's inputs: the patterns, A's parts and the previous factors (`None`: first sweep).
pub(super) struct SweepInputs<'a, T> {
    pub(super) s: usize,
    pub(super) l: Pattern<'a>,
    pub(super) u: Pattern<'a>,
    pub(super) a: (&'a [T], &'a [T], &'a [T]),
    pub(super) old: Option<(&'a [T], &'a [T], &'a [T])>,
}

/// One `bilu0_sweep`: the new factors' blocks; the smallest bad block row when `report`.
pub(super) fn sweep<T: Scalar>(
    inp: &SweepInputs<'_, T>,
    report: bool,
    l_new: &mut [T],
    u_new: &mut [T],
    inv_new: &mut [T],
) -> Option<usize> {
    let ss = inp.s * inp.s;
    let l_rows = rows_mut(l_new, inp.l, ss);
    let u_rows = rows_mut(u_new, inp.u, ss);
    l_rows
        .into_par_iter()
        .zip(u_rows)
        .zip(inv_new.par_chunks_mut(ss))
        .enumerate()
        .filter_map(|(bi, ((lr, ur), inv))| {
            let bad = sweep_row(inp, bi, lr, ur, inv);
            (report && bad).then_some(bi)
        })
        .min()
}

/// Row `bi` of a sweep (the kernel's `bilu0_row`); whether U_II is singular or a new block of
/// the row is not finite.
fn sweep_row<T: Scalar>(
    inp: &SweepInputs<'_, T>,
    bi: usize,
    l_out: &mut [T],
    u_out: &mut [T],
    inv_out: &mut [T],
) -> bool {
    let (s, ss) = (inp.s, inp.s * inp.s);
    let (a_l, a_u, a_d) = inp.a;
    let (lr, ur) = (inp.l.row(bi), inp.u.row(bi));
    let (l0, u0) = (lr.start, ur.start);
    let mut d = a_d[bi * ss..(bi + 1) * ss].to_vec();
    l_out.copy_from_slice(&a_l[l0 * ss..lr.end * ss]);
    u_out.copy_from_slice(&a_u[u0 * ss..ur.end * ss]);
    if let Some((l_old, u_old, _)) = inp.old {
        for q in lr.clone() {
            let bk = inp.l.col_idx[q] as usize;
            let lik = &l_old[q * ss..(q + 1) * ss];
            let (mut pl, mut pu) = (q + 1, u0);
            for b in inp.u.row(bk) {
                let bj = inp.u.col_idx[b] as usize;
                let ukj = &u_old[b * ss..(b + 1) * ss];
                if bj < bi {
                    while pl < lr.end && (inp.l.col_idx[pl] as usize) < bj {
                        pl += 1;
                    }
                    if pl < lr.end && inp.l.col_idx[pl] as usize == bj {
                        let at = (pl - l0) * ss;
                        mul_sub(&mut l_out[at..at + ss], lik, ukj, s);
                    }
                } else if bj == bi {
                    mul_sub(&mut d, lik, ukj, s);
                } else {
                    while pu < ur.end && (inp.u.col_idx[pu] as usize) < bj {
                        pu += 1;
                    }
                    if pu < ur.end && inp.u.col_idx[pu] as usize == bj {
                        let at = (pu - u0) * ss;
                        mul_sub(&mut u_out[at..at + ss], lik, ukj, s);
                    }
                }
            }
        }
    }
    let mut bad = false;
    match invert(&d, s) {
        Ok(inv) => inv_out.copy_from_slice(&inv[..ss]),
        Err(_) => {
            bad = true;
            inv_out.fill(T::zero());
        }
    }
    for q in lr.clone() {
        let bj = inp.l.col_idx[q] as usize;
        let invj: [T; 64] = match inp.old {
            None => invert(&a_d[bj * ss..(bj + 1) * ss], s).unwrap_or([T::zero(); 64]),
            Some((_, _, inv_old)) => {
                let mut b = [T::zero(); 64];
                b[..ss].copy_from_slice(&inv_old[bj * ss..(bj + 1) * ss]);
                b
            }
        };
        let at = (q - l0) * ss;
        let lij = mul(&l_out[at..at + ss], &invj, s);
        l_out[at..at + ss].copy_from_slice(&lij[..ss]);
    }
    bad || l_out.iter().chain(u_out.iter()).any(|v| !v.is_finite())
}
