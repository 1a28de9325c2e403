/*
 * ip.cl -- matrix-free Incomplete Poisson preconditioner (PrecondOps), seed 003 Section IV.C,
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
 *                                                     partial <v, M^-1 v> into slot, nothing stored
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

/* The grid point of an element loop without a division per step: the coordinates (x, y, z) of
 * i and those of the loop's stride, added with carries (each carry at most 1 since the
 * stride's x and y parts are below nx and ny). Two 32-bit divisions per point made the
 * stencil kernels instruction-bound (H200: 104-128 us for <v, M^-1 v> at n = 16.8M). */
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

/* (M^-1 v)_i at grid point (xc, yc, zc) of the vector v given by V(j), in the order above. */
#define IP_ROW(V)                                                                                  \
    SCALAR m = ZERO;                                                                               \
    if (zc > 0) m += wz * wz;                                                                      \
    if (yc > 0) m += wy * wy;                                                                      \
    if (xc > 0) m += wx * wx;                                                                      \
    m += (SCALAR)1;                                                                                \
    SCALAR acc = ZERO;                                                                             \
    if (zc > 0) acc += wz * V(i - plane);                                                          \
    if (yc > 0) acc += wy * V(i - nx);                                                             \
    if (xc > 0) acc += wx * V(i - 1);                                                              \
    acc += m * V(i);                                                                               \
    if (xc + 1 < nx) acc += wx * V(i + 1);                                                         \
    if (yc + 1 < ny) acc += wy * V(i + nx);                                                        \
    if (zc + 1 < nz) acc += wz * V(i + plane);                                                     \
    return acc;

inline SCALAR ip_row_at(const uint i, const uint xc, const uint yc, const uint zc, const uint nx, const uint ny,
                        const uint nz, const SCALAR wx, const SCALAR wy, const SCALAR wz, __global const SCALAR *r) {
    const uint plane = nx * ny;
#define IP_R(j) r[j]
    IP_ROW(IP_R)
#undef IP_R
}

/* ip_row_at of the vector r - alpha ap, each neighbour's value formed as ip_pcg_update stores it. */
inline SCALAR ip_row_axpy_at(const uint i, const uint xc, const uint yc, const uint zc, const uint nx, const uint ny,
                             const uint nz, const SCALAR wx, const SCALAR wy, const SCALAR wz,
                             __global const SCALAR *r, const SCALAR alpha, __global const SCALAR *ap) {
    const uint plane = nx * ny;
#define IP_R(j) (r[j] - alpha * ap[j])
    IP_ROW(IP_R)
#undef IP_R
}

/* The element loop of the stencil kernels with the point's coordinates w_.x, w_.y, w_.z: FOR_EACH's
 * order (grid-stride on GPUs, a contiguous block per work-item on CPUs). */
#ifdef BLOCKED_LOOPS
#define IP_FOR_EACH(i, n)                                                                          \
    const uint blk_ = ((uint)(n) + (uint)get_global_size(0) - 1) / (uint)get_global_size(0);        \
    const uint start_ = min((uint)get_global_id(0) * blk_, (uint)(n));                             \
    const uint end_ = min(start_ + blk_, (uint)(n));                                               \
    IpWalk w_ = ip_walk(start_, 1u, nx, ny);                                                       \
    for (uint i = start_; i < end_; ++i, ip_walk_step(&w_, nx, ny))
#else
#define IP_FOR_EACH(i, n)                                                                          \
    IpWalk w_ = ip_walk((uint)get_global_id(0), (uint)get_global_size(0), nx, ny);                 \
    for (uint i = (uint)get_global_id(0); i < (uint)(n); i += (uint)get_global_size(0), ip_walk_step(&w_, nx, ny))
#endif

pk_kernel void ip_stencil(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                          const SCALAR wz, PK_GLOBAL(const SCALAR, r), PK_GLOBAL(SCALAR, z)) {
    PK_BIND(const SCALAR, r);
    PK_BIND(SCALAR, z);
    const uint n = nx * ny * nz;
    IP_FOR_EACH(i, n) {
        z[i] = ip_row_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, r);
    }
}

pk_kernel void ip_stencil_dot(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                              const SCALAR wz, PK_GLOBAL(const SCALAR, r), PK_GLOBAL(SCALAR, z),
                              PK_GLOBAL(SCALAR, partials), const uint slot) {
    PK_BIND(const SCALAR, r);
    PK_BIND(SCALAR, z);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    const uint n = nx * ny * nz;
    SCALAR acc = ZERO;
    IP_FOR_EACH(i, n) {
        const SCALAR zi = ip_row_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, r);
        z[i] = zi;
        acc += r[i] * zi;
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}

pk_kernel void ip_stencil_quad(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                               const SCALAR wz, PK_GLOBAL(const SCALAR, v), PK_GLOBAL(SCALAR, partials),
                               const uint slot) {
    PK_BIND(const SCALAR, v);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    const uint n = nx * ny * nz;
    SCALAR acc = ZERO;
    IP_FOR_EACH(i, n) {
        acc += v[i] * ip_row_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, v);
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}

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
    const uint n = nx * ny * nz;
    SCALAR acc[2] = {ZERO, ZERO};
    IP_FOR_EACH(i, n) {
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        const SCALAR zi = ip_row_axpy_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, r, alpha, ap);
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
