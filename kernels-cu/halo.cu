/*
 * halo.cu -- the distributed SpMV's halo kernels (SpmvOps, feature mpi). Mirrors
 * kernels-cl/halo.cl; conventions in reduce.cu.
 *
 *   halo_gather   (const uint* idx, const SCALAR* x, ulong x_off, SCALAR* out, uint n)
 *                 out_i = x[x_off + idx_i]
 *   halo_spmv_add (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* y, uint n_rows)
 *                 y[rows_i] += sum_k values_k xg[col_idx_k], k in row_ptr_i .. row_ptr_{i+1}
 *   halo_spmv_add_dots (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* y, ulong y_off, uint n_rows,
 *                  const SCALAR* w0, ulong w0_off, const SCALAR* w1, ulong w1_off,
 *                  SCALAR* partials, int slot_yy, int slot_w0, int slot_w1)
 *                 halo_spmv_add, and the wanted partials corrected for the rows it changed
 *                 (see kernels-cl/halo.cl); launched with exactly partials.groups() blocks.
 *   halo_dcgs2_add_dots (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* basis, uint n, uint ucol,
 *                  uint n_rows, SCALAR* pb)
 *                 the ghost half of a distributed gmres_dcgs2_spmv_dots: w = column ucol + 1
 *                 += the ghost product, and the partials of <v_{j+1}, w> (slots 0..ucol-1 of
 *                 pb) corrected for the change (see kernels-cl/halo.cl); pb.groups() blocks.
 *   halo_partials_finish (const SCALAR* partials, ulong in_off, uint groups, uint slots,
 *                  double* out, uint out_off)
 *                 out[out_off + s] = the finished sum of slot s (s < slots) of the partials at
 *                 partials + in_off, in double, in the host's finish order (as
 *                 ordered_slot_sums); grid: ceil(slots / WARPS) blocks
 *   halo_rank_sums (const double* own, const double* gathered, uint ranks, uint me,
 *                  uint stride, uint count, SCALAR* sums, ulong out_off, uint zero)
 *                 sums[out_off + j] = sum over r = 0..ranks-1 in rank order of (r == me ?
 *                 own[j] : gathered[r stride + j]) in double, rounded, for j < count; and
 *                 sums[out_off + count] = 0 when zero is 1
 *   halo_link_push (const uint* src, uint words, uint* dst, const uint* consumed, uint expect,
 *                  uint* sent_there, uint k)
 *   halo_link_pull (const uint* sent, uint k, const uint* area, uint words, uint* ghost,
 *                  uint* consumed_there)
 *                 the two ends of one exchange of a one-neighbour device-to-device link
 *                 (src/backend/cuda/peer.rs) done by kernels, for small payloads such as the
 *                 global sums: push waits until *consumed == expect (the neighbour has read
 *                 the last exchange), copies src[0..words) to dst (the neighbour's receive
 *                 area), fences system-wide and writes k to *sent_there (its flag there);
 *                 pull waits until *sent == k, copies area[0..words) to ghost, fences and
 *                 writes k to *consumed_there (this rank's flag in the neighbour's memory).
 *                 One block each; a wait gives up after HALO_LINK_TIMEOUT_NS (a neighbour that
 *                 failed): push then sends nothing, pull fills ghost with all-ones words (NaN)
 *                 and writes no flag, so the solve stops on NaN instead of hanging.
 *   halo_sums_link (const SCALAR* partials, ulong in_off, uint groups, uint slots, HALO_SUM* dst,
 *                  const uint* consumed, uint expect, uint* sent_there, uint k, const uint* sent,
 *                  const HALO_SUM* area, uint* consumed_there, uint me, SCALAR* sums,
 *                  ulong out_off, uint out_stride, uint out_len)
 *                 the whole global sum of two ranks on two linked devices in one block (slots
 *                 <= HALO_SUMS_LINK_MAX): halo_partials_finish of the slots, halo_link_push of
 *                 the finished sums to dst (the neighbour's receive area at this rank's
 *                 place), halo_link_pull of the neighbour's from area (its place in this
 *                 rank's area), and halo_rank_sums of the two in rank order (this rank is
 *                 me): sum j goes to sums[out_off + j out_stride], every other entry of
 *                 sums[out_off .. out_off + out_len) is set to 0 (stride 1 and length slots + 1:
 *                 the sums and a 0 after them; stride groups: a partials layout whose group 0
 *                 holds the global sums); the same bits as those four kernels. partials and
 *                 sums may be the same buffer (every read of the partials precedes every write
 *                 of the sums). Timeouts as for the link
 *                 kernels; after a pull timeout the sums are NaN.
 * halo_gather packs the entries of the local vector that other ranks need (the send list of
 * the halo plan); halo_spmv_add adds the ghost block's product on the boundary rows only
 * (rows listed once each, so no two threads write the same y entry). Both use any grid.
 * halo_partials_finish and halo_rank_sums are the global sums on the device: every rank
 * finishes its partials, the ranks' finished sums travel device to device, and every rank adds
 * them in rank order, so every rank holds the same bits.
 */

