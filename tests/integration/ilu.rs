//! The `ilu` preconditioner (issue 54): the maximum-product matching against brute force on
//! small matrices (structurally singular ones included), the scalings' bounds, ILUT and ILU(k)
//! against sequential dense references, the application against its host reference, the
//! permuted solve against the unpermuted one, the typed errors for bad input, AMD's fill, and
//! GMRES(30) with `ilu` to a true relative residual of 1e-8 on every real matrix of
//! `tests/data/` (SuiteSparse matrices, sources in its README) on the host and on OpenCL (PoCL in CI).

// Dense reference algorithms read best with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::common;

use crate::common::Rng;
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::matrix_market::read_csr;
use pipekrylov::matrix::reorder::{rcm, Permutation};
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::ilu::{
    amd, cholesky_fill, equilibrate, iluk, iluk_pattern, ilut, max_product_matching,
    IluFactorization, IluHost, IlutParams, IncompleteLu, DEFAULT_PIVOT_THRESHOLD,
};
use pipekrylov::precond::{
    build, Ilu, IluMatching, IluOptions, IluOrdering, PrecondKind, PrecondSpec, Preconditioner,
    TriangularSolve,
};
use pipekrylov::solver::{Gmres, Params, SolveReport};
use pipekrylov::Error;

/// A random n x n matrix with about `density` of its entries nonzero, values of magnitudes
/// spread over 1e-3..1e3, signs random.
fn random_sparse(n: usize, density: f64, seed: u64) -> CsrMatrix<f64> {
    let mut r = Rng(seed | 1);
    let mut t = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if (r.next_f64() + 1.0) / 2.0 < density {
                let mag = 10f64.powf(3.0 * r.next_f64());
                let sign = if r.next_u64() % 2 == 0 { 1.0 } else { -1.0 };
                t.push((i, j, sign * mag));
            }
        }
    }
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

fn dense(a: &CsrMatrix<f64>) -> Vec<Vec<f64>> {
    let n = a.n_rows();
    let mut d = vec![vec![0.0; a.n_cols()]; n];
    for i in 0..n {
        let (c, v) = a.row(i);
        for (&j, &x) in c.iter().zip(v) {
            d[i][j] = x;
        }
    }
    d
}

/// Every permutation of 0..n (Heap's algorithm).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn go(k: usize, p: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k <= 1 {
            out.push(p.clone());
            return;
        }
        for i in 0..k {
            go(k - 1, p, out);
            if k % 2 == 0 {
                p.swap(i, k - 1);
            } else {
                p.swap(0, k - 1);
            }
        }
    }
    let mut out = Vec::new();
    go(n, &mut (0..n).collect(), &mut out);
    out
}

