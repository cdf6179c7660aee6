"""Holonomic constraints (``УРАВНЕНИЯ``): the augmented system against SymPy's
``LagrangesMethod`` (tests/oracles/closed_loops.py), consistent starts, drift control,
and the errors a user meets."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import fsolve

import kidym
from kidym.errors import ParseError, SimulationError
from kidym.simulation.simulate import NumpySystem
from tests.oracles.closed_loops import LoopOracle, four_bar, slider_crank, t

EXAMPLE = Path(__file__).parents[2] / "examples" / "four_bar" / "four_bar.kdm"

FOUR_BAR = dict(a=0.2, b=0.6, c=0.5, d=0.55, m1=1.0, m2=2.0, m3=1.5, g=9.81)

SLIDER = dict(r=0.1, l=0.4, m1=1.0, m2=2.0, ms=3.0, g=9.81, A=0.02, W=3.0, M0=5.0)
SLIDER_TEXT = """
r = 0.1; l = 0.4; m1 = 1; m2 = 2; ms = 3; g = 9.81; A = 0.02; W = 3; M0 = 5;
Crank       | Rz(q1)        | Sx(r/2), m(m1), Jx(0), Jy(m1*r^2/12), Jz(m1*r^2/12);
Rod~Crank   | Sx(r), Rz(q2) | Sx(l/2), m(m2), Jx(0), Jy(m2*l^2/12), Jz(m2*l^2/12);
Slider      | Sx(s)         | m(ms), Jx(0), Jy(0), Jz(0);
f1 = r*cos(q1) + l*cos(q1 + q2) - s;
f2 = r*sin(q1) + l*sin(q1 + q2) - A*sin(W*t);
УРАВНЕНИЯ := f1, f2;
Pm.ωZCrank = M0*sin(W*t);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := q1(0.3), q2(-0.1), s(0.5), q1't(4);
СВОБОДНЫЕ := q2, s;
ВРЕМЯ := t(0, 2);
"""


def consistent_states(oracle: LoopOracle, rng: np.random.Generator, count: int,
                      guess: list[float], time_dependent: bool) -> list[dict[str, float]]:
    """Random states on the constraints, solved with the oracle's own ``Φ`` (SciPy)."""
    q = oracle.q
    qd = [sp.diff(x, t) for x in q]
    phi = sp.Matrix(oracle.constraints).subs(oracle.params)
    J = phi.jacobian(q)
    phit = phi.diff(t)
    plain = sp.symbols(f"z0:{len(q)}")
    rep = dict(zip(q, plain))
    f_phi = sp.lambdify([plain, t], phi.xreplace(rep))
    f_J = sp.lambdify([plain, t], J.xreplace(rep))
    f_t = sp.lambdify([plain, t], phit.subs({d: 0 for d in qd}).xreplace(rep))
    names = oracle.coordinates
    states = []
    while len(states) < count:
        tt = float(rng.uniform(0, 3)) if time_dependent else 0.0
        q1 = float(rng.uniform(0, 2 * np.pi))
        sol, _info, ok, _msg = fsolve(
            lambda z, q1=q1, tt=tt: np.ravel(f_phi([q1, *z], tt)), guess, full_output=True)
        z = np.array([q1, *sol])
        if ok != 1 or np.abs(np.ravel(f_phi(z, tt))).max() > 1e-12:
            continue
        Jn = np.array(f_J(z, tt), float)
        u1 = float(rng.uniform(-3, 3))
        rhs = -np.ravel(f_t(z, tt)) - Jn[:, 0] * u1
        u = np.array([u1, *np.linalg.solve(Jn[:, 1:], rhs)])
        state = {n: float(v) for n, v in zip(names, z)}
        state.update({f"{n}'t": float(v) for n, v in zip(names, u)})
        state["t"] = tt
        states.append(state)
        guess = list(sol)
    return states


