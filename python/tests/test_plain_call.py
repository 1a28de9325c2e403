"""The plain one call: SciPy's canonical CSR and NumPy vectors read and checked in the extension
(`_pipekrylov.solve_plain`), everything else left to the general path, both giving the same
results."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import pipekrylov
from pipekrylov import _pipekrylov

from conftest import convdiff2d, poisson2d


def plain(A, b, x0=None, method="cg", rtol=1e-10, atol=0.0, maxiter=None, options=None, **kw):
    """`solve_plain` as `pipekrylov.cg` calls it: `kw` are the keyword options; `options`, when
    given, the dict handed over instead."""
    return _pipekrylov.solve_plain(method, A, b, x0, rtol, atol, maxiter, options or kw)


def general(method, A, b, **kw):
    """The general path (report=True never takes the plain one)."""
    x, info, _ = getattr(pipekrylov, method)(A, b, report=True, **kw)
    return x, info


@pytest.mark.parametrize(
    "convert",
    [
        lambda A: A,
        lambda A: sp.csr_array(A),
        lambda A: sp.csr_matrix(
            (A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape
        ),
        lambda A: A.astype(np.float32),
    ],
    ids=["csr_matrix", "csr_array", "int64-indices", "float32"],
)
def test_the_plain_case_is_taken_and_solves_as_the_general_path(convert):
    A = convert(poisson2d(10))
    dtype = A.dtype
    b = np.linspace(1.0, 2.0, A.shape[0]).astype(dtype)
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    out = plain(A, b, rtol=rtol, backend="host")
    assert out is not None, "the plain call declined a plain input"
    x, info = out
    assert info == 0 and x.dtype == dtype and x.shape == b.shape
    ref, ref_info = general("cg", A, b, rtol=rtol, backend="host")
    assert ref_info == 0 and np.array_equal(x, ref)


@pytest.mark.parametrize(
    "case",
    [
        "csc",
        "non-canonical",
        "non-square",
        "rhs-dtype",
        "rhs-strided",
        "rhs-length",
        "rhs-2d",
        "x0-list",
        "maxiter-float",
        "rtol-string",
        "own-option",
        "mixed-index-dtypes",
        "rhs-byteswapped",
        "values-byteswapped",
        "indices-byteswapped",
    ],
)
def test_anything_else_is_declined(case):
    A = poisson2d(6)
    n = A.shape[0]
    b = np.ones(n)
    args = dict(A=A, b=b)
    kw = {}
    if case == "csc":
        args["A"] = A.tocsc()
    elif case == "non-canonical":
        B = A.copy()
        B.has_canonical_format = False
        args["A"] = B
    elif case == "non-square":
        args["A"] = sp.csr_matrix(np.ones((3, 4)))
    elif case == "rhs-dtype":
        args["b"] = np.ones(n, dtype=np.float32)
    elif case == "rhs-strided":
        args["b"] = np.ones(2 * n)[::2]
    elif case == "rhs-length":
        args["b"] = np.ones(n + 1)
    elif case == "rhs-2d":
        args["b"] = np.ones((n, 1))
    elif case == "x0-list":
        kw["x0"] = [0.0] * n
    elif case == "maxiter-float":
        kw["maxiter"] = 10.5
    elif case == "rtol-string":
        kw["rtol"] = "1e-8"
    elif case == "own-option":
        kw["atol"] = 0.0
        args["options"] = {"rtol": 1e-3}
    elif case == "rhs-byteswapped":
        args["b"] = b.astype(b.dtype.newbyteorder())
    elif case == "values-byteswapped":
        B = A.copy()
        B.data = B.data.astype(B.data.dtype.newbyteorder())
        args["A"] = B
    elif case == "indices-byteswapped":
        B = A.copy()
        B.indptr = B.indptr.astype(B.indptr.dtype.newbyteorder())
        B.indices = B.indices.astype(B.indices.dtype.newbyteorder())
        args["A"] = B
    elif case == "mixed-index-dtypes":
        B = A.copy()
        B.indices = B.indices.astype(np.int64)  # SciPy's constructor would make them one dtype
        assert B.indices.dtype != B.indptr.dtype
        args["A"] = B
    assert plain(args["A"], args["b"], options=args.get("options"), **kw) is None


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_the_public_calls_agree_with_the_general_path(method, backend):
    A = poisson2d(12) if method == "cg" else convdiff2d(12)
    n = A.shape[0]
    b = np.cos(np.arange(n, dtype=np.float64))
    x0 = np.full(n, 0.25)
    for kw in (
        dict(rtol=1e-9),
        dict(rtol=1e-9, x0=x0, precond="jacobi"),
        dict(rtol=1e-14, maxiter=np.int64(3)),
        dict(rtol=1e-9, atol=1e-3, variant="classical"),
    ):
        x, info = getattr(pipekrylov, method)(A, b, backend=backend, **kw)
        ref, ref_info = general(method, A, b, backend=backend, **kw)
        assert info == ref_info, kw
        assert np.array_equal(x, ref), kw
    # maxiter=3 at rtol 1e-14 does not converge: SciPy's positive info.
    _, info = getattr(pipekrylov, method)(A, b, rtol=1e-14, maxiter=3, backend=backend)
    assert info > 0


def test_the_arrays_are_read_in_place_and_left_unchanged():
    A = poisson2d(8)
    before = (A.indptr.copy(), A.indices.copy(), A.data.copy())
    b = np.ones(A.shape[0])
    x0 = np.zeros(A.shape[0])
    x, info = pipekrylov.cg(A, b, x0=x0, rtol=1e-10, backend="host")
    assert info == 0
    assert x is not b and x is not x0
    assert np.array_equal(A.indptr, before[0]) and np.array_equal(A.indices, before[1])
    assert np.array_equal(A.data, before[2])
    assert np.array_equal(b, np.ones(A.shape[0])) and not x0.any()


def test_byteswapped_inputs_solve_as_native_ones():
    A = poisson2d(8)
    b = np.linspace(0.0, 1.0, A.shape[0])
    ref, info = pipekrylov.cg(A, b, rtol=1e-10, backend="host")
    assert info == 0
    B = A.copy()
    B.data = B.data.astype(B.data.dtype.newbyteorder())
    x, info = pipekrylov.cg(B, b.astype(b.dtype.newbyteorder()), rtol=1e-10, backend="host")
    assert info == 0 and np.array_equal(x, ref)
