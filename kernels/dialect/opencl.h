/*
 * kernels/dialect/opencl.h -- the OpenCL C dialect of the kernel sources, the twin of
 * kernels/dialect/cuda.h. Prepended to the family files when the program is built
 * (src/backend/kernel_sources.rs); it holds no kernels. The family files of kernels/ are
 * written in OpenCL C's own vocabulary plus the few names below that CUDA needs (pk_device,
 * LOCAL, PDL_WAIT, SUM_SCRATCH, PK_WARP32), which are plain OpenCL here.
 *
 * Build-time defines (passed by the backend):
 *   SCALAR  float or double (the solve precision)
 *   WG      work-group size: min(256, device max work-group size) rounded down to a power of
 *           two. Every kernel is launched with exactly WG work-items per group
 *           (reqd_work_group_size). Never assume a 32-wide warp: AMD wavefronts are 64
 *           (except under PK_NV_PTX, NVIDIA GPUs only: see the warp intrinsics below).
 *
 * Argument conventions, partials and loops: kernels/README.md (both runtimes).
 */

/* No fused multiply-add contraction: every backend rounds a*b + c the same way as the host
 * reference (CUDA: compile with --fmad=false). The kernels are memory-bound; FMA buys nothing. */
#pragma OPENCL FP_CONTRACT OFF

#define ZERO ((SCALAR)0)

/* Cache hints of the SpMV loads, the twin of kernels-cu/reduce.cu (PK_LOAD_HINTS, set by the
 * backend on NVIDIA GPUs only, where the OpenCL compiler takes inline PTX; 0 elsewhere):
 * MATRIX_LOAD_S / _U / _H read a matrix entry (SCALAR, uint, ushort) that the kernel reads once
 * and whole lines at a time, GATHER_LOAD_S an entry of the gathered vector.
 *   0: plain loads; 1: the matrix streamed (ld.global.cs, evict first); 2: as 1, and the
 *   gathers through the read-only path (ld.global.nc). */
#ifndef PK_LOAD_HINTS
#define PK_LOAD_HINTS 0
#endif
/* The asm loads are neither volatile nor memory operands: like CUDA's __ldcs / __ldg they are
 * only for data that no work-item writes while the kernel runs (the matrix; the gathered
 * vector, never the product's output). PK_SINGLE must accompany SCALAR=float (the backend
 * passes both). */
#if PK_LOAD_HINTS >= 1
#ifdef PK_SINGLE
#define PK_PTX_S "f32"
#define PK_PTX_S_REG "=f"
#else
#define PK_PTX_S "f64"
#define PK_PTX_S_REG "=d"
#endif
inline SCALAR matrix_load_s(__global const SCALAR *p) {
    SCALAR v;
    asm("ld.global.cs." PK_PTX_S " %0, [%1];" : PK_PTX_S_REG(v) : "l"((ulong)p));
    return v;
}
inline uint matrix_load_u(__global const uint *p) {
    uint v;
    asm("ld.global.cs.u32 %0, [%1];" : "=r"(v) : "l"((ulong)p));
    return v;
}
inline ushort matrix_load_h(__global const ushort *p) {
    ushort v;
    asm("ld.global.cs.u16 %0, [%1];" : "=h"(v) : "l"((ulong)p));
    return v;
}
#define MATRIX_LOAD_S(p) matrix_load_s(p)
#define MATRIX_LOAD_U(p) matrix_load_u(p)
#define MATRIX_LOAD_H(p) matrix_load_h(p)
#else
#define MATRIX_LOAD_S(p) (*(p))
#define MATRIX_LOAD_U(p) (*(p))
#define MATRIX_LOAD_H(p) (*(p))
#endif
#if PK_LOAD_HINTS >= 2
inline SCALAR gather_load_s(__global const SCALAR *p) {
    SCALAR v;
    asm("ld.global.nc." PK_PTX_S " %0, [%1];" : PK_PTX_S_REG(v) : "l"((ulong)p));
    return v;
}
#define GATHER_LOAD_S(p) gather_load_s(p)
#else
#define GATHER_LOAD_S(p) (*(p))
#endif

/* Warp intrinsics on NVIDIA GPUs (-D PK_NV_PTX, set by the backend there: NVIDIA's OpenCL
 * compiler takes inline PTX): work-items 32 k .. 32 k + 31 of a 1-D work-group are one warp,
 * as in CUDA. Every lane of the warp must call them (full mask). */