#[test]
fn matching_is_the_brute_force_optimum_and_singular_matrices_are_typed() {
    let (mut perfect, mut singular) = (0, 0);
    for seed in 1..400u64 {
        let n = 1 + (seed as usize % 7);
        let density = [0.2, 0.35, 0.5, 0.8][seed as usize % 4];
        let a = random_sparse(n, density, seed * 7919);
        let d = dense(&a);
        // Brute force: the largest matching (entries used) and, among the perfect ones, the
        // largest sum of log |a_{p(j), j}|.
        let (mut card, mut best) = (0usize, f64::NEG_INFINITY);
        for p in permutations(n) {
            let used = (0..n).filter(|&j| d[p[j]][j] != 0.0).count();
            card = card.max(used);
            if used == n {
                best = best.max((0..n).map(|j| d[p[j]][j].abs().ln()).sum());
            }
        }
        let empty = (0..n).any(|i| d[i].iter().all(|&x| x == 0.0))
            || (0..n).any(|j| (0..n).all(|i| d[i][j] == 0.0));
        match max_product_matching(&a) {
            Ok(s) => {
                perfect += 1;
                assert_eq!(card, n, "seed {seed}: matched a singular matrix");
                let mut rows = s.row_of_col.clone();
                rows.sort_unstable();
                assert_eq!(rows, (0..n).collect::<Vec<_>>(), "seed {seed}");
                let ours: f64 = (0..n).map(|j| d[s.row_of_col[j]][j].abs().ln()).sum();
                assert!(
                    (ours - best).abs() <= 1e-10 * (1.0 + best.abs()),
                    "seed {seed}: log-product {ours} vs optimum {best}"
                );
                // The scaled matrix: |diagonal| = 1, everything else <= 1.
                let m = dense(&s.apply(&a).unwrap());
                for i in 0..n {
                    for j in 0..n {
                        let x = m[i][j].abs();
                        if i == j {
                            assert!((x - 1.0).abs() <= 1e-12, "seed {seed}: diag {i}: {x}");
                        } else {
                            assert!(x <= 1.0 + 1e-12, "seed {seed}: ({i}, {j}) = {x}");
                        }
                    }
                }
            }
            Err(Error::SingularPivot { detail, .. }) => {
                singular += 1;
                assert!(
                    card < n,
                    "seed {seed}: {detail}, but a perfect matching exists"
                );
                if !empty {
                    assert!(
                        detail.contains(&format!("{} of {n} rows cannot be matched", n - card)),
                        "seed {seed}: {detail} (maximum matching {card})"
                    );
                }
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    // Both kinds were met.
    assert!(
        perfect > 100 && singular > 30,
        "{perfect} perfect, {singular} singular"
    );
}

#[test]
fn equilibration_bounds_every_entry_by_one() {
    for seed in 1..50u64 {
        let a = random_sparse(9, 0.4, seed * 31);
        let Ok(s) = equilibrate(&a) else { continue };
        let m = dense(&s.apply(&a).unwrap());
        for (i, row) in m.iter().enumerate() {
            assert!(row.iter().all(|x| x.abs() <= 1.0 + 1e-12), "seed {seed}");
            assert!(row.iter().any(|x| (x.abs() - 1.0).abs() < 1e-12), "row {i}");
        }
        for j in 0..9 {
            assert!(
                m.iter().any(|r| (r[j].abs() - 1.0).abs() < 1e-12),
                "col {j}"
            );
        }
    }
}

/// A random matrix with a diagonal that ILU can pivot on (|a_ii| >= 1 + half the row's sum)
/// and off-diagonal entries of mixed sizes, so thresholds drop some of the fill.
fn factorable(n: usize, per_row: usize, seed: u64) -> CsrMatrix<f64> {
    let mut r = Rng(seed | 1);
    let mut t = Vec::new();
    for i in 0..n {
        let mut sum = 0.0;
        for _ in 0..per_row {
            let j = r.below(n);
            if j != i {
                let v = r.next_f64() * 10f64.powf(2.0 * r.next_f64());
                sum += v.abs();
                t.push((i, j, v));
            }
        }
        t.push((i, i, 1.0 + 0.5 * sum + r.next_f64().abs()));
    }
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

/// The factors as dense L (unit diagonal) and U.
fn dense_factors(f: &IncompleteLu, n: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let f = &f.factors;
    let mut l = vec![vec![0.0; n]; n];
    let mut u = vec![vec![0.0; n]; n];
    for i in 0..n {
        l[i][i] = 1.0;
        u[i][i] = 1.0 / f.u_inv_diag[i];
        for p in f.l_row_ptr[i] as usize..f.l_row_ptr[i + 1] as usize {
            l[i][f.l_col_idx[p] as usize] = f.l_values[p];
        }
        for p in f.u_row_ptr[i] as usize..f.u_row_ptr[i + 1] as usize {
            u[i][f.u_col_idx[p] as usize] = f.u_values[p];
        }
    }
    (l, u)
}

/// The product L U of square dense factors.
fn dense_product(l: &[Vec<f64>], u: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = l.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (0..n).map(|k| l[i][k] * u[k][j]).sum())
                .collect()
        })
        .collect()
}

/// Dense sequential ILUT: Saad's Algorithm 10.6 on full rows (tau relative to each row's
/// 2-norm, at most `lfil` entries kept per row of L and of U, ties to the smaller column).
fn ilut_dense(
    a: &[Vec<f64>],
    tau: f64,
    fill_factor: f64,
    lfil: &dyn Fn(usize, f64) -> usize,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    let mut u = vec![vec![0.0; n]; n];
    let keep = |mut e: Vec<(usize, f64)>, lfil: usize| {
        e.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()).then(x.0.cmp(&y.0)));
        e.truncate(lfil);
        e
    };
    let (mut seen, mut kept) = (0usize, 0usize);
    for i in 0..n {
        seen += a[i].iter().filter(|&&x| x != 0.0).count();
        let cap = lfil(i, fill_factor * seen as f64 - kept as f64);
        let mut w = a[i].clone();
        let t = tau * w.iter().map(|x| x * x).sum::<f64>().sqrt();
        for k in 0..i {
            if w[k] == 0.0 {
                continue;
            }
            w[k] /= u[k][k];
            if w[k].abs() < t {
                w[k] = 0.0;
                continue;
            }
            for j in k + 1..n {
                if u[k][j] != 0.0 {
                    w[j] -= w[k] * u[k][j];
                }
            }
        }
        let lower: Vec<_> = (0..i).filter(|&k| w[k] != 0.0).map(|k| (k, w[k])).collect();
        let upper: Vec<_> = (i + 1..n)
            .filter(|&j| w[j] != 0.0 && w[j].abs() >= t)
            .map(|j| (j, w[j]))
            .collect();
        l[i][i] = 1.0;
        let (lower, upper) = (keep(lower, cap), keep(upper, cap));
        kept += lower.len() + upper.len();
        for (k, v) in lower {
            l[i][k] = v;
        }
        u[i][i] = w[i];
        for (j, v) in upper {
            u[i][j] = v;
        }
    }
    (l, u)
}

