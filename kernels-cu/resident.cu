/*
 * resident.cu -- device-resident pipelined CG and BiCGStab (issue 15): the host enqueues
 * iterations ahead and the scalars stay on the device. Mirrors kernels-cl/resident.cl (the state
 * layout, the argument lists and what each kernel computes are described there); conventions in
 * reduce.cu. The scalars are computed with explicitly rounded operations (no contraction).
 *
 *   cg_update_resident  (double* state, uint slot_rr_in, uint slot_apap, uint slot_pap,
 *                        uint hist_index, SCALAR* x, SCALAR* r, SCALAR* p, const SCALAR* ap,
 *                        uint n, SCALAR* partials, uint slot_rr)
 *   pcg_update_resident (double* state, uint slot_rr_in, uint slot_pap, uint slot_rz_in,
 *                        uint slot_apq, uint hist_index, SCALAR* x, SCALAR* r, SCALAR* z,
 *                        SCALAR* p, const SCALAR* ap, const SCALAR* q, uint n,
 *                        SCALAR* partials, uint slot_rr, uint slot_rz)
 *   bicgstab_s_update_resident (double* state, const SCALAR* r, const SCALAR* ap, SCALAR* s,
 *                               uint n, SCALAR* partials, uint slot_rr0, uint slot_apr0,
 *                               uint slot_ss)
 *   bicgstab_s_spmv_resident (double* state, const uint* row_ptr, const uint* col_idx,
 *                             const SCALAR* values, uint n, uint k, uint early,
 *                             const SCALAR* r,
 *                             const SCALAR* ap, SCALAR* s, SCALAR* as_, const SCALAR* r0star,
 *                             SCALAR* partials, uint slot_rr0, uint slot_apr0, uint slot_ss,
 *                             uint slot_asas, uint slot_ass, uint slot_asr0)
 *   bicgstab_update_resident (double* state, uint slot_apr0, uint slot_ss, uint slot_ass,
 *                             uint slot_asas, uint slot_asr0, uint hist_index, SCALAR* x,
 *                             SCALAR* r, SCALAR* p, const SCALAR* s, const SCALAR* ap,
 *                             const SCALAR* as_, const SCALAR* phat, const SCALAR* shat,
 *                             const SCALAR* r0star, uint n, SCALAR* partials, uint slot_rr0,
 *                             uint slot_rr)
 *   cg_fused_resident (double* state, uint slot_rr_in, uint slot_apap_in, uint slot_pap_in,
 *                      uint hist_index, const uint* row_ptr, const uint* col_idx,
 *                      const SCALAR* values, uint n, uint k, uint early, SCALAR* x,
 *                      const SCALAR* r, const SCALAR* p, const SCALAR* ap, SCALAR* r_out,
 *                      SCALAR* p_out, SCALAR* ap_out, SCALAR* partials, uint slot_rr_out,
 *                      uint slot_apap_out, uint slot_pap_out)
 *   bicgstab_fused_resident (double* state, uint slot_ss, uint slot_ass, uint slot_asas,
 *                            uint slot_asr0, uint hist_index, const uint* row_ptr,
 *                            const uint* col_idx, const SCALAR* values, uint n, uint k, uint early,
 *                            SCALAR* x, SCALAR* r, const SCALAR* p, const SCALAR* s,
 *                            const SCALAR* ap, const SCALAR* as_, const SCALAR* r0star,
 *                            SCALAR* p_out, SCALAR* ap_out, SCALAR* partials, uint slot_rr0,
 *                            uint slot_rr, uint slot_apr0)
 * All are launched with partials.groups() blocks.
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
#define RS_ITER_PAR 14
#define RS_AP_R0 14
#define RS_SUMS 16
#define RS_HISTORY 20
/* Entries rs_load_header reads (the sums and the history follow). */
#define RS_HEADER 16

/* The header into shared memory, by threads of the second warp (issued before ordered_slot_sums
 * loads the partials, so the loads overlap); on blocks below 64, by the first threads. */
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

/* Block 0 stores rho and <Ap, r0*> (the finished sums) and copies the last update's iteration
 * count and ||r|| to the entries the next update reads (bicgstab_s_update_resident and
 * bicgstab_s_spmv_resident). */
__device__ __forceinline__ void bicgstab_store_rho(RSTATE *state, const double *sums) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        state[RS_RHO] = sums[0];
        state[RS_AP_R0] = sums[1];
        state[RS_ITER_CUR] = state[RS_ITER];
        state[RS_R_NORM_CUR] = state[RS_R_NORM];
    }
}

