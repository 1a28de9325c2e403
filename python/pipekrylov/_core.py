"""SciPy-shaped solves over the Rust library: input checks and conversions, the reusable
:class:`Solver`, the one-call :func:`cg`, :func:`bicgstab` and :func:`gmres`, and the
:class:`Report`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from . import _pipekrylov
from ._errors import InvalidInputError, translate

# The address of a contiguous NumPy array's first element (its `__array_struct__`: about
# 0.3 us, against 2.4 us for `ndarray.ctypes.data`).
_address = _pipekrylov.address

__all__ = ["Report", "Solver", "cg", "bicgstab", "gmres", "backends"]

_METHODS = ("cg", "bicgstab", "gmres")


@dataclass(frozen=True)
class Report:
    """What a solve did, from the library's report.

    ``residual_norm`` and ``relative_residual`` are the *true* residual ||b - A x|| of the
    returned x (recomputed once at the end), not the recurrence's. ``vector_copies`` counts the
    n-vectors moved between host and device for this solve (0 for CuPy vectors on CUDA);
    ``rust_setup_seconds`` and ``rust_solve_seconds`` are the time the solver's construction
    and this solve spent inside the library (the rest of a call's time is the wrapper's)."""

    method: str
    converged: bool
    info: int
    stop_reason: str
    iterations: int
    residual_norm: float
    relative_residual: float
    residual_history: np.ndarray
    setup_seconds: float
    solve_seconds: float
    seconds_per_iteration: float
    backend: str
    precond: str
    dtype: str
    variant: str
    execution: str
    vector_copies: int = 0
    rust_setup_seconds: float = 0.0
    rust_solve_seconds: float = 0.0
    notes: List[str] = field(default_factory=list)
    accuracy_warning: Optional[str] = None

    def __repr__(self) -> str:
        return (
            f"Report(method={self.method!r}, converged={self.converged}, "
            f"stop_reason={self.stop_reason!r}, iterations={self.iterations}, "
            f"relative_residual={self.relative_residual:.3e}, "
            f"solve_seconds={self.solve_seconds:.3e}, backend={self.backend!r})"
        )


def backends() -> List[dict]:
    """The backends compiled into this build and what each sees on this machine (name,
    compiled, available, devices, note): ``pipekrylov info`` of the command line."""
    return json.loads(_pipekrylov.backends_json())


def _is_cupy(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] in ("cupy", "cupyx")


def _cuda_interface(obj: Any) -> Optional[dict]:
    """``obj.__cuda_array_interface__`` (CuPy, PyTorch, Numba, JAX arrays in CUDA memory), or
    None for anything else (a PyTorch CPU tensor raises when asked for it)."""
    if type(obj) is np.ndarray:
        return None  # the common case, without the AttributeError's cost (about 1 us)
    try:
        return obj.__cuda_array_interface__
    except Exception:
        return None


def _is_torch(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "torch"


_SCIPY_CSR = tuple(t for t in (sp.csr_matrix, getattr(sp, "csr_array", None)) if t is not None)
_VALUE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _canonical_csr(A: Any) -> Any:
    """A sparse matrix of SciPy or CuPy (the same interface) as a square CSR matrix in canonical
    form (sorted columns, no duplicates) with float32/float64 values, converted where it lives
    when it is not one; TypeError/ValueError for a shape or dtype the library does not take."""
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got shape {A.shape}")
    kind = np.dtype(A.dtype).kind
    if kind == "c":
        raise TypeError(f"complex matrices are not supported (A has dtype {A.dtype})")
    if A.dtype not in (np.float32, np.float64):
        if kind not in "fiub":
            raise TypeError(f"A has dtype {A.dtype}: expected a real floating or integer dtype")
        # Integers, other float widths and non-native byte orders: float32 stays float32.
        single = kind == "f" and A.dtype.itemsize == 4
        A = A.astype(np.float32 if single else np.float64)
    if A.format != "csr":
        A = A.tocsr()
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


def _as_csr(A: Any) -> Tuple[sp.csr_matrix, bool]:
    """A as a canonical SciPy CSR matrix of float32/float64 values and int32/int64 indices, and
    whether it came from CuPy."""
    # The common case first, in a few attribute reads: SciPy's canonical CSR of f32/f64 values
    # with int32/int64 indices of one type (the flag is cached by SciPy once computed).
    if (
        type(A) in _SCIPY_CSR
        and A.dtype in _VALUE_DTYPES
        and A.indptr.dtype in _INDEX_DTYPES
        and A.indices.dtype == A.indptr.dtype
        and A.shape[0] == A.shape[1]
        and A.has_canonical_format
    ):
        return A, False
    from_cupy = False
    if _is_cupy(A) and hasattr(A, "get"):
        # A solver on another backend than CUDA: one copy to the host.
        A, from_cupy = A.get(), True
    if isinstance(A, np.ndarray):
        if not (np.issubdtype(A.dtype, np.number) or A.dtype == np.bool_):
            raise TypeError(f"A has dtype {A.dtype}: expected a real floating or integer dtype")
        if A.ndim != 2:
            raise ValueError(f"A must be a 2-D matrix, got an array of shape {A.shape}")
        A = sp.csr_matrix(A)
    elif not sp.issparse(A):
        raise TypeError(
            "A must be a scipy.sparse matrix or array, a dense NumPy 2-D array or a "
            f"cupyx.scipy.sparse matrix; got {type(A).__name__} (a LinearOperator has no "
            "entries to build a preconditioner from)"
        )
    A = _canonical_csr(A)
    if A.indptr.dtype not in (np.int32, np.int64) or A.indices.dtype != A.indptr.dtype:
        A = sp.csr_matrix(
            (A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape
        )
    return A, from_cupy


def _as_vector(v: Any, n: int, dtype: np.dtype, name: str) -> Tuple[np.ndarray, bool]:
    """v as a C-contiguous 1-D array of n values of dtype (a copy only when needed), and
    whether it came from CuPy."""
    if (
        type(v) is np.ndarray
        and v.dtype == dtype
        and v.shape == (n,)
        and v.flags.c_contiguous
    ):
        return v, False  # the common case, read in place
    from_cupy = False
    if _is_cupy(v) and hasattr(v, "get"):
        v, from_cupy = v.get(), True  # TODO(issue 55): in place on the CUDA backend
    a = np.asarray(v)
    if np.issubdtype(a.dtype, np.complexfloating):
        raise TypeError(f"{name}: complex vectors are not supported (dtype {a.dtype})")
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise TypeError(f"{name}: expected real numbers, got dtype {a.dtype}")
    if a.shape not in ((n,), (n, 1)):
        raise ValueError(f"{name} has shape {a.shape}; the matrix has {n} rows")
    return np.ascontiguousarray(a.reshape(n), dtype=dtype), from_cupy


def _info(converged: bool, breakdown: bool, iterations: int) -> int:
    """SciPy's ``info``: 0 converged, < 0 a breakdown, > 0 iterations without convergence."""
    if converged:
        return 0
    if breakdown:
        return -1
    return max(int(iterations), 1)


