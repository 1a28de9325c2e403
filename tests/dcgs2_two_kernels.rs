//! The two-kernel DCGS2 step (`gmres_dcgs2_finish` + `gmres_dcgs2_update`), which the GPUs use
//! for partials of many groups, forced here for every size with
//! `PIPEKRYLOV_DCGS2_SMALL_MAX_GROUPS=0` (its own test binary: the knob is read once per
//! process): GMRES on every available backend takes 4 launches per step (3 on the GPU backends,
//! which fuse the product with the dots, `gmres_dcgs2_spmv_dots`) and agrees with the host (the
//! one-kernel update is covered by `backend_agreement`, whose sizes give few groups).

mod common;

use common::dcgs2::{assert_histories_close, gmres20_solve};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, Basis, MatrixFormat, Slot};

fn two_kernels_agree<B: Backend>(be: &B) {
    std::env::set_var(pipekrylov::backend::tuning::DCGS2_SMALL_MAX_GROUPS_ENV, "0");
    assert!(!pipekrylov::backend::ops::krylov::dcgs2_small(1, 0, 256));
    let host = gmres20_solve(&HostBackend::new(), MatrixFormat::Csr);
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
    std::env::set_var(pipekrylov::backend::tuning::DCGS2_SMALL_MAX_GROUPS_ENV, "0");
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

#[test]
fn host_two_kernel_dcgs2() {
    two_kernels_agree(&HostBackend::new());
}

#[test]
fn host_split_dcgs2_step() {
    split_step_is_the_update(&HostBackend::new());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_split_dcgs2_step() {
    let be = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    split_step_is_the_update(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_split_dcgs2_step() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    split_step_is_the_update(&be);
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_two_kernel_dcgs2() {
    let be = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    two_kernels_agree(&be);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_two_kernel_dcgs2() {
    let be = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    two_kernels_agree(&be);
}
