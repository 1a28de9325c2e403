//! Preconditioners: one trait, applied as z = M^-1 r with backend kernels.

mod identity;
mod jacobi;

pub use identity::Identity;
pub use jacobi::Jacobi;

use crate::backend::{Backend, Buffer, Partials, Slot};
use crate::error::Result;
use crate::scalar::Scalar;

/// A preconditioner built on a backend for one matrix.
///
/// The pipelined solvers call [`Preconditioner::apply_dot`] inside their pipeline, so a
/// preconditioner that can fuse the inner product with its application (Jacobi) adds no pass
/// over memory.
pub trait Preconditioner<B: Backend, T: Scalar> {
    /// Short name ("jacobi").
    fn name(&self) -> &'static str;
    /// Dimension of the matrix it was built for.
    fn n(&self) -> usize;
    /// z = M^-1 r.
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()>;
    /// z = M^-1 r with the first stage of <r, z> into `slot`.
    fn apply_dot(
        &self,
        backend: &B,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.apply(backend, r, z)?;
        backend.dot_partials(r, z, partials, slot)
    }
    /// Seconds spent building it.
    fn setup_seconds(&self) -> f64;
    /// Device memory it holds, in bytes.
    fn memory_bytes(&self) -> usize;
}

/// Which preconditioner to build, for run-time selection (CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum PrecondKind {
    /// No preconditioner.
    #[default]
    None,
    /// Point Jacobi.
    Jacobi,
}

impl std::str::FromStr for PrecondKind {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(Self::None),
            "jacobi" => Ok(Self::Jacobi),
            _ => Err(crate::Error::param(
                "precond",
                format!("unknown preconditioner '{s}' (none or jacobi)"),
            )),
        }
    }
}
