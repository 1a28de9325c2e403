//! The device setup of smoothed-aggregation multigrid, written once (`kernels/amg_setup.kc`):
//! diagonal, strength of connection, the distance-2 maximal independent set and the joins of
//! the aggregation (Bell, Dalton, Olson 2012), the filtered diagonal, power-iteration steps,
//! the prolongator's rows (Vanek, Mandel, Brezina 1996) and the smoothers' diagonals. Each
//! operation checks its arguments, then runs the host reference on the host backend or
//! launches its kernel by [`KernelRuntime`]; the references do what the kernels do in the same
//! order. Block size 1.

mod aggregate;

pub(crate) use aggregate::{join, mis2_init, mis2_max, mis2_select, root_flags, root_ids};

use super::sparse::CsrRef;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::{KernelArg, KernelRuntime};
use crate::backend::ops::{Kernel, VectorOps};
use crate::backend::partials::{Partials, Slot};
use crate::error::Result;
use crate::scalar::Scalar;

/// The aggregate of a node in none.
pub(crate) const UNAGGREGATED: u32 = u32::MAX;

/// The bijective 32-bit hash that orders the nodes (`amg_hash` in the kernels).
pub(crate) fn hash(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// The strong neighbours in no aggregate a node needs to become a root of the second
/// independent set (fewer: it joins a neighbouring aggregate in the last phase). Measured with
/// CG on 2D/3D Poisson, thermal2d, aniso2d and jump3d (n = 27K-40K, host references): 1 and 2
/// give more, smaller aggregates (operator complexity up to 1.96 on 3D Poisson) for 0-2 fewer
/// iterations; without the second set the aggregates are larger and CG needs 15-60% more.
pub(crate) const SECOND_SET_MIN_FREE: u32 = 3;

/// On the finest level, a root of the second independent set also needs this share (percent,
/// rounded up) of its strong neighbours in no aggregate: 5 of 6 on a 7-point stencil, 3 of 4 on
/// a 5-point one (as [`SECOND_SET_MIN_FREE`] alone). Measured with CG on the generated families
/// (host backend running the device setup, b = A 1, 1e-8): 3D Poisson 2.1M operator complexity
/// 1.81 -> 1.57 at the same 12 iterations, jump3d 1M 1.87 -> 1.69 at the same 83, the 2D
/// families unchanged; on the coarser levels (rows of ~9-35 strong neighbours) the same rule
/// cost 2D Poisson and aniso2d 1-2 iterations more, so it stops at the finest level. On the
/// H200 (bench/log/2026-11-30-amg-finest-share.md): 3D Poisson 32K-16.8M 1.75-1.82 -> 1.54-1.58
/// at 10-12 -> 12-14 iterations, the setup's peak 3.56 -> 3.17 A's at 16.8M.
pub(crate) const SECOND_SET_FINEST_FREE_PERCENT: u32 = 67;

/// Rank of a tuple: 0 out (or without strong couplings), 1 undecided, 2 root.
fn rank(t: u64) -> u64 {
    t >> 32
}

/// Launch over `n` items (element-wise).
fn launch_items<T: Scalar>(
    rt: &KernelRuntime<'_>,
    kernel: Kernel,
    n: usize,
    args: &[KernelArg<'_>],
) -> Result<()> {
    // SAFETY: the callers check every buffer against the level's n and nnz (each kernel reads
    // and writes within its rows and entries) and pass the kernel's parameter list.
    unsafe { rt.launch_items::<T>(kernel, n, args) }
}

/// Launch a kernel over the rows of `a` whose parameters start with n, row_ptr, col_idx,
/// values; `rest` follows them (`partials`: the kernel writes them, launched on their groups).
fn launch_on_rows<T: Scalar>(
    rt: &KernelRuntime<'_>,
    kernel: Kernel,
    a: &CsrRef<'_, T>,
    rest: &[KernelArg<'_>],
    partials: Option<&Partials<T>>,
) -> Result<()> {
    let mut args = vec![
        KernelArg::len("amg rows", a.n_rows)?,
        KernelArg::buffer(a.row_ptr),
        KernelArg::buffer(a.col_idx),
        KernelArg::buffer(a.values),
    ];
    args.extend_from_slice(rest);
    match partials {
        Some(p) => launch_partials(rt, kernel, p, &args),
        None => launch_items::<T>(rt, kernel, a.n_rows, &args),
    }
}

/// Launch over `n` items writing `partials` (their group count).
pub(crate) fn launch_partials<T: Scalar>(
    rt: &KernelRuntime<'_>,
    kernel: Kernel,
    partials: &Partials<T>,
    args: &[KernelArg<'_>],
) -> Result<()> {
    // SAFETY: as launch_items; the partials' slots are checked by the callers.
    unsafe { rt.launch::<T>(kernel, partials.groups(), args) }
}

/// Host reference of a partial count: one per group chunk as the kernels' layout would give;
/// the host writes the whole count into the slot's first group.
pub(crate) fn host_partial<T: Scalar>(
    partials: &mut Partials<T>,
    slot: Slot,
    value: f64,
) -> Result<()> {
    let groups = partials.groups();
    let data = partials.buffer_mut().host_mut()?;
    let base = slot.0 * groups;
    data[base..base + groups].fill(T::zero());
    data[base] = T::from_f64(value);
    Ok(())
}

/// Kernel `amg_diagonal`: `diag` = the diagonal of `a` (zero where missing), and the count of
/// rows whose diagonal is not positive and finite into `slot`.
pub(crate) fn diagonal<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    diag: &mut Buffer<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    check_len("amg diagonal", diag, a.n_rows)?;
    partials.check(slot, a.n_rows)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v) = (a.row_ptr.host()?, a.col_idx.host()?, a.values.host()?);
        let d = diag.host_mut()?;
        let mut bad = 0usize;
        for i in 0..a.n_rows {
            let range = rp[i] as usize..rp[i + 1] as usize;
            d[i] = range
                .clone()
                .find(|&p| ci[p] as usize == i)
                .map_or(T::zero(), |p| v[p]);
            let x = d[i].to_f64();
            if !(x > 0.0 && x.is_finite()) {
                bad += 1;
            }
        }
        return host_partial(partials, slot, bad as f64);
    }
    launch_on_rows(
        &rt,
        Kernel::AmgDiagonal,
        &a,
        &[
            KernelArg::buffer(diag),
            KernelArg::buffer(partials.buffer()),
            KernelArg::U32(slot.0 as u32),
        ],
        Some(&*partials),
    )
}

/// Kernel `amg_strength`: `flags` (one per entry of `a`) = 1 where (i, j), j != i, is strong
/// in either direction: |a_ij| > 0 and |a_ij| >= eps sqrt(|d_i| |d_j|), or the same of a_ji.
pub(crate) fn strength<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    diag: &Buffer<T>,
    eps: T,
    flags: &mut Buffer<u32>,
) -> Result<()> {
    check_len("amg diagonal", diag, a.n_rows)?;
    check_len("amg strength flags", flags, a.nnz())?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v, d) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            a.values.host()?,
            diag.host()?,
        );
        let one_sided = |r: usize, c: usize, x: T| {
            x.abs() > T::zero() && x.abs() >= eps * (d[r].abs() * d[c].abs()).sqrt()
        };
        let f = flags.host_mut()?;
        for i in 0..a.n_rows {
            for p in rp[i] as usize..rp[i + 1] as usize {
                let j = ci[p] as usize;
                let strong = j != i && {
                    let row_j = &ci[rp[j] as usize..rp[j + 1] as usize];
                    let back = row_j
                        .binary_search(&(i as u32))
                        .ok()
                        .map(|q| v[rp[j] as usize + q]);
                    one_sided(i, j, v[p]) || back.is_some_and(|x| one_sided(j, i, x))
                };
                f[p] = u32::from(strong);
            }
        }
        return Ok(());
    }
    launch_on_rows(
        &rt,
        Kernel::AmgStrength,
        &a,
        &[
            KernelArg::buffer(diag),
            KernelArg::scalar(eps),
            KernelArg::buffer(flags),
        ],
        None,
    )
}

