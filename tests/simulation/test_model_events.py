"""Events written in the model language (``СОБЫТИЯ``), run by both engines against
closed forms: the bouncing ball (impact times ``t_k``, apex heights ``e^(2k) H``), a
ball on a vibrating table (time-dependent: impacts found by root finding on the exact
free flights), two balls dropped together (both resets at one instant), a stop at the
apex, a mode switch (a spring switched on and off by resets of a mode coordinate), and
what a run writes (``events.csv``, ``results.json``)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from scipy.optimize import brentq

import kidym
from kidym.report.plots import event_times
from kidym.simulation.energy import energy_balance
from kidym.simulation.result import load_results
from tests.codegen.shared import kidym_cache  # noqa: F401

G, E, H = 9.81, 0.8, 1.0
T1 = np.sqrt(2 * H / G)
ENGINES = [("numpy", "DOP853"), ("compiled", "ERK8"), ("compiled", "BDF")]

BALL = f"""m = 1; g = {G}; e = {E};
Ball | Sz(z) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := z({H}), z't(0);
СОБЫТИЯ := Удар(z, ВНИЗ, z't = -e*z't);
"""


def run(text: str, engine: str, method: str, **kw) -> kidym.Result:
    return kidym.simulate(kidym.parse(text), engine=engine, method=method, rtol=1e-10,
                          atol=1e-12, **kw)


def impacts(n: int) -> np.ndarray:
    """``t_k = t1 (1 + 2e + … + 2e^(k-1))``, ``t1 = sqrt(2H/g)``."""
    return T1 * np.cumsum([1.0] + [2 * E**k for k in range(1, n)])


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_bouncing_ball_impact_times_apexes_and_resets(engine, method):
    tk = impacts(5)
    apexes = tk[:4] + E ** np.arange(1, 5) * T1   # top of the arc after impact k
    times = np.sort(np.concatenate([np.linspace(0, 2.5, 251), apexes]))
    r = run(BALL, engine, method, t_end=2.5, t_eval=times)
    ev = r.stats["events"]
    n = int(np.sum(tk < 2.5))
    assert ev["name"] == ["Удар"] * n
    np.testing.assert_allclose(ev["t"], tk[:n], rtol=0, atol=1e-8)
    # before: z = 0, z't = -g t1 e^k; after: z't = +g t1 e^(k+1)
    v = G * T1 * E ** np.arange(n)
    np.testing.assert_allclose(ev["state"][:, 1], -v, rtol=1e-8)
    np.testing.assert_allclose(ev["state_after"][:, 1], E * v, rtol=1e-8)
    np.testing.assert_allclose(ev["state_after"][:, 0], ev["state"][:, 0])
    np.testing.assert_allclose(np.interp(apexes, r.t, r["z"]), H * E ** (2 * np.arange(1, 5)),
                               rtol=1e-7)
    # the energy is conserved between impacts; each impact takes (1 - e²) of it
    balance = energy_balance(r)
    assert balance.segments == n + 1 and balance.relative < 1e-9
    assert event_times(r) == {"Удар": list(ev["t"])}


TABLE = f"""m = 1; g = {G}; e = 0.5; A = 0.05; W = 12;
Ball | Sz(z) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
zT = A*sin(W*t);
INITIAL := z(0.3), z't(0);
EVENTS := Hit(z - zT, DOWN, z't = (1 + e)*zT't - e*z't);
"""


def table_impacts(n: int, e=0.5, A=0.05, W=12.0) -> list[tuple[float, float, float]]:
    """``(t_k, z't before, z't after)`` of a ball on the table ``zT = A sin(W t)``: each
    impact the first root of the exact free flight minus the table's height (scanned,
    then refined by Brent's method), with Newton's law of restitution."""
    t0, z0, v0 = 0.0, 0.3, 0.0
    out = []
    for _ in range(n):
        def gap(t, t0=t0, z0=z0, v0=v0):
            tau = t - t0
            return z0 + v0 * tau - G * tau**2 / 2 - A * np.sin(W * t)
        grid = np.linspace(t0 + 1e-9, t0 + 5, 200001)
        k = int(np.argmax(np.diff(np.sign(gap(grid))) < 0))
        tk = brentq(gap, grid[k], grid[k + 1], xtol=1e-15, rtol=1e-15)
        before = v0 - G * (tk - t0)
        table_v = A * W * np.cos(W * tk)
        after = (1 + e) * table_v - e * before
        out.append((tk, before, after))
        t0, z0, v0 = tk, A * np.sin(W * tk), after
    return out


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_ball_on_a_vibrating_table_time_dependent_condition_and_reset(engine, method):
    exact = table_impacts(4)
    r = run(TABLE, engine, method, t_end=exact[-1][0] + 0.01)
    ev = r.stats["events"]
    assert ev["name"] == ["Hit"] * 4
    np.testing.assert_allclose(ev["t"], [x[0] for x in exact], rtol=0, atol=1e-7)
    np.testing.assert_allclose(ev["state"][:, 1], [x[1] for x in exact], atol=1e-6)
    np.testing.assert_allclose(ev["state_after"][:, 1], [x[2] for x in exact], atol=1e-6)


TWO = f"""m = 1; g = {G}; e = {E};
B1 | Sz(z1) | m, 0, 0, 0;  B2 | Sz(z2) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := z1({H}), z2({H});
ПОДІЇ := b1(z1, ВНИЗ, z1't = -e*z1't), b2(z2, ВНИЗ, z2't = -e*z2't);
"""


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_two_balls_dropped_together_both_resets_applied(engine, method):
    tk = impacts(4)
    r = run(TWO, engine, method, t_end=2.4)
    ev = r.stats["events"]
    assert ev["name"] == ["b1", "b2"] * 4
    np.testing.assert_allclose(ev["t"], np.repeat(tk, 2), rtol=0, atol=1e-7)
    # both rows of an instant show the state both resets left: both speeds reversed
    v = G * T1 * E ** np.repeat(np.arange(4), 2)
    after = ev["state_after"]
    np.testing.assert_allclose(after[:, 2], E * v, rtol=1e-7)
    np.testing.assert_allclose(after[:, 3], E * v, rtol=1e-7)
    for z in ("z1", "z2"):
        assert r[z].min() > -1e-7


THROW = f"""m = 1; g = {G}; v0 = 3;
Ball | Sz(z) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := z(0), z't(v0);
EVENTS := Apex(z't, DOWN, STOP), Floor(z + 1, DOWN, STOP);
"""


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_stop_at_the_apex(engine, method):
    r = run(THROW, engine, method, t_end=5.0)
    ev = r.stats["events"]
    assert r.success and r.status == 1 and ev["name"] == ["Apex"]
    assert ev["t"][0] == pytest.approx(3 / G, abs=1e-9)
    assert ev["state"][0, 0] == pytest.approx(9 / (2 * G), abs=1e-9)
    # the results end at the event: its row is the last (issue 29)
    assert r.t[-1] == ev["t"][0] and r.t[-2] < r.t[-1]
    np.testing.assert_array_equal(r.y[:, -1], ev["state"][0])


@pytest.mark.parametrize(("engine", "method"), ENGINES)
@pytest.mark.parametrize(("event", "t_stop"), [
    ("Floor(z, DOWN, STOP)", np.sqrt(2 * 2.0 / G)),   # between two output times
    ("End(t - 3, UP, STOP)", 3.0)])                   # on an output time
def test_a_stop_keeps_the_row_of_the_event(engine, method, event, t_stop, tmp_path):
    text = f"""m = 1; g = {G}; H = 2;
Ball | Sz(z) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := z(H);
EVENTS := {event};
"""
    r = run(text, engine, method, t_end=5.0, n_points=501)
    assert r.status == 1
    # closed form: z = H - g t²/2, the run ends at t_stop with that state
    assert r.t[-1] == pytest.approx(t_stop, abs=1e-9)
    assert r["z"][-1] == pytest.approx(2.0 - G * t_stop**2 / 2, abs=1e-8)
    assert r["z't"][-1] == pytest.approx(-G * t_stop, abs=1e-8)
    assert np.all(np.diff(r.t) > 0)
    r.write(tmp_path)
    with open(tmp_path / "results.csv", encoding="utf-8") as fh:
        last = list(csv.reader(fh))[-1]
    assert float(last[0]) == r.t[-1]


SPRING = f"""m = 1; g = {G}; c = 100; h = 0.5;
Ball | Sz(z) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
k't = 0;        # the mode: 1 while the spring below z = h touches the ball #
Pk.z = -k*c*(z - h);
INITIAL := z(1), z't(0), k(0);
EVENTS := On(z - h, DOWN, k = 1), Off(z - h, UP, k = 0);
"""


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_a_mode_switched_by_resets(engine, method):
    """Free fall to z = h, then a spring (the mode k = 1) throws the ball back up.

    Closed form: contact at ``t_on = sqrt(2(1 - h)/g)`` with speed ``-v``; in contact
    ``z = z_e + (h - z_e) cos ωτ - (v/ω) sin ωτ``, ``z_e = h - g/c``, ``ω = sqrt(c/m)``,
    until z = h again, leaving with ``+v``; the flight back to z = h lasts ``2v/g``.
    (The NumPy engine stopped here on an event storm before: the root a few ulps
    short of the surface was found again after the reset.)
    """
    v, w, ze, h = np.sqrt(2 * G * 0.5), 10.0, 0.5 - G / 100, 0.5
    t_on = np.sqrt(2 * 0.5 / G)
    tau = brentq(lambda s: (h - ze) * np.cos(w * s) - v / w * np.sin(w * s) - (h - ze),
                 0.1, 2 * np.pi / w - 1e-6)
    t_off = t_on + tau
    period = tau + 2 * v / G
    expected = [t_on, t_off, t_on + period, t_off + period]
    r = run(SPRING, engine, method, t_end=1.9)
    ev = r.stats["events"]
    assert ev["name"] == ["On", "Off", "On", "Off"]
    np.testing.assert_allclose(ev["t"], expected, rtol=0, atol=1e-7)
    np.testing.assert_allclose(ev["state_after"][:, 1], [1, 0, 1, 0])
    np.testing.assert_allclose(ev["state_after"][:, 2], [-v, v, -v, v], rtol=1e-7)


def test_the_engines_agree_on_the_records(tmp_path):
    """NumPy and compiled runs of the table: the same events, states within tolerance."""
    t_end = table_impacts(4)[-1][0] + 0.01   # (later the impacts accumulate: Zeno)
    a = run(TABLE, "numpy", "DOP853", t_end=t_end)
    b = run(TABLE, "compiled", "ERK8", t_end=t_end)
    ea, eb = a.stats["events"], b.stats["events"]
    assert ea["name"] == eb["name"] and len(ea["name"]) >= 4
    np.testing.assert_allclose(ea["t"], eb["t"], atol=1e-8)
    np.testing.assert_allclose(ea["state_after"], eb["state_after"], atol=1e-6)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_events_are_written_with_the_results(tmp_path, engine):
    r = run(BALL, engine, "DOP853" if engine == "numpy" else "ERK8", t_end=1.5)
    files = [p.name for p in r.write(tmp_path)]
    assert files == ["results.csv", "events.csv", "results.json"]
    rows = list(csv.reader((tmp_path / "events.csv").open(encoding="utf-8")))
    assert rows[0] == ["t", "event", "before:z", "before:z't", "after:z", "after:z't"]
    assert [row[1] for row in rows[1:]] == ["Удар", "Удар"]
    np.testing.assert_allclose([float(row[0]) for row in rows[1:]], impacts(2), atol=1e-8)
    np.testing.assert_allclose([float(row[5]) for row in rows[1:]],
                               E * G * T1 * E ** np.arange(2), rtol=1e-8)
    side = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert "events.csv" in side["sha256"] and side["stats"]["events"]["name"] == ["Удар"] * 2
    loaded, _ = load_results(tmp_path)
    assert loaded.stats["events"]["name"] == ["Удар"] * 2
    # a later run without events leaves no stale events.csv behind
    plain = kidym.simulate(kidym.parse(BALL.split("СОБЫТИЯ")[0]), t_end=0.2)
    plain.write(tmp_path)
    assert not (tmp_path / "events.csv").exists()


SWAP = f"""m = 1; g = {G};
B1 | Sz(z1) | m, 0, 0, 0;  B2 | Sz(z2) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := z1(1), z1't(0), z2(2), z2't(1);
EVENTS := Swap(t - 0.25, UP, z1't = z2't, z2't = z1't, z1 = z1 + 1);
"""


@pytest.mark.parametrize(("engine", "method"), ENGINES)
def test_the_resets_of_one_event_all_see_the_state_before_it(engine, method):
    """`a = b, b = a` swaps (a shift of roller speeds in seed 002 is such a map)."""
    r = run(SWAP, engine, method, t_end=0.5)
    ev = r.stats["events"]
    assert ev["name"] == ["Swap"]
    tau = 0.25
    before = [1 - G * tau**2 / 2, 2 + tau - G * tau**2 / 2, -G * tau, 1 - G * tau]
    np.testing.assert_allclose(ev["state"][0], before, rtol=1e-9)
    np.testing.assert_allclose(ev["state_after"][0],
                               [before[0] + 1, before[1], before[3], before[2]], rtol=1e-9)
    # and the motion goes on from there: z1't(0.5) = (1 - g/4) - g/4
    assert r["z1't"][-1] == pytest.approx(1 - G * 0.5, rel=1e-9)
