/*
 * isai.cu -- block-ISAI setup (PrecondOps). Mirrors kernels-cl/isai.cl (the systems, the
 * argument list and the arithmetic order are documented there); conventions in reduce.cu.
 *
 *   isai_solve (uint bs, uint n_block_cols, const uint* row_ptr, const uint* col_idx,
 *               const SCALAR* values, const SCALAR* inv_diag, uint unit_diag, uint upper,
 *               const uint* col_ptr, const uint* row_idx, const uint* dest, SCALAR* out)
 * Any grid (grid-stride loop), one thread per scalar column (j, c) of the inverse.
 */

/* PK_MAX_BLOCK: from trsv.cu (built before this file). */

/* Position of p in the ascending rows[lo..hi), or -1. */
__device__ __forceinline__ int isai_find(const uint *rows, uint lo, uint hi, const uint p) {
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint v = rows[mid];
        if (v == p) return (int)mid;
        if (v < p) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

extern "C" __launch_bounds__(WG) __global__ void isai_solve(const uint bs, const uint n_block_cols, const uint *row_ptr,
                                                            const uint *col_idx, const SCALAR *values,
                                                            const SCALAR *inv_diag, const uint unit_diag,
                                                            const uint upper, const uint *col_ptr,
                                                            const uint *row_idx, const uint *dest, SCALAR *out) {
    PDL_WAIT();
    const uint bb = bs * bs;
    const uint total = n_block_cols * bs;
    for (uint g = GRID_START; g < total; g += GRID_STRIDE) {
        const uint j = g / bs;
        const uint c = g - j * bs;
        const uint cb = col_ptr[j];
        const uint ce = col_ptr[j + 1];
        const uint m = ce - cb;
        for (uint step = 0; step < m; ++step) {
            const uint t_pos = upper ? ce - 1 - step : cb + step;
            const uint r = row_idx[t_pos];
            SCALAR t[PK_MAX_BLOCK];
            for (uint i = 0; i < bs; ++i) {
                t[i] = (r == j && i == c) ? (SCALAR)1 : ZERO;
            }
            const uint lo = upper ? t_pos + 1 : cb;
            const uint hi = upper ? ce : t_pos;
            const uint end = row_ptr[r + 1];
            for (uint k = row_ptr[r]; k < end; ++k) {
                const int q = isai_find(row_idx, lo, hi, col_idx[k]);
                if (q < 0) continue;
                const SCALAR *blk = values + (unsigned long long)k * bb;
                const SCALAR *xp = out + (unsigned long long)dest[q] * bb + c * bs;
                for (uint jj = 0; jj < bs; ++jj) {
                    const SCALAR xj = xp[jj];
                    for (uint i = 0; i < bs; ++i) {
                        t[i] -= blk[jj * bs + i] * xj;
                    }
                }
            }
            SCALAR *xr = out + (unsigned long long)dest[t_pos] * bb + c * bs;
            if (unit_diag) {
                for (uint i = 0; i < bs; ++i) {
                    xr[i] = t[i];
                }
            } else {
                const SCALAR *d = inv_diag + (unsigned long long)r * bb;
                for (uint i = 0; i < bs; ++i) {
                    SCALAR acc = ZERO;
                    for (uint jj = 0; jj < bs; ++jj) {
                        acc += d[jj * bs + i] * t[jj];
                    }
                    xr[i] = acc;
                }
            }
        }
    }
}
