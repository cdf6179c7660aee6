"""Statement forms, instructions, error recovery and error reports."""

from __future__ import annotations

import pytest

from kidym.errors import ModelError, ParseError
from kidym.lang import ast, parse
from kidym.lang.parser import parse_statements


def kinds(text: str) -> list[str]:
    parsed = parse_statements(text)
    assert not parsed.has_errors, [d.message for d in parsed.diagnostics]
    return [type(s).__name__ for s in parsed.statements]


def test_statement_forms() -> None:
    text = """
        m = 1, кг;
        xC't = 2*m;
        Jm.x.y = m;
        Body~Base | Rx(a), Sy(b) | m(m);
        ПОКАЗАТЬ := x, y(x);
        КВАТЕРНІОН: Q(λ0, λ1, λ2, λ3), Ry(ψ), Rx(θ), Rz(φ);
        КОНЕЦ;
    """
    # `КОНЕЦ;` ends the task: it is no statement of it
    assert kinds(text) == ["Variable", "Variable", "ElementRecord", "BodyRecord",
                           "Instruction", "Instruction"]


def test_unit_is_kept_raw() -> None:
    stmt = parse_statements("x = 3*sin(pi*t/3), см;  v = atan2(1, 2), м / с^2;").statements
    assert [s.unit for s in stmt] == ["см", "м / с^2"]
    assert isinstance(stmt[1].expr, ast.Call) and len(stmt[1].expr.args) == 2


def test_element_record_lists_coordinates() -> None:
    [stmt] = parse_statements("Cs.x.y't.z = c;").statements
    assert isinstance(stmt, ast.ElementRecord)
    assert stmt.label.name == "Cs"
    assert [c.name for c in stmt.coordinates] == ["x", "y't", "z"]


def test_instruction_names_are_words_and_both_separators_work() -> None:
    parsed = parse_statements("обобщенные\n  координаты : q1, q2; ОБОБЩЕННЫЕ КООРДИНАТЫ:=q1;")
    a, b = parsed.statements
    assert a.key == b.key == "COORDINATES"
    assert a.written == "обобщенные координаты"
    assert [i.name for i in a.items] == ["q1", "q2"]


def test_raw_instruction_text() -> None:
    [ins] = parse_statements("РАБОТА:=№1/1 - Кинематика точки (вариант 3) ;").statements
    assert ins.key == "TASK"
    assert ins.raw == "№1/1 - Кинематика точки (вариант 3)"
    [calc] = parse_statements("РАСЧЕТ := ПЕЧАТЬ   УРАВНЕНИЙ;").statements
    assert calc.raw == "ПЕЧАТЬ УРАВНЕНИЙ"


def test_bodies_operator_gives_body_records() -> None:
    text = "ТВЕРДЫЕ ТЕЛА : B1~B0(Rz(fi), Sx(l), J(m,Jx,Jy,Jz)), B0(Sx(q), J(m, Jx, Jy, Jz));"
    b1, b0 = parse_statements(text).statements
    assert isinstance(b1, ast.BodyRecord) and isinstance(b0, ast.BodyRecord)
    assert (b1.name.name, b1.base.name, b0.base) == ("B1", "B0", None)
    assert [t.func.name for t in b1.transforms] == ["Rz", "Sx"]
    assert [n.name for n in b1.tail] == ["m", "Jx", "Jy", "Jz"]


def test_unsupported_display_instructions_warn() -> None:
    warnings: list = []
    parse("РАБОТА:=№1/1 - text; ВЫПОЛНИЛА:=Иванова; РАЗМЕРНОСТИ:=m(кг), l(см);"
          "ТАБЛИЦА := out.txt, t, 1, x; m = 1; Jm.x = m;", warnings=warnings)
    messages = [w.message for w in warnings]
    assert messages == ["instruction `ТАБЛИЦА` is recognised but not supported yet; ignored "
                        "(it changes only how results are shown)"]
    assert all(w.severity == "warning" for w in warnings)


def test_unsupported_instructions_that_change_results_are_errors() -> None:
    with pytest.raises(ParseError, match="`СЧИТАТЬ МАЛЫМИ` is recognised but not supported "
                                         "yet; it would change the results"):
        parse("СЧИТАТЬ МАЛЫМИ: a; m = 1; Jm.x = m;")


def test_quaternion_items_must_still_be_valid() -> None:
    with pytest.raises(ParseError, match=r"1:18: error: unexpected `\)`"):
        parse("КВАТЕРНИОН: Q(a, ), Ry(ψ); m = 1; Jm.x = m;")


def test_unknown_instruction_suggests_a_spelling() -> None:
    with pytest.raises(ParseError,
                       match=r"unknown instruction `ПОКАЗАТ` \(did you mean `ПОКАЗАТЬ`\?\)"):
        parse("m = 1; Jm.x = m;\nПОКАЗАТ := x;")


def test_bare_unknown_word_hints_at_a_variable() -> None:
    with pytest.raises(ParseError, match=r"unknown instruction `zzz`; to define a variable"):
        parse("zzz;")


def test_text_after_end_is_a_second_task_and_is_checked() -> None:
    with pytest.raises(ParseError) as info:
        parse("m = 1; Jm.x = m; КОНЕЦ;\nthis is not ( a model")
    assert [e.span.line for e in info.value.errors] == [2, 2]


def test_missing_final_semicolon_is_reported_at_the_end() -> None:
    with pytest.raises(ParseError) as info:
        parse("m = 1;\nJm.x = m  \n")
    [d] = info.value.errors
    assert "missing `;`" in d.message
    assert (d.span.line, d.span.column) == (2, 9)


def test_every_bad_statement_is_reported_with_line_column_and_caret() -> None:
    text = ("m = 1;\n"
            "x = (2 + ;\n"
            "Jm.y = m;\n"
            "z = 3 ** 2;\n"
            "Body | Rx(1) | m(1), Xy(2;\n"
            "w = 2 ° 3;\n")
    with pytest.raises(ParseError) as info:
        parse(text, filename="model.kdm")
    err = info.value
    assert not isinstance(err, ModelError)
    located = [(d.span.line, d.span.column) for d in err.errors]
    assert located == [(2, 10), (4, 8), (5, 26), (6, 7)]
    assert "unexpected end of statement `;`; expected a formula" in err.errors[0].message
    assert "unexpected `*`" in err.errors[1].message
    assert "unexpected character `°`" in err.errors[3].message
    rendered = err.render().splitlines()
    assert rendered[0] == ("model.kdm:2:10: error: unexpected end of statement `;`; "
                           "expected a formula")
    assert rendered[1] == "    x = (2 + ;"
    assert rendered[2] == "             ^"
    assert rendered[3].startswith("model.kdm:4:8: error: unexpected `*`")
    assert rendered[5] == "           ^"


def test_missing_semicolon_between_statements_gets_a_hint() -> None:
    with pytest.raises(ParseError, match=r"2:1: error: unexpected name `Jm` \(is a `;` missing"):
        parse("m = 1\nJm.x = m;")


def test_syntax_and_local_model_errors_are_reported_together() -> None:
    with pytest.raises(ParseError) as info:
        parse("m = (1;\nXk.y = 2;\n")
    assert [d.span.line for d in info.value.errors] == [1, 2]
    assert "unrecognised element class `X` in `Xk.y` (expected J, D, C or P" in (
        info.value.errors[1].message)


def test_diagnostics_carry_warnings_too() -> None:
    with pytest.raises(ModelError) as info:
        parse("a = 1;\na = 2;\nJm.x = q;")
    severities = [d.severity for d in info.value.diagnostics]
    assert severities == ["warning", "error"]
