//! One rank's part of a distributed matrix: its rows scattered from a root (or built in
//! place), split into local and ghost blocks, uploaded with the halo plan.

use super::comm::Comm;
use super::halo::HaloPlan;
use super::partition::RowPartition;
use super::split::{row_block, LocalSplit};
use crate::backend::matrix::HaloSlot;
use crate::backend::{
    Buffer, DeviceMatrix, GatherList, GhostBlock, MatrixFormat, PeerLink, SpmvOps,
};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use std::sync::Mutex;

/// The device side of a rank's ghost block, stored (type-erased) in its [`DeviceMatrix`].
pub(crate) struct DeviceHalo<T> {
    /// Rank and communicator size it was built for.
    pub rank: usize,
    pub size: usize,
    pub plan: HaloPlan,
    pub gather: GatherList,
    pub ghost: GhostBlock<T>,
    /// Work buffers of the exchange (a matrix is used by one solve at a time; the lock only
    /// makes the shared reference sound).
    pub work: Mutex<HaloWork<T>>,
}

/// Work buffers of a distributed product.
pub(crate) struct HaloWork<T> {
    pub exchange: ExchangeBuffers<T>,
}

/// Buffers of one halo exchange.
pub(crate) struct ExchangeBuffers<T> {
    /// How the exchanges travel (decided collectively at the first one). First, so that it is
    /// dropped first: a link's drop waits for its copies, which read `send` and write `ghost_x`.
    pub peer: PeerMode,
    pub send: Buffer<T>,
    pub ghost_x: Buffer<T>,
    pub host_send: Vec<T>,
    pub host_recv: Vec<T>,
}

/// How a matrix's halo exchanges travel.
pub(crate) enum PeerMode {
    /// Not decided yet (before the first exchange).
    Undecided,
    /// Device -> page-locked host -> MPI -> device.
    Host,
    /// Device to device between the processes of one node.
    Peer(PeerLink),
}

/// This rank's part of a distributed matrix.
#[derive(Debug)]
pub struct RankMatrix<T> {
    /// The rank's rows on the device: local block in the chosen format, ghost block and halo
    /// plan attached. Its size is the rank's row count; vectors of a distributed solve hold the
    /// rank's rows only.
    pub device: DeviceMatrix<T>,
    /// The local (diagonal) block on the host: build the rank's block-Jacobi preconditioner
    /// from it (any preconditioner of this crate built from it fits `device`).
    pub local: CsrMatrix<T>,
    /// The row partition (the same on every rank).
    pub partition: RowPartition,
    /// Ghost entries this rank receives per exchange.
    pub ghost_len: usize,
    /// Nonzeros of the ghost block.
    pub ghost_nnz: usize,
    /// Entries this rank sends per exchange.
    pub send_len: usize,
    /// Neighbour ranks.
    pub neighbors: usize,
}

impl<T: Scalar> RankMatrix<T> {
    /// Rows of `global` (held on `root` only; `None` elsewhere) scattered by a partition
    /// balanced by nonzeros, then [`RankMatrix::from_rows`]. Errors on the root (no matrix,
    /// not square) reach every rank.
    pub fn scatter<B: SpmvOps>(
        comm: &Comm,
        backend: &B,
        root: usize,
        global: Option<&CsrMatrix<T>>,
        format: MatrixFormat,
    ) -> Result<Self> {
        let (partition, rows) = scatter_rows(comm, root, global)?;
        Self::from_rows(comm, backend, &rows, partition, format)
    }

    /// Every rank holds the same `global` matrix (a generator run on every rank, or a file
    /// every rank read) and keeps its rows.
    pub fn from_replicated<B: SpmvOps>(
        comm: &Comm,
        backend: &B,
        global: &CsrMatrix<T>,
        format: MatrixFormat,
    ) -> Result<Self> {
        comm.check_same("matrix fingerprint", global.fingerprint())?;
        let partition = RowPartition::balanced_by_nnz(global.row_ptr(), comm.size())?;
        let rows = row_block(global, partition.rows(comm.rank()))?;
        Self::from_rows(comm, backend, &rows, partition, format)
    }

    /// This rank's rows of a stencil problem and the partition (balanced by nonzeros, the same
    /// on every rank), built locally: what [`RankMatrix::from_stencil`] distributes.
    pub fn rows_of_stencil(
        comm: &Comm,
        stencil: &crate::matrix::generate::GridStencil,
    ) -> Result<(RowPartition, CsrMatrix<T>)> {
        let partition =
            RowPartition::balanced_by_row_len(stencil.n(), comm.size(), |i| stencil.row_len(i))?;
        let rows = stencil.rows::<T>(partition.rows(comm.rank()))?;
        Ok((partition, rows))
    }

