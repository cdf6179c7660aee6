"""Events: zero crossings of a function of the state, with optional state resets.

An :class:`Event` is located by the integrator (root finding, to the integration
tolerance) when its function crosses zero in the given direction. It is then
recorded and, depending on its action, ends the run (``terminal``) or changes the
state by a *reset map* (impact laws, re-indexing of rollers, seed 002) after which
the integration restarts from the new state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import symengine as se

from kidym.eom.equations import Equations

Expr = se.Basic

_NAME = re.compile(r"[^\W\d]\w*(?:'\w+)*")


@dataclass(frozen=True)
class Event:
    """A zero crossing of ``function`` and what to do then.

    Parameters
    ----------
    function : str or symengine expression
        ``g(t, q, w)`` in model names (``"y"``, ``"XCBall - r"``, ``"x't"``).
    direction : {-1, 0, 1}
        Only crossings from positive to negative (-1), negative to positive (+1), or
        both (0).
    terminal : bool
        Stop the integration at the event.
    reset : mapping of str to (str or expression), optional
        New values of states at the event (``{"y't": "-e*y't"}``), as formulas of the
        state just before it; the states not named keep their values, and the
        integration restarts.
    name : str, optional
        Label in the results (default ``event0``, ``event1`` … by position).
    """

    function: str | Expr
    direction: int = 0
    terminal: bool = False
    reset: Mapping[str, str | Expr] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self) -> None:
        if self.direction not in (-1, 0, 1):
            raise ValueError(f"event direction must be -1, 0 or 1, got {self.direction!r}")
        if self.terminal and self.reset:
            raise ValueError("an event either ends the run (terminal) or resets the state, "
                             "not both")


def parse_expression(eq: Equations, text: str | Expr, what: str) -> Expr:
    """A formula in model names as an expression over the equations' symbols.

    Names may be states (``x``, ``x't``), parameters, ``t`` and named quantities
    of the equations (``XCBody``, user definitions).
    """
    if not isinstance(text, str):
        return se.sympify(text)
    known: dict[str, se.Symbol] = {str(s): s for s in (*eq.coordinates, *eq.speeds,
                                                        *eq.parameters, eq.graph.time)}
    for s in eq.graph.definitions:
        known.setdefault(str(s), s)
    placeholders: dict[str, se.Symbol] = {}

    def repl(m: re.Match[str]) -> str:
        name = m.group(0)
        if name in ("sin", "cos", "tan", "sqrt", "exp", "log", "atan2", "abs", "pi"):
            return name
        if name not in known:
            raise ValueError(f"{what}: `{name}` is not a state, parameter or named quantity "
                             f"of model `{eq.model.name}`; states: "
                             + ", ".join(str(s) for s in (*eq.coordinates, *eq.speeds)))
        key = f"kdph{len(placeholders)}"
        placeholders[key] = known[name]
        return key

    try:
        expr = se.sympify(_NAME.sub(repl, text).replace("^", "**"))
    except (SyntaxError, RuntimeError, TypeError) as exc:
        raise ValueError(f"{what}: cannot read `{text}` ({exc})") from exc
    return expr.xreplace({se.Symbol(k): v for k, v in placeholders.items()})
