/*
 * vector.cl -- BLAS-1 kernels and the first stage of <x, y> (VectorOps).
 * Conventions (SCALAR, WG, uint/ulong, slots, partials layout, grid-stride): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   fill         (SCALAR* x, uint n, SCALAR value)                        x_i = value
 *   copy         (const SCALAR* x, SCALAR* y, uint n)                     y = x
 *   axpby        (SCALAR alpha, const SCALAR* x, SCALAR beta, SCALAR* y, uint n)
 *                                                                         y = alpha x + beta y
 *   scale        (SCALAR alpha, SCALAR* x, uint n)                        x = alpha x
 *   dot_partials (const SCALAR* x, const SCALAR* y, uint n, SCALAR* partials, uint slot)
 *                                                                         partial <x, y>
 * fill/copy/axpby/scale may use any number of groups; dot_partials uses partials.groups().
 */

pk_kernel void fill(__global SCALAR *x, const uint n, const SCALAR value) {
    FOR_EACH(i, n) {
        x[i] = value;
    }
}

pk_kernel void copy(__global const SCALAR *x, __global SCALAR *y, const uint n) {
    FOR_EACH(i, n) {
        y[i] = x[i];
    }
}

pk_kernel void axpby(const SCALAR alpha, __global const SCALAR *x, const SCALAR beta,
           __global SCALAR *y, const uint n) {
    FOR_EACH(i, n) {
        y[i] = alpha * x[i] + beta * y[i];
    }
}

pk_kernel void scale(const SCALAR alpha, __global SCALAR *x, const uint n) {
    FOR_EACH(i, n) {
        x[i] = alpha * x[i];
    }
}

pk_kernel void dot_partials(__global const SCALAR *x, __global const SCALAR *y, const uint n,
                  __global SCALAR *partials, const uint slot) {
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
        acc += x[i] * y[i];
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}