    /// The rows of a generated stencil problem (`Generator::grid_stencil`), built on every rank
    /// for its own rows only: no global matrix anywhere. The partition is balanced by nonzeros,
    /// as [`RankMatrix::scatter`] balances it.
    pub fn from_stencil<B: SpmvOps>(
        comm: &Comm,
        backend: &B,
        stencil: &crate::matrix::generate::GridStencil,
        format: MatrixFormat,
    ) -> Result<Self> {
        let (partition, rows) = comm.agree(
            "building the stencil rows",
            Self::rows_of_stencil(comm, stencil),
        )?;
        Self::from_rows(comm, backend, &rows, partition, format)
    }

    /// Build from this rank's rows (global column numbers) and the partition (collective: the
    /// halo plan is negotiated with the other ranks; a rank whose rows do not fit the
    /// partition fails every rank).
    pub fn from_rows<B: SpmvOps>(
        comm: &Comm,
        backend: &B,
        rows: &CsrMatrix<T>,
        partition: RowPartition,
        format: MatrixFormat,
    ) -> Result<Self> {
        let columns = partition.clone();
        Self::from_rows_with_columns(comm, backend, rows, partition, &columns, format)
    }

    /// [`RankMatrix::from_rows`] for a rectangular matrix whose rows are distributed by
    /// `partition` and whose columns (the entries of the vectors it multiplies) by `columns`:
    /// an AMG level's prolongator (fine rows, coarse columns) or restriction. Its `local` is
    /// the rank's rows x the columns it owns.
    pub fn from_rows_with_columns<B: SpmvOps>(
        comm: &Comm,
        backend: &B,
        rows: &CsrMatrix<T>,
        partition: RowPartition,
        columns: &RowPartition,
        format: MatrixFormat,
    ) -> Result<Self> {
        for (what, p) in [("rows", &partition), ("columns", columns)] {
            comm.check_same(&format!("number of ranks of the {what}"), p.ranks() as u64)?;
            comm.check_same(&format!("global {what}"), p.n() as u64)?;
            let offsets_hash = crate::matrix::csr::fnv1a(p.offsets().iter().map(|&o| o as u64));
            comm.check_same(&format!("partition of the {what}"), offsets_hash)?;
            if p.ranks() != comm.size() {
                return Err(Error::Distributed(format!(
                    "partition of the {what} for {} ranks used on {}",
                    p.ranks(),
                    comm.size()
                )));
            }
        }
        let split = comm.agree(
            "splitting the rows",
            LocalSplit::with_columns(
                rows,
                partition.rows(comm.rank()).len(),
                columns,
                comm.rank(),
            ),
        )?;
        let plan = HaloPlan::build(comm, columns, &split)?;
        Self::from_split(comm, backend, split, plan, partition, format)
    }

    /// Upload a rank's rows already split ([`LocalSplit`]) with their halo plan (built by
    /// [`HaloPlan::build`] for the same split): what [`RankMatrix::from_rows_with_columns`]
    /// does after splitting, for a caller that split the rows itself (the distributed AMG's
    /// levels). Collective: a failure on one rank is an error on every rank.
    pub(crate) fn from_split<B: SpmvOps>(
        comm: &Comm,
        backend: &B,
        split: LocalSplit<T>,
        plan: HaloPlan,
        partition: RowPartition,
        format: MatrixFormat,
    ) -> Result<Self> {
        let built = (|| -> Result<Self> {
            let n_local = split.local.n_rows();
            let mut device = backend.upload_matrix(&split.local, format)?;
            let gather = GatherList::upload(backend, &plan.send_indices, split.local.n_cols())?;
            let ghost = GhostBlock::upload(
                backend,
                &split.ghost_rows,
                &split.ghost_row_ptr,
                &split.ghost_col_idx,
                &split.ghost_values,
                n_local,
                plan.n_ghost,
            )?;
            let work = HaloWork {
                exchange: ExchangeBuffers {
                    peer: PeerMode::Undecided,
                    send: backend.alloc(plan.send_len())?,
                    ghost_x: backend.alloc(plan.n_ghost)?,
                    host_send: vec![T::zero(); plan.send_len()],
                    host_recv: vec![T::zero(); plan.n_ghost],
                },
            };
            let (ghost_len, send_len, neighbors) =
                (plan.n_ghost, plan.send_len(), plan.neighbors.len());
            device.halo = HaloSlot {
                ranks: comm.size(),
                data: Some(Box::new(DeviceHalo {
                    rank: comm.rank(),
                    size: comm.size(),
                    plan,
                    gather,
                    ghost,
                    work: Mutex::new(work),
                })),
            };
            let ghost_nnz = split.ghost_values.len();
            Ok(Self {
                device,
                local: split.local,
                partition,
                ghost_len,
                ghost_nnz,
                send_len,
                neighbors,
            })
        })();
        comm.agree("uploading the distributed matrix", built)
    }

    /// This rank's rows.
    pub fn rows(&self, rank: usize) -> std::ops::Range<usize> {
        self.partition.rows(rank)
    }
}

