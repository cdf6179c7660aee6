"""Pass 1 of the model builder: the statements read.

Variables (parameters, definitions, velocity formulas), element records, body records
and instructions are collected into the workspace's tables (units applied, the
element coding read); every formula is converted and the names it uses recorded; the
partial derivatives a formula asks for (``X'q1``) are resolved once every formula is
recorded.
"""

from __future__ import annotations

import dataclasses

import symengine as se

from kidym.kinematics import names as generated
from kidym.lang import ast, keywords, units
from kidym.lang.formulas import (
    CONSTANTS,
    suggest,
)
from kidym.lang.tasks import REPEATABLE
from kidym.model.model import TIME
from kidym.model.passes.workspace import (
    ELEMENT_CLASSES,
    Builder,
    Expr,
    Use,
    Var,
    literal_float,
    not_a_float,
    split_derivative,
)
from kidym.symbolic.derivatives import derivative


def collect(b: Builder) -> None:
    b.variables: dict[str, Var] = {}
    b.velocities: dict[str, tuple[ast.Variable, Expr | None]] = {}
    b.elements: dict[tuple[str, str], tuple[ast.ElementRecord, ast.Name, Expr | None]] = {}
    b.body_records: list[ast.BodyRecord] = []
    b.instructions: dict[str, ast.Instruction] = {}
    b.repeated: list[ast.Instruction] = []
    seen_vars: dict[str, ast.Variable] = {}
    seen_bodies: dict[str, ast.BodyRecord] = {}
    for stmt in b.parsed.statements:
        if isinstance(stmt, ast.BodyRecord):
            first = seen_bodies.get(stmt.name.name)
            if first is not None:
                b.error(f"body `{stmt.name.name}` is defined twice (first at line "
                           f"{b.line(first)}); rename one of them", stmt.name.span)
                continue
            seen_bodies[stmt.name.name] = stmt
            b.body_records.append(stmt)
        elif isinstance(stmt, ast.Variable):
            key = stmt.name.name
            if key in seen_vars:
                b.warn(f"redefinition of `{key}` (the last definition wins; the "
                          f"previous one is at line {b.line(seen_vars[key])})",
                          stmt.name.span)
            seen_vars[key] = stmt
        elif isinstance(stmt, ast.Instruction):
            if stmt.key in REPEATABLE:
                b.repeated.append(stmt)
                continue
            if stmt.key in b.instructions and stmt.key in keywords.IMPLEMENTED:
                b.warn(f"instruction `{stmt.written}` is given again (the last one "
                          f"wins; the previous one is at line "
                          f"{b.line(b.instructions[stmt.key])})", stmt.name_span)
            b.instructions[stmt.key] = stmt
    # aliases of generated names are known once all body names are
    for rec in b.body_records:
        body = rec.name.name
        b.aliases.update(generated.aliases(body))
        for g in generated.generated_names(body):
            b.owner_of_generated[g] = body
    b.unit_names: dict[str, str] = {}
    b.unsure = set(b.parsed.unsure)
    for n in b.parsed.unsure:  # a broken body record may have defined these
        b.unsure.update(generated.generated_names(n))
        b.unsure.update(generated.aliases(n))
    coding(b)
    # winners, in source order of the winning statement
    for stmt in sorted(seen_vars.values(), key=lambda s: s.start):
        variable(b, stmt)
    apply_units(b)
    for stmt in b.parsed.statements:
        if isinstance(stmt, ast.ElementRecord):
            element(b, stmt)


