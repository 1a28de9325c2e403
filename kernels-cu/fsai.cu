/*
 * fsai.cu -- static FSAI setup (PrecondOps). Mirrors kernels-cl/fsai.cl (the systems, the
 * argument list and the arithmetic order are documented there); conventions in reduce.cu.
 *
 *   fsai_rows (uint row_begin, uint rows, const uint* a_row_ptr, const uint* a_col_idx,
 *              const SCALAR* a_values, const uint* g_row_ptr, const uint* g_col_idx,
 *              const uint* gt_pos, const ulong* scratch_off, SCALAR* scratch, SCALAR* g_values,
 *              SCALAR* gt_values)
 * Any grid (grid-stride loop), one thread per row of G.
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

extern "C" __launch_bounds__(WG) __global__ void fsai_rows(const uint row_begin, const uint rows, const uint *a_row_ptr,
                                                           const uint *a_col_idx, const SCALAR *a_values,
                                                           const uint *g_row_ptr, const uint *g_col_idx,
                                                           const uint *gt_pos, const ulong *scratch_off,
                                                           SCALAR *scratch, SCALAR *g_values, SCALAR *gt_values) {
    for (uint t = GRID_START; t < rows; t += GRID_STRIDE) {
        const uint i = row_begin + t;
        const uint gb = g_row_ptr[i];
        const uint m = g_row_ptr[i + 1] - gb;
        const uint *p = g_col_idx + gb;
        SCALAR *M = scratch + scratch_off[i];
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
            const SCALAR nan_value = (SCALAR)nan("");
            for (uint a = 0; a < m; ++a) {
                g_values[gb + a] = nan_value;
                gt_values[gt_pos[gb + a]] = nan_value;
            }
            continue;
        }
        const uint l = m - 1;
        SCALAR *y = g_values + gb;
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
