"""Formula grammar and its SymEngine meaning: precedence, literals, functions."""

from __future__ import annotations

import pytest
import symengine as se

from kidym.errors import ParseError
from kidym.lang import ast, parse
from kidym.lang.formulas import Converter, FormulaError
from kidym.lang.parser import parse_statements
from kidym.model.model import TIME

x, y, a, b = se.symbols("x y a b")


def formula(text: str) -> se.Basic:
    """The SymEngine expression of ``text`` (parsed as the right side of ``f = …``)."""
    parsed = parse_statements(f"f = {text};")
    assert not parsed.diagnostics, [d.message for d in parsed.diagnostics]
    stmt = parsed.statements[0]
    assert isinstance(stmt, ast.Variable)
    return Converter()(stmt.expr)


@pytest.mark.parametrize(("text", "expected"), [
    ("-x^2", -(x**2)),
    ("-2^2", se.Integer(-4)),
    ("2^3^2", se.Integer(512)),
    ("(2^3)^2", se.Integer(64)),
    ("2^-1", se.Rational(1, 2)),
    ("-x^-2", -(x**-2)),
    ("a - b - x", a - b - x),
    ("a / b / x", a / (b * x)),
    ("a - -b", a + b),
    ("a*-b", -a * b),
    ("a + b*x^2", a + b * x**2),
    ("(a + b)*x", (a + b) * x),
    ("+x", x),
    ("7 % 3", se.Integer(1)),
    ("-7 % 3", se.Integer(2)),
    ("x % y", x - y * se.floor(x / y)),
])
def test_precedence_and_associativity(text: str, expected: se.Basic) -> None:
    assert formula(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("12", se.Integer(12)),
    ("0.4", se.Rational(2, 5)),
    ("1.5", se.Rational(3, 2)),
    (".5", se.Rational(1, 2)),
    ("1e-3", se.Rational(1, 1000)),
    ("2.5E+2", se.Integer(250)),
    ("3.", se.Integer(3)),
])
def test_numbers_are_exact(text: str, expected: se.Basic) -> None:
    value = formula(text)
    assert value == expected
    assert isinstance(value, se.Integer | se.Rational)


@pytest.mark.parametrize(("text", "expected"), [
    ("sqrt(x)", se.sqrt(x)), ("tg(x)", se.tan(x)), ("tan(x)", se.tan(x)),
    ("ctg(x)", se.cot(x)), ("arcsin(x)", se.asin(x)), ("arccos(x)", se.acos(x)),
    ("arctg(x)", se.atan(x)), ("atan2(y, x)", se.atan2(y, x)), ("exp(x)", se.exp(x)),
    ("ln(x)", se.log(x)), ("log(x)", se.log(x)), ("sh(x)", se.sinh(x)), ("ch(x)", se.cosh(x)),
    ("th(x)", se.tanh(x)), ("arsh(x)", se.asinh(x)), ("abs(x)", se.Abs(x)),
    # sign by its definition (SymEngine's own sign node crashed on sign((-u)^p))
    ("sign(x)", se.Piecewise((1, se.Gt(x, 0)), (-1, se.Lt(x, 0)), (0, True))),
    ("floor(x)", se.floor(x)), ("ceil(x)", se.ceiling(x)),
    ("pi/2", se.pi / 2), ("exp", se.E), ("exp^2", se.E**2), ("t", TIME),
])
def test_functions_and_constants(text: str, expected: se.Basic) -> None:
    assert formula(text) == expected


def test_atan2_takes_y_then_x() -> None:
    assert float(formula("atan2(1, 0)")) == pytest.approx(1.5707963267948966)
    assert float(formula("atan2(0, -1)")) == pytest.approx(3.141592653589793)


@pytest.mark.parametrize(("op", "value_at_1", "value_at_3"), [
    ("<", 10, 20), (">", 20, 10), ("<=", 10, 20), (">=", 20, 10), ("==", 20, 20),
    ("\\=", 10, 10),
])
def test_conditional(op: str, value_at_1: int, value_at_3: int) -> None:
    expr = formula(f"x {op} 2 ? 10 ! 20")
    assert isinstance(expr, se.Piecewise)
    assert expr.subs({x: 1}) == value_at_1
    assert expr.subs({x: 3}) == value_at_3


