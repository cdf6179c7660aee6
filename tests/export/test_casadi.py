"""The CasADi export (:mod:`kidym.export.casadi`) against independent routes.

Oracles: the compiled engine's right-hand side (generated C, its own solve of
``M ẇ = F`` or of the augmented system) and the NumPy engine (generated Python, LAPACK)
at random states, to 1e-12 relative; CasADi's own automatic differentiation of the
exported function against :func:`kidym.linearize` (named chain-rule partials and the
differentiated solve), to 1e-10 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import compiled, equations, kidym_cache  # noqa: F401
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES, MOMENTS_ON_BODY_AXES

ca = pytest.importorskip("casadi", reason="the CasADi export needs kidym[export]")

#: The double pendulum driven by a moment at the elbow: the input of ``u``.
DRIVEN_PENDULUM = DOUBLE_PENDULUM + "M0 = 0.4;\nPm.phi2 = M0;\nSHOW := XCRod2, phi2't't;\n"

#: Every function of the language the export maps (conditionals, steps, abs, atan2 …).
FUNCTIONS_MODEL = """m = 1; k = 4; b = 0.3; c = 0.2;
Slider | Sx(x) | m, 0, 0, 0;
Pf.x = (x > 0 ? -k*x ! -2*k*x) - b*atan2(x't, 1) + exp(-x^2) - sqrt(1 + x^2)/3
       - b*sign(x't)*abs(x't)^2 + 0.1*cos(x)^5/(2 + sin(x)^2) + c*floor(2*x)
       + c*ceil(x't) - c*(x % 0.7) + c*tanh(x)*ctg(1 + x^2) + c*arctg(x)
       + c*ln(2 + x) + c*(x >= 0.5 ? 1 ! (x't < 0 ? 2 ! 3));
"""


def _text(name: str) -> str:
    return (EXAMPLES / name).read_text(encoding="utf-8")


#: The arm of seed 004 with two torques and one programmed constraint: the controls of
#: least norm (S = 2 > r = 1), where the square case solves Γ u = b − G M⁻¹F⁰ itself.
LEAST_NORM_ARM = _text("two_link_control/two_link_control.kdm").replace(
    "ПРОГРАММНЫЕ СВЯЗИ := fx, fy;", "ПРОГРАММНЫЕ СВЯЗИ := fx;")


#: name → (model text, inputs, a start state or None for the model's initial values).
MODELS = {
    "double pendulum": (DRIVEN_PENDULUM, ("M0",)),
    "quaternion (free body)": (_text("free_body/free_body.kdm"), ("Jx",)),
    "non-holonomic (Chaplygin sleigh)": (_text("chaplygin_sleigh/chaplygin_sleigh.kdm"), ()),
    "rolling ball (КАЧЕНИЕ)": (_text("ball/ball_rolling.kdm"), ()),
    "closed loop (four-bar)": (_text("four_bar/four_bar.kdm"), ()),
    "time-dependent moment": (MOMENTS_ON_BODY_AXES, ("M0", "b")),
    "controls of programmed constraints": (_text("two_link_control/two_link_control.kdm"),
                                           ("a",)),
    "controls of least norm": (LEAST_NORM_ARM, ("r",)),
    "piecewise functions": (FUNCTIONS_MODEL, ("k",)),
}


def _rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max(initial=0.0) / max(1.0, np.abs(b).max(initial=0.0)))


def _states(cm: kidym.CasadiModel, count: int, seed: int) -> list[np.ndarray]:
    """Random states about the model's start: within ±0.3 of every initial value (the
    constrained models stay near their manifold, where ``G`` has full rank)."""
    rng = np.random.default_rng(seed)
    y0 = cm.initial_state()
    return [y0 + rng.uniform(-0.3, 0.3, y0.size) for _ in range(count)]


def _call(fn, cm, t: float, y, u, p):
    args = [t, y, u, p] if cm.time_dependent else [y, u, p]
    out = fn(*args)
    return [np.asarray(o, float).ravel() for o in out] if isinstance(out, tuple) \
        else np.asarray(out, float).ravel()


@pytest.mark.parametrize("key", list(MODELS))
def test_f_equals_the_compiled_and_numpy_right_hand_sides(key):
    text, inputs = MODELS[key]
    eq = equations(text)
    cm = kidym.to_casadi(eq, inputs=inputs)
    cs = compiled(text)
    ns = NumpySystem.build(eq)
    assert cm.state_names == cs.state_names == ns.state_names
    assert cm.input_names == inputs
    assert set(cm.input_names) | set(cm.parameter_names) == {str(s) for s in eq.parameters}
    # a changed input and parameter reach f through u and p
    changes = {inputs[0]: 0.9 * (eq.model.parameter_values[inputs[0]] or 1.0)} if inputs \
        else {}
    u, p = cm.values(changes)
    full = cs.parameter_vector(changes)
    for y in _states(cm, 6, seed=len(key)):
        t = 0.37
        mine = _call(cm.f, cm, t, y, u, p)
        assert _rel(mine, cs.rhs(t, y, full)) <= 1e-12
        assert _rel(mine, ns.rhs(t, y, full)) <= 1e-12


@pytest.mark.parametrize("key", list(MODELS))
def test_outputs_energy_constraints_and_multipliers_equal_the_numpy_engine(key):
    text, inputs = MODELS[key]
    eq = equations(text)
    cm = kidym.to_casadi(eq, inputs=inputs)
    ns = NumpySystem.build(eq)
    u, p = cm.values()
    full = ns.parameter_vector()
    index = {n: k for k, n in enumerate(ns.output_names)}
    for y in _states(cm, 3, seed=7):
        t = 0.21
        reference = np.asarray(ns.outputs(t, y, full), float)
        if cm.output_names:
            y_out = _call(cm.outputs, cm, t, y, u, p)
            assert _rel(y_out, reference[[index[n] for n in cm.output_names]]) <= 1e-12
        energy = _call(cm.energy, cm, t, y, u, p)
        assert _rel(energy, reference[[index["energy"]]]) <= 1e-12
        if cm.multipliers is not None:
            lam = _call(cm.multipliers, cm, t, y, u, p)
            assert _rel(lam, reference[[index[n] for n in cm.multiplier_names]]) <= 1e-10
        if cm.constraints is not None:
            phi, c = _call(cm.constraints, cm, t, y, u, p)
            _m, _f, block = ns.constraint_block(t, y, full)
            assert _rel(phi, block.phi) <= 1e-12 and _rel(c, block.c) <= 1e-12


def _point(cm, seed: int) -> dict[str, float]:
    return dict(zip(cm.state_names, _states(cm, 1, seed)[0]))


@pytest.mark.parametrize("key", list(MODELS))
def test_jacobian_equals_the_analytic_linearisation(key):
    text, inputs = MODELS[key]
    eq = equations(text)
    cm = kidym.to_casadi(eq, inputs=inputs)
    u, p = cm.values()
    t = 0.45
    # a random state as a guess: linearize puts it on the constraints first
    lin = kidym.linearize(eq, None, guess=_point(cm, seed=3), inputs=inputs, t=t)
    y = np.array([lin.point[n] for n in cm.state_names])
    # CasADi's own differentiation of the exported expression graph
    tt, x, uu, pp = ca.SX.sym("t"), ca.SX.sym("x", y.size), ca.SX.sym("u", u.size), \
        ca.SX.sym("p", p.size)
    xdot = cm.f(tt, x, uu, pp) if cm.time_dependent else cm.f(x, uu, pp)
    jac = ca.Function("jacobians", [tt, x, uu, pp], [ca.jacobian(xdot, x), ca.jacobian(xdot, uu)])
    A_y, B_y = (np.asarray(v, float) for v in jac(t, y, u, p))
    scale = max(1.0, float(np.abs(lin.A_full).max()))
    np.testing.assert_allclose(A_y, lin.A_full, rtol=0, atol=1e-10 * scale)
    independent = [cm.state_names.index(n) for n in lin.states]
    if inputs:
        np.testing.assert_allclose(B_y[independent], lin.B, rtol=0,
                                   atol=1e-10 * max(1.0, float(np.abs(lin.B).max())))
    # on the constraint manifold: δy = T δx with the dependent states δy_dep = D δx
    T = np.zeros((y.size, len(independent)))
    T[independent, np.arange(len(independent))] = 1.0
    T[[cm.state_names.index(n) for n in lin.dependent], :] = lin.D
    np.testing.assert_allclose((A_y @ T)[independent], lin.A, rtol=0, atol=1e-10 * scale)


def test_time_enters_only_models_that_depend_on_it():
    assert not kidym.to_casadi(equations(DRIVEN_PENDULUM)).time_dependent
    cm = kidym.to_casadi(equations(MOMENTS_ON_BODY_AXES))
    assert cm.time_dependent and cm.arguments == ("t", "x", "u", "p")
    assert cm.f.name_in() == ["t", "x", "u", "p"]


def test_shared_quantities_stay_shared():
    """Each named quantity is one node of CasADi's graph: the exported f of a 6-link
    spatial chain has about as many operations as kidym's generated C for the same
    right-hand side and solve (after its CSE; 1.2 times as many, CasADi counting its
    inputs and outputs too). Expanding the names would multiply them."""
    from kidym.codegen import generate_c
    from tests.fixtures import chain_text

    eq = equations(chain_text(6))
    cm = kidym.to_casadi(eq)
    counts = generate_c(eq).counts
    assert cm.f.n_instructions() <= 1.5 * (counts["rhs"].total + counts["solve"].total)


def test_the_least_norm_model_has_more_controls_than_constraints():
    controls = equations(LEAST_NORM_ARM).controls
    assert (controls.r, controls.s) == (1, 2)


def test_without_casadi_the_export_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "casadi", None)
    with pytest.raises(ImportError, match=r"pip install 'kidym\[export\]'"):
        kidym.to_casadi(equations(DRIVEN_PENDULUM))


def test_write_casadi_round_trip(tmp_path):
    eq = equations(_text("four_bar/four_bar.kdm"))
    path = kidym.write_casadi(eq, tmp_path / "out" / "four_bar.casadi", name="four_bar")
    assert sorted(p.name for p in path.parent.iterdir()) == ["four_bar.casadi"]
    loaded = ca.Function.load(str(path))
    assert loaded.name() == "four_bar"
    assert loaded.name_out() == ["xdot", "y", "energy", "phi", "c", "multipliers"]
    cm = kidym.to_casadi(eq)
    u, p = cm.values()
    y = _states(cm, 1, seed=5)[0]
    res = loaded(x=y, u=u, p=p)
    assert _rel(res["xdot"], cm.f(y, u, p)) == 0
    assert _rel(res["multipliers"], cm.multipliers(y, u, p)) == 0


def test_a_model_with_events_is_a_located_error():
    model = kidym.load(EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm")
    with pytest.raises(kidym.ModelError, match=r"bouncing_ball\.kdm:\d+:\d+: error: event "
                       r"`.+` cannot be exported to CasADi") as info:
        kidym.to_casadi(kidym.derive(model))
    assert "^" in str(info.value)


def test_bad_inputs_and_names_are_clear_errors():
    eq = equations(DRIVEN_PENDULUM)
    with pytest.raises(KeyError, match=r"input `M9` is not a parameter .*parameters: m1, m2"):
        kidym.to_casadi(eq, inputs=["M9"])
    with pytest.raises(ValueError, match="named twice"):
        kidym.to_casadi(eq, inputs=["M0", "M0"])
    with pytest.raises(ValueError, match="function name must be ASCII letters"):
        kidym.to_casadi(eq, name="f; system('x')")


def test_no_text_of_the_model_reaches_casadi_or_its_generated_c():
    """Names stay on the Python side: CasADi's symbols are neutral (``x_0``), so C that
    CasADi generates from the functions holds none of the model's names."""
    eq = equations("""масса = 1.5; sneakyLen = 0.8; g = 9.81;
Стержень | Rz(sneakyAngle) | Sx(sneakyLen/2), масса, 0, масса*sneakyLen^2/12,
    масса*sneakyLen^2/12;
GRAVITY := 0, -g, 0;
SHOW := XCСтержень;
""")
    cm = kidym.to_casadi(eq, inputs=["sneakyLen"])
    assert cm.state_names == ("sneakyAngle", "sneakyAngle't")
    generator = ca.CodeGenerator("model.c")
    for fn in cm.functions.values():
        generator.add(fn)
    code = generator.dump()
    assert "f_outputs" in code            # the functions are there, the names are not
    for name in ("sneaky", "масса", "Стержень"):
        assert name not in code
    assert [str(s) for s in ca.vertsplit(cm.f.sx_in(0))] == ["x_0", "x_1"]


def test_cart_pole_of_the_example_has_the_textbook_equations():
    """``examples/optimal_control/cart_pole.kdm`` through ``f``, against Lagrange's
    equations of a cart with a uniform pole written by hand (``θ`` from the downward
    vertical, centre of mass at ``l/2``, ``J = m_p l²/12``):

    ``(m_c + m_p) ẍ + m_p (l/2) cos θ θ̈ − m_p (l/2) sin θ θ̇² = F``,
    ``m_p (l/2) cos θ ẍ + (J + m_p l²/4) θ̈ + m_p g (l/2) sin θ = 0``."""
    eq = kidym.derive(kidym.load(EXAMPLES / "optimal_control" / "cart_pole.kdm"))
    cm = kidym.to_casadi(eq, inputs=["Fc"])
    assert cm.state_names == ("x", "theta", "x't", "theta't")
    _u, p = cm.values()
    mc, mp, length, g = (p[cm.parameter_names.index(n)] for n in ("mc", "mp", "l", "g"))
    a = length / 2
    rng = np.random.default_rng(11)
    for _ in range(6):
        y = rng.uniform(-3, 3, 4)
        force = rng.uniform(-10, 10)
        _x, th, xd, thd = y
        M = np.array([[mc + mp, mp * a * np.cos(th)],
                      [mp * a * np.cos(th), mp * length ** 2 / 12 + mp * a ** 2]])
        F = np.array([force + mp * a * np.sin(th) * thd ** 2, -mp * g * a * np.sin(th)])
        expected = np.concatenate([[xd, thd], np.linalg.solve(M, F)])
        assert _rel(np.asarray(cm.f(y, [force], p), float).ravel(), expected) <= 1e-12
