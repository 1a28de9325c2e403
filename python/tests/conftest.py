"""Shared problems and backend discovery for the Python tests."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

import pipekrylov

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data")


def poisson2d(m: int, dtype=np.float64) -> sp.csr_matrix:
    """The 5-point Laplacian on an m x m grid (n = m^2), SPD."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr().astype(dtype)


def convdiff2d(m: int, wind: float = 0.4) -> sp.csr_matrix:
    """A nonsymmetric convection-diffusion operator (upwind-free central differences)."""
    t = sp.diags([-1.0 - wind, 2.0, -1.0 + wind], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr()


def available_backends() -> list[str]:
    """The GPU-free backends this build can run here (host always; OpenCL where a platform,
    PoCL in CI, is present) plus CUDA on a machine with a driver."""
    names = ["host"]
    for b in pipekrylov.backends():
        if b["name"] in ("opencl", "cuda") and b["compiled"] and b["available"]:
            names.append(b["name"])
    return names


@pytest.fixture(params=available_backends())
def backend(request) -> str:
    return request.param
