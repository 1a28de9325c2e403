//! The device-resident CG and PCG updates can take their sums from `cg_sums_resident`, which
//! finishes them once per iteration (by default on CUDA where the product leaves 1024 or more
//! partials per sum). These tests force it for every update (the backend's tuning:
//! `cg_sums_kernel` on and `cg_fused` off) and check that the device-resident
//! mode still equals the synchronous one bit for bit: iterations, residual history, solution. PoCL
//! in CI; CUDA with `--include-ignored` and NVIDIA OpenCL on the device.

#![cfg(any(feature = "opencl", feature = "cuda"))]

use crate::common;

use pipekrylov::backend::{Backend, MatrixFormat, Tuning};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{Jacobi, Preconditioner};
use pipekrylov::solver::{Cg, Execution, Params, SolveReport};

/// One CG solve of thermal2d (n = 40,000) with 80 iterations; the report and x.
fn solve<B: Backend>(be: &B, jacobi: bool, execution: Execution) -> (SolveReport, Vec<f64>) {
    let a = Generator::Thermal2d.generate::<f64>(40_000).unwrap().matrix;
    let m = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let jac = jacobi.then(|| Jacobi::new(be, &a).unwrap());
    let pc = jac.as_ref().map(|j| j as &dyn Preconditioner<B, f64>);
    let b = be.upload(&common::rand_vec(a.n_rows(), 5)).unwrap();
    let mut x = be.alloc(a.n_rows()).unwrap();
    let params = Params {
        execution,
        max_iter: 80,
        rtol: 1e-30,
        ..Params::default()
    };
    let report = Cg::new(be, &m, pc, params)
        .unwrap()
        .solve(&b, &mut x)
        .unwrap();
    (report, be.download(&x).unwrap())
}

fn resident_equals_sync_with_the_sums_kernel<B: Backend>(be: &B) {
    for jacobi in [false, true] {
        let label = format!("{} jacobi={jacobi}", be.name());
        let (s, sx) = solve(be, jacobi, Execution::Synchronous);
        let (r, rx) = solve(be, jacobi, Execution::DeviceResident);
        common::assert_resident_equals_sync(&label, 80, (&s, &sx), (&r, &rx));
        // The sums kernel is one launch more per iteration than the update and the product
        // (plus the preconditioner's application with Jacobi).
        let kernels = if jacobi { 4.0 } else { 3.0 };
        assert!(
            r.launches_per_iteration >= kernels && r.launches_per_iteration < kernels + 0.5,
            "{label}: {} launches per iteration, expected about {kernels}",
            r.launches_per_iteration
        );
    }
}

fn force_the_sums_kernel() -> Tuning {
    let mut tuning = Tuning::default();
    tuning.cg_sums_kernel = Some(true);
    tuning.cg_fused = Some(false);
    tuning
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_resident_equals_sync_with_the_sums_kernel() {
    use pipekrylov::backend::{opencl::OpenClBackend, DeviceSelector};
    let be = OpenClBackend::with_tuning(DeviceSelector::from_env(), force_the_sums_kernel())
        .expect("an OpenCL device (PoCL in CI)");
    resident_equals_sync_with_the_sums_kernel(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_resident_equals_sync_with_the_sums_kernel() {
    let device = pipekrylov::backend::tuning::cuda_device_from_env().unwrap();
    let tuning = force_the_sums_kernel();
    let be = pipekrylov::backend::cuda::CudaBackend::with_tuning(device.unwrap_or(0), tuning)
        .expect("a CUDA device");
    resident_equals_sync_with_the_sums_kernel(&be);
}
