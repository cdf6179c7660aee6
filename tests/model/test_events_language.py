"""``СОБЫТИЯ`` / ``ПОДІЇ`` / ``EVENTS``: what the language accepts, and the located
errors for everything else (unknown names, a reset of a non-state, accelerations, a
malformed direction or action)."""

from __future__ import annotations

import re

import pytest
import symengine as se

import kidym
from kidym.errors import ParseError
from kidym.lang.fmt import format_source

BASE = """m = 1; g = 9.81; e = 0.8;
Ball | Sz(z) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
h = z - 1;
{line}
"""


def model(line: str) -> kidym.Model:
    return kidym.parse(BASE.format(line=line))


def errors(line: str) -> list[tuple[str, int, int]]:
    """Every error's message, line and column."""
    with pytest.raises(ParseError) as info:
        model(line)
    return [(d.message, d.span.line, d.span.column) for d in info.value.diagnostics
            if d.severity == "error"]


@pytest.mark.parametrize(("spelling", "down", "stop"), [
    ("СОБЫТИЯ", "ВНИЗ", "СТОП"), ("ПОДІЇ", "ВНИЗ", "ЗУПИНКА"), ("events", "down", "stop"),
    ("EVENT", "DOWN", "STOP")])
def test_the_instruction_in_every_language(spelling, down, stop):
    events = model(f"{spelling} := Hit(z, {down}, z't = -e*z't), Top(h, ОБА, {stop}), "
                   "Pass(z - 0.5, ВВЕРХ);").events
    z, zt, e = se.Symbol("z"), se.Symbol("z't"), se.Symbol("e")
    assert [(ev.name, ev.function, ev.direction, ev.stop, ev.resets) for ev in events] == [
        ("Hit", z, -1, False, (("z't", -e * zt),)),
        ("Top", se.Symbol("h"), 0, True, ()),
        ("Pass", z - se.Rational(1, 2), 1, False, ())]


def test_a_reset_of_several_states_and_kidym_fmt_keeps_the_items():
    text = BASE.format(line="СОБЫТИЯ := Hit(z, ВНИЗ, z't = -e*z't, z = 0);")
    assert kidym.parse(text).events[0].resets == (
        ("z't", -se.Symbol("e") * se.Symbol("z't")), ("z", se.Integer(0)))
    formatted = format_source(text, language="en")
    assert "EVENTS := Hit(z, ВНИЗ, z't = -e*z't, z = 0);" in formatted
    assert kidym.parse(formatted).events == kidym.parse(text).events


@pytest.mark.parametrize(("line", "message", "column"), [
    ("СОБЫТИЯ := A(zz, ВНИЗ);", r"condition of event `A` depends on `zz`, which has no "
     r"value", 14),
    ("СОБЫТИЯ := A(z, ВНИЗ, z't = -k*z't);", r"reset of `z't` at event `A` depends on `k`",
     30),
    ("СОБЫТИЯ := A(z, ВБОК);", r"event `A` has direction `ВБОК`; expected one of "
     r"`ВНИЗ`/`DOWN`, `ВВЕРХ`/`UP`, `ОБА`/`BOTH`", 17),
    ("СОБЫТИЯ := A(z, -1);", r"event `A` has direction `-1`", 17),
    ("СОБЫТИЯ := A(z, ВНИЗ, e = 0);", r"event `A` resets `e`, which is not a state \(the "
     r"states are z, z't\); a parameter is constant during a run: to switch a mode, make "
     r"`e` a coordinate .*`e't = 0;`", 23),
    ("СОБЫТИЯ := A(z, ВНИЗ, h = 0);", r"resets `h`, which is not a state", 23),
    ("СОБЫТИЯ := A(z, ВНИЗ, z't = z't't);", r"the reset of `z't` of event `A` uses `z't't`, "
     r"an acceleration", 29),
    ("СОБЫТИЯ := A(z't't, ВНИЗ);", r"the condition of event `A` uses `z't't`, an "
     r"acceleration", 14),
    ("СОБЫТИЯ := A(z = 0, ВВЕРХ);", r"the condition of event `A` is the formula whose zero "
     r"is the event: write `z`, not `z = 0`", 14),
    ("СОБЫТИЯ := A(z);", r"event `A` needs a condition and a direction", 12),
    ("СОБЫТИЯ := A(z, ВНИЗ, СТОП, z = 1);", r"event `A` both stops the run and resets", 12),
    ("СОБЫТИЯ := A(z, ВНИЗ, ПОТОМ);", r"event `A`: expected `СТОП`/`STOP` or a reset "
     r"`state = formula`, got `ПОТОМ`", 23),
    ("СОБЫТИЯ := A(z, ВНИЗ), A(z - 1, ВВЕРХ);", r"event `A` is given twice", 24),
    ("СОБЫТИЯ := A(z, ВНИЗ, z = 1, z = 2);", r"event `A` resets `z` twice", 30),
])
def test_located_errors(line, message, column):
    found = errors(line)
    assert any(re.search(message, m) and ln == 5 and col == column
               for m, ln, col in found), found


def test_a_dependent_velocity_is_not_a_state():
    text = ("m = 1; Ball | Sx(x), Sy(y) | m, 0, 0, 0; y't = x't;"
            "СОБЫТИЯ := A(x - 1, ВВЕРХ, y't = 0);")
    with pytest.raises(ParseError, match=r"resets `y't`, which is not a state .*given by a "
                                         r"velocity formula"):
        kidym.parse(text)


def test_every_error_of_the_list_at_once():
    found = errors("СОБЫТИЯ := A(zz, ВНИЗ), B(z, ВБОК), C(z, ВНИЗ, e = 0);")
    assert len(found) == 3


def test_the_language_is_not_widened_elsewhere():
    """`name = formula` is an argument of an event item only, not of a function."""
    with pytest.raises(ParseError, match="5:"):
        model("ПОКАЗАТЬ := sin(z = 1);")
