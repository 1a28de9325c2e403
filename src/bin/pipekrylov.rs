//! `pipekrylov`: solve, benchmark and inspect backends from the command line.
//!
//! Exit codes: 0 converged (or command succeeded), 2 solve ended without converging (report
//! still printed), 1 error (message on stderr), usage errors included.

use clap::{Parser, Subcommand};
use pipekrylov::backend::format_choice::FormatRequest;
use pipekrylov::backend::BackendChoice;
use pipekrylov::bench::CaseSpec;
use pipekrylov::cli::{bench_cmd, info, solve, EXIT_ERROR};
use pipekrylov::precond::{Factorization, PrecondKind, TriangularSolve};
use pipekrylov::solver::{GmresOrthogonalization, Variant};
use pipekrylov::{Error, Precision};

#[derive(Parser)]
#[command(
    name = "pipekrylov",
    version,
    about = "Pipelined Krylov solvers with fused kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Set a tuning knob of the backends, KEY=VALUE (repeatable; after the PIPEKRYLOV_*
    /// environment variables, which it overrides; keys and values: docs/TUNING.md), e.g.
    /// --tune cg_fused=0 --tune csr_kernel=stream.
    #[arg(long, value_name = "KEY=VALUE", global = true)]
    tune: Vec<String>,
}

