/* The C API end to end: a 2D Poisson matrix in CSR (int32_t indices, double values), solved
 * with preconditioned CG on the backend named by argv[1] ("host" by default; "opencl", "cuda",
 * "auto"), the true residual checked here, three right-hand sides at once, new values on the same
 * pattern, then the error paths (wrong index width, unknown option, NULL solver). Exits 0 only if everything went as expected.
 *
 * Build and run: see capi/README.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipekrylov.h"

#define GRID 48 /* unknowns per side: n = GRID * GRID */
#define NRHS 3

static int failures = 0;

static void expect(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s\n", what);
        failures++;
    }
}

/* The 5-point Laplacian on a GRID x GRID grid (Dirichlet boundary). */
static void poisson(int32_t *row_ptr, int32_t *col_idx, double *values, size_t *nnz) {
    size_t k = 0;
    row_ptr[0] = 0;
    for (int i = 0; i < GRID; i++) {
        for (int j = 0; j < GRID; j++) {
            const int row = i * GRID + j;
            /* Columns in increasing order: south, west, centre, east, north. */
            if (i > 0) { col_idx[k] = row - GRID; values[k++] = -1.0; }
            if (j > 0) { col_idx[k] = row - 1; values[k++] = -1.0; }
            col_idx[k] = row; values[k++] = 4.0;
            if (j < GRID - 1) { col_idx[k] = row + 1; values[k++] = -1.0; }
            if (i < GRID - 1) { col_idx[k] = row + GRID; values[k++] = -1.0; }
            row_ptr[row + 1] = (int32_t)k;
        }
    }
    *nnz = k;
}

/* ||b - A x|| / ||b||, computed here from the CSR arrays. */
static double relative_residual(size_t n, const int32_t *row_ptr, const int32_t *col_idx,
                                const double *values, const double *b, const double *x) {
    double r2 = 0.0, b2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double ax = 0.0;
        for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++) ax += values[p] * x[col_idx[p]];
        r2 += (b[i] - ax) * (b[i] - ax);
        b2 += b[i] * b[i];
    }
    return sqrt(r2 / b2);
}

int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "host";
    const size_t n = GRID * GRID;
    int32_t *row_ptr = malloc((n + 1) * sizeof *row_ptr);
    int32_t *col_idx = malloc(5 * n * sizeof *col_idx);
    double *values = malloc(5 * n * sizeof *values);
    double *b = malloc(NRHS * n * sizeof *b);
    double *x = malloc(NRHS * n * sizeof *x);
    if (!row_ptr || !col_idx || !values || !b || !x) return 2;
    size_t nnz = 0;
    poisson(row_ptr, col_idx, values, &nnz);
    printf("pipekrylov %s, 2D Poisson n = %zu, nnz = %zu, backend %s\n", pk_version(), n, nnz,
           backend);

    char options[256];
    snprintf(options, sizeof options, "method=cg;precond=jacobi;rtol=1e-10;backend=%s", backend);
    pk_solver *solver = NULL;
    int code = pk_solver_create(n, row_ptr, col_idx, values, nnz, 32, 64, options, &solver);
    if (code != PK_OK) {
        fprintf(stderr, "pk_solver_create: code %d: %s\n", code, pk_last_error());
        return 1;
    }

    /* One right-hand side. */
    for (size_t i = 0; i < n; i++) b[i] = 1.0;
    pk_report report;
    code = pk_solver_solve(solver, b, NULL, x, &report);
    expect(code == PK_OK, "pk_solver_solve returns PK_OK");
    double rel = relative_residual(n, row_ptr, col_idx, values, b, x);
    printf("solve: %s after %zu iterations, true residual %.2e (library: %.2e), setup %.3f s, "
           "solve %.3f s\n",
           pk_stop_reason_name(report.stop_reason), report.iterations, rel,
           report.relative_true_residual, report.setup_seconds, report.solve_seconds);
    expect(report.converged == 1 && report.stop_reason == PK_STOP_CONVERGED, "converged");
    expect(rel < 1e-9, "true residual below 1e-9");
    expect(fabs(rel - report.relative_true_residual) <= 1e-3 * rel + 1e-15,
           "the library's true residual is ours");

    /* Three right-hand sides, column-major n x 3. */
    pk_report reports[NRHS];
    for (size_t c = 0; c < NRHS; c++)
        for (size_t i = 0; i < n; i++) b[c * n + i] = c == 0 ? 1.0 : sin((double)(i * (c + 1)));
    code = pk_solver_solve_many(solver, NRHS, b, x, reports);
    expect(code == PK_OK, "pk_solver_solve_many returns PK_OK");
    for (size_t c = 0; c < NRHS; c++) {
        rel = relative_residual(n, row_ptr, col_idx, values, b + c * n, x + c * n);
        printf("solve_many column %zu: %s after %zu iterations, true residual %.2e\n", c,
               pk_stop_reason_name(reports[c].stop_reason), reports[c].iterations, rel);
        expect(reports[c].converged == 1 && rel < 1e-9, "column converged below 1e-9");
    }

    /* New values on the same pattern (a time step's matrix): 2 A, the diagonal 10% larger. */
    for (size_t i = 0; i < n; i++)
        for (int32_t p = row_ptr[i]; p < row_ptr[i + 1]; p++)
            values[p] *= (size_t)col_idx[p] == i ? 2.2 : 2.0;
    pk_values_update times;
    code = pk_solver_update_values(solver, row_ptr, col_idx, values, nnz, 32, 64, &times);
    expect(code == PK_OK, "pk_solver_update_values returns PK_OK");
    for (size_t i = 0; i < n; i++) b[i] = 1.0;
    code = pk_solver_solve(solver, b, NULL, x, &report);
    rel = relative_residual(n, row_ptr, col_idx, values, b, x);
    printf("new values: update %.2e s (preconditioner %.2e s), %s after %zu iterations, true "
           "residual %.2e\n",
           times.seconds, times.precond_host_seconds + times.precond_device_seconds,
           pk_stop_reason_name(report.stop_reason), report.iterations, rel);
    expect(code == PK_OK && report.converged == 1 && rel < 1e-9, "new values solved below 1e-9");
    pk_solver_destroy(solver);

    /* Error paths: a code and a message each, no solver made, nothing aborts. */
    pk_solver *bad = NULL;
    code = pk_solver_create(n, row_ptr, col_idx, values, nnz, 16, 64, options, &bad);
    printf("index_bits 16: code %d: %s\n", code, pk_last_error());
    expect(code == PK_ERR_INVALID_INPUT && bad == NULL && strstr(pk_last_error(), "index_bits"),
           "wrong index_bits is PK_ERR_INVALID_INPUT");
    code = pk_solver_create(n, row_ptr, col_idx, values, nnz, 32, 64, "method=cg;tolerance=1e-8",
                            &bad);
    printf("unknown option: code %d: %s\n", code, pk_last_error());
    expect(code == PK_ERR_INVALID_INPUT && bad == NULL && strstr(pk_last_error(), "tolerance"),
           "an unknown option key is PK_ERR_INVALID_INPUT");
    code = pk_solver_solve(NULL, b, NULL, x, NULL);
    printf("NULL solver: code %d: %s\n", code, pk_last_error());
    expect(code == PK_ERR_NULL && strlen(pk_last_error()) > 0, "a NULL solver is PK_ERR_NULL");
    pk_solver_destroy(NULL);

    free(row_ptr);
    free(col_idx);
    free(values);
    free(b);
    free(x);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
