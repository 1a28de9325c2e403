"""The package's exceptions: every error of the Rust library arrives as one of these, with the
library's message."""

from __future__ import annotations


class SolverError(Exception):
    """Base class of every error the pipekrylov library reports."""


class InvalidInputError(SolverError, ValueError):
    """Bad input: sizes that disagree, NaN/Inf, an invalid matrix, a bad option value."""


class PreconditionerError(SolverError, ValueError):
    """The preconditioner cannot be built for this matrix (a zero pivot, a matrix outside its
    domain, a setup failure)."""


class BackendError(SolverError, RuntimeError):
    """The backend failed: not available, driver or kernel build errors, device faults,
    unsupported combinations."""


class OutOfMemoryError(SolverError, MemoryError):
    """An allocation on the host or the device failed."""


_CLASSES = {
    c.__name__: c
    for c in (InvalidInputError, PreconditionerError, BackendError, OutOfMemoryError)
}


def translate(error: BaseException) -> BaseException:
    """The package exception for an extension ``RustError(class_name, message)``."""
    name, message = error.args
    return _CLASSES.get(name, SolverError)(message)
