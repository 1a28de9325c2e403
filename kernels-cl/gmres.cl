/*
 * gmres.cl -- Krylov-basis kernels of pipelined GMRES ([Rupp16], Alg. 6) and the batched
 * operations of [Ma21a] (batched dots, VecAXPYKernel_j).
 * Conventions (SCALAR, WG, uint/ulong, slots, partials layout): see reduce.cl.
 *
 * The basis holds `cols` columns of length n contiguously: column j starts at (ulong)j * n.
 *
 * Kernel argument lists (CUDA mirrors them in this order). Pointers are __global.
 *   basis_dots         (const SCALAR* basis, uint n, uint w, uint first_col, uint count,
 *                       SCALAR* partials, uint first_slot)
 *       partial <v_{first_col+t}, v_w> into slot first_slot + t, t < count. Columns are taken
 *       DOTS_CHUNK (16) at a time, each chunk one pass over v_w with 16 private accumulators.
 *   gmres_gram_schmidt (SCALAR* basis, uint n, uint i, SCALAR* partials, uint first_slot,
 *                       uint norm_slot, SCALAR* rmat, ulong r_off)
 *       every group finishes R_{j,i} = slot_sum(first_slot + j - 1), j = 1 .. i-1 (in parallel
 *       over j, WG at a time, into local memory); group 0 stores R_{j,i} at rmat[r_off + j - 1]
 *       (r_off = (i-1) ld); v_i -= sum_j R_{j,i} v_j (j ascending); partial <v_i, v_i> into
 *       norm_slot (the host guarantees norm_slot is not one of the read slots).
 *   gmres_normalize    (SCALAR* basis, uint n, uint i, const SCALAR* partials,
 *                       uint read_groups, uint norm_slot, SCALAR* rmat, ulong r_idx,
 *                       SCALAR* xi_partials, uint xi_slot)
 *       every group finishes nrm = sqrt(slot_sum(partials, read_groups, norm_slot)); group 0
 *       stores it at rmat[r_idx] (r_idx = (i-1) + (i-1) ld); v_i *= 1/nrm (unchanged when
 *       nrm is not > 0); partial <v_0, v_i> into xi_slot of xi_partials (launched with
 *       xi_partials.groups() groups).
 *   basis_axpy         (SCALAR* basis, uint n, uint dst, uint src, SCALAR alpha)
 *       v_dst += alpha v_src (dst != src)
 *   basis_scale        (SCALAR* basis, uint n, uint col, SCALAR alpha)        v_col *= alpha
 *   basis_load         (SCALAR* basis, uint n, uint col, const SCALAR* src, SCALAR alpha)
 *       v_col = alpha src
 *   basis_load_normalized (SCALAR* basis, uint n, uint col, const SCALAR* src,
 *                       const SCALAR* partials, uint groups, uint slot, SCALAR* out,
 *                       ulong out_off)
 *       GMRES's restart on the device (Alg. 6 lines 3-4): every group finishes
 *       rho = ||src|| from the `groups` partials of `slot` in the finish order in BICG_ACC (double
 *       where the device has it: the host's finish and norm, so the same bits), group 0 stores
 *       rho rounded to SCALAR at out[out_off], and v_col = (SCALAR)(1 / rho) src
 *   basis_store        (const SCALAR* basis, uint n, uint col, SCALAR* dst)   dst = v_col
 *   multi_axpy         (SCALAR* y, const SCALAR* basis, uint n, uint first_col, uint count,
 *                       const SCALAR* coeffs)
 *       y += sum_t coeffs[t] v_{first_col+t} (t ascending), one pass over y
 */

/* Columns per pass over v_w: 16 x WG accumulators in local memory (32 KiB for doubles at
 * WG = 256). With 8, v_w was read twice per GMRES step from step 10 on. */
#define DOTS_CHUNK 16

/* Each column's group sum is split into DOTS_PARTS consecutive runs of work-items. */
#define DOTS_PARTS (WG >= DOTS_CHUNK ? WG / DOTS_CHUNK : 1)

/* The group sums of acc[0 .. m-1] (m <= DOTS_CHUNK values per work-item) written as this
 * group's partials of slots first_slot .. first_slot + m - 1. Fixed order, no tree: work-item
 * values go to `scratch` (column k at k*WG); each of m*DOTS_PARTS work-items sums the
 * WG/DOTS_PARTS values j, j + DOTS_PARTS, j + 2 DOTS_PARTS, ... of one column in that order
 * (neighbouring work-items read neighbouring words: runs of consecutive values put all of a
 * warp's reads in one bank, 8.2 us for 14 columns of 65K on the H200 against 4.1 for CUDA);
 * then one work-item per column sums its DOTS_PARTS values in order. Three barriers instead of
 * a tree's log2(WG) levels of m values each. Must be called by all work-items. */
