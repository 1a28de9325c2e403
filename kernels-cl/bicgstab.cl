/*
 * bicgstab.cl -- fused updates of pipelined BiCGStab ([Rupp16], Alg. 4).
 * Conventions (SCALAR, WG, uint/ulong, slots, partials layout): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   bicgstab_s_update (const SCALAR* r, const SCALAR* ap, SCALAR* s, uint n, SCALAR* partials,
 *                      uint slot_rr0, uint slot_apr0, uint slot_ss)
 *       every group: alpha = (SCALAR)(sum(rr0) / sum(apr0)) with the sums in double in the
 *       finish order (float on devices without fp64), exactly as the host finishes them for
 *       bicgstab_update's alpha (so s and x use the same alpha);
 *       s = r - alpha Ap; partial <s, s> into slot_ss (slot_ss differs from the other two).
 *   bicgstab_update   (SCALAR alpha, SCALAR omega, SCALAR beta, SCALAR* x, SCALAR* r,
 *                      SCALAR* p, const SCALAR* s, const SCALAR* ap, const SCALAR* as_,
 *                      const SCALAR* phat, const SCALAR* shat, const SCALAR* r0star, uint n,
 *                      SCALAR* partials, uint slot_rr0, uint slot_rr)
 *       x += alpha phat + omega shat; r = s - omega As; p = r + beta (p - omega Ap);
 *       partials <r, r0*> and <r, r>. Without preconditioning the host passes p as phat and
 *       s as shat (phat_i is read before p_i is written, by the same work-item).
 * Both are launched with partials.groups() work-groups.
 */

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define BICG_ACC double
#else
#define BICG_ACC float
#endif

/* Lanes of the finish order and the local entries ordered_slot_sums needs (5 slots at most). */
#define SUM_LANES 32
#define SUM_STAGE (5 * SUM_LANES)

/* The finished sums of `count` (1..5) partials slots s0..s4 in BICG_ACC, into sums[0..count), in
 * the host's finish order (src/backend/partials.rs, FINISH_LANES), so the same bits: group g goes to
 * lane g mod 32, each lane adds its groups in group order from 0, then the lanes are added pairwise
 * (lane l += lane l + h, h = 16, 8, 4, 2, 1). `stage` holds SUM_STAGE entries (the lanes, written by
 * count x 32 work-items); work-item k then adds slot k's lanes pairwise in private memory. The chain is
 * groups / 32 + 5 additions instead of `groups`. Called by every work-item; the caller puts a
 * barrier before reading `sums`. Shared with resident.cl and gmres.cl. */
inline void ordered_slot_sums(__global const SCALAR *partials, const uint groups, const uint count, const uint s0,
                              const uint s1, const uint s2, const uint s3, const uint s4, __local BICG_ACC *stage,
                              __local BICG_ACC *sums) {
    const uint t = get_local_id(0);
    for (uint i = t; i < count * SUM_LANES; i += WG) {
        const uint k = i / SUM_LANES;
        const uint slot = k == 0 ? s0 : k == 1 ? s1 : k == 2 ? s2 : k == 3 ? s3 : s4;
        __global const SCALAR *p = partials + (ulong)slot * groups;
        BICG_ACC acc = (BICG_ACC)0;
        for (uint g = i % SUM_LANES; g < groups; g += SUM_LANES) {
            acc = acc + (BICG_ACC)p[g];
        }
        stage[i] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < count) {
        /* The pairwise tree in private memory (one barrier in all, not one per level). */
        BICG_ACC v[SUM_LANES];
        for (uint l = 0; l < SUM_LANES; ++l) {
            v[l] = stage[t * SUM_LANES + l];
        }
        for (uint h = SUM_LANES / 2; h > 0; h >>= 1) {
            for (uint l = 0; l < h; ++l) {
                v[l] = v[l] + v[l + h];
            }
        }
        sums[t] = v[0];
    }
}

/* The body of bicgstab_s_update, shared with bicgstab_s_update_resident of resident.cl; the
 * finished sums stay in `sums` (rho, <Ap, r0*>). `scratch` holds WG entries, `stage` SUM_STAGE.
 * With `stop` (the resident kernels' flag; the same in every work-item) nothing is written and
 * false is returned. */
