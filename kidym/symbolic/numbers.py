"""Exact numbers to the nearest double.

Literals are kept exact (``0.9534570696121849`` is the rational
``9534570696121849/10^16``); they become floats where the model meets numbers —
parameter and initial values, C literals. SymEngine's own ``float()`` of a rational
divides two rounded doubles and can miss the nearest double by one unit in the last
place (``…849`` became ``…848``). :func:`to_float` rounds correctly: integers and
rationals through Python's exact ``int`` and :class:`fractions.Fraction` conversions
(IEEE round-half-even), other constants (``sqrt(2)/3``, ``sin(1/7)``) from a 200-bit
evaluation.
"""

from __future__ import annotations

from fractions import Fraction

import symengine as se

Expr = se.Basic

#: Bits of the evaluation of constants other than rationals (then rounded once to 53).
EVALUATION_BITS = 200


def to_float(x: Expr | int | float) -> float:
    """The double nearest to the constant ``x``.

    Parameters
    ----------
    x : Expr, int or float
        A constant: no free symbols.

    Returns
    -------
    float
        Correctly rounded for integers and rationals; for other constants the
        rounding of a 200-bit value (a double rounding that matters only within
        2^-147 of a tie).

    Raises
    ------
    OverflowError
        Beyond the range of a double.
    RuntimeError, TypeError, ValueError
        ``x`` is not a real constant (as ``float()`` of a SymEngine expression).
    """
    if isinstance(x, bool | int | float):
        return float(x)
    x = se.sympify(x)
    kind = type(x).__name__
    if kind == "Integer":
        return float(int(x))
    if kind == "Rational":
        num, den = x.get_num_den()
        return float(Fraction(int(num), int(den)))
    if kind == "RealDouble":
        return float(x)
    try:
        precise = x.n(EVALUATION_BITS, real=True)
    except (RuntimeError, TypeError, ValueError, NotImplementedError):
        return float(x)
    return float(precise)
