/*
 * isai.cl -- block incomplete sparse approximate inverse (block-ISAI) setup, [Ma21b]
 * Algorithm 1 steps 2-4: one small block triangular system per block column of the inverse.
 * Conventions (SCALAR, WG, uint, FOR_EACH): see reduce.cl; block layout and the triangular
 * factor's arrays (strict part in block CSR, inverted diagonal or unit diagonal): see trsv.cl.
 *
 * Block column j of N ~ T^-1 has the row set P_j (the pattern of |T|^k, stored as a block CSC:
 * rows row_idx[col_ptr[j] .. col_ptr[j+1]], ascending, j among them). It solves
 *   T[P_j, P_j] N[P_j, j] = E_j     (E_j: the identity block in row j, zero elsewhere),
 * forward over P_j for a lower factor (j is the first row), backward for an upper one (j is
 * the last). Row r of the gathered system only keeps the blocks T(r, p) with p in P_j (found
 * by binary search in the sorted row set), so the system is never stored ([Ma21b] Section
 * 3.2, second strategy). Block (r, j) of N is written to out[dest[e] * bs * bs ...], e its
 * position in the CSC, i.e. straight into the block CSR of N used by the BSpMV.
 *
 * Kernel argument list (CUDA mirrors it in this order):
 *   isai_solve (uint bs, uint n_block_cols, const uint* row_ptr, const uint* col_idx,
 *               const SCALAR* values, const SCALAR* inv_diag, uint unit_diag, uint upper,
 *               const uint* col_ptr, const uint* row_idx, const uint* dest, SCALAR* out)
 * One work-item per scalar column (j, c), c = 0..bs-1: the bs columns of E_j are independent
 * right-hand sides; a work-item only reads blocks of N it wrote itself.
 * Arithmetic order (the host backend uses the same): for each row r of P_j in solve order,
 * t = e_c if r = j else 0; t -= T(r, p) x_p over the stored blocks of row r in order, j-index
 * ascending inside a block; x_r = t (unit diagonal) or x_r(i) = sum_j D_r^-1(i, j) t_j.
 */

/* PK_MAX_BLOCK: from trsv.cl (built before this file). */

/* Position of p in the ascending rows[lo..hi), or -1. */
inline int isai_find(__global const uint *rows, uint lo, uint hi, const uint p) {
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        const uint v = rows[mid];
        if (v == p) return (int)mid;
        if (v < p) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

pk_kernel void isai_solve(const uint bs, const uint n_block_cols, PK_GLOBAL(const uint, row_ptr),
                          PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                          PK_GLOBAL(const SCALAR, inv_diag), const uint unit_diag, const uint upper,
                          PK_GLOBAL(const uint, col_ptr), PK_GLOBAL(const uint, row_idx), PK_GLOBAL(const uint, dest),
                          PK_GLOBAL(SCALAR, out)) {
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, inv_diag);
    PK_BIND(const uint, col_ptr);
    PK_BIND(const uint, row_idx);
    PK_BIND(const uint, dest);
    PK_BIND(SCALAR, out);
    const uint bb = bs * bs;
    FOR_EACH(g, n_block_cols * bs) {
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
            /* Solved rows: before t_pos (lower) or after it (upper). */
            const uint lo = upper ? t_pos + 1 : cb;
            const uint hi = upper ? ce : t_pos;
            const uint end = row_ptr[r + 1];
            for (uint k = row_ptr[r]; k < end; ++k) {
                const int q = isai_find(row_idx, lo, hi, col_idx[k]);
                if (q < 0) continue;
                __global const SCALAR *blk = values + (ulong)k * bb;
                __global const SCALAR *xp = out + (ulong)dest[q] * bb + c * bs;
                for (uint jj = 0; jj < bs; ++jj) {
                    const SCALAR xj = xp[jj];
                    for (uint i = 0; i < bs; ++i) {
                        t[i] -= blk[jj * bs + i] * xj;
                    }
                }
            }
            __global SCALAR *xr = out + (ulong)dest[t_pos] * bb + c * bs;
            if (unit_diag) {
                for (uint i = 0; i < bs; ++i) {
                    xr[i] = t[i];
                }
            } else {
                __global const SCALAR *d = inv_diag + (ulong)r * bb;
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
