"""Force and inertial elements of ``eom/structural.py`` against independent results.

Elements on angular-velocity projections (``Pm.ωZBody``, ``Dd.ωYBody``,
``Jrot.ωZBody``) act through the partial angular velocities ``∂ω/∂w`` (the column
``W̃_P`` of the differential structure ``ṗ = ω``): checked in closed form on a planar
rod, against SymPy's ``KanesMethod`` on a spatial chain whose moments act about body
axes that are no joint axes (with a time-dependent moment), and in both engines.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import MOMENTS_ON_BODY_AXES, ROD_WITH_MOMENT
from tests.oracles import sympy_mechanics as oracles

ROD = "m = 1.5; l = 0.8; Rod | Rz(phi) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);\n"


def _sym(*names: str) -> list[sp.Symbol]:
    return [sp.Symbol(n) for n in names]


# ------------------------------------------------------------------ closed form
def test_moment_on_angular_velocity_is_the_forcing_of_the_rod():
    """The issue's repro: M φ̈ = M0 with M = m l²/3 (rod about its end)."""
    eq = kidym.derive(kidym.parse(ROD_WITH_MOMENT))
    m, l, M0 = _sym("m", "l", "M0")
    assert sp.simplify(eq.mass_matrix[0, 0] - m * l**2 / 3) == 0
    assert sp.simplify(eq.forcing[0] - M0) == 0


@pytest.mark.parametrize("formation", ["composite", "structural"])
def test_damper_and_inertia_on_angular_velocity_of_the_rod(formation):
    """(m l²/3 + Ja) φ̈ = M0 sin(W t) − c φ̇: the rod with a rotor and a damper on ω_z."""
    text = ROD + "c = 0.3; Ja = 0.2; M0 = 2; W = 3;\n" \
        "Pm.ωZRod = M0*sin(W*t); Dd.ωZRod = c; Ja.ωZRod = Ja;"
    eq = kidym.derive(kidym.parse(text), formation=formation)
    m, l, c, Ja, M0, W, t, w = _sym("m", "l", "c", "Ja", "M0", "W", "t", "phi't")
    assert sp.simplify(eq.mass_matrix[0, 0] - (m * l**2 / 3 + Ja)) == 0
    assert sp.simplify(eq.forcing[0] - (M0 * sp.sin(W * t) - c * w)) == 0


def test_damper_on_a_speed_is_the_damper_on_its_coordinate():
    """``Dd.phi't`` (the differential structure φ̇) is ``Dd.phi``: force −c φ̇."""
    a = kidym.derive(kidym.parse(ROD + "c = 0.3; Dd.phi't = c;"))
    b = kidym.derive(kidym.parse(ROD + "c = 0.3; Dd.phi = c;"))
    assert sp.simplify(a.forcing[0] - b.forcing[0]) == 0
    assert sp.simplify(a.forcing[0] + sp.Symbol("c") * sp.Symbol("phi't")) == 0


@pytest.mark.parametrize("formation", ["composite", "structural"])
@pytest.mark.parametrize("element,expected", [
    ("Pe.ωYB = P0;", "0"), ("De.ωYB = c;", "0"), ("Pe.ωXB = P0;", "0"),
    ("De.ωXB = c;", "0"), ("Pe.ωZB = P0;", "P0"), ("De.ωZB = c;", "-c*qdot")])
def test_elements_on_projections_turned_only_by_a_prescribed_rotation(formation, element,
                                                                      expected):
    """``B | Ry(A sin(W t)), Rz(q)``: ``ωX, ωY = f'(t)·(sin q, cos q)`` hold no speed.

    They are still velocities (differential structures with ``∂ṗ/∂q̇ = 0``), so a moment
    or a damper about the body's x or y axis does no work on ``q``; about z it does. Found
    by the random-model generator (``tests/oracles/random_models.py``): such a projection
    used to be taken as a structure ``p(q, t)`` and differentiated once more, which gave
    ``F = −A W P0 sin(q) cos(W t)`` for ``Pe.ωYB = P0``.
    """
    text = "A = 0.3; W = 0.5; m = 1; J = 0.7; P0 = 1.9; c = 0.4;\n" \
        "B | Ry(A*sin(W*t)), Rz(q) | m(m), Jx(J), Jy(J), Jz(J);\n" + element
    eq = kidym.derive(kidym.parse(text), formation=formation)
    forcing = sp.sympify(expected, locals={"qdot": sp.Symbol("q't")})
    assert sp.simplify(eq.forcing[0] - forcing) == 0


