//! Values-only refresh ([`ReusableSolver::update_values`]): a solver set up for A1 and given
//! A2's values (A1's pattern) solves exactly as a solver set up for A2 from scratch, for every
//! preconditioner (AMG and the FSAIs in `tests/integration/values_refresh_amg_fsai.rs`) and device format,
//! on the host and on OpenCL (PoCL in CI), on CUDA on the device. A new pattern, NaN values or
//! a numeric phase that fails are typed errors after which the solver still solves A1.

use pipekrylov::backend::{BackendChoice, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::matrix_market::read_csr;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{
    Bilu0Options, Factorization, IluOptions, IpOptions, IsaiOptions, PrecondKind, PrecondSpec,
    TriangularSolve,
};
use pipekrylov::{Error, Method, ReusableSolver, Solution};

/// 2D Poisson on a 24 x 24 grid (SPD, an M-matrix).
fn symmetric() -> CsrMatrix<f64> {
    Generator::Poisson2d
        .generate_with_param::<f64>(24)
        .unwrap()
        .matrix
}

/// 3D convection-diffusion on an 8^3 grid (nonsymmetric).
fn nonsymmetric() -> CsrMatrix<f64> {
    Generator::ConvDiff3d
        .generate_with_param::<f64>(8)
        .unwrap()
        .matrix
}

/// A new time step's values on `a`'s pattern: W A W (symmetric, off-diagonal signs kept) or
/// W A (rows scaled), W = diag(1 + 0.5 sin i), plus a shift of the diagonal by 0.1 |a_ii|.
fn new_values(a: &CsrMatrix<f64>, symmetric: bool) -> CsrMatrix<f64> {
    let w = |i: usize| 1.0 + 0.5 * (i as f64).sin();
    let mut b = a.clone();
    let rp = a.row_ptr().to_vec();
    let ci = a.col_idx().to_vec();
    let v = b.values_mut();
    for i in 0..a.n_rows() {
        for p in rp[i]..rp[i + 1] {
            let j = ci[p];
            let scale = if symmetric { w(i) * w(j) } else { w(i) };
            v[p] *= scale;
            if i == j {
                v[p] *= 1.1;
            }
        }
    }
    b
}

/// `a` with the diagonal entry of `row` set to zero (same pattern).
fn zero_pivot(a: &CsrMatrix<f64>, row: usize) -> CsrMatrix<f64> {
    let mut b = a.clone();
    let (rp, ci) = (a.row_ptr().to_vec(), a.col_idx().to_vec());
    let p = (rp[row]..rp[row + 1]).find(|&p| ci[p] == row).unwrap();
    b.values_mut()[p] = 0.0;
    b
}

/// One case: how the solver is set up.
struct Case {
    label: &'static str,
    method: Method,
    symmetric: bool,
    spec: PrecondSpec,
    format: MatrixFormat,
}

fn spec(kind: PrecondKind) -> PrecondSpec {
    PrecondSpec::from(kind)
}

fn cases() -> Vec<Case> {
    let case = |label, method, symmetric, spec, format| Case {
        label,
        method,
        symmetric,
        spec,
        format,
    };
    let csr = MatrixFormat::Csr;
    let sell = MatrixFormat::Sell { c: 8, sigma: 32 };
    vec![
        case("none", Method::Cg, true, spec(PrecondKind::None), csr),
        case("jacobi", Method::Cg, true, spec(PrecondKind::Jacobi), csr),
        case(
            "jacobi sell",
            Method::Cg,
            true,
            spec(PrecondKind::Jacobi),
            sell,
        ),
        case(
            "jacobi bsr",
            Method::Cg,
            true,
            spec(PrecondKind::Jacobi),
            MatrixFormat::Bsr { block_size: 2 },
        ),
        case(
            "point-block-jacobi",
            Method::Cg,
            true,
            PrecondSpec::PointBlockJacobi { block_size: 2 },
            csr,
        ),
        case(
            "block-jacobi",
            Method::BiCgStab,
            false,
            PrecondSpec::BlockJacobi(Bilu0Options {
                subdomains: 4,
                ..Bilu0Options::default()
            }),
            csr,
        ),
        case(
            "bilu0 host exact",
            Method::Gmres,
            false,
            PrecondSpec::Bilu0(Bilu0Options {
                solve: TriangularSolve::Exact,
                ..Bilu0Options::default()
            }),
            csr,
        ),
        case(
            "bilu0 device sweeps",
            Method::BiCgStab,
            false,
            PrecondSpec::Bilu0(Bilu0Options {
                block_size: 2,
                factorization: Factorization::Sweeps(3),
                solve: TriangularSolve::Sweeps(3),
                ..Bilu0Options::default()
            }),
            csr,
        ),
        case(
            "isai",
            Method::Gmres,
            false,
            PrecondSpec::Isai(IsaiOptions {
                level: 2,
                ..IsaiOptions::default()
            }),
            csr,
        ),
        case("ip", Method::Cg, true, spec(PrecondKind::Ip), csr),
        case(
            "ip sell (host assembly)",
            Method::Cg,
            true,
            PrecondSpec::Ip(IpOptions {
                format: sell,
                ..IpOptions::default()
            }),
            sell,
        ),
        case(
            "ilu auto",
            Method::Gmres,
            false,
            spec(PrecondKind::Ilu),
            csr,
        ),
        case(
            "ilu(1)",
            Method::Gmres,
            false,
            PrecondSpec::Ilu(IluOptions {
                fill_level: Some(1),
                ..IluOptions::default()
            }),
            csr,
        ),
        case(
            "ilut",
            Method::BiCgStab,
            false,
            PrecondSpec::Ilu(IluOptions {
                drop_tol: Some(1e-3),
                ..IluOptions::default()
            }),
            csr,
        ),
    ]
}

fn build(backend: BackendChoice, a: &CsrMatrix<f64>, c: &Case) -> ReusableSolver<f64> {
    ReusableSolver::builder(a)
        .backend(backend)
        .method(c.method)
        .precond_spec(c.spec)
        .format(c.format)
        .rtol(1e-10)
        .max_iter(2000)
        .build()
        .unwrap_or_else(|e| panic!("{}: {e}", c.label))
}

/// `got` is `want` to rounding: the same iterations and stop, the solutions within 1e-10.
fn assert_same_solve(label: &str, got: &Solution<f64>, want: &Solution<f64>) {
    assert!(want.report.stop_reason.converged(), "{label}: {want:?}");
    assert_eq!(got.report.iterations, want.report.iterations, "{label}");
    assert_eq!(got.report.stop_reason, want.report.stop_reason, "{label}");
    let scale = want.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = got
        .x
        .iter()
        .zip(&want.x)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff <= 1e-10 * scale, "{label}: differs by {diff:e}");
}

