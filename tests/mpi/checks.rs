//! What the MPI test modules share: each rank's list of failures and report lines, the end of
//! the run agreed over the ranks, and the loop over the backends a suite runs on.

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::Backend;
use pipekrylov::dist::{Comm, Mpi};
use pipekrylov::{Error, Result};

/// A module's checks on one backend (`make` opens it on this rank), into `c`.
pub trait Suite {
    fn run<B: Backend>(
        &self,
        c: &mut Checker,
        label: &str,
        comm: Comm,
        make: impl Fn() -> Result<B>,
    ) -> Result<()>;
}

/// `suite` on every backend there is: the host; OpenCL (unless `PK_MPI_TEST_OPENCL=0`); CUDA
/// (unless `PK_MPI_TEST_CUDA=0`) on the device [`cuda_device_for_rank`] names. A backend that
/// does not open is skipped with a line from rank 0.
pub fn on_every_backend(c: &mut Checker, mpi: &Mpi, suite: &impl Suite) {
    let comm = mpi.world();
    let rank = comm.rank();
    let r = suite.run(c, "host", mpi.world(), || Ok(HostBackend::new()));
    c.check(r.is_ok(), format!("host suite error: {r:?}"));
    #[cfg(feature = "opencl")]
    if std::env::var("PK_MPI_TEST_OPENCL").map_or(true, |v| v != "0") {
        use pipekrylov::backend::opencl::OpenClBackend;
        match OpenClBackend::from_env() {
            Ok(_) => {
                let r = suite.run(c, "opencl", mpi.world(), OpenClBackend::from_env);
                c.check(r.is_ok(), format!("opencl suite error: {r:?}"));
            }
            Err(e) => {
                if rank == 0 {
                    println!("opencl: not available ({e}), skipped");
                }
            }
        }
    }
    #[cfg(feature = "cuda")]
    if std::env::var("PK_MPI_TEST_CUDA").map_or(true, |v| v != "0") {
        use pipekrylov::backend::cuda::CudaBackend;
        match cuda_device_for_rank().and_then(|d| CudaBackend::new(d).map(|be| (d, be))) {
            Ok((device, be)) => {
                // Every rank says which GPU it runs on (the device machine's log shows whether
                // the ranks spread over the GPUs).
                let size = comm.size();
                println!(
                    "rank {rank} of {size}: cuda device {device} ({})",
                    pipekrylov::backend::BackendInfo::device_name(&be)
                );
                drop(be);
                let r = suite.run(c, "cuda", mpi.world(), move || CudaBackend::new(device));
                c.check(r.is_ok(), format!("cuda suite error: {r:?}"));
            }
            Err(e) => {
                if rank == 0 {
                    println!("cuda: not available ({e}), skipped (runs on the GPU machine)");
                }
            }
        }
    }
}

/// This rank's CUDA device: one device per rank, as `mpirun pipekrylov` chooses (the node-local
/// rank modulo the devices), unless `PIPEKRYLOV_CUDA_DEVICE` names one: with every rank on
/// device 0 the device-to-device links ran between processes sharing one GPU. The ordinal is
/// passed to the backend in-process.
#[cfg(feature = "cuda")]
pub fn cuda_device_for_rank() -> Result<usize> {
    if let Some(d) = pipekrylov::backend::tuning::cuda_device_from_env()? {
        return Ok(d);
    }
    let local: usize = [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
    .unwrap_or(0);
    let count = pipekrylov::backend::cuda::device_count().unwrap_or(0);
    Ok(if count > 0 { local % count } else { 0 })
}

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
