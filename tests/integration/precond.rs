//! Preconditioning I: the `trsv` kernels and BSpMV (block sizes 1..8) of every backend against
//! the host, BILU(0) against a dense sequential reference, exact and inexact triangular solves,
//! convergence with the block preconditioners on generated and real matrices (true residual
//! checked), launch/transfer counts per iteration, and the typed errors for bad input.
//!
//! OpenCL runs in CI on PoCL; the CUDA tests need an NVIDIA GPU and are `#[ignore]`d.

// Dense reference algorithms read best with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::common::{block_matrix, rand_vec, rel_diff};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{
    Backend, BlockTriangular, MatrixFormat, Slot, SpmvDots, SpmvOps, VectorOps,
};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::matrix_market::read_csr;
use pipekrylov::matrix::{BsrMatrix, CsrMatrix};
use pipekrylov::precond::{
    bilu0, build, Bilu0, Bilu0Options, BiluFactors, Levels, PointBlockJacobi, PrecondKind,
    PrecondSpec, Preconditioner, TriangularSolve,
};
use pipekrylov::solver::{BiCgStab, Cg, Execution, Gmres, Params, SolveReport, Variant};
use pipekrylov::Error;

fn dl<B: Backend>(b: &B, v: &pipekrylov::backend::Buffer<f64>) -> Vec<f64> {
    b.download(v).unwrap()
}

fn upload_factor<B: Backend>(b: &B, f: &BiluFactors<f64>, lower: bool) -> BlockTriangular<f64> {
    let s = f.block_size;
    if lower {
        BlockTriangular::upload(b, s, &f.l_row_ptr, &f.l_col_idx, &f.l_values, None).unwrap()
    } else {
        BlockTriangular::upload(
            b,
            s,
            &f.u_row_ptr,
            &f.u_col_idx,
            &f.u_values,
            Some(&f.u_inv_diag),
        )
        .unwrap()
    }
}

/// Outputs of every block kernel on one matrix, by name.
fn block_kernels<B: Backend>(b: &B, a: &CsrMatrix<f64>, s: usize) -> Vec<(String, Vec<f64>)> {
    let n = a.n_rows();
    let mut out = Vec::new();
    let x = b.upload(&rand_vec::<f64>(n, 11)).unwrap();
    let w = b.upload(&rand_vec::<f64>(n, 12)).unwrap();
    let rhs = b.upload(&rand_vec::<f64>(n, 13)).unwrap();
    // BSpMV, plain and fused.
    let m = b
        .upload_matrix(a, MatrixFormat::Bsr { block_size: s })
        .unwrap();
    let mut y = b.alloc::<f64>(n).unwrap();
    b.spmv(&m, &x, &mut y).unwrap();
    out.push(("spmv_bsr".into(), dl(b, &y)));
    let mut p = b.partials::<f64>(n, 4).unwrap();
    let dots = SpmvDots {
        yy: Some(Slot(0)),
        with: [Some((&x, Slot(1))), Some((&w, Slot(2)))],
    };
    b.spmv_dots(&m, &x, &mut y, dots, &mut p).unwrap();
    let sums = b.finish(&p).unwrap();
    out.push(("spmv_dots_bsr y".into(), dl(b, &y)));
    out.push((
        "spmv_dots_bsr sums".into(),
        (0..3).map(|k| sums.get(Slot(k))).collect(),
    ));
    let mut r = b.alloc::<f64>(n).unwrap();
    b.residual(&m, &x, &rhs, &mut r, &mut p, Some(Slot(3)))
        .unwrap();
    let sums = b.finish(&p).unwrap();
    out.push(("residual_bsr r".into(), dl(b, &r)));
    out.push(("residual_bsr rr".into(), vec![sums.get(Slot(3))]));

    // The trsv family on the BILU(0) factors of a.
    let f = bilu0(&BsrMatrix::from_csr(a, s).unwrap(), "bilu0").unwrap();
    for lower in [true, false] {
        let t = upload_factor(b, &f, lower);
        let tag = if lower { "L" } else { "U" };
        let mut x1 = b.alloc::<f64>(n).unwrap();
        b.bsr_trsv_sweep(&t, &rhs, None, &mut x1).unwrap();
        out.push((format!("bsr_trsv_sweep {tag} from zero"), dl(b, &x1)));
        let mut x2 = b.alloc::<f64>(n).unwrap();
        b.bsr_trsv_sweep(&t, &rhs, Some(&x), &mut x2).unwrap();
        out.push((format!("bsr_trsv_sweep {tag}"), dl(b, &x2)));
        let (rp, ci) = if lower {
            (&f.l_row_ptr, &f.l_col_idx)
        } else {
            (&f.u_row_ptr, &f.u_col_idx)
        };
        let lv = Levels::of(rp, ci, lower);
        let rows = b.upload(&lv.rows).unwrap();
        let mut x3 = b.alloc::<f64>(n).unwrap();
        for k in 0..lv.count() {
            b.bsr_trsv_level(&t, &rows, lv.start[k]..lv.start[k + 1], &rhs, &mut x3)
                .unwrap();
        }
        out.push((format!("bsr_trsv_level {tag}"), dl(b, &x3)));
    }
    let mut z = b.alloc::<f64>(n).unwrap();
    b.block_diag_scale(s, &b.upload(&f.u_inv_diag).unwrap(), &x, &mut z)
        .unwrap();
    out.push(("block_diag_scale".into(), dl(b, &z)));
    out
}

