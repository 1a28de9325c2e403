//! Adaptive FSAI (seed 004 Algorithm 1): the grown pattern against an independent dense
//! reference, identical patterns and equal factors on every backend (host is the reference),
//! rows that stop growing early, PCG convergence against Jacobi-PCG, typed errors.

#![allow(clippy::needless_range_loop)]

mod common;

use common::rel_diff;
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{AfsaiGrowth, Backend, DeviceFormat, DeviceMatrix, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::matrix_market::read_csr;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{AfsaiOptions, Fsai, FsaiOptions, Jacobi, Preconditioner};
use pipekrylov::Error;

fn growth(max_steps: usize, per_step: usize, eps: f64) -> AfsaiGrowth {
    AfsaiGrowth {
        max_steps,
        per_step,
        eps,
    }
}

/// A random SPD matrix (random symmetric pattern, entries of both signs, dominant diagonal).
fn spd_matrix(n: usize, links: usize, seed: u64) -> CsrMatrix<f64> {
    let mut r = common::Rng(seed | 1);
    let mut t = Vec::new();
    let mut diag = vec![1.0; n];
    for i in 0..n {
        for _ in 0..links {
            let j = r.below(n);
            if j != i {
                let v = r.next_f64() - 0.5;
                t.push((i, j, v));
                t.push((j, i, v));
                diag[i] += v.abs();
                diag[j] += v.abs();
            }
        }
    }
    for (i, d) in diag.iter().enumerate() {
        t.push((i, i, *d));
    }
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

/// Row i's pattern by the definitions alone: G~(i, P) from the dense system (8) by Gaussian
/// elimination, the gradient (16) as a dense product, psi = a_ii + A[i, P] G~(i, P).
fn dense_reference_row(a: &CsrMatrix<f64>, i: usize, g: &AfsaiGrowth) -> Vec<u32> {
    let psi0 = common::entry(a, i, i);
    let mut p: Vec<usize> = Vec::new();
    let mut w: Vec<f64> = Vec::new();
    for _ in 0..g.max_steps {
        let mut cand: Vec<(f64, usize)> = (0..i)
            .filter(|j| !p.contains(j))
            .map(|j| {
                let s = common::entry(a, j, i)
                    + p.iter()
                        .zip(&w)
                        .map(|(&r, &wr)| wr * common::entry(a, j, r))
                        .sum::<f64>();
                (s.abs(), j)
            })
            .filter(|&(v, _)| v > 0.0)
            .collect();
        if cand.is_empty() {
            break;
        }
        cand.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        p.extend(cand.iter().take(g.per_step).map(|&(_, j)| j));
        let m: Vec<Vec<f64>> = p
            .iter()
            .map(|&r| p.iter().map(|&c| common::entry(a, r, c)).collect())
            .collect();
        let rhs: Vec<f64> = p.iter().map(|&r| -common::entry(a, r, i)).collect();
        w = common::dense_solve(m, rhs);
        let psi = psi0
            + p.iter()
                .zip(&w)
                .map(|(&r, &wr)| common::entry(a, i, r) * wr)
                .sum::<f64>();
        if psi <= g.eps * psi0 {
            break;
        }
    }
    p.iter().map(|&j| j as u32).collect()
}

/// The raw grown pattern on `b`: (lengths, columns in insertion order), batch by batch of
/// `batch` rows.
fn grown<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    g: AfsaiGrowth,
    batch: usize,
) -> Vec<Option<Vec<u32>>> {
    let n = a.n_rows();
    let cap = g.cap();
    let dev = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let mut scratch = b.alloc::<f64>(batch * g.scalars_per_row()).unwrap();
    let mut iscratch = b.alloc::<u32>(batch * g.indices_per_row()).unwrap();
    let mut cols = b.alloc::<u32>(n * cap).unwrap();
    let mut lens = b.alloc::<u32>(n).unwrap();
    let mut start = 0;
    while start < n {
        let end = (start + batch).min(n);
        b.afsai_grow(
            &dev,
            g,
            start..end,
            &mut scratch,
            &mut iscratch,
            &mut cols,
            &mut lens,
        )
        .unwrap();
        start = end;
    }
    let (cols, lens) = (b.download(&cols).unwrap(), b.download(&lens).unwrap());
    (0..n)
        .map(|i| (lens[i] != u32::MAX).then(|| cols[i * cap..i * cap + lens[i] as usize].to_vec()))
        .collect()
}

#[test]
fn host_pattern_matches_the_dense_reference() {
    let host = HostBackend::new();
    for (n, links, seed) in [(1, 1, 1), (9, 2, 2), (40, 2, 3), (64, 3, 4)] {
        let a = spd_matrix(n, links, seed);
        for g in [
            growth(30, 1, 1e-3),
            growth(4, 1, 0.0),
            growth(5, 3, 0.0),
            growth(10, 2, 0.9),
        ] {
            let rows = grown(&host, &a, g, 7);
            for (i, row) in rows.iter().enumerate() {
                let want = dense_reference_row(&a, i, &g);
                assert_eq!(
                    row.as_deref(),
                    Some(&want[..]),
                    "n={n} row {i} growth {g:?}"
                );
            }
        }
    }
}

/// Rows that stop growing early: in a block-diagonal matrix (blocks of 4) row i can only reach
/// the earlier rows of its own block, and the first row of a block has nothing to add.
#[test]
fn rows_stop_growing_at_their_block() {
    let n = 4 * 9;
    let mut t = Vec::new();
    for b in 0..9 {
        for r in 0..4 {
            let i = 4 * b + r;
            t.push((i, i, 4.0));
            if r + 1 < 4 {
                t.push((i, i + 1, -1.0));
                t.push((i + 1, i, -1.0));
            }
        }
    }
    let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
    let rows = grown(&HostBackend::new(), &a, growth(30, 1, 0.0), 5);
    for (i, row) in rows.iter().enumerate() {
        let mut row = row.clone().unwrap();
        row.sort_unstable();
        let first = (i / 4 * 4) as u32;
        assert_eq!(row, (first..i as u32).collect::<Vec<_>>(), "row {i}");
    }
}

/// Every backend grows the host's pattern exactly (same insertion order) and its G equals the
/// host's to rounding; exact ties (Poisson's equal off-diagonals) go to the smaller column on
/// every backend.
fn patterns_and_factors_match_host<B: Backend>(b: &B) {
    let host = HostBackend::new();
    let cases: Vec<(&str, CsrMatrix<f64>)> = vec![
        ("random n=1", spd_matrix(1, 1, 5)),
        ("random n=33", spd_matrix(33, 2, 6)),
        ("random n=257", spd_matrix(257, 3, 7)),
        (
            "poisson2d",
            Generator::Poisson2d.generate_with_param(13).unwrap().matrix,
        ),
        (
            "elasticity3d",
            Generator::Elasticity3d
                .generate_with_param(3)
                .unwrap()
                .matrix,
        ),
        (
            "494_bus",
            read_csr::<f64>(format!(
                "{}/tests/data/494_bus.mtx",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        ),
    ];
    for (name, a) in &cases {
        for g in [growth(30, 1, 1e-3), growth(6, 3, 0.0)] {
            let want = grown(&host, a, g, a.n_rows().max(1));
            // An awkward batch size on the backend: the rows of a launch change.
            let got = grown(b, a, g, 29);
            assert_eq!(got, want, "{}: {name} {g:?}", b.name());
            let opts = AfsaiOptions { growth: g };
            let fh = Fsai::adaptive(&host, a, opts).unwrap();
            let fb = Fsai::adaptive(b, a, opts).unwrap();
            let (gh, gb) = (csr_of(&host, fh.factors().0), csr_of(b, fb.factors().0));
            assert_eq!((&gh.0, &gh.1), (&gb.0, &gb.1), "{name}: pattern of G");
            let d = rel_diff(&gh.2, &gb.2);
            assert!(d <= 1e-12, "{}: {name} G differs by {d:e}", b.name());
        }
    }
}

/// On the host itself: the rows of a launch (batch of 29 against all rows at once) do not
/// change the pattern.
#[test]
fn host_patterns_do_not_depend_on_the_batch() {
    patterns_and_factors_match_host(&HostBackend::new());
}

fn csr_of<B: Backend>(b: &B, m: &DeviceMatrix<f64>) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    match m.format() {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } => (
            b.download(row_ptr).unwrap(),
            b.download(col_idx).unwrap(),
            b.download(values).unwrap(),
        ),
        _ => panic!("FSAI factors are CSR"),
    }
}

/// PCG + aFSAI (the paper's defaults) converges, true residual checked, with at most half the
/// iterations of Jacobi-PCG and fewer than the static FSAI of level 1.
fn pcg_with_afsai_converges<B: Backend + 'static>(b: &B) {
    let cases: Vec<(&str, CsrMatrix<f64>)> = vec![
        (
            "elasticity3d",
            Generator::Elasticity3d
                .generate_with_param(6)
                .unwrap()
                .matrix,
        ),
        (
            "aniso2d",
            Generator::Aniso2d.generate_with_param(60).unwrap().matrix,
        ),
        ("jump-diffusion", common::jump_diffusion(12)),
        (
            "494_bus",
            read_csr::<f64>(format!(
                "{}/tests/data/494_bus.mtx",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        ),
    ];
    for (name, a) in &cases {
        let jac = Jacobi::new(b, a).unwrap();
        let jr = common::pcg_a_ones(b, a, Some(&jac));
        let sf = Fsai::new(b, a, FsaiOptions::default()).unwrap();
        let sr = common::pcg_a_ones(b, a, Some(&sf));
        let af = Fsai::adaptive(b, a, AfsaiOptions::default()).unwrap();
        let r = common::pcg_a_ones(b, a, Some(&af));
        let what = format!(
            "{}: {name}: afsai {} its ({}, density {:.2}), static fsai {}, Jacobi {}",
            b.name(),
            r.iterations,
            r.stop_reason,
            af.density(),
            sr.iterations,
            jr.iterations
        );
        assert!(
            r.stop_reason.converged() && r.relative_true_residual <= 1.1e-8,
            "{what}"
        );
        assert!(2 * r.iterations <= jr.iterations, "{what}");
        assert!(r.iterations < sr.iterations, "{what}");
        assert_eq!(Preconditioner::<B, f64>::name(&af), "afsai");
        let p = Preconditioner::<B, f64>::params(&af);
        assert_eq!(p["variant"], "adaptive", "{p}");
        assert_eq!(p["max_steps"], 30, "{p}");
    }
}

#[test]
fn host_pcg_with_afsai_converges() {
    pcg_with_afsai_converges(&HostBackend::new());
}

#[test]
fn afsai_bad_input_is_a_typed_error() {
    let host = HostBackend::new();
    let a: CsrMatrix<f64> = Generator::Poisson2d.generate_with_param(6).unwrap().matrix;
    for g in [
        growth(0, 1, 1e-3),
        growth(30, 0, 1e-3),
        growth(30, 9, 1e-3),
        growth(30, 1, -1.0),
        growth(30, 1, f64::NAN),
        growth(5000, 1, 0.0),
    ] {
        let e = Fsai::adaptive(&host, &a, AfsaiOptions { growth: g }).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "{g:?}: {e}");
    }
    // Nonsymmetric.
    let t = [(0, 0, 2.0), (0, 1, 1.0), (1, 1, 2.0)];
    let ns = CsrMatrix::from_triplets(2, 2, &t).unwrap();
    let e = Fsai::adaptive(&host, &ns, AfsaiOptions::default()).unwrap_err();
    assert!(matches!(e, Error::NotApplicable { .. }), "{e}");
    // Symmetric with a positive diagonal but indefinite: row 1's system has a negative pivot.
    let t = [(0, 0, 1.0), (0, 1, 2.0), (1, 0, 2.0), (1, 1, 1.0)];
    let ind = CsrMatrix::from_triplets(2, 2, &t).unwrap();
    match Fsai::adaptive(&host, &ind, AfsaiOptions::default()).unwrap_err() {
        Error::SingularPivot { block_row, .. } => assert_eq!(block_row, 1),
        e => panic!("{e}"),
    }
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_patterns_and_factors_match_host() {
        super::patterns_and_factors_match_host(&backend());
    }
    #[test]
    fn opencl_pcg_with_afsai_converges() {
        super::pcg_with_afsai_converges(&backend());
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
    fn cuda_patterns_and_factors_match_host() {
        super::patterns_and_factors_match_host(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_pcg_with_afsai_converges() {
        super::pcg_with_afsai_converges(&backend());
    }
}
