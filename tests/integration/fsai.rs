//! Static FSAI (\[Bernaschi19\], Section 2): the factor of every backend against a dense reference
//! (Gaussian elimination of each row's system) on awkward sizes, levels 1..3 and with
//! prefiltration; the pattern against a dense boolean power; G^T the transpose of G;
//! diag(G A G^T) = 1; PCG convergence with the true residual and far fewer iterations than
//! Jacobi-PCG; typed errors for nonsymmetric and indefinite matrices.
//!
//! OpenCL runs in CI on PoCL; the CUDA tests need an NVIDIA GPU and are `#[ignore]`d.

#![allow(clippy::needless_range_loop)]

use crate::common;

use crate::common::rel_diff;
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, DeviceFormat, DeviceMatrix, FsaiPattern};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{Fsai, FsaiOptions, Jacobi};
use pipekrylov::Error;

/// The CSR arrays of a device matrix on the host.
fn host_csr<B: Backend>(b: &B, m: &DeviceMatrix<f64>) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
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

/// A random symmetric positive definite matrix: a random symmetric pattern with entries of both
/// signs and a dominant diagonal.
fn spd_matrix(n: usize, seed: u64) -> CsrMatrix<f64> {
    let mut r = common::Rng(seed | 1);
    let mut t = Vec::new();
    let mut diag = vec![1.0; n];
    for i in 0..n {
        for _ in 0..2 {
            let j = r.below(n);
            if j != i {
                let v = r.next_f64();
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

/// Lower triangle of the boolean (I + pattern(A filtered))^k.
fn dense_pattern(a: &CsrMatrix<f64>, k: usize, tau: f64) -> Vec<Vec<bool>> {
    let n = a.n_rows();
    let mut p1 = vec![vec![false; n]; n];
    for i in 0..n {
        p1[i][i] = true;
        let (c, v) = a.row(i);
        for (&j, &x) in c.iter().zip(v) {
            if x.abs() >= tau * (common::entry(a, i, i) * common::entry(a, j, j)).sqrt() {
                p1[i][j] = true;
            }
        }
    }
    let mut pk = p1.clone();
    for _ in 1..k {
        pk = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (0..n).any(|q| p1[i][q] && pk[q][j]))
                    .collect()
            })
            .collect();
    }
    for i in 0..n {
        for j in i + 1..n {
            pk[i][j] = false;
        }
    }
    pk
}

/// G on `b` equals the dense reference, G^T is its transpose, diag(G A G^T) = 1.
fn factors_match_dense<B: Backend>(b: &B) {
    // n = 130 at levels 2 and 3: rows of 48 to 130 entries, factorized by teams of 32 on the
    // GPU backends (FSAI_TEAM_MIN_M); a row of 130 entries gives each work-item 4 or 5 rows of
    // a column.
    for (n, seed) in [(1, 1), (7, 2), (33, 3), (61, 4), (130, 5)] {
        let a = spd_matrix(n, seed);
        for (level, tau) in [(1, 0.0), (2, 0.0), (3, 0.0), (2, 0.3)] {
            let opts = FsaiOptions {
                level,
                tau,
                setup_in_f32: false,
            };
            let f = Fsai::new(b, &a, opts).unwrap();
            let (g, gt) = f.factors();
            let (rp, ci, gv) = host_csr(b, g);
            let (trp, tci, tv) = host_csr(b, gt);
            let want = dense_pattern(&a, level, tau);
            let what = format!("{} n={n} k={level} tau={tau}", b.name());
            // The host's G bit for bit: one work-item per row and, for the long rows, a team
            // per row (fsai_rows_team) keep the host's order of arithmetic.
            let host = HostBackend::new();
            let fh = Fsai::new(&host, &a, opts).unwrap();
            let (hrp, hci, hv) = host_csr(&host, fh.factors().0);
            assert_eq!((&rp, &ci), (&hrp, &hci), "{what}: pattern against the host");
            let differs = gv
                .iter()
                .zip(&hv)
                .position(|(x, y)| x.to_bits() != y.to_bits());
            assert_eq!(
                differs, None,
                "{what}: G against the host, bit for bit (first differing entry)"
            );
            for i in 0..n {
                let p: Vec<usize> = ci[rp[i] as usize..rp[i + 1] as usize]
                    .iter()
                    .map(|&c| c as usize)
                    .collect();
                let exp: Vec<usize> = (0..n).filter(|&j| want[i][j]).collect();
                assert_eq!(p, exp, "{what}: pattern of row {i}");
                let m = p.len();
                let sys: Vec<Vec<f64>> = p
                    .iter()
                    .map(|&r| p.iter().map(|&c| common::entry(&a, r, c)).collect())
                    .collect();
                let mut e = vec![0.0; m];
                e[m - 1] = 1.0;
                let y = common::dense_solve(sys, e);
                let g_ref: Vec<f64> = y.iter().map(|v| v / y[m - 1].sqrt()).collect();
                let got = &gv[rp[i] as usize..rp[i + 1] as usize];
                assert!(rel_diff(got, &g_ref) < 1e-11, "{what}: row {i}");
                // (G A G^T)_ii = g^T A_PP g = 1.
                let mut q = 0.0;
                for (x, &r) in p.iter().enumerate() {
                    for (z, &c) in p.iter().enumerate() {
                        q += got[x] * common::entry(&a, r, c) * got[z];
                    }
                }
                assert!((q - 1.0).abs() < 1e-11, "{what}: diag(G A G^T)_{i} = {q}");
            }
            // G^T is the transpose of G.
            for i in 0..n {
                for k in rp[i] as usize..rp[i + 1] as usize {
                    let j = ci[k] as usize;
                    let row = &tci[trp[j] as usize..trp[j + 1] as usize];
                    let pos = row.binary_search(&(i as u32)).expect("G^T has every entry");
                    assert_eq!(tv[trp[j] as usize + pos], gv[k], "{what}: G^T({j}, {i})");
                }
            }
        }
    }
}

#[test]
fn host_factors_match_dense() {
    factors_match_dense(&HostBackend::new());
}

/// PCG + FSAI (levels 1 and 2) converges with far fewer iterations than Jacobi-PCG.
fn pcg_with_fsai_converges<B: Backend + 'static>(b: &B) {
    let cases = common::spd_problems();
    for (name, a) in &cases {
        let jac = Jacobi::new(b, a).unwrap();
        let jr = common::pcg_a_ones(b, a, Some(&jac));
        assert!(jr.stop_reason.converged(), "{name}: Jacobi-PCG");
        for level in [1, 2] {
            let f = Fsai::new(
                b,
                a,
                FsaiOptions {
                    level,
                    ..FsaiOptions::default()
                },
            )
            .unwrap();
            let r = common::pcg_a_ones(b, a, Some(&f));
            let what = format!(
                "{}: {name} fsai k={level}: {} its ({}), Jacobi {}",
                b.name(),
                r.iterations,
                r.stop_reason,
                jr.iterations
            );
            assert!(
                r.stop_reason.converged() && r.relative_true_residual <= 1.1e-8,
                "{what}"
            );
            assert!(
                (r.iterations as f64) < 0.75 * jr.iterations as f64,
                "{what}"
            );
            // Two SpMVs per application, the second fused with the dot: one launch more per
            // iteration than Jacobi-PCG, the same transfers.
            assert_eq!(
                r.launches_per_iteration.round(),
                jr.launches_per_iteration.round() + 1.0
            );
        }
    }
}