/// Every case: refreshed = fresh on A2; the refreshed solve's true residual meets the
/// tolerance.
fn refreshed_solves_as_fresh(backend: BackendChoice) {
    for c in cases() {
        let a1 = if c.symmetric {
            symmetric()
        } else {
            nonsymmetric()
        };
        let a2 = new_values(&a1, c.symmetric);
        let b: Vec<f64> = (0..a1.n_rows()).map(|i| 1.0 + (i % 7) as f64).collect();
        let mut solver = build(backend, &a1, &c);
        let first = solver.solve(&b).unwrap();
        assert!(first.report.stop_reason.converged(), "{}", c.label);
        let update = solver
            .update_values(&a2)
            .unwrap_or_else(|e| panic!("{}: {e}", c.label));
        assert_eq!(
            update.precond.is_some(),
            c.spec.kind() != PrecondKind::None,
            "{}",
            c.label
        );
        let refreshed = solver.solve(&b).unwrap();
        let fresh = build(backend, &a2, &c).solve(&b).unwrap();
        assert_same_solve(c.label, &refreshed, &fresh);
        assert!(
            refreshed.report.relative_true_residual <= 1e-9,
            "{}: {:e}",
            c.label,
            refreshed.report.relative_true_residual
        );
        // Not the old system's solution any more.
        assert_ne!(refreshed.report.iterations, 0, "{}", c.label);
        let moved = refreshed
            .x
            .iter()
            .zip(&first.x)
            .any(|(a, b)| (a - b).abs() > 1e-6 * b.abs().max(1.0));
        assert!(moved, "{}: the solution did not change", c.label);
        // A second refresh (on what the first one kept: ISAI's symbolic factorization and
        // device arrays) is again a fresh setup's solve.
        let a3 = new_values(&a2, c.symmetric);
        solver
            .update_values(&a3)
            .unwrap_or_else(|e| panic!("{} (second refresh): {e}", c.label));
        let again = solver.solve(&b).unwrap();
        let fresh3 = build(backend, &a3, &c).solve(&b).unwrap();
        assert_same_solve(&format!("{} (second refresh)", c.label), &again, &fresh3);
        println!(
            "{}: {} its; refresh {:.2e} s (matrix {:.2e} s), kept: {}",
            c.label,
            refreshed.report.iterations,
            update.seconds,
            update.matrix_seconds,
            update.precond.map_or(String::new(), |p| p.kept)
        );
    }
}

