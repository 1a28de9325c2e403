//! The entry points called as C calls them: solves, many right-hand sides, every error path.

use std::ffi::{c_int, c_void, CStr};
use std::ptr::{null, null_mut};

use crate::*;

/// The 1D Laplacian tridiag(-1, 2, -1) of order n as CSR arrays with indices of type `I`.
fn laplacian<I: TryFrom<usize>>(n: usize) -> (Vec<I>, Vec<I>, Vec<f64>) {
    let idx = |i: usize| I::try_from(i).ok().unwrap();
    let (mut rp, mut ci, mut v) = (vec![idx(0)], Vec::new(), Vec::new());
    for i in 0..n {
        for (j, a) in [(i.wrapping_sub(1), -1.0), (i, 2.0), (i + 1, -1.0)] {
            if j < n {
                ci.push(idx(j));
                v.push(a);
            }
        }
        rp.push(idx(v.len()));
    }
    (rp, ci, v)
}

fn last_error() -> String {
    // SAFETY: a NUL-terminated string owned by the library.
    unsafe { CStr::from_ptr(pk_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Create a solver of the f64 Laplacian of order n with 32-bit indices.
fn create(n: usize, options: &CStr) -> (c_int, *mut PkSolver) {
    let (rp, ci, v) = laplacian::<i32>(n);
    let mut s = null_mut();
    // SAFETY: live arrays of the lengths given.
    let code = unsafe {
        pk_solver_create(
            n,
            rp.as_ptr().cast(),
            ci.as_ptr().cast(),
            v.as_ptr().cast(),
            v.len(),
            32,
            64,
            options.as_ptr(),
            &mut s,
        )
    };
    (code, s)
}

/// ||b - A x|| / ||b|| for the Laplacian.
fn residual(b: &[f64], x: &[f64]) -> f64 {
    let n = b.len();
    let at = |i: usize| if i < n { x[i] } else { 0.0 };
    let (mut r2, mut b2) = (0.0, 0.0);
    for i in 0..n {
        let ax = 2.0 * x[i] - at(i.wrapping_sub(1)) - at(i + 1);
        r2 += (b[i] - ax) * (b[i] - ax);
        b2 += b[i] * b[i];
    }
    (r2 / b2).sqrt()
}

#[test]
fn solve_and_solve_many_on_the_host() {
    let n = 100;
    let (code, s) = create(n, c"method=cg;precond=jacobi;rtol=1e-10;backend=host");
    assert_eq!(code, PK_OK, "{}", last_error());
    let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / n as f64).collect();
    let mut x = vec![0.0; n];
    let mut report = PkReport {
        iterations: 0,
        converged: 0,
        stop_reason: -1,
        relative_true_residual: -1.0,
        setup_seconds: -1.0,
        solve_seconds: -1.0,
    };
    // SAFETY: a live solver and arrays of n values.
    unsafe {
        let code = pk_solver_solve(
            s,
            b.as_ptr().cast(),
            null(),
            x.as_mut_ptr().cast(),
            &mut report,
        );
        assert_eq!(code, PK_OK, "{}", last_error());
        assert_eq!(last_error(), "");
        assert_eq!(
            (report.converged, report.stop_reason),
            (1, PK_STOP_CONVERGED)
        );
        assert!(report.iterations > 0 && report.relative_true_residual < 1e-9);
        assert!(report.setup_seconds >= 0.0 && report.solve_seconds > 0.0);
        assert!(residual(&b, &x) < 1e-9);
        // From the solution as the guess, written in place over x0: converged at once.
        let x0 = x.as_mut_ptr();
        let code = pk_solver_solve(s, b.as_ptr().cast(), x0.cast(), x0.cast(), &mut report);
        assert_eq!(code, PK_OK);
        assert_eq!(report.iterations, 0);

        let k = 3;
        let big_b: Vec<f64> = (0..n * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        let mut big_x = vec![0.0; n * k];
        let mut reports = vec![report; k];
        let code = pk_solver_solve_many(
            s,
            k,
            big_b.as_ptr().cast(),
            big_x.as_mut_ptr().cast(),
            reports.as_mut_ptr(),
        );
        assert_eq!(code, PK_OK, "{}", last_error());
        for (j, report) in reports.iter().enumerate() {
            let col = j * n..(j + 1) * n;
            assert_eq!(report.converged, 1);
            assert!(residual(&big_b[col.clone()], &big_x[col]) < 1e-9);
        }
        // X may be B: the columns are read before any is written.
        let mut in_place = big_b.clone();
        let ptr = in_place.as_mut_ptr();
        let code = pk_solver_solve_many(s, k, ptr.cast(), ptr.cast(), null_mut());
        assert_eq!(code, PK_OK, "{}", last_error());
        assert_eq!(in_place, big_x);
        // A NaN in a column: an error, and X untouched.
        let mut with_nan = big_b.clone();
        with_nan[n + 2] = f64::NAN;
        let mut untouched = vec![7.0; n * k];
        let code = pk_solver_solve_many(
            s,
            k,
            with_nan.as_ptr().cast(),
            untouched.as_mut_ptr().cast(),
            null_mut(),
        );
        assert_eq!(code, PK_ERR_INVALID_INPUT, "{}", last_error());
        assert!(untouched.iter().all(|&v| v == 7.0));
        // k = 0 and NULL reports are fine.
        assert_eq!(
            pk_solver_solve_many(s, 0, null(), null_mut(), null_mut()),
            PK_OK
        );
        pk_solver_destroy(s);
    }
}

#[test]
fn float_values_and_64_bit_indices() {
    let n = 40;
    let (rp, ci, v) = laplacian::<i64>(n);
    let v: Vec<f32> = v.iter().map(|&a| a as f32).collect();
    let mut s = null_mut();
    // SAFETY: live arrays of the lengths given.
    unsafe {
        let code = pk_solver_create(
            n,
            rp.as_ptr().cast(),
            ci.as_ptr().cast(),
            v.as_ptr().cast(),
            v.len(),
            64,
            32,
            c"method=gmres;rtol=1e-5".as_ptr(),
            &mut s,
        );
        assert_eq!(code, PK_OK, "{}", last_error());
        let b = vec![1.0f32; n];
        let mut x = vec![0.0f32; n];
        let mut report = std::mem::zeroed::<PkReport>();
        let code = pk_solver_solve(
            s,
            b.as_ptr().cast(),
            null(),
            x.as_mut_ptr().cast(),
            &mut report,
        );
        assert_eq!(code, PK_OK, "{}", last_error());
        assert_eq!(report.converged, 1);
        pk_solver_destroy(s);
    }
}

#[test]
fn every_error_path_is_a_code_and_a_message() {
    let n = 10;
    let (rp, ci, v) = laplacian::<i32>(n);
    let create_with = |rp: *const c_void, ib: c_int, vb: c_int, opts: &CStr| {
        let mut s = null_mut();
        // SAFETY: live arrays (or NULL, which is checked).
        let code = unsafe {
            pk_solver_create(
                n,
                rp,
                ci.as_ptr().cast(),
                v.as_ptr().cast(),
                v.len(),
                ib,
                vb,
                opts.as_ptr(),
                &mut s,
            )
        };
        assert!(s.is_null(), "no solver on failure");
        (code, last_error())
    };
    let rp = rp.as_ptr().cast();
    let cases = [
        (
            create_with(rp, 16, 64, c""),
            PK_ERR_INVALID_INPUT,
            "index_bits",
        ),
        (
            create_with(rp, 32, 16, c""),
            PK_ERR_INVALID_INPUT,
            "value_bits",
        ),
        (create_with(null(), 32, 64, c""), PK_ERR_NULL, "row_ptr"),
        (
            create_with(rp, 32, 64, c"tolerance=1"),
            PK_ERR_INVALID_INPUT,
            "rtol",
        ),
        (
            create_with(rp, 32, 64, c"rtol"),
            PK_ERR_INVALID_INPUT,
            "no '='",
        ),
        (
            create_with(rp, 32, 64, c"rtol=x"),
            PK_ERR_INVALID_INPUT,
            "rtol",
        ),
        (
            create_with(rp, 32, 64, c"rtol=-1"),
            PK_ERR_INVALID_INPUT,
            "rtol",
        ),
        (
            create_with(rp, 32, 64, c"backend=host;precond=ip-matrix-free"),
            PK_ERR_PRECONDITIONER,
            "ip",
        ),
    ];
    for ((code, message), expected, needle) in cases {
        assert_eq!(code, expected, "{message}");
        assert!(message.contains(needle), "{needle}: {message}");
    }
    // SAFETY: NULL handles and pointers are what is tested; the rest are live.
    unsafe {
        let b = vec![1.0; n];
        let mut x = vec![0.0; n];
        let code = pk_solver_solve(
            null_mut(),
            b.as_ptr().cast(),
            null(),
            x.as_mut_ptr().cast(),
            null_mut(),
        );
        assert_eq!(code, PK_ERR_NULL);
        assert_eq!(last_error(), "solver is NULL");
        assert_eq!(
            pk_solver_solve_many(null_mut(), 1, null(), null_mut(), null_mut()),
            PK_ERR_NULL
        );
        pk_solver_destroy(null_mut());
        let code = pk_solver_create(n, rp, null(), null(), 0, 32, 64, null(), null_mut());
        assert_eq!(code, PK_ERR_NULL);

        let (code, s) = create(n, c"backend=host");
        assert_eq!(code, PK_OK, "{}", last_error());
        let code = pk_solver_solve(s, null(), null(), x.as_mut_ptr().cast(), null_mut());
        assert_eq!((code, last_error().as_str()), (PK_ERR_NULL, "b is NULL"));
        let code = pk_solver_solve(s, b.as_ptr().cast(), null(), null_mut(), null_mut());
        assert_eq!((code, last_error().as_str()), (PK_ERR_NULL, "x is NULL"));
        let nan = vec![f64::NAN; n];
        let code = pk_solver_solve(
            s,
            nan.as_ptr().cast(),
            null(),
            x.as_mut_ptr().cast(),
            null_mut(),
        );
        assert_eq!(code, PK_ERR_INVALID_INPUT, "{}", last_error());
        let code = pk_solver_solve_many(s, 2, b.as_ptr().cast(), null_mut(), null_mut());
        assert_eq!(code, PK_ERR_NULL);
        let code = pk_solver_solve_many(
            s,
            usize::MAX,
            b.as_ptr().cast(),
            x.as_mut_ptr().cast(),
            null_mut(),
        );
        assert_eq!(code, PK_ERR_INVALID_INPUT, "{}", last_error());
        // The solver still works after its errors.
        let code = pk_solver_solve(
            s,
            b.as_ptr().cast(),
            null(),
            x.as_mut_ptr().cast(),
            null_mut(),
        );
        assert_eq!(code, PK_OK, "{}", last_error());
        pk_solver_destroy(s);
        assert_eq!(
            CStr::from_ptr(pk_version()).to_str().unwrap(),
            env!("CARGO_PKG_VERSION")
        );
    }
}

#[test]
fn new_values_on_the_same_pattern() {
    let n = 64;
    let (code, s) = create(n, c"method=cg;precond=bilu0;rtol=1e-12;backend=host");
    assert_eq!(code, PK_OK, "{}", last_error());
    let (rp, ci, v) = laplacian::<i32>(n);
    let b = vec![1.0; n];
    let solve = |s: *mut PkSolver| -> Vec<f64> {
        let mut x = vec![0.0; n];
        // SAFETY: a live solver and arrays of n values.
        let code = unsafe {
            pk_solver_solve(
                s,
                b.as_ptr().cast(),
                null(),
                x.as_mut_ptr().cast(),
                null_mut(),
            )
        };
        assert_eq!(code, PK_OK, "{}", last_error());
        x
    };
    let update = |values: &[f64], value_bits: c_int, out: *mut PkValuesUpdate| {
        // SAFETY: live arrays of the pattern's lengths.
        unsafe {
            pk_solver_update_values(
                s,
                rp.as_ptr().cast(),
                ci.as_ptr().cast(),
                values.as_ptr().cast(),
                values.len(),
                32,
                value_bits,
                out,
            )
        }
    };
    let x1 = solve(s);
    // 3 A: the solution is x1 / 3.
    let tripled: Vec<f64> = v.iter().map(|a| 3.0 * a).collect();
    let mut times = PkValuesUpdate::default();
    assert_eq!(update(&tripled, 64, &mut times), PK_OK, "{}", last_error());
    assert!(times.seconds >= times.matrix_seconds && times.precond_host_seconds > 0.0);
    let x3 = solve(s);
    assert!(x1
        .iter()
        .zip(&x3)
        .all(|(a, b)| (a - 3.0 * b).abs() <= 1e-9 * a.abs()));
    // Another precision, a NaN, a zero pivot: refused, the solver keeps 3 A.
    assert_eq!(update(&tripled, 32, null_mut()), PK_ERR_INVALID_INPUT);
    assert!(last_error().contains("value_bits"), "{}", last_error());
    let mut nan = tripled.clone();
    nan[5] = f64::NAN;
    assert_eq!(update(&nan, 64, null_mut()), PK_ERR_INVALID_INPUT);
    let mut zero = tripled.clone();
    zero[0] = 0.0;
    assert_eq!(update(&zero, 64, null_mut()), PK_ERR_PRECONDITIONER);
    assert!(last_error().contains("pivot"), "{}", last_error());
    assert_eq!(solve(s), x3);
    // NULL solver.
    // SAFETY: NULL is refused before anything is read.
    let code = unsafe {
        pk_solver_update_values(null_mut(), null(), null(), null(), 0, 32, 64, null_mut())
    };
    assert_eq!(code, PK_ERR_NULL);
    // SAFETY: a live solver, destroyed once.
    unsafe { pk_solver_destroy(s) };
}