#[test]
fn host_pcg_with_fsai_converges() {
    pcg_with_fsai_converges(&HostBackend::new());
}

#[test]
fn fsai_bad_input_is_a_typed_error() {
    let h = HostBackend::new();
    let cd = Generator::ConvDiff3d
        .generate_with_param::<f64>(4)
        .unwrap()
        .matrix;
    assert!(matches!(
        Fsai::new(&h, &cd, FsaiOptions::default()),
        Err(Error::NotApplicable { .. })
    ));
    // Symmetric but indefinite: the 2 x 2 system of row 1 has a negative pivot.
    let ind = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 2.0), (1, 0, 2.0), (1, 1, 1.0)])
        .unwrap();
    match Fsai::new(&h, &ind, FsaiOptions::default()) {
        Err(Error::SingularPivot { block_row, .. }) => assert_eq!(block_row, 1),
        other => panic!("expected SingularPivot, got {:?}", other.map(|_| ())),
    }
    let p = Generator::Poisson2d
        .generate_with_param::<f64>(4)
        .unwrap()
        .matrix;
    for opts in [
        FsaiOptions {
            level: 0,
            ..FsaiOptions::default()
        },
        FsaiOptions {
            level: 5,
            ..FsaiOptions::default()
        },
        FsaiOptions {
            tau: -1.0,
            ..FsaiOptions::default()
        },
        FsaiOptions {
            tau: f64::NAN,
            ..FsaiOptions::default()
        },
    ] {
        assert!(
            matches!(Fsai::new(&h, &p, opts), Err(Error::InvalidParameter { .. })),
            "{opts:?}"
        );
    }
}

