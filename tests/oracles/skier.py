"""The one-link skier of seed 004 (section 7, Fig. 4) by SymPy's ``KanesMethod``, with
the ski's non-holonomic constraint (7.3) as a dependent speed, and the controls solved
from the programmed constraints by the perturbation law (5.5) — nothing from kidym.

Coordinates ``x, y`` (the ski's point A on the slope), ``φ0`` (the ski's heading),
``φ1, ψ1`` (the link's absolute azimuth and elevation), ``ξ11, ξ12`` (the massless parts
before and after the rod). Generalized speeds ``u_i = q̇_i``; ``u_y`` is dependent:
``u_x sin φ0 − u_y cos φ0 = 0``. The ski: mass ``m0`` at A, central moments about its
own axes. The legs: a thin rod ``l1`` of mass ``m1`` from ``ξ11`` along the link's unit
vector. The body: a particle ``mG`` at ``ξ11 + l1 + ξ12``. Gravity
``(g sin al, 0, −g cos al)``. The controls as physical loads: the yaw moment ``M0`` on
the ski; the moment ``M1phi`` about the slope's normal on the link; ``M1psi`` about the
link's elevation axis on the link, its reaction on the ski; ``F1`` between the joint A
(on the ski) and the rod; ``F2`` between the rod and the body.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

COORDS = ("x", "y", "phi0", "phi1", "psi1", "xi11", "xi12")
CONTROLS = ("M0", "M1phi", "M1psi", "F1", "F2")
PARAMS = ("g", "al", "m0", "ls", "m1", "l1", "mG", "Atr", "ktr", "L", "d", "lc")


@cache
def skier_oracle():
    """Functions of numbers: ``accelerations(q, qd, c, p)`` → ``q̈`` (7) for given controls
    ``c`` (5); ``constraints(q, qd, qdd, p)`` → ``f, ḟ, f̈`` of the five programmed
    constraints (track (7.5), (8.1), (8.2), legs, body); ``reduced_equations(q, qd, c,
    p)`` → Kane's ``M`` (6 × 6) and forcing in the independent speeds."""
    from sympy.physics import mechanics as me

    q = me.dynamicsymbols(" ".join(COORDS))
    x, y, phi0, phi1, psi1, xi11, xi12 = q
    u = me.dynamicsymbols("u0:7")
    c = sp.symbols(" ".join(CONTROLS))
    M0, M1phi, M1psi, F1, F2 = c
    p = sp.symbols(" ".join(PARAMS))
    g, al, m0, ls, m1, l1, mG, Atr, ktr, L, d, lc = p
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    S = N.orientnew("S", "Axis", (phi0, N.z))
    Ei = N.orientnew("Ei", "Axis", (phi1, N.z))
    E = Ei.orientnew("E", "Axis", (-psi1, Ei.y))
    A = O.locatenew("A", x * N.x + y * N.y)
    G1 = A.locatenew("G1", (xi11 + l1 / 2) * E.x)
    B = A.locatenew("B", (xi11 + l1 + xi12) * E.x)
    P = A.locatenew("P", xi11 * E.x)           # where F1's reaction would be, on A
    for pt in (A, G1, B, P):
        pt.set_vel(N, pt.pos_from(O).dt(N))
    gv = g * sp.sin(al) * N.x - g * sp.cos(al) * N.z
    ski = me.RigidBody("Ski", A, S, m0,
                       (me.inertia(S, m0 * sp.Rational(1, 100) / 12, m0 * ls**2 / 12,
                                   m0 * ls**2 / 12), A))
    rod = me.RigidBody("Legs", G1, E, m1, (me.inertia(E, 0, m1 * l1**2 / 12,
                                                         m1 * l1**2 / 12), G1))
    body = me.Particle("Body", B, mG)
    loads = [(A, m0 * gv), (G1, m1 * gv), (B, mG * gv),
             (S, M0 * N.z + M1psi * Ei.y), (E, M1phi * N.z - M1psi * Ei.y),
             (G1, F1 * E.x - F2 * E.x), (A, -F1 * E.x), (B, F2 * E.x)]
    kd = [qi.diff() - ui for qi, ui in zip(q, u)]
    vc = [u[0] * sp.sin(phi0) - u[1] * sp.cos(phi0)]
    kane = me.KanesMethod(N, q_ind=list(q), u_ind=[u[0], *u[2:]], u_dependent=[u[1]],
                          kd_eqs=kd, velocity_constraints=vc)
    kane.kanes_equations([ski, rod, body], loads)
    qs = sp.symbols(" ".join(COORDS))
    us = sp.symbols(" ".join(n + "_d" for n in COORDS))
    plain = {**dict(zip(u, us)), **dict(zip(q, qs))}
    MM = kane.mass_matrix_full.subs(plain)
    FF = kane.forcing_full.subs(plain)
    full = sp.lambdify([qs, us, c, p], [MM, FF], modules="numpy")
    # the reduced equations in the independent speeds (ẋ, φ̇0, φ̇1, ψ̇1, ξ̇11, ξ̇12): the
    # form of the paper's (7.7)–(7.12), ẏ = ẋ tan φ0 eliminated
    reduced = sp.lambdify([qs, us, c, p], [kane.mass_matrix.subs(plain),
                                           kane.forcing.subs(plain)], modules="numpy")

    # the programmed constraints and their derivatives along any motion
    f = [sp.sin(phi0) - Atr * ktr * sp.cos(ktr * x) * sp.cos(phi0), phi1 - phi0,
         (xi11 + l1) * sp.sin(psi1) - lc, xi11 - L, xi12 - d]
    fd = [e.diff(me.dynamicsymbols._t) for e in f]
    fdd = [e.diff(me.dynamicsymbols._t) for e in fd]
    qdds = sp.symbols(" ".join(n + "_dd" for n in COORDS))
    sub = {**{qi.diff(me.dynamicsymbols._t, 2): a for qi, a in zip(q, qdds)},
           **{qi.diff(): a for qi, a in zip(q, us)}}
    sub2 = dict(zip(q, qs))
    F3 = [[e.subs(sub).subs(sub2) for e in grp] for grp in (f, fd, fdd)]
    cons = sp.lambdify([qs, us, qdds, p], F3, modules="numpy")

    def accelerations(qv, qdv, cv, pv):
        M, F = full(list(qv), list(qdv), list(cv), list(pv))
        sol = np.linalg.solve(np.asarray(M, float), np.asarray(F, float).ravel())
        ud = sol[7:]                           # [q̇ (7); u̇ in the order u_ind, u_dep]
        return np.concatenate([ud[:1], ud[6:], ud[1:6]])

    def constraints(qv, qdv, qddv, pv):
        return [np.asarray(a, float) for a in cons(list(qv), list(qdv), list(qddv), list(pv))]

    def reduced_equations(qv, qdv, cv, pv):
        M, F = reduced(list(qv), list(qdv), list(cv), list(pv))
        M, F = np.asarray(M, float), np.asarray(F, float).ravel()
        # rows: Kane's 6 equations (+ the constraint's derivative, dropped); columns: the
        # rates of u_ind then u_dep. ÿ = tan φ0 ẍ + sec² φ0 ẋ φ̇0 eliminates the last.
        tg, sec2 = np.tan(qv[2]), 1 / np.cos(qv[2]) ** 2
        Mr = M[:6, :6].copy()
        Mr[:, 0] += tg * M[:6, 6]
        return Mr, F[:6] - M[:6, 6] * sec2 * qdv[0] * qdv[2]

    return accelerations, constraints, reduced_equations


def closed_loop(qv, qdv, pv, h: float, k: float):
    """``q̈`` and the controls at a state where the five deviations obey
    ``f̈ = h f + k ḟ`` ((5.5)): ``f̈`` is affine in the controls, solved by 5 × 5."""
    acc, cons, _ = skier_oracle()
    a0 = acc(qv, qdv, np.zeros(5), pv)
    cols = np.array([acc(qv, qdv, np.eye(5)[i], pv) - a0 for i in range(5)]).T
    f, fd, fdd0 = cons(qv, qdv, a0, pv)
    G = np.array([cons(qv, qdv, a0 + cols[:, i], pv)[2] - fdd0 for i in range(5)]).T
    cv = np.linalg.solve(G, h * f + k * fd - fdd0)
    return a0 + cols @ cv, cv
