//! GMRES's DCGS2 product and dots fused for SELL (`gmres_dcgs2_spmv_dots_sell`), which runs by
//! default on CUDA only, forced on every GPU backend here (`PIPEKRYLOV_DCGS2_SELL_FUSED=1`, set
//! before the first backend call; the knob is read once per process): the kernel against the two
//! kernels it replaces (CSR and SELL, sorted and unsorted, a dense row), and GMRES(20) on SELL
//! against the host, with one launch fewer per step. PoCL in CI; CUDA with `--include-ignored`
//! and NVIDIA OpenCL on the device.

#![cfg(any(feature = "opencl", feature = "cuda"))]

mod common;

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::solver::{Execution, Gmres, Params, SolveReport};

fn force() {
    std::env::set_var(pipekrylov::backend::tuning::DCGS2_SELL_FUSED_ENV, "1");
}

/// GMRES(20), 40 steps, on a 3D convection-diffusion matrix in SELL-32-256 (n = 4096).
fn solve<B: Backend>(be: &B, format: MatrixFormat) -> SolveReport {
    let a = Generator::ConvDiff3d.generate::<f64>(4096).unwrap().matrix;
    let n = a.n_rows();
    let m = be.upload_matrix(&a, format).unwrap();
    let b = be.upload(&common::rand_vec::<f64>(n, 3)).unwrap();
    let mut x = be.alloc::<f64>(n).unwrap();
    let params = Params {
        restart: 20,
        rtol: 0.0,
        max_iter: 40,
        execution: Execution::Synchronous,
        ..Params::default()
    };
    Gmres::new(be, &m, None, params)
        .unwrap()
        .solve(&b, &mut x)
        .unwrap()
}

fn gmres_on_sell_agrees_with_the_host<B: Backend>(be: &B) {
    force();
    let sell = MatrixFormat::Sell { c: 32, sigma: 256 };
    let host = solve(&HostBackend::new(), MatrixFormat::Csr);
    let csr = solve(be, MatrixFormat::Csr);
    let got = solve(be, sell);
    assert_eq!(got.iterations, 40, "{}", be.name());
    // The product and dots in one launch on SELL as on CSR.
    assert_eq!(
        got.inner_counters.launches,
        csr.inner_counters.launches,
        "{}: launches of 40 steps on SELL and CSR",
        be.name()
    );
    assert_eq!(got.residual_history.len(), host.residual_history.len());
    for (k, (a, b)) in got
        .residual_history
        .iter()
        .zip(&host.residual_history)
        .enumerate()
    {
        assert!(
            (a - b).abs() <= 1e-8 * b.abs().max(1e-300),
            "{}: residual {k}: {a:e} vs {b:e}",
            be.name()
        );
    }
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }

    #[test]
    fn opencl_sell_kernel_matches_two_kernels() {
        force();
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
        CudaBackend::from_env().expect("a CUDA device")
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU"]
    fn cuda_sell_kernel_matches_two_kernels() {
        force();
        common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&backend(), true);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU"]
    fn cuda_gmres_on_sell_agrees_with_the_host() {
        gmres_on_sell_agrees_with_the_host(&backend());
    }
}
