//! The Incomplete Poisson matrix assembled on the device (`IncompletePoisson::new_on`, kernels
//! `ip_domain_check` and `ip_assemble`): on every backend it applies like the host assembly
//! (2D/3D Poisson, aniso2d, jump-coefficient diffusion, thermal2d, awkward sizes), CG with it takes the host
//! assembly's iterations (true residual checked), and matrices outside IP's domain are the same
//! typed error as on the host.
//!
//! OpenCL runs in CI on PoCL; the CUDA tests need an NVIDIA GPU and are `#[ignore]`d.

use crate::common::{jump_diffusion, rand_vec, rel_diff};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{IncompletePoisson, Preconditioner};
use pipekrylov::solver::{Cg, Params};
use pipekrylov::Error;

fn problems() -> Vec<(String, CsrMatrix<f64>)> {
    let mut v = vec![
        ("jump3d k=6".to_string(), jump_diffusion(6)),
        (
            "thermal2d 9".to_string(),
            Generator::Thermal2d.generate_with_param(9).unwrap().matrix,
        ),
    ];
    for (g, sizes) in [
        (Generator::Poisson2d, &[1usize, 2, 17, 33][..]),
        (Generator::Poisson3d, &[1, 5, 9][..]),
        (Generator::Aniso2d, &[7, 31][..]),
    ] {
        for &k in sizes {
            v.push((
                format!("{g:?} {k}"),
                g.generate_with_param::<f64>(k).unwrap().matrix,
            ));
        }
    }
    v
}

/// M^-1 r with the device assembly equals M^-1 r with the host assembly (uploaded), using the
/// solver's CSR copy of A and an own upload alike.
fn device_assembly_applies_like_the_host_one<B: Backend>(b: &B) {
    for (name, a) in problems() {
        let n = a.n_rows();
        let r = b.upload(&rand_vec::<f64>(n, n as u64 + 3)).unwrap();
        let host = IncompletePoisson::new(b, &a, MatrixFormat::Csr).unwrap();
        let mut want = b.alloc(n).unwrap();
        host.apply(b, &r, &mut want).unwrap();
        let want = b.download(&want).unwrap();
        let solver_copy = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        for device in [Some(&solver_copy), None] {
            let m = IncompletePoisson::new_on(b, &a, device, MatrixFormat::Csr).unwrap();
            let mut z = b.alloc(n).unwrap();
            m.apply(b, &r, &mut z).unwrap();
            let d = rel_diff(&b.download(&z).unwrap(), &want);
            assert!(
                d < 1e-14,
                "{name} (solver copy: {}): {d:e}",
                device.is_some()
            );
            let t = Preconditioner::<B, f64>::setup_times(&m);
            assert!(t.device_seconds > 0.0, "{name}: no device setup time");
        }
    }
}

/// Both scalings, forced: the device assembly applies like the host assembly of the same
/// scaling, and the scaled matrix is the unscaled one over d on a constant diagonal.
fn device_assembly_of_each_scaling_applies_like_the_host_one<B: Backend>(b: &B) {
    use pipekrylov::precond::{incomplete_poisson_matrix_scaled, IpScaling};
    for (name, a) in problems() {
        let n = a.n_rows();
        let x = rand_vec::<f64>(n, n as u64 + 5);
        let r = b.upload(&x).unwrap();
        for scaling in [IpScaling::None, IpScaling::Symmetric] {
            let host =
                IncompletePoisson::new_with_scaling(b, &a, MatrixFormat::Csr, scaling).unwrap();
            let device =
                IncompletePoisson::with_scaling(b, &a, None, MatrixFormat::Csr, scaling).unwrap();
            let (mut z1, mut z2) = (b.alloc(n).unwrap(), b.alloc(n).unwrap());
            host.apply(b, &r, &mut z1).unwrap();
            device.apply(b, &r, &mut z2).unwrap();
            let (z1, z2) = (b.download(&z1).unwrap(), b.download(&z2).unwrap());
            assert!(rel_diff(&z2, &z1) < 1e-14, "{name} {scaling}");
            let params = Preconditioner::<B, f64>::params(&device);
            let want = if scaling == IpScaling::None {
                "none"
            } else {
                "symmetric"
            };
            assert_eq!(params["scaling"], want, "{name}");
        }
        let d = a.diagonal();
        if d.iter().all(|&v| v == d[0]) {
            let plain = pipekrylov::precond::incomplete_poisson_matrix(&a).unwrap();
            let scaled = incomplete_poisson_matrix_scaled(&a).unwrap();
            let (mut y1, mut y2) = (vec![0.0; n], vec![0.0; n]);
            plain.mul_vec(&x, &mut y1).unwrap();
            scaled.mul_vec(&x, &mut y2).unwrap();
            let y1: Vec<f64> = y1.iter().map(|v| v / d[0]).collect();
            assert!(rel_diff(&y2, &y1) < 1e-14, "{name}: scaled = plain / d");
        }
    }
}

