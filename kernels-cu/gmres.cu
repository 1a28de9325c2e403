/*
 * gmres.cu -- Krylov-basis kernels of pipelined GMRES ([Rupp16], Alg. 6) and the batched
 * operations of [Ma21a] (batched dots, VecAXPYKernel_j). Mirrors kernels-cl/gmres.cl (same
 * names, same argument order); conventions in reduce.cu.
 *
 * The basis holds `cols` columns of length n contiguously: column j starts at (ulong)j * n.
 *
 *   basis_dots         (const SCALAR* basis, uint n, uint w, uint first_col, uint count,
 *                       SCALAR* partials, uint first_slot)
 *       partial <v_{first_col+t}, v_w> into slot first_slot + t, t < count, in one pass over
 *       v_w for up to DOTS_PER_PASS (= 4 * WG / 32 = 32) columns: each block stages a tile of
 *       WG entries of v_w in shared memory, and each warp owns up to 4 of the columns (its lanes
 *       read them coalesced), so a column's partial is a single warp's sum.
 *   gmres_gram_schmidt (SCALAR* basis, uint n, uint i, SCALAR* partials, uint first_slot,
 *                       uint norm_slot, SCALAR* rmat, ulong r_off)
 *       every block finishes R_{j,i} = slot_sum(first_slot + j - 1), j = 1 .. i-1 (in parallel
 *       over j, WG at a time, into shared memory); block 0 stores R_{j,i} at rmat[r_off + j - 1]
 *       (r_off = (i-1) ld); v_i -= sum_j R_{j,i} v_j (j ascending); partial <v_i, v_i> into
 *       norm_slot (the host guarantees norm_slot is not one of the read slots).
 *   gmres_normalize    (SCALAR* basis, uint n, uint i, const SCALAR* partials,
 *                       uint read_groups, uint norm_slot, SCALAR* rmat, ulong r_idx,
 *                       SCALAR* xi_partials, uint xi_slot)
 *       every block finishes nrm = sqrt(slot_sum(partials, read_groups, norm_slot)); block 0
 *       stores it at rmat[r_idx] (r_idx = (i-1) + (i-1) ld); v_i *= 1/nrm (unchanged when nrm
 *       is not > 0); partial <v_0, v_i> into xi_slot of xi_partials (xi_partials.groups()
 *       blocks).
 *   basis_axpy         (SCALAR* basis, uint n, uint dst, uint src, SCALAR alpha)
 *       v_dst += alpha v_src (dst != src)
 *   basis_scale        (SCALAR* basis, uint n, uint col, SCALAR alpha)        v_col *= alpha
 *   basis_load         (SCALAR* basis, uint n, uint col, const SCALAR* src, SCALAR alpha)
 *       v_col = alpha src
 *   basis_load_normalized (SCALAR* basis, uint n, uint col, const SCALAR* src,
 *                       const SCALAR* partials, uint groups, uint slot, SCALAR* out,
 *                       ulong out_off)
 *       GMRES's restart on the device (Alg. 6 lines 3-4): every block finishes
 *       rho = ||src|| from the `groups` partials of `slot` in the finish order in double (the host's
 *       finish and norm, so the same bits), block 0 stores rho rounded to SCALAR at
 *       out[out_off], and v_col = (SCALAR)(1 / rho) src
 *   basis_store        (const SCALAR* basis, uint n, uint col, SCALAR* dst)   dst = v_col
 *   multi_axpy         (SCALAR* y, const SCALAR* basis, uint n, uint first_col, uint count,
 *                       const SCALAR* coeffs)
 *       y += sum_t coeffs[t] v_{first_col+t} (t ascending), one pass over y
 */

#define DOTS_PER_WARP 4
#define DOTS_PER_PASS (DOTS_PER_WARP * WARPS)

