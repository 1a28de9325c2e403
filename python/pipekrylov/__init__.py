"""pipekrylov: pipelined Krylov solvers (CG, BiCGStab, GMRES) with GPU preconditioners
(Jacobi, block-Jacobi, BILU(0), ISAI, Incomplete Poisson, FSAI, algebraic multigrid) on CUDA,
OpenCL and the host, called the way SciPy's solvers are::

    import pipekrylov, scipy.sparse as sp, numpy as np
    A = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(1000, 1000), format="csr")
    x, info = pipekrylov.cg(A, np.ones(1000), rtol=1e-10, precond="jacobi")

See :func:`cg`, :func:`bicgstab`, :func:`gmres`, :class:`Solver` (set up once, solve many
times), :class:`Report` and :func:`backends`. Errors are :class:`SolverError` subclasses with
the library's message.
"""

from ._core import Report, Solver, backends, bicgstab, cg, gmres
from ._errors import (
    BackendError,
    InvalidInputError,
    OutOfMemoryError,
    PreconditionerError,
    SolverError,
)
from ._pipekrylov import __version__, option_names

__all__ = [
    "BackendError",
    "InvalidInputError",
    "OutOfMemoryError",
    "PreconditionerError",
    "Report",
    "Solver",
    "SolverError",
    "__version__",
    "backends",
    "bicgstab",
    "cg",
    "gmres",
    "option_names",
]
