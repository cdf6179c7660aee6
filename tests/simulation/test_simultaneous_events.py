"""Events due at the same time, and several roots in one step, in both engines.

Two identical balls dropped from the same height bounce at the same instants (closed
form: ``t_k = t1 (1 + 2E + … + 2E^(k-1))``, apex ``H E^(2k)``); every reset due at an
instant must be applied, in the NumPy engine (SciPy ``solve_ivp``) and the compiled one
(ARKODE/CVODE).
"""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from tests.codegen.shared import equations, kidym_cache  # noqa: F401

TWO_BALLS = ("m = 1; g = 9.81; e = 0.8; B1 | Sz(z1) | m, 0, 0, 0; B2 | Sz(z2) | m, 0, 0, 0;"
             "GRAVITY := 0, 0, -g;")
BALL = "m = 1; g = 9.81; e = 0.8; Ball | Sz(z) | m, 0, 0, 0; GRAVITY := 0, 0, -g;"
G, E, H = 9.81, 0.8, 1.0
T1 = np.sqrt(2 * H / G)
ENGINES = [("numpy", "DOP853"), ("compiled", "ERK8"), ("compiled", "BDF"),
           ("compiled", "Adams")]


def _impacts(n: int) -> np.ndarray:
    return T1 * np.cumsum([1.0] + [2 * E**k for k in range(1, n)])


def _bounce(z: str, name: str, **kw) -> kidym.Event:
    return kidym.Event(z, direction=-1, reset={f"{z}'t": f"-e*{z}'t"}, name=name, **kw)


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_two_balls_bouncing_at_the_same_instants(engine, method):
    impacts = _impacts(4)
    apexes = impacts + E ** np.arange(1, 5) * T1       # top of the arc after impact k
    times = np.sort(np.concatenate([np.linspace(0, 2.4, 241), apexes[:3]]))
    r = kidym.simulate(equations(TWO_BALLS), engine=engine, method=method,
                       events=[_bounce("z1", "b1"), _bounce("z2", "b2")], t_end=2.4,
                       t_eval=times, initial={"z1": H, "z2": H}, rtol=1e-10, atol=1e-12)
    assert r.stats["engine"] == engine
    ev = r.stats["events"]
    assert ev["name"] == ["b1", "b2"] * 4                # both balls, at every impact
    np.testing.assert_allclose(ev["t"], np.repeat(impacts, 2), rtol=0, atol=1e-7)
    for z in ("z1", "z2"):
        assert r[z].min() > -1e-7                        # neither ball goes through the floor
        at_apex = np.interp(apexes[:3], r.t, r[z])
        np.testing.assert_allclose(at_apex, H * E ** (2 * np.arange(1, 4)), rtol=1e-6)
    np.testing.assert_array_equal(r["z1"], r["z2"])      # the same motion, bit for bit


@pytest.mark.parametrize(("offset", "t_end"), [(1e-15, 1.5), (3.6e-15, 1.5), (1e-14, 1.5),
                                               (3.4e-15, 2.4), (1e-14, 2.4), (1e-12, 2.4)])