extern "C" __launch_bounds__(WG) __global__ void halo_gather(const uint *idx, const SCALAR *x, const ulong x_off, SCALAR *out,
                                                             const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        out[i] = x[x_off + idx[i]];
    }
}

extern "C" __launch_bounds__(WG) __global__ void halo_spmv_add(const uint *rows, const uint *row_ptr, const uint *col_idx,
                                                               const SCALAR *values, const SCALAR *xg, SCALAR *y,
                                                               const uint n_rows) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n_rows; i += GRID_STRIDE) {
        SCALAR acc = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            acc += values[k] * xg[col_idx[k]];
        }
        y[rows[i]] += acc;
    }
}

extern "C" __launch_bounds__(WG) __global__ void halo_spmv_add_dots(const uint *rows, const uint *row_ptr, const uint *col_idx,
                                                                    const SCALAR *values, const SCALAR *xg, SCALAR *y,
                                                                    const ulong y_off, const uint n_rows, const SCALAR *w0,
                                                                    const ulong w0_off, const SCALAR *w1, const ulong w1_off,
                                                                    SCALAR *partials, const int slot_yy, const int slot_w0,
                                                                    const int slot_w1) {
    PDL_WAIT();
    /* A block without boundary rows adds nothing to its partials (uniform per block). */
    if (blockIdx.x * (uint)WG >= n_rows) {
        return;
    }
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    for (uint i = GRID_START; i < n_rows; i += GRID_STRIDE) {
        SCALAR g = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            g += values[k] * xg[col_idx[k]];
        }
        const ulong r = rows[i];
        const SCALAR old = y[y_off + r];
        const SCALAR now = old + g;
        y[y_off + r] = now;
        const SCALAR change = now - old;
        if (slot_yy >= 0) {
            acc[0] += change * (now + old);
        }
        if (slot_w0 >= 0) {
            acc[1] += change * w0[w0_off + r];
        }
        if (slot_w1 >= 0) {
            acc[2] += change * w1[w1_off + r];
        }
    }
    /* Every slot is reduced (uniform control flow around the barriers, as the OpenCL twin);
     * unwanted ones are not written. */
    block_sum<3>(acc);
    if (threadIdx.x == 0) {
        /* The three partials read together, then written (distinct slots, checked by the
         * host): one memory latency instead of three in a row. */
        const ulong groups = gridDim.x, group = blockIdx.x;
        const int slot[3] = {slot_yy, slot_w0, slot_w1};
        SCALAR old[3];
#pragma unroll
        for (int t = 0; t < 3; ++t) {
            old[t] = slot[t] >= 0 ? partials[(ulong)slot[t] * groups + group] : ZERO;
        }
#pragma unroll
        for (int t = 0; t < 3; ++t) {
            if (slot[t] >= 0) {
                partials[(ulong)slot[t] * groups + group] = old[t] + acc[t];
            }
        }
    }
}

/* Slots of halo_dcgs2_add_dots reduced per pass over the boundary rows. */
#define HALO_DCGS2_CHUNK 8

