"""The compact form of the equations (seed 000 eq. (25)) in the model's names.

Oracles: the ball's three lines as seed 000 prints them (25), parsed from the paper's
LaTeX; and, for the cart-pole and the slider-crank, the structural equations
``M ẇ − F − Gᵀλ`` of :func:`kidym.derive` with the accelerations of the compact form
written out by differentiating their positions (a second route to the same equations).
"""

from __future__ import annotations

import dataclasses
import json
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
from kidym.report.equations import compact_lines, equation_set, text_of, to_json
from kidym.report.latex import latex_document, markdown_of

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
    text = _compact_text(text_of(es))
    # the model's names as written; the pole's centre as the structural form prints
    # XOCPole, its acceleration dotted on the letter (readable.py's rule)
    assert "x't't" in text and "theta't't" in text
    assert "Ẍ_C(Pole)" in text and "X_C(Pole) = " in text and "XCPole" not in text
    assert "X_C(B)   mass centre of B in the fixed frame" in text   # its legend
    tex = latex_document(es)
    assert r"\ddot{\theta}" in tex
    assert r"\ddot{X}_{C}\left(\mathrm{Pole}\right)" in tex and "XCPole" not in tex
    assert "Equations of motion, compact form" in tex
    assert "How the names of the compact form read" in tex
    md = markdown_of(es)
    assert r"\ddot{X}_{C}\left(\mathrm{Pole}\right)" in md and "XCPole" not in md


def test_a_big_model_gives_the_compact_form_up_with_a_reason(ball):
    cf = compact_form(ball, max_ops=10)
    assert cf.equations == [] and "more than 10 operations" in cf.reason
    es = dataclasses.replace(equation_set(ball, stage="final", compact=False), compact=cf)
    assert f"({cf.reason}; the structural form follows)" in text_of(es)


def test_jupyter_shows_the_compact_form_of_the_ball(ball):
    tex = ball._repr_latex_()
    # J ω̇ over the speeds as written, the mass centre's accelerations as ẍ_C …
    assert r"\ddot{x}_{C}" in tex and r"\ddot{z}_{C}" in tex
    # the speeds as the model writes them, typeset as the structural form types them
    assert r"\dot{\omega}_{\mathrm{X}\text{Куля}}" in tex
    assert "MB" not in tex and "Fhol" not in tex   # no internal names


def test_json_carries_the_compact_form_sympify_able(ball):
    doc = json.loads(to_json(ball))
    names = doc["symbols"]
    got = [sympy.sympify(u) for u in doc["compact"]["equations"]]
    got = [u.xreplace({s: sympy.Symbol(names[s.name]) for s in u.free_symbols}) for u in got]
    assert got == compact_form(ball).equations


def test_json_prints_the_compact_names_beside_the_internal_ones():
    eq = kidym.derive(kidym.load(EXAMPLES / "optimal_control" / "cart_pole.kdm"))
    doc = json.loads(to_json(eq))
    compact = doc["compact"]
    internal = {doc["symbols"][k]: v for k, v in compact["printed"].items()}
    assert internal["XCPole"] == "X_C(Pole)" and internal["XCPole't't"] == "Ẍ_C(Pole)"
    assert internal["x't't"] == "x't't" and internal["theta"] == "theta"   # as written
    assert len(set(internal.values())) == len(internal)                     # unique
    # the top-level map agrees for every name the compact form made
    assert all(doc["printed"][k] == v for k, v in compact["printed"].items())
    assert ["X_C(B)", "mass centre of B in the fixed frame"] in compact["legend"]


