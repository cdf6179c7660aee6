"""Warnings and hints for likely slips (issue 29), each located and pinned: a parameter
never used, a new coordinate that is a defined name in another case, an angle given in
degrees where radians are read, `**` for `^`, a `#` comment left open at the end of its
line, and the calculation types listed in the language of the model's keywords."""

from __future__ import annotations

import pytest

import kidym
from kidym.errors import ParseError
from tests.fixtures import DOUBLE_PENDULUM

TYPO = """m1 = 1; m2 = 1; l1 = 1; l2 = 1; g = 9.81; c = 5;
Rod1 | Rz(phi1) | Sx(L1), m1, 0, 0, 0;
Rod2~Rod1 | Sx(l2), Rz(phi2) | Sx(l2/2), m2, 0, 0, m2*l2^2/12;
GRAVITY := 0, -g, 0;
"""


def parse_warned(text: str) -> tuple[kidym.Model, list]:
    warnings: list = []
    return kidym.parse(text, filename="m.kdm", warnings=warnings), warnings


def test_the_typo_model_warns_where_the_slips_are():
    model, warnings = parse_warned(TYPO)
    assert model.coordinates == ("phi1", "L1", "phi2")   # built as written
    text = {(w.span.line, w.span.column): w.message for w in warnings}
    assert text.keys() == {(1, 17), (1, 43), (2, 22)}
    assert text[(1, 17)].startswith("parameter `l1` is defined but never used")
    assert text[(1, 43)].startswith("parameter `c` is defined but never used")
    assert text[(2, 22)].startswith("`L1` has no value or formula, so it is a new "
                                    "coordinate (a degree of freedom); did you mean `l1`?")
    assert all(w.severity == "warning" for w in warnings)


def test_a_model_without_slips_has_no_warnings():
    assert parse_warned(DOUBLE_PENDULUM)[1] == []
    # a coordinate q1 beside its target Q1, which is used: no slip
    held = DOUBLE_PENDULUM.replace("phi1", "q1") + "Q1 = 0.4; f1 = q1 - Q1; SHOW := f1;"
    assert parse_warned(held)[1] == []


def test_a_parameter_shown_or_used_by_an_instruction_is_used():
    text = """m = 1; Om = 3; T = 2; A = 0.1; f0 = 0.2;
B | Rz(phi) | m, 0, 0, 1;
INITIAL := phi't(Om);
TIME := t(0, T);
EVENTS := E1(phi - A, UP, STOP);
SHOW := f0;
"""
    assert parse_warned(text)[1] == []


def test_a_parameter_used_by_a_later_task_only_is_used():
    text = """m = 1; c = 4; k = 2;
Jm.x = m;  Cs.x = c;
END;
Ck.x = k;
END;
"""
    warnings: list = []
    kidym.lang.parse_tasks(text, warnings=warnings)
    assert warnings == []
    warnings = []
    kidym.lang.parse_tasks(text.replace("Ck.x = k;", "Ck.x = 1;"), warnings=warnings)
    [w] = warnings
    assert w.message.startswith("parameter `k` is defined but never used")


UNITS = """UNITS := m(kg), l(m), t(s);
m = 1, kg; l = 0.5, m; g = 9.81, m/s^2;
Pole | Rz(th) | Sx(l), m, 0, 0, 0;
GRAVITY := 0, -g, 0;
"""


def test_an_angle_in_degrees_where_radians_are_read_gets_a_hint():
    pytest.importorskip("pint")
    model, warnings = parse_warned(UNITS + "INITIAL := th(30);")
    assert model.initial["th"] == 30
    [w] = warnings
    assert (w.span.line, w.span.column) == (5, 15)
    assert w.message.startswith("the initial value of angle `th` is read as 30 rad")
    assert "write `th(30*pi/180)`" in w.message
    # both ways the hint offers are accepted and give 30°
    for fix in ("INITIAL := th(30*pi/180);", "th0 = 30, °; INITIAL := th(th0);"):
        fixed, warnings = parse_warned(UNITS + fix)
        assert fixed.initial["th"] == pytest.approx(0.5235987755982988, rel=1e-15)
        assert warnings == []
    # radians within a turn, or no units: no hint
    assert parse_warned(UNITS + "INITIAL := th(1.2);")[1] == []
    plain = UNITS.replace("UNITS := m(kg), l(m), t(s);\n", "").replace(", kg", "")
    plain = plain.replace(", m;", ";").replace(", m/s^2", "")
    assert parse_warned(plain + "INITIAL := th(30);")[1] == []


def test_a_double_star_gets_the_hint_to_write_a_caret():
    with pytest.raises(ParseError, match=r"1:14: error: unexpected `\*`; expected a formula "
                                         r"\(a power is written `\^`: `x\^2`, not `x\*\*2`\)"):
        kidym.parse("m = 1; c = 2**3;\nB | Sx(x) | m, 0, 0, 0;\nCs.x = c;\n", filename="m.kdm")


def test_a_comment_left_open_at_its_line_end_is_the_error():
    text = ("m = 1;  # mass\nc = 2;  # spring #\nB | Sx(x) | m, 0, 0, 0;\nCs.x = c;\n"
            "INITIAL := x(1);  # start #\n")
    with pytest.raises(ParseError) as info:
        kidym.parse(text, filename="m.kdm")
    [e] = info.value.errors   # one error, at the comment's start, not on later lines
    assert (e.span.line, e.span.column) == (1, 9)
    assert e.message.startswith("this `#` comment is not closed on its line, so it runs on "
                                "to the `#` on line 2")
    # closed, the model is read; a comment over several lines stays a comment
    kidym.parse(text.replace("# mass", "# mass #"))
    kidym.parse("# a comment\n over two lines #\nm = 1; B | Sx(x) | m, 0, 0, 0;\n")


def test_a_genuine_error_after_a_multiline_comment_is_not_blamed_on_it():
    text = "# a header\n  of two lines #\nm = 1; B | Sx(x) | m, 0, 0, 0\nCs.x = 2;\n"
    with pytest.raises(ParseError, match=r"missing `;`|unexpected") as info:
        kidym.parse(text)
    assert "comment" not in info.value.errors[0].message


@pytest.mark.parametrize(("written", "listed"), [
    ("CALCULATION := DYNAMIX;", "DYNAMICS, KINEMATICS, EQUATIONS"),
    ("РАСЧЕТ := ДИНАМИКО;", "ДИНАМИКА, КИНЕМАТИКА, ПЕЧАТЬ УРАВНЕНИЙ"),
    ("РОЗРАХУНОК := ДИНАМІКО;", "ДИНАМІКА, КІНЕМАТИКА, ДРУК РІВНЯНЬ")])
def test_calculation_types_are_listed_in_the_language_of_the_keywords(written, listed):
    with pytest.raises(ParseError, match=f"unknown calculation type .*; expected one of: "
                                         f"{listed}"):
        kidym.parse("m = 1; B | Sx(x) | m, 0, 0, 0;\n" + written)
