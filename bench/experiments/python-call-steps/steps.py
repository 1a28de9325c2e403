"""Issue 53: where the time of the crate's one call made from Python goes, step by step
(`_pipekrylov.rust_one_call_steps`: options read, GIL released, SciPy arrays made into the
crate's CSR, b copied, `pipekrylov::solve`, solution dropped, inputs dropped, GIL taken again),
beside the wall times of `pipekrylov.cg` ("cg") and of `solve_plain` called directly ("plain"),
alternated (order flipped each round); with a fourth argument "borrowed", also the Rust call
that borrows the arrays (`borrowed=True`: a `CsrView` and `ReusableSolver::builder_view`), its
steps suffixed "_b" ("cg-solve_b": the plain call over that Rust call). Arguments: backend
(cuda, opencl or host), rounds[, borrowed].
Prints one line per n: medians in us of the walls and of each step's own time; "enter" is the
wall before the function's first instruction and after its last (argument parsing, return)."""

import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _core, _pipekrylov

backend = sys.argv[1] if len(sys.argv) > 1 else "host"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 300
borrowed = len(sys.argv) > 3 and sys.argv[3] == "borrowed"
for m in (4, 32, 64, 256):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
    n = A.shape[0]
    b = np.ones(n)
    opts = dict(method="cg", precond=None, backend=backend, rtol=1e-8, atol=0.0,
                maxiter=10 * n, restart=20)
    raw, arrays = _core._raw_csr(A)
    extra = {"backend": backend}
    T = {}
    for i in range(rounds + 20):
        res = {}
        order = (0, 1, 2, 3) if borrowed else (0, 1, 2)
        for which in (order if i % 2 else order[::-1]):
            t0 = time.perf_counter()
            if which == 0:
                pipekrylov.cg(A, b, rtol=1e-8, backend=backend)
                res["cg"] = time.perf_counter() - t0
            elif which == 1:
                out = _pipekrylov.solve_plain("cg", A, b, None, 1e-8, 0.0, None, extra)
                res["plain"] = time.perf_counter() - t0
                assert out is not None and out[1] == 0
            else:
                suffix = "_b" if which == 3 else ""
                steps = _pipekrylov.rust_one_call_steps(*raw, _core._address(b), opts,
                                                        borrowed=which == 3)
                wall = time.perf_counter() - t0
                res["steps_wall" + suffix] = wall
                last = 0.0
                for name, at in steps:
                    res[name + suffix] = at - last
                    last = at
                res["enter" + suffix] = wall - last
        if i < 20:
            continue
        res["cg-solve"] = res["cg"] - res["solve"]
        res["plain-solve"] = res["plain"] - res["solve"]
        if borrowed:
            res["cg-solve_b"] = res["cg"] - res["solve_b"]
        for k, v in res.items():
            T.setdefault(k, []).append(v * 1e6)
    print(f"{backend} n = {n}: " + " ".join(f"{k} {statistics.median(v):.1f}" for k, v in T.items()),
          flush=True)
