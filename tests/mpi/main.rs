//! The tests under MPI (`harness = false`): `mpi solvers` (distributed solves against
//! one-process solves, [`solvers`]), `mpi amg` (the distributed AMG, [`amg`]), or both without
//! an argument (and with `cargo test`'s own arguments).
//!
//! `scripts/test.sh` runs each with `mpirun --oversubscribe -np N` for N = 1, 2, 3, 4 (host and,
//! with the `opencl` feature, OpenCL on PoCL; on the GPU machine also CUDA and NVIDIA OpenCL,
//! several ranks sharing the device); `cargo test --features mpi` alone runs both as a one-rank
//! world. Every rank checks its own part; the exit status is non-zero on every rank when any
//! rank found a failure. `PK_MPI_TEST_ABORT=1` instead makes the last rank abort the job
//! (RELIABILITY.md row 27: the script checks the message and the status).

mod amg;
mod checks;
mod solvers;

use checks::Checker;
use pipekrylov::dist::Mpi;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let mpi = Mpi::init().expect("MPI initialization");
    let comm = mpi.world();
    let (rank, size) = (comm.rank(), comm.size());
    if std::env::var("PK_MPI_TEST_ABORT").is_ok_and(|v| v == "1") {
        if rank == size - 1 {
            comm.abort("test of RELIABILITY.md row 27 (a failing rank aborts the job)");
        }
        comm.barrier();
        return;
    }
    let mut c = Checker::new(rank);
    let (run_solvers, run_amg) = match which.as_str() {
        "solvers" => (true, false),
        "amg" => (false, true),
        _ => (true, true),
    };
    if run_solvers {
        solvers::run(&mut c, &mpi);
    }
    if run_amg {
        amg::run(&mut c, &mpi);
    }
    c.finish(mpi, &comm, "the MPI tests", |n| {
        format!("mpi tests ({which:?}): {size} rank(s), {n} checks passed")
    });
}