// Parsed once per run: the size of the `solve` variant's options costs nothing worth boxing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Solve one linear system.
    ///
    /// Exit codes: 0 converged, 2 ran without converging (the report is printed), 1 an error
    /// (bad arguments included; the message on stderr).
    #[command(allow_negative_numbers = true)]
    Solve {
        /// Matrix Market file.
        #[arg(long)]
        matrix: Option<String>,
        /// Generated problem NAME:N (poisson2d, poisson3d, fem2d, elasticity3d, convdiff3d, aniso2d,
        /// thermal2d, jump3d, randjump3d, stencil27, powerlaw, circuit), or a box grid NAME:NXxNY (poisson2d,
        /// aniso2d) / NAME:NXxNYxNZ (poisson3d).
        #[arg(long)]
        generate: Option<String>,
        /// Right-hand side: ones, a-ones (b = A 1, the solution is all ones), random or a Matrix
        /// Market vector file.
        #[arg(long, default_value = "ones")]
        rhs: String,
        /// cg, bicgstab or gmres.
        #[arg(long, default_value = "cg")]
        solver: String,
        /// GMRES restart length.
        #[arg(long, default_value_t = 30)]
        restart: usize,
        /// Right-hand sides solved at once: column 0 is --rhs, column c the same scaled row by
        /// row by 1 + 0.5 sin(0.37 (c + 1) i). CG and BiCGStab run them together (the products
        /// share each matrix read; classical recurrences), GMRES one after another; the report
        /// per column.
        #[arg(long, default_value_t = 1)]
        nrhs: usize,
        /// pipelined or classical.
        #[arg(long, default_value = "pipelined")]
        variant: String,
        /// Orthogonalization of the pipelined GMRES: dcgs2 (Arnoldi with delayed CGS2, 4
        /// kernels per step), cgs2 (Arnoldi, classical Gram-Schmidt twice, 6 kernels) or
        /// simpler-cgs (the paper's 4-kernel simpler GMRES, conditionally stable).
        #[arg(long, default_value = "dcgs2")]
        gmres_ortho: String,
        /// none, jacobi, point-block-jacobi, block-jacobi, bilu0, isai (block-ISAI of
        /// BILU(0)), ip (Incomplete Poisson), ip-matrix-free (IP of a generated stencil:
        /// poisson2d, poisson3d, aniso2d), fsai (static FSAI, SPD matrices), afsai
        /// (adaptive FSAI, SPD matrices), amg (smoothed-aggregation multigrid, one V-cycle;
        /// elliptic problems) or ilu (matching, scaling, ordering and ILU(0)/ILU(k)/ILUT, for
        /// matrices with zero or weak diagonals).
        #[arg(long, default_value = "none")]
        precond: String,
        /// Triangular solves of bilu0 / block-jacobi / ilu: auto (exact on a CPU or where the factors
        /// have few levels, else sweeps; the report says which ran and why), exact
        /// (level-scheduled, one launch per level) or sweeps:K (K block-Jacobi sweeps per
        /// factor).
        #[arg(long, default_value = "auto")]
        trisolve: String,
        /// Block size S of the block preconditioners (1..8; default: S of --format bsr:S,
        /// else 3 for elasticity3d, else 1).
        #[arg(long)]
        block_size: Option<usize>,
        /// Contiguous subdomains P of block-jacobi (couplings between them are dropped).
        #[arg(long, default_value_t = 1)]
        subdomains: usize,
        /// Where the factors of bilu0 / block-jacobi / isai are computed: host (exact, rayon) or
        /// sweeps:F (on the backend: the initial guess and F fixed-point sweeps of Chow and
        /// Patel's parallel ILU, one launch each; F >= the dependency depth is exact).
        #[arg(long, default_value = "host")]
        factorization: String,
        /// Pattern level k of isai: the inverses live on the patterns of (I+|L|)^k, (I+|U|)^k.
        #[arg(long, default_value_t = 1)]
        isai_level: usize,
        /// Scaling of ip: auto (the IP of D^-1/2 A D^-1/2, scaled back, where the diagonal
        /// varies: positive definite for 5-/7-point M-matrices, where the paper's form can be
        /// indefinite; the paper's form on a constant diagonal, where the two agree up to a
        /// factor), none (the paper's eq. (15)) or symmetric.
        #[arg(long, default_value = "auto")]
        ip_scaling: String,
        /// Coarsening of amg: sa (smoothed aggregation) or aggregation (plain, cheaper setup,
        /// more iterations).
        #[arg(long, default_value = "sa")]
        amg_coarsening: String,
        /// Smoother of amg: jacobi (damped), l1-jacobi or chebyshev:K (degree K, 1..4).
        #[arg(long, default_value = "jacobi")]
        amg_smoother: String,
        /// Smoothing sweeps of amg before and after the coarse correction (the same number
        /// keeps the cycle symmetric, for CG).
        #[arg(long, default_value_t = 1)]
        amg_sweeps: usize,
        /// Strength threshold of amg's aggregation on the finest level.
        #[arg(long, default_value_t = 0.05)]
        amg_strength: f64,
        /// Factor of amg's strength threshold from one level to the next coarser one, in
        /// (0, 1] (0.5: halved, as AMGCL does; 1 suits coefficient jumps).
        #[arg(long, default_value_t = 0.5)]
        amg_strength_decay: f64,
        /// Most levels of amg, the coarsest included.
        #[arg(long, default_value_t = 25)]
        amg_max_levels: usize,
        /// amg stops coarsening at this many rows and inverts that level (at most 4096).
        #[arg(long, default_value_t = 500)]
        amg_coarse_size: usize,
        /// Where amg is set up: auto (on the device for a GPU backend, block size 1), host
        /// (greedy aggregation, uploaded) or device (MIS-2 aggregation and SpGEMM kernels).
        #[arg(long, default_value = "auto")]
        amg_setup: String,
        /// Precision of amg's hierarchy: solve (the solve's) or f32 (levels stored and the
        /// cycle run in single precision inside a double-precision solve).
        #[arg(long, default_value = "solve")]
        amg_precision: String,
        /// Matching and scaling of ilu: auto (the maximum-product matching with its scalings
        /// where some row's diagonal is zero or below 0.1 of its row's largest entry), on, off
        /// or equilibrate (row and column scaling only).
        #[arg(long, default_value = "auto")]
        ilu_matching: String,
        /// Symmetric ordering of ilu after the matching: auto (amd after a matching, else rcm),
        /// none, rcm or amd (approximate minimum degree on the symmetrized pattern).
        #[arg(long, default_value = "auto")]
        ilu_ordering: String,
        /// ILU(k) with this level of fill for ilu (default: ILU(0) when it factors stably,
        /// else ILUT).
        #[arg(long)]
        ilu_fill: Option<usize>,
        /// ILUT drop tolerance of ilu, relative to each row's 2-norm (default 1e-4, as SciPy's
        /// spilu; giving it selects ILUT).
        #[arg(long)]
        ilu_drop: Option<f64>,
        /// ILUT fill factor of ilu: nnz(L + U) at most about this times nnz(A) (default 10,
        /// as SciPy's spilu; giving it selects ILUT).
        #[arg(long)]
        ilu_max_fill: Option<f64>,
        /// Replace tiny pivots of ilu by shifted values (counted in the report) instead of
        /// failing.
        #[arg(long)]
        ilu_shift: bool,
        /// Column pivoting of ilu's ILUT (ILUTP): a row pivots on its largest entry right of
        /// the diagonal when the diagonal is below this times it (0: never; SuperLU's 0.1).
        #[arg(long, default_value_t = pipekrylov::precond::ilu::DEFAULT_PIVOT_THRESHOLD)]
        ilu_pivot: f64,
        /// Pattern level k of fsai: G on the lower triangle of the pattern of A^k (1..4).
        #[arg(long, default_value_t = 1)]
        fsai_level: usize,
        /// Prefiltration of fsai: entries below tau sqrt(a_ii a_jj) leave the pattern.
        #[arg(long, default_value_t = 0.0)]
        fsai_tau: f64,
        /// Growth steps k_max of afsai (entries are added for at most this many steps).
        #[arg(long, default_value_t = 30)]
        afsai_max_steps: usize,
        /// Entries s added per growth step of afsai (1..8).
        #[arg(long, default_value_t = 1)]
        afsai_step_size: usize,
        /// Tolerance eps of afsai's stopping rule (see --afsai-stop).
        #[arg(long, default_value_t = 1e-3)]
        afsai_eps: f64,
        /// Stopping rule of afsai: ratio (a row stops when psi_k / psi_0 <= eps, [Bernaschi19] eq. 17)
        /// or step (when the last step reduced psi by a relative eps or less).
        #[arg(long, default_value = "ratio")]
        afsai_stop: String,
        /// At most this many rows per afsai growth launch (default: chosen from the memory the
        /// grown rows predict; the pattern is the same for any value).
        #[arg(long)]
        afsai_batch_rows: Option<usize>,
        /// Precision of the fsai/afsai setup: f64 (the solve's precision) or f32 (the factor
        /// is set up in single precision and cast to the solve precision on the device).
        #[arg(long, default_value = "f64")]
        fsai_setup_precision: String,
        /// CSR kernel of the fsai/afsai factors G and G^T: auto (chosen from their row
        /// lengths), vector, stream or stream-compact.
        #[arg(long, default_value = "auto")]
        fsai_kernel: String,
        /// auto, host, opencl or cuda (auto: CUDA, then an OpenCL GPU, then the host; the host
        /// for systems of at most 500 unknowns).
        #[arg(long, default_value = "auto")]
        backend: String,
        /// Execution of the pipelined solvers: auto (device-resident on a GPU, not with amg),
        /// sync (one transfer per iteration, as in the paper) or resident (scalars and stop
        /// test on the device; GMRES: each cycle's steps replayed as a CUDA graph).
        #[arg(long, default_value = "auto")]
        execution: String,
        /// f64 or f32.
        #[arg(long, default_value = "f64")]
        precision: String,
        /// Relative tolerance (w.r.t. ||b||; `--tol` is an alias).
        #[arg(long, alias = "tol", default_value_t = 1e-8)]
        rtol: f64,
        /// Absolute tolerance.
        #[arg(long, default_value_t = 0.0)]
        atol: f64,
        /// Maximum iterations (`--maxit` is an alias).
        #[arg(long, alias = "maxit", default_value_t = 10_000)]
        max_iter: usize,
        /// Device format: auto (chosen from the matrix's rows and blocks for the backend; the
        /// choice and its reason are in the output), csr, ell, sell, sell:C:SIGMA, bsr:S.
        #[arg(long, default_value = "auto")]
        format: String,
        /// One JSON object on stdout (under mpirun: rank 0 prints one object with the per-rank
        /// table; see docs/JSON.md).
        #[arg(long)]
        json: bool,
        /// Put the residual history (one norm per iteration, entry 0 the initial residual) in
        /// the --json object.
        #[arg(long)]
        history: bool,
        /// Write the solution to this Matrix Market vector file.
        #[arg(long)]
        output: Option<String>,
        /// Print the residual every K iterations on stderr, live, as the solver computes them
        /// (pipelined CG and BiCGStab then run synchronously; GMRES prints a cycle's steps at
        /// its end). Under mpirun, rank 0 prints them from its history after the solve.
        #[arg(long)]
        monitor: Option<usize>,
    },
    /// Per-iteration latency across system sizes.
    Bench {
        /// Comma-separated backends.
        #[arg(long, default_value = "host")]
        backends: String,
        /// Comma-separated solvers: cg, bicgstab, gmres (DCGS2, the default), gmres-cgs2,
        /// gmres-simpler (the paper's simpler GMRES with one CGS pass), or spmv (the product
        /// alone, against the floor of one SpMV: its achieved bandwidth is floor bytes / time).
        #[arg(long, default_value = "cg,bicgstab,gmres")]
        solvers: String,
        /// Comma-separated variants.
        #[arg(long, default_value = "pipelined")]
        variants: String,
        /// poisson2d, poisson3d, fem2d, elasticity3d, convdiff3d, aniso2d, thermal2d, jump3d,
        /// stencil27, powerlaw, circuit (their size ladder), NAME:N (one size, closest to N
        /// unknowns), a box grid NAME:NXxNY[xNZ] (poisson2d, aniso2d, poisson3d), or FILE.mtx.
        #[arg(long, default_value = "poisson2d")]
        problem: String,
        /// Smallest system of the ladder.
        #[arg(long, default_value_t = 0)]
        min_n: usize,
        /// Largest system of the ladder.
        #[arg(long, default_value_t = 5_000_000)]
        max_n: usize,
        /// CSV output file.
        #[arg(long)]
        out: Option<String>,
        /// SVG plot file.
        #[arg(long)]
        plot: Option<String>,
        /// f64 or f32.
        #[arg(long, default_value = "f64")]
        precision: String,
        /// Timed solves per case.
        #[arg(long, default_value_t = 10)]
        repeats: usize,
        /// Untimed warm-up solves per case.
        #[arg(long, default_value_t = 2)]
        warmup: usize,
        /// Iterations per solve.
        #[arg(long, default_value_t = 30)]
        iterations: usize,
        /// GMRES restart.
        #[arg(long, default_value_t = 30)]
        restart: usize,
        /// Device format: csr, ell, sell, sell:C:SIGMA, bsr:S, or auto (each matrix in the
        /// format `solve --format auto` would pick; the CSV's format column says which).
        #[arg(long, default_value = "csr")]
        format: String,
        /// Comma-separated execution modes of the pipelined solvers: auto, sync, resident (e.g.
        /// "sync,resident" for both side by side; the classical variants run synchronously).
        #[arg(long, default_value = "auto")]
        executions: String,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Write a matrix as Matrix Market, or as raw binary CSR (`--raw`, read by the cuSPARSE
    /// reference `benches/cusparse_spmv.cu`).
    Export {
        /// Matrix Market file.
        #[arg(long)]
        matrix: Option<String>,
        /// Generated problem NAME:N (as for `solve`).
        #[arg(long)]
        generate: Option<String>,
        /// Output file.
        #[arg(long)]
        out: String,
        /// Raw binary CSR instead of Matrix Market.
        #[arg(long)]
        raw: bool,
    },
    /// Draw the SVG plot of a CSV written by `bench`.
    Plot {
        /// CSV file from `bench --out`.
        #[arg(long)]
        csv: String,
        /// SVG output file.
        #[arg(long)]
        out: String,
        /// Plot title.
        #[arg(long, default_value = "pipekrylov: seconds per iteration")]
        title: String,
    },
    /// Compiled-in backends, their devices, and why a backend is unavailable.
    Info {
        /// Also measure copy bandwidth and launch latencies.
        #[arg(long)]
        probe: bool,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

fn precision(s: &str) -> Result<Precision, Error> {
    match s {
        "f64" => Ok(Precision::F64),
        "f32" => Ok(Precision::F32),
        _ => Err(Error::param("precision", format!("'{s}' (f64 or f32)"))),
    }
}

fn list<T: std::str::FromStr<Err = Error>>(s: &str) -> Result<Vec<T>, Error> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| t.trim().parse())
        .collect()
}

fn run(cli: Cli) -> Result<i32, Error> {
    let tune = cli.tune;
    match cli.command {
        Command::Solve {
            matrix,
            generate,
            rhs,
            solver,
            restart,
            nrhs,
            variant,
            gmres_ortho,
            precond,
            trisolve,
            block_size,
            subdomains,
            factorization,
            isai_level,
            ip_scaling,
            amg_coarsening,
            amg_smoother,
            amg_sweeps,
            amg_strength,
            amg_strength_decay,
            amg_max_levels,
            amg_coarse_size,
            amg_setup,
            amg_precision,
            ilu_matching,
            ilu_ordering,
            ilu_fill,
            ilu_drop,
            ilu_max_fill,
            ilu_shift,
            ilu_pivot,
            fsai_level,
            fsai_tau,
            afsai_max_steps,
            afsai_step_size,
            afsai_eps,
            afsai_stop,
            afsai_batch_rows,
            fsai_setup_precision,
            fsai_kernel,
            backend,
            execution,
            precision: prec,
            rtol,
            atol,
            max_iter,
            format,
            json,
            history,
            output,
            monitor,
        } => {
            let setup_in_f32 = precision(&fsai_setup_precision)? == Precision::F32;
            let args = solve::SolveArgs {
                matrix,
                generate,
                rhs,
                solver,
                restart,
                nrhs,
                variant: variant.parse::<Variant>()?,
                gmres_ortho: gmres_ortho.parse::<GmresOrthogonalization>()?,
                precond: precond.parse::<PrecondKind>()?,
                trisolve: trisolve.parse::<TriangularSolve>()?,
                block_size,
                subdomains,
                factorization: factorization.parse::<Factorization>()?,
                isai_level,
                ip_scaling: ip_scaling.parse()?,
                amg: pipekrylov::precond::AmgOptions {
                    coarsening: amg_coarsening.parse()?,
                    smoother: amg_smoother.parse()?,
                    pre_sweeps: amg_sweeps,
                    post_sweeps: amg_sweeps,
                    strength: amg_strength,
                    strength_decay: amg_strength_decay,
                    max_levels: amg_max_levels,
                    coarse_size: amg_coarse_size,
                    setup: amg_setup.parse()?,
                    precision: amg_precision.parse()?,
                    ..pipekrylov::precond::AmgOptions::default()
                },
                fsai: pipekrylov::precond::FsaiOptions {
                    level: fsai_level,
                    tau: fsai_tau,
                    setup_in_f32,
                },
                afsai: pipekrylov::precond::AfsaiOptions {
                    growth: pipekrylov::backend::AfsaiGrowth {
                        max_steps: afsai_max_steps,
                        per_step: afsai_step_size,
                        eps: afsai_eps,
                        stop: match afsai_stop.as_str() {
                            "ratio" => pipekrylov::backend::AfsaiStop::RatioToInitial,
                            "step" => pipekrylov::backend::AfsaiStop::StepReduction,
                            other => {
                                return Err(pipekrylov::Error::param(
                                    "afsai_stop",
                                    format!("{other:?} is not ratio or step"),
                                ))
                            }
                        },
                    },
                    setup_in_f32,
                    max_batch_rows: afsai_batch_rows,
                },
                fsai_kernel: fsai_kernel.parse()?,
                ilu: pipekrylov::precond::IluOptions {
                    matching: ilu_matching.parse()?,
                    ordering: ilu_ordering.parse()?,
                    fill_level: ilu_fill,
                    drop_tol: ilu_drop,
                    max_fill: ilu_max_fill,
                    shift: ilu_shift,
                    pivot_threshold: ilu_pivot,
                    ..pipekrylov::precond::IluOptions::default()
                },
                backend: backend.parse::<BackendChoice>()?,
                execution: execution.parse()?,
                precision: precision(&prec)?,
                rtol,
                atol,
                max_iter,
                format: format.parse()?,
                json,
                history,
                output,
                monitor,
                config: pipekrylov::cli::backend_config(&tune)?,
            };
            let mut notes = Vec::new();
            #[cfg(feature = "mpi")]
            if pipekrylov::cli::dist::under_mpi_launcher() {
                let result = pipekrylov::cli::dist::solve(&args, &mut notes);
                for n in &notes {
                    eprintln!("note: {n}");
                }
                let (code, text) = result?;
                if let Some(text) = text {
                    println!("{text}");
                }
                return Ok(code);
            }
            let result = solve::run(&args, &mut notes);
            for n in &notes {
                eprintln!("note: {n}");
            }
            let (code, text) = result?;
            println!("{text}");
            Ok(code)
        }
        Command::Bench {
            backends,
            solvers,
            variants,
            problem,
            min_n,
            max_n,
            out,
            plot,
            precision: prec,
            repeats,
            warmup,
            iterations,
            restart,
            format,
            executions,
            quiet,
        } => {
            let args = bench_cmd::BenchArgs {
                backends: list(&backends)?,
                solvers: solvers.split(',').map(|s| s.trim().to_string()).collect(),
                variants: list(&variants)?,
                problem,
                min_n,
                max_n,
                out,
                plot,
                precision: precision(&prec)?,
                case: CaseSpec {
                    repeats,
                    warmup,
                    iterations,
                    restart,
                    format: match format.parse()? {
                        FormatRequest::Fixed(f) => f,
                        FormatRequest::Auto => pipekrylov::backend::MatrixFormat::Csr,
                    },
                    execution: pipekrylov::solver::Execution::Auto,
                },
                auto_format: format == "auto",
                executions: list(&executions)?,
                quiet: quiet || !std::io::IsTerminal::is_terminal(&std::io::stderr()),
                config: pipekrylov::cli::backend_config(&tune)?,
            };
            for s in &args.solvers {
                if ![
                    "cg",
                    "bicgstab",
                    "gmres",
                    "gmres-cgs2",
                    "gmres-simpler",
                    "spmv",
                ]
                .contains(&s.as_str())
                {
                    return Err(Error::param("solvers", format!("unknown solver '{s}'")));
                }
            }
            #[cfg(feature = "mpi")]
            if pipekrylov::cli::dist::under_mpi_launcher() {
                if let Some(table) = pipekrylov::cli::dist::bench(&args)? {
                    println!("{table}");
                }
                return Ok(0);
            }
            println!("{}", bench_cmd::run(&args)?);
            Ok(0)
        }
        Command::Export {
            matrix,
            generate,
            out,
            raw,
        } => {
            let system = pipekrylov::cli::problem::load_matrix::<f64>(
                matrix.as_deref(),
                generate.as_deref(),
            )?;
            pipekrylov::cli::export::run(&system.matrix, &out, raw)?;
            Ok(0)
        }
        Command::Plot { csv, out, title } => {
            let text = pipekrylov::matrix::matrix_market::read_text_file(&csv)?;
            let rows = pipekrylov::bench::read_csv(&text)?;
            pipekrylov::bench::plot::write_svg(&rows, std::path::Path::new(&out), &title)?;
            Ok(0)
        }
        Command::Info { probe, json } => {
            let config = pipekrylov::cli::backend_config(&tune)?;
            println!("{}", info::run(probe, json, &config)?);
            Ok(0)
        }
    }
}

fn main() {
    // Usage errors exit with 1 like every other error (clap's own code, 2, is "did not
    // converge" here); --help and --version print to stdout and exit with 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { EXIT_ERROR } else { 0 });
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_ERROR
        }
    };
    std::process::exit(code);
}
