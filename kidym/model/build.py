"""Statements → validated, immutable :class:`~kidym.model.model.Model`.

Gives the parsed statements their meaning (SPEC §3, ``KIDYM_LANGUAGE.md`` §3):

* ``name = formula`` is a :class:`Parameter` when the formula is a number, else a
  :class:`Definition`; ``x't = formula`` is a :class:`VelocityDefinition`;
* ``E.c = formula`` is one :class:`Element` per coordinate;
* body records become :class:`Body` (transforms, central transforms, inertia);
* instructions set the coordinate order, pseudo-velocities, initial values, time
  span, outputs, gravity and calculation type.

Every name a formula uses that the file does not define is classified as in
KiDyM: listed in ``ПСЕВДОСКОРОСТИ`` → pseudo-velocity; used in a body's position
or as an element coordinate (directly or through definitions) or given a velocity
formula → generalized coordinate; otherwise it is a value the file forgot to
give, which is an error. All problems are collected and reported together.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import symengine as se

from kidym.errors import Diagnostic, Span
from kidym.kinematics import names as generated
from kidym.kinematics.names import MULTIPLIER_PREFIX
from kidym.lang import ast, keywords, units
from kidym.lang.formulas import (
    CONSTANTS,
    FUNCTIONS,
    Converter,
    FormulaError,
    rational,
    short_form,
    suggest,
)
from kidym.lang.tasks import REPEATABLE
from kidym.model import (
    coincide,
    display,
    free,
    inverse,
    programmed,
    scene,
    slips,
    variations,
    virtual,
)
from kidym.model import events as model_events
from kidym.model import inputs as model_inputs
from kidym.model.inertia import full_tensor, inertia_problem
from kidym.model.model import (
    TIME,
    Body,
    Constraint,
    Definition,
    Element,
    Inertia,
    Model,
    Parameter,
    Plot,
    QuaternionInstruction,
    Rolling,
    SceneSurface,
    Transform,
    VelocityDefinition,
)
from kidym.symbolic.derivatives import derivative
from kidym.symbolic.numbers import to_float

if TYPE_CHECKING:   # (the parser calls the builder)
    from kidym.lang.parser import ParsedSource

Expr = se.Basic

#: Values of ``УГЛОВАЯ СКОРОСТЬ`` (lower case) → ``angular_velocity`` choice.
ANGULAR_VELOCITY_WORDS: dict[str, str] = {
    "body": "body", "тело": "body", "тіло": "body",
    "fixed": "fixed", "неподвижные": "fixed", "нерухомі": "fixed",
    "auto": "auto", "авто": "auto",
}
_ANGULAR_VELOCITY_ITEM = re.compile(r"(?:(?P<body>[^\W\d]\w*)\s*\(\s*(?P<mode>\w+)\s*\)"
                                    r"|(?P<mode2>\w+))")

#: KiDyM's predefined gravity acceleration, m/s² (InitCA).
G_VALUE = 9.8062

#: Transform names of body records → (kind, axis, number of arguments).
TRANSFORMS: dict[str, tuple[str, str | None, int]] = {
    "Rx": ("R", "x", 1), "Ry": ("R", "y", 1), "Rz": ("R", "z", 1),
    "Sx": ("S", "x", 1), "Sy": ("S", "y", 1), "Sz": ("S", "z", 1),
    "Q": ("Q", None, 4),
}

#: Named inertia items → field of :class:`Inertia` (products in either order).
INERTIA_ITEMS: dict[str, str] = {
    "m": "mass", "Jx": "jx", "Jy": "jy", "Jz": "jz",
    "Jxy": "jxy", "Jyz": "jyz", "Jxz": "jxz", "Jyx": "jxy", "Jzy": "jyz", "Jzx": "jxz",
}
_POSITIONAL = ("mass", "jx", "jy", "jz", "jxy", "jyz", "jxz")
_LABEL = {"mass": "mass", "jx": "moment of inertia `Jx`", "jy": "moment of inertia `Jy`",
          "jz": "moment of inertia `Jz`", "jxy": "product of inertia `Jxy`",
          "jyz": "product of inertia `Jyz`", "jxz": "product of inertia `Jxz`"}

#: Element class letters (KiDyM default coding ``JDCP``).
ELEMENT_CLASSES = "JDCP"


def split_derivative(name: str) -> tuple[str, int]:
    """``"x't't"`` → ``("x", 2)``: the differentiated name and the derivative order."""
    order = 0
    while name.endswith("'t") and len(name) > 2:
        name = name[:-2]
        order += 1
    return name, order


@dataclass(frozen=True)
class _Use:
    """One use of a name in a formula (or as an element coordinate)."""

    name: str      # canonical, with its 't suffixes
    base: str
    order: int
    span: Span
    start: int
    kind: str      # position (body transforms) | structure (element coordinates) | inertia |
    #                characteristic | definition | velocity | gravity | value
    where: str     # for messages: "mass of body `Taz`"
    owner: str | None = None   # the definition whose formula it is in


@dataclass
class _Var:
    stmt: ast.Variable
    expr: Expr | None
    value: float | None


class _Builder:
    def __init__(self, parsed: ParsedSource, filename: str, name: str) -> None:
        self.parsed = parsed
        self.filename = filename
        self.name = name
        self.diags: list[Diagnostic] = []
        self.uses: list[_Use] = []
        self._levels: dict[str, int] = {}   # time_level of definitions, memoised
        self.aliases: dict[str, str] = {}
        self.owner_of_generated: dict[str, str] = {}
        self.convert = Converter(self.rename)
        self.missing: set[str] = set()

    # ------------------------------------------------------------ helpers
    def error(self, message: str, span: Span | None) -> None:
        self.diags.append(Diagnostic(message, span))

    def warn(self, message: str, span: Span | None) -> None:
        self.diags.append(Diagnostic(message, span, "warning"))

    def text(self, node: ast.Node) -> str:
        return " ".join(self.parsed.source[node.start:node.end].split())

    def rename(self, name: str) -> str:
        base, order = split_derivative(name)
        base = self.aliases.get(base, base)
        return base + "'t" * order

    def line(self, node: ast.Node) -> int:
        return node.span.line

    def record(self, node: ast.Expr | ast.Item, kind: str, where: str,
               owner: str | None = None) -> None:
        """Record the names ``node`` uses (for classification and messages)."""
        for n in ast.iter_names(node):
            if n.name in CONSTANTS:
                continue
            canonical = self.rename(n.name)
            base, order = split_derivative(canonical)
            self.uses.append(_Use(canonical, base, order, n.span, n.start, kind, where, owner))

    def formula(self, node: ast.Expr, kind: str, where: str,
                owner: str | None = None) -> Expr | None:
        """Convert ``node`` and record the names it uses."""
        self.record(node, kind, where, owner)
        try:
            expr = self.convert(node)
        except FormulaError as e:
            self.diags.append(e.diagnostic)
            return None
        numbers_only = not expr.free_symbols
        if kind == "value" or (numbers_only and kind in ("definition", "inertia")):
            return expr   # a value: checked where it is evaluated (`_not_a_float`)
        huge = _out_of_range(expr)
        if huge is not None:
            self.error(f"{where}: the number `{short_form(huge, 24)}` in "
                       f"`{_short_text(self.text(node))}` is beyond the range of a double "
                       "(±1.8e308), in which the engines compute; rescale the formula",
                       node.span)
            return None
        if numbers_only and _to_float(expr) is None:
            self.error(f"{where}: `{_short_text(self.text(node))}` {_not_a_float(expr)}",
                       node.span)
            return None
        return expr

    # ------------------------------------------------------------ phase 1: collect
    def collect(self) -> None:
        self.variables: dict[str, _Var] = {}
        self.velocities: dict[str, tuple[ast.Variable, Expr | None]] = {}
        self.elements: dict[tuple[str, str], tuple[ast.ElementRecord, ast.Name, Expr | None]] = {}
        self.body_records: list[ast.BodyRecord] = []
        self.instructions: dict[str, ast.Instruction] = {}
        self.repeated: list[ast.Instruction] = []
        seen_vars: dict[str, ast.Variable] = {}
        seen_bodies: dict[str, ast.BodyRecord] = {}
        for stmt in self.parsed.statements:
            if isinstance(stmt, ast.BodyRecord):
                first = seen_bodies.get(stmt.name.name)
                if first is not None:
                    self.error(f"body `{stmt.name.name}` is defined twice (first at line "
                               f"{self.line(first)}); rename one of them", stmt.name.span)
                    continue
                seen_bodies[stmt.name.name] = stmt
                self.body_records.append(stmt)
            elif isinstance(stmt, ast.Variable):
                key = stmt.name.name
                if key in seen_vars:
                    self.warn(f"redefinition of `{key}` (the last definition wins; the "
                              f"previous one is at line {self.line(seen_vars[key])})",
                              stmt.name.span)
                seen_vars[key] = stmt
            elif isinstance(stmt, ast.Instruction):
                if stmt.key in REPEATABLE:
                    self.repeated.append(stmt)
                    continue
                if stmt.key in self.instructions and stmt.key in keywords.IMPLEMENTED:
                    self.warn(f"instruction `{stmt.written}` is given again (the last one "
                              f"wins; the previous one is at line "
                              f"{self.line(self.instructions[stmt.key])})", stmt.name_span)
                self.instructions[stmt.key] = stmt
        # aliases of generated names are known once all body names are
        for rec in self.body_records:
            body = rec.name.name
            self.aliases.update(generated.aliases(body))
            for g in generated.generated_names(body):
                self.owner_of_generated[g] = body
        self.unit_names: dict[str, str] = {}
        self.unsure = set(self.parsed.unsure)
        for n in self.parsed.unsure:  # a broken body record may have defined these
            self.unsure.update(generated.generated_names(n))
            self.unsure.update(generated.aliases(n))
        self.coding()
        # winners, in source order of the winning statement
        for stmt in sorted(seen_vars.values(), key=lambda s: s.start):
            self.variable(stmt)
        self.apply_units()
        for stmt in self.parsed.statements:
            if isinstance(stmt, ast.ElementRecord):
                self.element(stmt)

    def apply_units(self) -> None:
        """``РАЗМЕРНОСТИ``: convert parameters to the base units, check dimensions."""
        ins = self.instructions.get("UNITS")
        if ins is None:
            return
        bases, errors, warnings = units.base_units(ins.raw or "")
        where = ins.raw_span or ins.name_span
        for e in errors:
            self.error(f"`{ins.written}`: {e}", where)
        for w in warnings:
            self.warn(w, where)
        known: dict[str, object] = {}
        for name, var in self.variables.items():
            if not var.stmt.unit:
                continue
            try:
                unit = units.parse_unit(var.stmt.unit)
            except units.UnitError as e:
                self.warn(f"unit of `{name}`: {e}", var.stmt.name.span)
                continue
            to = units.target(unit, bases)
            known[name] = to
            text = f"{to:~}" if not to.dimensionless else "1"
            self.unit_names[name] = text
            if var.value is not None and unit != to:
                var.value = var.value * units.factor(unit, to)
                var.expr = se.RealDouble(var.value)
            var.stmt = dataclasses.replace(var.stmt, unit=text)
        dims = units.Dimensions(known, bases.get("[time]", units.registry().second))  # type: ignore[arg-type]
        for name, var in self.variables.items():
            if var.value is not None or var.expr is None:
                continue
            dims.problems = []
            got = dims.of(var.stmt.expr)
            for message, _node in dims.problems:
                self.warn(f"dimensions do not match in the formula of `{name}`: {message}",
                          var.stmt.name.span)
            want = known.get(name)
            if got is not None and want is not None and \
                    got.dimensionality != want.dimensionality:  # type: ignore[attr-defined]
                self.warn(f"the formula of `{name}` gives `{got:~}` but its unit is "
                          f"`{var.stmt.unit}` ({want.dimensionality}); check the formula "  # type: ignore[attr-defined]
                          "or the unit", var.stmt.name.span)

    def coding(self) -> None:
        """``КОДИРОВКА := ИДУСН;``: the letters of the element classes."""
        self.classes = dict(zip(ELEMENT_CLASSES, ELEMENT_CLASSES))
        self.nonlinear: str | None = "N"
        ins = self.instructions.get("CODING")
        if ins is None:
            return
        letters = (ins.raw or "").replace(" ", "")
        if len(letters) not in (5, 6) or len(set(letters)) != len(letters) or \
                not all(c.isalpha() for c in letters):
            self.error(f"`{ins.written}` takes 5 different letters naming the inertial, "
                       "dissipative, elastic, force and nonlinear element classes (default "
                       f"`JDCPN`), got `{ins.raw or ''}`", ins.raw_span or ins.name_span)
            return
        self.classes = dict(zip(letters[:4], ELEMENT_CLASSES))
        self.nonlinear = letters[4]

    def expand_except(self, expr: Expr, keep: str) -> Expr | None:
        """``expr`` with every definition but ``keep`` substituted (``None``: a cycle)."""
        for _ in range(len(self.variables) + 1):
            subs = {}
            for sym in expr.free_symbols:
                v = self.variables.get(sym.name)
                if sym.name != keep and v is not None and v.value is None and \
                        v.expr is not None:
                    subs[sym] = v.expr
            if not subs:
                return expr
            expr = expr.xreplace(subs)
        return None

    def partials(self) -> None:
        """``x'y`` names: ∂x/∂y, formed analytically (definitions other than ``y`` expanded).

        A partial that the expansion of ``x`` uses is formed first, so that it is
        differentiated as what it stands for, not as a constant; a partial that needs
        itself (``a = a'phi + phi;``) is an error at its first use.
        """
        self.first_use: dict[str, _Use] = {}
        for u in sorted(self.uses, key=lambda u: u.start):
            self.first_use.setdefault(u.base, u)
        forming: list[str] = []
        for u in sorted(self.uses, key=lambda u: u.start):
            if "'" in u.base:
                self.partial(u.base, u, forming)

    def partial(self, base: str, u: _Use, forming: list[str]) -> None:
        """Form the partial derivative ``base`` (``f'v``) first used at ``u``."""
        if base in self.variables or base in self.missing:
            return
        if base in forming:
            cycle = forming[forming.index(base):]
            path = " → ".join(f"`{n}`" for n in [*cycle, base])
            f = base.rpartition("'")[0]
            self.error(f"partial derivative `{base}` depends on itself ({path}): `{f}`, with "
                       "its definitions substituted, contains it; break the cycle", u.span)
            self.missing.update(cycle)
            return
        f, _, v = base.rpartition("'")
        if not f or not v:
            self.error(f"`{base}`: a `'` in a name marks a derivative, `x't` (by time) or "
                       "`x'y` (partial, by `y`)", u.span)
            self.missing.add(base)
            return
        if f not in self.variables:
            hint = suggest(f, sorted(self.variables))
            self.error(f"partial derivative `{base}`: `{f}` is not defined{hint}", u.span)
            self.missing.add(base)
            return
        var = self.variables[f]
        if var.expr is None:
            self.missing.add(base)
            return
        expanded = self.expand_except(var.expr, v)
        if expanded is None:
            self.missing.add(base)  # the cycle is reported with the definitions
            return
        forming.append(base)
        for sym in sorted(expanded.free_symbols, key=lambda s: s.name):
            inner = split_derivative(sym.name)[0]
            if "'" in inner:
                self.partial(inner, self.first_use.get(inner, u), forming)
        forming.pop()
        if base in self.missing:
            return
        if any(split_derivative(s.name)[0] in self.missing for s in expanded.free_symbols):
            self.missing.add(base)  # reported at the partial it needs
            return
        expanded = self.expand_except(expanded, v)
        if expanded is None:
            self.missing.add(base)
            return
        expr = derivative(expanded, TIME if v == TIME.name else se.Symbol(v))
        stmt = ast.Variable(name=ast.Name(name=base, span=u.span, start=u.start,
                                          end=u.start + len(base)),
                            expr=ast.Name(name=base, span=u.span, start=u.start,
                                          end=u.start), span=u.span, start=u.start,
                            end=u.start)
        value = _to_float(expr) if not expr.free_symbols else None
        self.variables[base] = _Var(stmt, expr, value)
        for sym in expr.free_symbols:
            b, order = split_derivative(sym.name)
            self.uses.append(_Use(sym.name, b, order, u.span, u.start, "definition",
                                  f"partial derivative `{base}`", base))

    def variable(self, stmt: ast.Variable) -> None:
        written = stmt.name.name
        base, order = split_derivative(written)
        span = stmt.name.span
        if order == 0:
            if written in CONSTANTS:
                self.error(f"`{written}` is a predefined constant and cannot be redefined; "
                           "choose another name", span)
                return
            if written == TIME.name:
                self.error("`t` is time and cannot be defined; choose another name", span)
                return
            canonical = self.rename(written)
            if canonical in self.owner_of_generated:
                self.error(f"`{written}` is generated for body "
                           f"`{self.owner_of_generated[canonical]}` and cannot be defined; "
                           "choose another name", span)
                return
            expr = self.formula(stmt.expr, "definition", f"definition of `{written}`", written)
            value = None
            if expr is not None and not expr.free_symbols:
                value = _to_float(expr)
                if value is None:
                    self.error(f"value of `{written}` {_not_a_float(expr)}; check the formula",
                               stmt.expr.span)
            self.variables[written] = _Var(stmt, expr, value)
        elif order == 1:
            target = self.rename(base)
            if target in self.velocities:
                first = self.velocities[target][0]
                self.warn(f"redefinition of `{target}'t` (the last definition wins; the "
                          f"previous one is at line {self.line(first)})", span)
            # a unit written after a velocity formula is accepted and dropped (units are
            # kept raw on parameters and definitions only; conversion is later work)
            expr = self.formula(stmt.expr, "velocity", f"velocity formula `{written}`",
                                owner=target)
            self.velocities[target] = (stmt, expr)
        else:
            self.error(f"`{written} = …`: only a velocity `{base}'t = …` can be given by a "
                       "formula, not a higher derivative", span)

    def element(self, stmt: ast.ElementRecord) -> None:
        label = stmt.label.name
        first = stmt.coordinates[0].name
        if label[0] not in self.classes:
            letters = ", ".join(list(self.classes)[:-1]) + " or " + list(self.classes)[-1]
            if label[0] == self.nonlinear:
                why = (f"nonlinear elements (class `{label[0]}`) are not supported; write the "
                       "nonlinear law as the characteristic of a force element `P`")
            else:
                why = (f"unrecognised element class `{label[0]}` in `{label}.{first}` "
                       f"(expected {letters}); the first letter of an element name is its "
                       "class: inertial, dissipative, elastic, force")
            self.error(why, stmt.label.span)
            for coord in stmt.coordinates:  # still a coordinate: avoids echo errors
                self.record(coord, "structure", f"element `{label}.{coord.name}`")
            self.record(stmt.expr, "characteristic", f"characteristic of element `{label}`")
            return
        where = f"characteristic of element `{label}.{'.'.join(c.name for c in stmt.coordinates)}`"
        expr = self.formula(stmt.expr, "characteristic", where)
        for coord in stmt.coordinates:
            canonical = self.rename(coord.name)
            key = (label, canonical)
            if key in self.elements:
                prev = self.elements.pop(key)[0]
                self.warn(f"redefinition of element `{label}.{coord.name}` (the last "
                          f"definition wins; the previous one is at line {self.line(prev)})",
                          coord.span)
            base, order = split_derivative(canonical)
            self.uses.append(_Use(canonical, base, order, coord.span, coord.start, "structure",
                                  f"element `{label}.{coord.name}`"))
            self.elements[key] = (stmt, coord, expr)

    # ------------------------------------------------------------ bodies
    def bodies(self) -> None:
        self.body_data: dict[str, tuple[ast.BodyRecord, tuple[Transform, ...],
                                        tuple[Transform, ...], Inertia | None]] = {}
        self.inertia_spans: dict[str, dict[str, Span]] = {}
        for rec in self.body_records:
            body = rec.name.name
            chain = tuple(t for t in (self.transform(i, body) for i in rec.transforms)
                          if t is not None)
            central, inertia = self.tail(rec)
            self.body_data[body] = (rec, chain, central, inertia)

    def transform(self, item: ast.Expr, body: str) -> Transform | None:
        if not isinstance(item, ast.Call) or item.func.name not in TRANSFORMS:
            what = f"`{self.text(item)}`"
            hint = ""
            if isinstance(item, ast.Call):
                hint = suggest(item.func.name, TRANSFORMS)
            self.error(f"expected a transform `Rx(…)`, `Ry(…)`, `Rz(…)`, `Sx(…)`, `Sy(…)`, "
                       f"`Sz(…)` or `Q(λ0, λ1, λ2, λ3)` in body `{body}`, got {what}{hint}",
                       item.span)
            return None
        kind, axis, arity = TRANSFORMS[item.func.name]
        where = f"transform `{item.func.name}` of body `{body}`"
        if len(item.args) != arity:
            for a in item.args:
                self.record(a, "position", where)
            self.error(f"transform `{item.func.name}` of body `{body}` takes {arity} "
                       f"argument{'s' if arity > 1 else ''}, got {len(item.args)}", item.span)
            return None
        args = []
        for a in item.args:
            expr = self.formula(a, "position", where)
            if expr is None:
                return None
            if kind == "R" and _is_literal(a):
                expr = expr * se.pi / 180
            args.append(expr)
        return Transform(kind, axis, tuple(args), item.span)

    def tail(self, rec: ast.BodyRecord) -> tuple[tuple[Transform, ...], Inertia | None]:
        body = rec.name.name
        central: list[Transform] = []
        items = list(rec.tail)
        while items and isinstance(items[0], ast.Call) and items[0].func.name in TRANSFORMS:
            t = self.transform(items.pop(0), body)
            if t is not None:
                central.append(t)
        named: dict[str, tuple[ast.Call, Expr | None]] = {}
        positional: list[ast.Expr] = []
        ok = True
        for item in items:
            if isinstance(item, ast.Call) and item.func.name in TRANSFORMS:
                if TRANSFORMS[item.func.name][0] != "S":
                    self.error(f"rotation `{self.text(item)}` in body `{body}` must come before "
                               "the inertia items (central transforms lead the third "
                               "section)", item.span)
                    ok = False
                    continue
                t = self.transform(item, body)  # older centre-of-mass offset
                if t is not None:
                    central.append(t)
                continue
            if isinstance(item, ast.Call) and item.func.name not in FUNCTIONS:
                fname = item.func.name
                if fname not in INERTIA_ITEMS:
                    self.error(f"unknown inertia item `{fname}` in body `{body}`"
                               f"{suggest(fname, [*INERTIA_ITEMS, *TRANSFORMS])}; expected "
                               "m(…), Jx(…), Jy(…), Jz(…), Jxy(…), Jyz(…), Jxz(…)", item.func.span)
                    ok = False
                    continue
                field_name = INERTIA_ITEMS[fname]
                if len(item.args) != 1:
                    self.error(f"inertia item `{fname}` of body `{body}` takes 1 value, got "
                               f"{len(item.args)}", item.span)
                    ok = False
                    continue
                if field_name in named:
                    self.error(f"inertia item `{fname}` of body `{body}` is given twice",
                               item.span)
                    ok = False
                    continue
                expr = self.formula(item.args[0], "inertia",
                                    f"{_LABEL[field_name]} of body `{body}`")
                named[field_name] = (item, expr)
                self.inertia_spans.setdefault(body, {})[field_name] = item.span
                ok = ok and expr is not None
            else:
                positional.append(item)
        if named and positional:
            self.error(f"body `{body}` mixes named inertia items (`m(…)`, `Jx(…)` …) with plain "
                       f"values (`{self.text(positional[0])}`); use one form", positional[0].span)
            return tuple(central), None
        values: dict[str, Expr | None] = {k: v[1] for k, v in named.items()}
        if positional:
            if len(positional) not in (1, 4, 7):
                self.error(f"body `{body}`: plain inertia values are `m`, `m, Jx, Jy, Jz` or "
                           f"`m, Jx, Jy, Jz, Jxy, Jyz, Jxz` (1, 4 or 7 values), got "
                           f"{len(positional)}", positional[0].span)
                return tuple(central), None
            for field_name, node in zip(_POSITIONAL, positional, strict=False):
                self.inertia_spans.setdefault(body, {})[field_name] = node.span
                values[field_name] = self.formula(node, "inertia",
                                                  f"{_LABEL[field_name]} of body `{body}`")
        if "mass" not in values:
            self.error(f"body `{body}` has no mass: add `m(…)` (or a plain value) to its third "
                       "section", rec.name.span)
            return tuple(central), None
        if not ok or any(v is None for v in values.values()):
            return tuple(central), None
        zero = se.Integer(0)
        return tuple(central), Inertia(**{f: values.get(f, zero) for f in _POSITIONAL})

    # ------------------------------------------------------------ instructions (local part)
    def instruction_lists(self) -> None:
        self.listed_coordinates: list[ast.Name] | None = None
        self.pseudo: list[ast.Name] = []
        self.constraint_names: list[ast.Name] = []
        self.rolling: list[Rolling] = []
        self.coincide_items: list = []
        self.virtual_items: list[virtual.VirtualItem] = []
        self.control_names: list[ast.Name] = []
        self.input_names: list[ast.Name] = []
        self.programmed_items: list[programmed.ProgrammedItem] = []
        self.event_items: list[model_events.EventItem] = []
        self.scene_items: list[SceneSurface] = []
        self.shape_items: list[display.DisplayShape] = []
        self.free_names: list[ast.Name] = []
        self.gravity: tuple[Expr, Expr, Expr] | None = None
        self.calculation: str | None = None
        self.calculation_span: Span | None = None
        self.quaternion: QuaternionInstruction | None = None
        self.angular_velocity: dict[str, tuple[str, Span | None]] = {}
        self.titles: dict[str, str] = {}
        for key, ins in self.instructions.items():
            if key not in keywords.IMPLEMENTED:
                self.unsupported(ins.written, key, ins.name_span)
            elif key in ("CODING", "WITHDRAW", "MULTIPLY", "BODIES", "UNITS"):
                pass  # applied while reading (kidym.lang.tasks) or in collect()
            elif ins.bare and key != "END":
                self.error(f"instruction `{ins.written}` needs a list: `{ins.written} := …;`",
                           ins.name_span)
            elif key == "COORDINATES":
                self.listed_coordinates = self.name_list(ins, "a coordinate name")
            elif key == "PSEUDOVELOCITIES":
                self.pseudo = self.name_list(ins, "a pseudo-velocity name")
            elif key == "ROLLING":
                self.rolling_of(ins)
            elif key == "COINCIDE":
                self.coincide_items = coincide.read_items(self, ins)
            elif key == "IK_EQUATIONS":
                self.constraint_names = self.name_list(
                    ins, "the name of a defined quantity that must vanish")
            elif key in inverse.KEYS:
                inverse.convert_values(self, ins)
            elif key in virtual.KINDS:
                self.virtual_items += virtual.read_items(self, ins)
            elif key == "EVENTS":
                self.event_items = model_events.read_items(self, ins)
            elif key == "UNKNOWNS":
                self.control_names = self.name_list(ins, "a control name")
            elif key == "PROGRAMMED_CONSTRAINTS":
                self.programmed_items = programmed.read_items(self, ins)
            elif key == "INPUTS":
                self.input_names = model_inputs.read(self, ins)
            elif key == "SCENE":
                self.scene_items = scene.read_items(self, ins)
            elif key == "SHAPES":
                self.shape_items = display.read_items(self, ins)
            elif key == "FREE":
                self.free_names = free.read(self, ins)
            elif key == "GRAVITY":
                self.gravity_of(ins)
            elif key == "CALCULATION":
                self.calculation_of(ins)
            elif key == "QUATERNION":
                self.quaternion_of(ins)
            elif key == "ANGULAR_VELOCITY":
                self.angular_velocity_of(ins)
            elif key in ("TASK", "AUTHOR", "VARIANT"):
                if ins.raw:
                    self.titles[key] = ins.raw
            elif key in ("INITIAL", "TIME", "VARY"):
                for node, label in self.value_items(ins):
                    self.formula(node, "value", label)

    @staticmethod
    def value_items(ins: ast.Instruction) -> list[tuple[ast.Expr, str]]:
        """The value formulas of an ``INITIAL``/``TIME``/``VARY`` list, with labels."""
        out: list[tuple[ast.Expr, str]] = []
        for i, item in enumerate(ins.items):
            if isinstance(item, ast.NamedItem):
                out.append((item.value, f"value of `{item.name.name}` in `{ins.written}`"))
            elif isinstance(item, ast.Call) and (item.func.name not in FUNCTIONS or (
                    ins.key == "INITIAL" and len(item.args) == 1)):
                # in INITIAL `th(0.3)` is a value of `th` even where `th` names a function
                out.extend((a, f"value of `{item.func.name}` in `{ins.written}`")
                           for a in item.args)
            elif ins.key == "VARY" and i > 0 and not isinstance(item, ast.BasedItem):
                out.append((item, f"a value in `{ins.written}`"))
        return out

    def name_list(self, ins: ast.Instruction, what: str) -> list[ast.Name]:
        out: list[ast.Name] = []
        seen: set[str] = set()
        for item in ins.items:
            if not isinstance(item, ast.Name):
                self.error(f"`{ins.written}` lists names; expected {what}, got "
                           f"`{self.text(item)}`", item.span)
                continue
            canonical = self.rename(item.name)
            if canonical in seen:
                self.error(f"`{item.name}` is listed twice in `{ins.written}`", item.span)
                continue
            seen.add(canonical)
            out.append(ast.Name(name=canonical, span=item.span, start=item.start, end=item.end))
        return out

    def gravity_of(self, ins: ast.Instruction) -> None:
        items = ins.items
        if len(items) not in (1, 3) or any(isinstance(i, ast.NamedItem | ast.BasedItem)
                                           for i in items):
            self.error(f"`{ins.written}` takes one value `g` (gravity along −z) or three "
                       f"components of the gravity acceleration, got {len(items)} item"
                       f"{'s' if len(items) != 1 else ''}", ins.name_span)
            return
        exprs = [self.formula(i, "gravity", f"`{ins.written}`") for i in items]  # type: ignore[arg-type]
        if any(e is None for e in exprs):
            return
        if len(exprs) == 1:
            self.gravity = (se.Integer(0), se.Integer(0), -exprs[0])
        else:
            self.gravity = (exprs[0], exprs[1], exprs[2])

    def angular_velocity_of(self, ins: ast.Instruction) -> None:
        """``УГЛОВАЯ СКОРОСТЬ := fixed;`` or ``:= Ball(fixed), Top(body);`` (raw text)."""
        modes = ", ".join(f"`{w}`" for w in ANGULAR_VELOCITY_WORDS)
        for piece in (ins.raw or "").split(","):
            found = _ANGULAR_VELOCITY_ITEM.fullmatch(piece.strip())
            word = (found.group("mode") or found.group("mode2")).lower() if found else ""
            if not found or word not in ANGULAR_VELOCITY_WORDS:
                self.error(f"`{ins.written}` expects `body`, `fixed` or `auto`, for every "
                           f"quaternion body or as `Body(mode)`; got `{piece.strip()}` "
                           f"(modes: {modes})", ins.raw_span)
                continue
            body = self.rename(found.group("body")) if found.group("body") else "*"
            if body in self.angular_velocity:
                self.error(f"`{ins.written}` gives the angular velocity of "
                           f"{'every body' if body == '*' else f'`{body}`'} twice",
                           ins.raw_span)
                continue
            self.angular_velocity[body] = (ANGULAR_VELOCITY_WORDS[word], ins.raw_span)

    def check_angular_velocity(self, bodies: Iterable[Body]) -> None:
        """The bodies named in ``УГЛОВАЯ СКОРОСТЬ`` exist and turn by a quaternion."""
        quaternion = {b.name for b in bodies
                      if any(tr.kind == "Q" for tr in (*b.transforms, *b.central))}
        for body, (_mode, span) in self.angular_velocity.items():
            if body != "*" and body not in quaternion:
                known = "is not a body" if body not in self.body_data else "has no Q(…)"
                hint = suggest(body, sorted(quaternion))
                self.error(f"angular velocity of `{body}`: `{body}` {known}; only the "
                           f"angular velocity of a quaternion body is chosen{hint}", span)

    def quaternion_of(self, ins: ast.Instruction) -> None:
        """``КВАТЕРНИОН : [P(…),] Q(…), Ry(ψ), … [, E(…)];`` as written (no semantics)."""
        parts: dict[str, tuple[str, ...]] = {}
        rotations: list[Transform] = []
        ok = True
        self.quaternion_names: dict[str, Span] = {}
        for item in ins.items:
            head = item.func.name if isinstance(item, ast.Call) else None
            if head in ("P", "Q", "E"):
                assert isinstance(item, ast.Call)
                if head in parts:
                    self.error(f"`{head}(…)` is given twice in `{ins.written}`", item.span)
                    ok = False
                    continue
                if any(not isinstance(a, ast.Name) for a in item.args) or (
                        head != "E" and len(item.args) != 4):
                    need = "names" if head == "E" else "four names"
                    self.error(f"`{head}(…)` in `{ins.written}` takes {need}, got "
                               f"`{self.text(item)}`", item.span)
                    ok = False
                    continue
                parts[head] = tuple(self.rename(a.name) for a in item.args)  # type: ignore[union-attr]
                for a in item.args:
                    self.quaternion_names.setdefault(self.rename(a.name), a.span)  # type: ignore[union-attr]
            elif head in ("Rx", "Ry", "Rz"):
                assert isinstance(item, ast.Call)
                if len(item.args) != 1:
                    self.error(f"rotation `{head}` in `{ins.written}` takes one angle, got "
                               f"{len(item.args)}", item.span)
                    ok = False
                    continue
                arg = item.args[0]
                if isinstance(arg, ast.Name):
                    angle: Expr = se.Symbol(self.rename(arg.name))
                elif _is_literal(arg):
                    angle = self.convert(arg) * se.pi / 180
                else:
                    self.error(f"rotation `{head}` in `{ins.written}` takes an angle name or a "
                               f"number of degrees, got `{self.text(arg)}`", arg.span)
                    ok = False
                    continue
                rotations.append(Transform("R", head[1], (angle,), item.span))
            else:
                self.error(f"`{ins.written}` lists `P(…)`, `Q(λ0, λ1, λ2, λ3)`, rotations "
                           f"`Rx/Ry/Rz(…)` and `E(…)`; got `{self.text(item)}`", item.span)
                ok = False
        if ok and "Q" not in parts:
            self.error(f"`{ins.written}` needs the quaternion `Q(λ0, λ1, λ2, λ3)`", ins.name_span)
            ok = False
        if ok:
            q, p = parts["Q"], parts.get("P")
            self.quaternion = QuaternionInstruction(
                (q[0], q[1], q[2], q[3]), tuple(rotations),
                None if p is None else (p[0], p[1], p[2], p[3]), parts.get("E"), ins.span)

    def check_quaternion_names(self) -> None:
        """The components ``Q(…)`` of ``КВАТЕРНИОН`` must be names of the model.

        The angles and ``E(…)`` are defined by the operator; the quaternion it turns
        into them must exist (``Q(l0, l, l2, l3)`` with no ``l`` ended in derive).
        ``P(…)`` is stored as written (its names are looked up only when an angle is
        asked for).
        """
        q = getattr(self, "quaternion", None)
        if q is None:
            return
        ins = self.instructions["QUATERNION"]
        known = set(self.coordinates) | self.known | self.missing
        for name in q.quaternion:
            if name not in known and split_derivative(name)[0] not in self.missing:
                hint = suggest(name, sorted(set(self.coordinates) | self.params | self.defs))
                self.error(f"`{name}` in `{ins.written}` is not a coordinate or a name of the "
                           f"model{hint}; `Q(…)` lists the components of a body's quaternion",
                           self.quaternion_names[name])

    def quaternion_angle_names(self) -> set[str]:
        """Names the ``КВАТЕРНИОН`` operator defines: its rotation angles and ``E(…)``
        (their formulas through the quaternion are formed by :mod:`kidym.eom`)."""
        q = getattr(self, "quaternion", None)
        if q is None:
            return set()
        names = {str(tr.args[0]) for tr in q.rotations if tr.args[0].is_Symbol}
        return names | set(q.euler or ())

    def calculation_of(self, ins: ast.Instruction) -> None:
        lang = keywords.language_of(ins.written)   # the types listed in the model's words
        if not ins.raw:
            self.error(f"`{ins.written}` needs a calculation type, e.g. `{ins.written} := "
                       f"{keywords.calculation_in('DYNAMICS', lang)};`", ins.name_span)
            return
        key = keywords.lookup_calculation(ins.raw)
        if key is None:
            near = keywords.closest_calculation(ins.raw)
            hint = f" (did you mean `{near}`?)" if near else ""
            known = ", ".join(keywords.calculation_in(k, lang) for k in keywords.CALCULATIONS)
            self.error(f"unknown calculation type `{ins.raw}`{hint}; expected one of: {known}",
                       ins.raw_span)
            return
        if key not in keywords.SUPPORTED_CALCULATIONS:
            known = ", ".join(keywords.calculation_in(k, lang) for k in keywords.CALCULATIONS
                              if k in keywords.SUPPORTED_CALCULATIONS)
            self.error(f"calculation `{ins.raw}` is recognised but not supported yet (kidym "
                       f"does: {known}); running another calculation instead would give "
                       "other results than asked", ins.raw_span)
            return
        self.calculation = key
        self.calculation_span = ins.raw_span

    def unsupported(self, written: str, key: str, span: Span | None) -> None:
        """An instruction kidym does not implement: a warning where it only changes how
        results are presented, an error where ignoring it would change the results."""
        if key in keywords.PRESENTATION_ONLY:
            self.warn(f"instruction `{written}` is recognised but not supported yet; ignored "
                      "(it changes only how results are shown)", span)
        else:
            self.error(f"instruction `{written}` is recognised but not supported yet; it would "
                       "change the results, so the model cannot run without it: remove it "
                       "or rewrite it with the supported instructions (docs/language.md §5)",
                       span)

    def title(self) -> str | None:
        parts = [self.titles[k] for k in ("TASK", "AUTHOR", "VARIANT") if k in self.titles]
        return " — ".join(parts) if parts else None

    # ------------------------------------------------------------ phase 2: names
    def classify(self) -> None:
        params = {n for n, v in self.variables.items() if v.value is not None}
        defs = {n for n, v in self.variables.items() if v.value is None}
        self.params, self.defs = params, defs
        self.def_uses: dict[str, list[_Use]] = {n: [] for n in defs}
        for u in self.uses:
            if u.kind == "definition" and u.owner in self.def_uses:
                self.def_uses[u.owner].append(u)
        pseudo = {n.name for n in self.pseudo}
        self.known = (params | defs | set(self.owner_of_generated) | {TIME.name, "g"}
                      | {n.name for n in self.control_names}
                      | {n.name for n in self.input_names})
        structural: set[str] = set()
        positional: dict[str, _Use] = {}
        for target in self.velocities:
            structural.add(split_derivative(target)[0])
        # (use, whether it lies in a body position rather than an element coordinate)
        stack = [(u, u.kind == "position") for u in self.uses
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
            for du in self.def_uses.get(u.base, ()):
                stack.append((_Use(du.name, du.base, du.order, du.span, du.start, "structure",
                                   u.where), in_position))
        self.structural = structural
        first: dict[str, _Use] = {}
        for u in sorted(self.uses, key=lambda u: u.start):
            first.setdefault(u.base, u)
        for target, (stmt, _e) in self.velocities.items():
            base, _ = split_derivative(target)
            if base not in first or stmt.start < first[base].start:
                first[base] = _Use(target + "'t", base, 1, stmt.name.span, stmt.start,
                                   "structure", f"velocity formula `{stmt.name.name}`")
        listed = {n.name for n in self.listed_coordinates or ()}
        coordinates: list[str] = []
        self.pseudo_names: list[str] = [n.name for n in self.pseudo]
        for base, u in sorted(first.items(), key=lambda kv: kv[1].start):
            if base in self.known or base in self.missing:
                continue
            if base in self.unsure and base not in structural:
                self.missing.add(base)  # maybe defined by a statement that did not parse
                continue
            if "@" in base:
                body = base.split("@", 1)[1]
                hint = suggest(body, [r.name.name for r in self.body_records])
                self.error(f"`{base}` names a generated quantity of body `{body}`, which is not "
                           f"defined{hint}", u.span)
                self.missing.add(base)
            elif "'" in base:
                self.missing.add(base)  # an `x'y` whose `x` is missing: reported already
            elif base in pseudo:
                if base in positional:
                    w = positional[base]
                    self.error(f"pseudo-velocity `{base}` is used in the {w.where}; a "
                               "pseudo-velocity is a speed and cannot enter a body position",
                               w.span)
            elif base in structural:
                coordinates.append(base)
            elif base in listed:
                coordinates.append(base)  # reported: it never appears in a body or element
                self.missing.add(base)
            else:
                self.missing.add(base)
                self.report_missing(base)
        for n in self.pseudo:
            if n.name in params or n.name in defs:
                listing = self.instructions["PSEUDOVELOCITIES"].written
                self.error(f"`{n.name}` is listed in `{listing}` but has a value or formula; a "
                           "pseudo-velocity must not be defined", n.span)
            elif n.name == TIME.name:
                self.error("`t` is time, not a pseudo-velocity", n.span)
        self.coordinates = self.order_coordinates(coordinates, listed, first)
        self.check_constraint_names()
        self.check_prescribed_motion()

    def rolling_of(self, ins: ast.Instruction) -> None:
        """``КАЧЕНИЕ := Ball(шар(R), плоскость(h)), Wheel(диск(r, y), плоскость(0));``,
        ``Ball(шар(R), сфера_внутри(R0, cx, cy, cz))``, ``Ball(шар(R), поверхность(h))``."""
        usage = (f"`{ins.written}` lists `Body(shape, surface)`: shape `шар(R)` or "
                 "`диск(r, axis)` (axis x, y or z), surface `плоскость(h)`, "
                 "`сфера_внутри(R0[, cx, cy, cz])`, `сфера_снаружи(R0[, cx, cy, cz])` or "
                 "`поверхность(f)`")
        seen: set[str] = set()
        for item in ins.items:
            ok = (isinstance(item, ast.Call) and len(item.args) == 2
                  and all(isinstance(a, ast.Call) for a in item.args))
            if not ok:
                self.error(f"{usage}; got `{self.text(item)}`", item.span)
                continue
            body = self.rename(item.func.name)
            shape_node, surface_node = item.args
            shape = _ROLLING_SHAPES.get(shape_node.func.name.lower())
            surface = _ROLLING_SURFACES.get(surface_node.func.name.lower())
            if body not in self.body_data:
                self.error(f"`{ins.written}`: `{body}` is not a body"
                           f"{suggest(body, sorted(self.body_data))}", item.func.span)
                continue
            if body in seen:
                self.error(f"`{ins.written}` gives body `{body}` twice", item.func.span)
                continue
            seen.add(body)
            if shape is None:
                self.error(f"`{ins.written}`: unknown rolling shape `{shape_node.func.name}`; "
                           "kidym knows " + ", ".join(f"`{w}`" for w in _ROLLING_SHAPES),
                           shape_node.func.span)
                continue
            if surface_node.func.name.lower() in _SPHERE_WITHOUT_SIDE:
                self.error(f"`{ins.written}`: say on which side of the sphere `{body}` rolls: "
                           "`сфера_внутри` (`сфера_всередині`, `sphere_inside`) or "
                           "`сфера_снаружи` (`сфера_зовні`, `sphere_outside`)",
                           surface_node.func.span)
                continue
            if surface is None:
                self.error(f"`{ins.written}`: unknown surface `{surface_node.func.name}`; "
                           "kidym knows " + ", ".join(f"`{w}`" for w in _ROLLING_SURFACES),
                           surface_node.func.span)
                continue
            if shape == "disc" and surface != "plane":
                self.error(f"`{ins.written}`: a disc rolls on a plane only; `{body}` rolls on "
                           f"`{surface_node.func.name}` (a ball, `шар(R)`, rolls on spheres "
                           "and implicit surfaces)", surface_node.func.span)
                continue
            want = 1 if shape == "ball" else 2
            n_surface = len(surface_node.args)
            if len(shape_node.args) != want or not (
                    n_surface == 1 or (surface.startswith("sphere") and n_surface == 4)):
                self.error(f"{usage}; got `{self.text(item)}`", item.span)
                continue
            axis = None
            if shape == "disc":
                ax = shape_node.args[1]
                axis = ax.name.lower() if isinstance(ax, ast.Name) else ""
                if axis not in ("x", "y", "z"):
                    self.error(f"`{ins.written}`: the axis of disc `{body}` is `x`, `y` or `z` "
                               f"(a body axis), got `{self.text(ax)}`", ax.span)
                    continue
            radius = self.formula(shape_node.args[0], "value", f"radius of `{body}` in "
                                  f"`{ins.written}`")
            if radius is None:
                continue
            if surface == "plane":
                height = self.formula(surface_node.args[0], "value",
                                      f"plane height of `{body}` in `{ins.written}`")
                if height is not None:
                    self.rolling.append(Rolling(body, shape, radius, surface, height, axis,
                                                item.span))
            elif surface == "surface":
                fn = surface_node.args[0]
                if not isinstance(fn, ast.Name):
                    self.error(f"`{ins.written}`: `{surface_node.func.name}` takes the name of "
                               "a defined formula of the centre `XO{body}`, `YO{body}`, "
                               f"`ZO{body}`, got `{self.text(fn)}`".replace("{body}", body),
                               fn.span)
                    continue
                name = self.rename(fn.name)
                self.record(fn, "value", f"surface of `{body}` in `{ins.written}`")
                self.rolling.append(Rolling(body, shape, radius, surface, None, axis,
                                            item.span, function_name=name))
            else:
                parts = [self.formula(a, "value", f"{what} of `{body}` in `{ins.written}`")
                         for a, what in zip(surface_node.args,
                                            ("sphere radius", "sphere centre x",
                                             "sphere centre y", "sphere centre z"))]
                if any(p is None for p in parts):
                    continue
                centre = tuple(parts[1:]) or (se.Integer(0),) * 3
                self.rolling.append(Rolling(body, shape, radius, surface, None, axis,
                                            item.span, sphere_radius=parts[0],
                                            centre=centre))

    def check_rolling(self) -> None:
        """Radius and sphere radius constant, plane height and sphere centre formulas of
        parameters and time, a surface function a definition of the centre; generated
        names free."""
        if not self.rolling:
            return
        written = self.instructions["ROLLING"].written
        taken = self.params | self.defs | set(self.coordinates)
        for k, r in enumerate(self.rolling):
            self.check_constant(r.radius, f"the radius of `{r.body}` in `{written}`", r.span,
                                value=True)
            self.check_constant(r.height, f"the plane height of `{r.body}` in `{written}`",
                                r.span, allow_time=True, value=True)
            self.check_constant(r.sphere_radius, f"the sphere radius of `{r.body}` in "
                                f"`{written}`", r.span, value=True)
            for c in r.centre:
                self.check_constant(c, f"the sphere centre of `{r.body}` in `{written}`",
                                    r.span, allow_time=True, value=True)
            if r.function_name is not None:
                self.rolling[k] = dataclasses.replace(
                    r, function=self.surface_function(r, written))
            for name in r.constraint_names():
                if name in taken:
                    self.error(f"`{written}` names the rolling constraints of `{r.body}` "
                               f"`{name}`, but `{name}` is a name of the model: rename it",
                               r.span)

    def surface_function(self, r: Rolling, written: str) -> Expr | None:
        """The expanded formula of ``поверхность(f)``: of the body's centre names and
        parameters only (``None``, reported, otherwise)."""
        name = r.function_name
        centre = r.centre_names()
        how = (f"`{name}` = 0 is the surface of the centre of `{r.body}`: a formula of "
               f"`{centre[0]}`, `{centre[1]}`, `{centre[2]}` and parameters, positive on the "
               "ball's side")
        if name not in self.defs or self.variables[name].expr is None:
            self.error(f"`{written}`: `{name}` is not a defined formula; {how}", r.span)
            return None
        expanded = self.expand(se.Symbol(name))
        if expanded is None:
            self.error(f"`{written}`: `{name}` cannot be formed with its definitions "
                       "substituted", r.span)
            return None
        params = self.params | {"g"}
        bad = sorted(s.name for s in expanded.free_symbols
                     if s.name not in params and s.name not in centre)
        if bad:
            self.error(f"`{written}`: the surface `{name}` of `{r.body}` uses "
                       + ", ".join(f"`{b}`" for b in bad) + f"; {how}", r.span)
            return None
        if not any(s.name in centre for s in expanded.free_symbols):
            self.error(f"`{written}`: the surface `{name}` of `{r.body}` does not use the "
                       f"centre; {how}", r.span)
            return None
        return expanded

    def check_constraint_names(self) -> None:
        """``УРАВНЕНИЯ := f1, …``: each name a defined quantity (a formula, no value)."""
        if not self.constraint_names:
            return
        written = self.instructions["IK_EQUATIONS"].written
        for n in self.constraint_names:
            if n.name in self.defs:
                continue
            if n.name in self.params:
                self.error(f"`{n.name}` is listed in `{written}` but has a value; list the names "
                           "of formulas of the coordinates that must vanish "
                           f"(`{n.name} = a*cos(q1) + … ;`)", n.span)
            elif n.name in self.coordinates or n.name in self.owner_of_generated:
                self.error(f"`{n.name}` is listed in `{written}` but is a coordinate or a "
                           "generated name; define the constraint as a formula "
                           f"(`f1 = {n.name} - …;`) and list `f1`", n.span)
            else:
                hint = suggest(n.name, sorted(self.defs))
                self.error(f"`{n.name}` is listed in `{written}` but is not defined: define it "
                           f"as a formula that must vanish (`{n.name} = …;`){hint}", n.span)

    def check_prescribed_motion(self) -> None:
        """``РАСЧЕТ := КИНЕТОСТАТИКА`` needs the motion prescribed by constraints (that
        they leave no speed free is checked with the equations, :mod:`kidym.eom`)."""
        if self.calculation != "KINETOSTATICS" or self.constraint_names or self.coincide_items:
            return
        self.error("the kinetostatics calculation needs the motion prescribed by constraints, "
                   "and the model has none: list in `УРАВНЕНИЯ` the loop closures and a driving "
                   "constraint for each degree of freedom, a formula of a coordinate and time "
                   "that must vanish (`f3 = q1 - Om*t;  УРАВНЕНИЯ := f1, f2, f3;`)",
                   self.calculation_span)

    def report_missing(self, base: str) -> None:
        uses = [u for u in self.uses if u.base == base]
        u = min(uses, key=lambda u: u.start)
        hint = suggest(base, sorted(self.params | self.defs))
        if all(x.order > 0 for x in uses):
            self.error(f"{u.where} uses `{u.name}`, a time derivative of `{base}`, but `{base}` "
                       "is not a coordinate: it appears in no body transform, element "
                       f"coordinate or velocity formula{hint}", u.span)
        else:
            self.error(f"{u.where} depends on `{base}`, which has no value: define it "
                       f"(`{base} = …;`){hint}", u.span)

    def order_coordinates(self, detected: list[str], listed: set[str],
                          first: dict[str, _Use]) -> list[str]:
        if self.listed_coordinates is None:
            return detected
        ins = self.instructions["COORDINATES"]
        out: list[str] = []
        for n in self.listed_coordinates:
            name = n.name
            if name in self.params or name in self.defs:
                self.error(f"`{name}` is listed in `{ins.written}` but is defined (line "
                           f"{self.line(self.variables[name].stmt)}); a generalized coordinate "
                           "has no formula", n.span)
            elif name in self.owner_of_generated or name == TIME.name:
                self.error(f"`{name}` is listed in `{ins.written}` but is a predefined or "
                           "generated name", n.span)
            elif name in {p.name for p in self.pseudo}:
                self.error(f"`{name}` is listed both in `{ins.written}` and as a "
                           "pseudo-velocity", n.span)
            elif name not in self.structural:
                self.error(f"coordinate `{name}` never appears in a body or element; remove it "
                           f"from `{ins.written}` or use it", n.span)
            else:
                out.append(name)
        for name in detected:
            if name not in listed:
                u = first[name]
                self.error(f"coordinate `{name}` (used in the {u.where}) is missing from "
                           f"`{ins.written}`; add it to the list", u.span)
        return out

    # ------------------------------------------------------------ phase 3: checks
    def check_derivatives(self) -> None:
        for u in self.uses:
            if u.order == 0 or u.base in self.missing:
                continue
            if u.order > 2:
                self.error(f"`{u.name}`: only first and second time derivatives (`x't`, "
                           "`x't't`) are supported", u.span)
            elif u.base in self.params or (u.base == "g" and "g" not in self.variables):
                self.error(f"{u.where} uses `{u.name}`, the time derivative of parameter "
                           f"`{u.base}`, which is constant; write 0", u.span)
            elif u.base == TIME.name:
                self.error(f"`{u.name}`: the time derivative of time is 1; write 1", u.span)

    def check_velocities(self) -> None:
        pseudo = set(self.pseudo_names)
        for target, (stmt, _e) in self.velocities.items():
            span = stmt.name.span
            if target in self.variables:
                self.error(f"`{stmt.name.name} = …` gives the velocity of `{target}`, which is "
                           f"itself defined (line {self.line(self.variables[target].stmt)}); "
                           "remove one of the two", span)
            elif target in self.owner_of_generated:
                self.error(f"`{stmt.name.name} = …`: `{target}` is generated for body "
                           f"`{self.owner_of_generated[target]}`; its velocity follows from "
                           "the body record", span)
            elif target in pseudo:
                self.error(f"`{stmt.name.name} = …`: `{target}` is a pseudo-velocity; only "
                           "coordinates have velocity formulas", span)
            elif target == TIME.name:
                self.error("`t't` cannot be defined: it is 1", span)
        self.check_velocity_cycles()

    def check_velocity_cycles(self) -> None:
        """Velocity formulas that need each other's values (``a't = b't; b't = a't;``)."""
        uses: dict[str, list[_Use]] = {t: [] for t in self.velocities}
        for u in self.uses:
            if u.kind == "velocity" and u.owner in uses:
                uses[u.owner].append(u)

        def needs(us: list[_Use], seen: set[str]) -> set[str]:
            out: set[str] = set()
            for u in us:
                if u.order >= 1 and u.base in self.velocities:
                    out.add(u.base)
                if u.base in self.def_uses and u.base not in seen:
                    seen.add(u.base)
                    out |= needs(self.def_uses[u.base], seen)
            return out

        for us in uses.values():
            for u in us:
                if u.base not in self.missing and self.time_level(u.name, set()) >= 2:
                    self.error(f"{u.where} uses `{u.name}`, an acceleration; a velocity "
                               "is a formula of coordinates, speeds and time", u.span)
        graph = {t: sorted(needs(us, set())) for t, us in uses.items()}
        for cycle in _cycles(graph, key=lambda n: self.velocities[n][0].start):
            path = " → ".join(f"`{n}'t`" for n in [*cycle, cycle[0]])
            self.error(f"velocity formulas depend on themselves: {path}; give at least one "
                       "of these velocities without the others",
                       self.velocities[cycle[0]][0].name.span)

    def check_elements(self) -> None:
        for (label, coord), (_stmt, node, _e) in self.elements.items():
            base, _ = split_derivative(coord)
            if base in self.params or base == TIME.name:
                what = "time" if base == TIME.name else "a parameter (a constant)"
                self.error(f"element `{label}.{node.name}` has coordinate `{base}`, which is "
                           f"{what}; an element coordinate must depend on the generalized "
                           "coordinates", node.span)
                continue
            if base in self.defs and not self.moves_with_state(base):
                self.error(f"element `{label}.{node.name}` has coordinate `{base}`, a formula "
                           "of time and parameters only (a prescribed motion): an element "
                           "coordinate must depend on the generalized coordinates — a "
                           "prescribed motion takes whatever force it needs, so a force "
                           f"along it does no work; to drive `{base}` by a force, make it a "
                           f"coordinate (remove its formula `{base} = …`)", node.span)
                continue
            level = self.time_level(coord, set())
            if level >= 2:
                self.error(f"element `{label}.{node.name}`: `{node.name}` involves an "
                           "acceleration; an element acts on a position p(q, t) or on a "
                           "velocity ṗ (a speed, an angular-velocity projection `ωZBody`)",
                           node.span)
            elif level == 1 and self.classes[label[0]] == "C":
                self.error(f"elastic element `{label}.{node.name}`: `{node.name}` is a "
                           "velocity (the differential structure ṗ), but an elastic force "
                           "−c·p needs a position p(q, t); use a D element for −c·ṗ or give "
                           "the position", node.span)

        for u in self.uses:
            if (u.kind == "characteristic" and u.base not in self.missing
                    and self.time_level(u.name, set()) >= 2):
                self.error(f"{u.where} uses `{u.name}`, an acceleration; a characteristic is "
                           "a formula of coordinates, speeds and time (for a force −c·ẍ "
                           "write an inertial element `J…`)", u.span)

    def moves_with_state(self, name: str) -> bool:
        """Whether definition ``name`` depends, through the definitions it uses, on a name
        that is not a parameter or time (a coordinate, a speed, a generated body name; a
        name with a problem of its own counts, so as not to report it twice)."""
        stack, seen = [name], {name}
        while stack:
            for u in self.def_uses.get(stack.pop(), ()):
                if u.base in seen:
                    continue
                seen.add(u.base)
                if u.base in self.defs:
                    stack.append(u.base)
                elif u.base not in self.params and u.base != TIME.name:
                    return True
        return False

    def time_level(self, name: str, seen: set[str]) -> int:
        """0 for a position ``p(q, t)``, 1 for a velocity, 2 or more for accelerations.

        A name's level is its number of ``'t`` plus that of what it stands for: an
        angular-velocity projection ``ωXBody`` or a pseudo-velocity is a velocity, a
        definition has the highest level of the names its formula uses.
        """
        base, order = split_derivative(name)
        if base in self.pseudo_names:
            return order + 1
        owner = self.owner_of_generated.get(base)
        if owner is not None:
            return order + int(base[:-len(owner)] in generated.OMEGA)
        if base in self.def_uses and base not in seen:
            # memoised: definitions that share what they use (a chain of 40 using the
            # previous one twice) were walked once per path, 2^40 times
            if base not in self._levels:
                self._levels[base] = max((self.time_level(u.name, seen | {base})
                                          for u in self.def_uses[base]), default=0)
            return order + self._levels[base]
        return order

    def definition_order(self) -> list[str]:
        graph = {n: sorted({u.base for u in self.def_uses[n] if u.base in self.defs})
                 for n in self.defs}
        cyclic = _cycles(graph, key=lambda n: self.variables[n].stmt.start)
        self.cyclic: set[str] = set()
        for cycle in cyclic:
            self.cyclic.update(cycle)
            path = " → ".join(f"`{n}`" for n in [*cycle, cycle[0]])
            self.error(f"definitions depend on themselves: {path}; break the cycle",
                       self.variables[cycle[0]].stmt.name.span)
        return _topological(graph, key=lambda n: self.variables[n].stmt.start)

    def body_order(self) -> list[str]:
        names = [r.name.name for r in self.body_records]
        graph: dict[str, list[str]] = {}
        for rec in self.body_records:
            deps: list[str] = []
            if rec.base is not None:
                base = rec.base.name
                if base not in self.body_data and base in self.unsure:
                    pass
                elif base not in self.body_data:
                    self.error(f"body `{rec.name.name}` refers to base `{base}`, which is not "
                               f"defined{suggest(base, names)}", rec.base.span)
                else:
                    deps.append(base)
            graph[rec.name.name] = deps
        start = {r.name.name: r.start for r in self.body_records}
        for cycle in _cycles(graph, key=lambda n: start[n]):
            path = " → ".join(f"`{n}`" for n in [*cycle, cycle[0]])
            rec = self.body_data[cycle[0]][0]
            self.error(f"bodies form a cycle of bases: {path}; one of them must be built on "
                       "the fixed frame or another body", rec.base.span if rec.base else None)
        return _topological(graph, key=lambda n: start[n])

    def expand(self, expr: Expr) -> Expr | None:
        """``expr`` with every (acyclic) definition substituted, recursively; ``None``
        where SymEngine cannot form the result (an exact power too large to compute,
        ``1/0`` once values meet)."""
        for _ in range(len(self.defs) + 1):
            subs = {}
            for s in expr.free_symbols:
                n = s.name
                if n in self.defs and n not in self.cyclic and self.variables[n].expr is not None:
                    subs[s] = self.variables[n].expr
            if not subs:
                return expr
            expr = _substitute(expr, subs)
            if expr is None:
                return None
        return expr

    def check_constant(self, expr: Expr | None, where: str, span: Span | None,
                       allow_time: bool = False, value: bool = False) -> bool:
        """Error unless ``expr`` is of parameters (and, with ``allow_time``, time) only;
        with ``value`` also unless it has a finite real value (``sqrt(-1)`` of a rolling
        surface or a coincident point reached the generated code as ``I``). Returns
        whether it is of parameters only."""
        if expr is None:
            return True
        params = self.params | {"g"}
        expanded = self.expand(expr)
        if expanded is None:
            self.error(f"{where} cannot be formed with the definitions it uses substituted "
                       "(a number too large, or a division by zero?)", span)
            return False
        depends = False
        for s in sorted(expanded.free_symbols, key=lambda s: s.name):
            n = s.name
            if n in params or n in self.missing or n in self.broken or (
                    allow_time and n == TIME.name):
                continue
            base, order = split_derivative(n)
            if base in self.missing:
                continue
            if n == TIME.name:
                what = "time `t`"
            elif order:
                what = f"the derivative `{n}`"
            elif n in self.coordinates:
                what = f"coordinate `{n}`"
            elif n in self.pseudo_names:
                what = f"pseudo-velocity `{n}`"
            elif n in self.owner_of_generated:
                what = f"`{n}`, generated for body `{self.owner_of_generated[n]}`,"
            else:
                what = f"`{n}`"
            constant = "constant in time" if allow_time else "constant"
            self.error(f"{where} depends on {what}; it must be {constant} (parameters only)",
                       span)
            depends = True
        if value and not depends:
            self.check_parameter_formula(expr, where, span)
        return not depends

    def check_definition_values(self, order: list[str]) -> None:
        """Error at a formula of parameters only that has no finite value in the file.

        Definitions, element characteristics and gravity: ``z = 0; k = 1 % z;`` would
        reach the engines as a NaN or a division by zero.
        """
        self.no_value: set[str] = set()
        for n in order:
            var = self.variables[n]
            if n not in self.cyclic and var.expr is not None and not \
                    self.check_parameter_formula(var.expr, f"definition of `{n}`",
                                                 var.stmt.name.span):
                self.no_value.add(n)
        for (label, coord), (stmt, _node, expr) in self.elements.items():
            if expr is not None:
                self.check_parameter_formula(expr, f"characteristic of element "
                                                   f"`{label}.{coord}`", stmt.expr.span)
        if self.gravity is not None:
            ins = self.instructions["GRAVITY"]
            for g in self.gravity:
                self.check_parameter_formula(g, f"`{ins.written}`", ins.name_span)

    def check_parameter_formula(self, expr: Expr, where: str, span: Span | None) -> bool:
        """Error if ``expr``, a formula of parameters only, has no finite real value.

        Returns whether it has one (or is no such formula, or uses a definition that
        was reported already).
        """
        if any(s.name in self.no_value for s in expr.free_symbols):
            return False
        params = set(self.param_exprs)
        expr = self.expand(expr)
        if expr is None:
            self.error(f"{where} cannot be formed with the definitions it uses substituted "
                       "(a number too large, or a division by zero?)", span)
            return False
        if not {s.name for s in expr.free_symbols} <= params:
            return True
        number = _substitute(expr, {se.Symbol(n): v for n, v in self.param_exprs.items()}) \
            if expr.free_symbols else expr
        v = None if number is None or number.free_symbols else _to_float(number)
        if v is None:
            why = "is undefined (a division by zero?)" if number is None else \
                _not_a_float(number)
            self.error(f"{where} depends on parameters only, and with their values in the "
                       f"file it {why}; check the formula or the values" if expr.free_symbols
                       else f"{where} {why}; check the formula", span)
            return False
        return True

    def check_inertia(self, body: str, rec: ast.BodyRecord, inertia: Inertia) -> None:
        """Error at the record if the body's (constant) inertia is physically impossible.

        Runs on the numbers the parameters have in the file (``m ≥ 0``, tensor positive
        semidefinite, triangle inequalities: :func:`kidym.model.inertia.inertia_problem`);
        run-time overrides are checked by :func:`kidym.model.inertia.check_inertias`.
        """
        subs = {se.Symbol(n): v for n, v in self.param_exprs.items()}
        numbers = []
        for f in _POSITIONAL:
            expanded = self.expand(getattr(inertia, f))
            expr = None if expanded is None else _substitute(expanded, subs)
            if expr is not None and expr.free_symbols:
                return   # reported (a missing or broken name)
            v = None if expr is None else _to_float(expr)
            if v is None:
                why = ("is undefined with the parameter values of the file (a division by "
                       "zero?)" if expr is None else _not_a_float(expr))
                self.error(f"{_LABEL[f]} of body `{body}` {why}",
                           self.inertia_spans.get(body, {}).get(f, rec.name.span))
                return
            numbers.append(v)
        problem = inertia_problem(numbers, complete=full_tensor(inertia))
        if problem is not None:
            span = self.inertia_spans.get(body, {}).get(problem.field, rec.name.span)
            self.error(f"body `{body}`: {problem.message}; a real body cannot have this "
                       "inertia", span)

    # ------------------------------------------------------------ instructions (global part)
    def value(self, node: ast.Expr, where: str, *, formula: tuple[dict, str] | None = None
              ) -> float | None:
        """The number a formula of parameters gives; ``formula=(store, key)`` also keeps
        the formula over parameter names in ``store[key]`` when it uses any (so that a
        changed parameter re-evaluates it, :meth:`Model.initial_values`)."""
        try:
            expr = self.convert(node)
        except FormulaError:
            return None  # reported when the formula was first converted
        expr = self.expand(expr)
        if expr is None:
            self.error(f"{where} cannot be formed with the definitions it uses substituted "
                       f"(`{self.text(node)}`: a number too large, or a division by zero?)",
                       node.span)
            return None
        names = {s.name for s in expr.free_symbols}
        if names & (self.missing | self.broken) or any(
                split_derivative(n)[0] in self.missing for n in names):
            return None
        subs = {se.Symbol(n): v for n, v in self.param_exprs.items()}
        if formula is not None and expr.free_symbols and all(
                n in self.param_exprs for n in names):
            formula[0][formula[1]] = expr
        expr = _substitute(expr, subs)
        if expr is None:
            self.error(f"{where} is undefined with the parameter values of the file "
                       f"(`{self.text(node)}`: a division by zero?)", node.span)
            return None
        if expr.free_symbols:
            bad = ", ".join(f"`{s.name}`" for s in sorted(expr.free_symbols, key=lambda s: s.name))
            self.error(f"{where} must be a number, but `{self.text(node)}` depends on {bad}",
                       node.span)
            return None
        v = _to_float(expr)
        if v is None:
            self.error(f"{where} {_not_a_float(expr)}", node.span)
        return v

    def speeds_allowed(self) -> dict[str, str]:
        """Names that take initial values → what they are."""
        dependent = set(self.velocities)
        out = {q: "coordinate" for q in self.coordinates}
        out.update({f"{q}'t": "speed" for q in self.coordinates if q not in dependent})
        out.update({w: "pseudo-velocity" for w in self.pseudo_names})
        out.update({w: "pseudo-velocity" for w in self.quaternion_pseudo_velocities()})
        return out

    def quaternion_pseudo_velocities(self) -> list[str]:
        """``ωXBody, ωYBody, ωZBody`` of every body turned by ``Q(…)``: pseudo-velocities
        even when not listed (the equation builder appends them to the speeds)."""
        return [f"{a}{body}" for body, (_r, chain, _c, _i) in self.body_data.items()
                if any(tr is not None and tr.kind == "Q" for tr in chain)
                for a in ("ωX", "ωY", "ωZ")]

    def initial(self) -> tuple[dict[str, float], float | None]:
        ins = self.instructions.get("INITIAL")
        values: dict[str, float] = {}
        t_start = None
        self.initial_formulas: dict[str, se.Basic] = {}
        self.initial_spans: dict[str, Span] = {}
        if ins is None:
            return values, t_start
        allowed = self.speeds_allowed()
        dependent = {f"{q}'t" for q in self.velocities}
        for item in ins.items:
            if isinstance(item, ast.Call) and len(item.args) == 1 and (
                    item.func.name not in FUNCTIONS
                    or self.rename(item.func.name) in allowed
                    or item.func.name in self.params or item.func.name in self.defs):
                # `th(0.3)`: the model's own coordinate `th` wins over the function `th`
                name_node, value_node = item.func, item.args[0]
            elif isinstance(item, ast.Call) and len(item.args) == 1:
                self.error(f"`{self.text(item)}` in `{ins.written}`: `{item.func.name}` is a "
                           "function here, because the model has no coordinate, speed or "
                           f"pseudo-velocity called `{item.func.name}`; items are "
                           f"`name(value)` or `name = value`{suggest(item.func.name, allowed)}",
                           item.span)
                continue
            elif isinstance(item, ast.NamedItem):
                name_node, value_node = item.name, item.value
            else:
                self.error(f"`{ins.written}` items are `name(value)` or `name = value`, got "
                           f"`{self.text(item)}`", item.span)
                continue
            name = self.rename(name_node.name)
            span = name_node.span
            if name == TIME.name:
                t_start = self.value(value_node, "initial time",
                                     formula=(self.initial_formulas, TIME.name))
                continue
            if name in dependent:
                self.error(f"`{name}` is a dependent speed, given by its velocity formula "
                           f"`{name} = …`: it takes no initial value (it follows from the "
                           "coordinates and the independent speeds; give those instead)", span)
                continue
            if name not in allowed:
                base, _ = split_derivative(name)
                if name in self.params:
                    self.error(f"`{name}` is a parameter, not a coordinate or speed: change its "
                               f"value with `{name} = …;`", span)
                elif name in self.defs or name in self.owner_of_generated:
                    self.error(f"`{name}` is given by a formula; only coordinates, their "
                               "speeds and pseudo-velocities take initial values", span)
                elif base not in self.missing:
                    self.error(f"initial value for `{name}`, which is not a coordinate, speed or "
                               f"pseudo-velocity{suggest(name, allowed)}", span)
                continue
            self.initial_formulas.pop(name, None)
            v = self.value(value_node, f"initial value of `{name}`",
                           formula=(self.initial_formulas, name))
            if v is None:
                continue
            if name in values:
                self.warn(f"initial value of `{name}` is given twice (the last one wins)", span)
            values[name] = v
            self.initial_spans[name] = value_node.span
        return values, t_start

    def time_span(self) -> tuple[float | None, float | None, Span | None]:
        t0 = t1 = None
        self.span_formulas: dict[str, se.Basic] = {}
        where: Span | None = None
        for key in ("TIME", "VARY"):
            ins = self.instructions.get(key)
            if ins is None:
                continue
            where = ins.name_span
            items = ins.items
            if key == "TIME":
                if len(items) != 1 or not isinstance(items[0], ast.Call) or \
                        items[0].func.name != TIME.name or len(items[0].args) != 2:
                    self.error(f"`{ins.written}` takes `t(t_start, t_end)`, got "
                               f"`{ins.written} := {', '.join(self.text(i) for i in items)}`",
                               ins.name_span)
                    continue
                t0 = self.value(items[0].args[0], "start time",
                                formula=(self.span_formulas, "t_start"))
                t1 = self.value(items[0].args[1], "end time",
                                formula=(self.span_formulas, "t_end"))
            else:   # the time range and the parameter study (kidym.model.variations)
                v0, v1 = variations.read(self, ins)
                if v0 is not None or v1 is not None:
                    t0, t1 = v0, v1
        return t0, t1, where

    def outputs(self) -> list[str]:
        self.plots: list[Plot] = []
        out: list[str] = []
        ins = self.instructions.get("SHOW")
        if ins is not None:
            self.show(ins, out)
        for rep in sorted(self.repeated, key=lambda r: r.start):
            if rep.key in ("COMPARE", "COMBINE"):
                self.compare(rep, out)
            else:
                self.unsupported(rep.written, rep.key, rep.name_span)
        return out

    def multiplier_names(self) -> set[str]:
        """``λf`` for every constraint ``f`` of ``УРАВНЕНИЯ``, and the controls of
        ``НЕИЗВЕСТНЫЕ`` (outputs of the run, results of its solve)."""
        return {MULTIPLIER_PREFIX + n for n in [*(c.name for c in self.constraint_names),
                                                *(x for r in self.rolling
                                                  for x in r.constraint_names()),
                                                *(x for c, _n in self.coincide_items
                                                  for x in c.constraint_names())]} | {
            n.name for n in self.control_names}

    def known_output(self, node: ast.Name, ins: ast.Instruction) -> str | None:
        """Canonical name of an output ``node`` lists, or ``None`` (reported)."""
        name = self.rename(node.name)
        if name == TIME.name:
            return name
        base, order = split_derivative(name)
        known = (self.params | self.defs | set(self.owner_of_generated) | set(self.coordinates)
                 | set(self.pseudo_names))
        if "g" in self.variables or any(u.base == "g" for u in self.uses):
            known.add("g")
        if base in known and order <= 2 and not (order and base in self.params):
            return name
        multipliers = self.multiplier_names()
        if name in multipliers:
            return name   # the multiplier of a constraint (kidym.eom.constraints)
        if name in {n.name for n in self.input_names}:
            return name   # an external input's value (kidym.model.inputs)
        known |= multipliers
        if base not in self.unsure:
            self.error(f"`{ins.written}` lists `{node.name}`, which is not defined in the "
                       f"model{suggest(name, sorted(known))}", node.span)
        return None

    def compare(self, ins: ast.Instruction, out: list[str]) -> None:
        """``СРАВНИТЬ := ХУ(x, y);`` (up to 5 curves), ``СОВМЕСТИТЬ := V(vx, vy);`` (2)."""
        kind, limits = ("compare", (1, 5)) if ins.key == "COMPARE" else ("overlay", (2, 2))
        for item in ins.items:
            if isinstance(item, ast.Call) and all(isinstance(a, ast.Name) for a in item.args):
                title, names = item.func.name, list(item.args)
            elif isinstance(item, ast.Name) and len(ins.items) > 1:
                title, names = None, [i for i in ins.items if isinstance(i, ast.Name)]
            else:
                self.error(f"`{ins.written}` takes `Title(y1, y2, …)`, got "
                           f"`{self.text(item)}`", item.span)
                continue
            lo, hi = limits
            if not lo <= len(names) <= hi:
                need = "exactly 2" if lo == hi else f"1 to {hi}"
                self.error(f"`{ins.written}` puts {need} curves on one plot, got {len(names)} "
                           f"in `{self.text(item)}`", item.span)
                continue
            curves = [self.known_output(n, ins) for n in names]  # type: ignore[arg-type]
            if any(c is None for c in curves):
                continue
            for c in curves:
                if c != TIME.name and c not in out:
                    out.append(c)  # type: ignore[arg-type]
            self.plots.append(Plot(tuple(curves), (), kind,  # type: ignore[arg-type]
                                   title or ", ".join(curves), ins.span))  # type: ignore[arg-type]
            if title is None:
                break

    def show(self, ins: ast.Instruction, out: list[str]) -> None:
        base_known = (self.params | self.defs | set(self.owner_of_generated)
                      | set(self.coordinates) | set(self.pseudo_names) | {"g"}
                      | self.quaternion_angle_names())
        if "g" not in self.variables and not any(u.base == "g" for u in self.uses):
            base_known.discard("g")

        # (and the external inputs: their values, recorded like the multipliers)
        multipliers = self.multiplier_names() | {n.name for n in self.input_names}

        def add(node: ast.Name) -> None:
            name = self.rename(node.name)
            if name == TIME.name:
                return
            if name in multipliers:   # the multiplier of a constraint
                if name not in out:
                    out.append(name)
                return
            base, order = split_derivative(name)
            ok = base in base_known and order <= 2 and not (order and base in self.params)
            if not ok and base in self.unsure:
                return
            if not ok:
                hint = suggest(name, sorted(base_known))
                self.error(f"`{ins.written}` lists `{node.name}`, which is not defined in the "
                           f"model{hint}", node.span)
                return
            if name not in out:
                out.append(name)

        def plotted(node: ast.Name) -> bool:
            name = self.rename(node.name)
            return name == TIME.name or name in out

        for item in ins.items:
            if isinstance(item, ast.Name):
                add(item)
                if plotted(item):
                    self.plots.append(Plot((self.rename(item.name),), (), "show",
                                           self.text(item), item.span))
            elif isinstance(item, ast.Call) and all(isinstance(a, ast.Name) for a in item.args):
                add(item.func)
                for a in item.args:
                    add(a)  # type: ignore[arg-type]
                args: list[ast.Name] = list(item.args)  # type: ignore[arg-type]
                if plotted(item.func) and all(plotted(a) for a in args):
                    if len(args) > 2:
                        self.error(f"`{ins.written}` plots `y(x)` or `z(x, y)`, got "
                                   f"{len(args)} arguments in `{self.text(item)}`", item.span)
                    self.plots.append(Plot(
                        (self.rename(item.func.name),),
                        tuple(n for n in (self.rename(a.name) for a in args) if n != TIME.name),
                        "show", self.text(item), item.span))
            else:
                self.error(f"`{ins.written}` lists names or `y(x)` pairs, got "
                           f"`{self.text(item)}`", item.span)
        return out

    # ------------------------------------------------------------ assemble
    def build(self) -> tuple[Model | None, list[Diagnostic]]:
        self.collect()
        self.bodies()
        self.instruction_lists()
        self.partials()   # after every formula is recorded: bodies and instructions use them
        self.broken = {n for n, v in self.variables.items() if v.expr is None}
        self.classify()
        self.check_derivatives()
        self.check_velocities()
        self.check_quaternion_names()
        self.check_elements()
        def_order = self.definition_order()
        body_order = self.body_order()
        self.param_exprs = {n: v.expr for n, v in self.variables.items() if v.value is not None}
        uses_g = any(u.base == "g" for u in self.uses)
        if uses_g and "g" not in self.variables:
            self.param_exprs["g"] = rational(Fraction(str(G_VALUE)))
        self.check_definition_values(def_order)
        for body, (rec, _c, _cc, inertia) in self.body_data.items():
            if inertia is None:
                continue
            n_errors = len(self.diags)
            for f in _POSITIONAL:
                self.check_constant(getattr(inertia, f), f"{_LABEL[f]} of body `{body}`",
                                    rec.name.span)
            if len(self.diags) == n_errors:
                self.check_inertia(body, rec, inertia)
        if self.gravity is not None:
            ins = self.instructions["GRAVITY"]
            for g in self.gravity:
                self.check_constant(g, f"`{ins.written}`", ins.name_span, allow_time=True)
        virtual_constraints = virtual.check_items(self, self.virtual_items)
        events = model_events.check_items(self, self.event_items)
        controls, programmed_constraints = programmed.check(self, self.control_names,
                                                            self.programmed_items)
        initial, t_init = self.initial()
        self.guess, self.limits = inverse.read(self)
        t0, t1, t_span = self.time_span()
        if t_init is not None:
            if t0 is not None and t0 != t_init:
                self.warn(f"the start time is given both by the time range ({t0:g}) and by the "
                          f"initial conditions ({t_init:g}); using {t_init:g}",
                          self.instructions["INITIAL"].name_span)
            t0 = t_init
        t_start = 0.0 if t0 is None else t0
        t_end = 10.0 if t1 is None else t1
        if t_end <= t_start:
            self.error(f"the time range must increase: start {t_start:g}, end {t_end:g}",
                       t_span)
        outputs = self.outputs()
        self.check_rolling()
        coincidences = coincide.check_items(self, self.coincide_items, self.instructions[
            "COINCIDE"].written if self.coincide_items else "")
        surfaces = (scene.check_items(self, self.scene_items,
                                      self.instructions["SCENE"].written)
                    if self.scene_items else ())
        shapes = (display.check_items(self, self.shape_items, self.instructions["SHAPES"].written,
                                      set(self.body_data))
                  if self.shape_items else ())
        free_states = (free.check(self, self.free_names, self.instructions["FREE"].written,
                                  {*self.coordinates, *(f"{q}'t" for q in self.coordinates),
                                   *(n.name for n in self.pseudo)})
                       if self.free_names else ())
        if _has_errors(self.diags) or self.parsed.has_errors:
            return None, self.diags
        parameters = []
        if uses_g and "g" not in self.variables:
            parameters.append(Parameter("g", G_VALUE))
        for n, v in self.variables.items():
            if v.value is not None:
                parameters.append(Parameter(n, v.value, v.stmt.unit, v.stmt.span))
        definitions = [Definition(n, self.variables[n].expr, self.variables[n].stmt.unit,
                                  self.variables[n].stmt.span) for n in def_order]
        bodies = []
        for name in body_order:
            rec, chain, central, inertia = self.body_data[name]
            assert inertia is not None
            bodies.append(Body(name, rec.base.name if rec.base else None, chain, central,
                               inertia, rec.span))
        self.check_angular_velocity(bodies)
        coordinates = set(self.coordinates)
        for target, (stmt, _expr) in self.velocities.items():
            if target not in coordinates:  # `g't = …` (g has a value): found by the fuzzer
                self.error(f"`{target}'t = …`: `{target}` is not a coordinate (it has a value "
                           f"or is not used as a position), so it has no velocity to give; "
                           "a velocity formula is written for a coordinate", stmt.span)
        if _has_errors(self.diags):
            return None, self.diags
        elements = [Element(label, self.classes[label[0]], coord, expr, node.span)
                    for (label, coord), (_s, node, expr) in self.elements.items()]
        velocity_definitions = [VelocityDefinition(target, expr, stmt.span)
                                for target, (stmt, expr) in sorted(
                                    self.velocities.items(), key=lambda kv: kv[1][0].start)]
        model = Model(
            name=self.name, source=self.parsed.source, parameters=tuple(parameters),
            definitions=tuple(definitions), bodies=tuple(bodies), elements=tuple(elements),
            coordinates=tuple(self.coordinates), pseudo_velocities=tuple(self.pseudo_names),
            velocity_definitions=tuple(velocity_definitions), gravity=self.gravity,
            initial=initial, initial_formulas=self.initial_formulas,
            span_formulas=self.span_formulas,
            t_start=t_start, t_end=t_end, outputs=tuple(outputs),
            plots=tuple(self.plots),
            quaternions=() if self.quaternion is None else (self.quaternion,),
            calculation=self.calculation, calculation_span=self.calculation_span,
            filename=self.filename, title=self.title(),
            units=self.unit_names,
            angular_velocity={b: mode for b, (mode, _s) in self.angular_velocity.items()},
            constraints=tuple(Constraint(n.name, n.span) for n in self.constraint_names),
            rolling=tuple(self.rolling), coincidences=coincidences,
            virtual_constraints=virtual_constraints, events=events,
            variations=tuple(getattr(self, "variations", ())),
            sampling=getattr(self, "sampling", None),
            guess=self.guess, limits=self.limits, scene=surfaces, controls=controls,
            programmed=programmed_constraints, shapes=shapes, free=free_states,
            inputs=model_inputs.check(self, self.input_names))
        slips.unused_parameters(self, {*outputs, *(n for plot in self.plots
                                                   for n in (*plot.curves, *plot.against))})
        slips.case_slips(self)
        slips.degrees_for_radians(self, initial, {
            str(tr.args[0]) for b in bodies for tr in (*b.transforms, *b.central)
            if tr.kind == "R" and str(tr.args[0]) in coordinates}, self.initial_spans)
        return model, self.diags


#: Spellings of the rolling shapes and surfaces of `КАЧЕНИЕ` (lower case).
_ROLLING_SHAPES = {"шар": "ball", "куля": "ball", "ball": "ball", "sphere": "ball",
                   "диск": "disc", "колесо": "disc", "disc": "disc", "disk": "disc",
                   "wheel": "disc"}
_ROLLING_SURFACES = {"плоскость": "plane", "площина": "plane", "plane": "plane",
                     "сфера_внутри": "sphere_inside", "сфера_всередині": "sphere_inside",
                     "sphere_inside": "sphere_inside",
                     "сфера_снаружи": "sphere_outside", "сфера_зовні": "sphere_outside",
                     "sphere_outside": "sphere_outside",
                     "поверхность": "surface", "поверхня": "surface", "surface": "surface"}
#: A sphere named without its side: an error that asks for it.
_SPHERE_WITHOUT_SIDE = {"сфера", "sphere"}


# ---------------------------------------------------------------- utilities
def _has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diags)


def _is_literal(node: ast.Expr) -> bool:
    """A plain, optionally signed numeric literal (`90`, `-22.5`): degrees in rotations."""
    while isinstance(node, ast.Unary):
        node = node.operand
    return isinstance(node, ast.Number)


def _to_float(expr: Expr) -> float | None:
    try:
        value = to_float(expr)   # correctly rounded: 0.9534570696121849 stays …849
    except (RuntimeError, TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _out_of_range(expr: Expr) -> Expr | None:
    """An exact number in ``expr`` that no double can hold (``10^399``), or ``None``."""
    for a in expr.atoms(se.Number):
        if isinstance(a, se.Integer | se.Rational) and a != 0 and _to_float(a) in (None, 0.0):
            return a
    return None


def _short_text(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _substitute(expr: Expr, subs: dict) -> Expr | None:
    """``expr.xreplace(subs)``, or ``None`` where that is undefined (``floor(1/0)``)."""
    try:
        return expr.xreplace(subs)
    except (RuntimeError, ValueError, ZeroDivisionError):
        return None


def _not_a_float(expr: Expr) -> str:
    """Why ``expr`` (free of symbols) has no float value, for messages."""
    if isinstance(expr, se.Integer | se.Rational):
        return "is too large for a floating-point number (beyond ±1.8e308)"
    return f"is not a finite real number (it evaluates to `{short_form(expr)}`)"


def _cycles(graph: dict[str, list[str]], *, key: Callable[[str], int]) -> list[list[str]]:
    """Elementary cycles, one per strongly connected component, each from its first node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph, key=key):
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in graph.get(node, ()):
                    components.append(comp)
    cycles = []
    for comp in components:
        members = set(comp)
        start = min(comp, key=key)
        path = [start]
        seen = {start}
        node = start
        while True:
            nxt = [n for n in graph[node] if n in members]
            if start in nxt:
                break
            step = next((n for n in nxt if n not in seen), None)
            if step is None:
                break
            path.append(step)
            seen.add(step)
            node = step
        cycles.append(path)
    return sorted(cycles, key=lambda c: key(c[0]))


def _topological(graph: dict[str, list[str]], *, key: Callable[[str], int]) -> list[str]:
    """Dependencies first; among the ready nodes, the earliest in the source first."""
    deps = {n: {d for d in graph[n] if d in graph and d != n} for n in graph}
    users: dict[str, list[str]] = {n: [] for n in graph}
    for n, ds in deps.items():
        for d in ds:
            users[d].append(n)
    ready = [(key(n), n) for n, ds in deps.items() if not ds]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _k, n = heapq.heappop(ready)
        out.append(n)
        for u in users[n]:
            deps[u].discard(n)
            if not deps[u]:
                heapq.heappush(ready, (key(u), u))
    # members of cycles (already reported) keep source order at the end
    rest = sorted((n for n in graph if n not in set(out)), key=key)
    return out + rest


def build_model(parsed: ParsedSource, *, filename: str = "<string>",
                name: str = "model") -> tuple[Model | None, list[Diagnostic]]:
    """Give parsed statements their meaning and validate them.

    Parameters
    ----------
    parsed : ParsedSource
        The output of :func:`kidym.lang.parser.parse_statements`.
    filename, name : str
        Stored on the model.

    Returns
    -------
    model : Model or None
        ``None`` when any error was found (or the text had syntax errors, in which
        case only the checks local to each statement are run).
    diagnostics : list of Diagnostic
        Every model error and warning found.
    """
    return _Builder(parsed, filename, name).build()
