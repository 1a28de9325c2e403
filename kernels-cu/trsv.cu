/*
 * trsv.cu -- block triangular solves and block-diagonal scaling (PrecondOps). Mirrors
 * kernels-cl/trsv.cl (argument lists, arithmetic order and the meaning of every argument are
 * documented there); conventions in reduce.cu.
 *
 *   block_diag_scale (uint bs, uint n_block_rows, const SCALAR* inv_blocks, const SCALAR* x,
 *                     SCALAR* y)
 *   bsr_trsv_sweep   (uint bs, uint n_block_rows, const uint* row_ptr, const uint* col_idx,
 *                     const SCALAR* values, const SCALAR* inv_diag, uint unit_diag,
 *                     const SCALAR* b, const SCALAR* x_old, uint from_zero, SCALAR* x_new)
 *   bsr_trsv_level   (uint bs, const uint* level_rows, uint level_begin, uint level_len,
 *                     const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                     const SCALAR* inv_diag, uint unit_diag, const SCALAR* b, SCALAR* x)
 * Any grid (grid-stride loops); one thread per scalar row (block_diag_scale) or block row.
 */

#define PK_MAX_BLOCK 8

/* x_I = D_I^-1 (b_I - sum_J T_IJ x_J) for one block row of BS x BS blocks; x_in may alias x_out.
 * The block size is a template parameter so that the row's sums stay in registers (with a
 * run-time size they live in local memory). */
template <uint BS>
__device__ __forceinline__ void block_row_solve_bs(const uint br, const uint *row_ptr, const uint *col_idx,
                                                   const SCALAR *values, const SCALAR *inv_diag, const uint unit_diag,
                                                   const SCALAR *b, const SCALAR *x_in, const uint from_zero,
                                                   SCALAR *x_out) {
    SCALAR t[BS];
    const uint bb = BS * BS;
#pragma unroll
    for (uint i = 0; i < BS; ++i) {
        t[i] = b[br * BS + i];
    }
    if (!from_zero) {
        const uint end = row_ptr[br + 1];
        for (uint k = row_ptr[br]; k < end; ++k) {
            const uint c0 = col_idx[k] * BS;
            const SCALAR *blk = values + (unsigned long long)k * bb;
#pragma unroll
            for (uint j = 0; j < BS; ++j) {
                const SCALAR xj = x_in[c0 + j];
#pragma unroll
                for (uint i = 0; i < BS; ++i) {
                    t[i] -= blk[j * BS + i] * xj;
                }
            }
        }
    }
    if (unit_diag) {
#pragma unroll
        for (uint i = 0; i < BS; ++i) {
            x_out[br * BS + i] = t[i];
        }
    } else {
        const SCALAR *d = inv_diag + (unsigned long long)br * bb;
#pragma unroll
        for (uint i = 0; i < BS; ++i) {
            SCALAR acc = ZERO;
#pragma unroll
            for (uint j = 0; j < BS; ++j) {
                acc += d[j * BS + i] * t[j];
            }
            x_out[br * BS + i] = acc;
        }
    }
}

/* block_row_solve_bs for the run-time block size bs (1..PK_MAX_BLOCK, checked by the host). */
__device__ __forceinline__ void block_row_solve(const uint bs, const uint br, const uint *row_ptr, const uint *col_idx,
                                                const SCALAR *values, const SCALAR *inv_diag, const uint unit_diag,
                                                const SCALAR *b, const SCALAR *x_in, const uint from_zero,
                                                SCALAR *x_out) {
#define PK_ROW_CASE(BS)                                                                                  \
    case BS:                                                                                             \
        block_row_solve_bs<BS>(br, row_ptr, col_idx, values, inv_diag, unit_diag, b, x_in, from_zero, x_out); \
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

extern "C" __launch_bounds__(WG) __global__ void block_diag_scale(const uint bs, const uint n_block_rows,
                                                                  const SCALAR *__restrict__ inv_blocks,
                                                                  const SCALAR *__restrict__ x, SCALAR *__restrict__ y) {
    PDL_WAIT();
    const uint n = n_block_rows * bs;
    for (uint r = GRID_START; r < n; r += GRID_STRIDE) {
        const uint br = r / bs;
        const uint i = r - br * bs;
        const SCALAR *d = inv_blocks + (unsigned long long)br * bs * bs;
        SCALAR acc = ZERO;
        for (uint j = 0; j < bs; ++j) {
            acc += d[j * bs + i] * x[br * bs + j];
        }
        y[r] = acc;
    }
}

extern "C" __launch_bounds__(WG) __global__ void bsr_trsv_sweep(const uint bs, const uint n_block_rows, const uint *row_ptr,
                                                                const uint *col_idx, const SCALAR *values,
                                                                const SCALAR *inv_diag, const uint unit_diag,
                                                                const SCALAR *b, const SCALAR *x_old, const uint from_zero,
                                                                SCALAR *x_new) {
    PDL_WAIT();
    for (uint br = GRID_START; br < n_block_rows; br += GRID_STRIDE) {
        block_row_solve(bs, br, row_ptr, col_idx, values, inv_diag, unit_diag, b, x_old, from_zero, x_new);
    }
}

extern "C" __launch_bounds__(WG) __global__ void bsr_trsv_level(const uint bs, const uint *level_rows, const uint level_begin,
                                                                const uint level_len, const uint *row_ptr,
                                                                const uint *col_idx, const SCALAR *values,
                                                                const SCALAR *inv_diag, const uint unit_diag,
                                                                const SCALAR *b, SCALAR *x) {
    PDL_WAIT();
    for (uint p = GRID_START; p < level_len; p += GRID_STRIDE) {
        const uint br = level_rows[level_begin + p];
        block_row_solve(bs, br, row_ptr, col_idx, values, inv_diag, unit_diag, b, x, 0, x);
    }
}
