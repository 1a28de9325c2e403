//! Device-resident pipelined CG, BiCGStab and GMRES (issue 15) against the synchronous mode on
//! every backend: the same iteration count, stop reason, residual history (bit for bit),
//! residual replacements (restarts) and solution (bit for bit), for convergence inside a batch,
//! at iteration 0, at the iteration limit, on an indefinite matrix, on breakdowns, on overflow
//! (a NaN/Inf stop), with residual replacements (f32 at a tight tolerance), with Jacobi; a
//! monitor forces the synchronous mode of CG and BiCGStab; the mode's transfer count; the
//! BiCGStab update kernel against its host reference on crafted sums (NaN, zero denominators,
//! every stop test); every preconditioner (block Jacobi, BILU(0), block-ISAI, IP, FSAI, aFSAI)
//! with CG, BiCGStab and GMRES.
//!
//! Host and OpenCL (PoCL in CI) run here; CUDA is `#[ignore]`d (run on the device with
//! `--include-ignored`).

use crate::common;

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{Jacobi, Preconditioner};
use pipekrylov::solver::{
    BiCgStab, Cg, Execution, Gmres, Params, Progress, SolveReport, StopReason,
};
use pipekrylov::Scalar;

struct Run<T> {
    report: SolveReport,
    x: Vec<T>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Method {
    Cg,
    BiCgStab,
    Gmres,
}

#[allow(clippy::too_many_arguments)]
fn run_method<B: Backend, T: Scalar>(
    be: &B,
    method: Method,
    a: &CsrMatrix<T>,
    b: &[T],
    x0: Option<&[T]>,
    jacobi: bool,
    params: Params,
) -> Run<T> {
    let m = be.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let jac = jacobi.then(|| Jacobi::new(be, a).unwrap());
    let pc = jac.as_ref().map(|j| j as &dyn Preconditioner<B, T>);
    let bb = be.upload(b).unwrap();
    let mut x = match x0 {
        Some(v) => be.upload(v).unwrap(),
        None => be.alloc(b.len()).unwrap(),
    };
    let report = match method {
        Method::Cg => Cg::new(be, &m, pc, params).unwrap().solve(&bb, &mut x),
        Method::BiCgStab => BiCgStab::new(be, &m, pc, params)
            .unwrap()
            .solve(&bb, &mut x),
        Method::Gmres => Gmres::new(be, &m, pc, params).unwrap().solve(&bb, &mut x),
    }
    .unwrap();
    Run {
        report,
        x: be.download(&x).unwrap(),
    }
}

fn run<B: Backend, T: Scalar>(
    be: &B,
    a: &CsrMatrix<T>,
    b: &[T],
    x0: Option<&[T]>,
    jacobi: bool,
    params: Params,
) -> Run<T> {
    run_method(be, Method::Cg, a, b, x0, jacobi, params)
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

/// [`same`] to rounding: the same stop, iterations within one, residuals within 1e-9 of the
/// initial one, x within 1e-9 relative.
fn close<T: Scalar>(label: &str, sync: &Run<T>, res: &Run<T>) {
    let (s, r) = (&sync.report, &res.report);
    assert_eq!(s.execution, Execution::Synchronous, "{label}");
    assert_eq!(r.execution, Execution::DeviceResident, "{label}");
    assert_eq!(s.stop_reason, r.stop_reason, "{label}: stop reason");
    assert!(
        s.iterations.abs_diff(r.iterations) <= 1,
        "{label}: {} vs {} iterations",
        s.iterations,
        r.iterations
    );
    for (k, (a, b)) in s
        .residual_history
        .iter()
        .zip(&r.residual_history)
        .enumerate()
    {
        // Relative to the initial residual: recurrences that differ in rounding drift apart
        // in their last digits as the residual falls.
        let d = (a - b).abs() / s.residual_history[0].abs().max(f64::MIN_POSITIVE);
        assert!(d <= 1e-9, "{label}: residual {k}: {a:e} vs {b:e}");
    }
    let d = common::rel_diff(&sync.x, &res.x);
    assert!(d <= 1e-9, "{label}: x differs by {d:e}");
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
    both_method(be, Method::Cg, label, a, b, x0, jacobi, params)
}

#[allow(clippy::too_many_arguments)]
fn both_method<B: Backend, T: Scalar>(
    be: &B,
    method: Method,
    label: &str,
    a: &CsrMatrix<T>,
    b: &[T],
    x0: Option<&[T]>,
    jacobi: bool,
    params: Params,
) -> (Run<T>, Run<T>) {
    let sync = run_method(
        be,
        method,
        a,
        b,
        x0,
        jacobi,
        Params {
            execution: Execution::Synchronous,
            ..params
        },
    );
    let res = run_method(
        be,
        method,
        a,
        b,
        x0,
        jacobi,
        Params {
            execution: Execution::DeviceResident,
            ..params
        },
    );
    same(&format!("{} {method:?} {label}", be.name()), &sync, &res);
    (sync, res)
}

/// A 400 x 400 skew-symmetric system (x.Ax = 0 for every x: CG and BiCGStab break down).
fn skew_system() -> (CsrMatrix<f64>, Vec<f64>) {
    let mut t = Vec::new();
    for k in 0..200 {
        t.push((2 * k, 2 * k + 1, 1.0));
        t.push((2 * k + 1, 2 * k, -1.0));
    }
    (
        CsrMatrix::from_triplets(400, 400, &t).unwrap(),
        common::rand_vec(400, 11),
    )
}

/// Every preconditioner of `precond::build_on` (AMG's whole V-cycle inside the resident batches)
/// with CG, BiCGStab and GMRES(10) on 2D Poisson: the device-resident mode runs (it is not turned synchronous) and equals the synchronous one.
fn preconditioned_resident_matches_sync<B: Backend + 'static>(be: &B) {
    use pipekrylov::precond::{build_on, PrecondKind, PrecondSpec};
    let problem = Generator::Poisson2d.generate::<f64>(1600).unwrap();
    let a = problem.matrix;
    let n = a.n_rows();
    let b: Vec<f64> = common::rand_vec(n, 5);
    let m = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let bb = be.upload(&b).unwrap();
    for kind in [
        PrecondKind::PointBlockJacobi,
        PrecondKind::BlockJacobi,
        PrecondKind::Bilu0,
        PrecondKind::Isai,
        PrecondKind::Ip,
        PrecondKind::IpMatrixFree,
        PrecondKind::Fsai,
        PrecondKind::Afsai,
        PrecondKind::Amg,
    ] {
        let mut spec = match kind {
            PrecondKind::BlockJacobi => {
                PrecondSpec::BlockJacobi(pipekrylov::precond::Bilu0Options {
                    subdomains: 3,
                    ..Default::default()
                })
            }
            PrecondKind::IpMatrixFree => PrecondSpec::IpMatrixFree {
                stencil: Generator::Poisson2d.grid_stencil(problem.param),
            },
            kind => PrecondSpec::from(kind),
        };
        // AMG on the device setup's block size (the others on point blocks of 4).
        if let Some(s) = spec.block_size_mut() {
            *s = if kind == PrecondKind::Amg { 1 } else { 4 };
        }
        let pc = build_on(be, &a, Some(&m), spec).unwrap().unwrap();
        for method in [Method::Cg, Method::BiCgStab, Method::Gmres] {
            let solve = |execution| {
                // The pipelined variant in both modes (`Auto` would run CG with AMG classical
                // when synchronous).
                let params = Params {
                    execution,
                    variant: pipekrylov::solver::Variant::Pipelined,
                    gmres: pipekrylov::solver::GmresParams {
                        restart: 10,
                        ..Default::default()
                    },
                    ..Params::default()
                };
                let mut x = be.alloc::<f64>(n).unwrap();
                let report = match method {
                    Method::Cg => Cg::new(be, &m, Some(pc.as_ref()), params)
                        .unwrap()
                        .solve(&bb, &mut x),
                    Method::BiCgStab => BiCgStab::new(be, &m, Some(pc.as_ref()), params)
                        .unwrap()
                        .solve(&bb, &mut x),
                    Method::Gmres => Gmres::new(be, &m, Some(pc.as_ref()), params)
                        .unwrap()
                        .solve(&bb, &mut x),
                }
                .unwrap();
                Run {
                    report,
                    x: be.download(&x).unwrap(),
                }
            };
            let label = format!("{} {method:?} {}", be.name(), kind.name());
            let (sync, res) = (
                solve(Execution::Synchronous),
                solve(Execution::DeviceResident),
            );
            assert!(sync.report.stop_reason.converged(), "{label}");
            if kind == PrecondKind::IpMatrixFree && method == Method::Cg {
                // The synchronous mode fuses the matrix-free IP into CG's update (z from r and
                // Ap at every row); the resident mode keeps the recurrences: equal to rounding.
                close(&label, &sync, &res);
            } else {
                same(&label, &sync, &res);
            }
        }
    }
}

/// `a` with every value multiplied by `factor`.
fn scaled(a: &CsrMatrix<f64>, factor: f64) -> CsrMatrix<f64> {
    let mut m = a.clone();
    for v in m.values_mut() {
        *v *= factor;
    }
    m
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
    // Overflow: <Ap, Ap> is infinite at the first device iteration (NaN/Inf stop).
    let huge = scaled(&a, 1e200);
    let (s, _) = both(be, "overflow", &huge, &b, None, false, Params::default());
    assert_eq!(s.report.stop_reason, StopReason::NanOrInf);
    // A breakdown of the recurrence: on a skew-symmetric matrix p.Ap = 0 at once.
    let (skew, bs) = skew_system();
    let (s, _) = both(be, "skew", &skew, &bs, None, false, Params::default());
    assert!(
        !s.report.stop_reason.converged() && s.report.iterations <= 1,
        "{:?} after {}",
        s.report.stop_reason,
        s.report.iterations
    );
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
    // One solver, three solves into the same vector: the first launches its batches, the
    // second records them (CUDA graphs) and the third replays the recordings; each must give
    // the same result as the synchronous mode.
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
    for round in 0..3 {
        be.fill(&mut x, 0.0).unwrap();
        let report = cg.solve(&bb, &mut x).unwrap();
        same(
            &format!("{} solve {round} of one solver", be.name()),
            &sync,
            &Run {
                report,
                x: be.download(&x).unwrap(),
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

fn bicgstab_resident_matches_sync<B: Backend>(be: &B) {
    let both = |label: &str, a: &CsrMatrix<f64>, b: &[f64], x0: Option<&[f64]>, jac, p| {
        both_method(be, Method::BiCgStab, label, a, b, x0, jac, p)
    };
    let a = Generator::ConvDiff3d.generate::<f64>(4096).unwrap().matrix;
    let n = a.n_rows();
    let b: Vec<f64> = common::rand_vec(n, 7);
    // Converges inside a batch.
    let (s, _) = both("convdiff3d", &a, &b, None, false, Params::default());
    assert!(s.report.stop_reason.converged() && s.report.iterations > 20);
    // Jacobi (right-preconditioned: the applications run inside the batches).
    let fem = Generator::Thermal2d.generate::<f64>(3000).unwrap().matrix;
    let bf: Vec<f64> = common::rand_vec(fem.n_rows(), 5);
    let (s, _) = both("thermal2d jacobi", &fem, &bf, None, true, Params::default());
    assert!(s.report.stop_reason.converged() && s.report.iterations > 20);
    // The iteration limit, inside the first batches and at a batch boundary.
    for max_iter in [1, 3, 4, 12, 17] {
        let p = Params {
            max_iter,
            ..Params::default()
        };
        let (s, _) = both(&format!("max_iter {max_iter}"), &a, &b, None, false, p);
        assert_eq!(s.report.stop_reason, StopReason::MaxIterations);
    }
    // Iteration 0: the initial guess is the solution.
    let ones = vec![1.0; n];
    let mut ab = vec![0.0; n];
    a.mul_vec(&ones, &mut ab).unwrap();
    let (s, _) = both("exact x0", &a, &ab, Some(&ones), false, Params::default());
    assert_eq!(s.report.iterations, 0);
    // A breakdown at the first device iteration: A = blocks [[0, 1], [-1, 0]] gives
    // <A r0, r0*> = 0 exactly.
    let mut t = Vec::new();
    for k in 0..200 {
        t.push((2 * k, 2 * k + 1, 1.0));
        t.push((2 * k + 1, 2 * k, -1.0));
    }
    let skew = CsrMatrix::from_triplets(400, 400, &t).unwrap();
    let bs: Vec<f64> = common::rand_vec(400, 11);
    let (s, _) = both("skew", &skew, &bs, None, false, Params::default());
    assert!(
        matches!(s.report.stop_reason, StopReason::Breakdown(_)),
        "{:?}",
        s.report.stop_reason
    );
    // An indefinite matrix (2D Poisson - 4.5 I), then with a tight divergence bound.
    let mut shifted = Generator::Poisson2d.generate::<f64>(4000).unwrap().matrix;
    let m = shifted.n_rows();
    for r in 0..m {
        let (cols, _) = shifted.row(r);
        let k = cols.iter().position(|&c| c == r).unwrap() + shifted.row_ptr()[r];
        shifted.values_mut()[k] -= 4.5;
    }
    let bm: Vec<f64> = common::rand_vec(m, 3);
    let p = Params {
        max_iter: 400,
        ..Params::default()
    };
    both("indefinite", &shifted, &bm, None, false, p);
    let p = Params {
        dtol: 1.01,
        max_iter: 400,
        ..Params::default()
    };
    let (s, _) = both("dtol", &shifted, &bm, None, false, p);
    assert_eq!(s.report.stop_reason, StopReason::Diverged);
    // Overflow: the sums of A s are infinite at the first device iteration (NaN/Inf stop).
    let huge = scaled(&a, 1e200);
    let (s, _) = both("overflow", &huge, &b, None, false, Params::default());
    assert_eq!(s.report.stop_reason, StopReason::NanOrInf);
    // Restarts from the true residual: f32 to a tolerance near its attainable accuracy.
    let a32: CsrMatrix<f32> = a.cast();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let p = Params {
        rtol: 1e-7,
        ..Params::default()
    };
    let (s, _) = both_method(
        be,
        Method::BiCgStab,
        "f32 restarts",
        &a32,
        &b32,
        None,
        false,
        p,
    );
    assert!(
        s.report.residual_replacements > 0,
        "{:?}",
        s.report.stop_reason
    );
    // A monitor forces the synchronous mode and sees every iteration.
    let m = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let bb = be.upload(&b).unwrap();
    let resident = Params {
        execution: Execution::DeviceResident,
        ..Params::default()
    };
    let mut x = be.alloc::<f64>(n).unwrap();
    let mut solver = BiCgStab::new(be, &m, None, resident).unwrap();
    let mut seen = 0;
    let mut monitor = |_: Progress| seen += 1;
    let r = solver
        .solve_with_monitor(&bb, &mut x, Some(&mut monitor))
        .unwrap();
    assert_eq!(r.execution, Execution::Synchronous);
    assert_eq!(seen, r.iterations + 1);
    // Three solves with one solver: launched, recorded (CUDA graphs), replayed.
    let sync = run_method(be, Method::BiCgStab, &a, &b, None, false, Params::default());
    let sync = Run {
        report: SolveReport {
            execution: Execution::Synchronous,
            ..sync.report
        },
        ..sync
    };
    let mut solver = BiCgStab::new(be, &m, None, resident).unwrap();
    for round in 0..3 {
        be.fill(&mut x, 0.0).unwrap();
        let report = solver.solve(&bb, &mut x).unwrap();
        let res = Run {
            report,
            x: be.download(&x).unwrap(),
        };
        same(
            &format!("{} BiCgStab solve {round}", be.name()),
            &sync,
            &res,
        );
    }
    // The transfers: one state write and one read per batch.
    let poisson = Generator::Poisson2d.generate::<f64>(4000).unwrap().matrix;
    let long = run_method(
        be,
        Method::BiCgStab,
        &poisson,
        &bm,
        None,
        false,
        Params {
            rtol: 1e-12,
            ..resident
        },
    );
    assert!(long.report.iterations > 100, "{}", long.report.iterations);
    assert!(
        long.report.transfers_per_iteration < 0.2,
        "{} transfers per iteration",
        long.report.transfers_per_iteration
    );
    // Kernels per iteration: the GPU backends fuse the s-update into the product with s (CSR, no
    // preconditioner): 3 instead of 4; where the backend also fuses the update into the next
    // product with p (OpenCL by default at this size), 2 (the few host-decided steps add a
    // little). The host reference runs its fused update as a copy, the update and the product,
    // and the s-update and the product apart: 5.
    let pm = be.upload_matrix(&poisson, MatrixFormat::Csr).unwrap();
    let kernels = match (be.name(), be.fuses_bicgstab_resident(&pm)) {
        ("host", _) => 5.0,
        (_, true) => 2.0,
        (_, false) => 3.0,
    };
    let launches = long.report.launches_per_iteration;
    assert!(
        launches >= kernels && launches < kernels + 0.5,
        "{}: {launches} launches per iteration, expected about {kernels}",
        be.name()
    );
}

/// GMRES(m), device-resident: the cycle run ahead is discarded when the restart's true residual
/// passes although the last estimate did not (the estimate and ||b - A x|| differ by rounding;
/// with the target at ||b - A x|| after one cycle, the solve stops at the restart). Searched
/// over problems, right-hand sides and restart lengths for a case where the estimate is the
/// larger; both modes must stop there with the same iterate.
fn gmres_restart_stops_ahead<B: Backend>(be: &B) {
    let mut found = 0;
    for (g, n) in [(Generator::ConvDiff3d, 4096), (Generator::Poisson2d, 4000)] {
        let a = g.generate::<f64>(n).unwrap().matrix;
        for seed in 1..6u64 {
            let b: Vec<f64> = common::rand_vec(a.n_rows(), seed);
            for m in [5usize, 10, 20] {
                let one_cycle = Params {
                    gmres: pipekrylov::solver::GmresParams {
                        restart: m,
                        ..Default::default()
                    },
                    max_iter: m,
                    rtol: 0.0,
                    execution: Execution::Synchronous,
                    ..Params::default()
                };
                let r = run_method(be, Method::Gmres, &a, &b, None, false, one_cycle).report;
                let (estimate, true_residual) =
                    (*r.residual_history.last().unwrap(), r.true_residual);
                if estimate <= true_residual {
                    continue;
                }
                let p = Params {
                    gmres: pipekrylov::solver::GmresParams {
                        restart: m,
                        ..Default::default()
                    },
                    rtol: 0.0,
                    atol: true_residual,
                    ..Params::default()
                };
                let label = format!("{g:?} seed {seed} m {m}: stop at the restart");
                let (s, _) = both_method(be, Method::Gmres, &label, &a, &b, None, false, p);
                assert_eq!(s.report.stop_reason, StopReason::Converged, "{label}");
                assert_eq!(s.report.iterations, m, "{label}");
                found += 1;
            }
        }
    }
    assert!(found > 0, "{}: no case with the estimate above", be.name());
}

/// GMRES(m) with DCGS2: the device-resident mode (cycles recorded and replayed where the backend
/// records) against the synchronous one, bit for bit.
fn gmres_resident_matches_sync<B: Backend>(be: &B) {
    let both = |label: &str, a: &CsrMatrix<f64>, b: &[f64], x0: Option<&[f64]>, jac, p| {
        both_method(be, Method::Gmres, label, a, b, x0, jac, p)
    };
    let a = Generator::ConvDiff3d.generate::<f64>(4096).unwrap().matrix;
    let n = a.n_rows();
    let b: Vec<f64> = common::rand_vec(n, 7);
    let restart = Params {
        gmres: pipekrylov::solver::GmresParams {
            restart: 10,
            ..Default::default()
        },
        ..Params::default()
    };
    // Several cycles, the last one stopping inside.
    let (s, _) = both("convdiff3d", &a, &b, None, false, restart);
    assert!(s.report.stop_reason.converged() && s.report.iterations > 20);
    let (s, _) = both("convdiff3d jacobi", &a, &b, None, true, restart);
    assert!(s.report.stop_reason.converged());
    // The iteration limit inside the first cycle, at its end, inside a later one.
    for max_iter in [1, 7, 10, 17] {
        let p = Params {
            max_iter,
            ..restart
        };
        let (s, _) = both(&format!("max_iter {max_iter}"), &a, &b, None, false, p);
        assert_eq!(s.report.stop_reason, StopReason::MaxIterations);
    }
    let ones = vec![1.0; n];
    let mut ab = vec![0.0; n];
    a.mul_vec(&ones, &mut ab).unwrap();
    let (s, _) = both("exact x0", &a, &ab, Some(&ones), false, restart);
    assert_eq!(s.report.iterations, 0);
    // Overflow: the first norms are infinite (NaN/Inf stop) in both modes alike.
    let huge = scaled(&a, 1e200);
    let (s, _) = both("overflow", &huge, &b, None, false, restart);
    assert_eq!(s.report.stop_reason, StopReason::NanOrInf);
    // A lucky breakdown: three distinct eigenvalues, so the Krylov space is exhausted (and
    // the system solved) at the third step of the first cycle.
    let diag: Vec<(usize, usize, f64)> = (0..n).map(|i| (i, i, [1.0, 2.0, 5.0][i % 3])).collect();
    let three = CsrMatrix::from_triplets(n, n, &diag).unwrap();
    let (s, _) = both("three eigenvalues", &three, &b, None, false, restart);
    assert!(
        s.report.stop_reason.converged() && s.report.iterations <= 3,
        "{:?} after {}",
        s.report.stop_reason,
        s.report.iterations
    );
    // A singular matrix with b outside its range: GMRES stagnates to the iteration limit.
    let mut singular = a.clone();
    let (r0, r1) = (singular.row_ptr()[0], singular.row_ptr()[1]);
    for v in &mut singular.values_mut()[r0..r1] {
        *v = 0.0;
    }
    let p = Params {
        max_iter: 25,
        ..restart
    };
    let (s, _) = both("singular", &singular, &b, None, false, p);
    assert!(
        !s.report.stop_reason.converged(),
        "{:?}",
        s.report.stop_reason
    );
    // The skew-symmetric system (no breakdown for GMRES: it converges).
    let (skew, bs) = skew_system();
    let (s, _) = both("skew", &skew, &bs, None, false, restart);
    assert!(
        s.report.stop_reason.converged(),
        "{:?}",
        s.report.stop_reason
    );
    gmres_restart_stops_ahead(be);
    // The transfers: device-resident, a cycle is one write (the update's coefficients) and
    // one read (the next cycle's coefficients and restart norm); synchronous, one more read
    // (the restart norm before the cycle).
    let poisson = Generator::Poisson2d.generate::<f64>(4000).unwrap().matrix;
    let pb = vec![1.0; poisson.n_rows()];
    let long = |execution| {
        let p = Params {
            gmres: pipekrylov::solver::GmresParams {
                restart: 30,
                ..Default::default()
            },
            rtol: 1e-12,
            execution,
            ..Params::default()
        };
        run_method(be, Method::Gmres, &poisson, &pb, None, false, p).report
    };
    let (sync, res) = (
        long(Execution::Synchronous),
        long(Execution::DeviceResident),
    );
    assert!(res.iterations > 90, "{}", res.iterations);
    let cycles = res.iterations.div_ceil(30) as f64;
    let per_cycle = |r: &SolveReport| r.transfers_per_iteration * r.iterations as f64 / cycles;
    assert!(
        per_cycle(&res) <= 2.0 + 2.0 / cycles,
        "{}: {} transfers per resident cycle",
        be.name(),
        per_cycle(&res)
    );
    assert!(
        per_cycle(&sync) <= 3.0 + 2.0 / cycles && per_cycle(&sync) > per_cycle(&res),
        "{}: {} transfers per synchronous cycle",
        be.name(),
        per_cycle(&sync)
    );
    // One solver, three solves: launched, recorded, replayed.
    let sync = run_method(be, Method::Gmres, &a, &b, None, false, restart);
    let m = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let bb = be.upload(&b).unwrap();
    let resident = Params {
        execution: Execution::DeviceResident,
        ..restart
    };
    let mut solver = Gmres::new(be, &m, None, resident).unwrap();
    let mut x = be.alloc::<f64>(n).unwrap();
    for round in 0..3 {
        be.fill(&mut x, 0.0).unwrap();
        let report = solver.solve(&bb, &mut x).unwrap();
        let res = Run {
            report,
            x: be.download(&x).unwrap(),
        };
        let sync = Run {
            report: SolveReport {
                execution: Execution::Synchronous,
                ..sync.report.clone()
            },
            x: sync.x.clone(),
        };
        same(&format!("{} Gmres solve {round}", be.name()), &sync, &res);
    }
    // A monitor sees every step and keeps the mode (GMRES reports steps at the cycle's end).
    let mut seen = 0;
    let mut monitor = |_: Progress| seen += 1;
    be.fill(&mut x, 0.0).unwrap();
    let r = solver
        .solve_with_monitor(&bb, &mut x, Some(&mut monitor))
        .unwrap();
    assert_eq!(r.execution, Execution::DeviceResident);
    assert_eq!(seen, r.iterations + 1);
}

/// `bicgstab_update_resident` against `bicgstab_scalars_reference` and `bicgstab_update` on
/// crafted sums (one-element vectors, so each partial is the sum): every stop test, NaN and
/// infinity, zero denominators, a set flag; the state bit for bit, the vectors and the written
/// partials bit for bit (unchanged when the iteration is not ordinary); and the reference's own
/// outcome as expected.
fn bicgstab_update_resident_matches_reference<B: Backend>(be: &B) {
    use pipekrylov::backend::ops::resident::{bicgstab_scalars_reference, layout};
    use pipekrylov::backend::{BicgstabSlots, ResidentState, Slot};
    let slots = BicgstabSlots {
        ap_r0: Slot(1),
        s_s: Slot(2),
        as_s: Slot(3),
        as_as: Slot(4),
        as_r0: Slot(5),
    };
    let (rr0, rr) = (Slot(0), Slot(6));
    let ordinary = [4.0, 9.0, 1.5, 3.0, -0.25];
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    // (label, rho, sums, flag already set, max_iter, expected flag afterwards)
    type Case<'a> = (&'a str, f64, [f64; 5], bool, f64, bool);
    let cases: Vec<Case> = vec![
        ("ordinary", 2.0, ordinary, false, 100.0, false),
        ("flag already set", 2.0, ordinary, true, 100.0, true),
        ("rho NaN", nan, ordinary, false, 100.0, true),
        (
            "Ap r0* inf",
            2.0,
            [inf, 9.0, 1.5, 3.0, -0.25],
            false,
            100.0,
            true,
        ),
        (
            "Ap r0* zero",
            2.0,
            [0.0, 9.0, 1.5, 3.0, -0.25],
            false,
            100.0,
            true,
        ),
        ("rho breakdown", 1e-40, ordinary, false, 100.0, true),
        (
            "As r0* NaN",
            2.0,
            [4.0, 9.0, 1.5, 3.0, nan],
            false,
            100.0,
            true,
        ),
        (
            "s converged",
            2.0,
            [4.0, 1e-8, 1e-9, 3.0, -0.25],
            false,
            100.0,
            true,
        ),
        (
            "omega zero (As, s)",
            2.0,
            [4.0, 9.0, 0.0, 3.0, -0.25],
            false,
            100.0,
            true,
        ),
        (
            "omega zero (As, As)",
            2.0,
            [4.0, 9.0, 1.5, 0.0, -0.25],
            false,
            100.0,
            true,
        ),
        (
            "r converged",
            2.0,
            [4.0, 9.0, 3.0, 1.0, -0.25],
            false,
            100.0,
            true,
        ),
        (
            "diverged",
            2.0,
            [4.0, 1e12, 1.0, 1.0, -0.25],
            false,
            100.0,
            true,
        ),
        ("iteration limit", 2.0, ordinary, false, 6.0, true),
        ("below the limit", 2.0, ordinary, false, 7.0, false),
    ];
    let vec1 = |v: f64| be.upload(&[v]).unwrap();
    let one = vec1(1.0);
    let mut partials = be.partials::<f64>(1, 7).unwrap();
    let mut state = ResidentState::new(be, 8).unwrap();
    let len = state.buffer().len();
    for (label, rho, sums, preset, max_iter, want_flag) in cases {
        let label = format!("{} {label}", be.name());
        for (k, v) in sums.iter().enumerate() {
            be.dot_partials(&vec1(*v), &one, &mut partials, slots.all()[k])
                .unwrap();
        }
        for k in [rr0, rr] {
            be.dot_partials(&vec1(-7.0), &one, &mut partials, k)
                .unwrap();
        }
        let finished = be.finish(&partials).unwrap();
        let finished = slots.all().map(|k| finished.get(k));
        let mut header = vec![0.0; len];
        header[layout::FLAG] = if preset { 1.0 } else { 0.0 };
        header[layout::ITER_CUR] = 5.0;
        header[layout::TARGET] = 1e-3;
        header[layout::DTOL_R0] = 1e5;
        header[layout::MAX_ITER] = max_iter;
        header[layout::R_NORM_CUR] = 1.0;
        header[layout::R0STAR_NORM] = 10.0;
        header[layout::EPS2] = f64::EPSILON * f64::EPSILON;
        header[layout::RHO] = rho;
        be.write(state.buffer_mut(), &header).unwrap();
        let vectors = [0.5, 1.0, 0.25, 0.75, 2.0, 3.0, 1.5].map(vec1);
        let [mut x, mut r, mut p, s, ap, as_, r0s] = vectors;
        be.bicgstab_update_resident(
            &mut state,
            slots,
            3,
            &mut x,
            &mut r,
            &mut p,
            &s,
            &ap,
            &as_,
            None,
            None,
            &r0s,
            &mut partials,
            rr0,
            rr,
        )
        .unwrap();
        let got = be.download(state.buffer()).unwrap();
        let mut want = header.clone();
        let coefficients = bicgstab_scalars_reference(finished, 3, &mut want);
        assert_eq!(
            want[layout::FLAG] != 0.0,
            want_flag,
            "{label}: the reference"
        );
        assert_eq!(coefficients.is_some(), !want_flag, "{label}: the reference");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{label}: state[{k}]");
        }
        // The vectors and the written partials: bicgstab_update with the reference's
        // coefficients, or untouched.
        let [mut xw, mut rw, mut pw] = [0.5, 1.0, 0.25].map(vec1);
        let mut pw_partials = be.partials::<f64>(1, 7).unwrap();
        for k in [rr0, rr] {
            be.dot_partials(&vec1(-7.0), &one, &mut pw_partials, k)
                .unwrap();
        }
        if let Some([alpha, omega, beta]) = coefficients {
            let [ap_r0, ss, as_s, as_as, as_r0] = finished;
            assert_eq!(alpha, rho / ap_r0, "{label}");
            assert_eq!(omega, as_s / as_as, "{label}");
            assert_eq!(beta, -as_r0 / ap_r0, "{label}");
            let rr2 = ss - 2.0 * omega * as_s + omega * omega * as_as;
            assert_eq!(got[layout::HISTORY + 3], rr2.sqrt(), "{label}");
            assert_eq!(got[layout::ITER], 6.0, "{label}");
            be.bicgstab_update(
                alpha,
                omega,
                beta,
                &mut xw,
                &mut rw,
                &mut pw,
                &s,
                &ap,
                &as_,
                None,
                None,
                &r0s,
                &mut pw_partials,
                rr0,
                rr,
            )
            .unwrap();
        }
        for (name, g, w) in [("x", &x, &xw), ("r", &r, &rw), ("p", &p, &pw)] {
            let (g, w) = (be.download(g).unwrap(), be.download(w).unwrap());
            assert_eq!(g[0].to_bits(), w[0].to_bits(), "{label}: {name}");
        }
        let (g, w) = (
            be.finish(&partials).unwrap(),
            be.finish(&pw_partials).unwrap(),
        );
        for k in [rr0, rr] {
            assert_eq!(
                g.get(k).to_bits(),
                w.get(k).to_bits(),
                "{label}: slot {k:?}"
            );
        }
    }
}

#[test]
fn host_resident_matches_sync() {
    resident_matches_sync(&HostBackend::new());
}

#[test]
fn host_bicgstab_resident_matches_sync() {
    bicgstab_resident_matches_sync(&HostBackend::new());
}

#[test]
fn host_gmres_resident_matches_sync() {
    gmres_resident_matches_sync(&HostBackend::new());
}

#[test]
fn host_preconditioned_resident_matches_sync() {
    preconditioned_resident_matches_sync(&HostBackend::new());
}

#[test]
fn host_bicgstab_update_resident_matches_reference() {
    bicgstab_update_resident_matches_reference(&HostBackend::new());
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

#[cfg(feature = "opencl")]
#[test]
fn opencl_bicgstab_resident_matches_sync() {
    let be = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    bicgstab_update_resident_matches_reference(&be);
    bicgstab_resident_matches_sync(&be);
    gmres_resident_matches_sync(&be);
    preconditioned_resident_matches_sync(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_resident_matches_sync() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    resident_matches_sync(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_bicgstab_resident_matches_sync() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    bicgstab_update_resident_matches_reference(&be);
    bicgstab_resident_matches_sync(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_gmres_resident_matches_sync() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    gmres_resident_matches_sync(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_preconditioned_resident_matches_sync() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    preconditioned_resident_matches_sync(&be);
}
