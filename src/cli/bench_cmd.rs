//! `pipekrylov bench`: sweep sizes x solvers x variants x backends, write CSV, plot, print a
//! markdown table.

use crate::backend::{AnyBackend, BackendChoice, BackendInfo, MatrixFormat};
use crate::bench::{
    ladder, markdown, plot, probe::probe, run_case, BenchRow, CaseSpec, CSV_HEADER,
};
use crate::error::{Error, Result};
use crate::matrix::generate::Generator;
use crate::matrix::{matrix_market, CsrMatrix};
use crate::scalar::{Precision, Scalar};
use crate::solver::Variant;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;

/// Arguments of `bench`.
#[derive(Debug, Clone)]
pub struct BenchArgs {
    /// Backends to run.
    pub backends: Vec<BackendChoice>,
    /// Solvers ("cg", "bicgstab", "gmres").
    pub solvers: Vec<String>,
    /// Variants.
    pub variants: Vec<Variant>,
    /// Generator name or a Matrix Market file.
    pub problem: String,
    /// Smallest n of the ladder.
    pub min_n: usize,
    /// Largest n of the ladder.
    pub max_n: usize,
    /// CSV output.
    pub out: Option<String>,
    /// SVG output.
    pub plot: Option<String>,
    /// Precision.
    pub precision: Precision,
    /// Per-case settings.
    pub case: CaseSpec,
    /// `--format auto`: each matrix in the format `choose_format` picks for the backend (then
    /// `case.format` is ignored; under MPI the blocks stay CSR).
    pub auto_format: bool,
    /// Execution modes of the pipelined variants to run (the classical ones: synchronous, once).
    pub executions: Vec<crate::solver::Execution>,
    /// No progress bar.
    pub quiet: bool,
    /// The backends' tuning and devices: the environment, then `--tune key=value`
    /// ([`super::backend_config`]).
    pub config: crate::backend::BackendConfig,
}

/// One case of `--problem`: a generator's name and size parameter, a generator's box grid, or a
/// Matrix Market file (name = path, parameter 0).
#[derive(Debug, Clone)]
pub(crate) struct BenchCase {
    /// Generator name or file path.
    pub name: String,
    /// The generator's size parameter (0 for files and grids).
    pub param: usize,
    /// The box grid of a `NAME:NXxNY[xNZ]` case.
    pub grid: Option<crate::matrix::generate::GridStencil>,
}

/// The cases of `--problem`: a generator's ladder between `--min-n` and `--max-n` (name and
/// size parameter), one size `NAME:N` (the size closest to N unknowns, e.g. `poisson3d:16777216`
/// for 256^3; the ladder limits do not apply), one box grid `NAME:NXxNY[xNZ]`, or one Matrix
/// Market file (parameter 0).
pub(crate) fn problems(args: &BenchArgs) -> Result<Vec<BenchCase>> {
    let case = |name: String, param| BenchCase {
        name,
        param,
        grid: None,
    };
    if let Some((g, grid)) = crate::matrix::generate::parse_grid_spec(&args.problem)? {
        return Ok(vec![BenchCase {
            grid: Some(grid),
            ..case(g.name().to_string(), 0)
        }]);
    }
    if args.problem.contains(':') {
        let (g, n) = crate::matrix::generate::parse_spec(&args.problem)?;
        return Ok(vec![case(g.name().to_string(), g.size_for(n))]);
    }
    Ok(match args.problem.parse::<Generator>() {
        Ok(g) => ladder(g, args.min_n, args.max_n)
            .into_iter()
            .map(|p| case(g.name().to_string(), p))
            .collect(),
        Err(_) if args.problem.ends_with(".mtx") => vec![case(args.problem.clone(), 0)],
        Err(e) => return Err(e),
    })
}

/// One case of [`problems`]: its label (generator name or file stem) and matrix.
pub(crate) fn load_case<T: Scalar>(case: &BenchCase) -> Result<(String, CsrMatrix<T>)> {
    let name = case.name.as_str();
    if let Some(grid) = &case.grid {
        return Ok((name.into(), grid.matrix()?));
    }
    Ok(match name.parse::<Generator>() {
        Ok(g) => (
            g.name().into(),
            g.generate_with_param::<T>(case.param)?.matrix,
        ),
        Err(_) => {
            let stem = std::path::Path::new(name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| name.into());
            (stem, matrix_market::read_csr::<T>(name)?)
        }
    })
}

