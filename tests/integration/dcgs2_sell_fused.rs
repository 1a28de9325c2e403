//! GMRES's DCGS2 product and dots fused for SELL (`gmres_dcgs2_spmv_dots_sell`), which runs by
//! default on CUDA only, forced on every GPU backend here (the backends' tuning,
//! `dcgs2_sell_fused` on): the kernel against the two
//! kernels it replaces (CSR and SELL, sorted and unsorted, a dense row), and GMRES(20) on SELL
//! against the host, with one launch fewer per step. PoCL in CI; CUDA with `--include-ignored`
//! and NVIDIA OpenCL on the device.

#![cfg(any(feature = "opencl", feature = "cuda"))]

use crate::common;

use crate::common::dcgs2::{assert_histories_close, gmres20_solve};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat, Tuning};

/// The tuning of the GPU backends here: the fused DCGS2 product and dots for SELL on.
fn forced() -> Tuning {
    let mut tuning = Tuning::default();
    tuning.dcgs2_sell_fused = Some(true);
    tuning
}

fn gmres_on_sell_agrees_with_the_host<B: Backend>(be: &B) {
    let sell = MatrixFormat::Sell { c: 32, sigma: 256 };
    let host = gmres20_solve(&HostBackend::new(), MatrixFormat::Csr);
    let csr = gmres20_solve(be, MatrixFormat::Csr);
    let got = gmres20_solve(be, sell);
    assert_eq!(got.iterations, 40, "{}", be.name());
    // The product and dots in one launch on SELL as on CSR.
    assert_eq!(
        got.inner_counters.launches,
        csr.inner_counters.launches,
        "{}: launches of 40 steps on SELL and CSR",
        be.name()
    );
    assert_histories_close(be.name(), &got, &host);
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use pipekrylov::backend::opencl::OpenClBackend;
    use pipekrylov::backend::DeviceSelector;

    fn backend() -> OpenClBackend {
        OpenClBackend::with_tuning(DeviceSelector::from_env(), forced())
            .expect("an OpenCL device (PoCL in CI)")
    }

    #[test]
    fn opencl_sell_kernel_matches_two_kernels() {
        common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&backend(), true);
    }

    #[test]
    fn opencl_gmres_on_sell_agrees_with_the_host() {
        gmres_on_sell_agrees_with_the_host(&backend());
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use pipekrylov::backend::cuda::CudaBackend;

    fn backend() -> CudaBackend {
        let device = pipekrylov::backend::tuning::cuda_device_from_env().unwrap();
        CudaBackend::with_tuning(device.unwrap_or(0), forced()).expect("a CUDA device")
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU"]
    fn cuda_sell_kernel_matches_two_kernels() {
        common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&backend(), true);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU"]
    fn cuda_gmres_on_sell_agrees_with_the_host() {
        gmres_on_sell_agrees_with_the_host(&backend());
    }
}