def kidym_solution(system: NumpySystem, state: dict[str, float], p: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    y = np.array([state[n] for n in system.state_names])
    _qd, M, F = system.rhs_function(state["t"], y.tolist(), p.tolist())
    return system._solve(state["t"], y, np.asarray(M, float), np.asarray(F, float))


@pytest.mark.parametrize("case", ["four_bar", "slider_crank"])
def test_accelerations_and_multipliers_equal_lagranges_method(case: str) -> None:
    if case == "four_bar":
        model, oracle = kidym.load(EXAMPLE), four_bar(FOUR_BAR)
        guess, moving = [-0.4, 1.4], False
    else:
        model, oracle = kidym.parse(SLIDER_TEXT), slider_crank(SLIDER)
        guess, moving = [-0.2, 0.45], True
    system = NumpySystem.build(kidym.derive(model))
    p = system.parameter_vector()
    rng = np.random.default_rng(7)
    for state in consistent_states(oracle, rng, 4, guess, moving):
        wdot, lam = kidym_solution(system, state, p)
        qdd, lam_ref = oracle.solve(state)
        scale = max(1.0, np.abs(qdd).max())
        assert np.abs(wdot - qdd).max() <= 1e-9 * scale, (state, wdot, qdd)
        assert np.abs(lam - lam_ref).max() <= 1e-9 * max(1.0, np.abs(lam_ref).max()), (
            state, lam, lam_ref)


def test_constraint_drift_stays_below_the_tolerance_over_100_s() -> None:
    model = kidym.load(EXAMPLE)
    r = kidym.simulate(model, t_end=100, n_points=2001)
    drift = r.stats["constraint_drift"]
    assert drift["stabilization"] == "projection"
    assert drift["position"] <= drift["tolerance"] and drift["velocity"] <= drift["tolerance"]
    # conservative: the energy is a first integral (closed-form mechanics)
    e = r["energy"]
    assert np.abs(e - e[0]).max() <= 1e-6 * abs(e).max()
    # the run is on the closed loop: the rocker's end meets the coupler's at every output
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    q1, q2, q3 = r["q1"], r["q2"], r["q3"]
    gap = np.hypot(a * np.cos(q1) + b * np.cos(q1 + q2) - d - c * np.cos(q3),
                   a * np.sin(q1) + b * np.sin(q1 + q2) - c * np.sin(q3))
    assert gap.max() <= 1e-8


def test_without_stabilization_the_drift_is_reported_and_larger() -> None:
    model = kidym.load(EXAMPLE)
    free = kidym.simulate(model, t_end=20, constraints="none", rtol=1e-6, atol=1e-9)
    held = kidym.simulate(model, t_end=20, rtol=1e-6, atol=1e-9)
    assert free.stats["constraint_drift"]["position"] > 10 * held.stats[
        "constraint_drift"]["position"]
    baum = kidym.simulate(model, t_end=20, constraints="baumgarte", rtol=1e-6, atol=1e-9)
    assert baum.stats["constraint_drift"]["position"] < free.stats[
        "constraint_drift"]["position"]


def test_the_start_is_made_consistent_and_reported() -> None:
    model = kidym.load(EXAMPLE)
    r = kidym.simulate(model, t_end=0.01)
    changed = r.stats["initial_adjusted"]
    # the driver's angle and rate are kept; the loop's dependent states are solved
    assert set(changed) == {"q2", "q3", "q2't", "q3't"}
    assert r["q1"][0] == 1.0 and r["q1't"][0] == 6.0
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    q1, q2, q3 = r["q1"][0], r["q2"][0], r["q3"][0]
    assert abs(a * np.cos(q1) + b * np.cos(q1 + q2) - d - c * np.cos(q3)) < 1e-10
    # the assembly branch of the guesses (q3 near 1.5, not the mirror one)
    assert abs(q3 - 1.5) < 0.1


def test_a_loop_that_cannot_close_is_an_error_with_the_residual() -> None:
    # coupler and rocker too short to reach the crank's end from the ground pivot
    text = EXAMPLE.read_text(encoding="utf-8").replace("b = 0.6;\nc = 0.5;", "b = 0.1;\nc = 0.1;")
    assert "b = 0.1;\nc = 0.1;" in text
    with pytest.raises(SimulationError, match=r"do not satisfy the constraints.*\|Φ\| ="):
        kidym.simulate(kidym.parse(text), t_end=0.1)


def test_redundant_constraints_are_an_error() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "УРАВНЕНИЯ := f1, f2;", "f3 = 2*f1; УРАВНЕНИЯ := f1, f2, f3;")
    with pytest.raises(SimulationError, match=r"not independent.*rank of their Jacobian is "
                                              r"2, not 3: f3 = 2·f1\b"):
        kidym.simulate(kidym.parse(text), t_end=0.1)


