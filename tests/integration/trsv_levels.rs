//! The exact triangular solves of BILU(0) and ILU with runs of narrow levels in one launch
//! (`bsr_trsv_levels_group`: one work-group, a barrier between levels): the same z = M^-1 r as
//! the host backend's level-by-level solve, and the launches they save, on a chain (a tridiagonal
//! matrix: one row per level), a small grid (every level narrow), a grid whose middle levels are
//! wider than a group (narrow runs at both ends) and block rows of 3.
//!
//! OpenCL runs in CI on PoCL; the CUDA tests need an NVIDIA GPU and are `#[ignore]`d.

use crate::common::{block_matrix, rel_diff};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, VectorOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{Bilu0, Bilu0Options, Ilu, IluOptions, Preconditioner, TriangularSolve};

/// The 1D Laplacian of n rows: L and U are chains of n levels of one row.
fn chain(n: usize) -> CsrMatrix<f64> {
    let mut t = Vec::new();
    for i in 0..n {
        t.push((i, i, 2.5));
        if i > 0 {
            t.push((i, i - 1, -1.0));
        }
        if i + 1 < n {
            t.push((i, i + 1, -1.2));
        }
    }
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

/// z = M^-1 r on `b` and on the host backend for r_i = sin(i + 1): equal to rounding; the
/// launches per application equal on the host backend, fewer than the levels and at most
/// `most_launches` on a backend that runs kernels.
fn compare<B: Backend>(
    b: &B,
    what: &str,
    built: Box<dyn Preconditioner<B, f64>>,
    host: Box<dyn Preconditioner<HostBackend, f64>>,
    most_launches: usize,
) {
    let h = HostBackend::new();
    let n = built.n();
    let r: Vec<f64> = (0..n).map(|i| ((i + 1) as f64).sin()).collect();
    let (rb, rh) = (b.upload(&r).unwrap(), h.upload(&r).unwrap());
    let (mut zb, mut zh) = (b.alloc(n).unwrap(), h.alloc(n).unwrap());
    built.apply(b, &rb, &mut zb).unwrap();
    host.apply(&h, &rh, &mut zh).unwrap();
    let (zb, zh) = (b.download(&zb).unwrap(), h.download(&zh).unwrap());
    assert!(
        zh.iter().all(|v| v.is_finite()),
        "{what}: host z not finite"
    );
    let d = rel_diff(&zb, &zh);
    assert!(d <= 1e-13, "{what}: z differs from the host's by {d:e}");
    let (lb, lh) = (built.launches_per_apply(), host.launches_per_apply());
    if b.name() == "host" {
        assert_eq!(lb, lh, "{what}: launches");
    } else {
        assert!(
            lb <= most_launches && lb < lh,
            "{what}: {lb} launches per application (host: {lh} levels, at most {most_launches} expected)"
        );
    }
}

fn exact_solves_equal_the_hosts<B: Backend + 'static>(b: &B) {
    let h = HostBackend::new();
    let bilu = |s: usize| Bilu0Options {
        block_size: s,
        solve: TriangularSolve::Exact,
        ..Bilu0Options::default()
    };
    let ilu = IluOptions {
        solve: TriangularSolve::Exact,
        ..IluOptions::default()
    };
    let grid = |k: usize| {
        Generator::Poisson2d
            .generate_with_param::<f64>(k)
            .unwrap()
            .matrix
    };
    // (what, matrix, block size, most launches per application on a kernel backend)
    let cases: Vec<(&str, CsrMatrix<f64>, usize, usize)> = vec![
        ("chain 700", chain(700), 1, 2),
        ("grid 40 x 40", grid(40), 1, 2),
        // Diagonals of up to 300 rows: narrow runs at both ends, 88 wide levels in between.
        ("grid 300 x 300", grid(300), 1, 2 * (2 + 88)),
        ("blocks of 3", block_matrix(90, 3, false, 7), 3, 2),
    ];
    for (what, a, s, most) in &cases {
        compare(
            b,
            &format!("bilu0 {what}"),
            Box::new(Bilu0::new(b, a, bilu(*s)).unwrap()),
            Box::new(Bilu0::new(&h, a, bilu(*s)).unwrap()),
            *most,
        );
        if *s == 1 {
            compare(
                b,
                &format!("ilu {what}"),
                Box::new(Ilu::new(b, a, ilu).unwrap()),
                Box::new(Ilu::new(&h, a, ilu).unwrap()),
                // Its own ordering makes other levels: only fewer launches than levels asked.
                usize::MAX,
            );
        }
    }
}

#[test]
fn host_exact_solves_equal_the_hosts() {
    exact_solves_equal_the_hosts(&HostBackend::new());
}

#[cfg(feature = "opencl")]
mod opencl {
    #[test]
    fn opencl_exact_solves_equal_the_hosts() {
        let b = pipekrylov::backend::opencl::OpenClBackend::from_env()
            .expect("an OpenCL device (PoCL in CI)");
        super::exact_solves_equal_the_hosts(&b);
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use pipekrylov::backend::cuda::CudaBackend;
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_exact_solves_equal_the_hosts() {
        super::exact_solves_equal_the_hosts(&CudaBackend::from_env().expect("an NVIDIA GPU"));
    }
}
