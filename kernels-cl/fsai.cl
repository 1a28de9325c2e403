/*
 * fsai.cl -- static factored sparse approximate inverse (FSAI) setup (PrecondOps), seed 004
 * Section 2 (the static pattern; the adaptive growth is not here). Conventions (SCALAR, WG,
 * uint/ulong, FOR_EACH): see reduce.cl.
 *
 * Row i of the lower triangular G (G^T G ~ A^-1, A symmetric positive definite) lives on the
 * pattern P_i = g_col_idx[g_row_ptr[i] .. g_row_ptr[i+1]] (ascending, i last). It solves the
 * small dense SPD system A[P_i, P_i] y = e_last by Cholesky and sets G(i, P_i) = y / sqrt(y_last),
 * so that diag(G A G^T) = 1. The dense matrix is gathered into `scratch` (m x m, row-major, at
 * scratch_off[i], relative to the batch's scratch) by binary search of A's columns in P_i. The
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
        __global SCALAR *M = scratch + scratch_off[i];
        for (uint e = 0; e < m * m; ++e) {
            M[e] = ZERO;
        }
        for (uint a = 0; a < m; ++a) {
            const uint r = p[a];
            for (uint k = a_row_ptr[r]; k < a_row_ptr[r + 1]; ++k) {
                const int b = fsai_find(p, m, a_col_idx[k]);
                if (b >= 0) M[a * m + (uint)b] = a_values[k];
            }
        }
        /* Cholesky, lower factor in place (row-major: L(r, j) at M[r*m + j]). */
        int ok = 1;
        for (uint j = 0; j < m && ok; ++j) {
            SCALAR d = M[j * m + j];
            for (uint k = 0; k < j; ++k) d -= M[j * m + k] * M[j * m + k];
            if (!(d > ZERO) || isinf(d)) {
                ok = 0;
                break;
            }
            const SCALAR ljj = sqrt(d);
            M[j * m + j] = ljj;
            for (uint r = j + 1; r < m; ++r) {
                SCALAR v = M[r * m + j];
                for (uint k = 0; k < j; ++k) v -= M[r * m + k] * M[j * m + k];
                M[r * m + j] = v / ljj;
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
        y[l] = ((SCALAR)1 / M[l * m + l]) / M[l * m + l];
        for (uint r = l; r-- > 0;) {
            SCALAR v = ZERO;
            for (uint k = r + 1; k < m; ++k) v -= M[k * m + r] * y[k];
            y[r] = v / M[r * m + r];
        }
        const SCALAR scale = (SCALAR)1 / sqrt(y[l]);
        for (uint a = 0; a < m; ++a) {
            const SCALAR g = y[a] * scale;
            y[a] = g;
            gt_values[gt_pos[gb + a]] = g;
        }
    }
}
