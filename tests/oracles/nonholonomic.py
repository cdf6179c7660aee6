"""Reference non-holonomic systems built with SymPy's ``KanesMethod``.

Independent of kidym (nothing is imported from it): each system is rebuilt from
reference frames and points, with the rolling / knife-edge conditions given as
velocity constraints and the dependent speeds as ``u_dependent``. Every speed is
``u_i = q̇_i``; ``evaluate`` returns ``q̇`` and ``u̇`` of all speeds at a state given by
the coordinates and the *independent* speeds (the dependent ones follow from the
constraints), by solving ``mass_matrix_full · [q̇, u̇] = forcing_full`` numerically.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.physics.mechanics import (
    KanesMethod,
    Point,
    ReferenceFrame,
    RigidBody,
    dynamicsymbols,
    inertia,
)

__all__ = ["NonholonomicOracle", "chaplygin_sleigh", "rolling_disc"]


def _name(s) -> str:
    """``x(t)`` → ``x``; plain symbols unchanged."""
    return str(s.func) if hasattr(s, "func") and s.args else str(s)


@dataclass(frozen=True)
class NonholonomicOracle:
    """``mass_matrix_full [q̇; u̇] = forcing_full`` of a ``KanesMethod`` system."""

    q: list
    u_ind: list
    u_dep: list
    params: list
    mass_full: object
    forcing_full: object
    dependent: object  # u_dep as functions of (q, u_ind, params)

    def evaluate(self, q: dict[str, float], u_ind: dict[str, float],
                 params: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
        """``(q̇, u̇)`` by coordinate name at one state."""
        qv = [q[_name(s)] for s in self.q]
        uv = [u_ind[_name(s)] for s in self.u_ind]
        pv = [params[_name(s)] for s in self.params]
        ud = list(np.atleast_1d(np.asarray(self.dependent(*qv, *uv, *pv), float).ravel()))
        args = [*qv, *uv, *ud, *pv]
        M = np.asarray(self.mass_full(*args), float)
        F = np.asarray(self.forcing_full(*args), float).ravel()
        x = np.linalg.solve(M, F)
        n = len(self.q)
        qdot = {_name(s): x[i] for i, s in enumerate(self.q)}
        speeds = [*self.u_ind, *self.u_dep]
        udot = {_name(s): x[n + i] for i, s in enumerate(speeds)}
        return qdot, udot


def _finish(N, q, u_ind, u_dep, kd, constraints, bodies, loads, params) -> NonholonomicOracle:
    km = KanesMethod(N, q_ind=q, u_ind=u_ind, u_dependent=u_dep, kd_eqs=kd,
                     velocity_constraints=constraints)
    km.kanes_equations(bodies, loads)
    t = dynamicsymbols._t
    plain = {s: sp.Symbol(str(s.func)) for s in [*q, *u_ind, *u_dep]}
    args = [plain[s] for s in [*q, *u_ind, *u_dep]] + list(params)
    sol = sp.solve([c.subs(plain) for c in constraints], [plain[s] for s in u_dep], dict=True)[0]
    dep = sp.lambdify([plain[s] for s in [*q, *u_ind]] + list(params),
                      [sol[plain[s]] for s in u_dep])

    def lam(expr):
        return sp.lambdify(args, sp.Matrix(expr).subs(plain).subs(t, 0))

    return NonholonomicOracle(q=q, u_ind=u_ind, u_dep=u_dep, params=list(params),
                              mass_full=lam(km.mass_matrix_full),
                              forcing_full=lam(km.forcing_full), dependent=dep)


def rolling_disc() -> NonholonomicOracle:
    """Thin disc (radius ``r``, mass ``m``) rolling on the plane ``z = 0``, gravity ``−g z``.

    ``q = (x, y, psi, theta, phi)``: contact point, heading about ``N.z``, lean about
    the heading frame's x axis, spin about the disc axis (lean frame's y axis).
    """
    x, y, psi, theta, phi = dynamicsymbols("x y psi theta phi")
    ux, uy, upsi, uth, uphi = dynamicsymbols("x't y't psi't theta't phi't")
    m, r, g = sp.symbols("m r g")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [psi, N.z])
    B = A.orientnew("B", "Axis", [theta, A.x])
    C = B.orientnew("C", "Axis", [phi, B.y])
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)          # geometric contact point
    D = P.locatenew("D", r * B.z)                     # disc centre
    q = [x, y, psi, theta, phi]
    u = [ux, uy, upsi, uth, uphi]
    kd = [qi.diff() - ui for qi, ui in zip(q, u)]
    subs = {qi.diff(): ui for qi, ui in zip(q, u)}
    C.set_ang_vel(N, C.ang_vel_in(N).subs(subs))
    D.set_vel(N, D.pos_from(O).dt(N).subs(subs))
    # material point of the disc at the contact: velocity zero (rolling)
    contact = D.vel(N) + C.ang_vel_in(N).cross(-r * B.z)
    constraints = [contact.dot(N.x), contact.dot(N.y)]
    disc = RigidBody("disc", D, C, m,
                     (inertia(C, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D))
    loads = [(D, -m * g * N.z)]
    return _finish(N, q, [upsi, uth, uphi], [ux, uy], kd, constraints, [disc], loads,
                   [m, r, g])


def chaplygin_sleigh() -> NonholonomicOracle:
    """Chaplygin sleigh: knife edge at ``(x, y)``, heading ``theta``, centre ``b`` ahead.

    ``J`` is the central moment about the vertical; no forces.
    """
    x, y, theta = dynamicsymbols("x y theta")
    ux, uy, uth = dynamicsymbols("x't y't theta't")
    m, b, J = sp.symbols("m b J")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [theta, N.z])
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    G = P.locatenew("G", b * A.x)
    q, u = [x, y, theta], [ux, uy, uth]
    kd = [qi.diff() - ui for qi, ui in zip(q, u)]
    subs = {qi.diff(): ui for qi, ui in zip(q, u)}
    A.set_ang_vel(N, uth * N.z)
    P.set_vel(N, ux * N.x + uy * N.y)
    G.set_vel(N, G.pos_from(O).dt(N).subs(subs))
    constraints = [P.vel(N).dot(A.y)]                 # no sideways slip of the blade
    sleigh = RigidBody("sleigh", G, A, m, (inertia(A, J, J, J), G))
    return _finish(N, q, [ux, uth], [uy], kd, constraints, [sleigh], [], [m, b, J])
