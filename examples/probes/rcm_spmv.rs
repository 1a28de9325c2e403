//! What a reverse Cuthill-McKee ordering (`pipekrylov::matrix::reorder::rcm`) buys a product
//! whose matrix was numbered without regard to its graph: the matrix in its generator's
//! numbering, the same matrix with its unknowns shuffled (a deterministic random numbering, as an
//! unstructured mesh export may give), and the shuffled matrix reordered by RCM, each with its
//! bandwidth and the SpMV time on every available backend (the host always; CUDA and OpenCL
//! where built and present), and the time RCM itself takes.
//! `cargo run --release [--features "cuda opencl"] --example rcm_spmv [problem:n ...]`

use pipekrylov::matrix::generate::parse_spec;
use pipekrylov::matrix::reorder::{bandwidth, rcm, Permutation};
use pipekrylov::prelude::*;
use std::time::Instant;

mod common;

/// A deterministic shuffle of 0..n (Fisher-Yates on an LCG).
fn shuffled(n: usize) -> Permutation {
    let mut order: Vec<usize> = (0..n).collect();
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..n).rev() {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        order.swap(i, (s >> 33) as usize % (i + 1));
    }
    Permutation::from_old_of_new(order).unwrap()
}

fn main() {
    let specs: Vec<String> = std::env::args().skip(1).collect();
    let specs = if specs.is_empty() {
        vec!["poisson2d:1048576".to_string(), "fem2d:1048576".into()]
    } else {
        specs
    };
    println!("matrix | numbering | bandwidth | backend | kernel | us per SpMV (median of 9 samples of 10)");
    for spec in specs {
        let (generator, n) = parse_spec(&spec).unwrap();
        let natural = generator.generate::<f64>(n).unwrap().matrix;
        let n = natural.n_rows();
        let scrambled = shuffled(n).apply_symmetric(&natural).unwrap();
        let t = Instant::now();
        let p = rcm(&scrambled).unwrap();
        let rcm_s = t.elapsed().as_secs_f64();
        let reordered = p.apply_symmetric(&scrambled).unwrap();
        println!(
            "{spec}: n = {n}, nnz = {}, rcm {:.3} s (this host)",
            natural.nnz(),
            rcm_s
        );
        for choice in [
            BackendChoice::Host,
            BackendChoice::Cuda,
            BackendChoice::OpenCl,
        ] {
            let Ok((be, _)) =
                choice.create_with(&pipekrylov::backend::BackendConfig::from_env().unwrap())
            else {
                continue;
            };
            let x = be.upload(&vec![1.0; n]).unwrap();
            let mut y = be.alloc::<f64>(n).unwrap();
            for (name, a) in [
                ("generator", &natural),
                ("shuffled", &scrambled),
                ("shuffled + RCM", &reordered),
            ] {
                let m = be.upload_matrix(a, MatrixFormat::Csr).unwrap();
                let mut samples: Vec<f64> = (0..9)
                    .map(|_| common::time(2, 10, &be, || be.spmv(&m, &x, &mut y).unwrap()))
                    .collect();
                samples.sort_by(|s, t| s.total_cmp(t));
                println!(
                    "{spec} | {name} | {} | {} | {} | {:.1}",
                    bandwidth(a),
                    be.name(),
                    m.spmv_kernel(),
                    samples[4]
                );
            }
        }
    }
}
