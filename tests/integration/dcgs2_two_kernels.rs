//! The two-kernel DCGS2 step (`gmres_dcgs2_finish` + `gmres_dcgs2_update`), which the GPUs use
//! for partials of many groups, forced here for every size by the backends' tuning
//! (`dcgs2_small_max_groups` 0): GMRES on every available backend takes 4 launches per step (3 on
//! the GPU backends,
//! which fuse the product with the dots, `gmres_dcgs2_spmv_dots`) and agrees with the host (the
//! one-kernel update is covered by `backend_agreement`, whose sizes give few groups).

use crate::common;

use crate::common::dcgs2::{assert_histories_close, gmres20_solve};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, Basis, MatrixFormat, Slot, Tuning};

/// The tuning of every backend here: DCGS2 in two kernels whatever the group count.
fn two_kernels() -> Tuning {
    let mut tuning = Tuning::default();
    tuning.dcgs2_small_max_groups = 0;
    tuning
}

fn two_kernels_agree<B: Backend>(be: &B) {
    assert_eq!(be.tuning().dcgs2_small_max_groups, 0);
    assert!(!be.tuning().dcgs2_small_for(1, 0, 256));
    let host = gmres20_solve(&HostBackend::with_tuning(two_kernels()), MatrixFormat::Csr);
    let got = gmres20_solve(be, MatrixFormat::Csr);
    assert_eq!(got.iterations, 40, "{}", be.name());
    // The GPU backends also fuse the product and the dots (gmres_dcgs2_spmv_dots) on CSR.
    let per_step = if be.name() == "host" { 4 } else { 3 };
    assert_eq!(
        got.inner_counters.launches,
        per_step * 40,
        "{}: launches of 40 steps",
        be.name()
    );
    assert_histories_close(be.name(), &got, &host);
}

/// `gmres_dcgs2_sums` then `gmres_dcgs2_apply` (the distributed backend sums the step's
/// coefficients over the ranks in between) are `gmres_dcgs2_update` bit for bit: the same basis
/// columns and the same 2 count + 4 coefficients.
fn split_step_is_the_update<B: Backend>(be: &B) {
    assert_eq!(be.tuning().dcgs2_small_max_groups, 0);
    let (n, cols, ucol, off) = (3001, 7, 4, 5);
    let data = common::rand_vec::<f64>(n * cols, 11);
    let step = |split: bool| {
        let mut basis = Basis::from_buffer(be.upload(&data).unwrap(), n, cols).unwrap();
        let mut pa = be.partials::<f64>(n, ucol).unwrap();
        let mut pc = be.partials::<f64>(n, ucol).unwrap();
        // a = <v_k, u> for k = 1..ucol-1 and nu = <u, u>; c = <v_k, w> and d = <u, w>.
        be.basis_dots(&basis, ucol, 1..ucol + 1, &mut pa, Slot(0))
            .unwrap();
        be.basis_dots(&basis, ucol + 1, 1..ucol + 1, &mut pc, Slot(0))
            .unwrap();
        let mut coef = be.upload(&vec![0.0f64; off + 2 * ucol + 2]).unwrap();
        if split {
            be.gmres_dcgs2_sums(&basis, ucol, &pa, &pc, &mut coef, off)
                .unwrap();
            be.gmres_dcgs2_apply(&mut basis, ucol, &mut coef, off)
                .unwrap();
        } else {
            be.gmres_dcgs2_update(&mut basis, ucol, &pa, &pc, &mut coef, off)
                .unwrap();
        }
        (
            be.download(basis.buffer()).unwrap(),
            be.download(&coef).unwrap(),
        )
    };
    let (whole, split) = (step(false), step(true));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&split.1),
        bits(&whole.1),
        "{}: coefficients",
        be.name()
    );
    assert_eq!(bits(&split.0), bits(&whole.0), "{}: basis", be.name());
    // The step did something: u was normalized.
    assert_ne!(bits(&whole.0), bits(&data), "{}", be.name());
}

#[cfg(feature = "opencl")]
fn opencl() -> pipekrylov::backend::opencl::OpenClBackend {
    use pipekrylov::backend::{opencl::OpenClBackend, DeviceSelector};
    OpenClBackend::with_tuning(DeviceSelector::from_env(), two_kernels())
        .expect("an OpenCL device (PoCL in CI)")
}

#[cfg(feature = "cuda")]
fn cuda() -> pipekrylov::backend::cuda::CudaBackend {
    let device = pipekrylov::backend::tuning::cuda_device_from_env().unwrap();
    pipekrylov::backend::cuda::CudaBackend::with_tuning(device.unwrap_or(0), two_kernels())
        .expect("a CUDA device")
}

#[test]
fn host_two_kernel_dcgs2() {
    two_kernels_agree(&HostBackend::with_tuning(two_kernels()));
}

#[test]
fn host_split_dcgs2_step() {
    split_step_is_the_update(&HostBackend::with_tuning(two_kernels()));
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_split_dcgs2_step() {
    split_step_is_the_update(&opencl());
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_split_dcgs2_step() {
    split_step_is_the_update(&cuda());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_two_kernel_dcgs2() {
    two_kernels_agree(&opencl());
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_two_kernel_dcgs2() {
    two_kernels_agree(&cuda());
}
