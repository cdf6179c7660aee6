"""Virtual potential constraints (seed 001) against the exact constrained motions of the
paper's tests (examples/virtual_constraints/exact.py: closed forms, an event-by-event
billiard), in both engines; the error must shrink as α grows."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.simulation.simulate import NumpySystem

FOLDER = Path(__file__).parents[2] / "examples" / "virtual_constraints"
_spec = importlib.util.spec_from_file_location("seed001_exact", FOLDER / "exact.py")
exact = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exact)


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


def load(name: str, approximation: str | None = None) -> kidym.Model:
    text = (FOLDER / f"{name}.kdm").read_text(encoding="utf-8")
    if approximation:
        text = text.replace("(alpha)", f"(alpha, {approximation})")
    return kidym.parse(text, filename=f"{name}.kdm")


def error(eq: kidym.Equations, name: str, alpha: float, *, engine: str = "numpy",
          t_end: float | None = None, walls: bool = True, **overrides
          ) -> tuple[float, kidym.Result]:
    """``max_t |r − r_exact|`` of a run at ``alpha`` (other parameters overridden too);
    ``walls=False``: no exponential wall is hit, the step need not resolve one."""
    parameters = {**overrides, "alpha": alpha}
    # the step resolves the vibration (~α^(−1/2)) and the exponential walls (~1/α), as
    # in examples/virtual_constraints/convergence.py
    step = 0.05 / np.sqrt(alpha)
    if walls and any(v.approximation == "exponential" for v in eq.model.virtual_constraints):
        step = min(step, 0.2 / alpha)
    r = kidym.simulate(eq, engine=engine, parameters=parameters, rtol=1e-10, atol=1e-12,
                       n_points=401, max_step=step, t_end=t_end)
    ref = exact.EXACT[name](r.t, {**eq.model.parameter_values, **parameters})
    return float(np.sqrt(sum((r[c] - e) ** 2 for c, e in zip("xyz", ref))).max()), r


def test_polynomial_potential_is_the_spring_it_stands_for() -> None:
    """``V = π α f²`` (eq. (12)) is an elastic element of stiffness ``2π α`` on ``f``: the
    same ``F`` and energy as ``Cf.f = 2*pi*alpha``, formed by another route."""
    text = """m = 1; R = 1; alpha = 300; W = 2;
    Jm.x.y = m;
    f = (x - 0.1*sin(W*t))^2 + y^2 - R^2;
    {line}"""
    vp = kidym.derive(kidym.parse(text.format(line="VIRTUAL CONSTRAINTS := f(alpha);")))
    spring = kidym.derive(kidym.parse(text.format(line="Cf.f = 2*pi*alpha;")))
    a, b = NumpySystem.build(vp), NumpySystem.build(spring)
    rng = np.random.default_rng(1)
    for _ in range(5):
        t, y = float(rng.uniform(0, 3)), rng.normal(size=4)
        assert np.allclose(a.rhs(t, y, a.parameter_vector()),
                           b.rhs(t, y, b.parameter_vector()), rtol=1e-13, atol=1e-12)
    assert kidym.derive(vp.model).energy.equals(spring.energy)


def test_circle_error_is_the_lag_of_the_stretched_rod() -> None:
    """Test 1: the centrifugal force stretches the rod by ``δr = m v0²/(8π α R³)``, which
    slows the turn; after ``T`` the mass lags the exact circle by ``2 δr v0 T/R²``."""
    eq = kidym.derive(load("test1_circle"))
    p = eq.model.parameter_values
    errors = []
    for alpha in (1e2, 1e3):
        err, r = error(eq, "test1_circle", alpha)
        dr = p["m"] * p["v0"] ** 2 / (8 * np.pi * alpha * p["R"] ** 3)
        lag = 2 * dr * p["v0"] * r.t[-1] / p["R"] ** 2
        assert err == pytest.approx(lag, rel=0.02)
        errors.append(err)
    assert errors[1] < errors[0] / 9


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_cycloid_converges_in_both_engines(engine: str, cache) -> None:
    """Test 3 (the hinge moves, a time-dependent model), rod at 90°: the exact cycloid;
    the error falls as 1/α, and the engines agree."""
    eq = kidym.derive(load("test3_cycloid"))
    errors, runs = [], []
    for alpha in (1e2, 1e3):
        err, r = error(eq, "test3_cycloid", alpha, engine=engine, t_end=6.0, th0=np.pi / 2)
        errors.append(err)
        runs.append(r)
    assert errors[0] < 0.03 and errors[1] < errors[0] / 8
    if engine == "compiled":
        _err, ref = error(eq, "test3_cycloid", 1e3, t_end=6.0, th0=np.pi / 2)
        assert np.abs(runs[1]["x"] - ref["x"]).max() < 1e-7


def test_exponential_approximation_converges() -> None:
    """Test 4 with eq. (13): the pendulum of growing period, error falling as 1/α."""
    eq = kidym.derive(load("test4_sinusoid", "ЭКСПОНЕНТА"))
    assert {v.approximation for v in eq.model.virtual_constraints} == {"exponential"}
    e1, _ = error(eq, "test4_sinusoid", 1e2, t_end=6.0, walls=False)
    e2, _ = error(eq, "test4_sinusoid", 1e3, t_end=6.0, walls=False)
    assert e1 < 1e-2 and e2 < e1 / 8


@pytest.mark.parametrize(("approximation", "engine"), [("ПОЛИНОМ", "numpy"),
                                                       ("ЭКСПОНЕНТА", "compiled")])
def test_spherical_cavity_reflects_elastically(approximation: str, engine: str,
                                               cache) -> None:
    """Test 5: a bounding surface; the mirror reflections of the exact billiard are the
    limit (error ~ α^(−1/2) for the polynomial wall, faster for the exponential one),
    and the energy with ``V`` in it is conserved through the impacts."""
    eq = kidym.derive(load("test5_sphere", approximation))
    errors = []
    for alpha in (1e3, 1e4):
        err, r = error(eq, "test5_sphere", alpha, engine=engine, t_end=1.0)
        errors.append(err)
        balance = r.stats["energy_balance"]
        assert balance["max_abs"] < 1e-7 * balance["scale"]
    assert errors[1] < errors[0] / 2.5
    # the wall pushed (the exact path leaves the sphere without it)
    assert r["s"].min() > -0.05


def test_walls_as_stiff_as_the_rod_do_not_converge_to_the_rigid_impact(cache) -> None:
    """Test 6: with the planes as stiff as the rod the impacts feed the rod's vibration
    and the error does not shrink; with the planes 100 times softer it does."""
    eq = kidym.derive(load("test6_planes"))
    run = {"engine": "compiled", "t_end": 8.0}
    soft = [error(eq, "test6_planes", a, **run)[0] for a in (1e3, 1e4)]
    same = [error(eq, "test6_planes", a, kappa=1.0, **run)[0] for a in (1e3, 1e4)]
    assert soft[1] < soft[0] / 2
    assert same[1] > 0.5 * same[0] and same[1] > 5 * soft[1]


def test_exponential_wall_is_finite_deep_on_the_allowed_side(cache) -> None:
    """Eq. (7) is evaluated as ``h(f⁻)``: ``exp(α² f²)`` is never formed where the wall
    is switched off (there it would overflow: ``0·inf``)."""
    from kidym.simulation.compiled import CompiledSystem

    eq = kidym.derive(load("test5_sphere", "ЭКСПОНЕНТА"))
    y = np.array([0.1, 0.0, 0.0, 1.0, 0.0, 0.0])
    for system in (NumpySystem.build(eq), CompiledSystem.build(eq)):
        p = system.parameter_vector({"alpha": 1e6})
        assert np.all(np.isfinite(system.rhs(0.0, y, p)))


def test_a_run_that_jumps_into_a_wall_says_to_limit_the_step() -> None:
    """Test 5 at the paper's α = 50000 without a step limit: a trial step lands deep in
    the wall, the potential overflows; the error says how to limit the step."""
    eq = kidym.derive(load("test5_sphere"))
    with pytest.raises(kidym.SimulationError, match=r"virtual potentials .* are stiff.*"
                                                    r"max_step"):
        kidym.simulate(eq, t_end=2.0, n_points=3)
