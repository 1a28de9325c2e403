//! `pipekrylov solve`.

use super::problem::{load_matrix, load_rhs, System};
use super::watch::{monitor_line, Watch};
use super::{EXIT_CONVERGED, EXIT_NOT_CONVERGED};
use crate::backend::format_choice::{FormatChoice, FormatRequest};
use crate::backend::{
    AnyBackend, Backend, BackendChoice, BackendInfo, DeviceMatrix, MatrixFormat, SpmvOps, VectorOps,
};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::{self, Bilu0Options, Factorization, IsaiOptions, PrecondSpec, Preconditioner};
use crate::scalar::{Precision, Scalar};
use crate::solve::KrylovSolver;
use crate::solver::{GmresOrthogonalization, GmresParams, Monitor, Params, SolveReport, Variant};
use crate::Method;
use std::time::Instant;

/// Arguments of `solve` (parsed by the binary).
#[derive(Debug, Clone)]
pub struct SolveArgs {
    /// `--matrix FILE.mtx`
    pub matrix: Option<String>,
    /// `--generate NAME:N`
    pub generate: Option<String>,
    /// `--rhs ones|a-ones|random|FILE.mtx`
    pub rhs: String,
    /// `--solver cg|bicgstab|gmres`
    pub solver: String,
    /// `--restart M`
    pub restart: usize,
    /// `--nrhs K`: right-hand sides solved at once ([`rhs_column`]).
    pub nrhs: usize,
    /// `--variant`
    pub variant: Variant,
    /// `--gmres-ortho`
    pub gmres_ortho: GmresOrthogonalization,
    /// `--precond` with the options of the chosen one (`--trisolve`, `--block-size`,
    /// `--factorization`, `--subdomains`, `--isai-level`, `--ip-scaling`, `--fsai-*`,
    /// `--afsai-*`, `--amg-*`, `--ilu-*`; the binary reads only the chosen one's). The assembled
    /// IP takes the operator's format and the matrix-free IP the generated problem's stencil
    /// at the solve.
    pub precond: PrecondSpec,
    /// Whether `--block-size` was given; if not, the block size of a preconditioner that has
    /// one is S of a BSR format, else 3 for elasticity3d, else 1.
    pub block_size_given: bool,
    /// `--precond-precision solve|f32`
    pub precond_precision: crate::precond::PrecondPrecision,
    /// `--backend`
    pub backend: BackendChoice,
    /// `--execution auto|sync|resident`
    pub execution: crate::solver::Execution,
    /// `--precision`
    pub precision: Precision,
    /// `--rtol` (alias `--tol`)
    pub rtol: f64,
    /// `--atol`
    pub atol: f64,
    /// `--max-iter` (alias `--maxit`)
    pub max_iter: usize,
    /// `--format auto|csr|sell|ell|bsr:S` (auto: chosen per matrix and backend)
    pub format: FormatRequest,
    /// `--json`
    pub json: bool,
    /// `--history`: the residual history in the `--json` object.
    pub history: bool,
    /// `--output FILE.mtx`: write the solution as a Matrix Market vector.
    pub output: Option<String>,
    /// `--monitor K`: the residual every K iterations on stderr, live, as they are computed
    /// (pipelined CG and BiCGStab then run synchronously; GMRES reports a cycle's steps at its
    /// end), under MPI from rank 0's history after the solve.
    pub monitor: Option<usize>,
    /// The backend's tuning and devices: the environment, then `--tune key=value`
    /// ([`super::backend_config`]).
    pub config: crate::backend::BackendConfig,
}

/// Run a solve; returns the exit code and the text for stdout. Backend notes go to `notes`.
/// A named backend is created before the matrix is read (an unavailable one fails first);
/// `auto` after, since it picks the host for small systems
/// ([`AUTO_HOST_MAX_N`](crate::backend::AUTO_HOST_MAX_N)).
pub fn run(args: &SolveArgs, notes: &mut Vec<String>) -> Result<(i32, String)> {
    let named = match args.backend {
        BackendChoice::Auto => None,
        choice => Some(created(choice.create_with(&args.config), notes)?),
    };
    match args.precision {
        Precision::F64 => typed::<f64>(named, args, notes),
        Precision::F32 => typed::<f32>(named, args, notes),
    }
}

/// The created backend, its notes appended to `notes`.
fn created(made: Result<(AnyBackend, Vec<String>)>, notes: &mut Vec<String>) -> Result<AnyBackend> {
    let (backend, why) = made?;
    notes.extend(why);
    Ok(backend)
}

