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
