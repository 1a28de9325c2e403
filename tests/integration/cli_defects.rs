//! Regression tests of the command line's defects found by a new user (issue 50): each test
//! failed before its fix.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pipekrylov"))
}

fn solve(args: &[&str]) -> Output {
    bin().arg("solve").args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
}

/// Item 2: a restart length far beyond n and max_iter is capped (it used to size the basis
/// from it and fail with out of memory), and the report says so.
#[test]
fn gmres_restart_is_capped_at_n_and_max_iter() {
    let out = solve(&[
        "--generate",
        "convdiff3d:1000",
        "--solver",
        "gmres",
        "--restart",
        "1000000000",
        "--maxit",
        "700",
        "--backend",
        "host",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("restart capped at 700")),
        "{notes:?}"
    );
}

/// Item 3: a line that never ends is an error naming the line, after at most
/// `MAX_LINE_BYTES`, not an unbounded read.
#[test]
fn a_line_that_never_ends_is_refused_early() {
    let t0 = Instant::now();
    let out = solve(&["--matrix", "/dev/zero", "--backend", "host"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("line 1") && err.contains("longer than"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(30));
    // The same through --rhs, and a long second line of a real file.
    let dir = std::env::temp_dir().join(format!("pk-long-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("long.mtx");
    let mut body = String::from("%%MatrixMarket matrix coordinate real general\n");
    body.push_str(&"1".repeat(pipekrylov::matrix::matrix_market::MAX_LINE_BYTES + 1));
    body.push('\n');
    std::fs::write(&path, body).unwrap();
    let err = pipekrylov::matrix::matrix_market::read_csr::<f64>(&path).unwrap_err();
    assert!(
        matches!(err, pipekrylov::Error::MatrixMarket { line: 2, .. }),
        "{err}"
    );
    let out = solve(&[
        "--generate",
        "poisson2d:100",
        "--rhs",
        "/dev/zero",
        "--backend",
        "host",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("longer than"));
    // A line of exactly the limit is still read (and then refused for its content).
    let mut body = String::from("%%MatrixMarket matrix coordinate real general\n%");
    body.push_str(&" ".repeat(pipekrylov::matrix::matrix_market::MAX_LINE_BYTES - 1));
    body.push_str("\n1 1 1\n1 1 2.0\n");
    std::fs::write(&path, body).unwrap();
    let a = pipekrylov::matrix::matrix_market::read_csr::<f64>(&path).unwrap();
    assert_eq!(a.nnz(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

/// Item 4: an empty system is solved (converged, 0 iterations) with every preconditioner,
/// adaptive FSAI included.
#[test]
fn empty_matrix_market_system_converges_with_afsai() {
    let dir = std::env::temp_dir().join(format!("pk-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("empty.mtx");
    std::fs::write(
        &path,
        "%%MatrixMarket matrix coordinate real symmetric\n0 0 0\n",
    )
    .unwrap();
    for precond in ["none", "jacobi", "bilu0", "ip", "fsai", "afsai"] {
        let out = solve(&[
            "--matrix",
            path.to_str().unwrap(),
            "--precond",
            precond,
            "--backend",
            "host",
            "--json",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{precond}: {}",
            text(&out.stderr)
        );
        let v = json(&out);
        assert_eq!(v["stop_reason"], "converged", "{precond}");
        assert_eq!(v["iterations"], 0, "{precond}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Item 7: usage errors exit 1 (2 means "ran, did not converge"), a negative number is a value
/// whose range check answers, and --help exits 0.
#[test]
fn usage_errors_exit_1_and_negative_numbers_reach_the_range_check() {
    let out = solve(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let out = bin().args(["no-such-command"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = solve(&["--generate", "poisson2d:100", "--tol", "-1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("rtol") && err.contains("-1"), "{err}");
    let out = solve(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    // Item 10: --monitor's help describes the live behaviour.
    assert!(help.contains("live"), "{help}");
    assert!(
        !help.contains("after the solve; one process only"),
        "{help}"
    );
}

/// Item 8: CG stopping on a nonsymmetric matrix says so and suggests GMRES/BiCGStab.
#[test]
fn cg_on_a_nonsymmetric_matrix_says_why() {
    let out = solve(&[
        "--matrix",
        "tests/data/olm500.mtx",
        "--solver",
        "cg",
        "--backend",
        "host",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("not symmetric") && report.contains("GMRES"),
        "{report}"
    );
    // A symmetric matrix that stops at the iteration limit gets no such note.
    let out = solve(&[
        "--generate",
        "poisson2d:400",
        "--solver",
        "cg",
        "--maxit",
        "3",
        "--backend",
        "host",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stdout).contains("not symmetric"));
}

/// Item 10 (and issue 57 item 8): the report states the tolerances, the threshold and which
/// criterion stopped the solve; --history adds the residual history to the JSON.
#[test]
fn the_report_names_the_tolerance_met() {
    let base = [
        "--generate",
        "poisson2d:400",
        "--solver",
        "cg",
        "--backend",
        "host",
    ];
    let out = solve(&[&base[..], &["--tol", "1e-6", "--json", "--history"]].concat());
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["rtol"], 1e-6);
    assert_eq!(v["atol"], 0.0);
    assert_eq!(v["criterion"], "rtol");
    let b_norm = v["b_norm"].as_f64().unwrap();
    assert!((v["threshold"].as_f64().unwrap() - 1e-6 * b_norm).abs() <= 1e-12 * b_norm);
    let history = v["residual_history"].as_array().unwrap();
    assert_eq!(
        history.len(),
        v["iterations"].as_u64().unwrap() as usize + 1
    );
    assert!(history.last().unwrap().as_f64().unwrap() <= v["threshold"].as_f64().unwrap());
    // Without --history the JSON stays small.
    let out = solve(&[&base[..], &["--json"]].concat());
    assert!(json(&out).get("residual_history").is_none());
    // An absolute tolerance above rtol ||b|| decides.
    let out = solve(&[&base[..], &["--tol", "0", "--atol", "1e-3", "--json"]].concat());
    let v = json(&out);
    assert_eq!(v["criterion"], "atol", "{v}");
    assert_eq!(v["threshold"], 1e-3);
    // The text report's stop line, PETSc style.
    let out = solve(&[&base[..], &["--tol", "1e-6"]].concat());
    let report = text(&out.stdout);
    assert!(
        report.contains("stop: converged: ||r|| <= rtol ||b||"),
        "{report}"
    );
    let out = solve(&[&base[..], &["--maxit", "2"]].concat());
    assert!(
        text(&out.stdout).contains("stop: max_iterations (wanted ||r|| <="),
        "{}",
        text(&out.stdout)
    );
}

/// Item 9: `--trisolve auto` is the default; the report says which solve ran and why (exact on
/// the host, a CPU device).
#[test]
fn trisolve_auto_is_the_default_and_reported() {
    let out = solve(&[
        "--generate",
        "convdiff3d:1000",
        "--solver",
        "bicgstab",
        "--precond",
        "bilu0",
        "--backend",
        "host",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(v["trisolve"], "auto");
    assert_eq!(v["precond_params"]["trisolve"], "exact");
    let reason = v["precond_params"]["trisolve_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("auto: exact on a CPU device"),
        "{reason}"
    );
    let out = solve(&[
        "--generate",
        "convdiff3d:1000",
        "--solver",
        "bicgstab",
        "--precond",
        "bilu0",
        "--backend",
        "host",
    ]);
    assert!(
        text(&out.stdout).contains("triangular solves: exact (auto: exact on a CPU device"),
        "{}",
        text(&out.stdout)
    );
}

/// A preconditioner option given with another preconditioner is an error naming the flag and
/// the preconditioners that read it (it used to be ignored silently); the option of the
/// preconditioner chosen, and a shared one, pass.
#[test]
fn a_flag_of_another_preconditioner_is_an_error() {
    let base = ["--generate", "poisson2d:400", "--backend", "host"];
    let out = solve(&[&base[..], &["--precond", "jacobi", "--amg-strength", "0.1"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("--amg-strength") && err.contains("--precond jacobi") && err.contains("amg"),
        "{err}"
    );
    let out = solve(&[&base[..], &["--precond", "fsai", "--trisolve", "exact"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    for ok in [
        &["--precond", "amg", "--amg-strength", "0.1"][..],
        &["--precond", "bilu0", "--trisolve", "exact"],
        &["--precond", "ilu", "--trisolve", "exact"],
    ] {
        let out = solve(&[&base[..], ok].concat());
        assert_eq!(out.status.code(), Some(0), "{ok:?}: {}", text(&out.stderr));
    }
}
