//! CSR, BSR, SELL and ELL built from arbitrary triplets, uploaded to the host backend: every
//! format's product must equal the CSR product (the same arithmetic up to rounding), and the
//! long-row plan must cover each long row exactly once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::long_rows::LongRowPlan;
use pipekrylov::backend::{MatrixFormat, SpmvOps, VectorOps};
use pipekrylov::matrix::CsrMatrix;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let n_rows = 1 + data[0] as usize % 64;
    let n_cols = 1 + data[1] as usize % 64;
    let block = 1 + data[2] as usize % 8;
    let c = 1 + data[3] as usize % 40;
    let triplets: Vec<(usize, usize, f64)> = data[4..]
        .chunks_exact(3)
        .map(|t| {
            (
                t[0] as usize % n_rows,
                t[1] as usize % n_cols,
                f64::from(t[2] as i8) / 8.0,
            )
        })
        .collect();
    let Ok(a) = CsrMatrix::from_triplets(n_rows, n_cols, &triplets) else {
        return;
    };
    // Long-row plan: every long row once, its chunks tile it.
    if let Ok((rp, _)) = a.indices_u32() {
        if let Some(plan) = LongRowPlan::plan_with(&rp, 2) {
            for (i, &r) in plan.rows.iter().enumerate() {
                let (c0, c1) = (plan.chunk_ptr[i] as usize, plan.chunk_ptr[i + 1] as usize);
                assert!(c1 > c0);
                assert_eq!(plan.chunk_begin[c0], rp[r as usize]);
                assert_eq!(plan.chunk_end[c1 - 1], rp[r as usize + 1]);
                for k in c0 + 1..c1 {
                    assert_eq!(plan.chunk_begin[k], plan.chunk_end[k - 1]);
                }
            }
        }
    }
    let host = HostBackend::new();
    let x0: Vec<f64> = (0..n_cols).map(|i| 1.0 + i as f64 / 16.0).collect();
    let mut want = vec![0.0; n_rows];
    a.mul_vec(&x0, &mut want).unwrap();
    let x = host.upload(&x0).unwrap();
    let sigma = c * (1 + data[3] as usize / 40);
    for format in [
        MatrixFormat::Csr,
        MatrixFormat::Ell,
        MatrixFormat::Sell { c, sigma },
        MatrixFormat::Bsr { block_size: block },
    ] {
        // A format may refuse a shape (BSR needs square blocks that tile the matrix): a typed
        // error is fine, a wrong product is not.
        let Ok(m) = host.upload_matrix(&a, format) else {
            continue;
        };
        let mut y = host.alloc::<f64>(n_rows).unwrap();
        host.spmv(&m, &x, &mut y).unwrap();
        let got = host.download(&y).unwrap();
        for (r, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-9 * (1.0 + w.abs()),
                "{format:?} row {r}: {g} vs {w}"
            );
        }
    }
});