extern "C" __launch_bounds__(WG) __global__ void basis_dots(const SCALAR *basis, const uint n, const uint w, const uint first_col,
           const uint count, SCALAR *partials, const uint first_slot) {
    PDL_WAIT();
    __shared__ SCALAR tile[WG];
    const SCALAR *vw = basis + (ulong)w * n;
    const uint lane = threadIdx.x & 31u;
    const uint warp = threadIdx.x >> 5;
    for (uint j0 = 0; j0 < count; j0 += DOTS_PER_PASS) {
        SCALAR acc[DOTS_PER_WARP];
#pragma unroll
        for (int c = 0; c < DOTS_PER_WARP; ++c) {
            acc[c] = ZERO;
        }
        /* Tiles of WG entries, grid-stride (block-uniform loop). */
        for (uint t0 = blockIdx.x * (uint)WG; t0 < n; t0 += GRID_STRIDE) {
            const uint e = t0 + threadIdx.x;
            __syncthreads(); /* the previous tile is consumed */
            tile[threadIdx.x] = e < n ? vw[e] : ZERO;
            __syncthreads();
            const uint len = min((uint)WG, n - t0);
#pragma unroll
            for (int c = 0; c < DOTS_PER_WARP; ++c) {
                const uint j = j0 + warp + (uint)c * WARPS;
                if (j < count) {
                    const SCALAR *vj = basis + (ulong)(first_col + j) * n + t0;
#pragma unroll
                    for (uint q = lane; q < (uint)WG; q += 32) {
                        if (q < len) {
                            acc[c] += vj[q] * tile[q];
                        }
                    }
                }
            }
        }
        /* Every column belongs to one warp: a warp sum is the block's partial. */
#pragma unroll
        for (int c = 0; c < DOTS_PER_WARP; ++c) {
            const uint j = j0 + warp + (uint)c * WARPS;
            const SCALAR s = warp_sum(acc[c]);
            if (lane == 0 && j < count) {
                partials[(ulong)(first_slot + j) * gridDim.x + blockIdx.x] = s;
            }
        }
    }
}

extern "C" __launch_bounds__(WG) __global__ void gmres_gram_schmidt(SCALAR *basis, const uint n, const uint i, SCALAR *partials,
                   const uint first_slot, const uint norm_slot, SCALAR *rmat, const ulong r_off) {
    PDL_WAIT();
    __shared__ SCALAR coef[WG];
    const uint groups = gridDim.x;
    const uint ncoef = i - 1; /* R_{1,i} .. R_{i-1,i} */
    const uint nchunks = ncoef == 0 ? 1 : (ncoef + WG - 1) / WG;
    SCALAR *vi = basis + (ulong)i * n;
    SCALAR acc = ZERO;
    for (uint c = 0; c < nchunks; ++c) {
        const uint c0 = c * WG;
        const uint m = min((uint)WG, ncoef - c0);
        __syncthreads(); /* the previous chunk is done with coef */
        if (threadIdx.x < m) {
            const SCALAR rji = slot_sum(partials, groups, first_slot + c0 + threadIdx.x);
            coef[threadIdx.x] = rji;
            if (blockIdx.x == 0) {
                rmat[r_off + c0 + threadIdx.x] = rji;
            }
        }
        __syncthreads();
        const bool last = c + 1 == nchunks;
        /* columns v_{c0+1} .. v_{c0+m} */
        const SCALAR *vj0 = basis + (ulong)(c0 + 1) * n;
        for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
            SCALAR v = vi[e];
            const SCALAR *vj = vj0 + e; /* v_{c0+1+t}[e], t = 0, 1, ... */
            for (uint t = 0; t < m; ++t, vj += n) {
                v -= coef[t] * *vj;
            }
            vi[e] = v;
            if (last) {
                acc += v * v;
            }
        }
    }
    write_partial(partials, norm_slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void gmres_normalize(SCALAR *basis, const uint n, const uint i, const SCALAR *partials,
                const uint read_groups, const uint norm_slot, SCALAR *rmat, const ulong r_idx,
                SCALAR *xi_partials, const uint xi_slot) {
    PDL_WAIT();
    __shared__ SCALAR inv_shared;
    if (threadIdx.x == 0) {
        const SCALAR nrm = sqrt(slot_sum(partials, read_groups, norm_slot));
        if (blockIdx.x == 0) {
            rmat[r_idx] = nrm;
        }
        inv_shared = nrm > ZERO ? (SCALAR)1 / nrm : (SCALAR)1;
    }
    __syncthreads();
    const SCALAR inv = inv_shared;
    const SCALAR *v0 = basis;
    SCALAR *vi = basis + (ulong)i * n;
    SCALAR acc = ZERO;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        const SCALAR v = vi[e] * inv;
        vi[e] = v;
        acc += v0[e] * v;
    }
    write_partial(xi_partials, xi_slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void basis_axpy(SCALAR *basis, const uint n, const uint dst, const uint src, const SCALAR alpha) {
    PDL_WAIT();
    SCALAR *vd = basis + (ulong)dst * n;
    const SCALAR *vs = basis + (ulong)src * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        vd[e] += alpha * vs[e];
    }
}

extern "C" __launch_bounds__(WG) __global__ void basis_scale(SCALAR *basis, const uint n, const uint col, const SCALAR alpha) {
    PDL_WAIT();
    SCALAR *v = basis + (ulong)col * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        v[e] *= alpha;
    }
}

