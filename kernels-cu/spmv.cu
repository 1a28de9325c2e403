/*
 * spmv.cu -- y = A x fused with the first stage of the inner products on y ([Rupp16]: CG Alg. 2
 * lines 13-14, BiCGStab Alg. 4 lines 6-7 and 10-12, GMRES Alg. 6 line 7), and the residual
 * r = b - A x with an optional partial <r, r>, for CSR, SELL-C-sigma and BSR. Mirrors
 * kernels-cl/spmv.cl (same names, same argument order); conventions in reduce.cu.
 *
 *   spmv_dots_csr  (const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                   uint n_rows, uint k, uint long_len, uint early,
 *                   const SCALAR* x, ulong x_off, SCALAR* y, ulong y_off,
 *                   const SCALAR* w0, ulong w0_off, const SCALAR* w1, ulong w1_off,
 *                   SCALAR* partials, int slot_yy, int slot_w0, int slot_w1)
 *   residual_csr   (const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                   uint n_rows, uint k, uint long_len, uint early,
 *                   const SCALAR* x, const SCALAR* b, SCALAR* r, SCALAR* partials, int slot_rr)
 *   spmv_dots_csr_stream(const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                   uint n_rows, const uint* block_row, uint n_blocks, uint long_len,
 *                   uint compact, const ushort* col_off, const uint* block_col,
 *                   const SCALAR* x, ulong x_off, SCALAR* y, ulong y_off,
 *                   const SCALAR* w0, ulong w0_off, const SCALAR* w1, ulong w1_off,
 *                   SCALAR* partials, int slot_yy, int slot_w0, int slot_w1)
 *   residual_csr_stream(const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                   uint n_rows, const uint* block_row, uint n_blocks, uint long_len,
 *                   uint compact, const ushort* col_off, const uint* block_col,
 *                   const SCALAR* x, const SCALAR* b, SCALAR* r, SCALAR* partials, int slot_rr)
 *   csr_long_chunks(const uint* col_idx, const SCALAR* values, const uint* chunk_begin,
 *                   const uint* chunk_end, uint n_chunks, const SCALAR* x, ulong x_off,
 *                   SCALAR* chunk_sums)
 *   csr_long_rows  (const uint* rows, const uint* chunk_ptr, uint n_long,
 *                   const SCALAR* chunk_sums, SCALAR* y, ulong y_off)
 *   spmv_dots_sell (uint c, const uint* slice_ptr, const uint* col_idx, const SCALAR* values,
 *                   const uint* row_perm, const uint* row_len, uint n_rows,
 *                   uint compact, const ushort* col_off, const uint* slice_col,
 *                   const SCALAR* x, ulong x_off, SCALAR* y, ulong y_off,
 *                   const SCALAR* w0, ulong w0_off, const SCALAR* w1, ulong w1_off,
 *                   SCALAR* partials, int slot_yy, int slot_w0, int slot_w1)
 *   residual_sell  (uint c, const uint* slice_ptr, const uint* col_idx, const SCALAR* values,
 *                   const uint* row_perm, const uint* row_len, uint n_rows,
 *                   uint compact, const ushort* col_off, const uint* slice_col,
 *                   const SCALAR* x, const SCALAR* b, SCALAR* r, SCALAR* partials, int slot_rr)
 *   spmv_dots_bsr  (uint bs, const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                   uint n_rows,
 *                   const SCALAR* x, ulong x_off, SCALAR* y, ulong y_off,
 *                   const SCALAR* w0, ulong w0_off, const SCALAR* w1, ulong w1_off,
 *                   SCALAR* partials, int slot_yy, int slot_w0, int slot_w1)
 *   residual_bsr   (uint bs, const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                   uint n_rows,
 *                   const SCALAR* x, const SCALAR* b, SCALAR* r, SCALAR* partials, int slot_rr)
 *
 * spmv_dots_*: y[y_off + row] = sum_j A(row, j) x[x_off + j]; partials <y, y> (slot_yy),
 *   <y, w0[w0_off ..]> (slot_w0), <y, w1[w1_off ..]> (slot_w1); a slot of -1 is off and its
 *   vector argument is never read (it may be null). Plain spmv = all slots -1.
 * residual_*: r = b - A x, partial <r, r> when slot_rr >= 0.
 * Launch: partials.groups() blocks whenever a slot is on (any grid otherwise).
 * CSR: k threads per row (a power of two, 1 <= k <= 32, chosen on the host from the mean
 *   nonzeros per row); the k partial row sums are combined with warp shuffles (fixed order).
 *   Each block handles WG / k consecutive rows per step of its grid-stride loop. Rows of more
 *   than long_len entries (0xffffffff: none) are summed beforehand in chunks by csr_long_chunks
 *   and csr_long_rows into y (r for the residual), which the main kernel reads back (see
 *   src/backend/long_rows.rs). early: bit EARLY_MATRIX (a matrix whose arrays only copies
 *   wrote) lets each thread read its first row's bounds and first entries before PDL_WAIT(),
 *   while the previous kernel ends, bit EARLY_NEXT lets the next kernel start right after the
 *   wait (csr_first_then_wait); the OpenCL twins take the argument and ignore it.
 * CSR stream (src/backend/row_blocks.rs): row block i is rows block_row[i] .. block_row[i + 1]
 *   with at most CSR_STREAM_CAP entries and rows, or one row with more entries. A block of
 *   threads takes a row block at a time (grid-stride over blocks): it stages the products
 *   values[j] x[col_idx[j]] of the block's entries in shared memory (thread t: entries
 *   e0 + t + s WG), then sums every row from there: thread t the rows r0 + t, r0 + t + WG, ...
 *   of at most CSR_STREAM_WARP_ROW entries in entry order, a warp each longer row (lanes
 *   strided, shuffle tree); thread t then writes its rows. A row of more than CSR_STREAM_CAP
 *   entries is summed by the whole block (strided, block reduction), or read back from y (r)
 *   when it is longer than long_len (the long-row path).
 *   compact = 1: a staged block reads the column of entry j as block_col[block] + col_off[j]
 *   (16-bit offsets, 2 bytes per entry less); compact = 0: col_off and block_col are never
 *   read (any pointer).
 * SELL: one thread per sorted row position p < n_rows (slice p / c, lane p % c, entry j of the
 *   row at slice_ptr[slice] + j c + lane, row_len[p] entries); the result goes to row_perm[p].
 *   compact = 1: the column of entry e is slice_col[slice] + col_off[e] (16-bit offsets);
 *   compact = 0: col_off and slice_col are never read (any pointer).
 * BSR: bs x bs column-major blocks, one thread per scalar row (block row r / bs, row r % bs of
 *   the block; entry (i, j) of block b at b bs^2 + j bs + i).
 * The matrix arrays are read-only for the whole kernel (__restrict__); the vectors may share
 * one allocation (GMRES basis columns), so they are not marked __restrict__.
 */