/// Dense L, dense U and the dense levels of fill.
type DenseIluk = (Vec<Vec<f64>>, Vec<Vec<f64>>, Vec<Vec<usize>>);

/// Dense sequential ILU(k): levels on full rows, then the IKJ loop on that pattern.
fn iluk_dense(a: &[Vec<f64>], pattern: &[Vec<bool>], k: usize) -> DenseIluk {
    let n = a.len();
    let inf = usize::MAX / 4;
    let mut lev = vec![vec![inf; n]; n];
    for i in 0..n {
        for j in 0..n {
            if pattern[i][j] || i == j {
                lev[i][j] = 0;
            }
        }
        for r in 0..i {
            if lev[i][r] > k {
                continue;
            }
            for j in r + 1..n {
                let new = lev[i][r] + lev[r][j] + 1;
                if new < lev[i][j] {
                    lev[i][j] = new;
                }
            }
        }
    }
    let mut l = vec![vec![0.0; n]; n];
    let mut u = vec![vec![0.0; n]; n];
    for i in 0..n {
        let mut w = a[i].clone();
        for r in 0..i {
            if lev[i][r] > k {
                continue;
            }
            w[r] /= u[r][r];
            for j in r + 1..n {
                if lev[i][j] <= k && lev[r][j] <= k {
                    w[j] -= w[r] * u[r][j];
                }
            }
        }
        l[i][i] = 1.0;
        for j in 0..n {
            if lev[i][j] <= k {
                if j < i {
                    l[i][j] = w[j];
                } else {
                    u[i][j] = w[j];
                }
            }
        }
    }
    (l, u, lev)
}

fn assert_dense_close(what: &str, x: &[Vec<f64>], y: &[Vec<f64>]) {
    for i in 0..x.len() {
        for j in 0..x.len() {
            let (a, b) = (x[i][j], y[i][j]);
            assert!(
                (a - b).abs() <= 1e-11 * (1.0 + b.abs()),
                "{what}: ({i}, {j}): {a} vs {b}"
            );
        }
    }
}

#[test]
fn ilut_equals_the_dense_reference() {
    for (seed, n, per_row, tau, p) in [
        (1u64, 40, 4, 1e-2, 10.0),
        (2, 40, 4, 1e-1, 2.0),
        (3, 60, 6, 0.0, 1.0),
        (4, 30, 3, 1e-3, 50.0),
        (5, 50, 5, 5e-2, 4.0),
    ] {
        let a = factorable(n, per_row, seed);
        let params = IlutParams {
            drop_tol: tau,
            fill_factor: p,
            shift: false,
            pivot_threshold: 0.0,
        };
        let f = ilut(&a, params).unwrap();
        let (l, u) = dense_factors(&f, n);
        let lfil = |i: usize, budget: f64| params.row_fill(n, a.nnz(), a.row(i).0.len(), budget);
        let (rl, ru) = ilut_dense(&dense(&a), tau, p, &lfil);
        let what = format!("ILUT seed {seed} tau {tau} p {p}");
        assert_dense_close(&format!("{what} L"), &l, &rl);
        assert_dense_close(&format!("{what} U"), &u, &ru);
        assert_eq!(f.shifted_pivots, 0);
    }
    // tau = 0 with room for everything is the exact LU: L U = A.
    let a = factorable(25, 4, 9);
    let f = ilut(
        &a,
        IlutParams {
            drop_tol: 0.0,
            fill_factor: 1e3,
            shift: false,
            pivot_threshold: 0.0,
        },
    )
    .unwrap();
    let (l, u) = dense_factors(&f, 25);
    let lu = dense_product(&l, &u);
    assert_dense_close("exact ILUT", &lu, &dense(&a));
}

/// ILUTP with drop tolerance 0 and room for all the fill is the exact LU with column
/// pivoting: L U = M Q, Q the reported column order, every pivot at least the threshold times
/// its row's largest entry of U; without pivots to make (a dominant diagonal) it is ILUT.
#[test]
fn ilutp_is_the_lu_of_the_column_permuted_matrix() {
    for (seed, threshold) in [(3u64, 0.1), (8, 0.5), (11, 1.0)] {
        let n = 40;
        let a = zero_diagonal_matrix(n, seed);
        let params = IlutParams {
            drop_tol: 0.0,
            fill_factor: 1e3,
            shift: false,
            pivot_threshold: threshold,
        };
        let f = ilut(&a, params).unwrap();
        let order = f
            .column_order
            .clone()
            .expect("a zero diagonal needs column pivots");
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "not a permutation");
        let (l, u) = dense_factors(&f, n);
        let ad = dense(&a);
        let mq: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| ad[i][order[j]]).collect())
            .collect();
        let lu = dense_product(&l, &u);
        assert_dense_close(&format!("ILUTP seed {seed}: L U against M Q"), &lu, &mq);
        for (i, row) in u.iter().enumerate() {
            let largest = row[i + 1..].iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                row[i].abs() >= threshold * largest * (1.0 - 1e-12),
                "seed {seed} row {i}: pivot {:e}, largest right of it {largest:e}",
                row[i]
            );
        }
        assert_eq!(f.shifted_pivots, 0);
    }
    let dominant = factorable(30, 3, 4);
    let with = ilut(
        &dominant,
        IlutParams {
            pivot_threshold: 0.1,
            ..IlutParams::default()
        },
    )
    .unwrap();
    assert_eq!(with, ilut(&dominant, IlutParams::default()).unwrap());
}

