//! A matrix whose CSR arrays already live on the backend (`DeviceMatrix::from_csr_buffers`,
//! `ReusableSolver::on_device`): it solves as an upload of the same matrix does (the same
//! iterations and iterates), for preconditioners set up on the device from it (none, Jacobi,
//! AMG in f64 and f32, a high-contrast matrix included) and for those that copy it to the host
//! (BILU(0)); the caller's arrays are the solver's matrix, read in place (CUDA); faulty
//! arrays and options are typed errors.
//!
//! Host and OpenCL (PoCL in CI); CUDA on the device with `--include-ignored`.

use crate::common::rel_diff;
use pipekrylov::backend::{AnyBackend, BackendChoice, DeviceMatrix, MatrixFormat, VectorOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{AmgOptions, AmgPrecision, AmgSetup, PrecondKind, PrecondSpec};
use pipekrylov::solver::Variant;
use pipekrylov::{Error, Method, ReusableSolver, Solution, SolveOptions};

fn index(x: &[usize]) -> Vec<u32> {
    x.iter().map(|&i| i as u32).collect()
}

/// `a`'s arrays put on `backend` as a caller would, and checked there.
fn on_device(backend: &AnyBackend, a: &CsrMatrix<f64>) -> pipekrylov::Result<DeviceMatrix<f64>> {
    raw(
        backend,
        a.n_rows(),
        a.n_cols(),
        &index(a.row_ptr()),
        &index(a.col_idx()),
        a.values(),
    )
}

fn raw(
    backend: &AnyBackend,
    n_rows: usize,
    n_cols: usize,
    rp: &[u32],
    ci: &[u32],
    v: &[f64],
) -> pipekrylov::Result<DeviceMatrix<f64>> {
    DeviceMatrix::from_csr_buffers(
        backend,
        n_rows,
        n_cols,
        backend.upload(rp)?,
        backend.upload(ci)?,
        backend.upload(v)?,
    )
}

fn options(method: Method, precond: PrecondSpec, backend: BackendChoice) -> SolveOptions {
    SolveOptions {
        method,
        precond,
        backend,
        ..SolveOptions::default()
    }
    .rtol(1e-9)
    .variant(Variant::Classical)
}

/// The same iterations and iterates (to 1e-12) as `reference`.
fn assert_same_solve(precond: &PrecondSpec, sol: &Solution<f64>, reference: &Solution<f64>) {
    assert_eq!(
        sol.report.iterations, reference.report.iterations,
        "{precond:?}"
    );
    let d = rel_diff(&sol.x, &reference.x);
    assert!(d <= 1e-12, "{precond:?}: iterates differ by {d:e}");
}

/// The solve of `a`'s device arrays against the same solve of an upload of `a`, on one backend.
fn solves_as_an_upload(choice: BackendChoice, a: &CsrMatrix<f64>, precond: PrecondSpec) {
    let opts = options(Method::Cg, precond, choice);
    let b: Vec<f64> = (0..a.n_rows()).map(|i| 1.0 + (i % 5) as f64).collect();
    let mut uploaded = ReusableSolver::builder(a).options(opts).build().unwrap();
    let reference = uploaded.solve(&b).unwrap();
    assert!(reference.report.stop_reason.converged(), "{precond:?}");
    let (backend, _) = choice.create().unwrap();
    let m = on_device(&backend, a).unwrap();
    let mut solver = ReusableSolver::on_device(backend, m, opts).unwrap();
    let sol = solver.solve(&b).unwrap();
    assert_same_solve(&precond, &sol, &reference);
    let copied = sol.notes.iter().any(|n| n.contains("copied to the host"));
    let reads_on_device = match precond {
        PrecondSpec::None | PrecondSpec::Jacobi => true,
        PrecondSpec::Amg(o) => o.sets_up_on_device(solver.backend().0),
        _ => false,
    };
    assert_eq!(copied, !reads_on_device, "{precond:?}: {:?}", sol.notes);
}

fn amg(setup: AmgSetup, precision: AmgPrecision) -> PrecondSpec {
    PrecondSpec::Amg(AmgOptions {
        setup,
        precision,
        ..AmgOptions::default()
    })
}

fn every_preconditioner_solves_as_an_upload(choice: BackendChoice) {
    let poisson = Generator::Poisson2d
        .generate_with_param::<f64>(48)
        .unwrap()
        .matrix;
    for precond in [
        PrecondSpec::None,
        PrecondSpec::Jacobi,
        amg(AmgSetup::Auto, AmgPrecision::Solve),
        amg(AmgSetup::Device, AmgPrecision::Solve),
        amg(AmgSetup::Device, AmgPrecision::F32),
        PrecondSpec::from(PrecondKind::Bilu0),
    ] {
        solves_as_an_upload(choice, &poisson, precond);
    }
    // A high-contrast matrix (diagonal contrast 1e6): the rule's options from the device's
    // diagonal extremes equal those from the host's.
    let jump = Generator::Jump3d
        .generate_with_param::<f64>(16)
        .unwrap()
        .matrix;
    solves_as_an_upload(choice, &jump, amg(AmgSetup::Device, AmgPrecision::Solve));
}

fn faulty_arrays_are_typed_errors(choice: BackendChoice) {
    let (backend, _) = choice.create().unwrap();
    // [[2, -1, 0], [-1, 2, -1], [0, -1, 2]]
    let rp = [0u32, 2, 5, 7];
    let ci = [0u32, 1, 0, 1, 2, 1, 2];
    let v = [2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0];
    assert!(raw(&backend, 3, 3, &rp, &ci, &v).is_ok());
    let invalid = |rp: &[u32], ci: &[u32], v: &[f64], what: &str| {
        let err = raw(&backend, 3, 3, rp, ci, v).unwrap_err();
        assert!(matches!(err, Error::InvalidMatrix(_)), "{what}: {err}");
    };
    invalid(&[1, 2, 5, 7], &ci, &v, "row_ptr[0] != 0");
    invalid(&[0, 2, 5, 6], &ci, &v, "row_ptr[n] != nnz");
    invalid(&[0, 5, 2, 7], &ci, &v, "decreasing row pointers");
    invalid(&rp, &[0, 1, 0, 1, 3, 1, 2], &v, "a column out of range");
    invalid(&rp, &[1, 0, 0, 1, 2, 1, 2], &v, "an unsorted row");
    invalid(&rp, &[0, 1, 0, 0, 2, 1, 2], &v, "a duplicate column");
    let mut nan = v;
    nan[3] = f64::NAN;
    invalid(&rp, &ci, &nan, "a NaN value");
    let mut inf = v;
    inf[6] = f64::INFINITY;
    invalid(&rp, &ci, &inf, "an infinite value");
    let err = raw(&backend, 3, 3, &rp[..3], &ci, &v).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    let err = raw(&backend, 3, 3, &rp, &ci, &v[..6]).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");

    // A solver of the arrays on a backend of its own.
    let solver = |n_cols: usize, values: &[f64], opts: SolveOptions| {
        let (own, _) = choice.create().unwrap();
        let m = raw(&own, 3, n_cols, &rp, &ci, values)?;
        ReusableSolver::on_device(own, m, opts)
    };
    let plain = options(Method::Cg, PrecondSpec::None, choice);
    // Not square.
    let err = solver(4, &v, plain).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    // A format other than CSR.
    let sell = SolveOptions {
        format: MatrixFormat::Sell { c: 32, sigma: 1 },
        ..plain
    };
    let err = solver(3, &v, sell).unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { .. }), "{err}");
    // Jacobi with a zero diagonal entry, named by row.
    let mut zero = v;
    zero[3] = 0.0;
    let jacobi = options(Method::Cg, PrecondSpec::Jacobi, choice);
    let err = solver(3, &zero, jacobi).unwrap_err();
    assert!(err.to_string().contains("row 1"), "{err}");
    // AMG set up on the device with a negative diagonal: the setup's error.
    let mut negative = v;
    negative[6] = -2.0;
    let on_gpu = amg(AmgSetup::Device, AmgPrecision::Solve);
    let err = solver(3, &negative, options(Method::Cg, on_gpu, choice)).unwrap_err();
    assert!(matches!(err, Error::NotApplicable { .. }), "{err}");
    // New values: not for a solver of device arrays.
    let mut s = solver(3, &v, plain).unwrap();
    let host = CsrMatrix::new(
        3,
        3,
        rp.iter().map(|&i| i as usize).collect(),
        ci.iter().map(|&i| i as usize).collect(),
        v.to_vec(),
    )
    .unwrap();
    let err = s.update_values(&host).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    // The solver still solves.
    let sol = s.solve(&[1.0, 0.0, 1.0]).unwrap();
    assert!(rel_diff(&sol.x, &[1.0, 1.0, 1.0]) < 1e-8, "{:?}", sol.x);
    // Arrays of another backend: typed (a GPU context of its own; the host backend shares
    // its memory).
    if choice != BackendChoice::Host {
        let m = raw(&backend, 3, 3, &rp, &ci, &v).unwrap();
        let (other, _) = choice.create().unwrap();
        let err = ReusableSolver::on_device(other, m, jacobi).unwrap_err();
        assert!(matches!(err, Error::WrongBackend { .. }), "{err}");
    }
}

