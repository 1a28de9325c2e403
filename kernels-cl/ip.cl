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
 * Arithmetic order (the host backend and the assembled matrix use the same): the diagonal is
 * ((0 + wz^2) + wy^2) + wx^2 + 1 over the neighbours present (z, y, x order), then
 * z_i = m_i r_i + ... summed from 0 in column order z-1, y-1, x-1, i, x+1, y+1, z+1.
 * ip_stencil uses any number of groups; ip_stencil_dot uses partials.groups().
 */

inline SCALAR ip_row(const uint i, const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                     const SCALAR wz, __global const SCALAR *r) {
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

pk_kernel void ip_stencil(const uint nx, const uint ny, const uint nz, const SCALAR wx, const SCALAR wy,
                          const SCALAR wz, PK_GLOBAL(const SCALAR, r), PK_GLOBAL(SCALAR, z)) {
    PK_BIND(const SCALAR, r);
    PK_BIND(SCALAR, z);
    const uint n = nx * ny * nz;
    FOR_EACH(i, n) {
        z[i] = ip_row(i, nx, ny, nz, wx, wy, wz, r);
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
    FOR_EACH(i, n) {
        const SCALAR zi = ip_row(i, nx, ny, nz, wx, wy, wz, r);
        z[i] = zi;
        acc += r[i] * zi;
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}
