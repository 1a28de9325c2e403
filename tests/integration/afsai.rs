//! Adaptive FSAI (\[Bernaschi19\] Algorithm 1): the grown pattern against an independent dense
//! reference, identical patterns and equal factors on every backend (host is the reference),
//! rows that stop growing early, PCG convergence against Jacobi-PCG, typed errors.

#![allow(clippy::needless_range_loop)]

use crate::common;

use crate::common::rel_diff;
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{
    AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, Backend, DeviceFormat, DeviceMatrix, MatrixFormat,
    VectorOps,
};
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
        stop: AfsaiStop::RatioToInitial,
    }
}

/// The same growth stopping by the step's relative reduction of psi.
fn step_growth(max_steps: usize, per_step: usize, eps: f64) -> AfsaiGrowth {
    AfsaiGrowth {
        stop: AfsaiStop::StepReduction,
        ..growth(max_steps, per_step, eps)
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
    let mut psi_prev = psi0;
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
        let done = match g.stop {
            AfsaiStop::RatioToInitial => psi <= g.eps * psi0,
            AfsaiStop::StepReduction => psi_prev - psi <= g.eps * psi_prev,
        };
        if done {
            break;
        }
        psi_prev = psi;
    }
    p.iter().map(|&j| j as u32).collect()
}

/// The raw grown pattern on `b` by the backend's own choice of kernel.
fn grown<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    g: AfsaiGrowth,
    batch: usize,
) -> Vec<Option<Vec<u32>>> {
    let mean_row_len = a.nnz() as f64 / a.n_rows().max(1) as f64;
    grown_by(b, a, g, b.afsai_grow_kernel(&g, mean_row_len), batch)
}

/// The raw grown pattern on `b` by `kernel`: (lengths, columns in insertion order), batch by
/// batch of `batch` rows.
fn grown_by<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    g: AfsaiGrowth,
    kernel: AfsaiGrowKernel,
    batch: usize,
) -> Vec<Option<Vec<u32>>> {
    let n = a.n_rows();
    let cap = g.cap();
    let dev = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let mut scratch = b
        .alloc::<f64>((batch * kernel.scalars_per_row(&g)).max(1))
        .unwrap();
    let mut iscratch = b
        .alloc::<u32>((batch * kernel.indices_per_row(&g)).max(1))
        .unwrap();
    // The outputs are the launch's own (row start + t at t): one batch's worth, reused.
    let mut cols = b.alloc::<u32>(batch * cap).unwrap();
    let mut lens = b.alloc::<u32>(batch).unwrap();
    let mut rows = Vec::with_capacity(n);
    let mut start = 0;
    while start < n {
        let end = (start + batch).min(n);
        b.afsai_grow(
            &dev,
            g,
            kernel,
            start..end,
            &mut scratch,
            &mut iscratch,
            &mut cols,
            &mut lens,
        )
        .unwrap();
        let (c, l) = (b.download(&cols).unwrap(), b.download(&lens).unwrap());
        rows.extend(
            (0..end - start)
                .map(|t| (l[t] != u32::MAX).then(|| c[t * cap..t * cap + l[t] as usize].to_vec())),
        );
        start = end;
    }
    rows
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
            step_growth(30, 1, 1e-2),
            step_growth(8, 2, 0.1),
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
        for g in [
            growth(30, 1, 1e-3),
            growth(6, 3, 0.0),
            step_growth(30, 1, 1e-2),
            // 36 entries per row: more than the team kernel grows (the row kernel only).
            growth(12, 3, 0.0),
        ] {
            let want = grown(&host, a, g, a.n_rows().max(1));
            // An awkward batch size on the backend: the rows of a launch change. Both growth
            // kernels where the team kernel fits (the backend's choice is one of them).
            for kernel in [AfsaiGrowKernel::Row, AfsaiGrowKernel::Team] {
                if !kernel.fits(&g) {
                    assert!(
                        b.afsai_grow_kernel(&g, 1e9) != kernel,
                        "{}: {g:?} chose {kernel:?}",
                        b.name()
                    );
                    continue;
                }
                let got = grown_by(b, a, g, kernel, 29);
                assert_eq!(got, want, "{}: {name} {g:?} {kernel:?}", b.name());
            }
            let opts = AfsaiOptions {
                growth: g,
                setup_in_f32: false,
                max_batch_rows: None,
            };
            let fh = Fsai::adaptive(&host, a, opts).unwrap();
            let fb = Fsai::adaptive(b, a, opts).unwrap();
            let (gh, gb) = (csr_of(&host, fh.factors().0), csr_of(b, fb.factors().0));
            assert_eq!((&gh.0, &gh.1), (&gb.0, &gb.1), "{name}: pattern of G");
            let d = rel_diff(&gh.2, &gb.2);
            assert!(d <= 1e-12, "{}: {name} G differs by {d:e}", b.name());
            // The setup in batches of 1 and 13 rows (grown, compacted and joined batch by
            // batch): the same factors bit for bit, in as many growth launches.
            for rows in [1usize, 13] {
                let batched = AfsaiOptions {
                    max_batch_rows: Some(rows),
                    ..opts
                };
                let fs = Fsai::adaptive(b, a, batched).unwrap();
                assert_eq!(fs.growth_batches(), a.n_rows().div_ceil(rows), "{name}");
                assert_eq!(
                    csr_of(b, fs.factors().0),
                    gb,
                    "{}: {name} G in batches of {rows}",
                    b.name()
                );
                assert_eq!(
                    csr_of(b, fs.factors().1),
                    csr_of(b, fb.factors().1),
                    "{}: {name} G^T in batches of {rows}",
                    b.name()
                );
            }
            // G^T, laid out on the backend: the host's pattern exactly, the transpose of G
            // (rows ascending in every row of G^T) with G's values bit for bit.
            let (th, tb) = (csr_of(&host, fh.factors().1), csr_of(b, fb.factors().1));
            assert_eq!((&th.0, &th.1), (&tb.0, &tb.1), "{name}: pattern of G^T");
            assert_eq!(
                transpose(&gb),
                tb,
                "{}: {name} G^T is not G transposed",
                b.name()
            );
        }
    }
}

