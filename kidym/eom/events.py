"""Events as data: what both engines and the generated C consume.

An :class:`Event` is a zero crossing of a function of the state with an optional
terminal stop or state reset; the model's own (``СОБЫТИЯ``, resolved by
:func:`kidym.derive` into ``Equations.events_named``) come first, then the API's
(:func:`all_events`). The rules every engine applies to them are defined here once:
the actions (:data:`RECORD`, :data:`TERMINAL`, :data:`RESET`, as in the generated C),
events accumulating in time (Zeno behaviour: :data:`ZENO_RUN`, :data:`ZENO_TOLERANCE`,
which the generated C is given as ``kidym_zeno_run``, ``kidym_zeno_tolerance``),
what to try on an event storm (:data:`STORM_HINT`) and the step collapse at a force
that switches without an event (:data:`MAX_ERROR_TEST_FAILURES`, the C's
``kidym_max_error_test_fails``; :func:`switch_hint`). The engines' side — locating,
recording, resetting — is :mod:`kidym.simulation.events`; the C side is emitted by
:mod:`kidym.codegen.emit`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
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


def model_events(eq: Equations) -> tuple[Event, ...]:
    """The events the model declares (``СОБЫТИЯ``), as :class:`Event` objects over the
    equations' named quantities."""
    return tuple(Event(ev.function, direction=ev.direction, terminal=ev.stop,
                       reset=dict(ev.resets), name=ev.name) for ev in eq.events_named)


def all_events(eq: Equations, events: Sequence[Event] = ()) -> tuple[Event, ...]:
    """The events of a run: the model's own (``СОБЫТИЯ``), then ``events`` (the API's)."""
    return (*model_events(eq), *events)


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


#: What to try when events recur at one instant (an event storm), in both engines.
STORM_HINT = ("check that each reset moves the state off its event surface (e.g. a "
              "restitution coefficient > 0 with the speed reversed), or add a terminal "
              "event that stops the run when impacts accumulate")



def storm_detail(name: str) -> str:
    """What an event storm is, in both engines: a reset left the state at rest on the
    surface of event ``name`` (its function still exactly zero a small step later, where
    the root finders would never see it leave zero)."""
    return (f"event `{name}` is left at zero by a reset with the state at rest on its "
            "surface: it would recur at once, again and again (an event storm)")


#: Actions of an event, as in the generated C (``kidym_event_action``).
RECORD, TERMINAL, RESET = 0, 1, 2

#: Consecutive intervals between event instants, each shorter than the one before,
#: after which accumulation (Zeno behaviour) is tested.
ZENO_RUN = 5
#: Accumulation is declared when the geometric extrapolation of the shrinking
#: intervals puts the accumulation point within this fraction of the time scale
#: (``max(t_end - t_start, |t|)``) — well before the intervals reach the root
#: finders' tolerance (100 ulps), where the motion would go through the event surface.
ZENO_TOLERANCE = 1e-9

#: Failed error tests within one step after which both engines stop with a collapsed
#: step size (SUNDIALS' ``mxnef``, whose default is this number, set explicitly in the
#: generated C; in the NumPy engine, counted for SciPy's explicit Runge-Kutta methods).
#: A force that switches inside a step (``sign``, a bang-bang control) makes the
#: error tests fail until the step is short enough to hold the switch.
MAX_ERROR_TEST_FAILURES = 7
#: After :data:`SMALL_ERROR_TEST_FAILURES` failures in a step, each further one cuts
#: the step at least by this factor (ARKODE's ``etamxf`` and ``small_nef``, their
#: defaults, set explicitly for its explicit methods): a step that fails
#: :data:`MAX_ERROR_TEST_FAILURES` times has been cut by
#: ``ERROR_TEST_CUT ** (MAX_ERROR_TEST_FAILURES - SMALL_ERROR_TEST_FAILURES)`` (about
#: 2e-3) or more. SciPy cuts a failed step less (often by 0.7 or 0.9), so the NumPy
#: engine stops a step only when it failed that many times *and* had to be cut that
#: far: a mild switch (``-sign(x)`` of unit mass) that SciPy holds after seven mild
#: cuts, and ARKODE after fewer deep ones, passes in both.
ERROR_TEST_CUT = 0.3
SMALL_ERROR_TEST_FAILURES = 2
_SWITCH = ("a force that switches abruptly with the state (sign(…), a bang-bang "
           "control, a large gain) makes every step across the switch fail its error "
           "test: smooth the switch (e.g. tanh(x/ε) for sign(x)), or split the motion "
           "at it with an event (СОБЫТИЯ) that resets a mode coordinate "
           "(docs/language.md §5.10); ")
#: What to try when the error test keeps failing, to a run of an explicit method: the
#: usual cause in a model (:func:`switch_hint` gives each method its own).
SWITCH_HINT = _SWITCH + ("or try a stiff method (method='BDF'), looser rtol/atol, or end "
                         "the run earlier (t_end)")
#: The stiff (implicit) methods of the two engines: SciPy's ``Radau``, ``BDF``,
#: ``LSODA``; CVODE's ``BDF``.
STIFF_METHODS = ("Radau", "BDF", "LSODA")


def switch_hint(method: str) -> str:
    """What to try when the steps across a switching force collapsed in a run of
    ``method``: a stiff method is suggested only to a run that did not use one."""
    if method not in STIFF_METHODS:
        return SWITCH_HINT
    return _SWITCH + (f"{method} is already a stiff method: try looser rtol/atol, or end "
                      "the run earlier (t_end)")
