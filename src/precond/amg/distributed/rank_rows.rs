//! One level's rows on one rank, as the distributed setup reads them, and the host
//! communication of the setup: ghost values and ghost rows over the level's halo plan, and
//! rows sent to the ranks that own them.

use crate::backend::{MatrixFormat, SpmvOps};
use crate::dist::{row_block, Comm, HaloPlan, LocalSplit, RankMatrix, RowPartition};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// This rank's rows of a level's operator.
///
/// `ext` holds them with the columns the rank owns first, in local numbering `0..n_local`, and
/// the ghost columns after them (`n_local + g` for ghost entry g of the halo plan): the
/// one-process routines of the setup (diagonal, filtered matrix, smoothed prolongator, host
/// SpGEMM, smoother data) run on it unchanged, row i's diagonal being column i. On one rank it
/// is the level's matrix itself.
#[derive(Debug)]
pub(super) struct RankRows<T> {
    /// The rows split into the rank's diagonal block and its ghost block (what is uploaded).
    pub(super) split: LocalSplit<T>,
    /// The rows in the extended numbering (see the type's doc); empty once the level is set
    /// up ([`RankRows::shed_extended`]).
    pub(super) ext: CsrMatrix<T>,
    /// The partition of the level's rows (and columns).
    pub(super) partition: RowPartition,
    /// The halo exchange of the ghost entries.
    pub(super) plan: HaloPlan,
}

impl<T: Scalar> RankRows<T> {
    /// Split `rows` (this rank's rows of the level, global columns) by `partition` and build
    /// the halo plan (collective; an error on one rank is an error on every rank).
    pub(super) fn new(comm: &Comm, rows: &CsrMatrix<T>, partition: RowPartition) -> Result<Self> {
        let split = comm.agree(
            "splitting an AMG level's rows",
            LocalSplit::new(rows, &partition, comm.rank()),
        )?;
        let plan = HaloPlan::build(comm, &partition, &split)?;
        let ext = comm.agree("extending an AMG level's rows", extended(&split))?;
        Ok(Self {
            split,
            ext,
            partition,
            plan,
        })
    }

    /// The rank's diagonal block (local numbering).
    pub(super) fn local(&self) -> &CsrMatrix<T> {
        &self.split.local
    }

    /// Drop the extended rows (the setup of the level is done; the split stays for the
    /// upload).
    pub(super) fn shed_extended(mut self) -> Self {
        self.ext = CsrMatrix::identity(0);
        self
    }

    /// The rows with global column numbers, from the extended rows.
    pub(super) fn global_rows(&self, comm: &Comm) -> Result<CsrMatrix<T>> {
        let (n, first) = (self.n_local(), self.first(comm));
        let columns = self.ext.col_idx().iter().map(|&c| {
            if c < n {
                c + first
            } else {
                self.split.ghost_columns[c - n]
            }
        });
        CsrMatrix::from_unsorted(
            n,
            self.partition.n(),
            self.ext.row_ptr().to_vec(),
            columns.collect(),
            self.ext.values().to_vec(),
        )
    }

    /// Upload the rows as a distributed device matrix (collective).
    pub(super) fn upload<B: SpmvOps>(
        self,
        comm: &Comm,
        backend: &B,
        format: MatrixFormat,
    ) -> Result<RankMatrix<T>> {
        RankMatrix::from_split(comm, backend, self.split, self.plan, self.partition, format)
    }

    /// Rows on this rank.
    pub(super) fn n_local(&self) -> usize {
        self.split.local.n_rows()
    }

    /// Global index of this rank's first row.
    pub(super) fn first(&self, comm: &Comm) -> usize {
        self.partition.rows(comm.rank()).start
    }

    /// The ghost entries of a vector whose owned entries on this rank are `owned`
    /// (collective: every rank sends what its neighbours need).
    pub(super) fn ghost_values(&self, comm: &Comm, owned: &[f64]) -> Result<Vec<f64>> {
        if owned.len() != self.n_local() {
            return Err(Error::dims(
                "AMG setup: exchanged vector vs rows",
                self.n_local(),
                owned.len(),
            ));
        }
        let send: Vec<f64> = self
            .plan
            .send_indices
            .iter()
            .map(|&i| owned[i as usize])
            .collect();
        let mut ghost = vec![0.0f64; self.plan.n_ghost];
        comm.exchange(
            &self.plan,
            bytemuck::cast_slice(&send),
            bytemuck::cast_slice_mut(&mut ghost),
            std::mem::size_of::<f64>(),
            || Ok(()),
        )?;
        Ok(ghost)
    }

