//! Algebraic multigrid across the ranks of a [`DistBackend`] (feature `mpi`): one hierarchy
//! whose levels are distributed like the matrix, instead of one hierarchy per rank.
//!
//! The setup runs on the host of every rank, level by level, with the one-process routines
//! on the rank's rows ([`rank_rows::RankRows`]: its owned columns first, its ghost columns
//! after):
//!
//! 1. the diagonal, and its ghost entries from their owners (one halo exchange);
//! 2. strong couplings and aggregates within the rank's diagonal block, so **aggregates do
//!    not cross ranks** (a rank's aggregates are numbered after those of the ranks before
//!    it; the coarse level's rows are distributed by that numbering);
//! 3. the ghost nodes' aggregates (one exchange), the filtered matrix (a coupling to a ghost
//!    column is strong by the one-process measure, read in the row's direction), the
//!    prolongator's weight from power iterations over all ranks' rows (an exchange and a sum
//!    over the ranks per iteration), the smoothed prolongator's rows;
//! 4. the rows of P that the ghost columns name, fetched from their owners once (one
//!    all-to-all), then A P and the rank's share of P^T (A P) and of R = P^T by the host
//!    SpGEMM, each coarse row summed on its owner in rank order (one all-to-all each);
//! 5. the smoother's data (its spectral estimate over all ranks, as in 3).
//!
//! Coarsening stops on the global counts, so every rank stops at the same level. The coarsest
//! level is gathered on every rank and inverted there (redundantly, the same bits), and each
//! rank keeps its rows of the inverse. Every level's operator, P and R and the coarsest
//! inverse are then distributed device matrices ([`RankMatrix`], rectangular for P and R):
//! the cycle of the one-process preconditioner runs on them unchanged, each product
//! exchanging its halo behind the local product as the solver's do.
//!
//! On one rank the hierarchy is the one-process host setup's, bit for bit.
//!
//! Not (yet) done: the setup on the device; the coarse levels gathered onto fewer ranks when
//! they get small (every level keeps every rank, so the coarse levels' products are
//! latency-bound at many ranks); a values-only refresh; block systems (block size 1 only).

mod level;
mod rank_rows;

use super::device::{smoother_scalings, Amg, DeviceLevel};
use super::hierarchy::dense_coarse_limit;
use super::options::{AmgOptions, AmgPrecision, AmgSetup};
use crate::backend::{Backend, MatrixFormat, VectorOps};
use crate::dist::{row_block, DistBackend, LocalSplit, RankMatrix, RowPartition};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::amg::coarse::dense_inverse;
use crate::precond::SetupTimes;
use crate::scalar::{Precision, Scalar};
use rank_rows::{gather_everywhere, RankRows};
use std::time::Instant;