extern "C" __launch_bounds__(WG) __global__ void bicgstab_s_update_resident(RSTATE *state, const SCALAR *r,
                                                                            const SCALAR *ap, SCALAR *s, const uint n,
                                                                            SCALAR *partials, const uint slot_rr0,
                                                                            const uint slot_apr0, const uint slot_ss) {
    PDL_WAIT_START_NEXT();
    __shared__ double sums[2];
    if (bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, state[RS_FLAG], sums)) {
        bicgstab_store_rho(state, sums);
    }
}

/* BiCGStab's s_j = r_j - alpha ap_j computed where it is read: the value bicgstab_s_update_body
 * stores, bit for bit (no contraction), so a row's sum is csr_row's on the stored s. */
struct BicgstabS {
    const SCALAR *r;
    const SCALAR *ap;
    SCALAR alpha;
    __device__ __forceinline__ SCALAR operator()(const uint c) const {
        return r[c] - alpha * ap[c];
    }
};

/* Row `row` of A v for spmv_dots_csr's K-thread segments (csr_row without long rows), with the
 * gathered entries v_c computed by g. */
template <uint K, class G>
__device__ __forceinline__ SCALAR csr_row_gathered(const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
                                                   const SCALAR *__restrict__ values, const G &g, const uint row,
                                                   const uint n_rows) {
    const uint lane = threadIdx.x & (K - 1);
    SCALAR sum = ZERO;
    if (row < n_rows) {
        const uint end = row_ptr[row + 1];
        for (uint j = row_ptr[row] + lane; j < end; j += K) {
            sum += values[j] * g(col_idx[j]);
        }
    }
#pragma unroll
    for (uint off = K / 2; off > 0; off >>= 1) {
        sum += __shfl_down_sync(FULL_MASK, sum, off, K);
    }
    return sum;
}

/* csr_row_gathered for the row whose first entries f holds (csr_first_then_wait): the same sum
 * in the same order. */
template <uint K, class G>
__device__ __forceinline__ SCALAR csr_row_gathered_first(const CsrFirst &f, const uint *__restrict__ col_idx,
                                                         const SCALAR *__restrict__ values, const G &g) {
    const uint lane = threadIdx.x & (K - 1);
    SCALAR sum = ZERO;
#pragma unroll
    for (uint t = 0; t < CSR_FIRST_ENTRIES; ++t) {
        if (f.begin + lane + t * K < f.end) {
            sum += f.val[t] * g(f.col[t]);
        }
    }
    for (uint j = f.begin + lane + CSR_FIRST_ENTRIES * K; j < f.end; j += K) {
        sum += values[j] * g(col_idx[j]);
    }
#pragma unroll
    for (uint off = K / 2; off > 0; off >>= 1) {
        sum += __shfl_down_sync(FULL_MASK, sum, off, K);
    }
    return sum;
}

/* The rows of a product whose vector is computed where it is read (g, e.g. BicgstabS), for K
 * threads per row: each row's sum v (spmv_dots_csr's order) goes to row_done(row, v) on the row's
 * first lane, for rows below n_rows. The first row of each thread comes from f (row0:
 * blockIdx.x (WG / K) + threadIdx.x / K; see csr_first_then_wait), outside the loop so that f's
 * registers are free for the rest (inside it they stayed live and the s-update's product took 106
 * registers instead of 32). */
template <uint K, class G, class RowDone>
__device__ __forceinline__ void csr_gathered_rows(const CsrFirst &f, const uint *__restrict__ row_ptr,
                                                  const uint *__restrict__ col_idx,
                                                  const SCALAR *__restrict__ values, const uint n_rows, const G &g,
                                                  RowDone row_done) {
    const uint rows_per_block = WG / K;
    const uint stride = gridDim.x * rows_per_block;
    const bool lane0 = (threadIdx.x & (K - 1)) == 0;
    const uint row0 = blockIdx.x * rows_per_block + threadIdx.x / K;
    if (blockIdx.x * rows_per_block < n_rows) { /* the block's segments alike (their shuffles) */
        const SCALAR v = csr_row_gathered_first<K>(f, col_idx, values, g);
        if (lane0 && row0 < n_rows) {
            row_done(row0, v);
        }
    }
    for (uint base = blockIdx.x * rows_per_block + stride; base < n_rows; base += stride) {
        const uint row = base + threadIdx.x / K;
        const SCALAR v = csr_row_gathered<K>(row_ptr, col_idx, values, g, row, n_rows);
        if (lane0 && row < n_rows) {
            row_done(row, v);
        }
    }
}

/* csr_dots_rows for y = A s with <y, y>, <y, s>, <y, w1>, s as BicgstabS computes it; the first
 * row of each thread from f (csr_gathered_rows). */
