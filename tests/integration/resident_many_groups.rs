//! The device-resident kernels finish the last iteration's sums themselves in the host's 32-lane
//! order (`ordered_slot_sums` in `kernels/dialect/cuda.h`, `kernels/bicgstab.kc`: each lane adds
//! every 32nd group, then the lanes pairwise). With 256 groups per compute unit (the backend's
//! tuning, `reduction_groups_per_sm`) a
//! 2-core CPU OpenCL device gets 512 groups at n = 160,000 (16 per lane; the GPUs get 625, not a
//! multiple of 32), and the device-resident CG, PCG and BiCGStab must still equal the synchronous
//! mode bit for bit (iterations, residual history, solution). PoCL in CI; CUDA with `--include-ignored` and NVIDIA
//! OpenCL on the device.

#![cfg(any(feature = "opencl", feature = "cuda"))]

use crate::common;

use pipekrylov::backend::{Backend, MatrixFormat, Tuning};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{Jacobi, Preconditioner};
use pipekrylov::solver::{BiCgStab, Cg, Execution, Params, SolveReport};

/// One solve of thermal2d (n = 160,000) with 60 iterations; the report and x.
fn solve<B: Backend>(
    be: &B,
    bicgstab: bool,
    jacobi: bool,
    execution: Execution,
) -> (SolveReport, Vec<f64>) {
    let a = Generator::Thermal2d.generate::<f64>(N).unwrap().matrix;
    let m = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let jac = jacobi.then(|| Jacobi::new(be, &a).unwrap());
    let pc = jac.as_ref().map(|j| j as &dyn Preconditioner<B, f64>);
    let b = be.upload(&common::rand_vec(a.n_rows(), 11)).unwrap();
    let mut x = be.alloc(a.n_rows()).unwrap();
    let params = Params {
        execution,
        max_iter: 60,
        rtol: 1e-30,
        ..Params::default()
    };
    let report = if bicgstab {
        BiCgStab::new(be, &m, pc, params).unwrap().solve(&b, &mut x)
    } else {
        Cg::new(be, &m, pc, params).unwrap().solve(&b, &mut x)
    }
    .unwrap();
    (report, be.download(&x).unwrap())
}

const N: usize = 160_000;

fn resident_equals_sync_with_many_groups<B: Backend>(be: &B) {
    let probe = be.partials::<f64>(N, 1).unwrap();
    assert!(
        probe.groups() > 4 * 256 / 3,
        "{}: {} groups, not enough for several staging rounds",
        be.name(),
        probe.groups()
    );
    for (bicgstab, jacobi) in [(false, false), (false, true), (true, false)] {
        let label = format!("{} bicgstab={bicgstab} jacobi={jacobi}", be.name());
        let (s, sx) = solve(be, bicgstab, jacobi, Execution::Synchronous);
        let (r, rx) = solve(be, bicgstab, jacobi, Execution::DeviceResident);
        common::assert_resident_equals_sync(&label, 60, (&s, &sx), (&r, &rx));
    }
}

fn many_groups() -> Tuning {
    let mut tuning = Tuning::default();
    tuning.reduction_groups_per_sm = Some(256);
    tuning
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_resident_equals_sync_with_many_groups() {
    use pipekrylov::backend::{opencl::OpenClBackend, DeviceSelector};
    let be = OpenClBackend::with_tuning(DeviceSelector::from_env(), many_groups())
        .expect("an OpenCL device (PoCL in CI)");
    resident_equals_sync_with_many_groups(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_resident_equals_sync_with_many_groups() {
    let device = pipekrylov::backend::tuning::cuda_device_from_env().unwrap();
    let be =
        pipekrylov::backend::cuda::CudaBackend::with_tuning(device.unwrap_or(0), many_groups())
            .expect("a CUDA device");
    resident_equals_sync_with_many_groups(&be);
}
