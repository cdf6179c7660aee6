"""Equations in print: structural form short, expanded form equal to it; LaTeX compiles."""

import json
import shutil
import subprocess

import numpy as np
import pytest
import symengine as se
import sympy

import kidym
from kidym.cli import main
from kidym.report.equations import compact_legend, equation_set, motion_lhs, to_json
from kidym.report.latex import latex_document, markdown_of
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES
from tests.oracles import sympy_mechanics as oracles

BALL = EXAMPLES / "ball" / "ball.kdm"
MODELS = [EXAMPLES / "biped" / "biped.kdm", BALL]


def _structural_values(eq, values: dict) -> list[float]:
    """``U_i = Σ M_ij ẇ_j − F_i`` by evaluating the named quantities one by one."""
    env = dict(values)
    for sym, formula in eq.intermediates(motion_lhs(eq)):
        env[sym] = float(formula.xreplace({k: se.Float(v) for k, v in env.items()
                                           if k in formula.free_symbols}))
    return [float(u.xreplace({k: se.Float(v) for k, v in env.items()
                              if k in u.free_symbols})) for u in motion_lhs(eq)]


@pytest.mark.slow
@pytest.mark.parametrize("path", MODELS)
def test_structural_form_is_short_and_equals_expanded(path):
    eq = kidym.derive(kidym.load(path))
    es = equation_set(eq, stage="final", expanded=True, simplify_budget=0)
    s = es.sizes
    print(f"{path.name}: structural {s['structural']} + named {s['named']} "
          f"({s['named_count']} quantities) vs expanded {s['expanded']} operations")
    assert len(es.motion) == eq.n_w
    assert s["structural"] + s["named"] < s["expanded"] / 5
    # expanded (SymPy view, every name substituted) vs structural, at random states
    M, F = eq.mass_matrix, eq.forcing
    rng = np.random.default_rng(1)
    params = {se.Symbol(p.name): p.value for p in eq.model.parameters}
    wdot = [se.Symbol(f"{w}'t") for w in eq.speeds]
    for _ in range(3):
        state = {s: rng.uniform(-1, 1) for s in (*eq.coordinates, *eq.speeds)}
        acc = {a: rng.uniform(-1, 1) for a in wdot}
        vals = {**params, **state, **acc, eq.graph.time: 0.3}
        structural = np.array(_structural_values(eq, vals))
        at = {a: vals[se.Symbol(str(a))] for a in _args(eq)}
        expanded = (_evaluate(M, at) @ np.array([acc[a] for a in wdot])
                    - _evaluate(F, at).ravel())
        np.testing.assert_allclose(structural, expanded, rtol=1e-9,
                                   atol=1e-9 * np.abs(expanded).max())
    assert any("operations" in w for w in es.warnings) or s["expanded"] <= 20_000


def _args(eq):
    return [sympy.Symbol(str(s)) for s in (eq.graph.time, *eq.coordinates, *eq.speeds,
                                           *eq.parameters)]


def _evaluate(matrix: sympy.Matrix, at: dict) -> np.ndarray:
    """``matrix`` at the point ``at`` (symbol: number), in SymPy's arithmetic: numbers
    put in and the entries evaluated. For the biped's expanded matrices this takes
    seconds where ``sympy.lambdify`` took minutes printing them as NumPy code."""
    numbers = {a: sympy.Float(v) for a, v in at.items()}
    return np.array(matrix.xreplace(numbers).evalf().tolist(), dtype=float)


def test_printed_equations_match_kanes_method():
    """The per-speed equations in JSON, against SymPy's KanesMethod (independent)."""
    eq = kidym.derive(kidym.parse(DOUBLE_PENDULUM))
    doc = json.loads(to_json(eq))
    local = {ident: sympy.Symbol(ident) for ident in doc["symbols"]}
    inter = [(local[k], sympy.sympify(v, locals=local)) for k, v in doc["intermediates"]]
    ref = oracles.double_pendulum()
    rng = np.random.default_rng(7)
    back = doc["symbols"]
    for _ in range(3):
        state = {str(s): rng.uniform(-2, 2) for s in (*ref.coordinates, *ref.speeds)}
        M_ref, F_ref = ref.evaluate({**state, "m1": 1.3, "m2": 0.7, "l1": 1.1, "l2": 0.9,
                                     "g": 9.81})
        acc = rng.uniform(-1, 1, size=2)
        env = {local[i]: v for i, v in doc["parameters"].items()}
        for ident in doc["coordinates"]:
            env[local[ident]] = state[_oracle_name(back[ident], ref)]
        for ident in doc["speeds"]:
            env[local[ident]] = state[_oracle_name(back[ident], ref)]
        env.update({local[a]: x for a, x in zip(doc["accelerations"], acc)})
        env[local[doc["time"]]] = 0.0
        for sym, formula in inter:
            env[sym] = float(formula.xreplace(env))
        U = [float(sympy.sympify(u, locals=local).xreplace(env)) for u in doc["equations"]]
        np.testing.assert_allclose(U, M_ref @ acc - F_ref, rtol=1e-10, atol=1e-10)


