//! `mpirun -np N pipekrylov solve|bench ...` (feature `mpi`): the same commands over N ranks,
//! one device per rank. Rank 0 loads (or generates) the matrix and scatters the rows; the
//! preconditioner is per-rank block-Jacobi (the chosen preconditioner on the rank's diagonal
//! block), but for AMG, one hierarchy across the ranks (`Amg::new_distributed`); rank 0
//! prints.
//!
//! Device per rank: the node-local rank (Open MPI's `OMPI_COMM_WORLD_LOCAL_RANK`, MPICH's
//! `MPI_LOCALRANKID`, Slurm's `SLURM_LOCALID`) modulo the devices of the node, unless
//! `PIPEKRYLOV_CUDA_DEVICE` / `PIPEKRYLOV_OPENCL_DEVICE` name one (the configuration's
//! [`BackendConfig`] devices, passed to the backend in-process).

use super::bench_cmd::BenchArgs;
use super::problem::{load_matrix, load_rhs};
use super::solve::{precond_spec, SolveArgs};
use super::{EXIT_CONVERGED, EXIT_NOT_CONVERGED};
use crate::backend::format_choice::FormatRequest;
use crate::backend::{
    AnyBackend, BackendChoice, BackendConfig, BackendInfo, MatrixFormat, VectorOps,
};
use crate::bench::{probe::probe, run_uploaded, CSV_HEADER};
use crate::dist::{scatter_rows, scatter_vector, Comm, DistBackend, Mpi, RankMatrix};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::{self, Preconditioner};
use crate::scalar::{Precision, Scalar};
use crate::solve::KrylovSolver;
use crate::solver::{GmresParams, Params};
use std::io::Write;
use std::time::Instant;

/// True when the process was started by an MPI launcher.
pub fn under_mpi_launcher() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// The rank within the node, from the launcher's environment (0 when unknown).
pub fn local_rank() -> usize {
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "SLURM_LOCALID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
    .unwrap_or(0)
}

/// This rank's backend: the device local rank modulo the node's devices unless `config` names
/// one. Failure on any rank is an error on every rank.
fn rank_backend(
    comm: &Comm,
    choice: BackendChoice,
    config: &BackendConfig,
    notes: &mut Vec<String>,
) -> Result<AnyBackend> {
    #[cfg_attr(
        not(any(feature = "cuda", feature = "opencl")),
        allow(unused_variables, unused_mut)
    )]
    let (local, mut config) = (local_rank(), config.clone());
    #[cfg(feature = "cuda")]
    if config.cuda_device.is_none() && matches!(choice, BackendChoice::Cuda | BackendChoice::Auto) {
        if let Ok(count) = crate::backend::cuda::device_count() {
            if count > 0 {
                config.cuda_device = Some(local % count);
            }
        }
    }
    #[cfg(feature = "opencl")]
    if config.opencl_device == crate::backend::DeviceSelector::Default
        && matches!(choice, BackendChoice::OpenCl | BackendChoice::Auto)
    {
        if let Ok(devices) = crate::backend::opencl::list_devices() {
            let gpus: Vec<_> = devices.iter().filter(|d| d.is_gpu).collect();
            if !gpus.is_empty() {
                let d = gpus[local % gpus.len()];
                config.opencl_device = crate::backend::DeviceSelector::Index {
                    platform: d.platform_index,
                    device: d.device_index,
                };
            }
        }
    }
    let created = choice.create_with(&config);
    let (backend, why) = comm.agree("creating the backend", created)?;
    if comm.rank() == 0 {
        notes.extend(why);
    }
    Ok(backend)
}

/// The hash every rank compares: ranks started with different arguments get an error
/// (RELIABILITY.md row 25).
fn args_hash(text: &str) -> u64 {
    crate::matrix::csr::fnv1a(text.bytes().map(u64::from))
}

/// The part of `config` every rank must share: the tuning (the links need the same
/// `halo_peer` and `sums_peer` everywhere), not the devices, which may differ per rank.
fn shared_config(config: &BackendConfig) -> BackendConfig {
    BackendConfig::with_tuning(config.tuning.clone())
}

