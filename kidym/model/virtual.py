"""``ВИРТУАЛЬНЫЕ СВЯЗИ`` and ``ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ``: reading and checking.

Both instructions list defined quantities, each with its approximation parameter and,
optionally, the delta approximation (seed 001 eqs. (12), (13))::

    ВИРТУАЛЬНЫЕ СВЯЗИ := f1(alpha), f2(alpha, ЭКСПОНЕНТА);     # f = 0      (eq. (5))
    ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ := s1(1e4), s2(1e4);           # s > 0 allowed (eq. (7))

Free functions over the model builder (:mod:`kidym.model.build`): :func:`read_items`
while the instruction lists are read, :func:`check_items` once names are classified and
parameter values known. The mechanics is :mod:`kidym.eom.virtual`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import symengine as se

from kidym.errors import Span
from kidym.lang import ast, keywords
from kidym.lang.formulas import suggest
from kidym.model.model import VirtualConstraint

Expr = se.Basic

#: ``kind`` of :class:`VirtualConstraint` by instruction key.
KINDS = {"VIRTUAL_CONSTRAINTS": "equality", "BOUNDING_SURFACES": "bound"}


@dataclass(frozen=True)
class VirtualItem:
    """One item ``f(α[, approximation])`` as read, before the checks."""

    name: ast.Name
    kind: str
    alpha: ast.Expr
    alpha_expr: Expr
    approximation: str
    span: Span
    written: str


def _approximations() -> str:
    return ", ".join(f"`{spellings[0]}`/`{spellings[-1]}`"
                     for spellings in keywords.APPROXIMATIONS.values())


def read_items(b, ins: ast.Instruction) -> list[VirtualItem]:
    """The items of one instruction; located errors for what is not ``name(α[, kind])``.

    Parameters
    ----------
    b : kidym.model.build._Builder
        The builder (``error``, ``rename``, ``formula``, ``text``).
    ins : ast.Instruction
        ``ВИРТУАЛЬНЫЕ СВЯЗИ`` or ``ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ``.
    """
    kind = KINDS[ins.key]
    what = ("a defined quantity that must vanish" if kind == "equality"
            else "a defined quantity that is positive on the allowed side")
    out: list[VirtualItem] = []
    for item in ins.items:
        if isinstance(item, ast.Name):
            b.error(f"`{ins.written}`: `{item.name}` needs its approximation parameter α: "
                    f"write `{item.name}(alpha)` with `alpha = 1000;` (the larger α, the "
                    "stiffer the constraint)", item.span)
            continue
        if not (isinstance(item, ast.Call) and 1 <= len(item.args) <= 2):
            b.error(f"`{ins.written}` lists items `f(α)` or `f(α, approximation)`, f {what}; "
                    f"got `{b.text(item)}`", item.span)
            continue
        approximation = next(iter(keywords.APPROXIMATIONS))
        if len(item.args) == 2:
            word = item.args[1]
            found = (keywords.lookup_approximation(word.name) if isinstance(word, ast.Name)
                     else None)
            if found is None:
                b.error(f"`{ins.written}`: unknown delta approximation `{b.text(word)}` for "
                        f"`{item.func.name}`; expected one of {_approximations()}", word.span)
                continue
            approximation = found
        alpha = b.formula(item.args[0], "value",
                          f"α of `{item.func.name}` in `{ins.written}`")
        if alpha is None:
            continue
        name = item.func
        out.append(VirtualItem(
            ast.Name(name=b.rename(name.name), span=name.span, start=name.start, end=name.end),
            kind, item.args[0], alpha, approximation, item.span, ins.written))
    return out


def check_items(b, items: list[VirtualItem]) -> tuple[VirtualConstraint, ...]:
    """Check every item once names are classified and parameter values are known.

    Each name must be a defined quantity of the coordinates and time (not a parameter,
    a coordinate, a generated name or a velocity), listed once in both instructions and
    not also in ``УРАВНЕНИЯ``; α must be a formula of parameters with a positive finite
    value in the file.
    """
    out: list[VirtualConstraint] = []
    seen: dict[str, VirtualItem] = {}
    exact = {n.name for n in b.constraint_names}
    for it in items:
        n = it.name
        ok = True
        if n.name in seen:
            b.error(f"`{n.name}` is listed twice (`{seen[n.name].written}`, `{it.written}`); "
                    "list each virtual constraint once", n.span)
            ok = False
        elif n.name in exact:
            exact_written = b.instructions["IK_EQUATIONS"].written
            b.error(f"`{n.name}` is listed both in `{it.written}` and in `{exact_written}`; a "
                    "constraint is held either exactly (`УРАВНЕНИЯ`) or by a virtual "
                    "potential, not both", n.span)
            ok = False
        elif n.name in b.params:
            b.error(f"`{n.name}` is listed in `{it.written}` but has a value; list the name "
                    "of a formula of the coordinates (`f1 = x^2 + y^2 - R^2;`)", n.span)
            ok = False
        elif n.name in b.coordinates or n.name in b.owner_of_generated:
            b.error(f"`{n.name}` is listed in `{it.written}` but is a coordinate or a generated "
                    f"name; define a formula (`f1 = {n.name} - …;`) and list `f1`", n.span)
            ok = False
        elif n.name not in b.defs:
            hint = suggest(n.name, sorted(b.defs))
            b.error(f"`{n.name}` is listed in `{it.written}` but is not defined: define it as "
                    f"a formula of the coordinates (`{n.name} = …;`){hint}", n.span)
            ok = False
        elif b.time_level(n.name, set()) >= 1:
            b.error(f"`{n.name}` is listed in `{it.written}` but depends on a speed; a virtual "
                    "potential is a function of the coordinates and time only", n.span)
            ok = False
        seen.setdefault(n.name, it)
        where = f"α of `{n.name}` in `{it.written}`"
        errors = len(b.diags)
        b.check_constant(it.alpha_expr, where, it.alpha.span)
        if len(b.diags) > errors:
            continue
        value = b.value(it.alpha, where)
        if value is None:
            continue
        if not (math.isfinite(value) and value > 0):
            b.error(f"{where} must be a positive number (the larger, the stiffer the "
                    f"constraint), got {value:g}", it.alpha.span)
            continue
        expanded = b.expand(it.alpha_expr)
        if ok and expanded is not None:
            out.append(VirtualConstraint(n.name, it.kind, expanded, it.approximation, it.span))
    return tuple(out)


def check_alphas(model, values: dict[str, float]) -> None:
    """Raise ``ValueError`` unless every α of ``model`` is positive with ``values``.

    Parameters
    ----------
    model : kidym.model.Model
        The model (its ``virtual_constraints`` hold α over parameter names).
    values : dict of str to float
        Every parameter's value, overrides applied (``simulate(parameters=…)``).
    """
    for vc in model.virtual_constraints:
        used = sorted(s.name for s in vc.alpha.free_symbols)
        if not used:
            continue
        subs = {se.Symbol(n): values[n] for n in used if n in values}
        try:
            value = float(vc.alpha.xreplace(subs))
        except (RuntimeError, TypeError, ValueError):
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            shown = ", ".join(f"{n} = {values.get(n, math.nan):g}" for n in used)
            raise ValueError(f"α of virtual constraint `{vc.name}` is {value:g} with "
                             f"parameters {shown}; it must be a positive number")
