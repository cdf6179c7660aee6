"""Compiled engine vs the NumPy reference engine, on every dynamics example.

Every ``examples/**/*.kdm`` whose calculation is dynamics (and that derives) is
picked up: the right-hand sides agree to 1e-12 (relative) at random states, and
trajectories to 1e-8. The NumPy engine is an independent route from the same
equations (generated Python, LAPACK LU solve, SciPy integrator).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.inputs import bind_inputs, bound_system
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import EXAMPLES

# Every dynamics example (a kinematics file has no equations of motion); each must
# load and derive — a failure there is a failure of this test, not a skip.
EXAMPLE_FILES = sorted(p for p in EXAMPLES.rglob("*.kdm")
                       if kidym.load(p).calculation in (None, "DYNAMICS"))


@cache
def _systems(path: str):
    eq = kidym.derive(kidym.load(path))
    return eq, NumpySystem.build(eq), CompiledSystem.build(eq)


def _drive(t: float, state: dict) -> float:
    """An external input of a driven example (``ВХОДЫ``): a function of time and state."""
    return 0.5 * np.sin(2 * t) - 0.3 * next(iter(state.values()))


def _inputs(eq) -> dict:
    return {u: _drive for u in eq.model.inputs}


def _bound(eq, system):
    """``system`` with a driven example's inputs bound to :func:`_drive` (as a run has)."""
    return bound_system(system, bind_inputs(eq.model, system.state_names, _inputs(eq),
                                            eq.model.t_start, eq.model.t_end))


def _id(path):
    return str(path.relative_to(EXAMPLES))


def test_examples_are_found():
    names = {p.stem for p in EXAMPLE_FILES}
    assert {"double_pendulum", "wing_nut", "chain3", "biped", "ball", "rolling_disc",
            "chaplygin_sleigh", "free_body"} <= names


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_id)
def test_right_hand_side_agrees_with_numpy(path):
    eq, ns, cs = _systems(str(path))
    with _bound(eq, ns) as ns, _bound(eq, cs) as cs:
        _agree(ns, cs)


def _agree(ns, cs) -> None:
    p = ns.parameter_vector()
    rng = np.random.default_rng(5)
    for _ in range(5):
        y = rng.uniform(-1.0, 1.0, len(ns.state_names))
        t = float(rng.uniform(0, 2))
        q1, M1, F1 = cs.evaluate(t, y, p)
        q2, M2, F2, out2 = ns.evaluate(t, y, p)
        for a, b in ((q1, q2), (M1, M2), (F1, F2)):
            b = np.asarray(b, float)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
        ydot = ns.rhs(t, y, p)
        np.testing.assert_allclose(cs.rhs(t, y, p), ydot, rtol=1e-12,
                                   atol=1e-12 * np.abs(ydot).max())
        out1 = cs.outputs_at(np.array([t]), y[None, :], p)[0]
        out2 = np.asarray(out2, float)
        # (a power that is 0 up to rounding sums terms of the size of the largest output)
        np.testing.assert_allclose(out1, out2, rtol=1e-12,
                                   atol=1e-12 * max(1.0, np.abs(out2).max()))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_id)
def test_trajectory_agrees_with_numpy(path):
    eq, ns, cs = _systems(str(path))
    # half a second, or the model's own span where it is shorter (Andrews' squeezer
    # turns its crank 250 times in 0.5 s; its span is 0.03 s)
    t_end = min(eq.model.t_start + 0.5, eq.model.t_end)
    kw = dict(t_end=t_end, rtol=1e-12, atol=1e-12, n_points=11, inputs=_inputs(eq))
    ref = kidym.simulate(ns, **kw)
    for method in ("ERK8", "BDF"):
        r = kidym.simulate(cs, method=method, **kw)
        assert r.success and r.stats["engine"] == "compiled"
        tol = 1e-8 if method == "ERK8" else 1e-6   # BDF: order <= 5, a looser fit
        np.testing.assert_allclose(r.y, ref.y, rtol=tol, atol=tol)
        np.testing.assert_allclose(r["energy"], ref["energy"], rtol=tol, atol=tol)
        if method == "ERK8":   # every step's stages were recorded as expected
            assert r.stats["output_mode"] == "extension"
            assert r.stats["extension_fallbacks"] == 0


def test_singular_mass_matrix_is_named_with_time_and_state():
    text = "m = 1; Spin | Rz(phi) | m, 0, 0, 0;"
    with pytest.raises(kidym.SimulationError,
                       match=r"mass matrix is singular: at this state no mass moves "
                             r"with the speed phi't at t = 0") as e:
        kidym.simulate(kidym.parse(text), t_end=1, engine="compiled")
    assert "phi" in e.value.state and "try:" in str(e.value)


