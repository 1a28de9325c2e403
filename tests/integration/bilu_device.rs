//! BILU(0) factored on the backend by fixed-point sweeps (`--factorization sweeps:F`, the
//! `bilu0_scatter` and `bilu0_sweep` kernels): with enough sweeps the factors equal the host's
//! exact factorization to rounding on every backend (block sizes 1..8, awkward sizes, empty and
//! dense block rows, subdomains), every backend's sweeps equal the host backend's, the distance
//! to the exact factors vanishes as F grows, few sweeps already precondition (true residual
//! checked), block-ISAI of the device factors applies like that of the host factors, and missing
//! or singular pivots are typed errors naming the block row.
//!
//! OpenCL runs in CI on PoCL; the CUDA tests need an NVIDIA GPU and are `#[ignore]`d.

use crate::common;

use crate::common::{block_matrix, rel_diff};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{
    Bilu0, Bilu0Options, BiluFactors, BlockIsai, Factorization, Preconditioner, TriangularSolve,
};
use pipekrylov::solver::{Gmres, Params};
use pipekrylov::Error;

fn opts(s: usize, factorization: Factorization, subdomains: usize) -> Bilu0Options {
    Bilu0Options {
        block_size: s,
        solve: TriangularSolve::Sweeps(2),
        subdomains,
        factorization,
    }
}

fn factors<B: Backend>(b: &B, a: &CsrMatrix<f64>, o: Bilu0Options) -> BiluFactors<f64> {
    Bilu0::new(b, a, o).unwrap().download_factors(b).unwrap()
}

/// The largest relative difference of the three value arrays (patterns must be equal).
fn factor_diff(what: &str, x: &BiluFactors<f64>, y: &BiluFactors<f64>) -> f64 {
    assert_eq!(
        (&x.l_row_ptr, &x.l_col_idx, &x.u_row_ptr, &x.u_col_idx),
        (&y.l_row_ptr, &y.l_col_idx, &y.u_row_ptr, &y.u_col_idx),
        "{what}: patterns differ"
    );
    [
        rel_diff(&x.l_values, &y.l_values),
        rel_diff(&x.u_values, &y.u_values),
        rel_diff(&x.u_inv_diag, &y.u_inv_diag),
    ]
    .into_iter()
    .fold(0.0, f64::max)
}

/// Enough sweeps for the exact factors: a block's dependency chain is at most two blocks
/// per smaller block row.
fn exact_sweeps(nb: usize) -> usize {
    2 * nb + 2
}

/// With enough sweeps the backend's factors are the host factorization's, on awkward sizes
/// (1, 31, 33 block rows, empty rows, a dense block row), block sizes 1..8, with subdomains.
fn sweeps_reach_the_exact_factors<B: Backend>(b: &B) {
    for s in 1..=8 {
        for nb in [1, 31, 33] {
            for subdomains in [1, 3] {
                let a = block_matrix(nb, s, false, (s * 100 + nb) as u64);
                let host = factors(
                    &HostBackend::new(),
                    &a,
                    opts(s, Factorization::Host, subdomains),
                );
                let dev = factors(
                    b,
                    &a,
                    opts(s, Factorization::Sweeps(exact_sweeps(nb)), subdomains),
                );
                let what = format!("s={s} nb={nb} P={subdomains}");
                let d = factor_diff(&what, &host, &dev);
                assert!(d < 1e-12, "{what}: device sweeps vs host factors {d:e}");
            }
        }
    }
}

