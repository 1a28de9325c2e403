//! Issue 15, item 3: would a persistent cooperative kernel (one launch per batch of iterations,
//! grid-wide barriers between the phases) beat the CUDA graphs of the device-resident mode at
//! the smallest sizes? This probe runs the same CG-shaped iteration both ways on one GPU:
//!
//! - phase U (like `cg_update_resident`): every block finishes three partials slots in group
//!   order from shared memory, computes two scalars, updates x, r, p over its elements and writes
//!   a block partial of <r, r>;
//! - phase S (like `spmv_dots_csr` on 2D Poisson): Ap = 5-point stencil of p, block partials of
//!   <Ap, Ap> and <p, Ap>;
//!
//! as two kernels per iteration recorded in a CUDA graph of 32 iterations (the device-resident
//! mode's shape), and as one cooperative kernel per 32 iterations with a grid barrier after each
//! phase. Also the floors: a graph of 2 empty kernels per iteration, and a cooperative kernel
//! doing nothing but 2 grid barriers per iteration; and the graph once more with the update's
//! first loads of x, r, p, Ap issued before the partials are finished (prefetch CG). Grid = the
//! library's reduction groups
//! (ceil(n / 256), at most 4 per SM). Prints microseconds per iteration.
//!
//! `cargo run --release --features cuda --example persistent_cg [-- --shuffle-sums]`

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{sys, DevicePtr};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

