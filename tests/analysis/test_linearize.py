"""Linearisation against SymPy ``physics.mechanics`` ``linearize()`` on the same systems
built independently (holonomic: double pendulum; non-holonomic: the rolling disc, with
the rolling conditions as velocity formulas and as ``КАЧЕНИЕ`` constraints)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import kidym

from .sympy_linear import double_pendulum, rolling_disc

ROOT = Path(__file__).parents[2]
DP = dict(m1=1.0, m2=0.7, l1=1.2, l2=0.8, g=9.81)
DISC = dict(m=1.0, r=0.3, g=9.81)


@pytest.fixture(scope="module")
def dp_eq():
    return kidym.derive(kidym.load(ROOT / "examples/double_pendulum/double_pendulum.kdm"))


@pytest.fixture(scope="module")
def disc_eq():
    return kidym.derive(kidym.load(ROOT / "examples/rolling_disc/rolling_disc.kdm"))


@pytest.mark.parametrize("op", [
    {"phi1": 0.3, "phi2": -0.5, "phi1't": 0.7, "phi2't": -1.1},   # a moving state
    {"phi1": -np.pi / 2, "phi2": 0.0, "phi1't": 0.0, "phi2't": 0.0},  # hanging
])
def test_double_pendulum_A_matches_sympy(dp_eq, op) -> None:
    expected = double_pendulum(op, DP)
    lin = kidym.linearize(dp_eq, op, parameters=DP)
    assert lin.states == ("phi1", "phi2", "phi1't", "phi2't")
    assert np.abs(lin.A - expected).max() <= 1e-10 * np.abs(expected).max()


@pytest.mark.parametrize("op", [
    {"x": 0.1, "y": -0.2, "psi": 0.4, "theta": 0.2, "phi": 0.3,
     "psi't": 0.5, "theta't": -0.3, "phi't": 6.0},                   # leaning, turning
    {"x": 0.0, "y": 0.0, "psi": 0.0, "theta": 0.0, "phi": 0.0,
     "psi't": 0.0, "theta't": 0.0, "phi't": 4.0},                    # rolling upright
])
def test_rolling_disc_A_matches_sympy(disc_eq, op) -> None:
    full = dict(op)
    full["x't"] = DISC["r"] * op["phi't"] * np.cos(op["psi"])
    full["y't"] = DISC["r"] * op["phi't"] * np.sin(op["psi"])
    expected = rolling_disc(full, DISC)
    lin = kidym.linearize(disc_eq, op, parameters=DISC)
    assert lin.states == ("x", "y", "psi", "theta", "phi", "psi't", "theta't", "phi't")
    assert np.abs(lin.A - expected).max() <= 1e-10 * np.abs(expected).max()


DISC_CONSTRAINED = """
m = 1;  r = 0.3; g = 9.81;
Disc | Sx(x), Sy(y), Sz(z), Rz(psi), Rx(theta), Ry(phi)
     | m(m), Jx(m*r^2/4), Jy(m*r^2/2), Jz(m*r^2/4);
КАЧЕНИЕ := Disc(диск(r, y), плоскость(0));
ГРАВИТАЦИЯ := 0, 0, -g;
"""


def test_constrained_disc_reduced_spectrum_matches_sympy() -> None:
    """The disc with its rolling written as constraints (centre coordinates, 6 speeds, 3
    constraints): the linearisation reduced to the constraint manifold has the spectrum
    of SymPy's reduced equations, and the dependent states follow the constraints."""
    eq = kidym.derive(kidym.parse(DISC_CONSTRAINED))
    W = 4.0
    lin = kidym.linearize(eq, {"z": 0.3, "theta": 0.0, "psi": 0.0, "phi't": W,
                               "x't": 0.3 * W})
    assert len(lin.states) == 8 and len(lin.dependent) == 4
    op = {"x": 0.0, "y": 0.0, "psi": 0.0, "theta": 0.0, "phi": 0.0, "psi't": 0.0,
          "theta't": 0.0, "phi't": W, "x't": 0.3 * W, "y't": 0.0}
    expected = np.linalg.eigvals(rolling_disc(op, DISC))
    ours = list(np.linalg.eigvals(lin.A))
    for s in expected:                     # each matched by one of ours
        k = int(np.argmin([abs(s - o) for o in ours]))
        assert abs(ours.pop(k) - s) <= 1e-9 * max(1.0, np.abs(expected).max())
    # the oscillation at this spin is there (stable: W² > g/(3r))
    assert np.abs(expected.imag).max() > 0.1