/// Every block kernel of `b` equals the host's on awkward shapes, block sizes 1..8.
fn block_kernels_agree<B: Backend>(b: &B) {
    let host = HostBackend::new();
    for s in 1..=8 {
        for nb in [1usize, 31, 33, 1000] {
            for empty_rows in [false, true] {
                let a = block_matrix(nb, s, empty_rows, (s * 1000 + nb) as u64);
                // BILU(0) needs every diagonal block: empty block rows only for BSpMV.
                let a_for = if empty_rows { None } else { Some(&a) };
                if let Some(a) = a_for {
                    let got = block_kernels(b, a, s);
                    let want = block_kernels(&host, a, s);
                    for ((name, g), (_, w)) in got.iter().zip(&want) {
                        let d = rel_diff(g, w);
                        assert!(d < 1e-12, "s = {s}, nb = {nb}, {name}: {d:e}");
                    }
                } else {
                    let m = b
                        .upload_matrix(&a, MatrixFormat::Bsr { block_size: s })
                        .unwrap();
                    let x = rand_vec::<f64>(a.n_rows(), 5);
                    let mut y = b.alloc::<f64>(a.n_rows()).unwrap();
                    b.spmv(&m, &b.upload(&x).unwrap(), &mut y).unwrap();
                    let mut want = vec![0.0; a.n_rows()];
                    a.mul_vec(&x, &mut want).unwrap();
                    let d = rel_diff(&dl(b, &y), &want);
                    assert!(d < 1e-12, "s = {s}, nb = {nb}, empty block rows: {d:e}");
                }
            }
        }
    }
}

#[test]
fn host_block_kernels_agree_with_themselves_and_csr() {
    block_kernels_agree(&HostBackend::new());
}

/// Dense n x n of a CSR matrix.
fn dense(a: &CsrMatrix<f64>) -> Vec<Vec<f64>> {
    let mut d = vec![vec![0.0; a.n_cols()]; a.n_rows()];
    for (i, row) in d.iter_mut().enumerate() {
        let (c, v) = a.row(i);
        for (&c, &v) in c.iter().zip(v) {
            row[c] += v;
        }
    }
    d
}

/// The inverse of a small dense matrix (rows of rows), Gauss-Jordan with partial pivoting.
fn dense_inverse(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let s = m.len();
    let mut a = m.to_vec();
    let mut e: Vec<Vec<f64>> = (0..s)
        .map(|r| (0..s).map(|c| f64::from(u8::from(r == c))).collect())
        .collect();
    for c in 0..s {
        let piv = (c..s)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .unwrap();
        a.swap(c, piv);
        e.swap(c, piv);
        let p = a[c][c];
        for j in 0..s {
            a[c][j] /= p;
            e[c][j] /= p;
        }
        for r in 0..s {
            if r != c {
                let fct = a[r][c];
                for j in 0..s {
                    a[r][j] -= fct * a[c][j];
                    e[r][j] -= fct * e[c][j];
                }
            }
        }
    }
    e
}

