//! [`CsrView`], the caller's 32-bit CSR arrays borrowed: checked and fingerprinted as the same
//! matrix as a [`CsrMatrix`], and a solver set up from it (arrays sent as they are, or copied
//! for the setups that need more) solving bit for bit as one set up from the matrix, also into
//! the caller's vector (`solve_into`), on the host, OpenCL (PoCL in CI) and CUDA (`#[ignore]`d:
//! run on the device with `--include-ignored`).

use crate::common::random_matrix;
use pipekrylov::backend::BackendChoice;
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::{CsrMatrix, CsrView};
use pipekrylov::precond::PrecondKind;
use pipekrylov::{Error, Method, ReusableSolver};

/// The arrays of `a` as 32-bit ones.
fn arrays_i32(a: &CsrMatrix<f64>) -> (Vec<i32>, Vec<i32>) {
    let narrow = |v: &[usize]| v.iter().map(|&i| i32::try_from(i).unwrap()).collect();
    (narrow(a.row_ptr()), narrow(a.col_idx()))
}

#[test]
fn a_view_is_the_same_matrix_as_its_copy() {
    let mut matrices = vec![
        random_matrix::<f64>(300, 5, true, 7),
        random_matrix::<f64>(40_000, 3, false, 11), // checked in parallel
        Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix,
        CsrMatrix::new(3, 3, vec![0; 4], vec![], vec![]).unwrap(),
    ];
    matrices.push(CsrMatrix::new(0, 0, vec![0], vec![], vec![]).unwrap());
    for a in &matrices {
        let (rp, ci) = arrays_i32(a);
        let v = CsrView::from_i32(a.n_rows(), a.n_cols(), &rp, &ci, a.values()).unwrap();
        assert_eq!(
            (v.n_rows(), v.n_cols(), v.nnz()),
            (a.n_rows(), a.n_cols(), a.nnz())
        );
        assert_eq!(v.pattern_fingerprint(), a.pattern_fingerprint());
        assert_eq!(v.fingerprint(), a.fingerprint());
        assert_eq!(v.diagonal(), a.diagonal());
        let copy = v.to_csr().unwrap();
        assert_eq!(&copy, a);
        assert_eq!(copy.fingerprint(), a.fingerprint());
        assert_eq!(
            CsrMatrix::from_i32(a.n_rows(), a.n_cols(), &rp, &ci, a.values()).unwrap(),
            *a
        );
    }
    // Another value changes the full fingerprint, not the pattern's.
    let a = &matrices[0];
    let (rp, ci) = arrays_i32(a);
    let mut values = a.values().to_vec();
    values[5] += 1.0;
    let v = CsrView::from_i32(a.n_rows(), a.n_cols(), &rp, &ci, &values).unwrap();
    assert_eq!(v.pattern_fingerprint(), a.pattern_fingerprint());
    assert_ne!(v.fingerprint(), a.fingerprint());
}

/// Every fault of the arrays is named as [`CsrMatrix::new`] names it (a negative index as a
/// negative one), small and above the parallel check's size, with the row or position.
#[test]
fn a_view_names_faults_as_the_matrix_does() {
    for n in [50usize, 40_000] {
        let a = random_matrix::<f64>(n, 3, false, 3);
        let (rp, ci) = arrays_i32(&a);
        // The last row with at least two entries: its first two columns swapped.
        let row = (0..n).rev().find(|&r| rp[r + 1] - rp[r] >= 2).unwrap();
        let k = rp[row] as usize;
        let faults: Vec<(String, Vec<i32>, Vec<i32>, usize)> = vec![
            (
                format!("row {row}: column indices not strictly increasing"),
                rp.clone(),
                swapped(&ci, k),
                a.nnz(),
            ),
            (
                format!("column index {n} at position {} out of range", a.nnz() - 1),
                rp.clone(),
                set(&ci, a.nnz() - 1, n as i32),
                a.nnz(),
            ),
            (
                format!("row_ptr decreases at row {}", n / 2),
                set(&rp, n / 2, rp[n / 2 + 1] + 1),
                ci.clone(),
                a.nnz(),
            ),
            (
                "row_ptr must start at 0 and end at nnz".into(),
                set(&rp, n, rp[n] - 1),
                ci.clone(),
                a.nnz(),
            ),
            ("values length".into(), rp.clone(), ci.clone(), 3),
            (
                "row_ptr length".into(),
                rp[..n].to_vec(),
                ci.clone(),
                a.nnz(),
            ),
        ];
        for (what, rp, ci, n_values) in faults {
            let values = vec![1.0; n_values];
            let wide = |v: &[i32]| v.iter().map(|&i| i as usize).collect::<Vec<_>>();
            let want = CsrMatrix::new(n, n, wide(&rp), wide(&ci), values.clone()).unwrap_err();
            let got = CsrView::from_i32(n, n, &rp, &ci, &values).unwrap_err();
            assert!(
                got.to_string().contains(&what),
                "{got} (n = {n}): want {what}"
            );
            assert_eq!(got.to_string(), want.to_string(), "{what}, n = {n}");
        }
        let e = CsrView::from_i32(n, n, &rp, &set(&ci, 4, -3), a.values()).unwrap_err();
        assert!(
            e.to_string()
                .contains("negative column index -3 at position 4"),
            "{e}"
        );
        let e = CsrView::from_i32(n, n, &set(&rp, 2, -1), &ci, a.values()).unwrap_err();
        assert!(
            e.to_string()
                .contains("negative row pointer -1 at position 2"),
            "{e}"
        );
    }
    let e = CsrView::<f64>::new(1 << 33, 1, &[0], &[], &[]).unwrap_err();
    assert!(matches!(e, Error::IndexOverflow { .. }), "{e}");
    // Beyond 2^31 columns a negative index read as unsigned would be in range: still named.
    let e = CsrView::from_i32(1, 3_000_000_000, &[0, 1], &[-1_500_000_000], &[1.0]).unwrap_err();
    assert!(e.to_string().contains("negative column index"), "{e}");
}

