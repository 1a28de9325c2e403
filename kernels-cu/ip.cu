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

__device__ __forceinline__ SCALAR ip_row(const uint i, const uint nx, const uint ny, const uint nz, const SCALAR wx,
                                         const SCALAR wy, const SCALAR wz, const SCALAR *__restrict__ r) {
    const uint plane = nx * ny;
    const uint zc = i / plane;
    const uint rem = i - zc * plane;
    const uint yc = rem / nx;
    const uint xc = rem - yc * nx;
    SCALAR m = ZERO;
    if (zc > 0) m += wz * wz;
    if (yc > 0) m += wy * wy;
    if (xc > 0) m += wx * wx;
    m += (SCALAR)1;
    SCALAR acc = ZERO;
    if (zc > 0) acc += wz * r[i - plane];
    if (yc > 0) acc += wy * r[i - nx];
    if (xc > 0) acc += wx * r[i - 1];
    acc += m * r[i];
    if (xc + 1 < nx) acc += wx * r[i + 1];
    if (yc + 1 < ny) acc += wy * r[i + nx];
    if (zc + 1 < nz) acc += wz * r[i + plane];
    return acc;
}

/* Elements per thread and loop step of ip_stencil_dot and ip_stencil_quad: they read one vector
 * (a thread with one element in flight leaves the memory system idle; 4 independent rows keep
 * enough loads in flight at the partials' number of blocks). */
#define IP_ILP 4u

/* ip_row of the vector r - alpha ap, each neighbour's value formed as ip_pcg_update stores it. */
__device__ __forceinline__ SCALAR ip_row_axpy(const uint i, const uint nx, const uint ny, const uint nz,
                                              const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                              const SCALAR *__restrict__ r, const SCALAR alpha,
                                              const SCALAR *__restrict__ ap) {
    const uint plane = nx * ny;
    const uint zc = i / plane;
    const uint rem = i - zc * plane;
    const uint yc = rem / nx;
    const uint xc = rem - yc * nx;
    SCALAR m = ZERO;
    if (zc > 0) m += wz * wz;
    if (yc > 0) m += wy * wy;
    if (xc > 0) m += wx * wx;
    m += (SCALAR)1;
    SCALAR acc = ZERO;
    if (zc > 0) acc += wz * (r[i - plane] - alpha * ap[i - plane]);
    if (yc > 0) acc += wy * (r[i - nx] - alpha * ap[i - nx]);
    if (xc > 0) acc += wx * (r[i - 1] - alpha * ap[i - 1]);
    acc += m * (r[i] - alpha * ap[i]);
    if (xc + 1 < nx) acc += wx * (r[i + 1] - alpha * ap[i + 1]);
    if (yc + 1 < ny) acc += wy * (r[i + nx] - alpha * ap[i + nx]);
    if (zc + 1 < nz) acc += wz * (r[i + plane] - alpha * ap[i + plane]);
    return acc;
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil(const uint nx, const uint ny, const uint nz, const SCALAR wx,
                                                            const SCALAR wy, const SCALAR wz,
                                                            const SCALAR *__restrict__ r, SCALAR *__restrict__ z) {
    const uint n = nx * ny * nz;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        z[i] = ip_row(i, nx, ny, nz, wx, wy, wz, r);
    }
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_dot(const uint nx, const uint ny, const uint nz,
                                                                const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                                                const SCALAR *__restrict__ r, SCALAR *__restrict__ z,
                                                                SCALAR *partials, const uint slot) {
    const uint n = nx * ny * nz;
    SCALAR acc = ZERO;
    for (uint i0 = GRID_START; i0 < n; i0 += IP_ILP * GRID_STRIDE) {
        SCALAR zi[IP_ILP];
#pragma unroll
        for (uint u = 0; u < IP_ILP; u++) {
            const uint i = i0 + u * GRID_STRIDE;
            zi[u] = i < n ? ip_row(i, nx, ny, nz, wx, wy, wz, r) : ZERO;
        }
#pragma unroll
        for (uint u = 0; u < IP_ILP; u++) {
            const uint i = i0 + u * GRID_STRIDE;
            if (i < n) {
                z[i] = zi[u];
                acc += r[i] * zi[u];
            }
        }
    }
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void ip_stencil_quad(const uint nx, const uint ny, const uint nz,
                                                                 const SCALAR wx, const SCALAR wy, const SCALAR wz,
                                                                 const SCALAR *__restrict__ v, SCALAR *partials,
                                                                 const uint slot) {
    const uint n = nx * ny * nz;
    SCALAR acc = ZERO;
    for (uint i0 = GRID_START; i0 < n; i0 += IP_ILP * GRID_STRIDE) {
        SCALAR part[IP_ILP];
#pragma unroll
        for (uint u = 0; u < IP_ILP; u++) {
            const uint i = i0 + u * GRID_STRIDE;
            part[u] = i < n ? v[i] * ip_row(i, nx, ny, nz, wx, wy, wz, v) : ZERO;
        }
#pragma unroll
        for (uint u = 0; u < IP_ILP; u++) acc += part[u];
    }
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void ip_pcg_update(
    const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy, const SCALAR wz, const SCALAR alpha,
    const SCALAR beta, SCALAR *__restrict__ x, const SCALAR *__restrict__ r, SCALAR *__restrict__ r_next,
    SCALAR *__restrict__ p, const SCALAR *__restrict__ ap, SCALAR *partials, const uint slot_rr, const uint slot_rz) {
    const uint n = nx * ny * nz;
    SCALAR acc[2] = {ZERO, ZERO};
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const SCALAR pi = p[i];
        x[i] += alpha * pi;
        const SCALAR ri = r[i] - alpha * ap[i];
        const SCALAR zi = ip_row_axpy(i, nx, ny, nz, wx, wy, wz, r, alpha, ap);
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