inline void columns_group_sum(__local SCALAR *scratch, __local SCALAR *parts, const SCALAR *acc,
                              uint m, __global SCALAR *partials, uint first_slot) {
    const uint lid = get_local_id(0);
    const uint run = WG / DOTS_PARTS;
    for (uint k = 0; k < m; ++k) {
        scratch[k * WG + lid] = acc[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint t = lid; t < m * DOTS_PARTS; t += WG) {
        const uint k = t / DOTS_PARTS, j = t % DOTS_PARTS;
        __local const SCALAR *v = scratch + k * WG + j;
        SCALAR sum = ZERO;
        for (uint q = 0; q < run; ++q) {
            sum += v[q * DOTS_PARTS];
        }
        parts[t] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = lid; k < m; k += WG) {
        SCALAR sum = ZERO;
        for (uint j = 0; j < DOTS_PARTS; ++j) {
            sum += parts[k * DOTS_PARTS + j];
        }
        partials[(ulong)(first_slot + k) * get_num_groups(0) + get_group_id(0)] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch and parts are reused by the next chunk */
}

pk_kernel void basis_dots(PK_GLOBAL(const SCALAR, basis), const uint n, const uint w, const uint first_col,
                const uint count, PK_GLOBAL(SCALAR, partials), const uint first_slot) {
    PK_BIND(const SCALAR, basis);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[DOTS_CHUNK * WG];
    __local SCALAR parts[DOTS_CHUNK * DOTS_PARTS];
    __global const SCALAR *vw = basis + (ulong)w * n;
    for (uint j0 = 0; j0 < count; j0 += DOTS_CHUNK) {
        const uint m = min((uint)DOTS_CHUNK, count - j0);
        __global const SCALAR *v0 = basis + (ulong)(first_col + j0) * n;
        SCALAR acc[DOTS_CHUNK];
        for (uint t = 0; t < DOTS_CHUNK; ++t) {
            acc[t] = ZERO;
        }
        if (m == DOTS_CHUNK) {
            FOR_EACH(e, n) {
                const SCALAR we = vw[e];
                __global const SCALAR *vj = v0 + e;
#pragma unroll
                for (uint t = 0; t < DOTS_CHUNK; ++t) {
                    acc[t] += vj[(ulong)t * n] * we;
                }
            }
        } else {
            FOR_EACH(e, n) {
                const SCALAR we = vw[e];
                __global const SCALAR *vj = v0 + e;
#pragma unroll
                for (uint t = 0; t < DOTS_CHUNK; ++t) {
                    if (t < m) {
                        acc[t] += vj[(ulong)t * n] * we;
                    }
                }
            }
        }
        columns_group_sum(scratch, parts, acc, m, partials, first_slot + j0);
    }
}

pk_kernel void gmres_gram_schmidt(PK_GLOBAL(SCALAR, basis), const uint n, const uint i,
                        PK_GLOBAL(SCALAR, partials), const uint first_slot, const uint norm_slot,
                        PK_GLOBAL(SCALAR, rmat), const ulong r_off) {
    PK_BIND(SCALAR, basis);
    PK_BIND(SCALAR, partials);
    PK_BIND(SCALAR, rmat);
    __local SCALAR coef[WG];
    __local SCALAR scratch[WG];
    const uint lid = get_local_id(0);
    const uint groups = get_num_groups(0);
    const uint ncoef = i - 1; /* R_{1,i} .. R_{i-1,i} */
    const uint nchunks = ncoef == 0 ? 1 : (ncoef + WG - 1) / WG;
    __global SCALAR *vi = basis + (ulong)i * n;
    SCALAR acc = ZERO;
    for (uint c = 0; c < nchunks; ++c) {
        const uint c0 = c * WG;
        const uint m = min((uint)WG, ncoef - c0);
        barrier(CLK_LOCAL_MEM_FENCE); /* previous chunk done with coef */
        if (lid < m) {
            const SCALAR rji = slot_sum(partials, groups, first_slot + c0 + lid);
            coef[lid] = rji;
            if (get_group_id(0) == 0) {
                rmat[r_off + c0 + lid] = rji;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const bool last = c + 1 == nchunks;
        /* columns v_{c0+1} .. v_{c0+m} */
        __global const SCALAR *vj0 = basis + (ulong)(c0 + 1) * n;
        FOR_EACH(e, n) {
            SCALAR v = vi[e];
            __global const SCALAR *vj = vj0 + e; /* v_{c0+1+t}[e], t = 0, 1, ... */
            for (uint t = 0; t < m; ++t, vj += n) {
                v -= coef[t] * *vj;
            }
            vi[e] = v;
            if (last) {
                acc += v * v;
            }
        }
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, norm_slot, acc);
}

pk_kernel void gmres_normalize(PK_GLOBAL(SCALAR, basis), const uint n, const uint i,
                     PK_GLOBAL(const SCALAR, partials), const uint read_groups,
                     const uint norm_slot, PK_GLOBAL(SCALAR, rmat), const ulong r_idx,
                     PK_GLOBAL(SCALAR, xi_partials), const uint xi_slot) {
    PK_BIND(SCALAR, basis);
    PK_BIND(const SCALAR, partials);
    PK_BIND(SCALAR, rmat);
    PK_BIND(SCALAR, xi_partials);
    __local SCALAR scratch[WG];
    __local SCALAR inv_shared;
    if (get_local_id(0) == 0) {
        const SCALAR nrm = sqrt(slot_sum(partials, read_groups, norm_slot));
        if (get_group_id(0) == 0) {
            rmat[r_idx] = nrm;
        }
        inv_shared = nrm > ZERO ? (SCALAR)1 / nrm : (SCALAR)1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const SCALAR inv = inv_shared;
    __global const SCALAR *v0 = basis;
    __global SCALAR *vi = basis + (ulong)i * n;
    SCALAR acc = ZERO;
    FOR_EACH(e, n) {
        const SCALAR v = vi[e] * inv;
        vi[e] = v;
        acc += v0[e] * v;
    }
    acc = group_sum(scratch, acc);
    write_partial(xi_partials, xi_slot, acc);
}

pk_kernel void basis_axpy(PK_GLOBAL(SCALAR, basis), const uint n, const uint dst, const uint src,
                const SCALAR alpha) {
    PK_BIND(SCALAR, basis);
    __global SCALAR *vd = basis + (ulong)dst * n;
    __global const SCALAR *vs = basis + (ulong)src * n;
    FOR_EACH(e, n) {
        vd[e] += alpha * vs[e];
    }
}

pk_kernel void basis_scale(PK_GLOBAL(SCALAR, basis), const uint n, const uint col, const SCALAR alpha) {
    PK_BIND(SCALAR, basis);
    __global SCALAR *v = basis + (ulong)col * n;
    FOR_EACH(e, n) {
        v[e] *= alpha;
    }
}

pk_kernel void basis_load(PK_GLOBAL(SCALAR, basis), const uint n, const uint col,
                PK_GLOBAL(const SCALAR, src), const SCALAR alpha) {
    PK_BIND(SCALAR, basis);
    PK_BIND(const SCALAR, src);
    __global SCALAR *v = basis + (ulong)col * n;
    FOR_EACH(e, n) {
        v[e] = alpha * src[e];
    }
}

pk_kernel void basis_load_normalized(PK_GLOBAL(SCALAR, basis), const uint n, const uint col,
                                    PK_GLOBAL(const SCALAR, src), PK_GLOBAL(const SCALAR, partials),
                                    const uint groups, const uint slot, PK_GLOBAL(SCALAR, out),
                                    const ulong out_off) {
    PK_BIND(SCALAR, basis);
    PK_BIND(const SCALAR, src);
    PK_BIND(const SCALAR, partials);
    PK_BIND(SCALAR, out);
    __local BICG_ACC stage[SUM_STAGE];
    __local BICG_ACC sums[1];
    ordered_slot_sums(partials, groups, 1u, slot, 0u, 0u, 0u, 0u, stage, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    const BICG_ACC sq = sums[0];
    const BICG_ACC rho = isnan(sq) ? sq : sqrt(fmax(sq, (BICG_ACC)0));
    if (get_group_id(0) == 0 && get_local_id(0) == 0) {
        out[out_off] = (SCALAR)rho;
    }
    const SCALAR alpha = (SCALAR)((BICG_ACC)1 / rho);
    __global SCALAR *v = basis + (ulong)col * n;
    FOR_EACH(e, n) {
        v[e] = alpha * src[e];
    }
}

pk_kernel void basis_store(PK_GLOBAL(const SCALAR, basis), const uint n, const uint col,
                 PK_GLOBAL(SCALAR, dst)) {
    PK_BIND(const SCALAR, basis);
    PK_BIND(SCALAR, dst);
    __global const SCALAR *v = basis + (ulong)col * n;
    FOR_EACH(e, n) {
        dst[e] = v[e];
    }
}

pk_kernel void multi_axpy(PK_GLOBAL(SCALAR, y), PK_GLOBAL(const SCALAR, basis), const uint n,
                const uint first_col, const uint count, PK_GLOBAL(const SCALAR, coeffs)) {
    PK_BIND(SCALAR, y);
    PK_BIND(const SCALAR, basis);
    PK_BIND(const SCALAR, coeffs);
    __global const SCALAR *v0 = basis + (ulong)first_col * n;
    FOR_EACH(e, n) {
        SCALAR acc = y[e];
        for (uint t = 0; t < count; ++t) {
            acc += coeffs[t] * v0[(ulong)t * n + e];
        }
        y[e] = acc;
    }
}

/* gmres_dcgs2_finish (const SCALAR* pa, const SCALAR* pc, uint read_groups, uint count,
 *                     SCALAR* coef, ulong coef_off)
 * The sums of one step of Arnoldi with delayed CGS2 (see gmres_dcgs2_update), one work-group
 * per slot (strided, then a tree: deterministic): pa holds the partials of a_k = <v_{k+1}, u>
 * (slots 0..count-1) and nu = <u, u> (slot count), pc those of c_k = <v_{k+1}, w> and
 * d = <u, w>. Writes a_k at coef[coef_off + k], c_k at coef[coef_off + count + k], nu at
 * [coef_off + 2 count + 2] and d at [+ 3]. Launched with 2 (count + 1) work-groups, so that the
 * update's work-groups read finished sums instead of each summing every partial again. */
pk_kernel void gmres_dcgs2_finish(PK_GLOBAL(const SCALAR, pa), PK_GLOBAL(const SCALAR, pc),
                                  const uint read_groups, const uint count, PK_GLOBAL(SCALAR, coef),
                                  const ulong coef_off) {
    PK_BIND(const SCALAR, pa);
    PK_BIND(const SCALAR, pc);
    PK_BIND(SCALAR, coef);
    __local SCALAR scratch[WG];
    const uint b = get_group_id(0);
    const bool second = b > count; /* groups 0..count: pa, count+1..2count+1: pc */
    const uint slot = second ? b - count - 1 : b;
    __global const SCALAR *p = (second ? pc : pa) + (ulong)slot * read_groups;
    SCALAR acc = ZERO;
    for (uint g = get_local_id(0); g < read_groups; g += WG) {
        acc += p[g];
    }
    acc = group_sum(scratch, acc);
    if (get_local_id(0) == 0) {
        const ulong at = slot < count ? (second ? count + slot : slot) : (second ? 2 * count + 3 : 2 * count + 2);
        coef[coef_off + at] = acc;
    }
}

/* The column pass of a DCGS2 step over columns c0 + 1 .. c0 + m (coefficients ca, cc), on the
 * last chunk also the scaling: u <- (u - sum a_k v_k) inv, w <- (w - sum c_k v_k - g u) inv. */
inline void dcgs2_columns(__global SCALAR *basis, const uint n, const uint ucol, const uint c0, const uint m,
                          const bool last, const SCALAR inv, const SCALAR g, __local const SCALAR *ca,
                          __local const SCALAR *cc) {
    __global SCALAR *u = basis + (ulong)ucol * n;
    __global SCALAR *w = u + n;
    __global const SCALAR *vj0 = basis + (ulong)(c0 + 1) * n;
    FOR_EACH(e, n) {
        SCALAR uu = u[e];
        SCALAR ww = w[e];
        __global const SCALAR *vj = vj0 + e;
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
inline void dcgs2_beta_g(const SCALAR s_aa, const SCALAR s_ac, const SCALAR nu, const SCALAR d, const uint count,
                         __global SCALAR *coef, const ulong coef_off, __local SCALAR *shared) {
    const SCALAR b2 = nu - s_aa;
    const SCALAR beta = b2 > ZERO ? sqrt(b2) : (isnan(b2) ? b2 : ZERO);
    const SCALAR g = beta > ZERO ? (d - s_ac) / beta : ZERO;
    shared[0] = beta;
    shared[1] = g;
    if (get_group_id(0) == 0) {
        coef[coef_off + 2 * count] = beta;
        coef[coef_off + 2 * count + 1] = g;
    }
}

/* gmres_dcgs2_update (SCALAR* basis, uint n, uint ucol, SCALAR* coef, ulong coef_off,
 *                     uint start_next)  (start_next: the CUDA twin's early start of the next
 * kernel, ignored here)
 * One step of Arnoldi with delayed CGS2 (DCGS2, Swirydowicz, Langou, Ananthan, Yang, Thomas
 * 2020): u = v_ucol is the once-orthogonalized, unnormalized previous vector, w = v_{ucol+1} =
 * A M^-1 u, the columns 1 .. ucol-1 are final and orthonormal (count = ucol - 1 of them).
 * coef at coef_off holds what gmres_dcgs2_finish wrote: a_k, c_k, nu and d. Every group forms
 * beta = sqrt(nu - sum a_k^2) (0 when not positive: breakdown, nothing changed) and
 * g = (d - sum a_k c_k) / beta (sums in k order, one work-item), then, in one pass over the
 * columns:
 *   u <- q = (u - sum_k a_k v_{k+1}) / beta          (the reorthogonalized, normalized vector)
 *   w <- (w - sum_k c_k v_{k+1} - g q) / beta        (the next once-orthogonalized vector)
 * Group 0 writes beta and g at coef[coef_off + 2 count] and [+1] (no group reads those).
 * Launched with the partials' group count.
 */
pk_kernel void gmres_dcgs2_update(PK_GLOBAL(SCALAR, basis), const uint n, const uint ucol,
                                  PK_GLOBAL(SCALAR, coef), const ulong coef_off, const uint start_next) {
    PK_BIND(SCALAR, basis);
    PK_BIND(SCALAR, coef);
    __local SCALAR ca[WG];
    __local SCALAR cc[WG];
    __local SCALAR shared[2];
    const uint lid = get_local_id(0);
    const uint count = ucol - 1;
    __global const SCALAR *co = coef + coef_off;
    if (lid == 0) {
        SCALAR s_aa = ZERO, s_ac = ZERO;
        for (uint k = 0; k < count; ++k) {
            const SCALAR a = co[k];
            s_aa += a * a;
            s_ac += a * co[count + k];
        }
        dcgs2_beta_g(s_aa, s_ac, co[2 * count + 2], co[2 * count + 3], count, coef, coef_off, shared);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
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
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < m) {
            ca[lid] = co[c0 + lid];
            cc[lid] = co[count + c0 + lid];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        dcgs2_columns(basis, n, ucol, c0, m, ch + 1 == nchunks, inv, g, ca, cc);
    }
}

/* gmres_dcgs2_update_small (SCALAR* basis, uint n, uint ucol, const SCALAR* pa,
 *                           const SCALAR* pc, SCALAR* coef, ulong coef_off, uint start_next)
 * (start_next ignored, as gmres_dcgs2_update's)
 * gmres_dcgs2_finish and gmres_dcgs2_update in one launch, for partials of few groups (the
 * host picks it when pa has at most DCGS2_SMALL_MAX_GROUPS groups and 2 (count + 1) <= WG):
 * every work-group sums the 2 (count + 1) slots itself, work-item j one slot sequentially in
 * group order, and uses them from __local memory; group 0 also writes them to coef as
 * gmres_dcgs2_finish does. Launched with the partials' group count. */
pk_kernel void gmres_dcgs2_update_small(PK_GLOBAL(SCALAR, basis), const uint n, const uint ucol,
                                        PK_GLOBAL(const SCALAR, pa), PK_GLOBAL(const SCALAR, pc),
                                        PK_GLOBAL(SCALAR, coef), const ulong coef_off,
                                        const uint start_next) {
    PK_BIND(SCALAR, basis);
    PK_BIND(const SCALAR, pa);
    PK_BIND(const SCALAR, pc);
    PK_BIND(SCALAR, coef);
    __local SCALAR ca[WG];
    __local SCALAR cc[WG];
    __local SCALAR nu_d[2];
    __local SCALAR shared[2];
    const uint lid = get_local_id(0);
    const uint count = ucol - 1;
    const uint groups = get_num_groups(0);
    if (lid < 2 * (count + 1)) {
        const bool second = lid > count; /* 0..count: pa, count+1..2count+1: pc */
        const uint slot = second ? lid - count - 1 : lid;
        __global const SCALAR *p = (second ? pc : pa) + (ulong)slot * groups;
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
        if (get_group_id(0) == 0) {
            const ulong at = slot < count ? (second ? count + slot : slot) : (second ? 2 * count + 3 : 2 * count + 2);
            coef[coef_off + at] = acc;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        SCALAR s_aa = ZERO, s_ac = ZERO;
        for (uint k = 0; k < count; ++k) {
            const SCALAR a = ca[k];
            s_aa += a * a;
            s_ac += a * cc[k];
        }
        dcgs2_beta_g(s_aa, s_ac, nu_d[0], nu_d[1], count, coef, coef_off, shared);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const SCALAR beta = shared[0];
    if (!(beta > ZERO)) {
        return; /* breakdown: the vectors stay as they are */
    }
    dcgs2_columns(basis, n, ucol, 0, count, true, (SCALAR)1 / beta, shared[1], ca, cc);
}

/* basis_dots2 (const SCALAR* basis, uint n, uint wa, uint wb, uint first_col, uint count_a,
 *              uint count_b, SCALAR* pa, SCALAR* pb)
 * Partials of <v_{first_col+t}, v_wa> into slot t of pa (t < count_a) and of
 * <v_{first_col+t}, v_wb> into slot t of pb (t < count_b <= count_a), reading every column
 * once for both targets (DCGS2: the dots of u, with <u, u>, and of w in one pass). The layout
 * of the CUDA kernel: each group stages a tile of WG entries of both targets in local memory,
 * then its teams of DOTS_TEAM work-items take DOTS_PER_TEAM columns each over the tile
 * (coalesced reads of a column's tile segment), so up to DOTS2_PER_PASS columns (32 at
 * WG = 256) share one read of the targets. Until 2026-11-24 (i) every work-item took 8
 * columns for its own elements: on the H200 at n = 4.1M, 229 and 434 us for 16 and 29 columns
 * against CUDA's 136 and 234. Both partials have the launch's group count. */
#define DOTS2_CHUNK (DOTS_CHUNK / 2)
/* The products of element e of two targets (values ae, be) with the chunk's columns
 * (v0 + t n, t < m), added to acc_a / acc_b (basis_dots2 and gmres_dcgs2_spmv_dots). */
inline void chunk_row_dots(__global const SCALAR *v0, const uint e, const uint n, const uint m, const SCALAR ae,
                           const SCALAR be, SCALAR *acc_a, SCALAR *acc_b) {
    __global const SCALAR *vj = v0 + e;
#pragma unroll
    for (uint t = 0; t < DOTS2_CHUNK; ++t) {
        if (t < m) {
            const SCALAR q = vj[(ulong)t * n];
            acc_a[t] += q * ae;
            acc_b[t] += q * be;
        }
    }
}

/* Work-items of a team (the columns of basis_dots2 are split between teams) and columns per
 * team per pass. */
#define DOTS_TEAM (WG < 32 ? WG : 32)
#define DOTS_TEAMS (WG / DOTS_TEAM)
#define DOTS_PER_TEAM 4
#define DOTS2_PER_PASS (DOTS_PER_TEAM * DOTS_TEAMS)

/* The group's partials of the columns its teams summed (column j0 + team + c DOTS_TEAMS of
 * pa when below count_a, of pb when below count_b): every work-item's values to `scratch`,
 * then one work-item per (team, column, target) adds the team's DOTS_TEAM values in lane
 * order (fixed order). Must be called by all work-items. */
inline void team_column_partials(__local SCALAR *scratch, const SCALAR *acc_a, const SCALAR *acc_b,
                                 const uint j0, const uint count_a, const uint count_b,
                                 __global SCALAR *pa, __global SCALAR *pb) {
    const uint lid = get_local_id(0);
    for (uint c = 0; c < DOTS_PER_TEAM; ++c) {
        scratch[(2 * c) * WG + lid] = acc_a[c];
        scratch[(2 * c + 1) * WG + lid] = acc_b[c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong groups = get_num_groups(0), group = get_group_id(0);
    for (uint t = lid; t < 2 * DOTS_PER_TEAM * DOTS_TEAMS; t += WG) {
        const uint v = t % (2 * DOTS_PER_TEAM);
        const uint team = t / (2 * DOTS_PER_TEAM);
        __local const SCALAR *vals = scratch + v * WG + team * DOTS_TEAM;
        SCALAR sum = ZERO;
        for (uint q = 0; q < DOTS_TEAM; ++q) {
            sum += vals[q];
        }
        const uint j = j0 + team + (v / 2) * DOTS_TEAMS;
        if ((v & 1) == 0 && j < count_a) {
            pa[(ulong)j * groups + group] = sum;
        }
        if ((v & 1) == 1 && j < count_b) {
            pb[(ulong)j * groups + group] = sum;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused by the next pass */
}

pk_kernel void basis_dots2(PK_GLOBAL(const SCALAR, basis), const uint n, const uint wa, const uint wb,
                           const uint first_col, const uint count_a, const uint count_b,
                           PK_GLOBAL(SCALAR, pa), PK_GLOBAL(SCALAR, pb)) {
    PK_BIND(const SCALAR, basis);
    PK_BIND(SCALAR, pa);
    PK_BIND(SCALAR, pb);
    __local SCALAR tile_a[WG];
    __local SCALAR tile_b[WG];
    __local SCALAR scratch[2 * DOTS_PER_TEAM * WG];
    __global const SCALAR *va = basis + (ulong)wa * n;
    __global const SCALAR *vb = basis + (ulong)wb * n;
    const uint lid = get_local_id(0);
    const uint team = lid / DOTS_TEAM;
    const uint lane = lid % DOTS_TEAM;
    const uint stride = get_num_groups(0) * WG;
    for (uint j0 = 0; j0 < count_a; j0 += DOTS2_PER_PASS) {
        SCALAR acc_a[DOTS_PER_TEAM];
        SCALAR acc_b[DOTS_PER_TEAM];
        for (uint c = 0; c < DOTS_PER_TEAM; ++c) {
            acc_a[c] = ZERO;
            acc_b[c] = ZERO;
        }
        for (uint t0 = get_group_id(0) * WG; t0 < n; t0 += stride) {
            const uint e = t0 + lid;
            barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is consumed */
            tile_a[lid] = e < n ? va[e] : ZERO;
            tile_b[lid] = e < n ? vb[e] : ZERO;
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint len = min((uint)WG, n - t0);
            for (uint c = 0; c < DOTS_PER_TEAM; ++c) {
                const uint j = j0 + team + c * DOTS_TEAMS;
                if (j < count_a) {
                    __global const SCALAR *vj = basis + (ulong)(first_col + j) * n + t0;
                    for (uint q = lane; q < len; q += DOTS_TEAM) {
                        const SCALAR v = vj[q];
                        acc_a[c] += v * tile_a[q];
                        acc_b[c] += v * tile_b[q];
                    }
                }
            }
        }
        team_column_partials(scratch, acc_a, acc_b, j0, count_a, count_b, pa, pb);
    }
}

/* gmres_dcgs2_spmv_dots (const uint* row_ptr, const uint* col_idx, const SCALAR* values, uint k,
 *                        uint early, SCALAR* basis, uint n, uint ucol, SCALAR* pa, SCALAR* pb):
 * (early: the CUDA twin's early matrix reads, ignored here) one DCGS2
 * step's product and dots in one launch, for a CSR matrix without long rows (k work-items per
 * row, as spmv_dots_csr): w = A u (u = column ucol, w = column ucol + 1) with d = <u, w> into
 * slot ucol - 1 of pb, and basis_dots2(basis, ucol, ucol + 1, columns 1..ucol, ucol - 1, pa, pb):
 * a_j = <v_j, u> into slots 0..ucol-1 of pa, c_j = <v_j, w> into slots 0..ucol-2 of pb.
 * Columns in chunks of DOTS2_CHUNK as basis_dots2; the first chunk's pass also computes w (the
 * row's leading work-item writes w_row and reads it back in the later passes: no other
 * work-item touches it). Launched with the partials' group count. */
pk_kernel void gmres_dcgs2_spmv_dots(PK_GLOBAL_RESTRICT(const uint, row_ptr),
                                     PK_GLOBAL_RESTRICT(const uint, col_idx),
                                     PK_GLOBAL_RESTRICT(const SCALAR, values), const uint k, const uint early,
                                     PK_GLOBAL(SCALAR, basis), const uint n, const uint ucol,
                                     PK_GLOBAL(SCALAR, pa), PK_GLOBAL(SCALAR, pb)) {
    PK_BIND_RESTRICT(const uint, row_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND(SCALAR, basis);
    PK_BIND(SCALAR, pa);
    PK_BIND(SCALAR, pb);
    __local SCALAR scratch[DOTS_CHUNK * WG];
    __local SCALAR parts[DOTS_CHUNK * DOTS_PARTS];
    const uint count_a = ucol;
    const uint count_b = ucol - 1;
    __global const SCALAR *u = basis + (ulong)ucol * n;
    __global SCALAR *w = basis + (ulong)(ucol + 1) * n;
    const uint lid = get_local_id(0);
    SCALAR acc_d = ZERO;
    for (uint j0 = 0; j0 < count_a; j0 += DOTS2_CHUNK) {
        const uint ma = min((uint)DOTS2_CHUNK, count_a - j0);
        const uint mb = count_b > j0 ? min(ma, count_b - j0) : 0;
        __global const SCALAR *v0 = basis + (ulong)(1 + j0) * n;
        SCALAR acc_a[DOTS2_CHUNK];
        SCALAR acc_b[DOTS2_CHUNK];
        for (uint t = 0; t < DOTS2_CHUNK; ++t) {
            acc_a[t] = ZERO;
            acc_b[t] = ZERO;
        }
        if (k == 1) {
            FOR_EACH(row, n) {
                SCALAR wr;
                if (j0 == 0) {
                    wr = csr_row(row_ptr, col_idx, values, u, 0, row, n, 1, 0xffffffffu, w, 0, scratch);
                    w[row] = wr;
                    acc_d += wr * u[row];
                } else {
                    wr = w[row];
                }
                chunk_row_dots(v0, row, n, ma, u[row], wr, acc_a, acc_b);
            }
        } else {
            const uint rows_per_group = WG / k;
            const uint stride = get_num_groups(0) * rows_per_group;
            const uint lane = lid & (k - 1);
            for (uint base = get_group_id(0) * rows_per_group; base < n; base += stride) {
                const uint row = base + lid / k;
                SCALAR wr = ZERO;
                if (j0 == 0) {
                    /* every work-item: csr_row reduces the row's k parts with barriers */
                    wr = csr_row(row_ptr, col_idx, values, u, 0, row, n, k, 0xffffffffu, w, 0, scratch);
                }
                if (lane == 0 && row < n) {
                    if (j0 == 0) {
                        w[row] = wr;
                        acc_d += wr * u[row];
                    } else {
                        wr = w[row];
                    }
                    chunk_row_dots(v0, row, n, ma, u[row], wr, acc_a, acc_b);
                }
            }
        }
        columns_group_sum(scratch, parts, acc_a, ma, pa, j0);
        if (mb > 0) {
            columns_group_sum(scratch, parts, acc_b, mb, pb, j0);
        }
    }
    acc_d = group_sum(scratch, acc_d);
    write_partial(pb, count_a - 1, acc_d);
}

/* gmres_dcgs2_spmv_dots_sell (uint c, const uint* slice_ptr, const uint* col_idx,
 *                             const SCALAR* values, const uint* row_perm, const uint* row_len,
 *                             uint n, uint compact, const ushort* col_off, const uint* slice_col,
 *                             SCALAR* basis, uint ucol, SCALAR* pa, SCALAR* pb):
 * gmres_dcgs2_spmv_dots for a SELL-C-sigma matrix whose sorting window divides WG (or is 1),
 * so the WG sorted positions of a group's tile hold the rows of the same range: work-item t
 * sums the row at position t0 + t (as spmv_dots_sell), writes it to w and stages it with u's
 * entry in the tiles at its row's place; the group's teams then take the columns over the tiles
 * as basis_dots2 does (one pass: ucol <= DOTS2_PER_PASS). The same results and slots as
 * gmres_dcgs2_spmv_dots. Launched with the partials' group count. */
pk_kernel void gmres_dcgs2_spmv_dots_sell(const uint c, PK_GLOBAL_RESTRICT(const uint, slice_ptr),
                                          PK_GLOBAL_RESTRICT(const uint, col_idx),
                                          PK_GLOBAL_RESTRICT(const SCALAR, values),
                                          PK_GLOBAL_RESTRICT(const uint, row_perm),
                                          PK_GLOBAL_RESTRICT(const uint, row_len), const uint n,
                                          const uint compact, PK_GLOBAL_RESTRICT(const ushort, col_off),
                                          PK_GLOBAL_RESTRICT(const uint, slice_col), PK_GLOBAL(SCALAR, basis),
                                          const uint ucol, PK_GLOBAL(SCALAR, pa), PK_GLOBAL(SCALAR, pb)) {
    PK_BIND_RESTRICT(const uint, slice_ptr);
    PK_BIND_RESTRICT(const uint, col_idx);
    PK_BIND_RESTRICT(const SCALAR, values);
    PK_BIND_RESTRICT(const uint, row_perm);
    PK_BIND_RESTRICT(const uint, row_len);
    PK_BIND_RESTRICT(const ushort, col_off);
    PK_BIND_RESTRICT(const uint, slice_col);
    PK_BIND(SCALAR, basis);
    PK_BIND(SCALAR, pa);
    PK_BIND(SCALAR, pb);
    __local SCALAR tile_u[WG];
    __local SCALAR tile_w[WG];
    __local SCALAR scratch[2 * DOTS_PER_TEAM * WG];
    const uint count_a = ucol;
    const uint count_b = ucol - 1;
    __global const SCALAR *u = basis + (ulong)ucol * n;
    __global SCALAR *w = basis + (ulong)(ucol + 1) * n;
    const uint lid = get_local_id(0);
    const uint team = lid / DOTS_TEAM;
    const uint lane = lid % DOTS_TEAM;
    const uint stride = get_num_groups(0) * WG;
    SCALAR acc_a[DOTS_PER_TEAM];
    SCALAR acc_b[DOTS_PER_TEAM];
    for (uint k = 0; k < DOTS_PER_TEAM; ++k) {
        acc_a[k] = ZERO;
        acc_b[k] = ZERO;
    }
    SCALAR acc_d = ZERO;
    for (uint t0 = get_group_id(0) * WG; t0 < n; t0 += stride) {
        const uint p = t0 + lid;
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is consumed */
        if (p < n) {
            const SCALAR v = sell_row(c, slice_ptr, col_idx, values, row_len, compact, col_off, slice_col, u, 0, p);
            const uint row = row_perm[p];
            const SCALAR ur = u[row];
            w[row] = v;
            acc_d += v * ur;
            tile_u[row - t0] = ur;
            tile_w[row - t0] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint len = min((uint)WG, n - t0);
        for (uint k = 0; k < DOTS_PER_TEAM; ++k) {
            const uint j = team + k * DOTS_TEAMS;
            if (j < count_a) {
                __global const SCALAR *vj = basis + (ulong)(1 + j) * n + t0;
                for (uint q = lane; q < len; q += DOTS_TEAM) {
                    const SCALAR x = vj[q];
                    acc_a[k] += x * tile_u[q];
                    acc_b[k] += x * tile_w[q];
                }
            }
        }
    }
    team_column_partials(scratch, acc_a, acc_b, 0, count_a, count_b, pa, pb);
    acc_d = group_sum(scratch, acc_d);
    write_partial(pb, count_a - 1, acc_d);
}
