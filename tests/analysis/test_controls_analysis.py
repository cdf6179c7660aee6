"""Equilibrium, linearisation and modes of closed loops: controls solved from programmed
constraints (``НЕИЗВЕСТНЫЕ``, ``ПРОГРАММНЫЕ СВЯЗИ``, seed 004 (5.1)–(5.6)).

Oracles, each independent of the code under test:

* ``A`` against central differences of the NumPy engine's right-hand side (the solve of
  (5.6) at each state: a second route, nothing differentiated analytically there), also
  on seed 004's skier (pseudo-velocity, five controls);
* ``A``, ``u`` and ``∂u/∂x`` against SymPy: Lagrange's equations by
  ``physics.mechanics`` and the closed loop written out and differentiated symbolically
  (``tests/analysis/sympy_closed_loop.py``) — the example's arm on its circle (two
  controls, two constraints, time-dependent, away from equilibrium), the same arm with
  one height constraint and two torques (least norm), a cart whose position is
  programmed to oscillate, carrying a pendulum (under-actuated);
* spectra: the deviations of the programmed constraints obey ``ÿ = h y + k ẏ`` (5.5),
  so the closed loop's eigenvalues hold the roots of ``s² − k s − h`` per holonomic
  constraint; the rest is the zero dynamics, in closed form here (the pendulum on a
  cart held fixed: ``±i√(g/l)``; a mass on two springs whose ``x + y`` is held by two
  forces of least norm: ``±i√((c1 + c2)/(2m))``; a cart run at a programmed speed, a
  steady motion: ``s = k`` of the first-order law);
* the equilibrium controls against the closed-form gravity torques of an arm held at a
  programmed posture, and a frozen-time equilibrium of a time-dependent constraint
  solved by hand.

On the code before this change every one of these raised "model has controls … not
supported yet" (``test_the_refusal_is_gone``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.simulation.simulate import NumpySystem

from .sympy_closed_loop import cart_pendulum, two_link_arm

ROOT = Path(__file__).parents[2]
ARM_FILE = ROOT / "examples" / "two_link_control" / "two_link_control.kdm"
ARM_TEXT = ARM_FILE.read_text(encoding="utf-8")
ARM_HEIGHT = ARM_TEXT.replace("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fy;")

POSTURE = """РАСЧЕТ := СВОБОДНЫЕ КОЛЕБАНИЯ;
l1 = 1; l2 = 0.8; m1 = 2; m2 = 1.5; g = 9.81;
Q1 = 0.4; Q2 = 0.9;
Link1       | Rz(q1)         | Sx(l1/2), m(m1), Jx(0), Jy(m1*l1^2/12), Jz(m1*l1^2/12);
Link2~Link1 | Sx(l1), Rz(q2) | Sx(l2/2), m(m2), Jx(0), Jy(m2*l2^2/12), Jz(m2*l2^2/12);
Pshoulder.q1 = u1;
Pelbow.q2 = u2;
f1 = q1 - Q1;
f2 = q2 - Q2;
НЕИЗВЕСТНЫЕ := u1, u2;
ПРОГРАММНЫЕ СВЯЗИ := f1(-25, -2), f2(-24, -10);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), q1(0.1), q2(1.5);
"""

CART = """РАСЧЕТ := СВОБОДНЫЕ КОЛЕБАНИЯ;
mc = 3; m = 0.5; l = 0.7; g = 9.81; X0 = 0.2; A = 0; W = 3;
Cart     | Sx(x)  | m(mc), Jx(0), Jy(0), Jz(0);
Bob~Cart | Rz(th) | Sx(l), m(m), Jx(0), Jy(0), Jz(0);
Pdrive.x = u;
fx = x - X0 - A*sin(W*t);
НЕИЗВЕСТНЫЕ := u;
ПРОГРАММНЫЕ СВЯЗИ := fx(-9, -4);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), x(0), th(-1.4);
"""
CART_VALUES = dict(mc=3.0, m=0.5, l=0.7, g=9.81, X0=0.2, A=0.15, W=3.0)

SPRINGS = """РАСЧЕТ := СВОБОДНЫЕ КОЛЕБАНИЯ;
m = 2; c1 = 30; c2 = 50; C0 = 0.6;
Block | Sx(x), Sy(y) | m(m), Jx(0), Jy(0), Jz(0);
Cx.x = c1;
Cy.y = c2;
Px.x = u1;
Py.y = u2;
s = x + y - C0;
НЕИЗВЕСТНЫЕ := u1, u2;
ПРОГРАММНЫЕ СВЯЗИ := s(-16, -10);
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), x(0.1), y(0.1);
"""

PENDULUM = """РАСЧЕТ := СТАТИКА;
m = 1.3; l = 0.9; g = 9.81; P0 = -1.2; A = 0.3; W = 2;
Rod | Rz(phi) | Sx(l), m(m), Jx(0), Jy(0), Jz(0);
Pm.phi = u;
f = phi - P0 - A*sin(W*t);
НЕИЗВЕСТНЫЕ := u;
ПРОГРАММНЫЕ СВЯЗИ := f(-30, -7);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), phi(-1);
"""


def derive(text: str) -> kidym.Equations:
    return kidym.derive(kidym.parse(text))


def law_roots(h: float, k: float) -> list[complex]:
    """The roots of ``s² − k s − h`` (the law ``ÿ = h y + k ẏ``)."""
    return list(np.roots([1.0, -k, -h]).astype(complex))


def same_spectrum(got: np.ndarray, want: list[complex], rtol: float) -> None:
    """Every eigenvalue matched once (greedy nearest), to ``rtol`` of the largest."""
    got = list(np.asarray(got, complex))
    assert len(got) == len(want), (got, want)
    scale = max(abs(w) for w in want)
    for w in want:
        i = int(np.argmin([abs(g - w) for g in got]))
        assert abs(got[i] - w) <= rtol * scale, (got, want)
        got.pop(i)


def central_differences(eq: kidym.Equations, state: dict, t: float,
                        params: dict | None = None) -> np.ndarray:
    """``∂ẏ/∂y`` of the NumPy engine's right-hand side by central differences."""
    system = NumpySystem.build(eq)
    p = system.parameter_vector(params)
    y = np.array([state[n] for n in system.state_names], float)
    J = np.empty((y.size, y.size))
    for k in range(y.size):
        e = np.zeros(y.size)
        e[k] = 1e-6 * max(1.0, abs(y[k]))
        J[:, k] = (system.rhs(t, y + e, p) - system.rhs(t, y - e, p)) / (2 * e[k])
    return J


