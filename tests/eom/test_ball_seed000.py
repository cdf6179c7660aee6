"""The ball in the spherical bowl of seed 000 against the paper's printed eq. (25).

Eq. (25) is transcribed here from the paper, independently of kidym:

    J ω̇X − a m {(R − zC) ÿC + yC (z̈C + g)} = 0
    J ω̇Y + a m {(R − zC) ẍC + xC (z̈C + g)} = 0
    J ω̇Z + a m {yC ẍC − xC ÿC}             = 0

with ẋC, ẏC from (22), zC from (20) and their time derivatives taken by SymPy.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from kidym import derive, parse
from tests.lang.fixtures import BALL


def _paper_eq25():
    t = sp.Symbol("t")
    R, r, m, g = sp.symbols("R r m g")
    a = r / (R - r)
    J = sp.Rational(2, 5) * m * r**2
    wx, wy, wz = sp.symbols("ωXКуля ωYКуля ωZКуля")
    dwx, dwy, dwz = sp.symbols("dwx dwy dwz")
    x, y = sp.symbols("xC yC")
    X, Y = sp.Function("X")(t), sp.Function("Y")(t)
    Wx, Wy, Wz = (sp.Function(n)(t) for n in ("Wx", "Wy", "Wz"))
    zC = R - sp.sqrt((R - r) ** 2 - X**2 - Y**2)                      # (20)
    xdot = a * (Wy * (R - zC) + Wz * Y)                              # (22)
    ydot = -a * (Wx * (R - zC) + Wz * X)
    rates = {X.diff(t): xdot, Y.diff(t): ydot, Wx.diff(t): dwx, Wy.diff(t): dwy,
             Wz.diff(t): dwz}

    def d(e):
        return e.diff(t).subs(rates)

    xdd, ydd = d(xdot), d(ydot)
    zdd = d(d(zC))
    eqs = [J * dwx - a * m * ((R - zC) * ydd + Y * (zdd + g)),
           J * dwy + a * m * ((R - zC) * xdd + X * (zdd + g)),
           J * dwz + a * m * (Y * xdd - X * ydd)]
    back = {X: x, Y: y, Wx: wx, Wy: wy, Wz: wz}
    return [e.subs(back) for e in eqs], (dwx, dwy, dwz)


@pytest.mark.parametrize("route", ["two-stage", "direct"])
def test_ball_equations_equal_seed_eq_25(route):
    eq = derive(parse(BALL), route=route)
    paper, dw = _paper_eq25()
    speeds = [sp.Symbol(str(w)) for w in eq.speeds]
    assert [str(w) for w in speeds] == ["ωXКуля", "ωYКуля", "ωZКуля"]
    U = eq.mass_matrix * sp.Matrix(dw) - eq.forcing
    # ρ = sqrt((R−r)² − xC² − yC²): the difference is a rational function of ρ whose
    # numerator must vanish modulo ρ² − ((R−r)² − xC² − yC²)
    R, r, x, y, rho = sp.symbols("R r xC yC rho")
    radicand = (R - r) ** 2 - x**2 - y**2
    for i in range(3):
        diff = (U[i] - paper[i]).subs(sp.sqrt(radicand), rho)
        num = sp.expand(sp.numer(sp.together(diff)))
        assert sp.expand(sp.rem(num, rho**2 - radicand, rho)) == 0, i
        # the test can fail: a wrong sign of the weight would leave a remainder
        wrong = sp.expand(sp.numer(sp.together(diff + sp.Symbol("g") * x)))
        assert sp.expand(sp.rem(wrong, rho**2 - radicand, rho)) != 0


def test_ball_kinematic_equations_are_22_and_23():
    eq = derive(parse(BALL))
    R, r, x, y = sp.symbols("R r xC yC")
    l0, l1, l2, l3 = sp.symbols("λ0 λ1 λ2 λ3")
    wx, wy, wz = sp.symbols("ωXКуля ωYКуля ωZКуля")
    a = r / (R - r)
    zC = R - sp.sqrt((R - r) ** 2 - x**2 - y**2)
    half = sp.Rational(1, 2)
    expected = [a * (wy * (R - zC) + wz * y), -a * (wx * (R - zC) + wz * x),   # (22)
                -half * (l1 * wx + l2 * wy + l3 * wz),                         # (23)
                half * (l0 * wx + l3 * wy - l2 * wz),
                half * (-l3 * wx + l0 * wy + l1 * wz),
                half * (l2 * wx - l1 * wy + l0 * wz)]
    qdot = eq.B * sp.Matrix(sp.symbols("ωXКуля ωYКуля ωZКуля")) + eq.beta
    for got, want in zip(qdot, expected):
        assert sp.simplify(got - want) == 0


def test_ball_two_stage_keeps_the_holonomic_equations():
    eq = derive(parse(BALL))
    hol = eq.holonomic
    assert eq.route == "two-stage" and hol is not None and hol.holonomic is None
    assert [str(s) for s in hol.speeds] == ["xC't", "yC't", "λ0't", "λ1't", "λ2't", "λ3't"]
    # U_hol in generalized coordinates: the x row of the translational part is
    # m ẍC (1 + xC²/(R−zC)²) + …, i.e. M_hol[xC, xC] = m (1 + (∂zC/∂xC)²) (closed form)
    R, r, m, x, y = sp.symbols("R r m xC yC")
    dz = x / sp.sqrt((R - r) ** 2 - x**2 - y**2)
    assert sp.simplify(hol.mass_matrix[0, 0] - m * (1 + dz**2)) == 0
    # the pseudo-forces Π = Bᵀ W_Pᵀ P of the weight element Pg.zC = −m g
    g = sp.Symbol("g")
    Pi = eq.pseudo_forces
    # żC = a (xC ωY − yC ωX) by (20), (22), so Π = ∂żC/∂ω · (−m g)
    want = sp.Matrix([m * g * r / (R - r) * y, -m * g * r / (R - r) * x, 0])
    assert sp.simplify(Pi - want) == sp.zeros(3, 1)


def test_ball_routes_agree_off_the_unit_sphere():
    """The homogeneous S(Λ) makes both routes exact for any |Λ| ≠ 0."""
    m = parse(BALL)
    e1, e2 = derive(m, route="direct"), derive(m, route="two-stage")
    rng = np.random.default_rng(3)
    syms = [sp.Symbol(str(s)) for s in (*e1.coordinates, *e1.speeds)]
    par = {sp.Symbol("R"): 3, sp.Symbol("r"): 0.2, sp.Symbol("m"): 1, sp.Symbol("g"): 9.8}
    f1 = sp.lambdify(syms, (e1.mass_matrix.subs(par), e1.forcing.subs(par)))
    f2 = sp.lambdify(syms, (e2.mass_matrix.subs(par), e2.forcing.subs(par)))
    for _ in range(5):
        state = rng.normal(size=len(syms)) * 0.5
        (M1, F1), (M2, F2) = f1(*state), f2(*state)
        assert np.allclose(M1, M2, atol=1e-12) and np.allclose(F1, F2, atol=1e-12)
