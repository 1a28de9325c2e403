/*
 * bilu.cl -- BILU(0) factored on the device by fixed-point sweeps: the block form of Chow and
 * Patel's fine-grained parallel ILU ("Fine-grained parallel incomplete LU factorization", SIAM J.
 * Sci. Comput. 37 (2015)), the GPU setup option of [Ma21a]'s BILU(0). Conventions (SCALAR, WG,
 * uint, FOR_EACH, PK_GLOBAL): see reduce.cl. Blocks are bs x bs, column-major, 1 <= bs <= 8.
 *
 * The factors live in the layout of the `trsv` kernels (trsv.cl): the strict lower part of L
 * (unit diagonal) and the strict upper part of U in block CSR with ascending block columns, and
 * U's diagonal blocks stored inverted. A sweep computes every block from the previous sweep's
 * factors (Jacobi style, so the result does not depend on the order of the work-items):
 *   L_IJ = (A_IJ - sum_{K < J} L_IK U_KJ) U_JJ^-1        (J < I)
 *   U_IJ =  A_IJ - sum_{K < I} L_IK U_KJ                  (J > I)
 *   U_II^-1 = (A_II - sum_{K < I} L_IK U_KI)^-1
 * (K over the blocks present in both row I of L and column J of U). Its fixed point is the
 * BILU(0) factorization, reached exactly after as many sweeps as the dependency graph is deep;
 * a few sweeps give factors nearly as good as a preconditioner. The first sweep (`first`) starts
 * from L = 0: L_IJ = A_IJ A_JJ^-1, U = A's upper part, U_II^-1 = A_II^-1 (Chow and Patel's
 * initial guess).
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   bilu0_scatter (uint bs, uint n_rows, const uint* a_row_ptr, const uint* a_col_idx,
 *                  const SCALAR* a_values, const uint* l_row_ptr, const uint* l_col_idx,
 *                  const uint* u_row_ptr, const uint* u_col_idx, SCALAR* l_values,
 *                  SCALAR* u_values, SCALAR* d_values)
 *       A (CSR, n_rows = block rows * bs) written into the blocks of the L and U patterns and
 *       the diagonal blocks d_values (bs*bs per block row); one work-item per scalar row r,
 *       which first zeroes row r of every block of its block row, then adds its entries (an
 *       entry whose block is in neither pattern is dropped: the couplings of block-Jacobi).
 *   bilu0_sweep   (uint bs, uint n_block_rows, const uint* l_row_ptr, const uint* l_col_idx,
 *                  const uint* u_row_ptr, const uint* u_col_idx, const SCALAR* a_l,
 *                  const SCALAR* a_u, const SCALAR* a_d, const SCALAR* l_old,
 *                  const SCALAR* u_old, const SCALAR* inv_old, uint first, uint report,
 *                  SCALAR* l_new, SCALAR* u_new, SCALAR* inv_new, uint* bad_row)
 *       one sweep: (l_new, u_new, inv_new) from (l_old, u_old, inv_old) and A's parts
 *       (a_l, a_u on the L and U patterns, a_d the diagonal blocks); with `first` the old
 *       factors are not read. One work-item per block row I: the row starts as A's, then for
 *       every K of L's row I ascending, for every J of U's row K ascending that row I holds:
 *       block (I, J) -= L_IK U_KJ (the host's `mul_sub`: j, k, i); then U_II is inverted
 *       (Gauss-Jordan with partial pivoting, the host's `block_dense::invert`; a singular
 *       block stores zeros) and every L_IJ = (its sum) U_JJ^-1 (the host's `mul`). With
 *       `report`, atomic_min(bad_row, I) when U_II is singular or not finite or any new
 *       block of the row holds a NaN or an infinity.
 */

#define PK_NOT_FOUND 0xffffffffu

