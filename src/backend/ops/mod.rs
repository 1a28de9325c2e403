//! The kernel inventory: one sub-trait per family. Every method is one kernel (or one transfer)
//! with the same name in `kernels-cl/`, `kernels-cu/` and the host backend. Fused operations
//! have a default body composed of primitives, kept as a free function in `reference` modules:
//! it is the executable specification every backend is tested against.

pub mod krylov;
pub mod precond;
pub mod spmv;
pub mod vector;

pub use krylov::{Basis, KrylovOps};
pub use precond::PrecondOps;
pub use spmv::{SpmvDots, SpmvOps};
pub use vector::VectorOps;
