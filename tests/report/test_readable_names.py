"""The structural form printed in readable names (``agXRod2#1`` → ``a_x(Rod2)⁽¹⁾``).

Second route: the printed text, read back (each printed name mapped to its quantity),
evaluates to the same ``M``, ``F`` (and ``γ``) as the internal named quantities
evaluated directly. Across every example: no two quantities printed alike, no internal
marker left, every kind of name explained in the legend.
"""

import json
import random
import re

import pytest
import symengine as se
import sympy

import kidym
from kidym.cli import main
from kidym.report.equations import equation_set, text_of
from kidym.report.latex import latex_document, markdown_of
from kidym.report.readable import LEGEND, NameTable, latex_text
from tests.fixtures import EXAMPLES

#: a holonomic chain, seed 000's ball (pseudo-velocities, quaternion, two-stage), a free
#: body on a quaternion, a non-holonomic sleigh, a closed loop, a time-dependent link,
#: controls held by programmed constraints
SECOND_ROUTE = [EXAMPLES / "double_pendulum" / "double_pendulum.kdm",
                EXAMPLES / "ball" / "ball.kdm",
                EXAMPLES / "free_body" / "free_body.kdm",
                EXAMPLES / "chaplygin_sleigh" / "chaplygin_sleigh.kdm",
                EXAMPLES / "four_bar" / "four_bar.kdm",
                EXAMPLES / "variable_links" / "one_link_prescribed.kdm",
                EXAMPLES / "two_link_control" / "two_link_control.kdm"]


def _values(eq, seed: int = 3) -> dict[str, float]:
    """A state, parameters and time away from special positions, by name."""
    rnd = random.Random(seed)
    out = {str(s): rnd.uniform(0.2, 0.9) for s in (*eq.coordinates, *eq.speeds)}
    out.update({p.name: p.value for p in eq.model.parameters})
    out[str(eq.graph.time)] = 0.37
    return out


def _internal(es, values: dict[str, float]) -> dict[str, float]:
    """The named quantities evaluated under their internal names."""
    env = {se.Symbol(k): se.Float(v) for k, v in values.items()}
    for r in es.intermediates:
        local = {k: v for k, v in env.items() if k in r.rhs.free_symbols}
        env[r.lhs] = se.Float(float(r.rhs.xreplace(local)))
    return {str(k): float(v) for k, v in env.items()}


def _reader(es):
    """Reads a printed expression back: each printed name becomes its quantity."""
    table = dict(es.names.items())
    back = {text: name for name, text in table.items()}
    assert len(back) == len(table)   # (the printed names are unique)
    alternatives = sorted(back, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w'])(" + "|".join(map(re.escape, alternatives))
                         + r")(?![\w'])")
    slots = {f"zz{k}zz": name for k, name in enumerate(alternatives)}
    slot_of = {text: f"zz{k}zz" for k, text in enumerate(alternatives)}

    def read(text: str) -> sympy.Expr:
        code = pattern.sub(lambda m: slot_of[m.group(1)], text)
        local = {s: sympy.Symbol(back[alternatives[int(s[2:-2])]]) for s in slots}
        expr = sympy.sympify(code, locals=local)
        unknown = {str(s) for s in expr.free_symbols} - set(back.values())
        assert not unknown, f"not a printed name: {unknown} in {text}"
        return expr

    return read, back


