"""The named-quantity graph: chain-rule derivatives equal direct differentiation."""

import random
from pathlib import Path

import pytest
import symengine as se
import sympy

from kidym.symbolic.graph import Graph

t, q1, q2, w1, w2 = se.symbols("t q1 q2 w1 w2")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


def _reachable_state(graph: Graph, expr) -> frozenset:
    """Brute force: walk every named quantity ``expr`` reaches, collect the state."""
    state = {graph.time, *graph.coordinates, *graph.speeds, *graph.inputs}
    formulas = graph.definitions
    seen, stack, out = set(), list(se.sympify(expr).free_symbols), set()
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        if s in state:
            out.add(s)
        elif s in formulas:
            stack.extend(formulas[s].free_symbols)
    return frozenset(out)


@pytest.mark.parametrize("model", [
    "chain/chain10.kdm", "andrews_squeezer/andrews_squeezer.kdm",
    "rolling_disc/rolling_disc.kdm", "heavy_top/heavy_top.kdm",
    "two_link_control/two_link_control.kdm", "variable_links/one_link_prescribed.kdm",
])
def test_dependencies_equal_a_brute_force_walk_on_example_models(model):
    """The bitmask dependencies of every named quantity of a derived model are the
    state symbols a walk through the formulas reaches (a second route)."""
    import kidym

    graph = kidym.derive(kidym.load(EXAMPLES / model)).graph
    state = (graph.time, *graph.coordinates, *graph.speeds, *graph.inputs)
    checked = 0
    for sym, formula in graph.definitions.items():
        expected = _reachable_state(graph, formula)
        assert graph.dependencies(sym) == expected, sym
        assert graph.dependencies(formula) == expected, sym
        assert graph.is_constant(sym) == (not expected)
        for base in state:
            assert graph.depends_on(sym, base) == (base in expected)
        checked += 1
    assert checked > 50


def test_a_pickled_graph_reads_its_state_on_first_use_and_goes_on_deriving():
    """A graph read back from a pickle (the stored equations, kidym.eom.stored) has
    the same names and formulas, and new derivatives through them equal the
    original's (compared expanded)."""
    import pickle

    g = make()
    a = g.define("a", se.sin(q1) * q2)
    b = g.define("b", a**2 + se.exp(t) * a)
    g.dt(b)
    h = pickle.loads(pickle.dumps(g))
    assert "_stored" in vars(h)        # nothing read yet
    assert h.definitions == g.definitions
    assert h.dependencies(b) == g.dependencies(b) == {q1, q2, t}
    for graph in (g, h):
        c = graph.define("c", b * se.cos(q2))
        assert str(c) == "c"
    assert sympy.simplify(sympy.sympify(h.expand(h.dt(se.Symbol("c"))))
                          - sympy.sympify(g.expand(g.dt(se.Symbol("c"))))) == 0
    copy = pickle.loads(pickle.dumps(h)).copy()   # a copy of one not read yet
    assert copy.definitions == h.definitions


def test_a_pickled_graph_read_by_threads_at_once_is_read_whole():
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    g = make()
    x = q1
    for k in range(200):
        x = g.define(f"x{k}", se.sin(x) * q2 + k)
    h = pickle.loads(pickle.dumps(g))
    with ThreadPoolExecutor(4) as pool:
        sizes = list(pool.map(lambda _: len(h.definitions), range(8)))
    assert sizes == [len(g)] * 8
