//! Conversions to and from the matrix types of other Rust sparse crates, one optional feature
//! each (`sprs`). Solutions come back as `Vec<T>` already ([`crate::Solution::x`],
//! [`crate::backend::VectorOps::download`]).

#[cfg(feature = "sprs")]
pub mod sprs;