/// `solve` over the ranks of the world. Returns the exit code and, on rank 0, the report.
pub fn solve(args: &SolveArgs, notes: &mut Vec<String>) -> Result<(i32, Option<String>)> {
    if args.nrhs > 1 {
        return Err(Error::Unsupported(
            "--nrhs under mpirun (the library's Cg::solve_many runs on a distributed backend; \
             the command line does not yet)"
                .into(),
        ));
    }
    let mpi = Mpi::init()?;
    let comm = mpi.world();
    let shared = SolveArgs {
        config: shared_config(&args.config),
        ..args.clone()
    };
    comm.check_same("the solve arguments", args_hash(&format!("{shared:?}")))?;
    let backend = rank_backend(&comm, args.backend, &args.config, notes)?;
    let be = DistBackend::new(backend, mpi.world());
    match args.precision {
        Precision::F64 => solve_typed::<f64>(&be, args),
        Precision::F32 => solve_typed::<f32>(&be, args),
    }
}

/// A generated stencil problem with a right-hand side every rank can form for its own rows:
/// built on every rank without a global matrix (`RankMatrix::from_stencil`).
fn local_stencil(args: &SolveArgs) -> Option<(String, crate::matrix::generate::GridStencil)> {
    if args.matrix.is_some() || !matches!(args.rhs.as_str(), "ones" | "a-ones") {
        return None;
    }
    let spec = args.generate.as_deref()?;
    if let Ok(Some((g, stencil))) = crate::matrix::generate::parse_grid_spec(spec) {
        return Some((g.name().to_string(), stencil));
    }
    let (g, n) = crate::matrix::generate::parse_spec(spec).ok()?;
    let param = g.size_for(n);
    g.grid_stencil(param).map(|st| (g.name().to_string(), st))
}

fn solve_typed<T: Scalar>(
    be: &DistBackend<AnyBackend>,
    args: &SolveArgs,
) -> Result<(i32, Option<String>)> {
    if let Some((name, stencil)) = local_stencil(args) {
        let t0 = Instant::now();
        let rows = be.comm().agree(
            "building the stencil rows",
            RankMatrix::<T>::rows_of_stencil(be.comm(), &stencil),
        )?;
        let (partition, rows) = rows;
        let b_local: Vec<T> = if args.rhs == "ones" {
            vec![T::one(); rows.n_rows()]
        } else {
            (0..rows.n_rows())
                .map(|r| rows.row(r).1.iter().fold(T::zero(), |acc, &v| acc + v))
                .collect()
        };
        let a = RankMatrix::from_rows(be.comm(), be, &rows, partition, dist_format(args))?;
        let system = super::problem::System::<T> {
            name,
            matrix: CsrMatrix::identity(0),
            stencil: None,
        };
        let load_seconds = t0.elapsed().as_secs_f64();
        return finish_solve(be, args, (a, rows), b_local, &system, load_seconds);
    }
    let comm = be.comm();
    let t0 = Instant::now();
    let loaded = (comm.rank() == 0)
        .then(|| {
            let system = load_matrix::<T>(args.matrix.as_deref(), args.generate.as_deref())?;
            let rhs = load_rhs::<T>(&args.rhs, &system.matrix)?;
            Ok::<_, Error>((system, rhs))
        })
        .transpose();
    let loaded = comm.agree("loading the system on rank 0", loaded)?;
    let (partition, rows) = scatter_rows(comm, 0, loaded.as_ref().map(|(s, _)| &s.matrix))?;
    let a = RankMatrix::from_rows(comm, be, &rows, partition, dist_format(args))?;
    let b_local = scatter_vector(comm, 0, &a.partition, loaded.as_ref().map(|(_, b)| &b[..]))?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let system = match loaded {
        Some((system, _)) => system,
        None => super::problem::System::<T> {
            name: String::new(),
            matrix: CsrMatrix::identity(0),
            stencil: None,
        },
    };
    finish_solve(be, args, (a, rows), b_local, &system, load_seconds)
}

