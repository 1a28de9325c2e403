//! BILU(0) factored on the backend by fixed-point sweeps (Chow and Patel's fine-grained
//! parallel ILU in block form; the GPU setup option of \[Ma21a\]'s BILU(0)): the block pattern
//! and its L/U split on the host (one pass over A's column indices), A scattered into the
//! factors' layout on the device, then one launch per sweep. Equations and the initial guess in
//! `kernels/bilu.kc`.

use super::factor::{subdomain_of, to_u32};
use crate::backend::{Backend, BiluParts, BlockTriangular, Buffer, DeviceMatrix};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::flat_rows::build_rows;
use crate::scalar::Scalar;

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
    // Every block row's ascending block columns inside its subdomain (at most its scalar
    // entries).
    let entries = |bi: usize| rp[bi * s]..rp[(bi + 1) * s];
    let rows = build_rows(
        nb,
        |bi| entries(bi).len(),
        |bi, out, scratch: &mut Vec<u32>| {
            scratch.clear();
            scratch.extend(
                ci[entries(bi)]
                    .iter()
                    .map(|&c| c / s)
                    .filter(|&bj| whole || part(bj) == part(bi))
                    .map(|bj| bj as u32),
            );
            scratch.sort_unstable();
            scratch.dedup();
            out[..scratch.len()].copy_from_slice(scratch);
            scratch.len()
        },
    );
    // Split at the diagonal block, which every row must hold.
    let mut p = SplitPattern {
        l_row_ptr: Vec::with_capacity(nb + 1),
        l_col_idx: Vec::new(),
        u_row_ptr: Vec::with_capacity(nb + 1),
        u_col_idx: Vec::new(),
    };
    p.l_row_ptr.push(0);
    p.u_row_ptr.push(0);
    for bi in 0..nb {
        let row = rows.row(bi);
        let d = row.partition_point(|&c| (c as usize) < bi);
        if row.get(d) != Some(&(bi as u32)) {
            return Err(Error::SingularPivot {
                preconditioner: name.into(),
                block_row: bi,
                detail: "no diagonal block is stored (structurally zero pivot)".into(),
            });
        }
        p.l_col_idx.extend_from_slice(&row[..d]);
        p.u_col_idx.extend_from_slice(&row[d + 1..]);
        p.l_row_ptr.push(to_u32(p.l_col_idx.len(), "block count")?);
        p.u_row_ptr.push(to_u32(p.u_col_idx.len(), "block count")?);
    }
    Ok(p)
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
