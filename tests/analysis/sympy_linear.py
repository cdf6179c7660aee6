"""Linearised reference systems built with SymPy ``physics.mechanics`` (``KanesMethod``,
``linearize``), independent of kidym: nothing is imported from it."""

from __future__ import annotations

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


def _linear(km: KanesMethod, loads, bodies, q, u, op: dict, params: dict,
            u_dep=()) -> np.ndarray:
    """``A`` of ``δẋ = A δx`` (``x = [q, u_ind]``) at ``op`` (values by plain name)."""
    km.kanes_equations(bodies, loads)
    t = dynamicsymbols._t
    subs = {s: op[str(s.func)] for s in [*q, *u, *u_dep]}
    # the accelerations at the point (SymPy's linearisation needs them in op_point)
    ud = [s.diff(t) for s in [*u, *u_dep]]
    num = {sp.Symbol(k): v for k, v in params.items()}
    Mf = km.mass_matrix_full.subs(subs).subs(num)
    Ff = km.forcing_full.subs(subs).subs(num)
    x = Mf.LUsolve(Ff)
    acc = dict(zip(ud, list(x[len(q):])))
    qd = {s.diff(t): v for s, v in zip(q, list(x[:len(q)]))}
    A, _B, _r = km.linearize(A_and_B=True, op_point=[subs, acc, qd], linear_solver="LU")
    return np.array(A.subs(num).evalf(), dtype=float)


def double_pendulum(op: dict, params: dict) -> np.ndarray:
    """Two uniform rods (``Rz(phi1)``, ``Sx(l1), Rz(phi2)``), gravity ``−g y``."""
    phi1, phi2 = dynamicsymbols("phi1 phi2")
    u1, u2 = dynamicsymbols("phi1't phi2't")
    m1, m2, l1, l2, g = sp.symbols("m1 m2 l1 l2 g")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [phi1, N.z])
    B = A.orientnew("B", "Axis", [phi2, A.z])
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(A, u2 * A.z)
    O = Point("O")
    O.set_vel(N, 0)
    G1 = O.locatenew("G1", l1 / 2 * A.x)
    G1.v2pt_theory(O, N, A)
    H = O.locatenew("H", l1 * A.x)
    H.v2pt_theory(O, N, A)
    G2 = H.locatenew("G2", l2 / 2 * B.x)
    G2.v2pt_theory(H, N, B)
    rod1 = RigidBody("rod1", G1, A, m1, (inertia(A, 0, m1 * l1**2 / 12, m1 * l1**2 / 12), G1))
    rod2 = RigidBody("rod2", G2, B, m2, (inertia(B, 0, m2 * l2**2 / 12, m2 * l2**2 / 12), G2))
    loads = [(G1, -m1 * g * N.y), (G2, -m2 * g * N.y)]
    q, u = [phi1, phi2], [u1, u2]
    km = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[u1 - phi1.diff(), u2 - phi2.diff()])
    return _linear(km, loads, [rod1, rod2], q, u, op, params)


