//! SELL-C-sigma, ELL and BSR against the CSR reference: products, round trips, layout
//! invariants and error cases.

use pipekrylov::matrix::sell::MAX_SLICE_HEIGHT;
use pipekrylov::matrix::{BsrMatrix, CsrMatrix, SellMatrix};
use pipekrylov::{Error, Scalar};

/// Deterministic 64-bit LCG (Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 42) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Random `n_rows x n_cols` matrix: each row is empty with probability `p_empty`, otherwise has
/// a random number of entries up to `max_len` (so row lengths vary widely).
fn random_csr<T: Scalar>(
    rng: &mut Lcg,
    n_rows: usize,
    n_cols: usize,
    max_len: usize,
    p_empty: f64,
) -> CsrMatrix<T> {
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for _ in 0..n_rows {
        if n_cols > 0 && rng.unit() >= p_empty {
            let len = 1 + rng.below(max_len.max(1));
            for _ in 0..len {
                cols.push(rng.below(n_cols));
                vals.push(T::from_f64(rng.unit() * 2.0 - 1.0));
            }
        }
        row_ptr.push(cols.len());
    }
    // Duplicates are summed, so rows stay valid.
    CsrMatrix::from_unsorted(n_rows, n_cols, row_ptr, cols, vals).unwrap()
}

fn random_vec<T: Scalar>(rng: &mut Lcg, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f64(rng.unit() * 2.0 - 1.0))
        .collect()
}

fn csr_product<T: Scalar>(a: &CsrMatrix<T>, x: &[T]) -> Vec<T> {
    let mut y = vec![T::zero(); a.n_rows()];
    a.mul_vec(x, &mut y).unwrap();
    y
}

fn assert_close<T: Scalar>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = 64.0 * T::EPSILON.to_f64() * (1.0 + w.to_f64().abs());
        assert!(
            (g.to_f64() - w.to_f64()).abs() <= tol,
            "{what}: entry {i}: got {g}, want {w}"
        );
    }
}

/// Layout invariants of a SELL matrix built from `a`.
fn check_sell_layout<T: Scalar>(s: &SellMatrix<T>, a: &CsrMatrix<T>) {
    s.validate().unwrap();
    assert_eq!(s.n_rows, a.n_rows());
    assert_eq!(s.n_cols, a.n_cols());
    assert_eq!(s.nnz, a.nnz());
    assert_eq!(s.n_slices(), a.n_rows().div_ceil(s.c));
    assert_eq!(s.slice_ptr.len(), s.n_slices() + 1);
    assert_eq!(s.row_perm.len(), a.n_rows());
    assert_eq!(s.row_len.len(), a.n_rows());
    assert_eq!(*s.slice_ptr.last().unwrap() as usize, s.stored_entries());
    assert!(s.stored_entries() >= s.nnz);
    let c = s.c;
    for sl in 0..s.n_slices() {
        let (lo, hi) = (s.slice_ptr[sl] as usize, s.slice_ptr[sl + 1] as usize);
        assert_eq!((hi - lo) % c, 0);
        let width = (hi - lo) / c;
        // Width is the longest row of the slice.
        let longest = (sl * c..((sl + 1) * c).min(s.n_rows))
            .map(|p| s.row_len[p] as usize)
            .max()
            .unwrap_or(0);
        assert_eq!(width, longest, "slice {sl} width");
        for l in 0..c {
            let p = sl * c + l;
            let len = if p < s.n_rows {
                s.row_len[p] as usize
            } else {
                0
            };
            if p < s.n_rows {
                let (cols, vals) = a.row(s.row_perm[p] as usize);
                assert_eq!(len, cols.len());
                for j in 0..len {
                    let k = lo + j * c + l;
                    assert_eq!(s.col_idx[k] as usize, cols[j]);
                    assert_eq!(s.values[k], vals[j]);
                }
            }
            for j in len..width {
                let k = lo + j * c + l;
                assert_eq!(s.values[k], T::zero(), "padding value");
                assert!((s.col_idx[k] as usize) < s.n_cols, "padding column");
            }
        }
    }
    // Sorting: within each sigma window, row lengths decrease and the sort is stable.
    if s.sigma > 1 {
        for (w, window) in s.row_perm.chunks(s.sigma).enumerate() {
            let mut orig: Vec<u32> = window.to_vec();
            orig.sort_unstable();
            let first = (w * s.sigma) as u32;
            assert_eq!(
                orig,
                (first..first + window.len() as u32).collect::<Vec<_>>()
            );
            for pair in window.windows(2) {
                let (l0, l1) = (
                    a.row(pair[0] as usize).0.len(),
                    a.row(pair[1] as usize).0.len(),
                );
                assert!(
                    l0 > l1 || (l0 == l1 && pair[0] < pair[1]),
                    "window {w} order"
                );
            }
        }
    } else {
        assert_eq!(s.row_perm, (0..s.n_rows as u32).collect::<Vec<_>>());
    }
}

