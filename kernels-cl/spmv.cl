/*
 * spmv.cl -- y = A x fused with the first stage of the inner products on y ([Rupp16]: CG Alg. 2
 * lines 13-14, BiCGStab Alg. 4 lines 6-7 and 10-12, GMRES Alg. 6 line 7), and the residual
 * r = b - A x with an optional partial <r, r>, for CSR, SELL-C-sigma and BSR.
 * Conventions (SCALAR, WG, uint/ulong, slots, partials layout): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order). Pointers are __global; the matrix
 * arrays are `restrict` (read-only for the whole kernel, as __restrict__ in CUDA) so the compiler
 * may use the read-only data path; the vectors may share one allocation (GMRES basis columns).
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
 *   vector argument may be any valid buffer. Offsets let GMRES read and write basis columns
 *   (x = column i-1 or an external z, y = column i, w0 = column i-1). Plain spmv = all slots -1.
 * residual_*: r = b - A x, partial <r, r> when slot_rr >= 0.
 * Launch: partials.groups() work-groups whenever a slot is on (any grid otherwise).
 * CSR: k work-items per row (a power of two, 1 <= k <= min(32, WG), chosen on the host from the
 *   mean nonzeros per row: 1 below 16 per row on GPUs, always 1 on CPUs). k = 1: one row per
 *   work-item in the FOR_EACH loop, no barrier. k > 1: the k partial row sums are combined in
 *   local memory; each group handles WG / k consecutive rows per step of a grid-stride loop
 *   over row blocks (uniform trip count: the barriers are reached by the whole group). Rows of
 *   more than long_len entries (0xffffffff: none) are summed beforehand in chunks by
 *   csr_long_chunks and csr_long_rows into y (r for the residual), which the main kernel reads
 *   back (see src/backend/long_rows.rs). early is read by the CUDA twins only (their
 *   matrix reads before the programmatic-launch wait) and ignored here.
 * CSR stream (src/backend/row_blocks.rs): row block i is rows block_row[i] .. block_row[i + 1]
 *   with at most CSR_STREAM_CAP entries and rows, or one row with more entries. A group takes a
 *   row block at a time (group-uniform loop over blocks): it stages the products
 *   values[j] x[col_idx[j]] of the block's entries in local memory (work-item t: entries
 *   e0 + t + s WG), then sums every row from there: work-item t the rows r0 + t, r0 + t + WG, ...
 *   of at most CSR_STREAM_WARP_ROW entries in entry order, a team of STREAM_TEAM work-items
 *   each longer row (strided, the team's partial sums added in order); work-item t then writes
 *   its rows. A row of more than CSR_STREAM_CAP entries is summed by the whole group (strided,
 *   group reduction), or read back from y (r) when it is longer than long_len.
 *   compact = 1: a staged block reads the column of entry j as block_col[block] + col_off[j]
 *   (16-bit offsets, 2 bytes per entry less); compact = 0: col_off and block_col are never
 *   read (any buffer).
 * SELL: one work-item per sorted row position p < n_rows (slice p / c, lane p % c, entry j of
 *   the row at slice_ptr[slice] + j c + lane, row_len[p] entries); the result goes to row
 *   row_perm[p]. compact = 1: the column of entry e is slice_col[slice] + col_off[e] (16-bit
 *   offsets); compact = 0: col_off and slice_col are never read (any buffer).
 * BSR: bs x bs column-major blocks, one work-item per scalar row (block row r / bs, row r % bs
 *   of the block; entry (i, j) of block b at b bs^2 + j bs + i).
 */

/* Partial row sum of `row` over lanes (lane = local id mod k); the full sum is returned to
 * lane 0. A row of more than long_len entries is skipped: its value was written to
 * pre[pre_off + row] by csr_long_rows, and lane 0 returns that. Must be called by every
 * work-item of the group (it has barriers when k > 1); `scratch` has WG entries. */