/* Sum of row `row` over the K threads of its segment (lane = threadIdx.x mod K); lane 0 of
 * the segment receives the full sum. A row of more than long_len entries is skipped: its value
 * was written to pre[row] by csr_long_rows, and lane 0 returns that. Called by all 32 lanes of
 * the warp (shuffles). */
template <uint K>
__device__ __forceinline__ SCALAR csr_row(const uint *__restrict__ row_ptr,
                                          const uint *__restrict__ col_idx,
                                          const SCALAR *__restrict__ values, const SCALAR *x,
                                          const uint row, const uint n_rows, const uint long_len,
                                          const SCALAR *pre) {
    const uint lane = threadIdx.x & (K - 1);
    SCALAR sum = ZERO;
    bool is_long = false;
    if (row < n_rows) {
        const uint begin = row_ptr[row];
        const uint end = row_ptr[row + 1];
        is_long = end - begin > long_len;
        if (!is_long) {
            for (uint j = begin + lane; j < end; j += K) {
                sum += values[j] * x[col_idx[j]];
            }
        }
    }
#pragma unroll
    for (uint off = K / 2; off > 0; off >>= 1) {
        sum += __shfl_down_sync(FULL_MASK, sum, off, K);
    }
    return (is_long && lane == 0) ? pre[row] : sum;
}

/* SELL row at sorted position p; the columns from col_idx, or from slice_col + col_off when
 * compact (the branch is uniform over the launch). */
__device__ __forceinline__ SCALAR sell_row(const uint c, const uint *__restrict__ slice_ptr,
                                           const uint *__restrict__ col_idx,
                                           const SCALAR *__restrict__ values,
                                           const uint *__restrict__ row_len, const uint compact,
                                           const ushort *__restrict__ col_off,
                                           const uint *__restrict__ slice_col, const SCALAR *x,
                                           const uint p) {
    const uint slice = p / c;
    const uint lane = p - slice * c;
    const uint base = slice_ptr[slice] + lane;
    const uint len = row_len[p];
    SCALAR sum = ZERO;
    if (compact) {
        const SCALAR *xs = x + slice_col[slice];
        for (uint j = 0; j < len; ++j) {
            const uint e = base + j * c;
            sum += MATRIX_LOAD(&values[e]) * GATHER_LOAD(&xs[MATRIX_LOAD(&col_off[e])]);
        }
    } else {
        for (uint j = 0; j < len; ++j) {
            const uint e = base + j * c;
            sum += MATRIX_LOAD(&values[e]) * GATHER_LOAD(&x[MATRIX_LOAD(&col_idx[e])]);
        }
    }
    return sum;
}