template <uint K>
__device__ __forceinline__ void csr_shifted_dots_rows(const CsrFirst &f, const uint *__restrict__ row_ptr,
                                                      const uint *__restrict__ col_idx,
                                                      const SCALAR *__restrict__ values, const uint n_rows,
                                                      const SCALAR *r, const SCALAR *ap, const SCALAR alpha,
                                                      SCALAR *y, const SCALAR *w1, SCALAR (&acc)[3]) {
    csr_gathered_rows<K>(f, row_ptr, col_idx, values, n_rows, BicgstabS{r, ap, alpha},
                         [&](const uint row, const SCALAR v) {
                             y[row] = v;
                             acc[0] += v * v;
                             acc[1] += v * (r[row] - alpha * ap[row]);
                             acc[2] += v * w1[row];
                         });
}

/* The work of bicgstab_s_spmv_resident for K threads per row: the first row of each thread read
 * (before the wait when early, see csr_first_then_wait), the s update, the product; false (nothing
 * written) when the flag is set. */
template <uint K>
__device__ __forceinline__ bool bicgstab_s_spmv_body(
    RSTATE *state, const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
    const SCALAR *__restrict__ values, const uint n, const uint early, const SCALAR *r, const SCALAR *ap,
    SCALAR *s, SCALAR *as_, const SCALAR *r0star, SCALAR *partials, const uint slot_rr0, const uint slot_apr0,
    const uint slot_ss, SCALAR (&acc)[3]) {
    const uint row0 = blockIdx.x * (WG / K) + threadIdx.x / K;
    const CsrFirst f = csr_first_then_wait<K>(row_ptr, col_idx, values, row0, n, early);
    __shared__ double sums[2];
    if (!bicgstab_s_update_body(r, ap, s, n, partials, slot_rr0, slot_apr0, slot_ss, state[RS_FLAG], sums)) {
        return false;
    }
    bicgstab_store_rho(state, sums);
    const SCALAR alpha = (SCALAR)__ddiv_rn(sums[0], sums[1]);
    csr_shifted_dots_rows<K>(f, row_ptr, col_idx, values, n, r, ap, alpha, as_, r0star, acc);
    return true;
}

/* bicgstab_s_update_resident and spmv_dots_csr of s (slots asas, ass, asr0) in one launch, for a
 * CSR matrix without long rows and no preconditioner: the s-update part is the same code (the
 * same elements per block, the same partial <s, s>); the product reads s_j as r_j - alpha ap_j
 * (BicgstabS), so no block reads an s another block writes and the results are those of
 * the two kernels bit for bit. With the flag set nothing is written (the fused update before it
 * may have written nothing, see bicgstab_fused_resident). */
extern "C" __launch_bounds__(WG) __global__ void bicgstab_s_spmv_resident(
    RSTATE *state, const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
    const SCALAR *__restrict__ values, const uint n, const uint k, const uint early, const SCALAR *r,
    const SCALAR *ap, SCALAR *s, SCALAR *as_, const SCALAR *r0star, SCALAR *partials, const uint slot_rr0,
    const uint slot_apr0, const uint slot_ss, const uint slot_asas, const uint slot_ass, const uint slot_asr0) {
    /* PDL_WAIT() in csr_first_then_wait: the matrix may be read first. */
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    bool ran;
#define SHIFTED_CASE(K)                                                                                   \
    case K:                                                                                              \
        ran = bicgstab_s_spmv_body<K>(state, row_ptr, col_idx, values, n, early, r, ap, s, as_, r0star, \
                                      partials, slot_rr0, slot_apr0, slot_ss, acc);                       \
        break;
    switch (k) {
        SHIFTED_CASE(2)
        SHIFTED_CASE(4)
        SHIFTED_CASE(8)
        SHIFTED_CASE(16)
        SHIFTED_CASE(32)
    default:
        ran = bicgstab_s_spmv_body<1>(state, row_ptr, col_idx, values, n, early, r, ap, s, as_, r0star, partials,
                                      slot_rr0, slot_apr0, slot_ss, acc);
        break;
    }
#undef SHIFTED_CASE
    if (!ran) {
        return;
    }
    block_sum<3>(acc);
    write_partial(partials, slot_asas, acc[0]);
    write_partial(partials, slot_ass, acc[1]);
    write_partial(partials, slot_asr0, acc[2]);
}

/* ||v|| from <v, v> as the host's norm: NaN stays NaN, a negative rounding is 0. */
__device__ __forceinline__ double rs_norm(const double sq) {
    return isnan(sq) ? sq : __dsqrt_rn(fmax(sq, 0.0));
}

/* The CG scalars of the previous iteration in every block (see cg_resident_scalars in
 * resident.cl); called by every thread. */
