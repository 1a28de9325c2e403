//! Soak test: thousands of consecutive solves on one backend object (sizes, solvers, variants,
//! preconditioners, and failing ones: NaN right-hand sides, an indefinite matrix, a
//! preconditioner for another matrix) with no growth of the process's resident memory beyond a
//! small bound after the warm-up (caches of the backend and the allocator settle there).

use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{build, PrecondKind, PrecondSpec};
use pipekrylov::solver::{BiCgStab, Cg, Gmres, Params, Variant};

/// Resident set size in bytes (Linux), or `None`.
fn rss_bytes() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// One round of varied solves, failing ones included; returns how many failed as expected.
fn round<B: Backend + 'static>(b: &B, k: usize, mats: &[CsrMatrix<f64>]) -> usize {
    let a = &mats[k % mats.len()];
    let n = a.n_rows();
    let m = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let variant = if k % 2 == 0 {
        Variant::Pipelined
    } else {
        Variant::Classical
    };
    let params = Params {
        rtol: 1e-6,
        max_iter: 200,
        variant,
        ..Params::default()
    };
    let kinds = [
        PrecondKind::None,
        PrecondKind::Jacobi,
        PrecondKind::Bilu0,
        PrecondKind::Fsai,
    ];
    let spec = PrecondSpec::from(kinds[k % kinds.len()]);
    let pc = build(b, a, spec).ok().flatten();
    let mut rhs = vec![1.0; n];
    let mut expected_failures = 0;
    if k % 7 == 3 {
        rhs[n / 2] = f64::NAN; // a typed error, nothing allocated for good
        expected_failures += 1;
    }
    let rhs = b.upload(&rhs).unwrap();
    let mut x = b.alloc(n).unwrap();
    b.fill(&mut x, 0.0).unwrap();
    let pc = pc.as_deref();
    let r = match k % 3 {
        0 => Cg::new(b, &m, pc, params).and_then(|mut s| s.solve(&rhs, &mut x)),
        1 => BiCgStab::new(b, &m, pc, params).and_then(|mut s| s.solve(&rhs, &mut x)),
        _ => Gmres::new(b, &m, pc, params).and_then(|mut s| s.solve(&rhs, &mut x)),
    };
    if r.is_err() {
        assert_eq!(
            expected_failures,
            1,
            "round {k}: unexpected error {:?}",
            r.err()
        );
    }
    // A preconditioner built for another matrix is refused.
    if k % 11 == 5 {
        let other = &mats[(k + 1) % mats.len()];
        if let Ok(Some(p2)) = build(b, other, PrecondSpec::from(PrecondKind::Jacobi)) {
            if p2.n() == n {
                assert!(Cg::new(b, &m, Some(p2.as_ref()), params).is_err());
            }
        }
    }
    expected_failures
}

fn soak<B: Backend + 'static>(b: &B, rounds: usize) {
    let mats: Vec<CsrMatrix<f64>> = vec![
        Generator::Poisson2d.generate_with_param(20).unwrap().matrix,
        Generator::Poisson2d.generate_with_param(21).unwrap().matrix,
        Generator::Poisson3d.generate_with_param(8).unwrap().matrix,
        Generator::Aniso2d.generate_with_param(20).unwrap().matrix,
        Generator::Fem2d.generate_with_param(4).unwrap().matrix,
    ];
    for k in 0..200 {
        round(b, k, &mats);
    }
    let Some(before) = rss_bytes() else { return };
    let mut failures = 0;
    for k in 200..200 + rounds {
        failures += round(b, k, &mats);
    }
    let after = rss_bytes().unwrap();
    assert!(failures > 0, "the failing solves ran");
    let growth = after.saturating_sub(before);
    eprintln!(
        "{}: resident memory {} -> {} KiB over {rounds} solves",
        b.name(),
        before >> 10,
        after >> 10
    );
    assert!(
        growth < 4 << 20,
        "{}: resident memory grew by {} KiB over {rounds} solves ({} -> {} KiB)",
        b.name(),
        growth >> 10,
        before >> 10,
        after >> 10
    );
}

/// Set in the child process that runs [`soak_in_this_process`].
const CHILD: &str = "PK_SOAK_CHILD";

/// The soak in a process of its own: the resident memory is the process's, and the other tests
/// of this binary allocate in parallel (in the same process, the GPU tests' contexts grew it by
/// 91 MiB during the 2000 solves on the H200). The test binary runs itself with only
/// [`soak_in_this_process`]; its output is shown on failure.
#[test]
fn thousands_of_solves_do_not_grow_memory() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "soak::soak_in_this_process",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    eprintln!("{stderr}");
    assert!(out.status.success(), "the soak failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the soak did not run:\n{stdout}"
    );
    assert!(stderr.contains("resident memory"), "{stderr}");
}

/// The soak itself, one test (not one per backend) so that nothing else allocates while the
/// resident memory is measured; it does nothing outside the child process that
/// [`thousands_of_solves_do_not_grow_memory`] starts. A leak of one vector of the largest
/// system per solve (3.5 KiB, 7 MiB over 2000 solves) exceeds the 4 MiB bound.
#[test]
fn soak_in_this_process() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    soak(&HostBackend::new(), 2000);
    #[cfg(feature = "opencl")]
    soak(
        &pipekrylov::backend::opencl::OpenClBackend::from_env()
            .expect("an OpenCL device (PoCL in CI)"),
        1000,
    );
}