#ifdef PK_NV_PTX
/* __syncwarp: the warp's lanes meet, and their local-memory accesses are ordered. */
inline void warp_sync(void) {
    asm volatile("bar.warp.sync -1;" ::: "memory");
}
/* __shfl_sync(full, v, src) */
inline uint warp_shfl_u32(uint v, uint src) {
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src));
    return r;
}
#ifdef PK_SINGLE
inline SCALAR warp_shfl_scalar(SCALAR v, uint src) {
    return as_float(warp_shfl_u32(as_uint(v), src));
}
#else
inline SCALAR warp_shfl_scalar(SCALAR v, uint src) {
    uint2 p = as_uint2(v);
    p.x = warp_shfl_u32(p.x, src);
    p.y = warp_shfl_u32(p.y, src);
    return as_double(p);
}
#endif
/* The warp's smallest v (butterfly). */
inline uint warp_min_u32(uint v) {
    for (uint off = 16; off > 0; off >>= 1) {
        uint o;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(o) : "r"(v), "r"(off));
        v = min(v, o);
    }
    return v;
}
/* __ballot_sync(full, pred): bit l set when lane l's pred holds. */
inline uint warp_ballot(int pred) {
    uint r;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.ballot.b32 %0, p, 0xffffffff;\n\t}"
                 : "=r"(r)
                 : "r"(pred));
    return r;
}
#endif

/* Global-pointer parameters: every kernel declares them with PK_GLOBAL(T, name) (or
 * PK_GLOBAL_RESTRICT) and uses `name` as a pointer. Normally they are plain `__global T *`
 * parameters set with clSetKernelArg(cl_mem). With -D PK_ADDRESS_ARGS (NVIDIA GPUs, see
 * src/backend/opencl/address.rs) they are passed by value as the buffer's device address (a
 * `ulong` read once per buffer with buffer_address), and the program's source is rewritten at
 * build time (src/backend/opencl/packed.rs) to bind each one back to its pointer at the top of
 * the kernel's body: NVIDIA's runtime spends ~0.25 us of host time per cl_mem argument and
 * launch, against ~0.04 us per by-value argument (measured on the H200). */
#ifdef PK_ADDRESS_ARGS
#define PK_GLOBAL(T, name) const ulong name##_address
#define PK_GLOBAL_RESTRICT(T, name) const ulong name##_address
#else
#define PK_GLOBAL(T, name) __global T *name
#define PK_GLOBAL_RESTRICT(T, name) __global T *restrict name
#endif

/* Every kernel declaration starts with pk_kernel and has its name on the same line: the
 * work-group size is fixed at build time (-D WG), and one-line declarations let tools list the
 * kernels with a simple grep. */
#define pk_kernel __kernel __attribute__((reqd_work_group_size(WG, 1, 1)))

#ifdef BLOCKED_LOOPS
/* CPU devices (PoCL): the work-items of a group run one after another on a core, so a
 * grid-stride loop would stride through memory; each work-item takes one contiguous block. */