__device__ __forceinline__ void cg_resident_scalars(RSTATE *state, const SCALAR *partials, const uint slot_rr,
                                                    const uint slot_curv, const uint slot_pap, const uint slot_rz,
                                                    const uint with_pc, const uint hist_index, const uint sums_ready,
                                                    double *sums, double *hdr, double *coef) {
    const uint t = threadIdx.x;
    rs_load_header(state, hdr, t);
    /* With sums_ready the sums were finished once by cg_sums_resident (the same order, so the same
     * bits): no partials to read here; thread 0 takes them from the state below. */
    ordered_slot_sums(partials, sums_ready ? 0u : gridDim.x, with_pc ? 4u : 3u, slot_rr, slot_curv, slot_pap, slot_rz,
                      0u, sums);
    __syncthreads();
    if (t == 0) {
        /* Block 0 may set the flag while another block reads it: that block then skips the
         * update, which it would have decided anyway from the same sums. */
        const bool stopped = hdr[RS_FLAG] != 0.0;
        const double rr = sums_ready ? state[RS_SUMS] : sums[0];
        const double curvature = sums_ready ? state[RS_SUMS + 1] : sums[1];
        const double delta = sums_ready ? state[RS_SUMS + 2] : sums[2];
        const double gamma = with_pc ? (sums_ready ? state[RS_SUMS + 3] : sums[3]) : rr;
        const double rnorm = rs_norm(rr);
        const double it = hdr[RS_ITER_PAR + (hist_index & 1u)] + 1.0;
        const bool ordinary = isfinite(rnorm) && !(rnorm <= hdr[RS_TARGET]) && !(rnorm > hdr[RS_DTOL_R0]) &&
                              it < hdr[RS_MAX_ITER] && isfinite(delta) && isfinite(gamma) && isfinite(curvature) &&
                              !(with_pc && gamma <= 0.0) && delta > 0.0;
        const double alpha = __ddiv_rn(gamma, delta);
        const double beta = __dadd_rn(__ddiv_rn(__dmul_rn(__dmul_rn(alpha, alpha), curvature), gamma), -1.0);
        coef[0] = alpha;
        coef[1] = beta;
        coef[2] = (!stopped && ordinary) ? 1.0 : 0.0;
        if (blockIdx.x == 0 && !stopped) {
            if (ordinary) {
                state[RS_ALPHA] = alpha;
                state[RS_BETA] = beta;
                state[RS_ITER] = it;
                state[RS_ITER_PAR + ((hist_index + 1u) & 1u)] = it;
                state[RS_HISTORY + hist_index] = rnorm;
            } else {
                state[RS_FLAG] = 1.0;
            }
        }
    }
    __syncthreads();
}

/* The sums a CG update finishes (<r, r>, the curvature <Ap, Ap> or <Ap, q>, <p, Ap>, and <r, z>
 * with a preconditioner) finished once, in ordered_slot_sums' order, into state[RS_SUMS..] for the
 * next cg_update_resident / pcg_update_resident launched with sums_ready: at large n, where the
 * product leaves a partial per block of a full-occupancy grid, every block of the update finishing
 * them costs more than this launch. One block; `groups` partials per slot. */
extern "C" __launch_bounds__(WG) __global__ void cg_sums_resident(RSTATE *state, const SCALAR *partials,
                                                                  const uint groups, const uint slot_rr,
                                                                  const uint slot_curv, const uint slot_pap,
                                                                  const uint slot_rz, const uint with_pc) {
    PDL_WAIT_START_NEXT();
    __shared__ double sums[4];
    const uint count = with_pc ? 4u : 3u;
    ordered_slot_sums(partials, groups, count, slot_rr, slot_curv, slot_pap, slot_rz, 0u, sums);
    __syncthreads();
    if (threadIdx.x < count) {
        state[RS_SUMS + threadIdx.x] = sums[threadIdx.x];
    }
}

/* sums_ready: the sums come from cg_sums_resident (state[RS_SUMS..]) instead of the partials. */
extern "C" __launch_bounds__(WG) __global__ void cg_update_resident(RSTATE *state, const uint slot_rr_in,
                                                                    const uint slot_apap, const uint slot_pap,
                                                                    const uint hist_index, SCALAR *x, SCALAR *r,
                                                                    SCALAR *p, const SCALAR *ap, const uint n,
                                                                    SCALAR *partials, const uint slot_rr,
                                                                    const uint sums_ready) {
    PDL_WAIT_START_NEXT();
    __shared__ double sums[4];
    __shared__ double hdr[RS_HEADER];
    __shared__ double coef[3];
    /* The first element's operands are loaded before the sums are finished (they do not depend
     * on them; the compiler would not move the loads across the barriers): one memory latency
     * less per launch (0.3 us on the H200, examples/probes/persistent_cg.rs). */
    const uint i0 = GRID_START;
    const bool has0 = i0 < n;
    const SCALAR x0 = has0 ? x[i0] : ZERO, r0 = has0 ? r[i0] : ZERO;
    const SCALAR p0 = has0 ? p[i0] : ZERO, ap0 = has0 ? ap[i0] : ZERO;
    cg_resident_scalars(state, partials, slot_rr_in, slot_apap, slot_pap, slot_rr_in, 0u, hist_index, sums_ready, sums, hdr,
                        coef);
    if (coef[2] == 0.0) {
        return;
    }
    const SCALAR alpha = (SCALAR)coef[0], beta = (SCALAR)coef[1];
    SCALAR acc = ZERO;
    if (has0) {
        const SCALAR ri = cg_update_element(alpha, beta, x, r, p, i0, x0, r0, p0, ap0);
        acc += ri * ri;
    }
    cg_update_rest(alpha, beta, x, r, p, ap, n, i0 + GRID_STRIDE, acc, partials, slot_rr);
}