fn swapped(v: &[i32], k: usize) -> Vec<i32> {
    let mut v = v.to_vec();
    v.swap(k, k + 1);
    v
}

fn set(v: &[i32], k: usize, value: i32) -> Vec<i32> {
    let mut v = v.to_vec();
    v[k] = value;
    v
}

/// A solver set up from a view (no preconditioner and Jacobi: arrays sent as they are; BILU(0)
/// and SELL storage: copied first) solves as one set up from the matrix, bit for bit, takes
/// new values of the same pattern, and refuses a matrix of another pattern.
fn view_solves_as_the_matrix(backend: BackendChoice) {
    let a = Generator::Poisson2d.generate::<f64>(1024).unwrap().matrix;
    let (rp, ci) = arrays_i32(&a);
    let b: Vec<f64> = (0..a.n_rows()).map(|i| 1.0 + (i % 5) as f64).collect();
    let sell = pipekrylov::backend::MatrixFormat::Sell { c: 32, sigma: 1 };
    for (method, kind, format) in [
        (Method::Cg, PrecondKind::None, None),
        (Method::Cg, PrecondKind::Jacobi, None),
        (Method::Gmres, PrecondKind::Jacobi, None),
        (Method::BiCgStab, PrecondKind::Bilu0, None),
        (Method::Cg, PrecondKind::None, Some(sell)),
    ] {
        let view = CsrView::from_i32(a.n_rows(), a.n_cols(), &rp, &ci, a.values()).unwrap();
        let build = |builder: pipekrylov::SolverBuilder<'_, f64>| {
            let builder = builder
                .method(method)
                .precond(kind)
                .rtol(1e-10)
                .backend(backend);
            match format {
                Some(f) => builder.format(f),
                None => builder,
            }
            .build()
            .unwrap()
        };
        let mut from_view = build(ReusableSolver::builder_view(view));
        let mut from_matrix = build(ReusableSolver::builder(&a));
        let (got, want) = (from_view.solve(&b).unwrap(), from_matrix.solve(&b).unwrap());
        let label = format!("{backend:?} {method:?} {kind} {format:?}");
        assert!(want.report.stop_reason.converged(), "{label}");
        assert_eq!(got.report.iterations, want.report.iterations, "{label}");
        assert_eq!(got.x, want.x, "{label}");
        // The solution read into the caller's vector: the same, from zero and from x0.
        let mut into = vec![f64::NAN; a.n_rows()];
        let report = from_view.solve_into(&b, None, &mut into, None).unwrap();
        assert_eq!(
            (report.iterations, &into),
            (want.report.iterations, &want.x),
            "{label}"
        );
        let x0 = vec![0.5; a.n_rows()];
        let want_from = from_matrix.solve_from(&b, &x0).unwrap();
        from_view
            .solve_into(&b, Some(&x0), &mut into, None)
            .unwrap();
        assert_eq!(into, want_from.x, "{label}");
        let short = from_view.solve_into(&b, None, &mut into[1..], None);
        assert!(
            matches!(short, Err(Error::DimensionMismatch { .. })),
            "{label}"
        );
        // New values of the same pattern are taken; another pattern is refused.
        let mut scaled = a.clone();
        scaled.values_mut().iter_mut().for_each(|v| *v *= 2.0);
        from_view.update_values(&scaled).unwrap();
        let again = from_view.solve(&b).unwrap();
        assert!(again.report.stop_reason.converged(), "{label}");
        let other = Generator::Poisson2d.generate::<f64>(1089).unwrap().matrix;
        assert!(from_view.update_values(&other).is_err(), "{label}");
    }
}

#[test]
fn host_solver_from_view_solves_as_from_matrix() {
    view_solves_as_the_matrix(BackendChoice::Host);
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_solver_from_view_solves_as_from_matrix() {
    view_solves_as_the_matrix(BackendChoice::OpenCl);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU: run on the device with --include-ignored"]
fn cuda_solver_from_view_solves_as_from_matrix() {
    view_solves_as_the_matrix(BackendChoice::Cuda);
}
