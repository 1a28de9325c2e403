/*
 * bilu.cu -- BILU(0) factored on the device by fixed-point sweeps (Chow and Patel's ParILU, in
 * block form). Mirrors kernels-cl/bilu.cl (argument lists, arithmetic order and the meaning of
 * every argument are documented there); conventions in reduce.cu.
 *
 *   bilu0_scatter (uint bs, uint n_rows, const uint* a_row_ptr, const uint* a_col_idx,
 *                  const SCALAR* a_values, const uint* l_row_ptr, const uint* l_col_idx,
 *                  const uint* u_row_ptr, const uint* u_col_idx, SCALAR* l_values,
 *                  SCALAR* u_values, SCALAR* d_values)
 *   bilu0_sweep   (uint bs, uint n_block_rows, const uint* l_row_ptr, const uint* l_col_idx,
 *                  const uint* u_row_ptr, const uint* u_col_idx, const SCALAR* a_l,
 *                  const SCALAR* a_u, const SCALAR* a_d, const SCALAR* l_old,
 *                  const SCALAR* u_old, const SCALAR* inv_old, uint first, uint report,
 *                  SCALAR* l_new, SCALAR* u_new, SCALAR* inv_new, uint* bad_row)
 * Any grid (grid-stride loops); one thread per scalar row (scatter) or block row (sweep).
 */

#define PK_NOT_FOUND 0xffffffffu

