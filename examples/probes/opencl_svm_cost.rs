//! Whether coarse-grained SVM could give the OpenCL backend's new buffers their device address
//! without a wait (issue 52): on the first OpenCL GPU (else the first device), per size, the cost
//! of `clSVMAlloc` and of a `cl_mem` made on it (`CL_MEM_USE_HOST_PTR`), its first and second
//! fill with `clFinish`, a kernel writing through the SVM pointer passed by value (as the
//! backend's device-address arguments) read back through the `cl_mem` (checked), the bandwidth
//! of a copy kernel on SVM-backed against ordinary buffers, the release (`clReleaseMemObject` +
//! `clSVMFree`), and beside them an ordinary buffer's create and first fill. Last, whether an
//! impossible `clSVMAlloc` fails at once.
//! `cargo run --release --features opencl --example opencl_svm_cost`
//!
//! Prints per size the median over 5 buffers of each step, in us, and the copy bandwidths.

#[cfg(feature = "opencl")]
fn main() {
    probe::run();
}

#[cfg(not(feature = "opencl"))]
fn main() {
    eprintln!("build with --features opencl");
}

#[cfg(feature = "opencl")]
mod probe {
    use ocl::ffi::{self, cl_int, cl_mem};
    use std::ffi::c_void;
    use std::ptr;
    use std::time::Instant;

    // OpenCL 2.0 entry points (`cl-sys` declares them only with its OpenCL 2.0 feature); the
    // ICD loader the crate links exports them.
    extern "C" {
        fn clSVMAlloc(
            context: ffi::cl_context,
            flags: ffi::cl_bitfield,
            size: usize,
            alignment: u32,
        ) -> *mut c_void;
        fn clSVMFree(context: ffi::cl_context, pointer: *mut c_void);
    }

    fn ok(code: cl_int, what: &str) {
        assert_eq!(code, 0, "{what} failed: {code}");
    }