/* BSR scalar row r. */
__device__ __forceinline__ SCALAR bsr_row(const uint bs, const uint *__restrict__ row_ptr,
                                          const uint *__restrict__ col_idx,
                                          const SCALAR *__restrict__ values, const SCALAR *x,
                                          const uint r) {
    const uint br = r / bs;
    const uint i = r - br * bs;
    const ulong bs2 = (ulong)bs * bs;
    SCALAR sum = ZERO;
    const uint end = row_ptr[br + 1];
    for (uint blk = row_ptr[br]; blk < end; ++blk) {
        const SCALAR *xb = x + (ulong)col_idx[blk] * bs;
        const SCALAR *vb = values + (ulong)blk * bs2 + i;
        for (uint j = 0; j < bs; ++j) {
            sum += vb[(ulong)j * bs] * xb[j];
        }
    }
    return sum;
}

/* Accumulate the wanted dots of one result entry y_row. */
__device__ __forceinline__ void row_dots(SCALAR (&acc)[3], const SCALAR yv, const uint row,
                                         const SCALAR *w0, const SCALAR *w1, const int slot_yy,
                                         const int slot_w0, const int slot_w1) {
    if (slot_yy >= 0) {
        acc[0] += yv * yv;
    }
    if (slot_w0 >= 0) {
        acc[1] += yv * w0[row];
    }
    if (slot_w1 >= 0) {
        acc[2] += yv * w1[row];
    }
}

/* Reduce the dots over the block and write the wanted partials (block-uniform branch). */
__device__ __forceinline__ void finish_dots(SCALAR (&acc)[3], SCALAR *partials,
                                            const int slot_yy, const int slot_w0,
                                            const int slot_w1) {
    if (slot_yy < 0 && slot_w0 < 0 && slot_w1 < 0) {
        return;
    }
    block_sum<3>(acc);
    if (slot_yy >= 0) {
        write_partial(partials, (uint)slot_yy, acc[0]);
    }
    if (slot_w0 >= 0) {
        write_partial(partials, (uint)slot_w0, acc[1]);
    }
    if (slot_w1 >= 0) {
        write_partial(partials, (uint)slot_w1, acc[2]);
    }
}

/* Entries of a CSR row that each lane of its segment reads at the start of a kernel (see
 * csr_first_then_wait). */
#define CSR_FIRST_ENTRIES 8

/* The matrix part of a thread's first row in a CSR kernel's grid-stride loop: the row's bounds
 * and the lane's first CSR_FIRST_ENTRIES entries (entry t at begin + lane + t K). */
struct CsrFirst {
    uint begin;
    uint end;
    uint col[CSR_FIRST_ENTRIES];
    SCALAR val[CSR_FIRST_ENTRIES];
};

/* Bits of the `early` argument of the CSR products (and bicgstab_s_spmv_resident): read the
 * matrix before the wait; let the next kernel start right after the wait. */
#define EARLY_MATRIX 1u
#define EARLY_NEXT 2u

/* Read the first row of this thread (row; none when row >= n_rows) and wait for the previous
 * kernel (PDL_WAIT). With EARLY_MATRIX the matrix is read before the wait, overlapping the
 * previous kernel's end: only for matrices whose arrays no kernel writes (the backend sets it
 * for uploaded matrices; with programmatic dependent launch the previous kernel may still be
 * running, the ones before it have completed); without it the wait comes first. EARLY_NEXT
 * lets the next kernel be scheduled right after the wait (as PDL_WAIT_START_NEXT). */
template <uint K>
__device__ __forceinline__ CsrFirst csr_first_then_wait(const uint *__restrict__ row_ptr,
                                                        const uint *__restrict__ col_idx,
                                                        const SCALAR *__restrict__ values,
                                                        const uint row, const uint n_rows,
                                                        const uint early) {
    if (!(early & EARLY_MATRIX)) {
        PDL_WAIT();
    }
    CsrFirst f;
    f.begin = 0u;
    f.end = 0u;
    if (row < n_rows) {
        f.begin = row_ptr[row];
        f.end = row_ptr[row + 1];
    }
    const uint lane = threadIdx.x & (K - 1);
#pragma unroll
    for (uint t = 0; t < CSR_FIRST_ENTRIES; ++t) {
        const uint j = f.begin + lane + t * K;
        f.col[t] = j < f.end ? col_idx[j] : 0u;
        f.val[t] = j < f.end ? values[j] : ZERO;
    }
    if (early & EARLY_MATRIX) {
        PDL_WAIT();
    }
    if (early & EARLY_NEXT) {
        PDL_START_NEXT();
    }
    return f;
}

