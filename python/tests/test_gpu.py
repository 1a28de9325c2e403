"""CuPy inputs on the CUDA backend (run on a GPU machine with CuPy; skipped where there is no
CUDA device or no CuPy): solved in place on the device, with no host copy of the vectors or
of the matrix."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import pytest

import pipekrylov

from conftest import convdiff2d, poisson2d

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
cusp = pytest.importorskip("cupyx.scipy.sparse")
if not any(b["name"] == "cuda" and b["available"] for b in pipekrylov.backends()):
    pytest.skip("no CUDA device for this build", allow_module_level=True)


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_cupy_vectors_are_solved_in_place(method, monkeypatch):
    A = poisson2d(64) if method == "cg" else convdiff2d(64)
    S = pipekrylov.Solver(A, method=method, precond="jacobi", backend="cuda", rtol=1e-10)
    b_host = np.random.default_rng(0).standard_normal(A.shape[0])
    ref, info_ref = S.solve(b_host)
    b = cupy.asarray(b_host)

    def refuse(*_a, **_k):
        raise AssertionError("a CuPy array was copied to the host")

    monkeypatch.setattr(cupy.ndarray, "get", refuse)
    monkeypatch.setattr(cupy, "asnumpy", refuse)
    x, info, rep = S.solve(b, report=True)
    monkeypatch.undo()
    assert isinstance(x, cupy.ndarray) and x.device.id == b.device.id
    assert info == 0 and info_ref == 0
    assert rep.vector_copies == 0
    # The same iterations as from NumPy vectors: the same solve.
    assert np.allclose(cupy.asnumpy(x), ref, rtol=1e-9, atol=1e-12)


def test_cupy_sparse_matrix_input():
    # The one-call function on a CuPy matrix: solved on its device, the vectors there too.
    A = poisson2d(50)
    Ad = cusp.csr_matrix(A)
    b = cupy.ones(A.shape[0])
    x, info, rep = pipekrylov.cg(Ad, b, rtol=1e-8, precond="amg", backend="cuda", report=True)
    assert info == 0 and isinstance(x, cupy.ndarray)
    assert rep.vector_copies == 0 and rep.backend.startswith("cuda")
    r = cupy.asnumpy(b) - A @ cupy.asnumpy(x)
    assert np.linalg.norm(r) <= 1e-8 * np.sqrt(A.shape[0]) * 1.01


def _refuse_host_copies(monkeypatch):
    """Every way of CuPy to the host refused for arrays of more than one entry (CuPy's own
    checks, as `has_canonical_format`, read one flag)."""
    get, asnumpy = cupy.ndarray.get, cupy.asnumpy

    def refuse(*_a, **_k):
        raise AssertionError("a CuPy array or matrix was copied to the host")

    def get_scalar(a, *args, **kw):
        return get(a, *args, **kw) if a.size <= 1 else refuse()

    def asnumpy_scalar(a, *args, **kw):
        return asnumpy(a, *args, **kw) if getattr(a, "size", 2) <= 1 else refuse()

    monkeypatch.setattr(cupy.ndarray, "get", get_scalar)
    monkeypatch.setattr(cupy, "asnumpy", asnumpy_scalar)
    for kind in (cusp.csr_matrix, cusp.coo_matrix, cusp.csc_matrix):
        monkeypatch.setattr(kind, "get", refuse)


@pytest.mark.parametrize("precond", [None, "jacobi", "amg"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_matrix_is_used_in_place(precond, dtype, monkeypatch):
    # No host copy of the matrix or the vectors (CuPy's way to the host refused), the same
    # iterations and solution as the solver of the SciPy matrix on the same backend.
    A = poisson2d(64, dtype=dtype)
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    b_host = np.random.default_rng(1).standard_normal(A.shape[0]).astype(dtype)
    ref = pipekrylov.Solver(A, "cg", precond, "cuda", rtol=rtol, variant="classical")
    x_ref, info_ref, rep_ref = ref.solve(b_host, report=True)
    Ad, b = cusp.csr_matrix(A), cupy.asarray(b_host)
    _refuse_host_copies(monkeypatch)
    S = pipekrylov.Solver(Ad, "cg", precond, rtol=rtol, variant="classical")  # backend "auto"
    x, info, rep = S.solve(b, report=True)
    monkeypatch.undo()
    assert S.backend.startswith("cuda") and isinstance(x, cupy.ndarray)
    assert info == 0 == info_ref and rep.iterations == rep_ref.iterations
    assert rep.vector_copies == 0
    notes = " ".join(rep.notes)
    assert "used in place" in notes and "copied to the host" not in notes, notes
    tol = 1e-9 if dtype == np.float64 else 1e-4
    assert np.allclose(cupy.asnumpy(x), x_ref, rtol=tol, atol=tol * 1e-3)


def test_cupy_matrix_for_a_host_setup_is_copied_once_and_said_so():
    A = convdiff2d(48)
    S = pipekrylov.Solver(cusp.csr_matrix(A), "gmres", "bilu0", rtol=1e-10)
    x, info, rep = S.solve(cupy.ones(A.shape[0]), report=True)
    assert info == 0 and "copied to the host once for the bilu0 setup" in " ".join(rep.notes)
    r = np.ones(A.shape[0]) - A @ cupy.asnumpy(x)
    assert np.linalg.norm(r) <= 1e-9 * np.sqrt(A.shape[0])


def test_non_canonical_cupy_matrices_are_converted_on_the_device(monkeypatch):
    # COO with duplicate entries and unsorted rows: made canonical CSR by CuPy on the device.
    A = poisson2d(32).tocoo()
    half = A.data / 2
    rows = np.concatenate([A.row, A.row])[::-1].copy()
    cols = np.concatenate([A.col, A.col])[::-1].copy()
    vals = np.concatenate([half, half])[::-1].copy()
    Ad = cusp.coo_matrix((cupy.asarray(vals), (cupy.asarray(rows), cupy.asarray(cols))),
                         shape=A.shape)
    _refuse_host_copies(monkeypatch)
    S = pipekrylov.Solver(Ad, "cg", "jacobi", rtol=1e-10)
    x, info = S.solve(cupy.ones(A.shape[0]))
    monkeypatch.undo()
    assert info == 0
    r = np.ones(A.shape[0]) - A.tocsr() @ cupy.asnumpy(x)
    assert np.linalg.norm(r) <= 1e-9 * np.sqrt(A.shape[0])


def test_faulty_cupy_matrices_are_typed_errors():
    A = poisson2d(16)
    bad = cusp.csr_matrix(A)
    bad.data[5] = cupy.nan
    with pytest.raises(pipekrylov.InvalidInputError, match="NaN or infinite"):
        pipekrylov.Solver(bad, "cg", "jacobi")
    with pytest.raises(ValueError, match="square"):
        pipekrylov.Solver(cusp.csr_matrix(A[:10]), "cg")
    S = pipekrylov.Solver(cusp.csr_matrix(A), "cg")
    other = A + sp.eye(A.shape[0], k=3, format="csr")
    with pytest.raises(pipekrylov.InvalidInputError, match="pattern"):
        S.update_values(cusp.csr_matrix(other))
    nan = cusp.csr_matrix(A)
    nan.data[0] = cupy.inf
    with pytest.raises(pipekrylov.InvalidInputError, match="NaN or infinite"):
        S.update_values(nan)
    x, info = S.solve(cupy.ones(A.shape[0]))
    assert info == 0


@pytest.mark.parametrize("precond", ["jacobi", "amg", "bilu0"])
def test_cupy_matrix_update_values_in_place(precond, monkeypatch):
    # New values of a CuPy matrix on the first's pattern: used in place (no host copy for the
    # preconditioners refreshed on the device), solved as the SciPy solver refreshed the same way.
    A = poisson2d(48)
    A2 = (A + sp.diags(0.5 + (np.arange(A.shape[0]) % 3) * 0.5)).tocsr()
    b = np.ones(A.shape[0])
    ref = pipekrylov.Solver(A, "cg", precond, "cuda", rtol=1e-10, variant="classical")
    ref.update_values(A2)
    x_ref, _, rep_ref = ref.solve(b, report=True)
    S = pipekrylov.Solver(cusp.csr_matrix(A), "cg", precond, rtol=1e-10, variant="classical")
    A2d = cusp.csr_matrix(A2)
    if precond != "bilu0":
        _refuse_host_copies(monkeypatch)
    update = S.update_values(A2d)
    monkeypatch.undo()
    assert update["precond"] is not None
    x, info, rep = S.solve(cupy.asarray(b), report=True)
    assert info == 0 and rep.iterations == rep_ref.iterations
    assert np.allclose(cupy.asnumpy(x), x_ref, rtol=1e-9, atol=1e-12)


def test_initial_guess_on_the_device():
    A = poisson2d(40)
    S = pipekrylov.Solver(A, method="cg", backend="cuda", rtol=1e-10)
    b = cupy.ones(A.shape[0])
    x, _ = S.solve(b)
    x2, info, rep = S.solve(b, x0=x, report=True)
    assert info == 0 and rep.iterations == 0 and rep.vector_copies == 0


def test_float32_cupy():
    A = poisson2d(40, dtype=np.float32)
    S = pipekrylov.Solver(A, method="cg", backend="cuda", rtol=1e-5)
    x, info = S.solve(cupy.ones(A.shape[0], dtype=cupy.float32))
    assert info == 0 and x.dtype == cupy.float32


def test_the_library_checks_device_pointers():
    A = poisson2d(32)
    S = pipekrylov.Solver(A, method="cg", backend="cuda")
    n = A.shape[0]
    host = np.ones(n)
    good = cupy.ones(n)
    # A host address is not CUDA device memory.
    with pytest.raises(pipekrylov.InvalidInputError, match="not CUDA device memory"):
        try:
            S._solver.solve_device(host.ctypes.data, good.data.ptr)
        except pipekrylov._pipekrylov.RustError as e:
            raise pipekrylov._errors.translate(e) from None
    # An allocation of n/2 values cannot hold n.
    half = cupy.cuda.runtime.malloc(8 * (n // 2))
    try:
        with pytest.raises(pipekrylov.InvalidInputError, match="run past the end"):
            try:
                S._solver.solve_device(good.data.ptr, half)
            except pipekrylov._pipekrylov.RustError as e:
                raise pipekrylov._errors.translate(e) from None
    finally:
        cupy.cuda.runtime.free(half)
    # Misaligned.
    with pytest.raises(pipekrylov.InvalidInputError, match="aligned"):
        try:
            S._solver.solve_device(good.data.ptr + 4, good.data.ptr)
        except pipekrylov._pipekrylov.RustError as e:
            raise pipekrylov._errors.translate(e) from None


torch = None
try:
    import torch as _torch

    if _torch.cuda.is_available():
        torch = _torch
except ImportError:
    pass


@pytest.mark.skipif(torch is None, reason="PyTorch with CUDA is not installed")
@pytest.mark.parametrize("one_call", [False, True])
def test_torch_tensors_are_solved_in_place(one_call, monkeypatch):
    # Any array with __cuda_array_interface__ is read in place; a PyTorch b gives a PyTorch x
    # on its device, and no vector passes through the host.
    A = poisson2d(48)
    n = A.shape[0]
    b_host = np.random.default_rng(1).standard_normal(n)
    b = torch.tensor(b_host, device="cuda")

    def refuse(*_a, **_k):
        raise AssertionError("a tensor was copied to the host")

    monkeypatch.setattr(torch.Tensor, "cpu", refuse)
    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    if one_call:
        x, info, rep = pipekrylov.cg(A, b, rtol=1e-10, report=True)  # backend auto: CUDA
    else:
        S = pipekrylov.Solver(A, method="cg", backend="cuda", rtol=1e-10)
        x, info, rep = S.solve(b, report=True)
    monkeypatch.undo()
    assert isinstance(x, torch.Tensor) and x.device == b.device and x.dtype == torch.float64
    assert info == 0 and rep.vector_copies == 0 and rep.backend.startswith("cuda")
    r = b_host - A @ x.cpu().numpy()
    assert np.linalg.norm(r) <= 1e-10 * np.linalg.norm(b_host) * 1.01


@pytest.mark.skipif(torch is None, reason="PyTorch with CUDA is not installed")
def test_torch_inputs_are_checked():
    A = poisson2d(20)
    n = A.shape[0]
    S = pipekrylov.Solver(A, method="cg", backend="cuda")
    with pytest.raises(TypeError, match="dtype"):
        S.solve(torch.ones(n, device="cuda", dtype=torch.float32))
    with pytest.raises(ValueError, match="shape"):
        S.solve(torch.ones(n + 1, device="cuda", dtype=torch.float64))
    with pytest.raises(ValueError, match="strided"):
        S.solve(torch.ones(2 * n, device="cuda", dtype=torch.float64)[::2])
    x0 = torch.zeros(n, device="cuda", dtype=torch.float64)
    x, info = S.solve(torch.ones(n, device="cuda", dtype=torch.float64), x0=x0)
    assert info == 0 and float(x0.abs().max()) == 0.0  # x0 is not written
