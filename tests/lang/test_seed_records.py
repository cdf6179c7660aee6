"""The records printed in the seed papers parse as printed, with the right meaning."""

from __future__ import annotations

import re

import pytest
import symengine as se

from kidym.errors import ModelError
from kidym.lang import parse
from tests.lang.fixtures import BALL, BALL_RECORD, FIG2, FIG3, PENDULUM

COORDINATES = tuple(f"{angle}S{side}" for side in "LR"
                    for angle in ("teta", "alfa", "gamma", "beta", "nu", "epsilon"))
BODIES = ("Taz", "Mvv", "Efl", "BdL", "GIL", "GsL", "StL", "Efr", "Bdr", "GIR", "GsR", "StR")
BASES = (None, "Taz", "Taz", "Efl", "BdL", "GIL", "GsL", "Taz", "Efr", "Bdr", "GIR", "GsR")
KEYWORD_NAMES = {"Sx", "Sy", "Sz", "Rx", "Ry", "Rz", "m", "Jx", "Jy", "Jz"}


def with_parameters(records: str, *fixed: str) -> str:
    """``records`` preceded by a numeric value for every name except the coordinates."""
    names = set(re.findall(r"[^\W\d][\w'@$]*", records))
    params = sorted(names - KEYWORD_NAMES - set(BODIES) - set(COORDINATES) - set(fixed))
    values = "".join(f"{p} = {i + 1}/10;\n" for i, p in enumerate(params))
    return "".join(f"{f} = 0;\n" for f in fixed) + values + records


def test_fixtures_are_the_printed_records() -> None:
    assert FIG2.count(";") == FIG3.count(";") == 12
    assert FIG2.startswith("Taz |Sx(Ax), Sy(Ay), Sz(Az) | m(mt), Jx(Jtx), Jy(Jty), Jz(Jtz);  \n")
    assert FIG3.endswith(" m(msR), Jx(Jsx), Jy(Jsy), Jz(Jsz);")


@pytest.mark.parametrize(("records", "fixed", "chain", "central", "efl"), [
    (FIG2, (), (3, 3, 10, 7, 7, 7, 7, 10, 7, 7, 7, 7), (0,) * 12,
     "Sx Sy Sz Ry Rz Sz Rx Sx Sy Sz"),
    (FIG3, ("XO", "YO", "ZO"), (3, 3, 5, 3, 2, 3, 2, 5, 3, 2, 3, 2), (3,) * 12,
     "Sy Ry Rz Sz Rx | Sx Sy Sz"),
])
def test_biped_records(records: str, fixed: tuple[str, ...], chain: tuple[int, ...],
                       central: tuple[int, ...], efl: str) -> None:
    warnings: list = []
    model = parse(with_parameters(records, *fixed), warnings=warnings)
    assert warnings == []
    assert tuple(b.name for b in model.bodies) == BODIES
    assert tuple(b.base for b in model.bodies) == BASES
    assert tuple(len(b.transforms) for b in model.bodies) == chain
    assert tuple(len(b.central) for b in model.bodies) == central
    assert model.coordinates == COORDINATES
    assert model.definitions == ()
    for body in model.bodies:
        assert {str(s) for s in body.inertia.mass.free_symbols} <= model.parameter_values.keys()
    bdl = model.body("BdL")
    rotation = next(t for t in bdl.transforms if t.kind == "R")
    assert (rotation.axis, rotation.args) == ("y", (-se.Symbol("gammaSL") - se.Symbol("psiL"),))
    body = model.body("Efl")
    written = " ".join(t.kind + t.axis for t in body.transforms)
    if body.central:
        written += " | " + " ".join(t.kind + t.axis for t in body.central)
    assert written == efl
    assert model.body("StR").transforms[-1 if body.central else 3].args == (
        -se.Symbol("epsilonSR"),)
    assert model.body("Taz").inertia.mass == se.Symbol("mt")


def test_fig2_without_parameter_values_names_each_missing_value() -> None:
    with pytest.raises(ModelError) as info:
        parse(FIG2)
    messages = [d.message for d in info.value.errors]
    assert messages[0] == ("mass of body `Taz` depends on `mt`, which has no value: "
                           "define it (`mt = …;`)")
    assert len(messages) == len(set(messages))
    # every inertia name is reported once, located on its first use
    missing = {re.search(r"depends on `(\w+)`", m).group(1) for m in messages}
    assert {"mt", "Jtx", "Jex", "msR"} <= missing
    assert all(d.span is not None for d in info.value.errors)


def test_ball_record_of_seed_000() -> None:
    model = parse("m = 1; J = 0.016;\n" + BALL_RECORD)
    [ball] = model.bodies
    assert ball.name == "Куля"
    assert [(t.kind, t.axis) for t in ball.transforms] == [
        ("S", "x"), ("S", "y"), ("S", "z"), ("Q", None)]
    assert ball.transforms[3].args == tuple(se.Symbol(f"λ{i}") for i in range(4))
    m, j = se.symbols("m J")
    assert (ball.inertia.mass, ball.inertia.jx, ball.inertia.jy, ball.inertia.jz) == (m, j, j, j)
    assert model.coordinates == ("xC", "yC", "zC", "λ0", "λ1", "λ2", "λ3")


