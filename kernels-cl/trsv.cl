/*
 * trsv.cl -- block triangular solves and block-diagonal scaling (PrecondOps), for the BSR
 * preconditioners: point-block Jacobi and BILU(0) with exact (level-scheduled) or inexact
 * (block-Jacobi sweep) triangular solves, [Ma21a] Section 3.3, equations (10)-(11) and
 * Algorithms 6-7. Conventions (SCALAR, WG, uint, FOR_EACH): see reduce.cl.
 *
 * Blocks are bs x bs, column-major (entry (i, j) of block k at values[k*bs*bs + j*bs + i]),
 * 1 <= bs <= PK_MAX_BLOCK. A triangular factor is stored as its strict part in block CSR
 * (row_ptr, col_idx, values) plus, unless `unit_diag` is set, the inverted diagonal blocks
 * inv_diag (bs*bs per block row). When an optional pointer is not used (`unit_diag` set, or
 * `from_zero` set) the host passes any valid buffer in its place; it is never read.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   block_diag_scale (uint bs, uint n_block_rows, const SCALAR* inv_blocks, const SCALAR* x,
 *                     SCALAR* y)
 *       y_I = D_I^-1 x_I for every block row I (one work-item per scalar row).
 *   bsr_trsv_sweep   (uint bs, uint n_block_rows, const uint* row_ptr, const uint* col_idx,
 *                     const SCALAR* values, const SCALAR* inv_diag, uint unit_diag,
 *                     const SCALAR* b, const SCALAR* x_old, uint from_zero, SCALAR* x_new)
 *       one Jacobi sweep x_new_I = D_I^-1 (b_I - sum_{J != I} T_IJ x_old_J)  (eq. 10/11);
 *       from_zero: x_old = 0, i.e. x_new_I = D_I^-1 b_I. D_I = I when unit_diag.
 *   bsr_trsv_level   (uint bs, const uint* level_rows, uint level_begin, uint level_len,
 *                     const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                     const SCALAR* inv_diag, uint unit_diag, const SCALAR* b, SCALAR* x)
 *       the block rows I = level_rows[level_begin .. level_begin + level_len] of one level
 *       of the exact solve: x_I = D_I^-1 (b_I - sum_{J != I} T_IJ x_J), in place (rows of a
 *       level only read rows of earlier levels).
 * Arithmetic order (the host backend uses the same): t_i = b_i, then t_i -= T_IJ(i, j) x_J(j)
 * over the stored blocks in order and j = 0..bs-1; then x_i = sum_j D^-1(i, j) t_j, j ascending.
 * Work-items per block row: one (blocks up to 8 x 8 fit in registers).
 */

#define PK_MAX_BLOCK 8

/* x_I = D_I^-1 (b_I - sum_J T_IJ x_J) for one block row of BS x BS blocks; x_in may alias x_out.
 * One function per block size (PK_BLOCK_ROW_SOLVE(BS) below) so that the row's sums stay in
 * registers (with a run-time size they live in private memory). */
