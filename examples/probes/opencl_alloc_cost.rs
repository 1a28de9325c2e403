//! What a new OpenCL buffer costs before its first kernel, by size, on the first OpenCL GPU
//! (else the first device): `clCreateBuffer`, the first zero fill (`clEnqueueFillBuffer` or a
//! kernel) with its `clFinish`, a second fill of the same buffer, and `clReleaseMemObject`.
//! Where the multigrid setup's gaps between kernels come from on NVIDIA's OpenCL (issue 52).
//! `cargo run --release --features opencl --example opencl_alloc_cost`
//!
//! Prints per size the median over 5 buffers of each step, in us.

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

    fn ok(code: cl_int, what: &str) {
        assert_eq!(code, 0, "{what} failed: {code}");
    }

    const SOURCE: &str = "__kernel void zero(__global uint *a, const uint n) {
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = 0u; }";

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

    unsafe fn zero_kernel(
        queue: ffi::cl_command_queue,
        k: ffi::cl_kernel,
        b: cl_mem,
        bytes: usize,
    ) {
        let n = (bytes / 4) as u32;
        ok(
            ffi::clSetKernelArg(k, 0, 8, (&b as *const cl_mem).cast()),
            "arg",
        );
        ok(
            ffi::clSetKernelArg(k, 1, 4, (&n as *const u32).cast()),
            "arg",
        );
        let (global, local) = (256 * 1024usize, 256usize);
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
        ok(ffi::clFinish(queue), "finish");
    }

    unsafe fn create(ctx: ffi::cl_context, bytes: usize) -> cl_mem {
        let mut err = 0;
        let b = ffi::clCreateBuffer(
            ctx,
            ffi::CL_MEM_READ_WRITE,
            bytes,
            ptr::null_mut(),
            &mut err,
        );
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
            ok(
                ffi::clBuildProgram(prog, 1, &device, ptr::null(), None, ptr::null_mut()),
                "build",
            );
            let k = ffi::clCreateKernel(prog, c"zero".as_ptr(), &mut err);
            ok(err, "kernel");
            // Warm up the runtime (first allocation, first launch).
            let w = create(ctx, 1 << 20);
            fill(queue, w, 1 << 20);
            zero_kernel(queue, k, w, 1 << 20);
            ffi::clReleaseMemObject(w);
            println!("bytes | create | first fill + finish | again | first kernel zero + finish | again | release");
            for bytes in [1usize << 16, 1 << 20, 8 << 20, 42 << 20, 168 << 20] {
                let mut t = vec![Vec::new(); 6];
                for _ in 0..5 {
                    let s = Instant::now();
                    let a = create(ctx, bytes);
                    t[0].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    fill(queue, a, bytes);
                    t[1].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    fill(queue, a, bytes);
                    t[2].push(s.elapsed().as_secs_f64() * 1e6);
                    let b = create(ctx, bytes);
                    let s = Instant::now();
                    zero_kernel(queue, k, b, bytes);
                    t[3].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    zero_kernel(queue, k, b, bytes);
                    t[4].push(s.elapsed().as_secs_f64() * 1e6);
                    let s = Instant::now();
                    ffi::clReleaseMemObject(a);
                    ffi::clReleaseMemObject(b);
                    t[5].push(s.elapsed().as_secs_f64() * 1e6 / 2.0);
                }
                let m: Vec<String> = t.into_iter().map(|v| format!("{:.1}", median(v))).collect();
                println!("{bytes} | {}", m.join(" | "));
            }
            ffi::clReleaseKernel(k);
            ffi::clReleaseProgram(prog);
            ffi::clReleaseCommandQueue(queue);
            ffi::clReleaseContext(ctx);
        }
    }
}