/* csr_row for the row whose first entries f holds: the same sum in the same order. */
template <uint K>
__device__ __forceinline__ SCALAR csr_row_first(const CsrFirst &f, const uint *__restrict__ col_idx,
                                                const SCALAR *__restrict__ values, const SCALAR *x,
                                                const uint row, const uint n_rows,
                                                const uint long_len, const SCALAR *pre) {
    const uint lane = threadIdx.x & (K - 1);
    SCALAR sum = ZERO;
    bool is_long = false;
    if (row < n_rows) {
        is_long = f.end - f.begin > long_len;
        if (!is_long) {
#pragma unroll
            for (uint t = 0; t < CSR_FIRST_ENTRIES; ++t) {
                if (f.begin + lane + t * K < f.end) {
                    sum += f.val[t] * x[f.col[t]];
                }
            }
            for (uint j = f.begin + lane + CSR_FIRST_ENTRIES * K; j < f.end; j += K) {
                sum += values[j] * x[col_idx[j]];
            }
        }
    }
#pragma unroll
    for (uint off = K / 2; off > 0; off >>= 1) {
        sum += __shfl_down_sync(FULL_MASK, sum, off, K);
    }
    return (is_long && lane == 0) ? pre[row] : sum;
}

/* row_dots with the row's w0 and w1 entries already read. */
__device__ __forceinline__ void row_dots_read(SCALAR (&acc)[3], const SCALAR yv, const SCALAR w0v,
                                              const SCALAR w1v, const int slot_yy,
                                              const int slot_w0, const int slot_w1) {
    if (slot_yy >= 0) {
        acc[0] += yv * yv;
    }
    if (slot_w0 >= 0) {
        acc[1] += yv * w0v;
    }
    if (slot_w1 >= 0) {
        acc[2] += yv * w1v;
    }
}

/* The rows of spmv_dots_csr. The first row of each thread is read by csr_first_then_wait, and
 * its w0, w1 entries before its product (a w that is y itself gets the new value, as row_dots
 * would read it after the store); the rest as csr_row. */
template <uint K>
__device__ __forceinline__ void csr_dots_rows(const uint *__restrict__ row_ptr,
                                              const uint *__restrict__ col_idx,
                                              const SCALAR *__restrict__ values,
                                              const uint n_rows, const uint long_len,
                                              const uint early, const SCALAR *x, SCALAR *y,
                                              const SCALAR *w0, const SCALAR *w1,
                                              const int slot_yy, const int slot_w0,
                                              const int slot_w1, SCALAR (&acc)[3]) {
    const uint rows_per_block = WG / K;
    const uint stride = gridDim.x * rows_per_block;
    const uint lane = threadIdx.x & (K - 1);
    const uint row0 = blockIdx.x * rows_per_block + threadIdx.x / K;
    const CsrFirst f = csr_first_then_wait<K>(row_ptr, col_idx, values, row0, n_rows, early);
    {
        const bool mine = lane == 0 && row0 < n_rows;
        const SCALAR w0v = (mine && slot_w0 >= 0) ? w0[row0] : ZERO;
        const SCALAR w1v = (mine && slot_w1 >= 0) ? w1[row0] : ZERO;
        const SCALAR v = csr_row_first<K>(f, col_idx, values, x, row0, n_rows, long_len, y);
        if (mine) {
            y[row0] = v;
            row_dots_read(acc, v, w0 == y ? v : w0v, w1 == y ? v : w1v, slot_yy, slot_w0, slot_w1);
        }
    }
    for (uint base = blockIdx.x * rows_per_block + stride; base < n_rows; base += stride) {
        const uint row = base + threadIdx.x / K;
        const SCALAR v = csr_row<K>(row_ptr, col_idx, values, x, row, n_rows, long_len, y);
        if (lane == 0 && row < n_rows) {
            y[row] = v;
            row_dots(acc, v, row, w0, w1, slot_yy, slot_w0, slot_w1);
        }
    }
}

extern "C" __launch_bounds__(WG) __global__ void spmv_dots_csr(const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
              const SCALAR *__restrict__ values, const uint n_rows, const uint k,
              const uint long_len, const uint early, const SCALAR *x, const ulong x_off,
              SCALAR *y, const ulong y_off, const SCALAR *w0, const ulong w0_off, const SCALAR *w1,
              const ulong w1_off, SCALAR *partials, const int slot_yy, const int slot_w0,
              const int slot_w1) {
    /* PDL_WAIT() in csr_first_then_wait: the matrix may be read first. */
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    const SCALAR *xs = x + x_off;
    SCALAR *ys = y + y_off;
    const SCALAR *w0s = w0 + w0_off;
    const SCALAR *w1s = w1 + w1_off;
#define CSR_DOTS_CASE(K)                                                                       \
    case K:                                                                                    \
        csr_dots_rows<K>(row_ptr, col_idx, values, n_rows, long_len, early, xs, ys, w0s,   \
                         w1s, slot_yy, slot_w0, slot_w1, acc);                                 \
        break;
    switch (k) {
        CSR_DOTS_CASE(2)
        CSR_DOTS_CASE(4)
        CSR_DOTS_CASE(8)
        CSR_DOTS_CASE(16)
        CSR_DOTS_CASE(32)
    default:
        csr_dots_rows<1>(row_ptr, col_idx, values, n_rows, long_len, early, xs, ys, w0s,
                         w1s, slot_yy, slot_w0, slot_w1, acc);
        break;
    }
#undef CSR_DOTS_CASE
    finish_dots(acc, partials, slot_yy, slot_w0, slot_w1);
}