inline bool bicgstab_s_update_body(__global const SCALAR *r, __global const SCALAR *ap, __global SCALAR *s,
                                   const uint n, __global SCALAR *partials, const uint slot_rr0,
                                   const uint slot_apr0, const uint slot_ss, const bool stop,
                                   __local SCALAR *scratch, __local BICG_ACC *stage, __local BICG_ACC *sums) {
    ordered_slot_sums(partials, get_num_groups(0), 2u, slot_rr0, slot_apr0, 0u, 0u, 0u, stage, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (stop) {
        return false;
    }
    const SCALAR alpha = (SCALAR)(sums[0] / sums[1]);
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
        const SCALAR si = r[i] - alpha * ap[i];
        s[i] = si;
        acc += si * si;
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot_ss, acc);
    return true;
}

pk_kernel void bicgstab_s_update(PK_GLOBAL(const SCALAR, r), PK_GLOBAL(const SCALAR, ap), PK_GLOBAL(SCALAR, s),
                       const uint n, PK_GLOBAL(SCALAR, partials), const uint slot_rr0,
                       const uint slot_apr0, const uint slot_ss) {
    PK_BIND(const SCALAR, r);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, s);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local BICG_ACC sums[2];
    bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, false, scratch, stage, sums);
}

/* The body, shared with the resident kernels of resident.cl (the same code, so the same
 * rounding), with the new p into p_out (p itself in bicgstab_update_body). `scratch` is the
 * kernel's __local array of 2 WG entries. */
inline void bicgstab_update_into(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                                 __global SCALAR *x, __global SCALAR *r, __global const SCALAR *p,
                                 __global const SCALAR *s, __global const SCALAR *ap,
                                 __global const SCALAR *as_, __global const SCALAR *phat,
                                 __global const SCALAR *shat, __global const SCALAR *r0star,
                                 __global SCALAR *p_out, const uint n, __global SCALAR *partials,
                                 const uint slot_rr0, const uint slot_rr, __local SCALAR *scratch) {
    SCALAR acc[2] = {ZERO, ZERO};
    FOR_EACH(i, n) {
        const SCALAR ph = phat[i];
        const SCALAR sh = shat[i];
        const SCALAR pi = p[i];
        x[i] += alpha * ph + omega * sh;
        const SCALAR ri = s[i] - omega * as_[i];
        r[i] = ri;
        p_out[i] = ri + beta * (pi - omega * ap[i]);
        acc[0] += ri * r0star[i];
        acc[1] += ri * ri;
    }
    group_sum_multi(scratch, acc, 2);
    write_partial(partials, slot_rr0, acc[0]);
    write_partial(partials, slot_rr, acc[1]);
}

/* bicgstab_update_into with the new p over the old (phat_i is read before p_i is written). */
inline void bicgstab_update_body(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                                 __global SCALAR *x, __global SCALAR *r, __global SCALAR *p,
                                 __global const SCALAR *s, __global const SCALAR *ap,
                                 __global const SCALAR *as_, __global const SCALAR *phat,
                                 __global const SCALAR *shat, __global const SCALAR *r0star, const uint n,
                                 __global SCALAR *partials, const uint slot_rr0, const uint slot_rr,
                                 __local SCALAR *scratch) {
    bicgstab_update_into(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, p, n, partials, slot_rr0,
                         slot_rr, scratch);
}

pk_kernel void bicgstab_update(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                     PK_GLOBAL(SCALAR, x), PK_GLOBAL(SCALAR, r), PK_GLOBAL(SCALAR, p),
                     PK_GLOBAL(const SCALAR, s), PK_GLOBAL(const SCALAR, ap),
                     PK_GLOBAL(const SCALAR, as_), PK_GLOBAL(const SCALAR, phat),
                     PK_GLOBAL(const SCALAR, shat), PK_GLOBAL(const SCALAR, r0star), const uint n,
                     PK_GLOBAL(SCALAR, partials), const uint slot_rr0, const uint slot_rr) {
    PK_BIND(SCALAR, x);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, p);
    PK_BIND(const SCALAR, s);
    PK_BIND(const SCALAR, ap);
    PK_BIND(const SCALAR, as_);
    PK_BIND(const SCALAR, phat);
    PK_BIND(const SCALAR, shat);
    PK_BIND(const SCALAR, r0star);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[2 * WG];
    bicgstab_update_body(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, n, partials, slot_rr0,
                         slot_rr, scratch);
}
