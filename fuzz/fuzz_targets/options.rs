//! The command line's options beyond `--generate`: every value a user types for `solve`
//! (format, preconditioner and its parameters, triangular solve, execution, variant, GMRES
//! orthogonalization, method, backend name) parsed from arbitrary text and, where it parses,
//! used on a small SPD matrix on the host: the format conversion and the preconditioner setup
//! must return a value or a typed error, never panic, abort or run away (libFuzzer's
//! -rss_limit_mb and -timeout catch those).
//!
//! Input: newline-separated fields: format, precond, trisolve, execution, variant, ortho, method,
//! backend, then the numbers block size, subdomains, isai level, fsai level, fsai tau, afsai max
//! steps, afsai step size, afsai eps, afsai stop (ratio|step), then the BILU(0) factorization
//! (host|sweeps:F, F capped at 64) and the FSAI factors' CSR kernel (auto|vector|stream|
//! stream-compact), then the IP scaling (auto|none|symmetric) and AMG's coarsening (sa|aggregation),
//! smoother (jacobi|l1-jacobi|chebyshev:K), sweeps, strength, max levels, coarse size and strength decay.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{
    AfsaiGrowth, AfsaiStop, BackendChoice, CsrKernel, MatrixFormat, SpmvOps,
};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{self, AfsaiOptions, FsaiOptions, PrecondKind, PrecondSpec};
use pipekrylov::solver::{Execution, GmresOrthogonalization, Variant};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let fields: Vec<&str> = text.split('\n').collect();
    let field = |k: usize| fields.get(k).copied().unwrap_or("");
    let format = field(0).parse::<MatrixFormat>();
    let kind = field(1).parse::<PrecondKind>();
    let solve = field(2).parse::<precond::TriangularSolve>();
    let _ = field(3).parse::<Execution>();
    let _ = field(4).parse::<Variant>();
    let _ = field(5).parse::<GmresOrthogonalization>();
    let _ = field(6).parse::<pipekrylov::Method>();
    let _ = field(7).parse::<BackendChoice>();
    // Sizes bounded so that one input stays cheap; the parameter checks see any value below.
    let int = |k: usize, cap: usize| field(k).trim().parse::<usize>().ok().map(|v| v.min(cap));
    let real = |k: usize| field(k).trim().parse::<f64>().ok();
    let (block_size, subdomains, isai_level, fsai_level) =
        (int(8, 64), int(9, 64), int(10, 8), int(11, 8));
    let (fsai_tau, afsai_steps, afsai_size, afsai_eps) =
        (real(12), int(13, 64), int(14, 16), real(15));
    let factorization = match field(17).parse::<precond::Factorization>() {
        Ok(precond::Factorization::Sweeps(f)) => precond::Factorization::Sweeps(f.min(64)),
        _ => precond::Factorization::Host,
    };
    let fsai_kernel = field(18).parse::<CsrKernel>().unwrap_or(CsrKernel::Auto);
    let ip_scaling = field(19).parse::<precond::IpScaling>().unwrap_or_default();
    let defaults = precond::AmgOptions::default();
    let sweeps = int(22, 4).unwrap_or(1);
    let amg = precond::AmgOptions {
        coarsening: field(20).parse().unwrap_or(defaults.coarsening),
        smoother: field(21).parse().unwrap_or(defaults.smoother),
        pre_sweeps: sweeps,
        post_sweeps: sweeps,
        strength: real(23).unwrap_or(defaults.strength),
        strength_decay: real(26).unwrap_or(defaults.strength_decay),
        max_levels: int(24, 32).unwrap_or(defaults.max_levels),
        coarse_size: int(25, 8192).unwrap_or(defaults.coarse_size),
        ..defaults
    };
    let stop = if field(16).trim() == "step" {
        AfsaiStop::StepReduction
    } else {
        AfsaiStop::RatioToInitial
    };

    // 2D Poisson on a 7 x 7 grid (49 unknowns, SPD): small enough for every setup.
    let a = Generator::Poisson2d
        .generate_with_param::<f64>(7)
        .expect("the fixed test matrix")
        .matrix;
    let host = HostBackend::new();
    if let Ok(fmt) = format {
        let _ = host.upload_matrix(&a, fmt);
    }
    let Ok(kind) = kind else {
        return;
    };
    let block_size = block_size.unwrap_or(1);
    let solve = solve.unwrap_or(precond::TriangularSolve::Exact);
    let bilu0 = precond::Bilu0Options {
        block_size,
        solve,
        subdomains: subdomains.unwrap_or(1),
        factorization,
    };
    let fsai = FsaiOptions {
        level: fsai_level.unwrap_or(1),
        tau: fsai_tau.unwrap_or(0.0),
        setup_in_f32: false,
    };
    let afsai = AfsaiOptions {
        growth: AfsaiGrowth {
            max_steps: afsai_steps.unwrap_or(30),
            per_step: afsai_size.unwrap_or(1),
            eps: afsai_eps.unwrap_or(1e-3),
            stop,
        },
        setup_in_f32: false,
        max_batch_rows: None,
    };
    let spec = match kind {
        PrecondKind::PointBlockJacobi => PrecondSpec::PointBlockJacobi { block_size },
        PrecondKind::BlockJacobi => PrecondSpec::BlockJacobi(bilu0),
        PrecondKind::Bilu0 => PrecondSpec::Bilu0(bilu0),
        PrecondKind::Isai => PrecondSpec::Isai(precond::IsaiOptions {
            block_size,
            level: isai_level.unwrap_or(1),
            factorization,
        }),
        PrecondKind::Ip => PrecondSpec::Ip(precond::IpOptions {
            format: format.unwrap_or(MatrixFormat::Csr),
            scaling: ip_scaling,
        }),
        PrecondKind::Fsai => PrecondSpec::Fsai {
            options: fsai,
            factor_kernel: fsai_kernel,
        },
        PrecondKind::Afsai => PrecondSpec::Afsai {
            options: afsai,
            factor_kernel: fsai_kernel,
        },
        PrecondKind::Amg => PrecondSpec::Amg(precond::AmgOptions { block_size, ..amg }),
        PrecondKind::Ilu => PrecondSpec::Ilu(precond::IluOptions {
            solve,
            ..Default::default()
        }),
        other => PrecondSpec::from(other),
    };
    let _ = precond::build(&host, &a, spec);
});
