//! Recycled device memory: a buffer the library drops waits here, with its device address, for
//! the next request of exactly its size, which then needs no new allocation.
//!
//! Why: on NVIDIA's OpenCL a new buffer costs three waits for the whole queue: the zero fill is
//! waited for (a lazy allocation fails there), its device address is read with a blocking launch
//! (`address.rs`), and its release waits for the queue (kernels that got its address by value
//! are unknown to the runtime). The multigrid setup allocates and drops a few hundred
//! temporaries, many of the same sizes (2D Poisson 262K: 109 of 222 requests could reuse one).
//! A recycled buffer costs none of the three waits: it is already allocated and its address is
//! known, and reusing it on the same in-order queue orders the new kernels after the old ones.
//!
//! Memory: pooled bytes are the runtime's own, not counted in [`crate::backend::MemoryUse`] (like
//! the staging memory). The pool keeps no more than the library's buffers held at once before:
//! before a new allocation it releases its oldest buffers until the live buffers, the pool and
//! the request fit under the most the live buffers ever held (the request included), so the
//! pool never holds device memory beyond the backend's high-water mark.
//! An out-of-memory allocation empties the pool and is tried once more.
//! [`super::OpenClBackend::release_pooled_memory`] empties it on request.

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

    /// Release every pooled buffer; whether there was any.
    pub(crate) fn clear(&self) -> bool {
        let mut st = self.lock();
        st.pooled_bytes = 0;
        let released: Vec<Pooled> = st.free.drain(..).collect();
        drop(st);
        let any = !released.is_empty();
        self.release(released);
        any
    }

    /// The most bytes the live buffers held at once, as seen at the pool's requests.
    pub(crate) fn high_water(&self) -> usize {
        self.lock().high_water
    }

    /// The bytes waiting in the pool.
    pub(crate) fn pooled_bytes(&self) -> usize {
        self.lock().pooled_bytes
    }

    /// Release memory objects, after the queue drained when a kernel may still use one by its
    /// address.
    fn release(&self, released: Vec<Pooled>) {
        if released.iter().any(|p| p.address != 0) {
            // A failure (device fault) leaves nothing better to do than releasing anyway.
            let _ = cl::finish(&self.queue);
        }
        drop(released);
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.clear();
    }
}
