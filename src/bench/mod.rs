//! Latency benchmarks: per-iteration time across system sizes, with the memory-traffic floor
//! measured on the machine that runs them (the `bench` command of the CLI and the criterion
//! benches both use this module).
//!
//! Method (DESIGN.md, Benchmarks): a solver is set up once per case; after `warmup` solves,
//! `repeats` solves of exactly `iterations` iterations (tolerance 0) are timed; the time of the
//! iteration loop (device synchronized at its end) divided by the iterations gives one sample;
//! the CSV keeps the median, min and max sample.

pub mod floor;
#[cfg(feature = "cli")]
pub mod plot;
pub mod probe;

use crate::backend::{Backend, MatrixFormat};
use crate::error::{Error, Result};
use crate::matrix::generate::Generator;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use crate::solver::{
    BiCgStab, Cg, Gmres, GmresOrthogonalization, GmresParams, Params, SolveReport, Variant,
};

/// The CSV header (scripts depend on the first 15 columns). The floor (`floor_bytes_per_iter`,
/// `floor_s_per_iter`, `floor_ratio`) is the CSR traffic model's for every format, so formats
/// compete on one yardstick; `moved_bytes_per_iter` is what the iteration (or, for the `spmv`
/// pseudo-solver, the kernel) moves with the device layout that ran (padding, block fill,
/// 16-bit offsets; [`floor::moved_spmv_bytes`]), and `achieved_gb_per_s` those bytes over the
/// median time. Rows written before the `moved_bytes_per_iter` column measured the floor and
/// the bandwidth with the format's own bytes.
pub const CSV_HEADER: &str = "backend,device,solver,variant,precision,problem,n,nnz,median_s_per_iter,min_s_per_iter,max_s_per_iter,launches_per_iter,transfers_per_iter,floor_s_per_iter,floor_ratio,format,restart,floor_bytes_per_iter,copy_gb_per_s,execution,achieved_gb_per_s,kernel,moved_bytes_per_iter,iterations,stop";

/// One measured case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchRow {
    /// Backend name.
    pub backend: String,
    /// Device description.
    pub device: String,
    /// Solver name.
    pub solver: String,
    /// Pipelined or classical.
    pub variant: Variant,
    /// "f64" or "f32".
    pub precision: String,
    /// Problem name.
    pub problem: String,
    /// Unknowns.
    pub n: usize,
    /// Nonzeros.
    pub nnz: usize,
    /// Median seconds per iteration.
    pub median: f64,
    /// Fastest sample.
    pub min: f64,
    /// Slowest sample.
    pub max: f64,
    /// Kernel launches per iteration.
    pub launches: f64,
    /// Host transfers per iteration.
    pub transfers: f64,
    /// Floor: bytes per iteration / measured copy bandwidth.
    pub floor: f64,
    /// Bytes per iteration of the traffic model with CSR's SpMV (the yardstick of every format).
    pub floor_bytes: f64,
    /// Bytes per iteration the device layout that ran moves (see [`floor::moved_spmv_bytes`]).
    pub moved_bytes: f64,
    /// Measured copy bandwidth (bytes/s).
    pub copy_bandwidth: f64,
    /// Storage format.
    pub format: String,
    /// GMRES restart.
    pub restart: usize,
    /// How the iterations ran (`sync` or `resident`; empty in files from before the column).
    pub execution: String,
    /// The fused SpMV kernel ([`crate::backend::DeviceMatrix::spmv_kernel`]; empty in files
    /// from before the column).
    pub kernel: String,
    /// Iterations of the last timed solve (products per sample for `spmv`; 0 in files from
    /// before the column). Fewer than asked means the solve stopped early (see `stop`), and
    /// its fixed costs (the start, the final read, a device-resident batch's remainder) weigh
    /// on fewer iterations.
    pub iterations: usize,
    /// Why the last timed solve stopped (`max_iterations` when it ran them all; empty for
    /// `spmv` and in files from before the column).
    pub stop: String,
}