/// New values on the device (`update_device_values`) against the same refresh of a solver of
/// the uploaded matrix (`update_values`): the same iterations and iterates, for preconditioners
/// refreshed on the device (Jacobi, AMG set up there) and from a host copy (BILU(0), AMG set up
/// on the host); faulty new values are typed errors after which the solver is unchanged.
fn device_values_refresh_as_an_upload(choice: BackendChoice) {
    let a1 = Generator::Poisson2d
        .generate_with_param::<f64>(40)
        .unwrap()
        .matrix;
    // A2: the pattern of A1, the diagonal shifted by 0.5 .. 1.5 by row (still SPD).
    let mut a2 = a1.clone();
    let rp = a1.row_ptr().to_vec();
    for (k, &j) in a1.col_idx().iter().enumerate() {
        let i = rp.partition_point(|&p| p <= k) - 1;
        if j == i {
            a2.values_mut()[k] += 0.5 + (i % 3) as f64 * 0.5;
        }
    }
    let b: Vec<f64> = (0..a1.n_rows()).map(|i| 1.0 + (i % 5) as f64).collect();
    for precond in [
        PrecondSpec::Jacobi,
        amg(AmgSetup::Device, AmgPrecision::Solve),
        amg(AmgSetup::Host, AmgPrecision::Solve),
        PrecondSpec::from(PrecondKind::Bilu0),
    ] {
        let opts = options(Method::Cg, precond, choice);
        let mut uploaded = ReusableSolver::builder(&a1).options(opts).build().unwrap();
        uploaded.update_values(&a2).unwrap();
        let reference = uploaded.solve(&b).unwrap();
        let (backend, _) = choice.create().unwrap();
        let m = on_device(&backend, &a1).unwrap();
        let new_values = backend.upload(a2.values()).unwrap();
        let (nan_values, short) = {
            let mut nan = a2.values().to_vec();
            nan[7] = f64::NAN;
            (
                backend.upload(&nan).unwrap(),
                backend.upload(&nan[1..]).unwrap(),
            )
        };
        let mut solver = ReusableSolver::on_device(backend, m, opts).unwrap();
        let update = solver.update_device_values(new_values).unwrap();
        assert!(update.precond.is_some(), "{precond:?}");
        let sol = solver.solve(&b).unwrap();
        assert_same_solve(&precond, &sol, &reference);
        let err = solver.update_device_values(nan_values).unwrap_err();
        assert!(matches!(err, Error::InvalidMatrix(_)), "{err}");
        let err = solver.update_device_values(short).unwrap_err();
        assert!(matches!(err, Error::PatternMismatch(_)), "{err}");
        let again = solver.solve(&b).unwrap();
        assert_eq!(again.x, sol.x, "{precond:?}: changed by a refused update");
    }
    // Device values for a solver of a host matrix: typed.
    let opts = options(Method::Cg, PrecondSpec::Jacobi, choice);
    let mut host_solver = ReusableSolver::builder(&a1).options(opts).build().unwrap();
    let values = host_solver.backend().0.upload(a2.values()).unwrap();
    let err = host_solver.update_device_values(values).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}