/// CG with the device-assembled IP converges (true residual) in the host assembly's iterations.
fn cg_with_device_ip_converges<B: Backend + 'static>(b: &B) {
    for (name, a) in [
        (
            "thermal2d",
            Generator::Thermal2d.generate_with_param(40).unwrap().matrix,
        ),
        (
            "poisson3d",
            Generator::Poisson3d.generate_with_param(12).unwrap().matrix,
        ),
    ] {
        let n = a.n_rows();
        let dm = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let rhs = b.upload(&vec![1.0; n]).unwrap();
        let params = Params {
            rtol: 1e-8,
            max_iter: 2000,
            ..Params::default()
        };
        let mut its = Vec::new();
        for on_device in [false, true] {
            let m = if on_device {
                IncompletePoisson::new_on(b, &a, Some(&dm), MatrixFormat::Csr).unwrap()
            } else {
                IncompletePoisson::new(b, &a, MatrixFormat::Csr).unwrap()
            };
            let mut x = b.alloc(n).unwrap();
            let r = Cg::new(b, &dm, Some(&m as &dyn Preconditioner<B, f64>), params)
                .unwrap()
                .solve(&rhs, &mut x)
                .unwrap();
            assert!(
                r.stop_reason.converged() && r.relative_true_residual <= 1.1e-8,
                "{name} (device {on_device}): {} after {}, true {:e}",
                r.stop_reason,
                r.iterations,
                r.relative_true_residual
            );
            its.push(r.iterations);
        }
        assert!(its[0].abs_diff(its[1]) <= 1, "{name}: {its:?}");
    }
}

/// Outside IP's domain the device check refuses with the host check's reason.
fn outside_the_domain_is_the_host_error<B: Backend>(b: &B) {
    let cd = Generator::ConvDiff3d
        .generate_with_param::<f64>(4)
        .unwrap()
        .matrix;
    let pos = CsrMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 2.0)])
        .unwrap();
    let zero = CsrMatrix::from_triplets(2, 2, &[(0, 0, 0.0), (1, 1, 2.0)]).unwrap();
    let missing =
        CsrMatrix::from_triplets(2, 2, &[(0, 1, -1.0), (1, 0, -1.0), (1, 1, 2.0)]).unwrap();
    let asym = CsrMatrix::from_triplets(
        2,
        2,
        &[(0, 0, 2.0), (0, 1, -1.0), (1, 0, -1.5), (1, 1, 2.0)],
    )
    .unwrap();
    for (name, a) in [
        ("convdiff3d", cd),
        ("positive", pos),
        ("zero diagonal", zero),
        ("missing diagonal", missing),
        ("asymmetric", asym),
    ] {
        let want = match IncompletePoisson::new(&HostBackend::new(), &a, MatrixFormat::Csr) {
            Err(Error::NotApplicable { reason, .. }) => reason,
            other => panic!("{name}: host {other:?}"),
        };
        match IncompletePoisson::new_on(b, &a, None, MatrixFormat::Csr) {
            Err(Error::NotApplicable { reason, .. }) => assert_eq!(reason, want, "{name}"),
            other => panic!("{name}: device {other:?}"),
        }
    }
}

#[test]
fn host_device_assembly_applies_like_the_host_one() {
    device_assembly_applies_like_the_host_one(&HostBackend::new());
}
#[test]
fn host_device_assembly_of_each_scaling_applies_like_the_host_one() {
    device_assembly_of_each_scaling_applies_like_the_host_one(&HostBackend::new());
}

#[test]
fn host_cg_with_device_ip_converges() {
    cg_with_device_ip_converges(&HostBackend::new());
}
#[test]
fn host_outside_the_domain_is_the_host_error() {
    outside_the_domain_is_the_host_error(&HostBackend::new());
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_device_assembly_applies_like_the_host_one() {
        super::device_assembly_applies_like_the_host_one(&backend());
    }
    #[test]
    fn opencl_device_assembly_of_each_scaling_applies_like_the_host_one() {
        super::device_assembly_of_each_scaling_applies_like_the_host_one(&backend());
    }
    #[test]
    fn opencl_cg_with_device_ip_converges() {
        super::cg_with_device_ip_converges(&backend());
    }
    #[test]
    fn opencl_outside_the_domain_is_the_host_error() {
        super::outside_the_domain_is_the_host_error(&backend());
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use pipekrylov::backend::cuda::CudaBackend;

    fn backend() -> CudaBackend {
        CudaBackend::from_env().expect("an NVIDIA GPU")
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_device_assembly_applies_like_the_host_one() {
        super::device_assembly_applies_like_the_host_one(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_device_assembly_of_each_scaling_applies_like_the_host_one() {
        super::device_assembly_of_each_scaling_applies_like_the_host_one(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_cg_with_device_ip_converges() {
        super::cg_with_device_ip_converges(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_outside_the_domain_is_the_host_error() {
        super::outside_the_domain_is_the_host_error(&backend());
    }
}
