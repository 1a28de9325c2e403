//! Host cost of one `clEnqueueNDRangeKernel` on the first OpenCL GPU (else the first device) as a
//! function of the kernel's argument list: k buffer arguments (distinct buffers or one buffer
//! repeated) and k by-value arguments, arguments set once or re-set before every launch.
//! `cargo run --release --features opencl --example opencl_launch_cost`
//!
//! Prints, per case, the host time per enqueue and the time per launch including the final
//! `clFinish` (2000 back-to-back launches of a kernel that does no work).

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
    use std::ffi::{c_void, CString};
    use std::ptr;
    use std::time::Instant;

    fn ok(code: cl_int, what: &str) {
        assert_eq!(code, 0, "{what} failed: {code}");
    }

    /// Source of kernel `b{k}` (k buffers + n) and `v{k}` (one buffer + k uints).
    fn source(ks: &[usize]) -> String {
        let mut s = String::new();
        for &k in ks {
            let params: Vec<String> = (0..k).map(|i| format!("__global float *a{i}")).collect();
            s.push_str(&format!(
                "__kernel void b{k}({}, const uint n) {{ if (get_global_id(0) < n) a0[0] = 1.0f; }}\n",
                params.join(", ")
            ));
            let params: Vec<String> = (0..k).map(|i| format!("const uint s{i}")).collect();
            s.push_str(&format!(
                "__kernel void v{k}(__global float *a0, {}) {{ if (get_global_id(0) < s0) a0[0] = 1.0f; }}\n",
                params.join(", ")
            ));
        }
        // a8: no buffer at all, 8 ulongs (the shape of a kernel built with PK_ADDRESS_ARGS).
        let pa: Vec<String> = (0..8).map(|i| format!("const ulong u{i}")).collect();
        s.push_str(&format!(
            "__kernel void a8({}) {{ if (get_global_id(0) < u0) ((__global float *)u1)[0] = 1.0f; }}\n",
            pa.join(", ")
        ));
        // k ulongs as k arguments (u{k}) or as one struct argument (s{k}): is the enqueue cost
        // per argument or per byte?
        for k in [1usize, 4, 16] {
            let pu: Vec<String> = (0..k).map(|i| format!("const ulong u{i}")).collect();
            s.push_str(&format!(
                "__kernel void u{k}({}) {{ if (get_global_id(0) < u0) ((__global float *)u0)[0] = 1.0f; }}\n",
                pu.join(", ")
            ));
            s.push_str(&format!(
                "typedef struct {{ ulong v[{k}]; }} pack{k};\n__kernel void s{k}(const pack{k} a) {{ if (get_global_id(0) < a.v[0]) ((__global float *)a.v[0])[0] = 1.0f; }}\n"
            ));
        }
        // Variants of v8 (one buffer, 8 uints): fixed work-group size, static local memory.
        let p8: Vec<String> = (0..8).map(|i| format!("const uint s{i}")).collect();
        let p8 = p8.join(", ");
        s.push_str(&format!(
            "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void w8(__global float *a0, {p8}) {{ if (get_global_id(0) < s0) a0[0] = 1.0f; }}\n"
        ));
        s.push_str(&format!(
            "__kernel void l8(__global float *a0, {p8}) {{ __local float t[256]; t[get_local_id(0)] = 1.0f; barrier(CLK_LOCAL_MEM_FENCE); if (get_global_id(0) < s0) a0[0] = t[0]; }}\n"
        ));
        s.push_str(&format!(
            "__kernel void L8(__global float *a0, {p8}) {{ __local float t[8192]; t[get_local_id(0)] = 1.0f; barrier(CLK_LOCAL_MEM_FENCE); if (get_global_id(0) < s0) a0[0] = t[0]; }}\n"
        ));
        s
    }

    /// Enqueue `kern` once: one work-group of 256 work-items, no events.
    unsafe fn enqueue_once(queue: ffi::cl_command_queue, kern: ffi::cl_kernel) {
        let (global, local) = (256usize, 256usize);
        ok(
            ffi::clEnqueueNDRangeKernel(
                queue,
                kern,
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

    /// Enqueue `kern` once with `groups` work-groups of 256 work-items, no events.
    unsafe fn enqueue_groups(queue: ffi::cl_command_queue, kern: ffi::cl_kernel, groups: usize) {
        let (global, local) = (256 * groups, 256usize);
        ok(
            ffi::clEnqueueNDRangeKernel(
                queue,
                kern,
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

    /// Enqueue cost of `a8` (no buffer arguments) and `b1` (one buffer) as the context holds
    /// more and more live buffers, and with 1 or 264 work-groups: does the runtime's per-launch
    /// work grow with the allocations it tracks or the grid it launches?
    unsafe fn residency_case(
        ctx: ffi::cl_context,
        queue: ffi::cl_command_queue,
        prog: ffi::cl_program,
        buf0: cl_mem,
        reps: u32,
    ) {
        let mut err = 0;
        let a8 = ffi::clCreateKernel(prog, c"a8".as_ptr(), &mut err);
        ok(err, "kernel a8");
        for i in 0..8u32 {
            let v = 0u64;
            ok(
                ffi::clSetKernelArg(a8, i, 8, (&v as *const u64).cast::<c_void>()),
                "arg",
            );
        }
        let b1 = ffi::clCreateKernel(prog, c"b1".as_ptr(), &mut err);
        ok(err, "kernel b1");
        ok(
            ffi::clSetKernelArg(b1, 0, 8, (&buf0 as *const cl_mem).cast::<c_void>()),
            "arg",
        );
        let zero = 0u32;
        ok(
            ffi::clSetKernelArg(b1, 1, 4, (&zero as *const u32).cast::<c_void>()),
            "arg",
        );
        let mut extra: Vec<cl_mem> = Vec::new();
        for target in [0usize, 64, 512, 2048] {
            while extra.len() < target {
                let b = ffi::clCreateBuffer(
                    ctx,
                    ffi::CL_MEM_READ_WRITE,
                    1 << 18,
                    ptr::null_mut(),
                    &mut err,
                );
                ok(err, "buffer");
                let pattern = 0u32;
                ok(
                    ffi::clEnqueueFillBuffer(
                        queue,
                        b,
                        (&pattern as *const u32).cast::<c_void>(),
                        4,
                        0,
                        1 << 18,
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    ),
                    "fill",
                );
                extra.push(b);
            }
            ffi::clFinish(queue);
            for groups in [1usize, 264] {
                for (name, kern) in [("a8 (8 ulongs)", a8), ("b1 (1 buffer)", b1)] {
                    let (enq, tot) =
                        time_launches(queue, reps, |_| enqueue_groups(queue, kern, groups));
                    println!(
                        "{name}, {target} extra live buffers, {groups} groups | false | {enq:.2} | {tot:.2}"
                    );
                }
            }
        }
        for b in extra {
            ffi::clReleaseMemObject(b);
        }
        ffi::clReleaseKernel(a8);
        ffi::clReleaseKernel(b1);
    }

    /// Host us per `launch(round)` call and us per call including the final clFinish, after 50
    /// warm-up calls (`round` cycles through 0, 1, 2).
    unsafe fn time_launches(
        queue: ffi::cl_command_queue,
        reps: u32,
        mut launch: impl FnMut(u32),
    ) -> (f64, f64) {
        for r in 0..50 {
            launch(r % 3);
        }
        ffi::clFinish(queue);
        let t = Instant::now();
        for r in 0..reps {
            launch(r % 3);
        }
        let enq = t.elapsed().as_secs_f64();
        ffi::clFinish(queue);
        let tot = t.elapsed().as_secs_f64();
        (enq / reps as f64 * 1e6, tot / reps as f64 * 1e6)
    }

    type SvmAlloc = unsafe extern "C" fn(ffi::cl_context, u64, usize, u32) -> *mut c_void;
    type SvmArg = unsafe extern "C" fn(ffi::cl_kernel, u32, *const c_void) -> cl_int;

    /// Kernels `b{k}` with coarse-grained SVM pointers set by clSetKernelArgSVMPointer.
    unsafe fn svm_case(
        ctx: ffi::cl_context,
        queue: ffi::cl_command_queue,
        prog: ffi::cl_program,
        ks: &[usize],
        reps: u32,
    ) {
        let Ok(lib) = libloading::Library::new("libOpenCL.so.1") else {
            println!("SVM: cannot open libOpenCL.so.1");
            return;
        };
        let (Ok(alloc), Ok(set)) = (
            lib.get::<SvmAlloc>(b"clSVMAlloc\0"),
            lib.get::<SvmArg>(b"clSetKernelArgSVMPointer\0"),
        ) else {
            println!("SVM: entry points missing");
            return;
        };
        let ptrs: Vec<*mut c_void> = (0..16).map(|_| alloc(ctx, 1, 1 << 20, 0)).collect();
        if ptrs.iter().any(|p| p.is_null()) {
            println!("SVM: clSVMAlloc failed");
            return;
        }
        let mut err = 0;
        for &k in ks {
            let cname = CString::new(format!("b{k}")).unwrap();
            let kern = ffi::clCreateKernel(prog, cname.as_ptr(), &mut err);
            ok(err, "kernel");
            for (i, &p) in ptrs.iter().enumerate().take(k) {
                ok(set(kern, i as u32, p), "svm arg");
            }
            let n = 0u32;
            ok(
                ffi::clSetKernelArg(kern, k as u32, 4, (&n as *const u32).cast::<c_void>()),
                "arg",
            );
            let (enq, tot) = time_launches(queue, reps, |_| enqueue_once(queue, kern));
            println!("b{k} SVM pointers | false | {enq:.2} | {tot:.2}");
            ffi::clReleaseKernel(kern);
        }
    }

    pub fn run() {
        // SAFETY (whole function): plain OpenCL C API use with valid handles and sizes; a
        // measurement program, errors abort with a message.
        unsafe {
            let mut nplat = 0u32;
            ok(
                ffi::clGetPlatformIDs(0, ptr::null_mut(), &mut nplat),
                "platforms",
            );
            let mut plats = vec![ptr::null_mut(); nplat as usize];
            ok(
                ffi::clGetPlatformIDs(nplat, plats.as_mut_ptr(), ptr::null_mut()),
                "platforms",
            );
            let mut device = ptr::null_mut();
            for &p in &plats {
                let mut d = ptr::null_mut();
                if ffi::clGetDeviceIDs(p, ffi::CL_DEVICE_TYPE_GPU, 1, &mut d, ptr::null_mut()) == 0
                {
                    device = d;
                    break;
                }
            }
            if device.is_null() {
                ok(
                    ffi::clGetDeviceIDs(
                        plats[0],
                        ffi::CL_DEVICE_TYPE_ALL,
                        1,
                        &mut device,
                        ptr::null_mut(),
                    ),
                    "device",
                );
            }
            let mut name = vec![0u8; 256];
            ffi::clGetDeviceInfo(
                device,
                ffi::CL_DEVICE_NAME,
                256,
                name.as_mut_ptr().cast(),
                ptr::null_mut(),
            );
            println!(
                "device: {}",
                String::from_utf8_lossy(&name).trim_end_matches('\0')
            );
            let mut version = vec![0u8; 256];
            ffi::clGetDeviceInfo(
                device,
                ffi::CL_DEVICE_VERSION,
                256,
                version.as_mut_ptr().cast(),
                ptr::null_mut(),
            );
            println!(
                "version: {}",
                String::from_utf8_lossy(&version).trim_end_matches('\0')
            );
            let mut svm_caps: u64 = 0;
            let svm_ok = ffi::clGetDeviceInfo(
                device,
                0x1053,
                8,
                (&mut svm_caps as *mut u64).cast(),
                ptr::null_mut(),
            );
            println!("SVM capabilities: status {svm_ok}, bits {svm_caps:#x}");
            let mut ext_len = 0usize;
            ffi::clGetDeviceInfo(
                device,
                ffi::CL_DEVICE_EXTENSIONS,
                0,
                ptr::null_mut(),
                &mut ext_len,
            );
            let mut ext = vec![0u8; ext_len];
            ffi::clGetDeviceInfo(
                device,
                ffi::CL_DEVICE_EXTENSIONS,
                ext_len,
                ext.as_mut_ptr().cast(),
                ptr::null_mut(),
            );
            println!(
                "extensions: {}",
                String::from_utf8_lossy(&ext).trim_end_matches('\0')
            );
            let mut err = 0;
            let ctx =
                ffi::clCreateContext(ptr::null(), 1, &device, None, ptr::null_mut(), &mut err);
            ok(err, "context");
            let queue = ffi::clCreateCommandQueue(ctx, device, 0, &mut err);
            ok(err, "queue");
            let ks = [1usize, 4, 8, 16];
            let src = CString::new(source(&ks)).unwrap();
            let sp = src.as_ptr();
            let prog = ffi::clCreateProgramWithSource(ctx, 1, &sp, ptr::null(), &mut err);
            ok(err, "program");
            ok(
                ffi::clBuildProgram(prog, 1, &device, ptr::null(), None, ptr::null_mut()),
                "build",
            );
            let bufs: Vec<cl_mem> = (0..16)
                .map(|_| {
                    let b = ffi::clCreateBuffer(
                        ctx,
                        ffi::CL_MEM_READ_WRITE,
                        1 << 20,
                        ptr::null_mut(),
                        &mut err,
                    );
                    ok(err, "buffer");
                    b
                })
                .collect();
            let reps = 2000u32;
            println!(
                "case | args reset each launch | host us per enqueue | us per launch incl. finish"
            );
            for &k in &ks {
                for kind in ["distinct buffers", "one buffer repeated", "by-value uints"] {
                    let kname = if kind == "by-value uints" {
                        format!("v{k}")
                    } else {
                        format!("b{k}")
                    };
                    let cname = CString::new(kname.clone()).unwrap();
                    let kern = ffi::clCreateKernel(prog, cname.as_ptr(), &mut err);
                    ok(err, "kernel");
                    let set_all = |round: u32| {
                        if kind == "by-value uints" {
                            ok(
                                ffi::clSetKernelArg(
                                    kern,
                                    0,
                                    8,
                                    (&bufs[0] as *const cl_mem).cast::<c_void>(),
                                ),
                                "arg",
                            );
                            for i in 0..k {
                                let v: u32 = if i == 0 { 0 } else { round + i as u32 };
                                ok(
                                    ffi::clSetKernelArg(
                                        kern,
                                        (i + 1) as u32,
                                        4,
                                        (&v as *const u32).cast::<c_void>(),
                                    ),
                                    "arg",
                                );
                            }
                        } else {
                            for i in 0..k {
                                let b = if kind == "distinct buffers" {
                                    &bufs[(i + round as usize) % 16]
                                } else {
                                    &bufs[0]
                                };
                                ok(
                                    ffi::clSetKernelArg(
                                        kern,
                                        i as u32,
                                        8,
                                        (b as *const cl_mem).cast::<c_void>(),
                                    ),
                                    "arg",
                                );
                            }
                            let n = 0u32;
                            ok(
                                ffi::clSetKernelArg(
                                    kern,
                                    k as u32,
                                    4,
                                    (&n as *const u32).cast::<c_void>(),
                                ),
                                "arg",
                            );
                        }
                    };
                    for reset in [false, true] {
                        set_all(0);
                        let (enq, tot) = time_launches(queue, reps, |round| {
                            if reset {
                                set_all(round);
                            }
                            enqueue_once(queue, kern);
                        });
                        println!("{kname} {kind} | {reset} | {enq:.2} | {tot:.2}");
                    }
                    ffi::clReleaseKernel(kern);
                }
            }
            for (name, what) in [
                ("v8", "plain"),
                ("w8", "reqd_work_group_size(256)"),
                ("l8", "1 KiB __local + barrier"),
                ("L8", "32 KiB __local + barrier"),
            ] {
                let cname = CString::new(name).unwrap();
                let kern = ffi::clCreateKernel(prog, cname.as_ptr(), &mut err);
                ok(err, "kernel");
                ok(
                    ffi::clSetKernelArg(kern, 0, 8, (&bufs[0] as *const cl_mem).cast::<c_void>()),
                    "arg",
                );
                for i in 0..8u32 {
                    let v = 0u32;
                    ok(
                        ffi::clSetKernelArg(kern, i + 1, 4, (&v as *const u32).cast::<c_void>()),
                        "arg",
                    );
                }
                let (enq, tot) = time_launches(queue, reps, |_| enqueue_once(queue, kern));
                println!("{name} {what} | false | {enq:.2} | {tot:.2}");
                ffi::clReleaseKernel(kern);
            }
            for k in [1usize, 4, 16] {
                for packed in [false, true] {
                    let name = format!("{}{k}", if packed { 's' } else { 'u' });
                    let cname = CString::new(name.clone()).unwrap();
                    let kern = ffi::clCreateKernel(prog, cname.as_ptr(), &mut err);
                    ok(err, "kernel");
                    let zeros = vec![0u64; k];
                    if packed {
                        ok(
                            ffi::clSetKernelArg(kern, 0, 8 * k, zeros.as_ptr().cast::<c_void>()),
                            "arg",
                        );
                    } else {
                        for i in 0..k {
                            ok(
                                ffi::clSetKernelArg(
                                    kern,
                                    i as u32,
                                    8,
                                    zeros[i..].as_ptr().cast::<c_void>(),
                                ),
                                "arg",
                            );
                        }
                    }
                    let (enq, tot) = time_launches(queue, reps, |_| enqueue_once(queue, kern));
                    let what = if packed {
                        format!("{k} ulongs in one struct argument")
                    } else {
                        format!("{k} ulong arguments")
                    };
                    println!("{name} {what} | false | {enq:.2} | {tot:.2}");
                    ffi::clReleaseKernel(kern);
                }
            }
            residency_case(ctx, queue, prog, bufs[0], reps);
            if svm_ok == 0 && svm_caps & 1 != 0 {
                svm_case(ctx, queue, prog, &ks, reps);
            }
        }
    }
}
