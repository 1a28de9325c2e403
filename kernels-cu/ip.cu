/*
 * ip.cu -- matrix-free Incomplete Poisson preconditioner (PrecondOps). Mirrors kernels-cl/ip.cl
 * (the formula, argument lists and arithmetic order are documented there); conventions in
 * reduce.cu.
 *
 *   ip_stencil     (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                   const SCALAR* r, SCALAR* z)
 *   ip_stencil_dot (uint nx, uint ny, uint nz, SCALAR wx, SCALAR wy, SCALAR wz,
 *                   const SCALAR* r, SCALAR* z, SCALAR* partials, uint slot)
 * ip_stencil uses any grid; ip_stencil_dot uses partials.groups() blocks.
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
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const SCALAR zi = ip_row(i, nx, ny, nz, wx, wy, wz, r);
        z[i] = zi;
        acc += r[i] * zi;
    }
    write_partial(partials, slot, block_sum1(acc));
}
