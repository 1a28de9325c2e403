/*
 * vector.cl -- BLAS-1 kernels and the first stage of <x, y> (VectorOps).
 * Conventions (SCALAR, WG, uint/ulong, slots, partials layout, grid-stride): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   fill         (SCALAR* x, uint n, SCALAR value)                        x_i = value
 *   copy         (const SCALAR* x, SCALAR* y, uint n)                     y = x
 *   copy_from_f32 (const float* x, SCALAR* y, uint n)                     y = (SCALAR)x
 *   copy_to_f32  (const SCALAR* x, float* y, uint n)                      y = (float)x
 *   copy_u32     (const uint* x, uint* y, uint n)                         y = x (indices)
 *   axpby        (SCALAR alpha, const SCALAR* x, SCALAR beta, SCALAR* y, uint n)
 *                                                                         y = alpha x + beta y
 *   scale        (SCALAR alpha, SCALAR* x, uint n)                        x = alpha x
 *   dot_partials (const SCALAR* x, const SCALAR* y, uint n, SCALAR* partials, uint slot)
 *                                                                         partial <x, y>
 *   buffer_address (const uchar* buffer, ulong* address)                 address[0] = (ulong)buffer
 *                (always plain __global parameters: it reads the device address that
 *                PK_ADDRESS_ARGS passes by value; launch with one group)
 * fill/copy/copy_from_f32/copy_to_f32/copy_u32/axpby/scale may use any number of groups; dot_partials uses partials.groups().
 */

pk_kernel void fill(PK_GLOBAL(SCALAR, x), const uint n, const SCALAR value) {
    PK_BIND(SCALAR, x);
    FOR_EACH(i, n) {
        x[i] = value;
    }
}

pk_kernel void copy(PK_GLOBAL(const SCALAR, x), PK_GLOBAL(SCALAR, y), const uint n) {
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n) {
        y[i] = x[i];
    }
}

pk_kernel void copy_from_f32(PK_GLOBAL(const float, x), PK_GLOBAL(SCALAR, y), const uint n) {
    PK_BIND(const float, x);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n) {
        y[i] = (SCALAR)x[i];
    }
}

pk_kernel void copy_to_f32(PK_GLOBAL(const SCALAR, x), PK_GLOBAL(float, y), const uint n) {
    PK_BIND(const SCALAR, x);
    PK_BIND(float, y);
    FOR_EACH(i, n) {
        y[i] = (float)x[i];
    }
}

pk_kernel void copy_u32(PK_GLOBAL(const uint, x), PK_GLOBAL(uint, y), const uint n) {
    PK_BIND(const uint, x);
    PK_BIND(uint, y);
    FOR_EACH(i, n) {
        y[i] = x[i];
    }
}

pk_kernel void axpby(const SCALAR alpha, PK_GLOBAL(const SCALAR, x), const SCALAR beta,
           PK_GLOBAL(SCALAR, y), const uint n) {
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n) {
        y[i] = alpha * x[i] + beta * y[i];
    }
}

pk_kernel void scale(const SCALAR alpha, PK_GLOBAL(SCALAR, x), const uint n) {
    PK_BIND(SCALAR, x);
    FOR_EACH(i, n) {
        x[i] = alpha * x[i];
    }
}

pk_kernel void dot_partials(PK_GLOBAL(const SCALAR, x), PK_GLOBAL(const SCALAR, y), const uint n,
                  PK_GLOBAL(SCALAR, partials), const uint slot) {
    PK_BIND(const SCALAR, x);
    PK_BIND(const SCALAR, y);
    PK_BIND(SCALAR, partials);
    __local SCALAR scratch[WG];
    SCALAR acc = ZERO;
    FOR_EACH(i, n) {
        acc += x[i] * y[i];
    }
    acc = group_sum(scratch, acc);
    write_partial(partials, slot, acc);
}

pk_kernel void buffer_address(__global const uchar *buffer, __global ulong *address) {
    if (get_global_id(0) == 0) {
        address[0] = (ulong)buffer;
    }
}
