"""Multi-task files, ИЗЪЯТЬ, РАЗМНОЖИТЬ, КОДИРОВКА, body lists, plots, x'y, units, errors."""

from __future__ import annotations

import math

import pytest
import symengine as se

from kidym.errors import ModelError, ParseError
from kidym.lang import keywords, parse, parse_tasks

x, y, t = se.symbols("x y t")


def test_later_tasks_reuse_and_override_earlier_definitions() -> None:
    first, second, third = parse_tasks(
        "m = 1; c = 4; Jm.x = m; Cs.x = c; КОНЕЦ;\n"
        "c = 9; КОНЕЦ;\n"
        "ИЗЪЯТЬ := Cs.x; Dd.x = 0.5; КОНЕЦ;", name="osc")
    assert (first.name, second.name, third.name) == ("osc_1", "osc_2", "osc_3")
    assert first.parameter_values["c"] == 4 and second.parameter_values["c"] == 9
    assert [(e.name, e.kind) for e in third.elements] == [("Jm", "J"), ("Dd", "D")]


def test_redefinition_across_tasks_is_silent_within_a_task_warned() -> None:
    warnings: list = []
    parse_tasks("m = 1; Jm.x = m; КОНЕЦ; m = 2; КОНЕЦ;", warnings=warnings)
    assert warnings == []
    parse_tasks("m = 1; Jm.x = m; m = 2; КОНЕЦ;", warnings=warnings)
    assert [w.message[:19] for w in warnings] == ["redefinition of `m`"]


def test_withdraw_of_something_undefined_warns() -> None:
    warnings: list = []
    parse("m = 1; Jm.x = m; ИЗЪЯТЬ := zz;", warnings=warnings)
    assert "nothing called `zz` is defined" in warnings[0].message


def test_multiply_expands_templates_synchronously() -> None:
    model = parse("РАЗМНОЖИТЬ : i(1, 3), k(2, 6, 2);\n"
                  "m$i = c$k;\nc2 = 2; c4 = 4; c6 = 6;\nJ$i.x$i = m$i;\nC$i.x$i = m$(2*i-1);\n"
                  "m5 = 7;\nm4 = 1;\nПОКАЗАТЬ := x$i;")
    assert {d.name: str(d.expr) for d in model.definitions} == {"m1": "c2", "m2": "c4",
                                                                "m3": "c6"}
    assert model.coordinates == ("x1", "x2", "x3")
    assert [str(e.characteristic) for e in model.elements if e.kind == "C"] == ["m1", "m3",
                                                                                  "m5"]
    assert model.outputs == ("x1", "x2", "x3")


def test_coding_renames_the_element_classes() -> None:
    model = parse("КОДИРОВКА := ИДУСН; m = 1; Иm.x = m; Уk.x = 3; Сf.x = 1; Дd.x = 0.1;")
    assert [e.kind for e in model.elements] == ["J", "C", "P", "D"]
    with pytest.raises(ModelError, match=r"nonlinear elements \(class `Н`\) are not supported"):
        parse("КОДИРОВКА := ИДУСН; m = 1; Иm.x = m; Нq.x = 1;")


def test_body_list_form_is_the_record_form() -> None:
    listed = parse("m = 1; J = 0.1; l = 2;\n"
                   "ТВЕРДЫЕ ТЕЛА : B1~B0(Rz(fi), Sx(l), J(m, J, J, J)), B0(Sx(s), J(m, J, J, J));")
    records = parse("m = 1; J = 0.1; l = 2;\nB1~B0 | Rz(fi), Sx(l) | m, J, J, J;\n"
                    "B0 | Sx(s) | m, J, J, J;")
    strip = [(b.name, b.base, tuple(tr.args for tr in b.transforms), b.inertia)
             for b in listed.bodies]
    assert strip == [(b.name, b.base, tuple(tr.args for tr in b.transforms), b.inertia)
                     for b in records.bodies]


def test_compare_and_overlay_plots() -> None:
    model = parse("x = sin(t); y = cos(t); СРАВНИТЬ := ХУ(x, y, x't); СОВМЕСТИТЬ := V(x, y);"
                  "СРАВНИТЬ := Z(y); РАСЧЕТ := КИНЕМАТИКА;")
    assert [(p.curves, p.kind, p.title) for p in model.plots] == [
        (("x", "y", "x't"), "compare", "ХУ"), (("x", "y"), "overlay", "V"),
        (("y",), "compare", "Z")]
    with pytest.raises(ModelError, match="exactly 2 curves"):
        parse("x = sin(t); СОВМЕСТИТЬ := V(x, x, x);")
    with pytest.raises(ModelError, match="1 to 5 curves"):
        parse("x = sin(t); СРАВНИТЬ := V(x, x, x, x, x, x);")


def test_partial_derivative_names() -> None:
    model = parse("a = 2; f = a*x^2*y + sin(y); g = f'x + f'y; Cs.x = 1; Cs.y = 1;")
    assert se.expand(model.definition("f'x").expr - 2 * se.Symbol("a") * x * y) == 0
    assert se.expand(model.definition("f'y").expr
                     - (se.Symbol("a") * x**2 + se.cos(y))) == 0
    with pytest.raises(ModelError, match=r"`fan'x`: `fan` is not defined \(did you mean `fun`"):
        parse("fun = x; g = fan'x; Cs.x = fun; Cs.g = 1;")