/// On the host itself: the rows of a launch (batch of 29 against all rows at once) do not
/// change the pattern.
#[test]
fn host_patterns_do_not_depend_on_the_batch() {
    patterns_and_factors_match_host(&HostBackend::new());
}

/// The transpose of a square CSR (rows ascending in every row of the result).
fn transpose(m: &(Vec<u32>, Vec<u32>, Vec<f64>)) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let (rp, ci, v) = m;
    let n = rp.len() - 1;
    let mut rows: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
    for i in 0..n {
        for e in rp[i] as usize..rp[i + 1] as usize {
            rows[ci[e] as usize].push((i as u32, v[e]));
        }
    }
    let mut out = (vec![0u32], Vec::new(), Vec::new());
    for row in rows {
        for (c, x) in row {
            out.1.push(c);
            out.2.push(x);
        }
        out.0.push(out.1.len() as u32);
    }
    out
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
    let cases = common::spd_problems();
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
        // The step-reduction rule stops rows once growing stops paying: a sparser G that
        // still beats Jacobi.
        let step = AfsaiOptions {
            growth: step_growth(30, 1, 1e-2),
            setup_in_f32: false,
            max_batch_rows: None,
        };
        let sf = Fsai::adaptive(b, a, step).unwrap();
        let rs = common::pcg_a_ones(b, a, Some(&sf));
        let what = format!(
            "{what}; step rule: {} its ({}, density {:.2})",
            rs.iterations,
            rs.stop_reason,
            sf.density()
        );
        assert!(
            rs.stop_reason.converged() && rs.relative_true_residual <= 1.1e-8,
            "{what}"
        );
        assert!(sf.density() < af.density(), "{what}");
        assert!(rs.iterations < jr.iterations, "{what}");
        assert_eq!(Preconditioner::<B, f64>::params(&sf)["stop"], "step");
    }
}

