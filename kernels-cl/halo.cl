/*
 * halo.cl -- the distributed SpMV's halo kernels (SpmvOps, feature mpi).
 * Conventions (SCALAR, WG, uint/ulong, grid-stride): see reduce.cl.
 *
 * Kernel argument lists (CUDA mirrors them in this order):
 *   halo_gather   (const uint* idx, const SCALAR* x, SCALAR* out, uint n)   out_i = x[idx_i]
 *   halo_spmv_add (const uint* rows, const uint* row_ptr, const uint* col_idx,
 *                  const SCALAR* values, const SCALAR* xg, SCALAR* y, uint n_rows)
 *                 y[rows_i] += sum_k values_k xg[col_idx_k], k in row_ptr_i .. row_ptr_{i+1}
 * halo_gather packs the entries of the local vector that other ranks need (the send list of
 * the halo plan); halo_spmv_add adds the ghost block's product on the boundary rows only
 * (rows listed once each, so no two work-items write the same y entry). Both use any number
 * of groups.
 */

pk_kernel void halo_gather(PK_GLOBAL(const uint, idx), PK_GLOBAL(const SCALAR, x), PK_GLOBAL(SCALAR, out),
                           const uint n) {
    PK_BIND(const uint, idx);
    PK_BIND(const SCALAR, x);
    PK_BIND(SCALAR, out);
    FOR_EACH(i, n) {
        out[i] = x[idx[i]];
    }
}

pk_kernel void halo_spmv_add(PK_GLOBAL(const uint, rows), PK_GLOBAL(const uint, row_ptr),
                             PK_GLOBAL(const uint, col_idx), PK_GLOBAL(const SCALAR, values),
                             PK_GLOBAL(const SCALAR, xg), PK_GLOBAL(SCALAR, y), const uint n_rows) {
    PK_BIND(const uint, rows);
    PK_BIND(const uint, row_ptr);
    PK_BIND(const uint, col_idx);
    PK_BIND(const SCALAR, values);
    PK_BIND(const SCALAR, xg);
    PK_BIND(SCALAR, y);
    FOR_EACH(i, n_rows) {
        SCALAR acc = ZERO;
        for (uint k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            acc += values[k] * xg[col_idx[k]];
        }
        y[rows[i]] += acc;
    }
}
