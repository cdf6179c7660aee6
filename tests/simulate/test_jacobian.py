"""The analytic Jacobian (kidym.simulate.jacobian) against central differences of the
right-hand side, the implicit methods that use it, and the stiffness warning."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.eom.constraints import Stabilization
from kidym.simulate.constrained import consistent_initial
from kidym.simulate.jacobian import JacobianFunction
from kidym.simulate.simulate import NumpySystem

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
])
def test_analytic_jacobian_equals_central_differences(source: str, stab) -> None:
    model = kidym.parse(source) if "|" in source else kidym.load(ROOT / source)
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


def test_a_stiff_run_is_flagged_and_the_implicit_methods_agree() -> None:
    model = kidym.parse(STIFF)
    explicit = kidym.simulate(model, method="DOP853", rtol=1e-8, atol=1e-11)
    stiff = explicit.stats["stiffness"]
    rho = (2e4 + np.sqrt(4e8 - 4e6)) / 2           # closed form, see STIFF
    assert stiff["spectral_radius"] == pytest.approx(rho, rel=1e-9)
    assert "method='Radau' or 'BDF'" in stiff["hint"]
    for method in ("Radau", "BDF"):
        r = kidym.simulate(model, method=method, rtol=1e-8, atol=1e-11)
        assert "stiffness" not in r.stats
        assert r.nfev < explicit.nfev / 10
        assert np.abs(r["x"] - explicit["x"]).max() < 1e-7


def test_a_smooth_oscillation_is_not_flagged() -> None:
    # lightly damped: the explicit steps follow the oscillation, they are not held down
    model = kidym.parse(STIFF.replace("d = 2e4", "d = 1"))
    r = kidym.simulate(model, method="DOP853", rtol=1e-6, atol=1e-9)
    assert r.nfev > 20_000 and "stiffness" not in r.stats
