/*
 * halo.cl -- the distributed SpMV's halo kernels (SpmvOps, feature mpi).
 * Conventions (SCALAR, WG, uint/ulong, grid-stride): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   halo_gather   (const uint* idx, const SCALAR* x, ulong x_off, SCALAR* out, uint n)
 *                 out_i = x[x_off + idx_i]
 *   halo_spmv_add (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* y, uint n_rows)
 *                 y[rows_i] += sum_k values_k xg[col_idx_k], k in row_ptr_i .. row_ptr_{i+1}
 *   halo_spmv_add_dots (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* y, ulong y_off, uint n_rows,
 *                  const SCALAR* w0, ulong w0_off, const SCALAR* w1, ulong w1_off,
 *                  SCALAR* partials, int slot_yy, int slot_w0, int slot_w1)
 *                 halo_spmv_add, and the wanted partials of <y, y>, <y, w0>, <y, w1> corrected
 *                 for the rows it changed: partials[slot * G + group] += sum over the group's
 *                 rows of (new y_r - old y_r) * (new y_r + old y_r) for yy, (new - old) * w_r
 *                 for w0/w1 (y, w0, w1 at their element offsets: GMRES basis columns). The partials were written by the local product's fused kernel
 *                 (spmv_dots_*) with the same G groups; this kernel runs with exactly G groups
 *                 and after it, so the slots end up holding the dots of the full y.
 *   halo_dcgs2_add_dots (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* basis, uint n, uint ucol,
 *                  uint n_rows, SCALAR* pb)
 *                 the ghost half of a distributed gmres_dcgs2_spmv_dots: w = column ucol + 1
 *                 gets the ghost block's product on the boundary rows, and the partials of
 *                 <v_{j+1}, w> (slots j = 0..ucol-1 of pb: c_j, and d = <u, w> in slot
 *                 ucol - 1) are corrected by sum over the group's rows of (new w_r - old w_r)
 *                 * v_{j+1}[r]; a and nu (pa) do not involve w. Uses pb.groups() groups, after
 *                 the local fused kernel that wrote pb with the same groups.
 *   halo_partials_finish (const SCALAR* partials, ulong in_off, uint groups, uint slots,
 *                  double* out, uint out_off)
 *                 out[out_off + s] = the finished sum of slot s (s < slots) of the partials at
 *                 partials + in_off, in double, in the host's finish order (src/backend/partials.rs, FINISH_LANES: group g to lane
 *                 g mod 32, each lane in group order, then lane l += lane l + h for h = 16, 8,
 *                 4, 2, 1); one work-item per slot, any grid
 *   halo_rank_sums (const double* own, const double* gathered, uint ranks, uint me,
 *                  uint stride, uint count, SCALAR* sums, ulong out_off, uint zero)
 *                 sums[out_off + j] = sum over r = 0..ranks-1 in rank order of (r == me ?
 *                 own[j] : gathered[r stride + j]) in double, rounded, for j < count; and
 *                 sums[out_off + count] = 0 when zero is 1
 *   halo_link_push (const uint* src, uint words, uint* dst, const uint* consumed, uint expect,
 *                  uint* sent_there, uint k)
 *   halo_link_pull (const uint* sent, uint k, const uint* area, uint words, uint* ghost,
 *                  uint* consumed_there)
 *                 the two ends of one exchange of a one-neighbour device-to-device link done by
 *                 kernels (CUDA: src/backend/cuda/peer.rs): push waits until *consumed ==
 *                 expect, copies src[0..words) to dst and writes k to *sent_there; pull waits
 *                 until *sent == k, copies area[0..words) to ghost and writes k to
 *                 *consumed_there. One work-group each. OpenCL has no link between devices;
 *                 here the flags are in the same device's memory, and a wait gives up after
 *                 HALO_LINK_SPINS polls (push then sends nothing, pull fills ghost with
 *                 all-ones words, NaN, and writes no flag).
 *   halo_sums_link (const SCALAR* partials, ulong in_off, uint groups, uint slots, HALO_SUM* dst,
 *                  const uint* consumed, uint expect, uint* sent_there, uint k, const uint* sent,
 *                  const HALO_SUM* area, uint* consumed_there, uint me, SCALAR* sums,
 *                  ulong out_off, uint out_stride, uint out_len)
 *                 the whole global sum of two ranks on two linked devices in one work-group
 *                 (CUDA: halo_partials_finish, halo_link_push, halo_link_pull and halo_rank_sums
 *                 in one kernel; see kernels-cu/halo.cu). Never launched on OpenCL (no link).
 * halo_gather packs the entries of the local vector that other ranks need (the send list of
 * the halo plan); halo_spmv_add adds the ghost block's product on the boundary rows only
 * (rows listed once each, so no two work-items write the same y entry). Both use any number
 * of groups; halo_spmv_add_dots uses partials.groups() groups. halo_partials_finish and
 * halo_rank_sums are the global sums on the device (every rank finishes its partials, the
 * finished sums travel device to device, every rank adds them in rank order); the OpenCL
 * backend has no device-to-device link, so only the agreement tests run them here.
 */

