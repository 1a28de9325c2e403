"""The Python package against CuPy on one GPU (run on the device, see run.sh): the wrapper's
per-call overhead over the library's own time, CG per iteration against
cupyx.scipy.sparse.linalg.cg on the same CuPy matrix, and time to solution with the
preconditioners CuPy has no GPU counterpart of. Writes CSVs to the folder given as argv[1] and
prints a short table."""

from __future__ import annotations

import csv
import json
import os
import sys
import time

import cupy
import cupyx.scipy.sparse as cusp
import cupyx.scipy.sparse.linalg as cuspla
import numpy as np
import scipy.sparse as sp

import pipekrylov

OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def poisson2d(m: int) -> sp.csr_matrix:
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr()


def median(xs):
    return float(np.median(np.asarray(xs)))


def write(name, rows):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def overhead():
    """Wall time of a Python call minus the time the library spent inside it."""
    rows = []
    for m in (32, 64):
        A = poisson2d(m)
        n = A.shape[0]
        b_np = np.ones(n)
        b_cp = cupy.ones(n)
        # One-call cg: construction (backend, upload, setup) + solve.
        for _ in range(3):
            pipekrylov.cg(A, b_np, backend="cuda", rtol=1e-8)
        # The wall time of the Python one-call cg against the crate's one-call
        # pipekrylov::solve with the same options on the same matrix (already in the crate's
        # CSR, as a Rust program holds it), both including backend, upload, solve and drop.
        opts = dict(method="cg", precond=None, backend="cuda", rtol=1e-8, atol=0.0,
                    maxiter=10 * n, restart=20)
        walls, rust = [], []
        for _ in range(30):
            t = time.perf_counter()
            pipekrylov.cg(A, b_np, backend="cuda", rtol=1e-8)
            walls.append(time.perf_counter() - t)
            rust.append(pipekrylov._pipekrylov.rust_one_call_seconds(
                n, A.indptr.ctypes.data, A.indices.ctypes.data, A.data.ctypes.data, A.nnz,
                32 if A.indptr.dtype == np.int32 else 64, 64, b_np.ctypes.data, opts))
        rows.append(dict(call="pipekrylov.cg vs pipekrylov::solve", n=n,
                         wall_us=median(walls) * 1e6, rust_us=median(rust) * 1e6,
                         overhead_us=(median(walls) - median(rust)) * 1e6))
        S = pipekrylov.Solver(A, method="cg", backend="cuda", rtol=1e-8)
        for label, b in (("Solver.solve numpy", b_np), ("Solver.solve cupy", b_cp)):
            for _ in range(5):
                S.solve(b)
            walls, rust = [], []
            for _ in range(200):
                t = time.perf_counter()
                S.solve(b)
                walls.append(time.perf_counter() - t)
                rust.append(json.loads(S._solver.last_report_json())["rust_solve_seconds"])
            over = [w - r for w, r in zip(walls, rust)]
            rows.append(dict(call=label, n=n, wall_us=median(walls) * 1e6,
                             rust_us=median(rust) * 1e6, overhead_us=median(over) * 1e6))
    write("overhead.csv", rows)
    return rows