impl BenchRow {
    /// One CSV line matching [`CSV_HEADER`].
    pub fn csv(&self) -> String {
        format!(
            "{},\"{}\",{},{},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.3},{:.3},{:.6e},{:.3},{},{},{:.0},{:.1},{},{:.1},{},{:.0},{},{}",
            self.backend,
            self.device.replace('"', "'"),
            self.solver,
            self.variant,
            self.precision,
            self.problem,
            self.n,
            self.nnz,
            self.median,
            self.min,
            self.max,
            self.launches,
            self.transfers,
            self.floor,
            self.median / self.floor,
            self.format,
            self.restart,
            self.floor_bytes,
            self.copy_bandwidth / 1e9,
            self.execution,
            if self.median > 0.0 {
                self.moved_bytes / self.median / 1e9
            } else {
                0.0
            },
            self.kernel,
            self.moved_bytes,
            self.iterations,
            self.stop
        )
    }
}

/// What to run for one case.
#[derive(Debug, Clone, Copy)]
pub struct CaseSpec {
    /// Timed solves.
    pub repeats: usize,
    /// Untimed solves before.
    pub warmup: usize,
    /// Iterations per solve.
    pub iterations: usize,
    /// GMRES restart.
    pub restart: usize,
    /// Device format.
    pub format: MatrixFormat,
    /// Synchronous or device-resident iterations (pipelined variants).
    pub execution: crate::solver::Execution,
}

impl Default for CaseSpec {
    fn default() -> Self {
        Self {
            repeats: 10,
            warmup: 2,
            iterations: 30,
            restart: 30,
            format: MatrixFormat::Csr,
            execution: crate::solver::Execution::Auto,
        }
    }
}

/// The size ladder of a generated problem: the parameters up to `max_n` unknowns.
pub fn ladder(g: Generator, min_n: usize, max_n: usize) -> Vec<usize> {
    let params: Vec<usize> = match g {
        // k = 15, 31, ..., 2047 and 8 .. 160, as in the anchors.
        Generator::Poisson2d | Generator::Aniso2d | Generator::Thermal2d => {
            (4..=11).map(|j| (1usize << j) - 1).collect()
        }
        Generator::Poisson3d
        | Generator::ConvDiff3d
        | Generator::Jump3d
        | Generator::RandJump3d => {
            vec![8, 16, 32, 64, 128, 160]
        }
        Generator::Fem2d => (4..=11).collect(),
        Generator::Elasticity3d => vec![3, 5, 11, 23, 47],
        Generator::Stencil27 => vec![8, 16, 32, 64, 128, 160],
        Generator::Powerlaw | Generator::Circuit => (6..=11).map(|j| 1usize << (2 * j)).collect(),
    };
    params
        .into_iter()
        .filter(|&p| {
            let n = g.unknowns(p);
            n >= min_n && n <= max_n
        })
        .collect()
}

