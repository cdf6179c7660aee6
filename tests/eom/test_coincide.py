"""Loop closure by coinciding points (``СОВПАДЕНИЕ`` / ``ЗБІГ`` / ``COINCIDE``).

Oracles: the hand-written ``УРАВНЕНИЯ`` of the same loops (the four-bar and the five-bar
of ``examples/``, themselves held to SymPy's ``LagrangesMethod``), SymPy's
``LagrangesMethod`` for a spatial RSSR four-bar built independently
(tests/oracles/closed_loops.py), the closed-form pendulum on a moving pivot; NumPy and
compiled engines; the located errors.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import fsolve

import kidym
from kidym.errors import ParseError, SimulationError
from kidym.simulation.simulate import NumpySystem
from tests.eom.test_constraints import FOUR_BAR, consistent_states, kidym_solution
from tests.oracles.closed_loops import four_bar, spatial_rssr

ROOT = Path(__file__).parents[2]
FOUR_BAR_FILE = ROOT / "examples" / "four_bar" / "four_bar.kdm"
FOUR_BAR_COINCIDE = ROOT / "examples" / "four_bar" / "four_bar_coincide.kdm"
FIVE_BAR_FILE = ROOT / "examples" / "parallel_five_bar" / "parallel_five_bar.kdm"


def five_bar_coincide() -> str:
    """The five-bar with its loop closed by ``СОВПАДЕНИЕ`` (the tool's origin form)."""
    text = FIVE_BAR_FILE.read_text(encoding="utf-8")
    old = "УРАВНЕНИЯ := f1, f2;"
    assert old in text
    return (text.replace(old, "ЗБІГ := Tool = Dist2(l4, 0, 0);")
            .replace("λf1, λf2", "λcoinX1, λcoinY1"))


def random_states(system: NumpySystem, rng: np.random.Generator, count: int
                  ) -> list[np.ndarray]:
    return [rng.uniform(-2, 2, size=len(system.state_names)) for _ in range(count)]


# ------------------------------------------------------------- same equations
@pytest.mark.parametrize("case", ["four_bar", "five_bar"])
def test_the_generated_loop_gives_the_equations_of_the_hand_written_one(case: str) -> None:
    if case == "four_bar":
        hand, gen = kidym.load(FOUR_BAR_FILE), kidym.load(FOUR_BAR_COINCIDE)
    else:
        hand = kidym.load(FIVE_BAR_FILE)
        gen = kidym.parse(five_bar_coincide(), filename="five_bar_coincide.kdm")
    eq_h, eq_g = kidym.derive(hand), kidym.derive(gen)
    # the z components vanish identically (the loops move in the plane Oxy): dropped
    assert eq_g.constraints.names == ("coinX1", "coinY1")
    assert eq_g.constraints.multiplier_names == ("λcoinX1", "λcoinY1")
    sh, sg = NumpySystem.build(eq_h), NumpySystem.build(eq_g)
    assert sh.state_names == sg.state_names
    ph, pg = sh.parameter_vector(), sg.parameter_vector()
    rng = np.random.default_rng(11)
    for y in random_states(sh, rng, 5):    # any state: the two systems are the same functions
        tt = float(rng.uniform(0, 3))
        bh, bg = sh.constraint_block(tt, y, ph)[2], sg.constraint_block(tt, y, pg)[2]
        for part in ("gamma", "phi", "c", "G"):    # γ, Φ, Φ̇ and the Jacobian G
            a, b = getattr(bh, part), getattr(bg, part)
            assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max()), part
        _qd, M, F = sh.rhs_function(tt, y.tolist(), ph.tolist())
        wh, lh = sh._solve(tt, y, np.asarray(M, float), np.asarray(F, float))
        _qd, M, F = sg.rhs_function(tt, y.tolist(), pg.tolist())
        wg, lg = sg._solve(tt, y, np.asarray(M, float), np.asarray(F, float))
        assert np.abs(wh - wg).max() <= 1e-10 * max(1.0, np.abs(wh).max())
        assert np.abs(lh - lg).max() <= 1e-10 * max(1.0, np.abs(lh).max())


