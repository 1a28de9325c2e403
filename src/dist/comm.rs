//! The MPI layer: initialization, the one reduction of an iteration, collective agreement on
//! errors and parameters, and the halo's point-to-point exchange.
//!
//! Everything here is collective over the communicator unless said otherwise; the library
//! never returns from a collective step on one rank with an error that the other ranks do not
//! also get (RELIABILITY.md row 25). MPI's own failures use MPI's default handler,
//! `MPI_ERRORS_ARE_FATAL`: the job is aborted with MPI's message (row 27).

use super::halo::HaloPlan;
use crate::error::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The MPI environment: initialized by [`Mpi::init`], finalized when dropped. Keep it alive for
/// as long as any [`Comm`] is used.
pub struct Mpi {
    universe: mpi::environment::Universe,
}

impl Mpi {
    /// Initialize MPI (once per process). Without `mpirun` this is a one-rank world.
    pub fn init() -> Result<Self> {
        mpi::initialize()
            .map(|universe| Self { universe })
            .ok_or_else(|| Error::Distributed("MPI is already initialized in this process".into()))
    }

    /// The world communicator.
    pub fn world(&self) -> Comm {
        Comm {
            comm: self.universe.world(),
        }
    }
}

/// A communicator: every rank of a distributed solve holds one.
pub struct Comm {
    comm: SimpleCommunicator,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Comm(rank {} of {})", self.rank(), self.size())
    }
}

