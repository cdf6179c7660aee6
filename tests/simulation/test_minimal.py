"""The minimal form of closed loops by coordinate partitioning (kidym/simulation/minimal.py)
against the augmented route and SymPy's ``LagrangesMethod`` (tests/oracles/closed_loops.py).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import fsolve

import kidym
from kidym.errors import SimulationError
from kidym.simulation.minimal import Partitioning, minimal_accelerations
from kidym.simulation.simulate import NumpySystem
from tests.eom.test_constraints import FOUR_BAR, SLIDER, SLIDER_TEXT
from tests.oracles.closed_loops import LoopOracle, five_bar, four_bar, slider_crank, t

EXAMPLES = Path(__file__).parents[2] / "examples"
FOUR_BAR_FILE = EXAMPLES / "four_bar" / "four_bar.kdm"
FIVE_BAR_FILE = EXAMPLES / "parallel_five_bar" / "parallel_five_bar.kdm"
FIVE_BAR = dict(l1=0.25, l2=0.25, l3=0.3, l4=0.3, d=0.2, m1=0.5, m2=0.5, m3=0.4, m4=0.4,
                mp=0.3, g=9.81, T=0.1, W=2.0, b=0.02)
#: the five-bar in the vertical plane: gravity along -y acts on the motion
IN_PLANE = ("ГРАВИТАЦИЯ := 0, 0, -g;", "ГРАВИТАЦИЯ := 0, -g, 0;")


def consistent_states(oracle: LoopOracle, rng: np.random.Generator, count: int,
                      independent: list[int], guess: list[float], ranges,
                      time_dependent: bool) -> list[dict[str, float]]:
    """Random states on the oracle's own constraints (SciPy's ``fsolve``): the
    ``independent`` coordinates drawn from ``ranges``, the others solved from ``Φ = 0``
    near ``guess``, their rates from ``Φ̇ = 0``."""
    q = oracle.q
    n = len(q)
    dep = [j for j in range(n) if j not in independent]
    qd = [sp.diff(x, t) for x in q]
    phi = sp.Matrix(oracle.constraints).subs(oracle.params)
    plain = sp.symbols(f"z0:{n}")
    rep = dict(zip(q, plain))
    f_phi = sp.lambdify([plain, t], phi.xreplace(rep))
    f_J = sp.lambdify([plain, t], phi.jacobian(q).xreplace(rep))
    f_t = sp.lambdify([plain, t], phi.diff(t).subs({d: 0 for d in qd}).xreplace(rep))
    states: list[dict[str, float]] = []
    while len(states) < count:
        tt = float(rng.uniform(0, 3)) if time_dependent else 0.0
        z = np.zeros(n)
        z[independent] = [rng.uniform(*r) for r in ranges]

        def residual(x, z=z, tt=tt):
            w = z.copy()
            w[dep] = x
            return np.ravel(f_phi(w, tt))

        sol, _info, ok, _msg = fsolve(residual, guess, full_output=True)
        z[dep] = sol
        if ok != 1 or np.abs(np.ravel(f_phi(z, tt))).max() > 1e-12:
            continue
        J = np.array(f_J(z, tt), float)
        u = np.zeros(n)
        u[independent] = rng.uniform(-3, 3, len(independent))
        u[dep] = np.linalg.solve(J[:, dep], -np.ravel(f_t(z, tt)) - J[:, independent]
                                 @ u[independent])
        state = {nm: float(v) for nm, v in zip(oracle.coordinates, z)}
        state.update({f"{nm}'t": float(v) for nm, v in zip(oracle.coordinates, u)})
        state["t"] = tt
        states.append(state)
    return states


def _case(name: str):
    """(model, oracle, independent, guess, ranges, time-dependent) of each mechanism."""
    if name == "four_bar":
        return (kidym.load(FOUR_BAR_FILE), four_bar(FOUR_BAR), [0], [-0.4, 1.4],
                [(0, 2 * np.pi)], False)
    if name == "slider_crank":
        return (kidym.parse(SLIDER_TEXT), slider_crank(SLIDER), [0], [-0.2, 0.45],
                [(0, 2 * np.pi)], True)
    text = FIVE_BAR_FILE.read_text(encoding="utf-8")
    values = dict(FIVE_BAR)
    if name == "five_bar_vertical":
        text = text.replace(*IN_PLANE)
        assert IN_PLANE[1] in text
    else:
        values["g"] = 0.0   # gravity along -z: no force in the plane of the motion
    return (kidym.parse(text), five_bar(values), [0, 2], [-1.1, 1.1],
            [(1.7, 2.3), (0.8, 1.4)], True)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank", "five_bar",
                                  "five_bar_vertical"])
def test_accelerations_and_multipliers_of_every_partition(name: str) -> None:
    """At random consistent states, for every partition whose dependent block is
    regular: the minimal form's ẇ = R v̇ + s equals the augmented route's (1e-10) and
    LagrangesMethod's q̈ (1e-9); λ from the minimal form's ẇ (Gᵀλ = M ẇ − F) equals
    LagrangesMethod's λ (1e-9)."""
    model, oracle, independent, guess, ranges, moving = _case(name)
    system = NumpySystem.build(kidym.derive(model))
    p = system.parameter_vector()
    n, m = system.equations.n_q, system.equations.m
    rng = np.random.default_rng(11)
    checked = 0
    for state in consistent_states(oracle, rng, 3, independent, guess, ranges, moving):
        y = np.array([state[s] for s in system.state_names])
        tt = state["t"]
        M, F, block = system.constraint_block(tt, y, p)
        augmented, _lam = system._solve(tt, y, M, np.concatenate(
            [F, block.gamma, block.phi, block.c, block.G.ravel()]))
        qdd, lam_ref = oracle.solve(state)
        scale = max(1.0, np.abs(qdd).max())
        for dep in itertools.combinations(range(n), m):
            if np.linalg.cond(block.G[:, list(dep)]) > 1e6:
                continue
            wdot = minimal_accelerations(system, tt, y, p, dependent=dep)
            assert np.abs(wdot - augmented).max() <= 1e-10 * scale, (dep, wdot, augmented)
            assert np.abs(wdot - qdd).max() <= 1e-9 * scale, (dep, wdot, qdd)
            lam = np.linalg.lstsq(block.G.T, M @ wdot - F, rcond=None)[0]
            assert np.abs(lam - lam_ref).max() <= 1e-9 * max(1.0, np.abs(lam_ref).max())
            checked += 1
    assert checked >= 3 * (3 if name != "slider_crank" else 2)


