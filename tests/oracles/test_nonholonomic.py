"""Rolling disc and Chaplygin sleigh: kidym (both routes) against SymPy ``KanesMethod``
with ``u_dependent`` and velocity constraints (tests/oracles/nonholonomic.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kidym import derive, load
from kidym.simulation.simulate import NumpySystem
from tests.oracles.nonholonomic import chaplygin_sleigh, rolling_disc

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def disc_oracle():
    return rolling_disc()


@pytest.fixture(scope="module")
def sleigh_oracle():
    return chaplygin_sleigh()


def _system(path: str, route: str) -> NumpySystem:
    return NumpySystem.build(derive(load(EXAMPLES / path), route=route))


@pytest.mark.parametrize("route", ["two-stage", "direct"])
def test_rolling_disc_against_kanes_method(disc_oracle, route):
    sysm = _system("rolling_disc/rolling_disc.kdm", route)
    assert sysm.state_names == ("x", "y", "psi", "theta", "phi", "psi't", "theta't", "phi't")
    for _ in range(10):
        params = {"m": RNG.uniform(0.5, 2), "r": RNG.uniform(0.1, 1), "g": 9.81}
        y = np.concatenate([RNG.uniform(-1, 1, 5), RNG.uniform(-3, 3, 3)])
        y[3] = RNG.uniform(-1.2, 1.2)  # lean away from lying flat
        qdot, M, F, _ = sysm.evaluate(0.0, y, sysm.parameter_vector(params))
        wdot = np.linalg.solve(M, F)
        q = dict(zip(sysm.state_names[:5], y[:5]))
        u = dict(zip(sysm.state_names[5:], y[5:]))
        oq, ou = disc_oracle.evaluate(q, u, params)
        assert np.allclose(qdot, [oq[n] for n in sysm.state_names[:5]], rtol=1e-10, atol=1e-10)
        assert np.allclose(wdot, [ou[n] for n in sysm.state_names[5:]], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("route", ["two-stage", "direct"])
def test_chaplygin_sleigh_against_kanes_method(sleigh_oracle, route):
    sysm = _system("chaplygin_sleigh/chaplygin_sleigh.kdm", route)
    assert sysm.state_names == ("x", "y", "theta", "theta't", "v")
    for _ in range(10):
        params = {"m": RNG.uniform(0.5, 2), "b": RNG.uniform(-1, 1), "J": RNG.uniform(0.1, 1)}
        x, yy, th, thd, v = RNG.uniform(-2, 2, 5)
        qdot, M, F, _ = sysm.evaluate(0.0, np.array([x, yy, th, thd, v]),
                                      sysm.parameter_vector(params))
        thdd, vdot = np.linalg.solve(M, F)
        # the oracle's independent speeds are ẋ and θ̇ (ẋ = v cos θ)
        oq, ou = sleigh_oracle.evaluate({"x": x, "y": yy, "theta": th},
                                        {"x't": v * np.cos(th), "theta't": thd}, params)
        assert np.allclose(qdot, [oq["x"], oq["y"], oq["theta"]], rtol=1e-10, atol=1e-10)
        assert np.isclose(thdd, ou["theta't"], rtol=1e-10, atol=1e-10)
        # d/dt (v cos θ) = v̇ cos θ − v θ̇ sin θ
        assert np.isclose(vdot * np.cos(th) - v * thd * np.sin(th), ou["x't"],
                          rtol=1e-10, atol=1e-10)


def test_chaplygin_sleigh_closed_form():
    """v̇ = b θ̇², θ̈ = −m b v θ̇ / (J + m b²) (Neimark & Fufaev)."""
    sysm = _system("chaplygin_sleigh/chaplygin_sleigh.kdm", "two-stage")
    m, b, J = 2.0, 0.4, 0.05
    for _ in range(5):
        th, thd, v = RNG.uniform(-2, 2, 3)
        _, M, F, _ = sysm.evaluate(0.0, np.array([0.3, -0.1, th, thd, v]),
                                   sysm.parameter_vector())
        thdd, vdot = np.linalg.solve(M, F)
        assert np.isclose(vdot, b * thd**2, rtol=1e-12)
        assert np.isclose(thdd, -m * b * v * thd / (J + m * b**2), rtol=1e-12)
