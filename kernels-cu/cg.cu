/*
 * cg.cu -- fused updates of pipelined CG ([Rupp16], Alg. 2 lines 10-12 and the first stage of
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
/* One element of cg_update from its loaded x_i, r_i, p_i, Ap_i; returns the new r_i. */
__device__ __forceinline__ SCALAR cg_update_element(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                                    SCALAR *p, const uint i, const SCALAR xi, const SCALAR ri_old,
                                                    const SCALAR pi, const SCALAR api) {
    x[i] = xi + alpha * pi;
    const SCALAR ri = ri_old - alpha * api;
    r[i] = ri;
    p[i] = ri + beta * pi;
    return ri;
}

/* One element of pcg_update; returns the new r_i and z_i in rz. */
__device__ __forceinline__ void pcg_update_element(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                                   SCALAR *z, SCALAR *p, const uint i, const SCALAR xi,
                                                   const SCALAR ri_old, const SCALAR zi_old, const SCALAR pi,
                                                   const SCALAR api, const SCALAR qi, SCALAR (&rz)[2]) {
    x[i] = xi + alpha * pi;
    const SCALAR ri = ri_old - alpha * api;
    const SCALAR zi = zi_old - alpha * qi;
    r[i] = ri;
    z[i] = zi;
    p[i] = zi + beta * pi;
    rz[0] = ri;
    rz[1] = zi;
}

/* The element loop of cg_update from element `first` on (grid-stride), the partial <r, r>
 * accumulated onto `acc` (cg_update_resident handles its prefetched first element itself). */
__device__ __forceinline__ void cg_update_rest(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r, SCALAR *p,
                                               const SCALAR *ap, const uint n, const uint first, SCALAR acc,
                                               SCALAR *partials, const uint slot_rr) {
    for (uint i = first; i < n; i += GRID_STRIDE) {
        const SCALAR ri = cg_update_element(alpha, beta, x, r, p, i, x[i], r[i], p[i], ap[i]);
        acc += ri * ri;
    }
    write_partial(partials, slot_rr, block_sum1(acc));
}

__device__ __forceinline__ void cg_update_body(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                               SCALAR *p, const SCALAR *ap, const uint n, SCALAR *partials,
                                               const uint slot_rr) {
    cg_update_rest(alpha, beta, x, r, p, ap, n, GRID_START, ZERO, partials, slot_rr);
}

/* The element loop of pcg_update from element `first` on, the partials accumulated onto acc. */
__device__ __forceinline__ void pcg_update_rest(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                                SCALAR *z, SCALAR *p, const SCALAR *ap, const SCALAR *q,
                                                const uint n, const uint first, SCALAR (&acc)[2],
                                                SCALAR *partials, const uint slot_rr, const uint slot_rz) {
    for (uint i = first; i < n; i += GRID_STRIDE) {
        SCALAR rz[2];
        pcg_update_element(alpha, beta, x, r, z, p, i, x[i], r[i], z[i], p[i], ap[i], q[i], rz);
        acc[0] += rz[0] * rz[0];
        acc[1] += rz[0] * rz[1];
    }
    block_sum<2>(acc);
    write_partial(partials, slot_rr, acc[0]);
    write_partial(partials, slot_rz, acc[1]);
}

__device__ __forceinline__ void pcg_update_body(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r,
                                                SCALAR *z, SCALAR *p, const SCALAR *ap, const SCALAR *q,
                                                const uint n, SCALAR *partials, const uint slot_rr,
                                                const uint slot_rz) {
    SCALAR acc[2] = {ZERO, ZERO};
    pcg_update_rest(alpha, beta, x, r, z, p, ap, q, n, GRID_START, acc, partials, slot_rr, slot_rz);
}

extern "C" __launch_bounds__(WG) __global__ void cg_update(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r, SCALAR *p,
          const SCALAR *ap, const uint n, SCALAR *partials, const uint slot_rr) {
    PDL_WAIT();
    cg_update_body(alpha, beta, x, r, p, ap, n, partials, slot_rr);
}

extern "C" __launch_bounds__(WG) __global__ void pcg_update(const SCALAR alpha, const SCALAR beta, SCALAR *x, SCALAR *r, SCALAR *z, SCALAR *p,
           const SCALAR *ap, const SCALAR *q, const uint n, SCALAR *partials,
           const uint slot_rr, const uint slot_rz) {
    PDL_WAIT();
    pcg_update_body(alpha, beta, x, r, z, p, ap, q, n, partials, slot_rr, slot_rz);
}
