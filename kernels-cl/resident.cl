/*
 * resident.cl -- device-resident pipelined CG and BiCGStab (issue 15): the host enqueues
 * iterations ahead and the scalars stay on the device. Conventions (SCALAR, WG, uint/ulong,
 * slots, partials layout): see reduce.cl.
 *
 * The state is an array of doubles (whatever SCALAR is; on a device without fp64 the kernels
 * are built with float state so that the program builds, and the library never selects them):
 *   state[0] flag (0: running; 1: the host must take over at the iteration after state[3])
 *   state[1] alpha, state[2] beta, state[7] omega of the last ordinary iteration (inspection)
 *   state[3] iterations completed on the device (the last ordinary one; only the host reads it)
 *   state[4] target ||r|| <= target, state[5] dtol * ||r_0||, state[6] max iterations
 *   BiCGStab: state[8] ||r|| of the last iteration (written by the update), state[9] ||r0*||,
 *   state[10] the solve precision's epsilon squared, state[11] rho of the current iteration,
 *   state[12] / state[13] the iteration count / ||r|| the current update reads (copied from
 *   state[3] / state[8] by the s-update)
 *   CG: state[14 + (k & 1)] the iteration count the update at batch position k reads (it
 *   writes the other one); BiCGStab: state[14] <Ap, r0*> of the current iteration (written by
 *   the s-update, read by bicgstab_fused_resident)
 *   state[16 + k] ||r|| of the iteration decided at batch position k
 * No kernel reads an entry that another work-group of the same launch writes, except the flag:
 * a work-group that sees the flag set by work-group 0 of its own launch skips the update, which
 * it would have decided anyway from the same sums.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   cg_update_resident  (double* state, uint slot_rr_in, uint slot_apap, uint slot_pap,
 *                        uint hist_index, SCALAR* x, SCALAR* r, SCALAR* p, const SCALAR* ap,
 *                        uint n, SCALAR* partials, uint slot_rr)
 *   pcg_update_resident (double* state, uint slot_rr_in, uint slot_pap, uint slot_rz_in,
 *                        uint slot_apq, uint hist_index, SCALAR* x, SCALAR* r, SCALAR* z,
 *                        SCALAR* p, const SCALAR* ap, const SCALAR* q, uint n,
 *                        SCALAR* partials, uint slot_rr, uint slot_rz)
 *       every work-group finishes the previous iteration's sums in the finish order in double and
 *       decides as the host does whether it is ordinary (not: a residual that claims
 *       convergence, a non-positive <r, z> or <p, Ap>, NaN, divergence, the iteration limit);
 *       if so it computes alpha = gamma / <p, Ap>, beta = alpha^2 <Ap, q> / gamma - 1 exactly
 *       as the host does (no contraction) and runs cg_update / pcg_update with them, writing
 *       the partials of slot_rr (slot_rz), which differ from the read slots (the host
 *       alternates two sets); work-group 0 records ||r|| or sets the flag.
 *   cg_fused_resident (double* state, uint slot_rr_in, uint slot_apap_in, uint slot_pap_in,
 *                      uint hist_index, const uint* row_ptr, const uint* col_idx,
 *                      const SCALAR* values, uint n, uint k, uint early, SCALAR* x,
 *                      const SCALAR* r, const SCALAR* p, const SCALAR* ap, SCALAR* r_out, SCALAR* p_out,
 *                      SCALAR* ap_out, SCALAR* partials, uint slot_rr_out, uint slot_apap_out,
 *                      uint slot_pap_out)
 *       one whole unpreconditioned iteration for a CSR matrix without long rows (k work-items
 *       per row; early: the CUDA twin's early matrix reads, ignored here): cg_update_resident's decision from the input slots (rr, <Ap, Ap>, <p, Ap>)
 *       and its update, writing the new r and p to r_out and p_out (x in place) and <r, r> to
 *       slot_rr_out, then spmv_dots_csr of the new p into ap_out with <Ap, Ap> and <p, Ap> into
 *       slot_apap_out and slot_pap_out; the product recomputes p_j = (r_j - alpha ap_j) + beta p_j
 *       where it reads it (the stored value, bit for bit), so no work-group reads what another
 *       writes. Not ordinary or stopped: nothing is written. The output slots and vectors differ
 *       from the input ones (the host alternates two sets).
 *   bicgstab_s_update_resident (double* state, const SCALAR* r, const SCALAR* ap, SCALAR* s,
 *                               uint n, SCALAR* partials, uint slot_rr0, uint slot_apr0,
 *                               uint slot_ss)
 *       bicgstab_s_update; work-group 0 also stores rho and <Ap, r0*> (its finished sums) and
 *       copies the last update's iteration count and ||r|| to the entries the next update
 *       reads. With the flag set, nothing is written (as in bicgstab_s_spmv_resident).
 *   bicgstab_s_spmv_resident (double* state, const uint* row_ptr, const uint* col_idx,
 *                             const SCALAR* values, uint n, uint k, uint early, const SCALAR* r,
 *                             const SCALAR* ap, SCALAR* s, SCALAR* as_, const SCALAR* r0star,
 *                             SCALAR* partials, uint slot_rr0, uint slot_apr0, uint slot_ss,
 *                             uint slot_asas, uint slot_ass, uint slot_asr0)
 *       bicgstab_s_update_resident followed by spmv_dots_csr (k threads per row, no long rows)
 *       of s into as_ with <As, As> (slot_asas), <As, s> (slot_ass), <As, r0*> (slot_asr0), in
 *       one launch, for an unpreconditioned solve: the s-update part is the same code (the same
 *       elements per work-group, the same partial <s, s>); the product reads s_j as
 *       r_j - alpha ap_j where it needs it (the value the s-update stores, bit for bit), so no
 *       work-group reads an s another one writes and the results are the two kernels'. early
 *       is read by the CUDA twin only (see spmv_dots_csr) and ignored here.
 *   bicgstab_update_resident (double* state, uint slot_apr0, uint slot_ss, uint slot_ass,
 *                             uint slot_asas, uint slot_asr0, uint hist_index, SCALAR* x,
 *                             SCALAR* r, SCALAR* p, const SCALAR* s, const SCALAR* ap,
 *                             const SCALAR* as_, const SCALAR* phat, const SCALAR* shat,
 *                             const SCALAR* r0star, uint n, SCALAR* partials, uint slot_rr0,
 *                             uint slot_rr)
 *       every work-group finishes the five sums in the finish order in double and decides, as the
 *       host does, whether the iteration is ordinary (not: NaN, <Ap, r0*> = 0, a rho or omega
 *       breakdown, ||s|| or the recurrence's ||r_{i+1}|| claiming convergence, divergence, the
 *       iteration limit); if so it computes alpha = rho / <Ap, r0*>,
 *       omega = <As, s> / <As, As>, beta = -<As, r0*> / <Ap, r0*> exactly as the host does and
 *       runs bicgstab_update with them; work-group 0 records ||r_{i+1}||^2 =
 *       <s, s> - 2 omega <As, s> + omega^2 <As, As> (its root) or sets the flag. Nothing when
 *       the flag is set. The written slots differ from the read ones.
 *   bicgstab_fused_resident (double* state, uint slot_ss, uint slot_ass, uint slot_asas,
 *                            uint slot_asr0, uint hist_index, const uint* row_ptr,
 *                            const uint* col_idx, const SCALAR* values, uint n, uint k, uint early,
 *                            SCALAR* x, SCALAR* r, const SCALAR* p, const SCALAR* s,
 *                            const SCALAR* ap, const SCALAR* as_, const SCALAR* r0star,
 *                            SCALAR* p_out, SCALAR* ap_out, SCALAR* partials, uint slot_rr0,
 *                            uint slot_rr, uint slot_apr0)
 *       an unpreconditioned update and the next iteration's A p in one launch, for a CSR matrix
 *       without long rows: bicgstab_update_resident's decision with <Ap, r0*> from state[14] (the
 *       s-update stored it there; the partials of slot_apr0 are overwritten by this launch) and
 *       its update, x and r in place and the new p into p_out, then spmv_dots_csr of the new p
 *       into ap_out with <Ap, r0*> into slot_apr0; the product recomputes
 *       p_j = (s_j - omega as_j) + beta (p_j - omega ap_j) where it reads it (the stored value,
 *       bit for bit). Not ordinary or stopped: nothing is written, and the s-updates, which check
 *       the flag, then write nothing either. p_out and ap_out differ from p and ap (the host
 *       alternates two sets).
 * All are launched with partials.groups() work-groups.
 */

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define RSTATE double
#else
#define RSTATE float
#endif

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
#define RS_ITER_PAR 14
#define RS_AP_R0 14
#define RS_SUMS 16
#define RS_HISTORY 20
/* Entries rs_load_header reads (the sums and the history follow). */
#define RS_HEADER 16

