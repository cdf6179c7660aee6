"""Principal central axes by the cyclic Jacobi rotation method (seed 003, eq. (5)).

A constant orthonormal matrix ``V`` (det = +1) with ``Vᵀ J V = I = diag(I1, I2, I3)``
turns a body's central frame into its principal central frame; the seed's
equations (5) then use ``Vᵀ W̃_M`` and the diagonal tensor.
"""

from __future__ import annotations

import numpy as np


def jacobi_eigen(tensor: np.ndarray, *, tol: float = 1e-15,
                 max_sweeps: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Diagonalise a symmetric 3×3 matrix by cyclic Jacobi rotations.

    Parameters
    ----------
    tensor : ndarray, shape (3, 3)
        Symmetric matrix (an inertia tensor).
    tol : float
        Stop when the off-diagonal norm is below ``tol`` times the matrix norm.
    max_sweeps : int
        Upper bound on sweeps over the three off-diagonal pairs.

    Returns
    -------
    moments : ndarray, shape (3,)
        Eigenvalues (principal moments), in the order of the columns of ``V``.
    V : ndarray, shape (3, 3)
        Orthonormal eigenvectors as columns, right-handed (``det V = +1``), so that
        ``V.T @ tensor @ V == diag(moments)``.

    Raises
    ------
    ValueError
        If ``tensor`` is not a finite symmetric 3×3 matrix.
    """
    a = np.array(tensor, dtype=float)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)) or not np.allclose(a, a.T):
        raise ValueError(f"inertia tensor must be a finite symmetric 3x3 matrix, got {a!r}")
    v = np.eye(3)
    scale = np.linalg.norm(a) or 1.0
    for _ in range(max_sweeps):
        off = np.sqrt(a[0, 1] ** 2 + a[0, 2] ** 2 + a[1, 2] ** 2)
        if off <= tol * scale:
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if a[p, q] == 0.0:
                continue
            theta = (a[q, q] - a[p, p]) / (2.0 * a[p, q])
            t = np.sign(theta) / (abs(theta) + np.sqrt(theta * theta + 1.0)) if theta else 1.0
            c = 1.0 / np.sqrt(t * t + 1.0)
            s = t * c
            rot = np.eye(3)
            rot[p, p] = rot[q, q] = c
            rot[p, q], rot[q, p] = s, -s
            a = rot.T @ a @ rot
            v = v @ rot
    if np.linalg.det(v) < 0:
        v[:, 2] = -v[:, 2]
    return np.diag(a).copy(), v
