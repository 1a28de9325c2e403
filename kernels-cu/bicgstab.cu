/*
 * bicgstab.cu -- fused updates of pipelined BiCGStab ([Rupp16], Alg. 4). Mirrors
 * kernels-cl/bicgstab.cl; conventions in reduce.cu.
 *
 *   bicgstab_s_update (const SCALAR* r, const SCALAR* ap, SCALAR* s, uint n, SCALAR* partials,
 *                      uint slot_rr0, uint slot_apr0, uint slot_ss)
 *       every block: alpha = (SCALAR)(sum(rr0) / sum(apr0)) with the sums in double in group
 *       order, exactly as the host finishes them for bicgstab_update's alpha (so s and x use
 *       the same alpha; f32 solves drifted when the kernel summed in float);
 *       s = r - alpha Ap; partial <s, s> into slot_ss (slot_ss differs from the other two).
 *   bicgstab_update   (SCALAR alpha, SCALAR omega, SCALAR beta, SCALAR* x, SCALAR* r,
 *                      SCALAR* p, const SCALAR* s, const SCALAR* ap, const SCALAR* as_,
 *                      const SCALAR* phat, const SCALAR* shat, const SCALAR* r0star, uint n,
 *                      SCALAR* partials, uint slot_rr0, uint slot_rr)
 *       x += alpha phat + omega shat; r = s - omega As; p = r + beta (p - omega Ap);
 *       partials <r, r0*> and <r, r>. Without preconditioning the host passes p as phat and
 *       s as shat (phat_i is read before p_i is written, by the same thread).
 * Both are launched with partials.groups() blocks.
 */

/* The body of bicgstab_s_update, shared with bicgstab_s_update_resident of resident.cu; the
 * finished sums stay in `sums` (rho, <Ap, r0*>). With `stop` nonzero (the resident kernels' flag,
 * loaded by the caller so that the load overlaps the sums' loads) nothing is written and false
 * is returned; every thread of the block gets the same `stop`. */
__device__ __forceinline__ bool bicgstab_s_update_body(const SCALAR *r, const SCALAR *ap, SCALAR *s, const uint n,
                                                       SCALAR *partials, const uint slot_rr0, const uint slot_apr0,
                                                       const uint slot_ss, const double stop, double *sums) {
    /* The first element's operands are loaded before the sums are finished (they do not depend
     * on them; the compiler would not move the loads across the barriers). */
    const uint i0 = GRID_START;
    const SCALAR r0 = i0 < n ? r[i0] : ZERO;
    const SCALAR ap0 = i0 < n ? ap[i0] : ZERO;
    ordered_slot_sums(partials, gridDim.x, 2u, slot_rr0, slot_apr0, 0u, 0u, 0u, sums);
    __syncthreads();
    if (stop != 0.0) {
        return false;
    }
    const SCALAR alpha = (SCALAR)__ddiv_rn(sums[0], sums[1]);
    SCALAR acc = ZERO;
    for (uint i = i0; i < n; i += GRID_STRIDE) {
        const SCALAR si = (i == i0 ? r0 : r[i]) - alpha * (i == i0 ? ap0 : ap[i]);
        s[i] = si;
        acc += si * si;
    }
    write_partial(partials, slot_ss, block_sum1(acc));
    return true;
}

extern "C" __launch_bounds__(WG) __global__ void bicgstab_s_update(const SCALAR *r, const SCALAR *ap, SCALAR *s, const uint n, SCALAR *partials,
                  const uint slot_rr0, const uint slot_apr0, const uint slot_ss) {
    PDL_WAIT();
    __shared__ double sums[2];
    bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, 0.0, sums);
}

/* The body, shared with bicgstab_update_resident of resident.cu (the same code, so the same
 * rounding). */
__device__ __forceinline__ void bicgstab_update_element(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                                                        SCALAR *x, SCALAR *r, SCALAR *p, const uint i,
                                                        const SCALAR xi, const SCALAR ph, const SCALAR sh,
                                                        const SCALAR pi, const SCALAR si, const SCALAR asi,
                                                        const SCALAR api, const SCALAR r0i, SCALAR (&acc)[2]) {
    x[i] = xi + (alpha * ph + omega * sh);
    const SCALAR ri = si - omega * asi;
    r[i] = ri;
    p[i] = ri + beta * (pi - omega * api);
    acc[0] += ri * r0i;
    acc[1] += ri * ri;
}

/* The element loop of bicgstab_update from element `first` on (grid-stride), the partials
 * accumulated onto acc (bicgstab_update_resident handles its prefetched first element itself). */
__device__ __forceinline__ void bicgstab_update_rest(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                                                     SCALAR *x, SCALAR *r, SCALAR *p, const SCALAR *s,
                                                     const SCALAR *ap, const SCALAR *as_, const SCALAR *phat,
                                                     const SCALAR *shat, const SCALAR *r0star, const uint n,
                                                     const uint first, SCALAR (&acc)[2], SCALAR *partials,
                                                     const uint slot_rr0, const uint slot_rr) {
    for (uint i = first; i < n; i += GRID_STRIDE) {
        /* phat_i (p_i without preconditioning) is read before p_i is written. */
        bicgstab_update_element(alpha, omega, beta, x, r, p, i, x[i], phat[i], shat[i], p[i], s[i], as_[i], ap[i],
                                r0star[i], acc);
    }
    block_sum<2>(acc);
    write_partial(partials, slot_rr0, acc[0]);
    write_partial(partials, slot_rr, acc[1]);
}

/* The body, shared with bicgstab_update_resident of resident.cu (the same code, so the same
 * rounding). */
__device__ __forceinline__ void bicgstab_update_body(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                                                     SCALAR *x, SCALAR *r, SCALAR *p, const SCALAR *s,
                                                     const SCALAR *ap, const SCALAR *as_, const SCALAR *phat,
                                                     const SCALAR *shat, const SCALAR *r0star, const uint n,
                                                     SCALAR *partials, const uint slot_rr0, const uint slot_rr) {
    SCALAR acc[2] = {ZERO, ZERO};
    bicgstab_update_rest(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, n, GRID_START, acc, partials,
                         slot_rr0, slot_rr);
}

extern "C" __launch_bounds__(WG) __global__ void bicgstab_update(const SCALAR alpha, const SCALAR omega, const SCALAR beta, SCALAR *x, SCALAR *r,
                SCALAR *p, const SCALAR *s, const SCALAR *ap, const SCALAR *as_,
                const SCALAR *phat, const SCALAR *shat, const SCALAR *r0star, const uint n,
                SCALAR *partials, const uint slot_rr0, const uint slot_rr) {
    PDL_WAIT();
    bicgstab_update_body(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, n, partials, slot_rr0,
                         slot_rr);
}
