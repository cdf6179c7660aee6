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
    lin = kidym.linearize(dp_eq, op, params=DP)
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
    lin = kidym.linearize(disc_eq, op, params=DISC)
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
