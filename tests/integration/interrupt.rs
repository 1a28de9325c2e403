//! A control callback stops every solver between iterations with `StopReason::Interrupted`,
//! keeping the iterate so far (the Python package's Ctrl-C rides on this).

use std::ops::ControlFlow;

use pipekrylov::matrix::generate::Generator;
use pipekrylov::solver::{Progress, StopReason, Variant};
use pipekrylov::{Method, ReusableSolver};

#[test]
fn control_stops_each_solver_where_asked() {
    let a = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
    let b = vec![1.0; a.n_rows()];
    for method in [Method::Cg, Method::BiCgStab, Method::Gmres] {
        for variant in [Variant::Pipelined, Variant::Classical] {
            let mut solver = ReusableSolver::builder(&a)
                .method(method)
                .variant(variant)
                .rtol(1e-12)
                .backend(pipekrylov::backend::BackendChoice::Host)
                .build()
                .unwrap();
            let mut seen = Vec::new();
            let sol = solver
                .solve_with_control(&b, None, &mut |p: Progress| {
                    seen.push(p.iteration);
                    if p.iteration >= 7 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })
                .unwrap();
            let r = &sol.report;
            assert_eq!(
                r.stop_reason,
                StopReason::Interrupted,
                "{method:?} {variant:?}"
            );
            // Stopped at the first report of iteration >= 7 (GMRES reports a cycle's steps at
            // its end, so it may run to the end of that cycle).
            assert!(
                seen.iter().filter(|&&i| i >= 7).count() >= 1,
                "{method:?} {variant:?}"
            );
            assert!(
                r.iterations >= 7 && r.iterations < 1000,
                "{method:?} {variant:?}: {}",
                r.iterations
            );
            // The iterate so far is kept (not reset to x0 = 0), its true residual reported
            // (GMRES minimizes the residual: below ||b||).
            assert!(sol.x.iter().any(|&v| v != 0.0), "{method:?} {variant:?}");
            assert!(r.relative_true_residual.is_finite());
            if method == Method::Gmres {
                assert!(r.relative_true_residual < 1.0, "{method:?} {variant:?}");
            }
            assert!(!r.stop_reason.converged());
            assert_eq!(r.stop_reason.to_string(), "interrupted");
        }
    }
}

#[test]
fn control_that_continues_changes_nothing() {
    let a = Generator::Poisson2d.generate::<f64>(1024).unwrap().matrix;
    let b = vec![1.0; a.n_rows()];
    let mut solver = ReusableSolver::builder(&a)
        .method(Method::Cg)
        .rtol(1e-10)
        .backend(pipekrylov::backend::BackendChoice::Host)
        .build()
        .unwrap();
    let plain = solver.solve(&b).unwrap();
    let controlled = solver
        .solve_with_control(&b, None, &mut |_| ControlFlow::Continue(()))
        .unwrap();
    assert!(controlled.report.stop_reason.converged());
    assert_eq!(plain.report.iterations, controlled.report.iterations);
    assert_eq!(plain.x, controlled.x);
}