def test_inputs_give_B(dp_eq) -> None:
    """``B`` by a parameter named as input: a torque M0 on rod 1 enters ``ẇ`` as
    ``M⁻¹ e₁`` (independent: the mass matrix of SymPy's oracle)."""
    text = (ROOT / "examples/double_pendulum/double_pendulum.kdm").read_text(encoding="utf-8")
    text = text.replace("g = 9.81;", "g = 9.81; M0 = 0;\nPm.phi1 = M0;")
    eq = kidym.derive(kidym.parse(text))
    op = {"phi1": 0.3, "phi2": -0.5, "phi1't": 0.0, "phi2't": 0.0}
    lin = kidym.linearize(eq, op, inputs=["M0"])
    m1 = m2 = l1 = l2 = 1.0
    c = np.cos(-0.5)
    M = np.array([[m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c),
                   m2 * (l2**2 / 3 + l1 * l2 * c / 2)],
                  [m2 * (l2**2 / 3 + l1 * l2 * c / 2), m2 * l2**2 / 3]])
    expected = np.linalg.solve(M, [1.0, 0.0])
    assert lin.B.shape == (4, 1)
    np.testing.assert_allclose(lin.B[:2, 0], 0.0, atol=1e-14)
    np.testing.assert_allclose(lin.B[2:, 0], expected, rtol=1e-12)
    with pytest.raises(KeyError, match="input `Q` is not a parameter"):
        kidym.linearize(eq, op, inputs=["Q"])


def test_symbolic_form_of_the_hanging_double_pendulum(dp_eq) -> None:
    """``K`` at the hanging equilibrium in the parameters: the second derivatives of
    the potential ``V = −g (m1 l1/2 + m2 l1) sin φ1 − g m2 l2/2 sin(φ1 + φ2)`` at
    φ1 = −π/2, φ2 = 0 (by hand)."""
    import sympy as sp

    lin = kidym.linearize(dp_eq, {"phi1": -np.pi / 2, "phi2": 0.0, "phi1't": 0.0,
                                  "phi2't": 0.0})
    K = lin.symbolic()["K"]
    m1, m2, l1, l2, g = sp.symbols("m1 m2 l1 l2 g")
    expected = sp.Matrix([[g * (m1 * l1 / 2 + m2 * l1) + g * m2 * l2 / 2, g * m2 * l2 / 2],
                          [g * m2 * l2 / 2, g * m2 * l2 / 2]])
    assert sp.simplify(K - expected) == sp.zeros(2, 2)


def test_outputs_text_latex_json_npz(dp_eq, tmp_path) -> None:
    lin = kidym.linearize(dp_eq, {"phi1": 0.3, "phi2": -0.5})
    text = lin.to_text()
    assert "A =" in text and "phi2't" in text
    assert lin.to_latex().startswith("\\delta\\dot{x} = \\begin{pmatrix}")
    data = json.loads(lin.to_json())
    np.testing.assert_array_equal(np.array(data["A"]), lin.A)
    path = lin.save_npz(tmp_path / "lin.npz")
    with np.load(path) as z:
        np.testing.assert_array_equal(z["A"], lin.A)
        assert list(z["states"]) == list(lin.states)


def test_unknown_state_is_an_error(dp_eq) -> None:
    with pytest.raises(KeyError, match="`phi3` is not a state"):
        kidym.linearize(dp_eq, {"phi3": 0.0})


RHEONOMIC = """
m = 1; l = 0.8; a = 0.1; w = 7; c = 3; g = 9.81;
Bob | Sy(a*sin(w*t)), Rz(phi) | Sx(l), m(m), Jx(0), Jy(0), Jz(0);
Ds.phi = c;
GRAVITY := 0, -g, 0;
"""

FOUR_BAR = """
a = 0.3; b = 1; c = 0.8; d = 0.9; m = 1; g = 9.81; M0 = 2;
Crank      | Rz(q1)       | Sx(a/2), m(m), Jx(0), Jy(m*a^2/12), Jz(m*a^2/12);
Coupler~Crank | Sx(a), Rz(q2) | Sx(b/2), m(m), Jx(0), Jy(m*b^2/12), Jz(m*b^2/12);
Rocker     | Sx(d), Rz(q3) | Sx(c/2), m(m), Jx(0), Jy(m*c^2/12), Jz(m*c^2/12);
f1 = a*cos(q1) + b*cos(q1 + q2) - d - c*cos(q3);
f2 = a*sin(q1) + b*sin(q1 + q2) - c*sin(q3);
УРАВНЕНИЯ := f1, f2;
Pm.q1 = M0;
GRAVITY := 0, -g, 0;
"""


