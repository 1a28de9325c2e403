//! Integration tests of the model-problem generators (`pipekrylov::matrix::generate`).

use pipekrylov::matrix::generate::{parse_spec, Generator, Problem, MAX_UNKNOWNS};
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::Error;

fn gen(g: Generator, param: usize) -> Problem<f64> {
    g.generate_with_param::<f64>(param)
        .unwrap_or_else(|e| panic!("{g} {param}: {e}"))
}

/// Positive diagonal, every row weakly diagonally dominant, at least one strictly.
fn diagonally_dominant(a: &CsrMatrix<f64>) -> bool {
    let mut strict = false;
    for r in 0..a.n_rows() {
        let (cols, vals) = a.row(r);
        let (mut d, mut off) = (0.0, 0.0);
        for (&c, &v) in cols.iter().zip(vals) {
            if c == r {
                d = v;
            } else {
                off += f64::abs(v);
            }
        }
        if d <= 0.0 || d < off * (1.0 - 1e-12) {
            return false;
        }
        strict |= d > off * (1.0 + 1e-12);
    }
    strict
}

fn quad(a: &CsrMatrix<f64>, x: &[f64]) -> f64 {
    let mut y = vec![0.0; a.n_rows()];
    a.mul_vec(x, &mut y).unwrap();
    x.iter().zip(&y).map(|(a, b)| a * b).sum()
}

