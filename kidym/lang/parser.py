"""Text → statements (syntax), and the public ``parse``/``load`` entry points.

Comments are blanked, the text is split into statements at `;`, and each statement
is parsed on its own (LALR, ``grammar.lark``), so that every bad statement is
reported and the others still parse. The statement's shape picks the start rule:

* ``WORDS :=`` or ``WORDS :`` — an instruction (``ОБОБЩЕННЫЕ КООРДИНАТЫ := …``);
* ``WORDS`` alone — an instruction without a list (``КОНЕЦ;``);
* anything containing ``|`` — a rigid-body record;
* otherwise ``target = formula [, unit]`` — a variable or element record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from lark import Lark, Token, v_args
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.visitors import Transformer_NonRecursive

from kidym.errors import Diagnostic, ModelError, ParseError, source_name
from kidym.lang import ast, keywords
from kidym.lang.source import Chunk, LineIndex, split_statements, strip_comments
from kidym.model.model import Model

_ID = r"[^\W\d](?:[\w'@]|\$(?:\w+|\([\w \t.+\-*/^%]*\))?)*"
_WORDS = rf"{_ID}(?:\s+{_ID})*"
#: `: =` is `:=` split by typesetting (text pasted from the papers): read as `:=`
_INSTRUCTION = re.compile(rf"\s*(?P<name>{_WORDS})\s*(?P<sep>:=|:[ \t]+=(?!=)|:)")
_BARE = re.compile(rf"\s*(?P<name>{_WORDS})\s*\Z")
_ASSIGN = re.compile(rf"\s*{_ID}(?:\s*\.\s*{_ID})*\s*=(?!=)")
_EXPONENT = re.compile(r"[eE]([+-]?\d+)$")

#: Largest decimal exponent of a numeric literal (beyond double range anyway).
MAX_EXPONENT = 400
#: Most digits of a numeric literal (a double holds 17 significant digits; Python
#: refuses to read integers of more than 4300).
MAX_DIGITS = 1000

_TERMINALS = {
    "NAME": "a name", "NUMBER": "a number", "RELOP": "a comparison (`<`, `>`, `==` …)",
    "LPAR": "`(`", "RPAR": "`)`", "COMMA": "`,`", "EQUAL": "`=`", "DOT": "`.`",
    "VBAR": "`|`", "TILDE": "`~`", "QMARK": "`?`", "BANG": "`!`", "PLUS": "`+`",
    "MINUS": "`-`", "STAR": "`*`", "SLASH": "`/`", "PERCENT": "`%`", "CARET": "`^`",
    "STRING": "a quoted string", "$END": "the end of the statement",
}
_TRANSFORM_NAMES = frozenset({"Rx", "Ry", "Rz", "Sx", "Sy", "Sz", "Q"})
_FORMULA_START = {"NAME", "NUMBER", "LPAR", "MINUS", "PLUS"}
_BINARY = {"PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "CARET"}
_ORDER = list(_TERMINALS)

_lark: Lark | None = None


def _grammar() -> Lark:
    global _lark
    if _lark is None:
        _lark = _open_grammar()
    return _lark


def _open_grammar() -> Lark:
    """The LALR parser of ``grammar.lark``. Building its tables takes 0.1-0.2 s, a third
    of ``kidym check``; they are kept in the cache directory (:func:`kidym.cache.cache_dir`)
    under the grammar's and Lark's hash — Lark checks that hash again when it loads
    them — published by an atomic rename, so parallel runs never read half a file.
    Without a writable cache the tables are built every time."""
    import hashlib
    import os

    import lark

    from kidym.cache import CacheError, private_cache_dir

    options = dict(parser="lalr", start=["assignment", "body", "items", "event_items",
                                                 "coincide_items", "shape_items"],
                   propagate_positions=True, maybe_placeholders=True)
    text = Path(__file__).with_name("grammar.lark").read_text(encoding="utf-8")
    key = hashlib.sha256(f"{text}{sorted(options.items())}{lark.__version__}".encode())
    try:   # the tables are a pickle: only from the user's own cache
        path = private_cache_dir() / "parser" / f"grammar-{key.hexdigest()[:24]}.lark"
    except (CacheError, OSError):
        return Lark(text, **options)
    if path.is_file():
        return Lark(text, cache=str(path), **options)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        parser = Lark(text, cache=str(tmp), **options)
        os.replace(tmp, path)
    except OSError:
        return Lark(text, **options)
    return parser


class _StatementError(Exception):
    """A syntax problem found while building the tree of one statement."""

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(message)
        self.message, self.start, self.end = message, start, end


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):
    """Lark tree of one statement → :mod:`kidym.lang.ast` nodes with source spans."""

    def __init__(self, offset: int, index: LineIndex) -> None:
        super().__init__()
        self.offset = offset
        self.index = index

    def _loc(self, start: int, end: int) -> dict[str, Any]:
        s, e = self.offset + start, self.offset + end
        return {"span": self.index.span(s, e), "start": s, "end": e}

    def _meta(self, meta: Any) -> dict[str, Any]:
        return self._loc(meta.start_pos, meta.end_pos)

    def _name(self, tok: Token) -> ast.Name:
        return ast.Name(name=str(tok), **self._loc(tok.start_pos, tok.end_pos))

    # formulas -------------------------------------------------------------
    def number(self, meta: Any, ch: list[Any]) -> ast.Number:
        text = str(ch[0])
        exp = _EXPONENT.search(text)
        if exp and abs(int(exp.group(1))) > MAX_EXPONENT:
            raise _StatementError(f"number `{text}` is out of range (exponent beyond "
                           f"±{MAX_EXPONENT})", ch[0].start_pos, ch[0].end_pos)
        digits = sum(c.isdigit() for c in (text[:exp.start()] if exp else text))
        if digits > MAX_DIGITS:
            raise _StatementError(f"number `{_short_literal(text)}` has {digits} digits; a "
                                  f"literal has at most {MAX_DIGITS} (write a large or small "
                                  "number with an exponent, `1.5e300`)",
                                  ch[0].start_pos, ch[0].end_pos)
        return ast.Number(text=text, value=Fraction(text), **self._meta(meta))

    def name(self, meta: Any, ch: list[Any]) -> ast.Name:
        return self._name(ch[0])

    def call(self, meta: Any, ch: list[Any]) -> ast.Call:
        return ast.Call(func=self._name(ch[0]), args=ch[1] or (), **self._meta(meta))

    def args(self, meta: Any, ch: list[Any]) -> tuple[ast.Expr, ...]:
        return tuple(ch)

    def unary(self, meta: Any, ch: list[Any]) -> ast.Unary:
        return ast.Unary(op=str(ch[0]), operand=ch[1], **self._meta(meta))

    def binary(self, meta: Any, ch: list[Any]) -> ast.Binary:
        return ast.Binary(op=str(ch[1]), left=ch[0], right=ch[2], **self._meta(meta))

    def conditional(self, meta: Any, ch: list[Any]) -> ast.Conditional:
        return ast.Conditional(left=ch[0], op=str(ch[1]), right=ch[2], then=ch[3],
                               otherwise=ch[4], **self._meta(meta))

    # statements -------------------------------------------------------------
    def target(self, meta: Any, ch: list[Any]) -> list[ast.Name]:
        return [self._name(t) for t in ch]

    def assignment(self, meta: Any, ch: list[Any]) -> ast.Variable | ast.ElementRecord:
        target, expr = ch
        if len(target) == 1:
            return ast.Variable(name=target[0], expr=expr, **self._meta(meta))
        return ast.ElementRecord(label=target[0], coordinates=tuple(target[1:]), expr=expr,
                                 **self._meta(meta))

    def item_list(self, meta: Any, ch: list[Any]) -> tuple[ast.Expr, ...]:
        return tuple(c for c in ch if c is not None)

    def items(self, meta: Any, ch: list[Any]) -> tuple[ast.Item, ...]:
        return tuple(c for c in ch if c is not None)

    def body(self, meta: Any, ch: list[Any]) -> ast.BodyRecord:
        name, base, transforms, tail = ch
        return ast.BodyRecord(name=self._name(name),
                              base=None if base is None else self._name(base),
                              transforms=transforms, tail=tail, **self._meta(meta))

    def event_items(self, meta: Any, ch: list[Any]) -> tuple[ast.Item, ...]:
        return tuple(c for c in ch if c is not None)

    def event_item(self, meta: Any, ch: list[Any]) -> ast.EventItem:
        return ast.EventItem(name=self._name(ch[0]),
                             args=tuple(c for c in ch[1:] if c is not None),
                             **self._meta(meta))

    def coincide_items(self, meta: Any, ch: list[Any]) -> tuple[ast.Item, ...]:
        return tuple(c for c in ch if c is not None)

    def coincide_item(self, meta: Any, ch: list[Any]) -> ast.CoincideItem:
        return ast.CoincideItem(left=ch[0], right=ch[1], **self._meta(meta))

    def shape_items(self, meta: Any, ch: list[Any]) -> tuple[ast.Item, ...]:
        return tuple(c for c in ch if c is not None)

    def mesh_item(self, meta: Any, ch: list[Any]) -> ast.Call:
        return ast.Call(func=self._name(ch[0]), args=(ch[1],), **self._meta(meta))

    def mesh_call(self, meta: Any, ch: list[Any]) -> ast.Call:
        text = ch[1]
        value = ast.Text(value=str(text)[1:-1], **self._loc(text.start_pos, text.end_pos))
        return ast.Call(func=self._name(ch[0]), args=(value, *(ch[2] or ())),
                        **self._meta(meta))

    def named_item(self, meta: Any, ch: list[Any]) -> ast.NamedItem:
        return ast.NamedItem(name=self._name(ch[0]), value=ch[1], **self._meta(meta))

    def based_item(self, meta: Any, ch: list[Any]) -> ast.BasedItem:
        return ast.BasedItem(name=self._name(ch[0]), base=self._name(ch[1]), args=ch[2] or (),
                             **self._meta(meta))


def _short_literal(text: str) -> str:
    """A long literal shortened for a message: ``1111…1111``."""
    return text if len(text) <= 24 else f"{text[:10]}…{text[-10:]}"


def _describe_expected(expected: set[str]) -> str:
    names = set(expected)
    parts: list[str] = []
    if _BINARY <= names:
        # after a complete operand: the LALR states are shared between contexts, so the
        # full list (`)`, `,`, `|`, `?` …) would mostly name tokens impossible here
        return "an operator (`+`, `-`, `*`, `/`, `%`, `^`)" + (
            " or the end of the statement" if "$END" in names else "")
    if _FORMULA_START <= names:
        parts.append("a formula")
        names -= _FORMULA_START
    rest = sorted(names, key=lambda n: _ORDER.index(n) if n in _ORDER else len(_ORDER))
    parts += [_TERMINALS.get(n, f"`{n}`") for n in rest]
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _describe_token(tok: Token) -> str:
    if tok.type == "NAME":
        return f"name `{tok}`"
    if tok.type == "NUMBER":
        return f"number `{tok}`"
    return f"`{tok}`"


@dataclass
class ParsedSource:
    """The statements of a source and the diagnostics of reading it.

    Attributes
    ----------
    source : str
        The text as given.
    index : LineIndex
        Offsets → line and column.
    statements : list of Statement
        Statements that parsed, in source order, up to ``КОНЕЦ``/``END``.
    diagnostics : list of Diagnostic
        Syntax errors and reading warnings.
    tasks : list of list of Statement
        The statements of each task as written (a task ends at ``КОНЕЦ``/``END``);
        :func:`kidym.lang.tasks.task_statements` merges them.
    unsure : set of str
        Every name written in a statement that could not be read: the builder does
        not report them as undefined (the broken statement may have defined them).
    """

    source: str
    index: LineIndex
    statements: list[ast.Statement] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tasks: list[list[ast.Statement]] = field(default_factory=list)
    unsure: set[str] = field(default_factory=set)
    ends: list[ast.Instruction] = field(default_factory=list)
    comments: list[tuple[int, int]] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        """Whether any diagnostic is an error."""
        return any(d.severity == "error" for d in self.diagnostics)


class _StatementParser:
    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed
        self.index = parsed.index

    def error(self, message: str, start: int, end: int | None = None,
              severity: str = "error") -> None:
        self.parsed.diagnostics.append(Diagnostic(message, self.index.span(start, end), severity))

    def run(self, start_rule: str, text: str, chunk: Chunk) -> Any:
        """Parse ``text`` (the chunk, maybe with a prefix blanked) from ``start_rule``."""
        try:
            tree = _grammar().parse(text, start=start_rule)
            try:
                return _ToAst(chunk.start, self.index).transform(tree)
            except VisitError as e:
                raise e.orig_exc from None
        except _StatementError as p:
            self.error(p.message, chunk.start + p.start, chunk.start + p.end)
        except UnexpectedCharacters as e:
            pos = e.pos_in_stream
            hint = ""
            if text[pos] == "[":
                hint = " (arrays `A[N] = …` are not supported yet)"
            elif text[pos] == '"':
                hint = " (quoted names `\"…\"` are not supported yet)"
            self.error(f"unexpected character `{text[pos]}`{hint}", chunk.start + pos)
        except UnexpectedToken as e:
            self._unexpected(e, text, chunk)
        except UnexpectedInput as e:  # pragma: no cover - other lark input errors
            pos = getattr(e, "pos_in_stream", None) or 0
            self.error(f"syntax error: {e}", chunk.start + pos)
        except RecursionError:
            self.error("statement is nested too deeply to be read; split it into "
                       "several named formulas", chunk.start, chunk.end)
        except LarkError as e:  # pragma: no cover - defensive
            self.error(f"syntax error: {e}", chunk.start)
        return None

    def _unexpected(self, e: UnexpectedToken, text: str, chunk: Chunk) -> None:
        tok = e.token
        expected = set(e.expected)
        if tok.type == "$END":
            where = chunk.end
            what = "end of statement" if chunk.terminated else "end of text"
            got = f"unexpected {what}"
            if chunk.terminated:
                got += " `;`"
        else:
            where = chunk.start + tok.start_pos
            got = f"unexpected {_describe_token(tok)}"
            before = text[:tok.start_pos].rstrip(" \t")
            if before.endswith("\n") and before.strip() and (
                    before.rstrip()[-1].isalnum() or before.rstrip()[-1] in ")'"):
                got += " (is a `;` missing at the end of the previous line?)"
        if expected == {"BANG"}:
            self.error(f"{got}: a conditional `u < v ? a ! b` needs its `! b` branch "
                       "(incomplete conditionals are not supported)", where,
                       where + max(1, len(tok)) if tok.type != "$END" else None)
            return
        wanted = _describe_expected(expected)
        message = got + (f"; expected {wanted}" if wanted else "")
        if tok.type != "$END" and str(tok) == "*" and text[:tok.start_pos].endswith("*"):
            message += " (a power is written `^`: `x^2`, not `x**2`)"
        end = None if tok.type == "$END" else where + max(1, len(str(tok)))
        self.error(message, where, end)

    def body_list(self, ins: ast.Instruction) -> list[ast.BodyRecord]:
        """``ТВЕРДЫЕ ТЕЛА : B1~B0(Rz(fi), Sx(l), J(m, Jx, Jy, Jz)), …;`` → body records.

        The leading transforms of each item are its chain; ``J(…)`` holds the
        positional inertia values; any other item (``m(…)``, central shifts) goes
        to the third section as written.
        """
        out: list[ast.BodyRecord] = []
        for item in ins.items:
            if isinstance(item, ast.BasedItem):
                name, base, args = item.name, item.base, item.args
            elif isinstance(item, ast.Call):
                name, base, args = item.func, None, item.args
            else:
                self.parsed.diagnostics.append(Diagnostic(
                    f"`{ins.written}` lists bodies `Name~Base(transforms, J(m, Jx, Jy, Jz))`, "
                    f"got `{' '.join(self.parsed.source[item.start:item.end].split())}`",
                    item.span))
                continue
            chain: list[ast.Expr] = []
            tail: list[ast.Expr] = []
            for a in args:
                is_transform = (isinstance(a, ast.Call) and a.func.name in _TRANSFORM_NAMES
                                and not tail)
                if is_transform:
                    chain.append(a)
                elif isinstance(a, ast.Call) and a.func.name == "J":
                    tail.extend(a.args)
                else:
                    tail.append(a)
            out.append(ast.BodyRecord(name=name, base=base, transforms=tuple(chain),
                                      tail=tuple(tail), span=item.span, start=item.start,
                                      end=item.end))
        return out

    # statement kinds -------------------------------------------------------------
    def statement(self, chunk: Chunk) -> ast.Statement | None:
        text = chunk.text
        m = _INSTRUCTION.match(text)
        if m:
            sep = m.group("sep")
            if sep not in (":=", ":"):
                self.error("`: =` read as `:=` (a space inside `:=`, as in text pasted from "
                           "a paper)", chunk.start + m.start("sep"),
                           chunk.start + m.end("sep"), severity="warning")
                sep = ":="
            return self.instruction(chunk, m.group("name"), m.start("name"), m.end("name"),
                                    sep, m.end())
        m = _BARE.match(text)
        if m:
            return self.instruction(chunk, m.group("name"), m.start("name"), m.end("name"),
                                    None, len(text))
        if "|" in text:
            return self.run("body", text, chunk)
        return self.assignment(chunk)

    def assignment(self, chunk: Chunk) -> ast.Statement | None:
        text = chunk.text
        unit: str | None = None
        m = _ASSIGN.match(text)
        if m:
            depth = 0
            for i in range(m.end(), len(text)):
                c = text[i]
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                elif c == "," and depth == 0:
                    unit = " ".join(text[i + 1:].split())
                    if not unit:
                        self.error("expected a unit after `,` (e.g. `x = 3, см;`); remove "
                                   "the `,` or write the unit", chunk.start + i)
                        return None
                    text = text[:i] + " " * (len(text) - i)
                    break
        stmt = self.run("assignment", text, chunk)
        if isinstance(stmt, ast.Variable) and unit is not None:
            stmt = ast.Variable(name=stmt.name, expr=stmt.expr, unit=unit, span=stmt.span,
                                start=stmt.start, end=stmt.end)
        return stmt

    def instruction(self, chunk: Chunk, written: str, name_start: int, name_end: int,
                    separator: str | None, list_start: int) -> ast.Instruction | None:
        written = " ".join(written.split())
        key = keywords.lookup(written)
        a, b = chunk.start + name_start, chunk.start + name_end
        if key is None:
            suggestion = keywords.closest(written)
            message = f"unknown instruction `{written}`"
            if suggestion:
                message += f" (did you mean `{suggestion}`?)"
            elif separator is None and " " not in written:
                message += f"; to define a variable write `{written} = …;`"
            self.error(message, a, b)
            return None
        loc = {"span": self.index.span(a, chunk.end), "start": a, "end": chunk.end}
        name_span = self.index.span(a, b)
        if separator is None:
            return ast.Instruction(key=key, written=written, name_span=name_span, bare=True,
                                   **loc)
        if key in keywords.PARSED_ITEMS:
            text = chunk.text
            padded = "".join(c if c.isspace() else " " for c in text[:list_start])
            rule = {"EVENTS": "event_items", "COINCIDE": "coincide_items",
                    "SHAPES": "shape_items"}.get(key, "items")
            items = self.run(rule, padded + text[list_start:], chunk)
            if items is None:
                return None
            return ast.Instruction(key=key, written=written, name_span=name_span,
                                   items=items, **loc)
        raw_text = chunk.text[list_start:]
        stripped = raw_text.strip()
        raw_span = None
        if stripped:
            lead = len(raw_text) - len(raw_text.lstrip())
            rs = chunk.start + list_start + lead
            raw_span = self.index.span(rs, rs + len(stripped))
        return ast.Instruction(key=key, written=written, name_span=name_span,
                               raw=" ".join(stripped.split()), raw_span=raw_span, **loc)


def parse_statements(text: str) -> ParsedSource:
    """Read ``text`` into statements, collecting every syntax error.

    Parameters
    ----------
    text : str
        Model source.

    Returns
    -------
    ParsedSource
        The statements of every task (``tasks``; ``statements`` holds the first
        task's) and the diagnostics (errors, warnings).
    """
    parsed = ParsedSource(source=text, index=LineIndex(text))
    work = " " + text[1:] if text.startswith("\ufeff") else text
    clean, diags = strip_comments(work, parsed.index, parsed.comments)
    parsed.diagnostics.extend(diags)
    reader = _StatementParser(parsed)
    current: list[ast.Statement] = []
    for chunk in split_statements(clean):
        before = len(parsed.diagnostics)
        stmt = reader.statement(chunk)
        if not chunk.terminated:
            end = chunk.start + len(chunk.text.rstrip())
            reader.error("missing `;` at the end of the statement: every statement ends "
                         "with `;`", end)
        if stmt is None:
            if any(d.severity == "error" for d in parsed.diagnostics[before:]):
                parsed.unsure.update(re.findall(_ID, chunk.text))
            continue
        if isinstance(stmt, ast.Instruction) and stmt.key == "END":
            parsed.ends.append(stmt)
            parsed.tasks.append(current)
            current = []
            continue
        if isinstance(stmt, ast.Instruction) and stmt.key == "BODIES" and not stmt.bare:
            current.extend(reader.body_list(stmt))
            continue
        current.append(stmt)
    if current or not parsed.tasks:
        parsed.tasks.append(current)
    parsed.statements = list(parsed.tasks[0])
    _blame_a_line_comment(parsed, work)
    return parsed


def _blame_a_line_comment(parsed: ParsedSource, text: str) -> None:
    """A `#` comment left open at the end of its line (`m = 1;  # mass`) pairs with the
    opening `#` of the next comment: the text between them is read as a comment and the
    rest of that comment as statements, which fail on later lines. When the first error
    comes after such a comment — one that runs over a line break and whose closing `#`
    has text after it on its line — that error and the later ones are replaced by one at
    the comment's start."""
    errors = [d for d in parsed.diagnostics if d.severity == "error" and d.span is not None]
    if not errors:
        return
    first = min((d.span.line, d.span.column) for d in errors)
    for start, end in sorted(parsed.comments):
        if text[start] != "#" or "\n" not in text[start:end]:
            continue
        line, column = parsed.index.position(start)
        close_line, _ = parsed.index.position(end - 1)
        rest = text[end:].split("\n", 1)[0]
        if not rest.strip() or (line, column) > first:
            continue
        if first[0] < close_line:
            return   # an error inside the lines the comment spans came first: not it
        keep = [d for d in parsed.diagnostics if d.severity != "error" or d.span is None
                or (d.span.line, d.span.column) < (line, column)]
        keep.append(Diagnostic(
            f"this `#` comment is not closed on its line, so it runs on to the `#` on line "
            f"{close_line} and the text after that is read as statements; a `#` comment ends "
            "at the next `#`, not at the end of the line: close it with `#`",
            parsed.index.span(start)))
        parsed.diagnostics[:] = keep
        return


def parse_tasks(text: str, *, filename: str | None = None, name: str | None = None,
                warnings: list[Diagnostic] | None = None) -> list[Model]:
    """Read every task of a model file (tasks end with ``КОНЕЦ;``/``END;``).

    Task *k* sees the statements of tasks 1…k, later definitions replacing earlier
    ones (:mod:`kidym.lang.tasks`). Every syntax and model error of every task is
    collected before anything is raised.

    Parameters
    ----------
    text, filename, name, warnings
        As in :func:`parse`. With several tasks the models are named
        ``NAME_1``, ``NAME_2`` …

    Returns
    -------
    list of Model
        One model per task, in file order (at least one).

    Raises
    ------
    ParseError, ModelError
        As :func:`parse`, carrying the diagnostics of all tasks.
    """
    from kidym.lang.tasks import task_statements
    from kidym.model.build import build_model  # the model layer builds on this one
    from kidym.model.slips import is_unused_warning, unused_in_every_task

    display = source_name(filename)
    base = name or "model"
    parsed = parse_statements(text)
    everything: list[Diagnostic] = list(parsed.diagnostics)
    statements = task_statements(parsed.tasks, everything)
    syntax_errors = any(d.severity == "error" for d in everything)
    models: list[Model | None] = []
    model_errors = False
    per_task: list[list[Diagnostic]] = []
    for k, stmts in enumerate(statements):
        task = replace(parsed, statements=stmts)
        label = base if len(statements) == 1 else f"{base}_{k + 1}"
        model, diags = build_model(task, filename=display, name=label)
        per_task.append(diags)
        everything.extend(d for d in diags if not is_unused_warning(d))
        model_errors = model_errors or model is None or any(
            d.severity == "error" for d in diags)
        models.append(model)
    everything += unused_in_every_task(per_task)
    everything = sorted(_unique(everything), key=_order)
    if warnings is not None:
        warnings.extend(d for d in everything if d.severity == "warning")
    if syntax_errors:
        raise ParseError(everything, filename=display, source=text)
    if model_errors:
        raise ModelError(everything, filename=display, source=text)
    return [m for m in models if m is not None]


def _unique(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[Diagnostic] = set()
    out = []
    for d in diags:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def parse(text: str, *, filename: str | None = None, name: str | None = None,
          warnings: list[Diagnostic] | None = None) -> Model:
    """Read a model written in the KiDyM language.

    A file with several tasks must be valid as a whole; the model of its **first**
    task is returned (:func:`parse_tasks` returns all of them).

    Parameters
    ----------
    text : str
        The model source.
    filename : str, optional
        Shown in diagnostics and stored on the model (default ``"<string>"``).
    name : str, optional
        Model name (default ``"model"``).
    warnings : list, optional
        If given, every warning :class:`~kidym.errors.Diagnostic` (problems that do
        not stop the build, e.g. a redefinition) is appended to it.

    Returns
    -------
    Model
        The validated, immutable model.

    Raises
    ------
    ParseError
        The text is not valid language (carries every syntax and model diagnostic).
    ModelError
        The text parses but does not describe a valid model (carries every
        diagnostic).

    Examples
    --------
    >>> model = parse("m = 1; Jm.x = m; Cs.x = 4;")
    >>> model.coordinates
    ('x',)
    """
    return parse_tasks(text, filename=filename, name=name, warnings=warnings)[0]


def _order(d: Diagnostic) -> tuple[int, int]:
    if d.span is None:
        return (1 << 30, 0)
    return (d.span.line, d.span.column)