/// Padded product over the full slice width, as a kernel reading x unconditionally would do.
fn sell_padded_product<T: Scalar>(s: &SellMatrix<T>, x: &[T]) -> Vec<T> {
    let mut y = vec![T::zero(); s.n_rows];
    for p in 0..s.n_rows {
        let (sl, l) = (p / s.c, p % s.c);
        let lo = s.slice_ptr[sl] as usize;
        let width = (s.slice_ptr[sl + 1] as usize - lo) / s.c;
        let mut acc = T::zero();
        for j in 0..width {
            let k = lo + j * s.c + l;
            acc += s.values[k] * x[s.col_idx[k] as usize];
        }
        y[s.row_perm[p] as usize] = acc;
    }
    y
}

fn check_sell<T: Scalar>(a: &CsrMatrix<T>, c: usize, sigma: usize, rng: &mut Lcg) {
    let s = SellMatrix::from_csr(a, c, sigma).unwrap();
    assert_eq!((s.c, s.sigma), (c, sigma));
    check_sell_layout(&s, a);
    let x = random_vec::<T>(rng, a.n_cols());
    let want = csr_product(a, &x);
    let mut y = vec![T::from_f64(7.0); a.n_rows()];
    s.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y, want, "SELL-{c}-{sigma} product");
    assert_close(&sell_padded_product(&s, &x), &want, "SELL padded product");
    assert_eq!(&s.to_csr().unwrap(), a, "SELL-{c}-{sigma} round trip");
}

const SHAPES: &[(usize, usize)] = &[
    (0, 0),
    (1, 1),
    (1, 5),
    (5, 1),
    (7, 7),
    (50, 50),
    (67, 41),
    (100, 130),
];

#[test]
fn sell_matches_csr_for_many_c_and_sigma() {
    let mut rng = Lcg(12345);
    for &(m, n) in SHAPES {
        for &p_empty in &[0.0, 0.3] {
            let a = random_csr::<f64>(&mut rng, m, n, 9, p_empty);
            for &c in &[1usize, 2, 4, 8, 32] {
                for sigma in [1, c, 4 * c, 2 * c * 16] {
                    check_sell(&a, c, sigma, &mut rng);
                }
            }
        }
    }
}

#[test]
fn sell_f32_and_c32_with_n_not_multiple_of_32() {
    let mut rng = Lcg(99);
    let a = random_csr::<f32>(&mut rng, 77, 60, 12, 0.2);
    for sigma in [1, 32, 128] {
        check_sell(&a, 32, sigma, &mut rng);
        let s = SellMatrix::from_csr(&a, 32, sigma).unwrap();
        assert_eq!(s.n_slices(), 3);
    }
}

