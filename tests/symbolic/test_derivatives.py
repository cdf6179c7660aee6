"""Derivatives of abs, sign, floor, ceil, %, min/max and conditionals.

Oracles: central finite differences of the functions themselves, and motions of
models whose non-smooth transform equals a smooth one on the region travelled
(``Sx(abs(q))`` is ``Sx(q)`` while ``q > 0``), in both engines.
"""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
import sympy as sp

import kidym
from kidym.symbolic.derivatives import derivative
from tests.codegen.shared import kidym_cache  # noqa: F401

x, y = se.symbols("x y")
RNG = np.random.default_rng(7)

CASES = [
    se.Abs(x), se.sin(se.Abs(x * x - 1)) * y, se.sign(x) * x ** 3, se.floor(x) * x,
    se.ceiling(x / 2) + x, x - 3 * se.floor(x / 3), y - x * se.floor(y / x),
    se.Min(x, y * y), se.Max(x * y, 1 - x, se.cos(x)),
    se.Piecewise((x ** 2, x < y), (se.Abs(x) * y, True)),
    se.exp(se.Piecewise((se.sin(x), x > 0), (x - 3 * se.floor(x / 3), True))),
    se.Abs(x * se.floor(x) + se.Min(x, 0)),
]


def _numeric(expr):
    return sp.lambdify([sp.Symbol("x"), sp.Symbol("y")], sp.sympify(expr), modules="math")


@pytest.mark.parametrize("expr", CASES, ids=str)
def test_derivative_matches_finite_differences_away_from_kinks(expr):
    f = _numeric(expr)
    for var in (x, y):
        d = derivative(expr, var)
        assert "Derivative" not in str(d) and "Subs" not in str(d)
        df = _numeric(d)
        checked = 0
        for _ in range(40):
            p = dict(zip("xy", RNG.uniform(-3, 3, 2), strict=True))
            h = 1e-6
            lo, hi = dict(p), dict(p)
            lo[str(var)] -= h
            hi[str(var)] += h
            fd = (f(**hi) - f(**lo)) / (2 * h)
            mid = f(**p)
            if abs((f(**hi) - mid) - (mid - f(**lo))) > 1e-9 * (1 + abs(mid)) * 1e3:
                continue        # a kink or jump within ±h: no derivative to compare
            assert df(**p) == pytest.approx(fd, rel=1e-6, abs=1e-6), (expr, var, p)
            checked += 1
        assert checked > 20


def test_partial_derivative_names_of_non_smooth_definitions():
    model = kidym.parse("u0 = 1; f = abs(u)*v + (u % 2) + (v > u ? v^2 ! u); "
                        "g = f'u; h = f'v; Cs.u = 1; Cs.v = 1;")
    defs = {d.name: d.expr for d in model.definitions}
    u, v = se.symbols("u v")
    for uu, vv in ((0.7, -1.3), (-2.2, 0.4), (1.5, 2.5)):
        at = {u: uu, v: vv}
        assert float(defs["f'u"].subs(at)) == pytest.approx(vv * np.sign(uu) + 1 + (vv <= uu))
        assert float(defs["f'v"].subs(at)) == pytest.approx(abs(uu) + 2 * vv * (vv > uu))


SLIDER = """
m1 = 2; m2 = 0.7; l = 0.9; g = 9.81;
Slider | Sx({X}) | m(m1);
Rod~Slider | Rz(phi) | Sx(l/2), m2, 0, m2*l^2/12, m2*l^2/12;
GRAVITY := -g, -g, 0;
INITIAL := t(0), q({q0}), q't(0.3), phi(0.4), phi't(-0.2);
TIME := t(0, 0.3);
"""

#: (non-smooth transform, the smooth one it equals on the motion, q(0))
SAME_MOTION = [
    ("abs(q)", "q", 1.0), ("abs(q)", "-q", -1.0), ("sign(q)*q", "q", 1.0),
    ("(q > 0 ? q ! -q)", "-q", -1.0), ("q % 10", "q", 1.0), ("q + floor(q/5)", "q", 1.0),
    ("2*abs(q) - abs(q - 1.5) + ceil(q)", "3*q - 1.5 + 2", 1.0),
]


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize(("rough", "smooth", "q0"), SAME_MOTION)
def test_non_smooth_shift_moves_like_its_smooth_equal(rough, smooth, q0, engine):
    """The velocity of ``Sx(f(q))`` needs ``∂f/∂q``; the motion stays where ``f`` is smooth."""
    tight = {"rtol": 1e-11, "atol": 1e-12, "engine": engine}
    got = kidym.simulate(kidym.parse(SLIDER.format(X=rough, q0=q0)), **tight)
    want = kidym.simulate(kidym.parse(SLIDER.format(X=smooth, q0=q0)), **tight)
    for name in ("q", "phi", "q't", "phi't"):
        assert np.allclose(got.values[name], want.values[name], atol=1e-9), name


PRESCRIBED = """
m = 0.7; l = 0.9; g = 9.81;
Rod | Sx({X}), Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
GRAVITY := 0, -g, 0;
INITIAL := t(0), phi(0.4), phi't(-0.2);
TIME := t(0, 2);
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_prescribed_non_smooth_motion_of_the_support(engine):
    """``Sx(abs(sin(t)))`` is ``Sx(sin(t))`` for 0 < t < π: the support's acceleration
    (a second time derivative through abs) drives the pendulum alike."""
    tight = {"rtol": 1e-11, "atol": 1e-12, "engine": engine}
    got = kidym.simulate(kidym.parse(PRESCRIBED.format(X="abs(sin(t))")), **tight)
    want = kidym.simulate(kidym.parse(PRESCRIBED.format(X="sin(t)")), **tight)
    moved = kidym.simulate(kidym.parse(PRESCRIBED.format(X="0")), **tight)
    assert np.allclose(got.values["phi"], want.values["phi"], atol=1e-9)
    assert np.abs(got.values["phi"] - moved.values["phi"]).max() > 0.1   # it matters