#: a differential-drive robot: a planar chassis carrying two wheels on one axle
DIFF_DRIVE = """M = 5; m = 0.5; r = 0.1; b = 0.2; g = 9.81;
Chassis | Sx(x), Sy(y), Rz(psi), Sz(r) | m(M), Jx(0.05), Jy(0.05), Jz(0.1);
WheelL ~ Chassis | Sy(b), Ry(phiL) | m(m), Jx(m*r^2/4), Jy(m*r^2/2), Jz(m*r^2/4);
WheelR ~ Chassis | Sy(-b), Ry(phiR) | m(m), Jx(m*r^2/4), Jy(m*r^2/2), Jz(m*r^2/4);
GRAVITY := 0, 0, -g;
INITIAL := phiL't(1), phiR't(2);
"""


def test_rolling_wheels_on_a_chassis_say_what_is_dependent_and_how_to_write_it() -> None:
    """Issue 29: six КАЧЕНИЕ constraints of rank 3 — the contact heights, which the
    chassis' fixed height holds, and the lateral no-slip of the second wheel on the same
    axle, which is the first's (closed form: both are v_y of the axle in the chassis
    frame, so the row is the other times 1)."""
    text = DIFF_DRIVE + ("ROLLING := WheelL(disc(r, y), plane(0)), "
                         "WheelR(disc(r, y), plane(0));\n")
    with pytest.raises(SimulationError) as info:
        kidym.simulate(kidym.parse(text), t_end=0.1)
    message = str(info.value)
    assert ("rank of their Jacobian is 3, not 6: rollZWheelL, rollZWheelR do not depend on "
            "the speeds (the model's coordinates already hold them); rollYWheelR = "
            "1·rollYWheelL") in message
    assert "WheelL, WheelR roll on a body that carries them" in message
    assert "x't = r/2*(phiL't + phiR't)*cos(psi);" in message
    # what the hint says to write: the no-slip conditions as the chassis' velocity formulas
    fixed = kidym.parse(DIFF_DRIVE + "x't = r/2*(phiL't + phiR't)*cos(psi);\n"
                        "y't = r/2*(phiL't + phiR't)*sin(psi);\n"
                        "psi't = r/(2*b)*(phiR't - phiL't);\n")
    eq = kidym.derive(fixed)
    assert eq.n_w == 2
    run = kidym.simulate(fixed, t_end=0.5, n_points=6)
    # the wheels turn at their initial rates (no force drives them: the axle's midpoint
    # is the chassis' centre of mass), so the heading turns at r/(2b)·(2 − 1)
    np.testing.assert_allclose(run["psi"], 0.1 / 0.4 * run.t, atol=1e-8)


@pytest.mark.parametrize(("text", "message"), [
    ("УРАВНЕНИЯ := m1;", r"`m1` is listed in `УРАВНЕНИЯ` but has a value"),
    ("УРАВНЕНИЯ := f9;", r"`f9` is listed in `УРАВНЕНИЯ` but is not defined"),
    ("УРАВНЕНИЯ := q1;", r"`q1` is listed in `УРАВНЕНИЯ` but is a coordinate"),
])
def test_bad_constraint_lists_are_located_errors(text: str, message: str) -> None:
    base = EXAMPLE.read_text(encoding="utf-8").replace("УРАВНЕНИЯ := f1, f2;", text)
    with pytest.raises(ParseError, match=message):
        kidym.parse(base)


def test_a_nonlinear_velocity_constraint_or_one_on_nothing_is_an_error() -> None:
    base = EXAMPLE.read_text(encoding="utf-8").replace(", λf1, λf2;", ";")
    with pytest.raises(kidym.DerivationError, match="not linear in the speeds"):
        kidym.derive(kidym.parse(base.replace("УРАВНЕНИЯ := f1, f2;",
                                              "h = q1't^2 - 1; УРАВНЕНИЯ := f1, h;")))
    with pytest.raises(kidym.DerivationError, match="uses an acceleration"):
        kidym.derive(kidym.parse(base.replace("УРАВНЕНИЯ := f1, f2;",
                                              "h = q1't't - 1; УРАВНЕНИЯ := f1, h;")))
    with pytest.raises(kidym.DerivationError, match="depends on no coordinate"):
        kidym.derive(kidym.parse(base.replace("УРАВНЕНИЯ := f1, f2;",
                                              "h = sin(t) - a; УРАВНЕНИЯ := f1, h;")))


