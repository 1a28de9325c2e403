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

/* The grid point of an element loop without a division per step: the coordinates (x, y, z) of
 * i and those of the loop's stride, added with carries (each carry at most 1 since the
 * stride's x and y parts are below nx and ny). Two 32-bit divisions per point made the
 * stencil kernels instruction-bound (H200: 128 us for <v, M^-1 v> at n = 16.8M, 1 TB/s). */
struct IpWalk {
    uint x, y, z;
    uint sx, sy, sz;
};

__device__ __forceinline__ IpWalk ip_walk(const uint start, const uint stride, const uint nx, const uint ny) {
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

__device__ __forceinline__ void ip_walk_step(IpWalk &w, const uint nx, const uint ny) {
    w.x += w.sx;
    const uint cx = w.x >= nx;
    w.x -= cx ? nx : 0u;
    w.y += w.sy + cx;
    const uint cy = w.y >= ny;
    w.y -= cy ? ny : 0u;
    w.z += w.sz + cy;
}

/* (M^-1 v)_i at grid point (xc, yc, zc) of v given by V(j) (kernels-cl/ip.cl has the order). */
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

__device__ __forceinline__ SCALAR ip_row_at(const uint i, const uint xc, const uint yc, const uint zc, const uint nx,
                                            const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                                            const SCALAR wz, const SCALAR *__restrict__ r) {
    const uint plane = nx * ny;
#define IP_R(j) r[j]
    IP_ROW(IP_R)
#undef IP_R
}

/* ip_row_at of the vector r - alpha ap, each neighbour's value formed as ip_pcg_update stores it. */
__device__ __forceinline__ SCALAR ip_row_axpy_at(const uint i, const uint xc, const uint yc, const uint zc,
                                                 const uint nx, const uint ny, const uint nz, const SCALAR wx,
                                                 const SCALAR wy, const SCALAR wz, const SCALAR *__restrict__ r,
                                                 const SCALAR alpha, const SCALAR *__restrict__ ap) {
    const uint plane = nx * ny;
#define IP_R(j) (r[j] - alpha * ap[j])
    IP_ROW(IP_R)
#undef IP_R
}

/* The grid-stride element loop of the stencil kernels with the point's coordinates xc, yc, zc. */
#define IP_FOR_EACH(i, n)                                                                          \
    IpWalk w_ = ip_walk(GRID_START, GRID_STRIDE, nx, ny);                                          \
    for (uint i = GRID_START; i < (n); i += GRID_STRIDE, ip_walk_step(w_, nx, ny))

extern "C" __launch_bounds__(WG) __global__ void ip_stencil(const uint nx, const uint ny, const uint nz, const SCALAR wx,
                                                            const SCALAR wy, const SCALAR wz,
                                                            const SCALAR *__restrict__ r, SCALAR *__restrict__ z) {
    const uint n = nx * ny * nz;
    IP_FOR_EACH(i, n) {
        z[i] = ip_row_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, r);
    }
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_dot(const uint nx, const uint ny, const uint nz,
                                                                const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                                                const SCALAR *__restrict__ r, SCALAR *__restrict__ z,
                                                                SCALAR *partials, const uint slot) {
    const uint n = nx * ny * nz;
    SCALAR acc = ZERO;
    IP_FOR_EACH(i, n) {
        const SCALAR zi = ip_row_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, r);
        z[i] = zi;
        acc += r[i] * zi;
    }
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_quad(const uint nx, const uint ny, const uint nz,
                                                                 const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                                                 const SCALAR *__restrict__ v, SCALAR *partials,
                                                                 const uint slot) {
    const uint n = nx * ny * nz;
    SCALAR acc = ZERO;
    IP_FOR_EACH(i, n) {
        acc += v[i] * ip_row_at(i, w_.x, w_.y, w_.z, nx, ny, nz, wx, wy, wz, v);
    }
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void ip_pcg_update(
    const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy, const SCALAR wz, const SCALAR alpha,
    const SCALAR beta, SCALAR *__restrict__ x, const SCALAR *__restrict__ r, SCALAR *__restrict__ r_next,
    SCALAR *__restrict__ p, const SCALAR *__restrict__ ap, SCALAR *partials, const uint slot_rr, const uint slot_rz) {
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
