"""Bad input raises the right exception with the library's message; nothing crashes the
interpreter (every case once more in a subprocess, whose exit is checked); Ctrl-C stops a long
solve with KeyboardInterrupt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import pipekrylov

from conftest import DATA, poisson2d

A = poisson2d(6)
N = A.shape[0]
ONES = np.ones(N)

# (name, call, exception type, text the message must contain)
CASES = [
    ("complex matrix", lambda: pipekrylov.cg(A.astype(complex), ONES), TypeError, "complex"),
    ("complex rhs", lambda: pipekrylov.cg(A, ONES + 1j), TypeError, "complex"),
    ("non-square", lambda: pipekrylov.gmres(sp.random(4, 5, format="csr"), np.ones(4)),
     ValueError, "square"),
    ("wrong rhs length", lambda: pipekrylov.cg(A, np.ones(N + 1)), ValueError, "shape"),
    ("rhs matrix", lambda: pipekrylov.cg(A, np.ones((N, 2))), ValueError, "shape"),
    ("string rhs", lambda: pipekrylov.cg(A, np.array(["a"] * N)), TypeError, "dtype"),
    ("nan in rhs", lambda: pipekrylov.cg(A, np.full(N, np.nan)),
     pipekrylov.InvalidInputError, "non-finite"),
    ("inf in matrix", lambda: pipekrylov.cg(sp.csr_matrix(
        (np.full(A.nnz, np.inf), A.indices, A.indptr), shape=A.shape), ONES),
     pipekrylov.InvalidInputError, ""),
    ("x0 length", lambda: pipekrylov.cg(A, ONES, x0=np.ones(3)), ValueError, "x0"),
    ("unknown option", lambda: pipekrylov.cg(A, ONES, tolerance=1), TypeError, "tolerance"),
    ("option type", lambda: pipekrylov.cg(A, ONES, block_size=[2]), TypeError, "block_size"),
    ("option value", lambda: pipekrylov.cg(A, ONES, block_size="two"),
     pipekrylov.InvalidInputError, "block_size"),
    ("another preconditioner's option",
     lambda: pipekrylov.cg(A, ONES, precond="jacobi", amg_strength=0.1),
     pipekrylov.InvalidInputError, "amg_strength"),
    ("bad option of the chosen preconditioner, given first",
     lambda: pipekrylov.cg(A, ONES, amg_strength_decay=5.0, precond="amg"),
     pipekrylov.InvalidInputError, "strength_decay"),
    ("negative maxiter", lambda: pipekrylov.cg(A, ONES, maxiter=-1),
     pipekrylov.InvalidInputError, "maxiter"),
    ("unknown preconditioner", lambda: pipekrylov.cg(A, ONES, precond="ilu99"),
     pipekrylov.InvalidInputError, "ilu99"),
    ("unknown backend", lambda: pipekrylov.cg(A, ONES, backend="tpu"),
     pipekrylov.InvalidInputError, "tpu"),
    ("unknown method", lambda: pipekrylov.Solver(A, method="minres"), ValueError, "minres"),
    ("negative rtol", lambda: pipekrylov.cg(A, ONES, rtol=-1.0),
     pipekrylov.InvalidInputError, "rtol"),
    ("LinearOperator", lambda: pipekrylov.cg(spla.aslinearoperator(A), ONES), TypeError,
     "LinearOperator"),
    ("M given", lambda: pipekrylov.cg(A, ONES, M=sp.identity(N)), TypeError, "precond="),
    ("zero pivot", lambda: pipekrylov.gmres(
        sp.csr_matrix(__import__("scipy.io", fromlist=["mmread"]).mmread(
            os.path.join(DATA, "rajat19.mtx"))), np.ones(1157), precond="bilu0"),
     pipekrylov.PreconditionerError, "pivot"),
    ("object array matrix", lambda: pipekrylov.cg(np.array([[1, "x"], [2, 3]], dtype=object),
                                                  np.ones(2)), TypeError, "dtype"),
]


@pytest.mark.parametrize("name,call,exc,text", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(name, call, exc, text):
    with pytest.raises(exc) as e:
        call()
    assert text in str(e.value), str(e.value)
    # Every library error is a SolverError and a standard exception type at once.
    if isinstance(e.value, pipekrylov.SolverError):
        assert isinstance(e.value, (ValueError, RuntimeError, MemoryError))


def test_bad_inputs_never_crash_the_interpreter():
    """The same cases in a fresh interpreter: it must exit normally having caught each."""
    here = os.path.dirname(__file__)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {here!r})
        import test_errors as t
        for name, call, exc, text in t.CASES:
            try:
                call()
            except exc:
                pass
            else:
                raise SystemExit("no exception for " + name)
        print("all", len(t.CASES), "bad inputs raised")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "bad inputs raised" in out.stdout


def test_ctrl_c_stops_a_long_solve():
    """SIGINT during a solve that would run for minutes: KeyboardInterrupt within a second."""
    script = textwrap.dedent(
        """
        import sys, time, numpy as np, scipy.sparse as sp, pipekrylov
        m = 300
        t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
        A = (sp.kron(t, sp.identity(m)) + sp.kron(sp.identity(m), t)).tocsr()
        print("ready", flush=True)
        start = time.time()
        try:
            # GMRES(2) on a 90,000-unknown Laplacian: millions of steps to 1e-14.
            pipekrylov.gmres(A, np.ones(A.shape[0]), restart=2, maxiter=10**7, rtol=1e-14,
                             backend="host")
        except KeyboardInterrupt:
            print("interrupted after", round(time.time() - start, 2), flush=True)
            sys.exit(0)
        sys.exit("the solve ended without an interrupt")
        """
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(1.5)
    sent = time.time()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "interrupted after" in out
    assert time.time() - sent < 5.0
