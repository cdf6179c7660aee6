"""Free vibrations and stability against closed forms: the point-mass double pendulum,
the thin disc's critical spin, the ball in the bowl's period."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kidym

from .sympy_linear import point_double_pendulum_omega2

ROOT = Path(__file__).parents[2]

POINT_DP = """
m1 = 1.3; l1 = 0.9; m2 = 0.6; l2 = 1.4; g = 9.81;
B1 | Rz(phi1) | Sx(l1), m(m1), Jx(0), Jy(0), Jz(0);
B2~B1 | Sx(l1), Rz(phi2) | Sx(l2), m(m2), Jx(0), Jy(0), Jz(0);
GRAVITY := 0, -g, 0;
INITIAL := t(0), phi1(-1.4), phi2(0.3);
"""


def test_point_mass_double_pendulum_frequencies() -> None:
    """ω² of the two modes hanging down: the roots of the closed-form quadratic."""
    md = kidym.modes(kidym.derive(kidym.parse(POINT_DP)))
    assert md.equilibrium is not None and md.equilibrium.stability == "stable"
    w2 = sorted(m.frequency ** 2 for m in md.modes)
    np.testing.assert_allclose(w2, point_double_pendulum_omega2(1.3, 0.6, 0.9, 1.4, 9.81),
                               rtol=1e-12)
    assert md.stability == "marginal"          # undamped: Re s = 0
    assert all(abs(m.damping_ratio) < 1e-10 and m.oscillatory for m in md.modes)
    # the slow mode: both links on the same side (in-phase), the fast one opposed
    slow = min(md.modes, key=lambda m: m.frequency)
    assert (slow.shape["phi1"] * slow.shape["phi2"]).real > 0


@pytest.mark.parametrize("m1, l1, m2, l2", [(1.17, 1.92, 0.55, 1.91), (1.23, 0.35, 1.58, 1.21),
                                            (0.83, 1.02, 1.71, 1.0)])
def test_undamped_modes_numbered_from_the_slowest(m1, l1, m2, l2) -> None:
    """Undamped: Re s is ±1e-16 noise and must not decide the numbering (the first two
    parameter sets numbered the fast mode first on the old code); mode 1 is the slowest,
    the frequencies those of the closed form."""
    text = POINT_DP.replace("m1 = 1.3; l1 = 0.9; m2 = 0.6; l2 = 1.4;",
                            f"m1 = {m1}; l1 = {l1}; m2 = {m2}; l2 = {l2};")
    md = kidym.modes(kidym.derive(kidym.parse(text)))
    w2 = [m.frequency ** 2 for m in md.modes]
    np.testing.assert_allclose(w2, sorted(point_double_pendulum_omega2(m1, m2, l1, l2, 9.81)),
                               rtol=1e-12)


def test_damping_ratio_of_a_damped_oscillator() -> None:
    """``m ẍ + b ẋ + c x = 0``: ``ω = √(c/m)``, ``ζ = b/(2√(c m))``."""
    text = ("m = 2; c = 50; b = 3;\nBlock | Sx(x) | m(m), Jx(0), Jy(0), Jz(0);\n"
            "Cs.x = c; Db.x = b;\nINITIAL := t(0), x(0.1);\n")
    md = kidym.modes(kidym.derive(kidym.parse(text)))
    (mode,) = md.modes
    assert mode.frequency == pytest.approx(5.0, rel=1e-12)
    assert mode.damping_ratio == pytest.approx(3 / (2 * np.sqrt(100)), rel=1e-12)
    assert md.stability == "asymptotically stable"


def test_ball_in_the_bowl_period() -> None:
    """Small oscillations of the ball rolling in the spherical bowl (examples/ball):
    ``T = 2π √(7 (R − r) / (5 g))``."""
    eq = kidym.derive(kidym.load(ROOT / "examples/ball/ball.kdm"))
    md = kidym.modes(eq, {"xC": 0.2, "ωХКуля": 0.0, "ωУКуля": 0.0})
    g = md.linearization.parameters["g"]
    period = 2 * np.pi * np.sqrt(7 * (3.0 - 0.2) / (5 * g))
    assert len(md.modes) == 2          # x and y swings, one frequency
    for m in md.modes:
        assert m.period == pytest.approx(period, rel=1e-12)
    assert set(md.decoupled) >= {"λ0", "λ1", "λ2", "λ3"}


def test_disc_critical_spin() -> None:
    """Upright rolling of a thin uniform disc is stable for ``Ω² > g/(3r)`` — from the
    linearised lean and heading equations ``(A + m r²) θ̈ = m g r θ − (C + m r²) Ω ψ̇``,
    ``A ψ̈ = C Ω θ̇``: ``Ω_c² = m g r A / (C (C + m r²))`` (Neimark & Fufaev, *Dynamics of
    Nonholonomic Systems*, AMS 1972, ch. III; O'Reilly, Nonlinear Dyn. 10 (1996)
    287–305), ``= g/(3r)`` for ``A = m r²/4``, ``C = m r²/2``."""
    eq = kidym.derive(kidym.load(ROOT / "examples/rolling_disc/rolling_disc.kdm"))
    c = kidym.continuation(eq, "phi't", np.linspace(0.0, 8.0, 17),
                           state={"theta": 0.0, "psi't": 0.0, "theta't": 0.0},
                           parameters={"g": 9.81})
    assert len(c.boundaries) == 1
    assert c.boundaries[0] == pytest.approx(np.sqrt(9.81 / (3 * 0.3)), rel=1e-12)
    assert c.stability[0] == "unstable" and c.stability[-1] == "marginal"
    # a hoop (A = m r²/2, C = m r²): the same formula gives Ω_c² = g/(4r)
    text = (ROOT / "examples/rolling_disc/rolling_disc.kdm").read_text(encoding="utf-8")
    text = text.replace("Jx(m*r^2/4), Jy(m*r^2/2), Jz(m*r^2/4)",
                        "Jx(m*r^2/2), Jy(m*r^2), Jz(m*r^2/2)")
    hoop = kidym.continuation(kidym.derive(kidym.parse(text)), "phi't",
                              np.linspace(0.0, 8.0, 17),
                              state={"theta": 0.0, "psi't": 0.0, "theta't": 0.0},
                              parameters={"g": 9.81})
    A, C, m, r = 0.5 * 0.09, 0.09, 1.0, 0.3
    assert hoop.boundaries[0] == pytest.approx(
        np.sqrt(m * 9.81 * r * A / (C * (C + m * r * r))), rel=1e-12)


def test_continuation_plot_and_csv(tmp_path) -> None:
    eq = kidym.derive(kidym.load(ROOT / "examples/rolling_disc/rolling_disc.kdm"))
    c = kidym.continuation(eq, "phi't", np.linspace(2.0, 5.0, 7),
                           state={"theta": 0.0, "psi't": 0.0, "theta't": 0.0})
    png = c.plot(tmp_path / "c.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    rows = c.write_csv(tmp_path / "c.csv").read_text().splitlines()
    assert rows[0].startswith("phi't,max_real,re1,im1") and len(rows) == 8
    with pytest.raises(KeyError, match="neither a parameter nor a state"):
        kidym.continuation(eq, "spin", [1.0, 2.0])


def test_not_stationary_is_said() -> None:
    """A point that is not an equilibrium nor a steady motion: said, not hidden."""
    eq = kidym.derive(kidym.parse(POINT_DP))
    md = kidym.modes(eq, {"phi1": 0.3, "phi2": 0.1}, statics=False)
    assert not md.linearization.stationary
    assert "ẇ ≠ 0" in md.describe()


def test_heavy_top_sleeping_threshold() -> None:
    """The symmetric heavy top upright on its fixed point (examples/heavy_top) sleeps —
    is stable — for ``C² n² > 4 m g l A``, ``A = A₀ + m l²`` its transverse moment of
    inertia about the fixed point, ``C`` the axial one (the Maievski–Klein condition:
    with ``z = α + iβ`` the linearised equation is ``A z̈ − i C n ż − m g l z = 0``,
    ``s = (i C n ± √(4 A m g l − C² n²)) / (2A)``). Below it the two roots have real parts
    ``±μ``; they meet on the imaginary axis at the threshold and stay there: a boundary
    where the real parts reach 0 without changing sign, which the root-finding of the
    old code failed on ("f(a) and f(b) must have different signs")."""
    path = ROOT / "examples/heavy_top/heavy_top.kdm"
    eq = kidym.derive(kidym.load(path))
    c = kidym.continuation(eq, "psi't", np.linspace(0.0, 80.0, 41), state={"alpha": 0.0})
    m, l, g, A0, C = 0.5, 0.02, 9.81, 2e-4, 3e-4
    A = A0 + m * l * l
    assert len(c.boundaries) == 1
    assert c.boundaries[0] == pytest.approx(np.sqrt(4 * m * g * l * A) / C, rel=1e-9)
    assert c.stability[0] == "unstable" and c.stability[-1] == "marginal"
    # below the threshold the real part is μ = √(4 A m g l − C² n²)/(2A) exactly
    n = 20.0
    md = kidym.modes(eq, {"alpha": 0.0, "psi't": n})
    assert md.max_real == pytest.approx(np.sqrt(4 * A * m * g * l - (C * n) ** 2) / (2 * A),
                                        rel=1e-10)
    # other masses and lengths: the formula, not the example's numbers
    c2 = kidym.continuation(eq, "psi't", np.linspace(0.0, 200.0, 21), state={"alpha": 0.0},
                            parameters={"l": 0.05, "A0": 1.6e-4})
    A2 = 1.6e-4 + m * 0.05 ** 2
    assert c2.boundaries[0] == pytest.approx(np.sqrt(4 * m * g * 0.05 * A2) / C, rel=1e-9)
