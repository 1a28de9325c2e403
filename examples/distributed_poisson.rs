//! One linear system on several GPUs (or CPU ranks) with MPI: every rank holds a contiguous block
//! of rows, the solvers and preconditioners of the crate run unchanged on the distributed backend.
//!
//! `mpirun -np 2 target/release/examples/distributed_poisson [K] [BACKEND]` (defaults 64 and
//! `auto`; build with `cargo build --release --features mpi --example distributed_poisson`, add
//! `cuda` or `opencl` for GPUs: one rank per device). Rank 0 generates the 3D Poisson matrix of a
//! K x K x K grid and scatters its rows (balanced by nonzeros); CG with algebraic multigrid (one
//! hierarchy across the ranks, `Amg::new_distributed`) solves A x = A 1; rank 0 gathers nothing
//! but checks the true residual the solver reports and that every rank's part of x is 1.
//! (Block-Jacobi is the other way to precondition on several ranks: any preconditioner built
//! from `a.local`, the rank's diagonal block.)

use pipekrylov::backend::{BackendChoice, MatrixFormat, VectorOps};
use pipekrylov::dist::{scatter_rows, scatter_vector, DistBackend, Mpi, RankMatrix};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{Amg, AmgOptions};
use pipekrylov::solver::{Cg, Params};

/// Bad arguments and solver errors end the program with the error's message and exit code 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), pipekrylov::Error> {
    let mut args = std::env::args().skip(1);
    let k: usize = args.next().map_or(Ok(64), |s| {
        s.parse()
            .map_err(|_| pipekrylov::Error::param("K", format!("'{s}' is not a whole number")))
    })?;
    let choice: BackendChoice = args.next().as_deref().unwrap_or("auto").parse()?;
    let mpi = Mpi::init()?;
    let comm = mpi.world();
    let (rank, ranks) = (comm.rank(), comm.size());

    // Rank 0 builds the matrix and b = A 1; the others hold nothing.
    let global = if rank == 0 {
        Some(Generator::Poisson3d.generate_with_param::<f64>(k)?.matrix)
    } else {
        None
    };
    let b_global = match &global {
        Some(a) => {
            let mut b = vec![0.0; a.n_rows()];
            a.mul_vec(&vec![1.0; a.n_rows()], &mut b)?;
            Some(b)
        }
        None => None,
    };

    // One device per rank, wrapped so that reductions span every rank.
    let (device, _skipped) = choice.create()?;
    let backend = DistBackend::new(device, comm);
    let comm = backend.comm();
    let (partition, rows) = scatter_rows(comm, 0, global.as_ref())?;
    let a = RankMatrix::from_rows(comm, &backend, &rows, partition, MatrixFormat::Csr)?;
    let b_local = scatter_vector(comm, 0, &a.partition, b_global.as_deref())?;

    // One multigrid hierarchy across the ranks, set up from every rank's rows.
    let amg = Amg::new_distributed(&backend, &rows, &a.partition, AmgOptions::default())?;
    let params = Params {
        rtol: 1e-8,
        ..Params::default()
    };
    let b = backend.upload(&b_local)?;
    let mut x = backend.alloc(b_local.len())?;
    let report = Cg::new(&backend, &a.device, Some(&amg), params)?.solve(&b, &mut x)?;

    let x = backend.download(&x)?;
    let worst = x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
    println!(
        "rank {rank} of {ranks}: rows {:?}, {} ghost entries, |x - 1| <= {worst:.1e}",
        a.rows(rank),
        a.ghost_len
    );
    if rank == 0 {
        println!(
            "CG + AMG on {ranks} rank(s), n = {}: {} iterations, {}, true relative residual {:.2e}",
            a.partition.n(),
            report.iterations,
            report.stop_reason,
            report.relative_true_residual
        );
    }
    assert!(report.stop_reason.converged() && report.relative_true_residual <= 1.1e-8);
    assert!(worst < 1e-5, "rank {rank}: x is not 1 to 1e-5");
    Ok(())
}