# ----------------------------------------------------------- printed names read back
#: an isotropic body on two turns (its ω is shorter on the fixed axes, not a sum of
#: speeds: ``ω_X(Ball) = theta't cos(psi)``), off its pivot, a spring, a moment in time
#: and an inertial element on its centre's X (a name of the kinematics)
ISOTROPIC = """
m = 1; J = 0.1; a = 0.3; k = 2; mj = 0.4; M0 = 0.5; W = 2; g = 9.81;
Ball | Rz(psi), Rx(theta) | Sy(a), m(m), Jx(J), Jy(J), Jz(J);
C.theta = k;
J.XCBall = mj;
Pm.psi = M0*sin(W*t);
GRAVITY := 0, 0, -g;
"""

#: a heavy top on a quaternion (pseudo-velocities ωXTop … on its axes)
QUATERNION_TOP = """
m = 0.5; l = 0.02; g = 9.81; A0 = 2e-4; C = 3e-4;
Top | Q(l0, l1, l2, l3) | Sz(l), m(m), Jx(A0), Jy(A0), Jz(C);
QUATERNION := Q(l0, l1, l2, l3), Rx(alpha), Ry(beta), Rz(psi);
GRAVITY := 0, 0, -g;
"""


def _compact_text(text: str) -> str:
    """The compact form's block of the text form."""
    start = text.index("Equations of motion, compact form")
    return text[start:text.index("\n\n", start)]


def _read_compact(text: str, doc: dict) -> tuple[list[sympy.Expr], list[tuple]]:
    """The compact form's printed lines read back through JSON's printed → internal map:
    the equations' left-hand sides and the *where* pairs, in internal names."""
    printed, internal = doc["compact"]["printed"], doc["symbols"]
    back = {printed[k]: internal[k] for k in printed}
    assert len(back) == len(printed)                # no two names print alike
    order = sorted(back, key=len, reverse=True)
    slot = {p: f"zz{k}zz" for k, p in enumerate(order)}
    local = {slot[p]: sympy.Symbol(back[p]) for p in order}
    pattern = re.compile(r"(?<![\w'])(" + "|".join(map(re.escape, order)) + r")(?![\w'])")

    def read(part: str) -> sympy.Expr:
        expr = sympy.sympify(pattern.sub(lambda m: slot[m.group(1)], part), locals=local)
        unknown = {str(s) for s in expr.free_symbols} - set(back.values())
        assert not unknown, f"not a printed name: {unknown} in {part}"
        return expr

    equations, where = [], []
    lines = text.splitlines()[1:]
    for line in lines:
        line = line.strip()
        if line.startswith("where the names read"):
            break
        if line.startswith("["):
            equations.append(read(line.split("]  ", 1)[1].removesuffix(" = 0")))
        elif " = " in line:
            lhs, rhs = line.split(" = ", 1)
            where.append((back[lhs], read(rhs)))
    return equations, where


def _same(a: sympy.Expr, b: sympy.Expr) -> bool:
    return a == b or sympy.simplify(a - b) == 0


def _model(which: str):
    if which == "moving guide":
        from tests.eom.test_constraints import SLIDER_TEXT
        return kidym.derive(kidym.parse(SLIDER_TEXT))
    texts = {"isotropic": ISOTROPIC, "quaternion top": QUATERNION_TOP}
    if which in texts:
        return kidym.derive(kidym.parse(texts[which], name=which.replace(" ", "_")))
    return kidym.derive(kidym.load(EXAMPLES / which))


@pytest.mark.parametrize("which", [
    "double_pendulum/double_pendulum.kdm", "ball/ball.kdm", "four_bar/four_bar.kdm",
    "free_body/free_body.kdm", "quaternion top", "isotropic", "moving guide"])