extern "C" __launch_bounds__(WG) __global__ void basis_load(SCALAR *basis, const uint n, const uint col, const SCALAR *src, const SCALAR alpha) {
    PDL_WAIT();
    SCALAR *v = basis + (ulong)col * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        v[e] = alpha * src[e];
    }
}

extern "C" __launch_bounds__(WG) __global__ void basis_load_normalized(SCALAR *basis, const uint n, const uint col,
                                                                       const SCALAR *src, const SCALAR *partials,
                                                                       const uint groups, const uint slot,
                                                                       SCALAR *out, const ulong out_off) {
    PDL_WAIT();
    __shared__ double sums[1];
    ordered_slot_sums(partials, groups, 1u, slot, 0u, 0u, 0u, 0u, sums);
    __syncthreads();
    const double sq = sums[0];
    const double rho = isnan(sq) ? sq : __dsqrt_rn(fmax(sq, 0.0));
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[out_off] = (SCALAR)rho;
    }
    const SCALAR alpha = (SCALAR)__ddiv_rn(1.0, rho);
    SCALAR *v = basis + (ulong)col * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        v[e] = alpha * src[e];
    }
}

extern "C" __launch_bounds__(WG) __global__ void basis_store(const SCALAR *basis, const uint n, const uint col, SCALAR *dst) {
    PDL_WAIT();
    const SCALAR *v = basis + (ulong)col * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        dst[e] = v[e];
    }
}

extern "C" __launch_bounds__(WG) __global__ void multi_axpy(SCALAR *y, const SCALAR *basis, const uint n, const uint first_col, const uint count,
           const SCALAR *coeffs) {
    PDL_WAIT();
    const SCALAR *v0 = basis + (ulong)first_col * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        SCALAR acc = y[e];
        for (uint t = 0; t < count; ++t) {
            acc += coeffs[t] * v0[(ulong)t * n + e];
        }
        y[e] = acc;
    }
}

/* The block's partials of the columns its warps summed: column j = warp + c WARPS into slot j
 * of pa (j < count_a) and of pb (j < count_b) (basis_dots2 and gmres_dcgs2_spmv_dots). */
__device__ __forceinline__ void write_column_partials(SCALAR (&acc_a)[DOTS_PER_WARP], SCALAR (&acc_b)[DOTS_PER_WARP],
                                                      const uint j0, const uint count_a, const uint count_b,
                                                      SCALAR *pa, SCALAR *pb) {
    const uint lane = threadIdx.x & 31u;
    const uint warp = threadIdx.x >> 5;
#pragma unroll
    for (int c = 0; c < DOTS_PER_WARP; ++c) {
        const uint j = j0 + warp + (uint)c * WARPS;
        const SCALAR sa = warp_sum(acc_a[c]);
        const SCALAR sb = warp_sum(acc_b[c]);
        if (lane == 0 && j < count_a) {
            pa[(ulong)j * gridDim.x + blockIdx.x] = sa;
        }
        if (lane == 0 && j < count_b) {
            pb[(ulong)j * gridDim.x + blockIdx.x] = sb;
        }
    }
}

