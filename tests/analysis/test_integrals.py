"""First integrals found automatically (issue 17, item 6).

Oracles: closed-form integrals written by hand (a spherical pendulum's ``p_ψ``, the
Jacobi integral of a bead on a rotating hoop, the ball's ``ω·n`` in a spherical bowl),
and conservation along runs of both engines. No false integral on damped or driven
models.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import kidym
from kidym.analysis.integrals import first_integrals, integral_drift
from kidym.cli import main
from kidym.simulation.layout import parameter_vector
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import EXAMPLES

SPHERICAL = """
m = 1.5; l = 0.8; g = 9.81;
Bob | Rz(psi), Rx(theta), Sz(-l) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := theta(0.7), psi(0), theta't(0.3), psi't(2);
TIME := t(0, 5);
"""

#: A bead on a hoop that turns at the constant rate W about the vertical: rheonomic,
#: E not conserved, the Jacobi integral is.
HOOP = """
m = 0.4; r = 0.6; g = 9.81; W = 5;
Bead | Rz(W*t), Rx(th), Sz(-r) | m, 0, 0, 0;
GRAVITY := 0, 0, -g;
INITIAL := th(0.4), th't(0.5);
TIME := t(0, 5);
"""

PENDULUM = """
m = 1; l = 1; g = 9.81; b = 0.3; A = 2; W = 1.3;
Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
GRAVITY := 0, -g, 0;
INITIAL := phi(-1), phi't(0.5);
TIME := t(0, 5);
"""


def _values(found, name, states, t=0.0):
    f = found.evaluator()
    p = parameter_vector(found.equations.model)
    k = [i.name for i in found].index(name)
    return np.array([f(t, y, p)[k] for y in states])


def _random_states(rng, n, lo, hi):
    return rng.uniform(lo, hi, size=(n, len(lo)))


def test_spherical_pendulum_cyclic_momentum_against_closed_form():
    found = first_integrals(kidym.parse(SPHERICAL))
    kinds = {i.name: i for i in found}
    assert set(kinds) == {"E", "p_psi"}
    assert kinds["p_psi"].kind == "cyclic momentum"
    assert kinds["p_psi"].proof == kinds["E"].proof == "symbolic"
    rng = np.random.default_rng(1)
    y = _random_states(rng, 20, [-3, -1.5, -3, -3], [3, 1.5, 3, 3])  # psi, theta, rates
    names = [str(s) for s in (*found.equations.coordinates, *found.equations.speeds)]
    assert names == ["psi", "theta", "psi't", "theta't"]
    m, l = 1.5, 0.8
    expected = m * l**2 * np.sin(y[:, 1]) ** 2 * y[:, 2]
    np.testing.assert_allclose(_values(found, "p_psi", y), expected, rtol=1e-12, atol=1e-12)


def test_hoop_jacobi_integral_against_closed_form_and_no_energy():
    found = first_integrals(kidym.parse(HOOP))
    assert [i.kind for i in found] == ["jacobi"]
    assert found[0].proof == "symbolic"
    m, r, g, W = 0.4, 0.6, 9.81, 5.0
    rng = np.random.default_rng(2)
    y = _random_states(rng, 20, [-3, -3], [3, 3])
    th, thd = y[:, 0], y[:, 1]
    h = 0.5 * m * r**2 * (thd**2 - W**2 * np.sin(th) ** 2) - m * g * r * np.cos(th)
    for t in (0.0, 1.7):
        np.testing.assert_allclose(_values(found, "h", y, t), h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("extra", ["Dd.phi = b;", "Pd.phi = A*sin(W*t);",
                                   "Pd.phi = A*phi't;", "Dd.phi = 1e-6;"],
                         ids=["damped", "driven", "non-potential", "weakly-damped"])
def test_no_false_integral(extra):
    found = first_integrals(kidym.parse(PENDULUM + extra))
    assert not found.skipped
    assert list(found) == []
    assert "none found" in found.lines()[0]


def test_conservative_pendulum_has_its_energy():  # the control of the test above
    found = first_integrals(kidym.parse(PENDULUM))
    assert [i.kind for i in found] == ["energy"]


def test_ball_in_bowl_omega_n():
    """Seed 000's ball: ``ω·n`` (``n`` from the bowl's centre ``(0, 0, R)`` to the ball's)
    is found as a combination, equal to ``−(R−r)/R · ω·n`` by hand."""
    model = kidym.load(EXAMPLES / "ball" / "ball.kdm")
    found = first_integrals(model)
    lin = [i for i in found if i.kind == "linear"]
    assert len(lin) == 1
    R, r = 3.0, 0.2
    rng = np.random.default_rng(3)
    names = [str(s) for s in (*found.equations.coordinates, *found.equations.speeds)]
    y = np.zeros((20, len(names)))
    y[:, 0:2] = rng.uniform(-1.5, 1.5, size=(20, 2))
    lam = rng.normal(size=(20, 4))
    y[:, 2:6] = lam / np.linalg.norm(lam, axis=1)[:, None]
    y[:, 6:9] = rng.normal(size=(20, 3))
    xC, yC = y[:, 0], y[:, 1]
    zC = R - np.sqrt((R - r) ** 2 - xC**2 - yC**2)
    n = np.column_stack([xC, yC, zC - R]) / (R - r)
    omega_n = np.sum(y[:, 6:9] * n, axis=1)   # ωХКуля… are fixed-frame projections
    np.testing.assert_allclose(_values(found, lin[0].name, y), -(R - r) / R * omega_n,
                               rtol=1e-9, atol=1e-12)


#: examples and the integrals found on them; each is conserved along a run
EXAMPLE_INTEGRALS = {
    "ball/ball.kdm": {"E", "p_ωZКуля", "I1"},
    "double_pendulum/double_pendulum.kdm": {"E"},
    "chaplygin_sleigh/chaplygin_sleigh.kdm": {"E"},
    "rolling_disc/rolling_disc.kdm": {"E"},
    "free_body/free_body.kdm": {"E"},
    "wing_nut/wing_nut.kdm": {"E", "p_psi"},
    "chain/chain3.kdm": {"E"},
    # virtual potentials (stiff: 2 s runs); the cycloid's hinge moves at the speed V,
    # so E is not conserved but E − V·p_x is
    "virtual_constraints/test1_circle.kdm": {"E"},
    "virtual_constraints/test3_cycloid.kdm": {"I1"},
    "virtual_constraints/test5_sphere.kdm": {"E"},
}


@pytest.mark.parametrize("path", sorted(EXAMPLE_INTEGRALS))
def test_example_integrals_conserved(path):
    model = kidym.load(EXAMPLES / path)
    found = first_integrals(model)
    assert {i.name for i in found} == EXAMPLE_INTEGRALS[path]
    t_end = 2.0 if "virtual" in path else min(model.t_end, 5.0)
    # the stiff wall of the sphere needs steps below its period (0.05/√α, as its README)
    max_step = 0.05 / np.sqrt(5e4) if "sphere" in path else np.inf
    result = kidym.simulate(model, t_end=t_end, rtol=1e-10, atol=1e-12, max_step=max_step)
    drift = integral_drift(found, result)
    assert result.stats["first_integrals"] is drift   # recorded in the Result
    # a stiff wall (α = 5e4) costs accuracy at every bounce: 1e-6 at rtol 1e-10
    bound = 1e-5 if "sphere" in path else 1e-7
    for name, d in drift.items():
        assert d["relative"] is not None and d["relative"] < bound, (name, d)


@pytest.mark.parametrize("path", ["ball/ball.kdm", "wing_nut/wing_nut.kdm"])
def test_integrals_conserved_compiled_engine(path):
    model = kidym.load(EXAMPLES / path)
    found = first_integrals(model)
    result = kidym.simulate(model, t_end=5.0, engine="compiled", rtol=1e-10, atol=1e-12)
    drift = integral_drift(found, result)
    assert set(drift) == EXAMPLE_INTEGRALS[path]
    for name, d in drift.items():
        assert d["relative"] < 1e-7, (name, d)


def test_drift_sees_an_inaccurate_run():
    """The monitor is not blind: a loose tolerance shows as a larger drift."""
    model = kidym.load(EXAMPLES / "double_pendulum" / "double_pendulum.kdm")
    found = first_integrals(model)
    tight = integral_drift(found, kidym.simulate(model, rtol=1e-11, atol=1e-13))
    loose = integral_drift(found, kidym.simulate(model, method="RK45", rtol=1e-4, atol=1e-6))
    assert loose["E"]["max_abs"] > 100 * tight["E"]["max_abs"]


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("amplitude", [0.0, 0.02])   # a fixed and a vibrating table
def test_drift_measured_between_the_resets_of_events(engine, amplitude):
    """An impact (``СОБЫТИЯ``) changes the ball's energy by a jump: physics, not drift.

    Oracle: the energy ``m g z + m ż²/2`` computed here from the run, constant between
    the impacts the run recorded; over the whole run it is not (so measuring from
    ``I(0)`` would report the impacts as drift)."""
    model = kidym.load(EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm")
    params = {"A": amplitude}
    found = first_integrals(model, parameters=params)
    assert [i.name for i in found] == ["E"]
    result = kidym.simulate(model, engine=engine, parameters=params, rtol=1e-10,
                            atol=1e-12)
    drift = integral_drift(found, result, parameters=params)["E"]
    m, g = 0.1, 9.81
    energy = m * g * result.values["z"] + m * result.values["z't"] ** 2 / 2
    hits = np.asarray(result.stats["events"]["t"])
    assert len(hits) >= 5 and drift["resets"] == len(hits)
    starts = [0, *(int(np.searchsorted(result.t, te)) for te in hits)]
    mine = max(np.max(np.abs(energy[a:b] - energy[a]))
               for a, b in zip(starts, [*starts[1:], len(result.t)]))
    assert drift["max_abs"] == pytest.approx(mine, rel=1e-6, abs=1e-12)
    assert drift["relative"] < 1e-7
    assert np.max(np.abs(energy - energy[0])) > 0.1 * energy[0]


#: The hoop of HOOP with the bead's distance from the centre a coordinate held by a
#: holonomic constraint (scleronomic, in a rheonomic model): h is conserved, E is not.
HOOP_CONSTRAINED = """
m = 0.4; r = 0.6; g = 9.81; W = 5;
Bead | Rz(W*t), Rx(th), Sz(-rho) | m, 0, 0, 0;
f = rho - r;
УРАВНЕНИЯ := f;
GRAVITY := 0, 0, -g;
INITIAL := th(0.4), th't(0.5), rho(0.6);
TIME := t(0, 5);
"""

#: The same bead in Cartesian coordinates, on the sphere and in the turning plane of the
#: hoop: rheonomic constraints that do work. Its integral E − W·L_z is not a constant
#: combination of the candidates (L_z = m(x y' − y x')): nothing must be found — and E,
#: conserved by the unconstrained particle (ẇ = M⁻¹F), must not be.
BEAD_CARTESIAN = """
m = 0.4; r = 0.6; g = 9.81; W = 5;
Bead | Sx(x), Sy(y), Sz(z) | m, 0, 0, 0;
f1 = x*sin(W*t) - y*cos(W*t);
f2 = x^2 + y^2 + z^2 - r^2;
УРАВНЕНИЯ := f1, f2;
GRAVITY := 0, 0, -g;
INITIAL := x(0.3), z(-0.5), y't(1.5);
TIME := t(0, 5);
"""

FOUR_BAR = EXAMPLES / "four_bar" / "four_bar.kdm"


def _four_bar_energy(y):
    """T + Π of the four-bar's three uniform rods, by hand (planar rigid bodies)."""
    a, b, c, m1, m2, m3, g = 0.2, 0.6, 0.5, 1.0, 2.0, 1.5, 9.81
    q1, q2, q3, w1, w2, w3 = y.T
    th2, om2 = q1 + q2, w1 + w2
    vx = -a * np.sin(q1) * w1 - b / 2 * np.sin(th2) * om2
    vy = a * np.cos(q1) * w1 + b / 2 * np.cos(th2) * om2
    T = (m1 * a**2 / 6 * w1**2 + m2 / 2 * (vx**2 + vy**2) + m2 * b**2 / 24 * om2**2
         + m3 * c**2 / 6 * w3**2)
    V = g * (m1 * a / 2 * np.sin(q1) + m2 * (a * np.sin(q1) + b / 2 * np.sin(th2))
             + m3 * c / 2 * np.sin(q3))
    return T + V


