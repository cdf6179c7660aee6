"""``НЕИЗВЕСТНЫЕ`` and ``ПРОГРАММНЫЕ СВЯЗИ``: controls and the programmed constraints
that determine them (seed 004 (5.1)–(5.6)), reading and checking.

::

    НЕИЗВЕСТНЫЕ := u1, u2;                      # controls, entering forces linearly
    ПРОГРАММНЫЕ СВЯЗИ := f1, f2(-400, -40), g1(-5);

An item is a defined quantity, alone (the default perturbation law) or with its
coefficients: ``f(h, k)`` for a holonomic ``f(q, t)`` (``ÿ = h y + k ẏ``),
``g(k)`` for a first-order ``g(q, v, t)`` (``ż = k z``). Free functions over the model
builder (:mod:`kidym.model.build`), like :mod:`kidym.model.virtual`: :func:`read_items`
while the instruction lists are read, :func:`check` once names are classified. The
mechanics is :mod:`kidym.eom.controls`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import symengine as se

from kidym.errors import Span
from kidym.lang import ast
from kidym.lang.formulas import suggest
from kidym.model.model import ProgrammedConstraint

Expr = se.Basic

#: The default perturbation law of a holonomic programmed constraint, ``ÿ = h y + k ẏ``:
#: a double root at −10 1/s (critically damped; a deviation decays as ``(y0 + (ẏ0 +
#: 10 y0) t) e^{−10 t}``).
DEFAULT_H = -100
DEFAULT_K = -20
#: The default law of a first-order one, ``ż = k z``: ``z0 e^{−10 t}``.
DEFAULT_K_FIRST = -10

#: Calculation types a model with controls may ask for (statics and free vibrations of
#: the closed loop: :mod:`kidym.analysis`).
CALCULATIONS = (None, "DYNAMICS", "EQUATIONS", "STATICS", "FREE_VIBRATIONS")


@dataclass(frozen=True)
class ProgrammedItem:
    """One item ``f``, ``f(h, k)`` or ``g(k)`` as read, before the checks."""

    name: ast.Name
    args: tuple[ast.Expr, ...]
    exprs: tuple[Expr, ...]
    span: Span


def read_items(b, ins: ast.Instruction) -> list[ProgrammedItem]:
    """The items of ``ПРОГРАММНЫЕ СВЯЗИ``; located errors for what is not ``name`` or
    ``name(coefficients)``."""
    out: list[ProgrammedItem] = []
    for item in ins.items:
        if isinstance(item, ast.Name):
            name, args = item, ()
        elif isinstance(item, ast.Call) and 1 <= len(item.args) <= 2:
            name, args = item.func, tuple(item.args)
        else:
            b.error(f"`{ins.written}` lists items `f`, `f(h, k)` (f a formula of the "
                    "coordinates and time) or `g(k)` (g a formula that uses a speed); got "
                    f"`{b.text(item)}`", item.span)
            continue
        exprs = []
        for a, label in zip(args, ("first", "second")):
            e = b.formula(a, "value", f"the {label} coefficient of `{name.name}` in "
                                      f"`{ins.written}`")
            exprs.append(e)
        if any(e is None for e in exprs):
            continue
        out.append(ProgrammedItem(
            ast.Name(name=b.rename(name.name), span=name.span, start=name.start, end=name.end),
            args, tuple(exprs), item.span))  # type: ignore[arg-type]
    return out


def check(b, controls: list[ast.Name], items: list[ProgrammedItem]
          ) -> tuple[tuple[str, ...], tuple[ProgrammedConstraint, ...]]:
    """Check the controls and the programmed constraints once names are classified.

    Controls: names used in the model with no value or formula, not coordinates.
    Constraints: defined quantities of the coordinates and time or linear or not in the
    speeds (no accelerations), listed once, not also in ``УРАВНЕНИЯ`` or ``ВИРТУАЛЬНЫЕ
    СВЯЗИ``; coefficients formulas of parameters with values ``≤ 0``; at least as many
    controls as constraints, and each instruction needs the other.
    """
    ins_u = b.instructions.get("UNKNOWNS")
    ins_p = b.instructions.get("PROGRAMMED_CONSTRAINTS")
    n_errors = len(b.diags)
    names = tuple(n.name for n in controls)
    for n in controls:
        if n.name in b.params or n.name in b.defs:
            b.error(f"`{n.name}` is listed in `{ins_u.written}` but has a value or formula; a "
                    "control is an unknown the programmed constraints determine: remove its "
                    f"definition", n.span)
        elif n.name in b.coordinates or n.name in b.owner_of_generated or n.name in b.structural:
            b.error(f"`{n.name}` is listed in `{ins_u.written}` but is a coordinate or enters a "
                    "position; a control enters only force characteristics "
                    f"(`Pu.phi = {n.name};`)", n.span)
        elif not any(u.base == n.name and u.kind in ("characteristic", "definition")
                     for u in b.uses):
            b.error(f"control `{n.name}` of `{ins_u.written}` is used nowhere; use it in a force "
                    f"characteristic (`Pu.phi = {n.name};`) or remove it", n.span)
    if ins_u is not None and ins_p is None:
        b.error(f"`{ins_u.written}` lists controls, but nothing determines them: list the "
                "constraints they must hold in `ПРОГРАММНЫЕ СВЯЗИ := f1, …;` (docs/language.md "
                "§2.4c)", ins_u.name_span)
    if ins_p is not None and not controls:
        b.error(f"`{ins_p.written}` needs controls to hold its constraints: list them in "
                "`НЕИЗВЕСТНЫЕ := u1, …;` and use them in force characteristics",
                ins_p.name_span)
    if ins_p is None:
        return names, ()
    if b.calculation not in CALCULATIONS:
        b.error(f"`{ins_p.written}` (controls of programmed constraints) works in the dynamics, "
                "statics and free-vibrations calculations only; remove it or use `РАСЧЕТ := "
                "ДИНАМИКА;` (or `СТАТИКА`, `СВОБОДНЫЕ КОЛЕБАНИЯ`: the closed loop's equilibrium "
                "and modes)", ins_p.name_span)
    for key in ("IK_EQUATIONS", "ROLLING", "COINCIDE"):
        other = b.instructions.get(key)
        if other is not None:
            b.error(f"`{ins_p.written}` together with `{other.written}` is not supported yet: "
                    "the controls are solved from the programmed constraints of a model with "
                    "no constraint multipliers", ins_p.name_span)
    exact = {n.name for n in b.constraint_names}
    virtual_names = {it.name.name for it in b.virtual_items}
    out: list[ProgrammedConstraint] = []
    seen: set[str] = set()
    for it in items:
        n = it.name
        if n.name in seen:
            b.error(f"`{n.name}` is listed twice in `{ins_p.written}`", n.span)
            continue
        seen.add(n.name)
        if n.name in exact or n.name in virtual_names:
            b.error(f"`{n.name}` is listed both in `{ins_p.written}` and as a constraint held by "
                    "a multiplier or a virtual potential; list it once", n.span)
            continue
        if n.name in b.params or n.name in b.coordinates or n.name in b.owner_of_generated:
            b.error(f"`{n.name}` is listed in `{ins_p.written}` but is a parameter, a coordinate "
                    f"or a generated name; define the constraint as a formula (`f1 = {n.name} - "
                    "…;`) and list `f1`", n.span)
            continue
        if n.name not in b.defs:
            hint = suggest(n.name, sorted(b.defs))
            b.error(f"`{n.name}` is listed in `{ins_p.written}` but is not defined: define it as "
                    f"a formula that must vanish (`{n.name} = …;`){hint}", n.span)
            continue
        level = b.time_level(n.name, set())
        if level >= 2:
            b.error(f"programmed constraint `{n.name}` uses an acceleration; it is a formula of "
                    "the coordinates, speeds and time", n.span)
            continue
        first = level == 1
        want = "`g(k)`" if first else "`f(h, k)`"
        if it.args and len(it.args) != (1 if first else 2):
            kind = ("uses a speed (first order, ż = k z)" if first
                    else "is a formula of the coordinates and time (ÿ = h y + k ẏ)")
            b.error(f"programmed constraint `{n.name}` {kind}: its coefficients are written "
                    f"{want}, got {len(it.args)}", it.span)
            continue
        if it.args:
            coeffs = list(it.exprs)
        else:
            coeffs = [se.Integer(DEFAULT_K_FIRST)] if first else [
                se.Integer(DEFAULT_H), se.Integer(DEFAULT_K)]
        ok = True
        for label, e, node in zip(("k",) if first else ("h", "k"), coeffs,
                                  it.args or (None,) * len(coeffs)):
            where = f"coefficient {label} of `{n.name}` in `{ins_p.written}`"
            span = node.span if node is not None else n.span
            errors = len(b.diags)
            b.check_constant(e, where, span)
            if len(b.diags) > errors:
                ok = False
                continue
            value = b.value(node, where) if node is not None else float(e)
            if value is None or not (math.isfinite(value) and value <= 0):
                b.error(f"{where} must be a number ≤ 0 (the deviation decays for h < 0, k < 0; "
                        f"0 leaves it undamped), got {value}", span)
                ok = False
        if not ok:
            continue
        expanded = [b.expand(e) for e in coeffs]
        if any(e is None for e in expanded):
            continue
        h, k = (se.Integer(0), expanded[0]) if first else (expanded[0], expanded[1])
        out.append(ProgrammedConstraint(n.name, first, h, k, it.span))
    if len(b.diags) == n_errors and controls and len(controls) < len(items):
        b.error(f"`{ins_p.written}` lists {len(items)} constraints but `{ins_u.written}` only "
                f"{len(controls)} control{'s' if len(controls) != 1 else ''}: each constraint "
                "needs a control of its own to hold it (add controls or remove constraints)",
                ins_p.name_span)
    return names, tuple(out)


def check_coefficients(model, values: dict[str, float]) -> None:
    """Raise ``ValueError`` unless every coefficient of ``model``'s programmed constraints
    is ``≤ 0`` with parameter ``values`` (overrides applied, ``simulate(parameters=…)``)."""
    for pc in model.programmed:
        for label, e in (("h", pc.h), ("k", pc.k)):
            subs = {s: values.get(s.name, math.nan) for s in e.free_symbols}
            try:
                v = float(e.xreplace(subs)) if subs else float(e)
            except (RuntimeError, TypeError, ValueError):
                v = math.nan
            if not (math.isfinite(v) and v <= 0):
                raise ValueError(f"coefficient {label} of programmed constraint `{pc.name}` is "
                                 f"{v:g} with the parameters given; it must be a number ≤ 0")
