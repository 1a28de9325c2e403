/*
 * ip.cl -- matrix-free Incomplete Poisson preconditioner (PrecondOps), [Ament10] Section IV.C,
 * eq. (15) cut to the pattern of A, for a constant-coefficient 5/7-point stencil on an
 * nx x ny x nz grid (lexicographic numbering i = x + nx (y + ny z), Dirichlet neighbours
 * eliminated). Conventions (SCALAR, WG, uint, FOR_EACH, partials): see reduce.cl.
 *
 * With A = L + D + L^T, D = d I (constant diagonal) and off-diagonal a_x, a_y, a_z per axis,
 * M^-1 = (I - L D^-1)(I - D^-1 L^T) on the pattern of A has
 *   off-diagonal entries w_axis = -a_axis / d (both neighbours of the axis),
 *   diagonal m_i = 1 + sum over the lower neighbours present of w_axis^2,
 * so nothing but the three weights and the grid is stored.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   ip_stencil     (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                   const SCALAR* r, SCALAR* z)                         z = M^-1 r
 *   ip_stencil_dot (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                   const SCALAR* r, SCALAR* z, SCALAR* partials, uint slot)
 *                                                     z = M^-1 r, partial <r, z> into slot
 *   ip_stencil_quad (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                    const SCALAR* v, SCALAR* partials, uint slot)
 *                     partial <v, M^-1 v> into slot, nothing stored (as sum_i v_i (m_i v_i +
 *                     2 sum over the lower neighbours j of w v_j): M^-1 is symmetric)
 *   ip_pcg_update (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz, SCALAR alpha,
 *                  SCALAR beta, SCALAR* x, const SCALAR* r, SCALAR* r_next, SCALAR* p,
 *                  const SCALAR* ap, SCALAR* partials, uint slot_rr, uint slot_rz)
 *       the pipelined PCG update with z recomputed instead of recurred: x += alpha p;
 *       r_next = r - alpha Ap; z = M^-1 r_next (each neighbour's r_j - alpha Ap_j formed as
 *       r_next_j is); p = z + beta p; partials <r_next, r_next>, <r_next, z>. r_next must not
 *       be r (other rows read r's neighbours).
 *   ip_stencil_check (uint nx, uint ny, uint nz, SCALAR d, SCALAR ax, SCALAR ay, SCALAR az,
 *                     const uint* row_ptr, const uint* col_idx, const SCALAR* values,
 *                     SCALAR* partials, uint slot)
 *       partial count of the CSR rows that differ from the stencil (diagonal d, neighbour
 *       coefficients a_x, a_y, a_z; zero coefficients and Dirichlet neighbours absent, columns
 *       ascending) into slot: 0 exactly when the matrix is the stencil's.
 * Arithmetic order (the host backend and the assembled matrix use the same): the diagonal is
 * ((0 + wz^2) + wy^2) + wx^2 + 1 over the neighbours present (z, y, x order), then
 * z_i = m_i r_i + ... summed from 0 in column order z-1, y-1, x-1, i, x+1, y+1, z+1.
 * ip_stencil uses any number of groups; the others use partials.groups().
 */

#define IP_GROUP ((uint)get_group_id(0))
#define IP_GROUPS ((uint)get_num_groups(0))
#define IP_LOCAL ((uint)get_local_id(0))
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

pk_kernel void ip_stencil(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                          const SCALAR wz, PK_GLOBAL(const SCALAR, r), PK_GLOBAL(SCALAR, z)) {
    PK_BIND(const SCALAR, r);
    PK_BIND(SCALAR, z);
    IP_MARCH_BEGIN(IP_R)
    IP_MARCH_ROW(IP_R, zi)
    z[i] = zi;
    IP_MARCH_END
}

pk_kernel void ip_stencil_dot(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                              const SCALAR wz, PK_GLOBAL(const SCALAR, r), PK_GLOBAL(SCALAR, z),
                              PK_GLOBAL(SCALAR, partials), const uint slot) {
    PK_BIND(const SCALAR, r);
    PK_BIND(SCALAR, z);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    IP_MARCH_BEGIN(IP_R)
    IP_MARCH_ROW(IP_R, zi)
    z[i] = zi;
    acc += cur * zi;
    IP_MARCH_END
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}

pk_kernel void ip_stencil_quad(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                               const SCALAR wz, PK_GLOBAL(const SCALAR, v), PK_GLOBAL(SCALAR, partials),
                               const uint slot) {
    PK_BIND(const SCALAR, v);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
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
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}