/// One solver of any kind, built once per benchmark case (one value per case: the size of the
/// variants does not matter).
#[allow(clippy::large_enum_variant)]
enum Solver<'a, B: Backend, T: Scalar> {
    Cg(Cg<'a, B, T>),
    BiCgStab(BiCgStab<'a, B, T>),
    Gmres(Gmres<'a, B, T>),
}

/// Time one (solver, variant) on one matrix.
#[allow(clippy::too_many_arguments)]
pub fn run_case<B: Backend, T: Scalar>(
    backend: &B,
    a: &CsrMatrix<T>,
    problem: &str,
    solver_name: &str,
    variant: Variant,
    spec: CaseSpec,
    copy_bandwidth: f64,
) -> Result<BenchRow> {
    let m = backend.upload_matrix(a, spec.format)?;
    run_uploaded(
        backend,
        &m,
        a.nnz(),
        problem,
        solver_name,
        variant,
        spec,
        copy_bandwidth,
    )
}

/// [`run_case`] on a matrix already on the backend (`nnz`: its stored nonzeros before any
/// format padding). With the distributed backend (feature `mpi`) `m` is one rank's rows and
/// the row describes this rank's share: its rows, nonzeros and traffic floor.
#[allow(clippy::too_many_arguments)]
pub fn run_uploaded<B: Backend, T: Scalar>(
    backend: &B,
    m: &crate::backend::DeviceMatrix<T>,
    nnz: usize,
    problem: &str,
    solver_name: &str,
    variant: Variant,
    spec: CaseSpec,
    copy_bandwidth: f64,
) -> Result<BenchRow> {
    if solver_name == "spmv" {
        return run_spmv(backend, m, nnz, problem, spec, copy_bandwidth);
    }
    if solver_name == "spgemm" {
        return run_spgemm(backend, m, problem, spec, copy_bandwidth);
    }
    let n = m.n_rows();
    let b = backend.upload(&vec![T::one(); n])?;
    let mut x = backend.alloc::<T>(n)?;
    let params = Params {
        rtol: 0.0,
        atol: 0.0,
        max_iter: spec.iterations,
        gmres: GmresParams {
            restart: spec.restart,
            ..GmresParams::default()
        },
        variant,
        execution: spec.execution,
        record_history: false,
        dtol: f64::MAX,
        ..Params::default()
    };
    let mut samples = Vec::with_capacity(spec.repeats);
    let mut last: Option<SolveReport> = None;
    // Set up once, solve many times: the timed loop sees no allocation.
    let mut solver = match solver_name {
        "cg" => Solver::Cg(Cg::new(backend, m, None, params)?),
        "bicgstab" => Solver::BiCgStab(BiCgStab::new(backend, m, None, params)?),
        "gmres" => Solver::Gmres(Gmres::new(backend, m, None, params)?),
        "gmres-cgs2" => {
            let params = Params {
                gmres: GmresParams {
                    orthogonalization: GmresOrthogonalization::Cgs2,
                    ..params.gmres
                },
                ..params
            };
            Solver::Gmres(Gmres::new(backend, m, None, params)?)
        }
        // The paper's simpler GMRES with one CGS pass, for comparison with the CGS2 default.
        "gmres-simpler" => {
            let params = Params {
                gmres: GmresParams {
                    orthogonalization: GmresOrthogonalization::SimplerCgs,
                    ..params.gmres
                },
                ..params
            };
            Solver::Gmres(Gmres::new(backend, m, None, params)?)
        }
        other => return Err(Error::param("solver", format!("unknown solver '{other}'"))),
    };
    let mut run = |x: &mut crate::backend::Buffer<T>| -> Result<SolveReport> {
        backend.fill(x, T::zero())?;
        match &mut solver {
            Solver::Cg(s) => s.solve(&b, x),
            Solver::BiCgStab(s) => s.solve(&b, x),
            Solver::Gmres(s) => s.solve(&b, x),
        }
    };
    for _ in 0..spec.warmup {
        run(&mut x)?;
    }
    for _ in 0..spec.repeats.max(1) {
        let r = run(&mut x)?;
        if r.iterations > 0 {
            samples.push(r.loop_seconds / r.iterations as f64);
        }
        last = Some(r);
    }
    let r = last.ok_or_else(|| Error::param("repeats", "no sample"))?;
    if samples.is_empty() {
        return Err(Error::param(
            "iterations",
            format!("{solver_name} stopped at iteration 0 ({})", r.stop_reason),
        ));
    }
    let scalar = std::mem::size_of::<T>();
    let spmv = floor::spmv_bytes(MatrixFormat::Csr, n, nnz, nnz, scalar);
    let bytes = floor::iteration_bytes(solver_name, spec.restart, spmv, n, scalar);
    let moved = floor::iteration_bytes(
        solver_name,
        spec.restart,
        floor::moved_spmv_bytes(m, nnz, scalar),
        n,
        scalar,
    );
    Ok(BenchRow {
        backend: backend.name().into(),
        device: backend.device_name(),
        solver: solver_name.into(),
        variant,
        precision: T::PRECISION.to_string(),
        problem: problem.into(),
        n,
        nnz,
        median: 0.0,
        min: 0.0,
        max: 0.0,
        launches: r.launches_per_iteration,
        transfers: r.transfers_per_iteration,
        floor: bytes / copy_bandwidth,
        floor_bytes: bytes,
        moved_bytes: moved,
        copy_bandwidth,
        format: spec.format.to_string(),
        restart: spec.restart,
        execution: r.execution.to_string(),
        kernel: m.spmv_kernel().into(),
        iterations: r.iterations,
        stop: r.stop_reason.to_string(),
    }
    .with_samples(samples))
}

/// The pseudo-solver `spmv`: one product y = A x per "iteration" (`iterations` back to back
/// per sample, the device synchronized before and after), against the floor of one CSR SpMV;
/// the kernel's achieved bandwidth is `moved_bytes / median`.
fn run_spmv<B: Backend, T: Scalar>(
    backend: &B,
    m: &crate::backend::DeviceMatrix<T>,
    nnz: usize,
    problem: &str,
    spec: CaseSpec,
    copy_bandwidth: f64,
) -> Result<BenchRow> {
    let n = m.n_rows();
    let x = backend.upload(&vec![T::one(); m.n_cols()])?;
    let mut y = backend.alloc::<T>(n)?;
    let per_sample = spec.iterations.max(1);
    for _ in 0..spec.warmup * per_sample {
        backend.spmv(m, &x, &mut y)?;
    }
    backend.synchronize()?;
    let mut samples = Vec::with_capacity(spec.repeats.max(1));
    let before = backend.counters();
    for _ in 0..spec.repeats.max(1) {
        let start = std::time::Instant::now();
        for _ in 0..per_sample {
            backend.spmv(m, &x, &mut y)?;
        }
        backend.synchronize()?;
        samples.push(start.elapsed().as_secs_f64() / per_sample as f64);
    }
    let counted = backend.counters() - before;
    let products = (spec.repeats.max(1) * per_sample) as f64;
    let scalar = std::mem::size_of::<T>();
    let bytes = floor::spmv_bytes(MatrixFormat::Csr, n, nnz, nnz, scalar);
    let moved = floor::moved_spmv_bytes(m, nnz, scalar);
    let kernel = KernelCase {
        name: "spmv",
        kernel: m.spmv_kernel(),
        bytes,
        moved,
        per_sample,
    };
    Ok(kernel
        .row::<_, T>(
            backend,
            problem,
            (n, nnz),
            counted,
            products,
            spec,
            copy_bandwidth,
        )
        .with_samples(samples))
}

/// The pseudo-solver `spgemm`: the device sparse product C = A A of a CSR matrix on one
/// process (symbolic and numeric phases, C allocated and dropped; the kernels of AMG's Galerkin
/// products), one product per sample, the device synchronized before and after. Its floor:
/// A's CSR arrays read twice and C's written (`moved_bytes` the same), so `floor / median` is
/// the fraction of the copy bandwidth reached; `iterations` holds C's nonzeros.
fn run_spgemm<B: Backend, T: Scalar>(
    backend: &B,
    m: &crate::backend::DeviceMatrix<T>,
    problem: &str,
    spec: CaseSpec,
    copy_bandwidth: f64,
) -> Result<BenchRow> {
    use crate::backend::ops::sparse::{spgemm, CsrRef};
    if m.ranks() != 1 {
        return Err(Error::param("solvers", "spgemm runs on one process"));
    }
    let a = CsrRef::of(m)?;
    for _ in 0..spec.warmup {
        drop(spgemm(backend, a, a)?);
    }
    backend.synchronize()?;
    let mut samples = Vec::with_capacity(spec.repeats.max(1));
    let mut c_nnz = 0;
    let before = backend.counters();
    for _ in 0..spec.repeats.max(1) {
        let start = std::time::Instant::now();
        let c = spgemm(backend, a, a)?;
        backend.synchronize()?;
        samples.push(start.elapsed().as_secs_f64());
        c_nnz = c.view().nnz();
    }
    let counted = backend.counters() - before;
    let products = spec.repeats.max(1) as f64;
    let (n, nnz) = (a.n_rows, a.nnz());
    let csr_bytes =
        |rows: usize, entries: usize| 4 * (rows + 1) + (4 + std::mem::size_of::<T>()) * entries;
    let bytes = (2 * csr_bytes(n, nnz) + csr_bytes(n, c_nnz)) as f64;
    let kernel = KernelCase {
        name: "spgemm",
        kernel: "spgemm",
        bytes,
        moved: bytes,
        per_sample: c_nnz,
    };
    Ok(kernel
        .row::<_, T>(
            backend,
            problem,
            (n, nnz),
            counted,
            products,
            spec,
            copy_bandwidth,
        )
        .with_samples(samples))
}

/// What a kernel pseudo-solver's row (`spmv`, `spgemm`) says beyond the common fields.
struct KernelCase<'k> {
    /// The pseudo-solver's name.
    name: &'static str,
    /// The kernel that ran.
    kernel: &'k str,
    /// Floor bytes of one sample's work.
    bytes: f64,
    /// Bytes the device layout moved.
    moved: f64,
    /// The row's `iterations` column (products per sample; C's nonzeros for `spgemm`).
    per_sample: usize,
}

impl KernelCase<'_> {
    /// The row of a kernel pseudo-solver (synchronous, `products` kernels timed, `counted` their
    /// launches and transfers); the samples are added by the caller.
    #[allow(clippy::too_many_arguments)]
    fn row<B: Backend, T: Scalar>(
        &self,
        backend: &B,
        problem: &str,
        (n, nnz): (usize, usize),
        counted: crate::backend::CounterSnapshot,
        products: f64,
        spec: CaseSpec,
        copy_bandwidth: f64,
    ) -> BenchRow {
        BenchRow {
            backend: backend.name().into(),
            device: backend.device_name(),
            solver: self.name.into(),
            variant: Variant::Pipelined,
            precision: T::PRECISION.to_string(),
            problem: problem.into(),
            n,
            nnz,
            median: 0.0,
            min: 0.0,
            max: 0.0,
            launches: counted.launches as f64 / products,
            transfers: counted.transfers as f64 / products,
            floor: self.bytes / copy_bandwidth,
            floor_bytes: self.bytes,
            moved_bytes: self.moved,
            copy_bandwidth,
            format: spec.format.to_string(),
            restart: spec.restart,
            execution: "sync".into(),
            kernel: self.kernel.into(),
            iterations: self.per_sample,
            stop: String::new(),
        }
    }
}

