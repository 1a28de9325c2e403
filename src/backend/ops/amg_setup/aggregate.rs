//! The aggregation of the device AMG setup (`kernels/amg_setup.kc`): the rounds of the
//! distance-2 maximal independent set, the roots' numbers and the joins (Bell, Dalton, Olson
//! 2012), each operation's host reference and launch as in the parent module.

use super::{
    hash, host_partial, launch_items, launch_partials, rank, SECOND_SET_MIN_FREE, UNAGGREGATED,
};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::KernelArg;
use crate::backend::ops::sparse::CsrRef;
use crate::backend::ops::{Kernel, VectorOps};
use crate::backend::partials::{Partials, Slot};
use crate::error::Result;
use crate::scalar::Scalar;

/// Kernel `amg_mis2_init`: the tuple of every node, (1 << 32) | hash(i) when it has a strong
/// coupling, else 0 (it stays out of the independent set); with `mask` (the aggregates so
/// far), only for a node in no aggregate with at least [`SECOND_SET_MIN_FREE`] strong
/// neighbours in none, and at least `free_percent` percent of its strong neighbours (rounded
/// up; 0: no share asked).
pub(crate) fn mis2_init<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    mask: Option<&Buffer<u32>>,
    free_percent: u32,
    tuple: &mut Buffer<u64>,
) -> Result<()> {
    check_len("amg strength flags", flags, a.nnz())?;
    check_len("amg tuples", tuple, a.n_rows)?;
    if let Some(m) = mask {
        check_len("amg aggregates", m, a.n_rows)?;
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, f) = (a.row_ptr.host()?, a.col_idx.host()?, flags.host()?);
        let g = mask.map(|m| m.host()).transpose()?;
        let free = |j: usize| g.map_or(true, |g| g[j] == UNAGGREGATED);
        let percent = if g.is_some() { free_percent } else { 0 } as usize;
        for (i, t) in tuple.host_mut()?.iter_mut().enumerate() {
            let strong = (rp[i] as usize..rp[i + 1] as usize).filter(|&p| f[p] == 1);
            let share = (percent * strong.clone().count()).div_ceil(100);
            let need = if g.is_some() {
                share.max(SECOND_SET_MIN_FREE as usize)
            } else {
                1
            };
            let any = free(i) && strong.filter(|&p| free(ci[p] as usize)).count() >= need;
            *t = if any {
                (1u64 << 32) | u64::from(hash(i as u32))
            } else {
                0
            };
        }
        return Ok(());
    }
    launch_items::<T>(
        &rt,
        Kernel::AmgMis2Init,
        a.n_rows,
        &[
            KernelArg::len("amg rows", a.n_rows)?,
            KernelArg::buffer(a.row_ptr),
            KernelArg::buffer(a.col_idx),
            KernelArg::buffer(flags),
            KernelArg::buffer(mask.unwrap_or(flags)),
            KernelArg::U32(if mask.is_some() {
                SECOND_SET_MIN_FREE
            } else {
                0
            }),
            KernelArg::U32(if mask.is_some() { free_percent } else { 0 }),
            KernelArg::buffer(tuple),
        ],
    )
}

/// Kernel `amg_mis2_max`: out_i = the largest of in_i and in_j over i's strong neighbours j;
/// with `mask`, 0 for a node in an aggregate (so the set is taken among the others alone).
pub(crate) fn mis2_max<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    mask: Option<&Buffer<u32>>,
    input: &Buffer<u64>,
    out: &mut Buffer<u64>,
) -> Result<()> {
    check_len("amg strength flags", flags, a.nnz())?;
    check_len("amg tuples", input, a.n_rows)?;
    check_len("amg tuples", out, a.n_rows)?;
    if let Some(m) = mask {
        check_len("amg aggregates", m, a.n_rows)?;
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, f, x) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            flags.host()?,
            input.host()?,
        );
        let g = mask.map(|m| m.host()).transpose()?;
        for (i, o) in out.host_mut()?.iter_mut().enumerate() {
            *o = if g.is_some_and(|g| g[i] != UNAGGREGATED) {
                0
            } else {
                (rp[i] as usize..rp[i + 1] as usize)
                    .filter(|&p| f[p] == 1)
                    .map(|p| x[ci[p] as usize])
                    .fold(x[i], u64::max)
            };
        }
        return Ok(());
    }
    launch_items::<T>(
        &rt,
        Kernel::AmgMis2Max,
        a.n_rows,
        &[
            KernelArg::len("amg rows", a.n_rows)?,
            KernelArg::buffer(a.row_ptr),
            KernelArg::buffer(a.col_idx),
            KernelArg::buffer(flags),
            KernelArg::buffer(mask.unwrap_or(flags)),
            KernelArg::U32(u32::from(mask.is_some())),
            KernelArg::buffer(input),
            KernelArg::buffer(out),
        ],
    )
}

