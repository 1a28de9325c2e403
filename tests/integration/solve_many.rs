//! Several right-hand sides at once (`ReusableSolver::solve_many`, `Cg::solve_many`): every
//! column equals its own single solve (the same iterations, the iterate to rounding), with the
//! products sharing the matrix reads (CSR, 1 to 11 columns: groups of 8 and a remainder) or not
//! (SELL), with and without a preconditioner; columns stop on their own tests (a zero
//! right-hand side at once, the others at their own iterations); bad input is a typed error. On
//! the host and on OpenCL (PoCL in CI), on CUDA on the device. CG, BiCGStab and classical GMRES
//! run the columns together (GMRES's restart cycles in lockstep); pipelined GMRES solves them one
//! after another, as its single solves.

use pipekrylov::backend::{BackendChoice, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::PrecondKind;
use pipekrylov::solver::{StopReason, Variant};
use pipekrylov::{Error, Method, ReusableSolver};

/// Right-hand side `c` of `n` rows: a different smooth-plus-oscillating vector per column.
fn rhs(n: usize, c: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 1.0 + ((i * (c + 1)) as f64 * 0.37).sin() + 0.1 * c as f64)
        .collect()
}

fn solver(
    a: &CsrMatrix<f64>,
    backend: BackendChoice,
    method: Method,
    precond: PrecondKind,
    format: MatrixFormat,
) -> ReusableSolver<f64> {
    ReusableSolver::builder(a)
        .backend(backend)
        .method(method)
        .precond(precond)
        .format(format)
        .variant(Variant::Classical)
        .rtol(1e-9)
        .build()
        .unwrap()
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

/// Every column of a block solve against its single solve.
fn columns_equal_single_solves(backend: BackendChoice) {
    let a = Generator::Poisson2d
        .generate_with_param::<f64>(30)
        .unwrap()
        .matrix;
    let n = a.n_rows();
    for (format, precond) in [
        (MatrixFormat::Csr, PrecondKind::None),
        (MatrixFormat::Csr, PrecondKind::Jacobi),
        (MatrixFormat::Csr, PrecondKind::Bilu0),
        (MatrixFormat::Sell { c: 32, sigma: 1 }, PrecondKind::Jacobi),
    ] {
        for k in [1, 3, 8, 11] {
            let mut s = solver(&a, backend, Method::Cg, precond, format);
            let columns: Vec<Vec<f64>> = (0..k).map(|c| rhs(n, c)).collect();
            let refs: Vec<&[f64]> = columns.iter().map(|c| &c[..]).collect();
            let many = s.solve_many(&refs).unwrap();
            assert_eq!(many.len(), k);
            for (c, got) in many.iter().enumerate() {
                let one = s.solve(&columns[c]).unwrap();
                let what = format!("{backend:?} {format:?} {precond:?} k = {k}, column {c}");
                assert!(
                    got.report.stop_reason.converged(),
                    "{what}: {:?}",
                    got.report.stop_reason
                );
                assert!(
                    got.report.iterations.abs_diff(one.report.iterations) <= 1,
                    "{what}: {} iterations, single solve {}",
                    got.report.iterations,
                    one.report.iterations
                );
                assert!(
                    got.report.relative_true_residual <= 1.1e-9,
                    "{what}: true residual {:.2e}",
                    got.report.relative_true_residual
                );
                let d = rel_diff(&got.x, &one.x);
                assert!(d <= 1e-8, "{what}: solutions differ by {d:.2e}");
                assert!(got
                    .report
                    .notes
                    .iter()
                    .any(|n| n.contains(&format!("one of {k} right-hand sides solved together"))));
            }
        }
    }
}

/// Columns stop on their own tests: a zero column at once, a column of A's 1 late or early.
fn columns_stop_on_their_own(backend: BackendChoice) {
    let a = Generator::Poisson2d
        .generate_with_param::<f64>(30)
        .unwrap()
        .matrix;
    let n = a.n_rows();
    let mut s = solver(
        &a,
        backend,
        Method::Cg,
        PrecondKind::None,
        MatrixFormat::Csr,
    );
    let zero = vec![0.0; n];
    // An eigenvector-rich column (every mode) and one of few modes: different counts.
    let rich = rhs(n, 5);
    let mut smooth = vec![0.0; n];
    a.mul_vec(&vec![1.0; n], &mut smooth).unwrap();
    let many = s.solve_many(&[&zero, &rich, &smooth]).unwrap();
    assert_eq!(many[0].report.iterations, 0, "{:?}", many[0].report);
    assert!(many[0].x.iter().all(|&v| v == 0.0));
    for (c, b) in [(1, &rich), (2, &smooth)] {
        let one = s.solve(b).unwrap();
        assert_eq!(
            many[c].report.iterations, one.report.iterations,
            "{backend:?} column {c}"
        );
        assert!(many[c].report.stop_reason.converged());
    }
    assert_ne!(many[1].report.iterations, many[2].report.iterations);
}

/// Bad input: a column of another length, a NaN; BiCGStab together and GMRES column by column.
fn bad_input_and_other_methods(backend: BackendChoice) {
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(8)
        .unwrap()
        .matrix;
    let n = a.n_rows();
    let mut s = solver(
        &a,
        backend,
        Method::Cg,
        PrecondKind::Jacobi,
        MatrixFormat::Csr,
    );
    let short = vec![1.0; n - 1];
    let good = rhs(n, 0);
    let r = s.solve_many(&[&good, &short]);
    assert!(matches!(r, Err(Error::DimensionMismatch { .. })), "{r:?}");
    let mut nan = rhs(n, 1);
    nan[7] = f64::NAN;
    let r = s.solve_many(&[&good, &nan]);
    assert!(matches!(r, Err(Error::NonFinite { .. })), "{r:?}");
    assert!(s.solve_many(&[]).unwrap().is_empty());
    // BiCGStab and GMRES run the columns together (9 columns: a group of 8 and one).
    for (method, precond) in [
        (Method::BiCgStab, PrecondKind::None),
        (Method::BiCgStab, PrecondKind::Bilu0),
        (Method::Gmres, PrecondKind::None),
        (Method::Gmres, PrecondKind::Jacobi),
    ] {
        let mut s = solver(&a, backend, method, precond, MatrixFormat::Csr);
        let cols: Vec<Vec<f64>> = (0..9).map(|c| rhs(n, c)).collect();
        let refs: Vec<&[f64]> = cols.iter().map(|c| &c[..]).collect();
        for (c, got) in s.solve_many(&refs).unwrap().iter().enumerate() {
            let one = s.solve(&cols[c]).unwrap();
            let what = format!("{backend:?} {method:?} {precond:?} column {c}");
            assert!(
                got.report.stop_reason.converged(),
                "{what}: {:?}",
                got.report
            );
            assert!(got.report.relative_true_residual <= 1.1e-9, "{what}");
            assert!(
                got.report.iterations.abs_diff(one.report.iterations) <= 1,
                "{what}: {} vs {}",
                got.report.iterations,
                one.report.iterations
            );
            assert!(rel_diff(&got.x, &one.x) <= 1e-7, "{what}");
            assert!(got
                .report
                .notes
                .iter()
                .any(|n| n.contains("solved together")));
            assert_ne!(got.report.stop_reason, StopReason::NanOrInf);
        }
    }
}

/// GMRES's columns in lockstep over several restart cycles (restart 5, classical): a zero column
/// stops at once, the others converge at their own cycles, each as its single solve; a column
/// that reaches the iteration limit stops there while the others go on. The pipelined variant
/// solves the columns one after another.
fn gmres_cycles_in_lockstep(backend: BackendChoice) {
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(8)
        .unwrap()
        .matrix;
    let n = a.n_rows();
    let build = |max_iter: usize| {
        ReusableSolver::builder(&a)
            .backend(backend)
            .method(Method::Gmres)
            .precond(PrecondKind::Jacobi)
            .variant(Variant::Classical)
            .restart(5)
            .max_iter(max_iter)
            .rtol(1e-9)
            .build()
            .unwrap()
    };
    let mut s = build(1000);
    let zero = vec![0.0; n];
    let rich = rhs(n, 5);
    let mut smooth = vec![0.0; n];
    a.mul_vec(&vec![1.0; n], &mut smooth).unwrap();
    let many = s.solve_many(&[&zero, &rich, &smooth]).unwrap();
    assert_eq!(many[0].report.iterations, 0, "{:?}", many[0].report);
    assert!(many[0].x.iter().all(|&v| v == 0.0));
    for (c, b) in [(1, &rich), (2, &smooth)] {
        let one = s.solve(b).unwrap();
        let what = format!("{backend:?} column {c}");
        assert!(many[c].report.stop_reason.converged(), "{what}");
        assert!(one.report.iterations > 10, "{what}: several cycles");
        assert!(
            many[c].report.iterations.abs_diff(one.report.iterations) <= 1,
            "{what}: {} vs {}",
            many[c].report.iterations,
            one.report.iterations
        );
        assert!(rel_diff(&many[c].x, &one.x) <= 1e-7, "{what}");
    }
    // An iteration limit between the columns' counts: the rich column stops at it (a cycle
    // of 5 cut to what is left), the smooth one converges first or also stops.
    let limit = (many[1].report.iterations + many[2].report.iterations) / 2;
    let mut s = build(limit);
    let capped = s.solve_many(&[&rich, &smooth]).unwrap();
    for (c, got) in capped.iter().enumerate() {
        let one = s.solve([&rich, &smooth][c]).unwrap();
        assert_eq!(
            got.report.stop_reason, one.report.stop_reason,
            "{backend:?} column {c}"
        );
        assert!(got.report.iterations <= limit);
        assert!(got.report.iterations.abs_diff(one.report.iterations) <= 1);
    }
    // The pipelined variant (the default): one after another, the single solves' bits.
    let mut s = ReusableSolver::builder(&a)
        .backend(backend)
        .method(Method::Gmres)
        .precond(PrecondKind::Jacobi)
        .restart(5)
        .rtol(1e-9)
        .build()
        .unwrap();
    let many = s.solve_many(&[&rich, &smooth]).unwrap();
    for (c, b) in [&rich, &smooth].into_iter().enumerate() {
        let one = s.solve(b).unwrap();
        assert_eq!(
            many[c].report.iterations, one.report.iterations,
            "{backend:?} column {c}"
        );
        assert_eq!(many[c].x, one.x, "{backend:?} column {c}");
        assert!(many[c]
            .report
            .notes
            .iter()
            .any(|n| n.contains("solved one after another")));
    }
}

#[test]
fn host_gmres_cycles_in_lockstep() {
    gmres_cycles_in_lockstep(BackendChoice::Host);
}

#[test]
fn host_columns_equal_single_solves() {
    columns_equal_single_solves(BackendChoice::Host);
}

#[test]
fn host_columns_stop_on_their_own() {
    columns_stop_on_their_own(BackendChoice::Host);
}

#[test]
fn host_bad_input_and_other_methods() {
    bad_input_and_other_methods(BackendChoice::Host);
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;

    #[test]
    fn opencl_columns_equal_single_solves() {
        columns_equal_single_solves(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_columns_stop_on_their_own() {
        columns_stop_on_their_own(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_bad_input_and_other_methods() {
        bad_input_and_other_methods(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_gmres_cycles_in_lockstep() {
        gmres_cycles_in_lockstep(BackendChoice::OpenCl);
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_columns_equal_single_solves() {
        columns_equal_single_solves(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_columns_stop_on_their_own() {
        columns_stop_on_their_own(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_bad_input_and_other_methods() {
        bad_input_and_other_methods(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_gmres_cycles_in_lockstep() {
        gmres_cycles_in_lockstep(BackendChoice::Cuda);
    }
}
