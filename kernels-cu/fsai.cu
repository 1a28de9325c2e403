/*
 * fsai.cu -- static FSAI setup (PrecondOps). Mirrors kernels-cl/fsai.cl (the systems, the
 * argument list and the arithmetic order are documented there); conventions in reduce.cu.
 *
 *   fsai_rows (uint row_begin, uint rows, const uint* a_row_ptr, const uint* a_col_idx,
 *              const SCALAR* a_values, const uint* g_row_ptr, const uint* g_col_idx,
 *              const uint* gt_pos, const ulong* scratch_off, SCALAR* scratch, SCALAR* g_values,
 *              SCALAR* gt_values)
 * Any grid (grid-stride loop), one thread per row of G.
 *
 *   afsai_grow (uint row_begin, uint rows, const uint* a_row_ptr, const uint* a_col_idx,
 *               const SCALAR* a_values, uint max_steps, uint per_step, SCALAR eps,
 *               uint stop_rule,
 *               SCALAR* scratch, uint* iscratch, uint* out_cols, uint* out_len)
 * The adaptive pattern ([Bernaschi19] Algorithm 1), one thread per row, all steps in one launch;
 * see kernels-cl/fsai.cl for the algorithm, the scratch layout and the arithmetic order.
 */

/* Position of c in the ascending p[0..m), or -1. */
__device__ __forceinline__ int fsai_find(const uint *p, const uint m, const uint c) {
    uint lo = 0, hi = m;
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint v = p[mid];
        if (v == c) return (int)mid;
        if (v < c) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* Row a of the dense system A[P, P] (m x m, entry e at M[e * ms]): zeroed, then the entries of
 * A's row p[a] in the columns of P. */
__device__ __forceinline__ void fsai_gather_row(SCALAR *M, const ulong ms, const uint *p, const uint m, const uint a,
                            const uint *a_row_ptr, const uint *a_col_idx,
                            const SCALAR *a_values) {
    for (uint b = 0; b < m; ++b) M[(a * m + b) * ms] = ZERO;
    const uint r = p[a];
    for (uint k = a_row_ptr[r]; k < a_row_ptr[r + 1]; ++k) {
        const int b = fsai_find(p, m, a_col_idx[k]);
        if (b >= 0) M[(a * m + (uint)b) * ms] = a_values[k];
    }
}

/* Row i's dense system in the batch's scratch: the offset of its first entry (low 58 bits of
 * scratch_off[i]) and, into ms, the stride between its entries (top 6 bits: the rows of a warp
 * interleaved, see FSAI_LANES in src/backend/ops/precond.rs). */
__device__ __forceinline__ SCALAR *fsai_row_system(SCALAR *scratch, const ulong *scratch_off, const uint i, ulong &ms) {
    const ulong so = scratch_off[i];
    ms = so >> 58;
    return scratch + (so & (((ulong)1 << 58) - (ulong)1));
}

extern "C" __launch_bounds__(WG) __global__ void fsai_rows(const uint row_begin, const uint rows, const uint *a_row_ptr,
                                                           const uint *a_col_idx, const SCALAR *a_values,
                                                           const uint *g_row_ptr, const uint *g_col_idx,
                                                           const uint *gt_pos, const ulong *scratch_off,
                                                           SCALAR *scratch, SCALAR *g_values, SCALAR *gt_values) {
    PDL_WAIT();
    for (uint t = GRID_START; t < rows; t += GRID_STRIDE) {
        const uint i = row_begin + t;
        const uint gb = g_row_ptr[i];
        const uint m = g_row_ptr[i + 1] - gb;
        const uint *p = g_col_idx + gb;
        ulong ms; /* the row's system: entry e at M[e * ms] */
        SCALAR *M = fsai_row_system(scratch, scratch_off, i, ms);
        for (uint a = 0; a < m; ++a) fsai_gather_row(M, ms, p, m, a, a_row_ptr, a_col_idx, a_values);
        int ok = 1;
        for (uint j = 0; j < m && ok; ++j) {
            SCALAR d = M[(j * m + j) * ms];
            for (uint k = 0; k < j; ++k) d -= M[(j * m + k) * ms] * M[(j * m + k) * ms];
            if (!(d > ZERO) || isinf(d)) {
                ok = 0;
                break;
            }
            const SCALAR ljj = sqrt(d);
            M[(j * m + j) * ms] = ljj;
            for (uint r = j + 1; r < m; ++r) {
                SCALAR v = M[(r * m + j) * ms];
                for (uint k = 0; k < j; ++k) v -= M[(r * m + k) * ms] * M[(j * m + k) * ms];
                M[(r * m + j) * ms] = v / ljj;
            }
        }
        if (!ok) {
            const SCALAR nan_value = (SCALAR)nan("");
            for (uint a = 0; a < m; ++a) {
                g_values[gb + a] = nan_value;
                gt_values[gt_pos[gb + a]] = nan_value;
            }
            continue;
        }
        const uint l = m - 1;
        SCALAR *y = g_values + gb;
        y[l] = ((SCALAR)1 / M[(l * m + l) * ms]) / M[(l * m + l) * ms];
        for (uint r = l; r-- > 0;) {
            SCALAR v = ZERO;
            for (uint k = r + 1; k < m; ++k) v -= M[(k * m + r) * ms] * y[k];
            y[r] = v / M[(r * m + r) * ms];
        }
        const SCALAR scale = (SCALAR)1 / sqrt(y[l]);
        for (uint a = 0; a < m; ++a) {
            const SCALAR g = y[a] * scale;
            y[a] = g;
            gt_values[gt_pos[gb + a]] = g;
        }
    }
}

/*
 *   fsai_rows_team (the arguments of fsai_rows)
 * One warp per row of a batch of long rows (see kernels-cl/fsai.cl for the team's algorithm,
 * its storage of L and its order of arithmetic); the warps of a block are independent.
 */
extern "C" __launch_bounds__(WG) __global__ void fsai_rows_team(const uint row_begin, const uint rows, const uint *a_row_ptr,
                                                                const uint *a_col_idx, const SCALAR *a_values,
                                                                const uint *g_row_ptr, const uint *g_col_idx,
                                                                const uint *gt_pos, const ulong *scratch_off,
                                                                SCALAR *scratch, SCALAR *g_values, SCALAR *gt_values) {
    PDL_WAIT();
    const uint lane = threadIdx.x & 31u;
    const uint team = threadIdx.x >> 5;
    for (uint t = blockIdx.x * WARPS + team; t < rows; t += gridDim.x * WARPS) {
        const uint i = row_begin + t;
        const uint gb = g_row_ptr[i];
        const uint m = g_row_ptr[i + 1] - gb;
        const uint *p = g_col_idx + gb;
        ulong ms;
        SCALAR *M = fsai_row_system(scratch, scratch_off, i, ms);
        for (uint a = lane; a < m; a += 32) fsai_gather_row(M, ms, p, m, a, a_row_ptr, a_col_idx, a_values);
        __syncwarp();
        int ok = 1;
        SCALAR ljj = ZERO;
        for (uint j = 0; j < m; ++j) {
            /* L(j - 1, j - 1) goes in only now: every lane read A(j - 1, j - 1) for its pivot
             * before the last __syncwarp */
            if (j > 0 && lane == 0) M[((j - 1) * m + (j - 1)) * ms] = ljj;
            SCALAR d = M[(j * m + j) * ms];
            for (uint k = 0; k < j; ++k) d -= M[(k * m + j) * ms] * M[(k * m + j) * ms];
            if (!(d > ZERO) || isinf(d)) {
                ok = 0;
                break;
            }
            ljj = sqrt(d);
            for (uint r = j + 1 + lane; r < m; r += 32) {
                SCALAR v = M[(r * m + j) * ms];
                for (uint k = 0; k < j; ++k) v -= M[(k * m + r) * ms] * M[(k * m + j) * ms];
                M[(j * m + r) * ms] = v / ljj;
            }
            __syncwarp();
        }
        if (ok && lane == 0) M[((m - 1) * m + (m - 1)) * ms] = ljj;
        if (!ok) {
            const SCALAR nan_value = (SCALAR)nan("");
            for (uint a = lane; a < m; a += 32) {
                g_values[gb + a] = nan_value;
                gt_values[gt_pos[gb + a]] = nan_value;
            }
            __syncwarp();
            continue;
        }
        SCALAR scale = ZERO;
        if (lane == 0) {
            const uint l = m - 1;
            SCALAR *y = g_values + gb;
            y[l] = ((SCALAR)1 / M[(l * m + l) * ms]) / M[(l * m + l) * ms];
            for (uint r = l; r-- > 0;) {
                SCALAR v = ZERO;
                for (uint k = r + 1; k < m; ++k) v -= M[(r * m + k) * ms] * y[k];
                y[r] = v / M[(r * m + r) * ms];
            }
            scale = (SCALAR)1 / sqrt(y[l]);
        }
        __syncwarp();
        scale = __shfl_sync(FULL_MASK, scale, 0);
        for (uint a = lane; a < m; a += 32) {
            const SCALAR g = g_values[gb + a] * scale;
            g_values[gb + a] = g;
            gt_values[gt_pos[gb + a]] = g;
        }
        __syncwarp();
    }
}

#define AFSAI_MAX_PER_STEP 8

/* a_{row, col} or 0 (binary search of the ascending row). */
__device__ __forceinline__ SCALAR afsai_entry(const uint *a_row_ptr, const uint *a_col_idx,
                                              const SCALAR *a_values, const uint row, const uint col) {
    uint lo = a_row_ptr[row], hi = a_row_ptr[row + 1];
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint v = a_col_idx[mid];
        if (v == col) return a_values[mid];
        if (v < col) lo = mid + 1;
        else hi = mid;
    }
    return ZERO;
}

