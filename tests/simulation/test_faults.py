"""Runtime faults, in both engines: reported where they happen, with the state by name and
what to try, and the partial result up to there kept and marked (issue 19, item 6).

Every failure time is known independently of kidym: a closed form (the blow-up of
``x'' = x²``, the instant a slider reaches the fold of its coordinate, a force singular
at ``t = 0.5``, the accumulation point of a bouncing ball), a hand-written SciPy
integration of the same scalar equation, or an event at a given time.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kidym
from kidym.cli import main
from kidym.simulation.result import load_results
from tests.codegen.shared import equations, kidym_cache  # noqa: F401
from tests.fixtures import EXAMPLES

ENGINES = ("numpy", "compiled")

#: x'' = x² from x = 1, x' = √(2/3): x = (1 - t/√6)⁻², infinite at t = √6.
BLOW_UP = "m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = x^2;"
#: Time-dependent: x'' = 6 x² (1 + sin t) from x = 1, x' = 2 (no closed form).
BLOW_UP_T = "m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = 6*x^2*(1 + sin(t));"
#: A slider at xs = L sin(phi) pushed by F cos t: M = m L² cos² phi is singular where
#: the slider reaches the fold xs = L. From rest, xs = F (1 - cos t)/m, so at
#: cos t* = 1 - m L/F: t* = π/3 for F = 2.
FOLD = "m = 1; L = 1; F = 2; xs = L*sin(phi); Jm.xs = m; Pf.xs = F*cos(t);"
T_FOLD = np.pi / 3
#: x'' = 1/(t - 0.5): the force is infinite at t = 0.5, the steps shrink to nothing.
STEP = "m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = 1/(t-0.5);"
#: A ball bouncing with restitution 0.8 from 1 m: impacts accumulate at
#: t∞ = √(2H/g) (1 + e)/(1 - e).
BALL = "m = 1; g = 9.81; e = 0.8; Ball | Sz(z) | m, 0, 0, 0; GRAVITY := 0, 0, -g;"
T_ZENO = np.sqrt(2 * 1.0 / 9.81) * 1.8 / 0.2
FREE_BODY = (EXAMPLES / "free_body" / "free_body.kdm").read_text(encoding="utf-8")
FLOOR = kidym.Event("z", direction=-1, reset={"z't": "-e*z't"}, name="floor")


def _fails(text: str, engine: str, kind: str, t_fault: float, tol: float,
           **options) -> kidym.SimulationError:
    """Run, expect ``kind`` near ``t_fault``, and check what every fault must carry."""
    eq = equations(text)
    with pytest.raises(kidym.SimulationError) as info:
        kidym.simulate(eq, engine=engine, **options)
    err = info.value
    assert err.kind == kind, str(err)
    assert err.time == pytest.approx(t_fault, abs=tol)
    message = str(err)
    assert f"at t = {err.time:.9g}" in message and "\n  try: " in message
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    assert list(err.state) == names
    for name in names:                                    # the state, by name, shown
        assert f"{name}=" in message
    # the partial result: up to the last output time before the fault, marked
    r = err.result
    assert r is not None and r.partial and not r.success and r.status == -1
    assert r.failure["kind"] == kind and r.failure["time"] == err.time
    times = np.linspace(0.0, options["t_end"], options.get("n_points", 501))
    assert r.t.size and r.t[-1] <= err.time + 1e-12
    assert np.array_equal(r.t, times[:r.t.size])         # the output grid, up to there
    assert r.t.size == times.size or times[r.t.size] > err.time - 1e-9
    assert all(np.all(np.isfinite(r[n])) for n in names)
    # the same, as data, without raising
    quiet = kidym.simulate(eq, engine=engine, raise_on_failure=False, **options)
    assert quiet.partial and quiet.failure["kind"] == kind
    assert quiet.failure["time"] == pytest.approx(err.time, abs=tol)
    assert quiet.t.size == r.t.size
    return err


@pytest.mark.parametrize(("engine", "method"), [("numpy", "DOP853"), ("numpy", "BDF"),
                                                ("compiled", "ERK8"), ("compiled", "BDF")])
def test_blow_up_is_reported_where_it_happens(engine, method):
    err = _fails(BLOW_UP, engine, "blow-up", np.sqrt(6), 1e-6, method=method, t_end=4.0,
                 initial={"x": 1.0, "x't": np.sqrt(2 / 3)})
    assert "the motion blows up" in str(err) and abs(err.state["x't"]) > 1e6


@pytest.mark.parametrize("engine", ENGINES)
def test_time_dependent_blow_up_is_reported_where_it_happens(engine):
    # the same equation written by hand and integrated by SciPy to x = 1e12, where the
    # singularity is a few 1e-7 away (x ~ (t* - t)⁻², far from linear)
    def rhs(t, y):
        return [y[1], 6 * y[0] ** 2 * (1 + np.sin(t))]

    huge = lambda t, y: y[0] - 1e12  # noqa: E731
    huge.terminal = True
    ref = solve_ivp(rhs, (0, 2), [1.0, 2.0], method="DOP853", rtol=1e-12, atol=1e-12,
                    events=huge).t_events[0][0]
    _fails(BLOW_UP_T, engine, "blow-up", ref, 1e-5, t_end=2.0, initial={"x": 1.0, "x't": 2.0})


@pytest.mark.parametrize(("engine", "method"), [
    ("numpy", "DOP853"), ("numpy", "LSODA"), ("numpy", "Radau"), ("numpy", "BDF"),
    ("compiled", "ERK8"), ("compiled", "BDF")])
def test_step_size_collapse_at_a_singular_force(engine, method):
    # LSODA and CVODE go on with steps that no longer advance t: kidym stops them; a
    # stiff method is suggested only to a run that did not use one
    err = _fails(STEP, engine, "step-size-collapse", 0.5, 1e-6, method=method, t_end=1.0,
                 initial={"x": 0.0})
    assert "step size collapsed" in str(err)
    if method in ("LSODA", "Radau", "BDF"):
        assert f"{method} is already a stiff method" in err.hint
        assert "method='BDF'" not in err.hint and "singular" in err.hint
    else:
        assert "stiff method (method='BDF'" in err.hint


@pytest.mark.parametrize("engine", ENGINES)
def test_singular_mass_matrix_at_a_reachable_state(engine):
    err = _fails(FOLD, engine, "singular-mass-matrix", T_FOLD, 1e-6, t_end=2.0,
                 initial={"phi": 0.0, "phi't": 0.0})
    assert "mass matrix is nearly singular" in str(err) and "gimbal lock" in err.hint
    assert err.state["phi"] == pytest.approx(np.pi / 2, abs=1e-3)
    # up to there the motion is the closed form xs = F (1 - cos t)/m
    r = err.result
    np.testing.assert_allclose(np.sin(r["phi"]), 2 * (1 - np.cos(r.t)), atol=1e-6)


#: A slider driven by sin t carrying a point mass that turns about its own axis: the
#: turn has no inertia, the slide has (M = diag(2, 0) whatever the state and time).
MASSLESS_TURN = ("m = 1; Slider | Sx(x) | m, 0, 0, 0; Spin~Slider | Rz(phi) | m, 0, 0, 0;"
                 " Pf.x = sin(t);")


@pytest.mark.parametrize("engine", ENGINES)
def test_singular_mass_matrix_names_the_speeds_without_inertia(engine):
    """The hint names the speeds of M's null space (phi't), not the others (x't)."""
    with pytest.raises(kidym.SimulationError, match="mass matrix is singular") as e:
        kidym.simulate(kidym.parse(MASSLESS_TURN), t_end=1.0, engine=engine)
    assert e.value.hint.startswith("no inertia along the speeds phi't:")
    assert "x't" not in e.value.hint


@pytest.mark.parametrize("engine", ENGINES)
def test_zeno_events_are_an_event_storm_at_the_accumulation_point(engine):
    err = _fails(BALL, engine, "event-storm", T_ZENO, 1e-6, events=[FLOOR], t_end=6.0,
                 initial={"z": 1.0}, rtol=1e-10, atol=1e-12)
    assert "fire" in str(err) and "Zeno" in str(err) and "terminal event" in err.hint
    accumulation = float(str(err).split("accumulate at t ≈ ")[1].split()[0])
    assert accumulation == pytest.approx(T_ZENO, abs=1e-8)
    r = err.result
    assert r["z"].min() > -1e-9                       # it never went through the floor
    events = r.stats["events"]["t"]
    impacts = np.sqrt(2 / 9.81) * np.cumsum([1.0] + [2 * 0.8**k for k in range(1, 20)])
    np.testing.assert_allclose(events[:20], impacts, rtol=1e-8)
    # before the accumulation point the same bounces are no fault
    ok = kidym.simulate(equations(BALL), engine=engine, events=[FLOOR], t_end=4.0,
                        initial={"z": 1.0}, rtol=1e-10, atol=1e-12)
    assert ok.success and not ok.partial and ok.failure is None


@pytest.mark.parametrize("engine", ENGINES)
def test_quaternion_collapse_at_the_start(engine):
    err = _fails(FREE_BODY, engine, "quaternion-norm-collapse", 0.0, 0.0, t_end=1.0,
                 initial={"l0": 0.0})
    assert "quaternion of body `Body` has collapsed" in str(err)
    assert err.result.t.tolist() == [0.0]


@pytest.mark.parametrize("engine", ENGINES)
def test_quaternion_collapse_during_the_run(engine):
    # a reset at t = 0.3 (a time-dependent event) sets the quaternion to zero
    lose = kidym.Event("t - 0.3", reset={f"l{k}": "0" for k in range(4)}, name="lose")
    err = _fails(FREE_BODY, engine, "quaternion-norm-collapse", 0.3, 1e-9, t_end=1.0,
                 events=[lose])
    assert all(err.state[f"l{k}"] == 0.0 for k in range(4))


def test_batch_keeps_the_other_runs_and_names_the_failing_one():
    forces = [0.2, 2.0, 0.3]    # only F = 2 pushes the slider to the fold (at t = π/3)
    b = kidym.simulate_batch(equations(FOLD), parameters=[{"F": f} for f in forces],
                             t_end=2.0, n_points=201)
    assert b.success.tolist() == [True, False, True] and b.failed == [1]
    message = b.messages[1]
    assert message.startswith("run 1 (parameters F=2): the mass matrix is nearly singular")
    assert b.results[1].failure["time"] == pytest.approx(T_FOLD, abs=1e-6)
    stopped = b.t > T_FOLD
    assert np.all(np.isnan(b.values["phi"][1][stopped]))
    assert np.all(np.isfinite(b.values["phi"][1][~stopped]))
    for k in (0, 2):   # complete, and the closed form sin(phi) = F (1 - cos t)
        np.testing.assert_allclose(np.sin(b.values["phi"][k]), forces[k] * (1 - np.cos(b.t)),
                                   atol=1e-7)


@pytest.mark.parametrize("engine", ENGINES)
def test_kidym_run_writes_the_partial_results_and_exits_non_zero(engine, tmp_path, capsys):
    model = tmp_path / "fold.kdm"
    model.write_text(FOLD + "\nINITIAL := phi(0), phi't(0);\nTIME := t(0, 2);\n",
                     encoding="utf-8")
    out = tmp_path / "out"
    status = main(["run", str(model), "--engine", engine, "--points", "201", "--out",
                   str(out), "--report", "--no-plots"])
    captured = capsys.readouterr()
    assert status == 2
    assert "Traceback" not in captured.err + captured.out
    err = captured.err
    assert err.startswith("kidym: error: the mass matrix is nearly singular")
    assert f"at t = {T_FOLD:.6f}"[:-1] in err and "phi=" in err and "phi't=" in err
    assert "\n  try: " in err
    assert "partial results: the run failed at t = 1.047" in captured.out
    side = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert side["partial"] is True and side["success"] is False
    assert side["failure"]["kind"] == "singular-mass-matrix"
    assert side["failure"]["time"] == pytest.approx(T_FOLD, abs=1e-6)
    rows = (out / "results.csv").read_text(encoding="utf-8").splitlines()
    last = float(rows[-1].split(",")[0])
    assert T_FOLD - 0.01 < last <= T_FOLD           # the grid of 201 points, up to t*
    assert len(rows) == 1 + int(T_FOLD / 0.01) + 1
    assert "FAILED (partial results" in (out / "report.md").read_text(encoding="utf-8")
    result, _ = load_results(out)
    assert result.partial and result.failure["kind"] == "singular-mass-matrix"
