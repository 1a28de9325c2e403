//! Where the host AMG's values refresh goes (issue 55), on 3D Poisson of about `n` unknowns
//! (default 1M) with the default options: `Hierarchy::build` and a steady `Hierarchy::refresh`
//! (the faster of three), then the finest level's numeric phase redone step by step with the
//! public parts (A's copy, its checks, the filtered matrix, the prolongator's weight by power
//! iterations, the smoothed prolongator, R = P^T, A P, R (A P), the smoother, the pattern
//! fingerprints that the device write compares, after fresh copies: the copies' time is on the
//! next line). Medians of 5 runs per step, in ms, with the
//! rayon pool's thread count.
//!
//! `cargo run --release --example amg_refresh_parts -- [n]`

use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::spgemm::spgemm;
use pipekrylov::precond::amg::{
    aggregate, filtered_matrix, positive_diagonal, smoothed_prolongator, spectral_radius,
    strength_graph, AmgOptions, Hierarchy, LevelSmoother,
};
use std::time::Instant;

fn median_ms(mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..5)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[2]
}

fn main() -> pipekrylov::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let a = Generator::Poisson3d.generate::<f64>(n)?.matrix;
    let o = AmgOptions::default();
    let threads = rayon::current_num_threads();
    let h = Hierarchy::build(&a, &o)?;
    let build = median_ms(|| drop(Hierarchy::build(&a, &o).unwrap()));
    let refresh = median_ms(|| drop(h.refresh(&a).unwrap()));
    println!(
        "n {} nnz {} threads {threads} levels {}: build {build:.1} refresh {refresh:.1} ms \
         (ratio {:.3})",
        a.n_rows(),
        a.nnz(),
        h.num_levels(),
        refresh / build
    );
    let graph = strength_graph(&a, o.strength, 1)?;
    let aggregates = aggregate(&graph)?;
    let filtered = filtered_matrix(&a, &graph, 1)?;
    let d = positive_diagonal(&filtered, 0)?;
    let weight = 4.0 / 3.0 / spectral_radius(&filtered, &d);
    let p = smoothed_prolongator(&filtered, &aggregates, 1, weight)?;
    let r = p.transpose();
    let ap = spgemm(&a, &p)?;
    let diag_a = positive_diagonal(&a, 0)?;
    let steps: Vec<(&str, f64)> = vec![
        ("copy A (serial clone)", median_ms(|| drop(a.clone()))),
        (
            "A finite",
            median_ms(|| {
                std::hint::black_box(a.first_non_finite());
            }),
        ),
        ("A diagonal", median_ms(|| drop(positive_diagonal(&a, 0)))),
        (
            "filtered",
            median_ms(|| drop(filtered_matrix(&a, &graph, 1).unwrap())),
        ),
        (
            "weight (power)",
            median_ms(|| {
                let d = positive_diagonal(&filtered, 0).unwrap();
                std::hint::black_box(spectral_radius(&filtered, &d));
            }),
        ),
        (
            "smoothed P",
            median_ms(|| drop(smoothed_prolongator(&filtered, &aggregates, 1, weight).unwrap())),
        ),
        ("R = P^T", median_ms(|| drop(p.transpose()))),
        ("A P (spgemm)", median_ms(|| drop(spgemm(&a, &p).unwrap()))),
        (
            "R (A P) (spgemm)",
            median_ms(|| drop(spgemm(&r, &ap).unwrap())),
        ),
        (
            "smoother",
            median_ms(|| {
                drop(LevelSmoother::new(&a, &diag_a, o.smoother, o.jacobi_weight).unwrap())
            }),
        ),
        (
            "fingerprints A P R",
            median_ms(|| {
                // Fresh copies: a matrix caches its fingerprint.
                let m = [a.clone(), p.clone(), r.clone()];
                let t0 = Instant::now();
                for x in &m {
                    std::hint::black_box(x.pattern_fingerprint());
                }
                std::hint::black_box(t0);
            }),
        ),
        (
            "(copies for the line above)",
            median_ms(|| drop([a.clone(), p.clone(), r.clone()])),
        ),
    ];
    for (name, ms) in steps {
        println!("  level 0 {name:<28} {ms:8.1} ms");
    }
    println!(
        "  nnz: A {} filtered {} P {} (cols {}) A P {}",
        a.nnz(),
        filtered.nnz(),
        p.nnz(),
        p.n_cols(),
        ap.nnz()
    );
    Ok(())
}
