/*
 * ip_assemble.cu -- the Incomplete Poisson matrix assembled on the device ([Ament10] eq. (15)):
 * M^-1 = K K^T cut to the pattern of A, K = I - L D^-1, from A in CSR (columns ascending in
 * every row), and the check that A is in IP's domain. Mirrors kernels-cl/ip_assemble.cl (argument
 * meanings and arithmetic order documented there); conventions in reduce.cu. Both kernels
 * use partials.groups() blocks.
 *
 *   ip_domain_check (uint n, const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                    SCALAR* partials, uint slot)
 *   ip_assemble     (uint n, const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                    SCALAR* m_values, SCALAR* partials, uint slot, uint scaled)
 */

/* The position of column `key` in the ascending col_idx[lo..hi), or hi. */
__device__ __forceinline__ uint ipa_find(const uint *col_idx, uint lo, uint hi, const uint key) {
    const uint end = hi;
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint c = col_idx[mid];
        if (c == key) return mid;
        if (c < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return end;
}

/* The first position of row x (from p, ascending columns) whose column is at least x. */
__device__ __forceinline__ uint ipa_lower_end(const uint *col_idx, uint p, const uint end, const uint x) {
    while (p < end && col_idx[p] < x) p++;
    return p;
}

extern "C" __launch_bounds__(WG) __global__ void ip_domain_check(const uint n, const uint *__restrict__ row_ptr,
                                                                 const uint *__restrict__ col_idx,
                                                                 const SCALAR *__restrict__ values, SCALAR *partials,
                                                                 const uint slot) {
    PDL_WAIT();
    const SCALAR tol = (SCALAR)64 * (sizeof(SCALAR) == 8 ? (SCALAR)2.220446049250313e-16f : (SCALAR)1.1920928955078125e-7f);
    SCALAR acc = ZERO;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        uint bad = 0, has_diag = 0;
        const uint end = row_ptr[i + 1];
        for (uint p = row_ptr[i]; p < end; ++p) {
            const uint j = col_idx[p];
            const SCALAR v = values[p];
            if (!isfinite(v)) {
                bad = 1;
            } else if (j == i) {
                has_diag = 1;
                if (!(v > ZERO)) bad = 1;
            } else if (v > ZERO) {
                bad = 1;
            } else {
                const uint q = ipa_find(col_idx, row_ptr[j], row_ptr[j + 1], i);
                if (q == row_ptr[j + 1]) {
                    bad = 1;
                } else {
                    const SCALAR w = values[q];
                    if (!(fabs(w - v) <= tol * fmax(fabs(v), fabs(w)))) bad = 1;
                }
            }
        }
        if (bad || !has_diag) acc += (SCALAR)1;
    }
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void ip_assemble(const uint n, const uint *__restrict__ row_ptr,
                                                             const uint *__restrict__ col_idx,
                                                             const SCALAR *__restrict__ values,
                                                             SCALAR *__restrict__ m_values, SCALAR *partials,
                                                             const uint slot, const uint scaled) {
    PDL_WAIT();
    SCALAR acc_bad = ZERO;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const uint i0 = row_ptr[i], i1 = row_ptr[i + 1];
        const uint ie = ipa_lower_end(col_idx, i0, i1, i);
        uint bad = 0;
        for (uint e = i0; e < i1; ++e) {
            const uint j = col_idx[e];
            const uint j0 = row_ptr[j], j1 = row_ptr[j + 1];
            const uint je = ipa_lower_end(col_idx, j0, j1, j);
            /* Merge K_i = (row i below i, then (i, 1)) with K_j; position ie / je is the 1. */
            uint p = i0, q = j0;
            SCALAR acc = ZERO;
            while (p <= ie && q <= je) {
                const uint ck = p < ie ? col_idx[p] : i;
                const uint cl = q < je ? col_idx[q] : j;
                if (ck < cl) {
                    p++;
                } else if (ck > cl) {
                    q++;
                } else if (scaled) {
                    /* C_ik = -a_ik / a_ii, C_jk = -a_jk / a_jj, each product over a_kk (positions
                     * ie and je hold the diagonals: A passed ip_domain_check). */
                    const SCALAR x = p < ie ? -values[p] / values[ie] : (SCALAR)1;
                    const SCALAR y = q < je ? -values[q] / values[je] : (SCALAR)1;
                    const SCALAR d = p == ie   ? values[ie]
                                     : q == je ? values[je]
                                               : values[ipa_find(col_idx, row_ptr[ck], row_ptr[ck + 1], ck)];
                    acc += x * y / d;
                    p++;
                    q++;
                } else {
                    SCALAR x = (SCALAR)1, y = (SCALAR)1;
                    if (p < ie || q < je) {
                        /* k = ck < max(i, j): its diagonal. */
                        const SCALAR d = values[ipa_find(col_idx, row_ptr[ck], row_ptr[ck + 1], ck)];
                        if (p < ie) x = -values[p] / d;
                        if (q < je) y = -values[q] / d;
                    }
                    acc += x * y;
                    p++;
                    q++;
                }
            }
            m_values[e] = acc;
            if (!isfinite(acc)) bad = 1;
        }
        if (bad) acc_bad += (SCALAR)1;
    }
    write_partial(partials, slot, block_sum1(acc_bad));
}
