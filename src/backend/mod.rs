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

// The floor: what every backend implements or uses, naming no backend.
mod backend_trait;
pub mod buffer;
mod config;
mod counters;
mod info;
pub mod kernel_sources;
pub mod launch;
pub mod matrix;
pub mod ops;
pub mod partials;
pub mod policy;
pub use policy::{format_choice, long_rows, row_blocks, tuning};

// The backends.
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod host;
#[cfg(feature = "opencl")]
pub mod opencl;

// Above the backends: the run-time choice among them.
mod any;
mod select;

pub use any::AnyBackend;
pub use backend_trait::Backend;
pub use buffer::Buffer;
pub use config::{BackendConfig, BackendStatus, DeviceSelector};
pub use counters::{CounterSnapshot, Counters, MemoryUse};
pub use info::{collective_result, BackendInfo};
pub use matrix::{
    CompactColumnBuffers, DeviceFormat, DeviceMatrix, LongRows, MatrixFormat, RowBlocks,
};
pub use ops::{
    AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, Basis, BicgstabFusedVectors, BicgstabSlots, BiluParts,
    BlockTriangular, CgFusedVectors, CgSlots, CsrLayouts, CsrUpdate, FaultInjection, FsaiPattern,
    GatherList, GhostBlock, HaloMessages, HaloOps, InversePattern, IpStencil, KrylovOps,
    PcgStepVectors, PeerLink, PeerNeighbor, PeerOptions, PrecondOps, Recording, ResidentOps,
    ResidentState, SpmvDots, SpmvOps, StencilCoefficients, VectorOps, AFSAI_TEAM_CAP,
    AFSAI_TEAM_MIN_ROW_LEN, FSAI_TEAM_MIN_M, MAX_BLOCK_SIZE,
};
pub use partials::{Partials, Slot, Sums};
pub use row_blocks::CsrKernel;
pub use select::{available_backends, available_backends_with, BackendChoice, AUTO_HOST_MAX_N};
pub use tuning::Tuning;