/// BILU(0) by the textbook KIJ dense algorithm restricted to the block pattern (a different
/// loop order from the library's IKJ), returning dense L (unit) and U.
fn dense_bilu0(a: &CsrMatrix<f64>, s: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let n = a.n_rows();
    let nb = n / s;
    let mut m = dense(a);
    let bsr = BsrMatrix::from_csr(a, s).unwrap();
    let mut pattern = vec![vec![false; nb]; nb];
    for (i, row) in pattern.iter_mut().enumerate() {
        for p in bsr.row_ptr[i]..bsr.row_ptr[i + 1] {
            row[bsr.col_idx[p]] = true;
        }
    }
    let block = |m: &Vec<Vec<f64>>, i: usize, j: usize| -> Vec<Vec<f64>> {
        (0..s)
            .map(|r| (0..s).map(|c| m[i * s + r][j * s + c]).collect())
            .collect()
    };
    let mm = |x: &Vec<Vec<f64>>, y: &Vec<Vec<f64>>| -> Vec<Vec<f64>> {
        (0..s)
            .map(|r| {
                (0..s)
                    .map(|c| (0..s).map(|k| x[r][k] * y[k][c]).sum())
                    .collect()
            })
            .collect()
    };
    for k in 0..nb {
        let ukk_inv = dense_inverse(&block(&m, k, k));
        for i in k + 1..nb {
            if !pattern[i][k] {
                continue;
            }
            let lik = mm(&block(&m, i, k), &ukk_inv);
            for r in 0..s {
                for c in 0..s {
                    m[i * s + r][k * s + c] = lik[r][c];
                }
            }
            for j in k + 1..nb {
                if pattern[i][j] && pattern[k][j] {
                    let upd = mm(&lik, &block(&m, k, j));
                    for r in 0..s {
                        for c in 0..s {
                            m[i * s + r][j * s + c] -= upd[r][c];
                        }
                    }
                }
            }
        }
    }
    let mut l = vec![vec![0.0; n]; n];
    let mut u = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i / s > j / s {
                l[i][j] = m[i][j];
            } else {
                u[i][j] = m[i][j];
            }
        }
        l[i][i] = 1.0;
    }
    (l, u)
}

/// Dense L and U of the library's factors.
fn dense_factors(f: &BiluFactors<f64>) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let s = f.block_size;
    let n = f.n_block_rows * s;
    let mut l = vec![vec![0.0; n]; n];
    let mut u = vec![vec![0.0; n]; n];
    let put = |m: &mut Vec<Vec<f64>>, bi: usize, bj: usize, blk: &[f64]| {
        for r in 0..s {
            for c in 0..s {
                m[bi * s + r][bj * s + c] = blk[c * s + r];
            }
        }
    };
    for bi in 0..f.n_block_rows {
        for p in f.l_row_ptr[bi] as usize..f.l_row_ptr[bi + 1] as usize {
            put(
                &mut l,
                bi,
                f.l_col_idx[p] as usize,
                &f.l_values[p * s * s..(p + 1) * s * s],
            );
        }
        for p in f.u_row_ptr[bi] as usize..f.u_row_ptr[bi + 1] as usize {
            put(
                &mut u,
                bi,
                f.u_col_idx[p] as usize,
                &f.u_values[p * s * s..(p + 1) * s * s],
            );
        }
        // U_II from its stored inverse.
        let dinv = CsrMatrix::from_triplets(
            s,
            s,
            &(0..s * s)
                .map(|k| (k % s, k / s, f.u_inv_diag[bi * s * s + k]))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let d = dense(&dinv);
        let e = dense_inverse(&d);
        for r in 0..s {
            for c in 0..s {
                u[bi * s + r][bi * s + c] = e[r][c];
            }
        }
        for r in 0..s {
            l[bi * s + r][bi * s + r] = 1.0;
        }
    }
    (l, u)
}

#[test]
fn bilu0_factors_equal_a_dense_kij_reference() {
    for (s, nb, seed) in [(1, 12, 1), (2, 9, 2), (3, 7, 3), (4, 5, 4), (5, 6, 5)] {
        let a = block_matrix(nb, s, false, seed);
        let f = bilu0(&BsrMatrix::from_csr(&a, s).unwrap(), "bilu0").unwrap();
        let (l, u) = dense_factors(&f);
        let (lr, ur) = dense_bilu0(&a, s);
        let n = nb * s;
        let scale = dense(&a)
            .iter()
            .flatten()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..n {
            for j in 0..n {
                assert!(
                    (l[i][j] - lr[i][j]).abs() < 1e-12 * scale,
                    "s = {s}: L({i}, {j}) {} vs {}",
                    l[i][j],
                    lr[i][j]
                );
                assert!(
                    (u[i][j] - ur[i][j]).abs() < 1e-12 * scale,
                    "s = {s}: U({i}, {j}) {} vs {}",
                    u[i][j],
                    ur[i][j]
                );
            }
        }
    }
}

