"""What the 3-D viewer draws for a body: ``ФОРМЫ := Cart(box(0.3, 0.1, 0.1)), …;``.

Without this instruction a body is drawn as the uniform solid of its inertia
(:func:`kidym.report.poses.shape_of`). ``ФОРМЫ`` (``ФОРМИ``, ``SHAPES``) names, body by
body, a solid in the body's central frame instead:

``box(a, b, c)``        edges along the central x, y, z axes (``брус``, ``бокс``);
``cylinder(d, h[, ax])`` diameter, length, axis ``x``, ``y`` or ``z`` (default ``z``;
                        ``цилиндр``, ``циліндр``);
``sphere(d)``           diameter (``шар``, ``сфера``, ``куля``);
``capsule(d, h[, ax])`` a cylinder with round ends, ``h`` overall (``капсула``).

Sizes are formulas of parameters (lengths in the model's units). Display only:
nothing of the equations changes, and nothing of it reaches generated code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import symengine as se

from kidym.errors import Span
from kidym.lang import ast

#: spelling (lower case) → (kind, number of sizes, whether an axis may follow)
KINDS = {"box": ("box", 3, False), "брус": ("box", 3, False), "бокс": ("box", 3, False),
         "cylinder": ("cylinder", 2, True), "цилиндр": ("cylinder", 2, True),
         "циліндр": ("cylinder", 2, True),
         "sphere": ("sphere", 1, False), "шар": ("sphere", 1, False),
         "сфера": ("sphere", 1, False), "куля": ("sphere", 1, False),
         "capsule": ("capsule", 2, True), "капсула": ("capsule", 2, True)}

#: axis names (Latin and the Cyrillic look-alikes of the seeds' names)
AXES = {"x": 0, "y": 1, "z": 2, "х": 0, "у": 1}


@dataclass(frozen=True)
class DisplayShape:
    """A body's declared display solid (``ФОРМЫ``).

    Attributes
    ----------
    body : str
        The body.
    kind : {"box", "cylinder", "sphere", "capsule"}
        The solid.
    sizes : tuple of Expr
        Box: three edges; cylinder, capsule: diameter and length; sphere: diameter.
    axis : int
        Axis of a cylinder or capsule in the central frame (0, 1, 2).
    """

    body: str
    kind: str
    sizes: tuple
    axis: int = 2
    span: Span | None = None


def _usage(written: str) -> str:
    return (f"`{written}` names how bodies are drawn: `Body(box(a, b, c))`, "
            "`Body(cylinder(d, h[, x|y|z]))`, `Body(sphere(d))` or "
            "`Body(capsule(d, h[, x|y|z]))`")


def read_items(b, ins: ast.Instruction) -> list[DisplayShape]:
    """The shapes of one ``ФОРМЫ`` instruction; located errors for anything else.

    Parameters
    ----------
    b : kidym.model.build._Builder
        The builder (``error``, ``formula``, ``text``).
    ins : ast.Instruction
        The instruction.
    """
    out: list[DisplayShape] = []
    for item in ins.items:
        if not (isinstance(item, ast.Call) and len(item.args) == 1
                and isinstance(item.args[0], ast.Call)):
            b.error(f"{_usage(ins.written)}; got `{b.text(item)}`", item.span)
            continue
        solid = item.args[0]
        word = solid.func.name.lower()
        if word not in KINDS:
            b.error(f"`{ins.written}`: unknown shape `{solid.func.name}`; the shapes are "
                    "box, cylinder, sphere, capsule (a mesh file is not read yet)",
                    solid.func.span)
            continue
        kind, n, with_axis = KINDS[word]
        args = list(solid.args)
        axis = 2
        if with_axis and len(args) == n + 1:
            last = args.pop()
            if not (isinstance(last, ast.Name) and last.name.lower() in AXES):
                b.error(f"`{ins.written}`: the axis of a {kind} is `x`, `y` or `z`; got "
                        f"`{b.text(last)}`", last.span)
                continue
            axis = AXES[last.name.lower()]
        if len(args) != n:
            sizes = {3: "three edges", 2: "a diameter and a length", 1: "a diameter"}[n]
            b.error(f"`{ins.written}`: a {kind} takes {sizes}"
                    f"{' and an optional axis' if with_axis else ''}; got "
                    f"`{b.text(solid)}`", solid.span)
            continue
        sizes = [b.formula(a, "value", f"a size in `{ins.written}`") for a in args]
        if any(s is None for s in sizes):
            continue
        out.append(DisplayShape(b.rename(item.func.name), kind, tuple(sizes), axis,
                                item.span))
    return out


def _value(b, expr) -> float | None:
    """The number a formula of parameters has with their values in the file (``None``
    where it has none: ``sqrt(-1)``, ``1/0``)."""
    expanded = b.expand(expr)
    if expanded is None:
        return None
    subs = {se.Symbol(n): v for n, v in b.param_exprs.items()}
    try:
        value = float(expanded.xreplace(subs))
    except (RuntimeError, TypeError, ValueError, ZeroDivisionError):
        return None
    return value if math.isfinite(value) else None


def check_items(b, items: list[DisplayShape], written: str,
                bodies: set[str]) -> tuple[DisplayShape, ...]:
    """Bodies that exist, each once; sizes of parameters (located errors)."""
    seen: set[str] = set()
    for s in items:
        if s.body not in bodies:
            known = ", ".join(sorted(bodies)) or "none"
            b.error(f"`{written}`: `{s.body}` is not a body (bodies: {known})", s.span)
        elif s.body in seen:
            b.error(f"`{written}`: body `{s.body}` is given a shape twice", s.span)
        seen.add(s.body)
        for x in s.sizes:
            reported = len(b.diags)
            if not b.check_constant(x, f"a size of `{s.body}` in `{written}`", s.span,
                                    value=True) or len(b.diags) > reported:
                continue
            value = _value(b, x)
            if value is None:
                b.error(f"`{written}`: a size of `{s.body}` is not a finite real number with "
                        "the parameter values of the file", s.span)
            elif not value > 0:
                b.error(f"`{written}`: a size of `{s.body}` must be positive; got {value:g}",
                        s.span)
    return tuple(items)
