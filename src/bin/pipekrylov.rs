//! `pipekrylov`: solve, benchmark and inspect backends from the command line.
//!
//! Exit codes: 0 converged (or command succeeded), 2 solve ended without converging (report
//! still printed), 1 error (message on stderr), usage errors included.

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use pipekrylov::backend::format_choice::FormatRequest;
use pipekrylov::backend::BackendChoice;
use pipekrylov::bench::CaseSpec;
use pipekrylov::cli::{bench_cmd, info, solve, EXIT_ERROR};
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
        /// share each matrix read; classical recurrences), GMRES too with --variant classical
        /// (its cycles in lockstep) and one after another otherwise (faster); the report per
        /// column.
        #[arg(long, default_value_t = 1)]
        nrhs: usize,
        /// auto (pipelined; classical for CG with AMG), pipelined or classical.
        #[arg(long, default_value = "auto")]
        variant: String,
        /// Orthogonalization of the pipelined GMRES: dcgs2 (Arnoldi with delayed CGS2, 4
        /// kernels per step), cgs2 (Arnoldi, classical Gram-Schmidt twice, 6 kernels) or
        /// simpler-cgs (the paper's 4-kernel simpler GMRES, conditionally stable).
        #[arg(long, default_value = "dcgs2")]
        gmres_ortho: String,
        #[command(flatten)]
        precond: pipekrylov::cli::precond_flags::PrecondFlags,
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
        /// gmres-simpler (the paper's simpler GMRES with one CGS pass), spmv (the product
        /// alone, against the floor of one SpMV: its achieved bandwidth is floor bytes / time)
        /// or spgemm (the device sparse product C = A A of a CSR matrix, one per sample: the
        /// kernels of AMG's Galerkin products; the CSV's iterations column holds C's nonzeros).
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

/// Run the command; `given` holds the clap ids of the subcommand's flags given on the command
/// line.
fn run(cli: Cli, given: &[String]) -> Result<i32, Error> {
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
            let args = solve::SolveArgs {
                matrix,
                generate,
                rhs,
                solver,
                restart,
                nrhs,
                variant: variant.parse::<Variant>()?,
                gmres_ortho: gmres_ortho.parse::<GmresOrthogonalization>()?,
                precond: {
                    precond.check_given(given)?;
                    precond.spec()?
                },
                block_size_given: precond.block_size_given(),
                precond_precision: precond.precond_precision,
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
                    "spgemm",
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
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Ok((Cli::from_arg_matches(&m)?, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { EXIT_ERROR } else { 0 });
        }
    };
    // The flags given on the command line (not defaulted), for `solve`'s check that each
    // preconditioner option belongs to the chosen preconditioner.
    let given: Vec<String> = matches
        .subcommand()
        .map(|(_, m)| {
            m.ids()
                .filter(|id| m.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| id.to_string())
                .collect()
        })
        .unwrap_or_default();
    let code = match run(cli, &given) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_ERROR
        }
    };
    std::process::exit(code);
}