def _central_differences(eq, t, y, h=1e-6):
    """``∂ẏ/∂y`` of the NumPy engine's right-hand side by central differences: a second
    route (the engine's own solve, no derivative formed)."""
    from kidym.simulation.simulate import NumpySystem

    sysm = NumpySystem.build(eq)
    p = sysm.parameter_vector()
    J = np.empty((y.size, y.size))
    for k in range(y.size):
        e = np.zeros(y.size)
        e[k] = h
        J[:, k] = (sysm.rhs(t, y + e, p) - sysm.rhs(t, y - e, p)) / (2 * h)
    return J


def test_time_dependent_model_against_differences() -> None:
    """A pendulum on a shaking support with a damper, at t = 0.7: ``A`` equals the
    central differences of the right-hand side (the time enters ``F``)."""
    eq = kidym.derive(kidym.parse(RHEONOMIC))
    lin = kidym.linearize(eq, {"phi": 0.4, "phi't": -1.3}, t=0.7)
    J = _central_differences(eq, 0.7, np.array([0.4, -1.3]))
    np.testing.assert_allclose(lin.A, J, rtol=1e-7, atol=1e-7)
    assert lin.t == 0.7 and not lin.stationary


def test_constrained_full_jacobian_against_differences() -> None:
    """A four-bar with ``УРАВНЕНИЯ`` at a consistent moving state: the unreduced
    ``A_full`` against differences; the reduced ``A`` is the Jacobian of the independent
    states' rates with the dependent ones solved from the constraints
    (``δy = T δx``, ``T = [I; D]``): the differences' rows of the independent states
    times ``T``, where ``D`` itself is checked against the constraints' Jacobian."""
    eq = kidym.derive(kidym.parse(FOUR_BAR))
    from scipy.optimize import fsolve

    q1 = 1.0
    f = lambda z: [0.3 * np.cos(q1) + np.cos(q1 + z[0]) - 0.9 - 0.8 * np.cos(z[1]),  # noqa: E731
                   0.3 * np.sin(q1) + np.sin(q1 + z[0]) - 0.8 * np.sin(z[1])]
    q2, q3 = fsolve(f, [-0.8, 1.5], xtol=1e-14)
    # speeds on the constraint: q1' = 1.5, (q2', q3') from the velocity constraints
    G = np.array([[-0.3 * np.sin(q1) - np.sin(q1 + q2), -np.sin(q1 + q2), 0.8 * np.sin(q3)],
                  [0.3 * np.cos(q1) + np.cos(q1 + q2), np.cos(q1 + q2), -0.8 * np.cos(q3)]])
    w1 = 1.5
    w23 = np.linalg.solve(G[:, 1:], -G[:, 0] * w1)
    state = {"q1": q1, "q2": q2, "q3": q3, "q1't": w1, "q2't": w23[0], "q3't": w23[1]}
    lin = kidym.linearize(eq, state)
    y = np.array([state[n] for n in ("q1", "q2", "q3", "q1't", "q2't", "q3't")])
    J = _central_differences(eq, 0.0, y)
    np.testing.assert_allclose(lin.A_full, J, rtol=1e-6, atol=1e-6)
    assert len(lin.states) == 2 and len(lin.dependent) == 4
    ind = [list(lin.point).index(s) for s in lin.states]
    dep = [list(lin.point).index(s) for s in lin.dependent]
    T = np.zeros((6, 2))
    T[ind, [0, 1]] = 1
    T[dep] = lin.D
    np.testing.assert_allclose(lin.A, (J @ T)[ind], rtol=1e-6, atol=1e-6)
    # T spans the linearised constraints: Φ_q δq = 0 and δ(G w) = 0
    Gq = np.zeros((2, 3))          # ∂(G w)/∂q by differences of the closed-form G
    def Gw(q):
        a, b, c = 0.3, 1.0, 0.8
        G = np.array([[-a * np.sin(q[0]) - b * np.sin(q[0] + q[1]), -b * np.sin(q[0] + q[1]),
                       c * np.sin(q[2])],
                      [a * np.cos(q[0]) + b * np.cos(q[0] + q[1]), b * np.cos(q[0] + q[1]),
                       -c * np.cos(q[2])]])
        return G @ y[3:]
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1e-6
        Gq[:, k] = (Gw(y[:3] + e) - Gw(y[:3] - e)) / 2e-6
    C = np.block([[G, np.zeros((2, 3))], [Gq, G]])
    np.testing.assert_allclose(C @ T, 0, atol=1e-8)
