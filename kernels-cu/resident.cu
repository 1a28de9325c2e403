/*
 * resident.cu -- device-resident pipelined CG and BiCGStab (issue 15): the host enqueues
 * iterations ahead and the scalars stay on the device. Mirrors kernels-cl/resident.cl; conventions in reduce.cu.
 *
 * The state is an array of doubles (whatever SCALAR is):
 *   state[0] flag (0: running; 1: the host must take over at the iteration in state[3] + 1)
 *   state[1] alpha, state[2] beta of the next iteration
 *   state[3] iterations completed on the device (the last ordinary one)
 *   state[4] target ||r|| <= target, state[5] dtol * ||r_0||, state[6] max iterations
 *   BiCGStab: state[7] omega, state[8] ||r|| of the last iteration (written by the update),
 *   state[9] ||r0*||, state[10] the solve precision's epsilon squared, state[11] rho of the
 *   current iteration, state[12] / state[13] the iteration count / ||r|| the current update
 *   reads (copied from state[3] / state[8] by the s-update)
 *   state[16 + k] ||r|| of the k-th iteration of the current batch
 *
 *   cg_scalars (const SCALAR* partials, uint groups, uint slot_rr, uint slot_apap,
 *               uint slot_pap, uint slot_rz, uint slot_apq, uint with_pc, uint hist_index,
 *               double* state)
 *       one block: finishes the five sums in group order in double (as the host's finish does),
 *       then, unless the flag is set, either flags an iteration the host must handle (a
 *       residual that claims convergence, a non-positive <r, z> or <p, Ap>, NaN, divergence,
 *       the iteration limit) or records ||r|| and computes alpha = gamma / <p, Ap> and
 *       beta = alpha^2 <Ap, q> / gamma - 1 exactly as the host does (no contraction).
 *   cg_update_resident  (const double* state, SCALAR* x, SCALAR* r, SCALAR* p,
 *                        const SCALAR* ap, uint n, SCALAR* partials, uint slot_rr)
 *   pcg_update_resident (const double* state, SCALAR* x, SCALAR* r, SCALAR* z, SCALAR* p,
 *                        const SCALAR* ap, const SCALAR* q, uint n, SCALAR* partials,
 *                        uint slot_rr, uint slot_rz)
 *       cg_update / pcg_update with alpha and beta from the state; nothing when the flag is set.
 *   bicgstab_s_update_resident (double* state, const SCALAR* r, const SCALAR* ap, SCALAR* s,
 *                               uint n, SCALAR* partials, uint slot_rr0, uint slot_apr0,
 *                               uint slot_ss)
 *   bicgstab_update_resident (double* state, uint slot_apr0, uint slot_ss, uint slot_ass,
 *                             uint slot_asas, uint slot_asr0, uint hist_index, SCALAR* x,
 *                             SCALAR* r, SCALAR* p, const SCALAR* s, const SCALAR* ap,
 *                             const SCALAR* as_, const SCALAR* phat, const SCALAR* shat,
 *                             const SCALAR* r0star, uint n, SCALAR* partials, uint slot_rr0,
 *                             uint slot_rr)
 *       as in resident.cl: the s-update also stores rho and the counters the update reads; every
 *       block of the update finishes the five sums, decides and computes the coefficients
 *       exactly as the host does (no contraction), block 0 records or flags.
 * The scalars kernels are launched with one block; the updates with partials.groups() blocks.
 */

/* The state's type (the same name as in resident.cl, where it is float on devices without fp64). */
#define RSTATE double

#define RS_FLAG 0
#define RS_ALPHA 1
#define RS_BETA 2
#define RS_ITER 3
#define RS_TARGET 4
#define RS_DTOL_R0 5
#define RS_MAX_ITER 6
#define RS_OMEGA 7
#define RS_R_NORM 8
#define RS_R0STAR_NORM 9
#define RS_EPS2 10
#define RS_RHO 11
#define RS_ITER_CUR 12
#define RS_R_NORM_CUR 13
#define RS_HISTORY 16
/* Entries before the history. */
#define RS_HEADER 16

/* The header into shared memory, by threads of another warp than the ones summing the partials
 * (so the two loads overlap); on blocks below 64, by the first threads. */