fn rand_vec(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

#[test]
fn poisson_anchors() {
    let p = gen(Generator::Poisson2d, 15);
    assert_eq!(
        (p.matrix.n_rows(), p.matrix.n_cols(), p.matrix.nnz()),
        (225, 225, 1065)
    );
    let p = gen(Generator::Poisson3d, 8);
    assert_eq!((p.matrix.n_rows(), p.matrix.nnz()), (512, 3200));
    let p = gen(Generator::Poisson3d, 16);
    assert_eq!((p.matrix.n_rows(), p.matrix.nnz()), (4096, 27136));
    // Through the size selection.
    let p = Generator::Poisson2d.generate::<f64>(225).unwrap();
    assert_eq!((p.param, p.matrix.nnz()), (15, 1065));
    let p = Generator::Poisson3d.generate::<f32>(500).unwrap();
    assert_eq!((p.param, p.matrix.nnz()), (8, 3200));
}

#[test]
fn poisson2d_largest_anchor() {
    // k = 2047: 4190209 unknowns, 20942857 nonzeros.
    let p = Generator::Poisson2d.generate::<f32>(4_190_209).unwrap();
    assert_eq!(p.param, 2047);
    assert_eq!((p.matrix.n_rows(), p.matrix.nnz()), (4_190_209, 20_942_857));
}

#[test]
fn fem2d_paper_sizes() {
    let paper = [225, 961, 3969, 16129, 65025, 261121];
    for (level, n) in (4..=9).zip(paper) {
        assert_eq!(Generator::Fem2d.unknowns(level), n);
        assert_eq!(Generator::Fem2d.size_for(n), level);
    }
    for level in 4..=7 {
        assert_eq!(
            gen(Generator::Fem2d, level).matrix.n_rows(),
            paper[level - 4]
        );
    }
    let p = Generator::Fem2d.generate::<f64>(16129).unwrap();
    assert_eq!(p.matrix.n_rows(), 16129);
    assert_eq!(p.name, "fem2d");
    assert_eq!(p.description, "2D FEM Poisson, level 7, 16129 unknowns");
    // For this mesh the P1 matrix is the 5-point stencil.
    assert_eq!(p.matrix, gen(Generator::Poisson2d, 127).matrix);
}

#[test]
fn symmetry() {
    for &g in Generator::all() {
        let param = match g {
            Generator::Fem2d => 4,
            Generator::Elasticity3d => 3,
            Generator::Poisson3d | Generator::ConvDiff3d => 6,
            _ => 12,
        };
        let a = gen(g, param).matrix;
        assert!(a.is_square());
        assert_eq!(a == a.transpose(), g.is_symmetric(), "{g}");
    }
    assert!(!Generator::ConvDiff3d.is_symmetric());
}

#[test]
fn symmetric_ones_are_positive_definite() {
    for &g in Generator::all().iter().filter(|g| g.is_symmetric()) {
        let a = g.generate::<f64>(300).unwrap().matrix;
        for seed in 0..4 {
            assert!(quad(&a, &rand_vec(a.n_rows(), seed)) > 0.0, "{g}");
        }
    }
}

#[test]
fn diagonal_dominance() {
    for g in [
        Generator::Poisson2d,
        Generator::Poisson3d,
        Generator::Fem2d,
        Generator::ConvDiff3d,
        Generator::Aniso2d,
    ] {
        let a = g.generate::<f64>(1000).unwrap().matrix;
        assert!(diagonally_dominant(&a), "{g}");
    }
    // Elasticity is SPD but not diagonally dominant.
    assert!(!diagonally_dominant(
        &gen(Generator::Elasticity3d, 4).matrix
    ));
}

#[test]
fn convdiff_is_an_m_matrix() {
    let a = gen(Generator::ConvDiff3d, 10).matrix;
    for r in 0..a.n_rows() {
        let (c, v) = a.row(r);
        for (&c, &v) in c.iter().zip(v) {
            assert!(if c == r { v > 0.0 } else { v <= 0.0 });
        }
    }
}

#[test]
fn elasticity_sizes_and_rows() {
    for (m, n) in [(1, 12), (5, 540), (11, 4752)] {
        assert_eq!(Generator::Elasticity3d.unknowns(m), n);
    }
    for (paper, m) in [(693, 5), (5265, 11), (40725, 23), (319725, 47)] {
        assert_eq!(Generator::Elasticity3d.size_for(paper), m, "{paper}");
    }
    let p = Generator::Elasticity3d.generate::<f64>(5265).unwrap();
    let a = &p.matrix;
    assert_eq!(a.n_rows(), 4752);
    let avg = a.nnz() as f64 / a.n_rows() as f64;
    assert!((35.0..=45.0).contains(&avg), "average row length {avg}");
    assert_eq!(a.max_row_len(), 45);
    assert!(a.diagonal().iter().all(|&d| d > 0.0));
}

#[test]
fn all_finite_and_square() {
    for &g in Generator::all() {
        for n in [1, 50, 2000] {
            let p = g.generate::<f64>(n).unwrap();
            assert_eq!(p.name, g.name());
            assert_eq!(p.matrix.n_rows(), g.unknowns(p.param));
            assert_eq!(p.matrix.n_cols(), p.matrix.n_rows());
            assert_eq!(p.matrix.first_non_finite(), None, "{g} {n}");
            assert!(p.description.contains(&p.matrix.n_rows().to_string()));
            let q = g.generate::<f32>(n).unwrap();
            assert_eq!(q.matrix.first_non_finite(), None);
            assert_eq!(q.matrix.nnz(), p.matrix.nnz());
        }
    }
}

#[test]
fn size_selection() {
    for &g in Generator::all() {
        for p in 1..5 {
            assert_eq!(g.size_for(g.unknowns(p)), p, "{g}");
        }
        assert_eq!(g.size_for(0), 1);
        assert_eq!(g.size_for(usize::MAX), g.max_param());
        assert!(g.unknowns(g.max_param()) <= MAX_UNKNOWNS);
    }
    // 15^2 = 225 and 16^2 = 256: 240 is nearer 225, 241 nearer 256.
    assert_eq!(Generator::Poisson2d.size_for(240), 15);
    assert_eq!(Generator::Poisson2d.size_for(241), 16);
    assert!(matches!(
        Generator::Poisson2d.generate::<f64>(0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(Generator::Poisson2d
        .generate::<f64>(MAX_UNKNOWNS + 1)
        .is_err());
    assert!(Generator::Fem2d.generate_with_param::<f64>(0).is_err());
    assert!(Generator::Fem2d
        .generate_with_param::<f64>(Generator::Fem2d.max_param() + 1)
        .is_err());
}

#[test]
fn spec_parsing() {
    assert_eq!(
        parse_spec("fem2d:16129").unwrap(),
        (Generator::Fem2d, 16129)
    );
    assert_eq!(
        parse_spec("convdiff3d:4096").unwrap(),
        (Generator::ConvDiff3d, 4096)
    );
    for &g in Generator::all() {
        assert_eq!(parse_spec(&format!("{}:10", g.name())).unwrap(), (g, 10));
        assert_eq!(g.name().parse::<Generator>().unwrap(), g);
    }
    for bad in [
        "",
        "fem2d",
        "fem2d:",
        "fem2d:abc",
        "fem2d:0",
        "fem2d:-1",
        "fem3d:100",
        ":100",
    ] {
        assert!(parse_spec(bad).is_err(), "{bad:?}");
    }
    let e = "laplace".parse::<Generator>().unwrap_err();
    let msg = e.to_string();
    for &g in Generator::all() {
        assert!(msg.contains(g.name()), "{msg}");
    }
}

/// Size table for documentation: `cargo test --release --test generate -- --ignored --nocapture`.
#[test]
#[ignore]
fn size_table_and_timing() {
    for &g in Generator::all() {
        for param in 1..=4 {
            let p = gen(g, param);
            println!(
                "{g:>12} {param:>3} {:>9} {:>10}",
                p.matrix.n_rows(),
                p.matrix.nnz()
            );
        }
    }
    for (g, param) in [
        (Generator::Poisson2d, 2047),
        (Generator::Poisson3d, 160),
        (Generator::Fem2d, 9),
        (Generator::Fem2d, 11),
        (Generator::Elasticity3d, 23),
        (Generator::Elasticity3d, 47),
        (Generator::ConvDiff3d, 160),
        (Generator::Aniso2d, 2047),
    ] {
        let t = std::time::Instant::now();
        let p = gen(g, param);
        let a = &p.matrix;
        println!(
            "{g:>12} {param:>5} n = {:>9} nnz = {:>10} ({:.1}/row, max {}) in {:.2} s",
            a.n_rows(),
            a.nnz(),
            a.nnz() as f64 / a.n_rows() as f64,
            a.max_row_len(),
            t.elapsed().as_secs_f64()
        );
    }
}
