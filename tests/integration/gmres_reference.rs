//! GMRES against a trusted reference on badly scaled matrices: the classical variant (textbook
//! Arnoldi with modified Gram-Schmidt and Givens rotations) and the pipelined Arnoldi forms
//! (delayed CGS2, the default, and CGS2) need at most 1.1x the iterations SciPy's GMRES(30) needed (stored in
//! `tests/data/README.md`, computed by `scripts/scaled-matrices.py`), and reach the tolerance in
//! the true residual, on every backend.

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::matrix_market::read_csr;
use pipekrylov::precond::Jacobi;
use pipekrylov::precond::Preconditioner;
use pipekrylov::solver::{Gmres, GmresOrthogonalization, Params, Variant};

/// (file, right-preconditioned by Jacobi, SciPy GMRES(30) iterations to 1e-8)
const CASES: &[(&str, bool, usize)] = &[
    ("cd12_rows1e3", false, 581),
    ("cd12_rows1e4", false, 2712),
    ("cd12_cols1e9", true, 56),
];

fn within_reference<B: Backend + 'static>(b: &B) {
    for &(name, jacobi, reference) in CASES {
        let a = read_csr::<f64>(format!(
            "{}/tests/data/{name}.mtx",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let n = a.n_rows();
        let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let jac = Jacobi::new(b, &a).unwrap();
        let pc: Option<&dyn Preconditioner<B, f64>> = if jacobi { Some(&jac) } else { None };
        let rhs = b.upload(&vec![1.0; n]).unwrap();
        for (variant, ortho) in [
            (Variant::Classical, GmresOrthogonalization::Cgs2),
            (Variant::Pipelined, GmresOrthogonalization::Dcgs2),
            (Variant::Pipelined, GmresOrthogonalization::Cgs2),
        ] {
            let params = Params {
                rtol: 1e-8,
                max_iter: 2 * reference,
                gmres: pipekrylov::solver::GmresParams {
                    restart: 30,
                    orthogonalization: ortho,
                },
                variant,
                ..Params::default()
            };
            let mut x = b.alloc(n).unwrap();
            let r = Gmres::new(b, &m, pc, params)
                .unwrap()
                .solve(&rhs, &mut x)
                .unwrap();
            let what = format!("{}: {name} {variant} {ortho}", b.name());
            assert!(
                r.stop_reason.converged() && r.relative_true_residual <= 1.1e-8,
                "{what}: {} after {} iterations, true relative residual {:e}",
                r.stop_reason,
                r.iterations,
                r.relative_true_residual
            );
            assert!(
                r.iterations as f64 <= 1.1 * reference as f64,
                "{what}: {} iterations against SciPy's {reference}",
                r.iterations
            );
        }
    }
}

#[test]
fn host_gmres_within_the_scipy_reference() {
    within_reference(&HostBackend::new());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_gmres_within_the_scipy_reference() {
    let b = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    within_reference(&b);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_gmres_within_the_scipy_reference() {
    let b = pipekrylov::backend::cuda::CudaBackend::from_env().expect("an NVIDIA GPU");
    within_reference(&b);
}
