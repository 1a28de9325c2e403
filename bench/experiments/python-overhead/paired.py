"""Issue 53's one-call overhead measured in pairs: pipekrylov.cg's wall time against the crate's
own one call (`rust_one_call_seconds`, the time inside pipekrylov::solve) on the same matrix,
the two calls alternated in order (py, rust / rust, py) so that whatever one call leaves behind
(freed device memory, a trimmed pool) falls on both equally; the median of the per-pair
differences. Then one call taken apart from Python: the Solver's construction, the solve and the
drop, each against the Rust time reported for it. Argument: backend (cuda or host). Prints one
line per n: medians in us."""

import gc
import json
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _pipekrylov

backend = sys.argv[1] if len(sys.argv) > 1 else "cuda"
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
for m in (4, 32, 64):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
    n = A.shape[0]
    b = np.ones(n)
    opts = dict(method="cg", precond=None, backend=backend, rtol=1e-8, atol=0.0, maxiter=10 * n,
                restart=20)
    args = (n, A.indptr.ctypes.data, A.indices.ctypes.data, A.data.ctypes.data, A.nnz, 32, 64,
            b.ctypes.data, opts)

    def py_call():
        t0 = time.perf_counter()
        pipekrylov.cg(A, b, backend=backend, rtol=1e-8)
        return time.perf_counter() - t0

    def rust_call():
        t0 = time.perf_counter()
        inside = _pipekrylov.rust_one_call_seconds(*args)
        return inside, time.perf_counter() - t0

    for _ in range(20):
        py_call(), rust_call()
    diff, diff_wall, py_t, rust_t = [], [], [], []
    for i in range(pairs):
        if i % 2 == 0:
            p = py_call(); r, rw = rust_call()
        else:
            r, rw = rust_call(); p = py_call()
        diff.append(p - r); diff_wall.append(p - rw); py_t.append(p); rust_t.append(r)
    # One call taken apart (the same steps as pipekrylov.cg), with and without the cyclic GC.
    parts = {}
    for gc_on in (True, False):
        (gc.enable if gc_on else gc.disable)()
        init_over, solve_over, drop_t, rust_parts = [], [], [], []
        for i in range(pairs // 2):
            t0 = time.perf_counter()
            S = pipekrylov.Solver(A, "cg", None, backend, rtol=1e-8)
            t1 = time.perf_counter()
            S.solve(b)
            t2 = time.perf_counter()
            setup = S._solver.rust_setup_seconds
            solve = json.loads(S._solver.last_report_json())["rust_solve_seconds"]
            t3 = time.perf_counter()
            del S
            t4 = time.perf_counter()
            init_over.append((t1 - t0) - setup); solve_over.append((t2 - t1) - solve)
            drop_t.append(t4 - t3); rust_parts.append(setup + solve)
            rust_call()  # the same neighbour as in the pairs
        gc.enable()
        key = "gc" if gc_on else "nogc"
        med = lambda v: statistics.median(v) * 1e6
        parts[key] = (med(init_over), med(solve_over), med(drop_t), med(rust_parts))
    med = lambda v: statistics.median(v) * 1e6
    q = lambda v, f: float(np.quantile(np.asarray(v), f)) * 1e6
    print(f"{backend} n = {n}: py {med(py_t):.1f} rust {med(rust_t):.1f} "
          f"paired_overhead {med(diff):.1f} (q25 {q(diff, .25):.1f}, q75 {q(diff, .75):.1f}) "
          f"overhead_vs_rust_wall {med(diff_wall):.1f} | "
          + " | ".join(f"{k}: init-over {v[0]:.1f} solve-over {v[1]:.1f} drop {v[2]:.1f} "
                       f"rust setup+solve {v[3]:.1f}" for k, v in parts.items()), flush=True)
