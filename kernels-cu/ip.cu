/*
 * ip.cu -- matrix-free Incomplete Poisson preconditioner (PrecondOps). Mirrors kernels-cl/ip.cl
 * (the formula, argument lists and arithmetic order are documented there); conventions in
 * reduce.cu.
 *
 *   ip_stencil     (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                   const SCALAR* r, SCALAR* z)
 *   ip_stencil_dot (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                   const SCALAR* r, SCALAR* z, SCALAR* partials, uint slot)
 *   ip_stencil_quad (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                    const SCALAR* v, SCALAR* partials, uint slot)
 *   ip_pcg_update (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz, SCALAR alpha,
 *                  SCALAR beta, SCALAR* x, const SCALAR* r, SCALAR* r_next, SCALAR* p,
 *                  const SCALAR* ap, SCALAR* partials, uint slot_rr, uint slot_rz)
 *   ip_stencil_check (uint nx, uint ny, uint nz, SCALAR d, SCALAR ax, SCALAR ay, SCALAR az,
 *                     const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                     SCALAR* partials, uint slot)
 * ip_stencil uses any grid; the others use partials.groups() blocks.
 */

#define IP_GROUP blockIdx.x
#define IP_GROUPS gridDim.x
#define IP_LOCAL threadIdx.x
/* The element loop of the stencil kernels, a march along z: a work item is one segment of WG
 * consecutive points of a plane (one group's work-items) over IP_LZ consecutive planes, the
 * groups striding over the items from the last plane back (segments fastest; the product
 * before <Ap, M^-1 Ap> wrote A p from the first row on, so its last planes may still be in L2). Each work-item keeps its column's values at
 * z-1, z and z+1 in registers (`prev`, `cur`, `next`), so a point loads one new value and only
 * its x and y neighbours come from the caches; the new values are loaded four planes ahead
 * (`a0_`..`a3_`), so that four loads are in flight per work-item (with one, the march was
 * latency-bound at the partials' group count: 1.6 TB/s). (A grid-stride loop loads all six neighbours of
 * every point through L2, and two divisions per point find its coordinates: the H200 spent
 * ~100-128 us on one <v, M^-1 v> at n = 16.8M, 1 TB/s.) Inside: i, xc, yc, zc, prev, cur, next,
 * plane; V(j) is the value of the vector at point j. */
#define IP_LZ 16u
#define IP_MARCH_BEGIN(V)                                                                          \
    const uint plane = nx * ny;                                                                    \
    const uint segs_ = (plane + (uint)WG - 1) / (uint)WG;                                          \
    const uint items_ = segs_ * ((nz + IP_LZ - 1) / IP_LZ);                                        \
    for (uint k_ = IP_GROUP; k_ < items_; k_ += IP_GROUPS) {                                       \
        const uint item_ = items_ - 1 - k_;                                                        \
        const uint q_ = (item_ % segs_) * (uint)WG + IP_LOCAL;                                     \
        if (q_ >= plane) continue;                                                                 \
        const uint yc = q_ / nx;                                                                   \
        const uint xc = q_ - yc * nx;                                                              \
        const uint z0_ = (item_ / segs_) * IP_LZ;                                                  \
        const uint z1_ = min(z0_ + IP_LZ, nz);                                                     \
        const uint zlast_ = min(z1_, nz - 1);                                                      \
        uint i = q_ + z0_ * plane;                                                                 \
        SCALAR prev = z0_ > 0 ? V(i - plane) : ZERO;                                               \
        SCALAR cur = V(i);                                                                         \
        SCALAR a0_ = z0_ + 1 <= zlast_ ? V(i + plane) : ZERO;                                      \
        SCALAR a1_ = z0_ + 2 <= zlast_ ? V(i + 2 * plane) : ZERO;                                  \
        SCALAR a2_ = z0_ + 3 <= zlast_ ? V(i + 3 * plane) : ZERO;                                  \
        SCALAR a3_ = z0_ + 4 <= zlast_ ? V(i + 4 * plane) : ZERO;                                  \
        for (uint zc = z0_; zc < z1_; zc++, i += plane) {                                          \
            const SCALAR next = a0_;                                                               \
            a0_ = a1_;                                                                             \
            a1_ = a2_;                                                                             \
            a2_ = a3_;                                                                             \
            a3_ = zc + 5 <= zlast_ ? V(i + 5 * plane) : ZERO;
#define IP_MARCH_END                                                                               \
            prev = cur;                                                                            \
            cur = next;                                                                            \
        }                                                                                          \
    }

/* (M^-1 v)_i at point i with coordinates (xc, yc, zc) into `out`, in the order of the header: V(j)
 * gives the x and y neighbours, ZM, C and ZP the values at z-1, i and z+1 (expressions, evaluated
 * only where the sum needs them). */
#define IP_ROW_OF(V, ZM, C, ZP, out)                                                               \
    SCALAR out;                                                                                    \
    {                                                                                              \
        SCALAR m_ = ZERO;                                                                          \
        if (zc > 0) m_ += wz * wz;                                                                 \
        if (yc > 0) m_ += wy * wy;                                                                 \
        if (xc > 0) m_ += wx * wx;                                                                 \
        m_ += (SCALAR)1;                                                                           \
        SCALAR a_ = ZERO;                                                                          \
        if (zc > 0) a_ += wz * (ZM);                                                               \
        if (yc > 0) a_ += wy * V(i - nx);                                                          \
        if (xc > 0) a_ += wx * V(i - 1);                                                           \
        a_ += m_ * (C);                                                                            \
        if (xc + 1 < nx) a_ += wx * V(i + 1);                                                      \
        if (yc + 1 < ny) a_ += wy * V(i + nx);                                                     \
        if (zc + 1 < nz) a_ += wz * (ZP);                                                          \
        out = a_;                                                                                  \
    }

