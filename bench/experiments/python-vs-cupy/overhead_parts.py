"""Where the one-call pipekrylov.cg's time goes beyond the crate's pipekrylov::solve (device, CUDA):
construction (wall vs the Rust part), solve (wall vs Rust), the solver's drop, against the crate's own one
call. Prints medians in us. Then the same calls back to back (warm: no other call between two),
which is what a loop of small solves sees: py_one_call_warm (pipekrylov.cg) against
rust_one_call_warm (the crate's pipekrylov::solve, its own time) and their difference. Backend: the
first argument (default cuda)."""

import json
import sys
import time

import numpy as np
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _pipekrylov

backend = sys.argv[1] if len(sys.argv) > 1 else "cuda"
for m in (4, 32, 64):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
    n = A.shape[0]
    b = np.ones(n)
    x = np.empty(n)
    opts = dict(method="cg", precond=None, backend=backend, rtol=1e-8, atol=0.0, maxiter=10 * n, restart=20)
    args = (n, A.indptr.ctypes.data, A.indices.ctypes.data, A.data.ctypes.data, A.nnz, 32, 64)
    parts = {k: [] for k in ("ctor_wall", "ctor_rust", "solve_wall", "solve_rust", "drop", "rust_one_call",
                             "py_one_call", "py_Solver_init")}
    for i in range(40):
        t0 = time.perf_counter(); S = _pipekrylov._Solver(*args, opts); parts["ctor_wall"].append(time.perf_counter() - t0)
        parts["ctor_rust"].append(S.rust_setup_seconds)
        t0 = time.perf_counter(); S.solve(b.ctypes.data, 0, x.ctypes.data); parts["solve_wall"].append(time.perf_counter() - t0)
        parts["solve_rust"].append(json.loads(S.last_report_json())["rust_solve_seconds"])
        t0 = time.perf_counter(); del S; parts["drop"].append(time.perf_counter() - t0)
        parts["rust_one_call"].append(_pipekrylov.rust_one_call_seconds(*args, b.ctypes.data, opts))
        t0 = time.perf_counter(); pipekrylov.cg(A, b, backend=backend, rtol=1e-8); parts["py_one_call"].append(time.perf_counter() - t0)
        t0 = time.perf_counter(); P = pipekrylov.Solver(A, "cg", None, backend, rtol=1e-8); parts["py_Solver_init"].append(time.perf_counter() - t0)
        del P
    warm_py, warm_rust = [], []
    for i in range(200):
        t0 = time.perf_counter(); pipekrylov.cg(A, b, backend=backend, rtol=1e-8); warm_py.append(time.perf_counter() - t0)
    for i in range(200):
        warm_rust.append(_pipekrylov.rust_one_call_seconds(*args, b.ctypes.data, opts))
    parts["py_one_call_warm"], parts["rust_one_call_warm"] = warm_py, warm_rust
    med = {k: np.median(v) * 1e6 for k, v in parts.items()}
    med["warm_overhead"] = med["py_one_call_warm"] - med["rust_one_call_warm"]
    print(f"{backend} n = {n}: " + ", ".join(f"{k} {v:.1f}" for k, v in med.items()))