def _agree(a, b, names, tol: float) -> None:
    for name in names:
        scale = max(1.0, np.abs(a[name]).max())
        assert np.abs(a[name] - b[name]).max() <= tol * scale, name


@pytest.mark.parametrize("name", ["four_bar", "slider_crank"])
def test_trajectories_of_both_routes_agree(name: str) -> None:
    """Tight tolerances: the minimal and the augmented route give the same motion and
    multipliers (1e-8); on the slider-crank the guide moves (a time-dependent
    constraint): its pin follows e(t) = A sin(W t) on the minimal route too."""
    model = kidym.load(FOUR_BAR_FILE) if name == "four_bar" else kidym.parse(SLIDER_TEXT)
    kw = dict(t_end=1.0, n_points=51, rtol=1e-12, atol=1e-14)
    aug = kidym.simulate(model, **kw)
    mini = kidym.simulate(model, formulation="minimal", **kw)
    drift = mini.stats["constraint_drift"]
    assert drift["formulation"] == "minimal" and drift["position"] <= 1e-13
    assert mini.stats["initial_adjusted"] == aug.stats["initial_adjusted"]
    _agree(mini, aug, [*aug.state_names, "λf1", "λf2"], 1e-8)
    if name == "slider_crank":
        r, l_ = SLIDER["r"], SLIDER["l"]
        pin = r * np.sin(mini["q1"]) + l_ * np.sin(mini["q1"] + mini["q2"])
        assert np.abs(pin - SLIDER["A"] * np.sin(SLIDER["W"] * mini.t)).max() <= 1e-12