def test_printed_compact_form_reads_back_as_the_internal_one(which):
    """Second route: the printed text, each printed name mapped back to its internal
    name (JSON's ``compact.printed`` and ``symbols``), is the compact form itself."""
    eq = _model(which)
    cf = compact_form(eq)
    assert not cf.reason
    equations, where = _read_compact(_compact_text(text_of(equation_set(eq))),
                                     json.loads(to_json(eq)))
    assert len(equations) == len(cf.equations) == eq.n_w
    for got, want in zip(equations, cf.equations):
        assert _same(got, want), (got, want)
    assert [lhs for lhs, _ in where] == [str(s) for s, _ in cf.where]
    for (_, got), (_, want) in zip(where, cf.where):
        assert _same(got, want), (got, want)
    made = {n for n in cf.symbols() if cf.names.text(n) != n}
    if which in ("isotropic", "quaternion top", "double_pendulum/double_pendulum.kdm"):
        assert made   # (names the compact form made are printed readably)
    if which == "isotropic":
        assert cf.names.text("ωXBall#λ") == "ω_X(Ball)"       # the fixed axes: capital
        assert cf.names.text("ωXBall#λ't") == "ω̇_X(Ball)"
        assert cf.names.text("XCBall't't") == "Ẍ_C(Ball)"


def test_the_ball_printed_and_read_back_is_seed_000_eq_25(ball):
    """(25) compared with what is printed, not with the internal form."""
    equations, _ = _read_compact(_compact_text(text_of(equation_set(ball))),
                                 json.loads(to_json(ball)))
    xC, yC, R, r = sympy.symbols("xC yC R r")
    defs = {sympy.Symbol("zC"): R - sympy.sqrt((R - r) ** 2 - xC ** 2 - yC ** 2),
            sympy.Symbol("a"): r / (R - r)}
    for ours, theirs in zip(equations, _seed_rows(), strict=True):
        assert sympy.simplify((ours - theirs).xreplace(defs)) == 0, (ours, theirs)


#: prefixes of the internal names the compact form makes or uses (never printed)
_RAW = re.compile(r"(?:^|[^\w'])(?:[XYZ]C|[XYZ]O|ω[XYZ]|S[123][123])\w")


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*/*.kdm")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_internal_name_in_the_compact_form_of_any_example(path):
    eq = kidym.derive(kidym.load(path))
    cf = equation_set(eq, stage="final").compact
    text = "\n".join(compact_lines(cf))
    if cf.reason:   # (given up: one line saying why, the structural form follows)
        assert text.strip() == f"({cf.reason}; the structural form follows)"
        return
    model = {str(s) for s in (*eq.coordinates, *eq.speeds, *eq.parameters)}
    model |= {d.name for d in eq.model.definitions} | {"t"}
    model |= set(eq.model.controls) | set(eq.model.inputs)
    if eq.constraints is not None:
        model |= set(eq.constraints.multiplier_names)
    for name in cf.symbols():
        shown = cf.names.text(name)
        if shown == name:   # as written: a name of the model or its rate
            assert re.sub(r"(?:'t)+$", "", name) in model | {n + "'t" for n in model}, name
            continue
        assert name not in text, name                       # the internal name
        assert "#" not in shown and not _RAW.search(shown), shown
    bodies = "|".join(re.escape(b.name) for b in eq.model.bodies)
    for token in re.findall(rf"(?<![\w'])(?:[XYZ]C|ω[XYZ])(?:{bodies})\b", text):
        assert token in model, token   # only the speeds a model names so (free_body)


def test_report_and_jupyter_typeset_the_compact_names(tmp_path):
    from kidym.cli import main

    path = EXAMPLES / "double_pendulum" / "double_pendulum.kdm"
    assert main(["run", str(path), "--engine", "numpy", "--t-end", "0.1", "--out",
                 str(tmp_path / "o"), "--report", "--no-plots", "-q"]) == 0
    for page in ("report.html", "report.md"):
        source = (tmp_path / "o" / page).read_text(encoding="utf-8")
        assert r"\ddot{X}_{C}\left(\mathrm{Rod2}\right)" in source, page
        assert "How the names of the compact form read" in source, page
        assert "XCRod" not in source, page
    tex = kidym.derive(kidym.load(path))._repr_latex_()
    assert r"\ddot{Y}_{C}\left(\mathrm{Rod1}\right)" in tex and "XCRod" not in tex
