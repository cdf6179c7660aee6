"""Events: zero crossings of a function of the state, with optional state resets.

An :class:`Event` is located by the integrator (root finding, to the integration
tolerance) when its function crosses zero in the given direction. It is then
recorded and, depending on its action, ends the run (``terminal``) or changes the
state by a *reset map* (impact laws, re-indexing of rollers, seed 002) after which
the integration restarts from the new state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.eom.events import (  # noqa: F401 (Event, all_events: the public paths)
    RECORD,
    RESET,
    STORM_HINT,
    TERMINAL,
    Event,
    all_events,
    model_events,
    parse_expression,
)
from kidym.simulation.inputs import InputBinding

Expr = se.Basic

_NAME = re.compile(r"[^\W\d]\w*(?:'\w+)*")


def states_after(t: np.ndarray, ks: Sequence[int], before: np.ndarray,
                 actions: Sequence[int], reset: Callable[[int, float, np.ndarray], np.ndarray],
                 *, last_applied: bool = True) -> np.ndarray:
    """The state each recorded event left, shape (n_events, n_y).

    The engines record the state *before* any reset; the events of one instant are
    consecutive rows with that same state. Their resets are applied one after the
    other in the order of the events (both engines) and the run goes on from the
    result: every row of the instant gets that state. A terminal or record-only event
    leaves the state as it was.

    Parameters
    ----------
    t, ks, before : array_like
        Event times, event indices and states before the events, as recorded.
    actions : sequence of int
        The action of each event index (:data:`RECORD`, :data:`TERMINAL`, :data:`RESET`).
    reset : callable
        ``reset(k, t, y) -> y_new``: the engine's own reset of event ``k``.
    last_applied : bool
        Whether the resets of the last instant were applied (not when the run stopped
        there as an event storm or on accumulating events).
    """
    t = np.asarray(t, dtype=float)
    before = np.asarray(before, dtype=float)
    after = before.copy()
    i = 0
    while i < len(t):
        j = i
        while j + 1 < len(t) and t[j + 1] == t[i] and np.array_equal(before[j + 1], before[i]):
            j += 1
        y = before[i].copy()
        if last_applied or j + 1 < len(t):
            for k in ks[i:j + 1]:
                if actions[int(k)] == RESET:
                    y = np.asarray(reset(int(k), float(t[i]), y), dtype=float)
        after[i:j + 1] = y
        i = j + 1
    return after


def crossed(direction: int, g0: float, g1: float) -> bool:
    """Whether an event function of ``direction`` went from ``g0`` to ``g1`` across zero.

    From positive to zero or below (direction -1 or 0), from negative to zero or
    above (+1 or 0) — the test of the compiled driver (``kd_crossed``).
    """
    return (direction <= 0 and g0 > 0.0 and g1 <= 0.0) or (
        direction >= 0 and g0 < 0.0 and g1 >= 0.0)


@dataclass(frozen=True)
class EventFunctions:
    """Events evaluated in Python: the NumPy engine's ``kidym_events``/``kidym_reset``.

    Attributes
    ----------
    names : tuple of str
        Event labels (``event0`` … where none was given).
    directions, actions : tuple of int
        Crossing direction (-1, 0, +1) and action (:data:`RECORD`, :data:`TERMINAL`,
        :data:`RESET`) of each event.
    function : callable
        ``f(t, y, p) -> (q̇, M, F, values)``: ``values`` holds the event functions,
        then the new values of every reset, in event order.
    targets : tuple of tuple of int
        For each event, the state indices its reset sets (empty when none).
    """

    names: tuple[str, ...]
    directions: tuple[int, ...]
    actions: tuple[int, ...]
    function: Callable
    targets: tuple[tuple[int, ...], ...]
    #: the run's external inputs, appended to ``p`` as the right-hand side has them
    inputs: InputBinding | None = None

    def _p(self, t: float, y: np.ndarray, p: np.ndarray) -> list[float]:
        values = np.asarray(p, float).tolist()
        return values if self.inputs is None else self.inputs.extend(float(t), y, values)

    @classmethod
    def build(cls, eq: Equations, events: Sequence[Event]) -> EventFunctions:
        """Generate the Python evaluation of ``events`` over the equations ``eq``.

        Raises
        ------
        ValueError
            If an event or a reset names something the model does not have.
        """
        from kidym.simulation.numpy_engine import generate_python

        state_names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
        events = tuple(events)
        names = tuple(e.name or f"event{k}" for k, e in enumerate(events))
        exprs: dict[str, Expr] = {}
        for k, (e, n) in enumerate(zip(events, names)):
            exprs[f"g{k}"] = parse_expression(eq, e.function, f"event `{n}`")
        targets: list[tuple[int, ...]] = []
        for k, (e, n) in enumerate(zip(events, names)):
            idx = []
            for name, value in e.reset.items():
                if name not in state_names:
                    raise ValueError(f"event `{n}` resets `{name}`, which is not a state; "
                                     "the state is " + ", ".join(state_names))
                idx.append(state_names.index(name))
                exprs[f"r{k}_{len(idx)}"] = parse_expression(
                    eq, value, f"reset of `{name}` at event `{n}`")
            targets.append(tuple(idx))
        fn = generate_python(eq, exprs)
        actions = tuple(TERMINAL if e.terminal else (RESET if e.reset else RECORD)
                        for e in events)
        return cls(names, tuple(e.direction for e in events), actions, fn.function,
                   tuple(targets))

    def values(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Event functions at one state, shape (n_events,)."""
        return np.asarray(self.function(float(t), y.tolist(),
                                        self._p(t, y, p))[3][:len(self.names)])

    def reset(self, k: int, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The state after the reset of event ``k`` (states it does not name keep theirs)."""
        out = self.function(float(t), y.tolist(), self._p(t, y, p))[3]
        start = len(self.names) + sum(len(x) for x in self.targets[:k])
        ynew = np.array(y, dtype=float)
        for j, i in enumerate(self.targets[k]):
            ynew[i] = out[start + j]
        return ynew
