"""Step collapse at a switching force, by one rule in both engines (issue 27).

A mass driven by a bang-bang force, ``x'' = -a sign(x)`` with a = 1e9 from x = x0 = 1e-3
at rest, oscillates between ±x0 with speed ±√(2 a x0) at x = 0. Between the switches
the motion is a parabola, which every Runge-Kutta method integrates exactly; only a
step across a switch fails its error test, again and again. Without a limit the NumPy
engine went on for more than 20 minutes with steps of about 1e-10 s; the compiled one
stopped (SUNDIALS' ``mxnef``). Both now stop after
:data:`kidym.eom.events.MAX_ERROR_TEST_FAILURES` failed error tests in one step, with
the same kind of failure, the time, the state and what to try. SciPy's implicit methods
(Radau, BDF, LSODA) hide or spread their failed attempts: they stop by the short-step
rule (:data:`kidym.simulation.simulate.SHORT_STEP`), with the same kind, the time, the
state and a hint that does not suggest the stiff method they are.

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
    STIFF_METHODS,
    switch_hint,
)
from kidym.simulation.simulate import SHORT_STEP, SHORT_STEP_WINDOW, TINY_STEPS
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.oracles import andrews

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


def _is_a_step_collapse(failure: dict | None, method: str) -> None:
    """One kind and one wording in both engines, with the limit and the advice: the
    error-test rule for the explicit methods, the short-step rule for SciPy's implicit
    ones; a stiff method suggested only to a run that did not use one."""
    assert failure is not None and failure["kind"] == "step-size-collapse"
    message = failure["message"]
    assert message.startswith("the step size collapsed (")
    if method in STIFF_METHODS:
        assert f"{TINY_STEPS} steps shorter than" in message
        assert "SHORT_STEP" in message and "SHORT_STEP_WINDOW" in message
    else:
        assert "the error test failed" in message and "times in one step" in message
        assert (f"{MAX_ERROR_TEST_FAILURES}" in message
                and "MAX_ERROR_TEST_FAILURES" in message)
    hint = failure["hint"]
    assert "sign(" in hint and "event" in hint
    if method in STIFF_METHODS:
        assert "method='BDF'" not in hint and f"{method} is already a stiff method" in hint
    else:
        assert "method='BDF'" in hint


def _energy_error(x, v) -> np.ndarray:
    """Relative departure from the exact motion's energy ``a x0`` (per unit mass)."""
    x, v = np.asarray(x, float), np.asarray(v, float)
    return np.abs(v**2 / 2 + A * np.abs(x) - A * X0) / (A * X0)


@pytest.mark.parametrize(("engine", "method"), [
    ("numpy", "DOP853"), ("numpy", "RK23"), ("compiled", "ERK8"),
    ("numpy", "Radau"), ("numpy", "BDF"), ("numpy", "LSODA")])
def test_a_bang_bang_force_stops_with_a_step_collapse_in_both_engines(engine, method):
    # the implicit methods crawled through the ~3.5e4 switches of the span at ~1e3 steps
    # a second; the short-step rule stops them within a few dozen switches
    r = _child(BANG_BANG, engine, method)
    failure = r["failure"]
    assert not r["success"]
    _is_a_step_collapse(failure, method)
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


@pytest.mark.parametrize(("engine", "method"), [("numpy", "DOP853"), ("compiled", "ERK8"),
                                                ("numpy", "BDF")])
def test_a_time_dependent_bang_bang_force_stops_the_same_way(engine, method):
    # the force's size varies with t (between a and 3a): the same switch at x = 0
    r = _child(f"m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -{A:g}*(2 + sin(t))*sign(x);",
               engine, method)
    assert not r["success"] and 0.0 < r["failure"]["time"] < 0.1
    _is_a_step_collapse(r["failure"], method)