pk_kernel void halo_gather(PK_GLOBAL(const uint, idx), PK_GLOBAL(const SCALAR, x), const ulong x_off,
                           PK_GLOBAL(SCALAR, out), const uint n) {
    PK_BIND(const uint, idx);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, out);
    FOR_EACH(i, n) {
        out[i] = x[x_off + idx[i]];
    }
}

pk_kernel void halo_spmv_add(PK_GLOBAL(const uint, rows), PK_GLOBAL(const uint, row_ptr),
                             PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                             PK_GLOBAL(const SCALAR, xg), PK_GLOBAL(SCALAR, y), const uint n_rows) {
    PK_BIND(const uint, rows);
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, xg);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n_rows) {
        SCALAR acc = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            acc += values[k] * xg[col_idx[k]];
        }
        y[rows[i]] += acc;
    }
}

pk_kernel void halo_spmv_add_dots(PK_GLOBAL(const uint, rows), PK_GLOBAL(const uint, row_ptr),
                                  PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                                  PK_GLOBAL(const SCALAR, xg), PK_GLOBAL(SCALAR, y), const ulong y_off,
                                  const uint n_rows, PK_GLOBAL(const SCALAR, w0), const ulong w0_off,
                                  PK_GLOBAL(const SCALAR, w1), const ulong w1_off,
                                  PK_GLOBAL(SCALAR, partials), const int slot_yy, const int slot_w0,
                                  const int slot_w1) {
    PK_BIND(const uint, rows);
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, xg);
    PK_BIND(SCALAR, y);
    PK_BIND(const SCALAR, w0);
    PK_BIND(const SCALAR, w1);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[3 * WG];
    SCALAR acc[3] = {ZERO, ZERO, ZERO};
    FOR_EACH(i, n_rows) {
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
    /* Every slot is reduced (uniform control flow around the barriers); unwanted ones are
     * not written. */
    group_sum_multi(scratch, acc, 3);
    if (get_local_id(0) == 0) {
        /* The three partials read together, then written (distinct slots, checked by the
         * host): one memory latency instead of three in a row. */
        const ulong groups = get_num_groups(0), group = get_group_id(0);
        const int slot[3] = {slot_yy, slot_w0, slot_w1};
        SCALAR old[3];
        for (int t = 0; t < 3; ++t) {
            old[t] = slot[t] >= 0 ? partials[(ulong)slot[t] * groups + group] : ZERO;
        }
        for (int t = 0; t < 3; ++t) {
            if (slot[t] >= 0) {
                partials[(ulong)slot[t] * groups + group] = old[t] + acc[t];
            }
        }
    }
}

/* Slots of halo_dcgs2_add_dots reduced per pass over the boundary rows (8: the passes, which
 * recompute each row's ghost product, are few for a GMRES(30) basis). */
#define HALO_DCGS2_CHUNK 8