/// A values refresh keeps ILUTP's column order (the device's right operator holds it): the
/// refreshed exact factors of new values on the same pattern still invert A, and doubled
/// values (whose pivots a fresh setup picks the same way) give a fresh setup's application.
#[test]
fn ilutp_refresh_keeps_the_column_order() {
    let host = HostBackend::new();
    let n = 50;
    let a = zero_diagonal_matrix(n, 21);
    let opts = exact_options(IluMatching::Off, IluOrdering::None);
    let mut pc = Ilu::new(&host, &a, opts).unwrap();
    assert!(IluHost::new(&a, &opts)
        .unwrap()
        .factors
        .column_order
        .is_some());
    let x: Vec<f64> = (0..n).map(|i| 1.0 - (i % 5) as f64).collect();
    let mut r = Rng(77);
    for (what, factor) in [("perturbed", None), ("doubled", Some(2.0))] {
        let mut b = a.clone();
        for v in b.values_mut() {
            *v *= factor.unwrap_or(1.0 + 0.05 * r.next_f64());
        }
        pc.update_values(&host, &b, None).unwrap();
        let mut bx = vec![0.0; n];
        b.mul_vec(&x, &mut bx).unwrap();
        let z = apply_on(&host, &pc, &bx);
        assert!(
            max_abs_diff(&z, &x) < 1e-9,
            "{what}: {}",
            max_abs_diff(&z, &x)
        );
        if factor.is_some() {
            let fresh = Ilu::new(&host, &b, opts).unwrap();
            let zf = apply_on(&host, &fresh, &bx);
            assert!(
                max_abs_diff(&z, &zf) < 1e-12,
                "{what}: against a fresh setup"
            );
        }
    }
}

#[test]
fn iluk_equals_the_dense_reference() {
    for (seed, n, per_row) in [(11u64, 40, 3), (12, 50, 4), (13, 30, 2)] {
        let a = factorable(n, per_row, seed);
        let d = dense(&a);
        let mut pattern = vec![vec![false; n]; n];
        for i in 0..n {
            for &j in a.row(i).0 {
                pattern[i][j] = true;
            }
        }
        for k in 0..4 {
            let f = iluk(&a, k, false).unwrap();
            let (l, u) = dense_factors(&f, n);
            let (rl, ru, lev) = iluk_dense(&d, &pattern, k);
            let what = format!("ILU({k}) seed {seed}");
            assert_dense_close(&format!("{what} L"), &l, &rl);
            assert_dense_close(&format!("{what} U"), &u, &ru);
            // The symbolic phase's pattern and levels are the dense ones.
            let p = iluk_pattern(&a, k).unwrap();
            for i in 0..n {
                let row: Vec<(usize, usize)> = (p.row_ptr[i]..p.row_ptr[i + 1])
                    .map(|q| (p.cols[q], p.levels[q]))
                    .collect();
                let want: Vec<(usize, usize)> = (0..n)
                    .filter(|&j| lev[i][j] <= k)
                    .map(|j| (j, lev[i][j]))
                    .collect();
                assert_eq!(row, want, "{what} row {i}");
            }
        }
        // ILU(0) is BILU(0) with block size 1.
        let b = pipekrylov::precond::bilu0(
            &pipekrylov::matrix::BsrMatrix::from_csr(&a, 1).unwrap(),
            "bilu0",
        )
        .unwrap();
        let f = iluk(&a, 0, false).unwrap().factors;
        for (x, y) in f
            .l_values
            .iter()
            .zip(&b.l_values)
            .chain(f.u_values.iter().zip(&b.u_values))
        {
            assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()));
        }
        assert_eq!((f.l_col_idx, f.u_col_idx), (b.l_col_idx, b.u_col_idx));
    }
}

/// A matrix with zero diagonal entries that is well conditioned: a diagonally dominant
/// matrix with its rows permuted.
fn zero_diagonal_matrix(n: usize, seed: u64) -> CsrMatrix<f64> {
    let a = factorable(n, 4, seed);
    let mut r = Rng(seed * 3 + 1);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, r.below(i + 1));
    }
    let mut t = Vec::new();
    for (new, &old) in order.iter().enumerate() {
        let (c, v) = a.row(old);
        for (&j, &x) in c.iter().zip(v) {
            t.push((new, j, x * 10f64.powf(2.0 * r.next_f64())));
        }
    }
    CsrMatrix::from_triplets(n, n, &t).unwrap()
}

