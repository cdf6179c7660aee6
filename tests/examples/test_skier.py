"""The skier–snowboarder of seed 004 (sections 6–8), examples/skier, against oracles that
know nothing of kidym:

* SymPy ``KanesMethod`` with the ski's non-holonomic constraint (7.3) as a dependent
  speed and the controls as physical loads (:mod:`tests.oracles.skier`), the controls
  solved there from the five programmed constraints by the law (5.5): kidym's
  closed-loop right-hand side (both engines) and its controls at random states;
* the closed-form solution of ``ÿ = h y + k ẏ`` for a start off every constraint;
* the link's set tilt ``acos(lc/(L + l1))`` from the parameters, by hand;
* the seed's printed (7.7), (7.10), (7.11), against the reduced Kane equations: where
  they are right and where they are not;
* NumPy against compiled runs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.oracles.skier import COORDS, COORDS2, PARAMS, PARAMS2, closed_loop, skier_oracle
from tests.oracles.two_link_arm import deviation

HERE = Path(__file__).resolve().parents[2] / "examples" / "skier"
CONSTRAINTS = ("ftrack", "f81", "f82", "fleg", "fbody")
PERTURBED = {"phi0": 0.6, "phi1": 0.7, "psi1": 1.3, "xi11": 0.13, "xi12": 0.08}


@pytest.fixture(scope="module")
def equations() -> kidym.Equations:
    return kidym.derive(kidym.load(HERE / "skier.kdm"))


@pytest.fixture(scope="module")
def perturbed_runs(equations, kidym_cache):  # noqa: F811
    return {e: kidym.simulate(equations, engine=e, initial=PERTURBED, rtol=1e-10,
                              atol=1e-12, n_points=201) for e in ("numpy", "compiled")}


def _random_states(rng, n: int):
    for _ in range(n):
        q = {"x": rng.uniform(-3, 3), "y": rng.uniform(-1, 1), "phi0": rng.uniform(-0.6, 0.6),
             "phi1": rng.uniform(-1, 1), "psi1": rng.uniform(0.7, 1.4),
             "xi11": rng.uniform(0.05, 0.3), "xi12": rng.uniform(0.05, 0.3)}
        w = {n + "'t": rng.uniform(-1, 1) for n in COORDS[2:]}
        yield q, w, rng.uniform(1, 8)


def _compare_with_oracle(systems, q: dict, w: dict, v: float, coords, pv, *, n: int) -> None:
    """At one state (on the knife edge: ``ẋ = v cos φ0``, ``ẏ = v sin φ0``): the right-hand
    side of each system (``x, y, …, φ0't …, v``) and the compiled engine's controls
    equal KanesMethod + (5.5) solved in the oracle (``n`` links), to 1e-9."""
    state = {**q, **w, "v": v}
    qd = [v * np.cos(q["phi0"]), v * np.sin(q["phi0"])] + [w[c + "'t"] for c in coords[2:]]
    qdd, u = closed_loop([q[c] for c in coords], qd, pv, -100.0, -20.0, n=n)
    vdot = qdd[0] * np.cos(q["phi0"]) + qdd[1] * np.sin(q["phi0"])
    expected = np.concatenate([qd, qdd[2:], [vdot]])
    for system in systems:
        y = np.array([state[c] for c in system.state_names])
        p = system.parameter_vector()
        got = system.rhs(0.0, y, p)
        assert np.abs(got - expected).max() <= 1e-9 * np.abs(expected).max()
    u_kidym = systems[1].controls_at(np.zeros(1), y[None], p)[0]
    assert np.abs(u_kidym - u).max() <= 1e-9 * np.abs(u).max()


def test_closed_loop_equations_equal_kanes_method(equations, kidym_cache) -> None:  # noqa: F811
    """At random states (on the knife-edge constraint, off the programmed ones) kidym's
    accelerations with the controls solved, both engines, and its controls equal those of
    KanesMethod + the law (5.5) solved in the oracle."""
    systems = (NumpySystem.build(equations), CompiledSystem.build(equations))
    values = equations.model.parameter_values
    pv = [float(values[n]) for n in PARAMS]
    rng = np.random.default_rng(4)
    for q, w, v in _random_states(rng, 4):
        _compare_with_oracle(systems, q, w, v, COORDS, pv, n=1)


def test_seed_7_7_7_10_7_11_against_kanes_reduced_equations(equations) -> None:
    """The paper's (7.7)–(7.12) are the equations in ``ẋ, φ̇0, φ̇1, ψ̇1, ξ̇11, ξ̇12`` with
    ``ẏ = ẋ tan φ0`` eliminated — Kane's reduced equations. Their mass-matrix row of ``x``
    (7.7) is right in ``ẍ`` (``θ sec² φ0``), ``φ̈1``, ``ψ̈1``, but its ``ξ̈11`` coefficient
    has ``−(m1 + mG)(Sφ tan φ0 − Cφ)Cψ`` where ``(m1 + mG)(Sφ tan φ0 + Cφ)Cψ`` belongs
    (as (7.11) prints it), its ``ξ̈12`` coefficient likewise with ``mG``; and the weight
    terms of (7.10), (7.11) leave out the body ``mG``: ``g(η1 + ϑ1)Cψ`` and
    ``g(m1 + mG)Sψ``, not ``gη1Cψ`` and ``g m1 Sψ``."""
    *_, reduced = skier_oracle()
    values = dict(equations.model.parameter_values)
    values["al"] = 0.0                     # the paper's level plane for the weight terms
    pv = [float(values[n]) for n in PARAMS]
    m0, m1, mG, l1 = (values[n] for n in ("m0", "m1", "mG", "l1"))
    g = values["g"]
    rng = np.random.default_rng(7)
    for q, _w, _v in _random_states(rng, 3):
        qv = [q[n] for n in COORDS]
        M, F = reduced(qv, np.zeros(7), np.zeros(5), pv)
        f0, f1, s1, x11, x12 = q["phi0"], q["phi1"], q["psi1"], q["xi11"], q["xi12"]
        cf, sf, cs, ss, tg = np.cos(f1), np.sin(f1), np.cos(s1), np.sin(s1), np.tan(f0)
        eta, vth = m1 * (x11 + l1 / 2), mG * (x11 + l1 + x12)
        theta = m0 + m1 + mG
        assert M[0, 0] == pytest.approx(theta / np.cos(f0) ** 2, rel=1e-12)
        assert M[0, 2] == pytest.approx((eta + vth) * (cf * tg - sf) * cs, rel=1e-12)
        assert M[0, 3] == pytest.approx(-(eta + vth) * (sf * tg + cf) * ss, rel=1e-12)
        right = (m1 + mG) * (sf * tg + cf) * cs
        printed = -(m1 + mG) * (sf * tg - cf) * cs
        assert M[0, 4] == pytest.approx(right, rel=1e-12)
        assert M[4, 0] == pytest.approx(right, rel=1e-12)
        assert M[0, 4] - printed == pytest.approx(2 * (m1 + mG) * sf * tg * cs, rel=1e-9)
        assert abs(M[0, 4] - printed) > 1e-6 * abs(right)
        assert M[0, 5] == pytest.approx(mG * (sf * tg + cf) * cs, rel=1e-12)   # ξ̈12: the same
        # weight: the forcing at rest is minus the weight terms of the left-hand sides
        assert -F[3] == pytest.approx(g * (eta + vth) * cs, rel=1e-12)
        assert abs(-F[3] - g * eta * cs) > 0.1 * abs(F[3])
        assert -F[4] == pytest.approx(g * (m1 + mG) * ss, rel=1e-12)
        assert abs(-F[4] - g * m1 * ss) > 0.1 * abs(F[4])
        assert -F[5] == pytest.approx(g * mG * ss, rel=1e-12)              # (7.12) right
        # (7.8): the ski's heading is moved by its moment alone, I0 φ̈0 = M0
        assert np.all(M[1, [0, 2, 3, 4, 5]] == 0) and F[1] == 0


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_perturbed_start_decays_as_the_law_says(engine: str, perturbed_runs) -> None:
    r = perturbed_runs[engine]
    assert r.success
    for name in CONSTRAINTS:
        y0, z0 = r[name][0], r[name + "'t"][0]
        assert abs(y0) > 5e-3, name              # each constraint starts perturbed
        exact = deviation(-100.0, -20.0, y0, z0, r.t)
        assert np.abs(r[name] - exact).max() <= 1e-8, name


def test_the_link_stays_near_vertical(equations, perturbed_runs) -> None:
    """From the perturbed start (tilt 15.5°) the link's tilt from the normal to the slope
    never exceeds 16° and settles at the set ``acos(lc/(L + l1)) = 8.55°`` (1e-7 rad
    after 2 s); started on the constraints it stays there to 1e-9 rad for 10 s."""
    v = equations.model.parameter_values
    tilt_set = np.arccos(v["lc"] / (v["L"] + v["l1"]))
    r = perturbed_runs["compiled"]
    assert np.degrees(r["tilt"]).max() <= 16.0
    late = r.t >= 2.0
    assert np.abs(r["tilt"][late] - tilt_set).max() <= 1e-7
    nominal = kidym.simulate(equations, engine="compiled", rtol=1e-10, atol=1e-12,
                             n_points=101)
    assert np.abs(nominal["tilt"] - tilt_set).max() <= 1e-9


def test_numpy_and_compiled_agree(perturbed_runs) -> None:
    a, b = perturbed_runs["numpy"], perturbed_runs["compiled"]
    for name in ("x", "y", "v", "phi0", "phi1", "psi1", "xi11", "xi12"):
        assert np.abs(a[name] - b[name]).max() <= 1e-6, name
    for name in ("M0", "M1phi", "M1psi", "F1", "F2"):
        assert np.abs(a[name] - b[name]).max() <= 1e-6 * np.abs(b[name]).max(), name


def test_stabilisation_holds_a_first_order_scheme_on_the_track(equations) -> None:
    """The Fig. 7 analogue of examples/skier/figures.py: explicit Euler, 2 ms, 10 s from
    the model's start. With the default law the ski stays within 2 cm of the track
    ``y = A sin(kx)``; with ``h = k = 0`` (no stabilisation) it drifts over 0.5 m."""
    spec = importlib.util.spec_from_file_location("skier_figures", HERE / "figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    runs = figures.fig7_runs(equations)
    assert np.abs(runs["stabilised"][1]["ey"]).max() <= 0.02
    assert np.abs(runs["h = k = 0"][1]["ey"]).max() >= 0.5
    assert (np.abs(runs["stabilised"][1]["ftrack"]).max()
            <= 0.2 * np.abs(runs["h = k = 0"][1]["ftrack"]).max())


# --------------------------------------------------- the two-link model (skier2.kdm)
CONSTRAINTS2 = ("ftrack", "f81", "f82", "fleg", "fknee", "f81b", "f82b", "fhip", "fneck")
PERTURBED2 = {**PERTURBED, "phi2": 0.5, "psi2": 1.9, "xi21": 0.07, "xi22": 0.12}


@pytest.fixture(scope="module")
def equations2() -> kidym.Equations:
    return kidym.derive(kidym.load(HERE / "skier2.kdm"))


def test_two_links_deviations_decay_and_the_trunk_stays_near_vertical(
        equations2, kidym_cache) -> None:  # noqa: F811
    """11 coordinates, 9 controls from 9 constraints: from a start off all of them each
    deviation follows the closed form of (5.5) (1e-8), and the trunk's tilt from the
    normal, 18.9° back at the start, never exceeds it and settles at
    ``asin(lc2/(L2 + l2)) − π/2`` (−10.06°) within 1e-7 rad after 2 s."""
    v = equations2.model.parameter_values
    tilt2_set = np.arcsin(v["lc2"] / (v["L2"] + v["l2"])) - np.pi / 2
    r = kidym.simulate(equations2, engine="compiled", initial=PERTURBED2, rtol=1e-10,
                       atol=1e-12, n_points=201)
    assert r.success
    for name in CONSTRAINTS2:
        y0, z0 = r[name][0], r[name + "'t"][0]
        assert abs(y0) > 5e-3, name
        assert np.abs(r[name] - deviation(-100.0, -20.0, y0, z0, r.t)).max() <= 1e-8, name
    assert np.abs(r["tilt2"]).max() <= abs(r["tilt2"][0]) + 1e-12
    assert np.degrees(abs(r["tilt2"][0])) <= 19.0
    assert np.abs(r["tilt2"][r.t >= 2.0] - tilt2_set).max() <= 1e-7


def test_two_links_numpy_and_compiled_agree(equations2, kidym_cache) -> None:  # noqa: F811
    runs = [kidym.simulate(equations2, engine=e, initial=PERTURBED2, rtol=1e-10, atol=1e-12,
                           n_points=51, t_end=1.0) for e in ("numpy", "compiled")]
    for name in ("x", "y", "v", "phi0", "phi1", "psi1", "phi2", "psi2", "xi21", "xi22"):
        assert np.abs(runs[0][name] - runs[1][name]).max() <= 1e-7, name
    for name in ("M0", "M2phi", "M2psi", "F21", "F22"):
        scale = np.abs(runs[1][name]).max()
        assert np.abs(runs[0][name] - runs[1][name]).max() <= 1e-6 * scale, name


@pytest.mark.slow   # KanesMethod with 11 coordinates: about 20 s
def test_two_links_closed_loop_equals_kanes_method(equations2, kidym_cache) -> None:  # noqa: F811
    """The two-link model's accelerations (both engines) and its nine controls at random
    states against KanesMethod + (5.5) solved in the oracle."""
    systems = (NumpySystem.build(equations2), CompiledSystem.build(equations2))
    values = equations2.model.parameter_values
    pv = [float(values[n]) for n in PARAMS2]
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = {"x": rng.uniform(-3, 3), "y": rng.uniform(-1, 1), "phi0": rng.uniform(-0.6, 0.6),
             "phi1": rng.uniform(-1, 1), "psi1": rng.uniform(0.7, 1.4),
             "phi2": rng.uniform(-1, 1), "psi2": rng.uniform(1.7, 2.4),
             **{n: rng.uniform(0.05, 0.3) for n in ("xi11", "xi12", "xi21", "xi22")}}
        w = {n + "'t": rng.uniform(-1, 1) for n in COORDS2[2:]}
        v = rng.uniform(1, 8)
        _compare_with_oracle(systems, q, w, v, COORDS2, pv, n=2)