template <uint K>
__device__ __forceinline__ SCALAR csr_residual_rows(const uint *__restrict__ row_ptr,
                                                    const uint *__restrict__ col_idx,
                                                    const SCALAR *__restrict__ values,
                                                    const uint n_rows, const uint long_len,
                                                    const uint early, const SCALAR *x,
                                                    const SCALAR *b, SCALAR *r) {
    const uint rows_per_block = WG / K;
    const uint stride = gridDim.x * rows_per_block;
    const uint lane = threadIdx.x & (K - 1);
    const uint row0 = blockIdx.x * rows_per_block + threadIdx.x / K;
    const CsrFirst f = csr_first_then_wait<K>(row_ptr, col_idx, values, row0, n_rows, early);
    SCALAR acc = ZERO;
    {
        const bool mine = lane == 0 && row0 < n_rows;
        const SCALAR b0 = mine ? b[row0] : ZERO;
        const SCALAR v = csr_row_first<K>(f, col_idx, values, x, row0, n_rows, long_len, r);
        if (mine) {
            const SCALAR ri = b0 - v;
            r[row0] = ri;
            acc += ri * ri;
        }
    }
    for (uint base = blockIdx.x * rows_per_block + stride; base < n_rows; base += stride) {
        const uint row = base + threadIdx.x / K;
        const SCALAR v = csr_row<K>(row_ptr, col_idx, values, x, row, n_rows, long_len, r);
        if (lane == 0 && row < n_rows) {
            const SCALAR ri = b[row] - v;
            r[row] = ri;
            acc += ri * ri;
        }
    }
    return acc;
}

extern "C" __launch_bounds__(WG) __global__ void residual_csr(const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
             const SCALAR *__restrict__ values, const uint n_rows, const uint k,
             const uint long_len, const uint early, const SCALAR *x, const SCALAR *b, SCALAR *r,
             SCALAR *partials, const int slot_rr) {
    /* PDL_WAIT() in csr_first_then_wait: the matrix may be read first. */
    SCALAR acc;
#define CSR_RESIDUAL_CASE(K)                                                                   \
    case K:                                                                                    \
        acc = csr_residual_rows<K>(row_ptr, col_idx, values, n_rows, long_len, early, x, \
                                   b, r);                                                      \
        break;
    switch (k) {
        CSR_RESIDUAL_CASE(2)
        CSR_RESIDUAL_CASE(4)
        CSR_RESIDUAL_CASE(8)
        CSR_RESIDUAL_CASE(16)
        CSR_RESIDUAL_CASE(32)
    default:
        acc = csr_residual_rows<1>(row_ptr, col_idx, values, n_rows, long_len, early, x, b, r);
        break;
    }
#undef CSR_RESIDUAL_CASE
    if (slot_rr >= 0) {
        write_partial(partials, (uint)slot_rr, block_sum1(acc));
    }
}

/* Entries (and rows) per row block of the stream kernels: src/backend/row_blocks.rs STREAM_CAP. */
#define CSR_STREAM_CAP 2048

/* The value of the one row r0 (entries e0 .. e1, more than CSR_STREAM_CAP) of a row block:
 * pre[r0] when it is longer than long_len (written by csr_long_rows), else the block's strided
 * sum. Valid in thread 0; called by the whole block (block-uniform branch). */
__device__ __forceinline__ SCALAR csr_stream_wide_row(const uint *__restrict__ col_idx,
                                                      const SCALAR *__restrict__ values,
                                                      const SCALAR *x, const uint r0,
                                                      const uint e0, const uint e1,
                                                      const uint long_len, const SCALAR *pre) {
    if (e1 - e0 > long_len) {
        return pre[r0];
    }
    SCALAR sum = ZERO;
    for (uint j = e0 + threadIdx.x; j < e1; j += WG) {
        sum += MATRIX_LOAD(&values[j]) * GATHER_LOAD(&x[MATRIX_LOAD(&col_idx[j])]);
    }
    return block_sum1(sum);
}

/* Rows of a row block longer than this are summed by a warp, shorter ones by one thread. On the
 * H200 a threshold of 32 sent elasticity3d's rows (81 entries) to warps and made its SpMV 30%
 * slower (82 against 63 us) with no gain on the power-law matrix (568 against 570 us). */
#define CSR_STREAM_WARP_ROW 128

/* Stage the products of entries e0 .. e1 (at most CSR_STREAM_CAP) in prod and clear the count
 * of warp rows, then barrier; the columns come from col_idx, or from base + col_off when
 * compact. The loops have a fixed trip count so that every load of a thread is in flight at
 * once. */
