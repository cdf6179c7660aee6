"""Accelerations shown as outputs (``phi't't``, ``XCRod't't``) are the true ones, ẇ = M⁻¹F."""

import numpy as np
import pytest

import kidym
from kidym.errors import DerivationError
from tests.codegen.shared import kidym_cache  # noqa: F401

ENGINES = ["numpy", "compiled"]

# a rod hinged at one end: m = 1, l = 1, central J = 0.1, gravity -y
PENDULUM = ("m = 1; l = 1; J = 0.1; g = 9.81; Rod | Rz(phi) | Sx(l/2), m, 0, J, J; "
            "GRAVITY := 0, -g, 0; SHOW := phi't't, XCRod't't, YCRod't't;")
# the same rod on a support driven along x: a time-dependent model
DRIVEN = ("m = 1; l = 1; J = 0.1; g = 9.81; A = 0.2; w = 3; "
          "Rod | Sx(A*sin(w*t)), Rz(phi) | Sx(l/2), m, 0, J, J; GRAVITY := 0, -g, 0; "
          "SHOW := phi't't, XCRod't, XCRod't't, YCRod't, YCRod't't;")


@pytest.mark.parametrize("engine", ENGINES)
def test_pendulum_accelerations_match_the_closed_form(engine):
    r = kidym.simulate(kidym.parse(PENDULUM), t_end=1.5, initial={"phi": 0.5}, engine=engine,
                       rtol=1e-10, atol=1e-12)
    io = 0.1 + 0.25                                  # I_O = J + m (l/2)²
    # released at rest: φ̈(0) = -m g (l/2) cos φ / I_O = -12.30 rad/s²
    assert r["phi't't"][0] == pytest.approx(-9.81 * 0.5 * np.cos(0.5) / io, rel=1e-12)
    assert r["phi't't"][0] == pytest.approx(-12.2987, abs=1e-4)
    phi, om = r["phi"], r["phi't"]
    acc = -9.81 * 0.5 * np.cos(phi) / io
    np.testing.assert_allclose(r["phi't't"], acc, rtol=1e-12, atol=1e-12)
    # XC = (l/2) cos φ, YC = (l/2) sin φ
    np.testing.assert_allclose(r["XCRod't't"], -0.5 * (np.sin(phi) * acc + np.cos(phi) * om**2),
                               atol=1e-12)
    np.testing.assert_allclose(r["YCRod't't"], 0.5 * (np.cos(phi) * acc - np.sin(phi) * om**2),
                               atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_driven_accelerations_match_finite_differences_of_the_velocities(engine):
    times = np.linspace(0, 2, 4001)
    r = kidym.simulate(kidym.parse(DRIVEN), t_end=2, initial={"phi": 0.5, "phi't": 0.3},
                       engine=engine, t_eval=times, rtol=1e-12, atol=1e-13)
    h = times[1] - times[0]
    for name in ("phi't", "XCRod't", "YCRod't"):
        fd = (r[name][2:] - r[name][:-2]) / (2 * h)
        scale = np.max(np.abs(r[name + "'t"]))
        assert scale > 1
        np.testing.assert_allclose(r[name + "'t"][1:-1], fd, atol=1e-5 * scale)


def test_engines_agree_on_accelerations():
    model = kidym.parse(DRIVEN)
    runs = [kidym.simulate(model, t_end=1, initial={"phi": 0.5}, engine=e,
                           t_eval=np.linspace(0, 1, 11), rtol=1e-12, atol=1e-13)
            for e in ("numpy", "compiled")]
    for name in ("phi't't", "XCRod't't", "YCRod't't"):
        np.testing.assert_allclose(runs[0][name], runs[1][name], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize(("text", "where"), [
    ("m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -x't't;", "1:45"),
    ("m = 1; Slider | Sx(x) | m, 0, 0, 0; a = 2*x't't; b = a + x; Pf.x = -b;", "1:69"),
])
def test_an_acceleration_in_a_force_is_a_clear_error(text, where):
    """Located when the file is read (it used to be silently 0), also through definitions."""
    with pytest.raises(kidym.ModelError, match=rf"<string>:{where}: error: characteristic of "
                       r"element `Pf.x` uses `\S+`, an acceleration"):
        kidym.derive(kidym.parse(text))


def test_a_derivative_of_an_acceleration_is_a_clear_error():
    text = "m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = -x; a = x't't; SHOW := a't;"
    with pytest.raises(DerivationError, match="derivative of an acceleration"):
        kidym.derive(kidym.parse(text))


@pytest.mark.parametrize("engine", ENGINES)
def test_accelerations_of_the_rolling_ball_match_finite_differences(engine):
    """Isotropic quaternion body: its centre keeps the fixed axes while turning with ω."""
    from tests.fixtures import EXAMPLES

    text = (EXAMPLES / "ball" / "ball.kdm").read_text(encoding="utf-8")
    assert "ωZКуля;  #" in text
    text = text.replace("ωZКуля;  #", "ωZКуля, zC't, zC't't, xC't, xC't't;  #")
    times = np.linspace(0, 1, 2001)
    r = kidym.simulate(kidym.parse(text), t_eval=times, engine=engine, rtol=1e-12,
                       atol=1e-13)
    h = times[1] - times[0]
    for name in ("zC't", "xC't"):
        fd = (r[name][2:] - r[name][:-2]) / (2 * h)
        np.testing.assert_allclose(r[name + "'t"][1:-1], fd, atol=1e-5)
