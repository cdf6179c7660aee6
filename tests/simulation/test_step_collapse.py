"""Step collapse at a switching force, by one rule in both engines (issue 27).

A mass driven by a bang-bang force, ``x'' = -a sign(x)`` with a = 1e9 from x = x0 = 1e-3
at rest, oscillates between ±x0 with speed ±√(2 a x0) at x = 0. Between the switches
the motion is a parabola, which every Runge-Kutta method integrates exactly; only a
step across a switch fails its error test, again and again. Without a limit the NumPy
engine went on for more than 20 minutes with steps of about 1e-10 s; the compiled one
stopped (SUNDIALS' ``mxnef``). Both now stop after
:data:`kidym.eom.events.MAX_ERROR_TEST_FAILURES` failed error tests in one step, with
the same kind of failure, the time, the state and what to try.

Checked independently of kidym: the energy of the exact motion, ``x't²/2 + a|x| = a
x0``, holds at every output up to the stop and at the reported state (the stop is a
step across a switch of the exact motion); the wall time is bounded by a subprocess
timeout, generous against the seconds the runs take.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kidym.eom.events import (
    ERROR_TEST_CUT,
    MAX_ERROR_TEST_FAILURES,
    SMALL_ERROR_TEST_FAILURES,
)
from tests.codegen.shared import kidym_cache  # noqa: F401

A, X0 = 1e9, 1e-3
BANG_BANG = f"m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -{A:g}*sign(x);"
ROOT = Path(__file__).resolve().parents[2]

#: Run in a child process: the run must end (within the timeout) and say why.
CHILD = """
import json, sys
import kidym
r = kidym.simulate(kidym.parse(sys.argv[1]), engine=sys.argv[2], method=sys.argv[3],
                   t_end=0.1, n_points=1001, initial={"x": float(sys.argv[4])},
                   raise_on_failure=False)
print(json.dumps({"success": r.success, "failure": r.failure, "t": r.t.tolist(),
                  "x": r["x"].tolist(), "v": r["x't"].tolist()}))
"""


def _child(text: str, engine: str, method: str) -> dict:
    """The run of ``text`` in a child process that must end within 60 s."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, text, engine, method, str(X0)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def _is_a_step_collapse(failure: dict | None) -> None:
    """One kind and one wording in both engines, with the limit and the advice."""
    assert failure is not None and failure["kind"] == "step-size-collapse"
    message = failure["message"]
    assert message.startswith("the step size collapsed (")
    assert "the error test failed" in message and "times in one step" in message
    assert f"{MAX_ERROR_TEST_FAILURES}" in message and "MAX_ERROR_TEST_FAILURES" in message
    assert "sign(" in failure["hint"] and "event" in failure["hint"]


def _energy_error(x, v) -> np.ndarray:
    """Relative departure from the exact motion's energy ``a x0`` (per unit mass)."""
    x, v = np.asarray(x, float), np.asarray(v, float)
    return np.abs(v**2 / 2 + A * np.abs(x) - A * X0) / (A * X0)


@pytest.mark.parametrize(("engine", "method"), [("numpy", "DOP853"), ("numpy", "RK23"),
                                                ("compiled", "ERK8")])
def test_a_bang_bang_force_stops_with_a_step_collapse_in_both_engines(engine, method):
    r = _child(BANG_BANG, engine, method)
    failure = r["failure"]
    assert not r["success"]
    _is_a_step_collapse(failure)
    # stopped inside the span, at a state of the exact motion (energy to 1e-3: the
    # compiled run keeps it to about 1e-4 over its ~1e4 switches at the default rtol, a
    # 10x margin; the NumPy runs stop at one of the first switches, far closer)
    assert 0.0 < failure["time"] < 0.1
    state = failure["state"]
    assert set(state) == {"x", "x't"}
    assert _energy_error(state["x"], state["x't"]) < 1e-3
    # the outputs up to the stop (the NumPy runs: the start only): the exact motion's
    # energy, at times before the stop
    assert 0 < len(r["t"]) and r["t"][-1] <= failure["time"]
    assert np.max(_energy_error(r["x"], r["v"])) < 1e-3


@pytest.mark.parametrize(("engine", "method"), [("numpy", "DOP853"), ("compiled", "ERK8")])
def test_a_time_dependent_bang_bang_force_stops_the_same_way(engine, method):
    # the force's size varies with t (between a and 3a): the same switch at x = 0
    r = _child(f"m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -{A:g}*(2 + sin(t))*sign(x);",
               engine, method)
    assert not r["success"] and 0.0 < r["failure"]["time"] < 0.1
    _is_a_step_collapse(r["failure"])


def test_the_docs_give_the_limit_of_the_code():
    """docs/output.md states the rule with the number both engines use."""
    text = (ROOT / "docs" / "output.md").read_text(encoding="utf-8")
    assert f"failed its error test {MAX_ERROR_TEST_FAILURES} times" in text
    assert f"took {MAX_ERROR_TEST_FAILURES + 1} attempts or more" in text
    power = MAX_ERROR_TEST_FAILURES - SMALL_ERROR_TEST_FAILURES
    assert f"cut to {ERROR_TEST_CUT:g}^{power} of its first try" in text


@pytest.mark.parametrize(("engine", "method"), [("numpy", "DOP853"), ("numpy", "RK45"),
                                                ("compiled", "ERK8")])
def test_a_mild_switch_passes_in_both_engines(engine, method):
    """The rule does not stop a switch the solvers hold: ``x'' = -sign(x)`` from x = 1
    at rest, whose exact motion is parabolas between the switches at t* (2k + 1), t* =
    √2, is followed over 20 s (about 14 switches) to 1e-4: a step across a switch is
    of first order, and the runs keep about 1e-6 (RK45) or better, a 100x margin."""
    import kidym

    t_star = np.sqrt(2.0)
    r = kidym.simulate(kidym.parse("m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -sign(x);"),
                       engine=engine, method=method, t_end=20.0, n_points=201,
                       initial={"x": 1.0})
    assert r.success
    s = np.mod(r.t, 4 * t_star)
    exact = np.where(s < t_star, 1 - s**2 / 2,
                     np.where(s < 3 * t_star, -1 + (s - 2 * t_star)**2 / 2,
                              1 - (s - 4 * t_star)**2 / 2))
    assert np.max(np.abs(r["x"] - exact)) < 1e-4