fn typed<T: Scalar>(
    named: Option<AnyBackend>,
    args: &SolveArgs,
    notes: &mut Vec<String>,
) -> Result<(i32, String)> {
    let t0 = Instant::now();
    let system = load_matrix::<T>(args.matrix.as_deref(), args.generate.as_deref())?;
    let a = &system.matrix;
    let n = a.n_rows();
    let rhs = load_rhs::<T>(&args.rhs, a)?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let backend = match named {
        Some(b) => b,
        None => created(args.backend.create_for_with(n, &args.config), notes)?,
    };
    if T::PRECISION == Precision::F64 && !backend.supports_f64() {
        return Err(Error::BackendUnavailable {
            backend: backend.name().into(),
            reason: "the device has no double precision (use --precision f32)".into(),
        });
    }
    let backend = &backend;
    let format = operator_format(args, a, backend);
    let m = backend.upload_matrix(a, format.format)?;
    // The kernels are compiled once per process: before the timed setup, not inside it.
    let t_build = Instant::now();
    backend.prepare_kernels(T::PRECISION)?;
    let f32_setup = match args.precond {
        PrecondSpec::Fsai { options, .. } => options.setup_in_f32,
        PrecondSpec::Afsai { options, .. } => options.setup_in_f32,
        PrecondSpec::Amg(o) => o.precision == crate::precond::AmgPrecision::F32,
        _ => false,
    } || args.precond_precision == crate::precond::PrecondPrecision::F32;
    if f32_setup && T::PRECISION == Precision::F64 {
        backend.prepare_kernels(Precision::F32)?;
    }
    let kernel_build_seconds = t_build.elapsed().as_secs_f64();
    let spec = precond_spec(args, &system, format.format);
    let (built, setup_peak_bytes) = setup_peak(backend, || {
        precond::build_in(backend, a, Some(&m), spec, args.precond_precision)
    })?;
    let precond: Option<&dyn Preconditioner<AnyBackend, T>> = built.as_deref();
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
    let b = backend.upload(&rhs)?;
    let mut x = backend.alloc::<T>(n)?;
    let b_norm = rhs.iter().map(|v| v.to_f64().powi(2)).sum::<f64>().sqrt();
    let mut watch = Watch::new(
        backend,
        &args.solver,
        args.execution,
        n,
        args.monitor,
        args.json,
        b_norm,
    );
    let columns = if args.nrhs > 1 {
        Some(solve_columns(
            backend, &m, precond, params, args, &rhs, &mut x,
        )?)
    } else {
        None
    };
    let report = if let Some((first, _)) = &columns {
        first.clone()
    } else if watch.active() {
        let mut callback = |p| watch.on_iteration(p);
        let report = solve_with(
            backend,
            &m,
            precond,
            params,
            &args.solver,
            &b,
            &mut x,
            Some(&mut callback),
        );
        watch.finish();
        report?
    } else {
        solve_with(backend, &m, precond, params, &args.solver, &b, &mut x, None)?
    };
    if let Some(path) = &args.output {
        crate::matrix::matrix_market::write_vector_file(path, &backend.download(&x)?)?;
    }
    let apply_seconds = match precond {
        Some(pc) => Some(time_apply(backend, pc, &b)?),
        None => None,
    };
    let mut report = report;
    if let Some(hint) = crate::precond::domain::cg_nonsymmetric_hint(a, &report) {
        report.notes.push(hint);
    }
    let code = if report.stop_reason.converged() {
        EXIT_CONVERGED
    } else {
        EXIT_NOT_CONVERGED
    };
    let text = if args.json {
        let mut v = json(
            backend,
            &system.name,
            a.nnz(),
            n,
            args,
            &report,
            (&format, &m),
            [load_seconds, kernel_build_seconds],
            precond.map(|pc| (spec, pc, apply_seconds.unwrap_or(0.0), setup_peak_bytes)),
        );
        if let Some((_, all)) = &columns {
            v["nrhs"] = all.len().into();
            v["columns"] = all.iter().map(column_json).collect();
        }
        v.to_string()
    } else {
        let text = human(
            backend,
            &system.name,
            a.nnz(),
            n,
            args,
            &report,
            (&format, m.spmv_kernel()),
        );
        match &columns {
            Some((_, all)) => text + &columns_lines(all),
            None => {
                text + &precond.map_or(String::new(), |pc| {
                    trisolve_line(&pc.params()) + &ilu_line(&pc.params())
                })
            }
        }
    };
    Ok((code, text))
}

