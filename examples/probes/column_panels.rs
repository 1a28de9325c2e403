//! Does cutting a matrix into column panels make its SpMV faster when x does not stay in the
//! L2 cache? Each panel holds the entries of one column range (an n x n CSR matrix with the
//! other columns dropped); its product gathers from 1/P of x. The probe times the P panel
//! products back to back (each into its own y, so the sum of the panels is not included) against
//! the whole matrix, on every GPU backend.
//! `cargo run --release --features "cuda opencl" --example column_panels [problem:n] [P,P,..]`

use pipekrylov::matrix::generate::parse_spec;
use pipekrylov::prelude::*;

mod common;

/// The entries of `a` with columns in `lo..hi`, as an n x n matrix.
fn panel(a: &CsrMatrix<f64>, lo: usize, hi: usize) -> CsrMatrix<f64> {
    let mut row_ptr = Vec::with_capacity(a.n_rows() + 1);
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    row_ptr.push(0);
    for r in 0..a.n_rows() {
        for k in a.row_ptr()[r]..a.row_ptr()[r + 1] {
            let c = a.col_idx()[k];
            if (lo..hi).contains(&c) {
                cols.push(c);
                vals.push(a.values()[k]);
            }
        }
        row_ptr.push(cols.len());
    }
    CsrMatrix::new(a.n_rows(), a.n_cols(), row_ptr, cols, vals).unwrap()
}

fn main() {
    let spec = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "powerlaw:4194304".into());
    let counts: Vec<usize> = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "1,2,3,4,6".into())
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    let (generator, n) = parse_spec(&spec).unwrap();
    let a = generator.generate::<f64>(n).unwrap().matrix;
    let n = a.n_rows();
    println!("{spec}: n = {n}, nnz = {}", a.nnz());
    println!("backend | panels | kernel | us per product (median of 15 samples of 20)");
    for choice in [BackendChoice::Cuda, BackendChoice::OpenCl] {
        let Ok((be, _)) =
            choice.create_with(&pipekrylov::backend::BackendConfig::from_env().unwrap())
        else {
            continue;
        };
        let x = be.upload(&vec![1.0; n]).unwrap();
        for &p in &counts {
            let panels: Vec<_> = (0..p)
                .map(|k| {
                    let m = panel(&a, k * n / p, (k + 1) * n / p);
                    be.upload_matrix(&m, MatrixFormat::Csr).unwrap()
                })
                .collect();
            let mut ys: Vec<_> = (0..p).map(|_| be.alloc::<f64>(n).unwrap()).collect();
            let mut samples: Vec<f64> = (0..15)
                .map(|_| {
                    common::time(3, 20, &be, || {
                        for (m, y) in panels.iter().zip(ys.iter_mut()) {
                            be.spmv(m, &x, y).unwrap();
                        }
                    })
                })
                .collect();
            samples.sort_by(|s, t| s.total_cmp(t));
            println!(
                "{} | {p} | {} | {:.1}",
                be.name(),
                panels[0].spmv_kernel(),
                samples[7]
            );
        }
    }
}
