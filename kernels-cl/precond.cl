/*
 * precond.cl -- preconditioner kernels (PrecondOps).
 * Conventions (SCALAR, WG, uint/ulong, slots, partials layout, grid-stride): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   diag_scale     (const SCALAR* d, const SCALAR* x, SCALAR* y, uint n)      y_i = d_i x_i
 *   diag_scale_dot (const SCALAR* d, const SCALAR* x, SCALAR* y, uint n,
 *                   SCALAR* partials, uint slot)            y_i = d_i x_i, partial <x, y>
 * diag_scale may use any number of groups; diag_scale_dot uses partials.groups().
 */

pk_kernel void diag_scale(PK_GLOBAL(const SCALAR, d), PK_GLOBAL(const SCALAR, x), PK_GLOBAL(SCALAR, y),
                const uint n) {
    PK_BIND(const SCALAR, d);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n) {
        y[i] = d[i] * x[i];
    }
}

pk_kernel void diag_scale_dot(PK_GLOBAL(const SCALAR, d), PK_GLOBAL(const SCALAR, x), PK_GLOBAL(SCALAR, y),
                    const uint n, PK_GLOBAL(SCALAR, partials), const uint slot) {
    PK_BIND(const SCALAR, d);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
        const SCALAR xi = x[i];
        const SCALAR yi = d[i] * xi;
        y[i] = yi;
        acc += xi * yi;
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}