/* The position of `key` in the ascending col_idx[lo..hi), or PK_NOT_FOUND. */
inline uint bilu_find(__global const uint *col_idx, uint lo, uint hi, const uint key) {
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint c = col_idx[mid];
        if (c == key) {
            return mid;
        }
        if (c < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return PK_NOT_FOUND;
}

pk_kernel void bilu0_scatter(const uint bs, const uint n_rows, PK_GLOBAL(const uint, a_row_ptr),
                             PK_GLOBAL(const uint, a_col_idx), PK_GLOBAL(const SCALAR, a_values),
                             PK_GLOBAL(const uint, l_row_ptr), PK_GLOBAL(const uint, l_col_idx),
                             PK_GLOBAL(const uint, u_row_ptr), PK_GLOBAL(const uint, u_col_idx),
                             PK_GLOBAL(SCALAR, l_values), PK_GLOBAL(SCALAR, u_values), PK_GLOBAL(SCALAR, d_values)) {
    PK_BIND(const uint, a_row_ptr);
    PK_BIND(const uint, a_col_idx);
    PK_BIND(const SCALAR, a_values);
    PK_BIND(const uint, l_row_ptr);
    PK_BIND(const uint, l_col_idx);
    PK_BIND(const uint, u_row_ptr);
    PK_BIND(const uint, u_col_idx);
    PK_BIND(SCALAR, l_values);
    PK_BIND(SCALAR, u_values);
    PK_BIND(SCALAR, d_values);
    const uint bb = bs * bs;
    FOR_EACH(r, n_rows) {
        const uint bi = r / bs;
        const uint i = r - bi * bs;
        for (uint p = l_row_ptr[bi]; p < l_row_ptr[bi + 1]; ++p) {
            for (uint j = 0; j < bs; ++j) l_values[(ulong)p * bb + j * bs + i] = ZERO;
        }
        for (uint p = u_row_ptr[bi]; p < u_row_ptr[bi + 1]; ++p) {
            for (uint j = 0; j < bs; ++j) u_values[(ulong)p * bb + j * bs + i] = ZERO;
        }
        for (uint j = 0; j < bs; ++j) d_values[(ulong)bi * bb + j * bs + i] = ZERO;
        for (uint k = a_row_ptr[r]; k < a_row_ptr[r + 1]; ++k) {
            const uint c = a_col_idx[k];
            const uint bj = c / bs;
            const uint j = c - bj * bs;
            const SCALAR v = a_values[k];
            if (bj < bi) {
                const uint p = bilu_find(l_col_idx, l_row_ptr[bi], l_row_ptr[bi + 1], bj);
                if (p != PK_NOT_FOUND) l_values[(ulong)p * bb + j * bs + i] += v;
            } else if (bj > bi) {
                const uint p = bilu_find(u_col_idx, u_row_ptr[bi], u_row_ptr[bi + 1], bj);
                if (p != PK_NOT_FOUND) u_values[(ulong)p * bb + j * bs + i] += v;
            } else {
                d_values[(ulong)bi * bb + j * bs + i] += v;
            }
        }
    }
}

/* One block row of one sweep, one function per block size (the blocks in private memory):
 * bilu_invert_BS (the host's block_dense::invert; 0 when singular or not finite),
 * bilu_mul_sub_{global,private}_BS (c -= a b) and bilu0_row_BS. */
#define PK_BILU_ROW(BS)                                                                                             \
inline uint bilu_invert_##BS(SCALAR *m, SCALAR *inv) {                                                              \
    const SCALAR eps = sizeof(SCALAR) == 8 ? (SCALAR)2.220446049250313e-16f : (SCALAR)1.1920928955078125e-7f;       \
    SCALAR scale = ZERO;                                                                                            \
    for (uint e = 0; e < BS * BS; ++e) {                                                                            \
        if (!isfinite(m[e])) return 0;                                                                              \
        scale = fmax(scale, fabs(m[e]));                                                                            \
        inv[e] = ZERO;                                                                                              \
    }                                                                                                               \
    const SCALAR tiny = scale * (SCALAR)BS * eps;                                                                   \
    for (uint i = 0; i < BS; ++i) inv[i * BS + i] = (SCALAR)1;                                                      \
    for (uint col = 0; col < BS; ++col) {                                                                           \
        uint p = col;                                                                                               \
        for (uint r = col + 1; r < BS; ++r) {                                                                       \
            if (fabs(m[col * BS + r]) > fabs(m[col * BS + p])) p = r;                                               \
        }                                                                                                           \
        const SCALAR pivot = m[col * BS + p];                                                                       \
        if (pivot == ZERO || fabs(pivot) <= tiny) return 0;                                                         \
        if (p != col) {                                                                                             \
            for (uint j = 0; j < BS; ++j) {                                                                         \
                SCALAR t = m[j * BS + p];                                                                           \
                m[j * BS + p] = m[j * BS + col];                                                                    \
                m[j * BS + col] = t;                                                                                \
                t = inv[j * BS + p];                                                                                \
                inv[j * BS + p] = inv[j * BS + col];                                                                \
                inv[j * BS + col] = t;                                                                              \
            }                                                                                                       \
        }                                                                                                           \
        const SCALAR pinv = (SCALAR)1 / pivot;                                                                      \
        for (uint j = 0; j < BS; ++j) {                                                                             \
            m[j * BS + col] *= pinv;                                                                                \
            inv[j * BS + col] *= pinv;                                                                              \
        }                                                                                                           \
        for (uint r = 0; r < BS; ++r) {                                                                             \
            if (r == col) continue;                                                                                 \
            const SCALAR f = m[col * BS + r];                                                                       \
            if (f == ZERO) continue;                                                                                \
            for (uint j = 0; j < BS; ++j) {                                                                         \
                const SCALAR mc = m[j * BS + col];                                                                  \
                const SCALAR ic = inv[j * BS + col];                                                                \
                m[j * BS + r] -= f * mc;                                                                            \
                inv[j * BS + r] -= f * ic;                                                                          \
            }                                                                                                       \
        }                                                                                                           \
    }                                                                                                               \
    return 1;                                                                                                       \
}                                                                                                                   \
inline void bilu_mul_sub_global_##BS(__global SCALAR *c, const SCALAR *a, __global const SCALAR *b) {               \
    for (uint j = 0; j < BS; ++j) {                                                                                 \
        for (uint k = 0; k < BS; ++k) {                                                                             \
            const SCALAR bkj = b[j * BS + k];                                                                       \
            for (uint i = 0; i < BS; ++i) c[j * BS + i] -= a[k * BS + i] * bkj;                                     \
        }                                                                                                           \
    }                                                                                                               \
}                                                                                                                   \
inline void bilu_mul_sub_private_##BS(SCALAR *c, const SCALAR *a, __global const SCALAR *b) {                       \
    for (uint j = 0; j < BS; ++j) {                                                                                 \
        for (uint k = 0; k < BS; ++k) {                                                                             \
            const SCALAR bkj = b[j * BS + k];                                                                       \
            for (uint i = 0; i < BS; ++i) c[j * BS + i] -= a[k * BS + i] * bkj;                                     \
        }                                                                                                           \
    }                                                                                                               \
}                                                                                                                   \
inline void bilu0_row_##BS(const uint bi, __global const uint *l_row_ptr, __global const uint *l_col_idx,           \
                           __global const uint *u_row_ptr, __global const uint *u_col_idx,                          \
                           __global const SCALAR *a_l, __global const SCALAR *a_u, __global const SCALAR *a_d,      \
                           __global const SCALAR *l_old, __global const SCALAR *u_old,                              \
                           __global const SCALAR *inv_old, const uint first, const uint report,                     \
                           __global SCALAR *l_new, __global SCALAR *u_new, __global SCALAR *inv_new,                \
                           __global uint *bad_row) {                                                                \
    const uint bb = BS * BS;                                                                                        \
    const uint l0 = l_row_ptr[bi], l1 = l_row_ptr[bi + 1];                                                          \
    const uint u0 = u_row_ptr[bi], u1 = u_row_ptr[bi + 1];                                                          \
    SCALAR d[BS * BS];                                                                                              \
    for (uint e = 0; e < bb; ++e) d[e] = a_d[(ulong)bi * bb + e];                                                   \
    for (ulong e = (ulong)l0 * bb; e < (ulong)l1 * bb; ++e) l_new[e] = a_l[e];                                      \
    for (ulong e = (ulong)u0 * bb; e < (ulong)u1 * bb; ++e) u_new[e] = a_u[e];                                      \
    if (!first) {                                                                                                   \
        for (uint q = l0; q < l1; ++q) {                                                                            \
            const uint bk = l_col_idx[q];                                                                           \
            SCALAR lik[BS * BS];                                                                                    \
            for (uint e = 0; e < bb; ++e) lik[e] = l_old[(ulong)q * bb + e];                                        \
            uint pl = q + 1, pu = u0;                                                                               \
            for (uint b = u_row_ptr[bk]; b < u_row_ptr[bk + 1]; ++b) {                                              \
                const uint bj = u_col_idx[b];                                                                       \
                __global const SCALAR *ukj = u_old + (ulong)b * bb;                                                 \
                if (bj < bi) {                                                                                      \
                    while (pl < l1 && l_col_idx[pl] < bj) ++pl;                                                     \
                    if (pl < l1 && l_col_idx[pl] == bj) bilu_mul_sub_global_##BS(l_new + (ulong)pl * bb, lik, ukj); \
                } else if (bj == bi) {                                                                              \
                    bilu_mul_sub_private_##BS(d, lik, ukj);                                                         \
                } else {                                                                                            \
                    while (pu < u1 && u_col_idx[pu] < bj) ++pu;                                                     \
                    if (pu < u1 && u_col_idx[pu] == bj) bilu_mul_sub_global_##BS(u_new + (ulong)pu * bb, lik, ukj); \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
    }                                                                                                               \
    uint bad = 0;                                                                                                   \
    SCALAR inv[BS * BS];                                                                                            \
    if (bilu_invert_##BS(d, inv)) {                                                                                 \
        for (uint e = 0; e < bb; ++e) inv_new[(ulong)bi * bb + e] = inv[e];                                         \
    } else {                                                                                                        \
        bad = 1;                                                                                                    \
        for (uint e = 0; e < bb; ++e) inv_new[(ulong)bi * bb + e] = ZERO;                                           \
    }                                                                                                               \
    for (uint q = l0; q < l1; ++q) {                                                                                \
        const uint bj = l_col_idx[q];                                                                               \
        __global SCALAR *lij = l_new + (ulong)q * bb;                                                               \
        SCALAR t[BS * BS];                                                                                          \
        for (uint e = 0; e < bb; ++e) t[e] = lij[e];                                                                \
        SCALAR invj[BS * BS];                                                                                       \
        if (first) {                                                                                                \
            SCALAR m[BS * BS];                                                                                      \
            for (uint e = 0; e < bb; ++e) m[e] = a_d[(ulong)bj * bb + e];                                           \
            if (!bilu_invert_##BS(m, invj)) {                                                                       \
                for (uint e = 0; e < bb; ++e) invj[e] = ZERO;                                                       \
            }                                                                                                       \
        } else {                                                                                                    \
            for (uint e = 0; e < bb; ++e) invj[e] = inv_old[(ulong)bj * bb + e];                                    \
        }                                                                                                           \
        for (uint e = 0; e < bb; ++e) lij[e] = ZERO;                                                                \
        for (uint j = 0; j < BS; ++j) {                                                                             \
            for (uint k = 0; k < BS; ++k) {                                                                         \
                const SCALAR bkj = invj[j * BS + k];                                                                \
                for (uint i = 0; i < BS; ++i) lij[j * BS + i] += t[k * BS + i] * bkj;                               \
            }                                                                                                       \
        }                                                                                                           \
    }                                                                                                               \
    if (report) {                                                                                                   \
        for (ulong e = (ulong)l0 * bb; e < (ulong)l1 * bb; ++e) {                                                   \
            if (!isfinite(l_new[e])) bad = 1;                                                                       \
        }                                                                                                           \
        for (ulong e = (ulong)u0 * bb; e < (ulong)u1 * bb; ++e) {                                                   \
            if (!isfinite(u_new[e])) bad = 1;                                                                       \
        }                                                                                                           \
        if (bad) atomic_min((volatile __global uint *)bad_row, bi);                                                 \
    }                                                                                                               \
}
PK_BILU_ROW(1)
PK_BILU_ROW(2)
PK_BILU_ROW(3)
PK_BILU_ROW(4)
PK_BILU_ROW(5)
PK_BILU_ROW(6)
PK_BILU_ROW(7)
PK_BILU_ROW(8)

pk_kernel void bilu0_sweep(const uint bs, const uint n_block_rows, PK_GLOBAL(const uint, l_row_ptr),
                           PK_GLOBAL(const uint, l_col_idx), PK_GLOBAL(const uint, u_row_ptr),
                           PK_GLOBAL(const uint, u_col_idx), PK_GLOBAL(const SCALAR, a_l), PK_GLOBAL(const SCALAR, a_u),
                           PK_GLOBAL(const SCALAR, a_d), PK_GLOBAL(const SCALAR, l_old), PK_GLOBAL(const SCALAR, u_old),
                           PK_GLOBAL(const SCALAR, inv_old), const uint first, const uint report,
                           PK_GLOBAL(SCALAR, l_new), PK_GLOBAL(SCALAR, u_new), PK_GLOBAL(SCALAR, inv_new),
                           PK_GLOBAL(uint, bad_row)) {
    PK_BIND(const uint, l_row_ptr);
    PK_BIND(const uint, l_col_idx);
    PK_BIND(const uint, u_row_ptr);
    PK_BIND(const uint, u_col_idx);
    PK_BIND(const SCALAR, a_l);
    PK_BIND(const SCALAR, a_u);
    PK_BIND(const SCALAR, a_d);
    PK_BIND(const SCALAR, l_old);
    PK_BIND(const SCALAR, u_old);
    PK_BIND(const SCALAR, inv_old);
    PK_BIND(SCALAR, l_new);
    PK_BIND(SCALAR, u_new);
    PK_BIND(SCALAR, inv_new);
    PK_BIND(uint, bad_row);
    FOR_EACH(bi, n_block_rows) {
#define PK_SWEEP_CASE(BS)                                                                                  \
    case BS:                                                                                               \
        bilu0_row_##BS(bi, l_row_ptr, l_col_idx, u_row_ptr, u_col_idx, a_l, a_u, a_d, l_old, u_old, inv_old, \
                       first, report, l_new, u_new, inv_new, bad_row);                                     \
        break;
        switch (bs) {
            PK_SWEEP_CASE(1)
            PK_SWEEP_CASE(2)
            PK_SWEEP_CASE(3)
            PK_SWEEP_CASE(4)
            PK_SWEEP_CASE(5)
            PK_SWEEP_CASE(6)
            PK_SWEEP_CASE(7)
            PK_SWEEP_CASE(8)
            default:
                break;
        }
#undef PK_SWEEP_CASE
    }
}