/* gmres_dcgs2_spmv_dots (const uint* row_ptr, const uint* col_idx, const SCALAR* values, uint k,
 *                        uint early, SCALAR* basis, uint n, uint ucol, SCALAR* pa, SCALAR* pb):
 * one DCGS2
 * step's product and dots in one launch (see kernels-cl/gmres.cl), for a CSR matrix without long
 * rows (k threads per row, as spmv_dots_csr) and ucol <= DOTS_PER_PASS: w = A u (u = column
 * ucol, w = column ucol + 1) with d = <u, w> into slot ucol - 1 of pb, and basis_dots2's dots
 * a_j = <v_j, u> (columns 1..ucol, slots 0..ucol-1 of pa) and c_j = <v_j, w> (columns
 * 1..ucol-1, slots 0.. of pb). Each block computes WG / k rows of w per step into a shared tile
 * with the same rows of u; its warps then take the columns over the tile as basis_dots2 does.
 * Launched with the partials' block count. early: as spmv_dots_csr's (the first row of each
 * thread read by csr_first_then_wait). */
/* One tile of dcgs2_spmv_dots_rows: the rows t0 .. t0 + WG / K - 1 of w (v: this thread's row
 * sum, valid on the row's leader) stored with <u, w>, then both tiles against the basis columns. */
__device__ __forceinline__ void dcgs2_spmv_dots_tile(const SCALAR v, const uint t0, const SCALAR *basis,
                                                     const SCALAR *u, SCALAR *w, const uint n,
                                                     const uint rows, const uint slot_in_tile,
                                                     const uint count_a, const bool leader, SCALAR *tile_u, SCALAR *tile_w,
                                                     SCALAR (&acc_a)[DOTS_PER_WARP],
                                                     SCALAR (&acc_b)[DOTS_PER_WARP], SCALAR &acc_d) {
    const uint lane = threadIdx.x & 31u;
    const uint warp = threadIdx.x >> 5;
    const uint row = t0 + slot_in_tile;
    __syncthreads(); /* the previous tile is consumed */
    if (leader) {
        SCALAR ur = ZERO;
        SCALAR wr = ZERO;
        if (row < n) {
            w[row] = v;
            ur = u[row];
            wr = v;
            acc_d += v * ur;
        }
        tile_u[slot_in_tile] = ur;
        tile_w[slot_in_tile] = wr;
    }
    __syncthreads();
    const uint len = min(rows, n - t0);
#pragma unroll
    for (int c = 0; c < DOTS_PER_WARP; ++c) {
        const uint j = warp + (uint)c * WARPS;
        if (j < count_a) {
            const SCALAR *vj = basis + (ulong)(1 + j) * n + t0;
            for (uint q = lane; q < len; q += 32) {
                const SCALAR x = vj[q];
                acc_a[c] += x * tile_u[q];
                acc_b[c] += x * tile_w[q];
            }
        }
    }
}

template <uint K>
__device__ __forceinline__ void dcgs2_spmv_dots_rows(const uint *__restrict__ row_ptr,
                                                     const uint *__restrict__ col_idx,
                                                     const SCALAR *__restrict__ values, const uint early,
                                                     SCALAR *basis, const uint n, const uint ucol, SCALAR *pa,
                                                     SCALAR *pb) {
    const CsrFirst f =
        csr_first_then_wait<K>(row_ptr, col_idx, values, blockIdx.x * (WG / K) + threadIdx.x / K, n, early);
    __shared__ SCALAR tile_u[WG];
    __shared__ SCALAR tile_w[WG];
    const uint count_a = ucol;
    const uint count_b = ucol - 1;
    const SCALAR *u = basis + (ulong)ucol * n;
    SCALAR *w = basis + (ulong)(ucol + 1) * n;
    const uint rows = WG / K;
    const uint slot_in_tile = threadIdx.x / K;
    const bool leader = (threadIdx.x & (K - 1)) == 0;
    SCALAR acc_a[DOTS_PER_WARP];
    SCALAR acc_b[DOTS_PER_WARP];
#pragma unroll
    for (int c = 0; c < DOTS_PER_WARP; ++c) {
        acc_a[c] = ZERO;
        acc_b[c] = ZERO;
    }
    SCALAR acc_d = ZERO;
    /* The first tile from the rows read by csr_first_then_wait, outside the loop: f's registers
     * are free for the rest (inside the loop they were live throughout: 128 registers instead of
     * 64, and the kernel ran 13% slower at 4M-17M rows on the H200). */
    {
        const uint t0 = blockIdx.x * rows;
        if (t0 < n) {
            const SCALAR v = csr_row_first<K>(f, col_idx, values, u, t0 + slot_in_tile, n, 0xffffffffu, w);
            dcgs2_spmv_dots_tile(v, t0, basis, u, w, n, rows, slot_in_tile, count_a, leader, tile_u, tile_w,
                                 acc_a, acc_b, acc_d);
        }
    }
    for (uint t0 = (blockIdx.x + gridDim.x) * rows; t0 < n; t0 += gridDim.x * rows) {
        const SCALAR v = csr_row<K>(row_ptr, col_idx, values, u, t0 + slot_in_tile, n, 0xffffffffu, w);
        dcgs2_spmv_dots_tile(v, t0, basis, u, w, n, rows, slot_in_tile, count_a, leader, tile_u, tile_w, acc_a,
                             acc_b, acc_d);
    }
    write_column_partials(acc_a, acc_b, 0, count_a, count_b, pa, pb);
    write_partial(pb, count_a - 1, block_sum1(acc_d));
}