/* The row at the march's point (z-1 is prev, i cur, z+1 next). */
#define IP_MARCH_ROW(V, out) IP_ROW_OF(V, prev, cur, next, out)

#define IP_R(j) r[j]
#define IP_V(j) v[j]
#define IP_RA(j) (r[j] - alpha * ap[j])

extern "C" __launch_bounds__(WG) __global__ void ip_stencil(const uint nx, const uint ny, const uint nz, const SCALAR wx,
                                                            const SCALAR wy, const SCALAR wz,
                                                            const SCALAR *__restrict__ r, SCALAR *__restrict__ z) {
    PDL_WAIT();
    IP_MARCH_BEGIN(IP_R)
    IP_MARCH_ROW(IP_R, zi)
    z[i] = zi;
    IP_MARCH_END
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_dot(const uint nx, const uint ny, const uint nz,
                                                                const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                                                const SCALAR *__restrict__ r, SCALAR *__restrict__ z,
                                                                SCALAR *partials, const uint slot) {
    PDL_WAIT();
    SCALAR acc = ZERO;
    IP_MARCH_BEGIN(IP_R)
    IP_MARCH_ROW(IP_R, zi)
    z[i] = zi;
    acc += cur * zi;
    IP_MARCH_END
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_quad(const uint nx, const uint ny, const uint nz,
                                                                 const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                                                 const SCALAR *__restrict__ v, SCALAR *partials,
                                                                 const uint slot) {
    PDL_WAIT();
    SCALAR acc = ZERO;
    /* M^-1 is symmetric: <v, M^-1 v> = sum_i v_i (m_i v_i + 2 sum over the lower neighbours j
     * of w v_j), three neighbour loads per point instead of six. */
    IP_MARCH_BEGIN(IP_V)
    SCALAR m_ = ZERO;
    if (zc > 0) m_ += wz * wz;
    if (yc > 0) m_ += wy * wy;
    if (xc > 0) m_ += wx * wx;
    m_ += (SCALAR)1;
    SCALAR lower = ZERO;
    if (zc > 0) lower += wz * prev;
    if (yc > 0) lower += wy * IP_V(i - nx);
    if (xc > 0) lower += wx * IP_V(i - 1);
    acc += cur * (m_ * cur + (SCALAR)2 * lower);
    (void)next;
    IP_MARCH_END
    write_partial(partials, slot, block_sum1(acc));
}

/* The row at point i, every neighbour loaded where the sum needs it. */
#define IP_POINT_ROW(V, out) IP_ROW_OF(V, V(i - plane), V(i), V(i + plane), out)

/* The update is a grid-stride loop with the point's coordinates by division (its five vectors
 * stream through the GPU in one sweep). Measured on the H200 at n = 16.8M against the other
 * layouts: 254 us here, the z-march 277 us (342 with loads ahead), coordinates walked with
 * carries 283 us, multiply-shift division 279 us (kernels-cl/ip.cl walks: 276 us there). */
extern "C" __launch_bounds__(WG) __global__ void ip_pcg_update(
    const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy, const SCALAR wz, const SCALAR alpha,
    const SCALAR beta, SCALAR *__restrict__ x, const SCALAR *__restrict__ r, SCALAR *__restrict__ r_next,
    SCALAR *__restrict__ p, const SCALAR *__restrict__ ap, SCALAR *partials, const uint slot_rr, const uint slot_rz) {
    PDL_WAIT();
    const uint plane = nx * ny;
    const uint n = plane * nz;
    SCALAR acc[2] = {ZERO, ZERO};
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const uint zc = i / plane;
        const uint rem = i - zc * plane;
        const uint yc = rem / nx;
        const uint xc = rem - yc * nx;
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        IP_POINT_ROW(IP_RA, zi)
        r_next[i] = ri;
        p[i] = zi + beta * pi;
        acc[0] += ri * ri;
        acc[1] += ri * zi;
    }
    block_sum<2>(acc);
    write_partial(partials, slot_rr, acc[0]);
    write_partial(partials, slot_rz, acc[1]);
}

/* One expected entry of an ip_stencil_check row: present and nonzero entries must come next. */
#define IP_EXPECT(present, col, val)                                                                   \
    if ((present) && (val) != ZERO) {                                                                  \
        if (k >= end || col_idx[k] != (col) || values[k] != (val)) bad = 1;                            \
        k++;                                                                                           \
    }

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_check(
    const uint nx, const uint ny, const uint nz, const SCALAR d, const SCALAR ax, const SCALAR ay, const SCALAR az,
    const uint *__restrict__ row_ptr, const uint *__restrict__ col_idx, const SCALAR *__restrict__ values,
    SCALAR *partials, const uint slot) {
    PDL_WAIT();
    const uint n = nx * ny * nz;
    const uint plane = nx * ny;
    SCALAR acc = ZERO;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const uint zc = i / plane;
        const uint rem = i - zc * plane;
        const uint yc = rem / nx;
        const uint xc = rem - yc * nx;
        uint k = row_ptr[i];
        const uint end = row_ptr[i + 1];
        uint bad = 0;
        IP_EXPECT(zc > 0, i - plane, az)
        IP_EXPECT(yc > 0, i - nx, ay)
        IP_EXPECT(xc > 0, i - 1, ax)
        IP_EXPECT(1, i, d)
        IP_EXPECT(xc + 1 < nx, i + 1, ax)
        IP_EXPECT(yc + 1 < ny, i + nx, ay)
        IP_EXPECT(zc + 1 < nz, i + plane, az)
        if (k != end) bad = 1;
        if (bad) acc += (SCALAR)1;
    }
    write_partial(partials, slot, block_sum1(acc));
}
