"""The compact form of the equations (seed 000 eq. (25)) in the model's names.

Oracles: the ball's three lines as seed 000 prints them (25), parsed from the paper's
LaTeX; and, for the cart-pole and the slider-crank, the structural equations
``M ẇ − F − Gᵀλ`` of :func:`kidym.derive` with the accelerations of the compact form
written out by differentiating their positions (a second route to the same equations).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import sympy
from sympy.parsing.sympy_parser import (
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

import kidym
from kidym.report.compact import compact_form
from kidym.report.equations import equation_set, text_of
from kidym.report.latex import latex_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: seed 000, eq. (25), as printed (the paper's LaTeX, copied from the seed's text)
SEED_25 = r"""
J\dot{\omega}_{ХКуля} - am \{ (R-zC)\ddot{y}_C + yC(\ddot{z}_C + g) \} &= 0; \\
J\dot{\omega}_{УКуля} + am \{ (R-zC)\ddot{x}_C + xC(\ddot{z}_C + g) \} &= 0; \\
J\dot{\omega}_{ZКуля} + am \{ yC\ddot{x}_C - xC\ddot{y}_C \} &= 0.
"""


def _seed_rows() -> list[sympy.Expr]:
    """The three left-hand sides of (25) as SymPy expressions over the model's names
    (the paper's ``ωХКуля`` with Cyrillic Х/У is kidym's ``ωXКуля``)."""
    names = {"ωXdot": "ωXКуля't", "ωYdot": "ωYКуля't", "ωZdot": "ωZКуля't",
             "xdd": "xC't't", "ydd": "yC't't", "zdd": "zC't't"}
    rows = []
    for line in SEED_25.strip().splitlines():
        lhs = line.split("&=")[0]
        for pat, rep in ((r"\\dot\{\\omega\}_\{ХКуля\}", " ωXdot "),
                         (r"\\dot\{\\omega\}_\{УКуля\}", " ωYdot "),
                         (r"\\dot\{\\omega\}_\{ZКуля\}", " ωZdot "),
                         (r"\\ddot\{([xyz])\}_C", r" \1dd "),
                         (r"\\\{", "("), (r"\\\}", ")"),
                         (r"\bam\b", "a*m"), (r"\b([xyz])C\b", r" \1C ")):
            lhs = re.sub(pat, rep, lhs)
        symbols = {k: sympy.Symbol(v) for k, v in names.items()}
        symbols.update({s: sympy.Symbol(s) for s in ("J", "a", "m", "R", "g", "xC", "yC",
                                                     "zC")})
        rows.append(parse_expr(lhs, local_dict=symbols, transformations=(
            *standard_transformations, implicit_multiplication_application)))
    return rows


@pytest.fixture(scope="module")
def ball():
    return kidym.derive(kidym.load(EXAMPLES / "ball" / "ball.kdm"))


def test_ball_compact_form_is_seed_000_eq_25(ball):
    cf = compact_form(ball)
    assert not cf.reason
    assert cf.speeds == ["ωXКуля", "ωYКуля", "ωZКуля"]
    seed = _seed_rows()
    # the model's definitions: zC (20) and a; the paper's equations hold with them
    xC, yC, R, r = sympy.symbols("xC yC R r")
    zC = sympy.Symbol("zC")
    defs = {zC: R - sympy.sqrt((R - r) ** 2 - xC ** 2 - yC ** 2),
            sympy.Symbol("a"): r / (R - r)}
    for ours, theirs in zip(cf.equations, seed):
        diff = (ours - theirs).xreplace(defs)
        assert sympy.simplify(diff) == 0, (ours, theirs)
    # in the model's names: no generated quantity, the definitions kept
    used = {str(s) for u in cf.equations for s in u.free_symbols}
    assert used <= {"J", "a", "m", "R", "g", "xC", "yC", "zC", "xC't't", "yC't't",
                    "zC't't", "ωXКуля't", "ωYКуля't", "ωZКуля't"}, used


def _acceleration_values(eq, cf) -> dict[sympy.Symbol, sympy.Expr]:
    """Every acceleration symbol of the compact form as the second time derivative of
    what it names, with ẇ symbols (the second route)."""
    t = sympy.Symbol("t")
    q = [sympy.Symbol(str(x)) for x in eq.coordinates]
    w = [sympy.Symbol(str(x)) for x in eq.speeds]
    wd = [sympy.Symbol(f"{x}'t") for x in eq.speeds]
    assert all(str(x) == f"{c}'t" for x, c in zip(eq.speeds, eq.coordinates))  # holonomic
    fn = {qi: sympy.Function(f"F_{i}")(t) for i, qi in enumerate(q)}
    back = {**{sympy.diff(f, t, 2): a for f, a in zip(fn.values(), wd)},
            **{sympy.diff(f, t): v for f, v in zip(fn.values(), w)},
            **{f: qi for qi, f in fn.items()}}
    where = dict(cf.where)
    out = {}
    for acc, name in cf.accelerations.items():
        sym = sympy.Symbol(name)
        if sym in w:
            continue
        pos = where.get(sym, sym)
        order = 2 if str(acc).endswith("'t't") else 1
        d = sympy.diff(pos.xreplace(fn), t, order)
        for k in sorted(back, key=lambda e: -sympy.count_ops(e)):
            d = d.xreplace({k: back[k]})
        out[acc] = d
    return out


@pytest.mark.parametrize("path", ["optimal_control/cart_pole.kdm",
                                  "slider_crank/slider_crank.kdm", "moving guide"])
def test_compact_form_is_the_structural_form(path):
    """The examples, and a time-dependent loop (a slider crank whose guide moves)."""
    if path == "moving guide":
        from tests.eom.test_constraints import SLIDER_TEXT
        eq = kidym.derive(kidym.parse(SLIDER_TEXT))
        assert sympy.Symbol("t") in eq.forcing.free_symbols   # M0 sin(W t) on ωZCrank
    else:
        eq = kidym.derive(kidym.load(EXAMPLES / path))
    cf = compact_form(eq)
    assert not cf.reason
    values = _acceleration_values(eq, cf)
    M, F = eq.mass_matrix, eq.forcing
    wd = sympy.Matrix([sympy.Symbol(f"{x}'t") for x in eq.speeds])
    U = M * wd - F
    if eq.constraints is not None:
        G = sympy.Matrix([[eq.graph.expand(g) for g in row] for row in eq.constraints.jacobian])
        lam = sympy.Matrix([sympy.Symbol(n) for n in eq.constraints.multiplier_names])
        U -= G.T * lam
    params = {sympy.Symbol(p.name): sympy.Symbol(p.name) for p in eq.model.parameters}
    assert params
    for k, u in enumerate(cf.equations):
        assert sympy.simplify(u.xreplace(values) - sympy.sympify(U[k])) == 0, k


def test_text_latex_show_the_compact_form_in_the_model_names():
    eq = kidym.derive(kidym.load(EXAMPLES / "optimal_control" / "cart_pole.kdm"))
    es = equation_set(eq, stage="final")
    text = text_of(es)
    assert "compact form" in text and "x't't" in text and "theta't't" in text
    tex = latex_document(es)
    assert r"\ddot{\theta}" in tex and r"\ddot{x}_{C,\mathrm{Pole}}" in tex
    assert "Equations of motion, compact form" in tex


def test_a_big_model_gives_the_compact_form_up_with_a_reason(ball):
    cf = compact_form(ball, max_ops=10)
    assert cf.equations == [] and "more than 10 operations" in cf.reason
    es = dataclasses.replace(equation_set(ball, stage="final", compact=False), compact=cf)
    assert f"({cf.reason}; the structural form follows)" in text_of(es)


def test_jupyter_shows_the_compact_form_of_the_ball(ball):
    tex = ball._repr_latex_()
    # J ω̇ over the speeds as written, the mass centre's accelerations as ẍ_C …
    assert r"\ddot{x}_{C}" in tex and r"\ddot{z}_{C}" in tex
    assert r"\dot{\omega}_{X,\text{Куля}}" in tex
    assert "MB" not in tex and "Fhol" not in tex   # no internal names


def test_json_carries_the_compact_form_sympify_able(ball):
    import json

    from kidym.report.equations import to_json

    doc = json.loads(to_json(ball))
    names = doc["symbols"]
    got = [sympy.sympify(u) for u in doc["compact"]["equations"]]
    got = [u.xreplace({s: sympy.Symbol(names[s.name]) for s in u.free_symbols}) for u in got]
    assert got == compact_form(ball).equations