def _cupy_csr(A: Any):
    """A cupyx.scipy.sparse matrix as a canonical CSR matrix of float32/float64 values and
    int32 indices on its device (converted there when it is not one: no host copy), or None
    for anything else."""
    if not (_is_cupy(A) and hasattr(A, "tocsr")):
        return None
    import cupy

    A = _canonical_csr(A)
    if A.indptr.dtype != np.int32 or A.indices.dtype != np.int32:
        if A.nnz >= 2**31:
            raise ValueError("A has 2^31 or more entries: beyond the kernels' 32-bit indices")
        A = _int32_csr(A, cupy)
    return A


def _int32_csr(A: Any, cupy: Any):
    """A CuPy CSR matrix with int32 index arrays (converted on the device)."""
    import cupyx.scipy.sparse as csp

    return csp.csr_matrix(
        (A.data, A.indices.astype(cupy.int32), A.indptr.astype(cupy.int32)), shape=A.shape
    )


def _raw_csr(csr: sp.csr_matrix) -> Tuple[tuple, tuple]:
    """The extension's CSR arguments of a canonical CSR matrix: (n, indptr, indices, data
    addresses, nnz, index bits, value bits), and the arrays they point at (to keep alive for
    the call)."""
    indptr = np.ascontiguousarray(csr.indptr)
    indices = np.ascontiguousarray(csr.indices)
    data = np.ascontiguousarray(csr.data)
    index_bits = 32 if indptr.dtype == np.int32 else 64
    args = (
        csr.shape[0],
        _address(indptr),
        _address(indices),
        _address(data),
        int(data.shape[0]),
        index_bits,
        8 * data.dtype.itemsize,
    )
    return args, (indptr, indices, data)


