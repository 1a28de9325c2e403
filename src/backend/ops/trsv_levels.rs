//! Runs of narrow levels of an exact block triangular solve by one work-group
//! (`bsr_trsv_levels_group` in `kernels/trsv.kc`): the operation's checks, its host reference
//! and its launch.

use super::trsv::{check_trsv, BlockTriangular};
use super::{Kernel, PrecondOps};
use crate::backend::buffer::Buffer;
use crate::backend::launch::KernelArg;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// Most block rows of a level that [`levels_group`] solves with the other narrow levels of its
/// run (one work-item per row: the work-group size of both runtimes).
pub(crate) const NARROW_LEVEL_ROWS: usize = 256;

/// Kernel `bsr_trsv_levels_group`: the levels `levels` of an exact level-scheduled solve of
/// T x = b, in place, by one work-group, level after level (a barrier between them), in one
/// launch instead of one per level. `level_rows` holds the levels' rows (`starts[k] ..
/// starts[k + 1]` for level k) followed, from `starts_at`, by `starts` itself as u32 (the
/// layout of `Levels::upload` in `precond::bilu0`). Meant for levels of at most
/// [`NARROW_LEVEL_ROWS`] rows (wider ones are correct but run on one compute unit). The host
/// reference is [`PrecondOps::bsr_trsv_level`] level after level: the same rows in the
/// same order, so the same result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn levels_group<B: PrecondOps + ?Sized, T: Scalar>(
    backend: &B,
    t: &BlockTriangular<T>,
    level_rows: &Buffer<u32>,
    starts: &[usize],
    starts_at: usize,
    levels: Range<usize>,
    b: &Buffer<T>,
    x: &mut Buffer<T>,
) -> Result<()> {
    check_trsv(t, b, x)?;
    if levels.start > levels.end
        || levels.end >= starts.len()
        || starts_at + starts.len() > level_rows.len()
        || starts[levels.end] > starts_at
    {
        return Err(Error::param(
            "levels",
            format!(
                "levels {}..{} of {} with their rows and starts outside the {} level rows",
                levels.start,
                levels.end,
                starts.len().saturating_sub(1),
                level_rows.len()
            ),
        ));
    }
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        for k in levels {
            backend.bsr_trsv_level(t, level_rows, starts[k]..starts[k + 1], b, x)?;
        }
        return Ok(());
    }
    let unused: &Buffer<T> = &t.values;
    let args = [
        KernelArg::U32(t.block_size as u32),
        KernelArg::buffer(level_rows),
        KernelArg::len("levels", starts_at)?,
        KernelArg::len("levels", levels.start)?,
        KernelArg::len("levels", levels.len())?,
        KernelArg::buffer(&t.row_ptr),
        KernelArg::buffer(&t.col_idx),
        KernelArg::buffer(&t.values),
        KernelArg::buffer(t.inv_diag.as_ref().unwrap_or(unused)),
        KernelArg::U32(u32::from(t.inv_diag.is_none())),
        KernelArg::buffer(b),
        KernelArg::buffer(x),
    ];
    // SAFETY: the argument list of `bsr_trsv_levels_group`; b and x hold n_block_rows * s
    // entries (check_trsv), the rows and starts lie within level_rows (checked above; the rows
    // are below n_block_rows by `Levels::of`'s construction, as for `bsr_trsv_level`).
    unsafe { rt.launch::<T>(Kernel::BsrTrsvLevelsGroup, 1, &args) }
}