/// The preconditioner of the distributed solve: AMG across the ranks, any other on the rank's
/// diagonal block. A generated problem's stencil describes the global grid, not the block, so
/// the matrix-free IP does not apply.
fn rank_block_spec<T>(
    args: &SolveArgs,
    system: &super::problem::System<T>,
) -> precond::PrecondSpec {
    let mut spec = precond_spec(args, system, dist_format(args));
    if let precond::PrecondSpec::IpMatrixFree { stencil } = &mut spec {
        *stencil = None;
    }
    spec
}

/// Precondition, solve and report (every rank; the report on rank 0). `a` comes with the
/// rank's rows in global column numbers (the distributed AMG's setup reads them).
fn finish_solve<T: Scalar>(
    be: &DistBackend<AnyBackend>,
    args: &SolveArgs,
    (a, rows): (RankMatrix<T>, CsrMatrix<T>),
    b_local: Vec<T>,
    system: &super::problem::System<T>,
    load_seconds: f64,
) -> Result<(i32, Option<String>)> {
    let comm = be.comm();
    let name = system.name.clone();
    let (n, global_nnz) = (
        a.partition.n(),
        comm.sum_slots(&[a.local.nnz() as f64 + a.ghost_nnz as f64])[0],
    );
    // AMG: one hierarchy across the ranks. Every other preconditioner is block-Jacobi: the
    // preconditioner of the rank's diagonal block.
    let spec = rank_block_spec(args, system);
    type Built<T> = Option<Box<dyn Preconditioner<DistBackend<AnyBackend>, T>>>;
    let (built, setup_peak_bytes) = super::solve::setup_peak(be, || -> Result<Built<T>> {
        if let precond::PrecondSpec::Amg(mut options) = spec {
            if args.precond_precision == precond::PrecondPrecision::F32 {
                options.precision = precond::PrecondPrecision::F32;
            }
            let amg = precond::Amg::new_distributed(be, &rows, &a.partition, options)?;
            Ok(Some(Box::new(amg)))
        } else {
            comm.agree(
                "building the preconditioner",
                precond::build_in(be, &a.local, None, spec, args.precond_precision),
            )
        }
    })?;
    drop(rows);
    let pc: Option<&dyn Preconditioner<DistBackend<AnyBackend>, T>> = built.as_deref();
    let params = Params {
        rtol: args.rtol,
        atol: args.atol,
        max_iter: args.max_iter,
        variant: args.variant,
        gmres: GmresParams {
            restart: args.restart,
            orthogonalization: args.gmres_ortho,
        },
        execution: args.execution,
        ..Params::default()
    };
    let b = be.upload(&b_local)?;
    let mut x = be.alloc::<T>(b_local.len())?;
    // The per-rank table counts the solve only: the ranks leave the solver's setup together
    // (a rank that waited in the first reduction for a slower rank's setup would otherwise
    // charge that wait to its reductions) and the statistics start after it.
    let solved = args.solver.parse().and_then(|method| {
        let mut s = KrylovSolver::new(be, &a.device, pc, params, method)?;
        comm.barrier();
        be.reset_comm_stats();
        let report = s.solve(&b, &mut x, None);
        super::solve::write_kernel_traces(be.tuning());
        report
    });
    let report = match solved {
        Ok(r) => r,
        // Errors of the solvers' collective checks reach every rank at the same point; any
        // other failure is this rank's alone, and the others would wait for it forever.
        Err(
            e @ (Error::NonFinite { .. }
            | Error::DimensionMismatch { .. }
            | Error::InvalidParameter { .. }
            | Error::Distributed(_)
            | Error::PreconditionerMismatch(_)),
        ) => return Err(e),
        Err(e) => comm.abort(&format!("solve failed: {e}")),
    };
    if let (0, Some(k)) = (comm.rank(), args.monitor) {
        eprint!("{}", super::solve::monitor_lines(&report, k));
    }
    let stats = be.comm_stats();
    // Per-rank table: rows, nonzeros, ghosts, neighbours, then the rank's own solve seconds
    // and the halo, reduction and hand-over seconds within it.
    let mine = [
        a.device.n_rows() as f64,
        a.local.nnz() as f64 + a.ghost_nnz as f64,
        a.ghost_len as f64,
        a.neighbors as f64,
        report.solve_seconds,
        stats.halo_seconds,
        stats.reduce_seconds,
        stats.globalize_seconds,
    ];
    let all = comm.all_gather_f64(&mine);
    let mut report = report;
    if let Some(hint) = crate::precond::domain::cg_nonsymmetric_hint(&system.matrix, &report) {
        report.notes.push(hint);
    }
    let code = if report.stop_reason.converged() {
        EXIT_CONVERGED
    } else {
        EXIT_NOT_CONVERGED
    };
    if comm.rank() != 0 {
        return Ok((code, None));
    }
    let it = report.iterations.max(1) as f64;
    let per = |s: f64| s / it * 1e6;
    let ranks: Vec<RankRow> = all
        .chunks(mine.len())
        .map(|v| {
            let (solve, halo, reduce, globalize) = (per(v[4]), per(v[5]), per(v[6]), per(v[7]));
            RankRow {
                rows: v[0] as usize,
                nnz: v[1] as usize,
                ghosts: v[2] as usize,
                neighbours: v[3] as usize,
                iteration_us: solve,
                halo_us: halo,
                reduce_us: reduce,
                globalize_us: globalize,
                rest_us: (solve - halo - reduce - globalize).max(0.0),
            }
        })
        .collect();
    if args.json {
        let spec = rank_block_spec(args, system);
        let format = crate::backend::format_choice::FormatChoice {
            format: dist_format(args),
            reason: match args.format {
                FormatRequest::Fixed(_) => "requested".into(),
                FormatRequest::Auto => "CSR (the distributed solve's automatic format)".into(),
            },
        };
        let mut v = super::solve::json(
            be.inner(),
            &name,
            global_nnz as usize,
            n,
            args,
            &report,
            (&format, &a.device),
            [load_seconds, 0.0],
            pc.map(|pc| (spec, pc, f64::NAN, setup_peak_bytes)),
        );
        v["ranks"] = comm.size().into();
        v["halo_exchanges"] = stats.exchanges.into();
        v["peer_exchanges"] = stats.peer_exchanges.into();
        v["global_reductions"] = stats.reductions.into();
        v["device_reductions"] = stats.device_reductions.into();
        v["per_rank"] = serde_json::to_value(&ranks).unwrap_or_default();
        return Ok((code, Some(v.to_string())));
    }
    let mut s = format!(
        "{} ({}) on {} ranks, rank 0: {} [{}]\nsystem: {name}, n = {n}, nnz = {global_nnz}, {} precision, preconditioner {} ({})\n",
        report.solver,
        args.variant,
        comm.size(),
        be.device_name(),
        be.name(),
        args.precision,
        args.precond.kind(),
        if args.precond.kind() == precond::PrecondKind::Amg {
            "one hierarchy across the ranks"
        } else {
            "block-Jacobi: one block per rank"
        }
    );
    s += &format!(
        "halo exchanges on rank 0: {} ({} device to device, the rest through the host)\n\
         global reductions: {} ({} summed device to device)\n",
        stats.exchanges, stats.peer_exchanges, stats.reductions, stats.device_reductions
    );
    s += &super::solve::stop_line(&report);
    s += &format!(
        "relative residual ||b - Ax||/||b|| = {:.3e} (recursive {:.3e})\n",
        report.relative_true_residual,
        report.recursive_relative_residual()
    );
    if let Some(w) = &report.accuracy_warning {
        s += &format!("warning: {w}\n");
    }
    s += &format!(
        "time: load and distribute {:.3} ms, setup {:.3} ms, solve {:.3} ms, {:.2} us per iteration\n",
        load_seconds * 1e3,
        report.setup_seconds * 1e3,
        report.solve_seconds * 1e3,
        report.seconds_per_iteration() * 1e6
    );
    s += "per rank, us per iteration of its own solve (= halo + reduce + globalize + rest):\n";
    s += "rank       rows        nnz   ghosts  neighbours  solve us/it  halo us/it  reduce us/it  globalize us/it  rest us/it\n";
    for (r, row) in ranks.iter().enumerate() {
        s += &format!(
            "{r:>4} {:>10} {:>10} {:>8} {:>11} {:>12.2} {:>11.2} {:>13.2} {:>16.2} {:>11.2}\n",
            row.rows,
            row.nnz,
            row.ghosts,
            row.neighbours,
            row.iteration_us,
            row.halo_us,
            row.reduce_us,
            row.globalize_us,
            row.rest_us
        );
    }
    Ok((code, Some(s.trim_end().to_string())))
}