const SOURCE: &str = r#"
#define WG 256
__device__ __forceinline__ void grid_barrier(unsigned int *bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned int *gen = bar + 1;
        const unsigned int mine = *gen;
        __threadfence();
        if (atomicAdd(bar, 1u) == gridDim.x - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            while (*gen == mine) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}
__device__ double block_sum(double v, double *sh) {
    const unsigned int t = threadIdx.x;
#ifdef SHUFFLE_SUMS
    /* warp shuffles, then one warp over the per-warp sums (the library's block_sum) */
    for (unsigned int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((t & 31u) == 0) sh[t >> 5] = v;
    __syncthreads();
    double r = 0.0;
    if (t < 32) {
        r = t < WG / 32 ? sh[t] : 0.0;
        for (unsigned int o = 16; o > 0; o >>= 1) r += __shfl_down_sync(0xffffffffu, r, o);
        if (t == 0) sh[WG / 32] = r;
    }
    __syncthreads();
    r = sh[WG / 32];
    __syncthreads();
    return r;
#else
    sh[t] = v;
    __syncthreads();
    for (unsigned int s = WG / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
#endif
}
/* slots: 0, 1 = <r, r> by parity; 2 = <Ap, Ap>; 3 = <p, Ap> */
/* PREFETCH: the first element's x, r, p, Ap loaded before the partials are finished (the loads
   do not depend on the sums; the compiler does not move them across the barrier). */
template <bool PREFETCH>
__device__ void phase_update(const unsigned int k, double *x, double *r, double *p, const double *ap,
                             const unsigned int n, volatile double *partials) {
    __shared__ double stage[4 * WG];
    __shared__ double sums[3];
    __shared__ double sh[WG];
    const unsigned int t = threadIdx.x, groups = gridDim.x;
    const unsigned int i0 = blockIdx.x * WG + t;
    double x0 = 0.0, r0 = 0.0, p0 = 0.0, ap0 = 0.0;
    if (PREFETCH && i0 < n) {
        x0 = x[i0];
        r0 = r[i0];
        p0 = p[i0];
        ap0 = ap[i0];
    }
    const unsigned int slot_of[3] = {k & 1u, 2u, 3u};
#ifdef SHUFFLE_SUMS
    /* the library's finish: a warp per slot, lane l adds groups l, l + 32, ..., then shuffles */
    if (t < 96) {
        const unsigned int lane = t & 31u, slot = slot_of[t >> 5];
        double acc = 0.0;
        for (unsigned int g = lane; g < groups; g += 32) acc += partials[slot * groups + g];
        for (unsigned int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) sums[t >> 5] = acc;
    }
    __syncthreads();
    (void)stage;
#else
    for (unsigned int i = t; i < 3 * groups; i += WG) {
        stage[i] = partials[slot_of[i / groups] * groups + i % groups];
    }
    __syncthreads();
    if (t < 3) {
        double acc = 0.0;
        for (unsigned int g = 0; g < groups; ++g) acc += stage[t * groups + g];
        sums[t] = acc;
    }
    __syncthreads();
#endif
    const double alpha = 1e-9 * sums[0] / (1.0 + fabs(sums[2]));
    const double beta = 1e-9 * sums[1] / (1.0 + fabs(sums[0]));
    double acc = 0.0;
    for (unsigned int i = i0; i < n; i += groups * WG) {
        const bool first = PREFETCH && i == i0;
        const double xi = first ? x0 : x[i], pi = first ? p0 : p[i];
        x[i] = xi + alpha * pi;
        const double ri = (first ? r0 : r[i]) - alpha * (first ? ap0 : ap[i]);
        r[i] = ri;
        p[i] = ri + beta * pi;
        acc += ri * ri;
    }
    acc = block_sum(acc, sh);
    if (t == 0) partials[((k + 1) & 1u) * groups + blockIdx.x] = acc;
}
__device__ void phase_spmv(const double *p, double *ap, const unsigned int n, const unsigned int side,
                           volatile double *partials) {
    __shared__ double sh[WG];
    const unsigned int t = threadIdx.x, groups = gridDim.x;
    double aa = 0.0, pa = 0.0;
    for (unsigned int i = blockIdx.x * WG + t; i < n; i += groups * WG) {
        double v = 4.0 * p[i];
        if (i >= 1) v -= p[i - 1];
        if (i + 1 < n) v -= p[i + 1];
        if (i >= side) v -= p[i - side];
        if (i + side < n) v -= p[i + side];
        ap[i] = v;
        aa += v * v;
        pa += p[i] * v;
    }
    aa = block_sum(aa, sh);
    pa = block_sum(pa, sh);
    if (t == 0) {
        partials[2 * groups + blockIdx.x] = aa;
        partials[3 * groups + blockIdx.x] = pa;
    }
}
extern "C" __global__ void __launch_bounds__(WG) update_kernel(const unsigned int k, double *x, double *r, double *p,
                                                              const double *ap, const unsigned int n,
                                                              double *partials) {
    phase_update<false>(k, x, r, p, ap, n, partials);
}
extern "C" __global__ void __launch_bounds__(WG) update_prefetched_kernel(const unsigned int k, double *x,
                                                                         double *r, double *p, const double *ap,
                                                                         const unsigned int n, double *partials) {
    phase_update<true>(k, x, r, p, ap, n, partials);
}
extern "C" __global__ void __launch_bounds__(WG) spmv_kernel(const double *p, double *ap, const unsigned int n,
                                                            const unsigned int side, double *partials) {
    phase_spmv(p, ap, n, side, partials);
}
extern "C" __global__ void __launch_bounds__(WG) persistent_kernel(const unsigned int iters, double *x, double *r,
                                                                  double *p, double *ap, const unsigned int n,
                                                                  const unsigned int side, double *partials,
                                                                  unsigned int *bar) {
    for (unsigned int k = 0; k < iters; ++k) {
        phase_update<false>(k, x, r, p, ap, n, partials);
        grid_barrier(bar);
        phase_spmv(p, ap, n, side, partials);
        grid_barrier(bar);
    }
}
/* Programmatic dependent launch (sm_90+): the kernel lets the next one be scheduled at once and
   waits for the previous one's completion (and memory) before touching anything it wrote. */
__device__ __forceinline__ void pdl_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_start() {
    pdl_trigger();
    pdl_wait();
}
/* MODE 0: trigger, then wait (the next kernel may be scheduled at once); 1: wait, then trigger
   (at most two kernels in flight); 2: wait first, trigger when the block's work is done. */
template <int MODE>
__device__ __forceinline__ void pdl_head() {
    if (MODE == 0) { pdl_trigger(); pdl_wait(); } else { pdl_wait(); if (MODE == 1) pdl_trigger(); }
}
template <int MODE>
__device__ __forceinline__ void pdl_tail() {
    if (MODE == 2) pdl_trigger();
}
#define PDL_KERNELS(MODE)                                                                                   \
extern "C" __global__ void __launch_bounds__(WG) update_pdl##MODE##_kernel(const unsigned int k, double *x, \
        double *r, double *p, const double *ap, const unsigned int n, double *partials) {                 \
    pdl_head<MODE>();                                                                                     \
    phase_update<true>(k, x, r, p, ap, n, partials);                                                      \
    pdl_tail<MODE>();                                                                                     \
}                                                                                                         \
extern "C" __global__ void __launch_bounds__(WG) spmv_pdl##MODE##_kernel(const double *p, double *ap,       \
        const unsigned int n, const unsigned int side, double *partials) {                                \
    pdl_head<MODE>();                                                                                     \
    phase_spmv(p, ap, n, side, partials);                                                                 \
    pdl_tail<MODE>();                                                                                     \
}
PDL_KERNELS(0)
PDL_KERNELS(1)
PDL_KERNELS(2)
extern "C" __global__ void __launch_bounds__(WG) empty_pdl_kernel() { pdl_start(); }
extern "C" __global__ void __launch_bounds__(WG) empty_kernel() {}
extern "C" __global__ void __launch_bounds__(WG) barriers_kernel(const unsigned int count, unsigned int *bar) {
    for (unsigned int k = 0; k < count; ++k) grid_barrier(bar);
}
"#;

/// Iterations per graph or per cooperative launch (the resident mode's batches reach 64).
const BATCH: u32 = 32;
/// Batches per timing.
const REPEATS: usize = 200;

/// Launch `f` with the programmatic-stream-serialization attribute (PDL: the kernel may start
/// before the previous one on the stream ends; it waits for it with `griddepcontrol.wait`).
///
/// # Safety
/// `params` must point to the kernel's arguments in order, as `cuLaunchKernelEx` expects.
unsafe fn launch_pdl(
    stream: &CudaStream,
    f: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
) {
    let mut attr: sys::CUlaunchAttribute = std::mem::zeroed();
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: cfg.block_dim.0,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    sys::cuLaunchKernelEx(
        &config,
        f.cu_function(),
        params.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()
    .unwrap();
}

fn time_us(stream: &Arc<CudaStream>, mut batch: impl FnMut()) -> f64 {
    for _ in 0..5 {
        batch();
    }
    stream.synchronize().unwrap();
    let mut samples = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..REPEATS {
            batch();
        }
        stream.synchronize().unwrap();
        samples.push(t0.elapsed().as_secs_f64() * 1e6 / (REPEATS as f64 * BATCH as f64));
    }
    samples.sort_by(f64::total_cmp);
    samples[2]
}

fn main() {
    let ctx = CudaContext::new(0).expect("a CUDA device");
    // SAFETY: one stream uses every buffer, in order (as the library does); without this the
    // per-buffer events would break the stream capture.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let sms = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .unwrap() as usize;
    let major = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        )
        .unwrap();
    let minor = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        )
        .unwrap();
    let arch: &'static str = Box::leak(format!("sm_{major}{minor}").into_boxed_str());
    // `--shuffle-sums`: the library's reductions (a warp per slot for the finish, warp shuffles
    // for the block sums) instead of the sequential finish and the shared-memory tree.
    let shuffle = std::env::args().any(|a| a == "--shuffle-sums");
    let source = if shuffle {
        format!("#define SHUFFLE_SUMS\n{SOURCE}")
    } else {
        SOURCE.to_string()
    };
    let ptx = compile_ptx_with_opts(
        source,
        CompileOptions {
            arch: Some(arch),
            fmad: Some(false),
            ..Default::default()
        },
    )
    .expect("NVRTC");
    let module = ctx.load_module(ptx).unwrap();
    let update = module.load_function("update_kernel").unwrap();
    let update_pf = module.load_function("update_prefetched_kernel").unwrap();
    let spmv = module.load_function("spmv_kernel").unwrap();
    let persistent = module.load_function("persistent_kernel").unwrap();
    let empty = module.load_function("empty_kernel").unwrap();
    let empty_pdl = module.load_function("empty_pdl_kernel").unwrap();
    let pdl_fns: Vec<(CudaFunction, CudaFunction)> = (0..3)
        .map(|m| {
            (
                module
                    .load_function(&format!("update_pdl{m}_kernel"))
                    .unwrap(),
                module
                    .load_function(&format!("spmv_pdl{m}_kernel"))
                    .unwrap(),
            )
        })
        .collect();
    let barriers = module.load_function("barriers_kernel").unwrap();
    println!(
        "{sms} SMs, {arch}; us per iteration (2 phases), batches of {BATCH} iterations; {}",
        if shuffle {
            "finish by a warp per slot, block sums by shuffles"
        } else {
            "sequential finish, shared-memory tree block sums"
        }
    );
    println!(
        "{:>7} {:>6} | {:>11} {:>14} | {:>10} {:>13} | {:>7} | {:>11} | {:>9} PDL CG: trigger+wait / wait+trigger / wait..trigger",
        "n",
        "blocks",
        "graph empty",
        "coop barriers",
        "graph CG",
        "persistent CG",
        "speedup",
        "prefetch CG",
        "PDL empty",
    );
    for side in [15u32, 31, 63, 127, 255] {
        let n = side * side;
        let groups = (n as usize).div_ceil(256).clamp(1, 4 * sms) as u32;
        // phase_update stages 3 slots of partials in 4 * 256 entries of shared memory.
        assert!(
            3 * groups <= 1024,
            "{groups} blocks: too many for the probe's staging"
        );
        let cfg = LaunchConfig {
            grid_dim: (groups, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut x = stream.alloc_zeros::<f64>(n as usize).unwrap();
        let mut r = stream.clone_htod(&vec![1.0f64; n as usize]).unwrap();
        let mut p = stream.clone_htod(&vec![1.0f64; n as usize]).unwrap();
        let mut ap = stream.alloc_zeros::<f64>(n as usize).unwrap();
        let mut partials = stream
            .clone_htod(&vec![1.0f64; 4 * groups as usize])
            .unwrap();
        let mut bar = stream.alloc_zeros::<u32>(2).unwrap();

        // Floor 1: a graph of 2 empty kernels per iteration.
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .unwrap();
        for _ in 0..2 * BATCH {
            // SAFETY: no arguments, as declared.
            unsafe { stream.launch_builder(&empty).launch(cfg) }.unwrap();
        }
        let empty_graph = stream
            .end_capture(CUgraphInstantiate_flags(0))
            .unwrap()
            .unwrap();
        let graph_empty = time_us(&stream, || empty_graph.launch().unwrap());

        // Floor 2: a cooperative kernel of 2 barriers per iteration.
        let count = 2 * BATCH;
        let coop_barriers = time_us(&stream, || {
            let mut b = stream.launch_builder(&barriers);
            b.arg(&count).arg(&mut bar);
            // SAFETY: arguments as declared; the grid fits on the device at once (cooperative).
            unsafe { b.launch_cooperative(cfg) }.unwrap();
        });

        // The CG-shaped iteration as a graph of 2 kernels per iteration, with the plain update
        // and with the one whose first loads are issued before the partials are finished.
        let mut cg_graph_of = |update_fn: &CudaFunction| {
            stream
                .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .unwrap();
            for k in 0..BATCH {
                let mut b = stream.launch_builder(update_fn);
                b.arg(&k)
                    .arg(&mut x)
                    .arg(&mut r)
                    .arg(&mut p)
                    .arg(&ap)
                    .arg(&n)
                    .arg(&mut partials);
                // SAFETY: arguments as declared in SOURCE (both update kernels have the same
                // list), every buffer of n (partials 4 groups).
                unsafe { b.launch(cfg) }.unwrap();
                let mut b = stream.launch_builder(&spmv);
                b.arg(&p).arg(&mut ap).arg(&n).arg(&side).arg(&mut partials);
                // SAFETY: as above.
                unsafe { b.launch(cfg) }.unwrap();
            }
            stream
                .end_capture(CUgraphInstantiate_flags(0))
                .unwrap()
                .unwrap()
        };
        let cg_graph = cg_graph_of(&update);
        let pf_graph = cg_graph_of(&update_pf);
        let graph_cg = time_us(&stream, || cg_graph.launch().unwrap());
        let graph_pf = time_us(&stream, || pf_graph.launch().unwrap());

        // Programmatic dependent launch inside the graph: 2 empty kernels per iteration, then
        // the prefetching CG iteration, each kernel waiting for its predecessor in-kernel.
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .unwrap();
        for _ in 0..2 * BATCH {
            // SAFETY: no arguments.
            unsafe { launch_pdl(&stream, &empty_pdl, cfg, &mut []) };
        }
        let empty_pdl_graph = stream
            .end_capture(CUgraphInstantiate_flags(0))
            .unwrap()
            .unwrap();
        let pdl_empty = time_us(&stream, || empty_pdl_graph.launch().unwrap());
        let (xp, rp, pp, app, partp) = {
            let f = |b: &cudarc::driver::CudaSlice<f64>| b.device_ptr(&stream).0;
            (f(&x), f(&r), f(&p), f(&ap), f(&partials))
        };
        let pdl_cg: Vec<f64> = pdl_fns
            .iter()
            .map(|(update_pdl, spmv_pdl)| {
                stream
                    .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                    .unwrap();
                for k in 0..BATCH {
                    let (mut k, mut xp, mut rp, mut pp, mut app, mut n, mut partp, mut side) =
                        (k, xp, rp, pp, app, n, partp, side);
                    let mut params: [*mut c_void; 7] = [
                        &mut k as *mut u32 as *mut c_void,
                        &mut xp as *mut u64 as *mut c_void,
                        &mut rp as *mut u64 as *mut c_void,
                        &mut pp as *mut u64 as *mut c_void,
                        &mut app as *mut u64 as *mut c_void,
                        &mut n as *mut u32 as *mut c_void,
                        &mut partp as *mut u64 as *mut c_void,
                    ];
                    // SAFETY: the update's argument list (uint, 4 pointers, uint, pointer).
                    unsafe { launch_pdl(&stream, update_pdl, cfg, &mut params) };
                    let mut params: [*mut c_void; 5] = [
                        &mut pp as *mut u64 as *mut c_void,
                        &mut app as *mut u64 as *mut c_void,
                        &mut n as *mut u32 as *mut c_void,
                        &mut side as *mut u32 as *mut c_void,
                        &mut partp as *mut u64 as *mut c_void,
                    ];
                    // SAFETY: the product's argument list (2 pointers, 2 uints, pointer).
                    unsafe { launch_pdl(&stream, spmv_pdl, cfg, &mut params) };
                }
                let cg_pdl_graph = stream
                    .end_capture(CUgraphInstantiate_flags(0))
                    .unwrap()
                    .unwrap();
                time_us(&stream, || cg_pdl_graph.launch().unwrap())
            })
            .collect();

        // The same as one cooperative kernel per batch.
        let persistent_cg = time_us(&stream, || {
            let mut b = stream.launch_builder(&persistent);
            b.arg(&BATCH)
                .arg(&mut x)
                .arg(&mut r)
                .arg(&mut p)
                .arg(&mut ap)
                .arg(&n)
                .arg(&side)
                .arg(&mut partials)
                .arg(&mut bar);
            // SAFETY: as above; cooperative, so every block is resident for the barriers.
            unsafe { b.launch_cooperative(cfg) }.unwrap();
        });
        println!(
            "{:>7} {:>6} | {:>11.2} {:>14.2} | {:>10.2} {:>13.2} | {:>7.2} | {:>11.2} | {:>9.2} {:.2} / {:.2} / {:.2}",
            n,
            groups,
            graph_empty,
            coop_barriers,
            graph_cg,
            persistent_cg,
            graph_cg / persistent_cg,
            graph_pf,
            pdl_empty,
            pdl_cg[0],
            pdl_cg[1],
            pdl_cg[2]
        );
    }
}