pk_kernel void halo_dcgs2_add_dots(PK_GLOBAL(const uint, rows), PK_GLOBAL(const uint, row_ptr),
                                   PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                                   PK_GLOBAL(const SCALAR, xg), PK_GLOBAL(SCALAR, basis), const uint n,
                                   const uint ucol, const uint n_rows, PK_GLOBAL(SCALAR, pb)) {
    PK_BIND(const uint, rows);
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, xg);
    PK_BIND(SCALAR, basis);
    PK_BIND(SCALAR, pb);
    __local SCALAR scratch[HALO_DCGS2_CHUNK * WG];
    __global SCALAR *w = basis + (ulong)(ucol + 1) * n;
    const ulong groups = get_num_groups(0), group = get_group_id(0);
    /* The corrections first (w still holds the local product), HALO_DCGS2_CHUNK slots per
     * pass; the change of a row is recomputed per pass (boundary rows have few ghost entries). */
    for (uint j0 = 0; j0 < ucol; j0 += HALO_DCGS2_CHUNK) {
        SCALAR acc[HALO_DCGS2_CHUNK];
        for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
            acc[t] = ZERO;
        }
        FOR_EACH(i, n_rows) {
            SCALAR g = ZERO;
            for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
                g += values[k] * xg[col_idx[k]];
            }
            const ulong r = rows[i];
            const SCALAR old = w[r];
            const SCALAR change = (old + g) - old;
            for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
                if (j0 + t < ucol) {
                    acc[t] += change * basis[(ulong)(j0 + t + 1) * n + r];
                }
            }
        }
        group_sum_multi(scratch, acc, HALO_DCGS2_CHUNK);
        if (get_local_id(0) == 0) {
            /* The pass's partials read together, then written: one memory latency instead of
             * one per slot in a row. */
            SCALAR old[HALO_DCGS2_CHUNK];
            for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
                old[t] = j0 + t < ucol ? pb[(ulong)(j0 + t) * groups + group] : ZERO;
            }
            for (uint t = 0; t < HALO_DCGS2_CHUNK; ++t) {
                if (j0 + t < ucol) {
                    pb[(ulong)(j0 + t) * groups + group] = old[t] + acc[t];
                }
            }
        }
    }
    /* Then the rows themselves (each by the work-item that read it above). */
    FOR_EACH(i, n_rows) {
        SCALAR g = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            g += values[k] * xg[col_idx[k]];
        }
        w[rows[i]] += g;
    }
}

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define HALO_SUM double
#else
/* Without fp64 the two kernels exist (same names as in kernels-cu) but do nothing: the host
 * never calls them on such a device (no device-to-device link on OpenCL). */
#define HALO_SUM ulong
#endif

#ifdef cl_khr_fp64
/* One slot's finished sum in double, by one work-item: group g to lane g mod 32, each lane in
 * group order, then the lanes pairwise (the host's finish order). */
inline double halo_finish_slot(__global const SCALAR *partials, const ulong base, const uint groups) {
    double lanes[32];
    for (uint l = 0; l < 32u; ++l) {
        lanes[l] = 0.0;
    }
    for (uint g = 0; g < groups; ++g) {
        lanes[g & 31u] += (double)partials[base + g];
    }
    for (uint h = 16u; h > 0u; h >>= 1) {
        for (uint l = 0; l < h; ++l) {
            lanes[l] += lanes[l + h];
        }
    }
    return lanes[0];
}
#endif

pk_kernel void halo_partials_finish(PK_GLOBAL(const SCALAR, partials), const ulong in_off, const uint groups,
                                    const uint slots, PK_GLOBAL(HALO_SUM, out), const uint out_off) {
#ifdef cl_khr_fp64
    PK_BIND(const SCALAR, partials);
    PK_BIND(double, out);
    FOR_EACH(slot, slots) {
        out[out_off + slot] = halo_finish_slot(partials, in_off + (ulong)slot * groups, groups);
    }
#endif
}

pk_kernel void halo_rank_sums(PK_GLOBAL(const HALO_SUM, own), PK_GLOBAL(const HALO_SUM, gathered), const uint ranks,
                              const uint me, const uint stride, const uint count, PK_GLOBAL(SCALAR, sums),
                              const ulong out_off, const uint zero) {
#ifdef cl_khr_fp64
    PK_BIND(const double, own);
    PK_BIND(const double, gathered);
    PK_BIND(SCALAR, sums);
    FOR_EACH(j, count + zero) {
        if (j == count) {
            sums[out_off + j] = ZERO;
        } else {
            double acc = 0.0;
            for (uint r = 0; r < ranks; ++r) {
                acc += r == me ? own[j] : gathered[(ulong)r * stride + j];
            }
            sums[out_off + j] = (SCALAR)acc;
        }
    }
#endif
}

/* Polls of a link flag before a link kernel gives up. */
#define HALO_LINK_SPINS 100000000u