extern "C" __launch_bounds__(WG) __global__ void halo_dcgs2_add_dots(const uint *rows, const uint *row_ptr,
                                                                     const uint *col_idx, const SCALAR *values,
                                                                     const SCALAR *xg, SCALAR *basis, const uint n,
                                                                     const uint ucol, const uint n_rows, SCALAR *pb) {
    PDL_WAIT();
    /* A block without boundary rows adds nothing to its partials (uniform per block). */
    if (blockIdx.x * (uint)WG >= n_rows) {
        return;
    }
    SCALAR *w = basis + (ulong)(ucol + 1) * n;
    const ulong groups = gridDim.x, group = blockIdx.x;
    /* The thread's first row (its only one while the boundary has at most grid x WG rows, the
     * usual case): ghost product, old value and change read once and kept for every pass;
     * later rows of the grid stride are recomputed per pass. */
    const uint first = GRID_START;
    ulong r0 = 0;
    SCALAR old0 = ZERO, g0 = ZERO;
    if (first < n_rows) {
        for (uint k = row_ptr[first]; k < row_ptr[first + 1]; ++k) {
            g0 += values[k] * xg[col_idx[k]];
        }
        r0 = rows[first];
        old0 = w[r0];
    }
    const SCALAR change0 = (old0 + g0) - old0;
    /* The corrections first (w still holds the local product), as the OpenCL twin. */
    for (uint j0 = 0; j0 < ucol; j0 += HALO_DCGS2_CHUNK) {
        SCALAR acc[HALO_DCGS2_CHUNK];
#pragma unroll
        for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
            acc[t] = ZERO;
            if (first < n_rows && j0 + t < ucol) {
                acc[t] += change0 * basis[(ulong)(j0 + t + 1) * n + r0];
            }
        }
        for (uint i = first + GRID_STRIDE; i < n_rows; i += GRID_STRIDE) {
            SCALAR g = ZERO;
            for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
                g += values[k] * xg[col_idx[k]];
            }
            const ulong r = rows[i];
            const SCALAR old = w[r];
            const SCALAR change = (old + g) - old;
#pragma unroll
            for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
                if (j0 + t < ucol) {
                    acc[t] += change * basis[(ulong)(j0 + t + 1) * n + r];
                }
            }
        }
        block_sum<HALO_DCGS2_CHUNK>(acc);
        if (threadIdx.x == 0) {
            /* The pass's partials read together, then written: one memory latency instead of
             * one per slot in a row. */
            SCALAR old[HALO_DCGS2_CHUNK];
#pragma unroll
            for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
                old[t] = j0 + t < ucol ? pb[(ulong)(j0 + t) * groups + group] : ZERO;
            }
#pragma unroll
            for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
                if (j0 + t < ucol) {
                    pb[(ulong)(j0 + t) * groups + group] = old[t] + acc[t];
                }
            }
        }
    }
    /* Then the rows themselves (each by the thread that read it above). */
    if (first < n_rows) {
        w[r0] = old0 + g0;
    }
    for (uint i = first + GRID_STRIDE; i < n_rows; i += GRID_STRIDE) {
        SCALAR g = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            g += values[k] * xg[col_idx[k]];
        }
        w[rows[i]] += g;
    }
}

/* The finished sums' type, named as in kernels-cl/halo.cl (where it is ulong on devices without
 * fp64, whose kernels then do nothing). */
#define HALO_SUM double

/* One slot's finished sum in double, by a whole warp: lane l adds groups l, l + 32, ... in order,
 * then the lanes pairwise (the host's finish order); lane 0 holds the result. */
__device__ __forceinline__ double halo_finish_slot(const SCALAR *p, const uint groups, const uint lane) {
    double acc = 0.0;
    for (uint g = lane; g < groups; g += 32u) {
        acc = __dadd_rn(acc, (double)p[g]);
    }
#pragma unroll
    for (uint h = 16u; h > 0u; h >>= 1) {
        acc = __dadd_rn(acc, __shfl_down_sync(FULL_MASK, acc, h));
    }
    return acc;
}

extern "C" __launch_bounds__(WG) __global__ void halo_partials_finish(const SCALAR *partials, const ulong in_off,
                                                                      const uint groups,
                                                                      const uint slots, HALO_SUM *out,
                                                                      const uint out_off) {
    PDL_WAIT();
    const uint lane = threadIdx.x & 31u;
    const uint slot = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (slot >= slots) {
        return;
    }
    const double acc = halo_finish_slot(partials + in_off + (ulong)slot * groups, groups, lane);
    if (lane == 0) {
        out[out_off + slot] = acc;
    }
}

extern "C" __launch_bounds__(WG) __global__ void halo_rank_sums(const HALO_SUM *own, const HALO_SUM *gathered,
                                                                const uint ranks, const uint me, const uint stride,
                                                                const uint count, SCALAR *sums, const ulong out_off,
                                                                const uint zero) {
    PDL_WAIT();
    for (uint j = GRID_START; j < count + zero; j += GRID_STRIDE) {
        if (j == count) {
            sums[out_off + j] = ZERO;
            continue;
        }
        double acc = 0.0;
        for (uint r = 0; r < ranks; ++r) {
            acc = __dadd_rn(acc, r == me ? own[j] : gathered[(ulong)r * stride + j]);
        }
        sums[out_off + j] = (SCALAR)acc;
    }
}

/* How long a link kernel waits for its neighbour's flag before giving up (60 s). */
#define HALO_LINK_TIMEOUT_NS 60000000000ull

__device__ __forceinline__ unsigned long long halo_link_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Thread 0 of the block spins until *flag == value (a flag this device's memory holds, which
 * the neighbour writes over the peer mapping); every thread returns whether it came. */