/* CG's new search direction p_j = (r_j - alpha ap_j) + beta p_j from the old vectors: the value
 * cg_update_element stores, bit for bit (no contraction). */
struct CgNewP {
    const SCALAR *r;
    const SCALAR *ap;
    const SCALAR *p;
    SCALAR alpha;
    SCALAR beta;
    __device__ __forceinline__ SCALAR operator()(const uint c) const {
        return (r[c] - alpha * ap[c]) + beta * p[c];
    }
};

/* cg_fused_resident for K threads per row. */
template <uint K>
__device__ __forceinline__ void cg_fused_body(RSTATE *state, const uint slot_rr_in, const uint slot_apap_in,
                                              const uint slot_pap_in, const uint hist_index,
                                              const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
                                              const SCALAR *__restrict__ values, const uint n, const uint early,
                                              SCALAR *x, const SCALAR *r, const SCALAR *p, const SCALAR *ap,
                                              SCALAR *r_out, SCALAR *p_out, SCALAR *ap_out, SCALAR *partials,
                                              const uint slot_rr_out, const uint slot_apap_out,
                                              const uint slot_pap_out, CsrFirst *first) {
    /* The first row, read before the wait when early, is parked in shared memory across the
     * update: in registers it took the kernel to 80 registers (64 with 300 bytes of spills). */
    const CsrFirst f =
        csr_first_then_wait<K>(row_ptr, col_idx, values, blockIdx.x * (WG / K) + threadIdx.x / K, n, early);
    first[threadIdx.x] = f;
    __shared__ double sums[4];
    __shared__ double hdr[RS_HEADER];
    __shared__ double coef[3];
    /* The first element's operands before the sums, as in cg_update_resident. */
    const uint i0 = GRID_START;
    const bool has0 = i0 < n;
    const SCALAR x0 = has0 ? x[i0] : ZERO, r0 = has0 ? r[i0] : ZERO;
    const SCALAR p0 = has0 ? p[i0] : ZERO, ap0 = has0 ? ap[i0] : ZERO;
    cg_resident_scalars(state, partials, slot_rr_in, slot_apap_in, slot_pap_in, slot_rr_in, 0u, hist_index, 0u, sums,
                        hdr, coef);
    if (coef[2] == 0.0) {
        return; /* not ordinary, or stopped: nothing written (the host takes over from the inputs) */
    }
    const SCALAR alpha = (SCALAR)coef[0], beta = (SCALAR)coef[1];
    /* [Rupp16] Alg. 2 lines 9-11 (cg_update's element, into the other vectors). */
    SCALAR rr = ZERO;
    for (uint i = i0; i < n; i += GRID_STRIDE) {
        const bool first = i == i0;
        const SCALAR ri = cg_update_element(alpha, beta, x, r_out, p_out, i, first ? x0 : x[i], first ? r0 : r[i],
                                            first ? p0 : p[i], first ? ap0 : ap[i]);
        rr += ri * ri;
    }
    write_partial(partials, slot_rr_out, block_sum1(rr));
    /* Lines 13-14: the product of the new p, its entries recomputed where they are read. */
    const CgNewP g{r, ap, p, alpha, beta};
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    csr_gathered_rows<K>(first[threadIdx.x], row_ptr, col_idx, values, n, g, [&](const uint row, const SCALAR v) {
        ap_out[row] = v;
        acc[0] += v * v;
        acc[1] += v * g(row);
    });
    block_sum<3>(acc);
    write_partial(partials, slot_apap_out, acc[0]);
    write_partial(partials, slot_pap_out, acc[1]);
}