ARM_STATE = {"q1": 0.3, "q2": 1.2, "q1't": 0.4, "q2't": -0.7}
CART_STATE = {"x": 0.1, "th": -1.2, "x't": 0.3, "th't": 0.8}


def test_the_refusal_is_gone() -> None:
    """The old code refused these models at forming the derivatives."""
    eq = kidym.derive(kidym.load(ARM_FILE))
    lin = kidym.linearize(eq, ARM_STATE, t=0.3)
    assert lin.A.shape == (4, 4) and set(lin.controls) == {"u1", "u2"}


# ------------------------------------------------------------ A by a second route
@pytest.mark.parametrize(("text", "state", "t", "params"), [
    (ARM_TEXT, ARM_STATE, 0.3, None),                     # square, time-dependent
    (ARM_HEIGHT, ARM_STATE, 0.3, None),                   # least norm, ẇ ≠ 0
    (ARM_HEIGHT, {"q1": 0.5, "q2": 1.0, "q1't": 0, "q2't": 0}, 0.0, None),  # least norm
    (CART, CART_STATE, 0.4, {"A": 0.15}),                  # under-actuated, time-dependent
    (SPRINGS, {"x": 0.2, "y": 0.1, "x't": 0.3, "y't": -0.2}, 0.0, None),
], ids=["arm-circle", "arm-height-moving", "arm-height-rest", "cart", "springs"])
def test_A_matches_central_differences_of_the_numpy_rhs(text, state, t, params) -> None:
    eq = derive(text)
    lin = kidym.linearize(eq, state, t=t, parameters=params)
    J = central_differences(eq, state, t, params)
    assert np.abs(lin.A - J).max() <= 1e-7 * np.abs(J).max()


def test_skier_A_matches_central_differences() -> None:
    """Seed 004's skier: a non-holonomic ski (a pseudo-velocity, ``n_q ≠ n_w``), five
    controls and five programmed constraints, a time-dependent track; at a perturbed
    state off the constraints."""
    from kidym.analysis.linearize import operating_point

    eq = kidym.derive(kidym.load(ROOT / "examples" / "skier" / "skier.kdm"))
    assert eq.n_q != eq.n_w and eq.controls.s == 5
    _t, y, _p = operating_point(eq)
    y = y + 0.05 * np.random.default_rng(1).standard_normal(y.size)
    state = dict(zip((str(s) for s in (*eq.coordinates, *eq.speeds)), y))
    lin = kidym.linearize(eq, state, t=0.7)
    J = central_differences(eq, state, 0.7)
    assert np.abs(lin.A - J).max() <= 1e-7 * np.abs(J).max()