@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_two_balls_from_nearly_the_same_height(engine, method, offset, t_end):
    """Roots a few ulps apart: one instant for the root finders, both resets applied.

    The offsets are ones where a root that the root finder did not flag had already
    crossed at the returned time (ERK8's refined root; SciPy's 4-ulp root), so that
    after the restart its crossing was never seen and the ball fell through.
    """
    r = kidym.simulate(equations(TWO_BALLS), engine=engine, method=method,
                       events=[_bounce("z1", "b1"), _bounce("z2", "b2")], t_end=t_end,
                       initial={"z1": H, "z2": H * (1 + offset)}, rtol=1e-10, atol=1e-12)
    ev = r.stats["events"]
    impacts = _impacts(5)
    n = int(np.sum(impacts < t_end))
    impacts = impacts[:n]
    assert sorted(ev["name"]) == ["b1"] * n + ["b2"] * n
    np.testing.assert_allclose(ev["t"], np.repeat(impacts, 2), rtol=0, atol=1e-7)
    for z in ("z1", "z2"):
        assert r[z].min() > -1e-7
        # rising from the last impact at E^n g t1, decelerated by g since
        v = E**n * G * T1 - G * (t_end - impacts[-1])
        assert r[f"{z}'t"][-1] == pytest.approx(v, abs=1e-6)


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_two_roots_in_one_step_are_handled_in_time_order(engine, method):
    """A brake at height h halves the fall speed, then the floor bounces the ball.

    In free fall the methods are exact, so the steps are long and both roots fall in
    one step; the floor's time depends on the brake having been applied first.
    """
    h = 0.05
    brake = kidym.Event("z - 0.05", direction=-1, reset={"z't": "z't/2"}, name="brake")
    floor = kidym.Event("z", direction=-1, reset={"z't": "-e*z't"}, name="floor")
    r = kidym.simulate(equations(BALL), engine=engine, method=method, events=[floor, brake],
                       t_end=0.6, initial={"z": H}, rtol=1e-10, atol=1e-12)
    ta = np.sqrt(2 * (H - h) / G)
    v = G * ta / 2                                        # falling speed after the brake
    tb = ta + (-v + np.sqrt(v * v + 2 * G * h)) / G
    ev = r.stats["events"]
    assert ev["name"][:2] == ["brake", "floor"]
    np.testing.assert_allclose(ev["t"][:2], [ta, tb], rtol=0, atol=1e-8)
    vb = v + G * (tb - ta)                                # speed at the floor
    np.testing.assert_allclose(ev["state"][1], [0.0, -vb], atol=1e-7)
    tau = 0.6 - tb
    assert r["z"][-1] == pytest.approx(E * vb * tau - G * tau**2 / 2, abs=1e-7)


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_a_terminal_event_at_the_instant_of_a_reset_stops_the_run(engine, method):
    """Both are recorded, with the state before any reset, and the run ends there."""
    stop = kidym.Event("z2", direction=-1, terminal=True, name="stop")
    r = kidym.simulate(equations(TWO_BALLS), engine=engine, method=method,
                       events=[_bounce("z1", "b1"), stop], t_end=2.0,
                       initial={"z1": H, "z2": H}, rtol=1e-10, atol=1e-12)
    ev = r.stats["events"]
    assert r.success and r.status == 1
    assert ev["name"] == ["b1", "stop"]
    np.testing.assert_allclose(ev["t"], [T1, T1], rtol=0, atol=1e-8)
    np.testing.assert_allclose(ev["state"][:, 2:], [[-G * T1, -G * T1]] * 2, rtol=1e-7)
    assert r.t[-1] == ev["t"][-1]   # the results end with the event's row


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_reset_onto_its_own_event_surface_is_an_event_storm(engine):
    """A reset that leaves the ball at rest on the floor: it falls again at once.

    The root finders (ARKODE, CVODE) mask a function that starts at zero and do not
    report its leaving zero: without the check the ball fell through the floor.
    """
    stick = kidym.Event("z", direction=0, reset={"z": "0", "z't": "0"}, name="stick")
    with pytest.raises(kidym.SimulationError, match=r"(?s)event storm.*z=0.*try:"):
        kidym.simulate(equations(BALL), engine=engine, events=[stick], t_end=1.0,
                       initial={"z": 0.1}, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_both_engines_stop_a_storm_at_its_first_instant(engine):
    """One rule for event storms (kidym.eom.events.storm_detail): the reset that leaves
    the ball at rest on the floor stops the run there, at the first impact
    ``t = √(2 z0 / g)`` (the NumPy engine went on for 100 recurrences before), with the
    same message in both engines."""
    stick = kidym.Event("z", direction=0, reset={"z": "0", "z't": "0"}, name="stick")
    with pytest.raises(kidym.SimulationError) as info:
        kidym.simulate(equations(BALL), engine=engine, events=[stick], t_end=1.0,
                       initial={"z": 0.1}, rtol=1e-10, atol=1e-12)
    err = info.value
    assert "event `stick` is left at zero by a reset with the state at rest on its " \
           "surface" in str(err)
    t_impact = np.sqrt(2 * 0.1 / 9.81)
    assert err.time == pytest.approx(t_impact, abs=1e-6)   # (root tolerance ≪ 1e-6)
    assert err.result.stats["events"]["name"] == ["stick"]   # one event, not 100