/// The grown pattern of `n` rows (at most `cap` columns < i each, distinct, unsorted), with
/// column 0 in every row (an arrow: one column as long as the matrix) when `arrow`.
fn raw_pattern(n: usize, cap: usize, arrow: bool, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut r = common::Rng(seed | 1);
    let mut cols = vec![0u32; n * cap];
    let mut lens = vec![0u32; n];
    for i in 0..n {
        let mut row: Vec<u32> = Vec::new();
        if arrow && i > 0 {
            row.push(0);
        }
        let want = (r.next_u64() as usize % (cap + 1)).min(i);
        while row.len() < want {
            let c = (r.next_u64() % i as u64) as u32;
            if !row.contains(&c) {
                row.push(c);
            }
        }
        lens[i] = row.len() as u32;
        cols[i * cap..i * cap + row.len()].copy_from_slice(&row);
    }
    (cols, lens)
}

/// `afsai_compact` then `fsai_transpose` on `b`: (G's columns, column counts, G^T's rows,
/// G^T positions).
#[allow(clippy::type_complexity)]
fn laid_out<B: Backend>(
    b: &B,
    cap: usize,
    cols: &[u32],
    lens: &[u32],
) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = lens.len();
    let mut rp = vec![0u32];
    for &l in lens {
        rp.push(rp.last().unwrap() + l + 1);
    }
    let nnz = rp[n] as usize;
    let grp = b.upload(&rp).unwrap();
    let mut gci = b.alloc::<u32>(nnz).unwrap();
    let mut count = b.alloc::<u32>(n).unwrap();
    // Two batches (rows 0..split and split..n, each with its own outputs and row pointers
    // from 0), joined by afsai_place: the layout of all rows at once.
    let split = n / 3;
    for rows in [0..split, split..n] {
        if rows.is_empty() {
            continue;
        }
        let (c0, c1) = (rows.start * cap, rows.end * cap);
        let local: Vec<u32> = rp[rows.start..=rows.end]
            .iter()
            .map(|&p| p - rp[rows.start])
            .collect();
        let (oc, ol, lrp) = (
            b.upload(&cols[c0..c1]).unwrap(),
            b.upload(&lens[rows.clone()]).unwrap(),
            b.upload(&local).unwrap(),
        );
        let mut piece = b.alloc::<u32>(local[rows.len()] as usize).unwrap();
        b.afsai_compact::<f64>(cap, rows.clone(), &oc, &ol, &lrp, &mut piece, &mut count)
            .unwrap();
        b.afsai_place::<f64>(&piece, piece.len(), &mut gci, rp[rows.start] as usize)
            .unwrap();
    }
    let counts = b.download(&count).unwrap();
    let mut cp = vec![0u32];
    for &c in &counts {
        cp.push(cp.last().unwrap() + c);
    }
    assert_eq!(cp[n] as usize, nnz, "{}: column counts", b.name());
    let gcp = b.upload(&cp).unwrap();
    let mut cursor = b.upload(&cp[..n]).unwrap();
    let mut gri = b.alloc::<u32>(nnz).unwrap();
    let mut gent = b.alloc::<u32>(nnz).unwrap();
    let mut gpos = b.alloc::<u32>(nnz).unwrap();
    b.fsai_transpose::<f64>(
        &grp,
        &gci,
        &gcp,
        &mut cursor,
        &mut gri,
        &mut gent,
        &mut gpos,
    )
    .unwrap();
    (
        b.download(&gci).unwrap(),
        counts,
        b.download(&gri).unwrap(),
        b.download(&gpos).unwrap(),
    )
}

