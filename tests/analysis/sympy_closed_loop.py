"""Closed loops of controls and programmed constraints (seed 004 (5.5)–(5.6)) linearised
with SymPy, independently of kidym: nothing is imported from it.

The mechanics comes from ``sympy.physics.mechanics.LagrangesMethod`` (``M q̈ = F(q, q̇,
t, u)``, the controls entering through loads); the closed loop is the seed's: each
holonomic programmed constraint ``f(q, t)`` obeys ``f̈ = h f + k ḟ``, i.e. ``J q̈ = b``
with ``J = ∂f/∂q`` and ``b = h f + k ḟ − (dJ/dt) q̇ − (∂²f/∂t∂q) q̇ − ∂²f/∂t²``
(written here from ``ḟ = J q̇ + ∂f/∂t`` by SymPy's ``diff``). With as many controls as
constraints, ``[M −H; J 0] [q̈; u] = [F⁰; b]`` is solved as one linear system; with more,
the controls of least norm are found as the solution of an optimisation (minimise
``½|u|²`` subject to the equations of motion and ``J q̈ = b``: its KKT system), not by
(5.6)'s formula ``u = Γᵀ(ΓΓᵀ)⁻¹(…)`` that kidym uses. Either way ``K(x, t) z = R(x,
t)``; ``∂z/∂x = K⁻¹(∂R/∂x − ∂K/∂x z)`` (implicit function theorem) with ``∂K/∂x``,
``∂R/∂x`` SymPy's derivatives of the closed-form entries — nothing differentiated
numerically, and no route shared with kidym's chain rule through the named quantities.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sp
from sympy.physics import mechanics as me

from tests.oracles.two_link_arm import ArmBodies

T = me.dynamicsymbols._t


class ClosedLoop:
    """``A``, ``u`` and ``∂u/∂x`` of a closed loop as functions of ``(x, t)``."""

    def __init__(self, lm: me.LagrangesMethod, q: Sequence, controls: Sequence[sp.Symbol],
                 constraints: Sequence[tuple[sp.Expr, float, float]]) -> None:
        n = len(q)
        lm.form_lagranges_equations()
        Q = sp.symbols(f"Q0:{n}")
        W = sp.symbols(f"W0:{n}")
        plain = {**{qi.diff(T): wi for qi, wi in zip(q, W)}, **dict(zip(q, Q))}
        M = me.msubs(lm.mass_matrix, plain)
        F = me.msubs(lm.forcing, plain)
        u = sp.Matrix(controls)
        H = F.jacobian(u)
        F0 = F.subs({c: 0 for c in controls})
        rows, b = [], []
        for f, h, k in constraints:
            f = me.msubs(f, plain)
            J = sp.Matrix([f]).jacobian(Q)
            fdot = (J * sp.Matrix(W))[0] + sp.diff(f, T)
            # f̈ = J q̈ + (∂ḟ/∂q) q̇ + ∂ḟ/∂t: the part without q̈ moves to the right
            rest = (sp.Matrix([fdot]).jacobian(Q) * sp.Matrix(W))[0] + sp.diff(fdot, T)
            rows.append(J)
            b.append(h * f + k * fdot - rest)
        G = sp.Matrix.vstack(*rows)
        b = sp.Matrix(b)
        r, s = G.shape[0], len(controls)
        Z = sp.zeros
        if r == s:     # [M −H; G 0] [q̈; u] = [F⁰; b]
            K = sp.Matrix.vstack(sp.Matrix.hstack(M, -H), sp.Matrix.hstack(G, Z(r, s)))
            R = sp.Matrix.vstack(F0, b)
        else:
            # least norm as an optimisation: min ½|u|² with M q̈ = F⁰ + H u, G q̈ = b;
            # stationarity u = Hᵀμ, M μ + Gᵀν = 0 (unknowns q̈, u, μ, ν)
            K = sp.Matrix.vstack(
                sp.Matrix.hstack(M, -H, Z(n, n), Z(n, r)),
                sp.Matrix.hstack(G, Z(r, s), Z(r, n), Z(r, r)),
                sp.Matrix.hstack(Z(s, n), sp.eye(s), -H.T, Z(s, r)),
                sp.Matrix.hstack(Z(n, n), Z(n, s), M, G.T))
            R = sp.Matrix.vstack(F0, b, Z(s + n, 1))
        x = sp.Matrix([*Q, *W])
        self.n, self.s = n, s
        # z = K⁻¹R and, by the implicit function theorem, ∂z/∂x = K⁻¹(∂R/∂x − ∂K/∂x z)
        # with ∂K/∂x, ∂R/∂x SymPy's derivatives of the closed-form entries
        self._K = sp.lambdify((x, T), K, "numpy")
        self._R = sp.lambdify((x, T), R, "numpy")
        self._dK = sp.lambdify((x, T), [K.diff(v) for v in x], "numpy")
        self._dR = sp.lambdify((x, T), R.jacobian(x), "numpy")

    def _solve(self, x: Sequence[float], t: float) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(x, float)
        K = np.asarray(self._K(x, t), float)
        z = np.linalg.solve(K, np.asarray(self._R(x, t), float).ravel())
        dK = np.asarray(self._dK(x, t), float)
        dz = np.linalg.solve(K, np.asarray(self._dR(x, t), float) - np.einsum("kij,j->ik", dK, z))
        return z, dz

    def A(self, x: Sequence[float], t: float = 0.0) -> np.ndarray:
        """``∂[q̇; q̈]/∂[q; q̇]`` of the closed loop."""
        n = self.n
        _z, dz = self._solve(x, t)
        top = np.hstack([np.zeros((n, n)), np.eye(n)])
        return np.vstack([top, dz[:n]])

    def u(self, x: Sequence[float], t: float = 0.0) -> np.ndarray:
        """The controls."""
        return self._solve(x, t)[0][self.n:self.n + self.s]

    def gain(self, x: Sequence[float], t: float = 0.0) -> np.ndarray:
        """``∂u/∂[q; q̇]``."""
        return self._solve(x, t)[1][self.n:self.n + self.s]


def two_link_arm(values: dict[str, float], path: str) -> ClosedLoop:
    """The arm of ``examples/two_link_control`` (uniform rods, gravity −y, torques ``u1``
    at the shoulder, ``u2`` at the elbow). ``path``: ``"circle"`` — the example's two
    constraints (the end effector on the circle, default law ``h = −100``, ``k = −20``);
    ``"height"`` — only ``yE = b + r sin Wt`` with both torques (least norm)."""
    V = {k: sp.Float(v) for k, v in values.items()}
    l1, l2, m1, m2, g, a, b, r, W = (V[k] for k in
                                     ("l1", "l2", "m1", "m2", "g", "a", "b", "r", "W"))
    q = me.dynamicsymbols("q1 q2")
    u1, u2 = sp.symbols("u1 u2")
    arm = ArmBodies(q, l1, l2, m1, m2, g)
    N, A, B, O, J = arm.N, arm.A, arm.B, arm.O, arm.J
    loads = [(A, (u1 - u2) * N.z), (B, u2 * N.z)]    # shoulder on link 1, elbow between
    lm = me.LagrangesMethod(me.Lagrangian(N, arm.link1, arm.link2), q, forcelist=loads,
                            frame=N)
    E = O.locatenew("E", J.pos_from(O) + l2 * B.x)
    xE, yE = E.pos_from(O).dot(N.x), E.pos_from(O).dot(N.y)
    fy = (yE - b - r * sp.sin(W * T), -100, -20)
    if path == "circle":
        return ClosedLoop(lm, q, [u1, u2], [(xE - a - r * sp.cos(W * T), -100, -20), fy])
    return ClosedLoop(lm, q, [u1, u2], [fy])


def cart_pendulum(values: dict[str, float], h: float, k: float) -> ClosedLoop:
    """A cart (mass ``mc``, coordinate ``x``, driving force ``u``) carrying a point bob
    (mass ``m``) on a massless rod ``l`` at angle ``th`` from the x axis, gravity −y;
    the programmed constraint ``x = X0 + A sin Wt``."""
    V = {k_: sp.Float(v) for k_, v in values.items()}
    mc, m, l, g, X0, Am, W = (V[k_] for k_ in ("mc", "m", "l", "g", "X0", "A", "W"))
    x, th = me.dynamicsymbols("x th")
    u = sp.Symbol("u")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x)
    P.set_vel(N, x.diff(T) * N.x)
    Bob = P.locatenew("Bob", l * (sp.cos(th) * N.x + sp.sin(th) * N.y))
    Bob.set_vel(N, Bob.pos_from(O).dt(N))
    cart = me.Particle("cart", P, mc)
    bob = me.Particle("bob", Bob, m)
    bob.potential_energy = m * g * Bob.pos_from(O).dot(N.y)
    lm = me.LagrangesMethod(me.Lagrangian(N, cart, bob), [x, th], forcelist=[(P, u * N.x)],
                            frame=N)
    return ClosedLoop(lm, [x, th], [u], [(x - X0 - Am * sp.sin(W * T), h, k)])
