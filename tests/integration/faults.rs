//! Fault injection (issue 17, RELIABILITY rows 3 and 16). A NaN written into a device buffer in
//! the middle of a solve stops it with `NanOrInf` where it entered, `x` holding the last finite
//! iterate. A device allocation that fails in the middle of a solver's setup — preconditioner build or Krylov workspace — comes back as
//! `OutOfMemory`, builds nothing half-way (the setup returns no object), leaves the caller's
//! buffers as they were, and the backend solves normally right after. Every allocation of the
//! setup is made to fail in turn (`VectorOps::fail_allocation`), on the host and on OpenCL
//! (PoCL in CI; CUDA on a GPU).

use crate::common::rand_vec;
use pipekrylov::backend::{Backend, MatrixFormat};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::{build, PrecondKind, PrecondSpec};
use pipekrylov::solver::{BiCgStab, Cg, Gmres, Params, SolveReport};
use pipekrylov::Error;

/// Preconditioner build + solver setup (the allocations under test), then a solve.
#[allow(clippy::too_many_arguments)]
fn setup_and_solve<B: Backend + 'static>(
    b: &B,
    a: &pipekrylov::matrix::CsrMatrix<f64>,
    m: &pipekrylov::backend::DeviceMatrix<f64>,
    solver: &str,
    precond: PrecondKind,
    rhs: &pipekrylov::backend::Buffer<f64>,
    x: &mut pipekrylov::backend::Buffer<f64>,
    fail_at: Option<u64>,
) -> Result<SolveReport, Error> {
    let params = Params {
        rtol: 1e-8,
        max_iter: 2000,
        ..Params::default()
    };
    b.fail_allocation(fail_at);
    let setup = (|| {
        let spec = PrecondSpec::from(precond);
        let pc = build(b, a, spec)?;
        Ok::<_, Error>(pc)
    })();
    let pc = match setup {
        Ok(pc) => pc,
        Err(e) => {
            b.fail_allocation(None);
            return Err(e);
        }
    };
    let pc = pc.as_deref();
    let result = match solver {
        "cg" => Cg::new(b, m, pc, params).map(|mut s| {
            b.fail_allocation(None);
            s.solve(rhs, x)
        }),
        "bicgstab" => BiCgStab::new(b, m, pc, params).map(|mut s| {
            b.fail_allocation(None);
            s.solve(rhs, x)
        }),
        _ => Gmres::new(b, m, pc, params).map(|mut s| {
            b.fail_allocation(None);
            s.solve(rhs, x)
        }),
    };
    b.fail_allocation(None);
    result?
}

fn allocation_failures_during_setup<B: Backend + 'static>(b: &B) {
    let cases = [
        (Generator::Poisson2d, "cg", PrecondKind::None),
        (Generator::Poisson2d, "cg", PrecondKind::Jacobi),
        (Generator::ConvDiff3d, "bicgstab", PrecondKind::Jacobi),
        (Generator::ConvDiff3d, "gmres", PrecondKind::None),
        (Generator::ConvDiff3d, "gmres", PrecondKind::Bilu0),
    ];
    for (g, solver, precond) in cases {
        let a = g.generate::<f64>(1000).unwrap().matrix;
        let n = a.n_rows();
        let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let (b0, x0) = (rand_vec::<f64>(n, 3), rand_vec::<f64>(n, 4));
        let rhs = b.upload(&b0).unwrap();
        let label = format!("{} {solver} {precond:?} on {g:?}", b.name());
        let mut failures = 0;
        let mut k = 1;
        let report = loop {
            let mut x = b.upload(&x0).unwrap();
            match setup_and_solve(b, &a, &m, solver, precond, &rhs, &mut x, Some(k)) {
                Err(Error::OutOfMemory { detail, .. }) => {
                    assert!(detail.contains("injected"), "{label}: {detail}");
                    // Nothing was solved: the caller's buffers are as they were.
                    assert_eq!(b.download(&x).unwrap(), x0, "{label}: x after failure {k}");
                    assert_eq!(
                        b.download(&rhs).unwrap(),
                        b0,
                        "{label}: b after failure {k}"
                    );
                    failures += 1;
                }
                Err(other) => panic!("{label}: allocation {k}: {other:?}"),
                Ok(report) => break report,
            }
            k += 1;
            assert!(k < 500, "{label}: the setup never stopped allocating");
        };
        // Every allocation of the setup failed once (at least the workspace's), and the solve
        // after the last injected failure is a normal one.
        assert!(failures >= 3, "{label}: only {failures} allocations");
        eprintln!("{label}: {failures} allocations failed in turn, each cleanly");
        assert!(
            report.stop_reason.converged(),
            "{label}: {:?}",
            report.stop_reason
        );
        // A clean solve from the same start gives the same answer: nothing was left behind.
        let mut x = b.upload(&x0).unwrap();
        let clean = setup_and_solve(b, &a, &m, solver, precond, &rhs, &mut x, None).unwrap();
        assert_eq!(clean.iterations, report.iterations, "{label}");
    }
}

