"""The instructions of the inverse kinematics calculation, read from the parsed model.

``РАСЧЕТ := ОБРАТНАЯ ЗАДАЧА КИНЕМАТИКИ;`` needs ``УРАВНЕНИЯ := f1, …`` (formulas of the
coordinates and time that must vanish, at most as many as coordinates) and takes

* ``НАЧАЛЬНОЕ ПОЛОЖЕНИЕ := q1(0.1), q2 = 0.5;`` — the Newton start at the first time
  (``INITIAL_GUESS``; coordinates not listed start at their ``НАЧАЛЬНЫЕ УСЛОВИЯ`` value,
  else 0);
* ``ОГРАНИЧЕНИЯ := q1(-1, 1), …;`` — joint limits ``lo ≤ q ≤ hi`` (``LIMITS``).

Both mean nothing to another calculation, so there they are errors (located), as are
KiDyM's velocity limits ``q't(min, max)`` (kidym computes ``q't`` by differences of
the solutions and does not clamp them).
"""

from __future__ import annotations

from kidym.lang import ast

#: The calculation type these instructions belong to.
CALCULATION = "INVERSE_KINEMATICS"
KEYS = ("INITIAL_GUESS", "LIMITS")


def convert_values(b, ins: ast.Instruction) -> None:
    """Convert the value formulas of a guess/limits list (recording the names they use)."""
    for item in ins.items:
        if isinstance(item, ast.Call):
            for a in item.args:
                b.formula(a, "value", f"a value in `{ins.written}`")
        elif isinstance(item, ast.NamedItem):
            b.formula(item.value, "value", f"the value of `{item.name.name}` in `{ins.written}`")


def read(b) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Check the inverse kinematics instructions of builder ``b``; return the guess and the
    limits by coordinate (errors are added to ``b``)."""
    guess: dict[str, float] = {}
    limits: dict[str, tuple[float, float]] = {}
    if b.calculation != CALCULATION:
        for key in KEYS:
            ins = b.instructions.get(key)
            if ins is not None:
                b.error(f"instruction `{ins.written}` belongs to the inverse kinematics "
                        "calculation (`РАСЧЕТ := ОБРАТНАЯ ЗАДАЧА КИНЕМАТИКИ;`) and means "
                        "nothing to this one: remove it (initial values are given in "
                        "`НАЧАЛЬНЫЕ УСЛОВИЯ`)", ins.name_span)
        return guess, limits
    coords = list(b.coordinates)
    n_eq = len(b.constraint_names)
    if n_eq == 0:
        b.error("the inverse kinematics calculation solves `УРАВНЕНИЯ := f1, …;` for the "
                "coordinates, and the model lists none: define the formulas of the "
                "coordinates and time that must vanish (`f1 = XOTip - 0.5;`) and list them",
                b.calculation_span)
    elif n_eq > len(coords):
        ins = b.instructions["IK_EQUATIONS"]
        b.error(f"`{ins.written}` lists {n_eq} equations for {len(coords)} coordinates ("
                + ", ".join(coords) + "): the inverse kinematics calculation takes at most "
                "as many equations as coordinates (fewer: a redundant system, solved by "
                "least-norm steps)", ins.name_span)
    for n in b.constraint_names:
        var = b.variables.get(n.name)
        expr = b.expand(var.expr) if var is not None and var.expr is not None else None
        rates = sorted(s.name for s in (expr.free_symbols if expr is not None else ())
                       if "'t" in s.name)
        if rates:
            b.error(f"equation `{n.name}` uses `{rates[0]}`, a velocity: the inverse "
                    "kinematics calculation solves formulas of the coordinates and time "
                    "(KiDyM's velocity-level mode is not implemented)", n.span)
    for key in KEYS:
        ins = b.instructions.get(key)
        if ins is None:
            continue
        want = 1 if key == "INITIAL_GUESS" else 2
        form = "`q(value)` or `q = value`" if want == 1 else "`q(lo, hi)`"
        for item in ins.items:
            if isinstance(item, ast.Call):
                name_node, args = item.func, list(item.args)
            elif isinstance(item, ast.NamedItem) and want == 1:
                name_node, args = item.name, [item.value]
            else:
                b.error(f"`{ins.written}` items are {form}, got `{b.text(item)}`", item.span)
                continue
            name = b.rename(name_node.name)
            if name.endswith("'t") and key == "LIMITS":
                b.error(f"velocity limits (`{name}(min, max)`) are not supported: the "
                        "inverse kinematics calculation solves positions and differentiates "
                        "them; limit the coordinate instead", name_node.span)
                continue
            if name not in coords:
                hint = f"; coordinates: {', '.join(coords)}" if coords else ""
                b.error(f"`{name}` in `{ins.written}` is not a coordinate of the model{hint}",
                        name_node.span)
                continue
            if len(args) != want:
                b.error(f"`{ins.written}` items are {form}; `{name}` has {len(args)} "
                        f"value{'s' if len(args) != 1 else ''}", item.span)
                continue
            values = [b.value(a, f"a value in `{ins.written}`") for a in args]
            if any(v is None for v in values):
                continue
            if key == "INITIAL_GUESS":
                guess[name] = float(values[0])
            elif not values[0] < values[1]:
                b.error(f"the limits of `{name}` must increase: lower {values[0]:g}, upper "
                        f"{values[1]:g}", item.span)
            else:
                limits[name] = (float(values[0]), float(values[1]))
    return guess, limits