fn exact_options(matching: IluMatching, ordering: IluOrdering) -> IluOptions {
    IluOptions {
        matching,
        ordering,
        drop_tol: Some(0.0),
        max_fill: Some(1e6),
        ..IluOptions::default()
    }
}

fn apply_on<B: Backend>(b: &B, pc: &Ilu<f64>, r: &[f64]) -> Vec<f64> {
    let rb = b.upload(r).unwrap();
    let mut z = b.alloc(r.len()).unwrap();
    pc.apply(b, &rb, &mut z).unwrap();
    b.download(&z).unwrap()
}

fn max_abs_diff(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
}

/// With drop tolerance 0 and room for all the fill, M = A: M^-1 (A x) = x to rounding for
/// every matching and ordering, so the permutations and scalings around the factors compose
/// to the identity; the backend's application equals the host reference.
fn exact_factors_invert_a<B: Backend>(b: &B) {
    let n = 60;
    let a = zero_diagonal_matrix(n, 5);
    let x: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    let mut ax = vec![0.0; n];
    a.mul_vec(&x, &mut ax).unwrap();
    // Without the matching (off, equilibrate) the zero diagonal makes ILUTP pivot on columns.
    for matching in [
        IluMatching::On,
        IluMatching::Equilibrate,
        IluMatching::Auto,
        IluMatching::Off,
    ] {
        for ordering in [IluOrdering::None, IluOrdering::Rcm, IluOrdering::Amd] {
            for solve in [TriangularSolve::Exact, TriangularSolve::Sweeps(n)] {
                let opts = IluOptions {
                    solve,
                    ..exact_options(matching, ordering)
                };
                let what = format!("{matching}/{ordering}/{solve}");
                let pc = Ilu::new(b, &a, opts).unwrap_or_else(|e| panic!("{what}: {e}"));
                if matches!(matching, IluMatching::Off | IluMatching::Equilibrate) {
                    assert!(
                        IluHost::new(&a, &opts)
                            .unwrap()
                            .factors
                            .column_order
                            .is_some(),
                        "{what}: no column pivoting on a zero diagonal"
                    );
                }
                let z = apply_on(b, &pc, &ax);
                assert!(
                    max_abs_diff(&z, &x) < 1e-9,
                    "{what}: {}",
                    max_abs_diff(&z, &x)
                );
                let host = IluHost::new(&a, &opts).unwrap();
                let zh = host.apply(&ax).unwrap();
                assert!(
                    max_abs_diff(&z, &zh) < 1e-10,
                    "{what}: device vs host {}",
                    max_abs_diff(&z, &zh)
                );
            }
        }
    }
}

#[test]
fn host_exact_factors_invert_a() {
    exact_factors_invert_a(&HostBackend::new());
}

fn gmres<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    rhs: &[f64],
    pc: Option<&dyn Preconditioner<B, f64>>,
    max_iter: usize,
) -> (SolveReport, Vec<f64>) {
    let m = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let params = Params {
        rtol: 1e-8,
        max_iter,
        gmres: pipekrylov::solver::GmresParams {
            restart: 30,
            ..Default::default()
        },
        ..Params::default()
    };
    let rb = b.upload(rhs).unwrap();
    let mut x = b.alloc(a.n_rows()).unwrap();
    let r = Gmres::new(b, &m, pc, params)
        .unwrap()
        .solve(&rb, &mut x)
        .unwrap();
    (r, b.download(&x).unwrap())
}