__device__ __forceinline__ void csr_stream_stage(const uint *__restrict__ col_idx,
                                                 const SCALAR *__restrict__ values,
                                                 const uint compact,
                                                 const ushort *__restrict__ col_off,
                                                 const uint base, const SCALAR *x,
                                                 const uint e0, const uint e1, SCALAR *prod,
                                                 uint *n_warp_rows) {
    if (threadIdx.x == 0) {
        *n_warp_rows = 0;
    }
    if (compact) {
#pragma unroll
        for (uint s = 0; s < (CSR_STREAM_CAP + WG - 1) / WG; ++s) {
            const uint k = s * WG + threadIdx.x;
            if (k < e1 - e0) {
                prod[k] = MATRIX_LOAD(&values[e0 + k]) * GATHER_LOAD(&x[base + MATRIX_LOAD(&col_off[e0 + k])]);
            }
        }
    } else {
#pragma unroll
        for (uint s = 0; s < (CSR_STREAM_CAP + WG - 1) / WG; ++s) {
            const uint k = s * WG + threadIdx.x;
            if (k < e1 - e0) {
                prod[k] = MATRIX_LOAD(&values[e0 + k]) * GATHER_LOAD(&x[MATRIX_LOAD(&col_idx[e0 + k])]);
            }
        }
    }
    __syncthreads();
}

/* Sum every row r0 .. r1 of a staged block (entries from e0) into the slot of its first entry,
 * prod[row_ptr[row] - e0] (rows without entries have no slot): a row of at most
 * CSR_STREAM_WARP_ROW entries by its thread in entry order, a longer one by a warp (listed in
 * warp_rows in any order: the row's sum does not depend on which warp takes it). Ends with a
 * barrier when there are warp rows; the caller's barrier after the staging covers the rest. */
__device__ __forceinline__ void csr_stream_sums(const uint *__restrict__ row_ptr, const uint r0,
                                                const uint r1, const uint e0, SCALAR *prod,
                                                uint *warp_rows, uint *n_warp_rows) {
    for (uint row = r0 + threadIdx.x; row < r1; row += WG) {
        const uint b = row_ptr[row] - e0;
        const uint e = row_ptr[row + 1] - e0;
        if (e - b > CSR_STREAM_WARP_ROW) {
            warp_rows[atomicAdd(n_warp_rows, 1u)] = row;
        } else if (e > b) {
            SCALAR sum = ZERO;
            for (uint k = b; k < e; ++k) {
                sum += prod[k];
            }
            prod[b] = sum;
        }
    }
    __syncthreads();
    const uint count = *n_warp_rows;
    if (count > 0) {
        const uint lane = threadIdx.x & 31u;
        for (uint i = threadIdx.x >> 5; i < count; i += WARPS) {
            const uint row = warp_rows[i];
            const uint b = row_ptr[row] - e0;
            const uint e = row_ptr[row + 1] - e0;
            SCALAR sum = ZERO;
            for (uint k = b + lane; k < e; k += 32) {
                sum += prod[k];
            }
            sum = warp_sum(sum);
            if (lane == 0) {
                prod[b] = sum;
            }
        }
        __syncthreads();
    }
}

/* The sum of row `row` of a summed block (csr_stream_sums). */
__device__ __forceinline__ SCALAR csr_stream_row(const uint *__restrict__ row_ptr, const uint e0,
                                                 const uint row, const SCALAR *prod) {
    const uint b = row_ptr[row] - e0;
    return row_ptr[row + 1] - e0 > b ? prod[b] : ZERO;
}

/* Row block blk of a stream matrix: its rows r0 .. r1 and first entry e0. A block of more than
 * CSR_STREAM_CAP entries (one row) returns true with the row's value in `wide` (thread 0;
 * csr_stream_wide_row); otherwise it stages the block and leaves its rows' sums in prod
 * (csr_stream_stage, csr_stream_sums) and returns false: the caller reads them with
 * csr_stream_row and ends with a barrier before the next block. Called by the whole block. */
__device__ __forceinline__ bool csr_stream_block(
    const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
    const SCALAR *__restrict__ values, const uint *__restrict__ block_row, const uint blk,
    const uint long_len, const uint compact, const ushort *__restrict__ col_off,
    const uint *__restrict__ block_col, const SCALAR *x, const SCALAR *pre, SCALAR *prod,
    uint *warp_rows, uint *n_warp_rows, uint &r0, uint &r1, uint &e0, SCALAR &wide) {
    r0 = block_row[blk];
    r1 = block_row[blk + 1];
    e0 = row_ptr[r0];
    const uint e1 = row_ptr[r1];
    if (e1 - e0 > CSR_STREAM_CAP) {
        wide = csr_stream_wide_row(col_idx, values, x, r0, e0, e1, long_len, pre);
        return true;
    }
    csr_stream_stage(col_idx, values, compact, col_off, compact ? block_col[blk] : 0u, x, e0, e1,
                     prod, n_warp_rows);
    csr_stream_sums(row_ptr, r0, r1, e0, prod, warp_rows, n_warp_rows);
    return false;
}

