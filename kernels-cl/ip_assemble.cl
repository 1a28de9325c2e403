/*
 * ip_assemble.cl -- the Incomplete Poisson matrix assembled on the device ([Ament10] eq. (15)):
 * M^-1 = K K^T cut to the pattern of A, K = I - L D^-1, from A in CSR (columns ascending in
 * every row), and the check that A is in IP's domain. Conventions (SCALAR, WG, uint, FOR_EACH,
 * PK_GLOBAL, partials): see reduce.cl. Both kernels use partials.groups() groups.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   ip_domain_check (uint n, const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                    SCALAR* partials, uint slot)
 *       partial count of the rows i outside IP's domain into slot: no diagonal entry, a
 *       diagonal that is not positive and finite, an off-diagonal entry that is positive or not
 *       finite, or an off-diagonal (i, j) whose transpose (j, i) is missing or differs by more
 *       than 64 ulps of the larger (the host's `domain::symmetric_violation`). 0 exactly when
 *       A passes.
 *   ip_assemble     (uint n, const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                    SCALAR* m_values, SCALAR* partials, uint slot, uint scaled)
 *       m_values[p] for every entry p = (i, j) of A: sum over the common k of K_ik K_jk in
 *       ascending k, with K_xk = -a_xk / a_kk for the stored k < x and K_xx = 1; with scaled
 *       != 0 the sum of C_ik C_jk / a_kk with C_xk = -a_xk / a_xx and C_xx = 1 (the IP of
 *       D^-1/2 A D^-1/2 scaled back). Both as the host's `assemble::ip_matrix`, the same
 *       operations in the same order: bit for bit; partial count of the rows with an entry
 *       that is not finite into slot. A must pass ip_domain_check (every row holds its
 *       diagonal).
 */

/* The position of column `key` in the ascending col_idx[lo..hi), or hi. */
inline uint ipa_find(__global const uint *col_idx, uint lo, uint hi, const uint key) {
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
inline uint ipa_lower_end(__global const uint *col_idx, uint p, const uint end, const uint x) {
    while (p < end && col_idx[p] < x) p++;
    return p;
}

pk_kernel void ip_domain_check(const uint n, PK_GLOBAL(const uint, row_ptr), PK_GLOBAL(const uint, col_idx),
                               PK_GLOBAL(const SCALAR, values), PK_GLOBAL(SCALAR, partials), const uint slot) {
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    const SCALAR tol = (SCALAR)64 * (sizeof(SCALAR) == 8 ? (SCALAR)2.220446049250313e-16f : (SCALAR)1.1920928955078125e-7f);
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
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
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}

pk_kernel void ip_assemble(const uint n, PK_GLOBAL(const uint, row_ptr), PK_GLOBAL(const uint, col_idx),
                           PK_GLOBAL(const SCALAR, values), PK_GLOBAL(SCALAR, m_values), PK_GLOBAL(SCALAR, partials),
                           const uint slot, const uint scaled) {
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(SCALAR, m_values);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc_bad = ZERO;
    FOR_EACH(i, n) {
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
    acc_bad = group_sum(scratch, acc_bad);
    write_partial(partials, slot, acc_bad);
}