/// One rank's row of the distributed solve's table: its share of the system, and its own solve
/// time per iteration split into the host time in the halo, in the reduction collectives and in
/// handing global sums to the device, and the rest (the rank's kernels and host work).
#[derive(Debug, Clone, serde::Serialize)]
struct RankRow {
    rows: usize,
    nnz: usize,
    ghosts: usize,
    neighbours: usize,
    /// This rank's solve seconds per iteration, in microseconds.
    iteration_us: f64,
    halo_us: f64,
    reduce_us: f64,
    globalize_us: f64,
    rest_us: f64,
}

/// The columns distributed benchmark rows add to [`CSV_HEADER`]: the number of ranks, the
/// slowest rank's median seconds per iteration, and the per-iteration split of rank 0: the
/// local products, the halo exchange alone and the hand-over of global sums to the device
/// (these three from one profiled solve, the device synchronized before each), then the
/// host time in the halo and in the reduction collectives of the timed solves.
pub const DIST_CSV_COLUMNS: &str = "ranks,slowest_rank_s_per_iter,local_spmv_s_per_iter,exchange_s_per_iter,globalize_s_per_iter,halo_s_per_iter,reduce_s_per_iter";

/// The CSV header of distributed benchmark rows: [`CSV_HEADER`], then [`DIST_CSV_COLUMNS`].
pub fn dist_csv_header() -> String {
    format!("{CSV_HEADER},{DIST_CSV_COLUMNS}")
}

