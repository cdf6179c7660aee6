"""Decimal literals become the nearest double everywhere (parameters, initial values,
generated NumPy and C); the oracle is Python's correctly rounded ``float(str)``."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import symengine as se

import kidym
from kidym.symbolic.numbers import to_float
from tests.codegen.shared import kidym_cache  # noqa: F401

#: Hard cases: the issue's own, halfway cases (ties to even and just above a tie),
#: 2^53 + 1, the boundary of the subnormals (2.2250738585072011e-308, the value that
#: hung Java and PHP), and some of Paxson's (1991) difficult decimal → binary cases.
HARD = [
    "0.9534570696121849", "0.1", "9007199254740993", "9007199254740995",
    "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203126",
    "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9406564584124654e-324",
    "5e+125", "69e+267", "999e-026", "7861e-034", "75569e-254", "928609e-261",
    "9210917e+080", "84863171e+114", "653777767e+273", "5232604057e-298",
    "27235667517e-109", "653532977297e-123", "3142213164987e-294",
    "46202199371337e-072", "231010996856685e-073", "9324754620109615e+212",
    "78459735791271921e+049", "272104041512242479e+200", "6802601037806061975e+198",
    "20505426358836677347e-221", "836168422905420598437e-234",
    "4891559871276714924261e+222", "7.038531e-26", "1.7976931348623157e308",
]
RNG = np.random.default_rng(1749)
RANDOM = [f"0.{RNG.integers(10**16, 10**17):017d}" for _ in range(40)] + [
    f"{RNG.integers(10**16, 10**17)}e{RNG.integers(-300, 290)}" for _ in range(40)]


@pytest.mark.parametrize("text", HARD + RANDOM)
def test_exact_rationals_round_to_the_nearest_double(text):
    exact = Fraction(text)
    value = se.Rational(exact.numerator, exact.denominator) if exact.denominator > 1 \
        else se.Integer(exact.numerator)
    assert to_float(value) == float(text)
    assert to_float(-value) == -float(text)


def test_symengine_alone_misses_the_nearest_double():
    """Why the helper exists: the issue's literal through SymEngine's float()."""
    assert float(se.Rational(9534570696121849, 10**16)) != float("0.9534570696121849")


def _model(texts: list[str]) -> str:
    """Parameters ``a<k> = lit``, outputs ``d<k> = lit*x`` (``x`` stays exactly 1) and
    coordinates ``y<k>`` starting at ``lit`` (no force: they stay there)."""
    lines = ["Jm.x = 1;"]
    init = ["t(0)", "x(1)", "x't(0)"]
    for k, text in enumerate(texts):
        lines += [f"a{k} = {text};", f"d{k} = {text}*x;", f"Jm.y{k} = 1;"]
        init += [f"y{k}({text})", f"y{k}'t(0)"]
    show = ", ".join(f"d{k}" for k in range(len(texts)))
    return "\n".join([*lines, f"INITIAL := {', '.join(init)};", "TIME := t(0, 1);",
                      f"SHOW := {show};"])


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_literals_reach_both_engines_correctly_rounded(engine):
    """A parameter's value, an initial value and a literal in the equations (an
    output) all equal ``float(lit)``."""
    texts = [t for t in HARD + RANDOM[::4] if 1e-290 < float(t) < 1e290]
    model = kidym.parse(_model(texts))
    res = kidym.simulate(model, engine=engine, n_points=3)
    for k, text in enumerate(texts):
        want = float(text)
        assert model.parameter_values[f"a{k}"] == want, text
        assert model.initial[f"y{k}"] == want, text
        assert res.values[f"y{k}"][0] == want and res.values[f"y{k}"][-1] == want, text
        assert res.values[f"d{k}"][0] == want and res.values[f"d{k}"][-1] == want, text