    /// `owned` followed by its ghost entries: a vector of `ext`'s width (collective).
    pub(super) fn extended_values(&self, comm: &Comm, owned: &[f64]) -> Result<Vec<f64>> {
        let mut all = owned.to_vec();
        all.extend(self.ghost_values(comm, owned)?);
        Ok(all)
    }

    /// The rows of `m` (this rank's rows of a matrix distributed like this level's rows, of any
    /// width) that the ghost entries name, fetched from their owners: `n_ghost x width`, in
    /// ghost order (collective).
    pub(super) fn ghost_rows<U: Scalar>(
        &self,
        comm: &Comm,
        m: &CsrMatrix<U>,
    ) -> Result<CsrMatrix<U>> {
        let mut send: Vec<Vec<u64>> = vec![Vec::new(); comm.size()];
        for nb in &self.plan.neighbors {
            let list = &mut send[nb.rank];
            for &i in &self.plan.send_indices[nb.send.clone()] {
                let (cols, vals) = m.row(i as usize);
                list.push(cols.len() as u64);
                for (&c, &v) in cols.iter().zip(vals) {
                    list.push(c as u64);
                    list.push(v.to_f64().to_bits());
                }
            }
        }
        let received = comm.all_to_all_lists(&send);
        let mut row_ptr = vec![0usize];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for nb in &self.plan.neighbors {
            let mut words = received[nb.rank].iter().copied();
            for _ in nb.recv.clone() {
                let len = words.next().ok_or_else(truncated)? as usize;
                for _ in 0..len {
                    let (c, v) = (words.next(), words.next());
                    let (Some(c), Some(v)) = (c, v) else {
                        return Err(truncated());
                    };
                    cols.push(c as usize);
                    vals.push(U::from_f64(f64::from_bits(v)));
                }
                row_ptr.push(cols.len());
            }
        }
        CsrMatrix::new(self.plan.n_ghost, m.n_cols(), row_ptr, cols, vals)
    }
}

/// The error of a message shorter than its own counts say (not expected between ranks of one
/// job).
fn truncated() -> Error {
    Error::Distributed("AMG setup: a rank sent a truncated list of rows".into())
}

/// The rows of `split` with the owned columns first and the ghost columns after them.
fn extended<T: Scalar>(split: &LocalSplit<T>) -> Result<CsrMatrix<T>> {
    let local = &split.local;
    let n = local.n_rows();
    let width = local.n_cols() + split.ghost_columns.len();
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut cols = Vec::with_capacity(local.nnz() + split.ghost_values.len());
    let mut vals = Vec::with_capacity(cols.capacity());
    row_ptr.push(0);
    let mut g = 0;
    for r in 0..n {
        let (c, v) = local.row(r);
        cols.extend_from_slice(c);
        vals.extend_from_slice(v);
        if split.ghost_rows.get(g) == Some(&(r as u32)) {
            let (a0, a1) = (
                split.ghost_row_ptr[g] as usize,
                split.ghost_row_ptr[g + 1] as usize,
            );
            cols.extend(
                split.ghost_col_idx[a0..a1]
                    .iter()
                    .map(|&c| local.n_cols() + c as usize),
            );
            vals.extend_from_slice(&split.ghost_values[a0..a1]);
            g += 1;
        }
        row_ptr.push(cols.len());
    }
    CsrMatrix::new(n, width, row_ptr, cols, vals)
}

