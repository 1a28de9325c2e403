//! The command-line tool: exit codes, JSON fields, a tiny benchmark sweep (CSV columns, SVG).

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pipekrylov"))
}

#[test]
fn solve_converges_with_exit_0_and_json_fields() {
    let out = bin()
        .args([
            "solve",
            "--generate",
            "fem2d:961",
            "--solver",
            "cg",
            "--backend",
            "host",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "solver",
        "variant",
        "backend",
        "device",
        "n",
        "nnz",
        "iterations",
        "stop_reason",
        "relative_residual",
        "recursive_relative_residual",
        "setup_seconds",
        "solve_seconds",
        "seconds_per_iteration",
        "launches_per_iteration",
        "transfers_per_iteration",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["n"], 961);
    assert_eq!(v["stop_reason"], "converged");
    assert!(v["relative_residual"].as_f64().unwrap() < 1e-8);
    assert_eq!(v["launches_per_iteration"].as_f64().unwrap(), 2.0);
}

/// `--backend auto` runs a system of at most `AUTO_HOST_MAX_N` unknowns on the host and says
/// so on stderr; a larger one gets the usual choice (no such note), a named backend never.
#[test]
fn auto_backend_picks_the_host_for_small_systems() {
    let run = |n: usize, backend: &str| {
        let out = bin()
            .args([
                "solve",
                "--generate",
                &format!("poisson2d:{n}"),
                "--backend",
                backend,
                "--json",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, stderr)
    };
    let max = pipekrylov::backend::AUTO_HOST_MAX_N;
    let side = (max as f64).sqrt() as usize;
    let (v, stderr) = run(side * side, "auto");
    assert_eq!(v["backend"], "host");
    assert_eq!(v["backend_request"], "auto");
    assert!(stderr.contains("auto: host backend for n ="), "{stderr}");
    let (v, stderr) = run((side + 2) * (side + 2), "auto");
    assert!(v["n"].as_u64().unwrap() as usize > max);
    assert!(!stderr.contains("auto: host backend"), "{stderr}");
    let (v, stderr) = run(side * side, "host");
    assert_eq!(v["backend_request"], "host");
    assert!(!stderr.contains("auto: host backend"), "{stderr}");
}

#[test]
fn unconverged_solve_exits_2_and_errors_exit_1() {
    let out = bin()
        .args([
            "solve",
            "--generate",
            "poisson2d:400",
            "--maxit",
            "2",
            "--backend",
            "host",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("max_iterations"));
    let out = bin()
        .args(["solve", "--matrix", "/nonexistent.mtx"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error:") && err.contains("/nonexistent.mtx"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let out = bin()
        .args(["solve", "--generate", "fem2d:100", "--tol", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn solve_reads_matrix_market_files() {
    let dir = std::env::temp_dir().join(format!("pk-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = pipekrylov::matrix::generate::Generator::Poisson2d
        .generate::<f64>(64)
        .unwrap()
        .matrix;
    let path = dir.join("a.mtx");
    pipekrylov::matrix::matrix_market::write_matrix_file(&path, &a).unwrap();
    let out = bin()
        .args([
            "solve",
            "--matrix",
            path.to_str().unwrap(),
            "--solver",
            "gmres",
            "--rhs",
            "random",
            "--backend",
            "host",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bench_writes_csv_and_svg() {
    let dir = std::env::temp_dir().join(format!("pk-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("r.csv");
    let svg = dir.join("r.svg");
    let out = bin()
        .args([
            "bench",
            "--backends",
            "host",
            "--solvers",
            "cg,bicgstab,gmres",
            "--variants",
            "pipelined,classical",
            "--problem",
            "poisson2d",
            "--max-n",
            "1000",
            "--repeats",
            "3",
            "--warmup",
            "1",
            "--quiet",
            "--out",
            csv.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..15],
        &[
            "backend",
            "device",
            "solver",
            "variant",
            "precision",
            "problem",
            "n",
            "nnz",
            "median_s_per_iter",
            "min_s_per_iter",
            "max_s_per_iter",
            "launches_per_iter",
            "transfers_per_iter",
            "floor_s_per_iter",
            "floor_ratio"
        ]
    );
    let rows: Vec<&str> = lines.collect();
    // k = 15 and 31: 2 sizes x 3 solvers x 2 variants.
    assert_eq!(rows.len(), 12, "{text}");
    for r in &rows {
        assert!(r.starts_with("host,"), "{r}");
    }
    let cg = rows.iter().find(|r| r.contains(",cg,pipelined,")).unwrap();
    let cols: Vec<&str> = cg.split(',').collect();
    assert_eq!(
        cols[11].parse::<f64>().unwrap(),
        2.0,
        "launches per iteration"
    );
    let median: f64 = cols[8].parse().unwrap();
    let floor: f64 = cols[13].parse().unwrap();
    assert!(median > 0.0 && floor > 0.0);
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<svg") || svg_text.contains("<svg"));
    assert!(svg_text.contains("host pipelined") && svg_text.contains("CG"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("| backend | solver"));
}

/// `--problem NAME:N`: one size, the one closest to N unknowns, whatever the ladder holds.
#[test]
fn bench_runs_one_named_size() {
    let dir = std::env::temp_dir().join(format!("pk-bench-one-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("r.csv");
    let out = bin()
        .args([
            "bench",
            "--backends",
            "host",
            "--solvers",
            "cg",
            "--problem",
            "poisson3d:13824",
            "--repeats",
            "2",
            "--warmup",
            "1",
            "--quiet",
            "--out",
            csv.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    // 24^3 = 13824 is not on the 3D ladder (8, 16, 32, ...).
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].contains(",poisson3d,13824,"), "{}", rows[0]);
    let bad = bin()
        .args(["bench", "--backends", "host", "--problem", "poisson3d:0"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
}

/// `--tune key=value` reaches the backend, after the `PIPEKRYLOV_*` environment (the command line
/// wins); an unknown key or a bad value is an error naming it (exit 1). The knob: the DCGS2 step
/// in two kernels (`dcgs2_small_max_groups` 0), one launch more per GMRES step on the host.
#[test]
fn tune_sets_knobs_after_the_environment() {
    let launches = |env: Option<&str>, tune: &[&str]| {
        let mut cmd = bin();
        cmd.args([
            "solve",
            "--generate",
            "poisson2d:400",
            "--solver",
            "gmres",
            "--backend",
            "host",
            "--json",
        ]);
        for t in tune {
            cmd.args(["--tune", t]);
        }
        cmd.env_remove("PIPEKRYLOV_DCGS2_SMALL_MAX_GROUPS");
        if let Some(v) = env {
            cmd.env("PIPEKRYLOV_DCGS2_SMALL_MAX_GROUPS", v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{env:?} {tune:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["launches_per_iteration"].as_f64().unwrap()
    };
    let default = launches(None, &[]);
    let two_kernels = launches(None, &["dcgs2_small_max_groups=0"]);
    assert!(two_kernels - default > 0.9, "{two_kernels} vs {default}");
    assert_eq!(
        launches(Some("0"), &[]),
        two_kernels,
        "from the environment"
    );
    assert_eq!(
        launches(Some("0"), &["dcgs2_small_max_groups=32"]),
        default,
        "--tune after the environment"
    );
    for bad in ["no_such_knob=1", "cg_fused=2", "cg_fused"] {
        let out = bin()
            .args(["solve", "--generate", "poisson2d:400", "--backend", "host"])
            .args(["--tune", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        let key = bad.split('=').next().unwrap();
        assert!(err.contains(key) || err.contains("tune"), "{bad}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn info_lists_backends() {
    let out = bin().args(["info"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("host") && s.contains("auto picks"), "{s}");
}

#[test]
fn output_writes_the_solution_and_monitor_prints_the_history() {
    let dir = std::env::temp_dir().join(format!("pk-cli-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let x_path = dir.join("x.mtx");
    let out = bin()
        .args([
            "solve",
            "--generate",
            "poisson2d:1024",
            "--rhs",
            "a-ones",
            "--tol",
            "1e-12",
            "--backend",
            "host",
            "--monitor",
            "10",
            "--output",
            x_path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // b = A 1: the written solution is all ones.
    let x = pipekrylov::matrix::matrix_market::read_vector::<f64>(&x_path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(x.len(), 1024);
    assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-8), "{:?}", &x[..4]);
    // Iteration 0, every 10th, and the last, each with its residual.
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("residual")).collect();
    assert!(lines.len() >= 3, "{stderr}");
    assert!(
        lines[0].trim_start().starts_with("0 residual"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].trim_start().starts_with("10 residual"),
        "{}",
        lines[1]
    );
}
