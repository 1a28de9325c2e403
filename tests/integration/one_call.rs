//! The one-call API `pipekrylov::solve`: every method and a few preconditioners on the host
//! backend (the answer checked against A x = b on the host), and its typed errors.

use pipekrylov::backend::BackendChoice;
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::PrecondKind;
use pipekrylov::{solve, Error, Method, SolveOptions};

#[test]
fn every_method_solves_and_returns_x() {
    let a = Generator::Poisson2d.generate::<f64>(2500).unwrap().matrix;
    let n = a.n_rows();
    let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    for (method, kind) in [
        (Method::Cg, PrecondKind::None),
        (Method::Cg, PrecondKind::Fsai),
        (Method::BiCgStab, PrecondKind::Jacobi),
        (Method::Gmres, PrecondKind::Bilu0),
        (Method::Gmres, PrecondKind::Ip),
    ] {
        let opts = SolveOptions::default()
            .method(method)
            .precond(kind)
            .rtol(1e-10)
            .backend(BackendChoice::Host);
        let s = solve(&a, &b, &opts).unwrap();
        assert!(s.report.stop_reason.converged(), "{method:?} {kind}");
        assert!(s.backend.starts_with("host"));
        // The returned x solves the system, checked on the host.
        let mut ax = vec![0.0; n];
        a.mul_vec(&s.x, &mut ax).unwrap();
        let res: f64 = ax
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q) * (p - q))
            .sum::<f64>()
            .sqrt();
        let bn: f64 = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(res / bn < 1e-9, "{method:?} {kind}: {}", res / bn);
    }
}

#[test]
fn one_call_errors_are_typed() {
    let a = Generator::Poisson2d.generate::<f64>(100).unwrap().matrix;
    let host = SolveOptions::default().backend(BackendChoice::Host);
    assert!(matches!(
        solve(&a, &[1.0; 3], &host),
        Err(Error::DimensionMismatch { .. })
    ));
    let rect = CsrMatrix::<f64>::from_triplets(2, 3, &[(0, 0, 1.0), (1, 1, 1.0)]).unwrap();
    assert!(matches!(
        solve(&rect, &[1.0; 2], &host),
        Err(Error::DimensionMismatch { .. })
    ));
    let cd = Generator::ConvDiff3d.generate::<f64>(1000).unwrap().matrix;
    let ip = host.precond(PrecondKind::Ip);
    assert!(matches!(
        solve(&cd, &vec![1.0; cd.n_rows()], &ip),
        Err(Error::NotApplicable { .. })
    ));
    assert!("lsqr".parse::<Method>().is_err());
    assert_eq!("bicgstab".parse::<Method>().unwrap(), Method::BiCgStab);
}

/// The reusable solver: set up once, many right-hand sides; each solve equals a one-call solve
/// of the same system, an exact initial guess converges at once, wrong lengths are typed errors.
#[test]
fn reusable_solver_matches_one_call_solves() {
    use pipekrylov::ReusableSolver;
    let a = Generator::ConvDiff3d.generate::<f64>(4096).unwrap().matrix;
    let n = a.n_rows();
    let opts = SolveOptions::default()
        .method(Method::BiCgStab)
        .precond(PrecondKind::Jacobi)
        .rtol(1e-10)
        .backend(BackendChoice::Host);
    let mut solver = ReusableSolver::builder(&a).options(opts).build().unwrap();
    for k in 0..3 {
        let b: Vec<f64> = (0..n).map(|i| ((i * (k + 3)) % 17) as f64 - 8.0).collect();
        let reused = solver.solve(&b).unwrap();
        let once = solve(&a, &b, &opts).unwrap();
        assert!(reused.report.stop_reason.converged());
        assert_eq!(reused.report.iterations, once.report.iterations, "rhs {k}");
        assert_eq!(reused.x, once.x, "rhs {k}");
        // Started from its own answer, the next solve has nothing left to do.
        let again = solver.solve_from(&b, &reused.x).unwrap();
        assert!(again.report.iterations <= 1, "{}", again.report.iterations);
    }
    assert!(matches!(
        solver.solve(&[1.0; 3]),
        Err(Error::DimensionMismatch { .. })
    ));
    assert!(matches!(
        solver.solve_from(&vec![1.0; n], &[0.0; 2]),
        Err(Error::DimensionMismatch { .. })
    ));
    let rect = CsrMatrix::<f64>::from_triplets(2, 3, &[(0, 0, 1.0)]).unwrap();
    assert!(matches!(
        ReusableSolver::builder(&rect).build(),
        Err(Error::DimensionMismatch { .. })
    ));
}
