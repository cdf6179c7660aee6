"""Pass 4 of the model builder: every name classified.

A name a formula uses that the file does not define is a pseudo-velocity (listed in
``ПСЕВДОСКОРОСТИ``), a generalized coordinate (used in a body's position or as an
element coordinate, directly or through definitions, or given a velocity formula) or
a value the file forgot to give (an error); the coordinates are put in order.
"""

from __future__ import annotations

from kidym.lang.formulas import suggest
from kidym.model.model import TIME
from kidym.model.passes.workspace import (
    Builder,
    Use,
    split_derivative,
)


def classify(b: Builder) -> None:
    params = {n for n, v in b.variables.items() if v.value is not None}
    defs = {n for n, v in b.variables.items() if v.value is None}
    b.params, b.defs = params, defs
    b.def_uses: dict[str, list[Use]] = {n: [] for n in defs}
    for u in b.uses:
        if u.kind == "definition" and u.owner in b.def_uses:
            b.def_uses[u.owner].append(u)
    pseudo = {n.name for n in b.pseudo}
    b.known = (params | defs | set(b.owner_of_generated) | {TIME.name, "g"}
                  | {n.name for n in b.control_names}
                  | {n.name for n in b.input_names})
    structural: set[str] = set()
    positional: dict[str, Use] = {}
    for target in b.velocities:
        structural.add(split_derivative(target)[0])
    # (use, whether it lies in a body position rather than an element coordinate)
    stack = [(u, u.kind == "position") for u in b.uses
             if u.kind in ("position", "structure")]
    done: set[tuple[str, bool]] = set()
    while stack:
        u, in_position = stack.pop()
        if (u.base, in_position) in done:
            continue
        done.add((u.base, in_position))
        structural.add(u.base)
        if in_position:
            positional.setdefault(u.base, u)
        for du in b.def_uses.get(u.base, ()):
            stack.append((Use(du.name, du.base, du.order, du.span, du.start, "structure",
                               u.where), in_position))
    b.structural = structural
    first: dict[str, Use] = {}
    for u in sorted(b.uses, key=lambda u: u.start):
        first.setdefault(u.base, u)
    for target, (stmt, _e) in b.velocities.items():
        base, _ = split_derivative(target)
        if base not in first or stmt.start < first[base].start:
            first[base] = Use(target + "'t", base, 1, stmt.name.span, stmt.start,
                               "structure", f"velocity formula `{stmt.name.name}`")
    listed = {n.name for n in b.listed_coordinates or ()}
    coordinates: list[str] = []
    b.pseudo_names: list[str] = [n.name for n in b.pseudo]
    for base, u in sorted(first.items(), key=lambda kv: kv[1].start):
        if base in b.known or base in b.missing:
            continue
        if base in b.unsure and base not in structural:
            b.missing.add(base)  # maybe defined by a statement that did not parse
            continue
        if "@" in base:
            body = base.split("@", 1)[1]
            hint = suggest(body, [r.name.name for r in b.body_records])
            b.error(f"`{base}` names a generated quantity of body `{body}`, which is not "
                       f"defined{hint}", u.span)
            b.missing.add(base)
        elif "'" in base:
            b.missing.add(base)  # an `x'y` whose `x` is missing: reported already
        elif base in pseudo:
            if base in positional:
                w = positional[base]
                b.error(f"pseudo-velocity `{base}` is used in the {w.where}; a "
                           "pseudo-velocity is a speed and cannot enter a body position",
                           w.span)
        elif base in structural:
            coordinates.append(base)
        elif base in listed:
            coordinates.append(base)  # reported: it never appears in a body or element
            b.missing.add(base)
        else:
            b.missing.add(base)
            report_missing(b, base)
    for n in b.pseudo:
        if n.name in params or n.name in defs:
            listing = b.instructions["PSEUDOVELOCITIES"].written
            b.error(f"`{n.name}` is listed in `{listing}` but has a value or formula; a "
                       "pseudo-velocity must not be defined", n.span)
        elif n.name == TIME.name:
            b.error("`t` is time, not a pseudo-velocity", n.span)
    b.coordinates = order_coordinates(b, coordinates, listed, first)
    check_constraint_names(b)
    check_prescribed_motion(b)


