"""``ВИРТУАЛЬНЫЕ СВЯЗИ`` / ``ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ`` (seed 001): what the language
accepts, and the located errors for everything else."""

from __future__ import annotations

import re

import pytest
import symengine as se

import kidym
from kidym.errors import ParseError
from kidym.simulation.layout import parameter_vector

BASE = """m = 1; R = 1; alpha = 1000;
Jm.x.y = m;
f1 = x^2 + y^2 - R^2;
s1 = y + 0.5;
{line}
"""


def model(line: str) -> kidym.Model:
    return kidym.parse(BASE.format(line=line))


def error(line: str) -> tuple[str, int, int]:
    """The first error's message, line and column."""
    with pytest.raises(ParseError) as info:
        model(line)
    d = next(d for d in info.value.diagnostics if d.severity == "error")
    return d.message, d.span.line, d.span.column


@pytest.mark.parametrize("spelling", ["ВИРТУАЛЬНЫЕ СВЯЗИ", "ВІРТУАЛЬНІ В'ЯЗІ",
                                      "virtual constraints"])
def test_the_instruction_in_every_language(spelling: str) -> None:
    vc = model(f"{spelling} := f1(alpha);").virtual_constraints
    assert [(v.name, v.kind, v.alpha, v.approximation) for v in vc] == [
        ("f1", "equality", se.Symbol("alpha"), "polynomial")]


@pytest.mark.parametrize(("spelling", "word", "approximation"), [
    ("ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ", "ЭКСПОНЕНТА", "exponential"),
    ("ОБМЕЖУЮЧІ ПОВЕРХНІ", "Експонента", "exponential"),
    ("BOUNDING SURFACES", "polynomial", "polynomial"),
])
def test_bounding_surfaces_and_the_approximation(spelling: str, word: str,
                                                approximation: str) -> None:
    vc = model(f"{spelling} := s1(2*alpha, {word});").virtual_constraints
    assert [(v.name, v.kind, v.alpha, v.approximation) for v in vc] == [
        ("s1", "bound", 2 * se.Symbol("alpha"), approximation)]


@pytest.mark.parametrize(("line", "match", "column"), [
    ("VIRTUAL CONSTRAINTS := f2(alpha);", r"`f2` is listed in `VIRTUAL CONSTRAINTS` but is "
     r"not defined.*did you mean `f1`", 24),
    ("VIRTUAL CONSTRAINTS := R(alpha);", r"`R` is listed .* but has a value", 24),
    ("VIRTUAL CONSTRAINTS := x(alpha);", r"`x` is listed .* but is a coordinate", 24),
    ("v = x't; VIRTUAL CONSTRAINTS := v(alpha);", r"`v` .* depends on a speed", 33),
    ("VIRTUAL CONSTRAINTS := f1;", r"`f1` needs its approximation parameter α", 24),
    ("VIRTUAL CONSTRAINTS := f1(alpha, 2, 3);", r"lists items `f\(α\)` or `f\(α, "
     r"approximation\)`", 24),
    ("VIRTUAL CONSTRAINTS := f1(0);", r"α of `f1` .* must be a positive number .* got 0", 27),
    ("VIRTUAL CONSTRAINTS := f1(-alpha);", r"must be a positive number .* got -1000", 27),
    ("VIRTUAL CONSTRAINTS := f1(x);", r"α of `f1` .* depends on coordinate `x`; it must be "
     r"constant", 27),
    ("VIRTUAL CONSTRAINTS := f1(t);", r"depends on time `t`", 27),
    ("VIRTUAL CONSTRAINTS := f1(alfa);", r"depends on `alfa`, which has no value.*"
     r"did you mean `alpha`", 27),
    ("VIRTUAL CONSTRAINTS := f1(alpha, sinus);", r"unknown delta approximation `sinus`.*"
     r"`ПОЛИНОМ`/`POLYNOMIAL`, `ЭКСПОНЕНТА`/`EXPONENTIAL`", 34),
    ("VIRTUAL CONSTRAINTS := f1(1), f1(2);", r"`f1` is listed twice", 31),
    ("BOUNDING SURFACES := s1(1); VIRTUAL CONSTRAINTS := s1(1);", r"`s1` is listed twice", 52),
    ("УРАВНЕНИЯ := f1; VIRTUAL CONSTRAINTS := f1(1);", r"`f1` is listed both in "
     r"`VIRTUAL CONSTRAINTS` and in `УРАВНЕНИЯ`", 41),
])
def test_misuse_is_a_located_error(line: str, match: str, column: int) -> None:
    message, at_line, at_column = error(line)
    assert (at_line, at_column) == (5, column), message
    assert re.search(match, message), message


def test_a_constraint_of_no_coordinate_is_an_error_at_the_item() -> None:
    m = model("c = 2*alpha; VIRTUAL CONSTRAINTS := c(alpha);")
    with pytest.raises(ParseError, match="virtual constraint `c` depends on no coordinate") as e:
        kidym.derive(m)
    assert e.value.diagnostics[0].span.line == 5


def test_alpha_changed_at_run_time_must_stay_positive() -> None:
    m = model("VIRTUAL CONSTRAINTS := f1(2*alpha);")
    assert parameter_vector(m, {"alpha": 5.0})[2] == 5.0
    with pytest.raises(ValueError, match=r"α of virtual constraint `f1` is -2 with parameters "
                                         r"alpha = -1; it must be a positive number"):
        parameter_vector(m, {"alpha": -1.0})
