"""Equations in print: plain text (Unicode names intact) and JSON.

The printed form is the *structural* one — the named quantities with their short
formulas, then ``M`` and ``F`` over them — which stays short for big models. The
expanded form (every name substituted) is shown on request only.
"""

from __future__ import annotations

import json

import sympy

from kidym.eom.equations import Equations
from kidym.eom.system import speed_name
from kidym.symbolic.identifiers import IdentifierMap

#: Above this many operations in the named quantities, the expanded form is left out of
#: JSON unless asked for.
EXPANDED_LIMIT = 1_000


def to_text(eq: Equations, *, expanded: bool = False) -> str:
    """The equations as Unicode text: Cauchy form over named quantities.

    Parameters
    ----------
    eq : Equations
        Derived equations.
    expanded : bool
        Also print ``M`` and ``F`` with every name substituted (may be long).
    """
    m = eq.model
    out = [f"Model {m.name}: {eq.n_q} coordinates, {eq.n_w} speeds, {len(m.bodies)} bodies"]
    out.append("coordinates q: " + ", ".join(map(str, eq.coordinates)))
    out.append("speeds w:      " + ", ".join(map(str, eq.speeds)))
    if m.parameters:
        out.append("parameters:    " + ", ".join(f"{p.name} = {p.value:g}"
                                                 for p in m.parameters))
    out.append("")
    out.append("Kinematic equations  q̇ = B·w + β:")
    for q, rate in zip(eq.coordinates, eq.qdot):
        out.append(f"  {speed_name(str(q))} = {rate}")
    inter = eq.intermediates()
    out.append("")
    out.append(f"Named quantities ({len(inter)}, in evaluation order):")
    for s, expr in inter:
        out.append(f"  {s} = {expr}")
    out.append("")
    out.append(f"Mass matrix M (symmetric, {eq.n_w}×{eq.n_w}), upper triangle:")
    for i in range(eq.n_w):
        for j in range(i, eq.n_w):
            val = eq.mass_matrix_named[i][j]
            if val != 0:
                out.append(f"  M[{eq.speeds[i]}, {eq.speeds[j]}] = {val}")
    out.append("")
    out.append("Forcing F  (M·ẇ = F):")
    for w, f in zip(eq.speeds, eq.forcing_named):
        out.append(f"  F[{w}] = {f}")
    if expanded:
        out.append("")
        out.append("Expanded form:")
        for i in range(eq.n_w):
            for j in range(i, eq.n_w):
                out.append(f"  M[{eq.speeds[i]}, {eq.speeds[j]}] = "
                           f"{sympy.simplify(eq.mass_matrix[i, j])}")
        for i, w in enumerate(eq.speeds):
            out.append(f"  F[{w}] = {eq.forcing[i, 0]}")
    return "\n".join(out) + "\n"


def to_json(eq: Equations, *, expanded: bool | None = None) -> str:
    """Machine-readable equations (SPEC §4).

    Every expression is a string that :func:`sympy.sympify` parses, written with
    ASCII identifiers; ``symbols`` maps each identifier to its model name.
    ``intermediates`` lists the named quantities in evaluation order; the
    structural ``mass_matrix``/``forcing``/``kinematic_equations`` refer to them.
    ``mass_matrix_expanded``/``forcing_expanded`` (every name substituted) are
    included when ``expanded`` is true, or by default when the model is small.
    """
    ids = IdentifierMap()
    for s in (eq.graph.time, *eq.coordinates, *eq.speeds, *eq.parameters):
        ids(str(s))
    inter = eq.intermediates()
    for s, _ in inter:
        ids(str(s))

    def text(expr) -> str:
        sym = sympy.sympify(expr)
        rename = {s: sympy.Symbol(ids(s.name)) for s in sym.free_symbols}
        return str(sym.xreplace(rename))

    doc: dict = {
        "model": eq.model.name,
        "coordinates": [ids(str(q)) for q in eq.coordinates],
        "speeds": [ids(str(w)) for w in eq.speeds],
        "parameters": {ids(p.name): p.value for p in eq.model.parameters},
        "time": ids("t"),
        "kinematic_equations": [text(x) for x in eq.qdot],
        "intermediates": [[ids(str(s)), text(e)] for s, e in inter],
        "mass_matrix": [[text(x) for x in row] for row in eq.mass_matrix_named],
        "forcing": [text(x) for x in eq.forcing_named],
    }
    if expanded is None:
        size = sum(sympy.count_ops(sympy.sympify(e)) for _, e in inter)
        expanded = size < EXPANDED_LIMIT
    if expanded:
        doc["mass_matrix_expanded"] = [[text(eq.mass_matrix[i, j]) for j in range(eq.n_w)]
                                       for i in range(eq.n_w)]
        doc["forcing_expanded"] = [text(eq.forcing[i, 0]) for i in range(eq.n_w)]
    doc["symbols"] = dict((ident, name) for name, ident in ids.items())
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