extern "C" __launch_bounds__(WG) __global__ void gmres_dcgs2_spmv_dots(const uint *__restrict__ row_ptr,
                                                                       const uint *__restrict__ col_idx,
                                                                       const SCALAR *__restrict__ values, const uint k,
                                                                       const uint early, SCALAR *basis, const uint n,
                                                                       const uint ucol, SCALAR *pa, SCALAR *pb) {
    /* PDL_WAIT() in csr_first_then_wait: the matrix may be read first. */
#define DCGS2_SPMV_CASE(K)                                                               \
    case K:                                                                              \
        dcgs2_spmv_dots_rows<K>(row_ptr, col_idx, values, early, basis, n, ucol, pa, pb); \
        break;
    switch (k) {
        DCGS2_SPMV_CASE(2)
        DCGS2_SPMV_CASE(4)
        DCGS2_SPMV_CASE(8)
        DCGS2_SPMV_CASE(16)
        DCGS2_SPMV_CASE(32)
    default:
        dcgs2_spmv_dots_rows<1>(row_ptr, col_idx, values, early, basis, n, ucol, pa, pb);
        break;
    }
#undef DCGS2_SPMV_CASE
}

/* gmres_dcgs2_spmv_dots_sell (uint c, const uint* slice_ptr, const uint* col_idx,
 *                             const SCALAR* values, const uint* row_perm, const uint* row_len,
 *                             uint n, uint compact, const ushort* col_off, const uint* slice_col,
 *                             SCALAR* basis, uint ucol, SCALAR* pa, SCALAR* pb):
 * gmres_dcgs2_spmv_dots for a SELL-C-sigma matrix whose sorting window divides WG (or is 1),
 * so the WG sorted positions of a block's tile hold the rows of the same range: thread t sums
 * the row at position t0 + t (as spmv_dots_sell) and stages it in the tile at its row's place,
 * then the block's warps take the columns over the tile (dcgs2_spmv_dots_tile). The same
 * results and slots as the CSR kernel; ucol <= DOTS_PER_PASS. Launched with the partials'
 * block count. */