/* The header into __local memory, by work-items of the second warp (issued before
 * ordered_slot_sums loads the partials, so the loads overlap); on work-groups below 64, by the
 * first work-items. */
inline void rs_load_header(__global const RSTATE *state, __local RSTATE *hdr, const uint t) {
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

/* Work-group 0 stores rho and <Ap, r0*> (the finished sums) and copies the last update's
 * iteration count and ||r|| to the entries the next update reads (bicgstab_s_update_resident and
 * bicgstab_s_spmv_resident). */
inline void bicgstab_store_rho(__global RSTATE *state, __local const BICG_ACC *sums) {
    if (get_group_id(0) == 0 && get_local_id(0) == 0) {
        state[RS_RHO] = (RSTATE)sums[0];
        state[RS_AP_R0] = (RSTATE)sums[1];
        state[RS_ITER_CUR] = state[RS_ITER];
        state[RS_R_NORM_CUR] = state[RS_R_NORM];
    }
}

pk_kernel void bicgstab_s_update_resident(PK_GLOBAL(RSTATE, state), PK_GLOBAL(const SCALAR, r),
                                          PK_GLOBAL(const SCALAR, ap), PK_GLOBAL(SCALAR, s), const uint n,
                                          PK_GLOBAL(SCALAR, partials), const uint slot_rr0, const uint slot_apr0,
                                          const uint slot_ss) {
    PK_BIND(RSTATE, state);
    PK_BIND(const SCALAR, r);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, s);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local BICG_ACC sums[2];
    const bool stop = state[RS_FLAG] != (RSTATE)0;
    if (bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, stop, scratch, stage, sums)) {
        bicgstab_store_rho(state, sums);
    }
}