def test_B_of_parameters_as_inputs_matches_differences() -> None:
    """``B`` by parameters named as inputs (the program's ``X0``, gravity) through the
    closed loop, against differences of the right-hand side in the parameters; the
    cart's row by hand: ``ẍ = h (x − X0 − A sin Wt) + k ẋ − …``, so ``∂ẍ/∂X0 = −h``."""
    eq = derive(CART)
    lin = kidym.linearize(eq, CART_STATE, t=0.4, parameters={"A": 0.15}, inputs=["X0", "g"])
    system = NumpySystem.build(eq)
    y = np.array([CART_STATE[n] for n in system.state_names])
    for j, name in enumerate(("X0", "g")):
        base = {"A": 0.15, **{k: v for k, v in CART_VALUES.items() if k == name}}
        hi = system.rhs(0.4, y, system.parameter_vector({**base, name: base[name] + 1e-6}))
        lo = system.rhs(0.4, y, system.parameter_vector({**base, name: base[name] - 1e-6}))
        fd = (hi - lo) / 2e-6
        assert np.abs(lin.B[:, j] - fd).max() <= 1e-7 * max(1.0, np.abs(fd).max())
    assert lin.B[lin.states.index("x't"), 0] == pytest.approx(9.0, rel=1e-12)
    assert lin.control_input_gain.shape == (1, 2)


# ----------------------------------------------------------------- A by SymPy
@pytest.fixture(scope="module")
def arm_values() -> dict[str, float]:
    return kidym.parse(ARM_TEXT).parameter_values


@pytest.mark.parametrize("path", ["circle", "height"])
def test_arm_closed_loop_matches_sympy(path: str, arm_values) -> None:
    """The example's arm at a moving state, at an instant of its time-dependent path:
    ``A``, the controls and the feedback gain ``∂u/∂x`` (1e-9)."""
    oracle = two_link_arm(arm_values, path)
    eq = derive(ARM_TEXT if path == "circle" else ARM_HEIGHT)
    t = 0.3
    lin = kidym.linearize(eq, ARM_STATE, t=t)
    x = [ARM_STATE[n] for n in lin.states]
    A = oracle.A(x, t)
    assert np.abs(lin.A - A).max() <= 1e-9 * np.abs(A).max()
    u = oracle.u(x, t)
    assert np.abs(np.array(list(lin.controls.values())) - u).max() <= 1e-9 * np.abs(u).max()
    K = oracle.gain(x, t)
    assert lin.control_gain.shape == (2, 4)
    assert np.abs(lin.control_gain - K).max() <= 1e-9 * np.abs(K).max()
    assert not lin.stationary


def test_least_norm_arm_at_its_equilibrium_matches_sympy(arm_values) -> None:
    """At an equilibrium (``ẇ = 0`` to rounding) the least-norm ``Γ = G M⁻¹ H`` still
    depends on the state through ``M``: ``∂M/∂q`` enters ``∂u/∂x`` (without it ``A`` is
    off by a third)."""
    eq = derive(ARM_HEIGHT)
    eqm = kidym.equilibrium(eq, parameters={"W": 0}, rtol=1e-14)
    state = {**eqm.coordinates, "q1't": 0.0, "q2't": 0.0}
    lin = kidym.linearize(eq, state, parameters={"W": 0})
    assert lin.stationary and np.abs(lin.wdot).max() < 1e-12
    oracle = two_link_arm({**arm_values, "W": 0.0}, "height")
    x = [state[n] for n in lin.states]
    A, K = oracle.A(x), oracle.gain(x)
    assert np.abs(lin.A - A).max() <= 1e-9 * np.abs(A).max()
    assert np.abs(lin.control_gain - K).max() <= 1e-9 * np.abs(K).max()
    assert np.abs(oracle.u(x) - [eqm.controls["u1"], eqm.controls["u2"]]).max() <= 1e-9 * 25


def test_cart_pendulum_closed_loop_matches_sympy() -> None:
    oracle = cart_pendulum(CART_VALUES, -9, -4)
    eq = derive(CART)
    t = 0.4
    lin = kidym.linearize(eq, CART_STATE, t=t, parameters={"A": CART_VALUES["A"]})
    x = [CART_STATE[n] for n in lin.states]
    A = oracle.A(x, t)
    assert np.abs(lin.A - A).max() <= 1e-9 * np.abs(A).max()
    assert lin.controls["u"] == pytest.approx(oracle.u(x, t)[0], rel=1e-9)
    np.testing.assert_allclose(lin.control_gain, oracle.gain(x, t), rtol=1e-9,
                               atol=1e-9 * np.abs(oracle.gain(x, t)).max())