extern "C" __launch_bounds__(WG) __global__ void gmres_dcgs2_spmv_dots_sell(
    const uint c, const uint *__restrict__ slice_ptr, const uint *__restrict__ col_idx,
    const SCALAR *__restrict__ values, const uint *__restrict__ row_perm, const uint *__restrict__ row_len,
    const uint n, const uint compact, const ushort *__restrict__ col_off, const uint *__restrict__ slice_col,
    SCALAR *basis, const uint ucol, SCALAR *pa, SCALAR *pb) {
    PDL_WAIT();
    __shared__ SCALAR tile_u[WG];
    __shared__ SCALAR tile_w[WG];
    const uint count_a = ucol;
    const uint count_b = ucol - 1;
    const SCALAR *u = basis + (ulong)ucol * n;
    SCALAR *w = basis + (ulong)(ucol + 1) * n;
    SCALAR acc_a[DOTS_PER_WARP];
    SCALAR acc_b[DOTS_PER_WARP];
#pragma unroll
    for (int k = 0; k < DOTS_PER_WARP; ++k) {
        acc_a[k] = ZERO;
        acc_b[k] = ZERO;
    }
    SCALAR acc_d = ZERO;
    for (uint t0 = blockIdx.x * WG; t0 < n; t0 += gridDim.x * WG) {
        const uint p = t0 + threadIdx.x;
        SCALAR v = ZERO;
        /* A position past n stages a zero at its own place, which no row of the tile takes. */
        uint slot = threadIdx.x;
        if (p < n) {
            v = sell_row(c, slice_ptr, col_idx, values, row_len, compact, col_off, slice_col, u, p);
            slot = row_perm[p] - t0;
        }
        dcgs2_spmv_dots_tile(v, t0, basis, u, w, n, WG, slot, count_a, true, tile_u, tile_w, acc_a, acc_b,
                             acc_d);
    }
    write_column_partials(acc_a, acc_b, 0, count_a, count_b, pa, pb);
    write_partial(pb, count_a - 1, block_sum1(acc_d));
}

/* gmres_dcgs2_finish (const SCALAR* pa, const SCALAR* pc, uint read_groups, uint count,
 *                     SCALAR* coef, ulong coef_off): the sums of one DCGS2 step, one block per
 * slot (tree order, deterministic), see kernels-cl/gmres.cl. Grid: 2 (count + 1) blocks. */
extern "C" __launch_bounds__(WG) __global__ void gmres_dcgs2_finish(const SCALAR *pa, const SCALAR *pc,
                                                                    const uint read_groups, const uint count,
                                                                    SCALAR *coef, const ulong coef_off) {
    PDL_WAIT();
    const uint b = blockIdx.x;
    const bool second = b > count; /* blocks 0..count: pa, count+1..2count+1: pc */
    const uint slot = second ? b - count - 1 : b;
    const SCALAR *p = (second ? pc : pa) + (ulong)slot * read_groups;
    SCALAR acc = ZERO;
    for (uint g = threadIdx.x; g < read_groups; g += WG) {
        acc += p[g];
    }
    acc = block_sum1(acc);
    if (threadIdx.x == 0) {
        /* a_k at k, c_k at count + k; nu at 2 count + 2, d at 2 count + 3 */
        const ulong at = slot < count ? (second ? count + slot : slot) : (second ? 2 * count + 3 : 2 * count + 2);
        coef[coef_off + at] = acc;
    }
}

/* The column pass of a DCGS2 step over columns c0 + 1 .. c0 + m (coefficients ca, cc), on the
 * last chunk also the scaling (see kernels-cl/gmres.cl). */
__device__ __forceinline__ void dcgs2_columns(SCALAR *basis, const uint n, const uint ucol, const uint c0,
                                              const uint m, const bool last, const SCALAR inv, const SCALAR g,
                                              const SCALAR *ca, const SCALAR *cc) {
    SCALAR *u = basis + (ulong)ucol * n;
    SCALAR *w = u + n;
    const SCALAR *vj0 = basis + (ulong)(c0 + 1) * n;
    for (uint e = GRID_START; e < n; e += GRID_STRIDE) {
        SCALAR uu = u[e];
        SCALAR ww = w[e];
        const SCALAR *vj = vj0 + e;
        for (uint t = 0; t < m; ++t, vj += n) {
            const SCALAR q = *vj;
            uu -= ca[t] * q;
            ww -= cc[t] * q;
        }
        if (last) {
            uu *= inv;
            ww = (ww - g * uu) * inv;
        }
        u[e] = uu;
        w[e] = ww;
    }
}

/* The end of a DCGS2 step's coefficients (one work-item): beta = sqrt(nu - |a|^2) (NaN stays
 * NaN, a negative rounding is 0) and g = (d - a.c) / beta from s_aa = |a|^2 and s_ac = a.c, into
 * shared[0..2] and, by the first group, coef[coef_off + 2 count ..] (gmres_dcgs2_update and
 * gmres_dcgs2_update_small). */
