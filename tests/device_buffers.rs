//! Solving with vectors that already live on the backend (`ReusableSolver::solve_buffers`) and
//! with CUDA memory the caller allocated (`CudaBackend::borrow_device_memory`): the same
//! iterates as the host-vector solve, nothing freed that the caller owns, bad pointers typed.

use pipekrylov::backend::{BackendChoice, VectorOps};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::precond::PrecondKind;
use pipekrylov::{Method, ReusableSolver};

fn solver(backend: BackendChoice) -> (ReusableSolver<f64>, Vec<f64>) {
    let a = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
    let b: Vec<f64> = (0..a.n_rows()).map(|i| 1.0 + (i % 7) as f64).collect();
    let s = ReusableSolver::builder(&a)
        .method(Method::Cg)
        .precond(PrecondKind::Jacobi)
        .rtol(1e-10)
        .backend(backend)
        .build()
        .unwrap();
    (s, b)
}

#[test]
fn solve_buffers_matches_the_host_vector_solve() {
    let (mut s, b) = solver(BackendChoice::Host);
    let reference = s.solve(&b).unwrap();
    let (bd, mut xd, short) = {
        let be = s.backend().0;
        let bd = be.upload(&b).unwrap();
        (
            bd,
            be.alloc::<f64>(b.len()).unwrap(),
            be.alloc::<f64>(3).unwrap(),
        )
    };
    let report = s.solve_buffers(&bd, &mut xd, None).unwrap();
    assert!(report.stop_reason.converged());
    assert_eq!(report.iterations, reference.report.iterations);
    assert_eq!(s.backend().0.download(&xd).unwrap(), reference.x);
    // A buffer of the wrong length is a typed error.
    let err = s.solve_buffers(&short, &mut xd, None).unwrap_err();
    assert!(err.to_string().contains("right-hand side"), "{err}");
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use pipekrylov::backend::AnyBackend;
    use pipekrylov::Error;

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn borrowed_cuda_memory_is_solved_in_place() {
        let (mut s, b) = solver(BackendChoice::Cuda);
        let reference = s.solve(&b).unwrap();
        // Memory "of the caller": allocated here, reached by the solver only by address.
        let (owner_b, owner_x, bd, mut xd) = {
            let AnyBackend::Cuda(cuda) = s.backend().0 else {
                panic!("not on CUDA")
            };
            let owner_b = cuda.upload(&b).unwrap();
            let owner_x = cuda.alloc::<f64>(b.len()).unwrap();
            let pb = cuda.device_address(&owner_b).unwrap();
            let px = cuda.device_address(&owner_x).unwrap();
            // SAFETY: both allocations outlive the borrowed buffers; nothing else uses them.
            let (bd, xd) = unsafe {
                (
                    cuda.borrow_device_memory::<f64>(pb, b.len()).unwrap(),
                    cuda.borrow_device_memory::<f64>(px, b.len()).unwrap(),
                )
            };
            (owner_b, owner_x, bd, xd)
        };
        let report = s.solve_buffers(&bd, &mut xd, None).unwrap();
        assert_eq!(report.iterations, reference.report.iterations);
        drop((bd, xd));
        // The solution is in the caller's allocation, which dropping the borrows left alone.
        assert_eq!(s.backend().0.download(&owner_x).unwrap(), reference.x);
        assert_eq!(s.backend().0.download(&owner_b).unwrap(), b);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn bad_device_pointers_are_typed_errors() {
        let (s, b) = solver(BackendChoice::Cuda);
        let AnyBackend::Cuda(cuda) = s.backend().0 else {
            panic!("not on CUDA")
        };
        let owner = cuda.alloc::<f64>(100).unwrap();
        let p = cuda.device_address(&owner).unwrap();
        let host = b.as_ptr() as u64;
        // SAFETY: every call is refused before the memory would be used.
        unsafe {
            for (ptr, len, why) in [
                (host, 10, "not CUDA device memory"),
                (p + 4, 10, "aligned"),
                (p, 101, "run past the end"),
                (p + 8 * 50, 51, "run past the end"),
            ] {
                match cuda.borrow_device_memory::<f64>(ptr, len) {
                    Err(e @ Error::InvalidParameter { .. }) => {
                        assert!(e.to_string().contains(why), "{e}")
                    }
                    other => panic!("{ptr:#x} x {len}: {:?}", other.map(|_| ())),
                }
            }
            // In bounds: fine (the last 50 values).
            assert!(cuda.borrow_device_memory::<f64>(p + 8 * 50, 50).is_ok());
        }
    }
}