/* The sum of a row's k segment parts onto its first work-item (csr_row's tree in spmv.cl); every
 * work-item of the group calls it (barriers when k > 1). */
inline SCALAR segment_sum(SCALAR sum, const uint k, __local SCALAR *scratch) {
    if (k > 1) {
        const uint lid = get_local_id(0);
        const uint lane = lid & (k - 1);
        scratch[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint h = k / 2; h > 0; h >>= 1) {
            if (lane < h) {
                scratch[lid] += scratch[lid + h];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        sum = scratch[lid];
    }
    return sum;
}

/* csr_row of spmv.cl (no long rows) for A s with s_j = r_j - alpha ap_j computed where it is read
 * (bit for bit the stored s). Must be called by every work-item of the group. */
inline SCALAR csr_row_shifted(__global const uint *restrict row_ptr, __global const uint *restrict col_idx,
                              __global const SCALAR *restrict values, __global const SCALAR *r,
                              __global const SCALAR *ap, const SCALAR alpha, const uint row, const uint n_rows,
                              const uint k, __local SCALAR *scratch) {
    const uint lid = get_local_id(0);
    const uint lane = lid & (k - 1);
    SCALAR sum = ZERO;
    if (row < n_rows) {
        const uint end = row_ptr[row + 1];
        for (uint j = row_ptr[row] + lane; j < end; j += k) {
            const uint c = col_idx[j];
            sum += values[j] * (r[c] - alpha * ap[c]);
        }
    }
    return segment_sum(sum, k, scratch);
}

/* The dots of one entry of As (spmv.cl's row_dots with w0 = s computed in place). */
inline void shifted_row_dots(SCALAR *acc, const SCALAR v, const uint row, __global const SCALAR *r,
                             __global const SCALAR *ap, const SCALAR alpha, __global const SCALAR *r0star) {
    acc[0] += v * v;
    acc[1] += v * (r[row] - alpha * ap[row]);
    acc[2] += v * r0star[row];
}

pk_kernel void bicgstab_s_spmv_resident(PK_GLOBAL(RSTATE, state), PK_GLOBAL_RESTRICT(const uint, row_ptr),
                                        PK_GLOBAL_RESTRICT(const uint, col_idx),
                                        PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n, const uint k,
                                        const uint early, PK_GLOBAL(const SCALAR, r), PK_GLOBAL(const SCALAR, ap),
                                        PK_GLOBAL(SCALAR, s), PK_GLOBAL(SCALAR, as_),
                                        PK_GLOBAL(const SCALAR, r0star), PK_GLOBAL(SCALAR, partials),
                                        const uint slot_rr0, const uint slot_apr0, const uint slot_ss,
                                        const uint slot_asas, const uint slot_ass, const uint slot_asr0) {
    PK_BIND(RSTATE, state);
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(const SCALAR, r);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, s);
    PK_BIND(SCALAR, as_);
    PK_BIND(const SCALAR, r0star);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local BICG_ACC sums[2];
    const bool stop = state[RS_FLAG] != (RSTATE)0;
    if (!bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, stop, scratch, stage, sums)) {
        return;
    }
    bicgstab_store_rho(state, sums);
    const SCALAR alpha = (SCALAR)(sums[0] / sums[1]);
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    if (k == 1) {
        FOR_EACH(row, n) {
            const SCALAR v = csr_row_shifted(row_ptr, col_idx, values, r, ap, alpha, row, n, 1, scratch);
            as_[row] = v;
            shifted_row_dots(acc, v, row, r, ap, alpha, r0star);
        }
    } else {
        const uint rows_per_group = WG / k;
        const uint stride = get_num_groups(0) * rows_per_group;
        const uint lane = get_local_id(0) & (k - 1);
        for (uint base = get_group_id(0) * rows_per_group; base < n; base += stride) {
            const uint row = base + get_local_id(0) / k;
            const SCALAR v = csr_row_shifted(row_ptr, col_idx, values, r, ap, alpha, row, n, k, scratch);
            if (lane == 0 && row < n) {
                as_[row] = v;
                shifted_row_dots(acc, v, row, r, ap, alpha, r0star);
            }
        }
    }
    group_sum_multi(scratch, acc, 3);
    write_partial(partials, slot_asas, acc[0]);
    write_partial(partials, slot_ass, acc[1]);
    write_partial(partials, slot_asr0, acc[2]);
}

