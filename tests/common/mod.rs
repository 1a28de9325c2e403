//! Shared helpers of the integration tests: a deterministic random generator, random matrices
//! with empty rows, comparisons.
#![allow(dead_code)]

pub mod dcgs2;

use pipekrylov::matrix::CsrMatrix;
use pipekrylov::Scalar;

/// A device-resident solve `(r, rx)` equals the synchronous one `(s, sx)` bit for bit: the mode
/// that ran, `iterations` iterations in both, the stop, the residual history and the solution.
pub fn assert_resident_equals_sync(
    label: &str,
    iterations: usize,
    (s, sx): (&pipekrylov::solver::SolveReport, &[f64]),
    (r, rx): (&pipekrylov::solver::SolveReport, &[f64]),
) {
    use pipekrylov::solver::Execution;
    assert_eq!(r.execution, Execution::DeviceResident, "{label}");
    assert_eq!(s.iterations, iterations, "{label}");
    assert_eq!(s.iterations, r.iterations, "{label}");
    assert_eq!(s.stop_reason, r.stop_reason, "{label}");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&s.residual_history),
        bits(&r.residual_history),
        "{label}: history"
    );
    assert!(bits(sx) == bits(rx), "{label}: solution");
}

/// Deterministic xorshift generator.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform in [-1, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

pub fn rand_vec<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    (0..n).map(|_| T::from_f64(r.next_f64())).collect()
}

/// A random square matrix with a strong diagonal, about `per_row` entries per row, and every
/// 7th row empty (when `empty_rows`).
pub fn random_matrix<T: Scalar>(
    n: usize,
    per_row: usize,
    empty_rows: bool,
    seed: u64,
) -> CsrMatrix<T> {
    let mut r = Rng(seed | 1);
    let mut rp = vec![0usize];
    let mut ci = Vec::new();
    let mut v = Vec::new();
    for row in 0..n {
        if !(empty_rows && row % 7 == 3) {
            let len = 1 + r.below(2 * per_row.max(1));
            let mut cols: Vec<usize> = (0..len).map(|_| r.below(n)).collect();
            cols.push(row);
            cols.sort_unstable();
            cols.dedup();
            for c in cols {
                ci.push(c);
                v.push(T::from_f64(if c == row {
                    4.0 + r.next_f64()
                } else {
                    r.next_f64()
                }));
            }
        }
        rp.push(ci.len());
    }
    CsrMatrix::new(n, n, rp, ci, v).expect("valid random matrix")
}

/// Largest |a - b| relative to the largest |b| (or absolute when b is zero).
pub fn rel_diff<T: Scalar>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    let scale = b
        .iter()
        .map(|v| v.to_f64().abs())
        .fold(0.0, f64::max)
        .max(1e-300);
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.to_f64() - y.to_f64()).abs())
        .fold(0.0, f64::max);
    if scale < 1e-200 {
        diff
    } else {
        diff / scale
    }
}

pub fn assert_close<T: Scalar>(what: &str, a: &[T], b: &[T], tol: f64) {
    let d = rel_diff(a, b);
    assert!(
        d <= tol,
        "{what}: relative difference {d:.3e} > {tol:.1e} (n = {})",
        a.len()
    );
}

pub fn assert_scalar_close(what: &str, a: f64, b: f64, tol: f64) {
    let d = (a - b).abs() / b.abs().max(a.abs()).max(1e-300);
    assert!(
        d <= tol || (a - b).abs() < 1e-280,
        "{what}: {a:e} vs {b:e} (rel {d:.3e} > {tol:.1e})"
    );
}

