"""The SciPy-shaped calls against SciPy's own solvers on the same inputs: CG iteration counts
within 1, solutions to 1e-10, on every backend this machine runs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import pipekrylov

from conftest import convdiff2d, poisson2d


def scipy_iterations(solver, A, b, **kw):
    count = [0]

    def cb(_xk):
        count[0] += 1

    x, info = solver(A, b, callback=cb, **kw)
    return x, info, count[0]


@pytest.mark.parametrize("m", [10, 31, 64])
def test_cg_matches_scipy(backend, m):
    A = poisson2d(m)
    rng = np.random.default_rng(m)
    b = rng.standard_normal(A.shape[0])
    xs, info_s, its_s = scipy_iterations(spla.cg, A, b, rtol=1e-8)
    x, info, rep = pipekrylov.cg(A, b, rtol=1e-8, backend=backend, report=True)
    assert info == 0 and info_s == 0
    assert abs(rep.iterations - its_s) <= 1, (rep.iterations, its_s)
    assert rep.relative_residual <= 1e-8 * 1.01
    # Both to a tight tolerance: the same solution to 1e-10.
    xs, _ = spla.cg(A, b, rtol=1e-13, maxiter=10 * A.shape[0])
    x, info = pipekrylov.cg(A, b, rtol=1e-13, backend=backend)
    assert info == 0
    assert np.linalg.norm(x - xs) <= 1e-10 * np.linalg.norm(xs)


@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
def test_nonsymmetric_matches_scipy(backend, method):
    A = convdiff2d(30)
    b = np.ones(A.shape[0])
    ref = spla.spsolve(A.tocsc(), b)
    x, info, rep = getattr(pipekrylov, method)(A, b, rtol=1e-12, backend=backend, report=True)
    assert info == 0, rep
    assert np.linalg.norm(x - ref) <= 1e-10 * np.linalg.norm(ref)
    xs, info_s = getattr(spla, method)(A, b, rtol=1e-12, maxiter=10000)
    assert info_s == 0
    assert np.linalg.norm(x - xs) <= 1e-9 * np.linalg.norm(xs)


def test_gmres_restart_and_maxiter_like_scipy():
    A = convdiff2d(20)
    b = np.ones(A.shape[0])
    # maxiter counts restart cycles as in SciPy: 2 cycles of 5 steps cannot converge here.
    x, info, rep = pipekrylov.gmres(A, b, restart=5, maxiter=2, rtol=1e-12, report=True)
    assert info > 0 and rep.iterations == 10 and rep.stop_reason == "max_iterations"


@pytest.mark.parametrize("precond", ["jacobi", "bilu0", "isai", "ip", "fsai", "amg"])
def test_preconditioners_converge_to_the_true_residual(backend, precond):
    A = poisson2d(40)
    b = np.ones(A.shape[0])
    x, info, rep = pipekrylov.cg(A, b, rtol=1e-10, precond=precond, backend=backend, report=True)
    assert info == 0, rep
    true = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    assert true <= 1e-9
    assert abs(true - rep.relative_residual) <= 1e-12 + 1e-6 * true
    assert rep.precond == precond


def test_amg_cuts_iterations():
    A = poisson2d(100)
    b = np.ones(A.shape[0])
    _, _, plain = pipekrylov.cg(A, b, rtol=1e-8, report=True)
    _, info, amg = pipekrylov.cg(A, b, rtol=1e-8, precond="amg", report=True)
    assert info == 0
    assert amg.iterations <= 20 < plain.iterations


def test_real_matrix_with_bilu0():
    A = sp.csr_matrix(__import__("scipy.io", fromlist=["mmread"]).mmread(
        __import__("conftest").DATA + "/olm1000.mtx"))
    b = A @ np.ones(A.shape[0])
    x, info, rep = pipekrylov.gmres(
        A, b, rtol=1e-8, restart=30, maxiter=100, precond="bilu0", report=True
    )
    assert info == 0, rep
    assert np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b) * 1.01


@pytest.mark.parametrize("name", ["rajat19", "nnc1374"])
def test_ilu_solves_matrices_with_zero_diagonals(backend, name):
    """bilu0 stops with a zero pivot on these; ilu (matching, scaling, ordering, ILUT)
    solves them to a true residual of 1e-8 (b = A 1, GMRES(30))."""
    import scipy.io

    A = sp.csr_matrix(scipy.io.mmread(__import__("conftest").DATA + f"/{name}.mtx"))
    b = A @ np.ones(A.shape[0])
    with pytest.raises(pipekrylov.PreconditionerError):
        pipekrylov.gmres(A, b, precond="bilu0", backend=backend)
    x, info, rep = pipekrylov.gmres(
        A, b, rtol=1e-8, restart=30, maxiter=100, precond="ilu", backend=backend, report=True
    )
    assert info == 0, rep
    assert np.linalg.norm(b - A @ x) <= 1.01e-8 * np.linalg.norm(b)
