//! Criterion: per-iteration time of the pipelined and classical solvers on the host backend for
//! the small end of the 2D Poisson ladder (regression tracking; the `bench` command of the CLI
//! does the full sweeps on every backend).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{MatrixFormat, SpmvOps, VectorOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::solver::{BiCgStab, Cg, Gmres, Params, Variant};

const ITERATIONS: usize = 30;

fn ladder(c: &mut Criterion) {
    let host = HostBackend::new();
    let mut group = c.benchmark_group("poisson2d_30_iterations");
    group.sample_size(10);
    for k in [15usize, 31, 63, 127, 255] {
        let p = Generator::Poisson2d.generate_with_param::<f64>(k).unwrap();
        let a = host.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let n = a.n_rows();
        let b = host.upload(&vec![1.0; n]).unwrap();
        let mut x = host.alloc::<f64>(n).unwrap();
        for variant in [Variant::Pipelined, Variant::Classical] {
            let params = Params {
                rtol: 0.0,
                max_iter: ITERATIONS,
                variant,
                record_history: false,
                dtol: f64::MAX,
                ..Params::default()
            };
            let mut cg = Cg::new(&host, &a, None, params).unwrap();
            group.bench_with_input(
                BenchmarkId::new(format!("cg_{variant}"), n),
                &n,
                |bch, _| {
                    bch.iter(|| {
                        host.fill(&mut x, 0.0).unwrap();
                        cg.solve(&b, &mut x).unwrap()
                    })
                },
            );
            let mut bi = BiCgStab::new(&host, &a, None, params).unwrap();
            group.bench_with_input(
                BenchmarkId::new(format!("bicgstab_{variant}"), n),
                &n,
                |bch, _| {
                    bch.iter(|| {
                        host.fill(&mut x, 0.0).unwrap();
                        bi.solve(&b, &mut x).unwrap()
                    })
                },
            );
            let mut gm = Gmres::new(&host, &a, None, params).unwrap();
            group.bench_with_input(
                BenchmarkId::new(format!("gmres30_{variant}"), n),
                &n,
                |bch, _| {
                    bch.iter(|| {
                        host.fill(&mut x, 0.0).unwrap();
                        gm.solve(&b, &mut x).unwrap()
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, ladder);
criterion_main!(benches);
