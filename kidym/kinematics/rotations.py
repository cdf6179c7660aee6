"""Elementary rotations and quaternion rotation matrices.

Conventions (written once, used everywhere; see ``docs/theory.md``):

* ``Rx(a)``, ``Ry(a)``, ``Rz(a)``: the child frame is the parent frame turned by
  ``a`` about the parent's x/y/z axis, right-handed. The matrix returned maps
  child components to parent components (``v_parent = R · v_child``), so the
  columns of ``R`` are the child axes in the parent frame.
* A body's matrix ``S`` maps body components to fixed-frame components.
"""

from __future__ import annotations

import symengine as se

Expr = se.Basic
AXES = {"x": 0, "y": 1, "z": 2}


def axis_rotation(axis: str, c: Expr, s: Expr) -> list[list[Expr]]:
    """Matrix (parent ← child) of a rotation about ``axis`` with cosine ``c``, sine ``s``."""
    one, zero = se.Integer(1), se.Integer(0)
    if axis == "x":
        return [[one, zero, zero], [zero, c, -s], [zero, s, c]]
    if axis == "y":
        return [[c, zero, s], [zero, one, zero], [-s, zero, c]]
    if axis == "z":
        return [[c, -s, zero], [s, c, zero], [zero, zero, one]]
    raise ValueError(f"unknown axis {axis!r}")


def unit(axis: str) -> list[Expr]:
    """Unit vector along ``axis``."""
    v = [se.Integer(0)] * 3
    v[AXES[axis]] = se.Integer(1)
    return v
