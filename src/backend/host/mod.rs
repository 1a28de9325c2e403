//! The pure-Rust host backend (rayon): the reference every other backend is tested against,
//! and a real multi-core CPU solver.
//!
//! Every "kernel" splits its vectors into chunks of [`CHUNK`] elements; one chunk plays the role
//! of one GPU work-group and writes one partial sum. The chunking depends on `n` only, so sums
//! are bit-for-bit reproducible whatever the thread count. Vectors shorter than
//! [`PARALLEL_MIN`] are processed on the calling thread to keep small-system latency low.

mod bilu;
mod halo;
mod ip_assemble;
mod krylov;
mod precond;
mod resident;
mod spmv;
mod vector;

use super::tuning::Tuning;
use super::{BackendInfo, Counters};
use rayon::prelude::*;

/// Elements per chunk (one partial sum per chunk).
pub const CHUNK: usize = 2048;
/// Below this length kernels run on the calling thread.
pub const PARALLEL_MIN: usize = 8192;

/// The host backend.
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, BackendInfo};
/// assert_eq!(HostBackend::new().name(), "host");
/// ```
#[derive(Debug, Default)]
pub struct HostBackend {
    counters: Counters,
    /// The knobs the host follows where it mirrors a GPU choice (e.g. the launches of a DCGS2
    /// step, [`Tuning::dcgs2_small_max_groups`]).
    tuning: Tuning,
}

impl HostBackend {
    /// A host backend using rayon's global thread pool, with the default tuning.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`HostBackend::new`] with `tuning`.
    pub fn with_tuning(tuning: Tuning) -> Self {
        Self {
            counters: Counters::default(),
            tuning,
        }
    }

    /// The knobs this backend runs with (also [`BackendInfo::tuning`]).
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }
}

impl BackendInfo for HostBackend {
    fn name(&self) -> &'static str {
        "host"
    }
    fn device_name(&self) -> String {
        format!("host CPU ({} threads)", rayon::current_num_threads())
    }
    fn tuning(&self) -> &Tuning {
        &self.tuning
    }
}

/// Number of chunks for `n` elements (at least one, so an empty vector still has a zero partial).
pub(crate) fn groups_for(n: usize) -> usize {
    n.div_ceil(CHUNK).max(1)
}

/// Run `f` on every item, in parallel when the vectors are long.
pub(crate) fn exec<I: Send, F: Fn(I) + Sync + Send>(n: usize, items: Vec<I>, f: F) {
    if n >= PARALLEL_MIN {
        items.into_par_iter().for_each(f);
    } else {
        items.into_iter().for_each(f);
    }
}

/// Chunks of a slice, padded with empty chunks up to `groups` so that zipping with partial
/// slots never drops a slot (only matters for n = 0).
pub(crate) fn chunks<T>(v: &[T], groups: usize) -> impl Iterator<Item = &[T]> {
    v.chunks(CHUNK)
        .chain(std::iter::repeat_with(|| &[][..]))
        .take(groups)
}

/// Mutable chunks, padded like [`chunks`].
pub(crate) fn chunks_mut<T>(v: &mut [T], groups: usize) -> impl Iterator<Item = &mut [T]> {
    v.chunks_mut(CHUNK)
        .chain(std::iter::repeat_with(|| &mut [][..]))
        .take(groups)
}

/// Two distinct mutable slots of a partials buffer.
pub(crate) fn two_slots_mut<T>(
    data: &mut [T],
    groups: usize,
    a: usize,
    b: usize,
) -> (&mut [T], &mut [T]) {
    debug_assert!(a != b);
    if a < b {
        let (lo, hi) = data.split_at_mut(b * groups);
        (&mut lo[a * groups..(a + 1) * groups], &mut hi[..groups])
    } else {
        let (lo, hi) = data.split_at_mut(a * groups);
        (&mut hi[..groups], &mut lo[b * groups..(b + 1) * groups])
    }
}