/// The halo of a device matrix, if it is distributed.
pub(crate) fn device_halo<T: Scalar>(a: &DeviceMatrix<T>) -> Option<&DeviceHalo<T>> {
    a.halo
        .data
        .as_ref()
        .and_then(|h| h.downcast_ref::<DeviceHalo<T>>())
}

/// Scatter the rows of the root's matrix: the root computes the partition (balanced by
/// nonzeros), broadcasts it and sends each rank its rows (row pointers, columns, values).
pub fn scatter_rows<T: Scalar>(
    comm: &Comm,
    root: usize,
    global: Option<&CsrMatrix<T>>,
) -> Result<(RowPartition, CsrMatrix<T>)> {
    let me = comm.rank();
    if root >= comm.size() {
        return Err(Error::param(
            "root",
            format!("rank {root} of {}", comm.size()),
        ));
    }
    let on_root = if me == root {
        match global {
            None => Err(Error::Distributed(
                "the root rank has no matrix to scatter".into(),
            )),
            Some(a) if !a.is_square() => Err(Error::dims(
                "distributed matrix must be square: columns vs rows",
                a.n_rows(),
                a.n_cols(),
            )),
            Some(a) => RowPartition::balanced_by_nnz(a.row_ptr(), comm.size()),
        }
    } else {
        Ok(RowPartition::from_offsets(vec![0, 0])?)
    };
    let root_partition = comm.agree("reading the matrix on the root", on_root)?;
    let offsets = comm.broadcast_u64(
        root,
        &root_partition
            .offsets()
            .iter()
            .map(|&o| o as u64)
            .collect::<Vec<_>>(),
    );
    let partition = RowPartition::from_offsets(offsets.iter().map(|&o| o as usize).collect())?;
    let n = partition.n();
    if me == root {
        let a = global.ok_or_else(|| Error::Distributed("the root rank has no matrix".into()))?;
        for r in (0..comm.size()).filter(|&r| r != root) {
            let block = row_block(a, partition.rows(r))?;
            let rp: Vec<u64> = block.row_ptr().iter().map(|&p| p as u64).collect();
            let ci: Vec<u64> = block.col_idx().iter().map(|&c| c as u64).collect();
            comm.send_bytes(r, bytemuck::cast_slice(&rp));
            comm.send_bytes(r, bytemuck::cast_slice(&ci));
            comm.send_bytes(r, bytemuck::cast_slice(block.values()));
        }
        Ok((partition.clone(), row_block(a, partition.rows(root))?))
    } else {
        let rp: Vec<u64> = from_bytes(&comm.receive_bytes(root))?;
        let ci: Vec<u64> = from_bytes(&comm.receive_bytes(root))?;
        let va: Vec<T> = from_bytes(&comm.receive_bytes(root))?;
        let rows = CsrMatrix::new(
            partition.rows(me).len(),
            n,
            rp.iter().map(|&p| p as usize).collect(),
            ci.iter().map(|&c| c as usize).collect(),
            va,
        );
        Ok((partition, rows?))
    }
}

/// Copy a received byte message into a vector of `T` (the message length must fit).
fn from_bytes<T: bytemuck::Pod>(bytes: &[u8]) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if bytes.len() % size != 0 {
        return Err(Error::Distributed(format!(
            "received {} bytes, not a whole number of {size}-byte values",
            bytes.len()
        )));
    }
    let mut out = vec![T::zeroed(); bytes.len() / size];
    bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(bytes);
    Ok(out)
}

/// Scatter a vector held on `root` (`None` elsewhere) by the partition: each rank gets its
/// rows. A missing or wrongly sized vector on the root is an error on every rank.
pub fn scatter_vector<T: Scalar>(
    comm: &Comm,
    root: usize,
    partition: &RowPartition,
    global: Option<&[T]>,
) -> Result<Vec<T>> {
    let me = comm.rank();
    let check = if me == root {
        match global {
            Some(v) if v.len() == partition.n() => Ok(()),
            Some(v) => Err(Error::dims(
                "vector length vs matrix rows",
                partition.n(),
                v.len(),
            )),
            None => Err(Error::Distributed(
                "the root rank has no vector to scatter".into(),
            )),
        }
    } else {
        Ok(())
    };
    comm.agree("scattering a vector", check)?;
    if me == root {
        let v = global.ok_or_else(|| Error::Distributed("the root rank has no vector".into()))?;
        for r in (0..comm.size()).filter(|&r| r != root) {
            comm.send_bytes(r, bytemuck::cast_slice(&v[partition.rows(r)]));
        }
        Ok(v[partition.rows(root)].to_vec())
    } else {
        let v: Vec<T> = from_bytes(&comm.receive_bytes(root))?;
        if v.len() != partition.rows(me).len() {
            return Err(Error::dims(
                "scattered vector",
                partition.rows(me).len(),
                v.len(),
            ));
        }
        Ok(v)
    }
}
