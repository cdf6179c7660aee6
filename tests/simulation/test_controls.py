"""Controls determined by programmed constraints (seed 004 (5.1)–(5.6)): ``НЕИЗВЕСТНЫЕ``,
``ПРОГРАММНЫЕ СВЯЗИ``.

The example ``examples/two_link_control``: a planar two-link arm under gravity whose end
effector is steered along a circle ``x = a + r cos Wt``, ``y = b + r sin Wt`` by the
joint torques ``u1``, ``u2``. Independent oracles:

* the inverse dynamics of the same arm by Lagrange's equations written here with
  ``sympy.physics.mechanics.LagrangesMethod``, along the path's closed-form inverse
  kinematics (the joint angles of the circle, differentiated symbolically): the torques
  kidym computes must be these, to 1e-8;
* the perturbation law (5.5) itself: from a start off the path the deviation
  ``y = fx`` obeys ``ÿ = h y + k ẏ``, whose solution is written in closed form;
* the least-norm control of a point mass with two forces and one constraint, by hand.

Both engines, the path time-dependent throughout.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.errors import DerivationError, ModelError, ParseError
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.oracles.two_link_arm import ArmOracle, deviation

EXAMPLE = Path(__file__).parents[2] / "examples" / "two_link_control" / "two_link_control.kdm"
TEXT = EXAMPLE.read_text(encoding="utf-8")
ENGINES = ["numpy", "compiled"]


@pytest.fixture(scope="module")
def oracle() -> ArmOracle:
    return ArmOracle(kidym.parse(TEXT).parameter_values)


@pytest.fixture(scope="module")
def equations() -> kidym.Equations:
    return kidym.derive(kidym.parse(TEXT))


def on_path(oracle: ArmOracle) -> dict[str, float]:
    y0 = oracle.state(np.array([0.0]))[:, 0]
    return dict(zip(("q1", "q2", "q1't", "q2't"), y0))


# ------------------------------------------------------------------- the tests
@pytest.mark.parametrize("engine", ENGINES)
def test_controls_at_a_state_are_the_inverse_dynamics(engine: str, oracle, equations) -> None:
    """At states on the path the solve of (5.6) gives Lagrange's torques (to 1e-10 of
    their size; no integration involved)."""
    t = np.linspace(0.0, np.pi, 13)
    Y = oracle.state(t).T
    if engine == "numpy":
        system = NumpySystem.build(equations)
        p = system.parameter_vector()
        u = np.array([system.outputs(tk, yk, p)[-2:] for tk, yk in zip(t, Y)])
    else:
        system = CompiledSystem.build(equations)
        u = system.controls_at(t, Y, system.parameter_vector())
    tau = oracle.torques(t).T
    assert np.abs(u - tau).max() <= 1e-10 * np.abs(tau).max()


@pytest.mark.parametrize("engine", ENGINES)
def test_the_path_holds_and_the_torques_are_the_inverse_dynamics(
        engine: str, oracle, equations) -> None:
    """Started on the path, the run follows it to integration accuracy, and the controls
    recorded along it are the torques of inverse dynamics to 1e-8."""
    r = kidym.simulate(equations, engine=engine, initial=on_path(oracle), rtol=1e-11,
                       atol=1e-13, n_points=101)
    assert r.success
    assert max(np.abs(r["fx"]).max(), np.abs(r["fy"]).max()) <= 1e-9
    assert np.abs(np.vstack([r["q1"], r["q2"]]) - oracle.state(r.t)[:2]).max() <= 1e-9
    tau = oracle.torques(r.t)
    err = np.abs(np.vstack([r["u1"], r["u2"]]) - tau).max()
    assert err <= 1e-8 * np.abs(tau).max(), err


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("items", "h", "k"), [
    ("fx, fy", -100.0, -20.0),                              # the default law
    ("fx(hh, kk), fy(hh, kk)", -25.0, -2.0),                # decaying oscillation
    ("fx(hh, kk), fy(hh, kk)", -4.0, -5.0),                 # two real roots
])
def test_a_perturbed_start_decays_as_the_perturbation_law_says(
        engine: str, items: str, h: float, k: float) -> None:
    text = TEXT.replace("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;",
                        f"hh = {h}; kk = {k}; ПРОГРАММНЫЕ СВЯЗИ := {items};")
    r = kidym.simulate(kidym.parse(text), engine=engine, rtol=1e-11, atol=1e-13,
                       n_points=201, initial={"q1't": 0.3})
    assert r.success
    for name in ("fx", "fy"):
        y0, z0 = r[name][0], r[name + "'t"][0]
        assert abs(y0) > 0.1    # the example starts well off the path
        exact = deviation(h, k, y0, z0, r.t)
        assert np.abs(r[name] - exact).max() <= 1e-8, name


def test_changed_coefficients_at_run_time_and_their_sign() -> None:
    text = TEXT.replace("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;",
                        "hh = -25; kk = -2; ПРОГРАММНЫЕ СВЯЗИ := fx(hh, kk), fy(hh, kk);")
    model = kidym.parse(text)
    r = kidym.simulate(model, parameters={"hh": -9.0, "kk": -6.0}, rtol=1e-11, atol=1e-13,
                       n_points=101)
    exact = deviation(-9.0, -6.0, r["fx"][0], r["fx't"][0], r.t)
    assert np.abs(r["fx"] - exact).max() <= 1e-8
    with pytest.raises(ValueError, match="coefficient h of programmed constraint `fx` is 4 "
                                         "with the parameters given; it must be a number ≤ 0"):
        kidym.simulate(model, parameters={"hh": 4.0})


@pytest.mark.parametrize("engine", ENGINES)
def test_least_norm_controls_and_a_first_order_constraint(engine: str) -> None:
    """A point mass with two forces and one first-order constraint ``g = ẋ + ẏ − V``:
    ``ż = k z``, and of all the forces that do it the least: ``u1 = u2 = m k z / 2``."""
    text = """
        m = 2; V = 1.5; W = 3; k1 = -4;
        Jm.x.y = m;
        Pfx.x = u1; Pfy.y = u2;
        Pw.x = sin(W*t);             # a disturbance the controls must also cancel #
        g1 = x't + y't - V;
        НЕИЗВЕСТНЫЕ := u1, u2;
        ПРОГРАММНЫЕ СВЯЗИ := g1(k1);
        НАЧАЛЬНЫЕ УСЛОВИЯ := x't(0.2), y't(-0.4);
        ВРЕМЯ := t(0, 2);
    """
    eq = kidym.derive(kidym.parse(text))
    assert eq.controls.first_order == (True,)
    r = kidym.simulate(eq, engine=engine, rtol=1e-11, atol=1e-13, n_points=81)
    z0 = 0.2 - 0.4 - 1.5
    z = z0 * np.exp(-4.0 * r.t)
    assert np.abs(r["g1"] - z).max() <= 1e-9
    # ẍ + ÿ = k z with ẍ = (sin Wt + u1)/m, ÿ = u2/m: u1 + u2 = m k z − sin Wt, and the
    # least u1² + u2² among those splits it in halves
    s = np.sin(3.0 * r.t)
    u2 = (2.0 * -4.0 * z - s) / 2
    assert np.abs(r["u2"] - u2).max() <= 1e-8
    assert np.abs(r["u1"] - u2).max() <= 1e-8


@pytest.mark.parametrize("engine", ENGINES)
def test_a_constraint_the_controls_cannot_reach_is_a_located_error(engine: str) -> None:
    text = TEXT.replace("Pelbow.q2 = u2;", "Pelbow.q1 = u2;")   # both torques at the shoulder
    with pytest.raises(ModelError) as info:
        kidym.simulate(kidym.parse(text, filename="arm.kdm"), engine=engine)
    shown = str(info.value)
    line = next(i for i, s in enumerate(TEXT.splitlines(), 1) if "ПРОГРАММНЫЕ" in s)
    col = TEXT.splitlines()[line - 1].index("fy") + 1
    assert re.search(rf"arm\.kdm:{line}:{col}: error: the controls `u1`, `u2` cannot reach "
                     r"programmed constraint `fy` at t = 0", shown), shown
    assert "^" in shown


@pytest.mark.parametrize(("change", "message"), [
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", ""),
     r"`НЕИЗВЕСТНЫЕ` lists controls, but nothing determines them"),
    (("НЕИЗВЕСТНЫЕ := u1, u2;", "u1 = 0; u2 = 0;"),
     r"`ПРОГРАММНЫЕ СВЯЗИ` needs controls to hold its constraints"),
    (("НЕИЗВЕСТНЫЕ := u1, u2;", "u2 = 0; НЕИЗВЕСТНЫЕ := u1;"),
     r"lists 2 constraints but `НЕИЗВЕСТНЫЕ` only 1 control: each constraint needs"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx(-1), fy;"),
     r"`fx` is a formula of the coordinates and time .*: its coefficients are written "
     r"`f\(h, k\)`, got 1"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx(1, -2), fy;"),
     r"coefficient h of `fx` in `ПРОГРАММНЫЕ СВЯЗИ` must be a number ≤ 0"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx(-1, q1), fy;"),
     r"coefficient k of `fx` .* depends on coordinate `q1`; it must be constant"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx, fz;"),
     r"`fz` is listed in `ПРОГРАММНЫЕ СВЯЗИ` but is not defined"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx, fx;"),
     r"`fx` is listed twice"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx, a;"),
     r"`a` is listed in `ПРОГРАММНЫЕ СВЯЗИ` but is a parameter"),
    (("НЕИЗВЕСТНЫЕ := u1, u2;", "НЕИЗВЕСТНЫЕ := u1, u2, u3;"),
     r"control `u3` of `НЕИЗВЕСТНЫЕ` is used nowhere"),
    (("НЕИЗВЕСТНЫЕ := u1, u2;", "НЕИЗВЕСТНЫЕ := u1, u2, q1;"),
     r"`q1` is listed in `НЕИЗВЕСТНЫЕ` but is a coordinate"),
    (("Pelbow.q2 = u2;", "Pelbow.q2 = u2; zz = u1*q1; Cz.zz = 1;"),
     r"`u1` is listed in `НЕИЗВЕСТНЫЕ` but is a coordinate or enters a position"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx, fy; УРАВНЕНИЯ := fx;"),
     r"`ПРОГРАММНЫЕ СВЯЗИ` together with `УРАВНЕНИЯ` is not supported yet"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;",
      "ПРОГРАММНЫЕ СВЯЗИ := fx, fy; СОВПАДЕНИЕ := Link2(l2, 0, 0) = ЗЕМЛЯ(1, 1, 0);"),
     r"`ПРОГРАММНЫЕ СВЯЗИ` together with `СОВПАДЕНИЕ` is not supported yet"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx, fy; РАСЧЕТ := КИНЕМАТИКА;"),
     r"works in the dynamics, statics and free-vibrations calculations only"),
    (("ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx, fq; fq = q1't't;"),
     r"programmed constraint `fq` uses an acceleration"),
])
def test_what_the_language_refuses_is_a_located_error(change, message) -> None:
    text = TEXT.replace(*change)
    assert text != TEXT
    with pytest.raises(ParseError, match=message) as info:
        kidym.parse(text, filename="arm.kdm")
    assert re.search(r"arm\.kdm:\d+:\d+: error:", str(info.value))


@pytest.mark.parametrize(("change", "message"), [
    (("Pelbow.q2 = u2;", "Pelbow.q2 = u2^2;"), r"not linear in control `u2`"),
    (("Pelbow.q2 = u2;", "Pelbow.q2 = u2*q1't;"), None),          # linear: fine
    (("Pelbow.q2 = u2;", "Pelbow.q2 = u2; Jrot.q2 = u1;"),
     r"inertial element `Jrot.q2`: its characteristic must be constant"),
    (("Pelbow.q2 = u2;", "Pelbow.q2 = u2; Cs.q2 = u1;"), None),   # −u1·q2: linear
    (("ПОКАЗАТЬ := u1,", "tau = 2*u1; ПОКАЗАТЬ := tau, u1,"),
     r"control `u1` enters output `tau`"),
])
def test_controls_enter_forces_linearly_or_it_is_an_error(change, message) -> None:
    text = TEXT.replace(*change)
    assert text != TEXT
    model = kidym.parse(text)
    if message is None:
        eq = kidym.derive(model)
        # H = ∂F/∂u: the control's coefficient in the elbow's equation depends on the state
        H = eq.controls.inputs
        assert eq.graph.dependencies(H[1][1]) or eq.graph.dependencies(H[1][0])
        return
    with pytest.raises(DerivationError, match=message):
        kidym.derive(model)


def test_spellings_and_the_check_summary(capsys) -> None:
    uk = TEXT.replace("НЕИЗВЕСТНЫЕ", "НЕВІДОМІ").replace("ПРОГРАММНЫЕ СВЯЗИ",
                                                        "ПРОГРАМНІ В'ЯЗІ")
    en = TEXT.replace("НЕИЗВЕСТНЫЕ", "unknowns").replace("ПРОГРАММНЫЕ СВЯЗИ",
                                                        "Programmed Constraints")
    for text in (uk, en):
        m = kidym.parse(text)
        assert m.controls == ("u1", "u2") and [p.name for p in m.programmed] == ["fx", "fy"]
    from kidym.cli import main

    assert main(["check", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert ("controls (2): u1, u2, solved from 2 programmed constraints: fx (holonomic), "
            "fy (holonomic)") in out


@pytest.mark.parametrize("engine", ENGINES)
def test_losing_the_control_during_a_run_names_the_constraint(engine: str) -> None:
    """The elbow motor switched off at t = 0.5: from there no control moves ``fy``
    independently of ``fx``; the run stops at the first evaluation past it with an error
    that names it."""
    text = TEXT.replace("Pelbow.q2 = u2;", "Pelbow.q2 = u2*(t < 0.5 ? 1 ! 0);")
    with pytest.raises(kidym.SimulationError) as info:
        kidym.simulate(kidym.parse(text), engine=engine)
    err = info.value
    assert "the controls cannot reach a programmed constraint (`fy`)" in str(err)
    assert 0.5 <= err.time <= 0.53      # the first evaluation past it, within a step


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("torques", [
    # the elbow motor as moments on the links' angular-velocity projections
    "Pshoulder.ωZLink1 = u1; Pelbow.ωZLink2 = u2; Preaction.ωZLink1 = -u2;",
    # through definitions, scaled
    "tau1 = 2*v1; tau2 = v2/4; Pshoulder.q1 = tau1; Pelbow.q2 = tau2;",
])
def test_controls_as_moments_and_through_definitions(engine: str, torques: str,
                                                     oracle) -> None:
    text = TEXT.replace("Pshoulder.q1 = u1;  # motor torques: shoulder, elbow #\n"
                        "Pelbow.q2 = u2;", torques)
    assert text != TEXT
    scale = (1.0, 1.0)
    if "v1" in text:
        text = text.replace("НЕИЗВЕСТНЫЕ := u1, u2;", "НЕИЗВЕСТНЫЕ := v1, v2;").replace(
            "ПОКАЗАТЬ := u1, u2,", "ПОКАЗАТЬ := v1, v2,")
        scale = (0.5, 4.0)
    r = kidym.simulate(kidym.parse(text), engine=engine, initial=on_path(oracle), rtol=1e-11,
                       atol=1e-13, n_points=41)
    names = ("v1", "v2") if "v1" in text else ("u1", "u2")
    u = np.vstack([r[names[0]] / scale[0], r[names[1]] / scale[1]])
    tau = oracle.torques(r.t)
    assert np.abs(u - tau).max() <= 1e-8 * np.abs(tau).max()


@pytest.mark.parametrize(("engine", "method"), [("numpy", "Radau"), ("compiled", "BDF")])
def test_implicit_methods_form_their_jacobian_by_differences(engine: str, method: str,
                                                            oracle, equations) -> None:
    r = kidym.simulate(equations, engine=engine, method=method, initial=on_path(oracle),
                       rtol=1e-10, atol=1e-12, n_points=41)
    tau = oracle.torques(r.t)
    assert np.abs(np.vstack([r["u1"], r["u2"]]) - tau).max() <= 1e-6 * np.abs(tau).max()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_kick_by_an_event_decays_as_the_law_says(engine: str, oracle) -> None:
    """On the path, an event where the end effector crosses y = b downwards (t = π/W)
    kicks the shoulder, ``q1't += 0.5``; the deviations then start from 0 with the rates
    ``∂xE/∂q1·0.5 = −b/2`` and ``∂yE/∂q1·0.5 = (a − r)/2`` and decay as
    ``z0 (t − te) e^{−10 (t − te)}``."""
    text = TEXT.replace("ПОКАЗАТЬ :=", "СОБЫТИЯ := Kick(yE - b, ВНИЗ, q1't = q1't + 0.5);\n"
                                       "ПОКАЗАТЬ :=")
    r = kidym.simulate(kidym.parse(text), engine=engine, initial=on_path(oracle), rtol=1e-11,
                       atol=1e-13, n_points=301)
    te = float(np.asarray(r.stats["events"]["t"])[0])
    assert te == pytest.approx(np.pi / 2, abs=1e-8)
    after = r.t > te
    for name, z0 in (("fx", -0.6 / 2), ("fy", (1.0 - 0.3) / 2)):
        exact = deviation(-100.0, -20.0, 0.0, z0, r.t[after] - te)
        assert np.abs(r[name][after] - exact).max() <= 1e-7, name
        assert np.abs(r[name][~after]).max() <= 1e-9


@pytest.mark.parametrize("engine", ENGINES)
def test_controls_on_a_pseudo_velocity_of_a_nonholonomic_cart(engine: str) -> None:
    """A knife-edge cart (pseudo-velocity ``v``, velocity formulas: the two-stage route)
    driven by a force along its axis and a steering moment on ``ωZCart``, to keep the
    speed ``V0`` (first order, ``ż = kv z``) and the heading ``Om t`` (holonomic, double
    root −4): ``v``, ``th`` and the controls ``u1 = m v̇``, ``u2 = J θ̈`` in closed form."""
    text = """
        m = 3; J = 0.4; V0 = 2; Om = 0.7; kv = -5; hh = -16; kk = -8;
        Cart | Sx(x), Sy(y), Rz(th) | m(m), Jx(0), Jy(0), Jz(J);
        x't = v*cos(th); y't = v*sin(th);
        ПСЕВДОСКОРОСТИ := v;
        Pdrive.v = u1;  Psteer.ωZCart = u2;
        g1 = v - V0;  f2 = th - Om*t;
        НЕИЗВЕСТНЫЕ := u1, u2;
        ПРОГРАММНЫЕ СВЯЗИ := g1(kv), f2(hh, kk);
        НАЧАЛЬНЫЕ УСЛОВИЯ := v(0.5), th(0.3), th't(0);
        ВРЕМЯ := t(0, 3);
    """
    eq = kidym.derive(kidym.parse(text))
    assert eq.route == "two-stage" and eq.controls.first_order == (True, False)
    r = kidym.simulate(eq, engine=engine, rtol=1e-11, atol=1e-13, n_points=61)
    t = r.t
    v = 2.0 + (0.5 - 2.0) * np.exp(-5.0 * t)
    e = deviation(-16.0, -8.0, 0.3, -0.7, t)                  # th − Om t
    edot = (-0.7 + 4.0 * 0.3) * np.exp(-4.0 * t) - 4.0 * e
    assert np.abs(r["v"] - v).max() <= 1e-9
    assert np.abs(r["th"] - (0.7 * t + e)).max() <= 1e-9
    assert np.abs(r["u1"] - 3.0 * -5.0 * (v - 2.0)).max() <= 1e-8
    assert np.abs(r["u2"] - 0.4 * (-16.0 * e - 8.0 * edot)).max() <= 1e-8


@pytest.mark.parametrize("engine", ENGINES)
def test_names_of_the_generated_solve_are_not_the_models(engine: str, equations) -> None:
    """Controls and constraints named like the locals and routines of the generated
    solve (``kd_controlled``: ``Gam``, ``nu``, ``kd_gauss``, ``F``) give the same run:
    no model name reaches the generated code."""
    text = (TEXT.replace("u1", "Gam").replace("u2", "nu")
            .replace("fx", "kd_gauss").replace("fy", "F"))
    plain = kidym.simulate(equations, engine=engine, rtol=1e-10, atol=1e-12, n_points=21)
    odd = kidym.simulate(kidym.parse(text), engine=engine, rtol=1e-10, atol=1e-12,
                         n_points=21)
    for a, b in (("u1", "Gam"), ("u2", "nu"), ("fx", "kd_gauss"), ("fy", "F"), ("q1", "q1")):
        # (the same run up to rounding: SymEngine orders the terms of a sum by name)
        assert np.allclose(plain[a], odd[b], rtol=1e-11, atol=1e-11), (a, b)


def _exact_gamma_system(M: np.ndarray, F0: np.ndarray, block) -> tuple:
    """The controls' system of (5.6) from double ``M``, ``F⁰``, ``b``, ``G``, ``H`` in
    mpmath's arithmetic (set ``mpmath.mp.dps`` first): ``X0 = M⁻¹F⁰``, ``XH = M⁻¹H``,
    ``Γ = G XH`` and ``b − G X0``."""
    import mpmath

    Mm = mpmath.matrix(M.tolist())
    X0 = mpmath.lu_solve(Mm, mpmath.matrix(F0.tolist()))
    XH = mpmath.matrix(*block.H.shape)
    for j in range(block.H.shape[1]):
        col = mpmath.lu_solve(Mm, mpmath.matrix(block.H[:, j].tolist()))
        for i in range(block.H.shape[0]):
            XH[i, j] = col[i]
    G = mpmath.matrix(block.G.tolist())
    return X0, XH, G * XH, mpmath.matrix(block.target.tolist()) - G * X0


@pytest.mark.parametrize("engine", ENGINES)
def test_square_control_solve_keeps_the_accuracy_of_gamma(engine: str) -> None:
    """With as many controls as constraints the solve is ``Γ u = b − G M⁻¹F⁰`` itself:
    the normal equations ``Γ Γᵀ ν = …`` of the least-norm formula square Γ's condition
    number and lost 1e-10 of the accelerations at states of the two-link skier
    (examples/skier/skier2.kdm, 9 controls, cond Γ ~ 2e3). Reference: the same ``M``,
    ``F`` solved in 40-digit arithmetic (mpmath)."""
    import mpmath

    from kidym.eom.controls import split

    path = Path(__file__).parents[2] / "examples" / "skier" / "skier2.kdm"
    eq = kidym.derive(kidym.load(path))
    system = NumpySystem.build(eq) if engine == "numpy" else CompiledSystem.build(eq)
    p = system.parameter_vector()
    n_w, ctl = eq.n_w, eq.controls
    rng = np.random.default_rng(5)
    mpmath.mp.dps = 40
    worst = 0.0
    for _ in range(5):
        y = rng.uniform(-1.0, 1.0, len(system.state_names))
        t = float(rng.uniform(0, 2))
        M, F = (np.asarray(a, float) for a in system.evaluate(t, y, p)[1:3])
        F0, block = split(F, n_w, ctl.r, ctl.s)
        X0, XH, gam, rhs = _exact_gamma_system(M, F0, block)
        u = mpmath.lu_solve(gam, rhs)
        wdot = np.array([float(v) for v in X0 + XH * u])
        got = system.rhs(t, y, p)[len(y) - n_w:]
        worst = max(worst, float(np.abs(got - wdot).max() / np.abs(wdot).max()))
    assert worst <= 1e-12, worst


#: A point mass with three forces and two first-order constraints whose rows are nearly
#: parallel (``e`` small): ``Γ = G/m`` with ``G = [[1, 1, 0], [1, 1 + e, e]]``, full rank,
#: ``cond Γ ≈ 2.3/e``; a disturbance ``sin(W t)`` makes the solve time-dependent.
NEARLY_PARALLEL = """
    m = 2; e = {e}; W = 3; V1 = 1; V2 = 2; k1 = -4; k2 = -3;
    Jm.x.y.z = m;
    Pfx.x = u1; Pfy.y = u2; Pfz.z = u3;
    Pw.x = sin(W*t);
    g1 = x't + y't - V1;
    g2 = x't + (1 + e)*y't + e*z't - V2;
    НЕИЗВЕСТНЫЕ := u1, u2, u3;
    ПРОГРАММНЫЕ СВЯЗИ := g1(k1), g2(k2);
    НАЧАЛЬНЫЕ УСЛОВИЯ := x't(0.2), y't(-0.4);
    ВРЕМЯ := t(0, 2);
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("e", "tol"), [(1e-6, 5e-9), (1e-8, 5e-7)])
def test_least_norm_control_solve_keeps_the_accuracy_of_gamma(engine: str, e: float,
                                                               tol: float) -> None:
    """More controls than constraints: the least-norm ``u`` from a QR factorisation of
    ``Γᵀ`` keeps the accuracy ``cond Γ · 1e-16`` the data allow. Reference: the same
    double ``M``, ``F`` (with ``b``, ``G``, ``H``) solved in 40-digit arithmetic (mpmath),
    ``u = Γᵀ(ΓΓᵀ)⁻¹(b − G M⁻¹F⁰)``. The compiled engine's ``u`` is read from its ``ẇ``:
    here ``H`` is the identity, so ``u = M ẇ − F⁰``. The normal equations ``Γ Γᵀ ν = …``
    (the route before) square ``cond Γ`` and lost 7e-4 (NumPy) and 1.5e-4 (C) of ``u``
    at ``cond Γ ≈ 2.3e6``, and all of it at ``2.3e8``; the same formula in double here
    shows the gap."""
    import mpmath

    from kidym.eom.controls import split

    eq = kidym.derive(kidym.parse(NEARLY_PARALLEL.format(e=e)))
    system = NumpySystem.build(eq) if engine == "numpy" else CompiledSystem.build(eq)
    p = system.parameter_vector()
    n_w, ctl = eq.n_w, eq.controls
    assert (ctl.r, ctl.s) == (2, 3)
    rng = np.random.default_rng(3)
    mpmath.mp.dps = 40
    worst = normal = 0.0
    for _ in range(4):
        y = rng.uniform(-1.0, 1.0, len(system.state_names))
        t = float(rng.uniform(0, 2))
        M, F = (np.asarray(a, float) for a in system.evaluate(t, y, p)[1:3])
        F0, block = split(F, n_w, ctl.r, ctl.s)
        _X0, _XH, gam, rhs = _exact_gamma_system(M, F0, block)
        exact = np.array([float(v) for v in gam.T * mpmath.lu_solve(gam * gam.T, rhs)])
        gamma = np.array(gam.tolist(), dtype=float)
        assert 2e0 / e < np.linalg.cond(gamma) < 3e0 / e
        wdot = system.rhs(t, y, p)[len(y) - n_w:]
        u = M @ wdot - F0
        scale = np.abs(exact).max()
        worst = max(worst, float(np.abs(u - exact).max() / scale))
        try:
            old = gamma.T @ np.linalg.solve(gamma @ gamma.T,
                                            np.array(rhs.tolist(), dtype=float)[:, 0])
            normal = max(normal, float(np.abs(old - exact).max() / scale))
        except np.linalg.LinAlgError:     # Γ Γᵀ singular in double
            normal = np.inf
    print(f"cond Γ ~ {2.3 / e:.1e}: u to {worst:.1e}; normal equations: {normal:.1e}")
    assert worst <= tol, worst
    assert normal >= 100 * tol, normal        # what the normal equations give instead