/* Offer column `col` with |gradient| v to the selection sel_col / sel_val (*nsel of at most
 * per_step entries, largest first): v must be > 0 and beat the last entry of a full selection;
 * equal values keep the earlier (smaller) column first. */
__device__ __forceinline__ void afsai_offer(const SCALAR v, const uint col, const uint per_step, uint *sel_col,
                                                   SCALAR *sel_val, uint *nsel) {
    if (!(v > ZERO)) return;
    const uint k = *nsel;
    if (k == per_step && !(v > sel_val[k - 1])) return;
    uint pos = k < per_step ? k : per_step - 1;
    while (pos > 0 && v > sel_val[pos - 1]) {
        sel_val[pos] = sel_val[pos - 1];
        sel_col[pos] = sel_col[pos - 1];
        --pos;
    }
    sel_val[pos] = v;
    sel_col[pos] = col;
    if (k < per_step) *nsel = k + 1;
}

extern "C" __launch_bounds__(WG) __global__ void afsai_grow(const uint row_begin, const uint rows, const uint *a_row_ptr,
                                                            const uint *a_col_idx, const SCALAR *a_values,
                                                            const uint max_steps, const uint per_step, const SCALAR eps, const uint stop_rule,
                                                            SCALAR *scratch, uint *iscratch, uint *out_cols,
                                                            uint *out_len) {
    PDL_WAIT();
    const uint cap = max_steps * per_step;
    const uint lsz = cap * (cap + 1) / 2;
    for (uint t = GRID_START; t < rows; t += GRID_STRIDE) {
        const uint i = row_begin + t;
#define AF_L(e) scratch[(ulong)(e) * rows + t]
#define AF_Y(e) scratch[(ulong)(lsz + (e)) * rows + t]
#define AF_G(e) scratch[(ulong)(lsz + cap + (e)) * rows + t]
#define AF_P(e) iscratch[(ulong)(e) * rows + t]
#define AF_PS(e) iscratch[(ulong)(cap + (e)) * rows + t]
#define AF_CUR(e) iscratch[(ulong)(2 * cap + (e)) * rows + t]
#define AF_HC(e) iscratch[(ulong)(3 * cap + 1 + (e)) * rows + t]
#define AF_HL(e) iscratch[(ulong)(4 * cap + 2 + (e)) * rows + t]
        const SCALAR psi0 = afsai_entry(a_row_ptr, a_col_idx, a_values, i, i);
        SCALAR psi = psi0;
        uint m = 0;
        int failed = 0;
        for (uint step = 0; step < max_steps && !failed; ++step) {
            const SCALAR psi_prev = psi;
            /* 1. gradient by the multiple-arrays merge, 2. selection */
            for (uint a = 0; a < m; ++a) AF_CUR(a) = a_row_ptr[AF_P(a)];
            AF_CUR(m) = a_row_ptr[i];
            uint sel_col[AFSAI_MAX_PER_STEP];
            SCALAR sel_val[AFSAI_MAX_PER_STEP];
            uint nsel = 0;
            uint sp = 0;
            /* the heap of the lists' current columns below i, keyed (column, list) */
            uint nh = 0;
            for (uint a = 0; a <= m; ++a) {
                const uint r = a < m ? AF_P(a) : i;
                const uint c = AF_CUR(a);
                if (c < a_row_ptr[r + 1] && a_col_idx[c] < i) {
                    uint h = nh++; /* sift up */
                    const uint col = a_col_idx[c];
                    while (h > 0) {
                        const uint up = (h - 1) / 2;
                        if (AF_HC(up) < col || (AF_HC(up) == col && AF_HL(up) < a)) break;
                        AF_HC(h) = AF_HC(up);
                        AF_HL(h) = AF_HL(up);
                        h = up;
                    }
                    AF_HC(h) = col;
                    AF_HL(h) = a;
                }
            }
            while (nh > 0) {
                const uint jmin = AF_HC(0);
                SCALAR acc = ZERO;
                int first = 1;
                while (nh > 0 && AF_HC(0) == jmin) {
                    const uint a = AF_HL(0);
                    const uint r = a < m ? AF_P(a) : i;
                    const uint c = AF_CUR(a);
                    const SCALAR w = a < m ? AF_G(a) : (SCALAR)1;
                    const SCALAR term = w * a_values[c];
                    acc = first ? term : acc + term;
                    first = 0;
                    AF_CUR(a) = c + 1;
                    /* the root gets the list's next column, or the last entry */
                    uint kc, kl;
                    if (c + 1 < a_row_ptr[r + 1] && a_col_idx[c + 1] < i) {
                        kc = a_col_idx[c + 1];
                        kl = a;
                    } else {
                        --nh;
                        kc = AF_HC(nh);
                        kl = AF_HL(nh);
                    }
                    uint h = 0; /* sift down */
                    for (;;) {
                        uint ch = 2 * h + 1;
                        if (ch >= nh) break;
                        if (ch + 1 < nh && (AF_HC(ch + 1) < AF_HC(ch) || (AF_HC(ch + 1) == AF_HC(ch) && AF_HL(ch + 1) < AF_HL(ch)))) ++ch;
                        if (kc < AF_HC(ch) || (kc == AF_HC(ch) && kl < AF_HL(ch))) break;
                        AF_HC(h) = AF_HC(ch);
                        AF_HL(h) = AF_HL(ch);
                        h = ch;
                    }
                    if (nh > 0) {
                        AF_HC(h) = kc;
                        AF_HL(h) = kl;
                    }
                }
                while (sp < m && AF_PS(sp) < jmin) ++sp;
                if (sp < m && AF_PS(sp) == jmin) continue;
                afsai_offer(fabs(acc), jmin, per_step, sel_col, sel_val, &nsel);
            }
            if (nsel == 0) break; /* the pattern stops growing */
            /* 3. extend L, y and psi by the selected columns, in rank order */
            for (uint q = 0; q < nsel && !failed; ++q) {
                const uint j = sel_col[q];
                const uint lm = m * (m + 1) / 2; /* row m of L */
                SCALAR d = afsai_entry(a_row_ptr, a_col_idx, a_values, j, j);
                SCALAR yv = -afsai_entry(a_row_ptr, a_col_idx, a_values, i, j);
                for (uint a = 0; a < m; ++a) {
                    SCALAR v = afsai_entry(a_row_ptr, a_col_idx, a_values, j, AF_P(a));
                    const uint la = a * (a + 1) / 2;
                    for (uint k = 0; k < a; ++k) v -= AF_L(la + k) * AF_L(lm + k);
                    v = v / AF_L(la + a);
                    AF_L(lm + a) = v;
                    d -= v * v;
                    yv -= v * AF_Y(a);
                }
                if (!(d > ZERO) || isinf(d)) {
                    failed = 1;
                    break;
                }
                const SCALAR dm = sqrt(d);
                AF_L(lm + m) = dm;
                yv = yv / dm;
                AF_Y(m) = yv;
                psi -= yv * yv;
                AF_P(m) = j;
                uint s = m; /* insert j into the sorted copy */
                while (s > 0 && AF_PS(s - 1) > j) {
                    AF_PS(s) = AF_PS(s - 1);
                    --s;
                }
                AF_PS(s) = j;
                ++m;
            }
            if (failed) break;
            /* G~(i, P) = L^-T y, backward */
            for (uint a = m; a-- > 0;) {
                SCALAR v = AF_Y(a);
                for (uint k = a + 1; k < m; ++k) v -= AF_L(k * (k + 1) / 2 + a) * AF_G(k);
                AF_G(a) = v / AF_L(a * (a + 1) / 2 + a);
            }
            /* 4. eq. (17) (stop_rule 0) or the step's relative reduction (stop_rule 1) */
            if (stop_rule == 0u ? psi <= eps * psi0 : psi_prev - psi <= eps * psi_prev) break;
        }
        if (failed) {
            out_len[t] = 0xffffffffu;
        } else {
            out_len[t] = m;
            for (uint a = 0; a < m; ++a) out_cols[(ulong)t * cap + a] = AF_P(a);
        }
#undef AF_L
#undef AF_Y
#undef AF_G
#undef AF_P
#undef AF_PS
#undef AF_CUR
#undef AF_HC
#undef AF_HL
    }
}