/// The device layout of the grown pattern (G's rows sorted with the diagonal last, G^T with
/// rows ascending, the position of every entry of G in G^T) equals the host's bit for bit,
/// with a column as long as the matrix (heap sort) and awkward sizes; inconsistent inputs
/// write nothing out of bounds and return.
fn layout_kernels_match_host<B: Backend>(b: &B) {
    let host = HostBackend::new();
    for (n, cap, arrow, seed) in [(1, 3, false, 1), (257, 7, true, 2), (1000, 31, true, 3)] {
        let (cols, lens) = raw_pattern(n, cap, arrow, seed);
        let want = laid_out(&host, cap, &cols, &lens);
        let got = laid_out(b, cap, &cols, &lens);
        assert_eq!(got, want, "{}: n={n} cap={cap}", b.name());
        // The host's layout is the definition: G's rows sorted, G^T its transpose.
        let (gci, _, gri, gpos) = &want;
        let mut e = 0;
        for (i, &l) in lens.iter().enumerate() {
            let mut row: Vec<u32> = cols[i * cap..i * cap + l as usize].to_vec();
            row.sort_unstable();
            row.push(i as u32);
            assert_eq!(&gci[e..e + row.len()], &row[..], "row {i}");
            for k in e..e + row.len() {
                assert_eq!(gri[gpos[k] as usize], i as u32, "entry {k} of row {i}");
            }
            e += row.len();
        }
    }
    // Inconsistent inputs: row lengths over cap, row pointers past the end, descending.
    let n = 50;
    let (cols, mut lens) = raw_pattern(n, 4, false, 9);
    lens[3] = 1000;
    let oc = b.upload(&cols).unwrap();
    let ol = b.upload(&lens).unwrap();
    let bad_rp: Vec<u32> = (0..=n as u32).map(|i| (i * 7919) % 97).collect();
    let grp = b.upload(&bad_rp).unwrap();
    let mut gci = b.alloc::<u32>(40).unwrap();
    let mut count = b.alloc::<u32>(n).unwrap();
    b.afsai_compact::<f64>(4, 0..n, &oc, &ol, &grp, &mut gci, &mut count)
        .unwrap();
    let mut cursor = b.upload(&bad_rp[..n]).unwrap();
    let (mut gri, mut gent, mut gpos) = (
        b.alloc::<u32>(40).unwrap(),
        b.alloc::<u32>(40).unwrap(),
        b.alloc::<u32>(40).unwrap(),
    );
    b.fsai_transpose::<f64>(
        &grp,
        &gci,
        &grp,
        &mut cursor,
        &mut gri,
        &mut gent,
        &mut gpos,
    )
    .unwrap();
    b.synchronize().unwrap();
    // Wrong lengths are typed errors.
    let short = b.alloc::<u32>(3).unwrap();
    let e = b
        .afsai_compact::<f64>(4, 0..n, &oc, &ol, &short, &mut gci, &mut count)
        .unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
    let e = b
        .afsai_compact::<f64>(4, 1..n + 1, &oc, &ol, &grp, &mut gci, &mut count)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    let e = b
        .afsai_place::<f64>(&oc, oc.len(), &mut gci, 1)
        .unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
    let e = b.afsai_place::<f64>(&gci, 41, &mut count, 0).unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
}