@pytest.mark.parametrize("engine", ENGINES)
def test_least_norm_solve_with_dependent_rows_names_the_constraint(engine: str) -> None:
    """``e = 0``: the two constraints' rows of ``Γ`` are parallel — no control moves
    ``g2`` apart from ``g1`` — a located error at ``g2`` from the QR solve too."""
    text = NEARLY_PARALLEL.format(e=0)
    with pytest.raises(ModelError) as info:
        kidym.simulate(kidym.parse(text, filename="mass.kdm"), engine=engine)
    shown = str(info.value)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "ПРОГРАММНЫЕ" in s)
    col = text.splitlines()[line - 1].index("g2(") + 1
    assert re.search(rf"mass\.kdm:{line}:{col}: error: the controls `u1`, `u2`, `u3` cannot "
                     r"reach programmed constraint `g2` at t = 0", shown), shown
    assert "g1" not in shown.split("error:")[1].split("\n")[0].replace("`g2`", "")


@pytest.mark.parametrize("engine", ENGINES)
def test_square_solve_with_a_row_1e12_from_dependent_stops_in_both_engines(
        engine: str) -> None:
    """As many controls as constraints, and from ``t = 0.5`` the rows of ``Γ`` differ by
    ``1e-12``: below the rank rule (1e-10 of ``|G_ρ| |X_H|``), so NumPy stops there
    naming ``g2`` — and so must the C (its square solve used Gaussian elimination's
    pivot test at 1e-13 and ran on to the end with controls of 1e12)."""
    text = NEARLY_PARALLEL.format(e=1e-12).replace(
        "Jm.x.y.z = m;", "Jm.x.y = m;").replace(" Pfz.z = u3;", "").replace(
        "g2 = x't + (1 + e)*y't + e*z't - V2;",
        "g2 = x't + (1 + (t < 0.5 ? 1e-3 ! e))*y't - V2;").replace(
        "НЕИЗВЕСТНЫЕ := u1, u2, u3;", "НЕИЗВЕСТНЫЕ := u1, u2;")
    eq = kidym.derive(kidym.parse(text))
    assert (eq.controls.r, eq.controls.s) == (2, 2)
    with pytest.raises(kidym.SimulationError) as info:
        kidym.simulate(eq, engine=engine)
    err = info.value
    assert "the controls cannot reach a programmed constraint (`g2`)" in str(err)
    assert 0.5 <= err.time <= 0.53


