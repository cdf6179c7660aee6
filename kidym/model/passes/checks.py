"""Pass 5 of the model builder: the checks across statements.

Derivatives of names that have none, velocity formulas and their cycles, elements,
definitions in dependency order (cycles reported), definitions that need a value,
angular-velocity choices and quaternion names.
"""

from __future__ import annotations

from collections.abc import Iterable

from kidym.lang.formulas import suggest
from kidym.model.model import (
    TIME,
    Body,
)
from kidym.model.passes.workspace import (
    Builder,
    Use,
    cycles,
    split_derivative,
    topological,
)


def check_derivatives(b: Builder) -> None:
    for u in b.uses:
        if u.order == 0 or u.base in b.missing:
            continue
        if u.order > 2:
            b.error(f"`{u.name}`: only first and second time derivatives (`x't`, "
                       "`x't't`) are supported", u.span)
        elif u.base in b.params or (u.base == "g" and "g" not in b.variables):
            b.error(f"{u.where} uses `{u.name}`, the time derivative of parameter "
                       f"`{u.base}`, which is constant; write 0", u.span)
        elif u.base == TIME.name:
            b.error(f"`{u.name}`: the time derivative of time is 1; write 1", u.span)


def check_velocities(b: Builder) -> None:
    pseudo = set(b.pseudo_names)
    for target, (stmt, _e) in b.velocities.items():
        span = stmt.name.span
        if target in b.variables:
            b.error(f"`{stmt.name.name} = …` gives the velocity of `{target}`, which is "
                       f"itself defined (line {b.line(b.variables[target].stmt)}); "
                       "remove one of the two", span)
        elif target in b.owner_of_generated:
            b.error(f"`{stmt.name.name} = …`: `{target}` is generated for body "
                       f"`{b.owner_of_generated[target]}`; its velocity follows from "
                       "the body record", span)
        elif target in pseudo:
            b.error(f"`{stmt.name.name} = …`: `{target}` is a pseudo-velocity; only "
                       "coordinates have velocity formulas", span)
        elif target == TIME.name:
            b.error("`t't` cannot be defined: it is 1", span)
    check_velocity_cycles(b)


def check_velocity_cycles(b: Builder) -> None:
    """Velocity formulas that need each other's values (``a't = b't; b't = a't;``)."""
    uses: dict[str, list[Use]] = {t: [] for t in b.velocities}
    for u in b.uses:
        if u.kind == "velocity" and u.owner in uses:
            uses[u.owner].append(u)

    def needs(us: list[Use], seen: set[str]) -> set[str]:
        out: set[str] = set()
        for u in us:
            if u.order >= 1 and u.base in b.velocities:
                out.add(u.base)
            if u.base in b.def_uses and u.base not in seen:
                seen.add(u.base)
                out |= needs(b.def_uses[u.base], seen)
        return out

    for us in uses.values():
        for u in us:
            if u.base not in b.missing and b.time_level(u.name, set()) >= 2:
                b.error(f"{u.where} uses `{u.name}`, an acceleration; a velocity "
                           "is a formula of coordinates, speeds and time", u.span)
    graph = {t: sorted(needs(us, set())) for t, us in uses.items()}
    for cycle in cycles(graph, key=lambda n: b.velocities[n][0].start):
        path = " → ".join(f"`{n}'t`" for n in [*cycle, cycle[0]])
        b.error(f"velocity formulas depend on themselves: {path}; give at least one "
                   "of these velocities without the others",
                   b.velocities[cycle[0]][0].name.span)


def check_elements(b: Builder) -> None:
    for (label, coord), (_stmt, node, _e) in b.elements.items():
        base, _ = split_derivative(coord)
        if base in b.params or base == TIME.name:
            what = "time" if base == TIME.name else "a parameter (a constant)"
            b.error(f"element `{label}.{node.name}` has coordinate `{base}`, which is "
                       f"{what}; an element coordinate must depend on the generalized "
                       "coordinates", node.span)
            continue
        if base in b.defs and not moves_with_state(b, base):
            b.error(f"element `{label}.{node.name}` has coordinate `{base}`, a formula "
                       "of time and parameters only (a prescribed motion): an element "
                       "coordinate must depend on the generalized coordinates — a "
                       "prescribed motion takes whatever force it needs, so a force "
                       f"along it does no work; to drive `{base}` by a force, make it a "
                       f"coordinate (remove its formula `{base} = …`)", node.span)
            continue
        level = b.time_level(coord, set())
        if level >= 2:
            b.error(f"element `{label}.{node.name}`: `{node.name}` involves an "
                       "acceleration; an element acts on a position p(q, t) or on a "
                       "velocity ṗ (a speed, an angular-velocity projection `ωZBody`)",
                       node.span)
        elif level == 1 and b.classes[label[0]] == "C":
            b.error(f"elastic element `{label}.{node.name}`: `{node.name}` is a "
                       "velocity (the differential structure ṗ), but an elastic force "
                       "−c·p needs a position p(q, t); use a D element for −c·ṗ or give "
                       "the position", node.span)

    for u in b.uses:
        if (u.kind == "characteristic" and u.base not in b.missing
                and b.time_level(u.name, set()) >= 2):
            b.error(f"{u.where} uses `{u.name}`, an acceleration; a characteristic is "
                       "a formula of coordinates, speeds and time (for a force −c·ẍ "
                       "write an inertial element `J…`)", u.span)