#[test]
fn host_device_values_refresh_as_an_upload() {
    device_values_refresh_as_an_upload(BackendChoice::Host);
}

#[test]
fn host_every_preconditioner_solves_as_an_upload() {
    every_preconditioner_solves_as_an_upload(BackendChoice::Host);
}

#[test]
fn host_faulty_arrays_are_typed_errors() {
    faulty_arrays_are_typed_errors(BackendChoice::Host);
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::BackendChoice;

    #[test]
    fn opencl_every_preconditioner_solves_as_an_upload() {
        super::every_preconditioner_solves_as_an_upload(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_device_values_refresh_as_an_upload() {
        super::device_values_refresh_as_an_upload(BackendChoice::OpenCl);
    }

    #[test]
    fn opencl_faulty_arrays_are_typed_errors() {
        super::faulty_arrays_are_typed_errors(BackendChoice::OpenCl);
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_every_preconditioner_solves_as_an_upload() {
        every_preconditioner_solves_as_an_upload(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_device_values_refresh_as_an_upload() {
        device_values_refresh_as_an_upload(BackendChoice::Cuda);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_faulty_arrays_are_typed_errors() {
        faulty_arrays_are_typed_errors(BackendChoice::Cuda);
    }

    /// The caller's allocations are the solver's matrix: borrowed by address, never copied,
    /// still the caller's after the solver is gone.
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_borrowed_arrays_are_the_solvers_matrix() {
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(64)
            .unwrap()
            .matrix;
        // The caller's allocations (as CuPy's), on a backend of their own.
        let (caller, _) = BackendChoice::Cuda.create().unwrap();
        let AnyBackend::Cuda(caller) = caller else {
            panic!("not on CUDA")
        };
        let owners = (
            caller.upload(&index(a.row_ptr())).unwrap(),
            caller.upload(&index(a.col_idx())).unwrap(),
            caller.upload(a.values()).unwrap(),
        );
        // The caller finishes its own stream's work before handing the arrays over, as the
        // borrowing constructors ask (CuPy users synchronize their stream): the uploads and
        // the stream-ordered allocations may still be in flight otherwise, and the solver's
        // check on its own stream would race them.
        caller.synchronize().unwrap();
        let addresses = [
            caller.device_address(&owners.0).unwrap(),
            caller.device_address(&owners.1).unwrap(),
            caller.device_address(&owners.2).unwrap(),
        ];
        // A solver of the caller's arrays, borrowed by address.
        let solver_of = |precond: PrecondSpec| {
            let (backend, _) = BackendChoice::Cuda.create().unwrap();
            let m = {
                let AnyBackend::Cuda(cuda) = &backend else {
                    panic!("not on CUDA")
                };
                // SAFETY: the owners outlive the solver; nothing else writes them meanwhile.
                let (rp, ci, v) = unsafe {
                    (
                        cuda.borrow_device_memory::<u32>(addresses[0], a.n_rows() + 1)
                            .unwrap(),
                        cuda.borrow_device_memory::<u32>(addresses[1], a.nnz())
                            .unwrap(),
                        cuda.borrow_device_memory::<f64>(addresses[2], a.nnz())
                            .unwrap(),
                    )
                };
                DeviceMatrix::from_csr_buffers(cuda, a.n_rows(), a.n_cols(), rp, ci, v).unwrap()
            };
            let opts = options(Method::Cg, precond, BackendChoice::Cuda);
            ReusableSolver::on_device(backend, m, opts).unwrap()
        };
        let b = vec![1.0; a.n_rows()];
        // AMG set up on the device from them: no copy.
        let sol = solver_of(amg(AmgSetup::Auto, AmgPrecision::Solve))
            .solve(&b)
            .unwrap();
        assert!(sol.report.stop_reason.converged());
        assert!(
            sol.notes.iter().all(|n| !n.contains("copied")),
            "{:?}",
            sol.notes
        );
        // The solver reads the caller's values in place: doubled there, the solution halves
        // (Jacobi's inverses, kept from the setup, scale the preconditioned system, which CG
        // does not see).
        let mut solver = solver_of(PrecondSpec::Jacobi);
        let sol = solver.solve(&b).unwrap();
        let doubled: Vec<f64> = a.values().iter().map(|v| 2.0 * v).collect();
        let mut values = owners.2;
        caller.write(&mut values, &doubled).unwrap();
        caller.synchronize().unwrap();
        let half = solver.solve(&b).unwrap();
        assert_eq!(half.report.iterations, sol.report.iterations);
        let expected: Vec<f64> = sol.x.iter().map(|x| x / 2.0).collect();
        let d = rel_diff(&half.x, &expected);
        assert!(d < 1e-12, "{d:e}");
        drop(solver);
        assert_eq!(caller.download(&values).unwrap(), doubled);
        assert_eq!(caller.download(&owners.1).unwrap(), index(a.col_idx()));
    }
}