/*
 *   afsai_grow_team (uint row_begin, uint rows, const uint* a_row_ptr, const uint* a_col_idx,
 *                    const SCALAR* a_values, uint max_steps, uint per_step, SCALAR eps,
 *                    uint stop_rule, uint* out_cols, uint* out_len)
 * One warp per row (see kernels-cl/fsai.cl for the team's algorithm and its order of
 * arithmetic): the warps of a block are independent, so the team's posts go through warp
 * shuffles instead of local memory and barriers (__syncwarp orders the shared arrays).
 * cap <= AFSAI_TEAM_CAP (checked by the host).
 */
#define AFSAI_TEAM 32
#define AFSAI_TEAM_CAP 31
#define AFSAI_TEAM_L (AFSAI_TEAM_CAP * (AFSAI_TEAM_CAP + 1) / 2)
#define AFSAI_NONE 0xffffffffu

extern "C" __launch_bounds__(WG) __global__ void afsai_grow_team(const uint row_begin, const uint rows, const uint *a_row_ptr,
                                                                 const uint *a_col_idx, const SCALAR *a_values,
                                                                 const uint max_steps, const uint per_step, const SCALAR eps,
                                                                 const uint stop_rule, uint *out_cols, uint *out_len) {
    PDL_WAIT();
    __shared__ SCALAR tl[WARPS][AFSAI_TEAM_L]; /* packed rows of L: row a at a (a + 1) / 2 */
    __shared__ SCALAR ty[WARPS][AFSAI_TEAM];
    __shared__ SCALAR tg[WARPS][AFSAI_TEAM];   /* G~(i, P) */
    __shared__ SCALAR tent[WARPS][AFSAI_TEAM]; /* a_{j, P_a}; [30] a_jj, [31] -a_ij */
    __shared__ uint tp[WARPS][AFSAI_TEAM];     /* P in insertion order */
    __shared__ uint tps[WARPS][AFSAI_TEAM];    /* P sorted */
    const uint lane = threadIdx.x & 31u;
    const uint team = threadIdx.x >> 5;
    const uint cap = max_steps * per_step;
    for (uint t = blockIdx.x * WARPS + team; t < rows; t += gridDim.x * WARPS) {
        const uint i = row_begin + t;
        const SCALAR psi0 = afsai_entry(a_row_ptr, a_col_idx, a_values, i, i);
        SCALAR psi = psi0;
        uint m = 0;
        int failed = 0;
        for (uint step = 0; step < max_steps && !failed; ++step) {
            const SCALAR psi_prev = psi;
            /* 1. the warp's lists: P_lane (lane < m) and row i (lane 31) */
            uint c = 0, c_end = 0, col = AFSAI_NONE;
            SCALAR w = ZERO, term = ZERO;
            if (lane < m || lane == AFSAI_TEAM - 1) {
                const uint r = lane < m ? tp[team][lane] : i;
                w = lane < m ? tg[team][lane] : (SCALAR)1;
                c = a_row_ptr[r];
                c_end = a_row_ptr[r + 1];
                if (c < c_end && a_col_idx[c] < i) {
                    col = a_col_idx[c];
                    term = w * a_values[c];
                }
            }
            uint sel_col[AFSAI_MAX_PER_STEP];
            SCALAR sel_val[AFSAI_MAX_PER_STEP];
            uint nsel = 0;
            uint sp = 0;
            for (;;) {
#if __CUDA_ARCH__ >= 800
                const uint jmin = __reduce_min_sync(FULL_MASK, col);
#else
                uint jmin = col;
#pragma unroll
                for (int off = 16; off > 0; off >>= 1) jmin = min(jmin, __shfl_xor_sync(FULL_MASK, jmin, off));
#endif
                if (jmin == AFSAI_NONE) break;
                /* the gradient: the posters' terms in lane order, first term first */
                uint posters = __ballot_sync(FULL_MASK, col == jmin);
                SCALAR acc = ZERO;
                int first = 1;
                while (posters != 0u) {
                    const int l = __ffs(posters) - 1;
                    posters &= posters - 1u;
                    const SCALAR tv = __shfl_sync(FULL_MASK, term, l);
                    acc = first ? tv : acc + tv;
                    first = 0;
                }
                if (col == jmin) {
                    ++c;
                    if (c < c_end && a_col_idx[c] < i) {
                        col = a_col_idx[c];
                        term = w * a_values[c];
                    } else {
                        col = AFSAI_NONE;
                        term = ZERO;
                    }
                }
                /* 2. selection (the same in every lane) */
                while (sp < m && tps[team][sp] < jmin) ++sp;
                if (sp < m && tps[team][sp] == jmin) continue;
                afsai_offer(fabs(acc), jmin, per_step, sel_col, sel_val, &nsel);
            }
            if (nsel == 0) break; /* the pattern stops growing */
            /* 3. extend L, y and psi by the selected columns, in rank order */
            for (uint q = 0; q < nsel && !failed; ++q) {
                const uint j = sel_col[q];
                if (lane < m) tent[team][lane] = afsai_entry(a_row_ptr, a_col_idx, a_values, j, tp[team][lane]);
                else if (lane == AFSAI_TEAM - 2) tent[team][lane] = afsai_entry(a_row_ptr, a_col_idx, a_values, j, j);
                else if (lane == AFSAI_TEAM - 1) tent[team][lane] = -afsai_entry(a_row_ptr, a_col_idx, a_values, i, j);
                __syncwarp();
                int bad = 0;
                SCALAR psi_new = psi;
                if (lane == 0) {
                    SCALAR *L = tl[team];
                    const uint lm = m * (m + 1) / 2; /* row m of L */
                    SCALAR d = tent[team][AFSAI_TEAM - 2];
                    SCALAR yv = tent[team][AFSAI_TEAM - 1];
                    for (uint a = 0; a < m; ++a) {
                        SCALAR v = tent[team][a];
                        const uint la = a * (a + 1) / 2;
                        for (uint k = 0; k < a; ++k) v -= L[la + k] * L[lm + k];
                        v = v / L[la + a];
                        L[lm + a] = v;
                        d -= v * v;
                        yv -= v * ty[team][a];
                    }
                    if (!(d > ZERO) || isinf(d)) {
                        bad = 1;
                    } else {
                        const SCALAR dm = sqrt(d);
                        L[lm + m] = dm;
                        yv = yv / dm;
                        ty[team][m] = yv;
                        psi_new = psi - yv * yv;
                        tp[team][m] = j;
                        uint s = m; /* insert j into the sorted copy */
                        while (s > 0 && tps[team][s - 1] > j) {
                            tps[team][s] = tps[team][s - 1];
                            --s;
                        }
                        tps[team][s] = j;
                    }
                }
                __syncwarp();
                failed = __shfl_sync(FULL_MASK, bad, 0);
                if (!failed) {
                    psi = __shfl_sync(FULL_MASK, psi_new, 0);
                    ++m;
                }
            }
            if (failed) break;
            /* G~(i, P) = L^-T y, backward (lane 0) */
            if (lane == 0) {
                const SCALAR *L = tl[team];
                for (uint a = m; a-- > 0;) {
                    SCALAR v = ty[team][a];
                    for (uint k = a + 1; k < m; ++k) v -= L[k * (k + 1) / 2 + a] * tg[team][k];
                    tg[team][a] = v / L[a * (a + 1) / 2 + a];
                }
            }
            __syncwarp();
            /* 4. eq. (17) (stop_rule 0) or the step's relative reduction (stop_rule 1) */
            if (stop_rule == 0u ? psi <= eps * psi0 : psi_prev - psi <= eps * psi_prev) break;
        }
        if (failed) {
            if (lane == 0) out_len[t] = 0xffffffffu;
        } else {
            if (lane < m) out_cols[(ulong)t * cap + lane] = tp[team][lane];
            if (lane == 0) out_len[t] = m;
        }
        /* the warp's shared arrays are rewritten by its next row only after every read */
        __syncwarp();
    }
}