def check_constraint_names(b: Builder) -> None:
    """``УРАВНЕНИЯ := f1, …``: each name a defined quantity (a formula, no value)."""
    if not b.constraint_names:
        return
    written = b.instructions["IK_EQUATIONS"].written
    for n in b.constraint_names:
        if n.name in b.defs:
            continue
        if n.name in b.params:
            b.error(f"`{n.name}` is listed in `{written}` but has a value; list the names "
                       "of formulas of the coordinates that must vanish "
                       f"(`{n.name} = a*cos(q1) + … ;`)", n.span)
        elif n.name in b.coordinates or n.name in b.owner_of_generated:
            b.error(f"`{n.name}` is listed in `{written}` but is a coordinate or a "
                       "generated name; define the constraint as a formula "
                       f"(`f1 = {n.name} - …;`) and list `f1`", n.span)
        else:
            hint = suggest(n.name, sorted(b.defs))
            b.error(f"`{n.name}` is listed in `{written}` but is not defined: define it "
                       f"as a formula that must vanish (`{n.name} = …;`){hint}", n.span)


def check_prescribed_motion(b: Builder) -> None:
    """``РАСЧЕТ := КИНЕТОСТАТИКА`` needs the motion prescribed by constraints (that
    they leave no speed free is checked with the equations, :mod:`kidym.eom`)."""
    if b.calculation != "KINETOSTATICS" or b.constraint_names or b.coincide_items:
        return
    b.error("the kinetostatics calculation needs the motion prescribed by constraints, "
               "and the model has none: list in `УРАВНЕНИЯ` the loop closures and a driving "
               "constraint for each degree of freedom, a formula of a coordinate and time "
               "that must vanish (`f3 = q1 - Om*t;  УРАВНЕНИЯ := f1, f2, f3;`)",
               b.calculation_span)


def report_missing(b: Builder, base: str) -> None:
    uses = [u for u in b.uses if u.base == base]
    u = min(uses, key=lambda u: u.start)
    hint = suggest(base, sorted(b.params | b.defs))
    if all(x.order > 0 for x in uses):
        b.error(f"{u.where} uses `{u.name}`, a time derivative of `{base}`, but `{base}` "
                   "is not a coordinate: it appears in no body transform, element "
                   f"coordinate or velocity formula{hint}", u.span)
    else:
        b.error(f"{u.where} depends on `{base}`, which has no value: define it "
                   f"(`{base} = …;`){hint}", u.span)


def order_coordinates(b: Builder, detected: list[str], listed: set[str],
                      first: dict[str, Use]) -> list[str]:
    if b.listed_coordinates is None:
        return detected
    ins = b.instructions["COORDINATES"]
    out: list[str] = []
    for n in b.listed_coordinates:
        name = n.name
        if name in b.params or name in b.defs:
            b.error(f"`{name}` is listed in `{ins.written}` but is defined (line "
                       f"{b.line(b.variables[name].stmt)}); a generalized coordinate "
                       "has no formula", n.span)
        elif name in b.owner_of_generated or name == TIME.name:
            b.error(f"`{name}` is listed in `{ins.written}` but is a predefined or "
                       "generated name", n.span)
        elif name in {p.name for p in b.pseudo}:
            b.error(f"`{name}` is listed both in `{ins.written}` and as a "
                       "pseudo-velocity", n.span)
        elif name not in b.structural:
            b.error(f"coordinate `{name}` never appears in a body or element; remove it "
                       f"from `{ins.written}` or use it", n.span)
        else:
            out.append(name)
    for name in detected:
        if name not in listed:
            u = first[name]
            b.error(f"coordinate `{name}` (used in the {u.where}) is missing from "
                       f"`{ins.written}`; add it to the list", u.span)
    return out
