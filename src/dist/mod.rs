//! Multi-GPU (and multi-process) solves over MPI (feature `mpi`).
//!
//! One MPI rank per device. The rows of the matrix are split into contiguous blocks balanced
//! by nonzeros ([`RowPartition`]); each rank keeps its rows as a local (diagonal) block and a
//! ghost block whose columns other ranks own, renumbered, plus a [`HaloPlan`] saying which of
//! its entries go to whom ([`RankMatrix`]). [`DistBackend`] wraps any backend so that every
//! solver of the crate runs unchanged on the rank's rows; see its module doc for why a wrapper
//! backend and what it changes.
//!
//! ```no_run
//! # #[cfg(feature = "mpi")] {
//! use pipekrylov::backend::{host::HostBackend, MatrixFormat, VectorOps};
//! use pipekrylov::dist::{DistBackend, Mpi, RankMatrix};
//! use pipekrylov::matrix::generate::Generator;
//! use pipekrylov::precond::Jacobi;
//! use pipekrylov::solver::{Cg, Params};
//! let mpi = Mpi::init().unwrap();
//! let be = DistBackend::new(HostBackend::new(), mpi.world());
//! // The root builds (or reads) the matrix and scatters the rows.
//! let global = (be.comm().rank() == 0)
//!     .then(|| Generator::Poisson3d.generate::<f64>(64_000).unwrap().matrix);
//! let a = RankMatrix::scatter(be.comm(), &be, 0, global.as_ref(), MatrixFormat::Csr).unwrap();
//! let m = Jacobi::new(&be, &a.local).unwrap(); // block-Jacobi: one block per rank
//! let mut cg = Cg::new(&be, &a.device, Some(&m), Params::default()).unwrap();
//! let b = be.upload(&vec![1.0; a.device.n_rows()]).unwrap();
//! let mut x = be.alloc(a.device.n_rows()).unwrap();
//! let report = cg.solve(&b, &mut x).unwrap();
//! if be.comm().rank() == 0 {
//!     println!("{} iterations", report.iterations);
//! }
//! # }
//! ```
//!
//! Halo path: at a matrix's first exchange the ranks agree (one collective step) on a
//! device-to-device link ([`crate::backend::PeerLink`]) when there are three ranks or more
//! (the tuning's [`halo_peer`](crate::backend::tuning::Tuning::halo_peer) `Some(true)`,
//! `PIPEKRYLOV_HALO_PEER=1` on the command line: two as well; at two the host-staged exchange
//! hides behind the
//! local product and measured faster), every rank's backend makes one (CUDA), all ranks run on
//! one node, their devices have peer access and a probe passes; each
//! rank then copies its send entries straight into its neighbours' device memory, and flags
//! that the devices wait for order the exchanges, with no host involvement per exchange.
//! Otherwise (other backends, several nodes, `halo_peer` `Some(false)`) the entries go through
//! page-locked host memory and non-blocking MPI messages. [`CommStats::peer_exchanges`] counts
//! the device-to-device exchanges.
//!
//! Matrix input: the root reads (or generates) the whole matrix and scatters the rows
//! ([`RankMatrix::scatter`]), or every rank holds the same matrix and keeps its rows
//! ([`RankMatrix::from_replicated`]), or every rank brings its own rows
//! ([`RankMatrix::from_rows`]).
//!
//! Failure contract (RELIABILITY.md rows 25-27): construction steps are collective and an
//! error on one rank (bad rows, ranks that disagree on sizes or the partition, allocation
//! failure) is returned on every rank ([`Comm::agree`], [`Comm::check_same`]). The same holds
//! for the solvers' construction (parameters, operator, workspace) and the start of every
//! solve (the lengths of b and x0, and the parameters, which must be the same on every rank),
//! and for the setup of every preconditioner built with the distributed backend on the rank's
//! block (Jacobi, point-block Jacobi, BILU(0), block-ISAI, incomplete Poisson, static and
//! adaptive FSAI; [`crate::backend::collective_result`]): those setups contain no other
//! collective (their non-finite checks use [`crate::backend::VectorOps::finish_local`]), so a
//! failure on one rank is an error on every rank. A rank with zero rows works; MPI errors abort the job
//! with MPI's message, and a rank-local failure in the middle of a solve, which the other ranks
//! cannot learn about without a hang, should be answered with [`Comm::abort`] (the CLI does).
//! Until the abort arrives, the other ranks may wait, or, where their sums travel device to
//! device, compute on the failed rank's last sums: their results are not to be used.

mod backend;
mod comm;
mod halo;
mod matrix;
mod partition;
mod split;

pub use backend::{CommStats, DistBackend};
pub use comm::{Comm, Mpi};
pub use halo::{HaloPlan, Neighbor};
pub use matrix::{scatter_rows, scatter_vector, RankMatrix};
pub use partition::RowPartition;
pub use split::{row_block, LocalSplit};