__device__ __forceinline__ void dcgs2_beta_g(const SCALAR s_aa, const SCALAR s_ac, const SCALAR nu, const SCALAR d, const uint count,
                         SCALAR *coef, const ulong coef_off, SCALAR *shared) {
    const SCALAR b2 = nu - s_aa;
    const SCALAR beta = b2 > ZERO ? sqrt(b2) : (isnan(b2) ? b2 : ZERO);
    const SCALAR g = beta > ZERO ? (d - s_ac) / beta : ZERO;
    shared[0] = beta;
    shared[1] = g;
    if (blockIdx.x == 0) {
        coef[coef_off + 2 * count] = beta;
        coef[coef_off + 2 * count + 1] = g;
    }
}

/* gmres_dcgs2_update (SCALAR* basis, uint n, uint ucol, SCALAR* coef, ulong coef_off,
 *                     uint start_next): one DCGS2 Arnoldi step from the sums gmres_dcgs2_finish
 * left in coef, see kernels-cl/gmres.cl. Launched with the partials' block count. start_next:
 * let the next kernel (the fused product, which reads its matrix before its wait) be scheduled
 * right after this kernel's wait (DCGS2_START_NEXT). The host sets it only where both grids fit
 * on separate multiprocessors: with the product's blocks sharing the multiprocessors of this
 * one's, GMRES(30) was 2-3 us per iteration slower at n = 32K-65K (BENCHMARKS.md, 2026-11-27). */
#define DCGS2_START_NEXT(start_next) \
    do {                             \
        PDL_WAIT();                  \
        if (start_next) {            \
            PDL_START_NEXT();        \
        }                            \
    } while (0)
extern "C" __launch_bounds__(WG) __global__ void gmres_dcgs2_update(SCALAR *basis, const uint n, const uint ucol,
                                                                    SCALAR *coef, const ulong coef_off,
                                                                    const uint start_next) {
    DCGS2_START_NEXT(start_next);
    __shared__ SCALAR ca[WG];
    __shared__ SCALAR cc[WG];
    __shared__ SCALAR shared[2];
    const uint lid = threadIdx.x;
    const uint count = ucol - 1;
    const SCALAR *co = coef + coef_off;
    if (lid == 0) {
        SCALAR s_aa = ZERO, s_ac = ZERO;
        for (uint k = 0; k < count; ++k) {
            const SCALAR a = co[k];
            s_aa += a * a;
            s_ac += a * co[count + k];
        }
        dcgs2_beta_g(s_aa, s_ac, co[2 * count + 2], co[2 * count + 3], count, coef, coef_off, shared);
    }
    __syncthreads();
    const SCALAR beta = shared[0];
    const SCALAR g = shared[1];
    if (!(beta > ZERO)) {
        return; /* breakdown: the vectors stay as they are */
    }
    const SCALAR inv = (SCALAR)1 / beta;
    const uint nchunks = count == 0 ? 1 : (count + WG - 1) / WG;
    for (uint ch = 0; ch < nchunks; ++ch) {
        const uint c0 = ch * WG;
        const uint m = count == 0 ? 0 : min((uint)WG, count - c0);
        __syncthreads();
        if (lid < m) {
            ca[lid] = co[c0 + lid];
            cc[lid] = co[count + c0 + lid];
        }
        __syncthreads();
        dcgs2_columns(basis, n, ucol, c0, m, ch + 1 == nchunks, inv, g, ca, cc);
    }
}

/* gmres_dcgs2_update_small (SCALAR* basis, uint n, uint ucol, const SCALAR* pa,
 *                           const SCALAR* pc, SCALAR* coef, ulong coef_off, uint start_next):
 * gmres_dcgs2_finish and gmres_dcgs2_update in one launch for partials of few blocks, see
 * kernels-cl/gmres.cl. Launched with the partials' block count; start_next as
 * gmres_dcgs2_update's. */
