//! Single-precision preconditioners inside double-precision solves
//! ([`PrecondPrecision::F32`]): every preconditioner, built on A rounded to f32, takes CG
//! (classical, as CG's automatic variant runs it) to the true residual of 1e-8 within 10%
//! (plus 1) of the iterations of its f64 version on 3D Poisson; it says so in its parameters; a values refresh equals a fresh f32 setup on the
//! new values; no preconditioner with f32 is a typed error; an f32 solve ignores the option.
//! Host and OpenCL (PoCL in CI) here; CUDA on the device with `--include-ignored`.

use crate::common::{pcg_a_ones, rand_vec, rel_diff};
use pipekrylov::backend::{Backend, BackendChoice};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{
    self, AmgOptions, Bilu0Options, IsaiOptions, PrecondKind, PrecondPrecision, PrecondSpec,
    Preconditioner,
};
use pipekrylov::solver::Variant;
use pipekrylov::{Error, Method, ReusableSolver};

/// 3D Poisson on a 16^3 grid.
fn poisson() -> CsrMatrix<f64> {
    Generator::Poisson3d
        .generate_with_param::<f64>(16)
        .unwrap()
        .matrix
}

/// Every preconditioner: `Narrowed` wraps all but AMG, which builds its own f32 hierarchy
/// (tested further in `tests/integration/amg_device_setup.rs`). AMG coarsens to 32 rows here:
/// with the default coarse size the GPU setup's cycle on this small grid solves it exactly
/// (1 iteration in f64), which an f32 hierarchy cannot match to 1e-8 in one step.
fn specs() -> Vec<PrecondSpec> {
    vec![
        PrecondKind::Jacobi.into(),
        PrecondSpec::PointBlockJacobi { block_size: 2 },
        PrecondSpec::BlockJacobi(Bilu0Options {
            subdomains: 4,
            ..Bilu0Options::default()
        }),
        PrecondKind::Bilu0.into(),
        PrecondSpec::Isai(IsaiOptions {
            level: 2,
            ..IsaiOptions::default()
        }),
        PrecondKind::Ip.into(),
        PrecondKind::Fsai.into(),
        PrecondKind::Afsai.into(),
        PrecondKind::Ilu.into(),
        PrecondSpec::Amg(AmgOptions {
            coarse_size: 32,
            ..AmgOptions::default()
        }),
    ]
}

/// PCG (b = A 1, x0 = 0; the f32 preconditioners run classical CG) with `m`: its iterations,
/// after checking the true residual.
fn cg_iterations<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    m: &dyn Preconditioner<B, f64>,
    what: &str,
) -> usize {
    let report = pcg_a_ones(b, a, Some(m));
    assert!(
        report.stop_reason.converged() && report.relative_true_residual <= 1.01e-8,
        "{what}: {report:?}"
    );
    report.iterations
}

fn apply<B: Backend>(b: &B, m: &dyn Preconditioner<B, f64>, r: &[f64]) -> Vec<f64> {
    let rd = b.upload(r).unwrap();
    let mut z = b.alloc(r.len()).unwrap();
    m.apply(b, &rd, &mut z).unwrap();
    b.download(&z).unwrap()
}

fn every_preconditioner_in_f32_converges<B: Backend + 'static>(b: &B) {
    let a = poisson();
    let r = rand_vec::<f64>(a.n_rows(), 3);
    for spec in specs() {
        let what = format!("{} {}", b.name(), spec.kind());
        let build = |p| {
            precond::build_in(b, &a, None, spec, p)
                .unwrap()
                .expect("a preconditioner")
        };
        let (m64, m32) = (build(PrecondPrecision::Solve), build(PrecondPrecision::F32));
        assert_eq!(m32.params()["precision"], "f32", "{what}");
        assert!(!m32.suits_pipelined(), "{what}");
        assert_eq!(m32.n(), a.n_rows(), "{what}");
        // The f32 preconditioner is the f64 one to about f32's rounding (adaptive FSAI's
        // growth compares f32 gains, so it may pick other entries).
        let d = rel_diff(&apply(b, m32.as_ref(), &r), &apply(b, m64.as_ref(), &r));
        let within = if spec.kind() == PrecondKind::Afsai {
            1e-1
        } else {
            1e-4
        };
        assert!(
            d > 0.0 && d < within,
            "{what}: f32 against f64 application {d:e}"
        );
        let (its64, its32) = (
            cg_iterations(b, &a, m64.as_ref(), &what),
            cg_iterations(b, &a, m32.as_ref(), &what),
        );
        println!("{what}: CG iterations {its64} (f64), {its32} (f32, classical)");
        assert!(
            its32 as f64 <= 1.1 * its64 as f64 + 1.0,
            "{what}: {its32} iterations against {its64}"
        );
    }
    // Matrices read by the application are stored in half the bytes' values: FSAI's memory
    // (G and G^T) shrinks although the two f32 vectors are added.
    let memory = |p| {
        precond::build_in(b, &a, None, PrecondKind::Fsai.into(), p)
            .unwrap()
            .unwrap()
            .memory_bytes()
    };
    assert!(memory(PrecondPrecision::F32) < memory(PrecondPrecision::Solve));
}

