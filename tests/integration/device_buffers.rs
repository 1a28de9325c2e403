//! Solving with vectors that already live on the backend (`ReusableSolver::solve_buffers`) and
//! with CUDA memory or OpenCL memory objects the caller allocated
//! (`CudaBackend::borrow_device_memory`, `OpenClBackend::borrow_cl_mem`; with OpenCL also the
//! matrix's arrays, `ReusableSolver::on_device`): the same iterates as the host-vector solve,
//! nothing freed that the caller owns, bad pointers typed.

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

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use ocl::ffi;
    use pipekrylov::backend::opencl::OpenClBackend;
    use pipekrylov::backend::AnyBackend;
    use pipekrylov::Error;
    use std::ffi::c_void;

    /// A buffer "of the caller": created with the raw OpenCL API in `context`, `len` f64
    /// (filled from `init` when given), released by the caller with `release`.
    fn create(context: *mut c_void, len: usize, init: Option<&[f64]>) -> ffi::cl_mem {
        let mut err = 0;
        let (flags, host) = match init {
            Some(v) => (
                ffi::CL_MEM_READ_WRITE | ffi::CL_MEM_COPY_HOST_PTR,
                v.as_ptr() as *mut c_void,
            ),
            None => (ffi::CL_MEM_READ_WRITE, std::ptr::null_mut()),
        };
        // SAFETY: a valid context; `host` (when given) holds `len` values, copied at creation.
        let mem = unsafe { ffi::clCreateBuffer(context.cast(), flags, len * 8, host, &mut err) };
        assert_eq!(err, ffi::CL_SUCCESS);
        mem
    }

    fn release(mem: ffi::cl_mem) {
        // SAFETY: the reference `create` made, released once.
        assert_eq!(unsafe { ffi::clReleaseMemObject(mem) }, ffi::CL_SUCCESS);
    }

    fn on_opencl(s: &ReusableSolver<f64>) -> &OpenClBackend {
        match s.backend().0 {
            AnyBackend::OpenCl(cl) => cl,
            _ => panic!("not on OpenCL"),
        }
    }

    #[test]
    fn borrowed_cl_mem_is_solved_in_place() {
        let (mut s, b) = solver(BackendChoice::OpenCl);
        let reference = s.solve(&b).unwrap();
        let n = b.len();
        // The backend's own buffers: what a solve without host vectors transfers.
        let (own_b, mut own_x) = {
            let cl = on_opencl(&s);
            (cl.upload(&b).unwrap(), cl.alloc::<f64>(n).unwrap())
        };
        let before = s.backend().0.counters();
        s.solve_buffers(&own_b, &mut own_x, None).unwrap();
        let own_transfers = (s.backend().0.counters() - before).transfers;
        // The caller's memory objects, reached by the solver only through their handles.
        let context = on_opencl(&s).raw_context();
        // (x holds the initial guess: zeros, as the reference solve's.)
        let zeros = vec![0.0; n];
        let (mb, mx) = (
            create(context, n, Some(&b)),
            create(context, n, Some(&zeros)),
        );
        // SAFETY: valid memory objects of this context; nothing else uses them meanwhile.
        let (bd, mut xd) = unsafe {
            let cl = on_opencl(&s);
            (
                cl.borrow_cl_mem::<f64>(mb.cast(), n).unwrap(),
                cl.borrow_cl_mem::<f64>(mx.cast(), n).unwrap(),
            )
        };
        assert_eq!(on_opencl(&s).cl_mem(&xd).unwrap(), mx.cast());
        let before = s.backend().0.counters();
        let report = s.solve_buffers(&bd, &mut xd, None).unwrap();
        let transfers = (s.backend().0.counters() - before).transfers;
        assert_eq!(report.iterations, reference.report.iterations);
        // No upload or download of a vector: the transfers of the backend's own buffers.
        assert_eq!(transfers, own_transfers);
        // The caller releases its references first: the borrows keep the memory alive.
        release(mb);
        release(mx);
        assert_eq!(s.backend().0.download(&xd).unwrap(), reference.x);
        assert_eq!(s.backend().0.download(&bd).unwrap(), b);
    }

    #[test]
    fn bad_memory_objects_are_typed_errors() {
        let (s, _) = solver(BackendChoice::OpenCl);
        let cl = on_opencl(&s);
        let mem = create(cl.raw_context(), 100, None);
        // Another context: the caller's own on the same device (a second backend shares the
        // first one's).
        let other = OpenClBackend::from_env().unwrap();
        let own_context = context_on_the_device_of(cl.raw_context());
        let foreign = create(own_context, 100, None);
        // SAFETY: NULL or valid memory objects; every call is refused before any use.
        unsafe {
            for (m, len, why) in [
                (std::ptr::null_mut(), 1, "NULL"),
                (mem, 101, "do not fit"),
                (foreign, 10, "another OpenCL context"),
            ] {
                match cl.borrow_cl_mem::<f64>(m.cast(), len) {
                    Err(e @ Error::InvalidParameter { .. }) => {
                        assert!(e.to_string().contains(why), "{e}")
                    }
                    other => panic!("{why}: {:?}", other.map(|_| ())),
                }
            }
            assert!(cl.borrow_cl_mem::<f64>(mem.cast(), 100).is_ok());
        }
        // A buffer of another backend has no handle here.
        let theirs = other.alloc::<f64>(4).unwrap();
        assert!(matches!(
            cl.cl_mem(&theirs),
            Err(Error::WrongBackend { .. })
        ));
        release(mem);
        release(foreign);
        // SAFETY: the reference `context_on_the_device_of` made, released once.
        assert_eq!(
            unsafe { ffi::clReleaseContext(own_context.cast()) },
            ffi::CL_SUCCESS
        );
    }

    /// A new context on the device of `context` (the caller's own, not the backend's).
    fn context_on_the_device_of(context: *mut c_void) -> *mut c_void {
        let mut device: ffi::cl_device_id = std::ptr::null_mut();
        // SAFETY: a valid context of one device; one device id is written.
        let code = unsafe {
            ffi::clGetContextInfo(
                context.cast(),
                ffi::CL_CONTEXT_DEVICES,
                std::mem::size_of::<ffi::cl_device_id>(),
                (&mut device as *mut ffi::cl_device_id).cast(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(code, ffi::CL_SUCCESS);
        let mut err = 0;
        // SAFETY: a valid device id; no properties, no callback.
        let own = unsafe {
            ffi::clCreateContext(
                std::ptr::null(),
                1,
                &device,
                None,
                std::ptr::null_mut(),
                &mut err,
            )
        };
        assert_eq!(err, ffi::CL_SUCCESS);
        own.cast()
    }

    /// Memory objects holding `data`, "of the caller" as in `create`.
    fn create_from<T: bytemuck::Pod>(context: *mut c_void, data: &[T]) -> ffi::cl_mem {
        let mut err = 0;
        let flags = ffi::CL_MEM_READ_WRITE | ffi::CL_MEM_COPY_HOST_PTR;
        let bytes = std::mem::size_of_val(data);
        // SAFETY: a valid context; `data` holds `bytes` bytes, copied at creation.
        let mem = unsafe {
            ffi::clCreateBuffer(
                context.cast(),
                flags,
                bytes,
                data.as_ptr() as *mut c_void,
                &mut err,
            )
        };
        assert_eq!(err, ffi::CL_SUCCESS);
        mem
    }

    /// A matrix of the caller's memory objects (its three CSR arrays) is checked and solved in
    /// place (`DeviceMatrix::from_csr_buffers`, `ReusableSolver::on_device`): the iterations and
    /// solution of the same matrix uploaded, and the caller may release its references once
    /// the borrows hold them.
    #[test]
    fn borrowed_cl_mem_matrix_is_solved_in_place() {
        use pipekrylov::backend::DeviceMatrix;
        use pipekrylov::SolveOptions;
        let (mut uploaded, b) = solver(BackendChoice::OpenCl);
        let reference = uploaded.solve(&b).unwrap();
        let a = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
        let n = a.n_rows();
        let index = |x: &[usize]| x.iter().map(|&i| i as u32).collect::<Vec<_>>();
        let (backend, _) = BackendChoice::OpenCl.create().unwrap();
        let AnyBackend::OpenCl(cl) = &backend else {
            panic!("not on OpenCL")
        };
        let context = cl.raw_context();
        let mems = (
            create_from(context, &index(a.row_ptr())),
            create_from(context, &index(a.col_idx())),
            create_from(context, a.values()),
        );
        // SAFETY: valid memory objects of this context of the lengths given; nothing else
        // writes them.
        let m = unsafe {
            DeviceMatrix::from_csr_buffers(
                cl,
                n,
                n,
                cl.borrow_cl_mem::<u32>(mems.0.cast(), n + 1).unwrap(),
                cl.borrow_cl_mem::<u32>(mems.1.cast(), a.nnz()).unwrap(),
                cl.borrow_cl_mem::<f64>(mems.2.cast(), a.nnz()).unwrap(),
            )
            .unwrap()
        };
        release(mems.0);
        release(mems.1);
        release(mems.2);
        let options = SolveOptions::default()
            .method(Method::Cg)
            .precond(PrecondKind::Jacobi)
            .rtol(1e-10);
        let mut s = ReusableSolver::on_device(backend, m, options).unwrap();
        let sol = s.solve(&b).unwrap();
        assert_eq!(sol.report.iterations, reference.report.iterations);
        let diff = crate::common::rel_diff(&sol.x, &reference.x);
        assert!(diff <= 1e-12, "{diff:e}");
    }
}