/// The rows of `contributions` (a matrix whose rows are numbered like `owners`' global rows;
/// every rank holds its own share of every row) summed on the ranks that own them: this
/// rank's rows, `owners.rows(rank).len() x width`, each entry its own share plus the other
/// ranks' shares summed in rank order (the same bits on any run; on one rank, `contributions`'
/// own rows). Only the shares of other ranks' rows travel. Collective.
pub(super) fn sum_on_owners<T: Scalar>(
    comm: &Comm,
    contributions: &CsrMatrix<T>,
    owners: &RowPartition,
) -> Result<CsrMatrix<T>> {
    let me = comm.rank();
    let mine = owners.rows(me);
    let mut send: Vec<Vec<u64>> = vec![Vec::new(); comm.size()];
    for r in (0..contributions.n_rows()).filter(|r| !mine.contains(r)) {
        let (cols, vals) = contributions.row(r);
        if cols.is_empty() {
            continue;
        }
        let list = &mut send[owners.owner(r)];
        list.push(r as u64);
        list.push(cols.len() as u64);
        for (&c, &v) in cols.iter().zip(vals) {
            list.push(c as u64);
            list.push(v.to_f64().to_bits());
        }
    }
    let received = comm.all_to_all_lists(&send);
    let mut triplets = Vec::new();
    for list in &received {
        let mut words = list.iter().copied();
        while let Some(r) = words.next() {
            let len = words.next().ok_or_else(truncated)?;
            let r = r as usize;
            if !mine.contains(&r) {
                return Err(Error::Distributed(format!(
                    "AMG setup: rank {me} was sent row {r}, which it does not own"
                )));
            }
            for _ in 0..len {
                let (Some(c), Some(v)) = (words.next(), words.next()) else {
                    return Err(truncated());
                };
                triplets.push((r - mine.start, c as usize, T::from_f64(f64::from_bits(v))));
            }
        }
    }
    let own = row_block(contributions, mine.clone())?;
    if triplets.is_empty() {
        return Ok(own);
    }
    let others = CsrMatrix::from_triplets(mine.len(), contributions.n_cols(), &triplets)?;
    add_rows(&own, &others)
}

/// a + b, row by row (the same shape; a's entry first in every sum).
fn add_rows<T: Scalar>(a: &CsrMatrix<T>, b: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
    let mut row_ptr = Vec::with_capacity(a.n_rows() + 1);
    let mut cols = Vec::with_capacity(a.nnz() + b.nnz());
    let mut vals = Vec::with_capacity(a.nnz() + b.nnz());
    row_ptr.push(0);
    for r in 0..a.n_rows() {
        let ((ca, va), (cb, vb)) = (a.row(r), b.row(r));
        let (mut i, mut j) = (0, 0);
        while i < ca.len() || j < cb.len() {
            if j == cb.len() || (i < ca.len() && ca[i] < cb[j]) {
                cols.push(ca[i]);
                vals.push(va[i]);
                i += 1;
            } else if i == ca.len() || cb[j] < ca[i] {
                cols.push(cb[j]);
                vals.push(vb[j]);
                j += 1;
            } else {
                cols.push(ca[i]);
                vals.push(va[i] + vb[j]);
                i += 1;
                j += 1;
            }
        }
        row_ptr.push(cols.len());
    }
    CsrMatrix::new(a.n_rows(), a.n_cols(), row_ptr, cols, vals)
}

/// Every rank's `rows` (its rows of a matrix distributed by `partition`), stacked in rank order
/// on every rank: the whole matrix (collective; for the coarsest level).
pub(super) fn gather_everywhere<T: Scalar>(
    comm: &Comm,
    rows: &CsrMatrix<T>,
    partition: &RowPartition,
) -> Result<CsrMatrix<T>> {
    let mut list = Vec::with_capacity(2 * rows.nnz() + rows.n_rows());
    for r in 0..rows.n_rows() {
        let (cols, vals) = rows.row(r);
        list.push(cols.len() as u64);
        for (&c, &v) in cols.iter().zip(vals) {
            list.push(c as u64);
            list.push(v.to_f64().to_bits());
        }
    }
    let received = comm.all_to_all_lists(&vec![list; comm.size()]);
    let mut row_ptr = vec![0usize];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for (p, words) in received.iter().enumerate() {
        let mut words = words.iter().copied();
        for _ in partition.rows(p) {
            let len = words.next().ok_or_else(truncated)?;
            for _ in 0..len {
                let (Some(c), Some(v)) = (words.next(), words.next()) else {
                    return Err(truncated());
                };
                cols.push(c as usize);
                vals.push(T::from_f64(f64::from_bits(v)));
            }
            row_ptr.push(cols.len());
        }
    }
    CsrMatrix::new(partition.n(), rows.n_cols(), row_ptr, cols, vals)
}