def test_a_partial_used_by_another_is_formed_first() -> None:
    # a'phi = ∂(phi·c'phi)/∂phi = c'phi + phi·∂c'phi/∂phi = 3 phi² + 6 phi² (by hand)
    model = parse("x = a'phi; a = c'phi*phi; c = phi^3; Cs.phi = x;")
    phi = se.Symbol("phi")
    assert se.expand(model.definition("a'phi").expr - 9 * phi**2) == 0


@pytest.mark.parametrize(("text", "name", "column"), [
    ("a = a'phi + phi; Cs.phi = a;", "a'phi", 5),
    ("a = a'phi; Ps.phi = a;", "a'phi", 5),
    ("a = b'phi + phi;\nb = a*phi; Cs.phi = a;", "b'phi", 5),
    ("u = 1 + v'phi;\nv = phi*w'phi;\nw = u; Cs.phi = u;", "v'phi", 9),
])
def test_a_partial_that_needs_itself_is_an_error(text: str, name: str, column: int) -> None:
    with pytest.raises(ModelError, match=rf"partial derivative `{name}` depends on itself"
                                         r" \(.*\): .*break the cycle") as info:
        parse(text)
    [d] = [d for d in info.value.errors if "depends on itself" in d.message]
    assert (d.span.line, d.span.column, d.span.end_column) == (1, column, column + len(name))


def test_partials_in_bodies_and_instructions() -> None:
    # used only in a body record: formed (was "`f'q` is not defined" from derive)
    model = parse("f = q^2/2;\nRod | Sx(f'q), Rz(phi) | m(1), Jx(1), Jy(1), Jz(1);")
    assert model.definition("f'q").expr == se.Symbol("q")
    assert model.coordinates == ("q", "phi")
    with pytest.raises(ModelError, match=r"partial derivative `x't't2`: `x't` is not defined"
                       ) as info:
        parse("Rod | Rz(phi) | m(1), Jx(1), Jy(1), Jz(x't't2);")
    [d] = info.value.errors
    assert (d.span.line, d.span.column, d.span.end_column) == (1, 40, 46)


def test_units_converted_and_checked() -> None:
    warnings: list = []
    model = parse("РАЗМЕРНОСТИ := m(кг), l(м), t(с);\n"
                  "l = 30, см; T = 2, мин; v0 = 36, км/час; mm = 500, г;\n"
                  "x = l*sin(t/T), см;\nbad = l + v0, м;\nCs.y = 1;", warnings=warnings)
    assert model.parameter_values == pytest.approx({"l": 0.3, "T": 120, "v0": 10, "mm": 0.5})
    assert model.units["v0"] == "m / s"
    unused, w = warnings   # in source order (mm is used nowhere: kidym.model.slips)
    assert "formula of `bad`" in w.message and w.span.line == 4
    assert "parameter `mm` is defined but never used" in unused.message
    no_units = parse("l = 30, см; Cs.l2 = l;")  # without РАЗМЕРНОСТИ nothing is converted
    assert no_units.parameter_values["l"] == 30


def test_rotation_by_a_number_is_in_degrees() -> None:
    model = parse("B | Rx(90), Ry(a) | m(1), Jx(1), Jy(1), Jz(1);")
    rx, ry = model.bodies[0].transforms
    assert rx.args[0] == se.pi / 2 and ry.args[0] == se.Symbol("a")


def test_every_error_of_a_file_at_once_with_suggestions() -> None:
    text = ("mass = 1;\nx = (1;\nRod~Bsae | Rz(phi) | m(mass), Jz(1);\nBase | Sx(s) | m(1);\n"
            "ПОКАЗАТ := phi;\nv = mas*2;\n")
    with pytest.raises(ParseError) as info:
        parse(text)
    messages = {d.span.line: d.message for d in info.value.errors}
    assert set(messages) == {2, 3, 5, 6}
    assert "expected `)`" in messages[2]
    assert "did you mean `Base`?" in messages[3]
    assert "did you mean `ПОКАЗАТЬ`?" in messages[5]
    assert "did you mean `mass`?" in messages[6]


def test_every_keyword_has_an_english_and_a_ukrainian_spelling() -> None:
    for key, spellings in keywords.KEYWORDS.items():
        assert keywords.spelling_in(key, "en").isascii(), key
        assert keywords.lookup(keywords.spelling_in(key, "uk")) == key
        assert keywords.lookup(keywords.spelling_in(key, "en")) == key
        assert len(spellings) >= 3, key


def test_precedence_quirks_of_the_original_are_fixed() -> None:
    model = parse("b = -3^2; c = 2^3^2;")
    assert model.parameter_values["b"] == -9
    assert model.parameter_values["c"] == 2**9
    assert math.isclose(parse("d = -2^0.5;").parameter_values["d"], -math.sqrt(2))