def _options(n: int, method: str, precond, backend, rtol, atol, maxiter, restart, options):
    """The extension's options dict (maxiter None: 10 n, at least 1)."""
    if maxiter is None:
        maxiter = max(10 * n, 1)
    return dict(
        options,
        method=method,
        precond=precond,
        backend=backend,
        rtol=float(rtol),
        atol=float(atol),
        maxiter=int(maxiter),
        restart=int(restart),
    )


class Solver:
    """A matrix set up once (uploaded, preconditioner built) and solved with many right-hand
    sides, like the crate's ``ReusableSolver``::

        S = pipekrylov.Solver(A, method="cg", precond="amg", rtol=1e-8)
        x, info = S.solve(b)

    ``method`` is "cg", "bicgstab" or "gmres"; ``precond`` any of the library's preconditioners
    ("jacobi", "point-block-jacobi", "block-jacobi", "bilu0", "isai", "ip", "fsai", "afsai",
    "amg", "ilu") or None; ``backend`` "auto" (CUDA, then OpenCL, then the host; the host for small
    systems), "cuda", "opencl" or "host". Further keyword options: ``rtol``, ``atol``,
    ``maxiter`` (Krylov steps), ``restart`` (GMRES), ``variant`` ("auto", "pipelined" or "classical"),
    ``execution`` ("auto", "synchronous", "device-resident"), ``format`` ("csr", "sell", "bsr"
    ...), ``history`` (keep the residual history, default True), ``precond_precision`` ("solve" or
    "f32": the preconditioner stored and applied in single precision inside a double-precision
    solve, with classical CG) and the preconditioners'
    parameters (``block_size``, ``trisolve``, ``subdomains``, ``isai_level``, ``ip_scaling``,
    ``fsai_level``, ``amg_coarsening``, ``amg_smoother``, ``amg_sweeps``, ``amg_strength``, ``amg_strength_decay``,
    ``amg_high_contrast``, ``amg_max_levels``, ``amg_coarse_size``, ``amg_setup``, ``amg_precision``, ``ilu_matching``, ``ilu_ordering``, ``ilu_fill``,
    ``ilu_drop``, ``ilu_max_fill``, ``ilu_shift``, ``ilu_pivot``); :func:`option_names` lists them.
    A preconditioner's parameters apply to the ``precond`` chosen; one it does not read (say
    ``amg_strength`` with ``precond="bilu0"``) raises :class:`InvalidInputError`.

    The matrix is read at construction (SciPy's CSR in canonical form with int32 indices is
    read in place and, with no preconditioner or "jacobi", sent to the device without a host
    copy; other formats and index types are converted first); the work runs with the GIL
    released, so no other thread may change the arrays during the call. A ``cupyx.scipy.sparse`` matrix with ``backend="auto"`` or ``"cuda"`` is
    used in place on its device instead (converted there to canonical CSR with int32 indices
    when it is not one): checked there, never copied to the host unless the preconditioner's
    setup runs on the host (all but none, "jacobi" and "amg"; the report's ``backend_notes``
    say so). Keep it unchanged while the solver lives; :meth:`update_values` then takes the
    new matrix's values array in place too.
    """

    def __init__(
        self,
        A: Any,
        method: str = "gmres",
        precond: Optional[str] = None,
        backend: str = "auto",
        *,
        rtol: float = 1e-5,
        atol: float = 0.0,
        maxiter: Optional[int] = None,
        restart: int = 20,
        **options: Any,
    ) -> None:
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        self._method = method
        self._precond = precond or "none"
        on_device = _cupy_csr(A) if backend in ("auto", "cuda") else None
        if on_device is not None:
            # CuPy's arrays are the solver's matrix, in place: kept alive (and not to be
            # changed) for the solver's life.
            import cupy

            self._from_cupy = True
            self._device_matrix = on_device
            n = on_device.shape[0]
            self._n = n
            self._dtype = np.dtype(on_device.dtype)
            opts = _options(n, method, precond, "cuda", rtol, atol, maxiter, restart, options)
            cupy.cuda.get_current_stream().synchronize()
            try:
                self._solver = _pipekrylov._Solver.on_device(
                    n,
                    on_device.indptr.data.ptr,
                    on_device.indices.data.ptr,
                    on_device.data.data.ptr,
                    int(on_device.nnz),
                    8 * self._dtype.itemsize,
                    opts,
                )
            except _pipekrylov.RustError as e:
                raise translate(e) from None
        else:
            csr, self._from_cupy = _as_csr(A)
            n = csr.shape[0]
            opts = _options(n, method, precond, backend, rtol, atol, maxiter, restart, options)
            self._n = n
            self._dtype = np.dtype(csr.dtype)
            raw, _arrays = _raw_csr(csr)
            try:
                self._solver = _pipekrylov._Solver(*raw, opts)
            except _pipekrylov.RustError as e:
                raise translate(e) from None
        self._backend = self._solver.backend
        self._on_cuda = self._backend.startswith("cuda")
        self._on_gpu = not self._backend.startswith("host")

    def update_values(self, A: Any) -> dict:
        """Take new values of the matrix, on the sparsity pattern it was set up for (a time
        step's or a Newton step's matrix): only the values are written to the device and the
        preconditioner's numeric phase runs again (patterns, orderings, level schedules,
        aggregates are kept), like AmgX's ``replace_coefficients`` or PETSc's
        ``SAME_NONZERO_PATTERN``. ``A`` is any matrix the constructor takes, of the same shape,
        pattern and dtype. Returns the update's times and what the preconditioner kept::

            S = pipekrylov.Solver(A0, method="cg", precond="bilu0")
            for A in steps:
                S.update_values(A)
                x, info = S.solve(b)

        Raises :class:`InvalidInputError` for another pattern, size or dtype and NaN/Inf,
        :class:`PreconditionerError` when the new values cannot be factored (a zero pivot, ...);
        then the solver keeps its old values and stays usable.
        """
        if getattr(self, "_device_matrix", None) is not None:
            return self._update_device_values(A)
        csr, _ = _as_csr(A)
        if csr.shape[0] != self._n:
            raise ValueError(f"A is {csr.shape[0]} x {csr.shape[1]}, the solver's matrix has n = {self._n}")
        if np.dtype(csr.dtype) != self._dtype:
            raise TypeError(f"A's dtype {csr.dtype} is not the solver's {self._dtype}")
        args, _arrays = _raw_csr(csr)
        try:
            raw = self._solver.update_values(*args)
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        return json.loads(raw)

    def _update_device_values(self, A: Any) -> dict:
        """update_values for a solver of a CuPy matrix used in place: the new matrix (a CuPy
        matrix, or any the constructor takes, put on the device by CuPy) must have the pattern
        of the first, compared on the device; its values array is used in place from now on."""
        import cupy
        import cupyx.scipy.sparse as csp

        new = _cupy_csr(A)
        if new is None:
            csr, _ = _as_csr(A)
            new = _cupy_csr(csp.csr_matrix(csr))
        old = self._device_matrix
        if new.shape != old.shape:
            raise ValueError(f"A is {new.shape[0]} x {new.shape[1]}, the solver's matrix has n = {self._n}")
        if np.dtype(new.dtype) != self._dtype:
            raise TypeError(f"A's dtype {new.dtype} is not the solver's {self._dtype}")
        if new.nnz != old.nnz or not (
            bool(cupy.array_equal(new.indptr, old.indptr))
            and bool(cupy.array_equal(new.indices, old.indices))
        ):
            raise InvalidInputError(
                "the new matrix has another sparsity pattern than the one the solver was set up "
                "for (make a new Solver for a new pattern)"
            )
        cupy.cuda.get_current_stream().synchronize()
        try:
            raw = self._solver.update_device_values(new.data.data.ptr, int(new.nnz))
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        # The solver reads the new values array from now on (the index arrays are the first's).
        self._device_values = new.data
        return json.loads(raw)

    @property
    def n(self) -> int:
        """The number of unknowns."""
        return self._n

    @property
    def dtype(self) -> np.dtype:
        """The precision of the solves (the matrix's: float32 or float64)."""
        return self._dtype

    @property
    def backend(self) -> str:
        """The backend and device that run the solves."""
        return self._backend

    def solve(
        self,
        b: Any,
        x0: Any = None,
        *,
        callback: Optional[Callable[[float], Any]] = None,
        report: bool = False,
    ):
        """Solve A x = b from ``x0`` (zero when None). Returns ``(x, info)`` as SciPy does, or
        ``(x, info, report)`` with ``report=True``.

        ``info`` is 0 when converged, the number of iterations when the limit was reached
        without convergence (or the solve diverged or stagnated), -1 on a breakdown or an
        indefinite matrix or preconditioner (CG). ``callback(residual_norm)`` is called after
        every iteration with the recurrence's residual norm (SciPy's ``callback_type="pr_norm"``;
        the iterate itself is not passed, since that would cost a copy from the device per
        iteration); an exception it raises stops the solve and is re-raised. Ctrl-C stops a
        solve between iterations with ``KeyboardInterrupt`` (on a GPU in device-resident mode at
        the solve's end: pass ``execution="synchronous"`` to stop between iterations there
        too).
        """
        on_device = _cuda_interface(b) is not None
        if on_device and not _is_cupy(b) and not self._on_cuda:
            raise TypeError(
                f"b is an array in CUDA memory ({type(b).__name__}) and the solver runs on "
                f"{self._backend}: set the solver up with backend='cuda', or pass a host array"
            )
        if self._on_cuda and on_device:
            outcome, x = self._solve_on_device(b, x0, callback)
            copies = 0
            b_cupy = True
        else:
            bv, b_cupy = _as_vector(b, self._n, self._dtype, "b")
            x0v = None
            if x0 is not None:
                x0v, _ = _as_vector(x0, self._n, self._dtype, "x0")
            x = np.empty(self._n, dtype=self._dtype)
            try:
                outcome = self._solver.solve(
                    _address(bv),
                    0 if x0v is None else _address(x0v),
                    _address(x),
                    callback,
                )
            except _pipekrylov.RustError as e:
                raise translate(e) from None
            # Vectors moved between host and device for this solve: b (and x0) up, x down
            # on a GPU backend; CuPy vectors on a host backend came down and x goes back up.
            copies = (2 + (x0 is not None)) if (self._on_gpu or b_cupy) else 0
        info = _info(*outcome)
        if (b_cupy or self._from_cupy) and isinstance(x, np.ndarray):
            import cupy

            x = cupy.asarray(x)
        if not report:
            return x, info
        raw = json.loads(self._solver.last_report_json())
        raw["vector_copies"] = copies
        return x, info, self._report(raw, info)

    def solve_many(self, B: Any, *, report: bool = False):
        """Solve A X = B for the k columns of B (an n x k array; NumPy, or anything
        ``numpy.asarray`` takes; a CuPy array is copied to the host) from zero. Returns
        ``(X, infos)``, X an n x k array of the solver's dtype and ``infos`` the k SciPy
        ``info`` values, or ``(X, infos, reports)`` with ``report=True``.

        CG and BiCGStab run the columns together: each product reads the matrix once for up to
        8 columns (a CSR matrix) and each column stops on its own test (the classical
        recurrences, whatever ``variant``); GMRES does so with ``variant="classical"`` (its
        restart cycles in lockstep) and solves the columns one after another otherwise (faster).
        Ctrl-C is looked for when the call returns; there is no callback.
        """
        from_cupy = False
        if _is_cupy(B) and hasattr(B, "get"):
            B, from_cupy = B.get(), True
        a = np.asarray(B)
        if np.issubdtype(a.dtype, np.complexfloating):
            raise TypeError(f"B: complex values are not supported (dtype {a.dtype})")
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise TypeError(f"B: expected real numbers, got dtype {a.dtype}")
        if a.ndim == 1:
            a = a.reshape(-1, 1)
        if a.ndim != 2 or a.shape[0] != self._n:
            raise ValueError(f"B has shape {a.shape}; expected ({self._n}, k)")
        k = a.shape[1]
        b = np.asfortranarray(a, dtype=self._dtype)
        x = np.empty((self._n, k), dtype=self._dtype, order="F")
        try:
            outcomes = self._solver.solve_many(_address(b), k, _address(x))
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        infos = [_info(*o) for o in outcomes]
        if from_cupy or self._from_cupy:
            import cupy

            x = cupy.asarray(x)
        if not report:
            return x, infos
        reports = []
        for j, info in enumerate(infos):
            raw = json.loads(self._solver.last_column_report_json(j))
            raw["vector_copies"] = 2 if self._on_gpu else 0
            reports.append(self._report(raw, info))
        return x, infos, reports

    def _solve_on_device(self, b, x0, callback):
        """b (and x0) CuPy arrays, the solver on CUDA: solved in place on the device, x a new
        CuPy array; nothing passes through the host. Other arrays in CUDA memory (PyTorch,
        Numba, JAX: ``__cuda_array_interface__``) go to :meth:`_solve_on_device_interface`."""
        if not _is_cupy(b):
            return self._solve_on_device_interface(b, x0, callback)
        import cupy

        if b.dtype == self._dtype and b.shape == (self._n,) and b.flags.c_contiguous:
            bd = b  # the common case, used in place
        else:
            if b.shape not in ((self._n,), (self._n, 1)):
                raise ValueError(f"b has shape {b.shape}; the matrix has {self._n} rows")
            if cupy.iscomplexobj(b):
                raise TypeError(f"b: complex vectors are not supported (dtype {b.dtype})")
            bd = cupy.ascontiguousarray(b.reshape(self._n), dtype=self._dtype)
        if x0 is None:
            x = cupy.empty(self._n, dtype=self._dtype)  # zeroed by the library's stream
        else:
            if tuple(x0.shape) not in ((self._n,), (self._n, 1)):
                raise ValueError(f"x0 has shape {x0.shape}; the matrix has {self._n} rows")
            x = cupy.array(cupy.asarray(x0).reshape(self._n), dtype=self._dtype, copy=True)
        # The library's stream starts after the caller's work on b and x0 is done.
        cupy.cuda.get_current_stream().synchronize()
        try:
            outcome = self._solver.solve_device(bd.data.ptr, x.data.ptr, callback, x0 is None)
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        return outcome, x

    def _device_address(self, v: Any, name: str) -> int:
        """The address of the CUDA array ``v`` (its ``__cuda_array_interface__``) after checking
        that it holds n contiguous values of the solver's dtype: a ``TypeError`` for another
        dtype, a ``ValueError`` for another shape or a strided array (nothing is converted:
        that would need the array's own library)."""
        cai = _cuda_interface(v)
        if cai is None:
            raise TypeError(f"{name}: expected an array in CUDA memory like b, got {type(v).__name__}")
        shape = tuple(cai.get("shape", ()))
        if shape not in ((self._n,), (self._n, 1)):
            raise ValueError(f"{name} has shape {shape}; the matrix has {self._n} rows")
        if np.dtype(cai.get("typestr", "")) != self._dtype:
            raise TypeError(f"{name} has dtype {np.dtype(cai.get('typestr', ''))}; the solver's is "
                            f"{self._dtype} (convert it with the array's own library)")
        strides = cai.get("strides")
        if strides is not None and self._n > 1 and strides[0] != self._dtype.itemsize:
            raise ValueError(f"{name} is strided (strides {tuple(strides)}): pass a contiguous array")
        return int(cai["data"][0])

    def _solve_on_device_interface(self, b, x0, callback):
        """b (and x0) in CUDA memory through ``__cuda_array_interface__`` (not CuPy): used in
        place; x is a new PyTorch tensor on b's device for a PyTorch b, else a new CuPy array.
        The caller's work on b and x0 is waited for (PyTorch: ``torch.cuda.synchronize``;
        otherwise the device is synchronized through CuPy). Nothing passes through the host."""
        b_address = self._device_address(b, "b")
        x0_address = None if x0 is None else self._device_address(x0, "x0")
        if _is_torch(b):
            import torch

            x = torch.empty(self._n, dtype=b.dtype, device=b.device)
            if x0 is not None:
                x.copy_(x0.reshape(self._n))
            torch.cuda.synchronize(b.device)
        else:
            try:
                import cupy
            except ImportError:
                raise TypeError(
                    f"b ({type(b).__name__}) is in CUDA memory; its result array is made with "
                    "CuPy, which is not installed (PyTorch and CuPy arrays need nothing more)"
                ) from None
            x = cupy.empty(self._n, dtype=self._dtype)
            if x0 is not None:
                cupy.cuda.runtime.deviceSynchronize()
                cupy.cuda.runtime.memcpy(x.data.ptr, x0_address,
                                         self._n * self._dtype.itemsize,
                                         cupy.cuda.runtime.memcpyDeviceToDevice)
            cupy.cuda.runtime.deviceSynchronize()
        try:
            x_address = x.data_ptr() if _is_torch(x) else x.data.ptr
            outcome = self._solver.solve_device(b_address, x_address, callback, x0 is None)
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        return outcome, x

    def _report(self, raw: dict, info: int) -> Report:
        iterations = int(raw["iterations"])
        return Report(
            method=self._method,
            converged=bool(raw["converged"]),
            info=info,
            stop_reason=str(raw["stop"]),
            iterations=iterations,
            residual_norm=float(raw["true_residual"]),
            relative_residual=float(raw["relative_true_residual"]),
            residual_history=np.asarray(raw["residual_history"], dtype=np.float64),
            setup_seconds=float(raw["setup_seconds"]),
            solve_seconds=float(raw["solve_seconds"]),
            seconds_per_iteration=float(raw["loop_seconds"]) / max(iterations, 1),
            backend=str(raw["backend"]),
            precond=self._precond,
            dtype=str(self._dtype),
            variant=str(raw["variant"]).lower(),
            execution=str(raw["execution"]),
            vector_copies=int(raw["vector_copies"]),
            rust_setup_seconds=float(self._solver.rust_setup_seconds),
            rust_solve_seconds=float(raw["rust_solve_seconds"]),
            notes=list(raw.get("notes", [])) + list(raw.get("backend_notes", [])),
            accuracy_warning=raw.get("accuracy_warning"),
        )

    def __repr__(self) -> str:
        return (
            f"Solver(n={self._n}, method={self._method!r}, precond={self._precond!r}, "
            f"dtype={self._dtype}, backend={self.backend!r})"
        )