def per_iteration():
    """CG per iteration, fixed iteration counts, CuPy matrix and vectors for both."""
    rows = []
    for m, iters in ((64, 200), (128, 200), (256, 200), (1024, 200), (2048, 100)):
        A = poisson2d(m)
        n = A.shape[0]
        Ad = cusp.csr_matrix(A)
        b = cupy.ones(n)
        # CuPy: maxiter iterations (the tolerance is out of reach).
        cuspla.cg(Ad, b, rtol=1e-30, maxiter=iters)
        cupy.cuda.Device().synchronize()
        cp_t = []
        for _ in range(5):
            t = time.perf_counter()
            _, info = cuspla.cg(Ad, b, rtol=1e-30, maxiter=iters)
            cupy.cuda.Device().synchronize()
            cp_t.append(time.perf_counter() - t)
        cp_its = iters
        # Ours on the same CuPy matrix and vectors, the whole Python call timed.
        S = pipekrylov.Solver(Ad, method="cg", backend="cuda", rtol=1e-30, maxiter=iters)
        S.solve(b)
        pk_t, pk_its, copies, loop = [], [], [], []
        for _ in range(5):
            t = time.perf_counter()
            S.solve(b)
            pk_t.append(time.perf_counter() - t)
            rep = json.loads(S._solver.last_report_json())
            pk_its.append(rep["iterations"])
            loop.append(rep["loop_seconds"] / max(rep["iterations"], 1))
            _, _, r = S.solve(b, report=True)
            copies.append(r.vector_copies)
        pk_per = median([t / max(i, 1) for t, i in zip(pk_t, pk_its)])
        cp_per = median(cp_t) / cp_its
        rows.append(dict(n=n, cupy_us_per_it=cp_per * 1e6, cupy_its=cp_its,
                         pipekrylov_us_per_it=pk_per * 1e6, pipekrylov_its=int(median(pk_its)),
                         speedup=cp_per / pk_per, loop_us_per_it=median(loop) * 1e6,
                         vector_copies=max(copies), execution=r.execution))
    write("per_iteration.csv", rows)
    return rows


def time_to_solution():
    """rtol 1e-8, b = ones, x0 = 0: CuPy CG (no GPU preconditioner there) against ours."""
    rows = []
    for m in (1024, 2048):
        A = poisson2d(m)
        n = A.shape[0]
        Ad = cusp.csr_matrix(A)
        b = cupy.ones(n)
        its = [0]
        cuspla.cg(Ad, b, rtol=1e-8, maxiter=20000)
        t = time.perf_counter()
        x_cp, info = cuspla.cg(Ad, b, rtol=1e-8, maxiter=20000,
                            callback=lambda _x: its.__setitem__(0, its[0] + 1))
        cupy.cuda.Device().synchronize()
        rows.append(dict(n=n, solver="cupyx cg", setup_s=0.0, solve_s=time.perf_counter() - t,
                         iterations=its[0], converged=info == 0,
                         rel_residual=float(cupy.linalg.norm(b - Ad @ x_cp) / cupy.linalg.norm(b))))
        # (CuPy's callback costs a little per iteration; its per-iteration time is above.)
        for precond in (None, "jacobi", "amg"):
            t = time.perf_counter()
            S = pipekrylov.Solver(Ad, method="cg", precond=precond, backend="cuda", rtol=1e-8,
                                  maxiter=20000)
            setup = time.perf_counter() - t
            S.solve(b)  # warm (kernels compiled, recordings made)
            t = time.perf_counter()
            x, info, rep = S.solve(b, report=True)
            solve = time.perf_counter() - t
            rows.append(dict(n=n, solver=f"pipekrylov cg+{precond or 'none'}", setup_s=setup,
                             solve_s=solve, iterations=rep.iterations, converged=info == 0,
                             rel_residual=rep.relative_residual))
    write("time_to_solution.csv", rows)
    return rows


