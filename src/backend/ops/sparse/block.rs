//! The block kernels of several right-hand sides (`kernels/sparse.kc`): the product of a CSR
//! matrix with up to eight columns at one read of the matrix (`csr_spmm`, and with the
//! columns' dots, `csr_spmm_dots`) and lockstep CG's fused column updates (`block_cg_update`,
//! `block_xpby`), each with its host reference.

use super::{launch_items, len, CsrRef};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::KernelArg;
use crate::backend::ops::amg_setup::{host_partial, launch_partials};
use crate::backend::ops::{Kernel, VectorOps};
use crate::backend::{Partials, Slot};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use bytemuck::Pod;

/// Most columns of a block one [`spmm`] launch multiplies (kernel `csr_spmm`).
pub(crate) const SPMM_MAX_COLUMNS: usize = 8;

/// y_c = A x_c for the columns of a block of vectors (`x[c]`, `y[c]`, at most
/// [`SPMM_MAX_COLUMNS`]; kernel `csr_spmm`): one work-item per row reads A's row once for all
/// of them, each product summed in the row's order from zero.
pub(crate) fn spmm<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    x: &[&Buffer<T>],
    y: &mut [&mut Buffer<T>],
) -> Result<()> {
    let k = check_block("spmm", &[x.len(), y.len()])?;
    for c in 0..k {
        check_len("spmm input column", x[c], a.n_cols)?;
        check_len("spmm output column", &*y[c], a.n_rows)?;
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v) = (a.row_ptr.host()?, a.col_idx.host()?, a.values.host()?);
        for (xc, yc) in x.iter().zip(y.iter_mut()) {
            let xs = xc.host()?;
            let ys = yc.host_mut()?;
            for (i, yi) in ys.iter_mut().enumerate() {
                let mut s = T::zero();
                for e in rp[i] as usize..rp[i + 1] as usize {
                    s += v[e] * xs[ci[e] as usize];
                }
                *yi = s;
            }
        }
        return Ok(());
    }
    let args = spmm_args(a, x, y)?;
    // SAFETY (launch_items): A's arrays come from a CSR device matrix (columns below n_cols,
    // row pointers checked), every column's length checked above, k <= 8.
    launch_items::<T>(&rt, Kernel::CsrSpmm, a.n_rows, &args)
}

/// Checks shared by the block kernels: 1 to [`SPMM_MAX_COLUMNS`] columns, `lens` the number of
/// columns of every argument list (all equal).
fn check_block(what: &str, lens: &[usize]) -> Result<usize> {
    let k = lens[0];
    if k == 0 || k > SPMM_MAX_COLUMNS || lens.iter().any(|&l| l != k) {
        return Err(Error::param(
            what,
            format!("column counts {lens:?} (1 to {SPMM_MAX_COLUMNS}, the same for every list)"),
        ));
    }
    Ok(k)
}

/// The kernel arguments of a list of up to 8 columns: the columns past `k` repeat the first
/// (the kernels touch none of them).
fn column_args<'a, T: Pod>(cols: &[&'a Buffer<T>]) -> Vec<KernelArg<'a>> {
    (0..SPMM_MAX_COLUMNS)
        .map(|c| KernelArg::buffer(cols[if c < cols.len() { c } else { 0 }]))
        .collect()
}

/// The scalar arguments `v[c]` of up to 8 columns (0 past k).
fn scalar_args<T: Scalar>(v: &[f64]) -> Vec<KernelArg<'static>> {
    (0..SPMM_MAX_COLUMNS)
        .map(|c| KernelArg::scalar(T::from_f64(v.get(c).copied().unwrap_or(0.0))))
        .collect()
}

/// The arguments `csr_spmm` and `csr_spmm_dots` share: A's size and arrays, then the 8 input and
/// the 8 output columns.
fn spmm_args<'a, T: Scalar>(
    a: CsrRef<'a, T>,
    x: &[&'a Buffer<T>],
    y: &'a [&mut Buffer<T>],
) -> Result<Vec<KernelArg<'a>>> {
    let ys: Vec<&Buffer<T>> = y.iter().map(|b| &**b).collect();
    let mut args = vec![
        len("spmm rows", a.n_rows)?,
        len("spmm columns", x.len())?,
        KernelArg::buffer(a.row_ptr),
        KernelArg::buffer(a.col_idx),
        KernelArg::buffer(a.values),
    ];
    args.extend(column_args(x));
    args.extend(column_args(&ys));
    Ok(args)
}

