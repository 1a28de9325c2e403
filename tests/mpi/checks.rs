//! What the MPI test modules share: each rank's list of failures and report lines, and the end
//! of the run, agreed over the ranks.

use pipekrylov::dist::{Comm, Mpi};
use pipekrylov::Error;

/// One rank's failures and the lines rank 0 prints.
pub struct Checker {
    pub rank: usize,
    pub failures: Vec<String>,
    pub lines: Vec<String>,
}

impl Checker {
    /// A checker for `rank`.
    pub fn new(rank: usize) -> Self {
        Self {
            rank,
            failures: Vec::new(),
            lines: Vec::new(),
        }
    }

    /// Record `what` as a failure unless `ok`.
    pub fn check(&mut self, ok: bool, what: String) {
        if !ok {
            self.failures.push(format!("rank {}: {what}", self.rank));
        }
    }

    /// The end of the run: the ranks agree on whether any failed; rank 0 prints the lines and
    /// `summary(lines)`, a failed run exits with status 1 on every rank.
    pub fn finish(self, mpi: Mpi, comm: &Comm, what: &str, summary: impl Fn(usize) -> String) {
        let (rank, size) = (comm.rank(), comm.size());
        let failed = comm.agree(
            what,
            if self.failures.is_empty() {
                Ok(())
            } else {
                Err(Error::Distributed(self.failures.join("\n")))
            },
        );
        if rank == 0 {
            for l in &self.lines {
                println!("{l}");
            }
        }
        if let Err(e) = failed {
            eprintln!("rank {rank} of {size}: FAILED\n{e}");
            drop(mpi);
            std::process::exit(1);
        }
        if rank == 0 {
            println!("{}", summary(self.lines.len()));
        }
    }
}
