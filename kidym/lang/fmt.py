"""The canonical form of a model text (``kidym fmt``).

One statement per line, canonical spacing (``a + b``, ``a*b``, ``x^2``, ``u < v ? a ! b``),
the fewest parentheses that keep the meaning, numbers as written, instruction names
in one language (or as written), comments kept (a comment inside a statement moves
in front of it, and so does one after several statements of a line: it speaks of them
all), one blank line where the source leaves one or more between statements or
comments (sections stay apart), a blank line after every ``КОНЕЦ;``. Statements are printed as
written, before any task merging or template expansion, so ``РАЗМНОЖИТЬ``,
``ИЗЪЯТЬ`` and ``x$i`` stay; the list form ``ТВЕРДЫЕ ТЕЛА : B~A(…);`` is printed as
body records. Re-reading the output gives the same models (tested by property).

Examples
--------
>>> print(format_source("x=-(a^2)+(b*c) ; SHOW:=x;", language="en"), end="")
x = -a^2 + b*c;
SHOW := x;
"""

from __future__ import annotations

from kidym.errors import ParseError
from kidym.lang import ast, keywords
from kidym.lang.parser import parse_statements

# binding strength of each node kind (higher binds tighter)
_COND, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(6)
_LEVEL = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "%": _PRODUCT, "^": _POWER}


def _level(node: ast.Expr) -> int:
    if isinstance(node, ast.Conditional):
        return _COND
    if isinstance(node, ast.Binary):
        return _LEVEL[node.op]
    if isinstance(node, ast.Unary):
        return _UNARY
    return _ATOM


def formula(node: ast.Expr | ast.Item, need: int = _COND) -> str:
    """Canonical text of a formula (or list item); parenthesised if it binds looser
    than ``need``."""
    if isinstance(node, ast.NamedItem):
        return f"{node.name.name} = {formula(node.value)}"
    if isinstance(node, ast.BasedItem):
        return f"{node.name.name}~{node.base.name}({', '.join(formula(a) for a in node.args)})"
    if isinstance(node, ast.CoincideItem):
        return f"{formula(node.left)} = {formula(node.right)}"
    if isinstance(node, ast.EventItem):
        return f"{node.name.name}({', '.join(formula(a) for a in node.args)})"
    text = _bare(node)
    return f"({text})" if _level(node) < need else text


def _bare(node: ast.Expr) -> str:
    if isinstance(node, ast.Number):
        return node.text
    if isinstance(node, ast.Name):
        return node.name
    if isinstance(node, ast.Text):   # a mesh's file (`ФОРМЫ`), as written
        return f'"{node.value}"'
    if isinstance(node, ast.Call):
        return f"{node.func.name}({', '.join(formula(a) for a in node.args)})"
    if isinstance(node, ast.Unary):
        inner = formula(node.operand, _UNARY)
        return node.op + (" " + inner if inner[:1] in "+-" else inner)
    if isinstance(node, ast.Binary):
        level = _LEVEL[node.op]
        if node.op == "^":  # right associative: atom ^ unary
            return f"{formula(node.left, _ATOM)}^{formula(node.right, _UNARY)}"
        left = formula(node.left, level)
        right = formula(node.right, level + 1)
        if level == _SUM:
            return f"{left} {node.op} {right}"
        return f"{left}{node.op}{right}"
    assert isinstance(node, ast.Conditional)
    return (f"{formula(node.left, _SUM)} {node.op} {formula(node.right, _SUM)} ? "
            f"{formula(node.then)} ! {formula(node.otherwise)}")


def _keyword(ins: ast.Instruction, language: str | None) -> str:
    if language is None or ins.key not in keywords.IMPLEMENTED:
        return ins.written
    return keywords.spelling_in(ins.key, language)