def apply_units(b: Builder) -> None:
    """``РАЗМЕРНОСТИ``: convert parameters to the base units, check dimensions."""
    ins = b.instructions.get("UNITS")
    if ins is None:
        return
    bases, errors, warnings = units.base_units(ins.raw or "")
    where = ins.raw_span or ins.name_span
    for e in errors:
        b.error(f"`{ins.written}`: {e}", where)
    for w in warnings:
        b.warn(w, where)
    known: dict[str, object] = {}
    for name, var in b.variables.items():
        if not var.stmt.unit:
            continue
        try:
            unit = units.parse_unit(var.stmt.unit)
        except units.UnitError as e:
            b.warn(f"unit of `{name}`: {e}", var.stmt.name.span)
            continue
        to = units.target(unit, bases)
        known[name] = to
        text = f"{to:~}" if not to.dimensionless else "1"
        b.unit_names[name] = text
        if var.value is not None and unit != to:
            var.value = var.value * units.factor(unit, to)
            var.expr = se.RealDouble(var.value)
        var.stmt = dataclasses.replace(var.stmt, unit=text)
    dims = units.Dimensions(known, bases.get("[time]", units.registry().second))  # type: ignore[arg-type]
    for name, var in b.variables.items():
        if var.value is not None or var.expr is None:
            continue
        dims.problems = []
        got = dims.of(var.stmt.expr)
        for message, _node in dims.problems:
            b.warn(f"dimensions do not match in the formula of `{name}`: {message}",
                      var.stmt.name.span)
        want = known.get(name)
        if got is not None and want is not None and \
                got.dimensionality != want.dimensionality:  # type: ignore[attr-defined]
            b.warn(f"the formula of `{name}` gives `{got:~}` but its unit is "
                      f"`{var.stmt.unit}` ({want.dimensionality}); check the formula "  # type: ignore[attr-defined]
                      "or the unit", var.stmt.name.span)


def coding(b: Builder) -> None:
    """``КОДИРОВКА := ИДУСН;``: the letters of the element classes."""
    b.classes = dict(zip(ELEMENT_CLASSES, ELEMENT_CLASSES))
    b.nonlinear: str | None = "N"
    ins = b.instructions.get("CODING")
    if ins is None:
        return
    letters = (ins.raw or "").replace(" ", "")
    if len(letters) not in (5, 6) or len(set(letters)) != len(letters) or \
            not all(c.isalpha() for c in letters):
        b.error(f"`{ins.written}` takes 5 different letters naming the inertial, "
                   "dissipative, elastic, force and nonlinear element classes (default "
                   f"`JDCPN`), got `{ins.raw or ''}`", ins.raw_span or ins.name_span)
        return
    b.classes = dict(zip(letters[:4], ELEMENT_CLASSES))
    b.nonlinear = letters[4]


def variable(b: Builder, stmt: ast.Variable) -> None:
    written = stmt.name.name
    base, order = split_derivative(written)
    span = stmt.name.span
    if order == 0:
        if written in CONSTANTS:
            b.error(f"`{written}` is a predefined constant and cannot be redefined; "
                       "choose another name", span)
            return
        if written == TIME.name:
            b.error("`t` is time and cannot be defined; choose another name", span)
            return
        canonical = b.rename(written)
        if canonical in b.owner_of_generated:
            b.error(f"`{written}` is generated for body "
                       f"`{b.owner_of_generated[canonical]}` and cannot be defined; "
                       "choose another name", span)
            return
        expr = b.formula(stmt.expr, "definition", f"definition of `{written}`", written)
        value = None
        if expr is not None and not expr.free_symbols:
            value = literal_float(expr)
            if value is None:
                b.error(f"value of `{written}` {not_a_float(expr)}; check the formula",
                           stmt.expr.span)
        b.variables[written] = Var(stmt, expr, value)
    elif order == 1:
        target = b.rename(base)
        if target in b.velocities:
            first = b.velocities[target][0]
            b.warn(f"redefinition of `{target}'t` (the last definition wins; the "
                      f"previous one is at line {b.line(first)})", span)
        # a unit written after a velocity formula is accepted and dropped (units are
        # kept raw on parameters and definitions only; conversion is later work)
        expr = b.formula(stmt.expr, "velocity", f"velocity formula `{written}`",
                            owner=target)
        b.velocities[target] = (stmt, expr)
    else:
        b.error(f"`{written} = …`: only a velocity `{base}'t = …` can be given by a "
                   "formula, not a higher derivative", span)


