//! Krylov solvers: CG, BiCGStab and GMRES(m), each pipelined (default) and classical.

mod bicgstab;
mod block_product;
mod cg;
mod common;
mod gmres;
mod params;
mod report;
mod resident;

pub use bicgstab::BiCgStab;
pub(crate) use cg::norm as cg_norm;
pub use cg::Cg;
pub(crate) use common::with_monitor;
pub use common::{Control, Monitor};
pub use gmres::Gmres;
pub use params::{
    Execution, GmresOrthogonalization, GmresParams, Params, Variant, RESIDENT_AUTO_MAX_N,
    RESIDENT_AUTO_MAX_N_NONSYMMETRIC,
};
pub use report::{BreakdownKind, Progress, SolveReport, StopCriterion, StopReason};