def in_place_matrix():
    """Setup and time to solution from a SciPy matrix (copied into the library's CSR and
    uploaded) against the same matrix as a CuPy CSR matrix (used in place on the device), CG to
    rtol 1e-8 with b = ones on the device; CuPy's CG in the same run. setup_s: the Solver's
    construction (median of 3, after one warm-up construction), one_call_s: pipekrylov.cg from
    the matrix (construction and solve, median of 3)."""
    rows = []
    for m in (1024, 2048):
        A = poisson2d(m)
        n = A.shape[0]
        Ad = cusp.csr_matrix(A)
        b = cupy.ones(n)
        cuspla.cg(Ad, b, rtol=1e-8, maxiter=20000)
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        x_cp, info = cuspla.cg(Ad, b, rtol=1e-8, maxiter=20000)
        cupy.cuda.Device().synchronize()
        rows.append(dict(n=n, input="cupy", solver="cupyx cg", setup_s=0.0,
                         solve_s=time.perf_counter() - t, one_call_s=time.perf_counter() - t,
                         iterations=-1, converged=info == 0, notes=""))
        for source, matrix in (("scipy", A), ("cupy", Ad)):
            for precond in (None, "jacobi", "amg"):
                kw = dict(method="cg", precond=precond, backend="cuda", rtol=1e-8, maxiter=20000)
                pipekrylov.Solver(matrix, **kw)  # warm: the backend's kernels loaded once
                setups = []
                for _ in range(3):
                    t = time.perf_counter()
                    S = pipekrylov.Solver(matrix, **kw)
                    setups.append(time.perf_counter() - t)
                S.solve(b)
                cupy.cuda.Device().synchronize()
                t = time.perf_counter()
                x, info, rep = S.solve(b, report=True)
                cupy.cuda.Device().synchronize()
                solve = time.perf_counter() - t
                calls = []
                for _ in range(3):
                    t = time.perf_counter()
                    pipekrylov.cg(matrix, b, precond=precond, backend="cuda", rtol=1e-8,
                                  maxiter=20000)
                    cupy.cuda.Device().synchronize()
                    calls.append(time.perf_counter() - t)
                rows.append(dict(n=n, input=source, solver=f"pipekrylov cg+{precond or 'none'}",
                                 setup_s=median(setups), solve_s=solve, one_call_s=median(calls),
                                 iterations=rep.iterations, converged=info == 0,
                                 notes="; ".join(rep.notes)[:90]))
    write("in_place_matrix.csv", rows)
    return rows


def ilu_vs_bilu0():
    """Time to solution of GMRES(30) with ilu against bilu0 where ILU(0) exists already, and
    ilu alone where it does not (b = A 1, rtol 1e-8), on CUDA and the GPU's OpenCL."""
    import scipy.io

    data = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data")
    rows = []
    for name in ("olm500", "olm1000", "Pd", "494_bus", "rajat19", "nnc1374"):
        A = sp.csr_matrix(scipy.io.mmread(os.path.join(data, f"{name}.mtx")))
        b = A @ np.ones(A.shape[0])
        for backend in ("cuda", "opencl"):
            for precond in ("bilu0", "ilu"):
                try:
                    t = time.perf_counter()
                    S = pipekrylov.Solver(A, method="gmres", precond=precond, backend=backend,
                                          rtol=1e-8, restart=30, maxiter=3000)
                    setup = time.perf_counter() - t
                    S.solve(b)
                    times = []
                    for _ in range(5):
                        t = time.perf_counter()
                        x, info, rep = S.solve(b, report=True)
                        times.append(time.perf_counter() - t)
                    true = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
                    rows.append(dict(matrix=name, backend=backend, precond=precond,
                                     iterations=rep.iterations, converged=info == 0,
                                     setup_s=setup, solve_s=median(times), true_rel=true,
                                     note=""))
                except pipekrylov.SolverError as e:
                    rows.append(dict(matrix=name, backend=backend, precond=precond,
                                     iterations=0, converged=False, setup_s=0.0, solve_s=0.0,
                                     true_rel=float("nan"), note=str(e)[:60]))
    write("ilu_vs_bilu0.csv", rows)
    return rows


def show(title, rows):
    print(f"== {title}")
    keys = list(rows[0])
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]) for k in keys))


PARTS = {
    "overhead": ("per-call overhead (us)", overhead),
    "per_iteration": ("CG per iteration vs cupyx.scipy.sparse.linalg.cg", per_iteration),
    "time_to_solution": ("time to solution, rtol 1e-8", time_to_solution),
    "ilu_vs_bilu0": ("GMRES(30) with ilu and bilu0 on the real matrices", ilu_vs_bilu0),
    "in_place_matrix": ("a SciPy matrix against a CuPy matrix used in place", in_place_matrix),
}

if __name__ == "__main__":
    # python3 run.py OUT [PART ...]: the parts named (all by default).
    print("pipekrylov", pipekrylov.__version__, "cupy", cupy.__version__,
          cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    for part in sys.argv[2:] or list(PARTS):
        title, measure = PARTS[part]
        show(title, measure())