#[test]
fn fsai_pattern_upload_checks_and_batches() {
    let h = HostBackend::new();
    // Rows {0}, {0, 1}, {1, 2}: systems of 1, 4 and 4 scalars.
    let (rp, ci, gt) = (
        vec![0u32, 1, 3, 5],
        vec![0u32, 0, 1, 1, 2],
        vec![0u32, 1, 3, 2, 4],
    );
    // One group of three rows, interleaved: 3 lanes x 4 scalars.
    let p = FsaiPattern::upload(&h, &rp, &ci, &gt, 5).unwrap();
    assert_eq!((p.batches(), p.max_scratch(), p.nnz()), (1, 12, 5));
    // Batches start on groups of 32 rows: 40 diagonal rows are a group of 32 and one of 8.
    let diag = |n: u32| ((0..=n).collect::<Vec<u32>>(), (0..n).collect::<Vec<u32>>());
    let (rp40, ci40) = diag(40);
    for (budget, want) in [(32, vec![32, 8]), (40, vec![40]), (1, vec![32, 8])] {
        let p = FsaiPattern::upload(&h, &rp40, &ci40, &ci40, budget).unwrap();
        assert_eq!(p.batches(), want.len(), "budget {budget}");
        assert_eq!(p.max_scratch(), want[0], "budget {budget}");
    }
    // One long row among short ones: its group keeps every system contiguous (1 x 31 + 10 x
    // 10 scalars, not 32 lanes x 100).
    let mut rp = vec![0u32];
    let mut ci = Vec::new();
    for i in 0..32u32 {
        let first = if i == 31 { 22 } else { i };
        ci.extend(first..=i);
        rp.push(ci.len() as u32);
    }
    let gt: Vec<u32> = (0..ci.len() as u32).collect();
    let p = FsaiPattern::upload(&h, &rp, &ci, &gt, 1 << 20).unwrap();
    assert_eq!((p.batches(), p.max_scratch()), (1, 131));
    assert_eq!(p.team_batches(), 0);
    // Long rows: a group of 32 rows of 48 or more entries on average goes to a team batch of its
    // own, its systems contiguous. Rows 0..64 short (1 entry), 64..96 of 56 entries, 96..100
    // short again: three batches, the middle one for teams.
    let mut rp = vec![0u32];
    let mut ci = Vec::new();
    for i in 0..100u32 {
        let first = if (64..96).contains(&i) { i - 55 } else { i };
        ci.extend(first..=i);
        rp.push(ci.len() as u32);
    }
    let gt: Vec<u32> = (0..ci.len() as u32).collect();
    let p = FsaiPattern::upload(&h, &rp, &ci, &gt, 1 << 30).unwrap();
    let m2: usize = (64..96)
        .map(|i| ((rp[i + 1] - rp[i]) as usize).pow(2))
        .sum();
    assert_eq!((p.batches(), p.team_batches()), (3, 1));
    assert_eq!(p.max_scratch(), m2);
    for (rp, ci, gt) in [
        (vec![0u32, 1, 3, 5], vec![0u32, 1, 0, 1, 2], gt.clone()), // row 1 not ascending
        (vec![0, 1, 3, 5], vec![0, 0, 1, 2, 1], gt.clone()),       // row 2 not ending on 2
        (vec![0, 1, 3, 5], ci.clone(), vec![0, 1, 3, 3, 4]),       // G^T position repeated
        (vec![0, 1, 3, 6], ci.clone(), gt.clone()),                // pointer past the end
        (vec![0, 0, 3, 5], vec![0, 0, 1, 1, 2], gt.clone()),       // empty row 0
    ] {
        assert!(
            matches!(
                FsaiPattern::upload(&h, &rp, &ci, &gt, 16),
                Err(Error::InvalidMatrix(_))
            ),
            "{rp:?} {ci:?} {gt:?}"
        );
    }
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_factors_match_dense() {
        super::factors_match_dense(&backend());
    }
    #[test]
    fn opencl_pcg_with_fsai_converges() {
        super::pcg_with_fsai_converges(&backend());
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
    fn cuda_factors_match_dense() {
        super::factors_match_dense(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_pcg_with_fsai_converges() {
        super::pcg_with_fsai_converges(&backend());
    }
}