/// A solver set up for `a1` (`c`) whose `update_values(bad)` fails with an error `expect`
/// accepts, and which afterwards solves A1's system as before, bit for bit.
fn rejected_update_leaves_the_solver(
    backend: BackendChoice,
    c: &Case,
    a1: &CsrMatrix<f64>,
    bad: &CsrMatrix<f64>,
    expect: fn(&Error) -> bool,
) {
    let b: Vec<f64> = (0..a1.n_rows()).map(|i| (i % 5) as f64 - 1.5).collect();
    let mut solver = build(backend, a1, c);
    let before = solver.solve(&b).unwrap();
    match solver.update_values(bad) {
        Err(e) if expect(&e) => {}
        other => panic!("{}: unexpected {other:?}", c.label),
    }
    let after = solver.solve(&b).unwrap();
    assert_eq!(
        before.report.iterations, after.report.iterations,
        "{}",
        c.label
    );
    assert!(
        before
            .x
            .iter()
            .zip(&after.x)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "{}: the solve changed",
        c.label
    );
    // Good new values after the rejected ones (written where the rejected ones were put
    // aside, on the host backend) solve as a fresh setup does; the matrix-free IP takes none.
    if matches!(c.spec, PrecondSpec::IpMatrixFree { .. }) {
        return;
    }
    let good = new_values(a1, c.symmetric);
    solver
        .update_values(&good)
        .unwrap_or_else(|e| panic!("{}: good values after a rejection: {e}", c.label));
    let fresh = build(backend, &good, c).solve(&b).unwrap();
    assert_same_solve(
        &format!("{} (after a rejection)", c.label),
        &solver.solve(&b).unwrap(),
        &fresh,
    );
}

fn rejected_updates(backend: BackendChoice) {
    let a1 = nonsymmetric();
    let bilu = Case {
        label: "bilu0",
        method: Method::Gmres,
        symmetric: false,
        spec: spec(PrecondKind::Bilu0),
        format: MatrixFormat::Csr,
    };
    // Another pattern: one entry more.
    let mut t = Vec::new();
    for i in 0..a1.n_rows() {
        let (cols, vals) = a1.row(i);
        t.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
    }
    let far = (0, a1.n_rows() - 1, -0.01);
    assert!(!a1.row(0).0.contains(&far.1));
    t.push(far);
    let wider = CsrMatrix::from_triplets(a1.n_rows(), a1.n_cols(), &t).unwrap();
    rejected_update_leaves_the_solver(backend, &bilu, &a1, &wider, |e| {
        matches!(e, Error::PatternMismatch(_))
    });
    // Another size.
    let small = Generator::ConvDiff3d
        .generate_with_param::<f64>(7)
        .unwrap()
        .matrix;
    rejected_update_leaves_the_solver(backend, &bilu, &a1, &small, |e| {
        matches!(e, Error::PatternMismatch(_))
    });
    // A NaN.
    let mut nan = a1.clone();
    nan.values_mut()[17] = f64::NAN;
    rejected_update_leaves_the_solver(backend, &bilu, &a1, &nan, |e| {
        matches!(e, Error::NonFinite { index: 17, .. })
    });
    // A zero pivot in the numeric phase (a host factorization: it runs before the device
    // matrix is written, which then keeps the old values; IP below runs after the write and
    // puts the old values back).
    let zero = zero_pivot(&a1, 0);
    rejected_update_leaves_the_solver(backend, &bilu, &a1, &zero, |e| {
        matches!(e, Error::SingularPivot { .. })
    });
    let jacobi = Case {
        label: "jacobi",
        spec: spec(PrecondKind::Jacobi),
        ..bilu
    };
    rejected_update_leaves_the_solver(backend, &jacobi, &a1, &zero, |e| {
        matches!(e, Error::PreconditionerSetup(_))
    });
    // IP off its domain (a positive off-diagonal entry).
    let p = symmetric();
    let mut positive = p.clone();
    positive.values_mut()[1] = 0.5;
    let ip = Case {
        label: "ip",
        method: Method::Cg,
        symmetric: true,
        spec: spec(PrecondKind::Ip),
        format: MatrixFormat::Csr,
    };
    rejected_update_leaves_the_solver(backend, &ip, &p, &positive, |e| {
        matches!(e, Error::NotApplicable { .. })
    });
    // The matrix-free IP is its stencil's.
    let stencil = Generator::Poisson2d.grid_stencil(24);
    let free = Case {
        label: "ip-matrix-free",
        spec: PrecondSpec::IpMatrixFree { stencil },
        ..ip
    };
    rejected_update_leaves_the_solver(backend, &free, &p, &new_values(&p, true), |e| {
        matches!(e, Error::NotApplicable { .. })
    });
}