def test_non_finite_rhs_is_reported_with_the_state_where_it_happened():
    text = "m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = 1/(1 - x);"
    model = kidym.parse(text)
    with pytest.raises(kidym.SimulationError, match=r"not finite .* at t = 0\n"):
        kidym.simulate(model, t_end=5, initial={"x": 1.0}, engine="compiled")
    # it blows up on its way to x = 1: the failure is named later, near x = 1
    with pytest.raises(kidym.SimulationError) as e:
        kidym.simulate(model, t_end=5, initial={"x": 0.0}, engine="compiled")
    assert e.value.time > 0 and e.value.state["x"] > 0.9
    r = kidym.simulate(model, t_end=5, initial={"x": 1.0}, engine="compiled",
                       raise_on_failure=False)
    assert not r.success and r.status == -1


def test_max_step_is_honoured():
    text = "m = 1; k = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -k*x;"
    model = kidym.parse(text)
    free = kidym.simulate(model, t_end=10, initial={"x": 1}, engine="compiled", n_points=2)
    capped = kidym.simulate(model, t_end=10, initial={"x": 1}, engine="compiled",
                            n_points=2, max_step=0.01)
    assert capped.stats["nsteps"] >= 1000 > free.stats["nsteps"]
    assert capped["x"][-1] == pytest.approx(np.cos(10.0), abs=1e-8)


def test_auto_says_what_it_chose():
    text = "m = 1; k = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -k*x;"
    r = kidym.simulate(kidym.parse(text), t_end=1e-3, initial={"x": 1}, engine="auto")
    assert r.stats["engine_choice"].startswith("auto → ")
    assert r.stats["engine"] in ("numpy", "compiled")


SPRING = "m = 1; k = 4; Block | Sx(x) | m, 0, 0, 0; Pf.x = -k*x;"


def test_erk8_converges_and_matches_scipy_accuracy_at_every_output():
    # x'' = -4 x from x = 1 at rest: x = cos 2t. ERK8 is DOP853 run by ARKODE with
    # the tolerance mapped (rtol^0.8): its error over *all* outputs must fall with
    # rtol and stay near SciPy DOP853's at the same rtol (the engines agree).
    eq = kidym.derive(kidym.parse(SPRING))
    cs, ns = CompiledSystem.build(eq), NumpySystem.build(eq)
    times = np.linspace(0.0, 20.0, 6)  # outputs sparse enough not to bound the steps
    exact = np.cos(2 * times)
    errors = []
    for rtol in (1e-6, 1e-8, 1e-10):
        kw = dict(t_end=20.0, t_eval=times, initial={"x": 1.0}, rtol=rtol, atol=rtol * 1e-3)
        err_c = np.abs(kidym.simulate(cs, method="ERK8", **kw)["x"] - exact).max()
        err_s = np.abs(kidym.simulate(ns, method="DOP853", **kw)["x"] - exact).max()
        assert err_c < 10 * err_s + 1e-13, (rtol, err_c, err_s)
        errors.append(err_c)
    # the error follows rtol (100x tighter: 23x and 124x smaller when written). A table
    # that falls to low order, as DOP853's 12 stages alone do under ARKODE, fails the
    # comparison with SciPy above (9e-5 against 3e-6 at rtol 1e-6).
    assert errors[1] < errors[0] / 10 and errors[2] < errors[1] / 30, errors


LARGE_SWING = ("m = 1; l = 1; g = 9.81; Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;"
               "GRAVITY := g, 0, 0;")


@pytest.mark.parametrize("rtol", [1e-10, 1e-12])
def test_default_method_delivers_the_requested_tolerance(rtol):
    """A pendulum released at 2 rad, 20 s (eight swings): the closed form by Jacobi's sn.

    ``phi(t) = 2 asin(k sn(K - ω t | k²))``, ``k = sin 1``. The default compiled method
    must be accurate to within 100 × rtol × amplitude; with ARKODE given rtol^(2/3)
    (the old mapping) ERK8 was 1250 × off at rtol 1e-12 (2.5e-9; SciPy's DOP853 6e-11).
    """
    from scipy.special import ellipj, ellipk

    phi0, omega = 2.0, np.sqrt(9.81 * 0.5 / (1 / 3))
    k = np.sin(phi0 / 2)
    times = np.linspace(0.0, 20.0, 101)
    exact = 2 * np.arcsin(k * ellipj(ellipk(k * k) - omega * times, k * k)[0])
    cs = CompiledSystem.build(kidym.derive(kidym.parse(LARGE_SWING)))
    r = kidym.simulate(cs, t_end=20.0, t_eval=times, initial={"phi": phi0}, rtol=rtol,
                       atol=rtol * 1e-2)
    assert r.stats["method"] == "ERK8"                 # the default
    err = np.abs(r["phi"] - exact).max()
    assert err < 100 * rtol * phi0, err


