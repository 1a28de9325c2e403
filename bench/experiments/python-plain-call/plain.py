"""Issue 53: the one-call overhead with the plain call read and checked in the extension
(`_pipekrylov.solve_plain`). Per n, the medians over alternated rounds (order flipped each round)
of the wall times of `pipekrylov.cg` ("cg"), `solve_plain` called directly ("plain"), the crate's
one call through `rust_one_call_seconds` ("rust_wall", its time inside `pipekrylov::solve`:
"rust_in"), and the per-round differences: cg - rust_in (the issue's overhead), cg - plain (the
package's Python code) and plain - rust_wall (the extension's reading of the SciPy object and
its int32 conversion, which rust_wall does untimed). Arguments: backend (cuda or host), rounds.
Prints one line per n, in us."""

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
    extra = {"backend": backend}
    keys = ("cg", "plain", "rust_wall", "rust_in", "cg-rust_in", "cg-plain", "plain-rust_wall")
    T = {k: [] for k in keys}
    for i in range(rounds + 20):
        res = {}
        for which in ((0, 1, 2) if i % 2 else (2, 1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                pipekrylov.cg(A, b, rtol=1e-8, backend=backend)
                res["cg"] = time.perf_counter() - t0
            elif which == 1:
                out = _pipekrylov.solve_plain("cg", A, b, None, 1e-8, 0.0, None, extra)
                res["plain"] = time.perf_counter() - t0
                assert out is not None and out[1] == 0
            else:
                r = _pipekrylov.rust_one_call_seconds(*raw, _core._address(b), opts)
                res["rust_wall"] = time.perf_counter() - t0
                res["rust_in"] = r
        if i < 20:
            continue
        res["cg-rust_in"] = res["cg"] - res["rust_in"]
        res["cg-plain"] = res["cg"] - res["plain"]
        res["plain-rust_wall"] = res["plain"] - res["rust_wall"]
        for k, v in res.items():
            T[k].append(v * 1e6)
    print(f"{backend} n = {n}: " + " ".join(f"{k} {statistics.median(v):.1f}" for k, v in T.items()),
          flush=True)
