//! What every backend answers about itself ([`BackendInfo`]): its name and device, its tuning,
//! its ranks and their agreement, and what runs its kernels.

use super::launch;
use super::tuning;
use enum_dispatch::enum_dispatch;

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