/// The triangular solves a factorization preconditioner ran and why (`--trisolve auto`
/// decides at setup), as a line of the text report; empty for other preconditioners.
fn trisolve_line(params: &serde_json::Value) -> String {
    match (
        params["trisolve"].as_str(),
        params["trisolve_reason"].as_str(),
    ) {
        (Some(solve), Some(reason)) => format!("\ntriangular solves: {solve} ({reason})"),
        _ => String::new(),
    }
}

/// The choices of `ilu` (matching, ordering, factorization and why, fill ratio, shifted
/// pivots) as a line of the text report; empty for other preconditioners.
fn ilu_line(params: &serde_json::Value) -> String {
    match (
        params["factorization_reason"].as_str(),
        params["fill_ratio"].as_f64(),
    ) {
        (Some(why), Some(fill)) => format!(
            "\nilu: matching {} ({}), ordering {}, {} ({why}), fill ratio {fill:.2}, {} shifted \
             pivots",
            params["matching"].as_str().unwrap_or("?"),
            params["matching_reason"].as_str().unwrap_or("?"),
            params["ordering"].as_str().unwrap_or("?"),
            params["factorization"].as_str().unwrap_or("?"),
            params["shifted_pivots"].as_u64().unwrap_or(0),
        ),
        _ => String::new(),
    }
}

/// Right-hand side `c` of `--nrhs`: `rhs` (column 0) scaled row by row by
/// 1 + 0.5 sin(0.37 (c + 1) i).
pub fn rhs_column<T: Scalar>(rhs: &[T], c: usize) -> Vec<T> {
    if c == 0 {
        return rhs.to_vec();
    }
    rhs.iter()
        .enumerate()
        .map(|(i, &v)| v * T::from_f64(1.0 + 0.5 * (0.37 * (c + 1) as f64 * i as f64).sin()))
        .collect()
}

/// The `--nrhs` solve: every column from zero, solved together (CG, BiCGStab, classical GMRES)
/// or one after another (pipelined GMRES); the first column's report (its iterate left in `x`)
/// and every column's.
fn solve_columns<T: Scalar>(
    backend: &AnyBackend,
    m: &crate::backend::DeviceMatrix<T>,
    precond: Option<&dyn Preconditioner<AnyBackend, T>>,
    params: Params,
    args: &SolveArgs,
    rhs: &[T],
    x: &mut crate::backend::Buffer<T>,
) -> Result<(SolveReport, Vec<SolveReport>)> {
    let n = rhs.len();
    let bs = (0..args.nrhs)
        .map(|c| backend.upload(&rhs_column(rhs, c)))
        .collect::<Result<Vec<_>>>()?;
    let mut xs = (1..args.nrhs)
        .map(|_| backend.alloc::<T>(n))
        .collect::<Result<Vec<_>>>()?;
    backend.fill(x, T::zero())?;
    let b_refs: Vec<&crate::backend::Buffer<T>> = bs.iter().collect();
    let mut x_refs: Vec<&mut crate::backend::Buffer<T>> =
        std::iter::once(x).chain(xs.iter_mut()).collect();
    let mut solver =
        KrylovSolver::new(backend, m, precond, params, args.solver.parse::<Method>()?)?;
    let reports = solver.solve_many(&b_refs, &mut x_refs)?;
    write_kernel_traces(backend.tuning());
    let first = reports
        .first()
        .cloned()
        .ok_or_else(|| Error::param("nrhs", "at least one right-hand side"))?;
    Ok((first, reports))
}

/// One column's entry in the JSON report of `--nrhs`.
fn column_json(r: &SolveReport) -> serde_json::Value {
    serde_json::json!({
        "iterations": r.iterations,
        "stop_reason": r.stop_reason.to_string(),
        "converged": r.stop_reason.converged(),
        "relative_residual": r.relative_true_residual,
    })
}

