/*
 * precond.cu -- preconditioner kernels (PrecondOps). Mirrors kernels-cl/precond.cl;
 * conventions in reduce.cu.
 *
 *   diag_scale     (const SCALAR* d, const SCALAR* x, SCALAR* y, uint n)      y_i = d_i x_i
 *   diag_scale_dot (const SCALAR* d, const SCALAR* x, SCALAR* y, uint n,
 *                   SCALAR* partials, uint slot)            y_i = d_i x_i, partial <x, y>
 * diag_scale uses any grid; diag_scale_dot uses partials.groups() blocks.
 */

extern "C" __launch_bounds__(WG) __global__ void diag_scale(const SCALAR *d, const SCALAR *x, SCALAR *y, const uint n) {
    PDL_WAIT();
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        y[i] = d[i] * x[i];
    }
}

extern "C" __launch_bounds__(WG) __global__ void diag_scale_dot(const SCALAR *d, const SCALAR *x, SCALAR *y, const uint n, SCALAR *partials,
               const uint slot) {
    PDL_WAIT();
    SCALAR acc = ZERO;
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        const SCALAR xi = x[i];
        const SCALAR yi = d[i] * xi;
        y[i] = yi;
        acc += xi * yi;
    }
    write_partial(partials, slot, block_sum1(acc));
}
