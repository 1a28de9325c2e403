//! Algebraic multigrid by (smoothed) aggregation: the host setup of the hierarchy and its
//! reference V-cycle.
//!
//! The setup follows Vanek, Mandel and Brezina, "Algebraic multigrid by smoothed aggregation
//! for second and fourth order elliptic problems", Computing 56 (1996), with the choices of
//! AMGCL (`amgcl/coarsening/smoothed_aggregation.hpp`) where the paper leaves one open. Per
//! level:
//!
//! 1. strength of connection ([`strength_graph`]): |a_ij| >= eps sqrt(|a_ii a_jj|) (block
//!    Frobenius norms for block systems), symmetrized; eps halves on every coarser level;
//! 2. greedy three-pass aggregation ([`aggregate`]), sequential in node order (deterministic);
//!    isolated nodes (no strong neighbour) join no aggregate: their row of P is zero and the
//!    smoother treats them, as in AMGCL;
//! 3. the tentative prolongator ([`tentative_prolongator`]: a 1 per row, one column per
//!    aggregate and component) and, for smoothed aggregation, P = (I - w D_f^-1 A_f) P_tent
//!    ([`smoothed_prolongator`]) with A_f the filtered matrix (weak couplings lumped into the
//!    diagonal, [`filtered_matrix`]) and w = 4/3 / rho(D_f^-1 A_f), rho from 10 power
//!    iterations with a fixed start vector ([`spectral_radius`]);
//! 4. R = P^T and A_{l+1} = R (A_l P) by the host SpGEMM ([`crate::matrix::spgemm::spgemm`]);
//! 5. the smoother's data ([`LevelSmoother`]: damped Jacobi, l1-Jacobi or Chebyshev);
//!
//! and the coarsest level is inverted densely in f64 ([`dense_inverse`]) so its solve is one
//! SpMV. [`Hierarchy::vcycle_host`] is the executable specification of the cycle the device
//! preconditioner runs.
//!
//! A values-only refresh ([`Hierarchy::refresh`], and [`Amg`]'s `update_values`) keeps steps 1
//! and 2 (the strong couplings and the aggregates, so the tentative prolongators, the level
//! count and the coarse sizes) and runs steps 3 to 5 and the coarsest inverse again on the new
//! values; from its second refresh on, a level's Galerkin products run their numeric phase
//! alone on the patterns the first one kept, and R's values are gathered from P's.

mod aggregate;
mod coarse;
mod device;
mod device_refresh;
mod device_setup;
#[cfg(feature = "mpi")]
mod distributed;
mod from_device;
mod galerkin;
mod gauss_jordan;
mod hierarchy;
mod level;
mod numeric;
mod options;
mod prolongation;
mod refresh;
mod restriction;
mod smoother;
mod strength;

pub use aggregate::{aggregate, Aggregates, UNAGGREGATED};
pub use coarse::{dense_inverse, singular_pivot_tolerance};
pub use device::Amg;
pub use hierarchy::{
    dense_coarse_limit, CoarseLevel, Hierarchy, Level, LevelStats, STALL_DENOMINATOR,
    STALL_NUMERATOR,
};
pub use options::{
    AmgOptions, AmgPrecision, AmgSetup, Coarsening, Smoother, MAX_BLOCK_SIZE, MAX_COARSE_SIZE,
    MAX_SWEEPS,
};
pub use prolongation::{
    filtered_matrix, positive_diagonal, smoothed_prolongator, spectral_radius,
    tentative_prolongator, POWER_ITERATIONS,
};
pub use smoother::{jacobi_scaling, LevelSmoother, CHEBYSHEV_LOWER_RATIO, CHEBYSHEV_UPPER_FACTOR};
pub use strength::{strength_graph, StrengthGraph};
