"""Watching runs (kidym.simulation.watch): a stop request ends a run within a step in both
engines and in a sweep, the motion up to then kept and marked; the progress bar is drawn
on a terminal only.

The stop is asked here from a timer thread (what Ctrl-C's handler does in the main
thread); tests/test_cli_interrupt.py sends the real SIGINT to the command line.
"""

from __future__ import annotations

import io
import threading
import time

import numpy as np
import pytest

import kidym
from kidym.progress import Reporter
from kidym.simulation.watch import watching

#: A driven oscillator, x'' = -4 x + sin t from rest: x = (sin t - sin(2t)/2) / 3.
DRIVEN = ("m = 1; k = 4; F0 = 1; W = 1;\nB | Sx(x) | m, 0, 0, 0;\nCs.x = k;\n"
          "Pf.x = F0*sin(W*t);\nINITIAL := x(0), x't(0);\nTIME := t(0, 20);\n")

#: Spans that take about half a minute of wall time on this machine (compiled about
#: 3e4 model seconds per second, NumPy about 1e2): without the stop they would not end
#: within the bound below.
SPAN = {"compiled": 1e6, "numpy": 3e3}
#: The bound of a stop, wall seconds from the request to the exception: a functional
#: "it stops" check (a step or an evaluation takes microseconds), not a benchmark.
STOP_WITHIN_S = 0.5


def exact(t: np.ndarray) -> np.ndarray:
    return (np.sin(t) - 0.5 * np.sin(2 * t)) / 3


@pytest.fixture(scope="module")
def driven():
    return kidym.derive(kidym.parse(DRIVEN))


def _stop_after(watch, delay: float, when: dict) -> threading.Thread:
    """Ask ``watch`` to stop ``delay`` seconds after its runs report a time reached."""
    def stop() -> None:
        while watch.cell[0] <= 0.0:
            time.sleep(0.01)
        time.sleep(delay)
        when["asked"] = time.perf_counter()
        watch.stop()

    timer = threading.Thread(target=stop, daemon=True)
    timer.start()
    return timer


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_stopped_run_keeps_its_motion_so_far(driven, engine):
    if engine == "compiled":
        kidym.simulate(driven, engine="compiled", t_end=1.0)   # the build, not timed
    when: dict = {}
    with watching(Reporter(tty=False)) as w:
        timer = _stop_after(w, 0.2, when)
        with pytest.raises(kidym.RunInterrupted) as info:
            kidym.simulate(driven, engine=engine, t_end=SPAN[engine], n_points=100_001,
                           raise_on_failure=False)   # (a stop is raised all the same)
        stopped = time.perf_counter()
        timer.join()
    assert stopped - when["asked"] < STOP_WITHIN_S
    exc = info.value
    assert isinstance(exc, KeyboardInterrupt)   # a script stops on Ctrl-C as before
    r = exc.result
    assert r.partial and r.failure["kind"] == "interrupted" and not r.success
    assert 0 < exc.time < SPAN[engine] and r.failure["time"] == pytest.approx(exc.time)
    # the rows kept are output times before the time reached, on the run's own grid
    grid = np.linspace(0, SPAN[engine], 100_001)
    assert 1 < r.t.size < grid.size and r.t[-1] <= exc.time
    np.testing.assert_array_equal(r.t, grid[:r.t.size])
    # and the motion there is the closed form's: the global error of an oscillator grows
    # as rtol·ω·t (rtol 1e-9, ω = 2), bounded here with a margin of 100
    bound = 100 * 1e-9 * (1 + 2 * r.t[-1])
    assert np.max(np.abs(r["x"] - exact(r.t))) < bound