def statement(stmt: ast.Statement, language: str | None = None) -> str:
    """Canonical text of one statement, with its ``;``."""
    if isinstance(stmt, ast.Variable):
        unit = f", {stmt.unit}" if stmt.unit else ""
        return f"{stmt.name.name} = {formula(stmt.expr)}{unit};"
    if isinstance(stmt, ast.ElementRecord):
        target = ".".join([stmt.label.name, *(c.name for c in stmt.coordinates)])
        return f"{target} = {formula(stmt.expr)};"
    if isinstance(stmt, ast.BodyRecord):
        head = stmt.name.name + (f"~{stmt.base.name}" if stmt.base else "")
        chain = ", ".join(formula(t) for t in stmt.transforms)
        tail = ", ".join(formula(t) for t in stmt.tail)
        return f"{head} | {chain} | {tail};"
    name = _keyword(stmt, language)
    if stmt.bare:
        return f"{name};"
    if stmt.raw is not None:
        raw = stmt.raw
        if stmt.key == "CALCULATION" and language is not None:
            calc = keywords.lookup_calculation(raw)
            if calc is not None:
                raw = keywords.calculation_in(calc, language)
        return f"{name} := {raw};"
    return f"{name} := {', '.join(formula(i) for i in stmt.items)};"


def format_source(text: str, *, language: str | None = None) -> str:
    """The canonical form of model ``text``.

    Parameters
    ----------
    text : str
        A model source without syntax errors.
    language : {"ru", "uk", "en"} or None
        Spell the implemented instruction names (and calculation types) in this
        language; ``None`` keeps them as written.

    Returns
    -------
    str

    Raises
    ------
    ParseError
        The text has syntax errors (it is not reformatted).
    ValueError
        ``language`` is not one of the three, or a formula is too deeply nested.
    """
    if language is not None and language not in keywords.LANGUAGES:
        raise ValueError(f"unknown keyword language `{language}`; expected ru, uk or en")
    parsed = parse_statements(text)
    if parsed.has_errors:
        raise ParseError(parsed.diagnostics, source=text)
    items: list[ast.Statement] = [s for task in parsed.tasks for s in task]
    items += parsed.ends
    items.sort(key=lambda s: s.start)
    comments = list(parsed.comments)
    lines: list[str] = []
    c = 0
    line_of = parsed.index.position
    prev_line = 0   # the line where the last statement ended
    last_line = 0   # the line where the last statement or comment ended
    first_on_line = 0   # index in `lines` of the first statement of that source line
    on_line = 0         # how many statements that source line holds

    def separate(start: int) -> None:
        """One blank line where the source leaves one or more before offset ``start``."""
        if lines and lines[-1] and last_line and line_of(start)[0] > last_line + 1:
            lines.append("")

    def comment(a: int, b: int) -> None:
        nonlocal last_line
        if lines and lines[-1] and line_of(a)[0] == prev_line and on_line > 1:
            # after several statements of one line: it is about them all, so it goes
            # before the first of them
            lines.insert(first_on_line, text[a:b])
        elif lines and lines[-1] and line_of(a)[0] == prev_line:
            lines[-1] += "  " + text[a:b]  # a comment after a statement stays there
        else:
            separate(a)
            lines.append(text[a:b])
        last_line = line_of(max(a, b - 1))[0]

    for stmt in items:
        while c < len(comments) and comments[c][0] < stmt.end:
            comment(*comments[c])
            c += 1
        if not (c and comments[c - 1][0] > stmt.start):   # no comment moved in front
            separate(stmt.start)
        if line_of(stmt.start)[0] == prev_line and lines and lines[-1]:
            on_line += 1
        else:
            first_on_line, on_line = len(lines), 1
        try:
            lines.append(statement(stmt, language))
        except RecursionError:
            raise ValueError(f"line {stmt.span.line}: formula nested too deeply to "
                             "format") from None
        prev_line = last_line = line_of(stmt.end)[0]
        if isinstance(stmt, ast.Instruction) and stmt.key == "END":
            lines.append("")
    for a, b in comments[c:]:
        comment(a, b)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""
