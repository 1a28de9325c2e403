/*
 * kernels/dialect/cuda.h -- the CUDA C++ dialect of the kernel sources (NVRTC), the twin of
 * kernels/dialect/opencl.h. Prepended to the family files when the module is built
 * (src/backend/kernel_sources.rs); it holds no kernels.
 *
 * The family files of kernels/ are written once, in OpenCL C's vocabulary, and this header maps
 * it onto CUDA (see "The shared vocabulary" below): pk_kernel and pk_device declarations,
 * PK_GLOBAL parameters, __global and LOCAL pointers, __local arrays (__shared__),
 * get_local_id(0) and its siblings, barrier(), FOR_EACH, group_sum / group_sum_multi, and the
 * warp intrinsics of PK_WARP32. What only CUDA has (programmatic dependent launch, cache-hinted
 * loads, the double-precision intrinsics with explicit rounding) is defined here, with a no-op
 * or plain twin in the OpenCL dialect.
 *
 * Build-time defines (passed by the backend, see src/backend/cuda/module.rs):
 *   SCALAR  float or double (the solve precision); one source, compiled once per precision.
 *   WG      threads per block: min(256, device max threads per block) rounded down to a power
 *           of two (a multiple of 32). Every kernel is launched with exactly WG threads.
 *
 * Argument conventions, partials and loops: kernels/README.md (both runtimes).
 *
 * Compiled without fast math and with --fmad=false: every element-wise result is rounded like
 * the host backend's (separate multiply and add), only the reduction order differs.
 *
 * Every kernel starts with PDL_WAIT(): on sm_90+ the backend launches kernels with programmatic
 * stream serialization (programmatic dependent launch), so a kernel's blocks may be scheduled
 * while the previous kernel on the stream finishes; griddepcontrol.wait then holds every thread
 * until that kernel has completed and its memory is visible, so nothing before it may read or
 * write device memory. Without the launch attribute (or below sm_90) it does nothing.
 */

#ifndef SCALAR
#error "SCALAR must be defined (float or double)"
#endif
#ifndef WG
#define WG 256
#endif

#if (WG % 32) != 0 || WG > 1024 || WG < 32
#error "WG must be a multiple of 32 in [32, 1024]"
#endif

/* PDL_WAIT_START_NEXT() is PDL_WAIT() for the kernels that a CSR product reading its matrix
 * before its wait follows (csr_first_then_wait in spmv.cu): the resident CG and BiCGStab updates
 * (GMRES's DCGS2 updates: DCGS2_START_NEXT in gmres.cu, by size) (and, with PDL_START_NEXT after the wait, the CSR products with
 * EARLY_NEXT, which BiCGStab's fused s update and product follows). Right after the wait the kernel lets the next one be
 * scheduled (griddepcontrol.launch_dependents) instead of when its blocks exit, so that the
 * next kernel's matrix reads overlap this kernel. The kernel before this one has completed by
 * then; everything a kernel does before its wait only reads arrays no kernel writes. Only where
 * it gains: every kernel starting its successor this way made GMRES(30) 2.5 us slower per
 * iteration at n = 32K-65K on the H200 (BENCHMARKS.md, issue 15, 2026-11-25 (h)).
 * PK_EARLY_TRIGGER = 0 (the backend's PIPEKRYLOV_CUDA_EARLY_START=0) turns both off. */
#ifndef PK_EARLY_TRIGGER
#define PK_EARLY_TRIGGER 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PDL_WAIT() asm volatile("griddepcontrol.wait;" ::: "memory")
#else
#define PDL_WAIT() ((void)0)
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && PK_EARLY_TRIGGER
#define PDL_START_NEXT() asm volatile("griddepcontrol.launch_dependents;" ::: "memory")
#else
#define PDL_START_NEXT() ((void)0)
#endif
#define PDL_WAIT_START_NEXT() \
    do {                       \
        PDL_WAIT();            \
        PDL_START_NEXT();      \
    } while (0)

/* Cache hints of the SpMV kernels' loads (PK_LOAD_HINTS, set by the backend, default 1; see
 * src/backend/tuning.rs MATRIX_LOAD_HINTS_ENV): MATRIX_LOAD(p) reads an entry of a matrix
 * array that a kernel reads once and whole lines at a time (the coalesced staging of the CSR
 * stream kernel, SELL slices, long rows; not the CSR vector kernel, whose threads walk their
 * rows through L1), GATHER_LOAD(p) an entry of the vector the product gathers from.
 *   0: plain loads;
 *   1: the matrix streamed (ld.global.cs: evict first from L1 and L2), so that it does not push
 *      the gathered vector out of the caches;
 *   2: as 1, and the gathers through the read-only path (ld.global.nc). */