def test_conditional_is_loosest_and_nests_in_the_else_branch() -> None:
    expr = formula("x + 1 < 0 ? -1 ! x > 0 ? 1 ! 0")
    assert [expr.subs({x: v}) for v in (-5, 0, 5)] == [-1, 0, 1]


def test_names_keep_quotes_and_scripts() -> None:
    assert formula("x't + λ0 + ωХКуля + Куля_1 + x't't") == (
        se.Symbol("x't") + se.Symbol("λ0") + se.Symbol("ωХКуля") + se.Symbol("Куля_1")
        + se.Symbol("x't't"))


def test_names_are_case_sensitive() -> None:
    assert formula("X - x") == se.Symbol("X") - x


def test_renaming_applies_to_derivatives() -> None:
    parsed = parse_statements("f = omegax@B + omegax@B't;")
    conv = Converter(lambda n: "ωXB" + n[len("omegax@B"):] if n.startswith("omegax@B") else n)
    assert conv(parsed.statements[0].expr) == se.Symbol("ωXB") + se.Symbol("ωXB't")


@pytest.mark.parametrize(("text", "match"), [
    ("sinn(x)", r"unknown function `sinn` \(did you mean `sin`\?\)"),
    ("atan2(x)", "function `atan2` takes 2 arguments, got 1"),
    ("sin(x, y)", "function `sin` takes 1 argument, got 2"),
    ("9^9^9^9", "number too large"),
    ("1/0", "undefined or infinite"),
])
def test_formula_errors(text: str, match: str) -> None:
    with pytest.raises(FormulaError, match=match):
        formula(text)


def test_unknown_function_in_a_model_is_located() -> None:
    with pytest.raises(ParseError, match="unknown function `sinn`") as info:
        parse("m = 1;\nJm.x = m*sinn(2);")
    [d] = info.value.errors
    assert (d.span.line, d.span.column, d.span.end_column) == (2, 10, 14)


def test_incomplete_conditional_is_a_syntax_error() -> None:
    with pytest.raises(ParseError, match=r"needs its `! b` branch"):
        parse("m = 1; Jm.x = x > 0 ? m;")


def test_huge_exponent_literal_is_refused() -> None:
    with pytest.raises(ParseError, match=r"number `1e999` is out of range"):
        parse("m = 1e999;")


@pytest.mark.parametrize("literal", ["1" * 5000, "0." + "0" * 4999 + "1", "2" * 1001 + "e-300"])
def test_literal_of_too_many_digits_is_a_located_error(literal: str) -> None:
    # 5000 digits: Python refuses int("1"*5000) (a ValueError with no location before)
    with pytest.raises(ParseError, match=r"number `\d[\d.]{9}…[\de-]{10}` has \d+ digits; a "
                                         r"literal has at most 1000") as info:
        parse(f"m = 1;\nk = {literal};\nJm.x = m*k;")
    [d] = info.value.errors
    assert (d.span.line, d.span.column, d.span.end_column) == (2, 5, 5 + len(literal))


def test_literal_of_many_digits_is_read_exactly() -> None:
    # 1000 digits are accepted and read exactly: 0.333…3 (1000 threes) is 1/3 to a double
    model = parse(f"k = 0.{'3' * 999};\nJm.x = k;")
    assert model.parameter_values["k"] == 1 / 3


@pytest.mark.parametrize("text", [
    # fuzzer seed 1789: a power of a name with a double exponent gives NaN, and its `%`
    # asked SymEngine for floor(nan), which kills the process with SIGFPE
    "(-1e400 % (-(((1e400 - 1) * .5) / x) ^ 1e300))",
    "floor((-(3 / x) ^ 1e300) * 0 / 0.0)",
    "ceil(-(1e400 / x) ^ 1e300 / (-(1e400 / x) ^ 1e300))",
])
def test_floor_of_a_number_that_is_not_finite_is_an_error_not_a_crash(text: str) -> None:
    # in a child process: the defect this guards against is a signal, not an exception
    import subprocess
    import sys
    code = ("from tests.lang.test_formulas import formula\n"
            "from kidym.lang.formulas import FormulaError\n"
            f"try:\n    formula({text!r})\nexcept FormulaError as e:\n    print('error:', e)\n"
            "else:\n    print('formed')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr[-500:])
    assert run.stdout.startswith(("error:", "formed")), run.stdout