@pytest.mark.parametrize("route", ["numpy-augmented", "numpy-minimal", "compiled"])
def test_a_stopped_run_of_a_closed_loop_is_interrupted_not_failed(route):
    # the four-bar: its routes (projection, the minimal form, the C loop) stop as the
    # plain run does, with the failure kind `interrupted` (not an integrator failure
    # nor a passage through a singular position)
    from fixtures import EXAMPLES

    eq = kidym.derive(kidym.load(EXAMPLES / "four_bar" / "four_bar.kdm"))
    engine, _, form = route.partition("-")
    options = {"formulation": form} if form else {}
    if engine == "compiled":
        kidym.simulate(eq, engine="compiled", t_end=0.01)   # the build, not timed
    when: dict = {}
    with watching(Reporter(tty=False)) as w:
        timer = _stop_after(w, 0.2, when)
        with pytest.raises(kidym.RunInterrupted) as info:
            kidym.simulate(eq, engine=engine, t_end=1e5, n_points=100_001, **options)
        stopped = time.perf_counter()
        timer.join()
    assert stopped - when["asked"] < 2.0   # (with the partial result's multipliers, drift)
    r = info.value.result
    assert r.partial and r.failure["kind"] == "interrupted"
    assert 0 < info.value.time < 1e5 and r.t[-1] <= info.value.time


@pytest.mark.compiled
def test_a_stopped_sweep_keeps_the_runs_and_says_which_stopped(driven):
    from kidym.simulation.compiled import CompiledSystem

    system = CompiledSystem.build(driven)
    when: dict = {}
    with watching(Reporter(tty=False)) as w:
        timer = _stop_after(w, 0.2, when)
        with pytest.raises(kidym.RunInterrupted) as info:
            kidym.sweep(driven.model, vary={"k": [4.0, 9.0, 16.0, 25.0, 36.0, 49.0]},
                        t_end=SPAN["compiled"], n_points=1001, system=system, workers=2)
        stopped = time.perf_counter()
        timer.join()
    assert stopped - when["asked"] < STOP_WITHIN_S
    res = info.value.result
    assert res.interrupted and res.study.n_runs == 6
    assert np.all(res.status == -1)   # none of these half-minute runs reached its end
    assert all(why.startswith(("interrupted (Ctrl-C) at t = ",
                               "not run: the study was interrupted")) for why in res.reasons)
    began = [k for k, why in enumerate(res.reasons) if why.startswith("interrupted")]
    assert began   # the runs on the threads at the time were stopped where they were
    k = began[0]
    x = res["x"][k]
    kept = np.isfinite(x)
    assert 1 < kept.sum() < x.size
    # the run with k = 4 (ω = 2) or another: its closed form, x(0) = 0, x't(0) = 0
    om = np.sqrt(res.study.table[k][0])
    t = res.t[kept]
    want = (np.sin(t) - np.sin(om * t) / om) / (om ** 2 - 1)
    assert np.max(np.abs(x[kept] - want)) < 100 * 1e-9 * (1 + om * t[-1])


@pytest.mark.compiled
def test_a_stopped_batch_keeps_its_runs_so_far(driven):
    from kidym.simulation.compiled import CompiledSystem

    system = CompiledSystem.build(driven)
    when: dict = {}
    with watching(Reporter(tty=False)) as w:
        timer = _stop_after(w, 0.2, when)
        with pytest.raises(kidym.RunInterrupted) as info:
            kidym.simulate_batch(system, parameters=[{"k": v} for v in (4.0, 9.0, 16.0)],
                                 t_end=SPAN["compiled"], n_points=1001, workers=2)
        stopped = time.perf_counter()
        timer.join()
    assert stopped - when["asked"] < STOP_WITHIN_S
    batch = info.value.result
    assert not batch.success.any()
    assert all(r.partial and r.failure["kind"] == "interrupted" for r in batch.results)
    r = batch.results[0]   # k = 4: the closed form up to where it stopped
    assert r.t.size > 1
    assert np.max(np.abs(r["x"] - exact(r.t))) < 100 * 1e-9 * (1 + 2 * r.t[-1])


def test_the_bar_is_drawn_on_a_terminal_only(driven, monkeypatch):
    from kidym.simulation import watch

    monkeypatch.setattr(watch, "QUIET_FOR", 0.0)   # (drawn from the first step on)
    shown = io.StringIO()
    with watching(Reporter(stream=shown, tty=True)):
        kidym.simulate(driven, engine="numpy", t_end=2.0, n_points=11)
    assert "simulating [" in shown.getvalue() and "ETA" in shown.getvalue()
    piped = io.StringIO()
    with watching(Reporter(stream=piped, tty=False)):
        kidym.simulate(driven, engine="numpy", t_end=2.0, n_points=11)
    assert piped.getvalue() == ""
