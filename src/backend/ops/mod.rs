//! The kernel inventory: one sub-trait per family. Every method is one kernel (or one transfer)
//! with the same name in `kernels/<family>.kc` ([`Kernel`]) and the host backend. Fused operations
//! have a default body composed of primitives, kept as a free function in `reference` modules:
//! it is the executable specification every backend is tested against. On a GPU backend the
//! default bodies launch the kernels, once for both runtimes, through
//! [`crate::backend::launch`] (`krylov/launch.rs`, `precond/launch.rs`, `vector.rs`, and the
//! operations written against `KernelRuntime` alone: `sparse`, `amg_setup`).

pub(crate) mod amg_setup;
pub mod bilu;
pub(crate) mod checks;
pub mod fsai;
pub mod halo;
mod inventory;
pub mod ip;
pub mod ip_assemble;
pub mod isai;
pub mod krylov;
pub mod precond;
pub mod resident;
pub(crate) mod sparse;
pub mod spmv;
pub mod testing;
pub mod trsv;
pub(crate) mod trsv_levels;
pub mod vector;

pub use bilu::BiluParts;
pub use halo::{
    GatherList, GhostBlock, HaloMessages, HaloOps, PeerLink, PeerNeighbor, PeerOptions,
};
pub use inventory::{Kernel, KERNELS};
pub use krylov::{Basis, KrylovOps};
pub use precond::{
    AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, BlockTriangular, CsrUpdate, FsaiPattern,
    InversePattern, IpStencil, PcgStepVectors, PrecondOps, StencilCoefficients, AFSAI_TEAM_CAP,
    AFSAI_TEAM_MIN_ROW_LEN, FSAI_TEAM_MIN_M, MAX_BLOCK_SIZE,
};
pub use resident::{
    BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, Recording, ResidentOps,
    ResidentState,
};
pub use spmv::{CsrLayouts, SpmvDots, SpmvOps};
pub use testing::FaultInjection;
pub use vector::VectorOps;