/// A values refresh of an f32 preconditioner applies as a fresh f32 setup on the new values;
/// through a reusable solver, its solve equals a fresh solver's.
fn refresh_equals_a_fresh_f32_setup<B: Backend + 'static>(b: &B, choice: BackendChoice) {
    let a = poisson();
    let mut a2 = a.clone();
    let n = a.n_rows();
    a2.values_mut()
        .iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v *= 2.0 + (i % 3) as f64 * 1e-3);
    // Symmetric again: (A2 + A2^T) / 2 keeps the pattern.
    let t = a2.transpose();
    for (v, w) in a2.values_mut().iter_mut().zip(t.values()) {
        *v = 0.5 * (*v + w);
    }
    let r = rand_vec::<f64>(n, 9);
    // (Adaptive FSAI's refresh keeps the grown pattern, which a fresh setup grows again, and
    // AMG's keeps the aggregates, which a fresh setup forms from the new couplings:
    // `values_refresh_amg_fsai.rs` and `amg_device_setup.rs` check them.)
    let kept_differs = |s: &PrecondSpec| matches!(s.kind(), PrecondKind::Afsai | PrecondKind::Amg);
    for spec in specs().into_iter().filter(|s| !kept_differs(s)) {
        let what = format!("{} {}", b.name(), spec.kind());
        let mut m = precond::build_in(b, &a, None, spec, PrecondPrecision::F32)
            .unwrap()
            .unwrap();
        m.update_values(b, &a2, None).unwrap();
        let fresh = precond::build_in(b, &a2, None, spec, PrecondPrecision::F32)
            .unwrap()
            .unwrap();
        assert_eq!(m.built_for(), fresh.built_for(), "{what}");
        let d = rel_diff(&apply(b, m.as_ref(), &r), &apply(b, fresh.as_ref(), &r));
        assert!(d < 1e-6, "{what}: refreshed against fresh, {d:e}");
    }
    let solver = |m: &CsrMatrix<f64>| {
        ReusableSolver::builder(m)
            .backend(choice)
            .method(Method::Cg)
            .precond(PrecondKind::Fsai)
            .precond_precision(PrecondPrecision::F32)
            .rtol(1e-10)
            .build()
            .unwrap()
    };
    let rhs = vec![1.0; n];
    let mut refreshed = solver(&a);
    refreshed.solve(&rhs).unwrap();
    refreshed.update_values(&a2).unwrap();
    let (s1, s2) = (
        refreshed.solve(&rhs).unwrap(),
        solver(&a2).solve(&rhs).unwrap(),
    );
    assert_eq!(s1.report.iterations, s2.report.iterations);
    assert_eq!(s1.report.variant, Variant::Classical);
    assert!(rel_diff(&s1.x, &s2.x) < 1e-12);
}

/// f32 without a preconditioner is a typed error; in an f32 solve the option changes nothing.
fn nothing_to_narrow_and_f32_solves<B: Backend + 'static>(b: &B) {
    let a = poisson();
    assert!(matches!(
        precond::build_in(b, &a, None, PrecondSpec::None, PrecondPrecision::F32),
        Err(Error::InvalidParameter { .. })
    ));
    let a32 = a.cast::<f32>();
    let m = precond::build_in(
        b,
        &a32,
        None,
        PrecondKind::Fsai.into(),
        PrecondPrecision::F32,
    )
    .unwrap()
    .unwrap();
    assert!(m.params().get("precision").is_none());
}

#[test]
fn host_every_preconditioner_in_f32_converges() {
    every_preconditioner_in_f32_converges(&pipekrylov::backend::host::HostBackend::new());
}
#[test]
fn host_refresh_equals_a_fresh_f32_setup() {
    refresh_equals_a_fresh_f32_setup(
        &pipekrylov::backend::host::HostBackend::new(),
        BackendChoice::Host,
    );
}
#[test]
fn host_nothing_to_narrow_and_f32_solves() {
    nothing_to_narrow_and_f32_solves(&pipekrylov::backend::host::HostBackend::new());
}

#[cfg(feature = "opencl")]
mod opencl {
    use pipekrylov::backend::opencl::OpenClBackend;
    use pipekrylov::backend::BackendChoice;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_every_preconditioner_in_f32_converges() {
        super::every_preconditioner_in_f32_converges(&backend());
    }
    #[test]
    fn opencl_refresh_equals_a_fresh_f32_setup() {
        super::refresh_equals_a_fresh_f32_setup(&backend(), BackendChoice::OpenCl);
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
    fn cuda_every_preconditioner_in_f32_converges() {
        super::every_preconditioner_in_f32_converges(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_refresh_equals_a_fresh_f32_setup() {
        super::refresh_equals_a_fresh_f32_setup(&backend(), BackendChoice::Cuda);
    }
}
