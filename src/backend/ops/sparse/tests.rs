//! The operations on every backend this build has against the host references: random
//! matrices whose rows of A B hold 0 to a few thousand products (so both symbolic kernels,
//! one work-item and one work-group per row, run), empty rows and columns.
use super::*;
use crate::backend::host::HostBackend;
use crate::backend::{Backend, MatrixFormat};
use crate::matrix::CsrMatrix;

/// A random `rows` x `cols` matrix with row i holding up to `max_len` entries (row 3 and
/// column 5 empty), deterministic in `seed`.
fn random(rows: usize, cols: usize, max_len: usize, seed: u64) -> CsrMatrix<f64> {
    let mut h = seed;
    let mut next = move || {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (h >> 33) as usize
    };
    let mut t = Vec::new();
    for i in (0..rows).filter(|&i| i != 3) {
        let len = next() % (max_len + 1);
        for _ in 0..len {
            let j = next() % cols;
            if j != 5 {
                t.push((i, j, (next() % 1000) as f64 / 250.0 - 2.0));
            }
        }
    }
    CsrMatrix::from_triplets(rows, cols, &t).unwrap()
}

fn product_on<B: Backend>(b: &B, x: &CsrMatrix<f64>, y: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let (dx, dy) = (
        b.upload_matrix(x, MatrixFormat::Csr).unwrap(),
        b.upload_matrix(y, MatrixFormat::Csr).unwrap(),
    );
    let c = spgemm(b, CsrRef::of(&dx).unwrap(), CsrRef::of(&dy).unwrap()).unwrap();
    let t = transpose(b, c.view()).unwrap();
    let back = transpose(b, t.view()).unwrap();
    // The values-only transpose on T's pattern: T's values again, then those of C with other
    // values.
    let mut t_vals = b.alloc::<f64>(t.col_idx.len()).unwrap();
    transpose_values(b, c.view(), (&t.row_ptr, &t.col_idx), &mut t_vals).unwrap();
    assert_eq!(
        b.download(&t_vals).unwrap(),
        b.download(&t.values).unwrap(),
        "{}",
        b.name()
    );
    let other: Vec<f64> = (b.download(&c.values).unwrap().iter().enumerate())
        .map(|(k, v)| -3.0 * v + k as f64)
        .collect();
    let other = b.upload(&other).unwrap();
    let c2 = CsrRef::new(c.n_rows, c.n_cols, &c.row_ptr, &c.col_idx, &other).unwrap();
    transpose_values(b, c2, (&t.row_ptr, &t.col_idx), &mut t_vals).unwrap();
    assert_eq!(
        b.download(&t_vals).unwrap(),
        b.download(&transpose(b, c2).unwrap().values).unwrap(),
        "{}",
        b.name()
    );
    let download = |m: &CsrBuffers<f64>| {
        CsrMatrix::new(
            m.n_rows,
            m.n_cols,
            b.download(&m.row_ptr)
                .unwrap()
                .iter()
                .map(|&p| p as usize)
                .collect(),
            b.download(&m.col_idx)
                .unwrap()
                .iter()
                .map(|&p| p as usize)
                .collect(),
            b.download(&m.values).unwrap(),
        )
        .unwrap()
    };
    assert!(
        download(&back) == download(&c),
        "{}: (C^T)^T != C",
        b.name()
    );
    download(&c)
}

/// The product in blocks of rows (budgets of one product, some rows, about half) equals the
/// one-block product `whole` bit for bit.
fn same_in_blocks<B: Backend>(
    b: &B,
    x: &CsrMatrix<f64>,
    y: &CsrMatrix<f64>,
    whole: &CsrMatrix<f64>,
) {
    let (dx, dy) = (
        b.upload_matrix(x, MatrixFormat::Csr).unwrap(),
        b.upload_matrix(y, MatrixFormat::Csr).unwrap(),
    );
    let (rx, ry) = (CsrRef::of(&dx).unwrap(), CsrRef::of(&dy).unwrap());
    let products: usize = (0..x.n_rows())
        .map(|i| x.row(i).0.iter().map(|&k| y.row(k).0.len()).sum::<usize>())
        .sum();
    for budget in [1, 500, products / 2 + 1] {
        let c = spgemm_in_blocks(b, rx, ry, budget).unwrap();
        let what = format!("{} in blocks of {budget} products", b.name());
        let row_ptr: Vec<usize> = b
            .download(&c.row_ptr)
            .unwrap()
            .iter()
            .map(|&p| p as usize)
            .collect();
        let col_idx: Vec<usize> = b
            .download(&c.col_idx)
            .unwrap()
            .iter()
            .map(|&p| p as usize)
            .collect();
        assert_eq!(row_ptr, whole.row_ptr(), "{what}");
        assert_eq!(col_idx, whole.col_idx(), "{what}");
        assert_eq!(b.download(&c.values).unwrap(), whole.values(), "{what}");
    }
}