SLEIGH = ("m = 2; b = 0.4; J = 0.05; c = 0.3;\n"
          "Sleigh | Sx(x), Sy(y), Rz(th) | Sx(b), m(m), Jx(J), Jy(J), Jz(J);\n"
          "PSEUDOVELOCITIES := v; x't = v*cos(th); y't = v*sin(th);\n")


@pytest.mark.parametrize("route", ["two-stage", "direct"])
@pytest.mark.parametrize("element,expected", [
    ("Pe.v = c;", "0, c"), ("De.v = c;", "0, -c*v"), ("Pe.th = -c*v;", "-c*v, 0"),
    ("dv = 2*v; Pe.dv = c;", "0, 2*c")])
def test_elements_on_a_pseudo_velocity(route, element, expected):
    """An element whose coordinate or characteristic uses a pseudo-velocity.

    Its differential structure ``ṗ = v`` (``2v``) gives the generalized force ``c``
    (``2c``, ``−c v``) of the speed ``v``; a force ``−c v`` on ``th`` acts on ``th't``.
    The holonomic first stage of the two-stage route has no speed ``v``: such elements
    are added after the projection. Found by the random-model generator
    (``tests/oracles/random_models.py``): ``derive`` raised "`v` is not defined" on both
    routes.
    """
    eq = kidym.derive(kidym.parse(SLEIGH + element), route=route)
    b, m, th_t, v = _sym("b", "m", "th't", "v")
    chaplygin = sp.Matrix([-m * b * v * th_t, m * b * th_t**2])  # without the element
    extra = sp.Matrix(sp.sympify(f"[{expected}]", locals={"v": v, "c": sp.Symbol("c")}))
    assert [str(w) for w in eq.speeds] == ["th't", "v"]
    assert sp.simplify(eq.forcing - chaplygin - extra) == sp.zeros(2, 1)


def test_inertial_element_on_a_pseudo_velocity_is_a_located_error():
    with pytest.raises(kidym.ModelError, match=r"inertial element `Je.v`: `v` is a velocity"):
        kidym.derive(kidym.parse(SLEIGH + "Je.v = c;"))


# ------------------------------------------------------------- SymPy KanesMethod
def _state(rng: np.random.Generator, names: list[str]) -> dict[str, float]:
    return {n: float(rng.uniform(-1.5, 1.5)) for n in names}


