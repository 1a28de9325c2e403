//! A GMRES restart cycle that makes the true residual larger than it started from is reported
//! (a loss-of-orthogonality warning in the report), and a solve that ends on a worse iterate than
//! the best one seen at a cycle start returns the best one.
//!
//! A cycle cannot increase the residual in exact arithmetic; it does when the basis loses
//! orthogonality or, as provoked here, when the right preconditioner is not a fixed linear
//! operator (it changes between applications, so x = x_0 + M^-1 V eta uses another M than the
//! basis was built with).

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, Buffer, MatrixFormat, SpmvOps, VectorOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{Preconditioner, SetupTimes};
use pipekrylov::solver::{Gmres, Params, Variant};
use pipekrylov::Result;
use std::cell::Cell;

/// z = c_k r with a scale that changes at every application: not a valid preconditioner.
struct ChangingScale {
    n: usize,
    calls: Cell<usize>,
}

impl<B: Backend> Preconditioner<B, f64> for ChangingScale {
    fn name(&self) -> &'static str {
        "changing-scale"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<f64>, z: &mut Buffer<f64>) -> Result<()> {
        let k = self.calls.get();
        self.calls.set(k + 1);
        let c = [1.0, -3.0, 0.02, 7.0, -0.5][k % 5];
        backend.copy(r, z)?;
        backend.scale(c, z)
    }
    fn launches_per_apply(&self) -> usize {
        2
    }
    fn setup_times(&self) -> SetupTimes {
        SetupTimes::default()
    }
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// ||b - A x|| / ||b|| for b = ones.
fn true_residual(a: &pipekrylov::matrix::CsrMatrix<f64>, x: &[f64]) -> f64 {
    let mut ax = vec![0.0; x.len()];
    a.mul_vec(x, &mut ax).unwrap();
    ax.iter().map(|v| (1.0 - v) * (1.0 - v)).sum::<f64>().sqrt() / (x.len() as f64).sqrt()
}

#[test]
fn a_cycle_that_increases_the_residual_is_reported_and_undone() {
    let host = HostBackend::new();
    let a = Generator::ConvDiff3d
        .generate_with_param::<f64>(10)
        .unwrap()
        .matrix;
    let n = a.n_rows();
    let m = host.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let b = host.upload(&vec![1.0; n]).unwrap();
    for variant in [Variant::Pipelined, Variant::Classical] {
        let pc = ChangingScale {
            n,
            calls: Cell::new(0),
        };
        let params = Params {
            gmres: pipekrylov::solver::GmresParams {
                restart: 10,
                ..Default::default()
            },
            max_iter: 200,
            variant,
            ..Params::default()
        };
        let mut x = host.alloc::<f64>(n).unwrap();
        let r = Gmres::new(&host, &m, Some(&pc), params)
            .unwrap()
            .solve(&b, &mut x)
            .unwrap();
        assert!(!r.stop_reason.converged(), "{variant}");
        let w = r.accuracy_warning.clone().unwrap_or_default();
        assert!(
            w.contains("loss of orthogonality"),
            "{variant}: warning '{w}'"
        );
        // The returned iterate is never worse than the initial guess (x0 = 0: ||b||).
        let res = true_residual(&a, &host.download(&x).unwrap());
        assert!(res <= 1.0 + 1e-12, "{variant}: relative residual {res}");
        assert!(r.relative_true_residual <= 1.0 + 1e-12);
    }
}

#[test]
fn valid_solves_never_report_an_increasing_cycle() {
    let host = HostBackend::new();
    for g in [
        Generator::ConvDiff3d,
        Generator::Poisson2d,
        Generator::Aniso2d,
    ] {
        let a = g.generate::<f64>(4000).unwrap().matrix;
        let n = a.n_rows();
        let m = host.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let b = host.upload(&vec![1.0; n]).unwrap();
        for variant in [Variant::Pipelined, Variant::Classical] {
            // rtol = 0: cycles go on down to rounding level, where only rounding may increase.
            let params = Params {
                rtol: 0.0,
                max_iter: 600,
                gmres: pipekrylov::solver::GmresParams {
                    restart: 30,
                    ..Default::default()
                },
                variant,
                ..Params::default()
            };
            let mut x = host.alloc::<f64>(n).unwrap();
            let r = Gmres::new(&host, &m, None, params)
                .unwrap()
                .solve(&b, &mut x)
                .unwrap();
            assert!(
                r.accuracy_warning.is_none(),
                "{g} {variant}: {:?}",
                r.accuracy_warning
            );
        }
    }
}