ORACLE_4 = four_bar(FOUR_BAR)


def test_the_four_bar_written_with_coincide_equals_lagranges_method() -> None:
    system = NumpySystem.build(kidym.derive(kidym.load(FOUR_BAR_COINCIDE)))
    p = system.parameter_vector()
    rng = np.random.default_rng(5)
    for state in consistent_states(ORACLE_4, rng, 3, [-0.4, 1.4], False):
        wdot, lam = kidym_solution(system, state, p)
        qdd, lam_ref = ORACLE_4.solve(state)
        assert np.abs(wdot - qdd).max() <= 1e-9 * max(1.0, np.abs(qdd).max())
        # λcoinX1, λcoinY1: the force of the rocker on the coupler, as λf1, λf2
        assert np.abs(lam - lam_ref).max() <= 1e-9 * max(1.0, np.abs(lam_ref).max())


@pytest.mark.parametrize("case", ["four_bar", "five_bar"])
def test_trajectories_equal_the_hand_written_loop_numpy(case: str) -> None:
    if case == "four_bar":
        hand, gen = kidym.load(FOUR_BAR_FILE), kidym.load(FOUR_BAR_COINCIDE)
        names, rename = ("q1", "q2", "q3", "q1't"), {"λf1": "λcoinX1", "λf2": "λcoinY1"}
    else:
        hand = kidym.load(FIVE_BAR_FILE)
        gen = kidym.parse(five_bar_coincide(), filename="five_bar_coincide.kdm")
        names, rename = ("q1", "q2", "q3", "q4", "xE"), {"λf1": "λcoinX1", "λf2": "λcoinY1"}
    ref = kidym.simulate(hand, t_end=1.5, rtol=1e-11, atol=1e-13)
    got = kidym.simulate(gen, t_end=1.5, rtol=1e-11, atol=1e-13)
    for name in (*names, *rename):
        other = rename.get(name, name)
        scale = max(1.0, np.abs(ref[name]).max())
        assert np.abs(got[other] - ref[name]).max() <= 1e-9 * scale, name


# ------------------------------------------------------------- spatial loop
SPATIAL = dict(a=0.2, b=0.5, c=0.35, d=0.5, h=0.1, m1=1.0, m2=2.0, m3=1.5, Js=0.01, g=9.81)
SPATIAL_TEXT = """
a = 0.2; b = 0.5; c = 0.35; d = 0.5; h = 0.1; m1 = 1; m2 = 2; m3 = 1.5; Js = 0.01; g = 9.81;
Crank | Rz(q1) | Sx(a/2), m(m1), Jx(0), Jy(m1*a^2/12), Jz(m1*a^2/12);
Coupler~Crank | Sx(a), Rz(q2), Ry(q3), Rx(q4) | Sx(b/2), m(m2), Jx(Js), Jy(m2*b^2/12),
                                                 Jz(m2*b^2/12);
Rocker | Sx(d), Sz(h), Rx(q5) | Sy(c/2), m(m3), Jx(m3*c^2/12), Jy(0), Jz(m3*c^2/12);
COINCIDE := Coupler(b, 0, 0) = Rocker(0, c, 0);
GRAVITY := 0, 0, -g;
INITIAL := q1(0.3), q2(-0.9), q3(0.3), q5(-0.9), q1't(2), q4't(1);
FREE := q2, q3, q5;
TIME := t(0, 1);
"""