/// z = U^-1 L^-1 r sequentially on the dense factors: forward substitution with the unit
/// lower L, then block back substitution with U, each diagonal block inverted densely.
fn sequential_solve(l: &[Vec<f64>], u: &[Vec<f64>], s: usize, r: &[f64]) -> Vec<f64> {
    let n = r.len();
    let mut f = r.to_vec();
    for i in 0..n {
        for j in 0..i {
            f[i] -= l[i][j] * f[j];
        }
    }
    let mut z = vec![0.0; n];
    for bi in (0..n / s).rev() {
        // t = f_I - sum_{J > I} U_IJ z_J, then U_II z_I = t.
        let rows = bi * s..(bi + 1) * s;
        let m: Vec<Vec<f64>> = rows
            .clone()
            .map(|i| u[i][bi * s..(bi + 1) * s].to_vec())
            .collect();
        let t: Vec<f64> = rows
            .map(|i| f[i] - ((bi + 1) * s..n).map(|j| u[i][j] * z[j]).sum::<f64>())
            .collect();
        let minv = dense_inverse(&m);
        for r in 0..s {
            z[bi * s + r] = (0..s).map(|c| minv[r][c] * t[c]).sum();
        }
    }
    z
}

fn apply_bilu(
    b: &HostBackend,
    a: &CsrMatrix<f64>,
    s: usize,
    solve: TriangularSolve,
    r: &[f64],
) -> Vec<f64> {
    let opts = Bilu0Options {
        block_size: s,
        solve,
        subdomains: 1,
        ..Bilu0Options::default()
    };
    let m = Bilu0::new(b, a, opts).unwrap();
    let rb = b.upload(r).unwrap();
    let mut z = b.alloc::<f64>(r.len()).unwrap();
    m.apply(b, &rb, &mut z).unwrap();
    b.download(&z).unwrap()
}

#[test]
fn exact_solve_equals_sequential_substitution() {
    let host = HostBackend::new();
    for (s, nb) in [(1, 40), (3, 20), (4, 15)] {
        // Upper and lower parts present: a convection-diffusion-like banded matrix in blocks.
        let a = block_matrix(nb, s, false, 77 + s as u64);
        let f = bilu0(&BsrMatrix::from_csr(&a, s).unwrap(), "bilu0").unwrap();
        let (l, u) = dense_factors(&f);
        let r = rand_vec::<f64>(nb * s, 8);
        let want = sequential_solve(&l, &u, s, &r);
        let got = apply_bilu(&host, &a, s, TriangularSolve::Exact, &r);
        let d = rel_diff(&got, &want);
        assert!(d < 1e-12, "s = {s}: {d:e}");
    }
}

#[test]
fn sweeps_approach_the_exact_solve_monotonically() {
    let host = HostBackend::new();
    let a = Generator::Poisson3d
        .generate_with_param::<f64>(8)
        .unwrap()
        .matrix;
    let s = 4;
    let r = rand_vec::<f64>(a.n_rows(), 3);
    let exact = apply_bilu(&host, &a, s, TriangularSolve::Exact, &r);
    let mut last = f64::INFINITY;
    let mut first = 0.0;
    for k in 1..=8 {
        let z = apply_bilu(&host, &a, s, TriangularSolve::Sweeps(k), &r);
        let err = rel_diff(&z, &exact);
        assert!(
            err < last,
            "K = {k}: error {err:e} did not shrink (was {last:e})"
        );
        if k == 1 {
            first = err;
        }
        last = err;
    }
    assert!(last < 0.1 * first, "8 sweeps: {last:e}, 1 sweep: {first:e}");
    // K at least the number of levels is the exact solve.
    let m = Bilu0::new(
        &host,
        &a,
        Bilu0Options {
            block_size: s,
            solve: TriangularSolve::Exact,
            subdomains: 1,
            ..Bilu0Options::default()
        },
    )
    .unwrap();
    let (ll, ul) = m.level_counts().unwrap();
    let z = apply_bilu(&host, &a, s, TriangularSolve::Sweeps(ll.max(ul)), &r);
    assert!(rel_diff(&z, &exact) < 1e-12);
}