    const SOURCE: &str = "
    __kernel void write_at(const ulong addr, const uint n) {
        __global uint *a = (__global uint *)addr;
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = i * 3u + 1u; }
    __kernel void copy(__global uint *dst, __global const uint *src, const uint n) {
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i]; }";

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    unsafe fn fill(queue: ffi::cl_command_queue, b: cl_mem, bytes: usize) {
        let pattern = 0u32;
        ok(
            ffi::clEnqueueFillBuffer(
                queue,
                b,
                (&pattern as *const u32).cast::<c_void>(),
                4,
                0,
                bytes,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "fill",
        );
        ok(ffi::clFinish(queue), "finish");
    }

    unsafe fn launch(
        queue: ffi::cl_command_queue,
        k: ffi::cl_kernel,
        args: &[(usize, *const c_void)],
    ) {
        for (i, (size, value)) in args.iter().enumerate() {
            ok(ffi::clSetKernelArg(k, i as u32, *size, *value), "arg");
        }
        let (global, local) = (132 * 2048usize, 256usize);
        ok(
            ffi::clEnqueueNDRangeKernel(
                queue,
                k,
                1,
                ptr::null(),
                &global,
                &local,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "enqueue",
        );
    }

    unsafe fn create(ctx: ffi::cl_context, bytes: usize, flags: u64, host: *mut c_void) -> cl_mem {
        let mut err = 0;
        let b = ffi::clCreateBuffer(ctx, ffi::CL_MEM_READ_WRITE | flags, bytes, host, &mut err);
        ok(err, "buffer");
        b
    }

    pub fn run() {
        // SAFETY: plain OpenCL calls on objects created here, checked, released at the end.
        unsafe {
            let mut n = 0u32;
            ok(
                ffi::clGetPlatformIDs(0, ptr::null_mut(), &mut n),
                "platforms",
            );
            let mut platforms = vec![ptr::null_mut(); n as usize];
            ok(
                ffi::clGetPlatformIDs(n, platforms.as_mut_ptr(), ptr::null_mut()),
                "platforms",
            );
            let mut device = ptr::null_mut();
            'find: for kind in [ffi::CL_DEVICE_TYPE_GPU, ffi::CL_DEVICE_TYPE_ALL] {
                for &p in &platforms {
                    if ffi::clGetDeviceIDs(p, kind, 1, &mut device, ptr::null_mut()) == 0 {
                        break 'find;
                    }
                }
            }
            let mut err = 0;
            let ctx =
                ffi::clCreateContext(ptr::null(), 1, &device, None, ptr::null_mut(), &mut err);
            ok(err, "context");
            let queue = ffi::clCreateCommandQueue(ctx, device, 0, &mut err);
            ok(err, "queue");
            let src = std::ffi::CString::new(SOURCE).unwrap();
            let srcp = src.as_ptr();
            let prog = ffi::clCreateProgramWithSource(ctx, 1, &srcp, ptr::null(), &mut err);
            ok(err, "program");
            let opts = c"-cl-std=CL2.0";
            if ffi::clBuildProgram(prog, 1, &device, opts.as_ptr(), None, ptr::null_mut()) != 0 {
                ok(
                    ffi::clBuildProgram(prog, 1, &device, ptr::null(), None, ptr::null_mut()),
                    "build",
                );
            }
            let write_at = ffi::clCreateKernel(prog, c"write_at".as_ptr(), &mut err);
            ok(err, "kernel");
            let copy = ffi::clCreateKernel(prog, c"copy".as_ptr(), &mut err);
            ok(err, "kernel");
            // Warm up (first allocations, first launches).
            let w = clSVMAlloc(ctx, ffi::CL_MEM_READ_WRITE, 1 << 20, 0);
            assert!(
                !w.is_null(),
                "clSVMAlloc refused 1 MiB: no coarse-grained SVM"
            );
            let wb = create(ctx, 1 << 20, ffi::CL_MEM_USE_HOST_PTR, w);
            fill(queue, wb, 1 << 20);
            ffi::clReleaseMemObject(wb);
            clSVMFree(ctx, w);
            println!(
                "bytes | svm alloc | cl_mem on it | first fill + finish | again | write by address + \
                 finish | release | plain create + first fill + finish"
            );
            for bytes in [1usize << 20, 8 << 20, 42 << 20, 168 << 20] {
                let mut t = vec![Vec::new(); 7];
                let words = (bytes / 4) as u32;
                for _ in 0..5 {
                    let s = Instant::now();
                    let p = clSVMAlloc(ctx, ffi::CL_MEM_READ_WRITE, bytes, 0);
                    t[0].push(s.elapsed().as_secs_f64() * 1e6);
                    assert!(!p.is_null(), "clSVMAlloc {bytes}");
                    let s = Instant::now();
                    let b = create(ctx, bytes, ffi::CL_MEM_USE_HOST_PTR, p);
                    t[1].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    fill(queue, b, bytes);
                    t[2].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    fill(queue, b, bytes);
                    t[3].push(s.elapsed().as_secs_f64() * 1e6);
                    let addr = p as u64;
                    let s = Instant::now();
                    launch(
                        queue,
                        write_at,
                        &[
                            (8, (&addr as *const u64).cast()),
                            (4, (&words as *const u32).cast()),
                        ],
                    );
                    ok(ffi::clFinish(queue), "finish");
                    t[4].push(s.elapsed().as_secs_f64() * 1e6);
                    let mut back = vec![0u32; bytes / 4];
                    ok(
                        ffi::clEnqueueReadBuffer(
                            queue,
                            b,
                            1,
                            0,
                            bytes,
                            back.as_mut_ptr().cast(),
                            0,
                            ptr::null(),
                            ptr::null_mut(),
                        ),
                        "read",
                    );
                    let wrong = back
                        .iter()
                        .enumerate()
                        .filter(|(i, &v)| v != (*i as u32) * 3 + 1)
                        .count();
                    assert_eq!(
                        wrong, 0,
                        "a kernel writing through the SVM pointer: {wrong} words differ"
                    );
                    let s = Instant::now();
                    ffi::clReleaseMemObject(b);
                    clSVMFree(ctx, p);
                    t[5].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    let c = create(ctx, bytes, 0, ptr::null_mut());
                    fill(queue, c, bytes);
                    t[6].push(s.elapsed().as_secs_f64() * 1e6);
                    ffi::clReleaseMemObject(c);
                }
                let m: Vec<String> = t.into_iter().map(|v| format!("{:.1}", median(v))).collect();
                println!("{bytes} | {}", m.join(" | "));
            }
            // Copy bandwidth, 168 MiB each way, on SVM-backed and on ordinary buffers.
            let bytes = 168usize << 20;
            let words = (bytes / 4) as u32;
            for svm in [false, true] {
                let mut ptrs = vec![];
                let mut mems = vec![];
                for _ in 0..2 {
                    if svm {
                        let p = clSVMAlloc(ctx, ffi::CL_MEM_READ_WRITE, bytes, 0);
                        ptrs.push(p);
                        mems.push(create(ctx, bytes, ffi::CL_MEM_USE_HOST_PTR, p));
                    } else {
                        mems.push(create(ctx, bytes, 0, ptr::null_mut()));
                    }
                    fill(queue, mems[mems.len() - 1], bytes);
                }
                let args = |k| {
                    launch(
                        queue,
                        k,
                        &[
                            (8, (&mems[0] as *const cl_mem).cast()),
                            (8, (&mems[1] as *const cl_mem).cast()),
                            (4, (&words as *const u32).cast()),
                        ],
                    )
                };
                args(copy);
                ok(ffi::clFinish(queue), "finish");
                let s = Instant::now();
                for _ in 0..20 {
                    args(copy);
                }
                ok(ffi::clFinish(queue), "finish");
                let secs = s.elapsed().as_secs_f64() / 20.0;
                println!(
                    "copy {} MiB, {}: {:.0} GB/s",
                    bytes >> 20,
                    if svm { "SVM-backed" } else { "ordinary" },
                    2.0 * bytes as f64 / secs / 1e9
                );
                for m in mems {
                    ffi::clReleaseMemObject(m);
                }
                for p in ptrs {
                    clSVMFree(ctx, p);
                }
            }
            let s = Instant::now();
            let huge = clSVMAlloc(ctx, ffi::CL_MEM_READ_WRITE, 1usize << 40, 0);
            println!(
                "clSVMAlloc of 1 TiB: {} in {:.1} us",
                if huge.is_null() {
                    "refused (null)"
                } else {
                    "accepted"
                },
                s.elapsed().as_secs_f64() * 1e6
            );
            if !huge.is_null() {
                clSVMFree(ctx, huge);
            }
            ffi::clReleaseKernel(write_at);
            ffi::clReleaseKernel(copy);
            ffi::clReleaseProgram(prog);
            ffi::clReleaseCommandQueue(queue);
            ffi::clReleaseContext(ctx);
        }
    }
}