#[test]
fn sell_with_empty_rows_and_empty_matrices() {
    let mut rng = Lcg(7);
    // All rows empty.
    let a = CsrMatrix::<f64>::new(5, 3, vec![0; 6], vec![], vec![]).unwrap();
    for (c, sigma) in [(1, 1), (2, 4), (4, 1), (32, 32)] {
        check_sell(&a, c, sigma, &mut rng);
        let s = SellMatrix::from_csr(&a, c, sigma).unwrap();
        assert_eq!(s.stored_entries(), 0);
    }
    // 0 x 0 and 0 x n.
    for (m, n) in [(0, 0), (0, 4)] {
        let a = CsrMatrix::<f64>::new(m, n, vec![0], vec![], vec![]).unwrap();
        let s = SellMatrix::from_csr(&a, 4, 8).unwrap();
        assert_eq!(s.n_slices(), 0);
        assert_eq!(s.slice_ptr, vec![0]);
        let mut y: Vec<f64> = vec![];
        s.mul_vec(&vec![1.0; n], &mut y).unwrap();
        assert_eq!(s.to_csr().unwrap(), a);
        let e = SellMatrix::ell_from_csr(&a).unwrap();
        assert_eq!(e.n_slices(), 0);
        assert_eq!(e.to_csr().unwrap(), a);
    }
    // 1 x 1.
    let one = CsrMatrix::new(1, 1, vec![0, 1], vec![0], vec![3.5]).unwrap();
    for c in [1, 2, 32] {
        let s = SellMatrix::from_csr(&one, c, c).unwrap();
        assert_eq!(s.n_slices(), 1);
        assert_eq!(s.stored_entries(), c);
        let mut y = vec![0.0];
        s.mul_vec(&[2.0], &mut y).unwrap();
        assert_eq!(y, vec![7.0]);
    }
    let e = SellMatrix::ell_from_csr(&one).unwrap();
    assert_eq!((e.c, e.stored_entries()), (1, 1));
}

#[test]
fn sell_keeps_explicit_zeros() {
    let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![0.0, 1.0, 0.0]).unwrap();
    let s = SellMatrix::from_csr(&a, 1, 1).unwrap();
    assert_eq!(s.nnz, 3);
    assert_eq!(s.to_csr().unwrap(), a);
}

#[test]
fn ell_matches_csr() {
    let mut rng = Lcg(2024);
    for &(m, n) in SHAPES {
        let a = random_csr::<f64>(&mut rng, m, n, 6, 0.25);
        let e = SellMatrix::ell_from_csr(&a).unwrap();
        check_sell_layout(&e, &a);
        assert_eq!(e.c, m.max(1));
        assert_eq!(e.n_slices(), usize::from(m > 0));
        assert_eq!(e.stored_entries(), m * a.max_row_len());
        // Entry j of row r at j * n_rows + r.
        for r in 0..m {
            let (cols, vals) = a.row(r);
            for j in 0..cols.len() {
                assert_eq!(e.col_idx[j * m + r] as usize, cols[j]);
                assert_eq!(e.values[j * m + r], vals[j]);
            }
        }
        let x = random_vec::<f64>(&mut rng, n);
        let want = csr_product(&a, &x);
        let mut y = vec![0.0; m];
        e.mul_vec(&x, &mut y).unwrap();
        assert_eq!(y, want);
        assert_close(&sell_padded_product(&e, &x), &want, "ELL padded product");
        assert_eq!(e.to_csr().unwrap(), a);
    }
}