#define FOR_EACH(i, n)                                                                       \
    for (uint i##_blk = ((uint)(n) + (uint)get_global_size(0) - 1) / (uint)get_global_size(0), \
              i = min((uint)get_global_id(0) * i##_blk, (uint)(n)),                          \
              i##_end = min(i + i##_blk, (uint)(n));                                         \
         i < i##_end; ++i)
#else
/* GPUs: grid-stride, consecutive work-items on consecutive elements (coalesced). */
#define FOR_EACH(i, n) for (uint i = get_global_id(0); i < (uint)(n); i += get_global_size(0))
#endif

/* The dialect, for the rare guarded block of a family file. */
#define PK_OPENCL 1

/* ---- The shared vocabulary's names that only CUDA gives a meaning (kernels/dialect/cuda.h) ---- */

/* `#pragma unroll` where a #pragma cannot go (a macro's body): C99's _Pragma. */
#define PK_UNROLL _Pragma("unroll")

/* A helper function of a family file. */
#define pk_device inline
/* A pointer to a __local array (CUDA: a generic pointer). */
#define LOCAL __local
/* Programmatic dependent launch (CUDA sm_90+): nothing to wait for here, kernels on a queue
 * run one after another. */
#define PDL_WAIT() ((void)0)
#define PDL_START_NEXT() ((void)0)
#define PDL_WAIT_START_NEXT() ((void)0)
/* Warps of 32 work-items: on NVIDIA GPUs only (-D PK_NV_PTX, the warp intrinsics above). */
#ifdef PK_NV_PTX
#define PK_WARP32 1
#endif

/* The index of the lowest set bit of x != 0 (CUDA: __ffs). */
#define pk_lowest_bit(x) ((uint)popcount(((x) & (0u - (x))) - 1u))

/* Entries of the __local scratch of group_sum_multi(.., m). */
#define SUM_SCRATCH(m) ((m) * WG)

/* FOR_EACH(i, n) split after its first element, for the kernels that load their first element
 * early (before the barriers of a finish, or a wait):
 *   FOR_EACH_FIRST(n)           the first element of this work-item's loop (n or more: none)
 *   FOR_EACH_NEXT(i)            the element after i in that loop (maybe past its end)
 *   FOR_EACH_FROM(i, first, n)  the loop from element `first` (of the loop, or past its end) on */
#ifdef BLOCKED_LOOPS
#define FOR_EACH_BLOCK(n) (((uint)(n) + (uint)get_global_size(0) - 1) / (uint)get_global_size(0))
#define FOR_EACH_FIRST(n) min((uint)get_global_id(0) * FOR_EACH_BLOCK(n), (uint)(n))
#define FOR_EACH_NEXT(i) ((i) + 1)
#define FOR_EACH_FROM(i, first, n) \
    for (uint i = (first), i##_end = min(FOR_EACH_FIRST(n) + FOR_EACH_BLOCK(n), (uint)(n)); i < i##_end; ++i)
#else
#define FOR_EACH_FIRST(n) ((uint)get_global_id(0))
#define FOR_EACH_NEXT(i) ((i) + (uint)get_global_size(0))
#define FOR_EACH_FROM(i, first, n) for (uint i = (first); i < (uint)(n); i += get_global_size(0))
#endif

/* Tree sum of one value per work-item over the work-group; every work-item gets the result.
 * `scratch` has WG entries. Must be called by all work-items of the group. */
inline SCALAR group_sum(__local SCALAR *scratch, SCALAR v) {
    const uint lid = get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            scratch[lid] += scratch[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const SCALAR r = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused right after */
    return r;
}

/* Tree sums of m values per work-item (m <= 8); vals[k] is replaced by the group sum of k.
 * `scratch` has m * WG entries (value k of work-item t at k*WG + t). */
inline void group_sum_multi(__local SCALAR *scratch, SCALAR *vals, uint m) {
    const uint lid = get_local_id(0);
    for (uint k = 0; k < m; ++k) {
        scratch[k * WG + lid] = vals[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            for (uint k = 0; k < m; ++k) {
                scratch[k * WG + lid] += scratch[k * WG + lid + s];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint k = 0; k < m; ++k) {
        vals[k] = scratch[k * WG];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The finished sums of
 * `count` (1..5) partials slots s0..s4 in FINISH_T (double; float on OpenCL devices without fp64)
 * into sums[0..count), in the host's finish order (src/backend/partials.rs, FINISH_LANES), so the
 * same bits: group g goes to lane g mod 32, each lane adds its groups in group order from 0, then
 * the lanes are added pairwise (lane l += lane l + h, h = 16, 8, 4, 2, 1). `sums` is a __local
 * array of FINISH_SCRATCH(count) entries (OpenCL stages the lanes after the sums: count x 32
 * work-items write them, then work-item k adds slot k's lanes pairwise in private memory, one
 * barrier in all). The chain is groups / 32 + 5 additions instead of `groups`. Called by every
 * work-item; the caller puts a barrier before reading `sums`. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define FINISH_T double
#else
#define FINISH_T float
#endif
#define FINISH_LANES 32
#define FINISH_SCRATCH(m) (8 + (m) * FINISH_LANES)
inline void ordered_slot_sums(__global const SCALAR *partials, const uint groups, const uint count, const uint s0,
                              const uint s1, const uint s2, const uint s3, const uint s4, __local FINISH_T *sums) {
    __local FINISH_T *stage = sums + 8;
    const uint t = get_local_id(0);
    for (uint i = t; i < count * FINISH_LANES; i += WG) {
        const uint k = i / FINISH_LANES;
        const uint slot = k == 0 ? s0 : k == 1 ? s1 : k == 2 ? s2 : k == 3 ? s3 : s4;
        __global const SCALAR *p = partials + (ulong)slot * groups;
        FINISH_T acc = (FINISH_T)0;
        for (uint g = i % FINISH_LANES; g < groups; g += FINISH_LANES) {
            acc = acc + (FINISH_T)p[g];
        }
        stage[i] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < count) {
        FINISH_T v[FINISH_LANES];
        for (uint l = 0; l < FINISH_LANES; ++l) {
            v[l] = stage[t * FINISH_LANES + l];
        }
        for (uint h = FINISH_LANES / 2; h > 0; h >>= 1) {
            for (uint l = 0; l < h; ++l) {
                v[l] = v[l] + v[l + h];
            }
        }
        sums[t] = v[0];
    }
}

/* Write this group's partial of `slot` (called by all work-items after group_sum). */
inline void write_partial(__global SCALAR *partials, uint slot, SCALAR v) {
    if (get_local_id(0) == 0) {
        partials[(ulong)slot * get_num_groups(0) + get_group_id(0)] = v;
    }
}

/* Sequential sum of the `groups` partials of `slot`, in index order (one work-item). The loads
 * are issued 8 at a time ahead of the (ordered) additions: a chain of hundreds of dependent
 * global loads otherwise dominates BiCGStab's s-update at mid sizes. */
inline SCALAR slot_sum(__global const SCALAR *partials, uint groups, uint slot) {
    SCALAR acc = ZERO;
    __global const SCALAR *p = partials + (ulong)slot * groups;
    uint g = 0;
    for (; g + 8 <= groups; g += 8) {
        const SCALAR a0 = p[g], a1 = p[g + 1], a2 = p[g + 2], a3 = p[g + 3];
        const SCALAR a4 = p[g + 4], a5 = p[g + 5], a6 = p[g + 6], a7 = p[g + 7];
        acc += a0;
        acc += a1;
        acc += a2;
        acc += a3;
        acc += a4;
        acc += a5;
        acc += a6;
        acc += a7;
    }
    for (; g < groups; ++g) {
        acc += p[g];
    }
    return acc;
}
