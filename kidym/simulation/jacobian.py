"""The analytic Jacobian ``∂ẏ/∂y`` of the Cauchy right-hand side, for stiff methods.

``ẏ = [q̇(q, w, t); ẇ]`` with ``ẇ`` (and, with constraints, ``λ``) the solution ``x`` of
``A(y) x = b(y)``: ``A = M``, ``b = F``, or ``A = [M −Gᵀ; G 0]``,
``b = [F; γ − 2α c − β² Φ]``. Its derivative by a state ``y_k`` is
``∂x/∂y_k = A⁻¹ (∂b/∂y_k − ∂A/∂y_k · x)``, and the partial derivatives of ``q̇``,
``M``, ``F`` and the constraint block by every state are formed over the named
quantities by the chain rule (:meth:`kidym.symbolic.graph.Graph.diff`: each ``X'y_k``
is a named quantity, memoised) — nothing is differentiated numerically. The numbers
come from one generated function (:func:`kidym.simulation.numpy_engine.generate_python`
with the derivatives as its outputs) and one LU factorisation of ``A`` per call.

With controls held by programmed constraints (``M ẇ = F⁰ + H u``, ``Γ u = r``) the
rows of ``ẇ`` are those of the closed loop, the solve for ``u`` differentiated too
(:func:`kidym.analysis.linearize.closed_loop_point`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kidym.eom.constraints import Stabilization
from kidym.eom.equations import Equations
from kidym.simulation.numpy_engine import generate_python


@dataclass(frozen=True)
class JacobianFunction:
    """``J(t, y, p)`` of one model (see the module docstring)."""

    equations: Equations
    function: object
    n_forcing: int

    @classmethod
    def build(cls, eq: Equations) -> JacobianFunction:
        """Form the partial derivatives of ``q̇``, ``M`` (upper) and ``F`` (extended) by
        every state, over named quantities, and generate their evaluation."""
        n_w = eq.n_w
        upper = [eq.mass_matrix_named[i][j] for i in range(n_w) for j in range(i, n_w)]
        forcing = eq.forcing_extended
        roots = [*eq.qdot, *upper, *forcing]
        outputs = {}
        for k, s in enumerate((*eq.coordinates, *eq.speeds)):
            for i, e in enumerate(roots):
                outputs[f"d{i}/d{k}"] = eq.graph.diff(e, s)
        fn = generate_python(eq, outputs)
        return cls(eq, fn.function, len(forcing))

    def __call__(self, t: float, y: np.ndarray, p: np.ndarray,
                 stab: Stabilization | None = None) -> np.ndarray:
        """``∂ẏ/∂y`` at one state, shape (n_y, n_y)."""
        eq = self.equations
        n_q, n_w, m = eq.n_q, eq.n_w, eq.m
        n_y = n_q + n_w
        _qdot, M, F, out = self.function(float(t), np.asarray(y, float).tolist(), p.tolist())
        M = np.asarray(M, float)
        F = np.asarray(F, float)
        n_up = n_w * (n_w + 1) // 2
        per = n_q + n_up + self.n_forcing
        d = np.asarray(out, float).reshape(n_y, per)
        iu = np.triu_indices(n_w)
        dM = np.zeros((n_y, n_w, n_w))
        dM[:, iu[0], iu[1]] = d[:, n_q:n_q + n_up]
        dM[:, iu[1], iu[0]] = d[:, n_q:n_q + n_up]
        dF = d[:, n_q + n_up:]
        J = np.empty((n_y, n_y))
        J[:n_q, :] = d[:, :n_q].T
        if eq.controls is not None:
            # the closed loop: the controls' solve Γ u = r differentiated exactly, by
            # the linearisation's routine
            from kidym.analysis.derivatives import Point
            from kidym.analysis.linearize import closed_loop_point

            pt = Point(np.asarray(_qdot, float), M, F, d[:, :n_q], dM, dF)
            J[n_q:, :] = closed_loop_point(eq, pt)[2][:n_w, :]
            return J
        a, b2 = (stab or Stabilization()).coefficients
        if m == 0:
            A, dA = M, dM
            rhs = F[:n_w]
            db = dF[:, :n_w]
        else:
            gam, phi, c = F[n_w:n_w + m], F[n_w + m:n_w + 2 * m], F[n_w + 2 * m:n_w + 3 * m]
            G = F[n_w + 3 * m:].reshape(m, n_w)
            A = np.block([[M, -G.T], [G, np.zeros((m, m))]])
            rhs = np.concatenate([F[:n_w], gam - a * c - b2 * phi])
            dG = dF[:, n_w + 3 * m:].reshape(n_y, m, n_w)
            dA = np.zeros((n_y, n_w + m, n_w + m))
            dA[:, :n_w, :n_w] = dM
            dA[:, :n_w, n_w:] = -np.transpose(dG, (0, 2, 1))
            dA[:, n_w:, :n_w] = dG
            db = np.concatenate([dF[:, :n_w], dF[:, n_w:n_w + m] - a * dF[:, n_w + 2 * m:
                                 n_w + 3 * m] - b2 * dF[:, n_w + m:n_w + 2 * m]], axis=1)
        from scipy import linalg  # (loaded by the runs that need it)

        lu = linalg.lu_factor(A)
        x = linalg.lu_solve(lu, rhs)
        cols = db - np.einsum("kij,j->ki", dA, x)          # (n_y, n_w + m)
        dx = linalg.lu_solve(lu, cols.T)                     # (n_w + m, n_y)
        J[n_q:, :] = dx[:n_w, :]
        return J


#: An explicit run this long is checked for stiffness (the Jacobian costs little then).
STIFF_CHECK_ABOVE = 20_000


def stiffness(J: np.ndarray) -> float:
    """The spectral radius of ``J`` (largest eigenvalue magnitude) [1/s]."""
    if not J.size or not np.all(np.isfinite(J)):
        return float("nan")
    return float(np.abs(np.linalg.eigvals(J)).max())