def spatial_states(oracle, rng: np.random.Generator, count: int) -> list[dict[str, float]]:
    """Random states on the RSSR's constraints: q1, q4 and their rates given; q2, q3, q5
    and their rates solved with the oracle's own ``Φ`` (SciPy)."""
    q = oracle.q
    phi = sp.Matrix(oracle.constraints).subs(oracle.params)
    J = phi.jacobian(q)
    plain = sp.symbols("z0:5")
    rep = dict(zip(q, plain))
    f_phi = sp.lambdify([plain], phi.xreplace(rep))
    f_J = sp.lambdify([plain], J.xreplace(rep))
    states, guess = [], [-0.9, 0.3, -0.9]
    while len(states) < count:
        q1, q4 = rng.uniform(0.1, 0.5), rng.uniform(-1, 1)

        def full(z, q1=q1, q4=q4):
            return [q1, z[0], z[1], q4, z[2]]

        sol, _i, ok, _m = fsolve(lambda z: np.ravel(f_phi(full(z))), guess, full_output=True)
        z = np.array(full(sol))
        if ok != 1 or np.abs(np.ravel(f_phi(z))).max() > 1e-12:
            continue
        Jn = np.array(f_J(z), float)
        u = np.zeros(5)
        u[0], u[3] = rng.uniform(-3, 3), rng.uniform(-3, 3)
        dep = [1, 2, 4]
        u[dep] = np.linalg.solve(Jn[:, dep], -Jn[:, [0, 3]] @ u[[0, 3]])
        state = {f"q{i + 1}": float(v) for i, v in enumerate(z)}
        state.update({f"q{i + 1}'t": float(v) for i, v in enumerate(u)})
        state["t"] = 0.0
        states.append(state)
        guess = list(sol)
    return states


def test_a_spatial_rssr_loop_equals_lagranges_method() -> None:
    oracle = spatial_rssr(SPATIAL)
    eq = kidym.derive(kidym.parse(SPATIAL_TEXT))
    assert eq.constraints.names == ("coinX1", "coinY1", "coinZ1")   # none vanishes
    system = NumpySystem.build(eq)
    p = system.parameter_vector()
    for state in spatial_states(oracle, np.random.default_rng(2), 3):
        wdot, lam = kidym_solution(system, state, p)
        qdd, lam_ref = oracle.solve(state)
        assert np.abs(wdot - qdd).max() <= 1e-9 * max(1.0, np.abs(qdd).max()), (wdot, qdd)
        assert np.abs(lam - lam_ref).max() <= 1e-9 * max(1.0, np.abs(lam_ref).max())


# ------------------------------------------------------------- time-dependent loop
PIVOT = dict(m=2.0, l=0.8, g=9.81, A=0.05, W=7.0)
PIVOT_TEXT = """
m = 2; l = 0.8; g = 9.81; A = 0.05; W = 7;
Rod | Sx(x), Sy(y), Rz(th) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
СОВПАДЕНИЕ := Rod = ЗЕМЛЯ(A*sin(W*t), 0, 0);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := th(-1.2), th't(0.5);
ВРЕМЯ := t(0, 3);
ПОКАЗАТЬ := λcoinX1, λcoinY1;
"""


