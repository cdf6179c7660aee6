"""Physical admissibility of a body's mass and central inertia tensor.

A real body has a mass ``m ≥ 0`` and a central inertia tensor that is positive
semidefinite and whose principal moments satisfy the triangle inequalities
``J1 ≤ J2 + J3`` (each moment is an integral of a sum of two squared distances).
Zeros are allowed: a point mass, or a thin rod with ``Jx = 0``. The checks run on
numbers: at model build time on the parameter values written in the file, and at
run time when parameters are overridden (:func:`check_inertias`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import symengine as se

from kidym.model.model import Inertia, Model
from kidym.symbolic.numbers import to_float

#: Field order of :class:`kidym.model.model.Inertia`.
FIELDS = ("mass", "jx", "jy", "jz", "jxy", "jyz", "jxz")
#: How each field is written in a model file.
WRITTEN = {"mass": "m", "jx": "Jx", "jy": "Jy", "jz": "Jz", "jxy": "Jxy", "jyz": "Jyz",
           "jxz": "Jxz"}

_REL_TOL = 1e-12


@dataclass(frozen=True)
class InertiaProblem:
    """Why a mass and inertia tensor are not those of a real body.

    Attributes
    ----------
    field : str
        The field to blame (``"mass"``, ``"jz"`` …), or ``"tensor"`` when the
        products of inertia take part.
    message : str
        What is wrong, with the values.
    """

    field: str
    message: str


def _g(x: float) -> str:
    return f"{x:.6g}"


def inertia_problem(values: Sequence[float], *,
                    complete: bool = True) -> InertiaProblem | None:
    """The first physical impossibility in ``(m, Jx, Jy, Jz, Jxy, Jyz, Jxz)``, or ``None``.

    Parameters
    ----------
    values : sequence of float, length 7
        Mass, moments and products (positive integrals ``Jxy = ∫ x y dm``).
    complete : bool, optional
        Whether the values are a full tensor (:func:`full_tensor`). ``False`` for a
        record with a moment that is the number 0 (a thin rod ``Jx(0)``, a planar
        model giving only ``Jz``): only a negative mass or moment is then an error.

    Returns
    -------
    InertiaProblem or None
        ``None`` for an admissible body: ``m ≥ 0``, the tensor
        ``[[Jx, −Jxy, −Jxz], [−Jxy, Jy, −Jyz], [−Jxz, −Jyz, Jz]]`` positive
        semidefinite and its principal moments satisfying the triangle
        inequalities, all up to a relative rounding tolerance of 1e-12.
    """
    m, jx, jy, jz, jxy, jyz, jxz = (float(v) for v in values)
    named = dict(zip(FIELDS, (m, jx, jy, jz, jxy, jyz, jxz)))
    for f, v in named.items():
        if not math.isfinite(v):
            return InertiaProblem(f, f"`{WRITTEN[f]}` is not finite ({v})")
    if m < 0:
        return InertiaProblem("mass", f"the mass is negative (m = {_g(m)})")
    moments = {"jx": jx, "jy": jy, "jz": jz}
    tol = _REL_TOL * max(abs(jx), abs(jy), abs(jz), abs(jxy), abs(jyz), abs(jxz))
    for f, v in moments.items():
        if v < -tol:
            return InertiaProblem(f, f"the moment of inertia `{WRITTEN[f]}` is negative "
                                     f"({WRITTEN[f]} = {_g(v)})")
    if not complete:
        return None
    if not any((jxy, jyz, jxz)):
        for f, v in moments.items():
            others = [o for o in moments if o != f]
            rest = moments[others[0]] + moments[others[1]]
            if v > rest + tol:
                a, b = (WRITTEN[o] for o in others)
                return InertiaProblem(
                    f, f"the moments of inertia violate the triangle inequality: "
                       f"{WRITTEN[f]} = {_g(v)} exceeds {a} + {b} = {_g(rest)} (no real body "
                       f"has one moment larger than the sum of the other two)")
        return None
    tensor = np.array([[jx, -jxy, -jxz], [-jxy, jy, -jyz], [-jxz, -jyz, jz]])
    principal = np.linalg.eigvalsh(tensor)
    shown = ", ".join(_g(v) for v in principal)
    if principal[0] < -tol:
        return InertiaProblem("tensor", "the inertia tensor is not positive semidefinite "
                                        f"(principal moments {shown}): the products of inertia "
                                        "are too large for the moments")
    if principal[2] > principal[0] + principal[1] + tol:
        return InertiaProblem("tensor", "the principal moments of inertia violate the triangle "
                                        f"inequality ({shown}: the largest exceeds the sum of "
                                        "the other two)")
    return None


def _numbers(model: Model, values: Mapping[str, float],
             needed: set[str]) -> dict[se.Basic, se.Basic]:
    """Substitutions giving the parameters and the ``needed`` definitions their numbers.

    The values go in as exact rationals: SymEngine evaluates ``floor`` of a floating
    infinity (``1 % z`` with ``z = 0.0``) by a hardware fault that ends the process,
    while the exact ``floor(zoo)`` is a ``RuntimeError``.
    """
    subs: dict[se.Basic, se.Basic] = {}
    for n, v in values.items():
        if math.isfinite(v):
            f = Fraction(v)
            subs[se.Symbol(n)] = se.Integer(f.numerator) if f.denominator == 1 else \
                se.Rational(f.numerator, f.denominator)
    for d in model.definitions:   # dependency order
        if d.name in needed:
            try:
                subs[se.Symbol(d.name)] = d.expr.xreplace(subs)
            except (RuntimeError, ValueError, ZeroDivisionError):
                pass   # undefined with these values: the body is not checked here
    return subs


def check_inertias(model: Model, values: Mapping[str, float],
                   changed: Sequence[str] | None = None) -> None:
    """Raise ``ValueError`` if a body's inertia is impossible with these parameter values.

    Parameters
    ----------
    model : Model
        The model whose bodies are checked.
    values : mapping of str to float
        Every parameter's value (run-time overrides applied).
    changed : sequence of str, optional
        The overridden parameters; only bodies whose inertia depends on one of them
        are checked (the others were checked when the model was built). ``None``:
        every body.

    Raises
    ------
    ValueError
        Naming the body, the parameters its inertia uses with their values, and
        what is wrong.
    """
    defs = {d.name: d.expr for d in model.definitions}
    checked = []
    for body in model.bodies:
        exprs = [getattr(body.inertia, f) for f in FIELDS]
        names = _names_used(exprs, defs)
        used = names & set(values)
        if changed is None or used & set(changed):
            checked.append((body, exprs, used))
    if not checked:
        return
    needed = set().union(*(_names_used(e, defs) for _b, e, _u in checked))
    subs = _numbers(model, values, needed)
    for body, exprs, used in checked:
        try:
            numbers = [to_float(e.xreplace(subs)) for e in exprs]
        except (RuntimeError, TypeError, ValueError, OverflowError, ZeroDivisionError):
            continue   # undefined with these values, or a parameter not finite
        problem = inertia_problem(numbers, complete=full_tensor(body.inertia))
        if problem is not None:
            shown = ", ".join(f"{n} = {values[n]:g}" for n in sorted(used))
            raise ValueError(f"body `{body.name}`: {problem.message}, with parameters {shown}; "
                             "choose values that a real body can have")


def _names_used(exprs: Sequence[se.Basic], defs: Mapping[str, se.Basic]) -> set[str]:
    """Names that ``exprs`` depend on, through definitions."""
    seen: set[str] = set()
    stack = [s.name for e in exprs for s in e.free_symbols]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in defs:
            stack.extend(s.name for s in defs[n].free_symbols)
    return seen


def full_tensor(inertia: Inertia) -> bool:
    """Whether no moment of ``inertia`` is the number 0 (written ``Jx(0)`` or left out).

    A body with such a moment (a thin rod, or a planar model giving only ``Jz``) is
    checked for negative values only (``complete=False`` in :func:`inertia_problem`).
    """
    return not any(getattr(inertia, f) == 0 for f in ("jx", "jy", "jz"))
