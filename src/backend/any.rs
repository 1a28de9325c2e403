//! [`AnyBackend`]: a backend chosen at run time, every trait dispatched by `enum_dispatch`.

use super::host;
use enum_dispatch::enum_dispatch;
// Names used in the trait signatures, needed where enum_dispatch expands the impls.
#[allow(unused_imports)]
use {
    super::*,
    crate::error::Result,
    crate::matrix::{CsrMatrix, CsrView},
    crate::scalar::Scalar,
    bytemuck::Pod,
    std::ops::Range,
};

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
