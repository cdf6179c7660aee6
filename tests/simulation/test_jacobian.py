"""The analytic Jacobian (kidym.simulation.jacobian) against central differences of the
right-hand side, the implicit methods that use it, and the stiffness warning."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.eom.constraints import Stabilization
from kidym.simulation.constrained import consistent_initial
from kidym.simulation.jacobian import JacobianFunction
from kidym.simulation.simulate import NumpySystem

ROOT = Path(__file__).parents[2]

SLIDER = """
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
"""

#: k/m = 1e6, d/m = 2e4: eigenvalues −(d ± √(d² − 4mk))/2m = −50.1 and −19 949.9 1/s
STIFF = """
m = 1; k = 1e6; d = 2e4;
Mass | Sx(x) | m(m), Jx(0), Jy(0), Jz(0);
Cs.x = k;
Dd.x = d;
Pf.x = sin(3*t);
НАЧАЛЬНЫЕ УСЛОВИЯ := x(0.01);
ВРЕМЯ := t(0, 2);
"""


#: more controls (3) than programmed constraints (2): the least-norm solve, and a
#: time-dependent disturbance and target
LEAST_NORM = """
m = 2; W = 3; V1 = 1; k1 = -4; k2 = -3;
Jm.x.y.z = m;
Cs.x = 5*x; Cs.z = 2*z^3;
Pfx.x = u1; Pfy.y = u2; Pfz.z = u3*(1 + x^2);
Pw.x = sin(W*t);
g1 = x't + y't - V1;
g2 = x't + 2*y't + z't - cos(t);
НЕИЗВЕСТНЫЕ := u1, u2, u3;
ПРОГРАММНЫЕ СВЯЗИ := g1(k1), g2(k2);
НАЧАЛЬНЫЕ УСЛОВИЯ := x(0.3), z(0.2), x't(0.2), y't(-0.4);
"""


def central(system: NumpySystem, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    J = np.empty((y.size, y.size))
    for k in range(y.size):
        h = 1e-6 * max(1.0, abs(y[k]))
        e = np.zeros(y.size)
        e[k] = h
        J[:, k] = (system.rhs(t, y + e, p) - system.rhs(t, y - e, p)) / (2 * h)
    return J


@pytest.mark.parametrize(("source", "stab"), [
    ("examples/double_pendulum/double_pendulum.kdm", None),
    ("examples/ball/ball.kdm", None),
    ("examples/four_bar/four_bar.kdm", None),
    ("examples/four_bar/four_bar.kdm", Stabilization("baumgarte", 5.0, 7.0)),
    (SLIDER, None),
    ("examples/two_link_control/two_link_control.kdm", None),
    (LEAST_NORM, None),
])
def test_analytic_jacobian_equals_central_differences(source: str, stab) -> None:
    model = kidym.parse(source) if "\n" in source else kidym.load(ROOT / source)
    eq = kidym.derive(model)
    system = NumpySystem.build(eq)
    if stab is not None:
        system = dataclasses.replace(system, stabilization=stab)
    jac = JacobianFunction.build(eq)
    p = system.parameter_vector()
    rng = np.random.default_rng(4)
    y = np.array([model.initial.get(n, 0.0) for n in system.state_names]) + rng.normal(
        scale=0.1, size=len(system.state_names))
    if eq.constraints is not None:
        y, _ = consistent_initial(system, 0.7, y, p, set(), 1e-13)
        y = y + rng.normal(scale=1e-3, size=y.size)   # off the constraints too
    J = jac(0.7, y, p, stab)
    ref = central(system, 0.7, y, p)
    assert np.abs(J - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_implicit_runs_with_controls_use_the_closed_loop_jacobian(method: str,
                                                                   monkeypatch) -> None:
    """With controls the implicit methods get the closed loop's analytic Jacobian (they
    used difference quotients): it is called, and the trajectory and the controls equal
    those with difference quotients and DOP853's within the tolerance."""
    from kidym.simulation import simulate as sim

    calls = []
    real = sim.analytic_jacobian

    def counted(eq):
        fn = real(eq)
        return lambda *a: calls.append(1) or fn(*a)

    model = kidym.load(ROOT / "examples/two_link_control/two_link_control.kdm")
    opts = {"rtol": 1e-9, "atol": 1e-12, "t_end": 1.0, "engine": "numpy"}
    fd = kidym.simulate(model, method=method, jacobian="fd", **opts)
    ref = kidym.simulate(model, method="DOP853", **opts)
    assert not calls
    monkeypatch.setattr(sim, "analytic_jacobian", counted)
    analytic = kidym.simulate(model, method=method, **opts)
    assert calls
    for name in ("q1", "q2", "u1", "u2"):
        scale = max(1.0, float(np.abs(ref[name]).max()))
        assert np.abs(analytic[name] - ref[name]).max() <= 1e-6 * scale, name
        assert np.abs(analytic[name] - fd[name]).max() <= 1e-6 * scale, name


def test_a_stiff_run_is_flagged_and_the_implicit_methods_agree() -> None:
    model = kidym.parse(STIFF)
    explicit = kidym.simulate(model, method="DOP853", rtol=1e-8, atol=1e-11, engine="numpy")
    stiff = explicit.stats["stiffness"]
    rho = (2e4 + np.sqrt(4e8 - 4e6)) / 2           # closed form, see STIFF
    assert stiff["spectral_radius"] == pytest.approx(rho, rel=1e-9)
    assert "method='Radau' or 'BDF'" in stiff["hint"]
    for method in ("Radau", "BDF"):
        r = kidym.simulate(model, method=method, rtol=1e-8, atol=1e-11, engine="numpy")
        assert "stiffness" not in r.stats
        assert r.nfev < explicit.nfev / 10
        assert np.abs(r["x"] - explicit["x"]).max() < 1e-7


def test_a_smooth_oscillation_is_not_flagged() -> None:
    # lightly damped: the explicit steps follow the oscillation, they are not held down
    model = kidym.parse(STIFF.replace("d = 2e4", "d = 1"))
    r = kidym.simulate(model, method="DOP853", rtol=1e-6, atol=1e-9)
    assert r.nfev > 20_000 and "stiffness" not in r.stats