/// [`spmm`], and the partial of <x_c, y_c> into slot `slot + c` (kernel `csr_spmm_dots`): the
/// products of CG's block step with their first dot.
pub(crate) fn spmm_dots<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    x: &[&Buffer<T>],
    y: &mut [&mut Buffer<T>],
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let k = check_block("spmm_dots", &[x.len(), y.len()])?;
    for c in 0..k {
        check_len("spmm input column", x[c], a.n_cols)?;
        check_len("spmm output column", &*y[c], a.n_rows)?;
        partials.check(Slot(slot.0 + c), a.n_rows)?;
    }
    if a.n_rows != a.n_cols {
        return Err(Error::dims(
            "spmm_dots: a square matrix",
            a.n_rows,
            a.n_cols,
        ));
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        spmm(backend, a, x, y)?;
        for c in 0..k {
            let (xs, ys) = (x[c].host()?, y[c].host()?);
            let dot = xs.iter().zip(ys).fold(T::zero(), |s, (&u, &v)| s + u * v);
            host_partial(partials, Slot(slot.0 + c), dot.to_f64())?;
        }
        return Ok(());
    }
    let mut args = spmm_args(a, x, y)?;
    args.push(KernelArg::buffer(partials.buffer()));
    args.push(len("partials slot", slot.0)?);
    // SAFETY (launch_partials): as `spmm`; the k slots from `slot` checked against n_rows.
    launch_partials::<T>(&rt, Kernel::CsrSpmmDots, partials, &args)
}

/// For every column c: x_c += alpha_c p_c, r_c -= alpha_c q_c, and the partial of <r_c, r_c>
/// into slot `slot + c` (kernel `block_cg_update`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn block_cg_update<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    alpha: &[f64],
    x: &mut [&mut Buffer<T>],
    p: &[&Buffer<T>],
    r: &mut [&mut Buffer<T>],
    q: &[&Buffer<T>],
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let k = check_block(
        "block_cg_update",
        &[alpha.len(), x.len(), p.len(), r.len(), q.len()],
    )?;
    let n = x[0].len();
    for c in 0..k {
        check_len("block_cg_update x", &*x[c], n)?;
        check_len("block_cg_update p", p[c], n)?;
        check_len("block_cg_update r", &*r[c], n)?;
        check_len("block_cg_update q", q[c], n)?;
        partials.check(Slot(slot.0 + c), n)?;
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        for c in 0..k {
            let a = T::from_f64(alpha[c]);
            let (ps, qs) = (p[c].host()?, q[c].host()?);
            for (xi, &pi) in x[c].host_mut()?.iter_mut().zip(ps) {
                *xi += a * pi;
            }
            let mut rr = T::zero();
            for (ri, &qi) in r[c].host_mut()?.iter_mut().zip(qs) {
                *ri -= a * qi;
                rr += *ri * *ri;
            }
            host_partial(partials, Slot(slot.0 + c), rr.to_f64())?;
        }
        return Ok(());
    }
    let (xs, rs): (Vec<&Buffer<T>>, Vec<&Buffer<T>>) = (
        x.iter().map(|b| &**b).collect(),
        r.iter().map(|b| &**b).collect(),
    );
    let mut args = vec![len("block rows", n)?, len("block columns", k)?];
    args.extend(scalar_args::<T>(alpha));
    args.extend(column_args(&xs));
    args.extend(column_args(p));
    args.extend(column_args(&rs));
    args.extend(column_args(q));
    args.push(KernelArg::buffer(partials.buffer()));
    args.push(len("partials slot", slot.0)?);
    // SAFETY (launch_partials): every column's length checked, k <= 8, the slots checked.
    launch_partials::<T>(&rt, Kernel::BlockCgUpdate, partials, &args)
}

/// For every column c: p_c = z_c + beta_c p_c (kernel `block_xpby`).
pub(crate) fn block_xpby<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    beta: &[f64],
    z: &[&Buffer<T>],
    p: &mut [&mut Buffer<T>],
) -> Result<()> {
    let k = check_block("block_xpby", &[beta.len(), z.len(), p.len()])?;
    let n = z[0].len();
    for c in 0..k {
        check_len("block_xpby z", z[c], n)?;
        check_len("block_xpby p", &*p[c], n)?;
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        for c in 0..k {
            let b = T::from_f64(beta[c]);
            for (pi, &zi) in p[c].host_mut()?.iter_mut().zip(z[c].host()?) {
                *pi = zi + b * *pi;
            }
        }
        return Ok(());
    }
    let ps: Vec<&Buffer<T>> = p.iter().map(|b| &**b).collect();
    let mut args = vec![len("block rows", n)?, len("block columns", k)?];
    args.extend(scalar_args::<T>(beta));
    args.extend(column_args(z));
    args.extend(column_args(&ps));
    // SAFETY (launch_items): every column's length checked, k <= 8.
    launch_items::<T>(&rt, Kernel::BlockXpby, n, &args)
}