/// Run the sweep; returns the markdown table.
pub fn run(args: &BenchArgs) -> Result<String> {
    let problems = problems(args)?;
    if problems.is_empty() {
        return Err(Error::param(
            "max-n",
            "no problem size in the requested range",
        ));
    }
    let mut out = match &args.out {
        Some(p) => {
            let mut f = std::fs::File::create(p).map_err(|e| io(p, e))?;
            writeln!(f, "{CSV_HEADER}").map_err(|e| io(p, e))?;
            Some((p.clone(), f))
        }
        None => None,
    };
    let total =
        (args.backends.len() * problems.len() * args.solvers.len() * args.variants.len()) as u64;
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if args.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    for choice in &args.backends {
        let (backend, _) = choice.create_with(&args.config)?;
        let bytes = if backend.name() == "host" {
            128 << 20
        } else {
            1 << 30
        };
        let bw = probe(&backend, bytes)?.copy_bandwidth;
        bar.println(format!(
            "{}: {} copy bandwidth {:.1} GB/s",
            backend.name(),
            backend.device_name(),
            bw / 1e9
        ));
        for case in &problems {
            match args.precision {
                Precision::F64 => {
                    sweep::<f64>(&backend, args, case, bw, &bar, &mut rows, &mut out)?
                }
                Precision::F32 => {
                    sweep::<f32>(&backend, args, case, bw, &bar, &mut rows, &mut out)?
                }
            }
        }
    }
    bar.finish_and_clear();
    if let Some(p) = &args.plot {
        let title = format!("pipekrylov: seconds per iteration, {}", args.problem);
        plot::write_svg(&rows, std::path::Path::new(p), &title)?;
    }
    Ok(markdown(&rows))
}

#[allow(clippy::too_many_arguments)]
fn sweep<T: Scalar>(
    backend: &AnyBackend,
    args: &BenchArgs,
    case: &BenchCase,
    bw: f64,
    bar: &ProgressBar,
    rows: &mut Vec<BenchRow>,
    out: &mut Option<(String, std::fs::File)>,
) -> Result<()> {
    let (label, a) = load_case::<T>(case)?;
    for solver in &args.solvers {
        for &variant in &args.variants {
            bar.set_message(format!(
                "{} {solver} {variant} {label} n={}",
                backend.name(),
                a.n_rows()
            ));
            let executions = if variant.is_pipelined() {
                args.executions.clone()
            } else {
                vec![crate::solver::Execution::Synchronous]
            };
            for execution in executions {
                let format = if args.auto_format {
                    crate::backend::format_choice::choose_format(&a, backend).format
                } else {
                    args.case.format
                };
                let case = CaseSpec {
                    execution,
                    format,
                    ..args.case
                };
                let row = run_case(backend, &a, &label, solver, variant, case, bw)?;
                if let Some((p, f)) = out.as_mut() {
                    writeln!(f, "{}", row.csv()).map_err(|e| io(p, e))?;
                }
                rows.push(row);
            }
            bar.inc(1);
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

/// Parse a `--format` value: csr, ell, sell (C = 32, sigma = 256), sell:C:SIGMA, bsr:S
/// ([`MatrixFormat`]'s `FromStr`).
pub fn parse_format(s: &str) -> Result<MatrixFormat> {
    s.parse()
}

#[cfg(test)]
mod format_tests {
    use super::parse_format;
    use crate::backend::MatrixFormat;

    #[test]
    fn formats_print_as_they_parse_and_without_commas() {
        for f in [
            MatrixFormat::Csr,
            MatrixFormat::Ell,
            MatrixFormat::Sell { c: 32, sigma: 256 },
            MatrixFormat::Bsr { block_size: 3 },
        ] {
            let s = f.to_string();
            assert!(!s.contains(','), "{s}");
            assert_eq!(parse_format(&s).unwrap(), f);
        }
    }
}
