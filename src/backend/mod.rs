//! The one `Backend` trait and its implementations.
//!
//! [`Backend`] is the union of the sub-traits in [`ops`] (one file per kernel family); every
//! backend (host, OpenCL, CUDA) implements them in files of the same names. [`AnyBackend`]
//! picks one at run time through `enum_dispatch`; solvers are generic over `B: Backend`.
//!
//! ```
//! use pipekrylov::backend::{host::HostBackend, VectorOps};
//! let host = HostBackend::new();
//! let x = host.upload(&[1.0f64, 2.0, 3.0]).unwrap();
//! let mut p = host.partials::<f64>(3, 1).unwrap();
//! host.dot_partials(&x, &x, &mut p, pipekrylov::backend::Slot(0)).unwrap();
//! assert_eq!(host.finish(&p).unwrap().0[0], 14.0);
//! ```

pub mod buffer;
pub mod host;
pub mod kernel_sources;
pub mod launch;
pub mod matrix;
pub mod ops;
pub mod partials;
pub mod policy;
mod select;
pub use policy::{format_choice, long_rows, row_blocks, tuning};

#[cfg(feature = "opencl")]
pub mod opencl;

#[cfg(feature = "cuda")]
pub mod cuda;

pub use buffer::Buffer;
pub use matrix::{
    CompactColumnBuffers, DeviceFormat, DeviceMatrix, LongRows, MatrixFormat, RowBlocks,
};
pub use ops::{
    AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, Basis, BicgstabFusedVectors, BicgstabSlots, BiluParts,
    BlockTriangular, CgFusedVectors, CgSlots, CsrLayouts, FaultInjection, FsaiPattern, GatherList,
    GhostBlock, HaloMessages, HaloOps, InversePattern, IpStencil, KrylovOps, PcgStepVectors,
    PeerLink, PeerNeighbor, PeerOptions, PrecondOps, Recording, ResidentOps, ResidentState,
    SpmvDots, SpmvOps, StencilCoefficients, VectorOps, AFSAI_TEAM_CAP, AFSAI_TEAM_MIN_ROW_LEN,
    FSAI_TEAM_MIN_M, MAX_BLOCK_SIZE,
};
pub use partials::{Partials, Slot, Sums};
pub use row_blocks::CsrKernel;
pub use select::{
    available_backends, available_backends_with, BackendChoice, BackendConfig, BackendStatus,
    DeviceSelector, AUTO_HOST_MAX_N,
};
pub use tuning::Tuning;

use enum_dispatch::enum_dispatch;
// Names used in the trait signatures, needed where enum_dispatch expands AnyBackend's impls.
use std::sync::atomic::{AtomicU64, Ordering};
#[allow(unused_imports)]
use {
    crate::error::Result, crate::matrix::CsrMatrix, crate::scalar::Scalar, bytemuck::Pod,
    std::ops::Range,
};

/// Identity of a backend instance.
#[enum_dispatch]
pub trait BackendInfo {
    /// Backend kind: `"host"`, `"opencl"` or `"cuda"`.
    fn name(&self) -> &'static str;
    /// Human-readable device description.
    fn device_name(&self) -> String;
    /// Whether f64 kernels are available.
    fn supports_f64(&self) -> bool {
        true
    }
    /// Whether the device is a GPU (the host backend and OpenCL CPU devices are not).
    fn is_gpu(&self) -> bool {
        false
    }
    /// The tuning knobs this backend runs with (given at construction, e.g.
    /// `HostBackend::with_tuning`; `dist::DistBackend` answers its inner backend's). The default
    /// body answers the defaults, for backends that hold none.
    fn tuning(&self) -> &crate::backend::tuning::Tuning {
        &tuning::DEFAULT_TUNING
    }
    /// Number of MPI ranks the backend's reductions span (1 except for `dist::DistBackend`).
    fn ranks(&self) -> usize {
        1
    }
    /// Collective agreement on a rank-local check (RELIABILITY.md row 25), to be called by
    /// every rank before the collectives that follow it: `dist::DistBackend` returns an error
    /// on every rank when `failed_here` is true on any rank (naming the ranks), so that no rank
    /// waits in a reduction the failed one never reaches; one process: `Ok`. See
    /// [`collective_result`].
    fn agree_across_ranks(&self, what: &str, failed_here: bool) -> crate::error::Result<()> {
        let _ = (what, failed_here);
        Ok(())
    }
    /// Whether every rank passes the same `value` for `what` (a hash of the parameters):
    /// `dist::DistBackend` returns an error on every rank otherwise; one process: `Ok`.
    fn same_across_ranks(&self, what: &str, value: u64) -> crate::error::Result<()> {
        let _ = (what, value);
        Ok(())
    }
    /// Build the kernels of `precision` now instead of at their first launch (GPU backends
    /// compile once per process: NVRTC or the OpenCL compiler), e.g. to keep compilation out
    /// of a timed setup; nothing to do on the host. A compiler error is
    /// [`crate::Error::KernelBuild`].
    fn prepare_kernels(&self, precision: crate::scalar::Precision) -> crate::error::Result<()> {
        let _ = precision;
        Ok(())
    }
    /// What runs this backend's kernels (the operations written once against
    /// [`launch::KernelRuntime`]); the host by default.
    #[doc(hidden)]
    fn kernel_runtime(&self) -> launch::KernelRuntime<'_> {
        launch::KernelRuntime::Host(std::marker::PhantomData)
    }
}

/// Everything a solver needs from a backend.
pub trait Backend:
    BackendInfo + VectorOps + SpmvOps + KrylovOps + PrecondOps + HaloOps + ResidentOps + FaultInjection
{
}
impl<
        B: BackendInfo
            + VectorOps
            + SpmvOps
            + KrylovOps
            + PrecondOps
            + HaloOps
            + ResidentOps
            + FaultInjection,
    > Backend for B
{
}

/// `local` (a rank-local setup or check) agreed over the ranks of `backend`
/// ([`BackendInfo::agree_across_ranks`]): a rank that failed keeps its own error, the others
/// get [`crate::Error::Distributed`] naming the failed ranks. One collective when the backend
/// spans several ranks, nothing otherwise.
pub fn collective_result<B: BackendInfo + ?Sized, R>(
    backend: &B,
    what: &str,
    local: crate::error::Result<R>,
) -> crate::error::Result<R> {
    if backend.ranks() <= 1 {
        return local;
    }
    let agreed = backend.agree_across_ranks(what, local.is_err());
    match local {
        Err(e) => Err(e),
        Ok(v) => agreed.map(|()| v),
    }
}

/// A backend chosen at run time.
#[enum_dispatch(
    BackendInfo,
    VectorOps,
    SpmvOps,
    KrylovOps,
    PrecondOps,
    HaloOps,
    ResidentOps,
    FaultInjection
)]
pub enum AnyBackend {
    /// The pure-Rust host backend.
    Host(host::HostBackend),
    /// OpenCL.
    #[cfg(feature = "opencl")]
    OpenCl(opencl::OpenClBackend),
    /// CUDA.
    #[cfg(feature = "cuda")]
    Cuda(cuda::CudaBackend),
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
/// testing hook that makes an allocation fail ([`FaultInjection::fail_allocation`]).
#[derive(Debug, Default)]
pub struct Counters {
    launches: AtomicU64,
    transfers: AtomicU64,
    /// 0: off; k: the k-th device allocation from now fails.
    failing_allocation: AtomicU64,
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
    /// Current values.
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            launches: self.launches.load(Ordering::Relaxed),
            transfers: self.transfers.load(Ordering::Relaxed),
        }
    }
}