/// Built on the solver's device copy of A (`adaptive_on`, `new_on`): the same factors bit for
/// bit as with an upload of its own and A's bytes less at the setup's peak; a device matrix of
/// another matrix or format is ignored (the setup uploads its own).
fn setup_on_the_solvers_matrix<B: Backend>(b: &B) {
    let a: CsrMatrix<f64> = common::jump_diffusion(9);
    let other: CsrMatrix<f64> = Generator::Poisson3d.generate_with_param(9).unwrap().matrix;
    let csr = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let sell = b
        .upload_matrix(&a, MatrixFormat::Sell { c: 4, sigma: 1 })
        .unwrap();
    let wrong = b.upload_matrix(&other, MatrixFormat::Csr).unwrap();
    let opts = AfsaiOptions::default();
    let own = Fsai::adaptive(b, &a, opts).unwrap();
    let (g_own, gt_own) = (csr_of(b, own.factors().0), csr_of(b, own.factors().1));
    for (label, device, shared) in [
        ("solver's CSR", &csr, true),
        ("SELL", &sell, false),
        ("another matrix", &wrong, false),
    ] {
        let f = Fsai::adaptive_on(b, &a, Some(device), opts).unwrap();
        assert_eq!(csr_of(b, f.factors().0), g_own, "{}: {label}", b.name());
        assert_eq!(csr_of(b, f.factors().1), gt_own, "{}: {label}", b.name());
        let saved = own.peak_setup_bytes() - f.peak_setup_bytes();
        if shared {
            assert!(
                saved >= csr.device_bytes() / 2,
                "{}: {label}: {saved}",
                b.name()
            );
        } else {
            assert_eq!(saved, 0, "{}: {label}", b.name());
        }
        let s = Fsai::new_on(b, &a, Some(device), FsaiOptions::default()).unwrap();
        let st = Fsai::new(b, &a, FsaiOptions::default()).unwrap();
        assert_eq!(
            csr_of(b, s.factors().0),
            csr_of(b, st.factors().0),
            "{label}"
        );
        // A single-precision setup rounds the solver's copy on the device (or A on the host):
        // the same f32 matrix, so the same factors bit for bit.
        let f32_opts = AfsaiOptions {
            setup_in_f32: true,
            ..opts
        };
        let c0 = b.counters();
        let narrowed = Fsai::adaptive_on(b, &a, Some(device), f32_opts).unwrap();
        let c1 = b.counters();
        let rounded = Fsai::adaptive(b, &a, f32_opts).unwrap();
        let c2 = b.counters();
        if shared {
            // The solver's copy is rounded on the device: A is not uploaded again.
            let (dev, host) = ((c1 - c0).transfers, (c2 - c1).transfers);
            assert!(
                dev < host,
                "{}: {label}: {dev} / {host} transfers",
                b.name()
            );
            // On a device backend the rounded copy shares the solver's row pointers and column
            // indices: its index bytes are not held at the setup's peak (the host backend
            // copies them).
            let index_bytes = 4 * (a.n_rows() + 1 + a.nnz());
            let saved = rounded.peak_setup_bytes() - narrowed.peak_setup_bytes();
            let expected = if b.name() == "host" { 0 } else { index_bytes };
            assert_eq!(saved, expected, "{}: {label}: f32 setup peak", b.name());
        }
        assert_eq!(
            csr_of(b, narrowed.factors().0),
            csr_of(b, rounded.factors().0),
            "{}: {label}: f32 setup",
            b.name()
        );
        assert_eq!(
            csr_of(b, narrowed.factors().1),
            csr_of(b, rounded.factors().1),
            "{}: {label}: f32 setup, G^T",
            b.name()
        );
        let static_f32 = FsaiOptions {
            setup_in_f32: true,
            ..FsaiOptions::default()
        };
        assert_eq!(
            csr_of(
                b,
                Fsai::new_on(b, &a, Some(device), static_f32)
                    .unwrap()
                    .factors()
                    .0
            ),
            csr_of(b, Fsai::new(b, &a, static_f32).unwrap().factors().0),
            "{}: {label}: static f32 setup",
            b.name()
        );
    }
}

#[test]
fn host_setup_on_the_solvers_matrix() {
    setup_on_the_solvers_matrix(&HostBackend::new());
}

#[test]
fn host_layout_kernels() {
    layout_kernels_match_host(&HostBackend::new());
}

/// A single-precision setup (A rounded to f32, every setup kernel in f32, G cast to f64 on the
/// device) gives a factor close to the double-precision one and PCG iteration counts within 2%
/// (\[Bernaschi19\]: unchanged counts), for the adaptive and the static FSAI.
fn f32_setup_matches_f64<B: Backend + 'static>(b: &B) {
    // The three generated problems.
    let cases: Vec<_> = common::spd_problems().into_iter().take(3).collect();
    for (name, a) in &cases {
        for adaptive in [true, false] {
            let build = |f32_setup: bool| {
                if adaptive {
                    let opts = AfsaiOptions {
                        setup_in_f32: f32_setup,
                        ..AfsaiOptions::default()
                    };
                    Fsai::adaptive(b, a, opts).unwrap()
                } else {
                    let opts = FsaiOptions {
                        setup_in_f32: f32_setup,
                        ..FsaiOptions::default()
                    };
                    Fsai::new(b, a, opts).unwrap()
                }
            };
            let (f64s, f32s) = (build(false), build(true));
            let r64 = common::pcg_a_ones(b, a, Some(&f64s));
            let r32 = common::pcg_a_ones(b, a, Some(&f32s));
            let what = format!(
                "{}: {name} adaptive={adaptive}: {} its with the f64 setup, {} with f32 \
                 (densities {:.3} / {:.3})",
                b.name(),
                r64.iterations,
                r32.iterations,
                f64s.density(),
                f32s.density()
            );
            assert!(
                r32.stop_reason.converged() && r32.relative_true_residual <= 1.1e-8,
                "{what}"
            );
            let tol = (r64.iterations as f64 * 0.02).max(1.0);
            assert!(
                (r32.iterations as f64 - r64.iterations as f64).abs() <= tol,
                "{what}"
            );
            let p = Preconditioner::<B, f64>::params(&f32s);
            assert_eq!(p["setup_precision"], "f32", "{p}");
            assert!(f32s.setup_split().cast > 0.0, "{what}");
            if !adaptive {
                // Same pattern: the factor itself agrees to single precision.
                let (g64, g32) = (csr_of(b, f64s.factors().0), csr_of(b, f32s.factors().0));
                assert_eq!((&g64.0, &g64.1), (&g32.0, &g32.1), "{what}");
                let d = rel_diff(&g64.2, &g32.2);
                assert!(d <= 1e-4, "{what}: G differs by {d:e}");
            }
        }
    }
}

