"""Issue 53: what a call into the extension costs right after a CUDA solve, against the same
call after a host solve ("warm"). Per round: one `pipekrylov.cg` on CUDA (or on the host, the
warm case) at n = 16, then one timed step; the steps alternate over the rounds. The steps are an
empty Python function, `_pipekrylov.address(b)` (the smallest extension call), `solve_plain`
declining at once (an unknown method: its nine arguments parsed), `solve_plain` declining after
the matrix check (a CSC matrix), and a whole plain solve on the host backend (n = 16). Arguments:
rounds, and the backends of the solve before (default "cuda,host"). Prints the median of each step
in us after each."""

import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _pipekrylov

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
m = 4
t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
A_csc = A.tocsc()
b = np.ones(A.shape[0])
host = {"backend": "host"}


def nothing():
    return None


steps = {
    "python-noop": lambda: nothing(),
    "address": lambda: _pipekrylov.address(b),
    "plain-declined-method": lambda: _pipekrylov.solve_plain("x", A, b, None, 1e-8, 0.0, None, host),
    "plain-declined-csc": lambda: _pipekrylov.solve_plain("cg", A_csc, b, None, 1e-8, 0.0, None, host),
    "plain-host-solve": lambda: _pipekrylov.solve_plain("cg", A, b, None, 1e-8, 0.0, None, host),
}
for before in (sys.argv[2] if len(sys.argv) > 2 else "cuda,host").split(","):
    times = {k: [] for k in steps}
    for i in range(rounds + 10):
        for name, step in steps.items():
            pipekrylov.cg(A, b, rtol=1e-8, backend=before)
            t0 = time.perf_counter()
            step()
            dt = time.perf_counter() - t0
            if i >= 10:
                times[name].append(dt * 1e6)
    print(f"after a {before} solve: " + " ".join(
        f"{k} {statistics.median(v):.2f}" for k, v in times.items()), flush=True)
