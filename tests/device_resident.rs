//! Device-resident pipelined CG (issue 15) against the synchronous mode on every backend: the
//! same iteration count, stop reason, residual history (bit for bit), residual replacements and
//! solution (bit for bit), for convergence inside a batch, at iteration 0, at the iteration
//! limit, on an indefinite matrix, with residual replacements (f32 at a tight tolerance), with
//! Jacobi; a monitor forces the synchronous mode; the mode's transfer count.
//!
//! Host and OpenCL (PoCL in CI) run here; CUDA is `#[ignore]`d (run on the device with
//! `--include-ignored`).

mod common;

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{Jacobi, Preconditioner};
use pipekrylov::solver::{Cg, Execution, Params, Progress, SolveReport, StopReason};
use pipekrylov::Scalar;

struct Run<T> {
    report: SolveReport,
    x: Vec<T>,
}

fn run<B: Backend, T: Scalar>(
    be: &B,
    a: &CsrMatrix<T>,
    b: &[T],
    x0: Option<&[T]>,
    jacobi: bool,
    params: Params,
) -> Run<T> {
    let m = be.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let jac = Jacobi::new(be, a).unwrap();
    let pc = jacobi.then_some(&jac as &dyn Preconditioner<B, T>);
    let bb = be.upload(b).unwrap();
    let mut x = match x0 {
        Some(v) => be.upload(v).unwrap(),
        None => be.alloc(b.len()).unwrap(),
    };
    let mut cg = Cg::new(be, &m, pc, params).unwrap();
    let report = cg.solve(&bb, &mut x).unwrap();
    Run {
        report,
        x: be.download(&x).unwrap(),
    }
}

fn same<T: Scalar>(label: &str, sync: &Run<T>, res: &Run<T>) {
    let (s, r) = (&sync.report, &res.report);
    assert_eq!(s.execution, Execution::Synchronous, "{label}");
    assert_eq!(r.execution, Execution::DeviceResident, "{label}");
    assert_eq!(s.iterations, r.iterations, "{label}: iterations");
    assert_eq!(s.stop_reason, r.stop_reason, "{label}: stop reason");
    assert_eq!(
        s.residual_replacements, r.residual_replacements,
        "{label}: replacements"
    );
    assert_eq!(
        s.residual_history.len(),
        r.residual_history.len(),
        "{label}: history length"
    );
    for (k, (a, b)) in s
        .residual_history
        .iter()
        .zip(&r.residual_history)
        .enumerate()
    {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "{label}: residual {k}: {a:e} vs {b:e}"
        );
    }
    for (i, (a, b)) in sync.x.iter().zip(&res.x).enumerate() {
        assert_eq!(
            a.to_f64().to_bits(),
            b.to_f64().to_bits(),
            "{label}: x[{i}]"
        );
    }
}

fn both<B: Backend, T: Scalar>(
    be: &B,
    label: &str,
    a: &CsrMatrix<T>,
    b: &[T],
    x0: Option<&[T]>,
    jacobi: bool,
    params: Params,
) -> (Run<T>, Run<T>) {
    let sync = run(
        be,
        a,
        b,
        x0,
        jacobi,
        Params {
            execution: Execution::Synchronous,
            ..params
        },
    );
    let res = run(
        be,
        a,
        b,
        x0,
        jacobi,
        Params {
            execution: Execution::DeviceResident,
            ..params
        },
    );
    same(&format!("{} {label}", be.name()), &sync, &res);
    (sync, res)
}

