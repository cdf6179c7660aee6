"""Batch runs: many parameter sets and initial conditions in one call, in parallel."""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from tests.codegen.shared import compiled, kidym_cache  # noqa: F401

PENDULUM = ("m = 1; l = 1; g = 9.81; Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;"
            "GRAVITY := g, 0, 0;")


def _period(t: np.ndarray, x: np.ndarray) -> float:
    ups = [t[k - 1] - x[k - 1] * (t[k] - t[k - 1]) / (x[k] - x[k - 1])
           for k in range(1, len(x)) if x[k - 1] < 0 <= x[k]]
    return float(np.diff(ups).mean())


def test_parameter_sweep_gives_the_small_oscillation_periods():
    lengths = [0.5, 1.0, 2.0, 3.0]
    cs = compiled(PENDULUM)
    b = kidym.simulate_batch(cs, parameters=[{"l": v} for v in lengths],
                             initial=[{"phi": 1e-4}] * 4, t_end=12,
                             t_eval=np.linspace(0, 12, 6001), rtol=1e-11, atol=1e-15)
    assert b.y.shape == (4, 2, 6001) and b.values["phi"].shape == (4, 6001)
    assert b.success.all()
    for k, length in enumerate(lengths):
        # physical pendulum: T = 2π sqrt(I_O / (m g d)) = 2π sqrt(2 l / (3 g))
        exact = 2 * np.pi * np.sqrt(2 * length / (3 * 9.81))
        assert _period(b.t, b.values["phi"][k]) == pytest.approx(exact, rel=1e-6)


def test_batch_equals_single_runs():
    cs = compiled(PENDULUM)
    inits = [{"phi": a, "phi't": w} for a, w in [(0.1, 0.0), (1.0, 0.5), (2.5, -1.0)]]
    b = kidym.simulate_batch(cs, initial=inits, t_end=3, n_points=31, workers=2)
    for k, ic in enumerate(inits):
        r = kidym.simulate(cs, initial=ic, t_end=3, n_points=31)
        np.testing.assert_array_equal(b.y[k], r.y)
    with pytest.raises(ValueError, match="equal length"):
        kidym.simulate_batch(cs, initial=inits, parameters=[{}], t_end=1)