/* The position of `key` in the ascending col_idx[lo..hi), or PK_NOT_FOUND. */
__device__ __forceinline__ uint bilu_find(const uint *col_idx, uint lo, uint hi, const uint key) {
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

extern "C" __launch_bounds__(WG) __global__ void bilu0_scatter(
    const uint bs, const uint n_rows, const uint *__restrict__ a_row_ptr, const uint *__restrict__ a_col_idx,
    const SCALAR *__restrict__ a_values, const uint *__restrict__ l_row_ptr, const uint *__restrict__ l_col_idx,
    const uint *__restrict__ u_row_ptr, const uint *__restrict__ u_col_idx, SCALAR *__restrict__ l_values,
    SCALAR *__restrict__ u_values, SCALAR *__restrict__ d_values) {
    PDL_WAIT();
    const uint bb = bs * bs;
    for (uint r = GRID_START; r < n_rows; r += GRID_STRIDE) {
        const uint bi = r / bs;
        const uint i = r - bi * bs;
        /* Row i of every block of block row bi belongs to this thread: zero it first. */
        for (uint p = l_row_ptr[bi]; p < l_row_ptr[bi + 1]; ++p) {
            for (uint j = 0; j < bs; ++j) l_values[(unsigned long long)p * bb + j * bs + i] = ZERO;
        }
        for (uint p = u_row_ptr[bi]; p < u_row_ptr[bi + 1]; ++p) {
            for (uint j = 0; j < bs; ++j) u_values[(unsigned long long)p * bb + j * bs + i] = ZERO;
        }
        for (uint j = 0; j < bs; ++j) d_values[(unsigned long long)bi * bb + j * bs + i] = ZERO;
        for (uint k = a_row_ptr[r]; k < a_row_ptr[r + 1]; ++k) {
            const uint c = a_col_idx[k];
            const uint bj = c / bs;
            const uint j = c - bj * bs;
            const SCALAR v = a_values[k];
            if (bj < bi) {
                const uint p = bilu_find(l_col_idx, l_row_ptr[bi], l_row_ptr[bi + 1], bj);
                if (p != PK_NOT_FOUND) l_values[(unsigned long long)p * bb + j * bs + i] += v;
            } else if (bj > bi) {
                const uint p = bilu_find(u_col_idx, u_row_ptr[bi], u_row_ptr[bi + 1], bj);
                if (p != PK_NOT_FOUND) u_values[(unsigned long long)p * bb + j * bs + i] += v;
            } else {
                d_values[(unsigned long long)bi * bb + j * bs + i] += v;
            }
        }
    }
}

/* inv = m^-1 (BS x BS, column-major) by Gauss-Jordan with partial pivoting, the host's
 * `block_dense::invert`: returns 0 (and leaves inv undefined) when m holds a NaN or infinity
 * or a pivot is at most BS * eps * max|m_ij|. m is overwritten. */
template <uint BS>
__device__ __forceinline__ uint bilu_invert(SCALAR *m, SCALAR *inv) {
    const SCALAR eps = sizeof(SCALAR) == 8 ? (SCALAR)2.220446049250313e-16f : (SCALAR)1.1920928955078125e-7f;
    SCALAR scale = ZERO;
    for (uint e = 0; e < BS * BS; ++e) {
        if (!isfinite(m[e])) return 0;
        scale = fmax(scale, fabs(m[e]));
        inv[e] = ZERO;
    }
    const SCALAR tiny = scale * (SCALAR)BS * eps;
    for (uint i = 0; i < BS; ++i) inv[i * BS + i] = (SCALAR)1;
    for (uint col = 0; col < BS; ++col) {
        uint p = col;
        for (uint r = col + 1; r < BS; ++r) {
            if (fabs(m[col * BS + r]) > fabs(m[col * BS + p])) p = r;
        }
        const SCALAR pivot = m[col * BS + p];
        if (pivot == ZERO || fabs(pivot) <= tiny) return 0;
        if (p != col) {
            for (uint j = 0; j < BS; ++j) {
                SCALAR t = m[j * BS + p];
                m[j * BS + p] = m[j * BS + col];
                m[j * BS + col] = t;
                t = inv[j * BS + p];
                inv[j * BS + p] = inv[j * BS + col];
                inv[j * BS + col] = t;
            }
        }
        const SCALAR pinv = (SCALAR)1 / pivot;
        for (uint j = 0; j < BS; ++j) {
            m[j * BS + col] *= pinv;
            inv[j * BS + col] *= pinv;
        }
        for (uint r = 0; r < BS; ++r) {
            if (r == col) continue;
            const SCALAR f = m[col * BS + r];
            if (f == ZERO) continue;
            for (uint j = 0; j < BS; ++j) {
                const SCALAR mc = m[j * BS + col];
                const SCALAR ic = inv[j * BS + col];
                m[j * BS + r] -= f * mc;
                inv[j * BS + r] -= f * ic;
            }
        }
    }
    return 1;
}

/* c -= a b on a block in global memory (the host's `mul_sub` order: j, k, i). */
template <uint BS>
__device__ __forceinline__ void bilu_mul_sub(SCALAR *c, const SCALAR *a, const SCALAR *b) {
    for (uint j = 0; j < BS; ++j) {
        for (uint k = 0; k < BS; ++k) {
            const SCALAR bkj = b[j * BS + k];
            for (uint i = 0; i < BS; ++i) c[j * BS + i] -= a[k * BS + i] * bkj;
        }
    }
}

/* One block row of one sweep (see kernels-cl/bilu.cl for the equations). */
template <uint BS>
__device__ void bilu0_row(const uint bi, const uint *l_row_ptr, const uint *l_col_idx, const uint *u_row_ptr,
                          const uint *u_col_idx, const SCALAR *a_l, const SCALAR *a_u, const SCALAR *a_d,
                          const SCALAR *l_old, const SCALAR *u_old, const SCALAR *inv_old, const uint first,
                          const uint report, SCALAR *l_new, SCALAR *u_new, SCALAR *inv_new, uint *bad_row) {
    const uint bb = BS * BS;
    const uint l0 = l_row_ptr[bi], l1 = l_row_ptr[bi + 1];
    const uint u0 = u_row_ptr[bi], u1 = u_row_ptr[bi + 1];
    SCALAR d[BS * BS];
    for (uint e = 0; e < bb; ++e) d[e] = a_d[(unsigned long long)bi * bb + e];
    for (unsigned long long e = (unsigned long long)l0 * bb; e < (unsigned long long)l1 * bb; ++e) l_new[e] = a_l[e];
    for (unsigned long long e = (unsigned long long)u0 * bb; e < (unsigned long long)u1 * bb; ++e) u_new[e] = a_u[e];
    if (!first) {
        for (uint q = l0; q < l1; ++q) {
            const uint bk = l_col_idx[q];
            SCALAR lik[BS * BS];
            for (uint e = 0; e < bb; ++e) lik[e] = l_old[(unsigned long long)q * bb + e];
            uint pl = q + 1, pu = u0;
            for (uint b = u_row_ptr[bk]; b < u_row_ptr[bk + 1]; ++b) {
                const uint bj = u_col_idx[b];
                const SCALAR *ukj = u_old + (unsigned long long)b * bb;
                if (bj < bi) {
                    while (pl < l1 && l_col_idx[pl] < bj) ++pl;
                    if (pl < l1 && l_col_idx[pl] == bj) bilu_mul_sub<BS>(l_new + (unsigned long long)pl * bb, lik, ukj);
                } else if (bj == bi) {
                    bilu_mul_sub<BS>(d, lik, ukj);
                } else {
                    while (pu < u1 && u_col_idx[pu] < bj) ++pu;
                    if (pu < u1 && u_col_idx[pu] == bj) bilu_mul_sub<BS>(u_new + (unsigned long long)pu * bb, lik, ukj);
                }
            }
        }
    }
    uint bad = 0;
    SCALAR inv[BS * BS];
    if (bilu_invert<BS>(d, inv)) {
        for (uint e = 0; e < bb; ++e) inv_new[(unsigned long long)bi * bb + e] = inv[e];
    } else {
        bad = 1;
        for (uint e = 0; e < bb; ++e) inv_new[(unsigned long long)bi * bb + e] = ZERO;
    }
    for (uint q = l0; q < l1; ++q) {
        const uint bj = l_col_idx[q];
        SCALAR *lij = l_new + (unsigned long long)q * bb;
        SCALAR t[BS * BS];
        for (uint e = 0; e < bb; ++e) t[e] = lij[e];
        SCALAR invj[BS * BS];
        if (first) {
            SCALAR m[BS * BS];
            for (uint e = 0; e < bb; ++e) m[e] = a_d[(unsigned long long)bj * bb + e];
            if (!bilu_invert<BS>(m, invj)) {
                for (uint e = 0; e < bb; ++e) invj[e] = ZERO;
            }
        } else {
            for (uint e = 0; e < bb; ++e) invj[e] = inv_old[(unsigned long long)bj * bb + e];
        }
        for (uint e = 0; e < bb; ++e) {
            lij[e] = ZERO;
        }
        /* L_IJ = t U_JJ^-1 (the host's `mul` order: j, k, i from zero). */
        for (uint j = 0; j < BS; ++j) {
            for (uint k = 0; k < BS; ++k) {
                const SCALAR bkj = invj[j * BS + k];
                for (uint i = 0; i < BS; ++i) lij[j * BS + i] += t[k * BS + i] * bkj;
            }
        }
    }
    if (report) {
        for (unsigned long long e = (unsigned long long)l0 * bb; e < (unsigned long long)l1 * bb; ++e) {
            if (!isfinite(l_new[e])) bad = 1;
        }
        for (unsigned long long e = (unsigned long long)u0 * bb; e < (unsigned long long)u1 * bb; ++e) {
            if (!isfinite(u_new[e])) bad = 1;
        }
        if (bad) atomicMin(bad_row, bi);
    }
}

extern "C" __launch_bounds__(WG) __global__ void bilu0_sweep(
    const uint bs, const uint n_block_rows, const uint *l_row_ptr, const uint *l_col_idx, const uint *u_row_ptr,
    const uint *u_col_idx, const SCALAR *a_l, const SCALAR *a_u, const SCALAR *a_d, const SCALAR *l_old,
    const SCALAR *u_old, const SCALAR *inv_old, const uint first, const uint report, SCALAR *l_new, SCALAR *u_new,
    SCALAR *inv_new, uint *bad_row) {
    PDL_WAIT();
    for (uint bi = GRID_START; bi < n_block_rows; bi += GRID_STRIDE) {
#define PK_SWEEP_CASE(BS)                                                                                       \
    case BS:                                                                                                    \
        bilu0_row<BS>(bi, l_row_ptr, l_col_idx, u_row_ptr, u_col_idx, a_l, a_u, a_d, l_old, u_old, inv_old, first, \
                      report, l_new, u_new, inv_new, bad_row);                                                  \
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
