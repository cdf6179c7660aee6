"""The energy monitor (issue 27): a conservative run whose energy leaves the bound its
tolerances allow ends as a failure, in both engines, by one rule
(:mod:`kidym.simulation.energy_monitor`), on every entry point (kidym.simulate, kidym
run, simulate_batch, sweep and kidym sweep: the same verdict as the run alone); runs
that do work are not monitored."""

from __future__ import annotations

import json

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.errors import SimulationError
from kidym.simulation import faults, passages
from kidym.simulation import simulate as numpy_runs
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import DOUBLE_PENDULUM, FOUR_BAR_SPRING
from tests.simulation.test_energy_balance import DRIVEN

ENGINES = ["numpy", "compiled"]

#: A rod hinged at one end, released at rest horizontal: E = T + Π is 0 all along, while
#: T and Π exchange m g l/2 — the bound must scale with the motion, not with |E|.
HORIZONTAL_ROD = ("m = 1; l = 1; J = 0.1; g = 9.81; Rod | Rz(phi) | Sx(l/2), m, 0, J, J; "
                  "GRAVITY := 0, -g, 0; INITIAL := phi(0);")
#: A damped spring-mass, free (no time): its work is the damper's.
DAMPED = ("m = 1; k = 400; c = 2; Cart | Sx(x) | m, 0, 0, 0; Cs.x = k; Dd.x = c; "
          "INITIAL := x(0.1);")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rtol", [1e-6, 1e-10])
def test_a_regular_conservative_run_passes(engine, rtol):
    """The double pendulum, 5 s: monitored, well inside the bound, to the end; its
    energy conserved to what the tolerance asks (the closed form: E is constant)."""
    r = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=5, initial={"phi1": 0.7},
                       engine=engine, rtol=rtol, atol=1e-12)
    monitor = r.stats["energy_monitor"]
    assert r.success and r.t[-1] == 5.0
    assert monitor["monitored"] and not monitor["tripped"] and monitor["ratio"] < 1
    energy = r["energy"]
    assert np.max(np.abs(energy - energy[0])) < 1e3 * rtol * np.max(np.abs(energy))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_whose_energy_stays_zero_passes_at_a_loose_tolerance(engine):
    r = kidym.simulate(kidym.parse(HORIZONTAL_ROD), t_end=5, engine=engine, rtol=1e-6)
    assert r.success and r.stats["energy_monitor"]["monitored"]
    assert r.stats["energy_monitor"]["ratio"] < 1
    # it moved: the rod swings down through the vertical (φ = -π/2)
    assert np.min(r["phi"]) < -1.5


@pytest.mark.parametrize("engine", ENGINES)
def test_a_damped_model_passes_unmonitored(engine):
    """W ≠ 0 (a damper): the work is integrated over the output times, 41 of them here,
    and the balance is the quadrature's (above 1e-3 of the energy) — no failure, and the
    statistics say why it is not monitored."""
    r = kidym.simulate(kidym.parse(DAMPED), t_end=2.0, n_points=41, engine=engine)
    assert r.success
    assert r.stats["energy_balance"]["relative"] > 1e-3
    assert r.stats["energy_monitor"] == {"monitored": False,
                                         "reason": "the damper `Dd.x` does work"}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_time_dependent_model_passes_unmonitored(engine):
    """A rod on a support moved by a prescribed motion: time-dependent, not monitored."""
    r = kidym.simulate(kidym.parse(DRIVEN), t_end=3, engine=engine, rtol=1e-6)
    assert r.success
    assert not r.stats["energy_monitor"]["monitored"]
    assert "time" in r.stats["energy_monitor"]["reason"]


def _kicked(real):
    """``continue_run`` that continues wrongly: every speed after the continuation 10 %
    too fast (still on the velocity constraints ``G w = 0``: the kinetic energy 21 %
    too high)."""
    def run(system, p, t_from, y_from, t1, times, **options):
        ok, status, message, nfev, t, y, stats, fault = real(system, p, t_from, y_from, t1,
                                                             times, **options)
        y = np.array(y, float)
        y[len(system.equations.coordinates):] *= 1.1
        return ok, status, message, nfev, t, y, stats, fault

    return run