/// `bench` over the ranks of the world: every case is scattered from rank 0, timed on every
/// rank, and rank 0 writes the rows (global n and nnz, the slowest rank's time and its own
/// split). Returns the table on rank 0.
pub fn bench(args: &BenchArgs) -> Result<Option<String>> {
    let mpi = Mpi::init()?;
    let comm = mpi.world();
    let shared = BenchArgs {
        config: shared_config(&args.config),
        ..args.clone()
    };
    comm.check_same("the bench arguments", args_hash(&format!("{shared:?}")))?;
    let mut out = match (&args.out, comm.rank()) {
        (Some(p), 0) => {
            let mut f = std::fs::File::create(p).map_err(|e| io(p, e))?;
            writeln!(f, "{}", dist_csv_header()).map_err(|e| io(p, e))?;
            Some((p.clone(), f))
        }
        _ => None,
    };
    let mut table = String::from(
        "| backend | solver | variant | problem | n | ranks | us/iter (slowest rank) | local SpMV | exchange | globalize | halo | reduce |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for &choice in &args.backends {
        let mut notes = Vec::new();
        let backend = rank_backend(&comm, choice, &args.config, &mut notes)?;
        let bytes = if backend.name() == "host" {
            128 << 20
        } else {
            1 << 30
        };
        let bw = probe(&backend, bytes)?.copy_bandwidth;
        let be = DistBackend::new(backend, mpi.world());
        let problems = super::bench_cmd::problems(args)?;
        for case in problems {
            match args.precision {
                Precision::F64 => bench_case::<f64>(&be, args, &case, bw, &mut out, &mut table)?,
                Precision::F32 => bench_case::<f32>(&be, args, &case, bw, &mut out, &mut table)?,
            }
        }
    }
    Ok((comm.rank() == 0).then_some(table))
}

