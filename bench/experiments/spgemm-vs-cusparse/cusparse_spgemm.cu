// cuSPARSE's SpGEMM (cusparseSpGEMM, default algorithm) on C = A A for the generated Poisson
// matrices of `pipekrylov --generate poisson2d:MxM | poisson3d:MxMxM` (integer 5-/7-point
// Laplacian, lexicographic order, x fastest), f64, 32-bit indices: the anchor of issue 52 for the
// device SpGEMM of AMG's Galerkin products. Each sample is the whole product as a caller does it
// (descriptors, work estimation, compute, C's arrays allocated, copy, everything freed), the
// device synchronized before and after; median of `repeats` after one warm-up. Prints
// `cusparse,PROBLEM,n,nnz_a,nnz_c,median_s,min_s`.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 cusparse_spgemm.cu -lcusparse -o cusparse_spgemm
// Run:   ./cusparse_spgemm poisson2d 2048 [repeats]
#include <cuda_runtime.h>
#include <cusparse.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CS(x) do { cusparseStatus_t s = (x); if (s != CUSPARSE_STATUS_SUCCESS) { fprintf(stderr, "%s: %d\n", #x, (int)s); exit(1); } } while (0)

static void poisson(bool three_d, int m, std::vector<int>& rp, std::vector<int>& ci, std::vector<double>& v) {
    const long n = three_d ? (long)m * m * m : (long)m * m;
    rp.assign(n + 1, 0);
    ci.clear();
    v.clear();
    for (long i = 0; i < n; ++i) {
        const long x = i % m, y = (i / m) % m, z = three_d ? i / ((long)m * m) : 0;
        auto add = [&](long j, double a) { ci.push_back((int)j); v.push_back(a); };
        const long mm = (long)m * m;
        if (three_d && z > 0) add(i - mm, -1.0);
        if (y > 0) add(i - m, -1.0);
        if (x > 0) add(i - 1, -1.0);
        add(i, three_d ? 6.0 : 4.0);
        if (x < m - 1) add(i + 1, -1.0);
        if (y < m - 1) add(i + m, -1.0);
        if (three_d && z < m - 1) add(i + mm, -1.0);
        rp[i + 1] = (int)ci.size();
    }
}

int main(int argc, char** argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s poisson2d|poisson3d M [repeats]\n", argv[0]); return 2; }
    const bool three_d = strcmp(argv[1], "poisson3d") == 0;
    const int m = atoi(argv[2]);
    const int repeats = argc > 3 ? atoi(argv[3]) : 5;
    std::vector<int> rp, ci;
    std::vector<double> v;
    poisson(three_d, m, rp, ci, v);
    const int n = (int)rp.size() - 1, nnz = (int)ci.size();
    int *d_rp, *d_ci;
    double* d_v;
    CK(cudaMalloc(&d_rp, sizeof(int) * (n + 1)));
    CK(cudaMalloc(&d_ci, sizeof(int) * nnz));
    CK(cudaMalloc(&d_v, sizeof(double) * nnz));
    CK(cudaMemcpy(d_rp, rp.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_ci, ci.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_v, v.data(), sizeof(double) * nnz, cudaMemcpyHostToDevice));
    cusparseHandle_t h;
    CS(cusparseCreate(&h));
    long nnz_c = 0;
    auto product = [&]() {
        cusparseSpMatDescr_t a, b, c;
        CS(cusparseCreateCsr(&a, n, n, nnz, d_rp, d_ci, d_v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        CS(cusparseCreateCsr(&b, n, n, nnz, d_rp, d_ci, d_v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        CS(cusparseCreateCsr(&c, n, n, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        cusparseSpGEMMDescr_t d;
        CS(cusparseSpGEMM_createDescr(&d));
        const double alpha = 1.0, beta = 0.0;
        const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
        size_t s1 = 0, s2 = 0;
        void *w1 = nullptr, *w2 = nullptr;
        CS(cusparseSpGEMM_workEstimation(h, op, op, &alpha, a, b, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d, &s1, nullptr));
        CK(cudaMalloc(&w1, s1));
        CS(cusparseSpGEMM_workEstimation(h, op, op, &alpha, a, b, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d, &s1, w1));
        CS(cusparseSpGEMM_compute(h, op, op, &alpha, a, b, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d, &s2, nullptr));
        CK(cudaMalloc(&w2, s2));
        CS(cusparseSpGEMM_compute(h, op, op, &alpha, a, b, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d, &s2, w2));
        int64_t rows, cols, cnnz;
        CS(cusparseSpMatGetSize(c, &rows, &cols, &cnnz));
        int *c_rp, *c_ci;
        double* c_v;
        CK(cudaMalloc(&c_rp, sizeof(int) * (n + 1)));
        CK(cudaMalloc(&c_ci, sizeof(int) * cnnz));
        CK(cudaMalloc(&c_v, sizeof(double) * cnnz));
        CS(cusparseCsrSetPointers(c, c_rp, c_ci, c_v));
        CS(cusparseSpGEMM_copy(h, op, op, &alpha, a, b, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d));
        CK(cudaDeviceSynchronize());
        nnz_c = cnnz;
        CK(cudaFree(c_rp)); CK(cudaFree(c_ci)); CK(cudaFree(c_v)); CK(cudaFree(w1)); CK(cudaFree(w2));
        CS(cusparseSpGEMM_destroyDescr(d));
        CS(cusparseDestroySpMat(a)); CS(cusparseDestroySpMat(b)); CS(cusparseDestroySpMat(c));
    };
    product();
    std::vector<double> t;
    for (int r = 0; r < repeats; ++r) {
        CK(cudaDeviceSynchronize());
        auto t0 = std::chrono::steady_clock::now();
        product();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    printf("cusparse,%s:%d,%d,%d,%ld,%.6f,%.6f\n", argv[1], m, n, nnz, nnz_c, t[t.size() / 2], t[0]);
    return 0;
}