def test_the_rocker_angle_toggles_and_the_run_repartitions() -> None:
    """The four-bar's rocker angle q3 as the independent coordinate: at the rocker's
    reversal crank and coupler are in line (sin q2 = 0), where q3 determines neither
    (the block of q1, q2 has determinant a b sin q2). The run re-partitions before it,
    goes on through the crank's full revolution, and stays on the augmented route's
    motion."""
    model = kidym.load(FOUR_BAR_FILE)
    kw = dict(t_end=1.0, n_points=51, rtol=1e-12, atol=1e-14)
    aug = kidym.simulate(model, **kw)
    mini = kidym.simulate(model, formulation=Partitioning(independent=("q3",)), **kw)
    assert aug["q1"][-1] - aug["q1"][0] > 2 * np.pi           # a full revolution …
    assert np.any(np.diff(np.sign(aug["q3't"])) != 0)         # … with a rocker reversal
    drift = mini.stats["constraint_drift"]
    parts = drift["partitions"]
    assert drift["repartitions"] >= 1 and parts[0]["independent"] == ["q3"]
    assert parts[1]["independent"] != ["q3"]
    # the switch comes as the block of q1, q2 degrades: crank and coupler near in line
    switch = parts[1]["t"]
    q2 = np.interp(switch, aug.t, aug["q2"])
    assert abs(np.sin(q2)) < 0.05
    _agree(mini, aug, [*aug.state_names, "λf1", "λf2"], 1e-8)


def test_the_five_bar_repartitions_at_its_parallel_singularity() -> None:
    """The example with its motor angles as the independent coordinates: where the
    distal links come into line (sin(q3 + q4 − q1 − q2) = 0) the motor angles do not
    determine the tool point; the run switches away from them to a well-conditioned
    partition, goes through the singularity on it, and agrees with the augmented route.

    Which partition the column-pivoted QR picks there is a near-tie (q1, q4 on one
    processor, q1, q2 on another: the pivots differ in the last digits), so the test
    asserts what matters — that the choice is well conditioned and the run continues
    correctly — not which coordinates won."""
    model = kidym.load(FIVE_BAR_FILE)
    kw = dict(t_end=3.2, n_points=161, rtol=1e-11, atol=1e-13)
    aug = kidym.simulate(model, **kw)
    limit = Partitioning(independent=("q1", "q3")).condition
    mini = kidym.simulate(model, formulation=Partitioning(independent=("q1", "q3")), **kw)
    parts = mini.stats["constraint_drift"]["partitions"]
    assert parts[0]["independent"] == ["q1", "q3"] and parts[0]["t"] == 0.0
    assert len(parts) >= 2 and parts[1]["independent"] != ["q1", "q3"]
    # every partition chosen by pivoting is well conditioned: a tenth of the limit that
    # makes the run re-partition (the motor angles' block grows without bound here)
    assert all(p["condition"] < limit / 10 for p in parts[1:])
    angle = aug["q3"] + aug["q4"] - aug["q1"] - aug["q2"]
    end = parts[2]["t"] if len(parts) > 2 else aug.t[-1] + 1
    between = (aug.t > parts[1]["t"]) & (aug.t < end)
    # it switches as the links near the line, and the motion goes through it on the
    # partition it switched to
    assert np.abs(np.sin(angle[aug.t < parts[1]["t"]])).min() > 0.02
    assert np.abs(np.sin(angle[between])).min() < 0.01
    # the continuation is right: both routes agree (rtol 1e-11; 1e-7 of each value's
    # scale is the tolerance amplified through the near-singular stretch, with margin)
    _agree(mini, aug, [*aug.state_names, "xE", "yE", "λf1", "λf2"], 1e-7)


