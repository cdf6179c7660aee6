"""Andrews' squeezing mechanism (examples/andrews_squeezer) against its publication.

Hairer & Wanner II §VII.7 and the Test Set for IVP Solvers (problem ``andrews``), as
transcribed in :mod:`tests.oracles.andrews`: kidym's equations, formed from the seven
body records, the spring element and the driving torque, equal the published ``M``,
``f``, ``g``, ``G``; the run reaches the published reference solution at t = 0.03 s in
both engines; the consistent start recovers the published initial positions.

The reference comes from an index-3 DAE code (PSIDE, rtol = atol = 1e-14), whose speed
and multiplier components are less accurate than its positions: the test set scores a
solver on the seven positions only. kidym's converged runs (DOP853 and ERK8 at rtol 1e-12
and 1e-13) agree with each other far closer than with the reference, and differ from it
by up to 3e-10 (relative) in the positions, 5e-8 in the speeds and 1.3e-6 in the
multipliers (``examples/andrews_squeezer/compare.py`` prints them): that is what the
reference allows, so the bounds are 1e-9, 2e-7 and 5e-6 (BDF, of order at most 5, at
3e-9 in the positions).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.oracles import andrews

MODEL = Path(__file__).parents[2] / "examples" / "andrews_squeezer" / "andrews_squeezer.kdm"
SPEEDS = tuple(f"{n}'t" for n in andrews.COORDINATES)


@pytest.fixture(scope="module")
def equations() -> kidym.Equations:
    return kidym.derive(kidym.load(MODEL))


def test_the_model_is_the_published_one(equations):
    assert tuple(map(str, equations.coordinates)) == andrews.COORDINATES
    assert tuple(map(str, equations.speeds)) == SPEEDS
    assert equations.n_dof == 1 and equations.m == 6
    assert equations.model.parameter_values == pytest.approx(andrews.PARAMETERS, rel=0,
                                                              abs=0)


def test_mass_matrix_forces_and_constraints_equal_the_published_ones(equations):
    system = NumpySystem.build(equations)
    p = system.parameter_vector()
    rng = np.random.default_rng(11)
    for _ in range(6):
        q = andrews.Q0 + rng.uniform(-1.0, 1.0, 7)
        qd = rng.uniform(-500.0, 500.0, 7)
        y = np.concatenate([q, qd])
        M, F, block = system.constraint_block(0.0, y, p)
        np.testing.assert_allclose(M, andrews.mass_matrix(q), rtol=1e-12,
                                   atol=1e-12 * np.abs(M).max())
        f = andrews.forces(q, qd)
        np.testing.assert_allclose(F, f, rtol=1e-11, atol=1e-11 * np.abs(f).max())
        np.testing.assert_allclose(block.phi, andrews.constraints(q), rtol=0, atol=1e-15)
        G = andrews.jacobian(q)
        np.testing.assert_allclose(block.G, G, rtol=0, atol=1e-14)
        np.testing.assert_allclose(block.c, G @ qd, rtol=0, atol=1e-12 * np.abs(qd).max())
        # γ = −d/dt(G q̇) at q̈ = 0: the derivative of the published G along q̇
        h = 1e-7
        dG = (andrews.jacobian(q + h * qd) - andrews.jacobian(q - h * qd)) / (2 * h)
        gamma = -dG @ qd
        np.testing.assert_allclose(block.gamma, gamma, rtol=0,
                                   atol=1e-6 * np.abs(gamma).max())


def test_the_start_from_rounded_guesses_is_the_published_consistent_one():
    guesses = {n: round(float(v), 2) for n, v in zip(andrews.COORDINATES, andrews.Q0)}
    guesses["be"] = float(andrews.Q0[0])   # the crank angle, kept
    # every coordinate but the crank's is a guess the start may solve (`СВОБОДНЫЕ`)
    model = kidym.load(MODEL)
    model = dataclasses.replace(model, free=tuple(n for n in andrews.COORDINATES
                                                  if n != "be"))
    r = kidym.simulate(model, t_end=1e-6, n_points=2, initial=guesses)
    q0 = np.array([r[n][0] for n in andrews.COORDINATES])
    assert r["be"][0] == andrews.Q0[0]
    np.testing.assert_allclose(q0, andrews.Q0, rtol=0, atol=1e-14)
    assert {"ga", "ph", "de", "om", "ep"} <= set(r.stats["initial_adjusted"])


@pytest.mark.parametrize(("engine", "method", "bound"), [
    ("numpy", "DOP853", 1e-9), ("compiled", "ERK8", 1e-9), ("compiled", "BDF", 3e-9)])
def test_the_run_reaches_the_published_reference_at_t_003(equations, engine, method, bound):
    r = kidym.simulate(equations, engine=engine, method=method, rtol=1e-12, atol=1e-14,
                       t_eval=np.array([0.0, andrews.T_REF]))
    assert r.success and r.t[-1] == andrews.T_REF
    q = np.array([r[n][-1] for n in andrews.COORDINATES])
    qd = np.array([r[n][-1] for n in SPEEDS])
    lam = np.array([r[f"λg{k}"][-1] for k in range(1, 7)])
    np.testing.assert_allclose(q, andrews.Q_REF, rtol=bound)
    np.testing.assert_allclose(qd, andrews.QD_REF, rtol=2e-7)
    np.testing.assert_allclose(-lam, andrews.LAMBDA_REF, rtol=5e-6)
    drift = r.stats["constraint_drift"]
    assert drift["position"] <= drift["tolerance"]


@pytest.mark.parametrize("engine", ["numpy", "compiled", "auto"])
def test_the_default_method_meets_the_requested_tolerance(equations, engine):
    # Issue 28: the default method (DOP853 in NumPy, ERK8 compiled; `auto` is the default
    # engine) at rtol 1e-6 must land within 10 rtol of the published positions at
    # t = 0.03 s (the reference itself is good to about 3e-10, the module docstring).
    # Measured: 3.7e-7 (NumPy) and 1.1e-7 (compiled) relative, so the bound 1e-5 has a
    # margin of about 25 over this machine's figures for another's rounding.
    rtol = 1e-6
    r = kidym.simulate(equations, engine=engine, rtol=rtol, atol=rtol * 1e-3,
                       t_eval=np.array([0.0, andrews.T_REF]))
    assert r.success and r.t[-1] == andrews.T_REF
    q = np.array([r[n][-1] for n in andrews.COORDINATES])
    np.testing.assert_allclose(q, andrews.Q_REF, rtol=10 * rtol)
    if engine == "auto":
        assert r.stats["engine_choice"].startswith(f"auto → {r.stats['engine']}: ")
