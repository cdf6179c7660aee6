"""Functions of formulas where SymEngine itself must be worked around.

``symengine.sign`` of a power with a non-integer exponent and a base written with a
minus sign (``sign(sqrt(-x))``, ``sign((-x)^y)``) recurses until the process dies
with SIGSEGV (SymEngine 0.15; found by ``tests/lang/fuzzing.py``) — when it is
formed, and again whenever a substitution (parameter values) rebuilds it. So kidym
never forms a symbolic ``sign``: :func:`sign` writes it by its definition.
"""

from __future__ import annotations

import symengine as se

Expr = se.Basic


def sign(x: Expr) -> Expr:
    """The sign of ``x``: ``1`` where it is positive, ``-1`` where negative, else ``0``
    (also for a NaN, as the engines' ``sign``); a number's sign directly."""
    if x.is_Number:
        return se.sign(x)
    return se.Piecewise((se.Integer(1), se.Gt(x, 0)), (se.Integer(-1), se.Lt(x, 0)),
                        (se.Integer(0), True))