def test_ball_model_of_seed_000() -> None:
    warnings: list = []
    model = parse(BALL, name="ball", warnings=warnings)
    assert model.coordinates == ("xC", "yC", "λ0", "λ1", "λ2", "λ3")
    assert model.pseudo_velocities == ("ωXКуля", "ωYКуля", "ωZКуля")
    assert [v.coordinate for v in model.velocity_definitions] == ["xC", "yC"]
    a, big_r, z_c, y_c = se.symbols("a R zC yC")
    w_y, w_z = se.Symbol("ωYКуля"), se.Symbol("ωZКуля")
    assert model.velocity_definitions[0].expr == a * (w_y * (big_r - z_c) + w_z * y_c)
    assert [d.name for d in model.definitions] == ["a", "J", "zC"]
    assert model.definition("J").expr == se.Rational(2, 5) * se.Symbol("m") * se.Symbol("r")**2
    assert model.parameter_values == {"g": 9.8062, "R": 3.0, "r": 0.2, "m": 1.0}
    assert [p.unit for p in model.parameters] == [None, "м", "м", "кг"]
    assert dict(model.initial) == {"xC": 1.5, "yC": 0.0, "λ0": 1.0, "λ1": 0.0, "λ2": 0.0,
                                   "λ3": 0.0, "ωXКуля": 3.0, "ωYКуля": 2.0, "ωZКуля": 0.0}
    assert (model.t_start, model.t_end) == (0.0, 20.0)
    assert model.outputs == ("yC", "xC", "zC", "ωZКуля")
    assert model.calculation == "DYNAMICS"
    [element] = model.elements
    assert (element.kind, element.coordinate) == ("P", "zC")
    assert warnings == []
    [quaternion] = model.quaternions
    assert quaternion.quaternion == ("λ0", "λ1", "λ2", "λ3")
    assert [(r.axis, r.args) for r in quaternion.rotations] == [
        ("y", (se.Symbol("ψ"),)), ("x", (se.Symbol("θ"),)), ("z", (se.Symbol("φ"),))]
    assert quaternion.prior is None and quaternion.euler is None


def test_text_pasted_from_the_paper_with_a_split_assignment_sign_parses() -> None:
    """The seed 000 extraction writes `ПСЕВДОШВИДКОСТІ: = …` (`:=` split by typesetting)."""
    pasted = (BALL.replace("ПСЕВДОШВИДКОСТІ :=", "ПСЕВДОШВИДКОСТІ: =")
              .replace("ЧАС :=", "ЧАС : =").replace("ПОКАЗАТИ :=", "ПОКАЗАТИ:\t="))
    assert pasted.count(": =") == 2
    warnings: list = []
    model = parse(pasted, name="ball", warnings=warnings)
    original = parse(BALL, name="ball")
    assert model.pseudo_velocities == original.pseudo_velocities
    assert (model.t_start, model.t_end, model.outputs) == (
        original.t_start, original.t_end, original.outputs)
    assert len(warnings) == 3 and all("read as `:=`" in w.message for w in warnings)


@pytest.mark.parametrize(("written", "message"), [
    ("КВАТЕРНІОН: Ry(ψ);", "needs the quaternion `Q(λ0, λ1, λ2, λ3)`"),
    ("КВАТЕРНІОН: Q(a, b, c), Ry(ψ);", "`Q(…)` in `КВАТЕРНІОН` takes four names"),
    ("КВАТЕРНІОН: Q(a, b, c, d), Ry(ψ+1);", "takes an angle name or a number of degrees"),
    ("КВАТЕРНІОН: Q(a, b, c, d), Zq(3);", "lists `P(…)`, `Q(λ0, λ1, λ2, λ3)`"),
])
def test_quaternion_operator_errors(written: str, message: str) -> None:
    text = BALL.replace("КВАТЕРНІОН: Q(λ0, λ1, λ2, λ3), Ry(ψ), Rx(θ), Rz(φ);", written)
    with pytest.raises(ModelError, match=re.escape(message)):
        parse(text, name="ball")


def test_quaternion_operator_degrees_and_parts() -> None:
    text = BALL.replace("КВАТЕРНІОН: Q(λ0, λ1, λ2, λ3), Ry(ψ), Rx(θ), Rz(φ);",
                        "КВАТЕРНИОН : P(p0, p1, p2, p3), Q(λ0, λ1, λ2, λ3), Rx(90), Ry(α), "
                        "E(ψ, θ, φ);")
    [quaternion] = parse(text, name="ball").quaternions
    assert quaternion.prior == ("p0", "p1", "p2", "p3")
    assert quaternion.euler == ("ψ", "θ", "φ")
    assert quaternion.rotations[0].args == (se.pi / 2,)


def test_show_list_becomes_plots() -> None:
    model = parse(BALL.replace("ПОКАЗАТИ := yC(xC), zC(yC), ωZКуля;",
                               "ПОКАЗАТИ := yC(xC), zC(xC, yC), ωZКуля, xC(t);"), name="ball")
    assert [(p.curves, p.against, p.kind, p.title) for p in model.plots] == [
        (("yC",), ("xC",), "show", "yC(xC)"), (("zC",), ("xC", "yC"), "show", "zC(xC, yC)"),
        (("ωZКуля",), (), "show", "ωZКуля"), (("xC",), (), "show", "xC(t)")]
    with pytest.raises(ModelError, match=r"plots `y\(x\)` or `z\(x, y\)`, got 3 arguments"):
        parse(BALL.replace("ПОКАЗАТИ := yC(xC)", "ПОКАЗАТИ := zC(xC, yC, ωZКуля)"), name="b")


def test_pendulum_fixture() -> None:
    model = parse(PENDULUM)
    assert model.coordinates == ("phi",)
    assert model.gravity == (0, -se.Symbol("g"), 0)
    assert model.initial == {"phi": pytest.approx(0.5235987755982988), "phi't": 0.0}
    assert [(e.name, e.kind, e.coordinate) for e in model.elements] == [
        ("Cs", "C", "phi"), ("Db", "D", "phi")]
    assert model.outputs == ("phi", "XCRod", "YCRod")
    assert model.parameters[2].unit == "m"