@pytest.fixture
def wrong_continuation(monkeypatch):
    """The continuation of an augmented run past a singular position (both engines call
    ``passages.continue_run``; the NumPy engine imported it by name) made wrong."""
    kicked = _kicked(passages.continue_run)
    monkeypatch.setattr(passages, "continue_run", kicked)
    monkeypatch.setattr(numpy_runs, "continue_run", kicked)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wrong_continuation_fails_at_its_first_sample(engine, wrong_continuation):
    """The spring four-bar reaches φ = 0 at about 0.62 s and goes on by ali3 from its last
    sample before; with that continuation 10 % too fast the run fails at the first output
    time after it, with the time, the balance, the bound and the state."""
    with pytest.raises(SimulationError) as caught:
        kidym.simulate(kidym.parse(FOUR_BAR_SPRING), t_end=3, engine=engine)
    error = caught.value
    r = error.result
    start = r.stats["constraint_drift"]["continued_from"]
    times = np.linspace(0, 3, 501)
    first = times[times > start + 1e-12][0]
    assert error.kind == faults.ENERGY and error.time == pytest.approx(first)
    assert r.failure["kind"] == faults.ENERGY and not r.success and r.status == -1
    assert r.t[-1] == pytest.approx(first)              # the result kept up to there
    assert error.state == {n: r[n][-1] for n in r.state_names}
    # the balance is the kick: 0.21 T at that sample (T from the energy's jump)
    jump = r["energy"][-1] - r["energy"][0]
    assert jump > 0.5
    assert f"t = {first:.10g}" in str(error) and f"E - E(0) = {jump:.3g}" in str(error)
    assert "tighten rtol" in error.hint
    assert r.stats["energy_monitor"]["tripped"]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_monitor_can_be_turned_off(engine, wrong_continuation):
    r = kidym.simulate(kidym.parse(FOUR_BAR_SPRING), t_end=1, engine=engine,
                       monitor_energy=False)
    assert r.success and r.t[-1] == 1.0 and "energy_monitor" not in r.stats


