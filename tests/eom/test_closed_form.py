"""Equations of motion against closed-form mechanics."""

import numpy as np
import pytest
from scipy.special import ellipk

import kidym
from kidym.simulation.simulate import NumpySystem
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES, chain_text


def _mf(text, t, state, **derive_opts):
    eq = kidym.derive(kidym.parse(text), **derive_opts)
    system = NumpySystem.build(eq)
    y = np.array([state[n] for n in system.state_names])
    _, M, F, _ = system.evaluate(t, y, system.parameter_vector())
    return M, F


def test_rheonomic_support_motion():
    """Pendulum (point mass) on a support moving as a·sin(W t) along x."""
    text = """m = 0.8; l = 1.2; a = 0.3; W = 2.5; g = 9.81;
    Bob | Sx(a*sin(W*t)), Rz(phi) | Sx(l), m, 0, 0, 0;
    GRAVITY := 0, -g, 0;"""
    m, l, a, W, g = 0.8, 1.2, 0.3, 2.5, 9.81
    rng = np.random.default_rng(1)
    for _ in range(5):
        t, phi, w = rng.uniform(-3, 3, 3)
        M, F = _mf(text, t, {"phi": phi, "phi't": w})
        xs_dd = -a * W**2 * np.sin(W * t)
        # Lagrange: m l² φ̈ = m l sin φ ẍs − m g l cos φ
        assert M[0, 0] == pytest.approx(m * l**2, rel=1e-13)
        assert F[0] == pytest.approx(m * l * np.sin(phi) * xs_dd - m * g * l * np.cos(phi),
                                     rel=1e-12, abs=1e-12)


def test_force_elements_spring_damper_force_and_inertial_element():
    """m ẍ + m2 ẍ = −c x − b ẋ + F0 cos(W t), with a sliding body and an inertial element."""
    text = """m = 2; m2 = 0.5; c = 30; b = 0.7; F0 = 3; W = 1.7;
    Slider | Sx(x) | m, 0, 0, 0;
    Cs.x = c;  Dd.x = b;  Pf.x = F0*cos(W*t);  Jextra.x = m2;"""
    rng = np.random.default_rng(2)
    for _ in range(5):
        t, x, v = rng.uniform(-2, 2, 3)
        M, F = _mf(text, t, {"x": x, "x't": v})
        assert M[0, 0] == pytest.approx(2.5, rel=1e-14)
        assert F[0] == pytest.approx(-30 * x - 0.7 * v + 3 * np.cos(1.7 * t), rel=1e-12)


def test_element_on_a_defined_coordinate_chain_rule():
    """A force on a definition y = l·sin(φ) (chain rule through a named quantity)."""
    text = """m = 1; l = 2; k = 5;
    Rod | Rz(phi) | Sx(l), m, 0, 0, 0;
    yB = l*sin(phi);
    Cspring.yB = k;"""
    rng = np.random.default_rng(3)
    for _ in range(5):
        phi, w = rng.uniform(-2, 2, 2)
        M, F = _mf(text, 0.0, {"phi": phi, "phi't": w})
        # generalized force of −k·y on y = l sin φ: −k l sin φ · l cos φ; centripetal: none
        assert F[0] == pytest.approx(-5 * 2 * np.sin(phi) * 2 * np.cos(phi), rel=1e-12)
        assert M[0, 0] == pytest.approx(4.0, rel=1e-14)


@pytest.mark.parametrize("text", [DOUBLE_PENDULUM, chain_text(3)], ids=["pendulum", "chain3"])
def test_energy_is_conserved(text):
    model = kidym.parse(text)
    init = {"phi1": 1.0, "phi2": -0.5, "phi1't": 0.3} if "phi1" in text else {
        "q1": 0.8, "q2": -0.6, "q3": 1.1, "q2't": 1.0}
    r = kidym.simulate(model, t_end=10.0, initial=init, rtol=1e-11, atol=1e-12)
    E = r["energy"]
    assert r.success
    assert np.abs(E - E[0]).max() / abs(E[0]) < 1e-8


def _flip_half_period(I, w):
    """Time between sign changes of the intermediate-axis rate (Landau–Lifshitz §37)."""
    I1, I2, I3 = I
    E2 = float(np.dot(I, w**2))          # 2E
    L2 = float(np.dot(I**2, w**2))       # L²
    if L2 < E2 * I2:                      # the other case: exchange axes 1 and 3
        I1, I3 = I3, I1
    lam = np.sqrt((I3 - I2) * (L2 - E2 * I1) / (I1 * I2 * I3))
    k2 = (I2 - I1) * (E2 * I3 - L2) / ((I3 - I2) * (L2 - E2 * I1))
    return 2 * ellipk(k2) / lam


def test_wing_nut_flips_with_the_elliptic_period():
    model = kidym.load(EXAMPLES / "wing_nut" / "wing_nut.kdm")
    r = kidym.simulate(model, t_eval=np.linspace(0, 20, 40001), rtol=1e-11, atol=1e-12)
    wy = r["ωYNut"]
    crossings = []
    for k in np.nonzero(np.sign(wy[1:]) != np.sign(wy[:-1]))[0]:
        t0, t1, a, b = r.t[k], r.t[k + 1], wy[k], wy[k + 1]
        crossings.append(t0 - a * (t1 - t0) / (b - a))
    assert len(crossings) >= 5, "the nut must flip several times in 20 s"
    I = np.array([1e-5, 2e-5, 3e-5])
    w0 = np.array([r["ωXNut"][0], r["ωYNut"][0], r["ωZNut"][0]])
    np.testing.assert_allclose(w0, [0.01, 10, 0.01], rtol=1e-12)
    expected = _flip_half_period(I, w0)
    assert np.diff(crossings).mean() == pytest.approx(expected, rel=1e-4)
    E = r["energy"]
    assert np.abs(E - E[0]).max() / E[0] < 1e-8