/// The text lines of `--nrhs`: every column's iterations and true residual, the block's time.
fn columns_lines(all: &[SolveReport]) -> String {
    let most = all.iter().map(|r| r.iterations).max().unwrap_or(0);
    let together = all
        .iter()
        .all(|r| r.notes.iter().any(|n| n.contains("solved together")));
    let mut s =
        if together {
            // Every column's solve time is the block's.
            let seconds = all.first().map_or(0.0, |r| r.solve_seconds);
            format!(
            "\nright-hand sides: {} solved together in {:.3} ms, {:.2} us per iteration of the \
             block ({most} iterations at most)",
            all.len(),
            seconds * 1e3,
            if most > 0 { seconds / most as f64 * 1e6 } else { 0.0 }
        )
        } else {
            let seconds: f64 = all.iter().map(|r| r.solve_seconds).sum();
            format!(
                "\nright-hand sides: {} solved one after another in {:.3} ms",
                all.len(),
                seconds * 1e3
            )
        };
    for (c, r) in all.iter().enumerate() {
        s += &format!(
            "\n  column {c}: {} iterations, {}, ||b - Ax||/||b|| = {:.3e}",
            r.iterations, r.stop_reason, r.relative_true_residual
        );
    }
    s
}

/// `--monitor K` after the fact: one line per K iterations (and the last one) of the recorded
/// residual history, in the format of the live `--monitor` lines ([`monitor_line`]).
pub fn monitor_lines(report: &SolveReport, k: usize) -> String {
    let k = k.max(1);
    let h = &report.residual_history;
    let scale = if report.b_norm > 0.0 {
        report.b_norm
    } else {
        1.0
    };
    h.iter()
        .enumerate()
        .filter(|&(i, _)| i % k == 0 || i + 1 == h.len())
        .map(|(i, &r)| monitor_line(i, r, scale))
        .collect()
}

/// One solve with `solver` (cg, bicgstab or gmres), with the per-iteration `monitor` when given
/// (which makes pipelined CG run synchronously).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_with<B: Backend, T: Scalar>(
    backend: &B,
    m: &crate::backend::DeviceMatrix<T>,
    precond: Option<&dyn Preconditioner<B, T>>,
    params: Params,
    solver: &str,
    b: &crate::backend::Buffer<T>,
    x: &mut crate::backend::Buffer<T>,
    monitor: Monitor<'_>,
) -> Result<SolveReport> {
    let mut solver = KrylovSolver::new(backend, m, precond, params, solver.parse::<Method>()?)?;
    let report = crate::solver::with_monitor(monitor, |c| solver.solve(b, x, c));
    write_kernel_traces(backend.tuning());
    report
}

/// The kernel timelines the tuning asks for (diagnosis aids): CUDA's to `cuda_trace`
/// (`PIPEKRYLOV_CUDA_TRACE`, `--tune cuda_trace=FILE`), OpenCL's to `opencl_trace` (`--tune
/// opencl_trace=FILE`), each file suffixed with `.rank<R>` under an MPI launcher.
pub(crate) fn write_kernel_traces(tuning: &crate::backend::tuning::Tuning) {
    let ranked = |path: &std::path::Path| {
        let mut path = path.to_path_buf();
        if let Some(rank) = super::world_rank() {
            path.as_mut_os_string().push(format!(".rank{rank}"));
        }
        path
    };
    #[cfg(feature = "cuda")]
    if let Some(path) = tuning.cuda_trace.as_deref().map(ranked) {
        if let Err(e) = crate::backend::cuda::write_trace(&path) {
            eprintln!("warning: cuda_trace {}: {e}", path.display());
        }
    }
    #[cfg(feature = "opencl")]
    if let Some(path) = tuning.opencl_trace.as_deref().map(ranked) {
        if let Err(e) = crate::backend::opencl::write_trace(&path) {
            eprintln!("warning: opencl_trace {}: {e}", path.display());
        }
    }
    let _ = (tuning, ranked);
}

/// The operator's device format: the request resolved for `a` on `backend`, except that an
/// automatic choice stays CSR under fsai/afsai, the sweeps' BILU(0) and AMG set up on the
/// device, whose setups then read the solver's copy of A (another format would make them upload
/// a CSR copy of their own: on the H200, elasticity3d 305K in SELL took 0.26 s of FSAI setup
/// against 0.06 s and 6.5x the factors' memory at the peak; AMG on OpenCL, 3D Poisson 16.8M in
/// SELL, kept one more A through its setup and cycle: a setup peak of 4.35x A against 3.56x on
/// CUDA, which keeps CSR).
fn operator_format<T: Scalar>(
    args: &SolveArgs,
    a: &CsrMatrix<T>,
    backend: &AnyBackend,
) -> FormatChoice {
    match args.precond {
        PrecondSpec::Fsai { .. } | PrecondSpec::Afsai { .. } => args.format.resolve_keeping_csr(
            a,
            backend,
            "the FSAI setup reads the solver's CSR copy of A",
        ),
        PrecondSpec::Bilu0(Bilu0Options {
            factorization: Factorization::Sweeps(_),
            ..
        })
        | PrecondSpec::BlockJacobi(Bilu0Options {
            factorization: Factorization::Sweeps(_),
            ..
        })
        | PrecondSpec::Isai(IsaiOptions {
            factorization: Factorization::Sweeps(_),
            ..
        }) => args.format.resolve_keeping_csr(
            a,
            backend,
            "the device BILU(0) factorization reads the solver's CSR copy of A",
        ),
        PrecondSpec::Amg(o) if o.sets_up_on_device(backend) => args.format.resolve_keeping_csr(
            a,
            backend,
            "the AMG device setup reads the solver's CSR copy of A and its cycle shares it",
        ),
        _ => args.format.resolve(a, backend),
    }
}