fn load(name: &str) -> CsrMatrix<f64> {
    read_csr::<f64>(format!(
        "{}/tests/data/{name}.mtx",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn solve<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    solver: &str,
    pc: Option<&dyn Preconditioner<B, f64>>,
    max_iter: usize,
) -> SolveReport {
    let m = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let n = a.n_rows();
    let params = Params {
        rtol: 1e-8,
        max_iter,
        gmres: pipekrylov::solver::GmresParams {
            restart: 30,
            ..Default::default()
        },
        ..Params::default()
    };
    let rhs = b.upload(&vec![1.0; n]).unwrap();
    let mut x = b.alloc(n).unwrap();
    match solver {
        "cg" => Cg::new(b, &m, pc, params).unwrap().solve(&rhs, &mut x),
        "bicgstab" => BiCgStab::new(b, &m, pc, params)
            .unwrap()
            .solve(&rhs, &mut x),
        _ => Gmres::new(b, &m, pc, params).unwrap().solve(&rhs, &mut x),
    }
    .unwrap()
}

fn spec(kind: PrecondKind, s: usize, solve: TriangularSolve) -> PrecondSpec {
    let mut spec = PrecondSpec::from(kind);
    if let Some(b) = spec.block_size_mut() {
        *b = s;
    }
    if let Some(t) = spec.triangular_solve_mut() {
        *t = solve;
    }
    spec
}

/// `spec` (block-Jacobi) over `p` subdomains.
fn with_subdomains(spec: PrecondSpec, p: usize) -> PrecondSpec {
    match spec {
        PrecondSpec::BlockJacobi(o) => {
            PrecondSpec::BlockJacobi(pipekrylov::precond::Bilu0Options { subdomains: p, ..o })
        }
        other => other,
    }
}

fn assert_converged(what: &str, r: &SolveReport) {
    // BiCGStab's recursive residual drifts from the true one (seen on the H200 with NVIDIA
    // OpenCL: Pd with 3 sweeps stopped at a true 4.7e-8): its attainable accuracy is the
    // robustness issue's business; within 10x of the tolerance is asserted for it here.
    let bound = if r.solver == "bicgstab" { 1e-7 } else { 1.1e-8 };
    assert!(
        r.stop_reason.converged() && r.relative_true_residual <= bound,
        "{what}: {} after {} iterations, true relative residual {:e}",
        r.stop_reason,
        r.iterations,
        r.relative_true_residual
    );
}

/// GMRES(30) and BiCGStab with BILU(0) (exact and 3 sweeps) converge to 1e-8 within a budget
/// in which the unpreconditioned solve does not. On the Olmstead matrices (a chain of
/// dependencies as long as the matrix) 3 sweeps are far from the exact triangular solves and
/// GMRES stalls with them: only the exact solve is asserted there (see bench/log/). On Pd,
/// BiCGStab with 3 sweeps climbs to 1e4-1e7 times the initial residual in its first 30
/// iterations, and whether that hump crosses the divergence bound (dtol = 1e5) depends on
/// rounding (on the host: peak 6.7e4 and convergence in 105 iterations with the partials summed
/// in group order; 1.3e7, diverged at 29, with the 32-lane finish order): only GMRES is asserted
/// with sweeps there.
fn bilu_converges_where_none_does<B: Backend + 'static>(b: &B) {
    // (name, matrix, block size, budget for GMRES, budget for BiCGStab, the solvers asserted
    // with 3 sweeps)
    type Case = (
        &'static str,
        CsrMatrix<f64>,
        usize,
        usize,
        usize,
        &'static [&'static str],
    );
    const BOTH: &[&str] = &["gmres", "bicgstab"];
    let problems: Vec<Case> = vec![
        (
            "convdiff3d",
            Generator::ConvDiff3d
                .generate_with_param(24)
                .unwrap()
                .matrix,
            4,
            60,
            40,
            BOTH,
        ),
        (
            "elasticity3d",
            Generator::Elasticity3d
                .generate_with_param(9)
                .unwrap()
                .matrix,
            3,
            200,
            80,
            BOTH,
        ),
        ("olm500", load("olm500"), 2, 300, 300, &[]),
        ("olm1000", load("olm1000"), 1, 300, 300, &[]),
        ("Pd", load("Pd"), 1, 300, 300, &["gmres"]),
    ];
    for (name, a, s, gmres_budget, bicgstab_budget, sweeps_for) in &problems {
        for (solver, budget) in [("gmres", *gmres_budget), ("bicgstab", *bicgstab_budget)] {
            let none = solve(b, a, solver, None, budget);
            assert!(
                !none.stop_reason.converged(),
                "{name}/{solver}: the unpreconditioned solve converged in {budget}, pick a harder case"
            );
            let mut solves = vec![TriangularSolve::Exact];
            if sweeps_for.contains(&solver) {
                solves.push(TriangularSolve::Sweeps(3));
            }
            for ts in solves {
                let pc = build(b, a, spec(PrecondKind::Bilu0, *s, ts))
                    .unwrap()
                    .unwrap();
                let r = solve(b, a, solver, Some(pc.as_ref()), budget);
                assert_converged(&format!("{name}/{solver}/bilu0 s={s} {ts}"), &r);
            }
        }
    }
}