/// Each backend's F sweeps equal the host backend's F sweeps (same arithmetic order), and the
/// distance to the exact factors shrinks to rounding as F grows (diagonally dominant case).
fn sweeps_agree_with_the_host_backend<B: Backend>(b: &B) {
    let host = HostBackend::new();
    for s in [1, 3, 4, 5] {
        let nb = 33;
        let a = block_matrix(nb, s, false, 9 + s as u64);
        let exact = factors(&host, &a, opts(s, Factorization::Host, 1));
        let mut errors = Vec::new();
        for f in [0, 1, 2, 3, 5, 8, exact_sweeps(nb)] {
            let mine = factors(b, &a, opts(s, Factorization::Sweeps(f), 1));
            let reference = factors(&host, &a, opts(s, Factorization::Sweeps(f), 1));
            let d = factor_diff(&format!("s={s} F={f}"), &mine, &reference);
            assert!(d < 1e-13, "s={s} F={f}: backend vs host backend {d:e}");
            errors.push(factor_diff("", &mine, &exact));
        }
        assert!(
            errors[0] > 1e-6,
            "s={s}: the initial guess is already exact ({errors:?})"
        );
        assert!(
            errors.last().unwrap() < &1e-12,
            "s={s}: not exact after enough sweeps ({errors:?})"
        );
        assert!(
            errors[3] < errors[0],
            "s={s}: three sweeps no closer than the initial guess ({errors:?})"
        );
    }
}

/// A few sweeps precondition GMRES(30) on convdiff3d (block size 4) nearly as well as the
/// exact factors; the true residual is checked.
fn few_sweeps_precondition<B: Backend + 'static>(b: &B) {
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(16)
        .unwrap()
        .matrix;
    let n = a.n_rows();
    let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let rhs = b.upload(&vec![1.0; n]).unwrap();
    let params = Params {
        rtol: 1e-8,
        max_iter: 400,
        gmres: pipekrylov::solver::GmresParams {
            restart: 30,
            ..Default::default()
        },
        ..Params::default()
    };
    let mut its = Vec::new();
    for f in [
        Factorization::Host,
        Factorization::Sweeps(1),
        Factorization::Sweeps(3),
    ] {
        let pc = Bilu0::new_on(b, &a, Some(&m), opts(4, f, 1)).unwrap();
        assert_eq!(
            Preconditioner::<B, f64>::params(&pc)["factorization"],
            f.to_string()
        );
        let mut x = b.alloc(n).unwrap();
        let r = Gmres::new(b, &m, Some(&pc as &dyn Preconditioner<B, f64>), params)
            .unwrap()
            .solve(&rhs, &mut x)
            .unwrap();
        assert!(
            r.stop_reason.converged() && r.relative_true_residual <= 1.1e-8,
            "{f}: {} after {} iterations, true {:e}",
            r.stop_reason,
            r.iterations,
            r.relative_true_residual
        );
        its.push(r.iterations);
    }
    // Sweeps cost some iterations, not many.
    assert!(its[1] <= 2 * its[0] && its[2] <= its[1] + 2, "{its:?}");
}

/// A block row without a diagonal block, and a singular diagonal block, are typed errors
/// naming the first such block row; the backend stays usable.
fn pivots_are_typed_errors<B: Backend>(b: &B) {
    // Block row 2 of 4 (s = 2) has no diagonal block.
    let mut t = Vec::new();
    for i in 0..8 {
        if i / 2 != 2 {
            t.push((i, i, 4.0));
        }
        if i + 2 < 8 {
            t.push((i, i + 2, 1.0));
            t.push((i + 2, i, 1.0));
        }
    }
    let a = CsrMatrix::from_triplets(8, 8, &t).unwrap();
    match Bilu0::new(b, &a, opts(2, Factorization::Sweeps(3), 1)) {
        Err(Error::SingularPivot { block_row: 2, .. }) => {}
        other => panic!("missing diagonal block: {other:?}"),
    }
    // Block row 1 (s = 2) holds a singular diagonal block [[1, 2], [2, 4]] and no couplings
    // into it, so every sweep sees it as it is.
    let t = vec![
        (0, 0, 3.0),
        (1, 1, 3.0),
        (2, 2, 1.0),
        (2, 3, 2.0),
        (3, 2, 2.0),
        (3, 3, 4.0),
        (4, 4, 3.0),
        (5, 5, 3.0),
        (4, 0, 1.0),
    ];
    let a = CsrMatrix::from_triplets(6, 6, &t).unwrap();
    for f in [0, 2] {
        match Bilu0::new(b, &a, opts(2, Factorization::Sweeps(f), 1)) {
            Err(Error::SingularPivot { block_row: 1, .. }) => {}
            other => panic!("singular block, F = {f}: {other:?}"),
        }
    }
    // Still usable.
    let good = block_matrix(5, 2, false, 3);
    assert!(Bilu0::new(b, &good, opts(2, Factorization::Sweeps(2), 1)).is_ok());
}

