"""Input kinds (SciPy formats, dense, index and value dtypes, vector shapes), the reusable
solver, the report, callbacks and the initial guess."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import pipekrylov

from conftest import poisson2d


@pytest.mark.parametrize(
    "convert",
    [
        lambda A: A,
        lambda A: A.tocsc(),
        lambda A: A.tocoo(),
        lambda A: sp.csr_array(A),
        lambda A: A.toarray(),
        lambda A: sp.csr_matrix(
            (A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape
        ),
    ],
    ids=["csr", "csc", "coo", "csr_array", "dense", "int64-indices"],
)
def test_matrix_kinds_give_the_same_solution(convert):
    A = poisson2d(12)
    b = np.arange(A.shape[0], dtype=np.float64)
    ref, info = pipekrylov.cg(A, b, rtol=1e-12)
    assert info == 0
    x, info = pipekrylov.cg(convert(A), b, rtol=1e-12)
    assert info == 0
    assert np.array_equal(x, ref)


def test_unsorted_and_duplicate_entries_are_summed():
    A = poisson2d(6).tocoo()
    # Split every entry in two halves, shuffled: the same matrix once duplicates are summed.
    rng = np.random.default_rng(1)
    rows = np.concatenate([A.row, A.row])
    cols = np.concatenate([A.col, A.col])
    vals = np.concatenate([A.data / 2, A.data / 2])
    p = rng.permutation(rows.size)
    B = sp.csr_matrix((vals[p], (rows[p], cols[p])), shape=A.shape)
    B.has_canonical_format = False
    b = np.ones(A.shape[0])
    x, info = pipekrylov.cg(B, b, rtol=1e-12)
    ref, _ = pipekrylov.cg(A.tocsr(), b, rtol=1e-12)
    assert info == 0 and np.allclose(x, ref, rtol=1e-12, atol=0)


def test_float32_solves_in_float32():
    A = poisson2d(16, dtype=np.float32)
    b = np.ones(A.shape[0], dtype=np.float32)
    x, info, rep = pipekrylov.cg(A, b, rtol=1e-5, report=True)
    assert info == 0 and x.dtype == np.float32 and rep.dtype == "float32"
    assert np.linalg.norm(b - A @ x) <= 1e-4 * np.linalg.norm(b)


def test_float32_matrix_with_float64_vector_solves_in_the_matrix_precision():
    A = poisson2d(8, dtype=np.float32)
    x, info = pipekrylov.cg(A, np.ones(A.shape[0]), rtol=1e-5)
    assert info == 0 and x.dtype == np.float32


def test_column_vector_and_integer_rhs():
    A = poisson2d(8)
    b = np.ones((A.shape[0], 1), dtype=np.int64)
    x, info = pipekrylov.cg(A, b, rtol=1e-10)
    assert info == 0 and x.shape == (A.shape[0],)


def test_non_contiguous_rhs_is_read_correctly():
    A = poisson2d(8)
    big = np.arange(2 * A.shape[0], dtype=np.float64)
    b = big[::2]
    assert not b.flags.c_contiguous
    x, info = pipekrylov.cg(A, b, rtol=1e-12)
    ref, _ = pipekrylov.cg(A, np.ascontiguousarray(b), rtol=1e-12)
    assert info == 0 and np.array_equal(x, ref)


def test_solver_reuse_and_initial_guess():
    A = poisson2d(20)
    S = pipekrylov.Solver(A, method="cg", precond="jacobi", rtol=1e-10)
    assert S.n == A.shape[0] and "host" in S.backend or S.backend
    xs = []
    for k in range(3):
        b = np.full(A.shape[0], k + 1.0)
        x, info = S.solve(b)
        assert info == 0
        xs.append(x)
    # Linear: x(3 b) = 3 x(b).
    assert np.allclose(xs[2], 3 * xs[0], rtol=1e-8)
    # Starting from the solution: converged at once.
    _, info, rep = S.solve(np.ones(A.shape[0]), x0=xs[0], report=True)
    assert info == 0 and rep.iterations == 0


def test_report_fields():
    A = poisson2d(10)
    b = np.ones(A.shape[0])
    x, info, rep = pipekrylov.cg(A, b, rtol=1e-8, report=True)
    assert isinstance(rep, pipekrylov.Report)
    assert rep.converged and rep.info == 0 and rep.stop_reason == "converged"
    assert rep.residual_history.shape == (rep.iterations + 1,)
    assert rep.residual_history[-1] <= 1e-8 * np.linalg.norm(b)
    true = np.linalg.norm(b - A @ x)
    assert abs(rep.residual_norm - true) <= 1e-12 * np.linalg.norm(b) + 1e-6 * true
    assert rep.setup_seconds >= 0 and rep.solve_seconds > 0
    assert rep.method == "cg" and rep.backend
    assert "converged=True" in repr(rep)


def test_not_converged_gives_positive_info():
    A = poisson2d(30)
    b = np.ones(A.shape[0])
    x, info, rep = pipekrylov.cg(A, b, rtol=1e-12, maxiter=5, report=True)
    assert info == 5 and rep.stop_reason == "max_iterations"
    # The iterate is returned, better than the start in the norm CG minimizes (the residual's
    # 2-norm need not decrease in CG).
    e0 = spla.spsolve(A.tocsc(), b)
    e = e0 - x
    assert e @ (A @ e) < e0 @ (A @ e0)


def test_callback_sees_every_iteration():
    A = poisson2d(15)
    b = np.ones(A.shape[0])
    seen = []
    x, info, rep = pipekrylov.cg(A, b, rtol=1e-8, callback=seen.append, report=True)
    assert info == 0
    assert len(seen) == rep.iterations + 1
    assert np.allclose(seen, rep.residual_history)


def test_callback_exception_stops_the_solve():
    A = poisson2d(30)
    b = np.ones(A.shape[0])
    calls = [0]

    def cb(_r):
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        pipekrylov.cg(A, b, rtol=1e-12, callback=cb)
    assert calls[0] == 3


def test_backends_and_option_names():
    names = [b["name"] for b in pipekrylov.backends()]
    assert "host" in names
    assert "amg_coarsening" in pipekrylov.option_names()
    assert pipekrylov.__version__


class _FakeCudaArray:
    """An object that says it lives in CUDA memory (as PyTorch, Numba and JAX arrays do)."""

    def __init__(self, n, typestr="<f8"):
        self.__cuda_array_interface__ = {
            "shape": (n,),
            "typestr": typestr,
            "data": (0x7F0000000000, False),
            "version": 3,
            "strides": None,
        }


def test_a_cuda_array_on_a_host_solver_is_a_type_error():
    A = poisson2d(10)
    S = pipekrylov.Solver(A, method="cg", backend="host")
    with pytest.raises(TypeError, match="CUDA memory"):
        S.solve(_FakeCudaArray(A.shape[0]))