#ifndef PK_LOAD_HINTS
#define PK_LOAD_HINTS 1
#endif
#if PK_LOAD_HINTS >= 1
#define MATRIX_LOAD(p) __ldcs(p)
#else
#define MATRIX_LOAD(p) (*(p))
#endif
#if PK_LOAD_HINTS >= 2
#define GATHER_LOAD(p) __ldg(p)
#else
#define GATHER_LOAD(p) (*(p))
#endif

/* The typed names the family files use (as the OpenCL dialect's): MATRIX_LOAD_S / _U / _H read a
 * SCALAR, uint or ushort matrix entry, GATHER_LOAD_S an entry of the gathered vector. */
#define MATRIX_LOAD_S(p) MATRIX_LOAD(p)
#define MATRIX_LOAD_U(p) MATRIX_LOAD(p)
#define MATRIX_LOAD_H(p) MATRIX_LOAD(p)
#define GATHER_LOAD_S(p) GATHER_LOAD(p)

#define ZERO ((SCALAR)0)
#define WARPS (WG / 32)
#define FULL_MASK 0xffffffffu

typedef unsigned int uint;
typedef unsigned long long ulong;
typedef unsigned char uchar;
typedef unsigned short ushort;

/* First element and stride of a grid-stride loop over elements. */
#define GRID_START (blockIdx.x * (uint)WG + threadIdx.x)
#define GRID_STRIDE (gridDim.x * (uint)WG)

/* The dialect, for the rare guarded block of a family file. */
#define PK_CUDA 1

/* ---- The shared vocabulary: the OpenCL C names the family files of kernels/ are written in ---- */

/* `#pragma unroll` where a #pragma cannot go (a macro's body): C99's _Pragma. */
#define PK_UNROLL _Pragma("unroll")

/* Declarations: a kernel (one line with its name, as in OpenCL: tools grep for it) and a helper. */
#define pk_kernel extern "C" __launch_bounds__(WG) __global__
#define pk_device __device__ __forceinline__
/* Pointers: global memory is the generic address space; LOCAL marks a pointer to a __local
 * (shared) array, __local declares one (in a kernel's body). */
#define __global
#define LOCAL
#define __local __shared__
#define restrict __restrict__
/* Buffer parameters (the OpenCL dialect may pass them as device addresses; see there). */
#define PK_GLOBAL(T, name) T *name
#define PK_GLOBAL_RESTRICT(T, name) T *__restrict__ name
/* Work-item indices (dimension 0 only: every kernel is 1-D). */
#define get_local_id(dim) threadIdx.x
#define get_group_id(dim) blockIdx.x
#define get_num_groups(dim) gridDim.x
#define get_local_size(dim) ((uint)WG)
#define get_global_id(dim) GRID_START
#define get_global_size(dim) GRID_STRIDE
/* Barriers: __syncthreads() orders the block's shared and global accesses alike. */
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define barrier(fences) __syncthreads()
#define mem_fence(fences) __threadfence_block()
/* Element loops: grid-stride (the OpenCL dialect's GPU layout). */
#define FOR_EACH(i, n) for (uint i = GRID_START; i < (uint)(n); i += GRID_STRIDE)
/* FOR_EACH(i, n) split after its first element, for the kernels that load their first element
 * early (before the barriers of a finish, or a wait):
 *   FOR_EACH_FIRST(n)           the first element of this work-item's loop (n or more: none)
 *   FOR_EACH_NEXT(i)            the element after i in that loop (maybe past its end)
 *   FOR_EACH_FROM(i, first, n)  the loop from element `first` (of the loop, or past its end) on */
#define FOR_EACH_FIRST(n) GRID_START
#define FOR_EACH_NEXT(i) ((i) + GRID_STRIDE)
#define FOR_EACH_FROM(i, first, n) for (uint i = (first); i < (uint)(n); i += GRID_STRIDE)
/* Reinterpretation and atomics under their OpenCL names. */
#define as_uint(x) __float_as_uint(x)
#define as_float(x) __uint_as_float(x)
/* The quiet NaN and the index of the lowest set bit of x != 0. */
#ifndef NAN
#define NAN nan("")
#endif
#define pk_lowest_bit(x) ((uint)(__ffs((int)(x)) - 1))
#define atomic_add(p, v) atomicAdd((p), (v))
#define atomic_min(p, v) atomicMin((p), (v))
#define atomic_max(p, v) atomicMax((p), (v))
#define atomic_cmpxchg(p, cmp, v) atomicCAS((p), (cmp), (v))
#define atomic_xchg(p, v) atomicExch((p), (v))
/* Warps of 32 threads: always on CUDA (on OpenCL only on NVIDIA GPUs, -D PK_NV_PTX). */
#define PK_WARP32 1
#define warp_sync() __syncwarp()
#define warp_shfl_u32(v, src) __shfl_sync(FULL_MASK, (uint)(v), (src))
#define warp_shfl_scalar(v, src) __shfl_sync(FULL_MASK, (SCALAR)(v), (src))
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define warp_min_u32(v) __reduce_min_sync(FULL_MASK, (uint)(v))
#else
__device__ __forceinline__ uint warp_min_u32(uint v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        v = min(v, __shfl_xor_sync(FULL_MASK, v, off));
    }
    return v;
}
#endif
#define warp_ballot(pred) __ballot_sync(FULL_MASK, (pred))