fn resident_matches_sync<B: Backend>(be: &B) {
    let a = Generator::Poisson2d.generate::<f64>(4000).unwrap().matrix;
    let n = a.n_rows();
    let b: Vec<f64> = common::rand_vec(n, 3);
    // Converges inside a batch (batches of 4, 8, 16, 32, 64, 64, ...).
    let (s, _) = both(be, "poisson2d", &a, &b, None, false, Params::default());
    assert!(s.report.stop_reason.converged() && s.report.iterations > 40);
    // Jacobi on a matrix with a varying diagonal.
    let fem = Generator::Thermal2d.generate::<f64>(3000).unwrap().matrix;
    let bf: Vec<f64> = common::rand_vec(fem.n_rows(), 5);
    let (s, _) = both(
        be,
        "thermal2d jacobi",
        &fem,
        &bf,
        None,
        true,
        Params::default(),
    );
    assert!(s.report.stop_reason.converged());
    // The iteration limit, inside the first batches and at a batch boundary.
    for max_iter in [1, 3, 4, 12, 17] {
        let p = Params {
            max_iter,
            ..Params::default()
        };
        let (s, _) = both(be, &format!("max_iter {max_iter}"), &a, &b, None, false, p);
        assert_eq!(s.report.stop_reason, StopReason::MaxIterations);
    }
    // Iteration 0: the initial guess is the solution.
    let ones = vec![1.0; n];
    let mut ab = vec![0.0; n];
    a.mul_vec(&ones, &mut ab).unwrap();
    let (s, _) = both(
        be,
        "exact x0",
        &a,
        &ab,
        Some(&ones),
        false,
        Params::default(),
    );
    assert_eq!(s.report.iterations, 0);
    // An indefinite matrix: A - 4.5 I on 2D Poisson (eigenvalues on both sides of 0).
    let mut shifted = a.clone();
    for r in 0..n {
        let (cols, _) = shifted.row(r);
        let k = cols.iter().position(|&c| c == r).unwrap() + shifted.row_ptr()[r];
        shifted.values_mut()[k] -= 4.5;
    }
    let (s, _) = both(
        be,
        "indefinite",
        &shifted,
        &b,
        None,
        false,
        Params::default(),
    );
    assert!(
        !s.report.stop_reason.converged(),
        "{:?}",
        s.report.stop_reason
    );
    // Divergence bound: a tight dtol on the indefinite matrix.
    let p = Params {
        dtol: 1.01,
        ..Params::default()
    };
    both(be, "dtol", &shifted, &b, None, false, p);
    // Residual replacements: f32 to a tolerance near its attainable accuracy.
    let a32: CsrMatrix<f32> = a.cast();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let p = Params {
        rtol: 2e-7,
        ..Params::default()
    };
    let (s, _) = both(be, "f32 replacements", &a32, &b32, None, false, p);
    assert!(s.report.residual_replacements > 0 || s.report.stop_reason.converged());
    // A monitor forces the synchronous mode and sees every iteration.
    let m = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let bb = be.upload(&b).unwrap();
    let mut x = be.alloc::<f64>(n).unwrap();
    let mut cg = Cg::new(
        be,
        &m,
        None,
        Params {
            execution: Execution::DeviceResident,
            ..Params::default()
        },
    )
    .unwrap();
    let mut seen = 0;
    let mut monitor = |_: Progress| seen += 1;
    let r = cg
        .solve_with_monitor(&bb, &mut x, Some(&mut monitor))
        .unwrap();
    assert_eq!(r.execution, Execution::Synchronous);
    assert_eq!(seen, r.iterations + 1);
    // One solver, two solves into the same vector: the second replays the batches recorded by
    // the first (CUDA graphs) and must give the same result as the synchronous mode.
    let mut cg = Cg::new(
        be,
        &m,
        None,
        Params {
            execution: Execution::DeviceResident,
            ..Params::default()
        },
    )
    .unwrap();
    let mut x = be.alloc::<f64>(n).unwrap();
    let first = cg.solve(&bb, &mut x).unwrap();
    let x1 = be.download(&x).unwrap();
    be.fill(&mut x, 0.0).unwrap();
    let second = cg.solve(&bb, &mut x).unwrap();
    let x2 = be.download(&x).unwrap();
    let sync = run(
        be,
        &a,
        &b,
        None,
        false,
        Params {
            execution: Execution::Synchronous,
            ..Params::default()
        },
    );
    for r in [&first, &second] {
        same(
            &format!("{} replayed", be.name()),
            &sync,
            &Run {
                report: r.clone(),
                x: if std::ptr::eq(r, &first) {
                    x1.clone()
                } else {
                    x2.clone()
                },
            },
        );
    }
    // The transfers: one state write and one read per batch instead of one per iteration.
    let long = run(
        be,
        &a,
        &b,
        None,
        false,
        Params {
            execution: Execution::DeviceResident,
            rtol: 1e-12,
            ..Params::default()
        },
    );
    assert!(long.report.iterations > 100);
    assert!(
        long.report.transfers_per_iteration < 0.2,
        "{} transfers per iteration",
        long.report.transfers_per_iteration
    );
}

#[test]
fn host_resident_matches_sync() {
    resident_matches_sync(&HostBackend::new());
}

#[test]
fn auto_is_synchronous_on_the_host() {
    let be = HostBackend::new();
    let a = Generator::Poisson2d.generate::<f64>(400).unwrap().matrix;
    let r = run(
        &be,
        &a,
        &vec![1.0; a.n_rows()],
        None,
        false,
        Params::default(),
    );
    assert_eq!(r.report.execution, Execution::Synchronous);
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_resident_matches_sync() {
    let be = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    resident_matches_sync(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_resident_matches_sync() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    resident_matches_sync(&be);
}