/*
 *   afsai_compact (uint rows, uint first_row, uint n, uint nnz, uint cap, const uint* out_cols,
 *                  const uint* out_len, const uint* g_row_ptr, uint* g_col_idx, uint* col_count)
 *   afsai_place (uint len, uint offset, const uint* src, uint* dst)
 *   fsai_transpose_fill (uint n, uint nnz, const uint* g_row_ptr, const uint* g_col_idx, uint* cursor,
 *                        uint* gt_row_idx, uint* gt_entry)
 *   fsai_transpose_sort (uint n, uint nnz, const uint* gt_col_ptr, uint* gt_row_idx, uint* gt_entry,
 *                        uint* gt_pos)
 * The layout of the adaptive FSAI pattern on the device (G's rows sorted, the transpose by
 * atomic slots, then every column sorted by row: a unique result); see kernels-cl/fsai.cl.
 */

/* Heap sort of key[0..len) ascending, with val[] moved along when pairs (val may be key). */
__device__ __forceinline__ void fsai_sift(uint *key, uint *val, const int pairs, uint root, const uint len) {
    for (;;) {
        uint ch = 2 * root + 1;
        if (ch >= len) break;
        if (ch + 1 < len && key[ch + 1] > key[ch]) ++ch;
        if (key[root] >= key[ch]) break;
        const uint k = key[root];
        key[root] = key[ch];
        key[ch] = k;
        if (pairs) {
            const uint v = val[root];
            val[root] = val[ch];
            val[ch] = v;
        }
        root = ch;
    }
}

