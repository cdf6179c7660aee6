"""Three-component vector helpers on SymEngine expressions (plain lists)."""

from __future__ import annotations

import symengine as se

Expr = se.Basic
Vec = list[Expr]
Mat = list[list[Expr]]


def add(a: Vec, b: Vec) -> Vec:
    """``a + b``."""
    return [x + y for x, y in zip(a, b)]


def scale(k: Expr, a: Vec) -> Vec:
    """``k a``."""
    return [k * x for x in a]


def cross(a: Vec, b: Vec) -> Vec:
    """``a × b``."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a: Vec, b: Vec) -> Expr:
    """``a · b``."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def matvec(m: Mat, v: Vec) -> Vec:
    """``m v``."""
    return [m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2] for i in range(3)]


def tmatvec(m: Mat, v: Vec) -> Vec:
    """``mᵀ v``."""
    return [m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2] for i in range(3)]


def matmul(a: Mat, b: Mat) -> Mat:
    """``a b``."""
    return [[a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] for j in range(3)]
            for i in range(3)]


def is_zero(v: Vec) -> bool:
    """Whether every component is identically zero."""
    return all(x == 0 for x in v)


def gyroscopic(J: Mat, w: Vec) -> Vec:
    """``w × (J w)`` with the coefficient of each product ``w_p w_q`` collected.

    Written out as ``w_y (J w)_z − w_z (J w)_y`` the ``x`` component of a diagonal
    ``J`` costs three products where ``(J_zz − J_yy) w_y w_z`` needs two (and the
    difference depends on the parameters only, so generated code computes it once
    per parameter vector). Every component is a quadratic form in ``w``; its
    coefficients are summed per unordered pair ``(p, q)``, zero ones dropped.

    Parameters
    ----------
    J : 3×3 nested list
        Inertia tensor (symmetric or not).
    w : 3-vector
        Angular velocity, in the same components.
    """
    out = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        coef: dict[tuple[int, int], Expr] = {}
        for q in range(3):
            for p, sign, row in ((j, 1, k), (k, -1, j)):
                key = (min(p, q), max(p, q))
                coef[key] = coef.get(key, se.Integer(0)) + sign * J[row][q]
        out.append(sum((c * w[p] * w[q] for (p, q), c in sorted(coef.items()) if c != 0),
                       se.Integer(0)))
    return out
