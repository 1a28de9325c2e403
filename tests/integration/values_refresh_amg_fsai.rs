//! The values-only refresh (`Preconditioner::update_values`) of AMG, static FSAI and adaptive
//! FSAI: built on A1, refreshed with A2 (the pattern of A1, other values, still SPD), the
//! preconditioner applies as one built from scratch on A2 (AMG: where A2's strong couplings
//! equal A1's; else as the host reference refreshed the same way, `Hierarchy::refresh`; aFSAI:
//! its kept pattern, so a CG iteration count close to a fresh aFSAI's, and exactly the first
//! preconditioner again after a refresh back to A1). Through `ReusableSolver`: the solve of
//! A2's system converges (true residual), and a refresh that fails (A2 no longer SPD, or a
//! negative diagonal for AMG) is a typed error after which A1's system still solves.
//!
//! Host and OpenCL (PoCL in CI); CUDA on the device with `--include-ignored`.

use crate::common::{rand_vec, rel_diff};
use pipekrylov::backend::{Backend, BackendChoice, CsrKernel, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{
    AfsaiOptions, Amg, AmgOptions, AmgSetup, Coarsening, Fsai, FsaiOptions, Hierarchy, PrecondKind,
    PrecondSpec, Preconditioner, Smoother,
};
use pipekrylov::solver::{Cg, Params};
use pipekrylov::{Error, ReusableSolver};

/// The 2D Poisson matrix of a k x k grid.
fn poisson2d(k: usize) -> CsrMatrix<f64> {
    Generator::Poisson2d
        .generate_with_param::<f64>(k)
        .unwrap()
        .matrix
}

/// A2 from A1: the same pattern, every off-diagonal entry (i, j) scaled by 3 x (0.7 .. 1.0 by
/// i + j, so A2 stays symmetric), the diagonal scaled by 3 and shifted by 4 .. 7 by row: still
/// SPD for a weakly diagonally dominant A1 (A2 is strictly so).
fn new_values(a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let mut a2 = a.clone();
    let rows: Vec<usize> = (0..a.n_rows())
        .flat_map(|i| std::iter::repeat(i).take(a.row(i).0.len()))
        .collect();
    let cols = a.col_idx().to_vec();
    for ((v, &i), &j) in a2.values_mut().iter_mut().zip(&rows).zip(&cols) {
        *v *= if i == j {
            3.0
        } else {
            3.0 * (0.7 + 0.05 * ((i + j) % 7) as f64)
        };
        if i == j {
            *v += 4.0 + 0.5 * (i % 7) as f64;
        }
    }
    a2
}

/// `a` with entry (i, j) and (j, i) set to `value`.
fn with_entry(a: &CsrMatrix<f64>, i: usize, j: usize, value: f64) -> CsrMatrix<f64> {
    let mut out = a.clone();
    let (rp, ci) = (a.row_ptr().to_vec(), a.col_idx().to_vec());
    let vals = out.values_mut();
    for (r, c) in [(i, j), (j, i)] {
        let k = (rp[r]..rp[r + 1])
            .find(|&k| ci[k] == c)
            .expect("in the pattern");
        vals[k] = value;
    }
    out
}

/// `built_for` of `m` as a preconditioner on `b`'s backend.
fn built_for<B: Backend>(_b: &B, m: &dyn Preconditioner<B, f64>) -> Option<u64> {
    m.built_for()
}

/// z = M^-1 r on the backend, on the host.
fn apply<B: Backend>(b: &B, m: &dyn Preconditioner<B, f64>, r: &[f64]) -> Vec<f64> {
    let rd = b.upload(r).unwrap();
    let mut z = b.alloc(r.len()).unwrap();
    m.apply(b, &rd, &mut z).unwrap();
    b.download(&z).unwrap()
}

/// CG iterations with `m` on A x = A 1 (converged, true residual below 1e-8).
fn cg_iterations<B: Backend>(b: &B, a: &CsrMatrix<f64>, m: &dyn Preconditioner<B, f64>) -> usize {
    let dm = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let mut rhs = vec![0.0; a.n_rows()];
    a.mul_vec(&vec![1.0; a.n_rows()], &mut rhs).unwrap();
    let rhs = b.upload(&rhs).unwrap();
    let mut x = b.alloc(a.n_rows()).unwrap();
    let r = Cg::new(b, &dm, Some(m), Params::default())
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert!(
        r.stop_reason.converged() && r.relative_true_residual < 1e-8 * 1.01,
        "{}: {} after {}",
        b.name(),
        r.stop_reason,
        r.iterations
    );
    r.iterations
}

/// Whether two hierarchies have the same strong couplings on every level (the pattern of the
/// strength graph; then their aggregates, patterns and values are those of the same
/// computation).
fn same_couplings(x: &Hierarchy<f64>, y: &Hierarchy<f64>) -> bool {
    x.num_levels() == y.num_levels()
        && x.levels().iter().zip(y.levels()).all(|(p, q)| {
            let (p, q) = (p.strength_graph().matrix(), q.strength_graph().matrix());
            p.row_ptr() == q.row_ptr() && p.col_idx() == q.col_idx()
        })
}

/// AMG refreshed with A2 applies as the host reference refreshed the same way and, where the
/// strong couplings of A2 are A1's, as a fresh AMG on A2; a refresh back to A1 gives the first
/// preconditioner again.
fn amg_refresh_applies_as_a_fresh_build<B: Backend>(b: &B) {
    let a1 = poisson2d(32);
    // Second case: the couplings of the first 300 rows weakened 100-fold: other strong
    // couplings, so only the host reference on the kept aggregates applies.
    let weak = {
        let mut w = new_values(&a1);
        let (rp, ci) = (a1.row_ptr().to_vec(), a1.col_idx().to_vec());
        let vals = w.values_mut();
        for i in 0..a1.n_rows() {
            for k in rp[i]..rp[i + 1] {
                if ci[k] != i && (i < 300 || ci[k] < 300) {
                    vals[k] *= 0.01;
                }
            }
        }
        w
    };
    // (case, A2, strength threshold, whether a fresh build on A2 must find A1's couplings).
    // With the default threshold the couplings of level 1 change with A2 (smoothed aggregation
    // leaves couplings near the threshold there); with 0 every coupling is strong on every
    // level, whatever the values.
    let cases = [
        ("scaled", new_values(&a1), 0.0, Some(true)),
        (
            "scaled",
            new_values(&a1),
            AmgOptions::default().strength,
            None,
        ),
        (
            "weakened",
            weak,
            AmgOptions::default().strength,
            Some(false),
        ),
    ];
    let mut compared_with_fresh = 0;
    for (case, a2, strength, fresh_expected) in cases {
        for (smoother, coarsening) in [
            (Smoother::Jacobi, Coarsening::SmoothedAggregation),
            (
                Smoother::Chebyshev { degree: 3 },
                Coarsening::SmoothedAggregation,
            ),
            (Smoother::L1Jacobi, Coarsening::Aggregation),
        ] {
            let opts = AmgOptions {
                smoother,
                coarsening,
                coarse_size: 50,
                strength,
                setup: AmgSetup::Host,
                ..AmgOptions::default()
            };
            let what = format!(
                "{} {case} eps {strength} {smoother:?} {coarsening:?}",
                b.name()
            );
            let mut m = Amg::new(b, &a1, opts).unwrap();
            let h1 = Hierarchy::build(&a1, &opts).unwrap();
            assert!(h1.num_levels() >= 3, "{what}");
            let r = rand_vec::<f64>(a1.n_rows(), 11);
            let before = apply(b, &m, &r);
            let sizes = m.level_sizes().to_vec();

            let refresh = m.update_values(b, &a2, None).unwrap();
            assert!(
                refresh.kept.contains("aggregates"),
                "{what}: {}",
                refresh.kept
            );
            assert_eq!(built_for(b, &m), Some(a2.fingerprint()), "{what}");
            assert_eq!(m.level_sizes(), &sizes[..], "{what}");
            let got = apply(b, &m, &r);
            // The host reference on the kept aggregates.
            let reference = h1.refresh(&a2).unwrap();
            let mut want = vec![0.0; r.len()];
            reference.vcycle_host(&r, &mut want).unwrap();
            let d = rel_diff(&got, &want);
            assert!(
                d < 1e-12,
                "{what}: against the refreshed host reference, {d:e}"
            );
            // A fresh build on A2.
            let fresh = Hierarchy::build(&a2, &opts).unwrap();
            let same = same_couplings(&fresh, &reference);
            if let Some(expected) = fresh_expected {
                assert_eq!(same, expected, "{what}");
            }
            if same {
                compared_with_fresh += 1;
                // Bit for bit (not assert_eq!: a failure would print whole matrices).
                for (x, y) in fresh.levels().iter().zip(reference.levels()) {
                    assert!(x.a() == y.a() && x.p() == y.p() && x.r() == y.r(), "{what}");
                    assert!(x.smoother() == y.smoother(), "{what}");
                    assert_eq!(x.aggregates(), y.aggregates(), "{what}");
                }
                assert!(fresh.coarsest() == reference.coarsest(), "{what}");
                let m2 = Amg::new(b, &a2, opts).unwrap();
                let d = rel_diff(&got, &apply(b, &m2, &r));
                assert!(d < 1e-12, "{what}: against a fresh build, {d:e}");
            }
            assert!(cg_iterations(b, &a2, &m) <= 30, "{what}");
            // Back to A1: the first preconditioner.
            m.update_values(b, &a1, None).unwrap();
            let d = rel_diff(&apply(b, &m, &r), &before);
            assert!(d < 1e-12, "{what}: back to A1, {d:e}");
        }
    }
    assert!(compared_with_fresh >= 3, "{compared_with_fresh}");
}

/// A hierarchy set up on the device (`AmgSetup::Device`: the kernels' host references on the
/// host backend) refreshed on the device with A2 applies as a fresh device setup on A2 where
/// A2's strong couplings are A1's on every level: with threshold 0 (every coupling strong),
/// and for 3 A1 (every level scales by 3); on D A1 D (a positive diagonal D: level 0's
/// couplings are A1's, the coarse levels' may not be) and with some couplings weakened
/// 100-fold, CG still converges. A refresh back to A1 gives the first preconditioner again.
fn amg_device_refresh_applies_as_a_fresh_build<B: Backend>(b: &B) {
    let a1 = poisson2d(40);
    let d: Vec<f64> = (0..a1.n_rows())
        .map(|i| 1.0 + 0.5 * ((i % 13) as f64 / 13.0))
        .collect();
    let mut dad = a1.clone();
    let rows: Vec<usize> = (0..a1.n_rows())
        .flat_map(|i| std::iter::repeat(i).take(a1.row(i).0.len()))
        .collect();
    let cols = a1.col_idx().to_vec();
    for ((v, &i), &j) in dad.values_mut().iter_mut().zip(&rows).zip(&cols) {
        *v *= d[i] * d[j];
    }
    let mut weak = new_values(&a1);
    for ((v, &i), &j) in weak.values_mut().iter_mut().zip(&rows).zip(&cols) {
        if i != j && (i < 300 || j < 300) {
            *v *= 0.01;
        }
    }
    let eps = AmgOptions::default().strength;
    // (case, A2, strength threshold, whether a fresh setup on A2 has A1's couplings).
    let mut times3 = a1.clone();
    times3.values_mut().iter_mut().for_each(|v| *v *= 3.0);
    let cases = [
        ("scaled", new_values(&a1), 0.0, true),
        ("3 A", times3, eps, true),
        ("D A D", dad, eps, false),
        ("weakened", weak, eps, false),
    ];
    for (case, a2, strength, same_couplings) in cases {
        for (smoother, coarsening) in [
            (Smoother::Jacobi, Coarsening::SmoothedAggregation),
            (
                Smoother::Chebyshev { degree: 2 },
                Coarsening::SmoothedAggregation,
            ),
            (Smoother::L1Jacobi, Coarsening::Aggregation),
        ] {
            let opts = AmgOptions {
                smoother,
                coarsening,
                coarse_size: 50,
                strength,
                setup: AmgSetup::Device,
                ..AmgOptions::default()
            };
            let what = format!(
                "{} {case} eps {strength} {smoother:?} {coarsening:?}",
                b.name()
            );
            let mut m = Amg::new(b, &a1, opts).unwrap();
            assert!(m.num_levels() >= 3, "{what}");
            let r = rand_vec::<f64>(a1.n_rows(), 11);
            let before = apply(b, &m, &r);
            let sizes = m.level_sizes().to_vec();
            let refresh = m.update_values(b, &a2, None).unwrap();
            assert!(
                refresh.kept.contains("on the device"),
                "{what}: {}",
                refresh.kept
            );
            assert_eq!(built_for(b, &m), Some(a2.fingerprint()), "{what}");
            assert_eq!(m.level_sizes(), &sizes[..], "{what}");
            let got = apply(b, &m, &r);
            if same_couplings {
                let fresh = Amg::new(b, &a2, opts).unwrap();
                assert_eq!(fresh.level_sizes(), &sizes[..], "{what}");
                let d = rel_diff(&got, &apply(b, &fresh, &r));
                assert!(d < 1e-12, "{what}: against a fresh setup, {d:e}");
            } else {
                let d = rel_diff(&got, &before);
                assert!(d > 1e-6, "{what}: the refresh changed nothing ({d:e})");
            }
            assert!(cg_iterations(b, &a2, &m) <= 40, "{what}");
            m.update_values(b, &a1, None).unwrap();
            let d = rel_diff(&apply(b, &m, &r), &before);
            assert!(d < 1e-12, "{what}: back to A1, {d:e}");
        }
    }
}

/// A refresh that fails leaves the AMG as it was, set up on the host or on the device: a
/// negative diagonal entry (NotApplicable, as the setup), a zero one (SingularPivot).
fn amg_failed_refresh_changes_nothing<B: Backend>(b: &B) {
    for setup in [AmgSetup::Host, AmgSetup::Device] {
        amg_failed_refresh_changes_nothing_with(b, setup);
    }
}

fn amg_failed_refresh_changes_nothing_with<B: Backend>(b: &B, setup: AmgSetup) {
    let a1 = poisson2d(24);
    let opts = AmgOptions {
        coarse_size: 40,
        setup,
        ..AmgOptions::default()
    };
    let mut m = Amg::new(b, &a1, opts).unwrap();
    let r = rand_vec::<f64>(a1.n_rows(), 5);
    let before = apply(b, &m, &r);
    let negative = with_entry(&a1, 77, 77, -1.0);
    match m.update_values(b, &negative, None) {
        Err(Error::NotApplicable { reason, .. }) => assert!(reason.contains("row 77"), "{reason}"),
        other => panic!("{}: {other:?}", b.name()),
    }
    let zero = with_entry(&a1, 5, 5, 0.0);
    assert!(matches!(
        m.update_values(b, &zero, None),
        Err(Error::SingularPivot { block_row: 5, .. })
    ));
    let other_size = poisson2d(23);
    assert!(matches!(
        m.update_values(b, &other_size, None),
        Err(Error::PatternMismatch(_))
    ));
    assert_eq!(built_for(b, &m), Some(a1.fingerprint()));
    assert_eq!(apply(b, &m, &r), before, "{} {setup:?}", b.name());
}

/// Static FSAI (levels 1 and 2, a single-precision setup, a forced factor kernel) refreshed
/// with A2 equals a fresh FSAI on A2.
fn fsai_refresh_equals_a_fresh_build<B: Backend>(b: &B) {
    for (a1, level, in_f32, kernel) in [
        (poisson2d(32), 1, false, CsrKernel::Auto),
        (poisson2d(32), 2, false, CsrKernel::Stream),
        (
            Generator::Poisson3d
                .generate_with_param::<f64>(10)
                .unwrap()
                .matrix,
            2,
            true,
            CsrKernel::Auto,
        ),
    ] {
        let what = format!("{} level {level} f32 {in_f32} {kernel:?}", b.name());
        let opts = FsaiOptions {
            level,
            setup_in_f32: in_f32,
            ..FsaiOptions::default()
        };
        let a2 = new_values(&a1);
        let mut m = Fsai::new(b, &a1, opts)
            .unwrap()
            .with_factor_kernel(b, kernel)
            .unwrap();
        let kernels = (m.factors().0.spmv_kernel(), m.factors().1.spmv_kernel());
        let r = rand_vec::<f64>(a1.n_rows(), 3);
        let before = apply(b, &m, &r);
        let refresh = m.update_values(b, &a2, None).unwrap();
        assert!(
            refresh.kept.contains("G's pattern"),
            "{what}: {}",
            refresh.kept
        );
        assert_eq!(built_for(b, &m), Some(a2.fingerprint()), "{what}");
        assert_eq!(
            (m.factors().0.spmv_kernel(), m.factors().1.spmv_kernel()),
            kernels,
            "{what}"
        );
        let fresh = Fsai::new(b, &a2, opts).unwrap();
        let d = rel_diff(&apply(b, &m, &r), &apply(b, &fresh, &r));
        assert!(d < 1e-12, "{what}: {d:e}");
        assert!(cg_iterations(b, &a2, &m) <= 60, "{what}");
        m.update_values(b, &a1, None).unwrap();
        let d = rel_diff(&apply(b, &m, &r), &before);
        assert!(d < 1e-12, "{what}: back to A1, {d:e}");
    }
}

/// Adaptive FSAI refreshed with A2 keeps its grown pattern: CG converges on A2 within 20% of
/// a fresh aFSAI's iterations, and a refresh back to A1 gives the first preconditioner.
fn afsai_refresh_keeps_the_grown_pattern<B: Backend>(b: &B) {
    for a1 in [
        poisson2d(32),
        Generator::Thermal2d
            .generate_with_param::<f64>(32)
            .unwrap()
            .matrix,
    ] {
        let a2 = new_values(&a1);
        let opts = AfsaiOptions::default();
        let mut m = Fsai::adaptive(b, &a1, opts).unwrap();
        let density = m.density();
        let r = rand_vec::<f64>(a1.n_rows(), 9);
        let before = apply(b, &m, &r);
        let refresh = m.update_values(b, &a2, None).unwrap();
        assert!(refresh.kept.contains("grown pattern"), "{}", refresh.kept);
        assert_eq!(m.density(), density);
        assert_eq!(built_for(b, &m), Some(a2.fingerprint()));
        let fresh = Fsai::adaptive(b, &a2, opts).unwrap();
        let (its, its_fresh) = (cg_iterations(b, &a2, &m), cg_iterations(b, &a2, &fresh));
        println!(
            "{}: aFSAI refreshed {its} CG iterations, fresh {its_fresh}",
            b.name()
        );
        assert!(
            its as f64 <= 1.2 * its_fresh as f64,
            "{}: {its} vs {its_fresh}",
            b.name()
        );
        m.update_values(b, &a1, None).unwrap();
        let d = rel_diff(&apply(b, &m, &r), &before);
        assert!(d < 1e-12, "{}: back to A1, {d:e}", b.name());
    }
}

/// FSAI refreshes that fail (not SPD) are the setup's typed errors and change nothing.
fn fsai_failed_refresh_changes_nothing<B: Backend>(b: &B) {
    let a1 = poisson2d(20);
    // A negative diagonal entry: outside the domain. A coupling larger than its diagonals:
    // row 41's 2 x 2 system (columns 40, 41) is not positive definite.
    let negative = with_entry(&a1, 33, 33, -4.0);
    let indefinite = with_entry(&a1, 41, 40, -9.0);
    for adaptive in [false, true] {
        let build = |a: &CsrMatrix<f64>| match adaptive {
            false => Fsai::new(b, a, FsaiOptions::default()),
            true => Fsai::adaptive(b, a, AfsaiOptions::default()),
        };
        let name = if adaptive { "afsai" } else { "fsai" };
        let mut m = build(&a1).unwrap();
        let r = rand_vec::<f64>(a1.n_rows(), 4);
        let before = apply(b, &m, &r);
        for bad in [&negative, &indefinite] {
            let want = build(bad).unwrap_err();
            let got = m.update_values(b, bad, None).unwrap_err();
            match (&got, &want) {
                (
                    Error::NotApplicable {
                        preconditioner: p, ..
                    },
                    Error::NotApplicable { .. },
                ) => assert_eq!(p, name),
                (
                    Error::SingularPivot {
                        preconditioner: p,
                        block_row: row,
                        ..
                    },
                    Error::SingularPivot { .. },
                ) => {
                    assert_eq!(p, name);
                    assert_eq!(*row, 41);
                }
                _ => panic!("{} {name}: {got:?}, the setup gives {want:?}", b.name()),
            }
        }
        assert_eq!(built_for(b, &m), Some(a1.fingerprint()));
        assert_eq!(apply(b, &m, &r), before, "{} {name}", b.name());
    }
}

/// Through `ReusableSolver`: A1's system, then A2's after `update_values`, both converged
/// with the true residual; a failing refresh is a typed error and A1's system still solves.
fn reusable_solver_refreshes(backend: BackendChoice) {
    let a1 = poisson2d(32);
    let a2 = new_values(&a1);
    let rhs: Vec<f64> = (0..a1.n_rows()).map(|i| 1.0 + (i % 5) as f64).collect();
    let check = |s: &mut ReusableSolver<f64>, a: &CsrMatrix<f64>, what: &str| {
        let sol = s.solve(&rhs).unwrap();
        let mut ax = vec![0.0; a.n_rows()];
        a.mul_vec(&sol.x, &mut ax).unwrap();
        let res = ax
            .iter()
            .zip(&rhs)
            .map(|(y, b)| (b - y).powi(2))
            .sum::<f64>();
        let rel = res.sqrt() / rhs.iter().map(|b| b * b).sum::<f64>().sqrt();
        assert!(
            sol.report.stop_reason.converged() && rel < 1e-10 * 1.01,
            "{what}: {} after {}, true residual {rel:e}",
            sol.report.stop_reason,
            sol.report.iterations
        );
        sol.report.iterations
    };
    // AMG set up on the host and on the device (on the host backend: the kernels' host
    // references; on a GPU the finest level shares the solver's copy, which the refresh reads).
    let amg = |setup| {
        PrecondSpec::Amg(AmgOptions {
            setup,
            ..AmgOptions::default()
        })
    };
    for spec in [
        amg(AmgSetup::Host),
        amg(AmgSetup::Device),
        PrecondSpec::from(PrecondKind::Fsai),
        PrecondSpec::from(PrecondKind::Afsai),
    ] {
        let kind = spec.kind();
        let setup = match spec {
            PrecondSpec::Amg(o) => Some(o.setup),
            _ => None,
        };
        let what = format!("{backend:?} {kind:?} {setup:?}");
        let mut s = ReusableSolver::builder(&a1)
            .precond_spec(spec)
            .rtol(1e-10)
            .backend(backend)
            .build()
            .unwrap();
        check(&mut s, &a1, &what);
        let update = s.update_values(&a2).unwrap();
        let refresh = update.precond.expect("a preconditioner");
        assert!(!refresh.kept.is_empty(), "{what}");
        println!(
            "{what}: setup {:.2e} s, refresh {:.2e} s ({})",
            s.setup_times().total(),
            refresh.times.total(),
            refresh.kept
        );
        let its = check(&mut s, &a2, &what);
        // A2 no longer SPD (AMG: a negative diagonal entry on level 0) fails; A2 stays.
        let bad = with_entry(&a2, 100, 100, -1.0);
        match s.update_values(&bad) {
            Err(Error::NotApplicable { .. }) => {}
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(check(&mut s, &a2, &what), its, "{what}");
        // Back to A1, then a failing refresh: A1's system still solves.
        s.update_values(&a1).unwrap();
        check(&mut s, &a1, &what);
        let indefinite = with_entry(&a1, 41, 40, -9.0);
        if kind != PrecondKind::Amg {
            assert!(
                matches!(
                    s.update_values(&indefinite),
                    Err(Error::SingularPivot { .. })
                ),
                "{what}"
            );
        }
        assert!(s.update_values(&bad).is_err(), "{what}");
        check(&mut s, &a1, &what);
    }
}

mod host {
    use pipekrylov::backend::host::HostBackend;
    use pipekrylov::backend::BackendChoice;

    #[test]
    fn host_amg_refresh_applies_as_a_fresh_build() {
        super::amg_refresh_applies_as_a_fresh_build(&HostBackend::new());
    }
    #[test]
    fn host_amg_device_refresh_applies_as_a_fresh_build() {
        super::amg_device_refresh_applies_as_a_fresh_build(&HostBackend::new());
    }
    #[test]
    fn host_amg_failed_refresh_changes_nothing() {
        super::amg_failed_refresh_changes_nothing(&HostBackend::new());
    }
    #[test]
    fn host_fsai_refresh_equals_a_fresh_build() {
        super::fsai_refresh_equals_a_fresh_build(&HostBackend::new());
    }
    #[test]
    fn host_afsai_refresh_keeps_the_grown_pattern() {
        super::afsai_refresh_keeps_the_grown_pattern(&HostBackend::new());
    }
    #[test]
    fn host_fsai_failed_refresh_changes_nothing() {
        super::fsai_failed_refresh_changes_nothing(&HostBackend::new());
    }
    #[test]
    fn host_reusable_solver_refreshes() {
        super::reusable_solver_refreshes(BackendChoice::Host);
    }
    #[test]
    #[ignore = "timing report: run in release with --ignored --nocapture"]
    fn host_refresh_time_against_setup_time() {
        super::refresh_time_against_setup_time(&HostBackend::new());
    }
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;
    use pipekrylov::backend::BackendChoice;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_amg_refresh_applies_as_a_fresh_build() {
        super::amg_refresh_applies_as_a_fresh_build(&backend());
    }
    #[test]
    fn opencl_amg_device_refresh_applies_as_a_fresh_build() {
        super::amg_device_refresh_applies_as_a_fresh_build(&backend());
    }
    #[test]
    fn opencl_amg_failed_refresh_changes_nothing() {
        super::amg_failed_refresh_changes_nothing(&backend());
    }
    #[test]
    fn opencl_fsai_refresh_equals_a_fresh_build() {
        super::fsai_refresh_equals_a_fresh_build(&backend());
    }
    #[test]
    fn opencl_afsai_refresh_keeps_the_grown_pattern() {
        super::afsai_refresh_keeps_the_grown_pattern(&backend());
    }
    #[test]
    fn opencl_fsai_failed_refresh_changes_nothing() {
        super::fsai_failed_refresh_changes_nothing(&backend());
    }
    #[test]
    fn opencl_reusable_solver_refreshes() {
        super::reusable_solver_refreshes(BackendChoice::OpenCl);
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use pipekrylov::backend::cuda::CudaBackend;
    use pipekrylov::backend::BackendChoice;

    fn backend() -> CudaBackend {
        CudaBackend::from_env().expect("an NVIDIA GPU")
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_amg_refresh_applies_as_a_fresh_build() {
        super::amg_refresh_applies_as_a_fresh_build(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_amg_device_refresh_applies_as_a_fresh_build() {
        super::amg_device_refresh_applies_as_a_fresh_build(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_amg_failed_refresh_changes_nothing() {
        super::amg_failed_refresh_changes_nothing(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_fsai_refresh_equals_a_fresh_build() {
        super::fsai_refresh_equals_a_fresh_build(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_afsai_refresh_keeps_the_grown_pattern() {
        super::afsai_refresh_keeps_the_grown_pattern(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_fsai_failed_refresh_changes_nothing() {
        super::fsai_failed_refresh_changes_nothing(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_reusable_solver_refreshes() {
        super::reusable_solver_refreshes(BackendChoice::Cuda);
    }
    #[test]
    #[ignore = "timing report: run in release with --ignored --nocapture (an NVIDIA GPU)"]
    fn cuda_refresh_time_against_setup_time() {
        super::refresh_time_against_setup_time(&backend());
    }
}

/// The numeric phase against the first setup on larger problems (2D Poisson 512^2, 3D Poisson
/// 64^3; the ignored `*_refresh_time_against_setup_time` tests, run in release with
/// `--ignored --nocapture`; the larger two, 2D Poisson 2048^2 and 3D Poisson 128^3, are for the
/// GPU): the first refresh, and the fastest of two more (AMG set up on the host: those run the
/// Galerkin products' numeric phase alone on the patterns the first one kept). The solver's
/// copy of A is passed to the setup and the refresh, as `ReusableSolver` does.
fn refresh_time_against_setup_time<B: Backend>(b: &B) {
    use pipekrylov::precond::ValuesRefresh;
    b.prepare_kernels(pipekrylov::Precision::F64).unwrap();
    let amg_setup = |setup| AmgOptions {
        setup,
        ..AmgOptions::default()
    };
    let fsai_level = |level| FsaiOptions {
        level,
        ..FsaiOptions::default()
    };
    let poisson3d = |k| {
        Generator::Poisson3d
            .generate_with_param::<f64>(k)
            .unwrap()
            .matrix
    };
    for (label, a1) in [
        ("poisson2d 512^2", poisson2d(512)),
        ("poisson3d 64^3", poisson3d(64)),
        ("poisson2d 2048^2", poisson2d(2048)),
        ("poisson3d 128^3", poisson3d(128)),
    ] {
        let a2 = new_values(&a1);
        // The solver's copies of A1 and A2 (as `ReusableSolver` passes them): AMG reads A there
        // and its finest level shares them, so neither the setup nor the refresh uploads A.
        let d1 = b.upload_matrix(&a1, MatrixFormat::Csr).unwrap();
        let d2 = b.upload_matrix(&a2, MatrixFormat::Csr).unwrap();
        type Build<'a, B> = Box<dyn Fn() -> Box<dyn Preconditioner<B, f64>> + 'a>;
        let builds: [(&str, Build<B>); 5] = [
            (
                "amg (set up on the device)",
                Box::new(|| {
                    Box::new(Amg::new_on(b, &a1, Some(&d1), amg_setup(AmgSetup::Device)).unwrap())
                }),
            ),
            (
                "amg (set up on the host)",
                Box::new(|| {
                    Box::new(Amg::new_on(b, &a1, Some(&d1), amg_setup(AmgSetup::Host)).unwrap())
                }),
            ),
            (
                "fsai level 1",
                Box::new(|| Box::new(Fsai::new(b, &a1, fsai_level(1)).unwrap())),
            ),
            (
                "fsai level 2",
                Box::new(|| Box::new(Fsai::new(b, &a1, fsai_level(2)).unwrap())),
            ),
            (
                "afsai",
                Box::new(|| Box::new(Fsai::adaptive(b, &a1, AfsaiOptions::default()).unwrap())),
            ),
        ];
        for (name, build) in builds {
            let t = std::time::Instant::now();
            let mut m = build();
            let setup = t.elapsed().as_secs_f64();
            let first: ValuesRefresh = m.update_values(b, &a2, Some(&d2)).unwrap();
            let next = [(&a1, &d1), (&a2, &d2)]
                .map(|(a, d)| m.update_values(b, a, Some(d)).unwrap().times.total())
                .into_iter()
                .fold(f64::INFINITY, f64::min);
            println!(
                "{} {label} {name}: first setup {setup:.3} s; refresh {:.3} s ({:.0}%; host \
                 {:.3} s, device {:.3} s), then {next:.3} s ({:.0}%); kept {}",
                b.name(),
                first.times.total(),
                100.0 * first.times.total() / setup,
                first.times.host_seconds,
                first.times.device_seconds,
                100.0 * next / setup,
                first.kept
            );
            let phases = &m.params()["refresh_phases_s"];
            if !phases.is_null() {
                println!("{} {label} {name}: refresh phases {phases}", b.name());
            }
        }
    }
}