impl BenchRow {
    /// Median, min and max of the per-iteration samples (at least one).
    fn with_samples(mut self, mut samples: Vec<f64>) -> Self {
        samples.sort_by(|p, q| p.total_cmp(q));
        self.median = samples[samples.len() / 2];
        self.min = samples[0];
        self.max = samples[samples.len() - 1];
        self
    }
}

/// A markdown table of the rows (microseconds per iteration), for BENCHMARKS.md.
pub fn markdown(rows: &[BenchRow]) -> String {
    let mut s = String::from(
        "| backend | solver | variant | execution | problem | n | nnz | median us/iter | floor us/iter | x floor | launches | transfers |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} |\n",
            r.backend,
            r.solver,
            r.variant,
            r.execution,
            r.problem,
            r.n,
            r.nnz,
            r.median * 1e6,
            r.floor * 1e6,
            r.median / r.floor,
            r.launches,
            r.transfers
        ));
    }
    s
}

/// Split one CSV line (fields may be double-quoted and contain commas).
fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Read rows written by [`BenchRow::csv`] (for re-plotting committed results).
pub fn read_csv(text: &str) -> Result<Vec<BenchRow>> {
    let mut lines = text.lines().enumerate();
    let header = lines
        .next()
        .map(|(_, h)| split_csv(h))
        .ok_or_else(|| Error::param("csv", "empty file"))?;
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::param("csv", format!("missing column {name}")))
    };
    let idx: Vec<usize> = [
        "backend",
        "device",
        "solver",
        "variant",
        "precision",
        "problem",
        "n",
        "nnz",
        "median_s_per_iter",
        "min_s_per_iter",
        "max_s_per_iter",
        "launches_per_iter",
        "transfers_per_iter",
        "floor_s_per_iter",
    ]
    .iter()
    .map(|c| col(c))
    .collect::<Result<_>>()?;
    let mut rows = Vec::new();
    for (k, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line);
        let bad = |what: &str| Error::param("csv", format!("line {}: bad {what}", k + 1));
        let get = |i: usize| f.get(idx[i]).cloned().ok_or_else(|| bad("column count"));
        let num =
            |i: usize| -> Result<f64> { get(i)?.parse::<f64>().map_err(|_| bad(&header[idx[i]])) };
        let optional = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .and_then(|i| f.get(i).cloned())
                .unwrap_or_default()
        };
        rows.push(BenchRow {
            backend: get(0)?,
            device: get(1)?,
            solver: get(2)?,
            variant: get(3)?.parse()?,
            precision: get(4)?,
            problem: get(5)?,
            n: num(6)? as usize,
            nnz: num(7)? as usize,
            median: num(8)?,
            min: num(9)?,
            max: num(10)?,
            launches: num(11)?,
            transfers: num(12)?,
            floor: num(13)?,
            floor_bytes: 0.0,
            moved_bytes: optional("moved_bytes_per_iter").parse().unwrap_or(0.0),
            copy_bandwidth: 0.0,
            format: String::new(),
            restart: 0,
            execution: optional("execution"),
            kernel: optional("kernel"),
            iterations: optional("iterations").parse().unwrap_or(0),
            stop: optional("stop"),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `spgemm` pseudo-solver's row: C = A A's nonzeros (those of the host's product) in
    /// `iterations`, one sample per repeat.
    #[test]
    fn spgemm_row_counts_the_product() {
        let backend = crate::backend::host::HostBackend::new();
        let a = Generator::Poisson2d.generate::<f64>(400).unwrap().matrix;
        let want = crate::matrix::spgemm::spgemm(&a, &a).unwrap().nnz();
        let spec = CaseSpec {
            repeats: 2,
            warmup: 0,
            ..CaseSpec::default()
        };
        let row = run_case(
            &backend,
            &a,
            "poisson2d",
            "spgemm",
            Variant::Pipelined,
            spec,
            1e9,
        )
        .unwrap();
        assert_eq!((row.solver.as_str(), row.iterations), ("spgemm", want));
        assert!(row.median > 0.0 && row.floor_bytes > 0.0);
    }

    #[test]
    fn csv_round_trip() {
        let row = BenchRow {
            backend: "cuda".into(),
            device: "NVIDIA H200 (sm_90, 132 SMs)".into(),
            solver: "cg".into(),
            variant: Variant::Pipelined,
            precision: "f64".into(),
            problem: "poisson2d".into(),
            n: 225,
            nnz: 1065,
            median: 2.5e-5,
            min: 2.4e-5,
            max: 3.0e-5,
            launches: 2.0,
            transfers: 1.0,
            floor: 1e-7,
            floor_bytes: 1e4,
            moved_bytes: 9e3,
            copy_bandwidth: 4e12,
            format: "csr".into(),
            restart: 30,
            execution: "resident".into(),
            kernel: "spmv_dots_csr".into(),
            iterations: 71,
            stop: "breakdown_Rho".into(),
        };
        let text = format!("{CSV_HEADER}\n{}\n", row.csv());
        let back = read_csv(&text).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].device, row.device);
        assert_eq!((back[0].n, back[0].nnz), (225, 1065));
        assert!((back[0].median - row.median).abs() < 1e-12);
        assert_eq!(back[0].execution, "resident");
        assert_eq!(back[0].kernel, "spmv_dots_csr");
        assert_eq!(back[0].moved_bytes, 9e3);
        assert_eq!(
            (back[0].iterations, back[0].stop.as_str()),
            (71, "breakdown_Rho")
        );
        assert!(read_csv("backend,n\ncuda,1\n").is_err());
    }
}