/// Kernel `amg_filtered_diag`: the diagonal of the filtered matrix, d_i plus the weak
/// off-diagonal entries of row i (in row order), or d_i where that sum is not positive.
pub(crate) fn filtered_diag<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    diag: &Buffer<T>,
    fdiag: &mut Buffer<T>,
) -> Result<()> {
    check_len("amg strength flags", flags, a.nnz())?;
    check_len("amg diagonal", diag, a.n_rows)?;
    check_len("amg filtered diagonal", fdiag, a.n_rows)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v, f, d) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            a.values.host()?,
            flags.host()?,
            diag.host()?,
        );
        for (i, o) in fdiag.host_mut()?.iter_mut().enumerate() {
            let mut lumped = T::zero();
            for p in rp[i] as usize..rp[i + 1] as usize {
                if ci[p] as usize != i && f[p] == 0 {
                    lumped += v[p];
                }
            }
            let s = d[i] + lumped;
            *o = if s > T::zero() { s } else { d[i] };
        }
        return Ok(());
    }
    launch_on_rows(
        &rt,
        Kernel::AmgFilteredDiag,
        &a,
        &[
            KernelArg::buffer(flags),
            KernelArg::buffer(diag),
            KernelArg::buffer(fdiag),
        ],
        None,
    )
}