def test_unsupported_calculations_and_result_changing_instructions_are_errors() -> None:
    base = EXAMPLE.read_text(encoding="utf-8")
    with pytest.raises(ParseError, match="calculation `ДИАГНОСТИКА` is recognised but not "
                                         "supported yet"):
        kidym.parse(base.replace("РАСЧЕТ := ДИНАМИКА;", "РАСЧЕТ := ДИАГНОСТИКА;"))
    with pytest.raises(ParseError, match="`ЛИСТ` is recognised but not supported yet; "
                                         "it would change the results"):
        kidym.parse(base + "\nЛИСТ := ОСНОВНОЙ;")


# ------------------------------------------------------------------ compiled engine
@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A private library cache for this module's compiled builds."""
    path = tmp_path_factory.mktemp("kidym-cache")
    old = os.environ.get("KIDYM_CACHE_DIR")
    os.environ["KIDYM_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("KIDYM_CACHE_DIR", None)
    else:
        os.environ["KIDYM_CACHE_DIR"] = old


@pytest.mark.parametrize("case", ["four_bar", "slider_crank"])
@pytest.mark.parametrize("baumgarte", [False, True])
def test_compiled_right_hand_side_equals_numpy(case: str, baumgarte: bool, cache) -> None:
    from kidym.eom.constraints import Stabilization
    from kidym.simulation.compiled import CompiledSystem

    if case == "four_bar":
        model, oracle, guess, moving = kidym.load(EXAMPLE), four_bar(FOUR_BAR), [-0.4, 1.4], False
    else:
        model, oracle = kidym.parse(SLIDER_TEXT), slider_crank(SLIDER)
        guess, moving = [-0.2, 0.45], True
    eq = kidym.derive(model)
    stab = Stabilization("baumgarte", 3.0, 5.0) if baumgarte else Stabilization()
    numpy_sys = dataclasses.replace(NumpySystem.build(eq), stabilization=stab)
    comp = CompiledSystem.build(eq)
    comp.set_stabilization(stab)
    p = numpy_sys.parameter_vector()
    rng = np.random.default_rng(3)
    for state in consistent_states(oracle, rng, 3, guess, moving):
        y = np.array([state[n] for n in numpy_sys.state_names])
        # off the constraints too, so that Baumgarte's terms count
        y = y + rng.normal(scale=1e-3, size=y.size)
        a = numpy_sys.rhs(state["t"], y, p)
        b = comp.rhs(state["t"], y, p)
        assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max()), (a, b)


def test_compiled_run_matches_numpy_and_holds_the_constraints(cache) -> None:
    model = kidym.load(EXAMPLE)
    comp = kidym.simulate(model, engine="compiled", t_end=100, n_points=2001)
    drift = comp.stats["constraint_drift"]
    assert drift["position"] <= drift["tolerance"] and drift["velocity"] <= drift["tolerance"]
    assert comp.stats["initial_adjusted"].keys() == {"q2", "q3", "q2't", "q3't"}
    e = comp["energy"]
    assert np.abs(e - e[0]).max() <= 1e-6 * abs(e).max()
    ref = kidym.simulate(model, t_end=2, rtol=1e-11, atol=1e-13)
    short = kidym.simulate(model, engine="compiled", t_end=2, rtol=1e-11, atol=1e-13)
    for name in ("q1", "q2", "q3", "q1't", "λf1", "λf2"):
        scale = max(1.0, np.abs(ref[name]).max())
        assert np.abs(short[name] - ref[name]).max() <= 1e-7 * scale, name