#[test]
fn host_bilu_converges_where_none_does() {
    bilu_converges_where_none_does(&HostBackend::new());
}

#[test]
fn cg_with_point_block_jacobi_and_symmetric_bilu0() {
    let host = HostBackend::new();
    let a = Generator::Elasticity3d
        .generate_with_param::<f64>(6)
        .unwrap()
        .matrix;
    let none = solve(&host, &a, "cg", None, 5000);
    assert_converged("elasticity3d/cg", &none);
    let pbj = PointBlockJacobi::new(&host, &a, 3).unwrap();
    let r = solve(&host, &a, "cg", Some(&pbj), 5000);
    assert_converged("elasticity3d/cg/point-block-jacobi", &r);
    assert!(
        r.iterations < none.iterations,
        "{} vs {}",
        r.iterations,
        none.iterations
    );
    // BILU(0) of a symmetric matrix is symmetric (L D L^T), with the exact solve and with K
    // sweeps on both factors alike, so it is a valid CG preconditioner.
    for (kind, ts) in [
        (PrecondKind::Bilu0, TriangularSolve::Exact),
        (PrecondKind::Bilu0, TriangularSolve::Sweeps(3)),
        (PrecondKind::BlockJacobi, TriangularSolve::Exact),
    ] {
        let sp = with_subdomains(spec(kind, 3, ts), 4);
        let pc = build(&host, &a, sp).unwrap().unwrap();
        let r = solve(&host, &a, "cg", Some(pc.as_ref()), 5000);
        assert_converged(&format!("elasticity3d/cg/{kind} {ts}"), &r);
        let bound = if kind == PrecondKind::BlockJacobi {
            2 * none.iterations / 3
        } else {
            none.iterations / 2
        };
        assert!(
            r.iterations < bound,
            "{kind} {ts}: {} vs {}",
            r.iterations,
            none.iterations
        );
    }
}

#[test]
fn block_jacobi_trades_iterations_for_subdomains() {
    let host = HostBackend::new();
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(16)
        .unwrap()
        .matrix;
    let mut iters = Vec::new();
    for p in [1, 4, 64] {
        let sp = with_subdomains(spec(PrecondKind::BlockJacobi, 4, TriangularSolve::Exact), p);
        let pc = build(&host, &a, sp).unwrap().unwrap();
        assert_eq!(pc.name(), "block-jacobi");
        assert_eq!(pc.params()["subdomains"], p);
        let r = solve(&host, &a, "gmres", Some(pc.as_ref()), 1000);
        assert_converged(&format!("block-jacobi P = {p}"), &r);
        iters.push(r.iterations);
    }
    assert!(
        iters[0] <= iters[2],
        "more subdomains, fewer couplings: {iters:?}"
    );
}