__device__ __forceinline__ void fsai_heap_sort(uint *key, uint *val, const int pairs, const uint len) {
    for (uint r = len / 2; r-- > 0;) fsai_sift(key, val, pairs, r, len);
    for (uint end = len; end-- > 1;) {
        const uint k = key[0];
        key[0] = key[end];
        key[end] = k;
        if (pairs) {
            const uint v = val[0];
            val[0] = val[end];
            val[end] = v;
        }
        fsai_sift(key, val, pairs, 0, end);
    }
}

extern "C" __launch_bounds__(WG) __global__ void afsai_compact(const uint rows, const uint first_row, const uint n,
                                                               const uint nnz, const uint cap, const uint *out_cols,
                                                               const uint *out_len, const uint *g_row_ptr,
                                                               uint *g_col_idx, uint *col_count) {
    PDL_WAIT();
    for (uint t = GRID_START; t < rows; t += GRID_STRIDE) {
        const uint m = out_len[t];
        const uint gb = g_row_ptr[t];
        if (m > cap || gb > nnz || nnz - gb <= m) continue; /* inconsistent input: no write */
        uint *row = g_col_idx + gb;
        for (uint a = 0; a < m; ++a) row[a] = out_cols[(ulong)t * cap + a];
        fsai_heap_sort(row, row, 0, m);
        row[m] = first_row + t;
        for (uint a = 0; a <= m; ++a)
            if (row[a] < n) atomicAdd(col_count + row[a], 1u);
    }
}