extern "C" __launch_bounds__(WG) __global__ void spmv_dots_csr_stream(const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
              const SCALAR *__restrict__ values, const uint n_rows,
              const uint *__restrict__ block_row, const uint n_blocks, const uint long_len,
              const uint compact, const ushort *__restrict__ col_off,
              const uint *__restrict__ block_col,
              const SCALAR *x, const ulong x_off, SCALAR *y, const ulong y_off,
              const SCALAR *w0, const ulong w0_off, const SCALAR *w1, const ulong w1_off,
              SCALAR *partials, const int slot_yy, const int slot_w0, const int slot_w1) {
    PDL_WAIT();
    __shared__ SCALAR prod[CSR_STREAM_CAP];
    __shared__ uint warp_rows[CSR_STREAM_CAP / (CSR_STREAM_WARP_ROW + 1) + 1];
    __shared__ uint n_warp_rows;
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    const SCALAR *xs = x + x_off;
    SCALAR *ys = y + y_off;
    const SCALAR *w0s = w0 + w0_off;
    const SCALAR *w1s = w1 + w1_off;
    (void)n_rows;
    for (uint blk = blockIdx.x; blk < n_blocks; blk += gridDim.x) {
        uint r0, r1, e0;
        SCALAR wide;
        if (csr_stream_block(row_ptr, col_idx, values, block_row, blk, long_len, compact, col_off,
                             block_col, xs, ys, prod, warp_rows, &n_warp_rows, r0, r1, e0, wide)) {
            if (threadIdx.x == 0) {
                ys[r0] = wide;
                row_dots(acc, wide, r0, w0s, w1s, slot_yy, slot_w0, slot_w1);
            }
        } else {
            for (uint row = r0 + threadIdx.x; row < r1; row += WG) {
                const SCALAR v = csr_stream_row(row_ptr, e0, row, prod);
                ys[row] = v;
                row_dots(acc, v, row, w0s, w1s, slot_yy, slot_w0, slot_w1);
            }
            __syncthreads(); /* prod is restaged by the next block */
        }
    }
    finish_dots(acc, partials, slot_yy, slot_w0, slot_w1);
}

extern "C" __launch_bounds__(WG) __global__ void residual_csr_stream(const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
              const SCALAR *__restrict__ values, const uint n_rows,
              const uint *__restrict__ block_row, const uint n_blocks, const uint long_len,
              const uint compact, const ushort *__restrict__ col_off,
              const uint *__restrict__ block_col,
              const SCALAR *x, const SCALAR *b, SCALAR *r, SCALAR *partials,
              const int slot_rr) {
    PDL_WAIT();
    __shared__ SCALAR prod[CSR_STREAM_CAP];
    __shared__ uint warp_rows[CSR_STREAM_CAP / (CSR_STREAM_WARP_ROW + 1) + 1];
    __shared__ uint n_warp_rows;
    SCALAR acc = ZERO;
    (void)n_rows;
    for (uint blk = blockIdx.x; blk < n_blocks; blk += gridDim.x) {
        uint r0, r1, e0;
        SCALAR wide;
        if (csr_stream_block(row_ptr, col_idx, values, block_row, blk, long_len, compact, col_off,
                             block_col, x, r, prod, warp_rows, &n_warp_rows, r0, r1, e0, wide)) {
            if (threadIdx.x == 0) {
                const SCALAR ri = b[r0] - wide;
                r[r0] = ri;
                acc += ri * ri;
            }
        } else {
            for (uint row = r0 + threadIdx.x; row < r1; row += WG) {
                const SCALAR ri = b[row] - csr_stream_row(row_ptr, e0, row, prod);
                r[row] = ri;
                acc += ri * ri;
            }
            __syncthreads(); /* prod is restaged by the next block */
        }
    }
    if (slot_rr >= 0) {
        write_partial(partials, (uint)slot_rr, block_sum1(acc));
    }
}

/* Long rows, step 1: the sum of each chunk of a long row, one block per chunk (fixed-order
 * block reduction). */
extern "C" __launch_bounds__(WG) __global__ void csr_long_chunks(const uint *__restrict__ col_idx, const SCALAR *__restrict__ values,
                const uint *__restrict__ chunk_begin, const uint *__restrict__ chunk_end,
                const uint n_chunks, const SCALAR *x, const ulong x_off, SCALAR *chunk_sums) {
    PDL_WAIT();
    const SCALAR *xs = x + x_off;
    for (uint c = blockIdx.x; c < n_chunks; c += gridDim.x) {
        const uint end = chunk_end[c];
        SCALAR sum = ZERO;
        for (uint j = chunk_begin[c] + threadIdx.x; j < end; j += WG) {
            sum += MATRIX_LOAD(&values[j]) * GATHER_LOAD(&xs[MATRIX_LOAD(&col_idx[j])]);
        }
        sum = block_sum1(sum);
        if (threadIdx.x == 0) {
            chunk_sums[c] = sum;
        }
    }
}

