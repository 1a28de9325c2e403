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

pk_kernel void diag_scale(__global const SCALAR *d, __global const SCALAR *x, __global SCALAR *y,
                const uint n) {
    FOR_EACH(i, n) {
        y[i] = d[i] * x[i];
    }
}

pk_kernel void diag_scale_dot(__global const SCALAR *d, __global const SCALAR *x, __global SCALAR *y,
                    const uint n, __global SCALAR *partials, const uint slot) {
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
