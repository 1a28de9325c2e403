/*
 * vector.cu -- BLAS-1 kernels and the first stage of <x, y> (VectorOps). Mirrors
 * kernels-cl/vector.cl; conventions (SCALAR, WG, uint/ulong, slots, partials) in reduce.cu.
 *
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
 *                (the OpenCL backend reads device addresses with it; here it returns the
 *                CUdeviceptr, launch with one block)
 * fill/copy/copy_from_f32/copy_to_f32/copy_u32/axpby/scale use any grid; dot_partials uses partials.groups() blocks.
 */

extern "C" __launch_bounds__(WG) __global__ void fill(SCALAR *x, const uint n, const SCALAR value) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        x[i] = value;
    }
}

extern "C" __launch_bounds__(WG) __global__ void copy(const SCALAR *x, SCALAR *y, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        y[i] = x[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void copy_from_f32(const float *x, SCALAR *y, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        y[i] = (SCALAR)x[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void copy_to_f32(const SCALAR *x, float *y, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        y[i] = (float)x[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void copy_u32(const uint *x, uint *y, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        y[i] = x[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void axpby(const SCALAR alpha, const SCALAR *x, const SCALAR beta, SCALAR *y, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        y[i] = alpha * x[i] + beta * y[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void scale(const SCALAR alpha, SCALAR *x, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        x[i] = alpha * x[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void dot_partials(const SCALAR *x, const SCALAR *y, const uint n, SCALAR *partials, const uint slot) {
    PDL_WAIT();
    SCALAR acc = ZERO;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        acc += x[i] * y[i];
    }
    write_partial(partials, slot, block_sum1(acc));
}

extern "C" __launch_bounds__(WG) __global__ void buffer_address(const uchar *buffer, ulong *address) {
    PDL_WAIT();
    if (GRID_START == 0) {
        address[0] = (ulong)buffer;
    }
}
