"""``СОВПАДЕНИЕ`` (``ЗБІГ``, ``COINCIDE``): loop closure by coinciding points, reading
and checking.

Each item says that a point of one body coincides with a point of another body or of
the fixed frame::

    СОВПАДЕНИЕ := Coupler(b, 0, 0) = Rocker(c, 0, 0), Leg(l, 0, 0) = ЗЕМЛЯ(d, 0, 0);

A point is ``Body(x, y, z)``, its coordinates in the body's own axes (the frame at the
end of the record's second section), or ``Body`` alone, the body's origin; ``ЗЕМЛЯ``
(``GROUND``) is the fixed frame, unless the model has a body of that name. Free
functions over the model builder (:mod:`kidym.model.build`): :func:`read_items` while
the instruction lists are read, :func:`check_items` once names are classified. The
constraints themselves are written by :func:`kidym.eom.constraints.coincidence_constraints`.
"""

from __future__ import annotations

import dataclasses

import symengine as se

from kidym.lang import ast
from kidym.lang.formulas import suggest
from kidym.model.model import Coincidence

Expr = se.Basic

#: Spellings of the fixed frame as a side of ``СОВПАДЕНИЕ`` (compared in lower case).
GROUND = ("земля", "ground")

_AXES = ("x", "y", "z")


def _usage(written: str) -> str:
    return (f"`{written}` lists `A(x, y, z) = B(x, y, z)`: a point of a body in the body's "
            "axes (or the body's name alone, its origin) and the point of another body or "
            "of the fixed frame `ЗЕМЛЯ(x, y, z)` that it coincides with")


def _side(b, node: ast.Expr, written: str, k: int
          ) -> tuple[bool, str | None, tuple[Expr, ...] | None]:
    """``(ok, body, point)`` of one side (errors reported at their place)."""
    if isinstance(node, ast.Name):
        func, args = node, None
    elif isinstance(node, ast.Call):
        func, args = node.func, node.args
    else:  # pragma: no cover - the grammar allows names and calls only
        b.error(f"{_usage(written)}; got `{b.text(node)}`", node.span)
        return False, None, None
    name = b.rename(func.name)
    if name in b.body_data:
        body: str | None = name
    elif func.name.lower() in GROUND:
        body = None
    else:
        b.error(f"`{written}`: `{func.name}` is not a body{suggest(name, sorted(b.body_data))}"
                f"; a point is `Body(x, y, z)` in the axes of a body of the model, or "
                f"`ЗЕМЛЯ(x, y, z)` (`GROUND`) in the fixed axes", func.span)
        return False, None, None
    if args is None:
        return True, body, None
    who = "the fixed frame" if body is None else f"`{body}`"
    if len(args) != 3:
        b.error(f"`{written}`: a point of {who} takes three coordinates in its axes, "
                f"`{func.name}(x, y, z)`, or none (`{func.name}` alone is its origin); got "
                f"{len(args)}", node.span)
        return False, None, None
    parts = [b.formula(a, "value", f"the {axis} coordinate of the point of {who} in item {k} "
                                   f"of `{written}`")
             for a, axis in zip(args, _AXES)]
    if any(p is None for p in parts):
        return False, None, None
    return True, body, tuple(parts)  # type: ignore[arg-type]


def read_items(b, ins: ast.Instruction) -> list[tuple[Coincidence, list[ast.Expr]]]:
    """The items of ``СОВПАДЕНИЕ``, each with the coordinate nodes of its points
    (for the later checks); located errors for what is not ``A(…) = B(…)``.

    Parameters
    ----------
    b : kidym.model.build._Builder
        The builder (``error``, ``rename``, ``formula``, ``text``, ``body_data``).
    ins : ast.Instruction
        The instruction.
    """
    out: list[tuple[Coincidence, list[ast.Expr]]] = []
    if not ins.items:
        b.error(f"{_usage(ins.written)}; the list is empty", ins.name_span)
    for k, item in enumerate(ins.items, start=1):
        if not isinstance(item, ast.CoincideItem):  # pragma: no cover - grammar
            b.error(f"{_usage(ins.written)}; got `{b.text(item)}`", item.span)
            continue
        ok_a, body_a, point_a = _side(b, item.left, ins.written, k)
        ok_b, body_b, point_b = _side(b, item.right, ins.written, k)
        if not (ok_a and ok_b):
            continue
        if body_a == body_b:
            what = "the fixed frame" if body_a is None else f"body `{body_a}`"
            b.error(f"`{ins.written}`: both points of `{b.text(item)}` belong to {what}; a "
                    "loop closes between two different bodies (or a body and the fixed frame "
                    "`ЗЕМЛЯ`)", item.span)
            continue
        nodes = [a for side in (item.left, item.right) if isinstance(side, ast.Call)
                 for a in side.args]
        out.append((Coincidence(k, body_a, point_a, body_b, point_b, b.text(item),
                                item.span), nodes))
    return out


def check_items(b, items: list[tuple[Coincidence, list[ast.Expr]]],
                written: str) -> tuple[Coincidence, ...]:
    """Points of bodies constant (parameters only), points of the fixed frame formulas
    of parameters and time; the generated names free; the calculation one that holds
    constraints. Returns the coincidences (expanded point coordinates)."""
    if not items:
        return ()
    if b.calculation in ("KINEMATICS", "INVERSE_KINEMATICS"):
        b.error(f"`{written}` closes a loop of a dynamics model; the "
                f"{'inverse ' if b.calculation == 'INVERSE_KINEMATICS' else ''}kinematics "
                "calculation does not read it: write the closure as formulas listed in "
                "`УРАВНЕНИЯ` (§2.4a)", items[0][0].span)
        return ()
    taken = (b.params | b.defs | set(b.coordinates) | set(b.pseudo_names)
             | set(b.owner_of_generated))
    out = []
    for c, _nodes in items:
        sides = []
        for body, point in ((c.body_a, c.point_a), (c.body_b, c.point_b)):
            if point is None:
                sides.append(None)
                continue
            who = "the fixed frame" if body is None else f"`{body}`"
            where = f"the point of {who} in `{c.text}`"
            for p in point:
                b.check_constant(p, where, c.span, allow_time=body is None, value=True)
            expanded = [b.expand(p) for p in point]
            sides.append(None if any(e is None for e in expanded) else tuple(expanded))
        for name in c.constraint_names():
            if name in taken:
                b.error(f"`{written}` names the constraints of item {c.index} `{name}`, but "
                        f"`{name}` is a name of the model: rename it", c.span)
        out.append(dataclasses.replace(c, point_a=sides[0] if c.point_a is not None else None,
                                       point_b=sides[1] if c.point_b is not None else None))
    return tuple(out)