/* The new search direction of a fused update at entry c, from the unchanged old vectors, in the
 * statements of the update that stores it (so contracted alike: the stored value, bit for bit):
 * CG (bicgstab = 0)       p_c = (r_c - alpha ap_c) + beta p_c        (u = r, v = ap, w = alpha);
 * BiCGStab (bicgstab = 1) p_c = (s_c - omega as_c) + beta (p_c - omega ap_c)
 *                                                   (u = s, v = as_, w = omega, q = ap).
 * The callers pass bicgstab as a literal, so the compiler drops the other form. */
inline SCALAR fused_new_p(const uint bicgstab, __global const SCALAR *u, __global const SCALAR *v,
                          __global const SCALAR *p, __global const SCALAR *q, const SCALAR w, const SCALAR beta,
                          const uint c) {
    const SCALAR ri = u[c] - w * v[c];
    return bicgstab ? ri + beta * (p[c] - w * q[c]) : ri + beta * p[c];
}

/* csr_row_shifted with the entries of the new search direction (fused_new_p). */
inline SCALAR csr_row_new_p(__global const uint *restrict row_ptr, __global const uint *restrict col_idx,
                            __global const SCALAR *restrict values, const uint bicgstab, __global const SCALAR *u,
                            __global const SCALAR *v, __global const SCALAR *p, __global const SCALAR *q,
                            const SCALAR w, const SCALAR beta, const uint row, const uint n_rows, const uint k,
                            __local SCALAR *scratch) {
    const uint lid = get_local_id(0);
    const uint lane = lid & (k - 1);
    SCALAR sum = ZERO;
    if (row < n_rows) {
        const uint end = row_ptr[row + 1];
        for (uint j = row_ptr[row] + lane; j < end; j += k) {
            sum += values[j] * fused_new_p(bicgstab, u, v, p, q, w, beta, col_idx[j]);
        }
    }
    return segment_sum(sum, k, scratch);
}

/* One row's dots in a fused update's product (y = (A p_new)_row): CG's <Ap, Ap> and <p, Ap> into
 * acc[0] and acc[1], or BiCGStab's <Ap, r0*> into acc[1]. */
inline void fused_row_dots(const uint bicgstab, const SCALAR y, const uint row, __global const SCALAR *u,
                           __global const SCALAR *v, __global const SCALAR *p, __global const SCALAR *q,
                           const SCALAR w, const SCALAR beta, __global const SCALAR *r0star, SCALAR *acc) {
    if (bicgstab) {
        acc[1] += y * r0star[row];
    } else {
        acc[0] += y * y;
        acc[1] += y * fused_new_p(bicgstab, u, v, p, q, w, beta, row);
    }
}

/* The product of a fused update (csr_dots_body's rows and order): ap_out = A p_new, p_new's
 * entries recomputed where they are read (fused_new_p), and the dots of fused_row_dots; k
 * work-items per row. */
inline void fused_product_rows(__global const uint *restrict row_ptr, __global const uint *restrict col_idx,
                               __global const SCALAR *restrict values, const uint n, const uint k,
                               const uint bicgstab, __global const SCALAR *u, __global const SCALAR *v,
                               __global const SCALAR *p, __global const SCALAR *q, const SCALAR w,
                               const SCALAR beta, __global const SCALAR *r0star, __global SCALAR *ap_out,
                               SCALAR *acc, __local SCALAR *scratch) {
    if (k == 1) {
        FOR_EACH(row, n) {
            const SCALAR y = csr_row_new_p(row_ptr, col_idx, values, bicgstab, u, v, p, q, w, beta, row, n, 1, scratch);
            ap_out[row] = y;
            fused_row_dots(bicgstab, y, row, u, v, p, q, w, beta, r0star, acc);
        }
    } else {
        const uint rows_per_group = WG / k;
        const uint stride = get_num_groups(0) * rows_per_group;
        const uint lane = get_local_id(0) & (k - 1);
        for (uint base = get_group_id(0) * rows_per_group; base < n; base += stride) {
            const uint row = base + get_local_id(0) / k;
            const SCALAR y =
                csr_row_new_p(row_ptr, col_idx, values, bicgstab, u, v, p, q, w, beta, row, n, k, scratch);
            if (lane == 0 && row < n) {
                ap_out[row] = y;
                fused_row_dots(bicgstab, y, row, u, v, p, q, w, beta, r0star, acc);
            }
        }
    }
}