def test_four_bar_energy_on_the_constraint_manifold():
    """The closed loop (``УРАВНЕНИЯ``): random states on ``Φ = 0``, ``Φ̇ = 0``, rates with
    the augmented system's ``ẇ``; the energy is found (proved: scleronomic constraints
    do no work) and is the rods' ``T + Π`` written by hand."""
    found = first_integrals(kidym.load(FOUR_BAR))
    assert not found.skipped
    assert [(i.name, i.kind, i.proof) for i in found] == [("E", "energy", "symbolic")]
    y = np.random.default_rng(4).uniform(-3, 3, size=(20, 6))
    np.testing.assert_allclose(_values(found, "E", y), _four_bar_energy(y), rtol=1e-12)


@pytest.mark.parametrize("extra", ["Dd.q1 = 0.3;", "Pd.q3 = 2*sin(3*t);"],
                         ids=["damped", "driven"])
def test_four_bar_no_false_integral(extra):
    text = FOUR_BAR.read_text(encoding="utf-8") + extra + "\n"
    found = first_integrals(kidym.parse(text))
    assert not found.skipped and list(found) == []


def test_rheonomic_model_with_a_constraint_keeps_its_jacobi_integral():
    found = first_integrals(kidym.parse(HOOP_CONSTRAINED))
    assert [(i.name, i.proof) for i in found] == [("h", "symbolic")]
    m, r, g, W = 0.4, 0.6, 9.81, 5.0
    rng = np.random.default_rng(5)
    th, thd = rng.uniform(-3, 3, size=(2, 20))
    y = np.column_stack([th, np.full(20, r), thd, np.zeros(20)])   # on the manifold
    h = 0.5 * m * r**2 * (thd**2 - W**2 * np.sin(th) ** 2) - m * g * r * np.cos(th)
    np.testing.assert_allclose(_values(found, "h", y, 1.3), h, rtol=1e-12, atol=1e-12)