/// The preconditioner the arguments ask for on an operator in `format`: the block size, when
/// `--block-size` was not given, is S of a BSR format, else 3 for elasticity3d (three unknowns
/// per node), else 1; the assembled IP is stored in `format`; the matrix-free IP gets the
/// generated problem's stencil.
pub(crate) fn precond_spec<T>(
    args: &SolveArgs,
    system: &System<T>,
    format: MatrixFormat,
) -> PrecondSpec {
    let mut spec = args.precond;
    if !args.block_size_given {
        if let Some(s) = spec.block_size_mut() {
            *s = match format {
                MatrixFormat::Bsr { block_size } => block_size,
                _ if system.name.starts_with("elasticity3d") => 3,
                _ => 1,
            };
        }
    }
    match &mut spec {
        PrecondSpec::Ip(o) => o.format = format,
        PrecondSpec::IpMatrixFree { stencil } => *stencil = system.stencil,
        _ => {}
    }
    spec
}

/// Run `setup` (a preconditioner's) and return its result with the most backend buffer memory
/// it held at once above what was held before it, its kept data included
/// ([`VectorOps::reset_peak_memory`]).
pub(crate) fn setup_peak<B: VectorOps, R>(
    backend: &B,
    setup: impl FnOnce() -> Result<R>,
) -> Result<(R, usize)> {
    let held_before = backend.memory_use().live_bytes;
    backend.reset_peak_memory();
    let built = setup()?;
    Ok((
        built,
        backend.memory_use().peak_bytes.saturating_sub(held_before),
    ))
}