/* The work of cg_fused_resident after the scalars: cg_update_into r_out and p_out (x in
 * place), then csr_dots_body of the new p into ap_out with <Ap, Ap> and <p, Ap>, each entry of p
 * recomputed where it is read. `scratch` holds 3 WG entries. */
inline void cg_fused_body(const SCALAR alpha, const SCALAR beta, __global const uint *restrict row_ptr,
                          __global const uint *restrict col_idx, __global const SCALAR *restrict values,
                          const uint n, const uint k, __global SCALAR *x, __global const SCALAR *r,
                          __global const SCALAR *p, __global const SCALAR *ap, __global SCALAR *r_out,
                          __global SCALAR *p_out, __global SCALAR *ap_out, __global SCALAR *partials,
                          const uint slot_rr_out, const uint slot_apap_out, const uint slot_pap_out,
                          __local SCALAR *scratch) {
    cg_update_into(alpha, beta, x, r, p, ap, r_out, p_out, n, partials, slot_rr_out, scratch);
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    fused_product_rows(row_ptr, col_idx, values, n, k, 0, r, ap, p, ap, alpha, beta, r, ap_out, acc, scratch);
    /* Not finish_dots: with its early return (uniform, before the group sum) here, PoCL 3.1 computed
     * wrong sums and the resident CG stopped at iteration 2 (device_resident, resident_many_groups);
     * the same calls without that return pass. NVIDIA OpenCL passed either way. */
    group_sum_multi(scratch, acc, 3);
    write_partial(partials, slot_apap_out, acc[0]);
    write_partial(partials, slot_pap_out, acc[1]);
}

/* The work of bicgstab_fused_resident after the scalars: bicgstab_update_into (x and r in place,
 * the new p into p_out), then spmv_dots_csr of the new p into ap_out with <Ap, r0*>, each entry of
 * p recomputed where it is read. `scratch` holds 3 WG entries. */
inline void bicgstab_fused_body(const SCALAR alpha, const SCALAR omega, const SCALAR beta,
                                __global const uint *restrict row_ptr, __global const uint *restrict col_idx,
                                __global const SCALAR *restrict values, const uint n, const uint k,
                                __global SCALAR *x, __global SCALAR *r, __global const SCALAR *p,
                                __global const SCALAR *s, __global const SCALAR *ap, __global const SCALAR *as_,
                                __global const SCALAR *r0star, __global SCALAR *p_out, __global SCALAR *ap_out,
                                __global SCALAR *partials, const uint slot_rr0, const uint slot_rr,
                                const uint slot_apr0, __local SCALAR *scratch) {
    bicgstab_update_into(alpha, omega, beta, x, r, p, s, ap, as_, p, s, r0star, p_out, n, partials, slot_rr0, slot_rr,
                         scratch);
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    fused_product_rows(row_ptr, col_idx, values, n, k, 1, s, as_, p, ap, omega, beta, r0star, ap_out, acc, scratch);
    finish_dots(scratch, acc, partials, -1, (int)slot_apr0, -1);
}

/* The scalars exactly as the host computes them: no contraction into fma. This family is the last
 * of the program source, so the pragma changes no other kernel. */
#pragma OPENCL FP_CONTRACT OFF

/* ||v|| from <v, v> as the host's norm: NaN stays NaN, a negative rounding is 0. */
inline RSTATE rs_norm(const RSTATE sq) {
    return isnan(sq) ? sq : sqrt(fmax(sq, (RSTATE)0));
}

/* The CG scalars of the previous iteration in every work-group: the sums (rr, curvature
 * <Ap, Ap> or <Ap, q>, <p, Ap>, <r, z>) in the finish order in double, the host's decision, alpha and
 * beta into coef[0], coef[1], and coef[2] = 1 when the update runs; work-group 0 records the
 * iteration (history, ITER and the iteration count the next position reads) or sets the flag.
 * Called by every work-item. */
