"""Syntax tree of KiDyM statements, every node located in the source.

The parser (:mod:`kidym.lang.parser`) produces these; the model builder
(:mod:`kidym.model.build`) gives them meaning. Nodes are plain immutable data:
``span`` for messages, ``start``/``end`` (offsets into the source) for ordering.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from kidym.errors import Span


@dataclass(frozen=True, kw_only=True)
class Node:
    """Anything located in the source."""

    span: Span
    start: int
    end: int


# ---------------------------------------------------------------- formulas
@dataclass(frozen=True, kw_only=True)
class Number(Node):
    """A numeric literal; ``value`` is exact (``0.4`` is ``2/5``)."""

    text: str
    value: Fraction


@dataclass(frozen=True, kw_only=True)
class Name(Node):
    """A name as written (``x``, ``x't``, ``omegax@Body``)."""

    name: str


@dataclass(frozen=True, kw_only=True)
class Call(Node):
    """``func(args…)``: a function, or in records and lists a named item (``m(mt)``)."""

    func: Name
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Unary(Node):
    """``-x`` or ``+x``."""

    op: str
    operand: Expr


@dataclass(frozen=True, kw_only=True)
class Binary(Node):
    """``left op right`` with ``op`` one of ``+ - * / % ^``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, kw_only=True)
class Conditional(Node):
    """``left op right ? then ! otherwise`` with ``op`` one of ``< > <= >= == \\=``."""

    left: Expr
    op: str
    right: Expr
    then: Expr
    otherwise: Expr


Expr = Number | Name | Call | Unary | Binary | Conditional


@dataclass(frozen=True, kw_only=True)
class Text(Node):
    """A quoted string (``"part.stl"``), read only as the file of a mesh in ``ФОРМЫ``;
    ``value`` is what is between the quotes."""

    value: str


# ---------------------------------------------------------- list items
@dataclass(frozen=True, kw_only=True)
class NamedItem(Node):
    """``name = value`` inside an instruction list."""

    name: Name
    value: Expr


@dataclass(frozen=True, kw_only=True)
class BasedItem(Node):
    """``Body~Base(args…)`` inside an instruction list (``ТВЕРДЫЕ ТЕЛА``)."""

    name: Name
    base: Name
    args: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class EventItem(Node):
    """``Name(condition, direction, …)`` inside ``СОБЫТИЯ``: ``args`` are formulas and
    resets ``state = formula`` (:class:`NamedItem`)."""

    name: Name
    args: tuple[Expr | NamedItem, ...]


@dataclass(frozen=True, kw_only=True)
class CoincideItem(Node):
    """``A(x, y, z) = B(x, y, z)`` inside ``СОВПАДЕНИЕ``: two points that coincide, each
    a ``Call`` (a point in the body's axes) or a ``Name`` (the body's origin)."""

    left: Expr
    right: Expr


Item = Expr | NamedItem | BasedItem | EventItem | CoincideItem


# ---------------------------------------------------------- statements
@dataclass(frozen=True, kw_only=True)
class Variable(Node):
    """``name = formula [, unit];`` (``name`` may be a velocity ``x't``)."""

    name: Name
    expr: Expr
    unit: str | None = None


@dataclass(frozen=True, kw_only=True)
class ElementRecord(Node):
    """``E.c1[.c2…] = formula;``: one element per coordinate, same characteristic."""

    label: Name
    coordinates: tuple[Name, ...]
    expr: Expr


@dataclass(frozen=True, kw_only=True)
class BodyRecord(Node):
    """``Name[~Base] | transforms | [central transforms,] inertia;``.

    ``transforms`` and ``tail`` are the comma-separated items of the second and
    third sections, not yet interpreted.
    """

    name: Name
    base: Name | None
    transforms: tuple[Expr, ...]
    tail: tuple[Expr, ...]


@dataclass(frozen=True, kw_only=True)
class Instruction(Node):
    """``NAME := items;``, ``NAME : items;`` or ``NAME;``.

    Attributes
    ----------
    key : str
        Canonical key (:mod:`kidym.lang.keywords`).
    written : str
        The name as written, whitespace collapsed (for messages).
    name_span : Span
    items : tuple of Item
        The parsed list (instructions whose list is a formula list).
    raw : str or None
        The list as text, for instructions whose list is free text (``РАБОТА``).
    raw_span : Span or None
    bare : bool
        Written without a list (``КОНЕЦ;``).
    """

    key: str
    written: str
    name_span: Span
    items: tuple[Item, ...] = ()
    raw: str | None = None
    raw_span: Span | None = None
    bare: bool = False


Statement = Variable | ElementRecord | BodyRecord | Instruction


def iter_names(expr: Expr | Item) -> Iterator[Name]:
    """Every :class:`Name` used as a value in ``expr``, in source order.

    Function names of calls are not values and are not yielded.
    """
    stack: list[Node] = [expr]
    out: list[Name] = []
    while stack:
        node = stack.pop()
        if isinstance(node, Name):
            out.append(node)
        elif isinstance(node, Call):
            stack.extend(node.args)
        elif isinstance(node, Unary):
            stack.append(node.operand)
        elif isinstance(node, Binary):
            stack.extend((node.left, node.right))
        elif isinstance(node, Conditional):
            stack.extend((node.left, node.right, node.then, node.otherwise))
        elif isinstance(node, NamedItem):
            stack.append(node.value)
        elif isinstance(node, BasedItem | EventItem):
            stack.extend(node.args)
        elif isinstance(node, CoincideItem):
            stack.extend((node.left, node.right))
    out.sort(key=lambda n: n.start)
    yield from out