/* One whole pipelined CG iteration in one launch, for a CSR matrix without long rows and no
 * preconditioner: cg_update_resident's decision and update, writing r and p to r_out and p_out
 * (x in place), then spmv_dots_csr of the new p into ap_out with <Ap, Ap> and <p, Ap>. The
 * product reads p_new_j as (r_j - alpha ap_j) + beta p_j from the unchanged inputs, so no block
 * reads a vector another block writes and the results are the two kernels' bit for bit. Every
 * block finishes the input slots; the output slots must differ from them (the host alternates
 * two sets and two sets of vectors). Not ordinary or stopped: nothing is written. */
extern "C" __launch_bounds__(WG) __global__ void cg_fused_resident(
    RSTATE *state, const uint slot_rr_in, const uint slot_apap_in, const uint slot_pap_in, const uint hist_index,
    const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx, const SCALAR *__restrict__ values,
    const uint n, const uint k, const uint early, SCALAR *x, const SCALAR *r, const SCALAR *p, const SCALAR *ap,
    SCALAR *r_out, SCALAR *p_out, SCALAR *ap_out, SCALAR *partials, const uint slot_rr_out, const uint slot_apap_out,
    const uint slot_pap_out) {
    /* PDL_WAIT() in csr_first_then_wait: the matrix may be read first. */
    __shared__ CsrFirst first[WG];
#define FUSED_CASE(K)                                                                                             \
    case K:                                                                                                      \
        cg_fused_body<K>(state, slot_rr_in, slot_apap_in, slot_pap_in, hist_index, row_ptr, col_idx, values, n, \
                         early, x, r, p, ap, r_out, p_out, ap_out, partials, slot_rr_out, slot_apap_out,        \
                         slot_pap_out, first);                                                                   \
        break;
    switch (k) {
        FUSED_CASE(2)
        FUSED_CASE(4)
        FUSED_CASE(8)
        FUSED_CASE(16)
        FUSED_CASE(32)
    default:
        cg_fused_body<1>(state, slot_rr_in, slot_apap_in, slot_pap_in, hist_index, row_ptr, col_idx, values, n,
                         early, x, r, p, ap, r_out, p_out, ap_out, partials, slot_rr_out, slot_apap_out,
                         slot_pap_out, first);
        break;
    }
#undef FUSED_CASE
}

extern "C" __launch_bounds__(WG) __global__ void pcg_update_resident(RSTATE *state, const uint slot_rr_in,
                                                                     const uint slot_pap, const uint slot_rz_in,
                                                                     const uint slot_apq, const uint hist_index,
                                                                     SCALAR *x, SCALAR *r, SCALAR *z, SCALAR *p,
                                                                     const SCALAR *ap, const SCALAR *q, const uint n,
                                                                     SCALAR *partials, const uint slot_rr,
                                                                     const uint slot_rz, const uint sums_ready) {
    PDL_WAIT();
    __shared__ double sums[4];
    __shared__ double hdr[RS_HEADER];
    __shared__ double coef[3];
    /* The first element prefetched, as in cg_update_resident. */
    const uint i0 = GRID_START;
    const bool has0 = i0 < n;
    const SCALAR x0 = has0 ? x[i0] : ZERO, r0 = has0 ? r[i0] : ZERO, z0 = has0 ? z[i0] : ZERO;
    const SCALAR p0 = has0 ? p[i0] : ZERO, ap0 = has0 ? ap[i0] : ZERO, q0 = has0 ? q[i0] : ZERO;
    cg_resident_scalars(state, partials, slot_rr_in, slot_apq, slot_pap, slot_rz_in, 1u, hist_index, sums_ready, sums, hdr,
                        coef);
    if (coef[2] == 0.0) {
        return;
    }
    const SCALAR alpha = (SCALAR)coef[0], beta = (SCALAR)coef[1];
    SCALAR acc[2] = {ZERO, ZERO};
    if (has0) {
        SCALAR rz[2];
        pcg_update_element(alpha, beta, x, r, z, p, i0, x0, r0, z0, p0, ap0, q0, rz);
        acc[0] += rz[0] * rz[0];
        acc[1] += rz[0] * rz[1];
    }
    pcg_update_rest(alpha, beta, x, r, z, p, ap, q, n, i0 + GRID_STRIDE, acc, partials, slot_rr, slot_rz);
}

/* The decision of a resident BiCGStab update, by thread 0 of every block, from the header hdr,
 * <Ap, r0*> and the finished sums <s, s>, <As, s>, <As, As>, <As, r0*>: alpha, omega, beta into
 * coef[0..3] and coef[3] = 1 when the block updates; block 0 records the iteration or sets the
 * flag. Block 0 may set the flag while another block reads it: that block then skips the update,
 * which it would have decided anyway from the same sums. */
