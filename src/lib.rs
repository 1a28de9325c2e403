//! # pipekrylov
//!
//! Pipelined Krylov solvers (CG, BiCGStab, GMRES(m)) with fused kernels, after Rupp, Weinbub,
//! Jüngel and Grasser, *Pipelined Iterative Solvers with Kernel Fusion for GPUs*. One
//! [`Backend`](backend::Backend) trait is implemented by the pure-Rust host backend (always
//! built), OpenCL (feature `opencl`) and CUDA (feature `cuda`).
#![warn(missing_docs)]

pub mod backend;
// The benchmark harness of `pipekrylov bench`, the criterion benches and the team's probes: not
// part of the documented API (its shape follows the measurements, not semver).
#[doc(hidden)]
pub mod bench;
#[cfg(feature = "cli")]
pub mod cli;
mod device_csr;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod error;
pub mod interop;
pub mod matrix;
pub mod memory;
pub mod options_kv;
pub mod precond;
mod reusable;
pub mod scalar;
mod solve;
pub mod solver;

pub use error::{Error, ErrorClass, Result};
pub use reusable::{ReusableSolver, SolverBuilder, ValuesUpdate};
pub use solve::{solve, solve_with_monitor, Method, Solution, SolveOptions};

/// The traits and types most programs need: `use pipekrylov::prelude::*;` is the one `use` a
/// program of the one-call API, the reusable solver or the solver objects needs (the backend
/// traits come with it, so `upload_matrix`, `upload` and `alloc` resolve).
///
/// It does not export the crate's `Result` alias, so a user's `Result<(), E>` keeps meaning
/// `std::result::Result`:
///
/// ```
/// use pipekrylov::prelude::*;
///
/// fn main() -> Result<(), pipekrylov::Error> {
///     let a = CsrMatrix::<f64>::from_triplets(2, 2, &[(0, 0, 2.0), (1, 1, 4.0)])?;
///     let host = HostBackend::new();
///     let device_a = host.upload_matrix(&a, MatrixFormat::Csr)?;
///     let b = host.upload(&[2.0, 4.0])?;
///     let mut x = host.alloc::<f64>(2)?;
///     let report = Cg::new(&host, &device_a, None, Params::default())?.solve(&b, &mut x)?;
///     assert!(report.stop_reason.converged());
///     let sol = solve(&a, &[2.0, 4.0], &SolveOptions::default().method(Method::Cg))?;
///     assert!((sol.x[1] - 1.0).abs() < 1e-12);
///     Ok(())
/// }
/// ```
pub mod prelude {
    #[cfg(feature = "cuda")]
    pub use crate::backend::cuda::CudaBackend;
    pub use crate::backend::host::HostBackend;
    #[cfg(feature = "opencl")]
    pub use crate::backend::opencl::OpenClBackend;
    pub use crate::backend::{
        AnyBackend, Backend, BackendChoice, BackendInfo, Buffer, DeviceMatrix, KrylovOps,
        MatrixFormat, PrecondOps, SpmvOps, VectorOps,
    };
    pub use crate::matrix::{CsrMatrix, CsrView};
    pub use crate::precond::{Jacobi, PrecondKind, PrecondSpec, Preconditioner};
    pub use crate::solver::{
        BiCgStab, Cg, Execution, Gmres, Params, Progress, SolveReport, StopReason, Variant,
    };
    pub use crate::{
        solve, solve_with_monitor, Error, Method, Precision, ReusableSolver, Scalar, Solution,
        SolveOptions,
    };
}
pub use scalar::{Precision, Scalar};

/// The README's example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
