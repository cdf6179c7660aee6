"""The two-stage algorithm of seed 000 (eqs. (13), (16)–(18)).

Stage 1: the equations ``U_hol = M_hol q̈ − F_hol = 0`` of the *holonomic* system in
generalized coordinates — every coordinate has its own speed ``q̇``, the velocity
equations are ignored, a quaternion body turns with ``ω = 2 vec(Λ̄∘Λ̇)/|Λ|²``.

Stage 2: with the velocity equations ``q̇ = B(q,t) w + β(q,t)`` (user formulas
``x't = …`` and quaternion kinematics), ``B = ∂q̇/∂w`` by analytic differentiation
and ``q̈ = B ẇ + a⁰`` (``a⁰`` the velocity part of ``dq̇/dt``),

    U = Bᵀ U_hol(q, Bw + β, Bẇ + a⁰)      M = ∂U/∂ẇ = Bᵀ M_hol B
    F = −U|ẇ=0 = Bᵀ (F_hol − M_hol a⁰)        Π = Bᵀ W_Pᵀ P  (pseudo-forces, eq. (16))

The holonomic quantities are carried into the graph of the final system name by
name, with ``q̇`` replaced by the final system's rates: nothing is expanded.
"""

from __future__ import annotations

from dataclasses import dataclass

import symengine as se

from kidym.eom.structural import Structural
from kidym.eom.system import SystemGraph

Expr = se.Basic
ZERO = se.Integer(0)


@dataclass(frozen=True)
class Projected:
    """Stage-2 result over the final graph's named quantities.

    Attributes
    ----------
    mass_matrix, forcing : list
        ``M`` (n_w, n_w) and ``F`` (n_w,).
    pseudo_forces : list
        ``Π = Bᵀ W_Pᵀ P``, shape (n_w,).
    kinetic_energy, potential_energy : Expr
        The holonomic system's ``T``, ``Π`` with ``q̇ = Bw + β``.
    B : list of list of Expr
        ``∂q̇/∂w``, shape (n_q, n_w), over named quantities.
    """

    mass_matrix: list[list[Expr]]
    forcing: list[Expr]
    pseudo_forces: list[Expr]
    kinetic_energy: Expr
    potential_energy: Expr
    B: list[list[Expr]]


def transplant(source: SystemGraph, target: SystemGraph, roots: list[Expr]) -> list[Expr]:
    """``roots`` of the holonomic graph rewritten in the final graph, name by name.

    The holonomic speeds ``q't`` become the final rates ``q̇ = Bw + β``.
    """
    g = target.graph
    mapping: dict[se.Symbol, Expr] = dict(zip(source.speeds, target.qdot))
    for s in source.graph.needed(roots):
        f = source.graph.formula(s)
        local = {x: mapping[x] for x in f.free_symbols if x in mapping}
        f = f.xreplace(local) if local else f
        same = se.Symbol(str(s))
        if same in g and g.formula(same) == f:
            mapping[s] = same  # the final graph already has it (e.g. positions, S)
        else:
            mapping[s] = g.define(str(s).split("~")[0], f)

    def carry(e: Expr) -> Expr:
        e = se.sympify(e)
        local = {x: mapping[x] for x in e.free_symbols if x in mapping}
        return e.xreplace(local) if local else e

    return [carry(r) for r in roots]


def project(holonomic: SystemGraph, hol: Structural, final: SystemGraph) -> Projected:
    """Stage 2: ``U = Bᵀ U_hol`` in the final system's speeds (see module docstring)."""
    g = final.graph
    nq, nw = len(final.coordinates), len(final.speeds)
    upper = [(i, j) for i in range(nq) for j in range(i, nq)]
    roots = ([hol.mass_matrix[i][j] for i, j in upper] + list(hol.forcing)
             + list(hol.element_forces) + [hol.kinetic_energy, hol.potential_energy])
    carried = transplant(holonomic, final, roots)
    Mh = [[ZERO] * nq for _ in range(nq)]
    for (i, j), x in zip(upper, carried):
        Mh[i][j] = Mh[j][i] = x
    k = len(upper)
    Fh, Ph = carried[k:k + nq], carried[k + nq:k + 2 * nq]
    T, PI = carried[-2], carried[-1]
    qn = [str(q) for q in final.coordinates]
    B = [[g.diff(x, w) for w in final.speeds] for x in final.qdot]
    a0 = [g.dt(x) for x in final.qdot]
    # named: M_hol B (columns) and the holonomic forcing less the inertia of a⁰
    MB = [[g.define(f"MB{qn[r]}'{w}", sum((Mh[r][c] * B[c][j] for c in range(nq)), ZERO))
           for j, w in enumerate(final.speeds)] for r in range(nq)]
    G = [g.define(f"Fhol{qn[r]}", Fh[r] - sum((Mh[r][c] * a0[c] for c in range(nq)), ZERO))
         for r in range(nq)]
    M = [[ZERO] * nw for _ in range(nw)]
    for i in range(nw):
        for j in range(i, nw):
            M[i][j] = sum((B[r][i] * MB[r][j] for r in range(nq)), ZERO)
            M[j][i] = M[i][j]
    F = [sum((B[r][i] * G[r] for r in range(nq)), ZERO) for i in range(nw)]
    Pi = [sum((B[r][i] * Ph[r] for r in range(nq)), ZERO) for i in range(nw)]
    return Projected(mass_matrix=M, forcing=F, pseudo_forces=Pi, kinetic_energy=T,
                     potential_energy=PI, B=B)