/* The row at point i, every neighbour loaded where the sum needs it. */
#define IP_POINT_ROW(V, out) IP_ROW_OF(V, V(i - plane), V(i), V(i + plane), out)

/* The point of an element loop in FOR_EACH's order without a division per step: the
 * coordinates of i and of the loop's stride, added with carries (each at most 1, the stride's x
 * and y parts being below nx and ny). */
typedef struct {
    uint x, y, z;
    uint sx, sy, sz;
} IpWalk;

inline IpWalk ip_walk(const uint start, const uint stride, const uint nx, const uint ny) {
    IpWalk w;
    const uint plane = nx * ny;
    w.z = start / plane;
    w.y = (start - w.z * plane) / nx;
    w.x = start - w.z * plane - w.y * nx;
    w.sz = stride / plane;
    w.sy = (stride - w.sz * plane) / nx;
    w.sx = stride - w.sz * plane - w.sy * nx;
    return w;
}

inline void ip_walk_step(IpWalk *w, const uint nx, const uint ny) {
    w->x += w->sx;
    const uint cx = w->x >= nx ? 1u : 0u;
    w->x -= cx ? nx : 0u;
    w->y += w->sy + cx;
    const uint cy = w->y >= ny ? 1u : 0u;
    w->y -= cy ? ny : 0u;
    w->z += w->sz + cy;
}

#ifdef BLOCKED_LOOPS
#define IP_WALK_RANGE(start, end, step)                                                            \
    const uint blk_ = (n + (uint)get_global_size(0) - 1) / (uint)get_global_size(0);               \
    const uint start = min((uint)get_global_id(0) * blk_, n);                                      \
    const uint end = min(start + blk_, n);                                                         \
    const uint step = 1u;
#else
#define IP_WALK_RANGE(start, end, step)                                                            \
    const uint start = (uint)get_global_id(0);                                                     \
    const uint end = n;                                                                            \
    const uint step = (uint)get_global_size(0);
#endif

/* The update is an element loop in FOR_EACH's order with the point's coordinates walked (its
 * five vectors stream through the GPU in one sweep). Measured on the H200 at n = 16.8M against
 * the other layouts: 276 us here, division per point 322 us, the z-march 294 us (336 with loads
 * ahead), multiply-shift division 312 us (kernels-cu/ip.cu divides: 254 us there). */
pk_kernel void ip_pcg_update(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                             const SCALAR wz, const SCALAR alpha, const SCALAR beta, PK_GLOBAL(SCALAR, x),
                             PK_GLOBAL(const SCALAR, r), PK_GLOBAL(SCALAR, r_next), PK_GLOBAL(SCALAR, p),
                             PK_GLOBAL(const SCALAR, ap), PK_GLOBAL(SCALAR, partials), const uint slot_rr,
                             const uint slot_rz) {
    PK_BIND(SCALAR, x);
    PK_BIND(const SCALAR, r);
    PK_BIND(SCALAR, r_next);
    PK_BIND(SCALAR, p);
    PK_BIND(const SCALAR, ap);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[2 * WG];
    const uint plane = nx * ny;
    const uint n = plane * nz;
    SCALAR acc[2] = {ZERO, ZERO};
    IP_WALK_RANGE(start, end, step)
    IpWalk w = ip_walk(start, step, nx, ny);
    for (uint i = start; i < end; i += step, ip_walk_step(&w, nx, ny)) {
        const uint xc = w.x;
        const uint yc = w.y;
        const uint zc = w.z;
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        IP_POINT_ROW(IP_RA, zi)
        r_next[i] = ri;
        p[i] = zi + beta * pi;
        acc[0] += ri * ri;
        acc[1] += ri * zi;
    }
    group_sum_multi(scratch, acc, 2);
    write_partial(partials, slot_rr, acc[0]);
    write_partial(partials, slot_rz, acc[1]);
}

/* One expected entry of an ip_stencil_check row: present and nonzero entries must come next. */
#define IP_EXPECT(present, col, val)                                                                   \
    if ((present) && (val) != ZERO) {                                                                  \
        if (k >= end || col_idx[k] != (col) || values[k] != (val)) bad = 1;                            \
        k++;                                                                                           \
    }

pk_kernel void ip_stencil_check(const uint nx, const uint ny, const uint nz, const SCALAR d, const SCALAR ax,
                                const SCALAR ay, const SCALAR az, PK_GLOBAL(const uint, row_ptr),
                                PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                                PK_GLOBAL(SCALAR, partials), const uint slot) {
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    const uint n = nx * ny * nz;
    const uint plane = nx * ny;
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
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
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}