def test_compiled_rheonomic_slider_crank_matches_numpy(cache) -> None:
    model = kidym.parse(SLIDER_TEXT)
    ref = kidym.simulate(model, rtol=1e-11, atol=1e-13)
    comp = kidym.simulate(model, engine="compiled", rtol=1e-11, atol=1e-13)
    for name in ("q1", "s", "s't", "λf1", "λf2"):
        scale = max(1.0, np.abs(ref[name]).max())
        assert np.abs(comp[name] - ref[name]).max() <= 1e-7 * scale, name
    # the guide moves: the slider's pin follows e(t) = A sin(W t) (closed form)
    r, l_ = SLIDER["r"], SLIDER["l"]
    y_pin = r * np.sin(comp["q1"]) + l_ * np.sin(comp["q1"] + comp["q2"])
    assert np.abs(y_pin - SLIDER["A"] * np.sin(SLIDER["W"] * comp.t)).max() <= 1e-8


# ------------------------------------------------------------- velocity constraints
SLEIGH_IMPLICIT = """
m = 2;  b = 0.4;  J = 0.05;  A = 0.3;  W = 2;
Sleigh | Sx(x), Sy(y), Rz(theta) | Sx(b), m(m), Jx(J), Jy(J), Jz(J);
h = -x't*sin(theta) + y't*cos(theta);     # the knife edge does not slide sideways #
УРАВНЕНИЯ := h;
Pm.ωZSleigh = A*sin(W*t);                 # a time-dependent steering moment #
НАЧАЛЬНЫЕ УСЛОВИЯ := theta(0.5), x't(0.2), theta't(1.5);
ВРЕМЯ := t(0, 3);
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_velocity_constraint_written_implicitly_gives_chaplygins_equations(
        engine: str, cache) -> None:
    """Closed form (Chaplygin sleigh with a steering moment M(t), edge speed v):
    v̇ = b θ̇², (J + m b²) θ̈ = −m b v θ̇ + M(t)."""
    model = kidym.parse(SLEIGH_IMPLICIT)
    eq = kidym.derive(model)
    assert eq.m == 1 and eq.n_dof == 2 and eq.constraints.holonomic == (False,)
    m, b, J, A, W = 2.0, 0.4, 0.05, 0.3, 2.0
    rng = np.random.default_rng(5)
    if engine == "numpy":
        system = NumpySystem.build(eq)
    else:
        from kidym.simulation.compiled import CompiledSystem
        system = CompiledSystem.build(eq)
    p = system.parameter_vector()
    for _ in range(4):
        th, v, om = rng.uniform(-3, 3), rng.uniform(-2, 2), rng.uniform(-2, 2)
        tt = rng.uniform(0, 3)
        state = {"x": rng.uniform(-1, 1), "y": rng.uniform(-1, 1), "theta": th,
                 "x't": v * np.cos(th), "y't": v * np.sin(th), "theta't": om}
        y = np.array([state[n] for n in system.state_names])
        ydot = system.rhs(tt, y, p)
        acc = dict(zip(system.state_names[3:], ydot[3:]))
        vdot = acc["x't"] * np.cos(th) + acc["y't"] * np.sin(th)
        assert vdot == pytest.approx(b * om ** 2, rel=1e-10, abs=1e-12)
        assert acc["theta't"] == pytest.approx(
            (-m * b * v * om + A * np.sin(W * tt)) / (J + m * b ** 2), rel=1e-10, abs=1e-12)
    r = kidym.simulate(model, engine=engine)
    lateral = -r["x't"] * np.sin(r["theta"]) + r["y't"] * np.cos(r["theta"])
    assert np.abs(lateral).max() <= 1e-9
    # x't, theta't given; y't solved from the constraint
    assert r.stats["initial_adjusted"]["y't"] == pytest.approx((0.0, 0.2 * np.tan(0.5)))


def test_printed_equations_hold_on_lagranges_solution() -> None:
    """The JSON of `kidym equations` (M ẇ − F − Gᵀλ and G, γ) evaluated at a state with
    the oracle's q̈ and λ: every equation is 0 and G ẇ = γ."""
    import json

    from kidym.report.equations import to_json

    doc = json.loads(to_json(kidym.derive(kidym.load(EXAMPLE))))
    oracle = four_bar(FOUR_BAR)
    state = consistent_states(oracle, np.random.default_rng(11), 1, [-0.4, 1.4], False)[0]
    qdd, lam = oracle.solve(state)
    names = {v: k for k, v in doc["symbols"].items()}
    values = {names[n]: state[n] for n in ("q1", "q2", "q3", "q1't", "q2't", "q3't")}
    values.update({names[f"{q}'t't"]: a for q, a in zip(("q1", "q2", "q3"), qdd)})
    values.update({names[n]: v for n, v in zip(("λf1", "λf2"), lam)})
    values.update({k: v for k, v in doc["parameters"].items()})
    values[doc["time"]] = 0.0
    env = {sp.Symbol(k): sp.Float(v, 20) for k, v in values.items()}
    for name, expr in doc["intermediates"]:
        env[sp.Symbol(name)] = sp.sympify(expr).xreplace(env).evalf(20)
    for u in doc["equations"]:
        assert abs(float(sp.sympify(u).xreplace(env))) < 1e-9
    cons = doc["constraints"]
    G = np.array([[float(sp.sympify(g).xreplace(env)) for g in row] for row in cons["jacobian"]])
    gamma = np.array([float(sp.sympify(g).xreplace(env)) for g in cons["gamma"]])
    assert np.abs(G @ qdd - gamma).max() < 1e-9