#[test]
fn the_permuted_solve_equals_the_unpermuted_one() {
    let host = HostBackend::new();
    let n = 80;
    let a = zero_diagonal_matrix(n, 17);
    let rhs = common::rand_vec::<f64>(n, 3);
    let shuffle =
        Permutation::from_old_of_new((0..n).map(|i| 13 * i % n).collect::<Vec<_>>()).unwrap();
    let pa = shuffle.apply_symmetric(&a).unwrap();
    let prhs = shuffle.permute(&rhs).unwrap();
    for ordering in [IluOrdering::None, IluOrdering::Rcm, IluOrdering::Amd] {
        let opts = exact_options(IluMatching::On, ordering);
        let m1 = Ilu::new(&host, &a, opts).unwrap();
        let m2 = Ilu::new(&host, &pa, opts).unwrap();
        let (r1, x1) = gmres(&host, &a, &rhs, Some(&m1), 50);
        let (r2, x2) = gmres(&host, &pa, &prhs, Some(&m2), 50);
        assert!(r1.iterations <= 2 && r2.iterations <= 2, "{ordering}");
        let x2 = shuffle.unpermute(&x2).unwrap();
        let scale = x1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            max_abs_diff(&x1, &x2) <= 1e-10 * scale,
            "{ordering}: {}",
            max_abs_diff(&x1, &x2)
        );
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let host = HostBackend::new();
    let on = IluOptions {
        matching: IluMatching::On,
        ..IluOptions::default()
    };
    // Structurally singular: rows 0 and 1 both have their only entry in column 0.
    let s = CsrMatrix::from_triplets(3, 3, &[(0, 0, 1.0), (1, 0, 2.0), (2, 1, 1.0), (2, 2, 1.0)])
        .unwrap();
    match Ilu::new(&host, &s, on) {
        Err(Error::SingularPivot { detail, .. }) => {
            assert!(detail.contains("1 of 3 rows cannot be matched"), "{detail}")
        }
        other => panic!("structurally singular: {other:?}"),
    }
    // An empty row, an empty column (auto matching and off).
    let empty_row = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 1.0)]).unwrap();
    let empty_col = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 0, 1.0)]).unwrap();
    for m in [
        IluMatching::Auto,
        IluMatching::Off,
        IluMatching::Equilibrate,
    ] {
        let opts = IluOptions {
            matching: m,
            ..IluOptions::default()
        };
        for (what, a) in [("row", &empty_row), ("column", &empty_col)] {
            match Ilu::new(&host, a, opts) {
                Err(Error::SingularPivot { detail, .. }) => {
                    assert!(detail.contains("no nonzero entry"), "{what}: {detail}")
                }
                other => panic!("empty {what} with {m}: {other:?}"),
            }
        }
    }
    // NaN and infinity.
    let nan = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, f64::NAN)]).unwrap();
    assert!(matches!(
        Ilu::new(&host, &nan, IluOptions::default()),
        Err(Error::NonFinite { index: 1, .. })
    ));
    // Not square.
    let rect = CsrMatrix::from_triplets(2, 3, &[(0, 0, 1.0), (1, 1, 1.0)]).unwrap();
    assert!(matches!(
        Ilu::new(&host, &rect, IluOptions::default()),
        Err(Error::DimensionMismatch { .. })
    ));
    // A zero pivot without matching: typed, or shifted and counted when asked.
    let z = CsrMatrix::from_triplets(3, 3, &[(0, 1, 1.0), (1, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)])
        .unwrap();
    let off = IluOptions {
        matching: IluMatching::Off,
        ordering: IluOrdering::None,
        fill_level: Some(0),
        ..IluOptions::default()
    };
    assert!(matches!(
        Ilu::new(&host, &z, off),
        Err(Error::SingularPivot { block_row: 0, .. })
    ));
    let shifted = Ilu::new(&host, &z, IluOptions { shift: true, ..off }).unwrap();
    assert_eq!(shifted.report().shifted_pivots, 1);
    // ... and ILUT without column pivoting too; ILUTP (the default) pivots past it.
    let ilut_off = IluOptions {
        fill_level: None,
        drop_tol: Some(1e-3),
        pivot_threshold: 0.0,
        ..off
    };
    assert!(matches!(
        Ilu::new(&host, &z, ilut_off),
        Err(Error::SingularPivot { block_row: 0, .. })
    ));
    let pivoting = Ilu::new(
        &host,
        &z,
        IluOptions {
            pivot_threshold: DEFAULT_PIVOT_THRESHOLD,
            ..ilut_off
        },
    )
    .unwrap();
    assert_eq!(pivoting.report().shifted_pivots, 0);
    for t in [-0.5, 1.5, f64::NAN] {
        let opts = IluOptions {
            pivot_threshold: t,
            ..ilut_off
        };
        assert!(
            matches!(
                Ilu::new(&host, &z, opts),
                Err(Error::InvalidParameter { .. })
            ),
            "pivot threshold {t}"
        );
    }
    // Parameters out of range.
    for (drop, fill) in [
        (-1.0, 10.0),
        (f64::NAN, 10.0),
        (1e-4, 0.0),
        (1e-4, f64::INFINITY),
    ] {
        let opts = IluOptions {
            drop_tol: Some(drop),
            max_fill: Some(fill),
            ..IluOptions::default()
        };
        assert!(
            matches!(
                Ilu::new(&host, &factorable(5, 2, 1), opts),
                Err(Error::InvalidParameter { .. })
            ),
            "drop {drop} fill {fill}"
        );
    }
    assert!(matches!(
        Ilu::new(
            &host,
            &factorable(5, 2, 1),
            IluOptions {
                solve: TriangularSolve::Sweeps(0),
                ..IluOptions::default()
            }
        ),
        Err(Error::InvalidParameter { .. })
    ));
    assert!("sometimes".parse::<IluMatching>().is_err());
    assert!("metis".parse::<IluOrdering>().is_err());
    assert_eq!("ilu".parse::<PrecondKind>().unwrap(), PrecondKind::Ilu);
    // The empty system builds.
    let empty = CsrMatrix::<f64>::from_triplets(0, 0, &[]).unwrap();
    assert!(Ilu::new(&host, &empty, IluOptions::default()).is_ok());
}