def test_cli_run_says_whether_the_run_was_monitored(tmp_path):
    path = tmp_path / "rod.kdm"
    path.write_text(HORIZONTAL_ROD, encoding="utf-8")
    stats = {}
    for flags, name in (([], "on"), (["--no-energy-monitor"], "off")):
        out = tmp_path / name
        assert main(["run", str(path), "--engine", "numpy", "--t-end", "1", "--out",
                     str(out), "--no-plots", "--no-integrals", *flags]) == 0
        stats[name] = json.loads((out / "results.json").read_text(encoding="utf-8"))["stats"]
    assert stats["on"]["energy_monitor"]["monitored"]
    assert "energy_monitor" not in stats["off"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_constant_force_on_a_coordinate_is_monitored(engine):
    """A constant force on a coordinate has a potential (E includes −F x): monitored; a
    spring-mass pulled by it oscillates about x = F/k and passes."""
    text = ("m = 1; k = 4; F0 = 2; Cart | Sx(x) | m, 0, 0, 0; Cs.x = k; Pg.x = F0; "
            "INITIAL := x(0);")
    r = kidym.simulate(kidym.parse(text), t_end=5, engine=engine, rtol=1e-6)
    assert r.success and r.stats["energy_monitor"]["monitored"]
    assert np.max(r["x"]) == pytest.approx(2 * 2.0 / 4, rel=1e-4)   # 2 F/k, closed form


@pytest.mark.parametrize("engine", ENGINES)
def test_impacts_that_take_energy_are_no_failure(engine):
    """The bouncing ball loses (1 − e²) of its energy at each impact (a reset of the
    state, СОБЫТИЯ): the monitor restarts there, the run passes."""
    from tests.fixtures import EXAMPLES

    r = kidym.simulate(kidym.load(EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm"),
                       engine=engine)
    energy = r["energy"]
    assert r.success and r.stats["energy_monitor"]["monitored"]
    assert energy[-1] < 0.5 * energy[0]                    # several impacts passed


@pytest.mark.slow
def test_a_run_its_step_control_got_wrong_is_no_success():
    """`test5_sphere` (a point thrown into a spherical cavity, an exponential wall) in
    NumPy at rtol 1e-10: SciPy's step control can miss a contact with the wall (it did
    here, at about 1.2 s). Either the run passes and its motion is within 1e-7 of a
    compiled run at rtol 1e-12, or the monitor fails it and the same run without the
    monitor is further off than that: never success off the motion, and no failure of
    a run on it."""
    from tests.fixtures import EXAMPLES

    model = kidym.load(EXAMPLES / "virtual_constraints" / "test5_sphere.kdm")
    options = {"max_step": 0.05 / np.sqrt(50000.0)}   # the example's 0.05/√α
    ref = kidym.simulate(model, engine="compiled", rtol=1e-12, atol=1e-14,
                         monitor_energy=False, **options)
    full = kidym.simulate(model, engine="numpy", rtol=1e-10, monitor_energy=False,
                          **options)
    off = max(float(np.max(np.abs(full[q] - ref[q]))) for q in ("x", "y", "z"))
    r = kidym.simulate(model, engine="numpy", rtol=1e-10, raise_on_failure=False,
                       **options)
    if r.success:
        assert off < 1e-7
    else:
        assert r.failure["kind"] == faults.ENERGY and off > 1e-7


#: A bead on a hoop turned at the constant rate W about the vertical: time cancels from
#: its equations, yet the motor does work — E = T + Π changes along a correct run (the
#: Jacobi integral T₂ − T₀ + Π is what is conserved, checked here as the second route).
HOOP = ("m = 0.4; r = 0.6; g = 9.81; W = 5; Bead | Rz(W*t), Rx(th), Sz(-r) | m, 0, 0, 0; "
        "GRAVITY := 0, 0, -g; INITIAL := th(0.4), th't(0.5);")
#: A slider shifted by `Sx(q + ceil(q))`: its position, and so Π, jumps at integers of q
#: while its motion (through ∂/∂q where smooth) is that of `Sx(q)` (tests/symbolic).
JUMPING = ("m = 1; g = 9.81; Slider | Sx(q + ceil(q)) | m, 0, 0, 0; GRAVITY := -g, 0, 0; "
           "INITIAL := q(0.5), q't(1);")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_rheonomic_transform_is_not_monitored(engine):
    r = kidym.simulate(kidym.parse(HOOP), t_end=1.0, engine=engine, rtol=1e-10, atol=1e-12)
    assert r.success and r.t[-1] == 1.0
    monitor = r.stats["energy_monitor"]
    assert not monitor["monitored"] and "`Bead` moves by a law of time" in monitor["reason"]
    th, w = np.asarray(r["th"]), np.asarray(r["th't"])
    m, rr, g, W = 0.4, 0.6, 9.81, 5.0
    jacobi = 0.5 * m * rr**2 * (w**2 - W**2 * np.sin(th) ** 2) - m * g * rr * np.cos(th)
    assert np.ptp(jacobi) < 1e-7 * np.max(np.abs(jacobi))
    energy = np.asarray(r["energy"])
    assert np.ptp(energy) > 1e-3 * np.max(np.abs(energy))   # E moved: a monitor would fail it


@pytest.mark.parametrize("engine", ENGINES)
def test_an_energy_through_a_function_with_jumps_is_not_monitored(engine):
    r = kidym.simulate(kidym.parse(JUMPING), t_end=1.0, engine=engine, rtol=1e-10, atol=1e-12)
    assert r.success and r.t[-1] == 1.0
    monitor = r.stats["energy_monitor"]
    assert not monitor["monitored"] and "ceiling(q)" in monitor["reason"]
    # the motion is Sx(q)'s: uniformly accelerated by -g from q't = 1
    t = np.asarray(r.t)
    np.testing.assert_allclose(r["q"], 0.5 + t - 9.81 * t**2 / 2, atol=1e-8)


@pytest.mark.parametrize(("engine", "method"), [("numpy", "BDF"), ("numpy", "LSODA"),
                                                ("compiled", "BDF"), ("compiled", "Adams")])
def test_a_multistep_run_is_not_monitored(engine, method):
    r = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=0.5, engine=engine, method=method)
    monitor = r.stats["energy_monitor"]
    assert not monitor["monitored"] and f"method {method} does not hold" in monitor["reason"]
# --- every entry point: simulate_batch and sweep (threads, loop; Dask in tests/study) ---

#: The spring four-bar at two spring rates, 1 s: at k = 25 it reaches φ = 0 (about
#: 0.62 s) and goes on by ali3 — with ``wrong_continuation``, wrongly —; at k = 400 the
#: spring holds it off the singular position. 201 output times, as a sweep's default.
STIFFNESSES = [25.0, 400.0]
SPAN = {"t_end": 1.0, "n_points": 201}


def _alone(k, **options):
    """The second route: the same run by kidym.simulate (compiled, the batch's
    defaults), its failure kept."""
    return kidym.simulate(kidym.parse(FOUR_BAR_SPRING), engine="compiled", method="ERK8",
                          parameters={"k": k}, raise_on_failure=False, **SPAN, **options)


@pytest.mark.compiled
def test_compiled_batch_and_sweep_of_a_conservative_model_pass_monitored():
    """The double pendulum from three starts, 3 s: every run of a batch and of a sweep
    is monitored, passes, and conserves its energy as the tolerance asks (E constant);
    each run's ratio is the one kidym.simulate finds for it."""
    model = kidym.parse(DOUBLE_PENDULUM)
    starts = [0.3, 1.0, 2.0]
    batch = kidym.simulate_batch(model, initial=[{"phi1": a} for a in starts], t_end=3,
                                 n_points=201, workers=2)
    study = kidym.sweep(model, vary={"phi1": starts}, t_end=3, n_points=201,
                        executor="threads", workers=2)
    assert batch.success.all() and study.status.tolist() == [0, 0, 0]
    assert study.options["energy_monitor"] == "on"
    for k, a in enumerate(starts):
        monitor = batch.results[k].stats["energy_monitor"]
        assert monitor["monitored"] and not monitor["tripped"] and monitor["ratio"] < 1
        energy = study["energy"][k]
        assert np.max(np.abs(energy - energy[0])) < 1e3 * 1e-9 * np.max(np.abs(energy))
        alone = kidym.simulate(model, engine="compiled", method="ERK8", t_end=3,
                               n_points=201, initial={"phi1": a})
        ratio = alone.stats["energy_monitor"]["ratio"]
        assert monitor["ratio"] == pytest.approx(ratio, rel=1e-6)
        assert study.energy_ratio[k] == pytest.approx(ratio, rel=1e-6)


@pytest.mark.compiled
def test_compiled_a_run_that_trips_fails_alone_in_a_batch_and_a_sweep(wrong_continuation):
    """The run at k = 25, continued wrongly past φ = 0, fails by the monitor as
    kidym.simulate fails it (the same time, kind and message), kept up to there (NaN
    after it in the stacked arrays); the run at k = 400 passes, as alone."""
    tripped, passed = (_alone(k) for k in STIFFNESSES)
    assert tripped.failure["kind"] == faults.ENERGY and passed.success
    cut = len(tripped.t)
    batch = kidym.simulate_batch(kidym.parse(FOUR_BAR_SPRING), workers=2,
                                 parameters=[{"k": k} for k in STIFFNESSES], **SPAN)
    assert batch.success.tolist() == [False, True] and batch.failed == [0]
    r = batch.results[0]
    assert r.failure["kind"] == faults.ENERGY and r.failure["time"] == tripped.failure["time"]
    assert batch.messages[0] == f"run 0 (parameters k=25): {tripped.message}"
    assert r.stats["energy_monitor"]["tripped"] and r.t[-1] == tripped.t[-1]
    assert np.isnan(batch["q1"][0, cut:]).all() and not np.isnan(batch["q1"][0, :cut]).any()
    np.testing.assert_allclose(batch["q1"][0, :cut], tripped["q1"], rtol=0, atol=1e-12)
    assert batch.results[1].stats["energy_monitor"]["ratio"] < 1
    for executor in ("threads", "loop"):
        study = kidym.sweep(kidym.parse(FOUR_BAR_SPRING), vary={"k": STIFFNESSES},
                            executor=executor, **SPAN)
        assert study.status.tolist() == [-1, 0] and study.failed == [0]
        assert study.reasons == [tripped.message, ""]
        assert study.energy_ratio[0] > 1 > study.energy_ratio[1]
        assert np.isnan(study["q1"][0, cut:]).all()
        np.testing.assert_array_equal(study["q1"][0, :cut], batch["q1"][0, :cut])
        np.testing.assert_array_equal(study["q1"][1], batch["q1"][1])


@pytest.mark.compiled
def test_compiled_batch_and_sweep_with_the_monitor_off(wrong_continuation, tmp_path):
    """``monitor_energy=False`` (``kidym sweep --no-energy-monitor``): the wrong run
    reaches its end, as kidym.simulate's with the monitor off; a study says so."""
    alone = _alone(25.0, monitor_energy=False)
    assert alone.success
    batch = kidym.simulate_batch(kidym.parse(FOUR_BAR_SPRING), workers=2,
                                 parameters=[{"k": k} for k in STIFFNESSES], **SPAN,
                                 monitor_energy=False)
    assert batch.success.all()
    assert all("energy_monitor" not in r.stats for r in batch.results)
    np.testing.assert_array_equal(batch["q1"][0], alone["q1"])
    study = kidym.sweep(kidym.parse(FOUR_BAR_SPRING), vary={"k": STIFFNESSES}, **SPAN,
                        monitor_energy=False)
    assert study.status.tolist() == [0, 0] and np.isnan(study.energy_ratio).all()
    assert study.options["energy_monitor"] == ("not monitored: turned off "
                                               "(monitor_energy=False)")
    # the command line, both ways: the file's status and its attribute
    xr = pytest.importorskip("xarray", reason="kidym[sweep] (xarray) not installed")
    path = tmp_path / "four_bar.kdm"
    path.write_text(FOUR_BAR_SPRING, encoding="utf-8")
    files = {}
    for flags, name in (([], "on"), (["--no-energy-monitor"], "off")):
        out = tmp_path / name
        assert main(["sweep", str(path), "--vary", "k=25:400:2", "--t-end", "1", "--out",
                     str(out), "--no-plots", *flags]) == 0
        files[name] = xr.open_dataset(out / "sweep.nc").load()
    assert files["on"]["status"].values.tolist() == [-1, 0]
    assert files["on"].attrs["energy_monitor"] == "on"
    assert files["off"]["status"].values.tolist() == [0, 0]
    assert files["off"].attrs["energy_monitor"].startswith("not monitored: turned off")
    assert np.isnan(files["off"]["energy_ratio"].values).all()


@pytest.mark.compiled
@pytest.mark.parametrize(("text", "vary", "why"), [
    (DAMPED, {"c": [1.0, 2.0]}, "the damper `Dd.x` does work"),
    (DRIVEN, {"m": [1.0, 2.0]}, "the model depends on time explicitly"),
])
def test_compiled_batch_and_study_of_a_model_that_does_work_are_not_monitored(text, vary,
                                                                             why):
    """A damper, a time-dependent model: every run passes unmonitored, and says why."""
    study = kidym.sweep(kidym.parse(text), vary=vary, t_end=1.0)
    assert study.status.tolist() == [0, 0] and np.isnan(study.energy_ratio).all()
    assert study.options["energy_monitor"].startswith(f"not monitored: {why}")
    (name, values), = vary.items()
    batch = kidym.simulate_batch(kidym.parse(text), parameters=[{name: v} for v in values],
                                 t_end=1.0, workers=2)
    assert batch.success.all()
    for r in batch.results:
        assert not r.stats["energy_monitor"]["monitored"]
        assert r.stats["energy_monitor"]["reason"].startswith(why)