#define PK_BLOCK_ROW_SOLVE(BS)                                                                        \
    inline void block_row_solve_##BS(const uint br, __global const uint *row_ptr,                     \
                                     __global const uint *col_idx, __global const SCALAR *values,      \
                                     __global const SCALAR *inv_diag, const uint unit_diag,            \
                                     __global const SCALAR *b, __global const SCALAR *x_in,            \
                                     const uint from_zero, __global SCALAR *x_out) {                   \
        SCALAR t[BS];                                                                                 \
        const uint bb = BS * BS;                                                                      \
        for (uint i = 0; i < BS; ++i) {                                                               \
            t[i] = b[br * BS + i];                                                                    \
        }                                                                                             \
        if (!from_zero) {                                                                             \
            const uint end = row_ptr[br + 1];                                                         \
            for (uint k = row_ptr[br]; k < end; ++k) {                                                \
                const uint c0 = col_idx[k] * BS;                                                      \
                __global const SCALAR *blk = values + (ulong)k * bb;                                  \
                for (uint j = 0; j < BS; ++j) {                                                       \
                    const SCALAR xj = x_in[c0 + j];                                                   \
                    for (uint i = 0; i < BS; ++i) {                                                   \
                        t[i] -= blk[j * BS + i] * xj;                                                 \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        if (unit_diag) {                                                                              \
            for (uint i = 0; i < BS; ++i) {                                                           \
                x_out[br * BS + i] = t[i];                                                            \
            }                                                                                         \
        } else {                                                                                      \
            __global const SCALAR *d = inv_diag + (ulong)br * bb;                                     \
            for (uint i = 0; i < BS; ++i) {                                                           \
                SCALAR acc = ZERO;                                                                    \
                for (uint j = 0; j < BS; ++j) {                                                       \
                    acc += d[j * BS + i] * t[j];                                                      \
                }                                                                                     \
                x_out[br * BS + i] = acc;                                                             \
            }                                                                                         \
        }                                                                                             \
    }
PK_BLOCK_ROW_SOLVE(1)
PK_BLOCK_ROW_SOLVE(2)
PK_BLOCK_ROW_SOLVE(3)
PK_BLOCK_ROW_SOLVE(4)
PK_BLOCK_ROW_SOLVE(5)
PK_BLOCK_ROW_SOLVE(6)
PK_BLOCK_ROW_SOLVE(7)
PK_BLOCK_ROW_SOLVE(8)

/* block_row_solve_BS for the run-time block size bs (1..PK_MAX_BLOCK, checked by the host). */
inline void block_row_solve(const uint bs, const uint br, __global const uint *row_ptr,
                            __global const uint *col_idx, __global const SCALAR *values,
                            __global const SCALAR *inv_diag, const uint unit_diag,
                            __global const SCALAR *b, __global const SCALAR *x_in, const uint from_zero,
                            __global SCALAR *x_out) {
#define PK_ROW_CASE(BS)                                                                                \
    case BS:                                                                                           \
        block_row_solve_##BS(br, row_ptr, col_idx, values, inv_diag, unit_diag, b, x_in, from_zero, x_out); \
        break;
    switch (bs) {
        PK_ROW_CASE(1)
        PK_ROW_CASE(2)
        PK_ROW_CASE(3)
        PK_ROW_CASE(4)
        PK_ROW_CASE(5)
        PK_ROW_CASE(6)
        PK_ROW_CASE(7)
        PK_ROW_CASE(8)
        default:
            break;
    }
#undef PK_ROW_CASE
}

pk_kernel void block_diag_scale(const uint bs, const uint n_block_rows, PK_GLOBAL(const SCALAR, inv_blocks),
                                PK_GLOBAL(const SCALAR, x), PK_GLOBAL(SCALAR, y)) {
    PK_BIND(const SCALAR, inv_blocks);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    const uint n = n_block_rows * bs;
    FOR_EACH(r, n) {
        const uint br = r / bs;
        const uint i = r - br * bs;
        __global const SCALAR *d = inv_blocks + (ulong)br * bs * bs;
        SCALAR acc = ZERO;
        for (uint j = 0; j < bs; ++j) {
            acc += d[j * bs + i] * x[br * bs + j];
        }
        y[r] = acc;
    }
}

pk_kernel void bsr_trsv_sweep(const uint bs, const uint n_block_rows, PK_GLOBAL(const uint, row_ptr),
                              PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                              PK_GLOBAL(const SCALAR, inv_diag), const uint unit_diag, PK_GLOBAL(const SCALAR, b),
                              PK_GLOBAL(const SCALAR, x_old), const uint from_zero, PK_GLOBAL(SCALAR, x_new)) {
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, inv_diag);
    PK_BIND(const SCALAR, b);
    PK_BIND(const SCALAR, x_old);
    PK_BIND(SCALAR, x_new);
    FOR_EACH(br, n_block_rows) {
        block_row_solve(bs, br, row_ptr, col_idx, values, inv_diag, unit_diag, b, x_old, from_zero, x_new);
    }
}

pk_kernel void bsr_trsv_level(const uint bs, PK_GLOBAL(const uint, level_rows), const uint level_begin,
                              const uint level_len, PK_GLOBAL(const uint, row_ptr), PK_GLOBAL(const uint, col_idx),
                              PK_GLOBAL(const SCALAR, values), PK_GLOBAL(const SCALAR, inv_diag), const uint unit_diag,
                              PK_GLOBAL(const SCALAR, b), PK_GLOBAL(SCALAR, x)) {
    PK_BIND(const uint, level_rows);
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, inv_diag);
    PK_BIND(const SCALAR, b);
    PK_BIND(SCALAR, x);
    FOR_EACH(p, level_len) {
        const uint br = level_rows[level_begin + p];
        block_row_solve(bs, br, row_ptr, col_idx, values, inv_diag, unit_diag, b, x, 0, x);
    }
}
