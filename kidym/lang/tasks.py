"""Tasks of a file, ``ИЗЪЯТЬ`` and ``РАЗМНОЖИТЬ``: statements as each task sees them.

A file holds one or more *tasks*, each ending with ``КОНЕЦ;`` (the last one may
omit it). Task *k* sees every statement of tasks 1…k: a statement of a later task
replaces the one of an earlier task that defines the same thing (a variable, an
element ``E.c``, a body, an instruction), silently, as in KiDyM; inside one task
a second definition wins with a warning (given by the model builder).
``ИЗЪЯТЬ := x, Jm.x, ПОКАЗАТЬ, Body;`` removes what was defined before it.

``РАЗМНОЖИТЬ : i(1, 5), k(2, 6, 2);`` (one per file) expands the ``$`` templates:
every statement using a name like ``x$i`` or ``m$(2*i+1)`` is repeated once per
index value, with ``$i`` replaced by the value; in an instruction list only the
templated items are repeated. Indices advance together (the first copy has
``i = 1, k = 2``, the second ``i = 2, k = 4`` …); their value lists must have the
same length.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from fractions import Fraction

from kidym.errors import Diagnostic
from kidym.lang import ast, keywords

_TEMPLATE = re.compile(r"\$(\w+|\([\w \t.+\-*/^%]*\))")

#: Most copies one ``РАЗМНОЖИТЬ`` makes: every copy is derived symbolically, and a model
#: of thousands of repeated bodies is beyond that anyway (a larger count would only
#: exhaust memory before any message).
MAX_COPIES = 300
#: Largest magnitude of a value inside a template index formula ``$(…)``.
MAX_INDEX = 10**9

#: Instructions that may appear several times in one task (each is kept).
REPEATABLE = frozenset({"COMPARE", "COMBINE", "ANIMATION", "BACKGROUND"})


def _map_names(node: object, f: Callable[[ast.Name], str]) -> object:
    """``node`` with every :class:`ast.Name` renamed by ``f`` (shared when unchanged)."""
    if isinstance(node, ast.Name):
        new = f(node)
        return node if new == node.name else dataclasses.replace(node, name=new)
    if isinstance(node, tuple):
        items = tuple(_map_names(x, f) for x in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if isinstance(node, ast.Node):
        changes = {}
        for fld in dataclasses.fields(node):
            value = getattr(node, fld.name)
            if isinstance(value, ast.Node | tuple):
                mapped = _map_names(value, f)
                if mapped is not value:
                    changes[fld.name] = mapped
        return dataclasses.replace(node, **changes) if changes else node
    return node


def _names(node: object) -> list[ast.Name]:
    """Every :class:`ast.Name` in ``node`` (iteratively: formulas may nest deeply)."""
    out: list[ast.Name] = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, ast.Name):
            out.append(x)
        elif isinstance(x, tuple):
            stack.extend(reversed(x))
        elif isinstance(x, ast.Node):
            stack.extend(reversed([getattr(x, f.name) for f in dataclasses.fields(x)]))
    return out


def _count_text(n: int) -> str:
    return str(n) if n < 10**12 else f"about 10^{len(str(n)) - 1}"


class _Multiplier:
    def __init__(self, ins: ast.Instruction, diags: list[Diagnostic]) -> None:
        self.diags = diags
        self.indices: dict[str, list[int]] = {}
        for item in ins.items:
            ok = (isinstance(item, ast.Call) and 2 <= len(item.args) <= 3
                  and all(isinstance(a, ast.Number) and a.value.denominator == 1
                          for a in item.args))
            if not ok:
                diags.append(Diagnostic(
                    f"`{ins.written}` lists indices `i(first, last[, step])` with whole numbers, "
                    f"e.g. `{ins.written} : i(1, 5), k(2, 6, 2);`", item.span))
                continue
            assert isinstance(item, ast.Call)
            first, last, *step = (int(a.value) for a in item.args)  # type: ignore[union-attr]
            by = step[0] if step else 1
            span = range(first, last + (1 if by > 0 else -1), by) if by else range(0)
            count = max(0, (span.stop - span.start + span.step - (1 if by > 0 else -1))
                        // span.step) if by else 0   # len(span) overflows beyond 2^63
            if count > MAX_COPIES:
                diags.append(Diagnostic(
                    f"index `{item.func.name}` of `{ins.written}` takes {_count_text(count)} "
                    f"values; at most {MAX_COPIES} copies can be made (check first, last and step)",
                    item.span))
                continue
            values = list(span)
            if not values:
                diags.append(Diagnostic(f"index `{item.func.name}` of `{ins.written}` takes no "
                                        "values (check first, last and step)", item.span))
                continue
            self.indices[item.func.name] = values
        lengths = {len(v) for v in self.indices.values()}
        self.count = min(lengths) if lengths else 0
        if len(lengths) > 1:
            diags.append(Diagnostic(
                f"the indices of `{ins.written}` advance together but take different numbers "
                f"of values ({', '.join(f'{k}: {len(v)}' for k, v in self.indices.items())}); "
                f"only {self.count} copies are made", ins.name_span, "warning"))

    def templated(self, node: object) -> bool:
        return any(self._uses_index(n.name) for n in _names(node))

    def _uses_index(self, name: str) -> bool:
        for m in _TEMPLATE.finditer(name):
            g = m.group(1)
            if g.startswith("(") or g in self.indices:
                return True
        return False

    def copies(self, node: object) -> list[object]:
        out = []
        bad: list[Diagnostic] = []
        for k in range(self.count):
            values = {name: vals[k] for name, vals in self.indices.items()}
            out.append(_map_names(node, lambda n, v=values: self._fill(n, v, bad)))
        seen = set()
        for d in bad:
            if (d.message, d.span) not in seen:
                seen.add((d.message, d.span))
                self.diags.append(d)
        return out

    def _fill(self, node: ast.Name, values: dict[str, int], bad: list[Diagnostic]) -> str:
        def one(m: re.Match[str]) -> str:
            g = m.group(1)
            if not g.startswith("("):
                return str(values[g]) if g in values else m.group(0)
            try:
                value = _IndexFormula(g, values).value()
            except ValueError as e:
                bad.append(Diagnostic(f"template `{node.name}`: `${g}` must be a whole-number "
                                      f"formula of the indices {', '.join(values)} ({e})",
                                      node.span))
                return m.group(0)
            return str(value)
        return _TEMPLATE.sub(one, node.name)


class _IndexFormula:
    """The whole-number value of a template index ``(…)``: numbers, the indices and
    ``+ - * / % ^`` with parentheses, every intermediate value bounded by
    :data:`MAX_INDEX` (a power such as ``9^9^10`` is refused before it is computed)."""

    _TOKEN = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+|\w+|[-+*/%^()])")

    def __init__(self, text: str, values: dict[str, int]) -> None:
        self.tokens: list[str] = []
        pos, text = 0, text.strip()
        while pos < len(text):
            m = self._TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"unexpected `{text[pos:].strip()[:10]}`")
            self.tokens.append(m.group(1))
            pos = m.end()
        self.values = values
        self.pos = 0

    def value(self) -> int:
        v = self._sum()
        if self.pos != len(self.tokens):
            raise ValueError(f"unexpected `{self.tokens[self.pos]}`")
        if v.denominator != 1:
            raise ValueError(f"it is {v}")
        return int(v)

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        tok = self._peek()
        if tok is None:
            raise ValueError("it ends too early")
        self.pos += 1
        return tok

    @staticmethod
    def _bounded(v: Fraction) -> Fraction:
        if abs(v) > MAX_INDEX or (v and abs(v) < Fraction(1, MAX_INDEX)):
            raise ValueError(f"a value exceeds the bound {MAX_INDEX:.0e}")
        return v

    def _sum(self) -> Fraction:
        v = self._product()
        while self._peek() in ("+", "-"):
            op, w = self._take(), self._product()
            v = self._bounded(v + w if op == "+" else v - w)
        return v

    def _product(self) -> Fraction:
        v = self._unary()
        while self._peek() in ("*", "/", "%"):
            op, w = self._take(), self._unary()
            if op != "*" and w == 0:
                raise ValueError("division by zero")
            v = self._bounded(v * w if op == "*" else v / w if op == "/" else v % w)
        return v

    def _unary(self) -> Fraction:
        if self._peek() in ("+", "-"):
            sign = -1 if self._take() == "-" else 1
            return sign * self._unary()
        return self._power()

    def _power(self) -> Fraction:
        base = self._atom()
        if self._peek() != "^":
            return base
        self._take()
        exponent = self._unary()  # right-associative: 9^9^10 is 9^(9^10)
        if exponent.denominator != 1:
            raise ValueError("a power with a fractional exponent")
        if base == 0 and exponent < 0:
            raise ValueError("division by zero")
        if abs(exponent) > 64 and abs(base) not in (0, 1):
            raise ValueError(f"a value exceeds the bound {MAX_INDEX:.0e}")
        return self._bounded(base ** int(exponent))

    def _atom(self) -> Fraction:
        tok = self._take()
        if tok == "(":
            v = self._sum()
            if self._take() != ")":
                raise ValueError("a `(` without its `)`")
            return v
        if tok[0].isdigit() or tok[0] == ".":
            return self._bounded(Fraction(tok))
        if tok in self.values:
            return Fraction(self.values[tok])
        raise ValueError(f"`{tok}` is not an index" if tok != ")" else "unexpected `)`")


def _expand(statements: list[ast.Statement], mult: _Multiplier) -> list[ast.Statement]:
    out: list[ast.Statement] = []
    for stmt in statements:
        try:
            if isinstance(stmt, ast.Instruction):
                if any(mult.templated(i) for i in stmt.items):
                    items: list[ast.Item] = []
                    for item in stmt.items:
                        items.extend(mult.copies(item) if mult.templated(item)  # type: ignore[arg-type]
                                     else [item])
                    stmt = dataclasses.replace(stmt, items=tuple(items))
                out.append(stmt)
            elif mult.templated(stmt):
                out.extend(mult.copies(stmt))  # type: ignore[arg-type]
            else:
                out.append(stmt)
        except RecursionError:
            mult.diags.append(Diagnostic("statement is nested too deeply to expand its "
                                         "templates", stmt.span))
            out.append(stmt)
    return out


def _identity(stmt: ast.Statement) -> tuple[str, ...]:
    if isinstance(stmt, ast.Variable):
        return ("var", stmt.name.name)
    if isinstance(stmt, ast.ElementRecord):
        return ("elem", stmt.label.name, *(c.name for c in stmt.coordinates))
    if isinstance(stmt, ast.BodyRecord):
        return ("body", stmt.name.name)
    assert isinstance(stmt, ast.Instruction)
    if stmt.key in REPEATABLE:
        return ("ins", stmt.key, str(stmt.start))
    return ("ins", stmt.key)


def _split_elements(stmt: ast.Statement) -> list[ast.Statement]:
    if isinstance(stmt, ast.ElementRecord) and len(stmt.coordinates) > 1:
        return [dataclasses.replace(stmt, coordinates=(c,)) for c in stmt.coordinates]
    return [stmt]


def _withdrawn(entry: str) -> list[tuple[str, ...]] | None:
    """Identities an ``ИЗЪЯТЬ`` entry names (prefixes), or ``None`` if it is malformed."""
    parts = [p.strip() for p in entry.split(".")]
    if len(parts) == 2 and all(parts):
        return [("elem", parts[0], parts[1])]
    if len(parts) != 1 or not parts[0]:
        return None
    found: list[tuple[str, ...]] = [("var", entry), ("body", entry)]
    key = keywords.lookup(entry)
    if key is not None:
        found.append(("ins", key))
    return found


def task_statements(tasks: list[list[ast.Statement]],
                    diags: list[Diagnostic]) -> list[list[ast.Statement]]:
    """The statements each task sees (see the module docstring).

    Parameters
    ----------
    tasks : list of list of Statement
        The statements of each task as written (``ParsedSource.tasks``).
    diags : list of Diagnostic
        Receives the problems of ``РАЗМНОЖИТЬ`` and ``ИЗЪЯТЬ``.

    Returns
    -------
    list of list of Statement
        One statement list per task, in source order.
    """
    multiply = [s for t in tasks for s in t
                if isinstance(s, ast.Instruction) and s.key == "MULTIPLY"]
    for extra in multiply[1:]:
        diags.append(Diagnostic(f"only one `{extra.written}` is allowed per file (the first is "
                                f"at line {multiply[0].span.line}); merge the index lists",
                                extra.name_span))
    if multiply and not multiply[0].bare:
        mult = _Multiplier(multiply[0], diags)
        tasks = [_expand(t, mult) for t in tasks]
    _unexpanded(tasks, diags)
    alive: list[tuple[tuple[str, ...], ast.Statement, int]] = []
    out: list[list[ast.Statement]] = []
    for k, task in enumerate(tasks):
        for stmt in task:
            if isinstance(stmt, ast.Instruction) and stmt.key == "MULTIPLY":
                continue
            if isinstance(stmt, ast.Instruction) and stmt.key == "WITHDRAW":
                alive = _withdraw(stmt, alive, diags)
                continue
            for part in _split_elements(stmt):
                ident = _identity(part)
                alive = [a for a in alive if not (a[0] == ident and a[2] < k)]
                alive.append((ident, part, k))
        out.append([a[1] for a in alive])
    return out


def _unexpanded(tasks: list[list[ast.Statement]], diags: list[Diagnostic]) -> None:
    """An error for every name still holding a ``$(…)`` template after expansion.

    A name is letters, digits, ``_ ' @`` and ``$``; ``$(formula)`` is a template part
    that only ``РАЗМНОЖИТЬ`` replaces, so one left over is a mistake, not a name.
    """
    seen: set[tuple[str, object]] = set()
    located = {d.span for d in diags if d.severity == "error"}
    for task in tasks:
        for stmt in task:
            for n in _names(stmt):
                if "$(" in n.name and (n.name, n.span) not in seen and n.span not in located:
                    seen.add((n.name, n.span))
                    diags.append(Diagnostic(
                        f"`{n.name}`: a `$(…)` template in a name is replaced only by "
                        "`РАЗМНОЖИТЬ`/`MULTIPLY` (with an index the formula uses); without "
                        "one, write the name with letters, digits, `_`, `'`, `@` or `$`",
                        n.span))


def _withdraw(stmt: ast.Instruction, alive: list, diags: list[Diagnostic]) -> list:
    if stmt.bare or not stmt.raw:
        diags.append(Diagnostic(f"`{stmt.written}` needs a list of what to remove: variables, "
                                "elements `E.c`, bodies or instructions", stmt.name_span))
        return alive
    if keywords.normalize(stmt.written) == "ИЗЬЯТЬ":
        diags.append(Diagnostic("`ИЗЬЯТЬ` is a misspelling of `ИЗЪЯТЬ` (accepted)",
                                stmt.name_span, "warning"))
    for entry in (e.strip() for e in stmt.raw.split(",")):
        targets = _withdrawn(entry)
        if targets is None:
            diags.append(Diagnostic(f"`{stmt.written}`: cannot read `{entry}`; list names, "
                                    "elements `E.c` or instruction names", stmt.raw_span))
            continue
        kept = [a for a in alive if not any(a[0][:len(t)] == t for t in targets)]
        if len(kept) == len(alive):
            diags.append(Diagnostic(f"`{stmt.written}`: nothing called `{entry}` is defined "
                                    "before this point; nothing removed", stmt.raw_span,
                                    "warning"))
        alive = kept
    return alive
