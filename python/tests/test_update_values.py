"""Solver.update_values: new values on the pattern the solver was set up for solve as a solver
set up for them would (checked against SciPy's direct solve); a new pattern, size or dtype, NaN
values and a failing factorization raise, and the solver keeps solving the old matrix."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import pipekrylov

from conftest import convdiff2d, poisson2d


def new_values(A: sp.csr_matrix) -> sp.csr_matrix:
    """W A W with W = diag(1 + 0.5 sin i) and the diagonal 10% larger: A's pattern, new values
    (symmetric and positive definite when A is)."""
    w = sp.diags(1.0 + 0.5 * np.sin(np.arange(A.shape[0])))
    B = (w @ A @ w).tocsr()
    B.setdiag(B.diagonal() * 1.1)
    B.sort_indices()
    assert (B.indptr == A.indptr).all() and (B.indices == A.indices).all()
    return B


@pytest.mark.parametrize(
    "method, precond, problem",
    [
        ("cg", None, "poisson"),
        ("cg", "jacobi", "poisson"),
        ("cg", "ip", "poisson"),
        ("gmres", "bilu0", "convdiff"),
        ("bicgstab", "ilu", "convdiff"),
        ("gmres", "isai", "convdiff"),
    ],
)
def test_new_values_solve_like_scipy(backend, method, precond, problem):
    A = poisson2d(16) if problem == "poisson" else convdiff2d(16)
    B = new_values(A)
    b = np.linspace(1.0, 2.0, A.shape[0])
    S = pipekrylov.Solver(A, method=method, precond=precond, backend=backend, rtol=1e-10,
                          maxiter=5000)
    x_old, info = S.solve(b)
    assert info == 0
    update = S.update_values(B)
    assert update["seconds"] >= update["matrix_seconds"] >= 0.0
    assert (update["precond"] is None) == (precond is None)
    x, info = S.solve(b)
    assert info == 0
    want = spla.spsolve(B.tocsc(), b)
    assert np.abs(x - want).max() <= 1e-7 * np.abs(want).max()
    assert np.abs(x - x_old).max() > 1e-3 * np.abs(want).max()
    # As a solver set up for B from scratch.
    fresh, _ = pipekrylov.Solver(B, method=method, precond=precond, backend=backend,
                                 rtol=1e-10, maxiter=5000).solve(b)
    assert np.abs(x - fresh).max() <= 1e-10 * np.abs(want).max()


def test_rejected_values_leave_the_solver():
    A = convdiff2d(12)
    b = np.ones(A.shape[0])
    S = pipekrylov.Solver(A, method="gmres", precond="bilu0", rtol=1e-10)
    x0, info = S.solve(b)
    assert info == 0
    wider = (A + sp.csr_matrix(([0.5], ([0], [A.shape[0] - 1])), shape=A.shape)).tocsr()
    with pytest.raises(pipekrylov.InvalidInputError, match="pattern"):
        S.update_values(wider)
    with pytest.raises(ValueError, match="n ="):
        S.update_values(convdiff2d(11))
    with pytest.raises(TypeError, match="dtype"):
        S.update_values(A.astype(np.float32))
    nan = A.copy()
    nan.data[3] = np.nan
    with pytest.raises(pipekrylov.InvalidInputError, match="non-finite"):
        S.update_values(nan)
    zero = A.copy()
    zero.data[zero.indptr[0]:zero.indptr[1]][zero.indices[zero.indptr[0]:zero.indptr[1]] == 0] = 0.0
    with pytest.raises(pipekrylov.PreconditionerError, match="pivot"):
        S.update_values(zero)
    x, info = S.solve(b)
    assert info == 0
    assert np.array_equal(x, x0)