#[test]
fn host_f32_setup_matches_f64() {
    f32_setup_matches_f64(&HostBackend::new());
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
        let opts = AfsaiOptions {
            growth: g,
            setup_in_f32: false,
            max_batch_rows: None,
        };
        let e = Fsai::adaptive(&host, &a, opts).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "{g:?}: {e}");
    }
    let zero_rows = AfsaiOptions {
        max_batch_rows: Some(0),
        ..AfsaiOptions::default()
    };
    let e = Fsai::adaptive(&host, &a, zero_rows).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
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
    // The team kernel asked for more entries per row than it grows: a typed error, no launch.
    use pipekrylov::backend::{PrecondOps, SpmvOps};
    let wide = growth(12, 3, 0.0);
    let dev = host.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let mut s = host.alloc::<f64>(1).unwrap();
    let mut si = host.alloc::<u32>(1).unwrap();
    let mut cols = host.alloc::<u32>(a.n_rows() * wide.cap()).unwrap();
    let mut lens = host.alloc::<u32>(a.n_rows()).unwrap();
    let e = host
        .afsai_grow(
            &dev,
            wide,
            AfsaiGrowKernel::Team,
            0..a.n_rows(),
            &mut s,
            &mut si,
            &mut cols,
            &mut lens,
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
}