/// -div(kappa grad u) on a k^3 grid (7-point finite volumes, Dirichlet), kappa in {1, 1e4, 1e6}
/// on 4^3-cell boxes (harmonic means across faces): coefficient jumps of 1e4 to 1e6.
/// The SPD problems of the FSAI tests: elasticity3d (m = 6), aniso2d (k = 60), the jump-coefficient
/// diffusion (k = 12) and SuiteSparse's 494_bus, by name.
pub fn spd_problems() -> Vec<(&'static str, CsrMatrix<f64>)> {
    use pipekrylov::matrix::generate::Generator;
    vec![
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
        ("jump-diffusion", jump_diffusion(12)),
        (
            "494_bus",
            pipekrylov::matrix::matrix_market::read_csr::<f64>(format!(
                "{}/tests/data/494_bus.mtx",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        ),
    ]
}

pub fn jump_diffusion(k: usize) -> CsrMatrix<f64> {
    let coef = |x: usize, y: usize, z: usize| -> f64 {
        match (x / 4 + y / 4 + z / 4) % 3 {
            0 => 1.0,
            1 => 1e4,
            _ => 1e6,
        }
    };
    let idx = |x: usize, y: usize, z: usize| x + k * (y + k * z);
    let mut t = Vec::new();
    for z in 0..k {
        for y in 0..k {
            for x in 0..k {
                let i = idx(x, y, z);
                let c = coef(x, y, z);
                let mut diag = 0.0;
                for (dx, dy, dz) in [
                    (-1i64, 0i64, 0i64),
                    (1, 0, 0),
                    (0, -1, 0),
                    (0, 1, 0),
                    (0, 0, -1),
                    (0, 0, 1),
                ] {
                    let (xx, yy, zz) = (x as i64 + dx, y as i64 + dy, z as i64 + dz);
                    let inside = (0..k as i64).contains(&xx)
                        && (0..k as i64).contains(&yy)
                        && (0..k as i64).contains(&zz);
                    // Harmonic mean across the face; the boundary takes the cell's own value.
                    let w = if inside {
                        let cn = coef(xx as usize, yy as usize, zz as usize);
                        2.0 * c * cn / (c + cn)
                    } else {
                        c
                    };
                    diag += w;
                    if inside {
                        t.push((i, idx(xx as usize, yy as usize, zz as usize), -w));
                    }
                }
                t.push((i, i, diag));
            }
        }
    }
    CsrMatrix::from_triplets(k * k * k, k * k * k, &t).unwrap()
}

/// `a` with row `dense` replaced by a full row (every column; the diagonal stays dominant): a
/// row far longer than the mean, which GPU backends sum apart in chunks.
pub fn with_dense_row<T: Scalar>(a: &CsrMatrix<T>, dense: usize, seed: u64) -> CsrMatrix<T> {
    let mut r = Rng(seed | 1);
    let n = a.n_cols();
    let mut triplets = Vec::with_capacity(a.nnz() + n);
    for row in 0..a.n_rows() {
        if row == dense {
            for c in 0..n {
                let v = if c == row { n as f64 } else { r.next_f64() };
                triplets.push((row, c, T::from_f64(v)));
            }
        } else {
            let (cols, vals) = a.row(row);
            triplets.extend(cols.iter().zip(vals).map(|(&c, &v)| (row, c, v)));
        }
    }
    CsrMatrix::from_triplets(a.n_rows(), n, &triplets).expect("valid matrix")
}

/// An `n x n` matrix whose only nonzeros are a full row `row` (every other row is empty).
pub fn single_full_row<T: Scalar>(n: usize, row: usize, seed: u64) -> CsrMatrix<T> {
    let mut r = Rng(seed | 1);
    let triplets: Vec<_> = (0..n)
        .map(|c| (row, c, T::from_f64(r.next_f64() - 0.5)))
        .collect();
    CsrMatrix::from_triplets(n, n, &triplets).expect("valid matrix")
}

/// Solve a y = b by Gaussian elimination with partial pivoting (dense references).
#[allow(clippy::needless_range_loop)]
pub fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = a.len();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))
            .unwrap();
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            for k in c..n {
                a[r][k] -= f * a[c][k];
            }
            b[r] -= f * b[c];
        }
    }
    for c in (0..n).rev() {
        let mut v = b[c];
        for j in c + 1..n {
            v -= a[c][j] * b[j];
        }
        b[c] = v / a[c][c];
    }
    b
}

/// a_ij of a CSR matrix with ascending columns (0 when not stored).
pub fn entry(a: &CsrMatrix<f64>, i: usize, j: usize) -> f64 {
    let (c, v) = a.row(i);
    c.binary_search(&j).map_or(0.0, |k| v[k])
}

/// PCG to 1e-8 with b = A 1 (as in \[Bernaschi19\]), x0 = 0, synchronous execution (the paper's
/// counts: one transfer per iteration), at most 20000 iterations.
pub fn pcg_a_ones<B: pipekrylov::backend::Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    pc: Option<&dyn pipekrylov::precond::Preconditioner<B, f64>>,
) -> pipekrylov::solver::SolveReport {
    use pipekrylov::backend::MatrixFormat;
    use pipekrylov::solver::{Cg, Execution, Params};
    let m = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let n = a.n_rows();
    let mut rhs = vec![0.0; n];
    a.mul_vec(&vec![1.0; n], &mut rhs).unwrap();
    let rhs = b.upload(&rhs).unwrap();
    let mut x = b.alloc(n).unwrap();
    b.fill(&mut x, 0.0).unwrap();
    let params = Params {
        rtol: 1e-8,
        max_iter: 20_000,
        execution: Execution::Synchronous,
        ..Params::default()
    };
    Cg::new(b, &m, pc, params)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap()
}

/// A random matrix of `nb` block rows of size `s`: dominant diagonal blocks, a few random
/// blocks per block row, every 7th block row without off-diagonal blocks (entirely empty when
/// `empty_rows`), and one dense block row (every block column) in the middle.
pub fn block_matrix(nb: usize, s: usize, empty_rows: bool, seed: u64) -> CsrMatrix<f64> {
    let mut r = Rng(seed | 1);
    let mut t = Vec::new();
    let dense_row = nb / 2;
    for bi in 0..nb {
        let mut cols: Vec<usize> = if bi % 7 == 3 {
            vec![]
        } else if bi == dense_row {
            (0..nb).collect()
        } else {
            (0..1 + r.below(3)).map(|_| r.below(nb)).collect()
        };
        if !(empty_rows && bi % 7 == 3) {
            cols.push(bi);
        }
        cols.sort_unstable();
        cols.dedup();
        for bj in cols {
            for i in 0..s {
                for j in 0..s {
                    // Leave some entries of a touched block out: BSR stores them as zeros.
                    if bi != bj && r.below(5) == 0 {
                        continue;
                    }
                    let v = if bi == bj && i == j {
                        4.0 * s as f64 + r.next_f64()
                    } else {
                        r.next_f64() - 0.5
                    };
                    t.push((bi * s + i, bj * s + j, v));
                }
            }
        }
    }
    // The dense block row's diagonal must dominate its many off-diagonal blocks.
    for i in 0..s {
        t.push((dense_row * s + i, dense_row * s + i, nb as f64 * s as f64));
    }
    CsrMatrix::from_triplets(nb * s, nb * s, &t).unwrap()
}