/* Work-item 0 polls *flag until it equals value; every work-item returns whether it came. */
inline bool halo_link_wait(__global const uint *flag, const uint value, __local int *came) {
    if (get_local_id(0) == 0) {
        __global const volatile uint *f = (__global const volatile uint *)flag;
        int ok = 0;
        for (uint spin = 0; spin < HALO_LINK_SPINS; ++spin) {
            if (*f == value) {
                ok = 1;
                break;
            }
        }
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        *came = ok;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    return *came != 0;
}

pk_kernel void halo_link_push(PK_GLOBAL(const uint, src), const uint words, PK_GLOBAL(uint, dst),
                              PK_GLOBAL(const uint, consumed), const uint expect, PK_GLOBAL(uint, sent_there),
                              const uint k) {
    PK_BIND(const uint, src);
    PK_BIND(uint, dst);
    PK_BIND(const uint, consumed);
    PK_BIND(uint, sent_there);
    __local int came;
    if (!halo_link_wait(consumed, expect, &came)) {
        return;
    }
    for (uint i = get_local_id(0); i < words; i += WG) {
        dst[i] = src[i];
    }
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        *(__global volatile uint *)sent_there = k;
    }
}

pk_kernel void halo_link_pull(PK_GLOBAL(const uint, sent), const uint k, PK_GLOBAL(const uint, area), const uint words,
                              PK_GLOBAL(uint, ghost), PK_GLOBAL(uint, consumed_there)) {
    PK_BIND(const uint, sent);
    PK_BIND(const uint, area);
    PK_BIND(uint, ghost);
    PK_BIND(uint, consumed_there);
    __local int came;
    const bool ok = halo_link_wait(sent, k, &came);
    __global const volatile uint *a = (__global const volatile uint *)area;
    for (uint i = get_local_id(0); i < words; i += WG) {
        ghost[i] = ok ? a[i] : 0xffffffffu;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0 && ok) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        *(__global volatile uint *)consumed_there = k;
    }
}

/* Most slots halo_sums_link finishes (the distributed layer's SUMS_LINK_SLOTS). */
#define HALO_SUMS_LINK_MAX 256

pk_kernel void halo_sums_link(PK_GLOBAL(const SCALAR, partials), const ulong in_off, const uint groups, const uint slots,
                              PK_GLOBAL(HALO_SUM, dst), PK_GLOBAL(const uint, consumed), const uint expect,
                              PK_GLOBAL(uint, sent_there), const uint k, PK_GLOBAL(const uint, sent),
                              PK_GLOBAL(const HALO_SUM, area), PK_GLOBAL(uint, consumed_there), const uint me,
                              PK_GLOBAL(SCALAR, sums), const ulong out_off, const uint out_stride,
                              const uint out_len) {
#ifdef cl_khr_fp64
    PK_BIND(const SCALAR, partials);
    PK_BIND(double, dst);
    PK_BIND(const uint, consumed);
    PK_BIND(uint, sent_there);
    PK_BIND(const uint, sent);
    PK_BIND(const double, area);
    PK_BIND(uint, consumed_there);
    PK_BIND(SCALAR, sums);
    __local double own[HALO_SUMS_LINK_MAX];
    __local int came;
    const uint n = slots < HALO_SUMS_LINK_MAX ? slots : HALO_SUMS_LINK_MAX;
    /* halo_partials_finish's order: 32 lanes over the groups, then the tree. */
    for (uint slot = get_local_id(0); slot < n; slot += WG) {
        own[slot] = halo_finish_slot(partials, in_off + (ulong)slot * groups, groups);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (halo_link_wait(consumed, expect, &came)) {
        for (uint j = get_local_id(0); j < n; j += WG) {
            dst[j] = own[j];
        }
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_GLOBAL_MEM_FENCE);
        if (get_local_id(0) == 0) {
            *(__global volatile uint *)sent_there = k;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool ok = halo_link_wait(sent, k, &came);
    __global const volatile double *theirs = (__global const volatile double *)area;
    for (uint i = get_local_id(0); i < out_len; i += WG) {
        const uint j = i / out_stride;
        if (i % out_stride != 0 || j >= n) {
            sums[out_off + i] = ZERO;
        } else {
            const double other = ok ? theirs[j] : as_double(0xffffffffffffffffUL);
            double acc = 0.0;
            for (uint r = 0; r < 2u; ++r) {
                acc += r == me ? own[j] : other;
            }
            sums[out_off + i] = (SCALAR)acc;
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0 && ok) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        *(__global volatile uint *)consumed_there = k;
    }
#endif
}