def test_constraints_that_do_work_give_no_false_energy():
    assert list(first_integrals(kidym.parse(BEAD_CARTESIAN))) == []
    # the control: with the plane at rest (W = 0) the energy is an integral again
    still = first_integrals(kidym.parse(BEAD_CARTESIAN.replace("W = 5", "W = 0")))
    assert [i.name for i in still] == ["E"]


def test_rolling_ball_omega_n():
    """``КАЧЕНИЕ`` (examples/ball/ball_rolling.kdm: the contact and rolling written by
    kidym, six speeds, three constraints): the energy and the ``ω·n`` integral, here
    ``−J (R − r)/R · ω·n`` with ``J = 0.4 m r²``, by hand at states on the bowl."""
    found = first_integrals(kidym.load(EXAMPLES / "ball" / "ball_rolling.kdm"))
    assert [i.kind for i in found] == ["energy", "linear"]
    names = [str(s) for s in (*found.equations.coordinates, *found.equations.speeds)]
    assert names[:3] == ["xC", "yC", "zC"] and names[-3:] == ["ωXКуля", "ωYКуля", "ωZКуля"]
    R, r, J = 3.0, 0.2, 0.4 * 0.2**2
    rng = np.random.default_rng(6)
    y = np.zeros((20, len(names)))
    y[:, 0:2] = rng.uniform(-1.5, 1.5, size=(20, 2))
    y[:, 2] = R - np.sqrt((R - r) ** 2 - y[:, 0] ** 2 - y[:, 1] ** 2)
    lam = rng.normal(size=(20, 4))
    y[:, 3:7] = lam / np.linalg.norm(lam, axis=1)[:, None]
    y[:, 10:13] = rng.normal(size=(20, 3))
    n = np.column_stack([y[:, 0], y[:, 1], y[:, 2] - R]) / (R - r)
    omega_n = np.sum(y[:, 10:13] * n, axis=1)
    np.testing.assert_allclose(_values(found, found[1].name, y), -J * (R - r) / R * omega_n,
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("case", ["four_bar", "ball_rolling", "hoop"])
def test_constrained_integrals_conserved_in_both_engines(engine, case):
    model = {"four_bar": lambda: kidym.load(FOUR_BAR),
             "ball_rolling": lambda: kidym.load(EXAMPLES / "ball" / "ball_rolling.kdm"),
             "hoop": lambda: kidym.parse(HOOP_CONSTRAINED)}[case]()
    found = first_integrals(model)
    assert len(found) >= 1
    result = kidym.simulate(model, t_end=5.0, engine=engine, rtol=1e-10, atol=1e-12)
    drift = integral_drift(found, result)
    assert set(drift) == {i.name for i in found}
    for name, d in drift.items():
        assert d["relative"] < 1e-7, (name, d)


def test_cli_check_and_run(tmp_path, capsys):
    path = EXAMPLES / "wing_nut" / "wing_nut.kdm"
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "first integrals (2" in out and "p_psi = ∂T/∂psi't" in out
    assert "momentum of the cyclic coordinate psi" in out
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--no-plots", "-q",
                 "--t-end", "2"]) == 0
    out = capsys.readouterr().out
    assert "first integral p_psi (cyclic momentum): max |I - I(0)| =" in out
    stats = json.loads((tmp_path / "o" / "results.json").read_text())["stats"]
    assert set(stats["first_integrals"]) == {"E", "p_psi"}
    assert stats["first_integrals"]["E"]["relative"] < 1e-7
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--no-plots", "-q",
                 "--t-end", "2", "--no-integrals"]) == 0
    assert "first integral" not in capsys.readouterr().out


