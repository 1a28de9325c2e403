/*
 * fsai.cl -- static factored sparse approximate inverse (FSAI) setup (PrecondOps), [Bernaschi19]
 * Section 2 (the static pattern; the adaptive growth is not here). Conventions (SCALAR, WG,
 * uint/ulong, FOR_EACH): see reduce.cl.
 *
 * Row i of the lower triangular G (G^T G ~ A^-1, A symmetric positive definite) lives on the
 * pattern P_i = g_col_idx[g_row_ptr[i] .. g_row_ptr[i+1]] (ascending, i last). It solves the
 * small dense SPD system A[P_i, P_i] y = e_last by Cholesky and sets G(i, P_i) = y / sqrt(y_last),
 * so that diag(G A G^T) = 1. The dense matrix is gathered into `scratch` (m x m, row-major;
 * scratch_off[i] holds its stride in the top 6 bits and the offset of its first entry, relative
 * to the batch's scratch, below: entry e at offset + e * stride, the rows of a warp interleaved,
 * see FSAI_LANES in src/backend/ops/precond.rs) by binary search of A's columns in P_i. The
 * values go to G (block of row i) and, through gt_pos, straight into G^T (no transpose kernel).
 * A non-positive or non-finite pivot writes NaN into the row (the host reports the row).
 *
 * Kernel argument list (CUDA mirrors it in this order):
 *   fsai_rows (uint row_begin, uint rows, const uint* a_row_ptr, const uint* a_col_idx,
 *              const SCALAR* a_values, const uint* g_row_ptr, const uint* g_col_idx,
 *              const uint* gt_pos, const ulong* scratch_off, SCALAR* scratch, SCALAR* g_values,
 *              SCALAR* gt_values)
 * One work-item per row i = row_begin + t, t < rows.
 * Arithmetic order (the host backend uses the same): Cholesky by columns j = 0..m-1 with the
 * sums over k ascending; forward then backward substitution with sums ascending in k.
 */