__device__ __forceinline__ bool halo_link_wait(const uint *flag, const uint value) {
    __shared__ int came;
    if (threadIdx.x == 0) {
        const volatile uint *f = flag;
        const unsigned long long start = halo_link_now();
        int ok = 1;
        while (*f != value) {
            if (halo_link_now() - start > HALO_LINK_TIMEOUT_NS) {
                ok = 0;
                break;
            }
        }
        /* System scope: the flag was written from the other device. */
        __threadfence_system();
        came = ok;
    }
    __syncthreads();
    return came != 0;
}

extern "C" __launch_bounds__(WG) __global__ void halo_link_push(const uint *src, const uint words, uint *dst,
                                                                const uint *consumed, const uint expect,
                                                                uint *sent_there, const uint k) {
    PDL_WAIT();
    /* Without the neighbour's "consumed", its area may still be read: nothing is sent, and its
     * pull gives up in turn. */
    if (!halo_link_wait(consumed, expect)) {
        return;
    }
    for (uint i = threadIdx.x; i < words; i += WG) {
        dst[i] = src[i];
    }
    /* Every thread's copies reach the neighbour before the flag. */
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        *(volatile uint *)sent_there = k;
    }
}

extern "C" __launch_bounds__(WG) __global__ void halo_link_pull(const uint *sent, const uint k, const uint *area,
                                                                const uint words, uint *ghost, uint *consumed_there) {
    PDL_WAIT();
    const bool came = halo_link_wait(sent, k);
    const volatile uint *a = area;
    for (uint i = threadIdx.x; i < words; i += WG) {
        ghost[i] = came ? a[i] : 0xffffffffu;
    }
    /* Every read of the area is done (its value stored) before the neighbour may write again;
     * after a timeout no flag is written (it would run ahead of the neighbour's send). */
    __syncthreads();
    if (threadIdx.x == 0 && came) {
        __threadfence_system();
        *(volatile uint *)consumed_there = k;
    }
}

/* Most slots halo_sums_link finishes (the distributed layer's SUMS_LINK_SLOTS). */
#define HALO_SUMS_LINK_MAX 256

extern "C" __launch_bounds__(WG) __global__ void halo_sums_link(const SCALAR *partials, const ulong in_off,
                                                                const uint groups, const uint slots, HALO_SUM *dst,
                                                                const uint *consumed, const uint expect,
                                                                uint *sent_there, const uint k, const uint *sent,
                                                                const HALO_SUM *area, uint *consumed_there,
                                                                const uint me, SCALAR *sums, const ulong out_off,
                                                                const uint out_stride, const uint out_len) {
    PDL_WAIT();
    __shared__ double own[HALO_SUMS_LINK_MAX];
    const uint n = slots < HALO_SUMS_LINK_MAX ? slots : HALO_SUMS_LINK_MAX;
    /* halo_partials_finish: a warp per slot, lanes over the groups, the same tree. */
    const uint lane = threadIdx.x & 31u;
    for (uint slot = threadIdx.x >> 5; slot < n; slot += WARPS) {
        const double acc = halo_finish_slot(partials + in_off + (ulong)slot * groups, groups, lane);
        if (lane == 0) {
            own[slot] = acc;
        }
    }
    __syncthreads();
    /* halo_link_push: nothing is sent without the neighbour's "consumed". */
    if (halo_link_wait(consumed, expect)) {
        for (uint j = threadIdx.x; j < n; j += WG) {
            dst[j] = own[j];
        }
        __threadfence_system();
        __syncthreads();
        if (threadIdx.x == 0) {
            *(volatile uint *)sent_there = k;
        }
    }
    __syncthreads();
    /* halo_link_pull and halo_rank_sums: the neighbour's sums read once, added in rank order. */
    const bool came = halo_link_wait(sent, k);
    const volatile HALO_SUM *theirs = area;
    const double nan = __longlong_as_double(-1ll);
    for (uint i = threadIdx.x; i < out_len; i += WG) {
        const uint j = i / out_stride;
        if (i % out_stride != 0 || j >= n) {
            sums[out_off + i] = ZERO;
            continue;
        }
        const double other = came ? theirs[j] : nan;
        double acc = 0.0;
        for (uint r = 0; r < 2u; ++r) {
            acc = __dadd_rn(acc, r == me ? own[j] : other);
        }
        sums[out_off + i] = (SCALAR)acc;
    }
    /* Every read of the area is done before the neighbour may write again; after a timeout no
     * flag is written. */
    __syncthreads();
    if (threadIdx.x == 0 && came) {
        __threadfence_system();
        *(volatile uint *)consumed_there = k;
    }
}