#[allow(clippy::too_many_arguments)]
fn bench_case<T: Scalar>(
    be: &DistBackend<AnyBackend>,
    args: &BenchArgs,
    case: &super::bench_cmd::BenchCase,
    bw: f64,
    out: &mut Option<(String, std::fs::File)>,
    table: &mut String,
) -> Result<()> {
    let comm = be.comm();
    let global = (comm.rank() == 0)
        .then(|| super::bench_cmd::load_case::<T>(case))
        .transpose();
    let global = comm.agree("loading the problem on rank 0", global)?;
    let a = RankMatrix::scatter(
        comm,
        be,
        0,
        global.as_ref().map(|(_, m)| m),
        args.case.format,
    )?;
    let label = global.as_ref().map(|(l, _)| l.clone()).unwrap_or_default();
    let n = a.partition.n();
    let nnz = comm.sum_slots(&[(a.local.nnz() + a.ghost_nnz) as f64])[0] as usize;
    for solver in &args.solvers {
        for &variant in &args.variants {
            // The timed solves without profiling, then one profiled solve for the split
            // (after the timed ones, so that it sees no first-use costs either).
            be.set_profiling(false);
            be.reset_comm_stats();
            let mut row = run_uploaded(
                be,
                &a.device,
                a.local.nnz() + a.ghost_nnz,
                &label,
                solver,
                variant,
                args.case,
                bw,
            )?;
            let timed = be.comm_stats();
            be.set_profiling(true);
            be.reset_comm_stats();
            run_uploaded(
                be,
                &a.device,
                a.local.nnz() + a.ghost_nnz,
                &label,
                solver,
                variant,
                crate::bench::CaseSpec {
                    repeats: 1,
                    warmup: 0,
                    ..args.case
                },
                bw,
            )?;
            let profiled = be.comm_stats();
            let profiled_iters = args.case.iterations.max(1) as f64;
            be.set_profiling(false);
            let stats = timed;
            let solves = (args.case.repeats.max(1) + args.case.warmup) as f64 * profiled_iters;
            let slowest = comm
                .all_gather_f64(&[row.median])
                .into_iter()
                .fold(0.0, f64::max);
            let split = [
                profiled.local_spmv_seconds / profiled_iters,
                profiled.halo_seconds / profiled_iters,
                profiled.globalize_seconds / profiled_iters,
                stats.halo_seconds / solves,
                stats.reduce_seconds / solves,
            ];
            row.n = n;
            row.nnz = nnz;
            if let Some((p, f)) = out.as_mut() {
                let split: Vec<String> = split.iter().map(|v| format!("{v:.6e}")).collect();
                writeln!(
                    f,
                    "{},{},{:.6e},{}",
                    row.csv(),
                    comm.size(),
                    slowest,
                    split.join(",")
                )
                .map_err(|e| io(p, e))?;
            }
            *table += &format!(
                "| {} | {solver} | {variant} | {label} | {n} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
                row.backend,
                comm.size(),
                slowest * 1e6,
                split[0] * 1e6,
                split[1] * 1e6,
                split[2] * 1e6,
                split[3] * 1e6,
                split[4] * 1e6
            );
        }
    }
    Ok(())
}

fn io(path: &str, e: std::io::Error) -> Error {
    Error::Io {
        path: path.into(),
        message: e.to_string(),
    }
}

/// The device format of the ranks' blocks: `auto` is CSR under MPI (the choice is made per
/// matrix and the ranks' blocks would each decide on their own rows).
fn dist_format(args: &SolveArgs) -> MatrixFormat {
    match args.format {
        FormatRequest::Fixed(format) => format,
        FormatRequest::Auto => MatrixFormat::Csr,
    }
}