/// Median seconds of one application z = M^-1 b over 10 synchronized runs (after one warm-up).
fn time_apply<B: Backend, T: Scalar>(
    backend: &B,
    pc: &dyn Preconditioner<B, T>,
    b: &crate::backend::Buffer<T>,
) -> Result<f64> {
    let mut z = backend.alloc::<T>(b.len())?;
    pc.apply(backend, b, &mut z)?;
    backend.synchronize()?;
    let mut times = Vec::with_capacity(10);
    for _ in 0..10 {
        let t = Instant::now();
        pc.apply(backend, b, &mut z)?;
        backend.synchronize()?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// The `--json` object of a solve (the distributed solve adds its per-rank table).
#[allow(clippy::too_many_arguments)]
pub(crate) fn json<B: Backend, T: Scalar>(
    backend: &AnyBackend,
    problem: &str,
    nnz: usize,
    n: usize,
    args: &SolveArgs,
    r: &SolveReport,
    (format, m): (&FormatChoice, &DeviceMatrix<T>),
    [load_seconds, kernel_build_seconds]: [f64; 2],
    precond: Option<(PrecondSpec, &dyn Preconditioner<B, T>, f64, usize)>,
) -> serde_json::Value {
    let mut v = serde_json::json!({
        "solver": r.solver,
        "variant": r.variant.to_string(),
        "gmres_orthogonalization": args.gmres_ortho.to_string(),
        "backend": backend.name(),
        "backend_request": format!("{:?}", args.backend).to_ascii_lowercase(),
        "device": backend.device_name(),
        "precision": args.precision.to_string(),
        "precond": args.precond.kind().name(),
        "problem": problem,
        "n": n,
        "nnz": nnz,
        "iterations": r.iterations,
        "stop_reason": r.stop_reason.to_string(),
        "converged": r.stop_reason.converged(),
        "criterion": r.criterion.map(|c| c.to_string()),
        "rtol": r.rtol,
        "atol": r.atol,
        "threshold": r.threshold,
        "b_norm": r.b_norm,
        "max_iter": args.max_iter,
        "restart": (r.solver == "gmres").then_some(args.restart),
        "notes": r.notes,
        "relative_residual": r.relative_true_residual,
        "true_residual": r.true_residual,
        "recursive_relative_residual": r.recursive_relative_residual(),
        "accuracy_warning": r.accuracy_warning,
        "load_seconds": load_seconds,
        "kernel_build_seconds": kernel_build_seconds,
        "setup_seconds": r.setup_seconds,
        "solve_seconds": r.solve_seconds,
        "seconds_per_iteration": r.seconds_per_iteration(),
        "launches_per_iteration": r.launches_per_iteration,
        "transfers_per_iteration": r.transfers_per_iteration,
        "residual_replacements": r.residual_replacements,
        "execution": r.execution.to_string(),
        "format": format.format.to_string(),
        "format_reason": format.reason,
        "spmv_kernel": m.spmv_kernel(),
        "matrix_device_bytes": m.device_bytes(),
    });
    if let Some((spec, pc, apply_seconds, setup_peak_bytes)) = precond {
        let times = pc.setup_times();
        v["precond_setup_seconds"] = times.total().into();
        v["precond_setup_host_seconds"] = times.host_seconds.into();
        v["precond_setup_device_seconds"] = times.device_seconds.into();
        v["precond_memory_bytes"] = pc.memory_bytes().into();
        v["precond_setup_peak_bytes"] = setup_peak_bytes.into();
        v["precond_launches_per_apply"] = pc.launches_per_apply().into();
        v["precond_apply_seconds"] = apply_seconds.into();
        v["precond_params"] = pc.params();
        if let Some(s) = spec.block_size() {
            v["block_size"] = s.into();
        }
        if let Some(t) = spec.triangular_solve() {
            v["trisolve"] = t.to_string().into();
        }
        if let Some(f) = spec.factorization() {
            v["factorization"] = f.to_string().into();
        }
        match spec {
            PrecondSpec::Bilu0(o) | PrecondSpec::BlockJacobi(o) => {
                v["subdomains"] = o.subdomains.into()
            }
            PrecondSpec::Isai(o) => v["isai_level"] = o.level.into(),
            _ => {}
        }
    }
    if args.history {
        v["residual_history"] = r.residual_history.clone().into();
    }
    v
}

/// The stop line of the text report, in the spirit of PETSc's `-ksp_converged_reason`: why it
/// stopped, after how many iterations, and for a converged solve which tolerance it met.
pub(crate) fn stop_line(r: &SolveReport) -> String {
    let why = match r.criterion {
        Some(crate::solver::StopCriterion::Relative) => format!(
            "converged: ||r|| <= rtol ||b|| = {:.3e} (rtol {:e}, atol {:e})",
            r.threshold, r.rtol, r.atol
        ),
        Some(crate::solver::StopCriterion::Absolute) => format!(
            "converged: ||r|| <= atol = {:.3e} (rtol {:e}, atol {:e})",
            r.threshold, r.rtol, r.atol
        ),
        None => format!(
            "{} (wanted ||r|| <= {:.3e}: rtol {:e}, atol {:e})",
            r.stop_reason, r.threshold, r.rtol, r.atol
        ),
    };
    let mut s = format!("stop: {why} after {} iterations\n", r.iterations);
    for note in &r.notes {
        s += &format!("note: {note}\n");
    }
    s
}

fn human(
    backend: &AnyBackend,
    problem: &str,
    nnz: usize,
    n: usize,
    args: &SolveArgs,
    r: &SolveReport,
    (format, kernel): (&FormatChoice, &str),
) -> String {
    let mut s = format!(
        "{} ({}) on {} [{}]\nsystem: {problem}, n = {n}, nnz = {nnz}, {} precision, preconditioner {}, format {} ({}), kernel {kernel}\n",
        r.solver,
        r.variant,
        backend.device_name(),
        backend.name(),
        args.precision,
        args.precond.kind(),
        format.format,
        format.reason
    );
    s += &stop_line(r);
    s += &format!(
        "relative residual ||b - Ax||/||b|| = {:.3e} (recursive {:.3e})\n",
        r.relative_true_residual,
        r.recursive_relative_residual()
    );
    if let Some(w) = &r.accuracy_warning {
        s += &format!("warning: {w}\n");
    }
    s += &format!(
        "time: setup {:.3} ms, solve {:.3} ms, {:.2} us per iteration; {:.2} launches and {:.2} transfers per iteration",
        r.setup_seconds * 1e3,
        r.solve_seconds * 1e3,
        r.seconds_per_iteration() * 1e6,
        r.launches_per_iteration,
        r.transfers_per_iteration
    );
    s
}