#[test]
fn sell_error_cases() {
    let mut rng = Lcg(1);
    let a = random_csr::<f64>(&mut rng, 10, 10, 3, 0.0);
    for (c, sigma) in [(0, 1), (0, 0), (4, 0), (4, 6), (4, 2), (3, 10)] {
        let e = SellMatrix::from_csr(&a, c, sigma).unwrap_err();
        assert!(
            matches!(e, Error::InvalidParameter { .. }),
            "c = {c}, sigma = {sigma}: {e}"
        );
    }
    // Slice heights beyond MAX_SLICE_HEIGHT are refused before anything is allocated: a
    // 10-row matrix with C = 4e8 used to abort the process allocating 16 GB of padding (found
    // with `solve --format sell:400000000:1`).
    for c in [MAX_SLICE_HEIGHT + 1, 400_000_000, usize::MAX] {
        let e = SellMatrix::from_csr(&a, c, 1).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "c = {c}: {e}");
    }
    let tall = SellMatrix::from_csr(&a, MAX_SLICE_HEIGHT, 1).unwrap();
    assert_eq!(tall.slice_ptr.len(), 2);
    // sigma = 1 is valid for any c.
    assert!(SellMatrix::from_csr(&a, 3, 1).is_ok());
    let s = SellMatrix::from_csr(&a, 4, 8).unwrap();
    let mut y = vec![0.0; 10];
    assert!(matches!(
        s.mul_vec(&[1.0; 9], &mut y),
        Err(Error::DimensionMismatch { .. })
    ));
    assert!(matches!(
        s.mul_vec(&[1.0; 10], &mut [0.0; 11]),
        Err(Error::DimensionMismatch { .. })
    ));
    // Corrupted public fields are reported, not panics.
    let mut bad = s.clone();
    bad.col_idx[0] = 10;
    assert!(matches!(
        bad.mul_vec(&[1.0; 10], &mut y),
        Err(Error::InvalidMatrix(_))
    ));
    let mut bad = s.clone();
    bad.row_perm[0] = bad.row_perm[1];
    assert!(matches!(bad.to_csr(), Err(Error::InvalidMatrix(_))));
    let mut bad = s.clone();
    bad.slice_ptr.pop();
    assert!(matches!(bad.validate(), Err(Error::InvalidMatrix(_))));
    let mut bad = s;
    bad.row_len[0] += 100;
    assert!(matches!(bad.validate(), Err(Error::InvalidMatrix(_))));
}

/// The 6 x 6 example of the paper, section 2.1.
fn paper_example() -> CsrMatrix<f64> {
    let dense = [
        [14., 15., 1., 3., 0., 0.],
        [17., 11., 5., 7., 0., 0.],
        [0., 0., 5., 20., 27., 20.],
        [0., 0., 33., 15., 10., 15.],
        [36., 0., 32., 7., 12., 16.],
        [4., 31., 6., 13., 19., 11.],
    ];
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for row in &dense {
        for (c, &v) in row.iter().enumerate() {
            if v != 0.0 {
                cols.push(c);
                vals.push(v);
            }
        }
        row_ptr.push(cols.len());
    }
    CsrMatrix::new(6, 6, row_ptr, cols, vals).unwrap()
}

#[test]
fn bsr_paper_example() {
    let a = paper_example();
    let b = BsrMatrix::from_csr(&a, 2).unwrap();
    assert_eq!(b.block_size, 2);
    assert_eq!((b.n_block_rows, b.n_block_cols), (3, 3));
    assert_eq!((b.n_rows(), b.n_cols()), (6, 6));
    assert_eq!(b.row_ptr, vec![0, 2, 4, 7]);
    assert_eq!(b.col_idx, vec![0, 1, 1, 2, 0, 1, 2]);
    assert_eq!(b.nnz_blocks(), 7);
    let blkval: [[f64; 4]; 7] = [
        [14., 17., 15., 11.],
        [1., 5., 3., 7.],
        [5., 33., 20., 15.],
        [27., 10., 20., 15.],
        [36., 4., 0., 31.],
        [32., 6., 7., 13.],
        [12., 19., 16., 11.],
    ];
    for (k, e) in blkval.iter().enumerate() {
        assert_eq!(b.block(k), e, "block {k}");
    }
    assert_eq!(b.values, blkval.concat());
    assert!(b.block(7).is_empty());
    let (rp, ci) = b.indices_u32().unwrap();
    assert_eq!(rp, vec![0, 2, 4, 7]);
    assert_eq!(ci, vec![0, 1, 1, 2, 0, 1, 2]);
    // The explicit zero at (4, 1) is a stored block entry.
    let full = b.to_csr().unwrap();
    assert_eq!(full.nnz(), 28);
    assert_eq!(full.row(4).0, &[0, 1, 2, 3, 4, 5]);
    assert_eq!(full.row(4).1[1], 0.0);
    assert_eq!(b.to_csr_drop_zeros().unwrap(), a);
    let x: Vec<f64> = (1..=6).map(f64::from).collect();
    let mut y = vec![0.0; 6];
    b.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y, csr_product(&a, &x));
}