__device__ __forceinline__ void bicgstab_resident_decide(RSTATE *state, const double *hdr, const double ap_r0,
                                                         const double *sums, const uint hist_index, double *coef) {
    const bool stopped = hdr[RS_FLAG] != 0.0;
    const double rho = hdr[RS_RHO];
    const double ss = sums[0];
    const double as_s = sums[1];
    const double as_as = sums[2];
    const double as_r0 = sums[3];
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

extern "C" __launch_bounds__(WG) __global__ void bicgstab_update_resident(
    RSTATE *state, const uint slot_apr0, const uint slot_ss, const uint slot_ass, const uint slot_asas,
    const uint slot_asr0, const uint hist_index, SCALAR *x, SCALAR *r, SCALAR *p, const SCALAR *s, const SCALAR *ap,
    const SCALAR *as_, const SCALAR *phat, const SCALAR *shat, const SCALAR *r0star, const uint n, SCALAR *partials,
    const uint slot_rr0, const uint slot_rr) {
    PDL_WAIT_START_NEXT();
    __shared__ double sums[5];
    __shared__ double hdr[RS_HEADER];
    /* alpha, omega, beta, and 1 when this block updates */
    __shared__ double coef[4];
    const uint t = threadIdx.x;
    rs_load_header(state, hdr, t);
    /* The first element prefetched, as in cg_update_resident (phat is p, shat is s without a
     * preconditioner: the same loads). */
    const uint i0 = GRID_START;
    const bool has0 = i0 < n;
    const SCALAR x0 = has0 ? x[i0] : ZERO, ph0 = has0 ? phat[i0] : ZERO, sh0 = has0 ? shat[i0] : ZERO;
    const SCALAR p0 = has0 ? p[i0] : ZERO, s0 = has0 ? s[i0] : ZERO, as0 = has0 ? as_[i0] : ZERO;
    const SCALAR ap0 = has0 ? ap[i0] : ZERO, r00 = has0 ? r0star[i0] : ZERO;
    ordered_slot_sums(partials, gridDim.x, 5u, slot_apr0, slot_ss, slot_ass, slot_asas, slot_asr0, sums);
    __syncthreads();
    if (t == 0) {
        bicgstab_resident_decide(state, hdr, sums[0], sums + 1, hist_index, coef);
    }
    __syncthreads();
    if (coef[3] == 0.0) {
        return;
    }
    const SCALAR alpha = (SCALAR)coef[0], omega = (SCALAR)coef[1], beta = (SCALAR)coef[2];
    SCALAR acc[2] = {ZERO, ZERO};
    if (has0) {
        bicgstab_update_element(alpha, omega, beta, x, r, p, i0, x0, ph0, sh0, p0, s0, as0, ap0, r00, acc);
    }
    bicgstab_update_rest(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, n, i0 + GRID_STRIDE, acc,
                         partials, slot_rr0, slot_rr);
}

/* BiCGStab's new search direction p_j = (s_j - omega as_j) + beta (p_j - omega ap_j) from the old
 * vectors: the value bicgstab_update_element stores, bit for bit (no contraction). */
struct BicgstabNewP {
    const SCALAR *s;
    const SCALAR *as_;
    const SCALAR *p;
    const SCALAR *ap;
    SCALAR omega;
    SCALAR beta;
    __device__ __forceinline__ SCALAR operator()(const uint c) const {
        const SCALAR ri = s[c] - omega * as_[c];
        return ri + beta * (p[c] - omega * ap[c]);
    }
};

/* bicgstab_fused_resident for K threads per row. */
template <uint K>
__device__ __forceinline__ void bicgstab_fused_body(
    RSTATE *state, const uint slot_ss, const uint slot_ass, const uint slot_asas, const uint slot_asr0,
    const uint hist_index, const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
    const SCALAR *__restrict__ values, const uint n, const uint early, SCALAR *x, SCALAR *r, const SCALAR *p,
    const SCALAR *s, const SCALAR *ap, const SCALAR *as_, const SCALAR *r0star, SCALAR *p_out, SCALAR *ap_out,
    SCALAR *partials, const uint slot_rr0, const uint slot_rr, const uint slot_apr0, CsrFirst *first) {
    /* The first row, read before the wait when early, parked in shared memory across the update
     * (as in cg_fused_body). */
    const CsrFirst f =
        csr_first_then_wait<K>(row_ptr, col_idx, values, blockIdx.x * (WG / K) + threadIdx.x / K, n, early);
    first[threadIdx.x] = f;
    __shared__ double sums[4];
    __shared__ double hdr[RS_HEADER];
    __shared__ double coef[4];
    const uint t = threadIdx.x;
    rs_load_header(state, hdr, t);
    /* The first element's operands before the sums, as in bicgstab_update_resident. */
    const uint i0 = GRID_START;
    const bool has0 = i0 < n;
    const SCALAR x0 = has0 ? x[i0] : ZERO, p0 = has0 ? p[i0] : ZERO, s0 = has0 ? s[i0] : ZERO;
    const SCALAR as0 = has0 ? as_[i0] : ZERO, ap0 = has0 ? ap[i0] : ZERO, r00 = has0 ? r0star[i0] : ZERO;
    ordered_slot_sums(partials, gridDim.x, 4u, slot_ss, slot_ass, slot_asas, slot_asr0, 0u, sums);
    __syncthreads();
    if (t == 0) {
        bicgstab_resident_decide(state, hdr, hdr[RS_AP_R0], sums, hist_index, coef);
    }
    __syncthreads();
    if (coef[3] == 0.0) {
        return; /* not ordinary, or stopped: nothing written (the host takes over from the inputs) */
    }
    const SCALAR alpha = (SCALAR)coef[0], omega = (SCALAR)coef[1], beta = (SCALAR)coef[2];
    /* [Rupp16] Alg. 4 lines 15, 16 and 19 (bicgstab_update's element, p into p_out). */
    SCALAR acc[2] = {ZERO, ZERO};
    for (uint i = i0; i < n; i += GRID_STRIDE) {
        const bool one = i == i0;
        const SCALAR pi = one ? p0 : p[i], si = one ? s0 : s[i];
        bicgstab_update_element(alpha, omega, beta, x, r, p_out, i, one ? x0 : x[i], pi, si, pi, si,
                                one ? as0 : as_[i], one ? ap0 : ap[i], one ? r00 : r0star[i], acc);
    }
    block_sum<2>(acc);
    write_partial(partials, slot_rr0, acc[0]);
    write_partial(partials, slot_rr, acc[1]);
    /* Lines 6-7 of the next iteration: the product of the new p, its entries recomputed where they
     * are read. */
    const BicgstabNewP g{s, as_, p, ap, omega, beta};
    SCALAR dot = ZERO;
    csr_gathered_rows<K>(first[threadIdx.x], row_ptr, col_idx, values, n, g, [&](const uint row, const SCALAR v) {
        ap_out[row] = v;
        dot += v * r0star[row];
    });
    write_partial(partials, slot_apr0, block_sum1(dot));
}

/* An unpreconditioned pipelined BiCGStab update and the next iteration's A p in one launch, for a
 * CSR matrix without long rows: bicgstab_update_resident's decision (with <Ap, r0*> from the
 * state, where the s-update stored it, so that no block finishes partials another block
 * overwrites) and update, x and r in place and the new p into p_out, then spmv_dots_csr of the
 * new p into ap_out with <Ap, r0*>. The product reads p_new_j as
 * (s_j - omega as_j) + beta (p_j - omega ap_j) from the unchanged inputs, so no block reads a
 * vector another block writes and the results are the two kernels' bit for bit. The written slots
 * differ from the read ones; p_out and ap_out are other buffers than p and ap (the host alternates
 * two sets). Not ordinary or stopped: nothing is written, and the next s-update, which checks the
 * flag, writes nothing either. */
extern "C" __launch_bounds__(WG) __global__ void bicgstab_fused_resident(
    RSTATE *state, const uint slot_ss, const uint slot_ass, const uint slot_asas, const uint slot_asr0,
    const uint hist_index, const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
    const SCALAR *__restrict__ values, const uint n, const uint k, const uint early, SCALAR *x, SCALAR *r,
    const SCALAR *p, const SCALAR *s, const SCALAR *ap, const SCALAR *as_, const SCALAR *r0star, SCALAR *p_out,
    SCALAR *ap_out, SCALAR *partials, const uint slot_rr0, const uint slot_rr, const uint slot_apr0) {
    /* PDL_WAIT() in csr_first_then_wait: the matrix may be read first. */
    __shared__ CsrFirst first[WG];
#define BICG_FUSED_CASE(K)                                                                                       \
    case K:                                                                                                     \
        bicgstab_fused_body<K>(state, slot_ss, slot_ass, slot_asas, slot_asr0, hist_index, row_ptr, col_idx,   \
                               values, n, early, x, r, p, s, ap, as_, r0star, p_out, ap_out, partials, slot_rr0, \
                               slot_rr, slot_apr0, first);                                                     \
        break;
    switch (k) {
        BICG_FUSED_CASE(2)
        BICG_FUSED_CASE(4)
        BICG_FUSED_CASE(8)
        BICG_FUSED_CASE(16)
        BICG_FUSED_CASE(32)
    default:
        bicgstab_fused_body<1>(state, slot_ss, slot_ass, slot_asas, slot_asr0, hist_index, row_ptr, col_idx, values,
                               n, early, x, r, p, s, ap, as_, r0star, p_out, ap_out, partials, slot_rr0, slot_rr,
                               slot_apr0, first);
        break;
    }
#undef BICG_FUSED_CASE
}
