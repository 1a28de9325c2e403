//! BILU(0) factored on the backend by fixed-point sweeps (Chow and Patel's fine-grained
//! parallel ILU in block form; the GPU setup option of seed 000's BILU(0)): the block pattern
//! and its L/U split on the host (one pass over A's column indices), A scattered into the
//! factors' layout on the device, then one launch per sweep. Equations and the initial guess in
//! `kernels-cl/bilu.cl`.

use super::factor::subdomain_of;
use crate::backend::{Backend, BiluParts, BlockTriangular, Buffer, DeviceMatrix};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// How the BILU(0) factors are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factorization {
    /// Exactly, on the host (rayon, level by level; the IKJ algorithm's factors bit for bit).
    Host,
    /// On the backend by the initial guess (L = A_IJ A_JJ^-1, U = A's upper part) and F
    /// fixed-point sweeps, one launch each. F at least the depth of the factors' dependency
    /// graph gives the exact factors (to rounding); the paper's preconditioners need few.
    Sweeps(usize),
}

impl std::fmt::Display for Factorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Factorization::Host => f.write_str("host"),
            Factorization::Sweeps(k) => write!(f, "sweeps:{k}"),
        }
    }
}

impl std::str::FromStr for Factorization {
    type Err = Error;
    /// `host` or `sweeps:F` with F >= 0.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::param(
                "factorization",
                format!("'{s}' is not a factorization (host or sweeps:F with F >= 0)"),
            )
        };
        match s.split_once(':') {
            None if s == "host" => Ok(Self::Host),
            Some(("sweeps", k)) => k.parse::<usize>().map(Self::Sweeps).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

/// The block pattern of A split into the strict lower (L) and strict upper (U) parts, block
/// columns ascending, the couplings between different subdomains dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitPattern {
    pub(crate) l_row_ptr: Vec<u32>,
    pub(crate) l_col_idx: Vec<u32>,
    pub(crate) u_row_ptr: Vec<u32>,
    pub(crate) u_col_idx: Vec<u32>,
}

fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::IndexOverflow {
        what: format!("BILU(0) {what}"),
        value: v,
        max: u32::MAX as usize,
    })
}

/// The block pattern of `a` (square, n a multiple of `s`) with blocks coupling different of
/// `subdomains` contiguous parts dropped, split at the diagonal. A block row without a
/// diagonal block is [`Error::SingularPivot`] naming the first one (as the host
/// factorization reports it).
pub(crate) fn split_pattern<T: Scalar>(
    a: &CsrMatrix<T>,
    s: usize,
    subdomains: usize,
    name: &str,
) -> Result<SplitPattern> {
    let nb = a.n_rows() / s;
    to_u32(nb, "block rows")?;
    let part = subdomain_of(nb, subdomains.clamp(1, nb.max(1)));
    let (rp, ci) = (a.row_ptr(), a.col_idx());
    let whole = subdomains <= 1;
    // Pass 1 (parallel): every block row's ascending block columns inside its subdomain, in
    // its own stretch of `cols` (at most its scalar entries: A's row pointers bound it), with
    // the lower and upper counts and whether the diagonal block is there.
    let mut cols = vec![0u32; ci.len()];
    let mut stretches: Vec<&mut [u32]> = Vec::with_capacity(nb);
    let mut rest = &mut cols[..];
    for bi in 0..nb {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(rp[(bi + 1) * s] - rp[bi * s]);
        stretches.push(head);
        rest = tail;
    }
    let counts: Vec<(usize, usize, bool)> = stretches
        .into_par_iter()
        .enumerate()
        .map(|(bi, out)| {
            let mut len = 0;
            for &c in &ci[rp[bi * s]..rp[(bi + 1) * s]] {
                let bj = c / s;
                if whole || part(bj) == part(bi) {
                    out[len] = bj as u32;
                    len += 1;
                }
            }
            let row = &mut out[..len];
            row.sort_unstable();
            let mut k = 0;
            for q in 0..row.len() {
                if q == 0 || row[q] != row[k - 1] {
                    row[k] = row[q];
                    k += 1;
                }
            }
            let row = &row[..k];
            let d = row.partition_point(|&c| (c as usize) < bi);
            let has_diag = row.get(d) == Some(&(bi as u32));
            (d, k - d - usize::from(has_diag), has_diag)
        })
        .collect();
    if let Some(bi) = counts.iter().position(|&(_, _, d)| !d) {
        return Err(Error::SingularPivot {
            preconditioner: name.into(),
            block_row: bi,
            detail: "no diagonal block is stored (structurally zero pivot)".into(),
        });
    }
    let mut l_row_ptr = Vec::with_capacity(nb + 1);
    let mut u_row_ptr = Vec::with_capacity(nb + 1);
    let (mut nl, mut nu) = (0usize, 0usize);
    l_row_ptr.push(0u32);
    u_row_ptr.push(0u32);
    for &(l, u, _) in &counts {
        nl += l;
        nu += u;
        l_row_ptr.push(to_u32(nl, "block count")?);
        u_row_ptr.push(to_u32(nu, "block count")?);
    }
    // Pass 2 (parallel): every row copies its stretch into both column arrays.
    let mut l_col_idx = vec![0u32; nl];
    let mut u_col_idx = vec![0u32; nu];
    let mut rows: Vec<(&mut [u32], &mut [u32])> = Vec::with_capacity(nb);
    let (mut l_rest, mut u_rest) = (&mut l_col_idx[..], &mut u_col_idx[..]);
    for &(l, u, _) in &counts {
        let (lh, lt) = std::mem::take(&mut l_rest).split_at_mut(l);
        let (uh, ut) = std::mem::take(&mut u_rest).split_at_mut(u);
        rows.push((lh, uh));
        (l_rest, u_rest) = (lt, ut);
    }
    rows.into_par_iter().enumerate().for_each(|(bi, (lo, up))| {
        let row = &cols[rp[bi * s]..];
        lo.copy_from_slice(&row[..lo.len()]);
        up.copy_from_slice(&row[lo.len() + 1..lo.len() + 1 + up.len()]);
    });
    Ok(SplitPattern {
        l_row_ptr,
        l_col_idx,
        u_row_ptr,
        u_col_idx,
    })
}