#[test]
fn host_allocation_failures_during_setup() {
    allocation_failures_during_setup(&pipekrylov::backend::host::HostBackend::new());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_allocation_failures_during_setup() {
    let b = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    allocation_failures_during_setup(&b);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_allocation_failures_during_setup() {
    let b = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    allocation_failures_during_setup(&b);
}

/// Jacobi, except that its `at`-th application (`persistent`: and every later one) writes NaN
/// into z: a NaN injected into a device buffer in the middle of a solve.
struct NanOnApply {
    inner: pipekrylov::precond::Jacobi<f64>,
    calls: std::sync::atomic::AtomicUsize,
    at: usize,
    persistent: bool,
}

impl<B: Backend> pipekrylov::precond::Preconditioner<B, f64> for NanOnApply {
    fn name(&self) -> &'static str {
        "nan-on-apply"
    }
    fn n(&self) -> usize {
        pipekrylov::precond::Preconditioner::<B, f64>::n(&self.inner)
    }
    fn apply(
        &self,
        backend: &B,
        r: &pipekrylov::backend::Buffer<f64>,
        z: &mut pipekrylov::backend::Buffer<f64>,
    ) -> pipekrylov::Result<()> {
        self.inner.apply(backend, r, z)?;
        let k = 1 + self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if k == self.at || (self.persistent && k > self.at) {
            backend.fill(z, f64::NAN)?;
        }
        Ok(())
    }
    fn launches_per_apply(&self) -> usize {
        2
    }
    fn setup_times(&self) -> pipekrylov::precond::SetupTimes {
        pipekrylov::precond::SetupTimes::default()
    }
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// A NaN in the middle of a solve stops it with `NanOrInf` near where it entered. The
/// synchronous modes see a single NaN; the device-resident mode recomputes the products of an
/// iteration it hands to the host (the applications run again), so a NaN that one application
/// wrote and the next one overwrote is gone by then and the solve goes on correctly: CG and
/// BiCGStab are tested there with a NaN that stays (every application from the 6th on).
fn nan_injected_mid_solve<B: Backend + 'static>(b: &B) {
    use pipekrylov::solver::{Execution, StopReason, Variant};
    let at = 6;
    for (g, solver) in [
        (Generator::Poisson2d, "cg"),
        (Generator::ConvDiff3d, "bicgstab"),
        (Generator::ConvDiff3d, "gmres"),
    ] {
        let a = g.generate::<f64>(4096).unwrap().matrix;
        let n = a.n_rows();
        let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        for (variant, execution) in [
            (Variant::Pipelined, Execution::Synchronous),
            (Variant::Pipelined, Execution::DeviceResident),
            (Variant::Classical, Execution::Synchronous),
        ] {
            let pc = NanOnApply {
                inner: pipekrylov::precond::Jacobi::new(b, &a).unwrap(),
                calls: Default::default(),
                at,
                // GMRES does not recompute: a single NaN as in the synchronous mode.
                persistent: execution == Execution::DeviceResident && solver != "gmres",
            };
            let params = Params {
                rtol: 1e-12,
                max_iter: 500,
                variant,
                execution,
                ..Params::default()
            };
            let rhs = b.upload(&rand_vec::<f64>(n, 7)).unwrap();
            let mut x = b.alloc::<f64>(n).unwrap();
            let pc: Option<&dyn pipekrylov::precond::Preconditioner<B, f64>> = Some(&pc);
            let r = match solver {
                "cg" => Cg::new(b, &m, pc, params).unwrap().solve(&rhs, &mut x),
                "bicgstab" => BiCgStab::new(b, &m, pc, params)
                    .unwrap()
                    .solve(&rhs, &mut x),
                _ => Gmres::new(b, &m, pc, params).unwrap().solve(&rhs, &mut x),
            }
            .unwrap();
            let label = format!("{} {solver} {variant} {execution:?}", b.name());
            assert_eq!(r.stop_reason, StopReason::NanOrInf, "{label}");
            // Stopped where the NaN entered (BiCGStab applies M twice per iteration).
            assert!(
                r.iterations <= at + 1 && r.iterations + 2 >= at / 2,
                "{label}: {} iterations",
                r.iterations
            );
            let xs = b.download(&x).unwrap();
            assert!(
                xs.iter().all(|v| v.is_finite()),
                "{label}: x must hold the last finite iterate"
            );
            eprintln!(
                "{label}: NaN at apply {at}, stopped after {} iterations",
                r.iterations
            );
        }
    }
}

#[test]
fn host_nan_injected_mid_solve() {
    nan_injected_mid_solve(&pipekrylov::backend::host::HostBackend::new());
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_nan_injected_mid_solve() {
    let b = pipekrylov::backend::opencl::OpenClBackend::from_env()
        .expect("an OpenCL device (PoCL in CI)");
    nan_injected_mid_solve(&b);
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_nan_injected_mid_solve() {
    let b = pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device");
    nan_injected_mid_solve(&b);
}

/// Jacobi, except that its `at`-th application first makes the backend behave as after a sticky
/// device fault (`VectorOps::inject_device_fault`).
struct FaultOnApply {
    inner: pipekrylov::precond::Jacobi<f64>,
    calls: std::sync::atomic::AtomicUsize,
    at: usize,
}

impl<B: Backend> pipekrylov::precond::Preconditioner<B, f64> for FaultOnApply {
    fn name(&self) -> &'static str {
        "fault-on-apply"
    }
    fn n(&self) -> usize {
        pipekrylov::precond::Preconditioner::<B, f64>::n(&self.inner)
    }
    fn apply(
        &self,
        backend: &B,
        r: &pipekrylov::backend::Buffer<f64>,
        z: &mut pipekrylov::backend::Buffer<f64>,
    ) -> pipekrylov::Result<()> {
        let k = 1 + self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if k == self.at {
            backend.inject_device_fault();
        }
        self.inner.apply(backend, r, z)
    }
    fn launches_per_apply(&self) -> usize {
        1
    }
    fn setup_times(&self) -> pipekrylov::precond::SetupTimes {
        pipekrylov::precond::SetupTimes::default()
    }
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// A sticky device fault in the middle of a solve (RELIABILITY row 20): the solve returns
/// `DeviceFault` (no hang, no panic), and so does every later call on that backend; a fresh
/// backend object works. `make` creates a backend; `None` from `inject_device_fault` (a backend
/// without a device) is checked to change nothing.
fn sticky_fault_mid_solve<B: Backend + 'static>(make: impl Fn() -> B) {
    use pipekrylov::solver::Execution;
    let cases = [
        (Generator::Poisson2d, "cg", Execution::Synchronous),
        (Generator::Poisson2d, "cg", Execution::DeviceResident),
        (Generator::ConvDiff3d, "bicgstab", Execution::Synchronous),
        (Generator::ConvDiff3d, "bicgstab", Execution::DeviceResident),
        (Generator::ConvDiff3d, "gmres", Execution::DeviceResident),
    ];
    for (g, solver, execution) in cases {
        let b = make();
        let a = g.generate::<f64>(4096).unwrap().matrix;
        let n = a.n_rows();
        let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        let pc = FaultOnApply {
            inner: pipekrylov::precond::Jacobi::new(&b, &a).unwrap(),
            calls: Default::default(),
            at: 9,
        };
        let params = Params {
            rtol: 1e-12,
            max_iter: 500,
            execution,
            ..Params::default()
        };
        let rhs = b.upload(&rand_vec::<f64>(n, 7)).unwrap();
        let mut x = b.alloc::<f64>(n).unwrap();
        let pcd: Option<&dyn pipekrylov::precond::Preconditioner<B, f64>> = Some(&pc);
        let t0 = std::time::Instant::now();
        let r = match solver {
            "cg" => Cg::new(&b, &m, pcd, params).unwrap().solve(&rhs, &mut x),
            "bicgstab" => BiCgStab::new(&b, &m, pcd, params)
                .unwrap()
                .solve(&rhs, &mut x),
            _ => Gmres::new(&b, &m, pcd, params).unwrap().solve(&rhs, &mut x),
        };
        let label = format!("{} {solver} {execution:?}", b.name());
        let faulted = b.inject_device_fault();
        if !faulted {
            // No device: the injection changes nothing and the solve converged.
            assert!(r.unwrap().stop_reason.converged(), "{label}");
            continue;
        }
        assert!(
            matches!(r, Err(Error::DeviceFault { .. })),
            "{label}: expected a device fault, got {r:?}"
        );
        assert!(t0.elapsed().as_secs() < 30, "{label}: took too long");
        // Every later call says so.
        assert!(
            matches!(b.alloc::<f64>(4), Err(Error::DeviceFault { .. })),
            "{label}"
        );
        assert!(
            matches!(b.download(&x), Err(Error::DeviceFault { .. })),
            "{label}"
        );
        assert!(
            matches!(b.upload(&[1.0f64]), Err(Error::DeviceFault { .. })),
            "{label}"
        );
        let again = Cg::new(&b, &m, None, Params::default());
        assert!(
            again.is_err(),
            "{label}: a solver set up on a faulted backend"
        );
        eprintln!("{label}: device fault reported, backend refuses later calls");
    }
    // A fresh backend object solves normally.
    let b = make();
    let a = Generator::Poisson2d.generate::<f64>(1024).unwrap().matrix;
    let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let rhs = b.upload(&vec![1.0; a.n_rows()]).unwrap();
    let mut x = b.alloc::<f64>(a.n_rows()).unwrap();
    let r = Cg::new(&b, &m, None, Params::default())
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert!(r.stop_reason.converged());
}

#[test]
fn host_sticky_fault_mid_solve() {
    sticky_fault_mid_solve(pipekrylov::backend::host::HostBackend::new);
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_sticky_fault_mid_solve() {
    sticky_fault_mid_solve(|| {
        pipekrylov::backend::opencl::OpenClBackend::from_env()
            .expect("an OpenCL device (PoCL in CI)")
    });
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
fn cuda_sticky_fault_mid_solve() {
    sticky_fault_mid_solve(|| {
        pipekrylov::backend::cuda::CudaBackend::from_env().expect("a CUDA device")
    });
}