#[test]
fn bsr_matches_csr() {
    let mut rng = Lcg(31337);
    for s in [1usize, 2, 3] {
        for &(mb, nb) in &[(0, 0), (1, 1), (4, 4), (10, 7), (17, 23)] {
            let (m, n) = (mb * s, nb * s);
            for &p_empty in &[0.0, 0.4] {
                let a = random_csr::<f64>(&mut rng, m, n, 5, p_empty);
                let b = BsrMatrix::from_csr(&a, s).unwrap();
                b.validate().unwrap();
                assert_eq!((b.n_rows(), b.n_cols()), (m, n));
                assert_eq!(b.values.len(), b.nnz_blocks() * s * s);
                // Exactly the blocks touched by an entry of A are stored.
                let mut touched = std::collections::BTreeSet::new();
                for r in 0..m {
                    for &c in a.row(r).0 {
                        touched.insert((r / s, c / s));
                    }
                }
                let stored: std::collections::BTreeSet<_> = (0..mb)
                    .flat_map(|br| (b.row_ptr[br]..b.row_ptr[br + 1]).map(move |k| (br, k)))
                    .map(|(br, k)| (br, b.col_idx[k]))
                    .collect();
                assert_eq!(stored, touched);
                let x = random_vec::<f64>(&mut rng, n);
                let mut y = vec![9.0; m];
                b.mul_vec(&x, &mut y).unwrap();
                assert_close(&y, &csr_product(&a, &x), "BSR product");
                // Round trips: the full conversion has every block entry; random values are
                // never exactly zero, so dropping zeros gives A back.
                let full = b.to_csr().unwrap();
                assert_eq!(full.nnz(), b.nnz_blocks() * s * s);
                assert_eq!(BsrMatrix::from_csr(&full, s).unwrap(), b);
                assert_eq!(b.to_csr_drop_zeros().unwrap(), a);
                if s == 1 {
                    assert_eq!(full, a);
                }
            }
        }
    }
}

#[test]
fn bsr_f32() {
    let mut rng = Lcg(5);
    let a = random_csr::<f32>(&mut rng, 30, 30, 6, 0.1);
    let b = BsrMatrix::from_csr(&a, 3).unwrap();
    let x = random_vec::<f32>(&mut rng, 30);
    let mut y = vec![0.0f32; 30];
    b.mul_vec(&x, &mut y).unwrap();
    assert_close(&y, &csr_product(&a, &x), "BSR f32 product");
}

#[test]
fn bsr_error_cases() {
    let a = paper_example();
    for s in [4, 5] {
        let e = BsrMatrix::from_csr(&a, s).unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("n_rows = 6") && msg.contains("n_cols = 6"),
            "{msg}"
        );
    }
    assert!(matches!(
        BsrMatrix::from_csr(&a, 0),
        Err(Error::InvalidParameter { .. })
    ));
    // Only one dimension a multiple of s.
    let r = CsrMatrix::<f64>::new(4, 6, vec![0; 5], vec![], vec![]).unwrap();
    let msg = BsrMatrix::from_csr(&r, 4).unwrap_err().to_string();
    assert!(
        msg.contains("n_rows = 4") && msg.contains("n_cols = 6"),
        "{msg}"
    );
    assert!(BsrMatrix::from_csr(&r, 2).is_ok());

    let b = BsrMatrix::from_csr(&a, 2).unwrap();
    let mut y = vec![0.0; 6];
    assert!(matches!(
        b.mul_vec(&[1.0; 5], &mut y),
        Err(Error::DimensionMismatch { .. })
    ));
    assert!(matches!(
        b.mul_vec(&[1.0; 6], &mut [0.0; 4]),
        Err(Error::DimensionMismatch { .. })
    ));
    let mut bad = b.clone();
    bad.col_idx[0] = 3;
    assert!(matches!(
        bad.mul_vec(&[1.0; 6], &mut y),
        Err(Error::InvalidMatrix(_))
    ));
    let mut bad = b.clone();
    bad.col_idx.swap(0, 1);
    assert!(matches!(bad.to_csr(), Err(Error::InvalidMatrix(_))));
    let mut bad = b;
    bad.values.pop();
    assert!(matches!(bad.validate(), Err(Error::InvalidMatrix(_))));
}