@pytest.mark.parametrize("engine", ENGINES)
def test_least_norm_solve_losing_a_control_during_a_run_names_the_constraint(
        engine: str) -> None:
    """``u3`` does not act (``0*u3``) and ``u2`` is switched off at ``t = 0.5``: from
    there both rows of ``Γ`` are ``(1/m, 0, 0)``. The C solve (the QR test of its rows)
    and NumPy's stop at the first evaluation past it with the same message."""
    text = NEARLY_PARALLEL.format(e=1e-3).replace("Pfy.y = u2; Pfz.z = u3;",
                                                  "Pfy.y = u2*(t < 0.5 ? 1 ! 0); Pfz.z = 0*u3;")
    with pytest.raises(kidym.SimulationError) as info:
        kidym.simulate(kidym.parse(text), engine=engine)
    err = info.value
    assert "the controls cannot reach a programmed constraint (`g2`)" in str(err)
    assert 0.5 <= err.time <= 0.53


def test_compiled_bdf_asked_for_an_analytic_jacobian_with_controls_says_why_not() -> None:
    """CVODE's BDF has no analytic Jacobian of the closed loop: asking for one names the
    controls and the ways out (the message used to say the library was built without
    it, which a command-line user cannot change); `auto` runs, and agrees with the
    NumPy engine's BDF with the closed loop's analytic Jacobian."""
    eq = kidym.derive(kidym.load(EXAMPLE))
    opts = {"method": "BDF", "rtol": 1e-9, "atol": 1e-12, "t_end": 0.5}
    with pytest.raises(ValueError, match="no analytic Jacobian for a model with controls"):
        kidym.simulate(eq, engine="compiled", jacobian="analytic", **opts)
    compiled = kidym.simulate(eq, engine="compiled", jacobian="auto", **opts)
    numpy_run = kidym.simulate(eq, engine="numpy", jacobian="analytic", **opts)
    for name in ("q1", "q2", "u1", "u2"):
        scale = max(1.0, float(np.abs(numpy_run[name]).max()))
        assert np.abs(compiled[name] - numpy_run[name]).max() <= 1e-6 * scale, name
