"""The workspace of the model builder and the tools every pass uses.

:class:`Builder` holds the parsed statements, the diagnostics and the tables the
passes fill (each declared with the pass that fills it); its methods are the tools
shared by the passes and by the instruction readers of :mod:`kidym.model`
(``virtual``, ``events``, ``coincide``, ``scene``, ``programmed``, ``inverse``,
``variations``, ``slips``): locating an error, recording a formula and the names it
uses, expanding definitions, evaluating a constant. Also here: the tables of the
language's words the passes share and small helpers.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import symengine as se

from kidym.errors import Diagnostic, Span
from kidym.kinematics import names as generated
from kidym.lang import ast
from kidym.lang.formulas import (
    CONSTANTS,
    Converter,
    FormulaError,
    short_form,
)
from kidym.model.model import (
    TIME,
    Inertia,
    Plot,
    QuaternionInstruction,
    Rolling,
    SceneSurface,
    Transform,
)
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
ANGULAR_VELOCITY_ITEM = re.compile(r"(?:(?P<body>[^\W\d]\w*)\s*\(\s*(?P<mode>\w+)\s*\)"
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
POSITIONAL = ("mass", "jx", "jy", "jz", "jxy", "jyz", "jxz")
INERTIA_LABEL = {"mass": "mass", "jx": "moment of inertia `Jx`", "jy": "moment of inertia `Jy`",
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
class Use:
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
class Var:
    stmt: ast.Variable
    expr: Expr | None
    value: float | None


class Builder:
    """The workspace of one build: the parsed statements, the tables each pass fills
    for the next, the diagnostics, and the tools every pass uses (recording a formula
    and the names it uses, evaluating a constant, locating an error).

    The passes are modules of functions over it (:mod:`kidym.model.passes`), run in
    order by :func:`kidym.model.build.build_model`; the tables below are filled by the
    pass named beside them and only read after it.
    """

    # ------------------------------------------------------------ the tables
    # kidym.model.passes.statements (collect, coding, partials)
    variables: dict[str, Var]
    velocities: dict[str, tuple[ast.Variable, Expr | None]]
    elements: dict[tuple[str, str], tuple[ast.ElementRecord, ast.Name, Expr | None]]
    body_records: list[ast.BodyRecord]
    instructions: dict[str, ast.Instruction]
    repeated: list[ast.Instruction]
    unit_names: dict[str, str]
    unsure: set[str]
    classes: dict[str, str]
    nonlinear: str | None
    first_use: dict[str, Use]
    # kidym.model.passes.bodies (bodies)
    body_data: dict[str, tuple[ast.BodyRecord, tuple[Transform, ...], tuple[Transform, ...],
                               Inertia | None]]
    inertia_spans: dict[str, dict[str, Span]]
    # kidym.model.passes.instructions (instruction_lists; initial, time_span, outputs)
    listed_coordinates: list[ast.Name] | None
    pseudo: list[ast.Name]
    constraint_names: list[ast.Name]
    rolling: list[Rolling]
    coincide_items: list
    virtual_items: list
    control_names: list[ast.Name]
    programmed_items: list
    event_items: list
    scene_items: list[SceneSurface]
    input_names: list[ast.Name]     # kidym.model.inputs.read
    shape_items: list               # kidym.model.display.read_items
    free_names: list[ast.Name]      # kidym.model.free.read
    gravity: tuple[Expr, Expr, Expr] | None
    calculation: str | None
    calculation_span: Span | None
    quaternion: QuaternionInstruction | None
    quaternion_names: dict[str, Span]
    angular_velocity: dict[str, tuple[str, Span | None]]
    titles: dict[str, str]
    initial_formulas: dict[str, se.Basic]
    initial_spans: dict[str, Span]
    span_formulas: dict[str, se.Basic]
    plots: list[Plot]
    variations: list          # kidym.model.variations.read
    sampling: object          # kidym.model.variations.read
    # kidym.model.passes.classify (classify)
    params: set[str]
    defs: set[str]
    def_uses: dict[str, list[Use]]
    known: set[str]
    structural: set[str]
    pseudo_names: list[str]
    coordinates: list[str]
    # kidym.model.passes.checks (definition_order, check_definition_values)
    cyclic: set[str]
    no_value: set[str]
    # kidym.model.build (build)
    broken: set[str]
    param_exprs: dict[str, Expr]
    guess: dict
    limits: dict

    def __init__(self, parsed: ParsedSource, filename: str, name: str) -> None:
        self.parsed = parsed
        self.filename = filename
        self.name = name
        self.diags: list[Diagnostic] = []
        self.uses: list[Use] = []
        self._levels: dict[str, int] = {}   # time_level of definitions, memoised
        self.aliases: dict[str, str] = {}
        self.owner_of_generated: dict[str, str] = {}
        self.convert = Converter(self.rename)
        self.missing: set[str] = set()

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
            self.uses.append(Use(canonical, base, order, n.span, n.start, kind, where, owner))

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
            return expr   # a value: checked where it is evaluated (`not_a_float`)
        huge = out_of_range(expr)
        if huge is not None:
            self.error(f"{where}: the number `{short_form(huge, 24)}` in "
                       f"`{short_text(self.text(node))}` is beyond the range of a double "
                       "(±1.8e308), in which the engines compute; rescale the formula",
                       node.span)
            return None
        if numbers_only and literal_float(expr) is None:
            self.error(f"{where}: `{short_text(self.text(node))}` {not_a_float(expr)}",
                       node.span)
            return None
        return expr

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
            expr = substitute(expr, subs)
            if expr is None:
                return None
        return expr

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
        expr = substitute(expr, subs)
        if expr is None:
            self.error(f"{where} is undefined with the parameter values of the file "
                       f"(`{self.text(node)}`: a division by zero?)", node.span)
            return None
        if expr.free_symbols:
            bad = ", ".join(f"`{s.name}`" for s in sorted(expr.free_symbols, key=lambda s: s.name))
            self.error(f"{where} must be a number, but `{self.text(node)}` depends on {bad}",
                       node.span)
            return None
        v = literal_float(expr)
        if v is None:
            self.error(f"{where} {not_a_float(expr)}", node.span)
        return v

    def name_list(self, ins: ast.Instruction, what: str) -> list[ast.Name]:
        """The plain names an instruction lists, canonical (located errors for anything
        else and for a name listed twice)."""
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
            out.append(ast.Name(name=canonical, span=item.span, start=item.start,
                                end=item.end))
        return out

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
        number = substitute(expr, {se.Symbol(n): v for n, v in self.param_exprs.items()}) \
            if expr.free_symbols else expr
        v = None if number is None or number.free_symbols else literal_float(number)
        if v is None:
            why = "is undefined (a division by zero?)" if number is None else \
                not_a_float(number)
            self.error(f"{where} depends on parameters only, and with their values in the "
                       f"file it {why}; check the formula or the values" if expr.free_symbols
                       else f"{where} {why}; check the formula", span)
            return False
        return True

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




#: Spellings of the rolling shapes and surfaces of `КАЧЕНИЕ` (lower case).
ROLLING_SHAPES = {"шар": "ball", "куля": "ball", "ball": "ball", "sphere": "ball",
                   "диск": "disc", "колесо": "disc", "disc": "disc", "disk": "disc",
                   "wheel": "disc"}
ROLLING_SURFACES = {"плоскость": "plane", "площина": "plane", "plane": "plane",
                     "сфера_внутри": "sphere_inside", "сфера_всередині": "sphere_inside",
                     "sphere_inside": "sphere_inside",
                     "сфера_снаружи": "sphere_outside", "сфера_зовні": "sphere_outside",
                     "sphere_outside": "sphere_outside",
                     "поверхность": "surface", "поверхня": "surface", "surface": "surface"}
#: A sphere named without its side: an error that asks for it.
SPHERE_WITHOUT_SIDE = {"сфера", "sphere"}


# ---------------------------------------------------------------- utilities
def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diags)


def is_literal(node: ast.Expr) -> bool:
    """A plain, optionally signed numeric literal (`90`, `-22.5`): degrees in rotations."""
    while isinstance(node, ast.Unary):
        node = node.operand
    return isinstance(node, ast.Number)


def literal_float(expr: Expr) -> float | None:
    try:
        value = to_float(expr)   # correctly rounded: 0.9534570696121849 stays …849
    except (RuntimeError, TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def out_of_range(expr: Expr) -> Expr | None:
    """An exact number in ``expr`` that no double can hold (``10^399``), or ``None``."""
    for a in expr.atoms(se.Number):
        if isinstance(a, se.Integer | se.Rational) and a != 0 and literal_float(a) in (None, 0.0):
            return a
    return None


def short_text(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def substitute(expr: Expr, subs: dict) -> Expr | None:
    """``expr.xreplace(subs)``, or ``None`` where that is undefined (``floor(1/0)``)."""
    try:
        return expr.xreplace(subs)
    except (RuntimeError, ValueError, ZeroDivisionError):
        return None


def not_a_float(expr: Expr) -> str:
    """Why ``expr`` (free of symbols) has no float value, for messages."""
    if isinstance(expr, se.Integer | se.Rational):
        return "is too large for a floating-point number (beyond ±1.8e308)"
    return f"is not a finite real number (it evaluates to `{short_form(expr)}`)"


def cycles(graph: dict[str, list[str]], *, key: Callable[[str], int]) -> list[list[str]]:
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


def topological(graph: dict[str, list[str]], *, key: Callable[[str], int]) -> list[str]:
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