def test_batch_runs_start_on_the_constraints_and_record_multipliers(cache) -> None:
    from kidym.simulation.batch import simulate_batch

    model = kidym.load(EXAMPLE)
    batch = simulate_batch(model, parameters=[{"m2": 1.0}, {"m2": 3.0}], t_end=1)
    for k, m2 in enumerate((1.0, 3.0)):
        one = kidym.simulate(model, engine="compiled", parameters={"m2": m2}, t_end=1)
        for name in ("q2", "q3't", "λf1"):
            assert np.allclose(batch.values[name][k], one[name], rtol=1e-9, atol=1e-9), name
        assert batch.results[k].stats["constraint_drift"]["position"] <= 1e-9


def test_events_on_a_constrained_model(cache) -> None:
    """The crank's first full turn, located by an event, at the same time in both
    engines, with the state on the event surface and on the constraints."""
    from kidym.simulation.events import Event

    model = kidym.load(EXAMPLE)
    turn = Event("q1 - 2*pi", name="turn", terminal=True)
    times = []
    for engine in ("numpy", "compiled"):
        r = kidym.simulate(model, engine=engine, events=[turn], t_end=5, n_points=51,
                           rtol=1e-11, atol=1e-13)
        ev = r.stats["events"]
        assert ev["name"] == ["turn"]
        state = dict(zip(r.state_names, ev["state"][0]))
        assert state["q1"] == pytest.approx(2 * np.pi, abs=1e-9)
        assert r.t[-1] <= ev["t"][0] < 5   # the run stops there
        times.append(float(ev["t"][0]))
    assert times[0] == pytest.approx(times[1], abs=1e-7)


def test_check_reports_freedom_rank_and_start(tmp_path, capsys) -> None:
    from kidym.cli import main

    assert main(["check", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "degrees of freedom: 1 (3 speeds, 2 holonomic constraints)" in out
    assert "rank 2 of 2 (independent)" in out and "q2 -0.5 → -0.421545" in out
    bad = tmp_path / "redundant.kdm"
    bad.write_text(EXAMPLE.read_text(encoding="utf-8").replace(
        "УРАВНЕНИЯ := f1, f2;", "f3 = 2*f1; УРАВНЕНИЯ := f1, f2, f3;"), encoding="utf-8")
    assert main(["check", str(bad)]) != 0
    captured = capsys.readouterr()
    assert "not independent" in captured.err and "OK" not in captured.out
    assert "Traceback" not in captured.err


def test_a_rank_loss_during_the_run_is_a_constraint_failure() -> None:
    """Dependent constraints met by the right-hand side itself (past the start check):
    named as a constraint failure, not as a singular mass matrix."""
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "УРАВНЕНИЯ := f1, f2;", "f3 = 2*f1; УРАВНЕНИЯ := f1, f2, f3;").replace(
        "q1, q3, λf1, λf2;", "q1;")
    system = NumpySystem.build(kidym.derive(kidym.parse(text)))
    p = system.parameter_vector()
    y = np.array([1.0, -0.42, 1.45, 1.0, 0.5, 0.2])
    with pytest.raises(SimulationError) as info:
        system.rhs(0.0, y, p)
    assert info.value.kind == "constraint-failure"
    assert "lost rank" in str(info.value)