def pivot_closed_form(th: np.ndarray, thd: np.ndarray, tt: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A uniform rod on a pivot moving as x_p = A sin(W t): θ̈ from the moment about the
    pivot in its frame, and the pivot force on the rod ``m a_C − m g``."""
    m, l_, g, A, W = (PIVOT[k] for k in ("m", "l", "g", "A", "W"))
    xpdd = -A * W ** 2 * np.sin(W * tt)
    thdd = (-m * g * l_ / 2 * np.cos(th) + m * l_ / 2 * xpdd * np.sin(th)) / (m * l_ ** 2 / 3)
    fx = m * (xpdd - l_ / 2 * (np.sin(th) * thdd + np.cos(th) * thd ** 2))
    fy = m * (l_ / 2 * (np.cos(th) * thdd - np.sin(th) * thd ** 2) + g)
    return thdd, fx, fy


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


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_pivot_moving_with_time_follows_the_closed_form(engine: str, request) -> None:
    if engine == "compiled":
        request.getfixturevalue("cache")
    r = kidym.simulate(kidym.parse(PIVOT_TEXT), engine=engine, rtol=1e-11, atol=1e-13,
                       n_points=301)
    # the start is put on the loop: the rod's origin at the pivot, its rate the pivot's
    assert r.stats["initial_adjusted"].keys() >= {"x't"}
    A, W = PIVOT["A"], PIVOT["W"]
    assert np.abs(r["x"] - A * np.sin(W * r.t)).max() <= 1e-8
    assert np.abs(r["y"]).max() <= 1e-8
    # θ̈ along the run (differentiated θ̇) and the pivot force, against the closed form
    thdd, fx, fy = pivot_closed_form(r["th"], r["th't"], r.t)
    num = np.gradient(r["th't"], r.t)
    assert np.abs(num[5:-5] - thdd[5:-5]).max() <= 2e-3 * np.abs(thdd).max()
    assert np.abs(r["λcoinX1"] - fx).max() <= 1e-6 * np.abs(fx).max()
    assert np.abs(r["λcoinY1"] - fy).max() <= 1e-6 * np.abs(fy).max()


@pytest.mark.parametrize("case", ["four_bar", "five_bar"])
def test_trajectories_equal_the_hand_written_loop_compiled(case: str, cache) -> None:
    if case == "four_bar":
        hand, gen = kidym.load(FOUR_BAR_FILE), kidym.load(FOUR_BAR_COINCIDE)
    else:
        hand = kidym.load(FIVE_BAR_FILE)
        gen = kidym.parse(five_bar_coincide(), filename="five_bar_coincide.kdm")
    ref = kidym.simulate(hand, engine="compiled", t_end=1.5, rtol=1e-11, atol=1e-13)
    got = kidym.simulate(gen, engine="compiled", t_end=1.5, rtol=1e-11, atol=1e-13)
    for name, other in (("q1", "q1"), ("q2", "q2"), ("q3", "q3"), ("λf1", "λcoinX1"),
                        ("λf2", "λcoinY1")):
        scale = max(1.0, np.abs(ref[name]).max())
        assert np.abs(got[other] - ref[name]).max() <= 1e-9 * scale, name


# ------------------------------------------------------------- errors
BASE = FOUR_BAR_COINCIDE.read_text(encoding="utf-8") if FOUR_BAR_COINCIDE.exists() else ""
LINE = "СОВПАДЕНИЕ := Coupler(b, 0, 0) = Rocker(c, 0, 0);"


@pytest.mark.parametrize(("line", "message"), [
    ("СОВПАДЕНИЕ := Coupler(b, 0, 0) = Roker(c, 0, 0);",
     r":\d+:34: error: `СОВПАДЕНИЕ`: `Roker` is not a body \(did you mean `Rocker`\?\)"),
    ("СОВПАДЕНИЕ := Coupler(b, 0) = Rocker(c, 0, 0);",
     r"error: `СОВПАДЕНИЕ`: a point of `Coupler` takes three coordinates in its axes, "
     r"`Coupler\(x, y, z\)`, or none \(`Coupler` alone is its origin\); got 2"),
    ("СОВПАДЕНИЕ := Coupler(b, 0, 0) = Coupler(0, 0, 0);",
     r"error: `СОВПАДЕНИЕ`: both points of `Coupler\(b, 0, 0\) = Coupler\(0, 0, 0\)` belong "
     r"to body `Coupler`"),
    ("СОВПАДЕНИЕ := ЗЕМЛЯ(b, 0, 0) = GROUND;",
     r"both points of .* belong to the fixed frame"),
    ("coinX1 = 1; СОВПАДЕНИЕ := Coupler(b, 0, 0) = Rocker(c, 0, 0);",
     r"error: `СОВПАДЕНИЕ` names the constraints of item 1 `coinX1`, but `coinX1` is a name "
     r"of the model: rename it"),
    ("СОВПАДЕНИЕ := Coupler(q1, 0, 0) = Rocker(c, 0, 0);",
     r"error: the point of `Coupler` in `Coupler\(q1, 0, 0\) = Rocker\(c, 0, 0\)` depends on "
     r"coordinate `q1`; it must be constant \(parameters only\)"),
    ("СОВПАДЕНИЕ := Coupler(b, 0, 0) = 2;",
     r"error: unexpected number `2`"),
    ("СОВПАДЕНИЕ := ;", r":\d+:1: error: `СОВПАДЕНИЕ` lists `A\(x, y, z\) = B\(x, y, z\)`.*"
     r"the list is empty"),
    ("СОВПАДЕНИЕ := Coupler(b, 0, 0) = ЗЕМЛЯ(q1, 0, 0);",
     r"error: the point of the fixed frame in .* depends on coordinate `q1`"),
])
def test_bad_items_are_located_errors(line: str, message: str) -> None:
    text = BASE.replace(LINE, line)
    assert line in text
    with pytest.raises(ParseError, match=message):
        kidym.parse(text, filename="m.kdm")


def test_a_component_that_can_never_close_is_a_located_error() -> None:
    # the rocker raised by 0.1 along z: the z components differ by a constant
    text = BASE.replace("Rocker | Sx(d), Rz(q3)", "Rocker | Sx(d), Sz(0.1), Rz(q3)")
    assert "Sz(0.1)" in text
    with pytest.raises(kidym.ModelError, match=r"m.kdm:\d+:15: error: `Coupler\(b, 0, 0\) = "
                       r"Rocker\(c, 0, 0\)`: the z components of the two points differ by "
                       r"`-1/10`.*can never coincide along fixed z"):
        kidym.derive(kidym.parse(text, filename="m.kdm"))


def test_a_multiplier_of_a_dropped_component_is_a_located_error() -> None:
    text = BASE.replace("λcoinY1;", "λcoinY1, λcoinZ1;")
    assert "λcoinZ1" in text
    with pytest.raises(kidym.ModelError, match=r"`λcoinZ1` is asked for as an output, but "
                       r"the component `coinZ1` of `Coupler\(b, 0, 0\) = Rocker\(c, 0, 0\)` "
                       "is identically zero"):
        kidym.derive(kidym.parse(text, filename="m.kdm"))


def test_the_kinematics_calculations_do_not_take_it() -> None:
    text = BASE.replace("РАСЧЕТ := ДИНАМИКА;", "РАСЧЕТ := КИНЕМАТИКА;")
    with pytest.raises(ParseError, match=r"`СОВПАДЕНИЕ` closes a loop of a dynamics model; "
                       "the kinematics calculation does not read it"):
        kidym.parse(text)


def test_check_names_the_generated_constraints(capsys) -> None:
    from kidym.cli import main

    assert main(["check", str(FOUR_BAR_COINCIDE)]) == 0
    out = capsys.readouterr().out
    assert "degrees of freedom: 1 (3 speeds, 2 holonomic constraints)" in out
    assert ("constraints (2): coinX1 = 0 (holonomic), coinY1 = 0 (holonomic); multipliers "
            "λcoinX1, λcoinY1") in out


def test_the_three_languages_and_fmt_round_trip() -> None:
    from kidym.lang.fmt import format_source

    for word in ("СОВПАДЕНИЕ", "ЗБІГ", "COINCIDE"):
        eq = kidym.derive(kidym.parse(BASE.replace("СОВПАДЕНИЕ :=", f"{word} :=")))
        assert eq.constraints.names == ("coinX1", "coinY1")
    formatted = format_source(BASE)
    assert "Coupler(b, 0, 0) = Rocker(c, 0, 0)" in formatted
    assert kidym.derive(kidym.parse(formatted)).constraints.names == ("coinX1", "coinY1")


def test_the_minimal_form_runs_the_generated_loop() -> None:
    model = kidym.load(FOUR_BAR_COINCIDE)
    ref = kidym.simulate(model, t_end=1, rtol=1e-11, atol=1e-13)
    got = kidym.simulate(model, t_end=1, rtol=1e-11, atol=1e-13, formulation="minimal")
    for name in ("q1", "q2", "q3", "λcoinX1", "λcoinY1"):
        scale = max(1.0, np.abs(ref[name]).max())
        assert np.abs(got[name] - ref[name]).max() <= 1e-7 * scale, name


def test_a_body_named_ground_is_that_body() -> None:
    # the rocker called `Ground`: `Ground(c, 0, 0)` is its point, not the fixed frame's
    text = BASE.replace("Rocker", "Ground")
    eq = kidym.derive(kidym.parse(text))
    assert eq.constraints.names == ("coinX1", "coinY1")
    k = [str(q) for q in eq.coordinates].index("q3")
    assert eq.constraints.jacobian_q[0][k] != 0     # the loop closes on q3's body


def test_the_multipliers_are_plotted(tmp_path) -> None:
    from kidym.report.plots import plot_run

    model = kidym.load(FOUR_BAR_COINCIDE)
    r = kidym.simulate(model, t_end=0.2)
    written = plot_run(r, model, tmp_path)
    assert any(p.name.startswith("multipliers") for p in written)


def test_redundant_coincidences_are_reported_when_the_run_starts() -> None:
    # a rod pinned at both ends: four constraints on three coordinates, rank 3
    text = PIVOT_TEXT.replace("СОВПАДЕНИЕ := Rod = ЗЕМЛЯ(A*sin(W*t), 0, 0);",
                              "СОВПАДЕНИЕ := Rod = ЗЕМЛЯ, Rod(l, 0, 0) = ЗЕМЛЯ(0, -l, 0);")
    text = text.replace("ПОКАЗАТЬ := λcoinX1, λcoinY1;", "ПОКАЗАТЬ := λcoinX2;")
    eq = kidym.derive(kidym.parse(text))
    assert eq.constraints.names == ("coinX1", "coinY1", "coinX2", "coinY2")
    with pytest.raises(SimulationError, match=r"not independent.*rank of their Jacobian is 3"):
        kidym.simulate(kidym.parse(text), t_end=0.1)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_kinetostatics_with_the_loop_closed_by_coincide(engine: str, request) -> None:
    """The slider-crank of examples/slider_crank driven by ``f3 = q1 - Om*t``, its loop
    closed by ``СОВПАДЕНИЕ``: the drive torque and the slider force of inverse dynamics
    (Lagrange's equation in the crank angle alone, SymPy)."""
    from tests.oracles.closed_loops import DrivenSliderCrank
    from tests.oracles.closed_loops import t as time

    if engine == "compiled":
        request.getfixturevalue("cache")
    text = (ROOT / "examples" / "slider_crank" / "slider_crank.kdm").read_text(encoding="utf-8")
    old = "УРАВНЕНИЯ := f1, f2, f3;"
    assert old in text
    text = text.replace(old, "СОВПАДЕНИЕ := Rod(l, 0, 0) = Slider;  УРАВНЕНИЯ := f3;")
    eq = kidym.derive(kidym.parse(text))
    assert eq.constraints.names == ("f3", "coinX1", "coinY1")
    r = kidym.simulate(kidym.parse(text), engine=engine, rtol=1e-11, atol=1e-13, n_points=51)
    oracle = DrivenSliderCrank.build(dict(r=0.1, l=0.4, m1=1.0, m2=2.0, ms=3.0, g=9.81,
                                          c=20.0), 10.0 * time)
    tau, X = oracle.torque(r.t), oracle.slider_force(r.t)
    assert np.abs(r["λf3"] - tau).max() <= 1e-8 * np.abs(tau).max()
    # λcoinX1: the x force of the slider on the rod's end, −(ms s̈ + c ṡ)
    assert np.abs(r["λcoinX1"] - X).max() <= 1e-8 * np.abs(X).max()


def test_the_spatial_loop_runs_alike_in_both_engines_and_stays_closed(cache) -> None:
    model = kidym.parse(SPATIAL_TEXT)
    ref = kidym.simulate(model, t_end=1, rtol=1e-11, atol=1e-13)
    comp = kidym.simulate(model, engine="compiled", t_end=1, rtol=1e-11, atol=1e-13)
    for name in ("q1", "q2", "q3", "q4", "q5", "λcoinX1", "λcoinY1", "λcoinZ1"):
        scale = max(1.0, np.abs(ref[name]).max())
        assert np.abs(comp[name] - ref[name]).max() <= 1e-7 * scale, name
    # the coupler's end is the rocker's end all along (the geometry, written out)
    a, b, c, d, h = (SPATIAL[k] for k in "abcdh")
    q1, q2, q3, q5 = comp["q1"], comp["q2"], comp["q3"], comp["q5"]
    gap = np.stack([a * np.cos(q1) + b * np.cos(q1 + q2) * np.cos(q3) - d,
                    a * np.sin(q1) + b * np.sin(q1 + q2) * np.cos(q3) - c * np.cos(q5),
                    -b * np.sin(q3) - h - c * np.sin(q5)])
    assert np.abs(gap).max() <= 1e-8
