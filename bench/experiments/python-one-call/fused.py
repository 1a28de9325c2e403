"""Issue 53: the one-call overhead with the plain call fused into one extension call
(`_pipekrylov.solve_once`: set up, solved and dropped with the GIL released once). Per n, the
medians over alternated rounds (order flipped each round) of the wall times of
`pipekrylov.cg` ("cg"), `solve_once` called directly ("solve_once"), the crate's one call
through `rust_one_call_seconds` ("rust_wall", its time inside `pipekrylov::solve`: "rust_in"),
and the per-round differences: cg - rust_in (the issue's overhead), cg - rust_wall and
solve_once - rust_wall (both without the int32 conversion, which rust_wall does untimed).
Arguments: backend (cuda or host), rounds. Prints one line per n, in us."""

import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _core, _pipekrylov

backend = sys.argv[1] if len(sys.argv) > 1 else "host"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 300
for m in (4, 32, 64):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
    n = A.shape[0]
    b = np.ones(n)
    opts = dict(method="cg", precond=None, backend=backend, rtol=1e-8, atol=0.0,
                maxiter=10 * n, restart=20)
    raw, arrays = _core._raw_csr(A)
    x = np.empty(n)
    keys = ("cg", "solve_once", "rust_wall", "rust_in", "cg-rust_in", "cg-rust_wall",
            "once-rust_wall")
    T = {k: [] for k in keys}
    for i in range(rounds + 20):
        res = {}
        for which in ((0, 1, 2) if i % 2 else (2, 1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                pipekrylov.cg(A, b, rtol=1e-8, backend=backend)
                res["cg"] = time.perf_counter() - t0
            elif which == 1:
                _pipekrylov.solve_once(*raw, _core._address(b), 0, _core._address(x), opts)
                res["solve_once"] = time.perf_counter() - t0
            else:
                r = _pipekrylov.rust_one_call_seconds(*raw, _core._address(b), opts)
                res["rust_wall"] = time.perf_counter() - t0
                res["rust_in"] = r
        if i < 20:
            continue
        res["cg-rust_in"] = res["cg"] - res["rust_in"]
        res["cg-rust_wall"] = res["cg"] - res["rust_wall"]
        res["once-rust_wall"] = res["solve_once"] - res["rust_wall"]
        for k, v in res.items():
            T[k].append(v * 1e6)
    print(f"{backend} n = {n}: " + " ".join(f"{k} {statistics.median(v):.1f}" for k, v in T.items()),
          flush=True)