def test_output_modes_against_the_closed_form():
    # 801 outputs in 20 s, denser than ERK8's natural step on x'' = -4x (x = cos 2t).
    # DOP853's continuous extension (order 7) keeps the accuracy of the steps without
    # shortening them; ending the steps on the outputs does so at the cost of more
    # steps; ARKODE's Hermite interpolant (degree <= 5) between large steps does not.
    eq = kidym.derive(kidym.parse(SPRING))
    cs, ns = CompiledSystem.build(eq), NumpySystem.build(eq)
    times = np.linspace(0.0, 20.0, 801)
    exact = np.cos(2 * times)
    p = cs.parameter_vector()
    err, nfev = {}, {}
    for mode in ("extension", "step", "hermite"):
        raw = cs.integrate(np.array([1.0, 0.0]), p, times, t0=0.0, rtol=1e-9, atol=1e-12,
                           output_mode=mode)
        assert raw["status"] == 0 and raw["extension_fallbacks"] == 0
        err[mode] = np.abs(raw["y"][:, 0] - exact).max()
        nfev[mode] = raw["nfev"]
    assert err["step"] < 1e-8 and err["step"] < err["hermite"] / 10, err
    assert err["extension"] < 1e-8 and err["extension"] < err["hermite"] / 10, err
    assert nfev["extension"] < nfev["step"] / 1.5, nfev
    # SciPy's DOP853 with its own dense output (t_eval) at the same rtol: the same
    # extension formula run by an independent integrator gives a comparable error
    kw = dict(t_end=20.0, t_eval=times, initial={"x": 1.0}, rtol=1e-9, atol=1e-12)
    err_s = np.abs(kidym.simulate(ns, method="DOP853", **kw)["x"] - exact).max()
    assert err["extension"] < 10 * err_s, (err, err_s)
    with pytest.raises(ValueError, match="no continuous extension"):
        cs.integrate(np.array([1.0, 0.0]), p, times, t0=0.0, method="ERK5",
                     output_mode="extension")


def test_mass_matrix_blocks_are_solved_apart():
    from kidym.codegen.mass_c import mass_matrix_blocks

    # the biped's legs hang from a fixed pelvis: two independent 6x6 blocks
    biped = kidym.derive(kidym.load(EXAMPLES / "biped" / "biped.kdm"))
    assert [len(b) for b in mass_matrix_blocks(biped)] == [6, 6]
    chain = kidym.derive(kidym.load(EXAMPLES / "double_pendulum" / "double_pendulum.kdm"))
    assert mass_matrix_blocks(chain) == [[0, 1]]
    # the block solve gives NumPy's solution of the whole M (independent check)
    cs = CompiledSystem.build(biped)
    p = cs.parameter_vector()
    y = np.random.default_rng(3).normal(size=cs.n_y)
    _, M, F = cs.evaluate(0.0, y, p)
    np.testing.assert_allclose(cs.rhs(0.0, y, p)[12:], np.linalg.solve(M, F), rtol=1e-10,
                               atol=1e-12)
    # a diagonal M (every block 1x1: here the 2-link chain, whose joint axes x, y
    # are orthogonal through both centres) is solved entry by entry, -Werror clean
    from make_chain import chain_text

    chain2 = kidym.derive(kidym.parse(chain_text(2)))
    assert mass_matrix_blocks(chain2) == [[0], [1]]
    cs = CompiledSystem.build(chain2)
    p = cs.parameter_vector()
    for y in np.random.default_rng(4).normal(size=(3, cs.n_y)):
        _, M, F = cs.evaluate(0.0, y, p)
        assert M[0, 1] == 0.0
        np.testing.assert_allclose(cs.rhs(0.0, y, p)[2:], np.linalg.solve(M, F),
                                   rtol=1e-12, atol=1e-14)
    # a singular block is reported even when the other block is regular
    text = "m = 1; Spin | Rz(phi) | m, 0, 0, 0; Slider | Sx(x) | m, 0, 0, 0;"
    with pytest.raises(kidym.SimulationError, match="mass matrix is singular"):
        kidym.simulate(kidym.parse(text), t_end=1, engine="compiled")


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_id)
def test_compile_floor_is_below_the_estimate(path):
    # engine="auto" keeps a short run in NumPy without generating C when the NumPy run
    # is below compile_floor (from the size of the generated Python): that must be a
    # floor of the estimate from the C itself (the least C: no events, no Jacobian)
    from kidym.simulation.compiled import C_PER_PYTHON_BYTE, compile_estimate, compile_floor

    _, ns, cs = _systems(str(path))
    python_bytes = len(ns.source.encode("utf-8"))
    assert sum(len(x.encode("utf-8")) for x in cs.code.sources) >= \
        C_PER_PYTHON_BYTE * python_bytes
    assert compile_floor(python_bytes) <= compile_estimate(cs.code)