# ------------------------------------------------------ spectra and zero dynamics
def test_arm_held_at_a_posture_has_the_laws_roots_and_the_gravity_torques() -> None:
    """Both joints programmed: the spectrum is the roots of the two laws (5.5), and the
    equilibrium controls are the gravity torques at the posture."""
    eq = derive(POSTURE)
    md = kidym.modes(eq)
    eqm = md.equilibrium
    assert eqm.coordinates == pytest.approx({"q1": 0.4, "q2": 0.9}, abs=1e-10)
    g, l1, l2, m1, m2, q1, q2 = 9.81, 1.0, 0.8, 2.0, 1.5, 0.4, 0.9
    u1 = g * ((m1 * l1 / 2 + m2 * l1) * np.cos(q1) + m2 * l2 / 2 * np.cos(q1 + q2))
    u2 = g * m2 * l2 / 2 * np.cos(q1 + q2)
    assert eqm.controls["u1"] == pytest.approx(u1, rel=1e-10)
    assert eqm.controls["u2"] == pytest.approx(u2, rel=1e-10)
    same_spectrum(md.eigenvalues, law_roots(-25, -2) + law_roots(-24, -10), 1e-10)
    assert eqm.stability == "stable" and md.stability == "asymptotically stable"
    assert "the eigenvalues of the linearised A decide stability" in eqm.describe()


def test_cart_held_fixed_leaves_the_pendulum_swinging() -> None:
    """Under-actuated: the cart's position programmed (one control, one constraint); the
    rest of the spectrum is the zero dynamics, the pendulum on a fixed support."""
    eq = derive(CART)
    md = kidym.modes(eq)
    assert md.equilibrium.coordinates["x"] == pytest.approx(0.2, abs=1e-12)
    assert md.equilibrium.coordinates["th"] == pytest.approx(-np.pi / 2, abs=1e-12)
    assert md.equilibrium.controls["u"] == pytest.approx(0.0, abs=1e-10)
    w = np.sqrt(9.81 / 0.7)
    # the law's double root −2 is a Jordan block: computed to ~√ε of its size
    same_spectrum(md.eigenvalues, [*law_roots(-9, -4), 1j * w, -1j * w], 1e-7)
    assert md.stability == "marginal" and md.equilibrium.stability == "undecided"


def test_least_norm_springs_spectrum_and_equilibrium() -> None:
    """Two forces, one constraint ``x + y = C0``: least-norm controls are equal; the
    zero dynamics ``x − y`` vibrates at ``√((c1 + c2)/(2m))``."""
    eq = derive(SPRINGS)
    md = kidym.modes(eq)
    c1, c2, m, c0 = 30.0, 50.0, 2.0, 0.6
    eqm = md.equilibrium
    assert eqm.coordinates["x"] == pytest.approx(c0 * c2 / (c1 + c2), rel=1e-12)
    assert eqm.coordinates["y"] == pytest.approx(c0 * c1 / (c1 + c2), rel=1e-12)
    for u in ("u1", "u2"):
        assert eqm.controls[u] == pytest.approx(c0 * c1 * c2 / (c1 + c2), rel=1e-12)
    w = np.sqrt((c1 + c2) / (2 * m))
    same_spectrum(md.eigenvalues, [*law_roots(-16, -10), 1j * w, -1j * w], 1e-10)


def test_cart_at_a_programmed_speed_is_a_steady_motion() -> None:
    """A first-order programmed constraint ``g = x' − V`` (``ż = k z``): the cart runs at
    ``V``, the bob hangs; about that steady motion the spectrum is ``s = k``, the
    pendulum's ``±i√(g/l)``, and the cart's position, which nothing depends on, split
    off with eigenvalue 0."""
    eq = derive(CART.replace("fx = x - X0 - A*sin(W*t);", "gv = x't - V; V = 1.5;")
                .replace("fx(-9, -4)", "gv(-5)"))
    md = kidym.modes(eq, {"th": -np.pi / 2, "x't": 1.5, "th't": 0.0}, statics=False)
    assert md.linearization.stationary and md.decoupled == ("x",)
    w = np.sqrt(9.81 / 0.7)
    same_spectrum(md.eigenvalues, [-5.0, 1j * w, -1j * w], 1e-10)
    assert md.linearization.controls["u"] == pytest.approx(0.0, abs=1e-12)
    # the gain on the speed, by hand: linearised at the hanging bob, the cart's equation
    # is (mc + m) ẍ + m l θ̈ = u and the bob's l θ̈ = −ẍ (+ terms in θ), so mc ẍ = u + …;
    # ẍ = k (x' − V) then needs ∂u/∂x' = k mc
    i = md.linearization.states.index("x't")
    assert md.linearization.control_gain[0, i] == pytest.approx(-5.0 * 3, rel=1e-10)