/// An SPD arrow matrix: `spd_matrix` plus row and column 0 linked to every row, so G^T's row 0
/// (G's column 0) is as long as the matrix and longer than a stream row block.
fn arrow_spd(n: usize, seed: u64) -> CsrMatrix<f64> {
    let base = spd_matrix(n, 2, seed);
    let mut t = Vec::new();
    let mut diag0 = 0.0;
    for i in 0..n {
        for e in base.row_ptr()[i]..base.row_ptr()[i + 1] {
            let j = base.col_idx()[e];
            let mut v = base.values()[e];
            if i == j {
                v += 0.01;
            }
            if (i == 0) != (j == 0) {
                continue;
            }
            t.push((i, j, v));
        }
        if i > 0 {
            t.push((i, 0, -0.01));
            t.push((0, i, -0.01));
            diag0 += 0.01;
        }
    }
    t.push((0, 0, 1.0 + diag0));
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

/// G and G^T run by every CSR kernel (vector, stream, stream with 16-bit columns) apply the
/// same preconditioner as the host to rounding, G^T's row longer than a row block included,
/// and PCG takes the same iterations; the kernel each factor runs is the one requested where
/// the backend has the GPU layouts.
fn factor_kernels_agree<B: Backend + 'static>(b: &B) {
    use pipekrylov::backend::CsrKernel;
    let host = HostBackend::new();
    for (name, a) in [
        ("arrow 5000", arrow_spd(5000, 3)),
        ("random 3001", spd_matrix(3001, 4, 11)),
    ] {
        let opts = AfsaiOptions {
            growth: step_growth(12, 2, 1e-2),
            ..AfsaiOptions::default()
        };
        let reference = Fsai::adaptive(&host, &a, opts).unwrap();
        let r: Vec<f64> = common::rand_vec(a.n_rows(), 5);
        let mut z_host = host.alloc::<f64>(a.n_rows()).unwrap();
        reference
            .apply(&host, &host.upload(&r).unwrap(), &mut z_host)
            .unwrap();
        let z_host = host.download(&z_host).unwrap();
        let ref_its = common::pcg_a_ones(&host, &a, Some(&reference)).iterations;
        let setups = [
            (None, false),
            (Some(CsrKernel::Vector), false),
            (Some(CsrKernel::Stream), false),
            (Some(CsrKernel::StreamCompact), false),
            (Some(CsrKernel::Stream), true),
            (None, true),
        ];
        for (forced, setup_in_f32) in setups {
            let built = Fsai::adaptive(
                b,
                &a,
                AfsaiOptions {
                    setup_in_f32,
                    ..opts
                },
            )
            .unwrap();
            let (m, kernel) = match forced {
                Some(k) => (built.with_factor_kernel(b, k).unwrap(), k),
                // The setup's own choice: these factors are too small for the stream kernel.
                None => (built, CsrKernel::Vector),
            };
            let what = format!("{}: {name}: {kernel}, f32 setup {setup_in_f32}", b.name());
            let (g, gt) = m.factors();
            let (gt_rows, _, _) = csr_of(b, gt);
            let longest = gt_rows.windows(2).map(|w| w[1] - w[0]).max().unwrap();
            assert_eq!(
                longest > 2048,
                name.starts_with("arrow"),
                "{what}: {longest}"
            );
            // (The automatic choice follows the tuning's csr_kernel when it names one.)
            let tuning_forced = forced.is_none() && b.tuning().csr_kernel != CsrKernel::Auto;
            if b.uses_device_layouts() && !tuning_forced {
                assert_eq!(g.csr_kernel(), Some(kernel), "{what}: G");
                assert_eq!(gt.csr_kernel(), Some(kernel), "{what}: G^T");
                // The arrow's row of G^T is summed apart (the long-row plan survives the cast
                // of a single-precision setup).
                let summed_apart = matches!(
                    gt.format(),
                    DeviceFormat::Csr {
                        long_rows: Some(_),
                        ..
                    }
                );
                assert_eq!(summed_apart, name.starts_with("arrow"), "{what}");
            } else {
                assert_eq!(g.csr_kernel(), Some(CsrKernel::Vector), "{what}");
            }
            let mut z = b.alloc::<f64>(a.n_rows()).unwrap();
            m.apply(b, &b.upload(&r).unwrap(), &mut z).unwrap();
            let z = b.download(&z).unwrap();
            let d = rel_diff(&z, &z_host);
            let tol = if setup_in_f32 { 1e-5 } else { 1e-12 };
            assert!(d <= tol, "{what}: apply differs from the host by {d:e}");
            let its = common::pcg_a_ones(b, &a, Some(&m)).iterations;
            assert!(
                its.abs_diff(ref_its) <= 1,
                "{what}: {its} its, host {ref_its}"
            );
        }
    }
}

#[test]
fn host_factor_kernels_agree() {
    factor_kernels_agree(&HostBackend::new());
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
    #[test]
    fn opencl_f32_setup_matches_f64() {
        super::f32_setup_matches_f64(&backend());
    }
    #[test]
    fn opencl_setup_on_the_solvers_matrix() {
        super::setup_on_the_solvers_matrix(&backend());
    }
    #[test]
    fn opencl_layout_kernels_match_host() {
        super::layout_kernels_match_host(&backend());
    }
    #[test]
    fn opencl_factor_kernels_agree() {
        super::factor_kernels_agree(&backend());
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
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_f32_setup_matches_f64() {
        super::f32_setup_matches_f64(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_setup_on_the_solvers_matrix() {
        super::setup_on_the_solvers_matrix(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_layout_kernels_match_host() {
        super::layout_kernels_match_host(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_factor_kernels_agree() {
        super::factor_kernels_agree(&backend());
    }
}
