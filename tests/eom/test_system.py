"""Velocity formulas ``x't = …`` resolved into the graph (``eom/system.py``).

They are resolved in dependency order whatever the coordinate order, they may use
generated body names (a rolling condition written from the body's own rotation
matrix), and a formula that needs its own value is a located error. Results are
checked against closed forms, in both engines and with time-dependent forcing.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import kidym
from kidym.cli import main
from tests.codegen.shared import kidym_cache  # noqa: F401

# A cart whose velocity along y is twice that along x, y listed before x (issue 14,
# item 10). ẋ = v cos ψ, ẏ = 2ẋ, with a force F0 sin(W t) along x: the virtual
# displacements are δx = cos ψ δs, δy = 2 cos ψ δs, so m (ẍ + 2ÿ) cos ψ = F0 sin(W t) cos ψ,
# i.e. ẍ = F0 sin(W t)/(5 m); ψ̈ = 0.
CART = """
m = 1.3; J = 0.1; F0 = 0.8; W = 2;
Cart | Sy(y), Sx(x), Rz(psi) | m, J, J, J;
PSEUDOVELOCITIES := v;
x't = v*cos(psi);
y't = 2*x't;
Pf.x = F0*sin(W*t);
INITIAL := x(0.1), y(0.3), psi(0.2), psi't(0.3), v(0.7);
"""

# A body whose rolling condition uses its own rotation matrix, with a shift after
# the rotation (issue 14, item 11): x' = k cos(a) a' exactly.
TOP = """
m = 1; Jz = 0.1; k = 0.05; d = 0.01; M0 = 0.3; W = 2;
Top | Sx(x), Rz(a), Sx(d) | m, 0.1, 0.1, Jz;
x't = k*S11Top*a't;
Pm.a = M0*sin(W*t);
INITIAL := a(0.4), a't(1.5);
"""


def _sym(*names: str) -> list[sp.Symbol]:
    return [sp.Symbol(n) for n in names]


def _rows(eq) -> dict[str, sp.Expr]:
    """``q̇`` by coordinate name: ``B w + β``."""
    qdot = eq.B * sp.Matrix(eq.speeds) + eq.beta
    return {str(q): qdot[i] for i, q in enumerate(eq.coordinates)}


# ------------------------------------------------------------- item 10: ordering
@pytest.mark.parametrize("order", ["Sy(y), Sx(x)", "Sx(x), Sy(y)"])
def test_velocity_formula_may_use_the_rate_of_a_later_coordinate(order):
    eq = kidym.derive(kidym.parse(CART.replace("Sy(y), Sx(x)", order)))
    v, th = _sym("v", "psi")
    rows = _rows(eq)
    assert sp.simplify(rows["x"] - v * sp.cos(th)) == 0
    assert sp.simplify(rows["y"] - 2 * v * sp.cos(th)) == 0


def test_velocity_formula_through_a_definition_of_a_later_rate():
    text = CART.replace("y't = 2*x't;", "u = 2*x't; y't = u;")
    rows = _rows(kidym.derive(kidym.parse(text)))
    v, th = _sym("v", "psi")
    assert sp.simplify(rows["y"] - 2 * v * sp.cos(th)) == 0


def _cart_closed_form(t: np.ndarray) -> dict[str, np.ndarray]:
    m, F0, W = 1.3, 0.8, 2.0
    x0, y0, th0, w0, v0 = 0.1, 0.3, 0.2, 0.3, 0.7
    xd0 = v0 * np.cos(th0)
    th = th0 + w0 * t
    xd = xd0 + F0 / (5 * m * W) * (1 - np.cos(W * t))
    x = x0 + xd0 * t + F0 / (5 * m * W) * (t - np.sin(W * t) / W)
    return {"x": x, "y": y0 + 2 * (x - x0), "psi": th, "psi't": np.full_like(t, w0),
            "v": xd / np.cos(th)}


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_cart_with_y_listed_first_follows_the_closed_form(engine):
    eq = kidym.derive(kidym.parse(CART))
    res = kidym.simulate(eq, t_end=3.0, n_points=31, engine=engine, rtol=1e-11, atol=1e-12)
    ref = _cart_closed_form(res.t)
    for name, values in ref.items():
        np.testing.assert_allclose(res.values[name], values, rtol=0, atol=1e-8, err_msg=name)


def test_cycle_among_velocity_formulas_is_a_located_error():
    text = "m = 1; J = 0.1;\nCart | Sx(x), Rz(phi) | m, J, J, J;\nphi't = x't;\nx't = phi't;\n"
    with pytest.raises(kidym.ModelError,
                       match=r"velocity formulas depend on themselves: `phi't` → `x't` → "
                             r"`phi't`") as info:
        kidym.parse(text)
    assert info.value.errors[0].span.line == 3


def test_velocity_formula_using_an_acceleration_is_a_located_error():
    text = "m = 1; J = 0.1;\nCart | Sx(x), Rz(phi) | m, J, J, J;\nx't = phi't't;\n"
    with pytest.raises(kidym.ModelError, match=r"uses `phi't't`, an acceleration") as info:
        kidym.parse(text)
    assert info.value.errors[0].span.line == 3


# --------------------------------------------- item 11: generated names in formulas
def test_rolling_condition_from_the_bodys_own_rotation_matrix():
    """``x't = k*S11Top*a't`` with a shift after the rotation: x' = k cos(a) a'."""
    eq = kidym.derive(kidym.parse(TOP))
    k, a, w = _sym("k", "a", "a't")
    assert sp.simplify(_rows(eq)["x"] - k * sp.cos(a) * w) == 0


def test_rolling_condition_with_the_origin_and_centre_names():
    text = TOP.replace("x't = k*S11Top*a't;", "x't = k*(XOTop - XCTop + S21Top)*a't;")
    eq = kidym.derive(kidym.parse(text))
    k, a, w = _sym("k", "a", "a't")
    # form (1): the centre is the frame origin, so XOTop - XCTop = 0 and S21Top = sin(a)
    assert sp.simplify(_rows(eq)["x"] - k * sp.sin(a) * w) == 0


def test_check_accepts_the_rolling_condition(tmp_path, capsys):
    path = tmp_path / "top.kdm"
    path.write_text("Top | Sx(x), Rz(a), Sx(0.01) | 1, .1, .1, .1;\n"
                    "x't = 0.05*S11Top*a't;\n", encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert "model top: OK" in capsys.readouterr().out


def _top_closed_form(t_eval: np.ndarray):
    """x = k sin(a) + c: one degree of freedom with T = ½ I(a) ȧ² (Lagrange by hand)."""
    m, jz, k, d, M0, W = 1.0, 0.1, 0.05, 0.01, 0.3, 2.0

    def inertia(a):
        return m * ((k * np.cos(a) - d * np.sin(a)) ** 2 + (d * np.cos(a)) ** 2) + jz

    def dinertia(a):
        u = k * np.cos(a) - d * np.sin(a)
        return m * (2 * u * (-k * np.sin(a) - d * np.cos(a)) - 2 * d**2 * np.cos(a) * np.sin(a))

    def rhs(t, y):
        a, w = y
        return [w, (M0 * np.sin(W * t) - 0.5 * dinertia(a) * w**2) / inertia(a)]

    sol = solve_ivp(rhs, (0, t_eval[-1]), [0.4, 1.5], t_eval=t_eval, rtol=1e-12, atol=1e-13,
                    method="DOP853")
    a = sol.y[0]
    return {"a": a, "a't": sol.y[1], "x": k * (np.sin(a) - np.sin(0.4))}


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_rolling_top_follows_the_closed_form(engine):
    eq = kidym.derive(kidym.parse(TOP))
    res = kidym.simulate(eq, t_end=3.0, n_points=31, engine=engine, rtol=1e-11, atol=1e-12)
    ref = _top_closed_form(res.t)
    for name, values in ref.items():
        np.testing.assert_allclose(res.values[name], values, rtol=0, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("formula,cycle", [
    ("a't = ωZTop;", r"`a't` → `a't`"),
    ("x't = XCTop't;", r"`x't` → `x't`"),
    ("a't = 2*x't; x't = XCTop*ωZTop;", r"`a't` → `x't` → `a't`"),
])
def test_truly_circular_generated_names_are_a_located_error(formula, cycle):
    text = "m = 1;\nTop | Sx(x), Rz(a), Sx(0.01) | m, .1, .1, .1;\n" + formula + "\n"
    model = kidym.parse(text)
    with pytest.raises(kidym.ModelError, match=r"needs its own value: " + cycle) as info:
        kidym.derive(model)
    (diag,) = info.value.errors
    assert diag.span is not None and diag.span.line == 3