impl<T: Scalar> Amg<T> {
    /// One AMG hierarchy across the ranks of `backend` (see the module doc of
    /// `precond::amg::distributed`): `rows` are this rank's rows of the matrix with global
    /// column numbers and `partition` the row partition (the same on every rank), as
    /// [`RankMatrix::from_rows`] takes them (`RankMatrix::rows_of_stencil`,
    /// [`crate::dist::scatter_rows`] or [`row_block`] give them). The preconditioner fits the
    /// [`RankMatrix`] built from the same rows and partition. Collective; an error on one rank
    /// is an error on every rank.
    ///
    /// Options as for [`Amg::new`], with block size 1 and the setup on the host
    /// ([`AmgSetup::Auto`] or [`AmgSetup::Host`]); [`AmgPrecision::F32`] gives the f32
    /// hierarchy. Iterations stay close to one process's: CG on 3D Poisson 40^3 takes the
    /// same count on 1 to 4 ranks (`tests/mpi/amg.rs`).
    ///
    /// Errors: [`Error::Unsupported`] for a block size above 1 or the setup on the device;
    /// those of [`Amg::new`] (non-finite entries, a zero or negative diagonal entry, a matrix
    /// that does not coarsen, a singular coarsest level, options out of range);
    /// [`Error::Distributed`] when the rows do not fit the partition or the ranks disagree.
    /// [`crate::precond::Preconditioner::update_values`] is [`Error::Unsupported`].
    pub fn new_distributed<B: Backend>(
        backend: &DistBackend<B>,
        rows: &CsrMatrix<T>,
        partition: &RowPartition,
        options: AmgOptions,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let comm = backend.comm();
        comm.check_same(
            "the AMG options",
            crate::matrix::csr::fnv1a(format!("{options:?}").bytes().map(u64::from)),
        )?;
        let checked = check(rows, &options);
        comm.agree("checking the AMG input", checked)?;
        // The contrast of the whole matrix, so that every rank takes the same options.
        let (lo, hi) = super::options::diagonal_extremes(rows, partition.rows(comm.rank()).start)
            .unwrap_or((f64::INFINITY, 0.0));
        let extremes = comm.all_gather_f64(&[lo, hi]);
        let lo = extremes
            .chunks(2)
            .map(|e| e[0])
            .fold(f64::INFINITY, f64::min);
        let hi = extremes.chunks(2).map(|e| e[1]).fold(0.0, f64::max);
        let options = options.for_contrast(if hi > 0.0 { hi / lo } else { 1.0 });
        if options.precision == AmgPrecision::F32 && T::PRECISION == Precision::F64 {
            let inner_options = AmgOptions {
                precision: AmgPrecision::Solve,
                ..options
            };
            // The rank's diagonal block, as the f64 setup below fingerprints it.
            let fingerprint = comm
                .agree(
                    "splitting the AMG rows",
                    LocalSplit::new(rows, partition, comm.rank()),
                )?
                .local
                .fingerprint();
            let amg = Amg::<f32>::new_distributed(
                backend,
                &rows.cast::<f32>(),
                partition,
                inner_options,
            )?;
            let mut outer =
                Self::wrap_narrow(backend, amg, rows.n_rows(), fingerprint, options, t0)?;
            outer.distributed = true;
            return Ok(outer);
        }
        let mut current = RankRows::new(comm, rows, partition.clone())?;
        let fingerprint = current.local().fingerprint();
        let mut levels = Vec::new();
        let mut eps = options.strength;
        loop {
            let l = levels.len();
            if current.partition.n() <= options.coarse_size || l + 1 >= options.max_levels {
                break;
            }
            match level::coarsen(comm, &current, eps, l, &options)? {
                Some((transfer, next)) => {
                    let done = std::mem::replace(&mut current, next).shed_extended();
                    levels.push((done, transfer));
                }
                None => break,
            }
            eps *= options.strength_decay;
        }
        let coarse_n = current.partition.n();
        let limit = dense_coarse_limit(options.coarse_size);
        if coarse_n > limit {
            return Err(Error::NotApplicable {
                preconditioner: "amg".into(),
                reason: format!(
                    "the matrix does not coarsen: level {} has {coarse_n} rows, more than the \
                     {limit} a dense coarse solve takes (coarse_size {}, max_levels {})",
                    levels.len(),
                    options.coarse_size,
                    options.max_levels
                ),
            });
        }
        let coarse_rows = comm.agree("the AMG coarsest rows", current.global_rows(comm))?;
        let whole = gather_everywhere(comm, &coarse_rows, &current.partition)?;
        let inverse = (|| {
            if let Some(index) = whole.first_non_finite() {
                return Err(Error::NonFinite {
                    what: format!("AMG coarse matrix (level {})", levels.len()),
                    index,
                });
            }
            let inverse = dense_inverse(&whole, levels.len())?;
            row_block(&inverse, current.partition.rows(comm.rank()))
        })();
        let inverse = comm.agree("inverting the AMG coarsest level", inverse)?;
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let csr = MatrixFormat::Csr;
        let mut stats = Vec::with_capacity(levels.len() + 1);
        let mut device_levels = Vec::with_capacity(levels.len());
        for (rows, level) in levels {
            let fine = rows.partition.clone();
            stats.push((fine.n(), global_nnz(backend, &rows.split)));
            let a = rows.upload(comm, backend, csr)?;
            let p = RankMatrix::from_rows_with_columns(
                comm,
                backend,
                &level.p,
                fine.clone(),
                &level.coarse_partition,
                csr,
            )?;
            let r = RankMatrix::from_rows_with_columns(
                comm,
                backend,
                &level.r,
                level.coarse_partition.clone(),
                &fine,
                csr,
            )?;
            let (chebyshev, s_first) = smoother_scalings(&level.smoother);
            let uploaded = (|| {
                Ok::<_, Error>((
                    backend.upload(level.smoother.scaled_inv_diag())?,
                    backend.upload(&s_first)?,
                ))
            })();
            let (s, s_first) = comm.agree("uploading an AMG level's smoother", uploaded)?;
            device_levels.push(DeviceLevel {
                a: a.device,
                p: p.device,
                r: r.device,
                s,
                s_first,
                chebyshev,
                patterns: [0; 3],
            });
        }
        stats.push((coarse_n, global_nnz(backend, &current.split)));
        let coarse_inverse =
            RankMatrix::from_rows(comm, backend, &inverse, current.partition.clone(), csr)?;
        let assembled = Self::assemble(
            backend,
            rows.n_rows(),
            fingerprint,
            options,
            device_levels,
            coarse_inverse.device,
            stats,
        );
        let mut amg = comm.agree("assembling the AMG preconditioner", assembled)?;
        amg.times = SetupTimes {
            host_seconds,
            device_seconds: t1.elapsed().as_secs_f64(),
        };
        amg.distributed = true;
        Ok(amg)
    }
}

/// The checks every rank makes on its own input before the collective setup.
fn check<T: Scalar>(rows: &CsrMatrix<T>, options: &AmgOptions) -> Result<()> {
    options.validate()?;
    if options.block_size != 1 {
        return Err(Error::Unsupported(format!(
            "the distributed AMG takes block size 1 (got {}); use Amg::new on the rank's \
             block (block-Jacobi) for block systems",
            options.block_size
        )));
    }
    if options.setup == AmgSetup::Device {
        return Err(Error::Unsupported(
            "the distributed AMG is set up on the host (AmgSetup::Auto or Host)".into(),
        ));
    }
    if let Some(index) = rows.first_non_finite() {
        return Err(Error::NonFinite {
            what: "matrix".into(),
            index,
        });
    }
    Ok(())
}

/// Nonzeros of a distributed matrix: the sum of every rank's (collective).
fn global_nnz<B: Backend, T: Scalar>(backend: &DistBackend<B>, rows: &LocalSplit<T>) -> usize {
    let local = rows.local.nnz() + rows.ghost_values.len();
    backend.comm().sum_slots(&[local as f64])[0] as usize
}