def test_continuation_along_the_pendulum_length() -> None:
    """The zero dynamics' frequency follows √(g/l) along l; the law's roots stay."""
    eq = derive(CART)
    ls = np.linspace(0.4, 1.6, 5)
    c = kidym.continuation(eq, "l", ls)
    for l_, ev in zip(ls, c.eigenvalues):
        assert np.nanmax(ev.imag) == pytest.approx(np.sqrt(9.81 / l_), rel=1e-10)
    assert set(c.stability) == {"marginal"} and c.boundaries == ()


# --------------------------------------------------- time-dependent: frozen statics
def test_frozen_time_equilibrium_of_a_moving_program() -> None:
    """``f = φ − P0 − A sin Wt``: at frozen ``t₀`` with ``φ' = 0``, ``ẇ = 0`` needs
    ``b = −A W² sin Wt₀ + h f − k A W cos Wt₀ = 0``; the torque then holds the rod
    against gravity, ``u = m g l cos φ``; one constraint, one degree of freedom, so the
    spectrum is the law's roots."""
    eq = derive(PENDULUM)
    m, l_, g, p0, a, w, h, k, t0 = 1.3, 0.9, 9.81, -1.2, 0.3, 2.0, -30.0, -7.0, 0.35
    eqm = kidym.equilibrium(eq, t=t0)
    f = (a * w ** 2 * np.sin(w * t0) + k * a * w * np.cos(w * t0)) / h
    phi = p0 + a * np.sin(w * t0) + f
    assert eqm.time_dependent and eqm.t == t0
    assert eqm.coordinates["phi"] == pytest.approx(phi, rel=1e-12)
    assert eqm.controls["u"] == pytest.approx(m * g * l_ * np.cos(phi), rel=1e-10)
    same_spectrum(eqm.eigenvalues, law_roots(h, k), 1e-10)
    assert "frozen at t = 0.35" in eqm.describe()


# ------------------------------------------------------------------- the edges
def test_unreachable_constraint_at_the_point_is_named() -> None:
    """The arm stretched (q2 = 0): both path constraints' rows of Γ are parallel."""
    eq = kidym.derive(kidym.load(ARM_FILE))
    with pytest.raises(np.linalg.LinAlgError, match=r"cannot reach programmed constraint `fy`"):
        kidym.linearize(eq, {"q1": 0.2, "q2": 0.0, "q1't": 0.0, "q2't": 0.0})
    with pytest.raises(ValueError, match=r"the controls cannot reach a programmed constraint"):
        kidym.equilibrium(eq, state={"q1": 0.2, "q2": 0.0})


def test_symbolic_form_is_refused_and_coefficients_are_checked() -> None:
    eq = derive(CART)
    lin = kidym.linearize(eq, CART_STATE)
    with pytest.raises(ValueError, match="not given for a model with controls"):
        lin.symbolic()
    eq2 = derive(CART.replace("fx(-9, -4)", "fx(-9, kk)").replace("W = 3;", "W = 3; kk = -4;"))
    with pytest.raises(ValueError, match="coefficient k of programmed constraint `fx`"):
        kidym.linearize(eq2, CART_STATE, parameters={"kk": 2.0})


# ------------------------------------------------------------------- the CLI
def test_cli_statics_modes_and_linearize(tmp_path, capsys) -> None:
    model = tmp_path / "arm.kdm"
    model.write_text(POSTURE.replace("СВОБОДНЫЕ КОЛЕБАНИЯ", "СТАТИКА"), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(model), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "u1 = 24.16351898  (control)" in text
    with (out / "results.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["t", "q1", "q2", "q1't", "q2't", "u1", "u2"]
    assert json.loads((out / "equilibrium.json").read_text("utf-8"))["stability"] == "stable"
    assert main(["modes", str(model)]) == 0
    assert "asymptotically stable" in capsys.readouterr().out
    npz = tmp_path / "lin.npz"
    assert main(["linearize", str(ARM_FILE), "--state", "q1=0.3", "--state", "q2=1.2",
                 "--npz", str(npz)]) == 0
    text = capsys.readouterr().out
    assert "the feedback gain K = ∂u/∂x" in text
    with np.load(npz) as z:
        assert list(z["control_names"]) == ["u1", "u2"] and z["control_gain"].shape == (2, 4)