/* Long rows, step 2: y[y_off + rows[i]] = the chunk sums of long row i added in chunk order. */
extern "C" __launch_bounds__(WG) __global__ void csr_long_rows(const uint *__restrict__ rows, const uint *__restrict__ chunk_ptr,
              const uint n_long, const SCALAR *__restrict__ chunk_sums, SCALAR *y,
              const ulong y_off) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n_long; i += GRID_STRIDE) {
        const uint end = chunk_ptr[i + 1];
        SCALAR sum = ZERO;
        for (uint c = chunk_ptr[i]; c < end; ++c) {
            sum += chunk_sums[c];
        }
        y[y_off + rows[i]] = sum;
    }
}

extern "C" __launch_bounds__(WG) __global__ void spmv_dots_sell(const uint c, const uint *__restrict__ slice_ptr, const uint *__restrict__ col_idx,
               const SCALAR *__restrict__ values, const uint *__restrict__ row_perm,
               const uint *__restrict__ row_len, const uint n_rows, const uint compact,
               const ushort *__restrict__ col_off, const uint *__restrict__ slice_col,
               const SCALAR *x,
               const ulong x_off, SCALAR *y, const ulong y_off, const SCALAR *w0,
               const ulong w0_off, const SCALAR *w1, const ulong w1_off, SCALAR *partials,
               const int slot_yy, const int slot_w0, const int slot_w1) {
    PDL_WAIT();
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    const SCALAR *xs = x + x_off;
    SCALAR *ys = y + y_off;
    const SCALAR *w0s = w0 + w0_off;
    const SCALAR *w1s = w1 + w1_off;
    for (uint p = GRID_START; p < n_rows; p += GRID_STRIDE) {
        const SCALAR v = sell_row(c, slice_ptr, col_idx, values, row_len, compact, col_off, slice_col, xs, p);
        const uint row = row_perm[p];
        ys[row] = v;
        row_dots(acc, v, row, w0s, w1s, slot_yy, slot_w0, slot_w1);
    }
    finish_dots(acc, partials, slot_yy, slot_w0, slot_w1);
}

extern "C" __launch_bounds__(WG) __global__ void residual_sell(const uint c, const uint *__restrict__ slice_ptr, const uint *__restrict__ col_idx,
              const SCALAR *__restrict__ values, const uint *__restrict__ row_perm,
              const uint *__restrict__ row_len, const uint n_rows, const uint compact,
              const ushort *__restrict__ col_off, const uint *__restrict__ slice_col,
              const SCALAR *x,
              const SCALAR *b, SCALAR *r, SCALAR *partials, const int slot_rr) {
    PDL_WAIT();
    SCALAR acc = ZERO;
    for (uint p = GRID_START; p < n_rows; p += GRID_STRIDE) {
        const SCALAR v = sell_row(c, slice_ptr, col_idx, values, row_len, compact, col_off, slice_col, x, p);
        const uint row = row_perm[p];
        const SCALAR ri = b[row] - v;
        r[row] = ri;
        acc += ri * ri;
    }
    if (slot_rr >= 0) {
        write_partial(partials, (uint)slot_rr, block_sum1(acc));
    }
}

extern "C" __launch_bounds__(WG) __global__ void spmv_dots_bsr(const uint bs, const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
              const SCALAR *__restrict__ values, const uint n_rows, const SCALAR *x,
              const ulong x_off, SCALAR *y, const ulong y_off, const SCALAR *w0,
              const ulong w0_off, const SCALAR *w1, const ulong w1_off, SCALAR *partials,
              const int slot_yy, const int slot_w0, const int slot_w1) {
    PDL_WAIT();
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    const SCALAR *xs = x + x_off;
    SCALAR *ys = y + y_off;
    const SCALAR *w0s = w0 + w0_off;
    const SCALAR *w1s = w1 + w1_off;
    for (uint row = GRID_START; row < n_rows; row += GRID_STRIDE) {
        const SCALAR v = bsr_row(bs, row_ptr, col_idx, values, xs, row);
        ys[row] = v;
        row_dots(acc, v, row, w0s, w1s, slot_yy, slot_w0, slot_w1);
    }
    finish_dots(acc, partials, slot_yy, slot_w0, slot_w1);
}

extern "C" __launch_bounds__(WG) __global__ void residual_bsr(const uint bs, const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx,
             const SCALAR *__restrict__ values, const uint n_rows, const SCALAR *x,
             const SCALAR *b, SCALAR *r, SCALAR *partials, const int slot_rr) {
    PDL_WAIT();
    SCALAR acc = ZERO;
    for (uint row = GRID_START; row < n_rows; row += GRID_STRIDE) {
        const SCALAR v = bsr_row(bs, row_ptr, col_idx, values, x, row);
        const SCALAR ri = b[row] - v;
        r[row] = ri;
        acc += ri * ri;
    }
    if (slot_rr >= 0) {
        write_partial(partials, (uint)slot_rr, block_sum1(acc));
    }
}