def test_the_docs_give_the_limit_of_the_code():
    """docs/output.md states the rule with the number both engines use."""
    text = (ROOT / "docs" / "output.md").read_text(encoding="utf-8")
    assert f"failed its error test {MAX_ERROR_TEST_FAILURES} times" in text
    assert f"took {MAX_ERROR_TEST_FAILURES + 1} attempts or more" in text
    power = MAX_ERROR_TEST_FAILURES - SMALL_ERROR_TEST_FAILURES
    assert f"cut to {ERROR_TEST_CUT:g}^{power} of its first try" in text
    # the short-step rule of the implicit methods
    assert (f"{TINY_STEPS} steps shorter than {SHORT_STEP:g} × rtol × the span within "
            f"{SHORT_STEP_WINDOW:g} of the span") in text


@pytest.mark.parametrize(("engine", "method"), [
    ("numpy", "DOP853"), ("numpy", "RK45"), ("compiled", "ERK8"),
    ("numpy", "Radau"), ("numpy", "BDF"), ("numpy", "LSODA")])
def test_a_mild_switch_passes_in_both_engines(engine, method):
    """The rules do not stop a switch the solvers hold: ``x'' = -sign(x)`` from x = 1
    at rest, whose exact motion is parabolas between the switches at t* (2k + 1), t* =
    √2, is followed over 20 s (about 14 switches) to 1e-4: a step across a switch is
    of first order, and the runs keep about 1e-6 (RK45) or better, a 100x margin (the
    implicit methods about 2e-7 or better)."""
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


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_a_stiff_regular_model_runs_to_the_end_under_the_implicit_methods(method):
    """No false alarm of the short-step rule on a stiff model without a switch: Andrews'
    squeezer (the Test Set for IVP Solvers) to the published positions at t = 0.03 s
    at rtol 1e-6, within 100 rtol in the test set's measure |q − q_ref|/(1 + |q_ref|)
    (BDF, of order at most 5, the least accurate: about 11 rtol in
    benchmarks/work_precision.py, docs/benchmarks.md; a margin of about 9)."""
    import kidym

    eq = kidym.derive(kidym.load(ROOT / "examples" / "andrews_squeezer"
                                 / "andrews_squeezer.kdm"))
    rtol = 1e-6
    r = kidym.simulate(eq, engine="numpy", method=method, rtol=rtol, atol=rtol * 1e-3,
                       t_eval=np.array([0.0, andrews.T_REF]))
    assert r.success and r.t[-1] == andrews.T_REF
    q = np.array([r[n][-1] for n in andrews.COORDINATES])
    assert np.max(np.abs(q - andrews.Q_REF) / (1 + np.abs(andrews.Q_REF))) < 100 * rtol


def test_the_hint_suggests_a_stiff_method_only_to_a_run_without_one():
    """``switch_hint`` by the method that ran: both engines' explicit methods are told to
    try BDF; a run of BDF (either engine), Radau or LSODA is not."""
    for method in ("DOP853", "RK45", "RK23", "ERK8", "ERK5", "Fehlberg78", "Adams"):
        assert "method='BDF'" in switch_hint(method)
    for method in ("BDF", "Radau", "LSODA"):
        hint = switch_hint(method)
        assert "method='BDF'" not in hint and f"{method} is already a stiff method" in hint
        assert "tanh(x/ε)" in hint and "СОБЫТИЯ" in hint


@pytest.mark.parametrize("method", ["ERK8", "BDF"])
def test_the_compiled_engine_reports_the_hint_of_its_method(method):
    """The compiled engine's report of SUNDIALS' ERR_FAILURE (a BDF run that fails so is
    hard to provoke: CVODE's BDF passes the bang-bang force above, at ~2e6 steps) names
    the method's own hint."""
    from kidym.simulation.compiled_runs import _fault

    raw = {"status": -3, "fail_t": 0.5, "fail_y": [0.0, 1.0], "method": method,
           "message": "CV_ERR_FAILURE" if method == "BDF" else "ARK_ERR_FAILURE"}
    fault = _fault(None, raw)
    assert fault.kind == "step-size-collapse" and fault.hint == switch_hint(method)
