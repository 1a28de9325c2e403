//! Launch and transfer counters every backend keeps, the bytes of its buffers (live and peak),
//! and the allocation-failure testing hook.

use crate::error::Result;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The bytes of the buffers a backend has allocated and not yet dropped, and the most there
/// were since the backend was made or the peak was reset ([`super::VectorOps::memory_use`]).
/// Counted are the buffers of `alloc`, `upload` and the operations that return buffers;
/// memory a runtime keeps for itself (programs, staging areas, a halo link's receive area, the
/// OpenCL backend's pool of dropped buffers and its slabs) and buffers borrowed from the caller
/// are not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryUse {
    /// Bytes held now.
    pub live_bytes: usize,
    /// The most bytes held at once since the last [`super::VectorOps::reset_peak_memory`].
    pub peak_bytes: usize,
}

/// The live and peak bytes of one backend, shared with its buffers' tickets.
#[derive(Debug, Default)]
struct MemoryLedger {
    live: AtomicUsize,
    peak: AtomicUsize,
}

/// A buffer's share of its backend's live bytes, given back when the buffer is dropped.
#[derive(Debug)]
pub(crate) struct LedgerTicket {
    ledger: Arc<MemoryLedger>,
    bytes: usize,
}

impl Drop for LedgerTicket {
    fn drop(&mut self) {
        self.ledger.live.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Reads one backend's live bytes from elsewhere ([`Counters::memory_tracker`]).
#[cfg(feature = "opencl")]
#[derive(Debug, Clone)]
pub(crate) struct MemoryTracker(Arc<MemoryLedger>);

#[cfg(feature = "opencl")]
impl MemoryTracker {
    /// The bytes of the backend's buffers now.
    pub(crate) fn live_bytes(&self) -> usize {
        self.0.live.load(Ordering::Relaxed)
    }
}

/// A snapshot of a backend's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CounterSnapshot {
    /// Kernel launches (host: kernel calls).
    pub launches: u64,
    /// Host-device transfers in either direction.
    pub transfers: u64,
}

impl std::ops::Sub for CounterSnapshot {
    type Output = CounterSnapshot;
    fn sub(self, rhs: Self) -> Self {
        CounterSnapshot {
            launches: self.launches - rhs.launches,
            transfers: self.transfers - rhs.transfers,
        }
    }
}

/// Launch and transfer counters, shared by all backend implementations; they also hold the
/// testing hook that makes an allocation fail ([`FaultInjection::fail_allocation`](super::FaultInjection::fail_allocation)).
#[derive(Debug, Default)]
pub struct Counters {
    launches: AtomicU64,
    transfers: AtomicU64,
    /// 0: off; k: the k-th device allocation from now fails.
    failing_allocation: AtomicU64,
    /// The bytes of the backend's buffers.
    memory: Arc<MemoryLedger>,
}

impl Counters {
    /// Count one kernel launch.
    pub fn launch(&self) {
        self.launches.fetch_add(1, Ordering::Relaxed);
    }
    /// Count `n` kernel launches at once (a replayed recording).
    pub fn launches(&self, n: u64) {
        self.launches.fetch_add(n, Ordering::Relaxed);
    }
    /// Take back `n` counted launches (they were recorded, not run).
    pub fn uncount_launches(&self, n: u64) {
        self.launches.fetch_sub(n, Ordering::Relaxed);
    }
    /// Count one host transfer.
    pub fn transfer(&self) {
        self.transfers.fetch_add(1, Ordering::Relaxed);
    }
    /// Arm (`Some(k)`: the k-th allocation from now fails, k >= 1) or disarm (`None`) the
    /// injected allocation failure.
    pub fn fail_allocation(&self, nth: Option<u64>) {
        self.failing_allocation
            .store(nth.unwrap_or(0), Ordering::Relaxed);
    }
    /// Called by every device allocation of `bytes` bytes on `device`: the injected
    /// `OutOfMemory` when it is this allocation's turn (one relaxed load otherwise).
    pub fn check_allocation(&self, device: &str, bytes: usize) -> Result<()> {
        if self.failing_allocation.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        let before =
            self.failing_allocation
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| k.checked_sub(1));
        if before == Ok(1) {
            return Err(crate::error::Error::OutOfMemory {
                device: device.to_string(),
                bytes,
                detail: "injected allocation failure (testing hook)".into(),
            });
        }
        Ok(())
    }
    /// Count a new buffer of `bytes` bytes until the ticket (kept in the buffer) is dropped.
    pub(crate) fn track(&self, bytes: usize) -> LedgerTicket {
        let m = &self.memory;
        let live = m.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        m.peak.fetch_max(live, Ordering::Relaxed);
        LedgerTicket {
            ledger: Arc::clone(m),
            bytes,
        }
    }
    /// A handle that reads this backend's live bytes (for a runtime that keeps dropped
    /// buffers' memory for reuse and bounds it by them).
    #[cfg(feature = "opencl")]
    pub(crate) fn memory_tracker(&self) -> MemoryTracker {
        MemoryTracker(Arc::clone(&self.memory))
    }
    /// The live and peak bytes of the backend's buffers.
    pub fn memory_use(&self) -> MemoryUse {
        MemoryUse {
            live_bytes: self.memory.live.load(Ordering::Relaxed),
            peak_bytes: self.memory.peak.load(Ordering::Relaxed),
        }
    }
    /// Start a new peak at the live bytes.
    pub fn reset_peak_memory(&self) {
        let live = self.memory.live.load(Ordering::Relaxed);
        self.memory.peak.store(live, Ordering::Relaxed);
    }
    /// Current values.
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            launches: self.launches.load(Ordering::Relaxed),
            transfers: self.transfers.load(Ordering::Relaxed),
        }
    }
}
