"""Equilibria (``РАСЧЕТ := СТАТИКА``) against hand-solved cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kidym

ROOT = Path(__file__).parents[2]

SPRING = """
m = 1; c = 100; g = 9.81;
Block | Sy(y) | m(m), Jx(0), Jy(0), Jz(0);
Cspring.y = c;
GRAVITY := 0, -g, 0;
"""

TORSION = """
m = 2; l = 1; k = 30; P = 5; g = 9.81;
Rod | Rz(phi) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
yT = l*sin(phi);
Ck.phi = k;
Pload.yT = -P;
GRAVITY := 0, -g, 0;
INITIAL := t(0), phi(0);
"""

CARTESIAN = """
m = 2; l = 1.5; H = 4; g = 9.81;
Bob | Sx(x), Sy(y) | m(m), Jx(0), Jy(0), Jz(0);
f1 = x^2 + y^2 - l^2;
УРАВНЕНИЯ := f1;
Ph.x = H;
GRAVITY := 0, -g, 0;
INITIAL := t(0), x(0.1), y(-1.4);
"""


def test_spring_under_gravity() -> None:
    """``c y = −m g``; stiffness ``c``."""
    e = kidym.equilibrium(kidym.derive(kidym.parse(SPRING)))
    assert e.success and e.coordinates["y"] == pytest.approx(-9.81 / 100, rel=1e-13)
    np.testing.assert_allclose(e.stiffness_eigenvalues, [100.0], rtol=1e-12)
    assert e.stability == "stable" and not e.time_dependent


def test_torsion_pendulum_under_a_tip_load() -> None:
    """A rod with a torsion spring ``k`` at its hinge, its weight and a load ``P`` at its
    tip: ``k φ = −(P l + m g l/2) cos φ``; the angle is given by its inverse (for the
    solved ``φ``, the load that holds it there is ``P``), the stiffness by hand:
    ``K = k − (P l + m g l/2) sin φ``."""
    e = kidym.equilibrium(kidym.derive(kidym.parse(TORSION)))
    phi = e.coordinates["phi"]
    k, m, l, g, P = 30.0, 2.0, 1.0, 9.81, 5.0
    assert -k * phi / (l * np.cos(phi)) - m * g / 2 == pytest.approx(P, rel=1e-12)
    assert -0.6 < phi < -0.3
    np.testing.assert_allclose(e.stiffness_eigenvalues,
                               [k - (P * l + m * g * l / 2) * np.sin(phi)], rtol=1e-10)
    assert e.stability == "stable"


def test_constrained_pendulum_reaction() -> None:
    """A point mass on a rod (``x² + y² = l²``) pushed sideways by ``H``: the rod leans
    by ``atan(H/(m g))`` and pulls with ``√(H² + (m g)²)`` = ``|2 λ l|`` (``G = (2x, 2y)``)."""
    e = kidym.equilibrium(kidym.derive(kidym.parse(CARTESIAN)))
    x, y = e.coordinates["x"], e.coordinates["y"]
    m, l, H, g = 2.0, 1.5, 4.0, 9.81
    assert np.arctan2(x, -y) == pytest.approx(np.arctan2(H, m * g), rel=1e-12)
    assert np.hypot(x, y) == pytest.approx(l, rel=1e-13)
    assert abs(2 * e.multipliers["λf1"] * l) == pytest.approx(np.hypot(H, m * g), rel=1e-12)
    # stiffness along the circle, per unit length of arc s: V = −H x + m g y with
    # x = l sin(s/l), y = −l cos(s/l) gives d²V/ds² = (H sin a + m g cos a)/l = √(H² + (mg)²)/l
    np.testing.assert_allclose(e.stiffness_eigenvalues, [np.hypot(H, m * g) / l], rtol=1e-10)


def test_double_pendulum_equilibria_and_their_stability() -> None:
    text = """
    m1 = 1; l1 = 1; m2 = 1; l2 = 1; g = 9.81;
    Rod1 | Rz(phi1) | Sx(l1/2), m(m1), Jx(0), Jy(m1*l1^2/12), Jz(m1*l1^2/12);
    Rod2~Rod1 | Sx(l1), Rz(phi2) | Sx(l2/2), m(m2), Jx(0), Jy(m2*l2^2/12), Jz(m2*l2^2/12);
    GRAVITY := 0, -g, 0;
    """
    eq = kidym.derive(kidym.parse(text))
    down = kidym.equilibrium(eq, state={"phi1": -1.3, "phi2": 0.2})
    assert down.coordinates["phi1"] == pytest.approx(-np.pi / 2, abs=1e-12)
    assert down.coordinates["phi2"] == pytest.approx(0.0, abs=1e-12)
    assert down.stability == "stable"
    up = kidym.equilibrium(eq, state={"phi1": 1.4, "phi2": 0.1})
    assert up.coordinates["phi1"] == pytest.approx(np.pi / 2, abs=1e-12)
    assert up.stability == "unstable"
    # K at the top by hand: −V'' with V = g(m1 l1/2 + m2 l1) sin φ1 + g m2 l2/2 sin(φ1+φ2)
    a, b = -9.81 * (0.5 + 1.0), -9.81 * 0.5
    np.testing.assert_allclose(up.stiffness_eigenvalues,
                               np.linalg.eigvalsh([[a + b, b], [b, b]]), rtol=1e-10)


def test_time_dependent_model_is_solved_at_frozen_time() -> None:
    """An anchor moving as ``a sin(w t)``: the equilibrium at ``t₀`` is
    ``y = a sin(w t₀) − m g / c``, and the result says the time was frozen."""
    text = SPRING.replace("Cspring.y = c;", "dy = y - a*sin(w*t); Cspring.dy = c;")
    text = text.replace("g = 9.81;", "g = 9.81; a = 0.2; w = 3;")
    eq = kidym.derive(kidym.parse(text + "INITIAL := t(0.5);\n"))
    e = kidym.equilibrium(eq)
    assert e.time_dependent and e.t == 0.5
    assert e.coordinates["y"] == pytest.approx(0.2 * np.sin(1.5) - 0.0981, rel=1e-12)
    assert "frozen at t = 0.5" in e.describe()
    e2 = kidym.equilibrium(eq, t=0.0)
    assert e2.coordinates["y"] == pytest.approx(-0.0981, rel=1e-12)


def test_no_equilibrium_is_a_clear_error() -> None:
    """A constant force with no spring: no equilibrium, Newton stalls with a message."""
    text = "m = 1; F = 2;\nBlock | Sx(x) | m(m), Jx(0), Jy(0), Jz(0);\nPf.x = F;\n"
    eq = kidym.derive(kidym.parse(text))
    with pytest.raises(ValueError, match=r"statics of model .*(stalled|did not converge)"):
        kidym.equilibrium(eq)
    e = kidym.equilibrium(eq, raise_on_failure=False)
    assert not e.success and e.residual == pytest.approx(2.0)


def _four_bar_branch(q1: float, sign: float) -> tuple[float, float, float, float, float]:
    """The four-bar closed by hand: the hinge ``Q`` where the circle of radius ``b``
    about the crank's end ``P`` meets the circle of radius ``c`` about ``D = (d, 0)``,
    on the side ``sign`` of the line ``PD``. Returns ``θ₂`` (the coupler's angle from
    the x axis), ``q3``, ``Qx``, ``Qy``, ``P``'s y."""
    a, b, c, d = 0.2, 0.6, 0.5, 0.55
    P = np.array([a * np.cos(q1), a * np.sin(q1)])
    D = np.array([d, 0.0])
    u = D - P
    L = np.linalg.norm(u)
    x = (L * L + b * b - c * c) / (2 * L)          # along PD from P
    h = np.sqrt(b * b - x * x)
    e = u / L
    Q = P + x * e + sign * h * np.array([-e[1], e[0]])
    return (float(np.arctan2(Q[1] - P[1], Q[0] - P[0])),
            float(np.arctan2(Q[1], Q[0] - d)), float(Q[0]), float(Q[1]), float(P[1]))