def _oracle_name(name: str, ref) -> str:
    """Our ``phi1``/``phi1't`` to the oracle's coordinate/speed symbol names."""
    names = [str(s) for s in (*ref.coordinates, *ref.speeds)]
    if name in names:
        return name
    base = name[:-2] if name.endswith("'t") else name
    k = [str(q) for q in ref.coordinates].index(base)
    return str(ref.speeds[k]) if name.endswith("'t") else str(ref.coordinates[k])


needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="needs pdflatex (texlive-latex-base)")


@needs_pdflatex
@pytest.mark.slow
@pytest.mark.parametrize("path,stage,expanded", [
    (EXAMPLES / "double_pendulum" / "double_pendulum.kdm", "final", True),
    (EXAMPLES / "wing_nut" / "wing_nut.kdm", "cauchy", False),
    (EXAMPLES / "biped" / "biped.kdm", "final", False),
    # readable names: X~2 of the two stages, the legend's M_hol, a virtual bound's f⁻
    (EXAMPLES / "free_body" / "free_body.kdm", "cauchy", False),
    (EXAMPLES / "skier" / "skier.kdm", "cauchy", False),
    (EXAMPLES / "virtual_constraints" / "test6_planes.kdm", "cauchy", False),
    # the compact form in readable names: Z̈_C(Top), ω̇_x(Top) and their legend
    (EXAMPLES / "heavy_top" / "heavy_top.kdm", "final", False),
])
def test_latex_compiles_with_pdflatex(path, stage, expanded, tmp_path):
    eq = kidym.derive(kidym.load(path))
    tex = tmp_path / "eq.tex"
    tex.write_text(latex_document(equation_set(eq, stage=stage, expanded=expanded,
                                               simplify_budget=5)), encoding="utf-8")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           tex.name], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "eq.pdf").stat().st_size > 1000


def test_markdown_has_one_display_per_equation():
    eq = kidym.derive(kidym.parse(DOUBLE_PENDULUM))
    es = equation_set(eq)
    md = markdown_of(es)
    n_displays = md.count("$$") // 2
    compact = len(es.compact.equations) + len(es.compact.where)
    assert compact >= len(es.motion)   # the compact form (seed 000 eq. (25)) and its where
    compact += len(compact_legend(es.compact))   # and the legend of its names (X_C(B) …)
    legend = es.names.legend(str(r.lhs) for r in es.intermediates)   # one display a kind
    assert n_displays == (len(es.kinematic) + len(es.motion) + len(es.intermediates)
                          + compact + len(legend))
    assert r"\ddot{\varphi}_{1}" in md  # φ̈1 typeset


def test_simplification_budget_is_kept_with_a_warning():
    eq = kidym.derive(kidym.load(EXAMPLES / "wing_nut" / "wing_nut.kdm"))
    es = equation_set(eq, stage="cauchy", expanded=True, simplify_budget=0.01)
    assert any("budget" in w for w in es.warnings)
    # whatever was or was not simplified is still the same M and F
    exp = {str(r.lhs): r.rhs for r in es.expanded}
    rng = np.random.default_rng(3)
    vals = {sympy.Symbol(str(s)): rng.uniform(-1, 1) for s in (*eq.coordinates, *eq.speeds)}
    vals.update({sympy.Symbol(p.name): p.value for p in eq.model.parameters})
    w = [str(s) for s in eq.speeds]
    for i in range(eq.n_w):
        got = float(sympy.sympify(exp[f"M[{w[i]}, {w[i]}]"]).xreplace(vals))
        assert got == pytest.approx(float(eq.mass_matrix[i, i].xreplace(vals)), rel=1e-12)


def test_holonomic_stage_of_holonomic_model_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    assert main(["equations", str(path), "--stage", "holonomic"]) == 1
    err = capsys.readouterr().err
    assert "no holonomic stage" in err and "Traceback" not in err


@pytest.mark.skipif(not BALL.exists(), reason="examples/ball not there yet")
def test_ball_holonomic_stage_prints():
    eq = kidym.derive(kidym.load(BALL))
    es = equation_set(eq, stage="holonomic")
    assert len(es.motion) == eq.holonomic.n_w
    assert "Куля" in latex_document(es)


@pytest.mark.parametrize("fmt", ["text", "latex", "markdown", "json"])
def test_cli_formats_keep_names(fmt, tmp_path, capsys):
    path = tmp_path / "u.kdm"
    path.write_text("m = 1; Куля | Rz(φ) | Sx(1), m, 0, 0, 0; GRAVITY := 0, -g, 0;",
                    encoding="utf-8")
    assert main(["equations", str(path), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        doc = json.loads(out)
        assert "φ't" in doc["symbols"].values() and doc["equations"]
    elif fmt == "text":
        assert "φ't" in out and "Куля" in out
    else:
        assert r"\varphi" in out and "Куля" in out


def test_report_summary_gives_the_integrability_verdict():
    # seed 000: the ball's rolling constraints (22) are non-holonomic; with the
    # quaternion's norm, 6 coordinates move with 3 speeds. The double pendulum has none.
    from kidym.report.html import integrability

    verdict = integrability(kidym.derive(kidym.load(BALL)))
    assert verdict.startswith("3 on the velocities") and "non-holonomic" in verdict
    pendulum = kidym.derive(kidym.load(EXAMPLES / "double_pendulum/double_pendulum.kdm"))
    assert integrability(pendulum) == "none on the velocities: holonomic system"
