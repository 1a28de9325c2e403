/*
 * cg.cu -- fused updates of pipelined CG (seed 001, Alg. 2 lines 10-12 and the first stage of
 * line 15). Mirrors kernels-cl/cg.cl; conventions in reduce.cu.
 *
 *   cg_update  (SCALAR alpha, SCALAR beta, SCALAR* x, SCALAR* r, SCALAR* p, const SCALAR* ap,
 *               uint n, SCALAR* partials, uint slot_rr)
 *       x += alpha p; r -= alpha Ap; p = r + beta p; partial <r, r>
 *   pcg_update (SCALAR alpha, SCALAR beta, SCALAR* x, SCALAR* r, SCALAR* z, SCALAR* p,
 *               const SCALAR* ap, const SCALAR* q, uint n, SCALAR* partials,
 *               uint slot_rr, uint slot_rz)
 *       x += alpha p; r -= alpha Ap; z -= alpha q; p = z + beta p; partials <r, r>, <r, z>
 * Both are launched with partials.groups() blocks.
 */

/* The bodies, shared with the device-resident kernels of resident.cu (the same code, so the
 * same rounding: the device-resident mode reproduces the synchronous one bit for bit). */
__device__ __forceinline__ void cg_update_body(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                               SCALAR *p, const SCALAR *ap, const uint n, SCALAR *partials,
                                               const uint slot_rr) {
    SCALAR acc = ZERO;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        r[i] = ri;
        p[i] = ri + beta * pi;
        acc += ri * ri;
    }
    write_partial(partials, slot_rr, block_sum1(acc));
}

__device__ __forceinline__ void pcg_update_body(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                                SCALAR *z, SCALAR *p, const SCALAR *ap, const SCALAR *q,
                                                const uint n, SCALAR *partials, const uint slot_rr,
                                                const uint slot_rz) {
    SCALAR acc[2] = {ZERO, ZERO};
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
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
    block_sum<2>(acc);
    write_partial(partials, slot_rr, acc[0]);
    write_partial(partials, slot_rz, acc[1]);
}

extern "C" __launch_bounds__(WG) __global__ void cg_update(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r, SCALAR *p,
          const SCALAR *ap, const uint n, SCALAR *partials, const uint slot_rr) {
    cg_update_body(alpha, beta, x, r, p, ap, n, partials, slot_rr);
}

extern "C" __launch_bounds__(WG) __global__ void pcg_update(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r, SCALAR *z, SCALAR *p,
           const SCALAR *ap, const SCALAR *q, const uint n, SCALAR *partials,
           const uint slot_rr, const uint slot_rz) {
    pcg_update_body(alpha, beta, x, r, z, p, ap, q, n, partials, slot_rr, slot_rz);
}
