//! Conversions to and from the matrix types of other Rust sparse crates, one optional feature
//! each (`sprs`, `nalgebra-sparse`, `faer`). Solutions come back as `Vec<T>` already ([`crate::Solution::x`],
//! [`crate::backend::VectorOps::download`]).

#[cfg(feature = "sprs")]
pub mod sprs;

#[cfg(feature = "nalgebra-sparse")]
pub mod nalgebra_sparse;

#[cfg(feature = "faer")]
pub mod faer;
