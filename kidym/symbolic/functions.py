"""Functions of formulas where SymEngine itself must be worked around.

``symengine.sign`` of a power with a non-integer exponent and a base written with a
minus sign (``sign(sqrt(-x))``, ``sign((-x)^y)``) recurses until the process dies
with SIGSEGV (SymEngine 0.15; found by ``tests/lang/fuzzing.py``). :func:`sign`
writes such a sign as its definition instead.
"""

from __future__ import annotations

import symengine as se

Expr = se.Basic


def sign(x: Expr) -> Expr:
    """The sign of ``x``: ``symengine.sign``, or for a power whose exponent is not an
    integer number, ``1`` where it is positive, ``-1`` where negative, else ``0``
    (as the engines' ``sign`` of a NaN)."""
    if x.is_Pow and not (x.args[1].is_Number and x.args[1].is_integer):
        return se.Piecewise((se.Integer(1), se.Gt(x, 0)), (se.Integer(-1), se.Lt(x, 0)),
                            (se.Integer(0), True))
    return se.sign(x)