#[test]
fn amd_reduces_the_fill_of_a_grid_below_rcm() {
    // 2D Poisson 40 x 40, shuffled: fill of the complete factor under each ordering.
    let a = Generator::Poisson2d.generate::<f64>(1600).unwrap().matrix;
    let n = a.n_rows();
    let shuffle = Permutation::from_old_of_new((0..n).map(|i| 7 * i % n).collect()).unwrap();
    let a = shuffle.apply_symmetric(&a).unwrap();
    let fill = |p: &Permutation| cholesky_fill(&p.apply_symmetric(&a).unwrap());
    let natural = cholesky_fill(&a);
    let by_rcm = fill(&rcm(&a).unwrap());
    let by_amd = fill(&amd(&a).unwrap());
    println!(
        "Cholesky fill of shuffled 2D Poisson 40x40: natural {natural}, rcm {by_rcm}, amd {by_amd}"
    );
    // SuiteSparse's AMD gives about 30K on this grid; RCM's band about 64K.
    assert!(
        by_amd < by_rcm && by_rcm < natural,
        "{natural} {by_rcm} {by_amd}"
    );
    assert!(by_amd < 40_000, "{by_amd}");
    // A path is filled by nothing in the AMD order.
    let t: Vec<_> = (0..50)
        .flat_map(|i| {
            let mut e = vec![(i, i, 2.0)];
            if i > 0 {
                e.push((i, i - 1, -1.0));
                e.push((i - 1, i, -1.0));
            }
            e
        })
        .collect();
    let path = CsrMatrix::from_triplets(50, 50, &t).unwrap();
    assert_eq!(
        cholesky_fill(&amd(&path).unwrap().apply_symmetric(&path).unwrap()),
        99
    );
}

/// A dense row (an arrow matrix: a path plus node 0 coupled to every node) is ordered last,
/// as SuiteSparse's AMD does with rows of more than max(16, 10 sqrt(n)) entries: its fill is
/// then the path's plus the row's, where the natural order (node 0 first) fills everything.
/// Nodes with the same neighbours (a 2D grid with 3 unknowns per node, coupled fully) are
/// eliminated as one supervariable: the fill is that of the grid's ordering, nine times over
/// at most.
#[test]
fn amd_orders_a_dense_row_last_and_merges_indistinguishable_nodes() {
    let n = 400;
    let mut t = vec![(0, 0, 4.0)];
    for i in 1..n {
        t.extend([(i, i, 4.0), (0, i, 1.0), (i, 0, 1.0)]);
        if i > 1 {
            t.extend([(i, i - 1, -1.0), (i - 1, i, -1.0)]);
        }
    }
    let arrow = CsrMatrix::from_triplets(n, n, &t).unwrap();
    let p = amd(&arrow).unwrap();
    assert_eq!(p.old_of_new()[n - 1], 0, "the dense row is not last");
    let fill = cholesky_fill(&p.apply_symmetric(&arrow).unwrap());
    assert!(fill <= 3 * n, "fill {fill}");
    assert_eq!(cholesky_fill(&arrow), n * (n + 1) / 2);

    let grid = Generator::Poisson2d.generate::<f64>(400).unwrap().matrix;
    let m = grid.n_rows();
    let mut t = Vec::new();
    for i in 0..m {
        for &j in grid.row(i).0 {
            for (a, b) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))) {
                t.push((
                    3 * i + a,
                    3 * j + b,
                    if i == j && a == b { 8.0 } else { -0.1 },
                ));
            }
        }
    }
    let blocks = CsrMatrix::from_triplets(3 * m, 3 * m, &t).unwrap();
    let grid_fill = cholesky_fill(&amd(&grid).unwrap().apply_symmetric(&grid).unwrap());
    let q = amd(&blocks).unwrap();
    let block_fill = cholesky_fill(&q.apply_symmetric(&blocks).unwrap());
    assert!(
        block_fill <= 9 * grid_fill,
        "{block_fill} against 9 x {grid_fill}"
    );
    // The three unknowns of a node sit together (the node's first one can go first alone).
    let together = q
        .old_of_new()
        .windows(3)
        .filter(|w| w[0] / 3 == w[1] / 3 && w[1] / 3 == w[2] / 3)
        .count();
    assert!(together >= m * 9 / 10, "{together} of {m} nodes together");
}

/// The real matrices of `tests/data/` (SuiteSparse; sources in `tests/data/README.md`).
const REAL: [&str; 6] = ["olm500", "olm1000", "Pd", "494_bus", "rajat19", "nnc1374"];

