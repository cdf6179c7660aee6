"""The skier of seed 004 (sections 6–7, Figs. 4–5), one or two links, by SymPy's
``KanesMethod``, with the ski's non-holonomic constraint (7.3) as a dependent speed, and
the controls solved from the programmed constraints by the perturbation law (5.5) —
nothing from kidym.

Coordinates ``x, y`` (the ski's point A on the slope), ``φ0`` (the ski's heading), for
each link ``φi, ψi`` (its absolute azimuth and elevation: the frame N turned about z by
φi, then about the new y by −ψi) and ``ξi1, ξi2`` (the massless parts before and after
its rod). Generalized speeds ``u_i = q̇_i``; ``u_y`` is dependent:
``u_x sin φ0 − u_y cos φ0 = 0``. The ski: mass ``m0`` at A, central moments about its
own axes. Link i: a thin rod ``li`` of mass ``mi`` from ``ξi1`` along its unit vector,
the next joint at ``ξi1 + li + ξi2``; a particle on the last tip (the body ``mG`` of
the one-link model, the head ``mH`` of the two-link one). Gravity
``(g sin al, 0, −g cos al)``. The controls as loads whose generalized force is on their
own coordinate only: the yaw moment ``M0`` on the ski; on each link the moments about
the slope's normal and about its elevation axis; the forces as pairs along the link,
from the joint to the rod's start and from the rod's end to the tip.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

COORDS = ("x", "y", "phi0", "phi1", "psi1", "xi11", "xi12")
CONTROLS = ("M0", "M1phi", "M1psi", "F1", "F2")
PARAMS = ("g", "al", "m0", "ls", "m1", "l1", "mG", "Atr", "ktr", "L", "d", "lc")
#: the two-link model (examples/skier/skier2.kdm): the trunk and a head ``mH`` on top
COORDS2 = (*COORDS, "phi2", "psi2", "xi21", "xi22")
CONTROLS2 = ("M0", "M1phi", "M1psi", "F11", "F12", "M2phi", "M2psi", "F21", "F22")
PARAMS2 = ("g", "al", "m0", "ls", "m1", "l1", "m2", "l2", "mH", "Atr", "ktr", "L", "d",
           "L2", "d2", "lc", "lc2")


@cache
def skier_oracle(n: int = 1):
    """Functions of numbers for the ``n``-link skier (1 or 2): ``accelerations(q, qd, c,
    p)`` → ``q̈`` for given controls ``c``; ``constraints(q, qd, qdd, p)`` → ``f, ḟ, f̈``
    of the programmed constraints (track (7.5), (8.1), (8.2), the massless parts held);
    ``reduced_equations(q, qd, c, p)`` → Kane's ``M`` and forcing in the independent
    speeds. Orders: ``COORDS``/``CONTROLS``/``PARAMS`` (n = 1), ``…2`` (n = 2)."""
    from sympy.physics import mechanics as me

    coords, controls, params = ((COORDS, CONTROLS, PARAMS) if n == 1
                                else (COORDS2, CONTROLS2, PARAMS2))
    q = me.dynamicsymbols(" ".join(coords))
    x, y, phi0 = q[:3]
    u = me.dynamicsymbols(f"u0:{len(q)}")
    c = sp.symbols(" ".join(controls))
    p = sp.symbols(" ".join(params))
    P = dict(zip(params, p))
    C = dict(zip(controls, c))
    g, al, m0, ls = P["g"], P["al"], P["m0"], P["ls"]
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    gv = g * sp.sin(al) * N.x - g * sp.cos(al) * N.z
    S = N.orientnew("S", "Axis", (phi0, N.z))
    A = O.locatenew("A", x * N.x + y * N.y)
    A.set_vel(N, A.pos_from(O).dt(N))
    bodies = [me.RigidBody("Ski", A, S, m0,
                           (me.inertia(S, m0 * sp.Rational(1, 100) / 12, m0 * ls**2 / 12,
                                       m0 * ls**2 / 12), A))]
    loads = [(A, m0 * gv), (S, C["M0"] * N.z)]
    f = [sp.sin(phi0) - P["Atr"] * P["ktr"] * sp.cos(P["ktr"] * x) * sp.cos(phi0)]
    joint = A
    for i in range(1, n + 1):
        phi, psi, xa, xb = q[3 + 4 * (i - 1): 7 + 4 * (i - 1)]
        m, l = P[f"m{i}"], P[f"l{i}"]
        Ei = N.orientnew(f"Ei{i}", "Axis", (phi, N.z))
        E = Ei.orientnew(f"E{i}", "Axis", (-psi, Ei.y))
        pts = {k: joint.locatenew(f"{k}{i}", r * E.x) for k, r in
               (("B", xa), ("G", xa + l / 2), ("D", xa + l), ("T", xa + l + xb))}
        for pt in pts.values():
            pt.set_vel(N, pt.pos_from(O).dt(N))
        bodies.append(me.RigidBody(f"L{i}", pts["G"], E, m,
                                   (me.inertia(E, 0, m * l**2 / 12, m * l**2 / 12),
                                    pts["G"])))
        loads.append((pts["G"], m * gv))
        fa = C["F1" if n == 1 else f"F{i}1"]
        fb = C["F2" if n == 1 else f"F{i}2"]
        # each control's generalized force on its own coordinate only, as the paper's
        # (7.9)-(7.12) and kidym's elements have them: the moments about the normal and
        # about the elevation axis on the link, the forces as pairs along the link across
        # its massless parts (from the joint to the rod, from the rod to the tip)
        loads += [(E, C[f"M{i}phi"] * N.z - C[f"M{i}psi"] * Ei.y),
                  (pts["B"], fa * E.x), (joint, -fa * E.x),
                  (pts["T"], fb * E.x), (pts["D"], -fb * E.x)]
        lc, La, db = ((P["lc"], P["L"], P["d"]) if i == 1 else (P["lc2"], P["L2"], P["d2"]))
        f += [phi - phi0, (xa + l) * sp.sin(psi) - lc, xa - La, xb - db]
        joint = pts["T"]
    top = P["mG"] if n == 1 else P["mH"]
    bodies.append(me.Particle("Top", joint, top))
    loads.append((joint, top * gv))
    kd = [qi.diff() - ui for qi, ui in zip(q, u)]
    vc = [u[0] * sp.sin(phi0) - u[1] * sp.cos(phi0)]
    kane = me.KanesMethod(N, q_ind=list(q), u_ind=[u[0], *u[2:]], u_dependent=[u[1]],
                          kd_eqs=kd, velocity_constraints=vc)
    kane.kanes_equations(bodies, loads)
    nq = len(q)
    qs = sp.symbols(" ".join(coords))
    us = sp.symbols(" ".join(nm + "_d" for nm in coords))
    plain = {**dict(zip(u, us)), **dict(zip(q, qs))}
    MM = kane.mass_matrix_full.subs(plain)
    FF = kane.forcing_full.subs(plain)
    full = sp.lambdify([qs, us, c, p], [MM, FF], modules="numpy")
    # the reduced equations in the independent speeds (ẋ, φ̇0, φ̇1, ψ̇1, ξ̇11, ξ̇12): the
    # form of the paper's (7.7)–(7.12), ẏ = ẋ tan φ0 eliminated
    reduced = sp.lambdify([qs, us, c, p], [kane.mass_matrix.subs(plain),
                                           kane.forcing.subs(plain)], modules="numpy")

    # the programmed constraints (f above) and their derivatives along any motion
    fd = [e.diff(me.dynamicsymbols._t) for e in f]
    fdd = [e.diff(me.dynamicsymbols._t) for e in fd]
    qdds = sp.symbols(" ".join(nm + "_dd" for nm in coords))
    sub = {**{qi.diff(me.dynamicsymbols._t, 2): a for qi, a in zip(q, qdds)},
           **{qi.diff(): a for qi, a in zip(q, us)}}
    sub2 = dict(zip(q, qs))
    F3 = [[e.subs(sub).subs(sub2) for e in grp] for grp in (f, fd, fdd)]
    cons = sp.lambdify([qs, us, qdds, p], F3, modules="numpy")

    def accelerations(qv, qdv, cv, pv):
        M, F = full(list(qv), list(qdv), list(cv), list(pv))
        sol = np.linalg.solve(np.asarray(M, float), np.asarray(F, float).ravel())
        ud = sol[nq:]                          # [q̇; u̇ in the order u_ind, u_dep]
        return np.concatenate([ud[:1], ud[nq - 1:], ud[1:nq - 1]])

    def constraints(qv, qdv, qddv, pv):
        return [np.asarray(a, float) for a in cons(list(qv), list(qdv), list(qddv), list(pv))]

    def reduced_equations(qv, qdv, cv, pv):
        M, F = reduced(list(qv), list(qdv), list(cv), list(pv))
        M, F = np.asarray(M, float), np.asarray(F, float).ravel()
        # rows: Kane's nq - 1 equations (+ the constraint's derivative, dropped); columns:
        # the rates of u_ind then u_dep. ÿ = tan φ0 ẍ + sec² φ0 ẋ φ̇0 eliminates the last.
        tg, sec2 = np.tan(qv[2]), 1 / np.cos(qv[2]) ** 2
        k = nq - 1
        Mr = M[:k, :k].copy()
        Mr[:, 0] += tg * M[:k, k]
        return Mr, F[:k] - M[:k, k] * sec2 * qdv[0] * qdv[2]

    return accelerations, constraints, reduced_equations


def closed_loop(qv, qdv, pv, h: float, k: float, n: int = 1):
    """``q̈`` and the controls at a state where the deviations obey ``f̈ = h f + k ḟ``
    ((5.5)): ``f̈`` is affine in the controls, solved as a square system."""
    acc, cons, _ = skier_oracle(n)
    s = len(CONTROLS if n == 1 else CONTROLS2)
    a0 = acc(qv, qdv, np.zeros(s), pv)
    cols = np.array([acc(qv, qdv, np.eye(s)[i], pv) - a0 for i in range(s)]).T
    f, fd, fdd0 = cons(qv, qdv, a0, pv)
    G = np.array([cons(qv, qdv, a0 + cols[:, i], pv)[2] - fdd0 for i in range(s)]).T
    cv = np.linalg.solve(G, h * f + k * fd - fdd0)
    return a0 + cols @ cv, cv