extern "C" __launch_bounds__(WG) __global__ void gmres_dcgs2_update_small(SCALAR *basis, const uint n, const uint ucol,
                                                                          const SCALAR *pa, const SCALAR *pc,
                                                                          SCALAR *coef, const ulong coef_off,
                                                                          const uint start_next) {
    DCGS2_START_NEXT(start_next);
    __shared__ SCALAR ca[WG];
    __shared__ SCALAR cc[WG];
    __shared__ SCALAR nu_d[2];
    __shared__ SCALAR shared[2];
    const uint lid = threadIdx.x;
    const uint count = ucol - 1;
    const uint groups = gridDim.x;
    if (lid < 2 * (count + 1)) {
        const bool second = lid > count; /* 0..count: pa, count+1..2count+1: pc */
        const uint slot = second ? lid - count - 1 : lid;
        const SCALAR *p = (second ? pc : pa) + (ulong)slot * groups;
        SCALAR acc = ZERO;
        for (uint g = 0; g < groups; ++g) {
            acc += p[g];
        }
        if (slot < count) {
            if (second) {
                cc[slot] = acc;
            } else {
                ca[slot] = acc;
            }
        } else {
            nu_d[second ? 1 : 0] = acc;
        }
        if (blockIdx.x == 0) {
            const ulong at = slot < count ? (second ? count + slot : slot) : (second ? 2 * count + 3 : 2 * count + 2);
            coef[coef_off + at] = acc;
        }
    }
    __syncthreads();
    if (lid == 0) {
        SCALAR s_aa = ZERO, s_ac = ZERO;
        for (uint k = 0; k < count; ++k) {
            const SCALAR a = ca[k];
            s_aa += a * a;
            s_ac += a * cc[k];
        }
        dcgs2_beta_g(s_aa, s_ac, nu_d[0], nu_d[1], count, coef, coef_off, shared);
    }
    __syncthreads();
    const SCALAR beta = shared[0];
    if (!(beta > ZERO)) {
        return; /* breakdown: the vectors stay as they are */
    }
    dcgs2_columns(basis, n, ucol, 0, count, true, (SCALAR)1 / beta, shared[1], ca, cc);
}

/* basis_dots2 (const SCALAR* basis, uint n, uint wa, uint wb, uint first_col, uint count_a,
 *              uint count_b, SCALAR* pa, SCALAR* pb): the dots of two targets against the same
 * columns in one pass (see kernels-cl/gmres.cl); the layout of basis_dots with two tiles. */
extern "C" __launch_bounds__(WG) __global__ void basis_dots2(const SCALAR *basis, const uint n, const uint wa,
                                                             const uint wb, const uint first_col,
                                                             const uint count_a, const uint count_b,
                                                             SCALAR *pa, SCALAR *pb) {
    PDL_WAIT();
    __shared__ SCALAR tile_a[WG];
    __shared__ SCALAR tile_b[WG];
    const SCALAR *va = basis + (ulong)wa * n;
    const SCALAR *vb = basis + (ulong)wb * n;
    const uint lane = threadIdx.x & 31u;
    const uint warp = threadIdx.x >> 5;
    for (uint j0 = 0; j0 < count_a; j0 += DOTS_PER_PASS) {
        SCALAR acc_a[DOTS_PER_WARP];
        SCALAR acc_b[DOTS_PER_WARP];
#pragma unroll
        for (int c = 0; c < DOTS_PER_WARP; ++c) {
            acc_a[c] = ZERO;
            acc_b[c] = ZERO;
        }
        for (uint t0 = blockIdx.x * (uint)WG; t0 < n; t0 += GRID_STRIDE) {
            const uint e = t0 + threadIdx.x;
            __syncthreads();
            tile_a[threadIdx.x] = e < n ? va[e] : ZERO;
            tile_b[threadIdx.x] = e < n ? vb[e] : ZERO;
            __syncthreads();
            const uint len = min((uint)WG, n - t0);
#pragma unroll
            for (int c = 0; c < DOTS_PER_WARP; ++c) {
                const uint j = j0 + warp + (uint)c * WARPS;
                if (j < count_a) {
                    const SCALAR *vj = basis + (ulong)(first_col + j) * n + t0;
#pragma unroll
                    for (uint q = lane; q < (uint)WG; q += 32) {
                        if (q < len) {
                            const SCALAR v = vj[q];
                            acc_a[c] += v * tile_a[q];
                            acc_b[c] += v * tile_b[q];
                        }
                    }
                }
            }
        }
        write_column_partials(acc_a, acc_b, j0, count_a, count_b, pa, pb);
    }
}
