"""The named-quantity graph: chain-rule derivatives equal direct differentiation."""

import random

import symengine as se
import sympy

from kidym.symbolic.graph import Graph

t, q1, q2, w1, w2 = se.symbols("t q1 q2 w1 w2")


def make() -> Graph:
    g = Graph(t, [q1, q2], [w1, w2])
    g.set_coordinate_rate(q1, w1)
    g.set_coordinate_rate(q2, w2 * se.cos(q1) + t)  # rheonomic, non-trivial B and β
    return g


def _num(expr, vals):
    return float(sympy.sympify(expr).subs(vals))


def test_time_derivative_through_names_equals_direct_derivative():
    g = make()
    a = g.define("a", se.sin(q1) * q2)
    b = g.define("b", a**2 + se.exp(t) * a)
    c = g.define("c", b * se.cos(q2) / (1 + a**2))
    full = sympy.sympify(g.expand(c))
    # direct: d/dt with q1' = w1, q2' = w2 cos q1 + t, speeds held (ẇ = 0)
    Q1, Q2, W1, W2, T = sympy.symbols("q1 q2 w1 w2 t")
    direct = (sympy.diff(full, Q1) * W1 + sympy.diff(full, Q2) * (W2 * sympy.cos(Q1) + T)
              + sympy.diff(full, T))
    ours = sympy.sympify(g.expand(g.dt(c)))
    rng = random.Random(3)
    for _ in range(5):
        vals = {s: rng.uniform(-1, 1) for s in (Q1, Q2, W1, W2, T)}
        assert abs(float(direct.subs(vals)) - float(ours.subs(vals))) < 1e-12


def test_partial_derivative_by_speed_through_names():
    g = make()
    a = g.define("a", se.sin(q1))
    v = g.define("v", g.dt(a) * q2 + w2**2 * a)
    ours = sympy.sympify(g.expand(g.diff(v, w2)))
    direct = sympy.diff(sympy.sympify(g.expand(v)), sympy.Symbol("w2"))
    assert sympy.simplify(ours - direct) == 0
    assert g.diff(v, w1) != 0 and g.diff(a, w1) == 0


def test_derivatives_are_memoised_and_named():
    g = make()
    a = g.define("a", se.sin(q1) * q2)
    d1, d2 = g.dt(a), g.dt(a)
    assert d1 == d2 and str(d1) == "a't"
    n = len(g)
    g.dt(a)
    assert len(g) == n


def test_atomic_expressions_are_not_named():
    g = make()
    assert g.define("x", q1) == q1
    assert g.define("y", -q1) == -q1
    assert g.define("z", q1, keep=True) != q1


def test_constants_have_zero_rate():
    g = make()
    k = g.define("k", se.Symbol("m") * 2 + 1, keep=True)
    assert g.is_constant(k) and g.dt(k) == 0