#[test]
fn zero_diagonal_matrices_give_the_typed_pivot_error() {
    let host = HostBackend::new();
    for name in ["rajat19", "nnc1374"] {
        let a = load(name);
        match Bilu0::new(&host, &a, Bilu0Options::default()) {
            Err(Error::SingularPivot {
                preconditioner,
                block_row,
                ..
            }) => {
                assert_eq!(preconditioner, "bilu0");
                assert!(block_row < a.n_rows());
            }
            other => panic!("{name}: expected a singular pivot, got {other:?}"),
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let host = HostBackend::new();
    let a = Generator::Poisson2d
        .generate_with_param::<f64>(5)
        .unwrap()
        .matrix; // n = 25
                 // Block size that does not divide n, or out of range.
    for s in [0, 2, 9] {
        let e = PointBlockJacobi::new(&host, &a, s).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
        let opts = Bilu0Options {
            block_size: s,
            ..Bilu0Options::default()
        };
        let e = Bilu0::new(&host, &a, opts).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    }
    // Zero sweeps, zero subdomains.
    for opts in [
        Bilu0Options {
            solve: TriangularSolve::Sweeps(0),
            ..Bilu0Options::default()
        },
        Bilu0Options {
            subdomains: 0,
            ..Bilu0Options::default()
        },
    ] {
        assert!(matches!(
            Bilu0::new(&host, &a, opts),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!("sweeps:0".parse::<TriangularSolve>().is_err());
    assert!("sweep:3".parse::<TriangularSolve>().is_err());
    assert_eq!(
        "sweeps:4".parse::<TriangularSolve>().unwrap(),
        TriangularSolve::Sweeps(4)
    );
    // A singular diagonal block: rows 0 and 1 equal inside the first 2 x 2 block.
    let sing = CsrMatrix::from_triplets(
        4,
        4,
        &[
            (0, 0, 1.0),
            (0, 1, 2.0),
            (1, 0, 1.0),
            (1, 1, 2.0),
            (2, 2, 1.0),
            (3, 3, 1.0),
        ],
    )
    .unwrap();
    assert!(matches!(
        PointBlockJacobi::new(&host, &sing, 2),
        Err(Error::SingularPivot { block_row: 0, .. })
    ));
    let opts = Bilu0Options {
        block_size: 2,
        ..Bilu0Options::default()
    };
    assert!(matches!(
        Bilu0::new(&host, &sing, opts),
        Err(Error::SingularPivot { block_row: 0, .. })
    ));
    // NaN in the matrix.
    let mut nan = a.clone();
    nan.values_mut()[3] = f64::NAN;
    assert!(matches!(
        Bilu0::new(&host, &nan, Bilu0Options::default()),
        Err(Error::NonFinite { .. })
    ));
    // A preconditioner built for another matrix (same size) is refused by every solver; the
    // solver then works with the right one.
    let mut other = a.clone();
    other.values_mut()[0] += 1.0;
    let pc = Bilu0::new(&host, &other, Bilu0Options::default()).unwrap();
    let m = host.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let params = Params::default();
    assert!(matches!(
        Gmres::new(&host, &m, Some(&pc as &dyn Preconditioner<_, f64>), params),
        Err(Error::PreconditionerMismatch(_))
    ));
    assert!(matches!(
        Cg::new(&host, &m, Some(&pc as &dyn Preconditioner<_, f64>), params),
        Err(Error::PreconditionerMismatch(_))
    ));
    assert!(matches!(
        BiCgStab::new(&host, &m, Some(&pc as &dyn Preconditioner<_, f64>), params),
        Err(Error::PreconditionerMismatch(_))
    ));
    let good = Bilu0::new(&host, &a, Bilu0Options::default()).unwrap();
    let r = solve(&host, &a, "gmres", Some(&good), 500);
    assert_converged("poisson2d/gmres/bilu0 after a refused one", &r);
}

/// Launches and transfers per iteration with each preconditioner: the transfers stay at the
/// paper's counts and the launches grow by exactly the preconditioner's own launches (in the
/// synchronous mode, the paper's; the device-resident BiCGStab fuses one kernel pair when there
/// is no preconditioner, `tests/integration/device_resident.rs`).
fn counts_per_preconditioner<B: Backend + 'static>(b: &B) {
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(12)
        .unwrap()
        .matrix; // n = 1728 = 432 blocks of 4
    let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let n = a.n_rows();
    let rhs = b.upload(&vec![1.0; n]).unwrap();
    let params = Params {
        rtol: 0.0,
        // Ten steps: BILU(0) reaches rounding level (a breakdown and a second cycle) in 30.
        max_iter: 10,
        gmres: pipekrylov::solver::GmresParams {
            restart: 10,
            ..Default::default()
        },
        variant: Variant::Pipelined,
        execution: Execution::Synchronous,
        ..Params::default()
    };
    let none = |solver: &str| {
        let mut x = b.alloc(n).unwrap();
        match solver {
            "bicgstab" => BiCgStab::new(b, &m, None, params)
                .unwrap()
                .solve(&rhs, &mut x),
            _ => Gmres::new(b, &m, None, params).unwrap().solve(&rhs, &mut x),
        }
        .unwrap()
    };
    let (base_bicg, base_gmres) = (none("bicgstab"), none("gmres"));
    for sp in [
        spec(PrecondKind::Jacobi, 1, TriangularSolve::Exact),
        spec(PrecondKind::PointBlockJacobi, 4, TriangularSolve::Exact),
        spec(PrecondKind::Bilu0, 4, TriangularSolve::Exact),
        spec(PrecondKind::Bilu0, 4, TriangularSolve::Sweeps(3)),
        spec(PrecondKind::BlockJacobi, 4, TriangularSolve::Sweeps(2)),
    ] {
        let pc = build(b, &a, sp).unwrap().unwrap();
        let k = pc.launches_per_apply() as u64;
        let solve = sp.triangular_solve().map(|t| t.to_string());
        let label = format!("{} {}", sp.kind(), solve.unwrap_or_default());
        // BiCGStab: two applications per iteration (M^-1 p and M^-1 s), right-preconditioned.
        let mut x = b.alloc(n).unwrap();
        let r = BiCgStab::new(b, &m, Some(pc.as_ref()), params)
            .unwrap()
            .solve(&rhs, &mut x)
            .unwrap();
        assert_eq!(r.iterations, 10, "{label}");
        assert_eq!(
            r.loop_counters.transfers, base_bicg.loop_counters.transfers,
            "{label}: BiCGStab transfers"
        );
        assert_eq!(
            r.loop_counters.launches,
            base_bicg.loop_counters.launches + 2 * 10 * k,
            "{label}: BiCGStab launches"
        );
        // GMRES: one application per Arnoldi step, after copying the basis column v_{i-1}
        // out of the basis (basis_store); none of them transfers. Without a preconditioner
        // the GPU backends fuse the step's product and dots (one launch less per step).
        let unfused = if b.name() == "host" { 0 } else { 10 };
        let mut x = b.alloc(n).unwrap();
        let r = Gmres::new(b, &m, Some(pc.as_ref()), params)
            .unwrap()
            .solve(&rhs, &mut x)
            .unwrap();
        assert_eq!(
            r.inner_counters.transfers, 0,
            "{label}: GMRES orthogonalization"
        );
        assert_eq!(
            r.inner_counters.launches,
            base_gmres.inner_counters.launches + 10 * (k + 1) + unfused,
            "{label}: GMRES launches per cycle"
        );
    }
}

#[test]
fn host_counts_per_preconditioner() {
    counts_per_preconditioner(&HostBackend::new());
}

/// With the exact solve the iteration counts equal the host's. With sweeps the preconditioned
/// operator is applied bit for bit alike (see `block_kernels_agree`), but the pipelined
/// GMRES's one-pass classical Gram-Schmidt amplifies the different reduction order of the
/// backends (issue: numerical robustness), so only convergence is asserted there.
#[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]
fn iterations_match_host<B: Backend + 'static>(b: &B) {
    let host = HostBackend::new();
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(16)
        .unwrap()
        .matrix;
    for ts in [TriangularSolve::Exact, TriangularSolve::Sweeps(3)] {
        for solver in ["gmres", "bicgstab"] {
            let sp = spec(PrecondKind::Bilu0, 4, ts);
            let pb = build(b, &a, sp).unwrap().unwrap();
            let ph = build(&host, &a, sp).unwrap().unwrap();
            let rb = solve(b, &a, solver, Some(pb.as_ref()), 500);
            let rh = solve(&host, &a, solver, Some(ph.as_ref()), 500);
            assert_converged(&format!("{solver} {ts}"), &rb);
            if ts == TriangularSolve::Exact {
                assert_eq!(
                    rb.iterations, rh.iterations,
                    "{solver} {ts}: iterations vs host"
                );
            }
        }
    }
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_block_kernels_agree_with_host() {
        super::block_kernels_agree(&backend());
    }
    #[test]
    fn opencl_iterations_match_host() {
        super::iterations_match_host(&backend());
    }
    #[test]
    fn opencl_counts_per_preconditioner() {
        super::counts_per_preconditioner(&backend());
    }
    #[test]
    fn opencl_bilu_converges_where_none_does() {
        super::bilu_converges_where_none_does(&backend());
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
    fn cuda_block_kernels_agree_with_host() {
        super::block_kernels_agree(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_iterations_match_host() {
        super::iterations_match_host(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_counts_per_preconditioner() {
        super::counts_per_preconditioner(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_bilu_converges_where_none_does() {
        super::bilu_converges_where_none_does(&backend());
    }
}