fn agrees_with_the_host<B: Backend>(b: &B) {
    let host = HostBackend::new();
    for (seed, (m, k, n), (la, lb)) in [
        (1, (300, 200, 150), (60, 40)),
        (2, (50, 400, 3000), (90, 60)),
        (3, (1, 1, 1), (1, 1)),
        (4, (0, 7, 3), (2, 2)),
    ] {
        let x = random(m, k, la, seed);
        let y = random(k, n, lb, seed + 10);
        let want = product_on(&host, &x, &y);
        let got = product_on(b, &x, &y);
        same_in_blocks(b, &x, &y, &got);
        assert_eq!(got.row_ptr(), want.row_ptr(), "{} seed {seed}", b.name());
        assert_eq!(got.col_idx(), want.col_idx(), "{} seed {seed}", b.name());
        for (g, w) in got.values().iter().zip(want.values()) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{} seed {seed}",
                b.name()
            );
        }
        // Against a dense product.
        let mut dense = vec![0.0; m * n];
        for i in 0..m {
            let (ci, vi) = x.row(i);
            for (&kk, &a) in ci.iter().zip(vi) {
                let (cj, vj) = y.row(kk);
                for (&j, &bv) in cj.iter().zip(vj) {
                    dense[i * n + j] += a * bv;
                }
            }
        }
        for i in 0..m {
            let (ci, vi) = want.row(i);
            for (&j, &v) in ci.iter().zip(vi) {
                assert!((v - dense[i * n + j]).abs() <= 1e-12 * v.abs().max(1.0));
            }
        }
    }
    // Rows of more products than the team's local table takes: 30000 products on 10 columns
    // (the table in the scratch), and 3000 products on 3000 columns (more than the
    // team's keys hold: back to one work-item).
    let wide = |cols: usize, per_row: usize, stride: usize| {
        let x = CsrMatrix::from_triplets(
            1,
            3000,
            &(0..3000)
                .map(|k| (0, k, 1.0 + (k % 7) as f64))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let t: Vec<_> = (0..3000)
            .flat_map(|k| {
                (0..per_row).map(move |c| (k, (k * stride + c * 977) % cols, 0.5 + c as f64))
            })
            .collect();
        (x, CsrMatrix::from_triplets(3000, cols, &t).unwrap())
    };
    for (x, y) in [wide(10, 10, 0), wide(5000, 1, 7)] {
        let want = product_on(&host, &x, &y);
        let got = product_on(b, &x, &y);
        assert!(want.nnz() > 0);
        assert_eq!(got.col_idx(), want.col_idx(), "{}", b.name());
        assert_eq!(got.values(), want.values(), "{}", b.name());
        same_in_blocks(b, &x, &y, &got);
    }
    // A product of more than 2^32 - 1 entries would overflow the scan: a typed error.
    let mut counts = b.alloc::<u32>(3).unwrap();
    b.write(&mut counts, &[u32::MAX, 1, 0]).unwrap();
    let mut out = b.alloc::<u32>(4).unwrap();
    assert!(matches!(
        scan_u32::<f64, B>(b, "test", &counts, &mut out),
        Err(Error::IndexOverflow { .. })
    ));
}

/// `spmm` and `spmm_dots` against the host's on rows of about 5 and about 60 entries, for 1, 3
/// and 8 columns: the products bit for bit (every row summed in its order from zero), the dots
/// to rounding.
fn block_products_agree_with_the_host<B: Backend>(b: &B) {
    let host = HostBackend::new();
    for (seed, max_len) in [(21, 10), (22, 120)] {
        let a = random(700, 700, max_len, seed);
        for k in [1, 3, 8] {
            let cols: Vec<Vec<f64>> = (0..k)
                .map(|c| {
                    (0..700)
                        .map(|i| ((i * (c + 3)) as f64 * 0.01).sin())
                        .collect()
                })
                .collect();
            let (got, got_dots) = products_on(b, &a, &cols);
            let (want, want_dots) = products_on(&host, &a, &cols);
            for c in 0..k {
                let what = format!("{} rows of up to {max_len} k {k} column {c}", b.name());
                assert_eq!(got[c], want[c], "{what}");
                let (g, w) = (got_dots[c], want_dots[c]);
                assert!(
                    (g - w).abs() <= 1e-10 * w.abs().max(1.0),
                    "{what}: dot {g} vs {w}"
                );
            }
        }
    }
}

/// y_c = A x_c by `spmm`, and <x_c, y_c> by `spmm_dots` (its products equal to `spmm`'s).
fn products_on<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    cols: &[Vec<f64>],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let k = cols.len();
    let m = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let csr = CsrRef::of(&m).unwrap();
    let x: Vec<Buffer<f64>> = cols.iter().map(|c| b.upload(c).unwrap()).collect();
    let mut y: Vec<Buffer<f64>> = (0..k)
        .map(|_| b.alloc::<f64>(a.n_rows()).unwrap())
        .collect();
    let xr: Vec<&Buffer<f64>> = x.iter().collect();
    let mut yr: Vec<&mut Buffer<f64>> = y.iter_mut().collect();
    spmm(b, csr, &xr, &mut yr).unwrap();
    let products: Vec<Vec<f64>> = y.iter().map(|v| b.download(v).unwrap()).collect();
    let mut partials = b.partials::<f64>(a.n_rows(), k).unwrap();
    let mut yr: Vec<&mut Buffer<f64>> = y.iter_mut().collect();
    spmm_dots(b, csr, &xr, &mut yr, &mut partials, crate::backend::Slot(0)).unwrap();
    let again: Vec<Vec<f64>> = y.iter().map(|v| b.download(v).unwrap()).collect();
    assert_eq!(
        again,
        products,
        "{}: spmm_dots's products are spmm's",
        b.name()
    );
    let sums = b.finish(&partials).unwrap();
    (
        products,
        (0..k).map(|c| sums.get(crate::backend::Slot(c))).collect(),
    )
}

#[test]
fn host_block_products() {
    block_products_agree_with_the_host(&HostBackend::new());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_block_products_agree_with_the_host() {
    block_products_agree_with_the_host(&crate::backend::opencl::OpenClBackend::from_env().unwrap());
}

#[test]
fn host_sparse_operations_match_a_dense_product() {
    agrees_with_the_host(&HostBackend::new());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_sparse_operations_agree_with_the_host() {
    agrees_with_the_host(&crate::backend::opencl::OpenClBackend::from_env().unwrap());
}