def test_pivoting_chooses_a_well_conditioned_partition_and_the_cli_reports_it(
        tmp_path, capsys) -> None:
    from kidym.cli import main

    out = tmp_path / "out"
    assert main(["run", str(FOUR_BAR_FILE), "--formulation", "minimal", "--independent",
                 "q3", "--t-end", "1", "--no-plots", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "minimal form: independent q3, from t = " in text
    assert "constraint drift (minimal form): max |Φ| = " in text
    header = (out / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "λf1" in header and "q2't" in header
    assert main(["run", str(FOUR_BAR_FILE), "--independent", "q3", "--no-plots",
                 "--out", str(out)]) != 0
    assert "add --formulation minimal" in capsys.readouterr().err


@pytest.mark.parametrize(("change", "message"), [
    (dict(engine="compiled"), "runs in the NumPy engine only"),
    (dict(constraints="baumgarte"), "holds Φ = 0 and Φ't = 0"),
    (dict(formulation="reduced"),
     r"formulation must be one of \('augmented', 'minimal', 'ali3'\)"),
    (dict(formulation=Partitioning(independent=("q9",))), "q9 are not coordinates"),
    (dict(formulation=Partitioning(independent=("q1", "q3"))), "has 1 degree of freedom"),
])
def test_what_the_minimal_form_refuses(change: dict, message: str) -> None:
    model = kidym.load(FOUR_BAR_FILE)
    options = {"formulation": "minimal", "t_end": 0.1, **change}
    with pytest.raises(ValueError, match=message):
        kidym.simulate(model, **options)


def test_events_and_models_it_cannot_partition_are_errors() -> None:
    from kidym.simulation.events import Event
    from tests.eom.test_constraints import SLEIGH_IMPLICIT

    with pytest.raises(ValueError, match="does not locate events"):
        kidym.simulate(kidym.load(FOUR_BAR_FILE), formulation="minimal", t_end=0.1,
                       events=[Event("q1 - 2*pi", name="turn")])
    with pytest.raises(ValueError, match="h constrains the velocities"):
        kidym.simulate(kidym.parse(SLEIGH_IMPLICIT), formulation="minimal", t_end=0.1)
    with pytest.raises(ValueError, match="needs a degree of freedom"):
        kidym.simulate(kidym.load(EXAMPLES / "slider_crank" / "slider_crank.kdm"),
                       formulation="minimal", t_end=0.1)
    with pytest.raises(ValueError, match="has none"):
        kidym.simulate(kidym.load(EXAMPLES / "double_pendulum" / "double_pendulum.kdm"),
                       formulation="minimal", t_end=0.1)
    # the rocker angle cannot be independent where crank and coupler are in line
    text = FOUR_BAR_FILE.read_text(encoding="utf-8").replace(
        "q1(1.0), q2(-0.5), q3(1.5), q1't(6)", "q1(0.9), q2(0), q3(1.5), q2't(0), q1't(6)"
    ).replace("СВОБОДНЫЕ := q2, q3;", "СВОБОДНЫЕ := q1, q2, q3;")   # q3 kept: q1 moves
    with pytest.raises(ValueError, match="cannot be the independent coordinates"):
        kidym.simulate(kidym.parse(text), t_end=0.1,
                       formulation=Partitioning(independent=("q3",)))


def test_auto_engine_says_it_chose_numpy_for_the_minimal_form() -> None:
    r = kidym.simulate(kidym.load(FOUR_BAR_FILE), engine="auto", formulation="minimal",
                       t_end=0.05)
    assert r.stats["engine_choice"].startswith("auto → numpy: formulation='minimal'")


def test_a_formula_fault_in_the_minimal_form_is_located(tmp_path) -> None:
    """A formula undefined on the way (sqrt of a negative) stops the minimal form with a
    SimulationError naming time and state, and the outputs before it are kept."""
    text = FOUR_BAR_FILE.read_text(encoding="utf-8").replace(
        "ГРАВИТАЦИЯ := 0, -g, 0;", "ГРАВИТАЦИЯ := 0, -g, 0;\nPk.q1 = sqrt(1.8 - q1);")
    with pytest.raises(SimulationError) as info:
        kidym.simulate(kidym.parse(text), formulation="minimal", t_end=1.0)
    err = info.value
    assert "cannot be evaluated" in str(err) and err.time > 0
    assert err.result is not None and err.result.t.size > 1 and not err.result.success
