/*
 * halo.cu -- the distributed SpMV's halo kernels (SpmvOps, feature mpi). Mirrors
 * kernels-cl/halo.cl; conventions in reduce.cu.
 *
 *   halo_gather   (const uint* idx, const SCALAR* x, SCALAR* out, uint n)   out_i = x[idx_i]
 *   halo_spmv_add (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* y, uint n_rows)
 *                 y[rows_i] += sum_k values_k xg[col_idx_k], k in row_ptr_i .. row_ptr_{i+1}
 * halo_gather packs the entries of the local vector that other ranks need (the send list of
 * the halo plan); halo_spmv_add adds the ghost block's product on the boundary rows only
 * (rows listed once each, so no two threads write the same y entry). Both use any grid.
 */

extern "C" __launch_bounds__(WG) __global__ void halo_gather(const uint *idx, const SCALAR *x, SCALAR *out, const uint n) {
    for (uint i = GRID_START; i < n; i += GRID_STRIDE) {
        out[i] = x[idx[i]];
    }
}

extern "C" __launch_bounds__(WG) __global__ void halo_spmv_add(const uint *rows, const uint *row_ptr, const uint *col_idx,
                                                               const SCALAR *values, const SCALAR *xg, SCALAR *y,
                                                               const uint n_rows) {
    for (uint i = GRID_START; i < n_rows; i += GRID_STRIDE) {
        SCALAR acc = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            acc += values[k] * xg[col_idx[k]];
        }
        y[rows[i]] += acc;
    }
}