inline void cg_resident_scalars(__global RSTATE *state, __global const SCALAR *partials, const uint slot_rr,
                                const uint slot_curv, const uint slot_pap, const uint slot_rz, const uint with_pc,
                                const uint hist_index, const uint sums_ready, __local BICG_ACC *stage,
                                __local RSTATE *sums, __local RSTATE *hdr, __local RSTATE *coef) {
    const uint t = get_local_id(0);
    rs_load_header(state, hdr, t);
    /* With sums_ready the sums were finished once by cg_sums_resident (the same order, so the same
     * bits): no partials to read here (and no barrier under a condition); work-item 0 takes them
     * from the state below. */
    ordered_slot_sums(partials, sums_ready ? 0u : get_num_groups(0), with_pc ? 4u : 3u, slot_rr, slot_curv, slot_pap,
                      slot_rz, 0u, stage, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        /* Work-group 0 may set the flag while another group reads it: that group then skips
         * the update, which it would have decided anyway from the same sums. */
        const bool stopped = hdr[RS_FLAG] != (RSTATE)0;
        const RSTATE rr = sums_ready ? state[RS_SUMS] : sums[0];
        const RSTATE curvature = sums_ready ? state[RS_SUMS + 1] : sums[1];
        const RSTATE delta = sums_ready ? state[RS_SUMS + 2] : sums[2];
        const RSTATE gamma = with_pc ? (sums_ready ? state[RS_SUMS + 3] : sums[3]) : rr;
        const RSTATE rnorm = rs_norm(rr);
        const RSTATE it = hdr[RS_ITER_PAR + (hist_index & 1u)] + (RSTATE)1;
        const bool ordinary = isfinite(rnorm) && !(rnorm <= hdr[RS_TARGET]) && !(rnorm > hdr[RS_DTOL_R0]) &&
                              it < hdr[RS_MAX_ITER] && isfinite(delta) && isfinite(gamma) && isfinite(curvature) &&
                              !(with_pc && gamma <= (RSTATE)0) && delta > (RSTATE)0;
        const RSTATE alpha = gamma / delta;
        const RSTATE a2 = alpha * alpha;
        const RSTATE a2c = a2 * curvature;
        const RSTATE beta = a2c / gamma - (RSTATE)1;
        coef[0] = alpha;
        coef[1] = beta;
        coef[2] = (!stopped && ordinary) ? (RSTATE)1 : (RSTATE)0;
        if (get_group_id(0) == 0 && !stopped) {
            if (ordinary) {
                state[RS_ALPHA] = alpha;
                state[RS_BETA] = beta;
                state[RS_ITER] = it;
                state[RS_ITER_PAR + ((hist_index + 1u) & 1u)] = it;
                state[RS_HISTORY + hist_index] = rnorm;
            } else {
                state[RS_FLAG] = (RSTATE)1;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The sums a CG update finishes (<r, r>, the curvature <Ap, Ap> or <Ap, q>, <p, Ap>, and <r, z>
 * with a preconditioner) finished once, in ordered_slot_sums' order, into state[RS_SUMS..] for the
 * next cg_update_resident / pcg_update_resident launched with sums_ready: at large n, where the
 * product leaves a partial per group of a full-occupancy grid, every work-group of the update
 * finishing them costs more than this launch. One work-group; `groups` partials per slot. */
pk_kernel void cg_sums_resident(PK_GLOBAL(RSTATE, state), PK_GLOBAL(const SCALAR, partials), const uint groups,
                                const uint slot_rr, const uint slot_curv, const uint slot_pap, const uint slot_rz,
                                const uint with_pc) {
    PK_BIND(RSTATE, state);
    PK_BIND(const SCALAR, partials);
    __local BICG_ACC stage[SUM_STAGE];
    __local BICG_ACC sums[4];
    const uint count = with_pc ? 4u : 3u;
    ordered_slot_sums(partials, groups, count, slot_rr, slot_curv, slot_pap, slot_rz, 0u, stage, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) < count) {
        state[RS_SUMS + get_local_id(0)] = sums[get_local_id(0)];
    }
}

/* sums_ready: the sums come from cg_sums_resident (state[RS_SUMS..]) instead of the partials. */
pk_kernel void cg_update_resident(PK_GLOBAL(RSTATE, state), const uint slot_rr_in, const uint slot_apap,
                                  const uint slot_pap, const uint hist_index, PK_GLOBAL(SCALAR, x),
                                  PK_GLOBAL(SCALAR, r), PK_GLOBAL(SCALAR, p), PK_GLOBAL(const SCALAR, ap), const uint n,
                                  PK_GLOBAL(SCALAR, partials), const uint slot_rr, const uint sums_ready) {
    PK_BIND(RSTATE, state);
    PK_BIND(SCALAR, x);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, p);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local RSTATE sums[4];
    __local RSTATE hdr[RS_HEADER];
    __local RSTATE coef[3];
    cg_resident_scalars(state, partials, slot_rr_in, slot_apap, slot_pap, slot_rr_in, 0u, hist_index, sums_ready, stage,
                        sums, hdr,
                        coef);
    if (coef[2] == (RSTATE)0) {
        return;
    }
    cg_update_body((SCALAR)coef[0], (SCALAR)coef[1], x, r, p, ap, n, partials, slot_rr, scratch);
}

pk_kernel void cg_fused_resident(PK_GLOBAL(RSTATE, state), const uint slot_rr_in, const uint slot_apap_in,
                                 const uint slot_pap_in, const uint hist_index,
                                 PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                                 PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n, const uint k,
                                 const uint early, PK_GLOBAL(SCALAR, x), PK_GLOBAL(const SCALAR, r), PK_GLOBAL(const SCALAR, p),
                                 PK_GLOBAL(const SCALAR, ap), PK_GLOBAL(SCALAR, r_out), PK_GLOBAL(SCALAR, p_out),
                                 PK_GLOBAL(SCALAR, ap_out), PK_GLOBAL(SCALAR, partials), const uint slot_rr_out,
                                 const uint slot_apap_out, const uint slot_pap_out) {
    PK_BIND(RSTATE, state);
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(SCALAR, x);
    PK_BIND(const SCALAR, r);
    PK_BIND(const SCALAR, p);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, r_out);
    PK_BIND(SCALAR, p_out);
    PK_BIND(SCALAR, ap_out);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local RSTATE sums[4];
    __local RSTATE hdr[RS_HEADER];
    __local RSTATE coef[3];
    (void)early;
    cg_resident_scalars(state, partials, slot_rr_in, slot_apap_in, slot_pap_in, slot_rr_in, 0u, hist_index, 0u, stage,
                        sums, hdr, coef);
    if (coef[2] == (RSTATE)0) {
        return;
    }
    cg_fused_body((SCALAR)coef[0], (SCALAR)coef[1], row_ptr, col_idx, values, n, k, x, r, p, ap, r_out, p_out,
                  ap_out, partials, slot_rr_out, slot_apap_out, slot_pap_out, scratch);
}

pk_kernel void pcg_update_resident(PK_GLOBAL(RSTATE, state), const uint slot_rr_in, const uint slot_pap,
                                   const uint slot_rz_in, const uint slot_apq, const uint hist_index,
                                   PK_GLOBAL(SCALAR, x), PK_GLOBAL(SCALAR, r), PK_GLOBAL(SCALAR, z),
                                   PK_GLOBAL(SCALAR, p), PK_GLOBAL(const SCALAR, ap), PK_GLOBAL(const SCALAR, q),
                                   const uint n, PK_GLOBAL(SCALAR, partials), const uint slot_rr,
                                   const uint slot_rz, const uint sums_ready) {
    PK_BIND(RSTATE, state);
    PK_BIND(SCALAR, x);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, z);
    PK_BIND(SCALAR, p);
    PK_BIND(const SCALAR, ap);
    PK_BIND(const SCALAR, q);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[2 * WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local RSTATE sums[4];
    __local RSTATE hdr[RS_HEADER];
    __local RSTATE coef[3];
    cg_resident_scalars(state, partials, slot_rr_in, slot_apq, slot_pap, slot_rz_in, 1u, hist_index, sums_ready, stage,
                        sums, hdr,
                        coef);
    if (coef[2] == (RSTATE)0) {
        return;
    }
    pcg_update_body((SCALAR)coef[0], (SCALAR)coef[1], x, r, z, p, ap, q, n, partials, slot_rr, slot_rz, scratch);
}

/* The decision of a resident BiCGStab update, by work-item 0 of every group, from the header hdr,
 * <Ap, r0*> and the finished sums <s, s>, <As, s>, <As, As>, <As, r0*>: alpha, omega, beta into
 * coef[0..3] and coef[3] = 1 when the group updates; group 0 records the iteration or sets the
 * flag. Group 0 may set the flag while another group reads it: that group then skips the update,
 * which it would have decided anyway from the same sums. */
inline void bicgstab_resident_decide(__global RSTATE *state, __local const RSTATE *hdr, const RSTATE ap_r0,
                                     __local const RSTATE *sums, const uint hist_index, __local RSTATE *coef) {
    const bool stopped = hdr[RS_FLAG] != (RSTATE)0;
    const RSTATE rho = hdr[RS_RHO];
    const RSTATE ss = sums[0];
    const RSTATE as_s = sums[1];
    const RSTATE as_as = sums[2];
    const RSTATE as_r0 = sums[3];
    const RSTATE target = hdr[RS_TARGET];
    const bool usable = isfinite(rho) && isfinite(ap_r0) && ap_r0 != (RSTATE)0 &&
                        !(fabs(rho) <= hdr[RS_EPS2] * hdr[RS_R_NORM_CUR] * hdr[RS_R0STAR_NORM]) && isfinite(ss) &&
                        isfinite(as_s) && isfinite(as_as) && isfinite(as_r0) && !(rs_norm(ss) <= target);
    const RSTATE omega = as_as > (RSTATE)0 ? as_s / as_as : (RSTATE)0;
    const RSTATE rr = ss - (RSTATE)2 * omega * as_s + omega * omega * as_as;
    const RSTATE rnorm = rs_norm(rr);
    const RSTATE it = hdr[RS_ITER_CUR] + (RSTATE)1;
    const bool ordinary = usable && omega != (RSTATE)0 && isfinite(rnorm) && !(rnorm <= target) &&
                          !(rnorm > hdr[RS_DTOL_R0]) && it < hdr[RS_MAX_ITER];
    const RSTATE alpha = rho / ap_r0;
    const RSTATE beta = -as_r0 / ap_r0;
    coef[0] = alpha;
    coef[1] = omega;
    coef[2] = beta;
    coef[3] = (!stopped && ordinary) ? (RSTATE)1 : (RSTATE)0;
    if (get_group_id(0) == 0 && !stopped) {
        if (ordinary) {
            state[RS_ALPHA] = alpha;
            state[RS_OMEGA] = omega;
            state[RS_BETA] = beta;
            state[RS_R_NORM] = rnorm;
            state[RS_ITER] = it;
            state[RS_HISTORY + hist_index] = rnorm;
        } else {
            state[RS_FLAG] = (RSTATE)1;
        }
    }
}

pk_kernel void bicgstab_update_resident(PK_GLOBAL(RSTATE, state), const uint slot_apr0, const uint slot_ss,
                                        const uint slot_ass, const uint slot_asas, const uint slot_asr0,
                                        const uint hist_index, PK_GLOBAL(SCALAR, x), PK_GLOBAL(SCALAR, r),
                                        PK_GLOBAL(SCALAR, p), PK_GLOBAL(const SCALAR, s), PK_GLOBAL(const SCALAR, ap),
                                        PK_GLOBAL(const SCALAR, as_), PK_GLOBAL(const SCALAR, phat),
                                        PK_GLOBAL(const SCALAR, shat), PK_GLOBAL(const SCALAR, r0star), const uint n,
                                        PK_GLOBAL(SCALAR, partials), const uint slot_rr0, const uint slot_rr) {
    PK_BIND(RSTATE, state);
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
    __local BICG_ACC stage[SUM_STAGE];
    __local RSTATE sums[5];
    __local RSTATE hdr[RS_HEADER];
    /* alpha, omega, beta, and 1 when this work-group updates */
    __local RSTATE coef[4];
    const uint t = get_local_id(0);
    rs_load_header(state, hdr, t);
    ordered_slot_sums(partials, get_num_groups(0), 5u, slot_apr0, slot_ss, slot_ass, slot_asas, slot_asr0, stage,
                      sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        bicgstab_resident_decide(state, hdr, sums[0], sums + 1, hist_index, coef);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (coef[3] == (RSTATE)0) {
        return;
    }
    bicgstab_update_body((SCALAR)coef[0], (SCALAR)coef[1], (SCALAR)coef[2], x, r, p, s, ap, as_, phat, shat, r0star,
                         n, partials, slot_rr0, slot_rr, scratch);
}

pk_kernel void bicgstab_fused_resident(PK_GLOBAL(RSTATE, state), const uint slot_ss, const uint slot_ass,
                                       const uint slot_asas, const uint slot_asr0, const uint hist_index,
                                       PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                                       PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n, const uint k,
                                       const uint early, PK_GLOBAL(SCALAR, x), PK_GLOBAL(SCALAR, r),
                                       PK_GLOBAL(const SCALAR, p), PK_GLOBAL(const SCALAR, s),
                                       PK_GLOBAL(const SCALAR, ap), PK_GLOBAL(const SCALAR, as_),
                                       PK_GLOBAL(const SCALAR, r0star), PK_GLOBAL(SCALAR, p_out),
                                       PK_GLOBAL(SCALAR, ap_out), PK_GLOBAL(SCALAR, partials), const uint slot_rr0,
                                       const uint slot_rr, const uint slot_apr0) {
    PK_BIND(RSTATE, state);
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(SCALAR, x);
    PK_BIND(SCALAR, r);
    PK_BIND(const SCALAR, p);
    PK_BIND(const SCALAR, s);
    PK_BIND(const SCALAR, ap);
    PK_BIND(const SCALAR, as_);
    PK_BIND(const SCALAR, r0star);
    PK_BIND(SCALAR, p_out);
    PK_BIND(SCALAR, ap_out);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    __local BICG_ACC stage[SUM_STAGE];
    __local RSTATE sums[4];
    __local RSTATE hdr[RS_HEADER];
    __local RSTATE coef[4];
    (void)early;
    const uint t = get_local_id(0);
    rs_load_header(state, hdr, t);
    ordered_slot_sums(partials, get_num_groups(0), 4u, slot_ss, slot_ass, slot_asas, slot_asr0, 0u, stage, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        bicgstab_resident_decide(state, hdr, hdr[RS_AP_R0], sums, hist_index, coef);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (coef[3] == (RSTATE)0) {
        return;
    }
    bicgstab_fused_body((SCALAR)coef[0], (SCALAR)coef[1], (SCALAR)coef[2], row_ptr, col_idx, values, n, k, x, r, p, s,
                        ap, as_, r0star, p_out, ap_out, partials, slot_rr0, slot_rr, slot_apr0, scratch);
}