/// Block-ISAI of the device factors: with enough sweeps it applies like block-ISAI of the host
/// factors (k = 1..3, block sizes 1, 3, 4).
fn isai_of_device_factors<B: Backend>(b: &B) {
    for s in [1, 3, 4] {
        let nb = 33;
        let a = block_matrix(nb, s, false, 41 + s as u64);
        let n = a.n_rows();
        let r = b.upload(&common::rand_vec::<f64>(n, 5)).unwrap();
        for level in 1..=3 {
            let mut z = Vec::new();
            for f in [Factorization::Host, Factorization::Sweeps(exact_sweeps(nb))] {
                let m = BlockIsai::new_on(b, &a, None, s, level, f).unwrap();
                assert_eq!(
                    Preconditioner::<B, f64>::params(&m)["factorization"],
                    f.to_string()
                );
                let mut out = b.alloc(n).unwrap();
                m.apply(b, &r, &mut out).unwrap();
                z.push(b.download(&out).unwrap());
            }
            let d = rel_diff(&z[1], &z[0]);
            assert!(
                d < 1e-11,
                "s={s} k={level}: ISAI of device vs host factors {d:e}"
            );
        }
    }
}

#[test]
fn factorization_parses() {
    assert_eq!(
        "host".parse::<Factorization>().unwrap(),
        Factorization::Host
    );
    assert_eq!(
        "sweeps:3".parse::<Factorization>().unwrap(),
        Factorization::Sweeps(3)
    );
    for bad in ["", "sweeps", "sweeps:", "sweeps:-1", "device", "sweeps:x"] {
        assert!(matches!(
            bad.parse::<Factorization>(),
            Err(Error::InvalidParameter { .. })
        ));
    }
}

#[test]
fn host_sweeps_reach_the_exact_factors() {
    sweeps_reach_the_exact_factors(&HostBackend::new());
}
#[test]
fn host_sweeps_agree_with_the_host_backend() {
    sweeps_agree_with_the_host_backend(&HostBackend::new());
}
#[test]
fn host_few_sweeps_precondition() {
    few_sweeps_precondition(&HostBackend::new());
}
#[test]
fn host_pivots_are_typed_errors() {
    pivots_are_typed_errors(&HostBackend::new());
}
#[test]
fn host_isai_of_device_factors() {
    isai_of_device_factors(&HostBackend::new());
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_sweeps_reach_the_exact_factors() {
        super::sweeps_reach_the_exact_factors(&backend());
    }
    #[test]
    fn opencl_sweeps_agree_with_the_host_backend() {
        super::sweeps_agree_with_the_host_backend(&backend());
    }
    #[test]
    fn opencl_few_sweeps_precondition() {
        super::few_sweeps_precondition(&backend());
    }
    #[test]
    fn opencl_pivots_are_typed_errors() {
        super::pivots_are_typed_errors(&backend());
    }
    #[test]
    fn opencl_isai_of_device_factors() {
        super::isai_of_device_factors(&backend());
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
    fn cuda_sweeps_reach_the_exact_factors() {
        super::sweeps_reach_the_exact_factors(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_sweeps_agree_with_the_host_backend() {
        super::sweeps_agree_with_the_host_backend(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_few_sweeps_precondition() {
        super::few_sweeps_precondition(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_pivots_are_typed_errors() {
        super::pivots_are_typed_errors(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_isai_of_device_factors() {
        super::isai_of_device_factors(&backend());
    }
}