/// The factors of BILU(0) computed on `backend` from A in CSR on it (`a`), with `sweeps`
/// fixed-point sweeps after the initial guess. A singular or non-finite U_II, or factor
/// entries that are not finite, after the last sweep are [`Error::SingularPivot`] naming the
/// first such block row. Peak device memory: three copies of the factors (A's parts, the
/// previous sweep, the new one).
pub(crate) fn factor_on<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    pattern: &SplitPattern,
    s: usize,
    sweeps: usize,
    name: &str,
) -> Result<(BlockTriangular<T>, BlockTriangular<T>)> {
    let mut l =
        BlockTriangular::with_pattern(backend, s, &pattern.l_row_ptr, &pattern.l_col_idx, false)?;
    let mut u =
        BlockTriangular::with_pattern(backend, s, &pattern.u_row_ptr, &pattern.u_col_idx, true)?;
    let nb = l.n_block_rows();
    let ss = s * s;
    // A's parts on the factors' layout (the scatter writes every entry).
    let mut a_d: Buffer<T> = backend.alloc(nb * ss)?;
    backend.bilu0_scatter(a, &mut l, &mut u, &mut a_d)?;
    let a_l = std::mem::replace(&mut l.values, backend.alloc(pattern.l_col_idx.len() * ss)?);
    let a_u = std::mem::replace(&mut u.values, backend.alloc(pattern.u_col_idx.len() * ss)?);
    let a_parts = BiluParts {
        lower: &a_l,
        upper: &a_u,
        diag: &a_d,
    };
    let mut bad_row = backend.upload(&[u32::MAX])?;
    backend.bilu0_sweep(&a_parts, None, sweeps == 0, &mut l, &mut u, &mut bad_row)?;
    if sweeps > 0 {
        let mut old_l: Buffer<T> = backend.alloc(a_l.len())?;
        let mut old_u: Buffer<T> = backend.alloc(a_u.len())?;
        let mut old_inv: Buffer<T> = backend.alloc(a_d.len())?;
        for sweep in 1..=sweeps {
            std::mem::swap(&mut l.values, &mut old_l);
            std::mem::swap(&mut u.values, &mut old_u);
            let inv = u.inv_diag.as_mut().ok_or_else(|| {
                Error::PreconditionerSetup("BILU(0): U without a diagonal".into())
            })?;
            std::mem::swap(inv, &mut old_inv);
            let old = BiluParts {
                lower: &old_l,
                upper: &old_u,
                diag: &old_inv,
            };
            backend.bilu0_sweep(
                &a_parts,
                Some(&old),
                sweep == sweeps,
                &mut l,
                &mut u,
                &mut bad_row,
            )?;
        }
    }
    let mut flag = [u32::MAX];
    backend.read(&bad_row, &mut flag)?;
    if flag[0] != u32::MAX {
        return Err(Error::SingularPivot {
            preconditioner: name.into(),
            block_row: flag[0] as usize,
            detail: format!(
                "the diagonal block is singular or the factors are not finite after {sweeps} \
                 factorization sweeps on the device (more sweeps, or --factorization host)"
            ),
        });
    }
    Ok((l, u))
}
