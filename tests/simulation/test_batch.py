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


#: A mass on a spring pushed by the input `U`, its damping changing with time (a
#: time-dependent model); `U` a piecewise-linear table, or the same written as a formula.
DRIVEN = ("m = 2; k = 3; a = 1;\nCart | Sx(x) | m;\nCk.x = k;\nPd.x = -0.1*(1 + t/4)*x't;\n"
          "Pu.x = U;\nINITIAL := x(0.1);\nTIME := t(0, 2);\n")
_T = [0.0, 0.5, 1.25, 2.0]
_V = [0.0, 1.0, -0.5, 0.25]
_PIECEWISE = "(t < 0.5 ? 2*t ! (t < 1.25 ? 1 - 2*(t - 0.5) ! -0.5 + (t - 1.25)))"
RTOL, ATOL = 1e-10, 1e-12


def _close(a: np.ndarray, b: np.ndarray) -> None:
    """Two routes to one motion at rtol = RTOL: within 1e3 · rtol of the scale (the stated
    margin of the global error of two adaptive runs over this short span)."""
    assert np.max(np.abs(a - b)) <= 1e3 * RTOL * max(1.0, float(np.max(np.abs(b))))


def test_a_batch_of_tables_is_the_single_runs_and_the_formulas():
    """Each run its own table (the input scaled by 1, -2, 3): the batch equals each run
    alone in the compiled engine, and agrees with the NumPy engine and with the table
    written as a formula of t in the model (a route with no input at all)."""
    model = kidym.parse(DRIVEN + "INPUTS := U;\n", name="driven")
    scales = [1.0, -2.0, 3.0]
    tables = [{"U": kidym.InputTable(_T, [s * v for v in _V])} for s in scales]
    b = kidym.simulate_batch(model, inputs=tables, rtol=RTOL, atol=ATOL, n_points=41,
                             workers=2)
    assert b.success.all()
    for k, s in enumerate(scales):
        for engine in ("compiled", "numpy"):
            alone = kidym.simulate(model, engine=engine, inputs=tables[k], rtol=RTOL,
                                   atol=ATOL, n_points=41)
            if engine == "compiled":
                np.testing.assert_array_equal(b.values["x"][k], alone["x"])
            _close(b.values["x"][k], alone["x"])
        formula = kidym.parse(DRIVEN.replace("= U", f"= {s}*{_PIECEWISE}"), name="f")
        _close(b.values["x"][k], kidym.simulate(formula, engine="compiled", rtol=RTOL,
                                                atol=ATOL, n_points=41)["x"])


def test_a_shared_controller_over_parameter_sets_is_the_formula():
    """One state-feedback callback for every run, the parameter `k` varied: against the
    controller written as a formula of the state."""
    model = kidym.parse(DRIVEN + "INPUTS := U;\n", name="driven")
    ks = [1.0, 4.0]
    b = kidym.simulate_batch(model, parameters=[{"k": k} for k in ks], rtol=RTOL, atol=ATOL,
                             n_points=41, inputs={"U": lambda t, s: -2 * s["x't"]})
    formula = kidym.parse(DRIVEN.replace("= U", "= -2*x't"), name="f")
    for j, k in enumerate(ks):
        ref = kidym.simulate(formula, engine="numpy", parameters={"k": k}, rtol=RTOL,
                             atol=ATOL, n_points=41)
        _close(b.values["x"][j], ref["x"])


def test_batch_input_errors():
    model = kidym.parse(DRIVEN + "INPUTS := U;\n", name="driven")
    with pytest.raises(ValueError, match="input `U` of model `driven` is not bound"):
        kidym.simulate_batch(model, parameters=[{}])
    with pytest.raises(ValueError, match="2 parameter sets but 3 input bindings"):
        kidym.simulate_batch(model, parameters=[{}, {}], inputs=[{"U": lambda t, s: 0}] * 3)
    # a callback that fails stops its run only, named
    b = kidym.simulate_batch(model, inputs=[{"U": lambda t, s: 0.0},
                                            {"U": lambda t, s: 1 / 0 if t > 1 else 0.0}],
                             n_points=11)
    assert b.success.tolist() == [True, False] and b.failed == [1]
    assert "callback of input `U` raised ZeroDivisionError" in b.messages[1]
    assert b.messages[1].startswith("run 1")
