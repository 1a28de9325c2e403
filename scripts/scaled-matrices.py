#!/usr/bin/env python3
"""Badly scaled test matrices for the GMRES robustness tests, and their SciPy references.

Writes tests/data/cd12_rows1e3.mtx, cd12_rows1e4.mtx and cd12_cols1e9.mtx: a 3D
convection-diffusion matrix on a 12^3 grid (7-point, upwind convection b = (100, 50, 25),
scaled by h^2; n = 1728) with its rows scaled by 10^(-3 u) and 10^(-4 u), or its columns by
10^(-9 u), u uniform in [0, 1) (NumPy default_rng seeds 1, 1 and 3). Prints the iterations
SciPy's GMRES(30) (Arnoldi, right-hand side of ones, relative residual 1e-8) needs on each;
for the column-scaled one on A M^-1 with the Jacobi M = diag(A) (right preconditioning undoes
a column scaling). Needs numpy and scipy; run from the repository root.
"""
import numpy as np
import scipy.io as sio
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def convdiff(k, b=(100.0, 50.0, 25.0)):
    h = 1.0 / (k + 1)
    rows, cols, vals = [], [], []

    def idx(x, y, z):
        return x + k * (y + k * z)

    for z in range(k):
        for y in range(k):
            for x in range(k):
                i = idx(x, y, z)
                rows.append(i)
                cols.append(i)
                vals.append(6.0 + h * sum(b))
                for d, (dx, dy, dz) in enumerate([(1, 0, 0), (0, 1, 0), (0, 0, 1)]):
                    for sgn in (-1, 1):
                        xx, yy, zz = x + sgn * dx, y + sgn * dy, z + sgn * dz
                        if 0 <= xx < k and 0 <= yy < k and 0 <= zz < k:
                            rows.append(i)
                            cols.append(idx(xx, yy, zz))
                            vals.append(-1.0 - (h * b[d] if sgn == -1 else 0.0))
    n = k ** 3
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def scipy_gmres_iterations(a, tol=1e-8, maxit=6000):
    b = np.ones(a.shape[0])
    count = [0]

    def cb(_):
        count[0] += 1

    x, info = spla.gmres(a, b, rtol=tol, atol=0, restart=30, maxiter=maxit // 30 + 1,
                         callback=cb, callback_type="pr_norm")
    return count[0], np.linalg.norm(b - a @ x) / np.linalg.norm(b), info


a = convdiff(12)
n = a.shape[0]
cases = {
    "cd12_rows1e3": (sp.diags(10.0 ** (-3 * np.random.default_rng(1).random(n))) @ a, False),
    "cd12_rows1e4": (sp.diags(10.0 ** (-4 * np.random.default_rng(1).random(n))) @ a, False),
}
r3 = np.random.default_rng(3)
r3.random(n)  # the row scales of the exploration this seed was first used for
cases["cd12_cols1e9"] = (a @ sp.diags(10.0 ** (-9 * r3.random(n))), True)
for name, (m, jacobi) in cases.items():
    m = m.tocsr()
    sio.mmwrite(f"tests/data/{name}.mtx", m)
    op = (m @ sp.diags(1.0 / m.diagonal())).tocsr() if jacobi else m
    its, rel, info = scipy_gmres_iterations(op)
    print(f"{name}: SciPy GMRES(30){' with Jacobi' if jacobi else ''}: {its} iterations, "
          f"true relative residual {rel:.2e} (info {info})")