def element(b: Builder, stmt: ast.ElementRecord) -> None:
    label = stmt.label.name
    first = stmt.coordinates[0].name
    if label[0] not in b.classes:
        letters = ", ".join(list(b.classes)[:-1]) + " or " + list(b.classes)[-1]
        if label[0] == b.nonlinear:
            why = (f"nonlinear elements (class `{label[0]}`) are not supported; write the "
                   "nonlinear law as the characteristic of a force element `P`")
        else:
            why = (f"unrecognised element class `{label[0]}` in `{label}.{first}` "
                   f"(expected {letters}); the first letter of an element name is its "
                   "class: inertial, dissipative, elastic, force")
        b.error(why, stmt.label.span)
        for coord in stmt.coordinates:  # still a coordinate: avoids echo errors
            b.record(coord, "structure", f"element `{label}.{coord.name}`")
        b.record(stmt.expr, "characteristic", f"characteristic of element `{label}`")
        return
    where = f"characteristic of element `{label}.{'.'.join(c.name for c in stmt.coordinates)}`"
    expr = b.formula(stmt.expr, "characteristic", where)
    for coord in stmt.coordinates:
        canonical = b.rename(coord.name)
        key = (label, canonical)
        if key in b.elements:
            prev = b.elements.pop(key)[0]
            b.warn(f"redefinition of element `{label}.{coord.name}` (the last "
                      f"definition wins; the previous one is at line {b.line(prev)})",
                      coord.span)
        base, order = split_derivative(canonical)
        b.uses.append(Use(canonical, base, order, coord.span, coord.start, "structure",
                              f"element `{label}.{coord.name}`"))
        b.elements[key] = (stmt, coord, expr)


def partials(b: Builder) -> None:
    """``x'y`` names: ∂x/∂y, formed analytically (definitions other than ``y`` expanded).

    A partial that the expansion of ``x`` uses is formed first, so that it is
    differentiated as what it stands for, not as a constant; a partial that needs
    itself (``a = a'phi + phi;``) is an error at its first use.
    """
    b.first_use: dict[str, Use] = {}
    for u in sorted(b.uses, key=lambda u: u.start):
        b.first_use.setdefault(u.base, u)
    forming: list[str] = []
    for u in sorted(b.uses, key=lambda u: u.start):
        if "'" in u.base:
            partial(b, u.base, u, forming)


def partial(b: Builder, base: str, u: Use, forming: list[str]) -> None:
    """Form the partial derivative ``base`` (``f'v``) first used at ``u``."""
    if base in b.variables or base in b.missing:
        return
    if base in forming:
        cycle = forming[forming.index(base):]
        path = " → ".join(f"`{n}`" for n in [*cycle, base])
        f = base.rpartition("'")[0]
        b.error(f"partial derivative `{base}` depends on itself ({path}): `{f}`, with "
                   "its definitions substituted, contains it; break the cycle", u.span)
        b.missing.update(cycle)
        return
    f, _, v = base.rpartition("'")
    if not f or not v:
        b.error(f"`{base}`: a `'` in a name marks a derivative, `x't` (by time) or "
                   "`x'y` (partial, by `y`)", u.span)
        b.missing.add(base)
        return
    if f not in b.variables:
        hint = suggest(f, sorted(b.variables))
        b.error(f"partial derivative `{base}`: `{f}` is not defined{hint}", u.span)
        b.missing.add(base)
        return
    var = b.variables[f]
    if var.expr is None:
        b.missing.add(base)
        return
    expanded = b.expand_except(var.expr, v)
    if expanded is None:
        b.missing.add(base)  # the cycle is reported with the definitions
        return
    forming.append(base)
    for sym in sorted(expanded.free_symbols, key=lambda s: s.name):
        inner = split_derivative(sym.name)[0]
        if "'" in inner:
            partial(b, inner, b.first_use.get(inner, u), forming)
    forming.pop()
    if base in b.missing:
        return
    if any(split_derivative(s.name)[0] in b.missing for s in expanded.free_symbols):
        b.missing.add(base)  # reported at the partial it needs
        return
    expanded = b.expand_except(expanded, v)
    if expanded is None:
        b.missing.add(base)
        return
    expr = derivative(expanded, TIME if v == TIME.name else se.Symbol(v))
    stmt = ast.Variable(name=ast.Name(name=base, span=u.span, start=u.start,
                                      end=u.start + len(base)),
                        expr=ast.Name(name=base, span=u.span, start=u.start,
                                      end=u.start), span=u.span, start=u.start,
                        end=u.start)
    value = literal_float(expr) if not expr.free_symbols else None
    b.variables[base] = Var(stmt, expr, value)
    for sym in expr.free_symbols:
        stem, order = split_derivative(sym.name)
        b.uses.append(Use(sym.name, stem, order, u.span, u.start, "definition",
                              f"partial derivative `{base}`", base))