/// The power iterations' start value of node i: a hash of i into [-1, 1) (24 bits, exact in
/// single precision).
pub(crate) fn power_start_value(i: usize) -> f64 {
    let mut h = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    ((h >> 40) as u32) as f64 / 8_388_608.0 - 1.0
}

/// Kernel `amg_power_start`: x_i = [`power_start_value`]`(i)`.
pub(crate) fn power_start<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    x: &mut Buffer<T>,
) -> Result<()> {
    let rt = backend.kernel_runtime();
    let n = x.len();
    if rt.is_host() {
        for (i, xi) in x.host_mut()?.iter_mut().enumerate() {
            *xi = T::from_f64(power_start_value(i));
        }
        return Ok(());
    }
    launch_items::<T>(
        &rt,
        Kernel::AmgPowerStart,
        n,
        &[KernelArg::len("amg rows", n)?, KernelArg::buffer(x)],
    )
}

/// Kernel `amg_power_step`: y = D^-1 A x for A itself or (`filtered`: `diag` the filtered
/// diagonal, the strong entries only) the filtered matrix, with sum d_i y_i^2 into `slot` and
/// sum d_i x_i^2 into the next slot.
#[allow(clippy::too_many_arguments)]
pub(crate) fn power_step<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    filtered: bool,
    diag: &Buffer<T>,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    check_len("amg strength flags", flags, a.nnz())?;
    for (what, b) in [("amg diagonal", diag), ("amg power vector", x)] {
        check_len(what, b, a.n_rows)?;
    }
    check_len("amg power vector", y, a.n_rows)?;
    partials.check(Slot(slot.0 + 1), a.n_rows)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v, f, d, xs) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            a.values.host()?,
            flags.host()?,
            diag.host()?,
            x.host()?,
        );
        let (mut yy, mut xx) = (T::zero(), T::zero());
        for (i, yi) in y.host_mut()?.iter_mut().enumerate() {
            let mut acc = T::zero();
            for p in rp[i] as usize..rp[i + 1] as usize {
                let j = ci[p] as usize;
                let value = if j == i {
                    if filtered {
                        d[i]
                    } else {
                        v[p]
                    }
                } else if !filtered || f[p] == 1 {
                    v[p]
                } else {
                    continue;
                };
                acc += value * xs[j];
            }
            *yi = acc / d[i];
            yy += d[i] * *yi * *yi;
            xx += d[i] * xs[i] * xs[i];
        }
        host_partial(partials, slot, yy.to_f64())?;
        return host_partial(partials, Slot(slot.0 + 1), xx.to_f64());
    }
    launch_on_rows(
        &rt,
        Kernel::AmgPowerStep,
        &a,
        &[
            KernelArg::buffer(flags),
            KernelArg::U32(u32::from(filtered)),
            KernelArg::buffer(diag),
            KernelArg::buffer(x),
            KernelArg::buffer(y),
            KernelArg::buffer(partials.buffer()),
            KernelArg::U32(slot.0 as u32),
        ],
        Some(&*partials),
    )
}