/// Kernel `amg_mis2_select`: an undecided node whose tuple is the largest of its distance-2
/// neighbourhood (`max2`) becomes a root, one with a root there leaves; the count of nodes
/// still undecided into `slot`.
pub(crate) fn mis2_select<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    tuple: &mut Buffer<u64>,
    max2: &Buffer<u64>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let n = tuple.len();
    check_len("amg tuples", max2, n)?;
    partials.check(slot, n)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let m = max2.host()?;
        let mut undecided = 0usize;
        for (t, &m) in tuple.host_mut()?.iter_mut().zip(m) {
            if rank(*t) == 1 {
                if m == *t {
                    *t = (2u64 << 32) | (*t & 0xffff_ffff);
                } else if rank(m) == 2 {
                    *t = 0;
                }
            }
            if rank(*t) == 1 {
                undecided += 1;
            }
        }
        return host_partial(partials, slot, undecided as f64);
    }
    launch_partials(
        &rt,
        Kernel::AmgMis2Select,
        partials,
        &[
            KernelArg::len("amg rows", n)?,
            KernelArg::buffer(tuple),
            KernelArg::buffer(max2),
            KernelArg::buffer(partials.buffer()),
            KernelArg::U32(slot.0 as u32),
        ],
    )
}

/// Kernel `amg_root_flags`: 1 for the roots, 0 for the others (`T`: the setup's precision,
/// whose program runs it).
pub(crate) fn root_flags<T: Scalar, B: VectorOps + ?Sized>(
    backend: &B,
    tuple: &Buffer<u64>,
    is_root: &mut Buffer<u32>,
) -> Result<()> {
    let n = tuple.len();
    check_len("amg root flags", is_root, n)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        for (r, &t) in is_root.host_mut()?.iter_mut().zip(tuple.host()?) {
            *r = u32::from(rank(t) == 2);
        }
        return Ok(());
    }
    launch_items::<T>(
        &rt,
        Kernel::AmgRootFlags,
        n,
        &[
            KernelArg::len("amg rows", n)?,
            KernelArg::buffer(tuple),
            KernelArg::buffer(is_root),
        ],
    )
}

/// Kernel `amg_root_ids`: the aggregate of every root, `base` plus its rank among the roots
/// (`root_scan`); the other nodes' entries are kept (`T` as for [`root_flags`]).
pub(crate) fn root_ids<T: Scalar, B: VectorOps + ?Sized>(
    backend: &B,
    tuple: &Buffer<u64>,
    root_scan: &Buffer<u32>,
    base: usize,
    agg: &mut Buffer<u32>,
) -> Result<()> {
    let base = u32::try_from(base).map_err(|_| crate::error::Error::IndexOverflow {
        what: "amg aggregates".into(),
        value: base,
        max: u32::MAX as usize,
    })?;
    let n = tuple.len();
    check_len("amg root ranks", root_scan, n + 1)?;
    check_len("amg aggregates", agg, n)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let s = root_scan.host()?;
        for (i, (g, &t)) in agg.host_mut()?.iter_mut().zip(tuple.host()?).enumerate() {
            if rank(t) == 2 {
                *g = base + s[i];
            }
        }
        return Ok(());
    }
    launch_items::<T>(
        &rt,
        Kernel::AmgRootIds,
        n,
        &[
            KernelArg::len("amg rows", n)?,
            KernelArg::buffer(tuple),
            KernelArg::buffer(root_scan),
            KernelArg::U32(base),
            KernelArg::buffer(agg),
        ],
    )
}

/// Kernel `amg_join`: a node in no aggregate of `agg_in` joins the aggregate numbered `min_id`
/// or more that it has the most strong couplings into (compact aggregates: on 2D Poisson 1M
/// and jump3d 250K, 15 -> 14 and 65 -> 58 iterations against the strong neighbour of largest
/// hash alone); ties go to the strong neighbour of largest hash.
pub(crate) fn join<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    flags: &Buffer<u32>,
    min_id: u32,
    agg_in: &Buffer<u32>,
    agg_out: &mut Buffer<u32>,
) -> Result<()> {
    check_len("amg strength flags", flags, a.nnz())?;
    check_len("amg aggregates", agg_in, a.n_rows)?;
    check_len("amg aggregates", agg_out, a.n_rows)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, f, g) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            flags.host()?,
            agg_in.host()?,
        );
        for (i, o) in agg_out.host_mut()?.iter_mut().enumerate() {
            *o = if g[i] != UNAGGREGATED {
                g[i]
            } else {
                (rp[i] as usize..rp[i + 1] as usize)
                    .filter(|&p| {
                        let gj = g[ci[p] as usize];
                        f[p] == 1 && gj != UNAGGREGATED && gj >= min_id
                    })
                    .max_by_key(|&p| {
                        let gp = g[ci[p] as usize];
                        let links = (rp[i] as usize..rp[i + 1] as usize)
                            .filter(|&q| f[q] == 1 && g[ci[q] as usize] == gp)
                            .count();
                        (links, hash(ci[p]))
                    })
                    .map_or(UNAGGREGATED, |p| g[ci[p] as usize])
            };
        }
        return Ok(());
    }
    launch_items::<T>(
        &rt,
        Kernel::AmgJoin,
        a.n_rows,
        &[
            KernelArg::len("amg rows", a.n_rows)?,
            KernelArg::buffer(a.row_ptr),
            KernelArg::buffer(a.col_idx),
            KernelArg::buffer(flags),
            KernelArg::U32(min_id),
            KernelArg::buffer(agg_in),
            KernelArg::buffer(agg_out),
        ],
    )
}