_pipekrylov.register_plain(_SCIPY_CSR, np.empty)


def _one_call(method: str, A, b, x0, rtol, atol, maxiter, M, callback, report, options):
    if M is None and not report and type(b) is np.ndarray:
        # The plain call (SciPy's canonical CSR, NumPy vectors of its dtype): read, checked,
        # set up, solved and dropped in one call into the library, which answers None for
        # anything else (then converted or rejected below).
        try:
            plain = _pipekrylov.solve_plain(
                method, A, b, x0, rtol, atol, maxiter, options, callback
            )
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        if plain is not None:
            return plain
    if M is not None:
        raise TypeError(
            "M: a preconditioner given as a matrix or LinearOperator is not supported; name one "
            "of the library's instead, e.g. precond='jacobi', 'bilu0' or 'amg'"
        )
    precond = options.pop("precond", None)
    backend = options.pop("backend", "auto")
    if backend == "auto" and _cuda_interface(b) is not None:
        backend = "cuda"  # b is in CUDA memory: solve there, without copies
    if not report and type(b) is np.ndarray and not _is_cupy(A):
        # The plain call on host arrays: set up, solved and dropped in one call into the
        # library (the Solver's steps, without its Python object in between).
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        csr, _ = _as_csr(A)
        n = csr.shape[0]
        restart = options.pop("restart", 20)
        opts = _options(n, method, precond, backend, rtol, atol, maxiter, restart, options)
        raw, _arrays = _raw_csr(csr)
        dtype = np.dtype(csr.dtype)
        bv, _ = _as_vector(b, n, dtype, "b")
        x0v = None if x0 is None else _as_vector(x0, n, dtype, "x0")[0]
        x = np.empty(n, dtype=dtype)
        try:
            outcome = _pipekrylov.solve_once(
                *raw, _address(bv), 0 if x0v is None else _address(x0v), _address(x), opts,
                callback,
            )
        except _pipekrylov.RustError as e:
            raise translate(e) from None
        return x, _info(*outcome)
    solver = Solver(
        A, method, precond, backend, rtol=rtol, atol=atol, maxiter=maxiter, **options
    )
    return solver.solve(b, x0, callback=callback, report=report)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
       report=False, **options):
    """Solve A x = b with (pipelined) conjugate gradients, A symmetric positive definite.

    The shape of ``scipy.sparse.linalg.cg``: returns ``(x, info)`` (``(x, info, report)`` with
    ``report=True``). Stops when ||b - A x|| <= max(rtol ||b||, atol) on the recurrence's
    residual (the report holds the true one); ``maxiter`` counts iterations (default 10 n).
    Extra keyword options: ``precond=`` a preconditioner's name, ``backend=``, ``variant=``,
    ``execution=`` and the rest listed by :class:`Solver`. ``M`` (a SciPy LinearOperator) is
    not supported: name a preconditioner instead. ``A``'s arrays are read in place with the
    GIL released (as :class:`Solver` says): no other thread may change them during the call.
    """
    return _one_call("cg", A, b, x0, rtol, atol, maxiter, M, callback, report, options)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
             report=False, **options):
    """Solve A x = b with (pipelined) BiCGStab: the shape of ``scipy.sparse.linalg.bicgstab``
    (see :func:`cg` for the return value and the options)."""
    return _one_call("bicgstab", A, b, x0, rtol, atol, maxiter, M, callback, report, options)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          callback=None, report=False, **options):
    """Solve A x = b with (pipelined) GMRES(restart): the shape of
    ``scipy.sparse.linalg.gmres`` (``restart`` default 20 as there; ``maxiter`` counts restart
    cycles as there, default 10 n Krylov steps in all). See :func:`cg` for the rest."""
    restart = 20 if restart is None else int(restart)
    steps = None if maxiter is None else int(maxiter) * restart
    options["restart"] = restart
    return _one_call("gmres", A, b, x0, rtol, atol, steps, M, callback, report, options)
