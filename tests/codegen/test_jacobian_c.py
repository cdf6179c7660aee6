"""The compiled engine's analytic Jacobian (kidym/codegen/jacobian_c.py): equal to the
NumPy engine's (kidym.simulation.jacobian) and to central differences of the compiled
right-hand side at random states, on holonomic, constrained, non-holonomic, quaternion
and time-dependent models; CVODE BDF with it against BDF with difference quotients;
the stiffness warning of the explicit compiled methods."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.eom.constraints import Stabilization
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.constrained import consistent_initial
from kidym.simulation.jacobian import JacobianFunction
from kidym.simulation.simulate import NumpySystem
from tests.simulation.test_jacobian import SLIDER, STIFF

ROOT = Path(__file__).parents[2]

#: quaternion, velocity constraints from the rolling contact (augmented form), a
#: holonomic contact constraint and a moment that depends on time
ROLLING_BALL = """
m = 1; R = 0.1; g = 9.81; al = 0.3; W = 2;
Ball | Sx(x), Sy(y), Sz(z), Q(l0, l1, l2, l3) | m(m), Jx(2/5*m*R^2), Jy(2/5*m*R^2), Jz(2/5*m*R^2);
КАЧЕНИЕ := Ball(шар(R), плоскость(0));
ГРАВИТАЦИЯ := g*sin(al), 0, -g*cos(al);
Pm.ωZBall = 0.01*sin(W*t);
НАЧАЛЬНЫЕ УСЛОВИЯ := z(0.1), l0(1), y't(0.5);
ВРЕМЯ := t(0, 1);
"""

#: A chain of n masses joined by stiff damped springs (a stiff ODE of 2n states).
SPRING_CHAIN = """
m = 1; k = 1e5; d = 50; n = {n};
{bodies}
{elements}
Pf.x1 = sin(5*t);
НАЧАЛЬНЫЕ УСЛОВИЯ := x1(0.01);
ВРЕМЯ := t(0, 1);
"""


def spring_chain(n: int) -> str:
    bodies = "\n".join(f"B{i} | Sx(x{i}) | m(m), Jx(0), Jy(0), Jz(0);" for i in range(1, n + 1))
    lines = ["C1.x1 = k; D1.x1 = d;"]
    for i in range(2, n + 1):
        lines.append(f"e{i} = x{i} - x{i - 1}; C{i}.e{i} = k; D{i}.e{i} = d;")
    return SPRING_CHAIN.format(n=n, bodies=bodies, elements="\n".join(lines))


MODELS = {
    "double pendulum": "examples/double_pendulum/double_pendulum.kdm",
    "four-bar (holonomic constraints)": "examples/four_bar/four_bar.kdm",
    "ball (pseudo-velocities)": "examples/ball/ball.kdm",
    "rolling ball (velocity constraints, quaternion, time)": ROLLING_BALL,
    "free body (quaternion)": "examples/free_body/free_body.kdm",
    "slider-crank (time-dependent constraint)": SLIDER,
}


@functools.cache
def systems(key: str) -> tuple:
    source = MODELS[key]
    model = kidym.parse(source) if "|" in source else kidym.load(ROOT / source)
    eq = kidym.derive(model)
    return (model, eq, CompiledSystem.build(eq, jacobian=True), NumpySystem.build(eq),
            JacobianFunction.build(eq))


def central(f, y: np.ndarray, h0: float = 1e-5) -> np.ndarray:
    """Central differences, Richardson-extrapolated (error O(h⁴))."""
    def diff(h: float) -> np.ndarray:
        J = np.empty((y.size, y.size))
        for k in range(y.size):
            e = np.zeros(y.size)
            e[k] = h * max(1.0, abs(y[k]))
            J[:, k] = (f(y + e) - f(y - e)) / (2 * e[k])
        return J
    return (4 * diff(h0 / 2) - diff(h0)) / 3


def random_state(model, eq, ns, p, rng, t: float) -> np.ndarray:
    y = np.array([model.initial.get(n, 0.0) for n in ns.state_names]) + rng.normal(
        scale=0.2, size=len(ns.state_names))
    if eq.constraints is not None:
        y, _ = consistent_initial(ns, t, y, p, set(), 1e-13)
        y = y + rng.normal(scale=1e-3, size=y.size)   # off the constraints too
    return y


@pytest.mark.parametrize("stab", [None, Stabilization("baumgarte", 5.0, 7.0)],
                         ids=["plain", "baumgarte"])
@pytest.mark.parametrize("key", list(MODELS))
def test_the_c_jacobian_equals_numpy_and_central_differences(key: str, stab) -> None:
    model, eq, cs, ns, jf = systems(key)
    if stab is not None and eq.constraints is None:
        pytest.skip("Baumgarte terms need constraints")
    p = ns.parameter_vector()
    cs.set_stabilization(stab or Stabilization())
    rng = np.random.default_rng(7)
    for t in (0.3, 1.7):
        y = random_state(model, eq, ns, p, rng, t)
        J = cs.jacobian(t, y, p, stab)
        scale = max(1.0, np.abs(J).max())
        ref = jf(t, y, p, stab)
        assert np.abs(J - ref).max() <= 1e-8 * scale
        fd = central(lambda v, t=t: cs.rhs(t, v, p), y)
        assert np.abs(J - fd).max() <= 1e-8 * scale


def test_a_library_without_the_jacobian_says_so() -> None:
    eq = kidym.derive(kidym.parse(STIFF))
    cs = CompiledSystem.build(eq)
    assert not cs.has_jacobian
    with pytest.raises(ValueError, match="jacobian=True"):
        cs.jacobian(0.0, np.zeros(2), cs.parameter_vector())
    with pytest.raises(ValueError, match=r"jacobian='fd'"):
        kidym.simulate(cs, method="BDF", jacobian="analytic")
    r = kidym.simulate(cs, method="BDF", rtol=1e-8, atol=1e-11)   # auto: falls back
    assert r.stats["jacobian"] == "fd" and r.stats["nfev_jacobian"] > 0
    r = kidym.simulate(eq, engine="compiled", method="BDF", rtol=1e-8, atol=1e-11)
    assert r.stats["jacobian"] == "analytic" and r.stats["nfev_jacobian"] == 0


@pytest.mark.parametrize("source", [
    spring_chain(8),
    "examples/andrews_squeezer/andrews_squeezer.kdm",
    ROLLING_BALL,
], ids=["spring chain", "andrews squeezer", "rolling ball"])
def test_bdf_with_the_analytic_jacobian_agrees_and_needs_fewer_evaluations(source) -> None:
    model = kidym.parse(source) if "|" in source else kidym.load(ROOT / source)
    eq = kidym.derive(model)
    cs = CompiledSystem.build(eq, jacobian=True)
    rtol = 1e-9
    runs = {jac: kidym.simulate(cs, method="BDF", rtol=rtol, atol=rtol * 1e-3, jacobian=jac,
                                n_points=51)
            for jac in ("analytic", "fd")}
    a, f = runs["analytic"], runs["fd"]
    assert a.stats["jacobian"] == "analytic" and f.stats["jacobian"] == "fd"
    assert a.stats["nfev_jacobian"] == 0 and f.stats["nfev_jacobian"] > 0
    # a third route: the NumPy engine's Radau with its own (Python) analytic Jacobian
    ref = kidym.simulate(eq, method="Radau", rtol=1e-11, atol=1e-14, n_points=51)
    # (BDF's error on Andrews' squeezer, whose speeds reach 10³, is ~1e-5 at rtol 1e-9)
    scale = 1.0 + np.abs(ref.y)
    for r in (a, f):
        assert np.abs((r.y - ref.y) / scale).max() < 1e-4
    assert np.abs((a.y - f.y) / scale).max() < 1e-4
    # CVODE's difference quotients cost n_y evaluations per Jacobian
    assert a.nfev < f.nfev
    assert f.stats["nfev_jacobian"] == f.stats["njev"] * cs.n_y


def test_a_stiff_explicit_compiled_run_is_flagged() -> None:
    eq = kidym.derive(kidym.parse(STIFF))
    rho = (2e4 + np.sqrt(4e8 - 4e6)) / 2           # closed form, see STIFF
    for cs in (CompiledSystem.build(eq), CompiledSystem.build(eq, jacobian=True)):
        r = kidym.simulate(cs, method="ERK8", rtol=1e-8, atol=1e-11)
        stiff = r.stats["stiffness"]
        assert stiff["spectral_radius"] == pytest.approx(rho, rel=1e-6)
        assert "method='BDF'" in stiff["hint"]
        b = kidym.simulate(cs, method="BDF", rtol=1e-8, atol=1e-11)
        assert "stiffness" not in b.stats and b.nfev < r.nfev / 10
        assert np.abs(b["x"] - r["x"]).max() < 1e-7


def test_a_smooth_compiled_oscillation_is_not_flagged() -> None:
    eq = kidym.derive(kidym.parse(STIFF.replace("d = 2e4", "d = 1")))
    r = kidym.simulate(eq, engine="compiled", method="ERK8", rtol=1e-6, atol=1e-9)
    assert r.nfev > 20_000 and "stiffness" not in r.stats


#: a model whose names are those of kidym_jac's own C variables
CLASHING = """
J = 2; A = 0.5; x = 0.3; col = 1.5; piv = 9.81; qd = 0.2; M = 1; F = 0.1; d = 3; s = 1;
Rod | Rz(k) | Sx(A/2), m(M), Jx(0), Jy(M*A^2/12), Jz(M*A^2/12);
Slide | Sx(n) | m(J), Jx(0), Jy(0), Jz(0);
Cq.n = col; Dq.n = d; Pt.ωZRod = F*sin(x*t) - qd*k't;
ГРАВИТАЦИЯ := 0, -piv, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := k(0.4), n(0.1), k't(s);
"""


def test_model_names_never_clash_with_the_jacobian_code() -> None:
    model = kidym.parse(CLASHING)
    eq = kidym.derive(model)
    cs = CompiledSystem.build(eq, jacobian=True)
    ns = NumpySystem.build(eq)
    p = ns.parameter_vector()
    y = np.array([0.4, 0.1, 1.0, -0.3])
    J = cs.jacobian(0.9, y, p)
    ref = JacobianFunction.build(eq)(0.9, y, p)
    assert np.abs(J - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("derive", ["kidym.derive", "kidym.eom.stored.derived"])
def test_the_jacobian_source_is_deterministic_across_processes(tmp_path, derive) -> None:
    import os
    import subprocess
    import sys

    # in a fresh cache: the first process parses the file (and stores the models), the
    # second reads them back from the cache; both must generate the same C (a first run
    # that went on with what it parsed, not with the copy it stored, ordered the terms
    # of sums otherwise)
    # (kidym.eom.stored.derived: the equations stored and read back the same way)
    script = ("import kidym, kidym.eom.stored, sys; from kidym.codegen import generate_c; "
              f"sys.stdout.write(generate_c({derive}(kidym.load("
              "'examples/andrews_squeezer/andrews_squeezer.kdm')), jacobian=True).source)")
    outs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONHASHSEED=seed,
                                    KIDYM_CACHE_DIR=str(tmp_path / "cache")),
                           check=True, cwd=ROOT).stdout
            for seed in ("1", "2", "3")]
    assert outs[0] == outs[1] == outs[2] and "kd_jac_eval" in outs[0]


def test_cvode_counts_survive_the_restarts_at_projections() -> None:
    """CVODE sets its counters to zero when it is restarted (after a projection onto the
    constraints); the steps and Jacobians reported are those of the whole run (before
    the fix: only those since the last restart, 0 steps when it came at the end)."""
    eq = kidym.derive(kidym.load(ROOT / "examples/andrews_squeezer/andrews_squeezer.kdm"))
    cs = CompiledSystem.build(eq, jacobian=True)
    r = kidym.simulate(cs, method="BDF", rtol=1e-6, atol=1e-9, n_points=101)
    restarts = r.stats["constraint_drift"]["projections"]
    assert restarts > 10
    # each restart takes at least one step and forms a new Newton matrix
    assert r.stats["nsteps"] > restarts and r.stats["njev"] >= restarts
    assert r.nfev > r.stats["nsteps"]


@pytest.mark.parametrize("jacobian", ["analytic", "fd"])
def test_kidym_run_bdf_takes_the_jacobian_option(jacobian: str, tmp_path, capsys) -> None:
    import json

    from kidym.cli import main

    model = tmp_path / "stiff.kdm"
    model.write_text(STIFF, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(model), "--engine", "compiled", "--method", "BDF", "--jacobian",
                 jacobian, "--no-plots", "--points", "11", "--out", str(out)]) == 0
    stats = json.loads((out / "results.json").read_text(encoding="utf-8"))["stats"]
    assert stats["jacobian"] == jacobian
    assert (stats["nfev_jacobian"] > 0) == (jacobian == "fd")


def test_kidym_run_warns_of_a_stiff_explicit_compiled_run(tmp_path, capsys) -> None:
    from kidym.cli import main

    model = tmp_path / "stiff.kdm"
    model.write_text(STIFF, encoding="utf-8")
    assert main(["run", str(model), "--engine", "compiled", "--method", "ERK8", "--rtol",
                 "1e-8", "--atol", "1e-11", "--no-plots", "--out", str(tmp_path / "o")]) == 0
    assert "warning: the motion is stiff" in capsys.readouterr().err
