//! Recycled device memory: a buffer the library drops waits here, with its device address, for
//! the next request of exactly its size, which then needs no new allocation.
//!
//! Why: on NVIDIA's OpenCL a new buffer costs its allocation at first use (45-90 us) and a wait
//! for the whole queue: its fill is waited for by its device address's read (a lazy allocation
//! fails there; `address.rs`). The multigrid setup allocates and drops a few hundred
//! temporaries, many of the same sizes (2D Poisson 262K: 109 of 222 requests could reuse one).
//! A recycled buffer costs neither: it is already allocated and its address is known, and
//! reusing it on the same in-order queue orders the new kernels after the old ones.
//!
//! Memory: pooled bytes are the runtime's own, not counted in [`crate::backend::MemoryUse`] (like
//! the staging memory). The pool keeps no more than the library's buffers held at once before:
//! before a new allocation it releases its oldest buffers until the live buffers, the pool and
//! the request fit under the most the live buffers ever held (the request included), so the
//! pool never holds device memory beyond the backend's high-water mark.
//! An out-of-memory allocation empties the pool and is tried once more.
//! [`super::OpenClBackend::release_pooled_memory`] empties it on request.
//!
//! Releases wait for nothing: a memory object whose address was handed out (a kernel may still
//! use it; the runtime does not know) is released after the next wait for the queue that the
//! backend makes anyway (a blocking read or write, a new buffer's first wait, a synchronization;
//! `queue_idle`), instead of after a `clFinish` of its own (2D Poisson 1M on the H200: 96 such
//! releases in the AMG setup). Until then it may hold up to the trimmed bytes beyond the
//! high-water mark.

use super::cl::{self, Mem};
use crate::backend::counters::MemoryTracker;
use std::collections::VecDeque;
use std::sync::Mutex;

/// At most this many buffers wait in the pool (the oldest is released first).
const MAX_POOLED_BUFFERS: usize = 512;

/// A dropped buffer kept for reuse.
struct Pooled {
    mem: Mem,
    bytes: usize,
    /// The device address read while it was in use (0: never read).
    address: u64,
}

/// What the pool holds, under its lock.
#[derive(Default)]
struct PoolState {
    /// Oldest first.
    free: VecDeque<Pooled>,
    /// Memory objects to release once the queue drained, with the [`PoolState::next_mark`]
    /// they were given (increasing).
    unreleased: Vec<(u64, Pooled)>,
    /// The mark of the next memory object put in `unreleased`.
    next_mark: u64,
    /// The bytes of `free`.
    pooled_bytes: usize,
    /// The most bytes the live buffers held at once (with each request), as seen at the pool's
    /// requests: the live buffers and the pool never hold more.
    high_water: usize,
}

/// The pool of one OpenCL backend, shared with its buffers (a buffer can outlive its backend).
pub(crate) struct BufferPool {
    state: Mutex<PoolState>,
    /// The backend's live bytes.
    ledger: MemoryTracker,
    /// The backend's queue (retained), drained before releasing a buffer whose address was
    /// handed out.
    queue: cl::Queue,
}

/// A memory object taken from the pool.
pub(crate) struct Recycled {
    pub(crate) mem: Mem,
    pub(crate) address: u64,
}

impl BufferPool {
    pub(crate) fn new(ledger: MemoryTracker, queue: cl::Queue) -> Self {
        Self {
            state: Mutex::new(PoolState::default()),
            ledger,
            queue,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A pooled memory object of exactly `bytes` bytes (the newest), or `None`; with `None`
    /// the pool first releases its oldest buffers until a new allocation of `bytes` keeps the
    /// held bytes under the high-water mark.
    pub(crate) fn take(&self, bytes: usize) -> Option<Recycled> {
        let mut st = self.lock();
        let handed = self.ledger.live_bytes();
        st.high_water = st.high_water.max(handed + bytes);
        if let Some(i) = st.free.iter().rposition(|p| p.bytes == bytes) {
            let p = st.free.remove(i)?;
            st.pooled_bytes -= p.bytes;
            return Some(Recycled {
                mem: p.mem,
                address: p.address,
            });
        }
        let room = st.high_water - handed - bytes;
        let mut released = Vec::new();
        while st.pooled_bytes > room {
            let Some(p) = st.free.pop_front() else { break };
            st.pooled_bytes -= p.bytes;
            released.push(p);
        }
        drop(st);
        self.release(released);
        None
    }

    /// Keep a dropped buffer's memory object (`address` 0 when it was never read).
    pub(crate) fn put(&self, mem: Mem, bytes: usize, address: u64) {
        let mut st = self.lock();
        st.pooled_bytes += bytes;
        st.free.push_back(Pooled {
            mem,
            bytes,
            address,
        });
        let mut released = Vec::new();
        while st.free.len() > MAX_POOLED_BUFFERS {
            if let Some(p) = st.free.pop_front() {
                st.pooled_bytes -= p.bytes;
                released.push(p);
            }
        }
        drop(st);
        self.release(released);
    }

    /// Release every pooled buffer and every one waiting for the queue (after a wait for
    /// it); whether there was any.
    pub(crate) fn clear(&self) -> bool {
        let mut st = self.lock();
        st.pooled_bytes = 0;
        let mut released: Vec<Pooled> = st.free.drain(..).collect();
        released.extend(st.unreleased.drain(..).map(|(_, p)| p));
        drop(st);
        let any = !released.is_empty();
        if released.iter().any(|p| p.address != 0) {
            // A failure (device fault) leaves nothing better to do than releasing anyway.
            let _ = cl::finish(&self.queue);
        }
        drop(released);
        any
    }

    /// The mark to pass to [`BufferPool::drained`] after a wait for the queue that starts now.
    pub(crate) fn mark(&self) -> u64 {
        self.lock().next_mark
    }

    /// The queue drained in a wait that started at `mark` ([`BufferPool::mark`]): release the
    /// memory objects put aside before it (every kernel enqueued before they were put aside
    /// has finished).
    pub(crate) fn drained(&self, mark: u64) {
        let mut st = self.lock();
        let done = st.unreleased.partition_point(|(m, _)| *m < mark);
        if done == 0 {
            return;
        }
        let released: Vec<(u64, Pooled)> = st.unreleased.drain(..done).collect();
        drop(st);
        drop(released);
    }

    /// The most bytes the live buffers held at once, as seen at the pool's requests.
    pub(crate) fn high_water(&self) -> usize {
        self.lock().high_water
    }

    /// The bytes waiting in the pool.
    pub(crate) fn pooled_bytes(&self) -> usize {
        self.lock().pooled_bytes
    }

    /// Release memory objects: now when no kernel got one's address, else after the next
    /// wait for the queue ([`BufferPool::drained`]).
    fn release(&self, released: Vec<Pooled>) {
        let (waiting, now): (Vec<Pooled>, Vec<Pooled>) =
            released.into_iter().partition(|p| p.address != 0);
        drop(now);
        if waiting.is_empty() {
            return;
        }
        let mut st = self.lock();
        for p in waiting {
            let mark = st.next_mark;
            st.next_mark += 1;
            st.unreleased.push((mark, p));
        }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.clear();
    }
}