fn load(name: &str) -> CsrMatrix<f64> {
    read_csr::<f64>(format!(
        "{}/tests/data/{name}.mtx",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// GMRES(30) with `--precond ilu` (the automatic choices) reaches a true relative residual of
/// 1e-8 for b = A 1 on every real matrix; prints iterations, the choices, the fill ratio and
/// the setup time.
fn real_matrices_converge<B: Backend + 'static>(b: &B) {
    for name in REAL {
        let a = load(name);
        let n = a.n_rows();
        let mut rhs = vec![0.0; n];
        a.mul_vec(&vec![1.0; n], &mut rhs).unwrap();
        let spec = PrecondSpec::from(PrecondKind::Ilu);
        let pc = build(b, &a, spec)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap();
        let (r, _) = gmres(b, &a, &rhs, Some(pc.as_ref()), 3000);
        let p = pc.params();
        println!(
            "{:10} {name:8} n {n:5} its {:4} true {:.2e} fill {:.2} setup {:.1} ms \
             (matching {:.1}, ordering {:.1}, factor {:.1}, analysis {:.1}, upload {:.1}) \
             {} {} {} [{}]",
            b.name(),
            r.iterations,
            r.relative_true_residual,
            p["fill_ratio"].as_f64().unwrap_or(0.0),
            pc.setup_seconds() * 1e3,
            p["matching_seconds"].as_f64().unwrap_or(0.0) * 1e3,
            p["ordering_seconds"].as_f64().unwrap_or(0.0) * 1e3,
            p["factorization_seconds"].as_f64().unwrap_or(0.0) * 1e3,
            p["analysis_seconds"].as_f64().unwrap_or(0.0) * 1e3,
            p["upload_seconds"].as_f64().unwrap_or(0.0) * 1e3,
            p["matching"],
            p["ordering"],
            p["factorization"],
            p["factorization_reason"],
        );
        assert!(
            r.stop_reason.converged() && r.relative_true_residual <= 1e-8,
            "{name}: {} after {} iterations, true relative residual {:e}",
            r.stop_reason,
            r.iterations,
            r.relative_true_residual
        );
    }
}

#[test]
fn host_real_matrices_converge_with_ilu() {
    real_matrices_converge(&HostBackend::new());
}

/// The automatic choices on the zero-diagonal matrices: matching, then ILUT where ILU(0) is
/// not stable; on the others no matching.
#[test]
fn automatic_choices_are_reported() {
    for name in ["rajat19", "nnc1374"] {
        let r = IluHost::new(&load(name), &IluOptions::default())
            .unwrap()
            .report;
        assert_eq!(r.matching, "max-product", "{name}");
        assert!(
            r.weak_rows > 0 && r.smallest_diagonal_ratio == 0.0,
            "{name}"
        );
        assert!(
            r.fill_ratio > 0.5 && r.fill_ratio < 10.0,
            "{name}: {}",
            r.fill_ratio
        );
        assert!(r.factorization_reason.contains("ILUT"), "{name}");
    }
    let r = IluHost::new(&load("olm1000"), &IluOptions::default())
        .unwrap()
        .report;
    assert_eq!(r.matching, "none");
    assert_eq!(
        r.factorization,
        IluFactorization::Level(0),
        "{}",
        r.factorization_reason
    );
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }

    #[test]
    fn opencl_exact_factors_invert_a() {
        exact_factors_invert_a(&backend());
    }

    #[test]
    fn opencl_real_matrices_converge_with_ilu() {
        real_matrices_converge(&backend());
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use pipekrylov::backend::cuda::CudaBackend;

    fn backend() -> CudaBackend {
        CudaBackend::from_env().expect("an NVIDIA GPU")
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_exact_factors_invert_a() {
        exact_factors_invert_a(&backend());
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_real_matrices_converge_with_ilu() {
        real_matrices_converge(&backend());
    }
}

/// The sweeps' distance from the exact triangular solves, which `--trisolve auto` uses on a
/// GPU: small on the BILU(0) factors of a Laplacian, large on those of olm500 (where three
/// sweeps made GMRES stall on the H200), zero with as many sweeps as levels.
#[test]
fn sweep_relative_error_tells_good_factors_from_bad() {
    use pipekrylov::matrix::BsrMatrix;
    use pipekrylov::precond::bilu0;
    let lap = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
    let f = bilu0(&BsrMatrix::from_csr(&lap, 1).unwrap(), "test").unwrap();
    let good = f.sweep_relative_error(3);
    assert!(good < 0.3, "{good}");
    assert!(f.sweep_relative_error(1) > good, "more sweeps come closer");
    // 2 sqrt(n) levels per factor: that many sweeps are the exact solve.
    assert!(f.sweep_relative_error(200) < 1e-12);
    let olm = load("olm500");
    let f = bilu0(&BsrMatrix::from_csr(&olm, 1).unwrap(), "test").unwrap();
    let bad = f.sweep_relative_error(3);
    assert!(bad > 1.0, "{bad}");
    // The automatic choice follows it on a GPU.
    let (solve, why) = TriangularSolve::Auto.resolve(1000, true, Some(bad));
    assert_eq!(solve, TriangularSolve::Exact, "{why}");
    let (solve, _) = TriangularSolve::Auto.resolve(1000, true, Some(good));
    assert_eq!(
        solve,
        TriangularSolve::Sweeps(pipekrylov::precond::AUTO_SWEEPS)
    );
}