def _section(lines: list[str], title: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("  ") or line.startswith("  where the names read"):
            break
        out.append(line.strip())
    return out


@pytest.mark.parametrize("path", SECOND_ROUTE, ids=lambda p: p.stem)
def test_printed_names_read_back_give_the_same_m_and_f(path):
    eq = kidym.derive(kidym.load(path))
    es = equation_set(eq, stage="cauchy")
    lines = text_of(es).splitlines()
    read, back = _reader(es)
    values = _values(eq)
    reference = _internal(es, values)

    def number(text: str, env: dict[str, float]) -> float:
        expr = read(text)
        return float(expr.xreplace({s: env[s.name] for s in expr.free_symbols}))

    env = dict(values)
    named = _section(lines, "Named quantities")
    assert len(named) == len(es.intermediates)
    for line, r in zip(named, es.intermediates):
        lhs, rhs = line.split(" = ", 1)
        assert back[lhs] == str(r.lhs)                   # the printed name maps back
        env[back[lhs]] = number(rhs, env)
        assert env[back[lhs]] == pytest.approx(reference[str(r.lhs)], rel=1e-9, abs=1e-12)
    eq_s = es.equations
    mass = {line.split(" = ", 1)[0]: line.split(" = ", 1)[1]
            for line in _section(lines, "Mass matrix")}
    for i, wi in enumerate(eq_s.speeds):
        for j in range(i, eq_s.n_w):
            want = float(eq_s.mass_matrix_named[i][j].xreplace(
                {se.Symbol(k): se.Float(v) for k, v in reference.items()}))
            got = mass.get(f"M[{wi}, {eq_s.speeds[j]}]")
            assert (0.0 if got is None else number(got, env)) == pytest.approx(
                want, rel=1e-9, abs=1e-12)
    forcing = [line.split(" = ", 1)[1] for line in _section(lines, "Forcing")]
    for f_text, f in zip(forcing, eq_s.forcing_named, strict=True):
        want = float(se.sympify(f).xreplace(
            {se.Symbol(k): se.Float(v) for k, v in reference.items()}))
        assert number(f_text, env) == pytest.approx(want, rel=1e-9, abs=1e-12)
    rows = []   # the closed loop's γ, the programmed constraints' b
    if eq_s.constraints is not None:
        rows.append(("Constraints (", "    γ[", eq_s.constraints.gamma))
    if eq_s.controls is not None:
        rows.append(("Controls (", "    b[", eq_s.controls.target))
    for section, head, exprs in rows:
        start = next(i for i, line in enumerate(lines) if line.startswith(section))
        printed = [line.split(" = ", 1)[1] for line in lines[start:] if line.startswith(head)]
        for g_text, g in zip(printed, exprs, strict=True):
            want = float(se.sympify(g).xreplace(
                {se.Symbol(k): se.Float(v) for k, v in reference.items()}))
            assert number(g_text, env) == pytest.approx(want, rel=1e-9, abs=1e-12)


#: raw prefixes of internal names (``agXRod1``, ``IcZZRod1``, ``S21Rod2`` …)
RAW = re.compile(r"^(ag|Ic|hc|mc|fc|nc|Hc|Lc|MB|Fhol|ΔΩ|ΔV|JΩ|ωP|εP|S[123][123]|[XYZ]O"
                 r"|[ωεvaQτ][XYZ])\w")


def _stages(eq):
    yield "cauchy"
    if getattr(eq, "holonomic", None) is not None:
        yield "holonomic"


@pytest.mark.slow
def test_every_example_prints_unique_readable_names():
    checked = 0
    for path in sorted(EXAMPLES.glob("*/*.kdm")):
        eq = kidym.derive(kidym.load(path))   # (every example derives, whatever it runs)
        for stage in _stages(eq):
            es = equation_set(eq, stage=stage, compact=False)
            table = dict(es.names.items())
            printed = list(table.values())
            assert len(set(printed)) == len(printed), path
            model_names = [n for n, p in table.items() if p == n]
            strip = re.compile("(?:" + "|".join(map(re.escape, sorted(
                model_names, key=len, reverse=True))) + ")(?:'t)*")
            text = text_of(es)
            legend = text[text.index("where the names read"):] if es.intermediates else ""
            for r in es.intermediates:
                shown = es.names.text(str(r.lhs))
                assert "#" not in shown, (path, shown)
                # a ' only in a model's own name (phi1't) or a rate of one (zC't't)
                assert "'" not in strip.sub("", shown), (path, shown)
                if shown != str(r.lhs):
                    assert not RAW.match(shown), (path, shown)
                for kind in es.names.kinds([str(r.lhs)]):
                    assert LEGEND[kind][0] in legend, (path, shown, kind)
            assert "#" not in text, path
            checked += 1
    assert checked >= 30


def test_json_keeps_the_internal_name_beside_the_printed_one(tmp_path, capsys):
    path = EXAMPLES / "double_pendulum" / "double_pendulum.kdm"
    assert main(["equations", str(path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["printed"]) == set(doc["symbols"])
    internal = {doc["symbols"][k]: doc["printed"][k] for k in doc["symbols"]}
    assert internal["agXRod2#1"] == "a_x(Rod2)⁽¹⁾"       # the stage mark
    assert internal["vYRod2'phi1't"] == "(∂v_y(Rod2)/∂phi1't)"
    assert internal["IcZZRod1"] == "I_zz(Rod1)"
    assert internal["phi1't"] == "phi1't"                # the model's names as written
    assert len(set(doc["printed"].values())) == len(doc["printed"])
    assert [key for key, _ in doc["legend"]][:2] == ["(B)", "(B)⁽ᵏ⁾"]


def test_latex_and_markdown_print_readable_names():
    eq = kidym.derive(kidym.load(EXAMPLES / "double_pendulum" / "double_pendulum.kdm"))
    es = equation_set(eq, stage="cauchy")
    tex = latex_document(es)
    md = markdown_of(es)
    for out in (tex, md):
        assert r"{a}_{x}\left(\mathrm{Rod2}\right)^{(1)}" in out
        assert "agX" not in out and r"\#" not in out and "IcZZ" not in out
        assert "How the names of the named quantities read" in out
    # the legend's text reaches pdflatex as ASCII (inputenc knows none of ᶜ, ⁽ᵏ⁾, ẇ …)
    assert all(latex_text(meaning).isascii() for _, _, meaning in LEGEND.values())


def test_jupyter_view_prints_readable_names():
    # the chain of ten links has no compact form (over 300 named quantities): Jupyter
    # shows the per-speed equations over the named quantities
    eq = kidym.derive(kidym.load(EXAMPLES / "chain" / "chain10.kdm"))
    tex = eq._repr_latex_()
    assert r"{I}_{xx}\left(L_{1}\right)" in tex     # IcXXL1: composite inertia below L1
    assert "IcXX" not in tex and r"\#" not in tex and "#" not in tex


@pytest.mark.parametrize("internal,shown", [
    # kinematics of frames (kidym/kinematics/bodies.py)
    ("agXRod2#1", "a_x(Rod2)⁽¹⁾"), ("aYRod2", "a⁰_y(Rod2)"), ("agZCRod2", "a_z(Rod2)ᶜ"),
    ("S21Body#q", "S_21(Body)⁽Λ⁾"), ("XORod2#1", "X_O(Rod2)⁽¹⁾"), ("XOCRod2", "X_C(Rod2)"),
    ("ωXCBody#λ", "ω_X(Body)ᶜ"), ("εZRod2", "ε_z(Rod2)"), ("nBody", "|Λ|²(Body)"),
    ("Rod2't", "θ̇(Rod2)"), ("cosRod2#1", "cos_θ(Rod2)⁽¹⁾"), ("cosphi1", "cos_phi1"),
    ("vYRod2'phi1't", "(∂v_y(Rod2)/∂phi1't)"), ("ωZRod2't", "ω̇_z(Rod2)"),
    # per-body and composite sums (eom/structural.py, eom/composite.py)
    ("QXRod2", "Q_x(Rod2)"), ("τYBody", "τ_y(Body)"), ("ωPXBody", "ω_x(Body)ᴾ"),
    ("JΩZRod1'phi1't", "(∂(Jω)_z(Rod1)/∂phi1't)"), ("IcXYRod1", "I_xy(Rod1)"),
    ("mcRod2#1", "m(Rod2)⁽¹⁾"), ("hcXRod2", "h_x(Rod2)"), ("fcYRod2#1", "f_y(Rod2)⁽¹⁾"),
    ("ncZRod1", "n_z(Rod1)"), ("ΔΩZRod2'phi2't", "(∂Δω_z(Rod2)/∂phi2't)"),
    ("HcZRod2'phi1't", "(∂H_z(Rod2)/∂phi1't)"), ("LcXRod2'phi1't", "(∂L_x(Rod2)/∂phi1't)"),
    # two-stage, constraints, controls, virtual constraints, quaternion angles
    ("MBphi1'phi2't", "MB[phi1,phi2't]"), ("Fholphi1", "F_hol[phi1]"), ("γf1", "γ[f1]"),
    ("bfx", "b[fx]"), ("Vs1", "V[s1]"), ("Ps1", "P[s1]"), ("s1⁻", "s1⁻"),
    ("sBody", "s(Body)"), ("vnBody", "v_n(Body)"), ("nfBody", "|∇f|(Body)"),
    ("fXBody", "∇f_X(Body)"), ("dBody", "d(Body)"), ("l0QE", "Λ_0[E]"),
    ("ncZRod1|u=0", "n_z(Rod1)|u=0"), ("QXRod2~2", "Q_x(Rod2)~2"),
    # the model's names as written, and their rates
    ("phi1't", "phi1't"), ("f1't", "f1't"), ("f1't'phi1't", "(∂f1't/∂phi1't)"),
    ("sinf1't", "(sin_f1)˙"),
])
def test_the_scheme_reads_each_kind_of_internal_name(internal, shown):
    table = NameTable(bodies=["Rod1", "Rod2", "Body"], states=["phi1", "phi2", "phi1't",
                                                               "phi2't"],
                      users=["phi1", "phi2", "phi1't", "phi2't", "f1", "fx", "s1", "g"],
                      known=["ωZRod2", "f1't", "sinf1"], coordinates=["phi1", "phi2"],
                      speeds=["phi1't", "phi2't"], constraints=["f1"], programmed=["fx"],
                      virtual=["s1"])
    assert table.printed(internal).text == shown
