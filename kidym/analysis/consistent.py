"""Operating points on the constraints: the analysis only at possible states.

A model with ``УРАВНЕНИЯ``, ``КАЧЕНИЕ`` or ``СОВПАДЕНИЕ`` can only be in states where its
holonomic constraints ``Φ(q, t) = 0`` and its velocity constraints ``c = G w + g = 0``
hold. An operating point of :func:`~kidym.analysis.linearize.linearize` (and so of
``modes`` and ``continuation``) is given by the states the user names; the others take
the model's initial values, or 0. Where that point is off the constraints, the
dependent states are solved from the given ones — by the consistent start of the runs
(:func:`kidym.simulation.constrained.consistent_initial`: Newton on ``Φ = 0`` for the
dependent coordinates, then ``G w = −g`` for the dependent speeds) — and reported.
The dependent states are taken among those the call does not give, first those the
model gives no initial value either; the states the call gives are kept as given. If
the constraints cannot hold without changing one of them (the user gave them all, and
inconsistent), or cannot hold at all near the point, a located error names the
violated constraints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kidym.errors import Diagnostic, ModelError, SimulationError

#: A point whose constraints hold to this (relative to its size) is taken as it is.
ACCEPT = 1e-9
#: Newton of the dependent coordinates stops at this (relative to the point's size).
NEWTON = 1e-13


@dataclass(frozen=True)
class _PointSystem:
    """The interface of :mod:`kidym.simulation.constrained` (``constraint_block``,
    ``rates``, ``state_names``, ``equations``) over the analysis' own evaluation."""

    equations: object
    derivatives: object

    @property
    def state_names(self) -> tuple[str, ...]:
        eq = self.equations
        return tuple(str(s) for s in (*eq.coordinates, *eq.speeds))

    def constraint_block(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        from kidym.eom.constraints import split
        pt = self.derivatives(t, y, p)
        F, block = split(pt.F, self.equations.n_w, self.equations.m)
        return pt.M, F, block

    def rates(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        return self.derivatives(t, y, p).qdot


def violations(eq, derivatives, t: float, y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Each constraint's value at ``(t, y)``: ``Φ_i`` of a holonomic one, ``c_i`` of a
    velocity constraint (and the larger of ``|Φ_i|``, ``|c_i|`` by its sign where both
    are off)."""
    _M, _F, block = _PointSystem(eq, derivatives).constraint_block(t, y, p)
    out = {}
    for i, name in enumerate(eq.constraints.names):
        a, b = float(block.phi[i]), float(block.c[i])
        out[name] = a if abs(a) >= abs(b) else b
    return out


def constraint_spans(model) -> dict[str, object]:
    """Where each constraint of the model is written: ``УРАВНЕНИЯ``'s entry, the
    ``КАЧЕНИЕ`` or ``СОВПАДЕНИЕ`` record that generates it."""
    spans = {c.name: c.span for c in model.constraints}
    for group in (model.rolling, model.coincidences):
        for r in group:
            spans.update({n: r.span for n in r.constraint_names()})
    return spans


def _error(eq, head: str, values: Mapping[str, float], tail: str) -> ModelError:
    """A located error: one diagnostic per violated constraint, at its definition."""
    model = eq.model
    spans = constraint_spans(model)
    diags = [Diagnostic(f"{head}: constraint `{name}` is {v:.6g} there, not 0; {tail}",
                        spans.get(name)) for name, v in values.items()]
    return ModelError(diags, filename=model.filename, source=model.source)


def consistent_point(eq, derivatives, t: float, y: np.ndarray, p: np.ndarray,
                     given: set[str]) -> tuple[np.ndarray, dict[str, tuple[float, float]]]:
    """The operating point ``y`` on the constraints (see the module docstring).

    Parameters
    ----------
    eq : Equations
    derivatives : StateDerivatives
        The analysis' evaluation of the equations (its ``Point`` holds ``Φ, c, G``).
    t : float
    y : ndarray, shape (n_q + n_w,)
        The point: the given states, the others at the model's initial values or 0.
    p : ndarray
        Parameter vector.
    given : set of str
        The states the call gives: kept as they are.

    Returns
    -------
    tuple
        ``(y, solved)``; ``solved`` maps each state set from the constraints to
        ``(value before, value set)`` (empty where the point was on them).

    Raises
    ------
    kidym.errors.ModelError
        Located at the violated constraints: they hold only if a given state changes
        (it names them and what they would need), their Jacobian has lost rank at the
        point, or Newton finds no closed configuration near it.
    """
    from kidym.simulation.constrained import consistent_initial
    if eq.constraints is None or eq.m == 0:
        return y, {}
    y = np.asarray(y, float)
    size = max(1.0, float(np.abs(y).max(initial=0.0)))
    off = violations(eq, derivatives, t, y, p)
    bad = {k: v for k, v in off.items() if not abs(v) <= ACCEPT * size}
    if not bad:
        return y, {}
    system = _PointSystem(eq, derivatives)
    model = eq.model
    soft = set(given) | set(model.initial) | set(model.initial_formulas)
    try:
        y_new, changes = consistent_initial(system, t, y, p, soft, NEWTON * size)
    except SimulationError as exc:
        raise _error(eq, "the operating point is not a possible state", bad,
                     f"{exc.message}; {exc.hint}") from None
    moved = {k: v for k, v in changes.items() if k in given}
    if moved:
        need = ", ".join(f"`{k}` = {new:.6g} (given {old:.6g})"
                         for k, (old, new) in moved.items())
        raise _error(eq, "the operating point is not a possible state", bad,
                     "no state left out of the point can satisfy them: they hold only with "
                     f"{need}; give that, or leave out the states the constraints "
                     "determine (kidym then solves them from the others)")
    return y_new, changes


def solved_text(solved: Mapping[str, tuple[float, float]], digits: int = 6) -> str:
    """One line naming the states set from the constraints (empty if none)."""
    if not solved:
        return ""
    return ("solved from the constraints (the operating point was off them): "
            + ", ".join(f"{k} {old:.{digits}g} → {new:.{digits}g}"
                        for k, (old, new) in solved.items()))