/* Position of c in the ascending p[0..m), or -1. */
inline int fsai_find(__global const uint *p, const uint m, const uint c) {
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
inline void fsai_gather_row(__global SCALAR *M, const ulong ms, __global const uint *p, const uint m, const uint a,
                            __global const uint *a_row_ptr, __global const uint *a_col_idx,
                            __global const SCALAR *a_values) {
    for (uint b = 0; b < m; ++b) M[(a * m + b) * ms] = ZERO;
    const uint r = p[a];
    for (uint k = a_row_ptr[r]; k < a_row_ptr[r + 1]; ++k) {
        const int b = fsai_find(p, m, a_col_idx[k]);
        if (b >= 0) M[(a * m + (uint)b) * ms] = a_values[k];
    }
}

/* Row i's dense system in the batch's scratch: the offset of its first entry (low 58 bits of
 * scratch_off[i]) and, into *ms, the stride between its entries (top 6 bits: the rows of a warp
 * interleaved, see FSAI_LANES in src/backend/ops/precond.rs). */
inline __global SCALAR *fsai_row_system(__global SCALAR *scratch, __global const ulong *scratch_off, const uint i,
                                        ulong *ms) {
    const ulong so = scratch_off[i];
    *ms = so >> 58;
    return scratch + (so & (((ulong)1 << 58) - (ulong)1));
}

pk_kernel void fsai_rows(const uint row_begin, const uint rows, PK_GLOBAL(const uint, a_row_ptr),
                         PK_GLOBAL(const uint, a_col_idx), PK_GLOBAL(const SCALAR, a_values),
                         PK_GLOBAL(const uint, g_row_ptr), PK_GLOBAL(const uint, g_col_idx),
                         PK_GLOBAL(const uint, gt_pos), PK_GLOBAL(const ulong, scratch_off),
                         PK_GLOBAL(SCALAR, scratch), PK_GLOBAL(SCALAR, g_values), PK_GLOBAL(SCALAR, gt_values)) {
    PK_BIND(const uint, a_row_ptr);
    PK_BIND(const uint, a_col_idx);
    PK_BIND(const SCALAR, a_values);
    PK_BIND(const uint, g_row_ptr);
    PK_BIND(const uint, g_col_idx);
    PK_BIND(const uint, gt_pos);
    PK_BIND(const ulong, scratch_off);
    PK_BIND(SCALAR, scratch);
    PK_BIND(SCALAR, g_values);
    PK_BIND(SCALAR, gt_values);
    FOR_EACH(t, rows) {
        const uint i = row_begin + t;
        const uint gb = g_row_ptr[i];
        const uint m = g_row_ptr[i + 1] - gb;
        __global const uint *p = g_col_idx + gb;
        ulong ms; /* the row's system: entry e at M[e * ms] */
        __global SCALAR *M = fsai_row_system(scratch, scratch_off, i, &ms);
        for (uint a = 0; a < m; ++a) fsai_gather_row(M, ms, p, m, a, a_row_ptr, a_col_idx, a_values);
        /* Cholesky, lower factor in place (row-major: L(r, j) is entry r*m + j). */
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
            for (uint a = 0; a < m; ++a) {
                g_values[gb + a] = NAN;
                gt_values[gt_pos[gb + a]] = NAN;
            }
            continue;
        }
        /* L z = e_last gives z = (0, .., 0, 1 / L_last); L^T y = z backward, y written into the
         * row of G and scaled there. */
        const uint l = m - 1;
        __global SCALAR *y = g_values + gb;
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
 * fsai_rows for the batches of long rows (FSAI_TEAM_MIN_M in src/backend/ops/precond.rs, each
 * system contiguous): a team of 32 work-items per row (WG / 32 teams per work-group, rows
 * row_begin + t taken by teams in turn), the same results bit for bit. The team gathers the
 * system (work-item a the rows a, a + 32, ..), then factorizes it by columns: for column j every
 * work-item forms the pivot d in fsai_rows' order and the rows r > j of the column are shared
 * among the team, each with fsai_rows' sum over k ascending; L(r, j) is stored at entry j m + r
 * (the upper triangle, so the team's loads of L(r, k) for consecutive r are consecutive; A(r, j)
 * is read from the untouched lower triangle). The team's first work-item then solves L^T y = z
 * as fsai_rows does and the team scales the row. Every loop with a barrier runs to the largest
 * m of the work-group's rows (the teams of a work-group move in lockstep).
 */
pk_kernel void fsai_rows_team(const uint row_begin, const uint rows, PK_GLOBAL(const uint, a_row_ptr),
                              PK_GLOBAL(const uint, a_col_idx), PK_GLOBAL(const SCALAR, a_values),
                              PK_GLOBAL(const uint, g_row_ptr), PK_GLOBAL(const uint, g_col_idx),
                              PK_GLOBAL(const uint, gt_pos), PK_GLOBAL(const ulong, scratch_off),
                              PK_GLOBAL(SCALAR, scratch), PK_GLOBAL(SCALAR, g_values), PK_GLOBAL(SCALAR, gt_values)) {
    PK_BIND(const uint, a_row_ptr);
    PK_BIND(const uint, a_col_idx);
    PK_BIND(const SCALAR, a_values);
    PK_BIND(const uint, g_row_ptr);
    PK_BIND(const uint, g_col_idx);
    PK_BIND(const uint, gt_pos);
    PK_BIND(const ulong, scratch_off);
    PK_BIND(SCALAR, scratch);
    PK_BIND(SCALAR, g_values);
    PK_BIND(SCALAR, gt_values);
#if WG >= 32 && (WG % 32) == 0
#define FSAI_TEAMS (WG / 32)
    __local uint team_m[FSAI_TEAMS];
    __local SCALAR team_scale[FSAI_TEAMS];
    const uint lid = get_local_id(0);
    const uint team = lid / 32;
    const uint lane = lid % 32;
    for (uint base = get_group_id(0) * FSAI_TEAMS; base < rows; base += get_num_groups(0) * FSAI_TEAMS) {
        const uint t = base + team;
        const int live = t < rows;
        const uint i = row_begin + (live ? t : 0u);
        const uint gb = g_row_ptr[i];
        const uint m = live ? g_row_ptr[i + 1] - gb : 0u;
        __global const uint *p = g_col_idx + gb;
        ulong ms;
        __global SCALAR *M = fsai_row_system(scratch, scratch_off, i, &ms);
        for (uint a = lane; a < m; a += 32) fsai_gather_row(M, ms, p, m, a, a_row_ptr, a_col_idx, a_values);
        if (lane == 0) team_m[team] = m;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        uint m_max = 0;
        for (uint k = 0; k < FSAI_TEAMS; ++k) m_max = max(m_max, team_m[k]);
        int ok = live;
        SCALAR ljj = ZERO;
        for (uint j = 0; j < m_max; ++j) {
            /* L(j - 1, j - 1) goes in only now: every work-item read A(j - 1, j - 1) for its
             * pivot before the last barrier */
            if (ok && j < m && j > 0 && lane == 0) M[((j - 1) * m + (j - 1)) * ms] = ljj;
            if (ok && j < m) {
                SCALAR d = M[(j * m + j) * ms];
                for (uint k = 0; k < j; ++k) d -= M[(k * m + j) * ms] * M[(k * m + j) * ms];
                if (!(d > ZERO) || isinf(d)) {
                    ok = 0;
                } else {
                    ljj = sqrt(d);
                    for (uint r = j + 1 + lane; r < m; r += 32) {
                        SCALAR v = M[(r * m + j) * ms];
                        for (uint k = 0; k < j; ++k) v -= M[(k * m + r) * ms] * M[(k * m + j) * ms];
                        M[(j * m + r) * ms] = v / ljj;
                    }
                }
            }
            barrier(CLK_GLOBAL_MEM_FENCE);
        }
        if (live && ok && lane == 0) M[((m - 1) * m + (m - 1)) * ms] = ljj;
        if (live && !ok) {
            for (uint a = lane; a < m; a += 32) {
                g_values[gb + a] = NAN;
                gt_values[gt_pos[gb + a]] = NAN;
            }
        }
        /* L z = e_last, L^T y = z backward (L(k, r) at entry r m + k), y into G's row */
        if (live && ok && lane == 0) {
            const uint l = m - 1;
            __global SCALAR *y = g_values + gb;
            y[l] = ((SCALAR)1 / M[(l * m + l) * ms]) / M[(l * m + l) * ms];
            for (uint r = l; r-- > 0;) {
                SCALAR v = ZERO;
                for (uint k = r + 1; k < m; ++k) v -= M[(r * m + k) * ms] * y[k];
                y[r] = v / M[(r * m + r) * ms];
            }
            team_scale[team] = (SCALAR)1 / sqrt(y[l]);
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (live && ok) {
            const SCALAR scale = team_scale[team];
            for (uint a = lane; a < m; a += 32) {
                const SCALAR g = g_values[gb + a] * scale;
                g_values[gb + a] = g;
                gt_values[gt_pos[gb + a]] = g;
            }
        }
        /* team_m and team_scale are rewritten by the next rows only after every read */
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef FSAI_TEAMS
#endif
}

/*
 * afsai_grow -- the adaptive FSAI pattern ([Bernaschi19] Section 2, Algorithm 1; the growth of
 * every row is independent, so one work-item runs all k_max steps of its row: no host round
 * trip per step or per row).
 *
 *   afsai_grow (uint row_begin, uint rows, const uint* a_row_ptr, const uint* a_col_idx,
 *               const SCALAR* a_values, uint max_steps, uint per_step, SCALAR eps,
 *               uint stop_rule,
 *               SCALAR* scratch, uint* iscratch, uint* out_cols, uint* out_len)
 *
 * Row i = row_begin + t (t < rows) starts from G~_0 = I (P empty, psi_0 = a_ii). Each step:
 *   1. Kaporin gradient (eq. 16) grad_j = sum_{r in P + {i}} w_r a_rj for the columns j < i
 *      not in P (w_r = G~(i, r), w_i = 1), by a multiple-arrays merge of the rows r of A
 *      (one cursor per row, a binary heap of the cursors' columns keyed (column, list), so
 *      equal columns are summed in P's insertion order, then i; no indicator array of
 *      length n);
 *   2. the per_step largest |grad_j| (> 0) join P, ties to the smaller column (selection
 *      rank order); none left: the row stops growing;
 *   3. A[P, P] G~(i, P)^T = -A[P, i] (eq. 8) by a Cholesky factor L of A[P, P] extended by one
 *      row per new column (l = L^-1 A[P, j], d = a_jj - l.l), y = L^-1 (-A[P, i]) likewise,
 *      psi = a_ii - y.y, then G~(i, P) = L^-T y;
 *   4. stop_rule 0: psi <= eps psi_0 (eq. 17); stop_rule 1: psi_prev - psi <= eps psi_prev (the
 *      step reduced psi by a relative eps or less, psi_prev its value before the step): the row
 *      is done.
 * Outputs, indexed by t (the batch's own rows, so a batch needs no n-sized arrays): out_len[t] =
 * |P| and P (insertion order) at out_cols[t * cap ..], cap = max_steps * per_step; a
 * non-positive pivot d (A not SPD) sets out_len[t] = 0xffffffff.
 * Scratch, per work-item t, interleaved (element e at e * rows + t, so a warp's accesses to the
 * same element coalesce): scalars L (packed rows, cap (cap + 1) / 2), y (cap), g (cap);
 * integers P (cap), P sorted (cap), cursors (cap + 1), heap columns and lists (cap + 1 each).
 * Arithmetic order (the host backend uses the same, no contraction): every sum is formed from
 * its first term in ascending index order; per_step <= AFSAI_MAX_PER_STEP.
 */
#define AFSAI_MAX_PER_STEP 8

/* a_{row, col} or 0 (binary search of the ascending row). */
inline SCALAR afsai_entry(__global const uint *a_row_ptr, __global const uint *a_col_idx,
                          __global const SCALAR *a_values, const uint row, const uint col) {
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
inline void afsai_offer(const SCALAR v, const uint col, const uint per_step, uint *sel_col,
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

pk_kernel void afsai_grow(const uint row_begin, const uint rows, PK_GLOBAL(const uint, a_row_ptr),
                          PK_GLOBAL(const uint, a_col_idx), PK_GLOBAL(const SCALAR, a_values),
                          const uint max_steps, const uint per_step, const SCALAR eps, const uint stop_rule,
                          PK_GLOBAL(SCALAR, scratch), PK_GLOBAL(uint, iscratch),
                          PK_GLOBAL(uint, out_cols), PK_GLOBAL(uint, out_len)) {
    PK_BIND(const uint, a_row_ptr);
    PK_BIND(const uint, a_col_idx);
    PK_BIND(const SCALAR, a_values);
    PK_BIND(SCALAR, scratch);
    PK_BIND(uint, iscratch);
    PK_BIND(uint, out_cols);
    PK_BIND(uint, out_len);
    const uint cap = max_steps * per_step;
    const uint lsz = cap * (cap + 1) / 2;
    FOR_EACH(t, rows) {
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
 * The same growth as afsai_grow, the same outputs bit for bit, by a team of AFSAI_TEAM = 32
 * work-items per row (WG / 32 teams per work-group, rows row_begin + t taken by teams in turn)
 * and without device scratch; the host runs it only for cap = max_steps * per_step <=
 * AFSAI_TEAM_CAP = 31, WG a multiple of 32 and the local arrays below within the device's local
 * memory (-D AFSAI_TEAM_LOCAL_OK at build; without it the body is empty).
 *   - The merge: work-item l < |P| of the team holds the cursor of list P_l (weight G~(i, P_l)),
 *     work-item 31 the cursor of row i (weight 1). Each round every work-item posts its current
 *     column below i (or none) and its term w a_rc in local memory; after the barrier each
 *     work-item of the team reads the team's 32 posts: the smallest column jmin, and its
 *     gradient summed over the posting work-items in ascending order (P's insertion order,
 *     then i: the heap's order in afsai_grow), first term first. The posters of jmin advance.
 *     Every work-item of a team so holds the same gradient and runs the same selection.
 *   - The Cholesky factor L (packed rows), y, G~(i, P), P and P sorted live in local memory.
 *     For each selected column the team looks up a_{j, P_a} (work-item a), a_jj and a_ij in
 *     parallel; the team's work-item 0 extends L, y and psi (afsai_extend_cholesky) and solves
 *     G~ = L^-T y in the order of afsai_grow.
 *   - Barriers are work-group wide, so every loop holding one runs the same number of rounds in
 *     every team of the group: the merge ends one round after no team had a column left (the
 *     flags of a round are read after the next barrier), the steps end when no team grows.
 */
#define AFSAI_TEAM 32
#define AFSAI_TEAM_CAP 31
#define AFSAI_TEAM_L (AFSAI_TEAM_CAP * (AFSAI_TEAM_CAP + 1) / 2)
#define AFSAI_NONE 0xffffffffu

/* afsai_grow's step 3 for one selected column j, in its order, run by one work-item of a team
 * (both versions of afsai_grow_team): L (packed rows, row a at a (a + 1) / 2) gains row m, y
 * gains y_m, p (P in insertion order) and ps (P sorted, j inserted in place) gain j. ent holds
 * a_{j, P_a} at a < m, a_jj at AFSAI_TEAM - 2 and -a_ij at AFSAI_TEAM - 1. Returns 1 for a
 * non-positive or non-finite pivot (row m of L partly written; y, p, ps and *psi_new untouched),
 * else 0 with *psi_new = psi - y_m^2. */
inline int afsai_extend_cholesky(__local SCALAR *L, __local SCALAR *y, __local const SCALAR *ent,
                                 __local uint *p, __local uint *ps, const uint m, const uint j,
                                 const SCALAR psi, SCALAR *psi_new) {
    const uint lm = m * (m + 1) / 2; /* row m of L */
    SCALAR d = ent[AFSAI_TEAM - 2];
    SCALAR yv = ent[AFSAI_TEAM - 1];
    for (uint a = 0; a < m; ++a) {
        SCALAR v = ent[a];
        const uint la = a * (a + 1) / 2;
        for (uint k = 0; k < a; ++k) v -= L[la + k] * L[lm + k];
        v = v / L[la + a];
        L[lm + a] = v;
        d -= v * v;
        yv -= v * y[a];
    }
    if (!(d > ZERO) || isinf(d)) return 1;
    const SCALAR dm = sqrt(d);
    L[lm + m] = dm;
    yv = yv / dm;
    y[m] = yv;
    *psi_new = psi - yv * yv;
    p[m] = j;
    uint s = m; /* insert j into the sorted copy */
    while (s > 0 && ps[s - 1] > j) {
        ps[s] = ps[s - 1];
        --s;
    }
    ps[s] = j;
    return 0;
}

pk_kernel void afsai_grow_team(const uint row_begin, const uint rows, PK_GLOBAL(const uint, a_row_ptr),
                               PK_GLOBAL(const uint, a_col_idx), PK_GLOBAL(const SCALAR, a_values),
                               const uint max_steps, const uint per_step, const SCALAR eps, const uint stop_rule,
                               PK_GLOBAL(uint, out_cols), PK_GLOBAL(uint, out_len)) {
    PK_BIND(const uint, a_row_ptr);
    PK_BIND(const uint, a_col_idx);
    PK_BIND(const SCALAR, a_values);
    PK_BIND(uint, out_cols);
    PK_BIND(uint, out_len);
#if WG >= AFSAI_TEAM && (WG % AFSAI_TEAM) == 0 && defined(AFSAI_TEAM_LOCAL_OK) && defined(PK_NV_PTX)
    /* NVIDIA GPUs: a team is a warp, so its posts go through warp shuffles (inline PTX, see
     * reduce.cl) without work-group barriers: the CUDA kernel's algorithm line for line
     * (kernels-cu/fsai.cu), the same patterns as the barrier version below and the host (the
     * tests compare them; in f32, OpenCL's division and square root need not round as CUDA's
     * do, so f32 patterns may differ from CUDA's). The barrier bullet of the header is the
     * version below. */
#define AFSAI_TEAMS (WG / AFSAI_TEAM)
    __local SCALAR tl[AFSAI_TEAMS][AFSAI_TEAM_L]; /* packed rows of L: row a at a (a + 1) / 2 */
    __local SCALAR ty[AFSAI_TEAMS][AFSAI_TEAM];
    __local SCALAR tg[AFSAI_TEAMS][AFSAI_TEAM];   /* G~(i, P) */
    __local SCALAR tent[AFSAI_TEAMS][AFSAI_TEAM]; /* a_{j, P_a}; [30] a_jj, [31] -a_ij */
    __local uint tp[AFSAI_TEAMS][AFSAI_TEAM];     /* P in insertion order */
    __local uint tps[AFSAI_TEAMS][AFSAI_TEAM];    /* P sorted */
    const uint lane = get_local_id(0) % AFSAI_TEAM;
    const uint team = get_local_id(0) / AFSAI_TEAM;
    const uint cap = max_steps * per_step;
    for (uint t = get_group_id(0) * AFSAI_TEAMS + team; t < rows; t += get_num_groups(0) * AFSAI_TEAMS) {
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
                const uint jmin = warp_min_u32(col);
                if (jmin == AFSAI_NONE) break;
                /* the gradient: the posters' terms in lane order, first term first */
                uint posters = warp_ballot(col == jmin);
                SCALAR acc = ZERO;
                int first = 1;
                while (posters != 0u) {
                    const uint l = popcount((posters & (0u - posters)) - 1u);
                    posters &= posters - 1u;
                    const SCALAR tv = warp_shfl_scalar(term, l);
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
                warp_sync();
                int bad = 0;
                SCALAR psi_new = psi;
                if (lane == 0) {
                    bad = afsai_extend_cholesky(tl[team], ty[team], tent[team], tp[team], tps[team], m, j, psi,
                                                &psi_new);
                }
                warp_sync();
                failed = (int)warp_shfl_u32((uint)bad, 0);
                if (!failed) {
                    psi = warp_shfl_scalar(psi_new, 0);
                    ++m;
                }
            }
            if (failed) break;
            /* G~(i, P) = L^-T y, backward (lane 0) */
            if (lane == 0) {
                __local const SCALAR *L = tl[team];
                for (uint a = m; a-- > 0;) {
                    SCALAR v = ty[team][a];
                    for (uint k = a + 1; k < m; ++k) v -= L[k * (k + 1) / 2 + a] * tg[team][k];
                    tg[team][a] = v / L[a * (a + 1) / 2 + a];
                }
            }
            warp_sync();
            /* 4. eq. (17) (stop_rule 0) or the step's relative reduction (stop_rule 1) */
            if (stop_rule == 0u ? psi <= eps * psi0 : psi_prev - psi <= eps * psi_prev) break;
        }
        if (failed) {
            if (lane == 0) out_len[t] = 0xffffffffu;
        } else {
            if (lane < m) out_cols[(ulong)t * cap + lane] = tp[team][lane];
            if (lane == 0) out_len[t] = m;
        }
        /* the warp's local arrays are rewritten by its next row only after every read */
        warp_sync();
    }
#undef AFSAI_TEAMS
#elif WG >= AFSAI_TEAM && (WG % AFSAI_TEAM) == 0 && defined(AFSAI_TEAM_LOCAL_OK)
#define AFSAI_TEAMS (WG / AFSAI_TEAM)
    __local SCALAR tl[AFSAI_TEAMS][AFSAI_TEAM_L]; /* packed rows of L: row a at a (a + 1) / 2 */
    __local SCALAR ty[AFSAI_TEAMS][AFSAI_TEAM];
    __local SCALAR tg[AFSAI_TEAMS][AFSAI_TEAM];   /* G~(i, P) */
    __local SCALAR tent[AFSAI_TEAMS][AFSAI_TEAM]; /* a_{j, P_a}; [30] a_jj, [31] -a_ij */
    __local SCALAR tpsi[AFSAI_TEAMS];
    __local uint tp[AFSAI_TEAMS][AFSAI_TEAM];     /* P in insertion order */
    __local uint tps[AFSAI_TEAMS][AFSAI_TEAM];    /* P sorted */
    __local uint tfail[AFSAI_TEAMS];
    __local uint tgrow[AFSAI_TEAMS];
    __local uint tmore[2][AFSAI_TEAMS];
    __local uint ccol[2][WG] __attribute__((aligned(16)));
    __local SCALAR cterm[2][WG];
    const uint lid = get_local_id(0);
    const uint team = lid / AFSAI_TEAM;
    const uint lane = lid % AFSAI_TEAM;
    const uint cap = max_steps * per_step;
    for (uint base = get_group_id(0) * AFSAI_TEAMS; base < rows; base += get_num_groups(0) * AFSAI_TEAMS) {
        const uint t = base + team;
        const int live = t < rows;
        const uint i = row_begin + (live ? t : 0u);
        const SCALAR psi0 = live ? afsai_entry(a_row_ptr, a_col_idx, a_values, i, i) : ZERO;
        SCALAR psi = psi0;
        uint m = 0;
        int failed = 0;
        int growing = live;
        if (lane == 0) tfail[team] = 0;
        for (uint step = 0; step < max_steps; ++step) {
            const SCALAR psi_prev = psi;
            /* 1. the team's lists: P_lane (lane < m) and row i (the last lane) */
            uint c = 0, c_end = 0, col = AFSAI_NONE;
            SCALAR w = ZERO, term = ZERO;
            if (growing && (lane < m || lane == AFSAI_TEAM - 1)) {
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
            for (uint round = 0;; ++round) {
                const uint b = round & 1u;
                ccol[b][lid] = col;
                cterm[b][lid] = term;
                barrier(CLK_LOCAL_MEM_FENCE);
                if (round > 0) {
                    uint any = 0;
                    for (uint k = 0; k < AFSAI_TEAMS; ++k) any |= tmore[b ^ 1u][k];
                    if (!any) break;
                }
                __local const uint *tc = ccol[b] + team * AFSAI_TEAM;
                __local const SCALAR *tt = cterm[b] + team * AFSAI_TEAM;
                /* the team's posts in registers, 4 per local load */
                uint posts[AFSAI_TEAM];
#pragma unroll
                for (uint q = 0; q < AFSAI_TEAM / 4; ++q) {
                    const uint4 v = vload4(q, tc);
                    posts[4 * q] = v.x;
                    posts[4 * q + 1] = v.y;
                    posts[4 * q + 2] = v.z;
                    posts[4 * q + 3] = v.w;
                }
                uint jmin = AFSAI_NONE;
#pragma unroll
                for (uint l = 0; l < AFSAI_TEAM; ++l) jmin = min(jmin, posts[l]);
                if (lane == 0) tmore[b][team] = jmin != AFSAI_NONE;
                if (jmin == AFSAI_NONE) continue;
                SCALAR acc = ZERO;
                int first = 1;
#pragma unroll
                for (uint l = 0; l < AFSAI_TEAM; ++l) {
                    if (posts[l] == jmin) {
                        acc = first ? tt[l] : acc + tt[l];
                        first = 0;
                    }
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
                /* 2. selection (the same in every work-item of the team) */
                while (sp < m && tps[team][sp] < jmin) ++sp;
                if (sp < m && tps[team][sp] == jmin) continue;
                afsai_offer(fabs(acc), jmin, per_step, sel_col, sel_val, &nsel);
            }
            if (growing && nsel == 0) growing = 0; /* the pattern stops growing */
            /* 3. extend L, y and psi by the selected columns, in rank order */
            for (uint q = 0; q < per_step; ++q) {
                const int work = growing && !failed && q < nsel;
                const uint j = work ? sel_col[q] : 0u;
                if (work) {
                    if (lane < m) tent[team][lane] = afsai_entry(a_row_ptr, a_col_idx, a_values, j, tp[team][lane]);
                    else if (lane == AFSAI_TEAM - 2) tent[team][lane] = afsai_entry(a_row_ptr, a_col_idx, a_values, j, j);
                    else if (lane == AFSAI_TEAM - 1) tent[team][lane] = -afsai_entry(a_row_ptr, a_col_idx, a_values, i, j);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (work && lane == 0) {
                    SCALAR psi_new;
                    const int bad = afsai_extend_cholesky(tl[team], ty[team], tent[team], tp[team], tps[team], m, j,
                                                          psi, &psi_new);
                    if (bad) tfail[team] = 1;
                    else tpsi[team] = psi_new;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (work) {
                    failed = (int)tfail[team];
                    if (!failed) {
                        psi = tpsi[team];
                        ++m;
                    }
                }
            }
            if (failed) growing = 0;
            /* G~(i, P) = L^-T y, backward (by work-item 0 of a growing team) */
            if (growing && lane == 0) {
                __local const SCALAR *L = tl[team];
                for (uint a = m; a-- > 0;) {
                    SCALAR v = ty[team][a];
                    for (uint k = a + 1; k < m; ++k) v -= L[k * (k + 1) / 2 + a] * tg[team][k];
                    tg[team][a] = v / L[a * (a + 1) / 2 + a];
                }
            }
            /* 4. eq. (17) (stop_rule 0) or the step's relative reduction (stop_rule 1) */
            if (growing && (stop_rule == 0u ? psi <= eps * psi0 : psi_prev - psi <= eps * psi_prev)) growing = 0;
            if (lane == 0) tgrow[team] = (uint)growing;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint any = 0;
            for (uint k = 0; k < AFSAI_TEAMS; ++k) any |= tgrow[k];
            /* (the next write of tgrow comes after the next step's merge barriers) */
            if (!any) break;
        }
        if (live) {
            if (failed) {
                if (lane == 0) out_len[t] = 0xffffffffu;
            } else {
                if (lane < m) out_cols[(ulong)t * cap + lane] = tp[team][lane];
                if (lane == 0) out_len[t] = m;
            }
        }
        /* the team's local arrays are rewritten by the next row only after every read */
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef AFSAI_TEAMS
#endif
}

/*
 * afsai_compact, fsai_transpose_fill, fsai_transpose_sort -- the layout of the adaptive FSAI
 * pattern on the device, so that the grown pattern never travels to the host (only its row
 * lengths and column counts do, for the two prefix sums).
 *
 *   afsai_compact (uint rows, uint first_row, uint n, uint nnz, uint cap, const uint* out_cols,
 *                  const uint* out_len, const uint* g_row_ptr, uint* g_col_idx, uint* col_count)
 * One work-item per row t < rows of a batch of afsai_grow (its rows first_row + t of G, n in
 * all): row first_row + t of G is out_cols[t * cap .. + out_len[t]] sorted ascending, then
 * first_row + t, written at g_row_ptr[t] (g_row_ptr[t + 1] - g_row_ptr[t] = out_len[t] + 1);
 * col_count[c] += 1 for every column c < n of the row (atomic; zero before the first batch).
 *
 *   afsai_place (uint len, uint offset, const uint* src, uint* dst)
 * dst[offset + e] = src[e] for e < len (src may be longer): the compacted batches joined into
 * one array.
 *
 *   fsai_transpose_fill (uint n, uint nnz, const uint* g_row_ptr, const uint* g_col_idx, uint* cursor,
 *                        uint* gt_row_idx, uint* gt_entry)
 * One work-item per row i < n: entry e of row i in column c takes the slot p = cursor[c]++
 * (atomic; cursor starts as the column pointer of G^T) and writes gt_row_idx[p] = i,
 * gt_entry[p] = e. The order inside a column depends on the schedule; the next kernel makes it
 * canonical.
 *
 *   fsai_transpose_sort (uint n, uint nnz, const uint* gt_col_ptr, uint* gt_row_idx, uint* gt_entry,
 *                        uint* gt_pos)
 * One work-item per column j < n: the pairs (gt_row_idx, gt_entry) of the column sorted by row
 * (heap sort in place: a column can be long), then gt_pos[gt_entry[p]] = p. The rows of a column
 * are distinct, so the result is unique: bit-identical on every backend.
 * nnz is the length of g_col_idx, gt_row_idx, gt_entry and gt_pos: every kernel skips an entry
 * whose index would fall outside, so inconsistent inputs never write out of bounds.
 */

/* Heap sort of key[0..len) ascending, with val[] moved along (val may be key: one array). */
inline void fsai_sift(__global uint *key, __global uint *val, const int pairs, uint root,
                      const uint len) {
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

inline void fsai_heap_sort(__global uint *key, __global uint *val, const int pairs,
                           const uint len) {
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

pk_kernel void afsai_compact(const uint rows, const uint first_row, const uint n, const uint nnz,
                             const uint cap, PK_GLOBAL(const uint, out_cols),
                             PK_GLOBAL(const uint, out_len), PK_GLOBAL(const uint, g_row_ptr),
                             PK_GLOBAL(uint, g_col_idx), PK_GLOBAL(uint, col_count)) {
    PK_BIND(const uint, out_cols);
    PK_BIND(const uint, out_len);
    PK_BIND(const uint, g_row_ptr);
    PK_BIND(uint, g_col_idx);
    PK_BIND(uint, col_count);
    FOR_EACH(t, rows) {
        const uint m = out_len[t];
        const uint gb = g_row_ptr[t];
        if (m > cap || gb > nnz || nnz - gb <= m) continue; /* inconsistent input: no write */
        __global uint *row = g_col_idx + gb;
        for (uint a = 0; a < m; ++a) row[a] = out_cols[(ulong)t * cap + a];
        fsai_heap_sort(row, row, 0, m);
        row[m] = first_row + t;
        for (uint a = 0; a <= m; ++a)
            if (row[a] < n) atomic_inc((volatile __global uint *)(col_count + row[a]));
    }
}

pk_kernel void afsai_place(const uint len, const uint offset, PK_GLOBAL(const uint, src),
                           PK_GLOBAL(uint, dst)) {
    PK_BIND(const uint, src);
    PK_BIND(uint, dst);
    FOR_EACH(e, len) dst[offset + e] = src[e];
}

pk_kernel void fsai_transpose_fill(const uint n, const uint nnz, PK_GLOBAL(const uint, g_row_ptr),
                                   PK_GLOBAL(const uint, g_col_idx), PK_GLOBAL(uint, cursor),
                                   PK_GLOBAL(uint, gt_row_idx), PK_GLOBAL(uint, gt_entry)) {
    PK_BIND(const uint, g_row_ptr);
    PK_BIND(const uint, g_col_idx);
    PK_BIND(uint, cursor);
    PK_BIND(uint, gt_row_idx);
    PK_BIND(uint, gt_entry);
    FOR_EACH(i, n) {
        const uint end = min(g_row_ptr[i + 1], nnz);
        for (uint e = g_row_ptr[i]; e < end; ++e) {
            const uint c = g_col_idx[e];
            if (c >= n) continue;
            const uint p = atomic_inc((volatile __global uint *)(cursor + c));
            if (p >= nnz) continue;
            gt_row_idx[p] = i;
            gt_entry[p] = e;
        }
    }
}

pk_kernel void fsai_transpose_sort(const uint n, const uint nnz, PK_GLOBAL(const uint, gt_col_ptr),
                                   PK_GLOBAL(uint, gt_row_idx), PK_GLOBAL(uint, gt_entry),
                                   PK_GLOBAL(uint, gt_pos)) {
    PK_BIND(const uint, gt_col_ptr);
    PK_BIND(uint, gt_row_idx);
    PK_BIND(uint, gt_entry);
    PK_BIND(uint, gt_pos);
    FOR_EACH(j, n) {
        const uint b = gt_col_ptr[j];
        const uint end = gt_col_ptr[j + 1];
        if (b > end || end > nnz) continue; /* inconsistent input: no write */
        fsai_heap_sort(gt_row_idx + b, gt_entry + b, 1, end - b);
        for (uint p = b; p < end; ++p)
            if (gt_entry[p] < nnz) gt_pos[gt_entry[p]] = p;
    }
}
