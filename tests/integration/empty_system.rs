//! One behaviour for n = 0 (issue 50 item 4): every solver with every preconditioner that
//! applies to a general matrix returns converged after 0 iterations with an empty x, on every
//! backend compiled in (host, and OpenCL on PoCL in CI).

use pipekrylov::backend::BackendChoice;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{PrecondKind, PrecondSpec};
use pipekrylov::{solve, Method, SolveOptions};

const KINDS: [PrecondKind; 9] = [
    PrecondKind::None,
    PrecondKind::Jacobi,
    PrecondKind::PointBlockJacobi,
    PrecondKind::BlockJacobi,
    PrecondKind::Bilu0,
    PrecondKind::Isai,
    PrecondKind::Ip,
    PrecondKind::Fsai,
    PrecondKind::Afsai,
];

#[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(unused_mut))]
fn backends() -> Vec<BackendChoice> {
    let mut v = vec![BackendChoice::Host];
    #[cfg(feature = "opencl")]
    if BackendChoice::OpenCl.create().is_ok() {
        v.push(BackendChoice::OpenCl);
    }
    #[cfg(feature = "cuda")]
    if BackendChoice::Cuda.create().is_ok() {
        v.push(BackendChoice::Cuda);
    }
    v
}

#[test]
fn every_solver_and_preconditioner_converges_at_once_on_an_empty_system() {
    let a = CsrMatrix::<f64>::from_triplets(0, 0, &[]).unwrap();
    for backend in backends() {
        for method in [Method::Cg, Method::BiCgStab, Method::Gmres] {
            for kind in KINDS {
                let spec = PrecondSpec::from(kind);
                let opts = SolveOptions::default()
                    .method(method)
                    .precond_spec(spec)
                    .backend(backend);
                let sol = solve(&a, &[], &opts)
                    .unwrap_or_else(|e| panic!("{backend:?} {method:?} {kind}: {e}"));
                assert!(
                    sol.report.stop_reason.converged(),
                    "{backend:?} {method:?} {kind}: {}",
                    sol.report.stop_reason
                );
                assert_eq!(sol.report.iterations, 0, "{backend:?} {method:?} {kind}");
                assert!(sol.x.is_empty());
            }
        }
    }
}

/// The adaptive FSAI's errors name it, not the static FSAI.
#[test]
fn adaptive_fsai_errors_name_afsai() {
    // Not symmetric: outside the domain of both FSAIs.
    let a = CsrMatrix::<f64>::from_triplets(
        2,
        2,
        &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, -1.0), (1, 1, 2.0)],
    )
    .unwrap();
    for (kind, name) in [(PrecondKind::Fsai, "fsai"), (PrecondKind::Afsai, "afsai")] {
        let opts = SolveOptions::default()
            .method(Method::Cg)
            .precond(kind)
            .backend(BackendChoice::Host);
        let err = solve(&a, &[1.0, 1.0], &opts).unwrap_err();
        match &err {
            pipekrylov::Error::NotApplicable { preconditioner, .. } => {
                assert_eq!(preconditioner, name, "{err}")
            }
            other => panic!("{kind}: unexpected error {other}"),
        }
    }
}
