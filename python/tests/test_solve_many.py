"""Solver.solve_many: the k columns of B solved at once equal k single solves (CG and BiCGStab
run them together, GMRES one after another unless classical), checked against SciPy's direct solve; bad shapes
and dtypes raise."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import pipekrylov

from conftest import convdiff2d, poisson2d


@pytest.mark.parametrize(
    "method, precond, problem, k",
    [
        ("cg", None, "poisson", 1),
        ("cg", "jacobi", "poisson", 3),
        ("cg", None, "poisson", 11),
        ("bicgstab", "bilu0", "convdiff", 4),
        ("gmres", "jacobi", "convdiff", 3),
    ],
)
def test_columns_solve_like_single_solves(backend, method, precond, problem, k):
    A = poisson2d(16) if problem == "poisson" else convdiff2d(16)
    n = A.shape[0]
    rng = np.random.default_rng(k)
    B = rng.standard_normal((n, k))
    S = pipekrylov.Solver(A, method=method, precond=precond, backend=backend, rtol=1e-10)
    X, infos, reports = S.solve_many(B, report=True)
    assert X.shape == (n, k) and len(infos) == k and len(reports) == k
    for j in range(k):
        assert infos[j] == 0, (j, reports[j])
        exact = spla.spsolve(A.tocsc(), B[:, j])
        assert np.linalg.norm(X[:, j] - exact) <= 1e-7 * np.linalg.norm(exact)
        x, info = S.solve(B[:, j])
        assert info == 0
        assert abs(reports[j].iterations - S.solve(B[:, j], report=True)[2].iterations) <= 1
    # A 1-D b is one column.
    X1, infos1 = S.solve_many(B[:, 0])
    assert X1.shape == (n, 1) and infos1 == [0]


def test_bad_shapes_and_dtypes(backend):
    A = poisson2d(8)
    S = pipekrylov.Solver(A, method="cg", backend=backend)
    with pytest.raises(ValueError):
        S.solve_many(np.ones((A.shape[0] + 1, 2)))
    with pytest.raises(TypeError):
        S.solve_many(np.ones((A.shape[0], 2), dtype=complex))
    with pytest.raises(pipekrylov.InvalidInputError):
        bad = np.ones((A.shape[0], 2))
        bad[3, 1] = np.nan
        S.solve_many(bad)
    X, infos = S.solve_many(np.zeros((A.shape[0], 0)))
    assert X.shape == (A.shape[0], 0) and infos == []
