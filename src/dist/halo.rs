//! The halo plan: which entries of its vector a rank sends to whom, and where the entries it
//! receives land in its ghost vector.

use super::comm::Comm;
use super::partition::RowPartition;
use super::split::LocalSplit;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// One neighbour of the halo exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbor {
    /// Its rank.
    pub rank: usize,
    /// Positions in the packed send buffer that go to it.
    pub send: Range<usize>,
    /// Positions in the ghost vector that come from it.
    pub recv: Range<usize>,
}

/// Who sends which entries to whom (built once per matrix, collectively).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaloPlan {
    /// Neighbours in increasing rank order (their `recv` ranges are increasing too, because
    /// ghost entries are numbered in increasing global order and ranks own increasing rows).
    pub neighbors: Vec<Neighbor>,
    /// Local indices of the entries to pack, in send order.
    pub send_indices: Vec<u32>,
    /// Length of the ghost vector.
    pub n_ghost: usize,
}

impl HaloPlan {
    /// Build the plan collectively from this rank's split: every rank tells each owner the
    /// global indices it needs (one all-to-all), the owners check them and answer with the
    /// send lists. An index that is not the owner's is an error on every rank.
    pub fn build<T: Scalar>(
        comm: &Comm,
        partition: &RowPartition,
        split: &LocalSplit<T>,
    ) -> Result<Self> {
        let size = comm.size();
        let me = comm.rank();
        let mut requests: Vec<Vec<u64>> = vec![Vec::new(); size];
        for &c in &split.ghost_columns {
            requests[partition.owner(c)].push(c as u64);
        }
        let needed_by: Vec<Vec<u64>> = comm.all_to_all_lists(&requests);
        let owned = partition.rows(me);
        let mut send_indices = Vec::new();
        let mut neighbors = Vec::new();
        let mut local_error = None;
        let mut recv_at = 0;
        for p in 0..size {
            let send_start = send_indices.len();
            for &g in &needed_by[p] {
                let g = g as usize;
                if p == me || !owned.contains(&g) {
                    local_error.get_or_insert_with(|| {
                        Error::Distributed(format!(
                            "rank {p} asked rank {me} for entry {g}, which it does not own"
                        ))
                    });
                    continue;
                }
                send_indices.push((g - owned.start) as u32);
            }
            let recv = recv_at..recv_at + requests[p].len();
            recv_at = recv.end;
            if send_indices.len() > send_start || !recv.is_empty() {
                neighbors.push(Neighbor {
                    rank: p,
                    send: send_start..send_indices.len(),
                    recv,
                });
            }
        }
        let plan = Self {
            neighbors,
            send_indices,
            n_ghost: split.ghost_columns.len(),
        };
        comm.agree(
            "halo plan",
            match local_error {
                Some(e) => Err(e),
                None => Ok(plan),
            },
        )
    }

    /// Entries sent per exchange.
    pub fn send_len(&self) -> usize {
        self.send_indices.len()
    }
}
