"""Where pipekrylov.Solver.__init__ spends its Python time beyond the extension's constructor, per
backend (first argument): each step of the constructor timed on its own, medians of 300 in us, at
n = 16 (2D Poisson 4 x 4)."""

import sys
import time

import numpy as np
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _core, _pipekrylov

backend = sys.argv[1] if len(sys.argv) > 1 else "cuda"
t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(4, 4))
A = (sp.kron(t, sp.identity(4)) + sp.kron(sp.identity(4), t)).tocsr()
n = A.shape[0]
b = np.ones(n)
opts = _core._options(n, "cg", None, backend, 1e-8, 0.0, None, 20, {})
raw, _ = _core._raw_csr(A)


def med(f, k=300):
    ts = []
    for _ in range(k):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return np.median(ts) * 1e6


S = _pipekrylov._Solver(*raw, opts)
steps = {
    "as_csr": lambda: _core._as_csr(A),
    "options": lambda: _core._options(n, "cg", None, backend, 1e-8, 0.0, None, 20, {}),
    "raw_csr": lambda: _core._raw_csr(A),
    "ext_ctor": lambda: _pipekrylov._Solver(*raw, opts),
    "ext_ctor_kept": lambda: S.__class__(*raw, opts),
    "backend_attr": lambda: S.backend,
    "Solver": lambda: pipekrylov.Solver(A, "cg", None, backend, rtol=1e-8),
    "Solver.solve": lambda: P.solve(b),
    "cg": lambda: pipekrylov.cg(A, b, backend=backend, rtol=1e-8),
}
P = pipekrylov.Solver(A, "cg", None, backend, rtol=1e-8)
print(backend, " ".join(f"{k} {med(f):.1f}" for k, f in steps.items()))
