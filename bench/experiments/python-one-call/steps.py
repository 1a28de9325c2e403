"""Issue 53: the Python steps of the fused one call (`pipekrylov.cg`'s plain path) timed one
by one, medians over 300 calls: the CSR check, the options dict, the raw arrays, the vector
check, the output array, the extension call, SciPy's info. Shows whether the wrapper's own
steps are slow after a GPU setup rather than the extension. Arguments: backend, and the
microseconds to busy-wait in Python before each call's timed steps (default 0: none), to tell
a transient slowdown (other threads still running) from a lasting one. Prints one line per n,
in us."""

import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

from pipekrylov import _pipekrylov
from pipekrylov._core import _address, _as_csr, _as_vector, _info, _options, _raw_csr

backend = sys.argv[1] if len(sys.argv) > 1 else "host"
wait = float(sys.argv[2]) * 1e-6 if len(sys.argv) > 2 else 0.0
names = ("as_csr", "options", "raw_csr", "as_vector", "empty_x", "solve_once", "info")
for m in (4, 32, 64):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
    n = A.shape[0]
    b = np.ones(n)
    T = {k: [] for k in names}
    for i in range(320):
        if wait > 0:
            until = time.perf_counter() + wait
            while time.perf_counter() < until:
                pass
        ts = [time.perf_counter()]
        csr, _ = _as_csr(A)
        ts.append(time.perf_counter())
        opts = _options(n, "cg", None, backend, 1e-8, 0.0, None, 20, {})
        ts.append(time.perf_counter())
        raw, _arrays = _raw_csr(csr)
        ts.append(time.perf_counter())
        bv, _ = _as_vector(b, n, np.dtype(csr.dtype), "b")
        ts.append(time.perf_counter())
        x = np.empty(n, dtype=csr.dtype)
        ts.append(time.perf_counter())
        outcome = _pipekrylov.solve_once(*raw, _address(bv), 0, _address(x), opts, None)
        ts.append(time.perf_counter())
        _info(*outcome)
        ts.append(time.perf_counter())
        if i >= 20:
            for k, a, c in zip(names, ts, ts[1:]):
                T[k].append((c - a) * 1e6)
    print(f"{backend} wait {wait * 1e6:.0f} us n = {n}: " + " ".join(f"{k} {statistics.median(v):.1f}" for k, v in T.items()),
          flush=True)