/// Kernel `amg_prolong_rows`: the rows of the prolongator (smoothed: P = (I - w D_f^-1 A_f)
/// P_tent; else P_tent), row i sorted by column into the scratch at row_ptr\[i\] + i (room for
/// its row of A and one more entry), its length into `counts`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prolong_rows<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    fdiag: &Buffer<T>,
    agg: &Buffer<u32>,
    weight: Option<T>,
    (scratch_cols, scratch_vals): (&mut Buffer<u32>, &mut Buffer<T>),
    counts: &mut Buffer<u32>,
) -> Result<()> {
    let room = a.nnz() + a.n_rows;
    check_len("amg strength flags", flags, a.nnz())?;
    check_len("amg filtered diagonal", fdiag, a.n_rows)?;
    check_len("amg aggregates", agg, a.n_rows)?;
    check_len("amg prolongator scratch", scratch_cols, room)?;
    check_len("amg prolongator scratch", scratch_vals, room)?;
    check_len("amg prolongator counts", counts, a.n_rows)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v, f, d, g) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            a.values.host()?,
            flags.host()?,
            fdiag.host()?,
            agg.host()?,
        );
        let (sc, sv, c) = (
            scratch_cols.host_mut()?,
            scratch_vals.host_mut()?,
            counts.host_mut()?,
        );
        for i in 0..a.n_rows {
            let base = rp[i] as usize + i;
            let mut m = 0usize;
            let mut insert = |col: u32, val: T| match sc[base..base + m].binary_search(&col) {
                Ok(at) => sv[base + at] += val,
                Err(at) => {
                    sc.copy_within(base + at..base + m, base + at + 1);
                    sv.copy_within(base + at..base + m, base + at + 1);
                    sc[base + at] = col;
                    sv[base + at] = val;
                    m += 1;
                }
            };
            if g[i] != UNAGGREGATED {
                insert(g[i], T::one());
            }
            if let Some(w) = weight {
                let scale = w / d[i];
                for p in rp[i] as usize..rp[i + 1] as usize {
                    let j = ci[p] as usize;
                    let value = if j == i {
                        d[i]
                    } else if f[p] == 1 {
                        v[p]
                    } else {
                        continue;
                    };
                    if g[j] != UNAGGREGATED {
                        insert(g[j], -(scale * value));
                    }
                }
            }
            c[i] = m as u32;
        }
        return Ok(());
    }
    launch_on_rows(
        &rt,
        Kernel::AmgProlongRows,
        &a,
        &[
            KernelArg::buffer(flags),
            KernelArg::buffer(fdiag),
            KernelArg::buffer(agg),
            KernelArg::scalar(weight.unwrap_or(T::zero())),
            KernelArg::U32(u32::from(weight.is_some())),
            KernelArg::buffer(scratch_cols),
            KernelArg::buffer(scratch_vals),
            KernelArg::buffer(counts),
        ],
        None,
    )
}

/// Kernel `amg_smoother_diag`: s_i = `weight` / d_i, or with `l1` 1 / (d_i + sum_{j != i}
/// |a_ij|).
pub(crate) fn smoother_diag<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    diag: &Buffer<T>,
    l1: bool,
    weight: T,
    s: &mut Buffer<T>,
) -> Result<()> {
    check_len("amg diagonal", diag, a.n_rows)?;
    check_len("amg smoother diagonal", s, a.n_rows)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v, d) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            a.values.host()?,
            diag.host()?,
        );
        for (i, si) in s.host_mut()?.iter_mut().enumerate() {
            *si = if l1 {
                let mut off = T::zero();
                for p in rp[i] as usize..rp[i + 1] as usize {
                    if ci[p] as usize != i {
                        off += v[p].abs();
                    }
                }
                T::one() / (d[i] + off)
            } else {
                weight / d[i]
            };
        }
        return Ok(());
    }
    launch_on_rows(
        &rt,
        Kernel::AmgSmootherDiag,
        &a,
        &[
            KernelArg::buffer(diag),
            KernelArg::U32(u32::from(l1)),
            KernelArg::scalar(weight),
            KernelArg::buffer(s),
        ],
        None,
    )
}