extern "C" __launch_bounds__(WG) __global__ void afsai_place(const uint len, const uint offset, const uint *src,
                                                             uint *dst) {
    PDL_WAIT();
    for (uint e = GRID_START; e < len; e += GRID_STRIDE) dst[offset + e] = src[e];
}

extern "C" __launch_bounds__(WG) __global__ void fsai_transpose_fill(const uint n, const uint nnz, const uint *g_row_ptr,
                                                                     const uint *g_col_idx, uint *cursor,
                                                                     uint *gt_row_idx, uint *gt_entry) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const uint end = min(g_row_ptr[i + 1], nnz);
        for (uint e = g_row_ptr[i]; e < end; ++e) {
            const uint c = g_col_idx[e];
            if (c >= n) continue;
            const uint p = atomicAdd(cursor + c, 1u);
            if (p >= nnz) continue;
            gt_row_idx[p] = i;
            gt_entry[p] = e;
        }
    }
}

extern "C" __launch_bounds__(WG) __global__ void fsai_transpose_sort(const uint n, const uint nnz, const uint *gt_col_ptr,
                                                                     uint *gt_row_idx, uint *gt_entry,
                                                                     uint *gt_pos) {
    PDL_WAIT();
    for (uint j = GRID_START; j < n; j += GRID_STRIDE) {
        const uint b = gt_col_ptr[j];
        const uint end = gt_col_ptr[j + 1];
        if (b > end || end > nnz) continue; /* inconsistent input: no write */
        fsai_heap_sort(gt_row_idx + b, gt_entry + b, 1, end - b);
        for (uint p = b; p < end; ++p)
            if (gt_entry[p] < nnz) gt_pos[gt_entry[p]] = p;
    }
}