impl Comm {
    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.comm.size() as usize
    }

    /// Wait for every rank.
    pub fn barrier(&self) {
        self.comm.barrier();
    }

    /// Abort the whole job with `message` on standard error (for a rank-local failure the
    /// other ranks cannot learn about, e.g. a device fault in the middle of a solve).
    pub fn abort(&self, message: &str) -> ! {
        eprintln!("pipekrylov: rank {} aborts the job: {message}", self.rank());
        self.comm.abort(1)
    }

    /// The global sums of per-rank values, slot by slot: one collective (an all-gather of every
    /// rank's slots), then each slot summed in rank order on every rank. Unlike a floating-point
    /// `MPI_Allreduce`, whose association order is the library's choice and need not be the same
    /// on every rank, this gives bitwise-identical sums on every rank and in every run, so all
    /// ranks take the same branch in the same iteration.
    pub fn sum_slots(&self, local: &[f64]) -> Vec<f64> {
        let size = self.size();
        if size == 1 {
            return local.to_vec();
        }
        let mut all = vec![0.0f64; local.len() * size];
        self.comm.all_gather_into(local, &mut all[..]);
        (0..local.len())
            .map(|s| (0..size).fold(0.0, |acc, r| acc + all[r * local.len() + s]))
            .collect()
    }

    /// Collective agreement on a rank-local result: every rank gets `Ok` only if every rank
    /// had `Ok`; otherwise the ranks that failed keep their own error and the others get
    /// [`Error::Distributed`] naming the failed ranks and `what`.
    pub fn agree<R>(&self, what: &str, local: Result<R>) -> Result<R> {
        let flag = [u8::from(local.is_err())];
        let mut flags = vec![0u8; self.size()];
        self.comm.all_gather_into(&flag[..], &mut flags[..]);
        let failed: Vec<usize> = (0..flags.len()).filter(|&r| flags[r] != 0).collect();
        match local {
            Err(e) => Err(e),
            Ok(_) if !failed.is_empty() => Err(Error::Distributed(format!(
                "{what} failed on rank(s) {failed:?}"
            ))),
            ok => ok,
        }
    }

    /// Check that every rank passes the same `value` for `what` (a size, a parameter, a hash of
    /// the options): an error on every rank otherwise.
    pub fn check_same(&self, what: &str, value: u64) -> Result<()> {
        let mut all = vec![0u64; self.size()];
        self.comm.all_gather_into(&value, &mut all[..]);
        if all.iter().any(|&v| v != all[0]) {
            return Err(Error::Distributed(format!(
                "ranks disagree on {what}: {all:?}"
            )));
        }
        Ok(())
    }

    /// Every rank's `values`, concatenated in rank order, on every rank.
    pub fn all_gather_f64(&self, values: &[f64]) -> Vec<f64> {
        let mut all = vec![0.0f64; values.len() * self.size()];
        self.comm.all_gather_into(values, &mut all[..]);
        all
    }

    /// Every rank's `value`, in rank order, on every rank.
    pub(crate) fn all_gather_u64(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.size()];
        self.comm.all_gather_into(&value, &mut all[..]);
        all
    }

    /// A hash of this process's node name (MPI's processor name).
    pub(crate) fn node_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let name = mpi::environment::processor_name().unwrap_or_default();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        name.hash(&mut h);
        h.finish()
    }

    /// Rank `root`'s vector on every rank (`data` is ignored elsewhere).
    pub(crate) fn broadcast_u64(&self, root: usize, data: &[u64]) -> Vec<u64> {
        let root_proc = self.comm.process_at_rank(root as i32);
        let mut len = [data.len() as u64];
        root_proc.broadcast_into(&mut len[..]);
        let mut out = if self.rank() == root {
            data.to_vec()
        } else {
            vec![0u64; len[0] as usize]
        };
        root_proc.broadcast_into(&mut out[..]);
        out
    }

    /// Personalized all-to-all of u64 lists: `send[p]` goes to rank p; returns what each rank
    /// sent to this one, by source rank.
    pub(crate) fn all_to_all_lists(&self, send: &[Vec<u64>]) -> Vec<Vec<u64>> {
        let size = self.size();
        let counts: Vec<i32> = send.iter().map(|v| v.len() as i32).collect();
        let mut recv_counts = vec![0i32; size];
        self.comm.all_to_all_into(&counts[..], &mut recv_counts[..]);
        let displs = |c: &[i32]| -> Vec<i32> {
            c.iter()
                .scan(0, |acc, &x| {
                    let d = *acc;
                    *acc += x;
                    Some(d)
                })
                .collect()
        };
        let flat: Vec<u64> = send.iter().flatten().copied().collect();
        let total: i32 = recv_counts.iter().sum();
        let mut recv = vec![0u64; total as usize];
        {
            let sd = displs(&counts);
            let rd = displs(&recv_counts);
            let sp = mpi::datatype::Partition::new(&flat[..], &counts[..], &sd[..]);
            let mut rp = mpi::datatype::PartitionMut::new(&mut recv[..], &recv_counts[..], &rd[..]);
            self.comm.all_to_all_varcount_into(&sp, &mut rp);
        }
        let mut out = Vec::with_capacity(size);
        let mut at = 0;
        for &c in &recv_counts {
            out.push(recv[at..at + c as usize].to_vec());
            at += c as usize;
        }
        out
    }

    /// Blocking point-to-point send of bytes to `dest` (setup only: scattering rows).
    pub(crate) fn send_bytes(&self, dest: usize, data: &[u8]) {
        self.comm.process_at_rank(dest as i32).send(data);
    }

    /// Blocking receive of a byte message of any length from `source`.
    pub(crate) fn receive_bytes(&self, source: usize) -> Vec<u8> {
        self.comm
            .process_at_rank(source as i32)
            .receive_vec::<u8>()
            .0
    }

    /// The halo exchange: post the receives and sends of `plan` (non-blocking), run `during`
    /// (the local product) while the messages travel, then wait for all of them. `send` holds
    /// the packed entries in the plan's send order, `recv` gets the ghost entries.
    pub(crate) fn exchange(
        &self,
        plan: &HaloPlan,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        during: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let mut result = Ok(());
        mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(2 * plan.neighbors.len());
            let mut rest = recv;
            let mut at = 0;
            for nb in &plan.neighbors {
                let (head, tail) = rest.split_at_mut((nb.recv.end - at) * elem);
                let part = &mut head[(nb.recv.start - at) * elem..];
                at = nb.recv.end;
                rest = tail;
                if !part.is_empty() {
                    requests.push(
                        self.comm
                            .process_at_rank(nb.rank as i32)
                            .immediate_receive_into(scope, part),
                    );
                }
            }
            for nb in &plan.neighbors {
                let part = &send[nb.send.start * elem..nb.send.end * elem];
                if !part.is_empty() {
                    requests.push(
                        self.comm
                            .process_at_rank(nb.rank as i32)
                            .immediate_send(scope, part),
                    );
                }
            }
            result = during();
            for r in requests {
                r.wait();
            }
        });
        result
    }
}