def test_cli_check_and_run_of_a_model_with_constraints(tmp_path, capsys):
    assert main(["check", str(FOUR_BAR)]) == 0
    out = capsys.readouterr().out
    assert "first integrals (1, among" in out and "    E = T + Π  [energy" in out
    assert main(["run", str(FOUR_BAR), "--out", str(tmp_path / "o"), "--no-plots", "-q",
                 "--t-end", "2"]) == 0
    assert "first integral E (energy): max |I - I(0)| =" in capsys.readouterr().out
    stats = json.loads((tmp_path / "o" / "results.json").read_text())["stats"]
    assert stats["first_integrals"]["E"]["relative"] < 1e-7
    # kinetostatics (no degrees of freedom): said, not searched
    assert main(["check", str(EXAMPLES / "slider_crank" / "slider_crank.kdm")]) == 0
    assert ("first integrals: not searched (no degrees of freedom: the constraints "
            "prescribe the motion)") in capsys.readouterr().out


#: A disc turning freely about the vertical, a bead on it at the prescribed radius
#: ``ξ(t)`` (§2.4d). Closed form: no moment about the axis, so ``p_φ = (J + m ξ²) φ̇``
#: is an integral whatever ξ does; ``E − h = m ξ̇²`` (``T = ½(J + m ξ²) φ̇² + ½ m ξ̇²``,
#: ``h = ½(J + m ξ²) φ̇² − ½ m ξ̇²``) is a function of time alone: constant where ξ̇ is,
#: so its rate is zero at every state, but it jumps by ``m a²`` where ξ̇ jumps from 0
#: to ``a`` — no integral.
BEAD = """
m = 1; J = 0.5; l0 = 1; a = 0.5; T1 = {T1};
xi = l0 + a*{ramp};
Disk | Rz(phi) | m(2), Jx(J), Jy(J), Jz(J);
Bead~Disk | Sx(xi) | m(m), Jx(0), Jy(0), Jz(0);
INITIAL := phi't(1);
TIME := t(0, 10);
"""


