/*
 * cusparse_spmv.cu -- the cuSPARSE reference of the SpMV benchmark (issue 16): times
 * cusparseSpMV (CSR, f64, 32-bit indices) on a matrix written by
 *   pipekrylov export --generate NAME:N --raw --out FILE.csr
 * with the method of `pipekrylov bench --solvers spmv`: warm-up products, then SAMPLES samples of
 * PER_SAMPLE back-to-back products y = A x (x = 1), each sample timed from before the first to
 * after the last product (CUDA events); the per-product time is the sample over PER_SAMPLE and the
 * median sample is reported, for both CSR algorithms (ALG1 default, ALG2 deterministic).
 *
 * Build and run on the GPU machine (CUDA toolkit):
 *   nvcc -O3 -o cusparse_spmv benches/cusparse_spmv.cu -lcusparse
 *   ./cusparse_spmv FILE.csr NAME [SAMPLES]
 * Output: one CSV line per algorithm:
 *   problem,n,nnz,algorithm,median_s,min_s,max_s,floor_bytes
 * where floor_bytes is the SpMV traffic of src/bench/floor.rs (12 nnz + 20 n bytes).
 * Raw file layout (src/cli/export.rs): "PKCSR1\0\0", u64 rows, cols, nnz, u32 row_ptr[rows+1],
 * u32 col_idx[nnz], f64 values[nnz], little endian.
 */
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUDA(x)                                                                      \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));    \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)
#define CHECK_SPARSE(x)                                                                    \
    do {                                                                                   \
        cusparseStatus_t s_ = (x);                                                         \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cusparseGetErrorString(s_)); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

static const int PER_SAMPLE = 30;
static const int WARMUP = 60;

template <typename V>
static bool read_array(FILE *f, std::vector<V> &v, size_t n) {
    v.resize(n);
    return fread(v.data(), sizeof(V), n, f) == n;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s FILE.csr NAME [SAMPLES]\n", argv[0]);
        return 2;
    }
    const int samples = argc > 3 ? atoi(argv[3]) : 10;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    char magic[8];
    uint64_t dims[3];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "PKCSR1\0\0", 8) != 0 ||
        fread(dims, 8, 3, f) != 3) {
        fprintf(stderr, "%s: not a raw CSR file\n", argv[1]);
        return 1;
    }
    const uint64_t rows = dims[0], cols = dims[1], nnz = dims[2];
    std::vector<uint32_t> rp, ci;
    std::vector<double> val;
    if (!read_array(f, rp, rows + 1) || !read_array(f, ci, nnz) || !read_array(f, val, nnz)) {
        fprintf(stderr, "%s: truncated\n", argv[1]);
        return 1;
    }
    fclose(f);

    uint32_t *d_rp, *d_ci;
    double *d_val, *d_x, *d_y;
    CHECK_CUDA(cudaMalloc(&d_rp, rp.size() * 4));
    CHECK_CUDA(cudaMalloc(&d_ci, ci.size() * 4));
    CHECK_CUDA(cudaMalloc(&d_val, val.size() * 8));
    CHECK_CUDA(cudaMalloc(&d_x, cols * 8));
    CHECK_CUDA(cudaMalloc(&d_y, rows * 8));
    CHECK_CUDA(cudaMemcpy(d_rp, rp.data(), rp.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_ci, ci.data(), ci.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_val, val.data(), val.size() * 8, cudaMemcpyHostToDevice));
    std::vector<double> ones(cols, 1.0);
    CHECK_CUDA(cudaMemcpy(d_x, ones.data(), cols * 8, cudaMemcpyHostToDevice));

    cusparseHandle_t h;
    CHECK_SPARSE(cusparseCreate(&h));
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t X, Y;
    CHECK_SPARSE(cusparseCreateCsr(&A, rows, cols, nnz, d_rp, d_ci, d_val, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CHECK_SPARSE(cusparseCreateDnVec(&X, cols, d_x, CUDA_R_64F));
    CHECK_SPARSE(cusparseCreateDnVec(&Y, rows, d_y, CUDA_R_64F));
    const double alpha = 1.0, beta = 0.0;
    const double floor_bytes = 12.0 * (double)nnz + 20.0 * (double)rows;
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));

    const struct {
        cusparseSpMVAlg_t alg;
        const char *name;
    } algs[] = {{CUSPARSE_SPMV_CSR_ALG1, "csr_alg1"}, {CUSPARSE_SPMV_CSR_ALG2, "csr_alg2"}};
    for (const auto &a : algs) {
        size_t bytes = 0;
        CHECK_SPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X,
                                             &beta, Y, CUDA_R_64F, a.alg, &bytes));
        void *buf = nullptr;
        CHECK_CUDA(cudaMalloc(&buf, std::max<size_t>(bytes, 8)));
        CHECK_SPARSE(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X,
                                             &beta, Y, CUDA_R_64F, a.alg, buf));
        for (int i = 0; i < WARMUP; ++i) {
            CHECK_SPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y,
                                      CUDA_R_64F, a.alg, buf));
        }
        CHECK_CUDA(cudaDeviceSynchronize());
        std::vector<double> t;
        for (int s = 0; s < samples; ++s) {
            CHECK_CUDA(cudaEventRecord(start));
            for (int i = 0; i < PER_SAMPLE; ++i) {
                CHECK_SPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta,
                                          Y, CUDA_R_64F, a.alg, buf));
            }
            CHECK_CUDA(cudaEventRecord(stop));
            CHECK_CUDA(cudaEventSynchronize(stop));
            float ms = 0;
            CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
            t.push_back(ms * 1e-3 / PER_SAMPLE);
        }
        std::sort(t.begin(), t.end());
        // Check the product against the host on a few rows (x = 1: the row sums).
        std::vector<double> y(rows);
        CHECK_CUDA(cudaMemcpy(y.data(), d_y, rows * 8, cudaMemcpyDeviceToHost));
        for (uint64_t r = 0; r < rows; r += std::max<uint64_t>(1, rows / 97)) {
            double s = 0;
            for (uint32_t j = rp[r]; j < rp[r + 1]; ++j) s += val[j];
            if (std::abs(s - y[r]) > 1e-9 * (1.0 + std::abs(s))) {
                fprintf(stderr, "%s: row %llu: %g vs %g\n", a.name, (unsigned long long)r, y[r], s);
                return 1;
            }
        }
        printf("%s,%llu,%llu,%s,%.6e,%.6e,%.6e,%.0f\n", argv[2], (unsigned long long)rows,
               (unsigned long long)nnz, a.name, t[t.size() / 2], t.front(), t.back(), floor_bytes);
        CHECK_CUDA(cudaFree(buf));
    }
    return 0;
}