@pytest.mark.parametrize("formation", ["composite", "structural"])
def test_moments_on_body_axes_match_kanes_method(formation):
    """Moment, damper and rotor on ``B2``'s body axes vs ``KanesMethod`` (t-dependent)."""
    eq = kidym.derive(kidym.parse(MOMENTS_ON_BODY_AXES), formation=formation)
    ref = oracles.moments_on_body_axes()
    assert [str(s) for s in eq.speeds] == [str(s) for s in ref.speeds]
    system = NumpySystem.build(eq)
    rng = np.random.default_rng(14)
    params = dict(eq.model.parameter_values)
    for _ in range(6):
        t = float(rng.uniform(0, 3))
        state = _state(rng, system.state_names)
        y = np.array([state[n] for n in system.state_names])
        _, M, F, _ = system.evaluate(t, y, system.parameter_vector())
        M_ref, F_ref = ref.evaluate({**state, **params, "t": t})
        np.testing.assert_allclose(M, M_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(F, F_ref, rtol=1e-10, atol=1e-12)


def test_moments_on_body_axes_both_engines_follow_kanes_method():
    """NumPy and compiled trajectories vs the ``KanesMethod`` equations integrated by SciPy."""
    eq = kidym.derive(kidym.parse(MOMENTS_ON_BODY_AXES))
    ref = oracles.moments_on_body_axes()
    params = dict(eq.model.parameter_values)
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    y0 = [eq.model.initial.get(n, 0.0) for n in names]
    n = len(eq.coordinates)

    def rhs(t, y):
        M, F = ref.evaluate({**dict(zip(names, y)), **params, "t": t})
        return np.concatenate([y[n:], np.linalg.solve(M, F)])

    t_eval = np.linspace(0.0, 2.0, 41)
    sol = solve_ivp(rhs, (0.0, 2.0), y0, method="DOP853", t_eval=t_eval, rtol=1e-11,
                    atol=1e-12)
    assert sol.success
    ns = NumpySystem.build(eq)
    cs = CompiledSystem.build(eq)
    p = ns.parameter_vector()
    for t in (0.0, 0.7, 1.9):
        y = sol.y[:, int(t * 20)]
        np.testing.assert_allclose(cs.rhs(t, y, p), ns.rhs(t, y, p), rtol=1e-12, atol=1e-12)
    for engine in ("numpy", "compiled"):
        res = kidym.simulate(eq, t_eval=t_eval, engine=engine, rtol=1e-11, atol=1e-12)
        for k, name in enumerate(names):
            np.testing.assert_allclose(res.values[name], sol.y[k], rtol=0, atol=2e-7,
                                       err_msg=f"{engine}: {name}")


# ------------------------------------------------------------------------ errors
@pytest.mark.parametrize("elements,message", [
    ("Cm.ωZRod = 2;", r"elastic element `Cm.ωZRod`: `ωZRod` is a velocity"),
    ("wz = omegaz@Rod; Cm.wz = 2;", r"elastic element `Cm.wz`: `wz` is a velocity"),
    ("Pm.phi't't = 2;", r"element `Pm.phi't't`: `phi't't` involves an acceleration"),
    ("a = ωZRod't; Dd.a = 1;", r"element `Dd.a`: `a` involves an acceleration"),
    ("Pf.phi = -0.5*phi't't;", r"characteristic of element `Pf.phi` uses `phi't't`, an "
                               r"acceleration"),
])
def test_unusable_element_structures_are_located_errors_at_parse(elements, message):
    with pytest.raises(kidym.ModelError, match=message) as info:
        kidym.parse(ROD + elements)
    assert info.value.errors[0].span is not None
    assert ":2:" in info.value.render()


@pytest.mark.parametrize("elements,message", [
    ("wz = ωZRod^2; Dd.wz = 1;", r"`wz` depends on the speeds.*not linear in `phi't`"),
    ("wz = 2*ωZRod; Jw.wz = 1;", r"inertial element `Jw.wz`: `wz` is a velocity but "),
])
def test_unusable_velocity_elements_are_located_errors_at_derive(elements, message):
    model = kidym.parse(ROD + elements)
    with pytest.raises(kidym.ModelError, match=message) as info:
        kidym.derive(model)
    (diag,) = info.value.errors
    assert diag.span is not None and diag.span.line == 2


# ------------------------------------------------- direct vs two-stage (seed 000)
VELOCITY_ELEMENTS = {
    "chaplygin_sleigh": "M0 = 0.4; c = 0.2; Jq = 0.05;\n"
                        "Pm.ωZSleigh = M0*sin(2*t); Dd.ωZSleigh = c; Jq.ωZSleigh = Jq;",
    "free_body": "M0 = 0.4; c = 0.2; Jq = 0.05;\n"
                 "Pm.ωXBody = M0*sin(2*t); Dd.ωYBody = c; Jq.ωZBody = Jq;",
}


@pytest.mark.parametrize("example", sorted(VELOCITY_ELEMENTS))
def test_velocity_elements_agree_on_the_direct_and_two_stage_routes(example):
    """``U = Bᵀ U_hol`` (elements formed in the generalized velocities) = the direct route."""
    from tests.fixtures import EXAMPLES

    text = (EXAMPLES / example / f"{example}.kdm").read_text(encoding="utf-8")
    model = kidym.parse(text + "\n" + VELOCITY_ELEMENTS[example] + "\n")
    direct = NumpySystem.build(kidym.derive(model, route="direct"))
    staged = NumpySystem.build(kidym.derive(model, route="two-stage"))
    assert direct.state_names == staged.state_names
    p = direct.parameter_vector()
    rng = np.random.default_rng(3)
    for _ in range(4):
        y = rng.uniform(-1, 1, len(direct.state_names))
        t = float(rng.uniform(0, 2))
        a, b = direct.rhs(t, y, p), staged.rhs(t, y, p)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
