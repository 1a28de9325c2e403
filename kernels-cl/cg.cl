/*
 * cg.cl -- fused updates of pipelined CG ([Rupp16], Alg. 2 lines 10-12 and the first stage of
 * line 15). Conventions (SCALAR, WG, uint/ulong, slots, partials layout): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   cg_update  (SCALAR alpha, SCALAR beta, SCALAR* x, SCALAR* r, SCALAR* p, const SCALAR* ap,
 *               uint n, SCALAR* partials, uint slot_rr)
 *       x += alpha p; r -= alpha Ap; p = r + beta p; partial <r, r>
 *   pcg_update (SCALAR alpha, SCALAR beta, SCALAR* x, SCALAR* r, SCALAR* z, SCALAR* p,
 *               const SCALAR* ap, const SCALAR* q, uint n, SCALAR* partials,
 *               uint slot_rr, uint slot_rz)
 *       x += alpha p; r -= alpha Ap; z -= alpha q; p = z + beta p; partials <r, r>, <r, z>
 * Both are launched with partials.groups() work-groups.
 */

/* The bodies, shared with the device-resident kernels of resident.cl (the same code, so the
 * same rounding: the device-resident mode reproduces the synchronous one bit for bit).
 * `scratch` is the kernel's __local array (WG entries for cg, 2 WG for pcg). */
inline void cg_update_into(const SCALAR alpha, const SCALAR beta, __global SCALAR *x, __global const SCALAR *r,
                           __global const SCALAR *p, __global const SCALAR *ap, __global SCALAR *r_out,
                           __global SCALAR *p_out, const uint n, __global SCALAR *partials, const uint slot_rr,
                           __local SCALAR *scratch) {
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        r_out[i] = ri;
        p_out[i] = ri + beta * pi;
        acc += ri * ri;
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot_rr, acc);
}

/* cg_update in place (cg_update_into with the new r and p over the old). */
inline void cg_update_body(const SCALAR alpha, const SCALAR beta, __global SCALAR *x, __global SCALAR *r,
                           __global SCALAR *p, __global const SCALAR *ap, const uint n,
                           __global SCALAR *partials, const uint slot_rr, __local SCALAR *scratch) {
    cg_update_into(alpha, beta, x, r, p, ap, r, p, n, partials, slot_rr, scratch);
}

inline void pcg_update_body(const SCALAR alpha, const SCALAR beta, __global SCALAR *x, __global SCALAR *r,
                            __global SCALAR *z, __global SCALAR *p, __global const SCALAR *ap,
                            __global const SCALAR *q, const uint n, __global SCALAR *partials,
                            const uint slot_rr, const uint slot_rz, __local SCALAR *scratch) {
    SCALAR acc[2] = {ZERO, ZERO};
    FOR_EACH(i, n) {
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        const SCALAR zi = z[i] - alpha * q[i];
        r[i] = ri;
        z[i] = zi;
        p[i] = zi + beta * pi;
        acc[0] += ri * ri;
        acc[1] += ri * zi;
    }
    group_sum_multi(scratch, acc, 2);
    write_partial(partials, slot_rr, acc[0]);
    write_partial(partials, slot_rz, acc[1]);
}

pk_kernel void cg_update(const SCALAR alpha, const SCALAR beta, PK_GLOBAL(SCALAR, x), PK_GLOBAL(SCALAR, r),
               PK_GLOBAL(SCALAR, p), PK_GLOBAL(const SCALAR, ap), const uint n,
               PK_GLOBAL(SCALAR, partials), const uint slot_rr) {
    PK_BIND(SCALAR, x);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, p);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    cg_update_body(alpha, beta, x, r, p, ap, n, partials, slot_rr, scratch);
}

pk_kernel void pcg_update(const SCALAR alpha, const SCALAR beta, PK_GLOBAL(SCALAR, x), PK_GLOBAL(SCALAR, r),
                PK_GLOBAL(SCALAR, z), PK_GLOBAL(SCALAR, p), PK_GLOBAL(const SCALAR, ap),
                PK_GLOBAL(const SCALAR, q), const uint n, PK_GLOBAL(SCALAR, partials),
                const uint slot_rr, const uint slot_rz) {
    PK_BIND(SCALAR, x);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, z);
    PK_BIND(SCALAR, p);
    PK_BIND(const SCALAR, ap);
    PK_BIND(const SCALAR, q);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[2 * WG];
    pcg_update_body(alpha, beta, x, r, z, p, ap, q, n, partials, slot_rr, slot_rz, scratch);
}