inline SCALAR csr_row(__global const uint *restrict row_ptr, __global const uint *restrict col_idx,
                      __global const SCALAR *restrict values, __global const SCALAR *x, const ulong x_off,
                      const uint row, const uint n_rows, const uint k, const uint long_len,
                      __global const SCALAR *pre, const ulong pre_off, __local SCALAR *scratch) {
    const uint lid = get_local_id(0);
    const uint lane = lid & (k - 1);
    SCALAR sum = ZERO;
    bool is_long = false;
    if (row < n_rows) {
        const uint begin = row_ptr[row];
        const uint end = row_ptr[row + 1];
        is_long = end - begin > long_len;
        if (!is_long) {
            for (uint j = begin + lane; j < end; j += k) {
                sum += values[j] * x[x_off + col_idx[j]];
            }
        }
    }
    if (k > 1) {
        scratch[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = k / 2; s > 0; s >>= 1) {
            if (lane < s) {
                scratch[lid] += scratch[lid + s];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        /* Only work-item lid writes scratch[lid] before the next barrier: no trailing barrier. */
        sum = scratch[lid];
    }
    return (is_long && lane == 0) ? pre[pre_off + row] : sum;
}

/* SELL row at sorted position p; the columns from col_idx, or from slice_col + col_off when
 * compact (the branch is uniform over the launch). */
inline SCALAR sell_row(const uint c, __global const uint *restrict slice_ptr,
                       __global const uint *restrict col_idx, __global const SCALAR *restrict values,
                       __global const uint *restrict row_len, const uint compact,
                       __global const ushort *restrict col_off,
                       __global const uint *restrict slice_col, __global const SCALAR *x,
                       const ulong x_off, const uint p) {
    const uint slice = p / c;
    const uint lane = p - slice * c;
    const uint base = slice_ptr[slice] + lane;
    const uint len = row_len[p];
    SCALAR sum = ZERO;
    if (compact) {
        const ulong xb = x_off + slice_col[slice];
        for (uint j = 0; j < len; ++j) {
            const uint e = base + j * c;
            sum += MATRIX_LOAD_S(&values[e]) * GATHER_LOAD_S(&x[xb + MATRIX_LOAD_H(&col_off[e])]);
        }
    } else {
        for (uint j = 0; j < len; ++j) {
            const uint e = base + j * c;
            sum += MATRIX_LOAD_S(&values[e]) * GATHER_LOAD_S(&x[x_off + MATRIX_LOAD_U(&col_idx[e])]);
        }
    }
    return sum;
}

/* BSR scalar row r. */
inline SCALAR bsr_row(const uint bs, __global const uint *restrict row_ptr, __global const uint *restrict col_idx,
                      __global const SCALAR *restrict values, __global const SCALAR *x, const ulong x_off,
                      const uint r) {
    const uint br = r / bs;
    const uint i = r - br * bs;
    const ulong bs2 = (ulong)bs * bs;
    SCALAR sum = ZERO;
    const uint end = row_ptr[br + 1];
    for (uint blk = row_ptr[br]; blk < end; ++blk) {
        const ulong col0 = x_off + (ulong)col_idx[blk] * bs;
        const ulong v0 = (ulong)blk * bs2 + i;
        for (uint j = 0; j < bs; ++j) {
            sum += values[v0 + (ulong)j * bs] * x[col0 + j];
        }
    }
    return sum;
}

/* Accumulate the optional dots of one result entry y_row. */
inline void row_dots(SCALAR *acc, const SCALAR yv, const uint row,
                     __global const SCALAR *w0, const ulong w0_off,
                     __global const SCALAR *w1, const ulong w1_off,
                     const int slot_yy, const int slot_w0, const int slot_w1) {
    if (slot_yy >= 0) {
        acc[0] += yv * yv;
    }
    if (slot_w0 >= 0) {
        acc[1] += yv * w0[w0_off + row];
    }
    if (slot_w1 >= 0) {
        acc[2] += yv * w1[w1_off + row];
    }
}

/* Reduce the dots over the group and write the wanted partials (uniform control flow). */
inline void finish_dots(__local SCALAR *scratch, SCALAR *acc, __global SCALAR *partials,
                        const int slot_yy, const int slot_w0, const int slot_w1) {
    if (slot_yy < 0 && slot_w0 < 0 && slot_w1 < 0) {
        return;
    }
    group_sum_multi(scratch, acc, 3);
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

pk_kernel void spmv_dots_csr(PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                   PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n_rows, const uint k,
                   const uint long_len, const uint early, PK_GLOBAL(const SCALAR, x), const ulong x_off,
                   PK_GLOBAL(SCALAR, y), const ulong y_off,
                   PK_GLOBAL(const SCALAR, w0), const ulong w0_off,
                   PK_GLOBAL(const SCALAR, w1), const ulong w1_off,
                   PK_GLOBAL(SCALAR, partials), const int slot_yy, const int slot_w0,
                   const int slot_w1) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    PK_BIND(const SCALAR, w0);
    PK_BIND(const SCALAR, w1);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    if (k == 1) {
        FOR_EACH(row, n_rows) {
            const SCALAR v = csr_row(row_ptr, col_idx, values, x, x_off, row, n_rows, 1, long_len, y, y_off,
                                     scratch);
            y[y_off + row] = v;
            row_dots(acc, v, row, w0, w0_off, w1, w1_off, slot_yy, slot_w0, slot_w1);
        }
    } else {
        const uint rows_per_group = WG / k;
        const uint stride = get_num_groups(0) * rows_per_group;
        const uint lane = get_local_id(0) & (k - 1);
        for (uint base = get_group_id(0) * rows_per_group; base < n_rows; base += stride) {
            const uint row = base + get_local_id(0) / k;
            const SCALAR v = csr_row(row_ptr, col_idx, values, x, x_off, row, n_rows, k, long_len, y, y_off,
                                     scratch);
            if (lane == 0 && row < n_rows) {
                y[y_off + row] = v;
                row_dots(acc, v, row, w0, w0_off, w1, w1_off, slot_yy, slot_w0, slot_w1);
            }
        }
    }
    finish_dots(scratch, acc, partials, slot_yy, slot_w0, slot_w1);
}

pk_kernel void residual_csr(PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                  PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n_rows, const uint k,
                  const uint long_len, const uint early, PK_GLOBAL(const SCALAR, x), PK_GLOBAL(const SCALAR, b),
                  PK_GLOBAL(SCALAR, r),
                  PK_GLOBAL(SCALAR, partials), const int slot_rr) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(const SCALAR, x);
    PK_BIND(const SCALAR, b);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    if (k == 1) {
        FOR_EACH(row, n_rows) {
            const SCALAR v = csr_row(row_ptr, col_idx, values, x, 0, row, n_rows, 1, long_len, r, 0, scratch);
            const SCALAR ri = b[row] - v;
            r[row] = ri;
            acc += ri * ri;
        }
    } else {
        const uint rows_per_group = WG / k;
        const uint stride = get_num_groups(0) * rows_per_group;
        const uint lane = get_local_id(0) & (k - 1);
        for (uint base = get_group_id(0) * rows_per_group; base < n_rows; base += stride) {
            const uint row = base + get_local_id(0) / k;
            const SCALAR v = csr_row(row_ptr, col_idx, values, x, 0, row, n_rows, k, long_len, r, 0, scratch);
            if (lane == 0 && row < n_rows) {
                const SCALAR ri = b[row] - v;
                r[row] = ri;
                acc += ri * ri;
            }
        }
    }
    if (slot_rr >= 0) {
        acc = group_sum(scratch, acc);
        write_partial(partials, (uint)slot_rr, acc);
    }
}

/* Entries (and rows) per row block of the stream kernels: src/backend/row_blocks.rs STREAM_CAP. */
#define CSR_STREAM_CAP 2048

/* The value of the one row r0 (entries e0 .. e1, more than CSR_STREAM_CAP) of a row block:
 * pre[pre_off + r0] when it is longer than long_len (written by csr_long_rows), else the
 * group's strided sum. Every work-item gets it; called by the whole group (uniform branch). */
inline SCALAR csr_stream_wide_row(__global const uint *restrict col_idx,
                                  __global const SCALAR *restrict values,
                                  __global const SCALAR *x, const ulong x_off, const uint r0,
                                  const uint e0, const uint e1, const uint long_len,
                                  __global const SCALAR *pre, const ulong pre_off,
                                  __local SCALAR *scratch) {
    SCALAR v;
    if (e1 - e0 > long_len) {
        v = pre[pre_off + r0];
    } else {
        SCALAR sum = ZERO;
        for (uint j = e0 + get_local_id(0); j < e1; j += WG) {
            sum += MATRIX_LOAD_S(&values[j]) * GATHER_LOAD_S(&x[x_off + MATRIX_LOAD_U(&col_idx[j])]);
        }
        v = group_sum(scratch, sum);
    }
    return v;
}

/* Rows of a row block longer than this are summed by a team of work-items, shorter ones by one
 * work-item; a team is STREAM_TEAM work-items (see kernels-cu/spmv.cu for the threshold). */
#define CSR_STREAM_WARP_ROW 128
#define STREAM_TEAM (WG < 32 ? WG : 32)

/* Stage the products of entries e0 .. e1 (at most CSR_STREAM_CAP) in prod and clear the count
 * of team rows, then barrier. The loop has a fixed trip count so that every load of a
 * work-item is in flight at once. */
inline void csr_stream_stage(__global const uint *restrict col_idx,
                             __global const SCALAR *restrict values, const uint compact,
                             __global const ushort *restrict col_off, const uint base,
                             __global const SCALAR *x, const ulong x_off, const uint e0,
                             const uint e1, __local SCALAR *prod,
                             volatile __local uint *n_team_rows) {
    const uint lid = get_local_id(0);
    if (lid == 0) {
        *n_team_rows = 0;
    }
    if (compact) {
#pragma unroll
        for (uint s = 0; s < (CSR_STREAM_CAP + WG - 1) / WG; ++s) {
            const uint k = s * WG + lid;
            if (k < e1 - e0) {
                prod[k] = MATRIX_LOAD_S(&values[e0 + k]) * GATHER_LOAD_S(&x[x_off + base + MATRIX_LOAD_H(&col_off[e0 + k])]);
            }
        }
    } else {
#pragma unroll
        for (uint s = 0; s < (CSR_STREAM_CAP + WG - 1) / WG; ++s) {
            const uint k = s * WG + lid;
            if (k < e1 - e0) {
                prod[k] = MATRIX_LOAD_S(&values[e0 + k]) * GATHER_LOAD_S(&x[x_off + MATRIX_LOAD_U(&col_idx[e0 + k])]);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Sum every row r0 .. r1 of a staged block (entries from e0) into the slot of its first entry,
 * prod[row_ptr[row] - e0] (rows without entries have no slot): a row of at most
 * CSR_STREAM_WARP_ROW entries by its work-item in entry order, a longer one by a team (listed
 * in team_rows in any order: the row's sum does not depend on which team takes it). Called by
 * the whole group; `scratch` has WG entries. */
inline void csr_stream_sums(__global const uint *restrict row_ptr, const uint r0, const uint r1,
                            const uint e0, __local SCALAR *prod, __local uint *team_rows,
                            volatile __local uint *n_team_rows, __local SCALAR *scratch) {
    const uint lid = get_local_id(0);
    for (uint row = r0 + lid; row < r1; row += WG) {
        const uint b = row_ptr[row] - e0;
        const uint e = row_ptr[row + 1] - e0;
        if (e - b > CSR_STREAM_WARP_ROW) {
            team_rows[atomic_inc(n_team_rows)] = row;
        } else if (e > b) {
            SCALAR sum = ZERO;
            for (uint k = b; k < e; ++k) {
                sum += prod[k];
            }
            prod[b] = sum;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint count = *n_team_rows;
    const uint team = lid / STREAM_TEAM;
    const uint lane = lid % STREAM_TEAM;
    for (uint base = 0; base < count; base += WG / STREAM_TEAM) {
        const uint i = base + team;
        uint b = 0;
        SCALAR sum = ZERO;
        if (i < count) {
            const uint row = team_rows[i];
            const uint e = row_ptr[row + 1] - e0;
            b = row_ptr[row] - e0;
            for (uint k = b + lane; k < e; k += STREAM_TEAM) {
                sum += prod[k];
            }
        }
        scratch[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane == 0 && i < count) {
            SCALAR total = ZERO;
            for (uint l = 0; l < STREAM_TEAM; ++l) {
                total += scratch[lid + l];
            }
            prod[b] = total;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The sum of row `row` of a summed block (csr_stream_sums). */
inline SCALAR csr_stream_row(__global const uint *restrict row_ptr, const uint e0, const uint row,
                             __local const SCALAR *prod) {
    const uint b = row_ptr[row] - e0;
    return row_ptr[row + 1] - e0 > b ? prod[b] : ZERO;
}

/* Row block blk of a stream matrix: its rows r0 .. r1 and first entry e0. A block of more than
 * CSR_STREAM_CAP entries (one row) returns true with the row's value in *wide (every work-item;
 * csr_stream_wide_row); otherwise it stages the block and leaves its rows' sums in prod
 * (csr_stream_stage, csr_stream_sums) and returns false: the caller reads them with
 * csr_stream_row and ends with a barrier before the next block. Called by the whole group. */
inline bool csr_stream_block(__global const uint *restrict row_ptr,
                             __global const uint *restrict col_idx,
                             __global const SCALAR *restrict values,
                             __global const uint *restrict block_row, const uint blk,
                             const uint long_len, const uint compact,
                             __global const ushort *restrict col_off,
                             __global const uint *restrict block_col, __global const SCALAR *x,
                             const ulong x_off, __global const SCALAR *pre, const ulong pre_off,
                             __local SCALAR *prod, __local uint *team_rows,
                             volatile __local uint *n_team_rows, __local SCALAR *scratch,
                             uint *r0, uint *r1, uint *e0, SCALAR *wide) {
    *r0 = block_row[blk];
    *r1 = block_row[blk + 1];
    *e0 = row_ptr[*r0];
    const uint e1 = row_ptr[*r1];
    bool is_wide = e1 - *e0 > CSR_STREAM_CAP;
    if (is_wide) {
        *wide = csr_stream_wide_row(col_idx, values, x, x_off, *r0, *e0, e1, long_len, pre,
                                    pre_off, scratch);
    } else {
        csr_stream_stage(col_idx, values, compact, col_off, compact ? block_col[blk] : 0u, x,
                         x_off, *e0, e1, prod, n_team_rows);
        csr_stream_sums(row_ptr, *r0, *r1, *e0, prod, team_rows, n_team_rows, scratch);
    }
    return is_wide;
}

pk_kernel void spmv_dots_csr_stream(PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                   PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n_rows,
                   PK_GLOBAL_RESTRICT(const uint, block_row), const uint n_blocks,
                   const uint long_len, const uint compact,
                   PK_GLOBAL_RESTRICT(const ushort, col_off),
                   PK_GLOBAL_RESTRICT(const uint, block_col), PK_GLOBAL(const SCALAR, x),
                   const ulong x_off,
                   PK_GLOBAL(SCALAR, y), const ulong y_off,
                   PK_GLOBAL(const SCALAR, w0), const ulong w0_off,
                   PK_GLOBAL(const SCALAR, w1), const ulong w1_off,
                   PK_GLOBAL(SCALAR, partials), const int slot_yy, const int slot_w0,
                   const int slot_w1) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND_RESTRICT(const uint, block_row);
    PK_BIND_RESTRICT(const ushort, col_off);
    PK_BIND_RESTRICT(const uint, block_col);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    PK_BIND(const SCALAR, w0);
    PK_BIND(const SCALAR, w1);
    PK_BIND(SCALAR, partials);
    __local SCALAR prod[CSR_STREAM_CAP];
    __local uint team_rows[CSR_STREAM_CAP / (CSR_STREAM_WARP_ROW + 1) + 1];
    __local uint n_team_rows;
    __local SCALAR scratch[3 * WG];
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    (void)n_rows;
    for (uint blk = get_group_id(0); blk < n_blocks; blk += get_num_groups(0)) {
        uint r0, r1, e0;
        SCALAR wide;
        if (csr_stream_block(row_ptr, col_idx, values, block_row, blk, long_len, compact, col_off,
                             block_col, x, x_off, y, y_off, prod, team_rows, &n_team_rows,
                             scratch, &r0, &r1, &e0, &wide)) {
            if (get_local_id(0) == 0) {
                y[y_off + r0] = wide;
                row_dots(acc, wide, r0, w0, w0_off, w1, w1_off, slot_yy, slot_w0, slot_w1);
            }
        } else {
            for (uint row = r0 + get_local_id(0); row < r1; row += WG) {
                const SCALAR v = csr_stream_row(row_ptr, e0, row, prod);
                y[y_off + row] = v;
                row_dots(acc, v, row, w0, w0_off, w1, w1_off, slot_yy, slot_w0, slot_w1);
            }
            barrier(CLK_LOCAL_MEM_FENCE); /* prod is restaged by the next block */
        }
    }
    finish_dots(scratch, acc, partials, slot_yy, slot_w0, slot_w1);
}

pk_kernel void residual_csr_stream(PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                  PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n_rows,
                  PK_GLOBAL_RESTRICT(const uint, block_row), const uint n_blocks,
                  const uint long_len, const uint compact,
                  PK_GLOBAL_RESTRICT(const ushort, col_off),
                  PK_GLOBAL_RESTRICT(const uint, block_col), PK_GLOBAL(const SCALAR, x),
                  PK_GLOBAL(const SCALAR, b),
                  PK_GLOBAL(SCALAR, r),
                  PK_GLOBAL(SCALAR, partials), const int slot_rr) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND_RESTRICT(const uint, block_row);
    PK_BIND_RESTRICT(const ushort, col_off);
    PK_BIND_RESTRICT(const uint, block_col);
    PK_BIND(const SCALAR, x);
    PK_BIND(const SCALAR, b);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, partials);
    __local SCALAR prod[CSR_STREAM_CAP];
    __local uint team_rows[CSR_STREAM_CAP / (CSR_STREAM_WARP_ROW + 1) + 1];
    __local uint n_team_rows;
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    (void)n_rows;
    for (uint blk = get_group_id(0); blk < n_blocks; blk += get_num_groups(0)) {
        uint r0, r1, e0;
        SCALAR wide;
        if (csr_stream_block(row_ptr, col_idx, values, block_row, blk, long_len, compact, col_off,
                             block_col, x, 0, r, 0, prod, team_rows, &n_team_rows, scratch, &r0,
                             &r1, &e0, &wide)) {
            if (get_local_id(0) == 0) {
                const SCALAR ri = b[r0] - wide;
                r[r0] = ri;
                acc += ri * ri;
            }
        } else {
            for (uint row = r0 + get_local_id(0); row < r1; row += WG) {
                const SCALAR ri = b[row] - csr_stream_row(row_ptr, e0, row, prod);
                r[row] = ri;
                acc += ri * ri;
            }
            barrier(CLK_LOCAL_MEM_FENCE); /* prod is restaged by the next block */
        }
    }
    if (slot_rr >= 0) {
        acc = group_sum(scratch, acc);
        write_partial(partials, (uint)slot_rr, acc);
    }
}

/* Long rows, step 1: the sum of each chunk of a long row, one work-group per chunk
 * (fixed-order group reduction). */
pk_kernel void csr_long_chunks(PK_GLOBAL_RESTRICT(const uint, col_idx), PK_GLOBAL_RESTRICT(const SCALAR, values),
                     PK_GLOBAL_RESTRICT(const uint, chunk_begin),
                     PK_GLOBAL_RESTRICT(const uint, chunk_end), const uint n_chunks,
                     PK_GLOBAL(const SCALAR, x), const ulong x_off,
                     PK_GLOBAL(SCALAR, chunk_sums)) {
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND_RESTRICT(const uint, chunk_begin);
    PK_BIND_RESTRICT(const uint, chunk_end);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, chunk_sums);
    __local SCALAR scratch[WG];
    for (uint c = get_group_id(0); c < n_chunks; c += get_num_groups(0)) {
        const uint end = chunk_end[c];
        SCALAR sum = ZERO;
        for (uint j = chunk_begin[c] + get_local_id(0); j < end; j += WG) {
            sum += MATRIX_LOAD_S(&values[j]) * GATHER_LOAD_S(&x[x_off + MATRIX_LOAD_U(&col_idx[j])]);
        }
        sum = group_sum(scratch, sum);
        if (get_local_id(0) == 0) {
            chunk_sums[c] = sum;
        }
    }
}

/* Long rows, step 2: y[y_off + rows[i]] = the chunk sums of long row i added in chunk order. */
pk_kernel void csr_long_rows(PK_GLOBAL_RESTRICT(const uint, rows), PK_GLOBAL_RESTRICT(const uint, chunk_ptr),
                   const uint n_long, PK_GLOBAL_RESTRICT(const SCALAR, chunk_sums),
                   PK_GLOBAL(SCALAR, y), const ulong y_off) {
    PK_BIND_RESTRICT(const uint, rows);
    PK_BIND_RESTRICT(const uint, chunk_ptr);
    PK_BIND_RESTRICT(const SCALAR, chunk_sums);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n_long) {
        const uint end = chunk_ptr[i + 1];
        SCALAR sum = ZERO;
        for (uint c = chunk_ptr[i]; c < end; ++c) {
            sum += chunk_sums[c];
        }
        y[y_off + rows[i]] = sum;
    }
}

pk_kernel void spmv_dots_sell(const uint c, PK_GLOBAL_RESTRICT(const uint, slice_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                    PK_GLOBAL_RESTRICT(const SCALAR, values), PK_GLOBAL_RESTRICT(const uint, row_perm),
                    PK_GLOBAL_RESTRICT(const uint, row_len), const uint n_rows, const uint compact,
                    PK_GLOBAL_RESTRICT(const ushort, col_off),
                    PK_GLOBAL_RESTRICT(const uint, slice_col),
                    PK_GLOBAL(const SCALAR, x), const ulong x_off,
                    PK_GLOBAL(SCALAR, y), const ulong y_off,
                    PK_GLOBAL(const SCALAR, w0), const ulong w0_off,
                    PK_GLOBAL(const SCALAR, w1), const ulong w1_off,
                    PK_GLOBAL(SCALAR, partials), const int slot_yy, const int slot_w0,
                    const int slot_w1) {
    PK_BIND_RESTRICT(const uint, slice_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND_RESTRICT(const uint, row_perm);
    PK_BIND_RESTRICT(const uint, row_len);
    PK_BIND_RESTRICT(const ushort, col_off);
    PK_BIND_RESTRICT(const uint, slice_col);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    PK_BIND(const SCALAR, w0);
    PK_BIND(const SCALAR, w1);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    FOR_EACH(p, n_rows) {
        const SCALAR v = sell_row(c, slice_ptr, col_idx, values, row_len, compact, col_off, slice_col, x, x_off, p);
        const uint row = row_perm[p];
        y[y_off + row] = v;
        row_dots(acc, v, row, w0, w0_off, w1, w1_off, slot_yy, slot_w0, slot_w1);
    }
    finish_dots(scratch, acc, partials, slot_yy, slot_w0, slot_w1);
}

pk_kernel void residual_sell(const uint c, PK_GLOBAL_RESTRICT(const uint, slice_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                   PK_GLOBAL_RESTRICT(const SCALAR, values), PK_GLOBAL_RESTRICT(const uint, row_perm),
                   PK_GLOBAL_RESTRICT(const uint, row_len), const uint n_rows, const uint compact,
                   PK_GLOBAL_RESTRICT(const ushort, col_off),
                   PK_GLOBAL_RESTRICT(const uint, slice_col),
                   PK_GLOBAL(const SCALAR, x), PK_GLOBAL(const SCALAR, b), PK_GLOBAL(SCALAR, r),
                   PK_GLOBAL(SCALAR, partials), const int slot_rr) {
    PK_BIND_RESTRICT(const uint, slice_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND_RESTRICT(const uint, row_perm);
    PK_BIND_RESTRICT(const uint, row_len);
    PK_BIND_RESTRICT(const ushort, col_off);
    PK_BIND_RESTRICT(const uint, slice_col);
    PK_BIND(const SCALAR, x);
    PK_BIND(const SCALAR, b);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    FOR_EACH(p, n_rows) {
        const SCALAR v = sell_row(c, slice_ptr, col_idx, values, row_len, compact, col_off, slice_col, x, 0, p);
        const uint row = row_perm[p];
        const SCALAR ri = b[row] - v;
        r[row] = ri;
        acc += ri * ri;
    }
    if (slot_rr >= 0) {
        acc = group_sum(scratch, acc);
        write_partial(partials, (uint)slot_rr, acc);
    }
}

pk_kernel void spmv_dots_bsr(const uint bs, PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                   PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n_rows,
                   PK_GLOBAL(const SCALAR, x), const ulong x_off,
                   PK_GLOBAL(SCALAR, y), const ulong y_off,
                   PK_GLOBAL(const SCALAR, w0), const ulong w0_off,
                   PK_GLOBAL(const SCALAR, w1), const ulong w1_off,
                   PK_GLOBAL(SCALAR, partials), const int slot_yy, const int slot_w0,
                   const int slot_w1) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    PK_BIND(const SCALAR, w0);
    PK_BIND(const SCALAR, w1);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    FOR_EACH(row, n_rows) {
        const SCALAR v = bsr_row(bs, row_ptr, col_idx, values, x, x_off, row);
        y[y_off + row] = v;
        row_dots(acc, v, row, w0, w0_off, w1, w1_off, slot_yy, slot_w0, slot_w1);
    }
    finish_dots(scratch, acc, partials, slot_yy, slot_w0, slot_w1);
}

pk_kernel void residual_bsr(const uint bs, PK_GLOBAL_RESTRICT(const uint, row_ptr), PK_GLOBAL_RESTRICT(const uint, col_idx),
                  PK_GLOBAL_RESTRICT(const SCALAR, values), const uint n_rows,
                  PK_GLOBAL(const SCALAR, x), PK_GLOBAL(const SCALAR, b), PK_GLOBAL(SCALAR, r),
                  PK_GLOBAL(SCALAR, partials), const int slot_rr) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(const SCALAR, x);
    PK_BIND(const SCALAR, b);
    PK_BIND(SCALAR, r);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    FOR_EACH(row, n_rows) {
        const SCALAR v = bsr_row(bs, row_ptr, col_idx, values, x, 0, row);
        const SCALAR ri = b[row] - v;
        r[row] = ri;
        acc += ri * ri;
    }
    if (slot_rr >= 0) {
        acc = group_sum(scratch, acc);
        write_partial(partials, (uint)slot_rr, acc);
    }
}
