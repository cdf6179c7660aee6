"""Exact motions of closed loops through their dead centres, as one-degree-of-freedom
equations (issue 27).

The parallelogram four-bar on its parallelogram branch: on that branch the crank and
the rocker turn together (angle ``θ`` from the x axis) and the coupler translates, so
the motion has one degree of freedom. The kinetic and potential energies are formed
here with SymPy from the positions of the rods' centres as functions of ``θ`` alone
(independently of kidym's closure by ``СОВПАДЕНИЕ``), Lagrange's equation gives ``θ''``,
and SciPy integrates it at rtol = atol = 1e-13. The slider-crank likewise, by its crank
angle alone.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

_t = sp.symbols("t")


def _integrate(T: sp.Expr, V: sp.Expr, th, theta0: float, omega0: float,
               times: np.ndarray) -> np.ndarray:
    """``θ(t)`` from Lagrange's equation of ``L = T − V`` in the one coordinate ``θ``."""
    L = T - V
    eq = sp.diff(L.diff(th.diff(_t)), _t) - L.diff(th)
    x, v, a = sp.symbols("x v a")
    eq = eq.subs(th.diff(_t, 2), a)             # linear in the acceleration
    acc = -eq.subs(a, 0) / eq.diff(a)
    f = sp.lambdify((x, v), acc.subs(th.diff(_t), v).subs(th, x), "numpy")
    sol = solve_ivp(lambda _tt, y: [y[1], f(y[0], y[1])], (times[0], times[-1]),
                    [theta0, omega0], t_eval=times, rtol=1e-13, atol=1e-13, method="DOP853")
    assert sol.success
    return sol.y[0]


def slider_crank_motion(*, a: float, b: float, m1: float, m2: float, ms: float,
                        theta0: float, omega0: float, times: np.ndarray) -> np.ndarray:
    """``θ(t)`` of a slider-crank in a horizontal plane (no gravity): a uniform crank of
    length ``a`` and mass ``m1`` about the origin, a uniform connecting rod ``b``, ``m2``
    from its tip to a slider of mass ``ms`` on the x axis. Its dead centres (crank and
    rod in line, ``θ = 0, π``) are regular positions of the loop."""
    th = sp.Function("theta")(_t)
    psi = sp.asin(-a * sp.sin(th) / b)                       # the rod's angle
    tip = sp.Matrix([a * sp.cos(th), a * sp.sin(th)])
    rod = tip + sp.Matrix([b / 2 * sp.cos(psi), b / 2 * sp.sin(psi)])
    s = a * sp.cos(th) + b * sp.cos(psi)
    T = (m1 * a**2 / 3 * th.diff(_t) ** 2 / 2
         + m2 * (rod.diff(_t).T * rod.diff(_t))[0] / 2 + m2 * b**2 / 12 * psi.diff(_t) ** 2 / 2
         + ms * s.diff(_t) ** 2 / 2)
    return _integrate(T, sp.Integer(0), th, theta0, omega0, times)


def parallelogram_motion(*, l: float, m: float, g: float, k: float = 0.0, rest: float = 0.0,
                         theta0: float, omega0: float, times: np.ndarray) -> np.ndarray:
    """``θ(t)`` at ``times``: three uniform rods of length ``l`` and mass ``m``, ground
    pivots ``l`` apart on the x axis, gravity ``g`` along -y, a spring of stiffness ``k``
    and rest length ``rest`` from the first ground pivot to the far coupler joint."""
    th = sp.Function("theta")(_t)
    c, s = sp.cos(th), sp.sin(th)
    centres = [sp.Matrix([l / 2 * c, l / 2 * s]),            # crank
               sp.Matrix([l * c + l / 2, l * s]),             # coupler (translates)
               sp.Matrix([l + l / 2 * c, l / 2 * s])]         # rocker
    rates = [th.diff(_t), 0, th.diff(_t)]                     # their angular velocities
    J = m * l**2 / 12
    T = sum(m * (r.diff(_t).T * r.diff(_t))[0] / 2 + J * w**2 / 2
            for r, w in zip(centres, rates))
    tip = sp.Matrix([l + l * c, l * s])                       # far coupler joint
    V = sum(m * g * r[1] for r in centres) + k * (sp.sqrt((tip.T * tip)[0]) - rest) ** 2 / 2
    return _integrate(T, V, th, theta0, omega0, times)


def n_four_bar_motion(n: int, *, l: float, m: float, g: float, theta0: float,
                      omega0: float, times: np.ndarray) -> np.ndarray:
    """``θ(t)`` of IFToMM A02's N-four-bar on its parallelogram branch: ``n + 1`` cranks
    turning together about ground pivots ``l`` apart, ``n`` couplers translating on
    their tips (uniform rods of length ``l``, mass ``m``), gravity ``g`` along -y."""
    th = sp.Function("theta")(_t)
    c, s = sp.cos(th), sp.sin(th)
    crank = [sp.Matrix([i * l + l / 2 * c, l / 2 * s]) for i in range(n + 1)]
    coupler = [sp.Matrix([i * l + l * c + l / 2, l * s]) for i in range(n)]
    J = m * l**2 / 12
    T = (sum(m * (r.diff(_t).T * r.diff(_t))[0] / 2 + J * th.diff(_t) ** 2 / 2
             for r in crank)
         + sum(m * (r.diff(_t).T * r.diff(_t))[0] / 2 for r in coupler))
    V = sum(m * g * r[1] for r in crank + coupler)
    return _integrate(T, V, th, theta0, omega0, times)
