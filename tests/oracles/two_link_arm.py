"""The planar two-link arm of ``examples/two_link_control`` steered along a circle:
its inverse kinematics in closed form and its inverse dynamics by Lagrange's equations
(``sympy.physics.mechanics.LagrangesMethod``), written independently of kidym; and the
closed-form solution of the perturbation law (5.5) of seed 004, ``ÿ = h y + k ẏ``.

The arm: links ``l1``, ``l2`` (uniform rods of masses ``m1``, ``m2``) turning about
``z``, the second by the relative angle ``q2``; gravity ``g`` along −y; joint torques
``u1`` (shoulder, on ``q1``) and ``u2`` (elbow, on ``q2``), which are the generalized
forces of ``q1``, ``q2``. The path: the end effector on ``x = a + r cos Wt``,
``y = b + r sin Wt``, elbow up (``q2 = +acos(…)``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy.physics import mechanics as me


class ArmBodies:
    """The arm's two uniform rods in SymPy mechanics, gravity along −y of ``N``: frames
    ``A`` (link 1, angle ``q[0]``) and ``B`` (link 2, ``q[1]`` relative to ``A``), the
    shoulder ``O`` (fixed), the elbow ``J``, the bodies with their potential energies."""

    def __init__(self, q, l1, l2, m1, m2, g) -> None:
        self.N = N = me.ReferenceFrame("N")
        self.A = A = N.orientnew("A", "Axis", (q[0], N.z))
        self.B = B = A.orientnew("B", "Axis", (q[1], A.z))
        self.O = O = me.Point("O")
        O.set_vel(N, 0)
        C1 = O.locatenew("C1", l1 / 2 * A.x)
        self.J = J = O.locatenew("J", l1 * A.x)
        C2 = J.locatenew("C2", l2 / 2 * B.x)
        C1.v2pt_theory(O, N, A)
        J.v2pt_theory(O, N, A)
        C2.v2pt_theory(J, N, B)
        self.link1 = me.RigidBody("L1", C1, A, m1,
                                  (me.inertia(A, 0, 0, m1 * l1 ** 2 / 12), C1))
        self.link2 = me.RigidBody("L2", C2, B, m2,
                                  (me.inertia(B, 0, 0, m2 * l2 ** 2 / 12), C2))
        self.link1.potential_energy = m1 * g * C1.pos_from(O).dot(N.y)
        self.link2.potential_energy = m2 * g * C2.pos_from(O).dot(N.y)


class ArmOracle:
    """Closed-form inverse kinematics of the circle and Lagrange's inverse dynamics."""

    def __init__(self, values: dict[str, float]) -> None:
        V = values
        t = sp.symbols("t")
        l1, l2, m1, m2, g, a, b, r, W = (sp.Float(V[k]) for k in
                                         ("l1", "l2", "m1", "m2", "g", "a", "b", "r", "W"))
        x = a + r * sp.cos(W * t)
        y = b + r * sp.sin(W * t)
        c2 = (x ** 2 + y ** 2 - l1 ** 2 - l2 ** 2) / (2 * l1 * l2)
        q2 = sp.acos(c2)                      # elbow up, as the example starts
        q1 = sp.atan2(y, x) - sp.atan2(l2 * sp.sin(q2), l1 + l2 * sp.cos(q2))
        path = [q1, q2]
        self.q = sp.lambdify(t, path, "numpy")
        self.qd = sp.lambdify(t, [sp.diff(e, t) for e in path], "numpy")
        qdd = [sp.diff(e, t, 2) for e in path]
        # Lagrange's equations of the arm, written independently of kidym
        Q = me.dynamicsymbols("Q1 Q2")
        arm = ArmBodies(Q, l1, l2, m1, m2, g)
        lm = me.LagrangesMethod(me.Lagrangian(arm.N, arm.link1, arm.link2), Q)
        lhs = lm.form_lagranges_equations()   # = the generalized forces (u1, u2)
        qd_s = [sp.diff(e, sp.Symbol("t")) for e in Q]
        qdd_s = [sp.diff(e, sp.Symbol("t"), 2) for e in Q]
        sub = {**dict(zip(qdd_s, qdd)), **dict(zip(qd_s, [sp.diff(e, t) for e in path])),
               **dict(zip(Q, path))}
        self.torque = sp.lambdify(t, [e.xreplace(sub) for e in lhs], "numpy")

    def state(self, t: np.ndarray) -> np.ndarray:
        """``[q1, q2, q1', q2']`` on the path, shape (4, n_t)."""
        return np.vstack([np.asarray(self.q(t), float), np.asarray(self.qd(t), float)])

    def torques(self, t: np.ndarray) -> np.ndarray:
        """The joint torques of the path, shape (2, n_t)."""
        return np.asarray(self.torque(t), float)


def deviation(h: float, k: float, y0: float, z0: float, t: np.ndarray) -> np.ndarray:
    """The solution of ``ÿ = h y + k ẏ``, ``y(0) = y0``, ``ẏ(0) = z0`` in closed form."""
    disc = k * k + 4 * h
    if abs(disc) < 1e-12:                 # a double root k/2
        s = k / 2
        return (y0 + (z0 - s * y0) * t) * np.exp(s * t)
    if disc < 0:                          # complex roots k/2 ± iω
        s, w = k / 2, np.sqrt(-disc) / 2
        return np.exp(s * t) * (y0 * np.cos(w * t) + (z0 - s * y0) / w * np.sin(w * t))
    s1, s2 = (k + np.sqrt(disc)) / 2, (k - np.sqrt(disc)) / 2
    c2 = (z0 - s1 * y0) / (s2 - s1)
    return (y0 - c2) * np.exp(s1 * t) + c2 * np.exp(s2 * t)