/// A real matrix with zero diagonal entries: the kept matching and ordering serve new values
/// (rows scaled); GMRES(30) with the refreshed `ilu` reaches 1e-8 on A2.
fn matched_ilu_takes_new_values(backend: BackendChoice) {
    let a1 = read_csr::<f64>(format!(
        "{}/tests/data/rajat19.mtx",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let a2 = new_values(&a1, false);
    let mut solver = ReusableSolver::builder(&a1)
        .backend(backend)
        .method(Method::Gmres)
        .restart(30)
        .precond(PrecondKind::Ilu)
        .rtol(1e-8)
        .max_iter(3000)
        .build()
        .unwrap();
    let update = solver.update_values(&a2).unwrap();
    let kept = update.precond.unwrap().kept;
    assert!(kept.contains("matching"), "{kept}");
    let ones = vec![1.0; a2.n_rows()];
    let mut b = vec![0.0; a2.n_rows()];
    a2.mul_vec(&ones, &mut b).unwrap();
    let sol = solver.solve(&b).unwrap();
    assert!(sol.report.stop_reason.converged(), "{:?}", sol.report);
    assert!(
        sol.report.relative_true_residual <= 1e-7,
        "{:?}",
        sol.report
    );
    println!("rajat19 refreshed: {} its ({kept})", sol.report.iterations);
}

/// A device-resident solver (its batches recorded by the first solve) given new values between
/// two solves: the second solve runs device-resident too and equals a fresh resident solve.
#[cfg(any(feature = "opencl", feature = "cuda"))]
fn resident_refresh(backend: BackendChoice) {
    use pipekrylov::solver::Execution;
    for (method, precond) in [
        (Method::Cg, PrecondKind::Jacobi),
        (Method::BiCgStab, PrecondKind::Bilu0),
    ] {
        let a1 = if method == Method::Cg {
            symmetric()
        } else {
            nonsymmetric()
        };
        let a2 = new_values(&a1, method == Method::Cg);
        let build = |a: &CsrMatrix<f64>| {
            ReusableSolver::builder(a)
                .backend(backend)
                .method(method)
                .precond(precond)
                .execution(Execution::DeviceResident)
                .rtol(1e-10)
                .build()
                .unwrap()
        };
        let b = vec![1.0; a1.n_rows()];
        let mut solver = build(&a1);
        let first = solver.solve(&b).unwrap();
        assert_eq!(first.report.execution, Execution::DeviceResident);
        solver.update_values(&a2).unwrap();
        let refreshed = solver.solve(&b).unwrap();
        assert_eq!(refreshed.report.execution, Execution::DeviceResident);
        let fresh = build(&a2).solve(&b).unwrap();
        assert_same_solve(&format!("{method:?} resident"), &refreshed, &fresh);
    }
}

#[test]
fn host_refreshed_solves_as_fresh() {
    refreshed_solves_as_fresh(BackendChoice::Host);
}

#[test]
fn host_rejected_updates_leave_the_solver() {
    rejected_updates(BackendChoice::Host);
}

#[test]
fn host_matched_ilu_takes_new_values() {
    matched_ilu_takes_new_values(BackendChoice::Host);
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;

    #[test]
    fn opencl_refreshed_solves_as_fresh() {
        refreshed_solves_as_fresh(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_rejected_updates_leave_the_solver() {
        rejected_updates(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_matched_ilu_takes_new_values() {
        matched_ilu_takes_new_values(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_resident_solver_takes_new_values() {
        resident_refresh(BackendChoice::OpenCl);
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_refreshed_solves_as_fresh() {
        refreshed_solves_as_fresh(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_rejected_updates_leave_the_solver() {
        rejected_updates(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_matched_ilu_takes_new_values() {
        matched_ilu_takes_new_values(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_resident_solver_takes_new_values() {
        resident_refresh(BackendChoice::Cuda);
    }
}