def test_a_jump_of_a_prescribed_rate_gives_no_false_integral():
    """Before: ``I1 = T + Π − Σ q't ∂L/∂q't − L`` reported as a linear integral (zero rate
    at every random state, on either side of the jump at T1 = 5)."""
    model = kidym.parse(BEAD.format(T1=5, ramp="(t < T1 ? 0 ! t - T1)"))
    for seed in range(3):
        found = first_integrals(model, seed=seed)
        assert [i.name for i in found] == ["p_phi"], found.lines()
        assert found.breakpoints == pytest.approx((5.0,), abs=1e-12)
        (line,) = found.rejected
        jump = float(line.split("jumps by ")[1].split()[0])
        assert jump == pytest.approx(1 * 0.5**2, rel=1e-6)       # m a²
        assert "at t = 5," in line


def test_both_sides_of_a_jump_near_the_end_are_sampled():
    """The ramp starting at T1 = 9.97 of a 10 s span: before, the 30 random times all
    fell before it (probability 0.91), where ξ is constant and every candidate's rate
    is identically zero, so none was kept — not even ``p_φ``. One sample in each piece
    between breakpoints sees ξ̇ ≠ 0."""
    model = kidym.parse(BEAD.format(T1=9.97, ramp="(t < T1 ? 0 ! t - T1)"))
    found = first_integrals(model, seed=0)
    assert [i.name for i in found] == ["p_phi"], found.lines()
    eq = found.equations
    evaluate = found.evaluator()
    p = parameter_vector(eq.model)
    for t, phidot in ((1.0, 2.0), (9.99, -0.7)):
        xi = 1 + 0.5 * max(t - 9.97, 0.0)
        y = np.array([0.3, phidot])
        assert evaluate(t, y, p)[0] == pytest.approx((0.5 + xi**2) * phidot, rel=1e-12)


def test_a_kink_without_a_jump_keeps_its_integrals():
    """``ξ = l0 + a |t − T1|``: ξ̇ changes sign at T1 but ``m ξ̇²`` does not jump (it is
    the constant ``m a²``, no integral either: a constant says nothing); ``p_φ`` stays."""
    model = kidym.parse(BEAD.format(T1=5, ramp="abs(t - T1)"))
    found = first_integrals(model, seed=0)
    assert [i.name for i in found] == ["p_phi"] and not found.rejected
    assert found.breakpoints == pytest.approx((5.0,), abs=1e-12)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_the_integral_kept_is_conserved_across_the_jump(engine):
    """Along runs of both engines through the jump at T1 = 5, ``p_φ`` holds (to the
    integrators' accuracy across a jump of the right-hand side)."""
    model = kidym.parse(BEAD.format(T1=5, ramp="(t < T1 ? 0 ! t - T1)"))
    found = first_integrals(model, seed=0)
    result = kidym.simulate(model, engine=engine, rtol=1e-10, atol=1e-12, n_points=201)
    drift = integral_drift(found, result)
    assert set(drift) == {"p_phi"} and drift["p_phi"]["relative"] < 1e-6