__device__ __forceinline__ void rs_load_header(const RSTATE *state, double *hdr, const uint t) {
#if WG >= 64
    if (t >= 32 && t < 32 + RS_HEADER) {
        hdr[t - 32] = state[t - 32];
    }
#else
    for (uint k = t; k < RS_HEADER; k += WG) {
        hdr[k] = state[k];
    }
#endif
}

extern "C" __launch_bounds__(WG) __global__ void cg_scalars(const SCALAR *partials, const uint groups, const uint slot_rr,
                                                            const uint slot_apap, const uint slot_pap, const uint slot_rz,
                                                            const uint slot_apq, const uint with_pc, const uint hist_index,
                                                            RSTATE *state) {
    __shared__ double sums[5];
    __shared__ double hdr[RS_HEADER];
    const uint t = threadIdx.x;
    rs_load_header(state, hdr, t);
    if (t < 5) {
        const uint slot = t == 0 ? slot_rr : t == 1 ? slot_apap : t == 2 ? slot_pap : t == 3 ? slot_rz : slot_apq;
        const SCALAR *p = partials + (ulong)slot * groups;
        double acc = 0.0;
        for (uint g = 0; g < groups; ++g) {
            acc = __dadd_rn(acc, (double)p[g]);
        }
        sums[t] = acc;
    }
    __syncthreads();
    if (t != 0 || hdr[RS_FLAG] != 0.0) {
        return;
    }
    const double rr = sums[0];
    const double curvature = with_pc ? sums[4] : sums[1];
    const double delta = sums[2];
    const double gamma = with_pc ? sums[3] : rr;
    const double rnorm = isnan(rr) ? rr : __dsqrt_rn(fmax(rr, 0.0));
    const double it = hdr[RS_ITER] + 1.0;
    const bool ordinary = isfinite(rnorm) && !(rnorm <= hdr[RS_TARGET]) && !(rnorm > hdr[RS_DTOL_R0]) &&
                          it < hdr[RS_MAX_ITER] && isfinite(delta) && isfinite(gamma) && isfinite(curvature) &&
                          !(with_pc && gamma <= 0.0) && delta > 0.0;
    if (!ordinary) {
        state[RS_FLAG] = 1.0;
        return;
    }
    const double alpha = __ddiv_rn(gamma, delta);
    state[RS_ALPHA] = alpha;
    state[RS_BETA] = __dadd_rn(__ddiv_rn(__dmul_rn(__dmul_rn(alpha, alpha), curvature), gamma), -1.0);
    state[RS_ITER] = it;
    state[RS_HISTORY + hist_index] = rnorm;
}

extern "C" __launch_bounds__(WG) __global__ void cg_update_resident(const RSTATE *state, SCALAR *x, SCALAR *r, SCALAR *p,
                                                                    const SCALAR *ap, const uint n, SCALAR *partials,
                                                                    const uint slot_rr) {
    if (state[RS_FLAG] != 0.0) {
        return;
    }
    cg_update_body((SCALAR)state[RS_ALPHA], (SCALAR)state[RS_BETA], x, r, p, ap, n, partials, slot_rr);
}

extern "C" __launch_bounds__(WG) __global__ void pcg_update_resident(const RSTATE *state, SCALAR *x, SCALAR *r, SCALAR *z,
                                                                     SCALAR *p, const SCALAR *ap, const SCALAR *q,
                                                                     const uint n, SCALAR *partials, const uint slot_rr,
                                                                     const uint slot_rz) {
    if (state[RS_FLAG] != 0.0) {
        return;
    }
    pcg_update_body((SCALAR)state[RS_ALPHA], (SCALAR)state[RS_BETA], x, r, z, p, ap, q, n, partials, slot_rr,
                    slot_rz);
}

extern "C" __launch_bounds__(WG) __global__ void bicgstab_s_update_resident(RSTATE *state, const SCALAR *r,
                                                                            const SCALAR *ap, SCALAR *s, const uint n,
                                                                            SCALAR *partials, const uint slot_rr0,
                                                                            const uint slot_apr0, const uint slot_ss) {
    __shared__ double sums[2];
    bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, sums);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        state[RS_RHO] = sums[0];
        state[RS_ITER_CUR] = state[RS_ITER];
        state[RS_R_NORM_CUR] = state[RS_R_NORM];
    }
}

