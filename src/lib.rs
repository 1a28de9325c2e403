//! # pipekrylov
//!
//! Pipelined Krylov solvers (CG, BiCGStab, GMRES(m)) with fused kernels, after Rupp, Weinbub,
//! Jüngel and Grasser, *Pipelined Iterative Solvers with Kernel Fusion for GPUs*. One
//! [`Backend`](backend::Backend) trait is implemented by the pure-Rust host backend (always
//! built), OpenCL (feature `opencl`) and CUDA (feature `cuda`).
#![warn(missing_docs)]

pub mod backend;
pub mod bench;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod error;
pub mod interop;
pub mod matrix;
pub mod memory;
pub mod precond;
mod reusable;
pub mod scalar;
mod solve;
pub mod solver;

pub use error::{Error, Result};
pub use reusable::{ReusableSolver, SolverBuilder};
pub use solve::{solve, Method, Solution, SolveOptions};

/// The traits and types most programs need: `use pipekrylov::prelude::*;`.
pub mod prelude {
    pub use crate::backend::{
        AnyBackend, Backend, BackendChoice, BackendInfo, Buffer, DeviceMatrix, KrylovOps,
        MatrixFormat, PrecondOps, SpmvOps, VectorOps,
    };
    pub use crate::matrix::CsrMatrix;
    pub use crate::precond::{Jacobi, Preconditioner};
    pub use crate::solver::{BiCgStab, Cg, Gmres, Params, SolveReport, StopReason, Variant};
    pub use crate::{Error, Precision, Result, Scalar};
}
pub use scalar::{Precision, Scalar};

/// The README's example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