def rolling_disc(op: dict, params: dict) -> np.ndarray:
    """Thin disc rolling on ``z = 0``: ``q = (x, y, psi, theta, phi)`` (contact point,
    heading, lean about the heading frame's x, spin about the disc axis), independent
    speeds ``psi', theta', phi'``, the contact point's ``x', y'`` dependent (rolling)."""
    x, y, psi, theta, phi = dynamicsymbols("x y psi theta phi")
    ux, uy, upsi, uth, uphi = dynamicsymbols("x't y't psi't theta't phi't")
    m, r, g = sp.symbols("m r g")
    N = ReferenceFrame("N")
    Af = N.orientnew("A", "Axis", [psi, N.z])
    Bf = Af.orientnew("B", "Axis", [theta, Af.x])
    C = Bf.orientnew("C", "Axis", [phi, Bf.y])
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    D = P.locatenew("D", r * Bf.z)
    q = [x, y, psi, theta, phi]
    u = [ux, uy, upsi, uth, uphi]
    kd = [qi.diff() - ui for qi, ui in zip(q, u)]
    subs = {qi.diff(): ui for qi, ui in zip(q, u)}
    C.set_ang_vel(N, C.ang_vel_in(N).subs(subs))
    D.set_vel(N, D.pos_from(O).dt(N).subs(subs))
    contact = D.vel(N) + C.ang_vel_in(N).cross(-r * Bf.z)
    cons = [contact.dot(N.x), contact.dot(N.y)]
    disc = RigidBody("disc", D, C, m, (inertia(C, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D))
    km = KanesMethod(N, q_ind=q, u_ind=[upsi, uth, uphi], u_dependent=[ux, uy], kd_eqs=kd,
                     velocity_constraints=cons)
    return _linear(km, [(D, -m * g * N.z)], [disc], q, [upsi, uth, uphi], op, params,
                   u_dep=[ux, uy])


def point_double_pendulum_omega2(m1: float, m2: float, l1: float, l2: float,
                                 g: float) -> tuple[float, float]:
    """ω² of the point-mass double pendulum hanging down: the roots of
    ``m1 l1² l2² ω⁴ − (m1 + m2) g l1 l2 (l1 + l2) ω² + (m1 + m2) g² l1 l2 = 0``
    (from ``det(K − ω² M) = 0`` with ``M = [[(m1+m2) l1², m2 l1 l2], [m2 l1 l2, m2 l2²]]``,
    ``K = diag((m1+m2) g l1, m2 g l2)``)."""
    a = m1 * l1**2 * l2**2
    b = -(m1 + m2) * g * l1 * l2 * (l1 + l2)
    c = (m1 + m2) * g**2 * l1 * l2
    d = np.sqrt(b * b - 4 * a * c)
    return (-b - d) / (2 * a), (-b + d) / (2 * a)


def chain_linearizer(n: int, op: dict, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """The spatial ``n``-link chain (link ``k`` turns about the previous link's ``x``
    for odd ``k``, ``y`` for even ``k``; links of length ``l`` hanging along ``−z``,
    centre of mass at mid-length, inertia ``Jx, Jy, Jz``), gravity ``g`` taken as an
    input: SymPy's ``Linearizer`` (``KanesMethod.to_linearizer``) forms ``M δẋ = A δx +
    B δg`` with the parameters as symbols and the point's accelerations as numbers;
    returns ``(M⁻¹A, M⁻¹B)`` with ``params`` put in (``op`` by plain name, speeds
    ``q<k>'t``)."""
    t = dynamicsymbols._t
    q = dynamicsymbols(f"q1:{n + 1}")
    u = dynamicsymbols(f"u1:{n + 1}")
    g = dynamicsymbols("g")
    m, l, jx, jy, jz = sp.symbols("m l Jx Jy Jz")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    parent, joint, bodies, loads = N, O, [], []
    for k in range(n):
        if k > 0:
            nxt = joint.locatenew(f"P{k + 1}", -l * parent.z)
            nxt.v2pt_theory(joint, N, parent)
            joint = nxt
        frame = ReferenceFrame(f"L{k + 1}")
        axis = parent.x if k % 2 == 0 else parent.y
        frame.orient_axis(parent, axis, q[k])
        frame.set_ang_vel(parent, u[k] * axis)
        centre = joint.locatenew(f"G{k + 1}", -l / 2 * frame.z)
        centre.v2pt_theory(joint, N, frame)
        bodies.append(RigidBody(f"B{k + 1}", centre, frame, m,
                                (inertia(frame, jx, jy, jz), centre)))
        loads.append((centre, -m * g * N.z))
        parent = frame
    km = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[ui - qi.diff() for qi, ui in zip(q, u)])
    km.kanes_equations(bodies, loads)
    num = {sp.Symbol(k): v for k, v in params.items() if k != "g"}
    at = {**{s: op[f"q{k + 1}"] for k, s in enumerate(q)},
          **{s: op[f"q{k + 1}'t"] for k, s in enumerate(u)}, g: params["g"]}
    x = np.linalg.solve(np.array(km.mass_matrix_full.subs(at).subs(num), dtype=float),
                        np.array(km.forcing_full.subs(at).subs(num), dtype=float).ravel())
    acc = {s.diff(t): x[n + k] for k, s in enumerate(u)}
    qd = {s.diff(t): x[k] for k, s in enumerate(q)}
    M, A, B = km.to_linearizer(linear_solver="LU").linearize(op_point=[at, acc, qd])
    assert A.free_symbols <= set(num) and B.free_symbols <= set(num)   # symbolic
    M, A, B = (np.array(X.subs(num).evalf(), dtype=float) for X in (M, A, B))
    return np.linalg.solve(M, A), np.linalg.solve(M, B)


__all__ = ["chain_linearizer", "double_pendulum", "point_double_pendulum_omega2",
           "rolling_disc"]