/* ||v|| from <v, v> as the host's norm: NaN stays NaN, a negative rounding is 0. */
__device__ __forceinline__ double rs_norm(const double sq) {
    return isnan(sq) ? sq : __dsqrt_rn(fmax(sq, 0.0));
}

extern "C" __launch_bounds__(WG) __global__ void bicgstab_update_resident(
    RSTATE *state, const uint slot_apr0, const uint slot_ss, const uint slot_ass, const uint slot_asas,
    const uint slot_asr0, const uint hist_index, SCALAR *x, SCALAR *r, SCALAR *p, const SCALAR *s, const SCALAR *ap,
    const SCALAR *as_, const SCALAR *phat, const SCALAR *shat, const SCALAR *r0star, const uint n, SCALAR *partials,
    const uint slot_rr0, const uint slot_rr) {
    __shared__ double sums[5];
    __shared__ double hdr[RS_HEADER];
    /* alpha, omega, beta, and 1 when this block updates */
    __shared__ double coef[4];
    const uint t = threadIdx.x;
    rs_load_header(state, hdr, t);
    if (t < 5) {
        const uint slot = t == 0 ? slot_apr0 : t == 1 ? slot_ss : t == 2 ? slot_ass : t == 3 ? slot_asas : slot_asr0;
        const SCALAR *q = partials + (ulong)slot * gridDim.x;
        double acc = 0.0;
        for (uint g = 0; g < gridDim.x; ++g) {
            acc = __dadd_rn(acc, (double)q[g]);
        }
        sums[t] = acc;
    }
    __syncthreads();
    if (t == 0) {
        /* Block 0 may set the flag while another block reads it: that block then skips the
         * update, which it would have decided anyway from the same sums. */
        const bool stopped = hdr[RS_FLAG] != 0.0;
        const double rho = hdr[RS_RHO];
        const double ap_r0 = sums[0];
        const double ss = sums[1];
        const double as_s = sums[2];
        const double as_as = sums[3];
        const double as_r0 = sums[4];
        const double target = hdr[RS_TARGET];
        const double rho_floor = __dmul_rn(__dmul_rn(hdr[RS_EPS2], hdr[RS_R_NORM_CUR]), hdr[RS_R0STAR_NORM]);
        const bool usable = isfinite(rho) && isfinite(ap_r0) && ap_r0 != 0.0 && !(fabs(rho) <= rho_floor) &&
                            isfinite(ss) && isfinite(as_s) && isfinite(as_as) && isfinite(as_r0) &&
                            !(rs_norm(ss) <= target);
        const double omega = as_as > 0.0 ? __ddiv_rn(as_s, as_as) : 0.0;
        const double rr = __dadd_rn(__dadd_rn(ss, -__dmul_rn(__dmul_rn(2.0, omega), as_s)),
                                    __dmul_rn(__dmul_rn(omega, omega), as_as));
        const double rnorm = rs_norm(rr);
        const double it = hdr[RS_ITER_CUR] + 1.0;
        const bool ordinary = usable && omega != 0.0 && isfinite(rnorm) && !(rnorm <= target) &&
                              !(rnorm > hdr[RS_DTOL_R0]) && it < hdr[RS_MAX_ITER];
        const double alpha = __ddiv_rn(rho, ap_r0);
        const double beta = __ddiv_rn(-as_r0, ap_r0);
        coef[0] = alpha;
        coef[1] = omega;
        coef[2] = beta;
        coef[3] = (!stopped && ordinary) ? 1.0 : 0.0;
        if (blockIdx.x == 0 && !stopped) {
            if (ordinary) {
                state[RS_ALPHA] = alpha;
                state[RS_OMEGA] = omega;
                state[RS_BETA] = beta;
                state[RS_R_NORM] = rnorm;
                state[RS_ITER] = it;
                state[RS_HISTORY + hist_index] = rnorm;
            } else {
                state[RS_FLAG] = 1.0;
            }
        }
    }
    __syncthreads();
    if (coef[3] == 0.0) {
        return;
    }
    bicgstab_update_body((SCALAR)coef[0], (SCALAR)coef[1], (SCALAR)coef[2], x, r, p, s, ap, as_, phat, shat, r0star, n,
                         partials, slot_rr0, slot_rr);
}
