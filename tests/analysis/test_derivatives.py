"""The two evaluations of the named derivatives (kidym/analysis/derivatives.py): the
first points by substitution into the graph's formulas (SymEngine, no code generated),
later ones by the generated Python function. Each is the other's oracle: the same
formulas evaluated by different code (SymEngine's arithmetic vs NumPy's), so they agree
to rounding, on models with and without constraints, inputs and time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import symengine as se

import kidym
from kidym.analysis.derivatives import SUBSTITUTED_POINTS, StateDerivatives, Substitution
from kidym.simulation.layout import parameter_vector

from .test_linearize import FOUR_BAR, RHEONOMIC

ROOT = Path(__file__).parents[2]
DOUBLE = ROOT / "examples/double_pendulum/double_pendulum.kdm"
DISC = ROOT / "examples/rolling_disc/rolling_disc.kdm"


def _generated(der: StateDerivatives, t: float, y: np.ndarray, p: np.ndarray):
    """``(q̇, M, F, derivatives, ∂M)`` by the generated functions only."""
    qdot, M, F, out = der.function(t, list(y), list(p))
    return [np.asarray(a, float) for a in (qdot, M, F, out)]


@pytest.mark.parametrize("case", [
    (DOUBLE, (), ()), (DOUBLE, ("m2", "g"), ()), (None, ("c",), RHEONOMIC),
    (DISC, (), ()), (None, ("M0",), FOUR_BAR)])
def test_substitution_equals_generated_function(case) -> None:
    """At random states and times: ``q̇, M, F`` (with constraints the block ``γ, Φ, c,
    G``), their derivatives by the states and inputs, and ``∂M``, by substitution equal
    the generated function's to 1e-12 of their scale."""
    path, inputs, text = case
    eq = kidym.derive(kidym.load(path) if path else kidym.parse(text))
    der = StateDerivatives.build(eq, inputs)
    p = parameter_vector(eq.model, None)
    rng = np.random.default_rng(11)
    for _ in range(SUBSTITUTED_POINTS):
        t = float(rng.uniform(0.0, 2.0))
        y = rng.uniform(-1.5, 1.5, eq.n_q + eq.n_w)
        pt = der(t, y, p, mass=True)        # substituted: fewer points than the limit
        assert "function" not in der._lazy and "mass function" not in der._lazy
        qdot, M, F, out = _generated(der, t, y, p)
        n_b = eq.n_q + eq.n_w + len(inputs)
        d = out.reshape(n_b, -1)
        for ours, ref in [(pt.qdot, qdot), (pt.M, M), (pt.F, F), (pt.dqdot, d[:, :eq.n_q]),
                          (pt.dF, d[:, eq.n_q:])]:
            assert ours.shape == ref.shape
            np.testing.assert_allclose(ours, ref, rtol=0,
                                       atol=1e-12 * max(1.0, np.abs(ref).max()))
        del der._lazy["function"]           # the next point substituted again
    # past the limit the generated functions take over, with the same values
    y = rng.uniform(-1.5, 1.5, eq.n_q + eq.n_w)
    pt = der(0.3, y, p, mass=True)
    assert "function" in der._lazy and "mass function" in der._lazy
    sub = der._substituted("mass", 0.3, y, p).reshape(n_b, -1)
    iu = np.triu_indices(eq.n_w)
    np.testing.assert_allclose(pt.dM[:, iu[0], iu[1]], sub, rtol=0,
                               atol=1e-12 * max(1.0, np.abs(sub).max()))


def test_substitution_declines_what_is_not_a_real_number() -> None:
    """A square root of a negative number, a division by zero: no value (``None``), so
    the generated code evaluates that point with its own handling; a function SymEngine
    leaves unevaluated (``atan2`` of numbers) is evaluated."""
    x, y = se.symbols("x y")

    class Bare:                             # a graph without named quantities
        def needed(self, exprs):
            return []

    assert Substitution(Bare(), [x], [se.sqrt(x)])([-1.0]) is None
    assert Substitution(Bare(), [x], [1 / x])([0.0]) is None
    out = Substitution(Bare(), [x, y], [se.atan2(x, y), se.sqrt(x) * y])([2.0, -1.0])
    np.testing.assert_allclose(out, [np.arctan2(2.0, -1.0), -np.sqrt(2.0)], rtol=1e-15)