/* Tree sum over the 32 lanes of a warp (fixed order); lane 0 holds the result. */
__device__ __forceinline__ SCALAR warp_sum(SCALAR v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_down_sync(FULL_MASK, v, off);
    }
    return v;
}

/* The shared vocabulary's group sums (the OpenCL dialect has the same calls): m values per
 * thread (m <= 8) summed over the block in a fixed order (warp shuffles, then one warp over the
 * per-warp sums); vals[k] of thread 0 receives the block sum of k (other threads' values are
 * unspecified). `scratch` is a __local array of SUM_SCRATCH(m) entries. Called by every thread
 * of the block; ends with a barrier so that it may be called again right away. */
#define SUM_SCRATCH(m) ((m) * WARPS)
__device__ __forceinline__ void group_sum_multi(SCALAR *scratch, SCALAR *vals, const uint m) {
    const uint lane = threadIdx.x & 31u;
    const uint warp = threadIdx.x >> 5;
#pragma unroll
    for (uint k = 0; k < m; ++k) {
        const SCALAR s = warp_sum(vals[k]);
        if (lane == 0) {
            scratch[k * WARPS + warp] = s;
        }
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (uint k = 0; k < m; ++k) {
            vals[k] = warp_sum(lane < WARPS ? scratch[k * WARPS + lane] : ZERO);
        }
    }
    __syncthreads();
}

/* The block sum of one value per thread, valid in thread 0 (SUM_SCRATCH(1) entries). */
__device__ __forceinline__ SCALAR group_sum(SCALAR *scratch, SCALAR v) {
    group_sum_multi(scratch, &v, 1);
    return v;
}

/* group_sum_multi with a scratch of its own (the families not yet in kernels/). */
template <int M>
__device__ __forceinline__ void block_sum(SCALAR (&v)[M]) {
    __shared__ SCALAR scratch[SUM_SCRATCH(M)];
    group_sum_multi(scratch, v, M);
}

/* Block sum of one value per thread; the result is valid in thread 0. */
__device__ __forceinline__ SCALAR block_sum1(SCALAR v) {
    SCALAR a[1] = {v};
    block_sum<1>(a);
    return a[0];
}

/* Write this block's partial of `slot` (thread 0 holds the block sum). */
__device__ __forceinline__ void write_partial(SCALAR *partials, uint slot, SCALAR v) {
    if (threadIdx.x == 0) {
        partials[(ulong)slot * gridDim.x + blockIdx.x] = v;
    }
}

/* The type and the __local entries (`sums`, FINISH_SCRATCH(count)) of ordered_slot_sums. */
#define FINISH_T double
#define FINISH_SCRATCH(m) (m)

/* The finished sums of `count` (1..5) partials slots s0..s4 in double, into sums[0..count), in the
 * host's finish order (src/backend/partials.rs, FINISH_LANES), so the same bits: group g goes to
 * lane g mod 32, each lane adds its groups in group order from 0, then the lanes are added pairwise
 * (lane l += lane l + h, h = 16, 8, 4, 2, 1). Warp w finishes slots w, w + WARPS, ...: its lanes'
 * loads are independent (in flight together) and the chain is groups / 32 + 5 additions instead of
 * `groups`. Called by every thread; the caller synchronizes before reading `sums`. */
__device__ __forceinline__ void ordered_slot_sums(const SCALAR *partials, const uint groups, const uint count,
                                                  const uint s0, const uint s1, const uint s2, const uint s3,
                                                  const uint s4, double *sums) {
    const uint lane = threadIdx.x & 31u;
    for (uint k = threadIdx.x >> 5; k < count; k += WARPS) {
        const uint slot = k == 0 ? s0 : k == 1 ? s1 : k == 2 ? s2 : k == 3 ? s3 : s4;
        const SCALAR *p = partials + (ulong)slot * groups;
        double acc = 0.0;
#pragma unroll 8
        for (uint g = lane; g < groups; g += 32u) {
            acc = __dadd_rn(acc, (double)p[g]);
        }
#pragma unroll
        for (uint h = 16u; h > 0u; h >>= 1) {
            acc = __dadd_rn(acc, __shfl_down_sync(FULL_MASK, acc, h));
        }
        if (lane == 0) {
            sums[k] = acc;
        }
    }
}

/* Sequential sum of the `groups` partials of `slot`, in index order (one thread). */
__device__ __forceinline__ SCALAR slot_sum(const SCALAR *partials, uint groups, uint slot) {
    SCALAR acc = ZERO;
    const SCALAR *p = partials + (ulong)slot * groups;
#pragma unroll 8
    for (uint g = 0; g < groups; ++g) {
        acc += p[g];
    }
    return acc;
}
