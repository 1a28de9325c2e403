//! A user's first program, against the public API only (issue 57 items 1-4): one `use` of the
//! prelude, `Result` meaning `std::result::Result`, every solver option set by a builder method,
//! and a monitor on the one-call solve.

use pipekrylov::matrix::generate::Generator;
use pipekrylov::prelude::*;

/// Item 1: `Result<(), E>` in a user's signature is std's, not the crate's alias.
fn users_main() -> Result<(), pipekrylov::Error> {
    let a = Generator::Poisson2d.generate::<f64>(900)?.matrix;
    // Item 2: the backend traits and `HostBackend` come with the prelude.
    let host = HostBackend::new();
    let device_a = host.upload_matrix(&a, MatrixFormat::Csr)?;
    let b = host.upload(&vec![1.0; a.n_rows()])?;
    let mut x = host.alloc::<f64>(a.n_rows())?;
    let jacobi = Jacobi::new(&host, &a)?;
    let report = Cg::new(&host, &device_a, Some(&jacobi), Params::default())?.solve(&b, &mut x)?;
    assert!(report.stop_reason.converged());
    Ok(())
}

/// A user function returning a boxed error also compiles with the prelude in scope.
fn boxed() -> Result<usize, Box<dyn std::error::Error>> {
    Ok("12".parse::<usize>()?)
}

#[test]
fn prelude_leaves_std_result_alone() {
    users_main().unwrap();
    assert_eq!(boxed().unwrap(), 12);
}

/// Item 3: every option by a builder method, the defaults as documented.
#[test]
fn solve_options_have_a_builder_for_every_option() {
    let d = SolveOptions::default();
    assert_eq!(d.method, Method::Gmres);
    assert_eq!(d.params.rtol, 1e-8);
    assert_eq!(d.params.atol, 0.0);
    assert_eq!(d.params.max_iter, 10_000);
    assert_eq!(d.params.gmres.restart, 30);
    assert_eq!(d.params.execution, Execution::Auto);
    assert_eq!(d.params.variant, Variant::Auto);
    assert_eq!(d.backend, BackendChoice::Auto);
    let opts = SolveOptions::default()
        .method(Method::Gmres)
        .restart(7)
        .atol(1e-30)
        .rtol(1e-9)
        .max_iter(1234)
        .variant(Variant::Classical)
        .execution(Execution::Synchronous)
        .precond(PrecondKind::Jacobi)
        .backend(BackendChoice::Host)
        .format(MatrixFormat::Csr)
        .record_history(false);
    assert_eq!(
        (
            opts.params.gmres.restart,
            opts.params.atol,
            opts.params.rtol,
            opts.params.max_iter
        ),
        (7, 1e-30, 1e-9, 1234)
    );
    assert_eq!(opts.params.variant, Variant::Classical);
    assert_eq!(opts.params.execution, Execution::Synchronous);
    assert!(!opts.params.record_history);
    let a = Generator::ConvDiff3d.generate::<f64>(1000).unwrap().matrix;
    let b = vec![1.0; a.n_rows()];
    let sol = solve(&a, &b, &opts).unwrap();
    assert!(
        sol.report.stop_reason.converged(),
        "{}",
        sol.report.stop_reason
    );
    assert!(sol.report.residual_history.is_empty());
    assert_eq!(sol.report.rtol, 1e-9);
    // The reusable solver has the same setters.
    let mut solver = ReusableSolver::builder(&a)
        .method(Method::BiCgStab)
        .atol(0.0)
        .max_iter(3)
        .backend(BackendChoice::Host)
        .build()
        .unwrap();
    let sol = solver.solve(&b).unwrap();
    assert_eq!(sol.report.stop_reason, StopReason::MaxIterations);
    assert_eq!(sol.report.iterations, 3);
}

/// Item 4: the one-call solve and the reusable solver take a monitor.
#[test]
fn one_call_solve_takes_a_monitor() {
    let a = Generator::Poisson2d.generate::<f64>(400).unwrap().matrix;
    let b = vec![1.0; a.n_rows()];
    let mut seen: Vec<(usize, f64)> = Vec::new();
    let opts = SolveOptions::default()
        .method(Method::Cg)
        .backend(BackendChoice::Host);
    let sol = solve_with_monitor(&a, &b, &opts, &mut |p: Progress| {
        seen.push((p.iteration, p.residual))
    })
    .unwrap();
    assert!(sol.report.stop_reason.converged());
    assert_eq!(seen.len(), sol.report.iterations + 1);
    assert_eq!(seen.last().unwrap().0, sol.report.iterations);
    assert_eq!(
        seen.iter().map(|s| s.1).collect::<Vec<_>>(),
        sol.report.residual_history
    );
    let mut calls = 0;
    let mut solver = ReusableSolver::builder(&a)
        .method(Method::Cg)
        .backend(BackendChoice::Host)
        .build()
        .unwrap();
    let again = solver
        .solve_with_monitor(&b, &mut |_: Progress| calls += 1)
        .unwrap();
    assert_eq!(calls, again.report.iterations + 1);
}

/// The one-call solve's report carries the CG hint on a nonsymmetric matrix (issue 50 item 8).
#[test]
fn one_call_cg_on_a_nonsymmetric_matrix_notes_it() {
    let a = pipekrylov::matrix::matrix_market::read_csr::<f64>("tests/data/olm500.mtx").unwrap();
    let b = vec![1.0; a.n_rows()];
    let opts = SolveOptions::default()
        .method(Method::Cg)
        .backend(BackendChoice::Host);
    let sol = solve(&a, &b, &opts).unwrap();
    assert!(!sol.report.stop_reason.converged());
    assert!(
        sol.report.notes.iter().any(|n| n.contains("not symmetric")),
        "{:?}",
        sol.report.notes
    );
}