def test_four_bar_equilibrium_under_a_load() -> None:
    """examples/four_bar/four_bar_statics.kdm: the closed loop's equilibrium under its
    weight and a horizontal load ``H`` at the hinge ``Q``, against a hand-solved case.

    * the angle by virtual work on the one degree of freedom: the loop closed by hand
      (two circles), ``V(q1) = g Σ m_i y_i − H x_Q`` and ``V'(q1) = 0`` by Brent's method;
    * the reactions by free bodies: the rocker's moments about ``D`` and the moments of
      crank and coupler together about ``O`` give the force ``(λf1, λf2)`` the rocker
      exerts on the coupler at ``Q``;
    * the stiffness: ``V''(q1) / |dq/dq1|²`` (``K`` is per unit length of an
      orthonormal admissible displacement)."""
    from scipy.optimize import brentq

    e = kidym.equilibrium(kidym.derive(kidym.load(
        ROOT / "examples/four_bar/four_bar_statics.kdm")))
    assert e.success and e.stability == "stable"
    q1, q2, q3 = (e.coordinates[k] for k in ("q1", "q2", "q3"))
    a, b, c, d, m1, m2, m3, g, H = 0.2, 0.6, 0.5, 0.55, 1.0, 2.0, 1.5, 9.81, 20.0
    # the branch kidym's solution is on
    P = np.array([a * np.cos(q1), a * np.sin(q1)])
    Q = np.array([d + c * np.cos(q3), c * np.sin(q3)])
    u = np.array([d, 0.0]) - P
    sign = float(np.sign(u[0] * (Q - P)[1] - u[1] * (Q - P)[0]))

    def V(x: float) -> float:
        th2, r3, Qx, _Qy, Py = _four_bar_branch(x, sign)
        return g * (m1 * a / 2 * np.sin(x) + m2 * (Py + b / 2 * np.sin(th2))
                    + m3 * c / 2 * np.sin(r3)) - H * Qx

    h = 1e-5

    def dV(x: float) -> float:
        return (V(x + h) - V(x - h)) / (2 * h)

    q1_hand = brentq(dV, -1.4, -0.5, xtol=1e-14)
    assert q1 == pytest.approx(q1_hand, abs=1e-8)
    th2, r3, Qx, Qy, _ = _four_bar_branch(q1, sign)
    assert q1 + q2 == pytest.approx(th2, abs=1e-10)
    assert q3 == pytest.approx(r3, abs=1e-10)
    # free bodies: rocker about D (gravity, H and −λ at Q), crank + coupler about O
    # (gravities, +λ at Q): two linear equations in λ
    xC2 = a * np.cos(q1) + b / 2 * np.cos(th2)
    rows = np.array([[c * np.sin(q3), -c * np.cos(q3)],      # rocker about D
                     [-Qy, Qx]])                              # crank + coupler about O
    rhs = np.array([m3 * g * c / 2 * np.cos(q3) + H * c * np.sin(q3),
                    m1 * g * a / 2 * np.cos(q1) + m2 * g * xC2])
    lam = np.linalg.solve(rows, rhs)
    np.testing.assert_allclose([e.multipliers["λf1"], e.multipliers["λf2"]], lam,
                               rtol=1e-10)
    # stiffness along the loop
    hh = 1e-4
    d2V = (V(q1 + hh) - 2 * V(q1) + V(q1 - hh)) / hh ** 2
    t_plus, t_minus = _four_bar_branch(q1 + hh, sign), _four_bar_branch(q1 - hh, sign)
    dq = np.array([1.0, (t_plus[0] - t_minus[0]) / (2 * hh) - 1.0,
                   (t_plus[1] - t_minus[1]) / (2 * hh)])
    np.testing.assert_allclose(e.stiffness_eigenvalues, [d2V / (dq @ dq)], rtol=1e-5)
