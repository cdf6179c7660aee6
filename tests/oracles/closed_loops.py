"""Closed-loop mechanisms built independently with SymPy's ``LagrangesMethod``.

The oracle for kidym's holonomic constraints (``УРАВНЕНИЯ``). Nothing from kidym is
imported: the four-bar linkage and the slider-crank are written here from their
mechanics (rods as rigid bodies in the plane, gravity, the loop-closure equations as
``hol_coneqs``; the four-bar, the slider-crank on a moving guide and the five-bar
parallel mechanism), and ``LagrangesMethod`` gives the augmented system

    M(q) q̈ = F(q, q̇, t) + Φ_qᵀ λ,     Φ_q q̈ = −(Φ_q q̇)_q q̇ − 2Φ_qt q̇ − Φ_tt

whose solution ``(q̈, λ)`` kidym's must equal (SymPy's ``LagrangesMethod`` adds
``Φ_qᵀλ`` to the generalized forces exactly as kidym's ``M ẇ = F + Gᵀλ``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.physics.mechanics import (
    LagrangesMethod,
    Lagrangian,
    Particle,
    Point,
    ReferenceFrame,
    RigidBody,
    dynamicsymbols,
    inertia,
)

t = dynamicsymbols._t


@dataclass
class LoopOracle:
    """``(q̈, λ)`` of a closed-loop mechanism at a state, and its constraints."""

    coordinates: list[str]
    lagrange: LagrangesMethod
    q: list
    constraints: list[sp.Expr]
    params: dict[sp.Symbol, float]

    def _plain(self, expr: sp.Expr, state: dict[str, float]) -> float:
        qd = [sp.diff(q, t) for q in self.q]
        rep = {**{d: sp.Float(state[f"{n}'t"]) for d, n in zip(qd, self.coordinates)},
               **{q: sp.Float(state[n]) for q, n in zip(self.q, self.coordinates)}}
        return float(expr.subs(rep).subs(self.params).subs(t, state.get("t", 0.0)).evalf())

    def solve(self, state: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """``(q̈, λ)`` at ``state`` (``{q, q't, t}``)."""
        lm = self.lagrange
        M = lm.mass_matrix_full
        F = lm.forcing_full
        n = len(self.q)
        Mn = np.array([[self._plain(M[i, j], state) for j in range(M.shape[1])]
                       for i in range(M.shape[0])])
        Fn = np.array([self._plain(F[i], state) for i in range(F.shape[0])])
        x = np.linalg.solve(Mn, Fn)
        # mass_matrix_full is over [q, q̇, λ]: the accelerations follow the n rates
        return x[n:2 * n], x[2 * n:]

    def residual(self, state: dict[str, float]) -> np.ndarray:
        """``Φ`` at ``state``."""
        return np.array([self._plain(f, state) for f in self.constraints])


def _rod(name: str, frame: ReferenceFrame, origin: Point, length: sp.Expr, mass: sp.Symbol,
         gravity: sp.Symbol, N: ReferenceFrame) -> tuple[RigidBody, Point, Point]:
    """A uniform rod along ``frame.x`` from ``origin``: body, mass centre, far end."""
    cm = origin.locatenew(f"{name}_cm", length / 2 * frame.x)
    end = origin.locatenew(f"{name}_end", length * frame.x)
    inert = inertia(frame, 0, mass * length ** 2 / 12, mass * length ** 2 / 12)
    body = RigidBody(name, cm, frame, mass, (inert, cm))
    body.potential_energy = mass * gravity * _height(cm, N)
    return body, cm, end


_ORIGIN: dict[int, Point] = {}


def _height(point: Point, N: ReferenceFrame) -> sp.Expr:
    return point.pos_from(_ORIGIN[id(N)]).dot(N.y)


def four_bar(values: dict[str, float]) -> LoopOracle:
    """Crank a (q1 from the ground x axis at O), coupler b (q2 relative to the crank),
    rocker c (q3 from the ground x axis at (d, 0)); gravity −y; uniform rods."""
    q1, q2, q3 = dynamicsymbols("q1 q2 q3")
    a, b, c, d, m1, m2, m3, g = sp.symbols("a b c d m1 m2 m3 g")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    _ORIGIN[id(N)] = O
    A = N.orientnew("A", "Axis", (q1, N.z))
    B = A.orientnew("B", "Axis", (q2, A.z))
    C = N.orientnew("C", "Axis", (q3, N.z))
    crank, _cm1, P = _rod("crank", A, O, a, m1, g, N)
    P.set_vel(N, P.pos_from(O).dt(N))
    coupler, _cm2, _ = _rod("coupler", B, P, b, m2, g, N)
    D = O.locatenew("D", d * N.x)
    D.set_vel(N, 0)
    rocker, _cm3, _ = _rod("rocker", C, D, c, m3, g, N)
    for body in (crank, coupler, rocker):
        body.masscenter.set_vel(N, body.masscenter.pos_from(O).dt(N))
    L = Lagrangian(N, crank, coupler, rocker)
    f1 = a * sp.cos(q1) + b * sp.cos(q1 + q2) - d - c * sp.cos(q3)
    f2 = a * sp.sin(q1) + b * sp.sin(q1 + q2) - c * sp.sin(q3)
    lm = LagrangesMethod(L, [q1, q2, q3], hol_coneqs=[f1, f2], frame=N)
    lm.form_lagranges_equations()
    params = {s: values[str(s)] for s in (a, b, c, d, m1, m2, m3, g)}
    return LoopOracle(["q1", "q2", "q3"], lm, [q1, q2, q3], [f1, f2], params)


def slider_crank(values: dict[str, float]) -> LoopOracle:
    """Crank r (q1), connecting rod l (q2 relative to the crank), slider of mass ms at
    x = s on a guide whose height moves, e(t) = A sin(W t) (a rheonomic constraint);
    a driving moment M0 sin(W t) on the crank; gravity −y."""
    q1, q2, s = dynamicsymbols("q1 q2 s")
    r, l_, m1, m2, ms, g, A_, W, M0 = sp.symbols("r l m1 m2 ms g A W M0")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    _ORIGIN[id(N)] = O
    Af = N.orientnew("A", "Axis", (q1, N.z))
    Bf = Af.orientnew("B", "Axis", (q2, Af.z))
    crank, _c1, P = _rod("crank", Af, O, r, m1, g, N)
    rod, _c2, _ = _rod("rod", Bf, P, l_, m2, g, N)
    S = O.locatenew("S", s * N.x)
    for body in (crank, rod):
        body.masscenter.set_vel(N, body.masscenter.pos_from(O).dt(N))
    S.set_vel(N, S.pos_from(O).dt(N))
    Sf = N.orientnew("Sf", "Axis", (0, N.z))
    slider = RigidBody("slider", S, Sf, ms, (inertia(Sf, 0, 0, 0), S))
    slider.potential_energy = 0
    L = Lagrangian(N, crank, rod, slider)
    f1 = r * sp.cos(q1) + l_ * sp.cos(q1 + q2) - s
    f2 = r * sp.sin(q1) + l_ * sp.sin(q1 + q2) - A_ * sp.sin(W * t)
    forces = [(Af, M0 * sp.sin(W * t) * N.z)]
    lm = LagrangesMethod(L, [q1, q2, s], hol_coneqs=[f1, f2], forcelist=forces, frame=N)
    lm.form_lagranges_equations()
    params = {x: values[str(x)] for x in (r, l_, m1, m2, ms, g, A_, W, M0)}
    return LoopOracle(["q1", "q2", "s"], lm, [q1, q2, s], [f1, f2], params)


def five_bar(values: dict[str, float]) -> LoopOracle:
    """The planar five-bar parallel mechanism: proximal links l1 (q1 from the ground x
    axis at A1 = O) and l2 (q3 from the ground x axis at A2 = (d, 0)), distal links l3
    on the first (q2 relative to it) and l4 on the second (q4 relative to it), uniform
    rods; a point mass mp (the tool) at the far end of l3, where the loop closes on the
    far end of l4. Motor torques ``T sin(W t) − b q̇1`` on l1 and ``T cos(W t) − b q̇3``
    on l2 (against the ground); gravity −y."""
    q1, q2, q3, q4 = dynamicsymbols("q1 q2 q3 q4")
    l1, l2, l3, l4, d, m1, m2, m3, m4, mp, g, T, W, b = sp.symbols(
        "l1 l2 l3 l4 d m1 m2 m3 m4 mp g T W b")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    _ORIGIN[id(N)] = O
    A = N.orientnew("A", "Axis", (q1, N.z))
    B = A.orientnew("B", "Axis", (q2, A.z))
    C = N.orientnew("C", "Axis", (q3, N.z))
    D = C.orientnew("D", "Axis", (q4, C.z))
    prox1, _c1, P1 = _rod("prox1", A, O, l1, m1, g, N)
    A2 = O.locatenew("A2", d * N.x)
    A2.set_vel(N, 0)
    prox2, _c2, P2 = _rod("prox2", C, A2, l2, m2, g, N)
    dist1, _c3, E = _rod("dist1", B, P1, l3, m3, g, N)
    dist2, _c4, _E2 = _rod("dist2", D, P2, l4, m4, g, N)
    for body in (prox1, prox2, dist1, dist2):
        body.masscenter.set_vel(N, body.masscenter.pos_from(O).dt(N))
    E.set_vel(N, E.pos_from(O).dt(N))
    tool = Particle("tool", E, mp)
    tool.potential_energy = mp * g * _height(E, N)
    L = Lagrangian(N, prox1, prox2, dist1, dist2, tool)
    f1 = (l1 * sp.cos(q1) + l3 * sp.cos(q1 + q2)
          - d - l2 * sp.cos(q3) - l4 * sp.cos(q3 + q4))
    f2 = l1 * sp.sin(q1) + l3 * sp.sin(q1 + q2) - l2 * sp.sin(q3) - l4 * sp.sin(q3 + q4)
    forces = [(A, (T * sp.sin(W * t) - b * q1.diff(t)) * N.z),
              (C, (T * sp.cos(W * t) - b * q3.diff(t)) * N.z)]
    lm = LagrangesMethod(L, [q1, q2, q3, q4], hol_coneqs=[f1, f2], forcelist=forces,
                         frame=N)
    lm.form_lagranges_equations()
    params = {x: values[str(x)] for x in (l1, l2, l3, l4, d, m1, m2, m3, m4, mp, g, T, W, b)}
    return LoopOracle(["q1", "q2", "q3", "q4"], lm, [q1, q2, q3, q4], [f1, f2], params)


@dataclass
class DrivenSliderCrank:
    """Inverse dynamics of a slider-crank whose crank angle is prescribed, ``θ = θ(t)``.

    Crank ``r`` (uniform rod of mass ``m1``, turning about O), connecting rod ``l``
    (uniform, ``m2``) from the crank pin A to the slider's pin B, slider ``ms`` at
    ``x = s`` on the x axis, gravity ``−g y``, a viscous load ``−c ṡ`` on the slider.
    The mechanism has one degree of freedom, so with ``θ`` given everything is explicit:
    the rod's angle ``ψ = −asin(r sin θ / l)`` (the slider right of O), ``s = r cos θ +
    l cos ψ``. Lagrange's equation in ``θ`` alone, ``d/dt ∂L/∂θ̇ − ∂L/∂θ = τ + Q_load``
    (``Q_load = −c ṡ ∂s/∂θ``), gives the torque ``τ(t)`` the drive must apply; the
    slider's own equation ``ms s̈ = −c ṡ − X`` gives ``X``, the horizontal force of the
    slider on the rod at B (the joint forces do no work along the motion, so neither
    needs the constraint machinery).
    """

    torque: object
    slider_force: object
    s: object

    @classmethod
    def build(cls, values: dict[str, float], theta: sp.Expr) -> DrivenSliderCrank:
        """``theta``: the crank angle as a SymPy expression of :data:`t`."""
        th, thd, thdd = sp.symbols("th thd thdd")
        r, l_, m1, m2, ms, g, c = (sp.Float(values[k]) for k in
                                   ("r", "l", "m1", "m2", "ms", "g", "c"))
        psi = sp.asin(-r * sp.sin(th) / l_)
        ax, ay = r * sp.cos(th), r * sp.sin(th)
        gx, gy = ax + l_ / 2 * sp.cos(psi), ay + l_ / 2 * sp.sin(psi)
        s = ax + l_ * sp.cos(psi)

        def rate(expr: sp.Expr) -> sp.Expr:
            return sp.diff(expr, th) * thd

        T = (m1 * r ** 2 / 3 * thd ** 2 / 2
             + m2 * (rate(gx) ** 2 + rate(gy) ** 2) / 2 + m2 * l_ ** 2 / 12 * rate(psi) ** 2 / 2
             + ms * rate(s) ** 2 / 2)
        V = m1 * g * r / 2 * sp.sin(th) + m2 * g * gy
        L = T - V
        p = sp.diff(L, thd)
        dpdt = sp.diff(p, th) * thd + sp.diff(p, thd) * thdd
        Q_load = -c * rate(s) * sp.diff(s, th)
        tau = dpdt - sp.diff(L, th) - Q_load
        sdd = sp.diff(rate(s), th) * thd + sp.diff(rate(s), thd) * thdd
        X = -ms * sdd - c * rate(s)
        motion = {th: theta, thd: sp.diff(theta, t), thdd: sp.diff(theta, t, 2)}
        tt = sp.Symbol("tt")

        def numeric(expr: sp.Expr):
            return sp.lambdify(tt, expr.subs(motion).subs(t, tt), "numpy")

        return cls(numeric(tau), numeric(X), numeric(s))


def spatial_rssr(values: dict[str, float]) -> LoopOracle:
    """A spatial four-bar RSSR: crank ``a`` turning about the fixed z axis at O (q1), a
    coupler ``b`` on the crank's end through a spherical joint (body-fixed z, y, x
    angles q2, q3, q4 from the crank's axes), a rocker ``c`` turning about the fixed x
    axis through D = (d, 0, h) (q5, the rocker along its y axis). The loop closes by a
    spherical joint: the coupler's far end is the rocker's end (three holonomic
    constraints, the components of ``P − Q`` in fixed axes; two degrees of freedom: the
    crank and the coupler's spin about its own axis). Uniform rods; the coupler has a
    spin inertia ``Js`` about its axis; gravity −z."""
    q1, q2, q3, q4, q5 = dynamicsymbols("q1 q2 q3 q4 q5")
    a, b, c, d, h, m1, m2, m3, Js, g = sp.symbols("a b c d h m1 m2 m3 Js g")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    A = N.orientnew("A", "Axis", (q1, N.z))
    B = A.orientnew("B", "Body", (q2, q3, q4), "ZYX")
    C = N.orientnew("C", "Axis", (q5, N.x))
    P = O.locatenew("P", a * A.x)
    cm1 = O.locatenew("cm1", a / 2 * A.x)
    cm2 = P.locatenew("cm2", b / 2 * B.x)
    end2 = P.locatenew("end2", b * B.x)
    D = O.locatenew("D", d * N.x + h * N.z)
    cm3 = D.locatenew("cm3", c / 2 * C.y)
    end3 = D.locatenew("end3", c * C.y)
    for pt in (cm1, cm2, cm3):
        pt.set_vel(N, pt.pos_from(O).dt(N))
    crank = RigidBody("crank", cm1, A, m1, (inertia(A, 0, m1 * a ** 2 / 12,
                                                     m1 * a ** 2 / 12), cm1))
    coupler = RigidBody("coupler", cm2, B, m2, (inertia(B, Js, m2 * b ** 2 / 12,
                                                        m2 * b ** 2 / 12), cm2))
    rocker = RigidBody("rocker", cm3, C, m3, (inertia(C, m3 * c ** 2 / 12, 0,
                                                      m3 * c ** 2 / 12), cm3))
    for body, cm, m in ((crank, cm1, m1), (coupler, cm2, m2), (rocker, cm3, m3)):
        body.potential_energy = m * g * cm.pos_from(O).dot(N.z)
    L = Lagrangian(N, crank, coupler, rocker)
    gap = end2.pos_from(O) - end3.pos_from(O)
    cons = [sp.simplify(gap.dot(e)) for e in (N.x, N.y, N.z)]
    q = [q1, q2, q3, q4, q5]
    lm = LagrangesMethod(L, q, hol_coneqs=cons, frame=N)
    lm.form_lagranges_equations()
    params = {x: values[str(x)] for x in (a, b, c, d, h, m1, m2, m3, Js, g)}
    return LoopOracle(["q1", "q2", "q3", "q4", "q5"], lm, q, cons, params)