def moves_with_state(b: Builder, name: str) -> bool:
    """Whether definition ``name`` depends, through the definitions it uses, on a name
    that is not a parameter or time (a coordinate, a speed, a generated body name; a
    name with a problem of its own counts, so as not to report it twice)."""
    stack, seen = [name], {name}
    while stack:
        for u in b.def_uses.get(stack.pop(), ()):
            if u.base in seen:
                continue
            seen.add(u.base)
            if u.base in b.defs:
                stack.append(u.base)
            elif u.base not in b.params and u.base != TIME.name:
                return True
    return False


def definition_order(b: Builder) -> list[str]:
    graph = {n: sorted({u.base for u in b.def_uses[n] if u.base in b.defs})
             for n in b.defs}
    cyclic = cycles(graph, key=lambda n: b.variables[n].stmt.start)
    b.cyclic: set[str] = set()
    for cycle in cyclic:
        b.cyclic.update(cycle)
        path = " → ".join(f"`{n}`" for n in [*cycle, cycle[0]])
        b.error(f"definitions depend on themselves: {path}; break the cycle",
                   b.variables[cycle[0]].stmt.name.span)
    return topological(graph, key=lambda n: b.variables[n].stmt.start)


def check_definition_values(b: Builder, order: list[str]) -> None:
    """Error at a formula of parameters only that has no finite value in the file.

    Definitions, element characteristics and gravity: ``z = 0; k = 1 % z;`` would
    reach the engines as a NaN or a division by zero.
    """
    b.no_value: set[str] = set()
    for n in order:
        var = b.variables[n]
        if n not in b.cyclic and var.expr is not None and not \
                b.check_parameter_formula(var.expr, f"definition of `{n}`",
                                             var.stmt.name.span):
            b.no_value.add(n)
    for (label, coord), (stmt, _node, expr) in b.elements.items():
        if expr is not None:
            b.check_parameter_formula(expr, f"characteristic of element "
                                               f"`{label}.{coord}`", stmt.expr.span)
    if b.gravity is not None:
        ins = b.instructions["GRAVITY"]
        for g in b.gravity:
            b.check_parameter_formula(g, f"`{ins.written}`", ins.name_span)


def check_angular_velocity(b: Builder, bodies: Iterable[Body]) -> None:
    """The bodies named in ``УГЛОВАЯ СКОРОСТЬ`` exist and turn by a quaternion."""
    quaternion = {b.name for b in bodies
                  if any(tr.kind == "Q" for tr in (*b.transforms, *b.central))}
    for body, (_mode, span) in b.angular_velocity.items():
        if body != "*" and body not in quaternion:
            known = "is not a body" if body not in b.body_data else "has no Q(…)"
            hint = suggest(body, sorted(quaternion))
            b.error(f"angular velocity of `{body}`: `{body}` {known}; only the "
                       f"angular velocity of a quaternion body is chosen{hint}", span)


def check_quaternion_names(b: Builder) -> None:
    """The components ``Q(…)`` of ``КВАТЕРНИОН`` must be names of the model.

    The angles and ``E(…)`` are defined by the operator; the quaternion it turns
    into them must exist (``Q(l0, l, l2, l3)`` with no ``l`` ended in derive).
    ``P(…)`` is stored as written (its names are looked up only when an angle is
    asked for).
    """
    q = getattr(b, "quaternion", None)
    if q is None:
        return
    ins = b.instructions["QUATERNION"]
    known = set(b.coordinates) | b.known | b.missing
    for name in q.quaternion:
        if name not in known and split_derivative(name)[0] not in b.missing:
            hint = suggest(name, sorted(set(b.coordinates) | b.params | b.defs))
            b.error(f"`{name}` in `{ins.written}` is not a coordinate or a name of the "
                       f"model{hint}; `Q(…)` lists the components of a body's quaternion",
                       b.quaternion_names[name])
