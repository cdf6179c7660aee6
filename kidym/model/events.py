"""``СОБЫТИЯ`` / ``ПОДІЇ`` / ``EVENTS``: reading and checking the events of a model.

Each item is an event: a condition ``g(q, w, t)`` whose zero crossing is the event,
the direction of the crossing, and what happens then — nothing but a record, the end
of the run (``СТОП``), or resets of states by formulas::

    СОБЫТИЯ := Удар(z, ВНИЗ, z't = -e*z't),          # restitution law at the floor
               Смена(chi1 - pi/n, ВВЕРХ, chi1 = chi1 - 2*pi/n),
               Конец(x - L, ОБА, СТОП),
               Проход(phi, ОБА);                       # recorded only

Free functions over the model builder (:mod:`kidym.model.build`), like
:mod:`kidym.model.virtual`: :func:`read_items` while the instruction lists are read,
:func:`check_items` once names are classified. The engines' side is
:mod:`kidym.simulation.events`.
"""

from __future__ import annotations

from dataclasses import dataclass

import symengine as se

from kidym.errors import Span
from kidym.lang import ast, keywords
from kidym.lang.formulas import CONSTANTS, suggest
from kidym.model.model import ModelEvent

Expr = se.Basic


@dataclass(frozen=True)
class EventItem:
    """One item as read, before the checks that need the classified names."""

    name: str
    function: Expr
    condition: ast.Expr
    direction: int
    stop: bool
    resets: tuple[tuple[ast.Name, ast.Expr, Expr], ...]
    span: Span
    written: str


def _directions() -> str:
    return ", ".join(f"`{s[0]}`/`{next(x for x in s if x.isascii())}`"
                     for s in keywords.EVENT_DIRECTIONS.values())


def _usage(name: str) -> str:
    return (f"write `{name}(condition, direction)`, `{name}(condition, direction, СТОП)` or "
            f"`{name}(condition, direction, state = formula, …)`; the direction is one of "
            f"{_directions()}")


def read_items(b, ins: ast.Instruction) -> list[EventItem]:
    """The events of one ``СОБЫТИЯ`` list; located errors for malformed items.

    Parameters
    ----------
    b : kidym.model.build._Builder
        The builder (``error``, ``rename``, ``formula``, ``text``).
    ins : ast.Instruction
        The ``СОБЫТИЯ`` instruction (items :class:`kidym.lang.ast.EventItem`).
    """
    out: list[EventItem] = []
    seen: dict[str, ast.EventItem] = {}
    for item in ins.items:
        assert isinstance(item, ast.EventItem)   # the grammar's `event_item`
        name = item.name.name
        if name in seen:
            b.error(f"`{ins.written}`: event `{name}` is given twice (first at line "
                    f"{seen[name].span.line}); give each event its own name", item.name.span)
            continue
        seen[name] = item
        if len(item.args) < 2:
            b.error(f"`{ins.written}`: event `{name}` needs a condition and a direction; "
                    + _usage(name), item.span)
            continue
        condition, direction_node, *rest = item.args
        if isinstance(condition, ast.NamedItem):
            right = b.text(condition.value)
            wanted = condition.name.name + ("" if right == "0" else f" - ({right})")
            b.error(f"`{ins.written}`: the condition of event `{name}` is the formula whose "
                    f"zero is the event: write `{wanted}`, not `{b.text(condition)}`",
                    condition.span)
            continue
        direction = (keywords.lookup_event_direction(direction_node.name)
                     if isinstance(direction_node, ast.Name) else None)
        if direction is None:
            b.error(f"`{ins.written}`: event `{name}` has direction "
                    f"`{b.text(direction_node)}`; expected one of {_directions()} (the "
                    "condition going from positive to negative, negative to positive, or "
                    "either)", direction_node.span)
            continue
        stop, ok = False, True
        resets: list[tuple[ast.Name, ast.Expr, Expr]] = []
        targets: set[str] = set()
        for arg in rest:
            if isinstance(arg, ast.NamedItem):
                target = b.rename(arg.name.name)
                if target in targets:
                    b.error(f"`{ins.written}`: event `{name}` resets `{arg.name.name}` twice",
                            arg.name.span)
                    ok = False
                    continue
                targets.add(target)
                value = b.formula(arg.value, "event",
                                  f"the reset of `{arg.name.name}` at event `{name}`")
                if value is None:
                    ok = False
                    continue
                resets.append((ast.Name(name=target, span=arg.name.span, start=arg.name.start,
                                        end=arg.name.end), arg.value, value))
            elif (isinstance(arg, ast.Name)
                  and keywords.lookup_event_action(arg.name) == "stop"):
                stop = True
            else:
                b.error(f"`{ins.written}`: event `{name}`: expected `СТОП`/`STOP` or a reset "
                        f"`state = formula`, got `{b.text(arg)}`; " + _usage(name), arg.span)
                ok = False
        if stop and resets:
            b.error(f"`{ins.written}`: event `{name}` both stops the run and resets states; "
                    "an event does one or the other", item.span)
            continue
        function = b.formula(condition, "event", f"the condition of event `{name}`")
        if function is None or not ok:
            continue
        out.append(EventItem(name, function, condition, direction, stop, tuple(resets),
                             item.span, ins.written))
    return out


def check_items(b, items: list[EventItem]) -> tuple[ModelEvent, ...]:
    """Check every event once names are classified.

    A reset's target must be a state of the run: a coordinate or an independent speed
    (``x't`` of a coordinate without a velocity formula, a pseudo-velocity); conditions
    and resets are formulas of coordinates, speeds and time, without accelerations
    (the engines evaluate them without ``ẇ``).
    """
    states = b.speeds_allowed()
    out: list[ModelEvent] = []
    for it in items:
        ok = True
        nodes = [(it.condition, "the condition"),
                 *((node, f"the reset of `{t.name}`") for t, node, _v in it.resets)]
        for node, what in nodes:
            for n in ast.iter_names(node):
                name = b.rename(n.name)
                base = name.split("'")[0]
                if base in b.missing or n.name in CONSTANTS:
                    continue
                if b.time_level(name, set()) >= 2:
                    b.error(f"`{it.written}`: {what} of event `{it.name}` uses `{n.name}`, an "
                            "acceleration; an event's formulas are formulas of coordinates, "
                            "speeds and time", n.span)
                    ok = False
        for target, _node, _value in it.resets:
            if target.name in states:
                continue
            ok = False
            base = target.name[:-2] if target.name.endswith("'t") else None
            if target.name in b.params:
                hint = (f"; a parameter is constant during a run: to switch a mode, make "
                        f"`{target.name}` a coordinate that stays put between events "
                        f"(`{target.name}'t = 0;` and an initial value) and reset that")
            elif base is not None and base in b.velocities:
                hint = (f"; `{target.name}` is given by a velocity formula, so it follows "
                        "the independent speeds: reset those")
            else:
                hint = suggest(target.name, sorted(states))
            b.error(f"`{it.written}`: event `{it.name}` resets `{target.name}`, which is not "
                    f"a state (the states are {', '.join(sorted(states, key=str))}){hint}",
                    target.span)
        if ok:
            out.append(ModelEvent(it.name, it.function, it.direction, it.stop,
                                  tuple((t.name, v) for t, _n, v in it.resets), it.span))
    return tuple(out)
