"""The numeric layout of a run that every engine shares: the parameter vector, the
initial state by name, the quaternions' places in the state.

Nothing here depends on an engine: a system is anything with ``equations`` and
``state_names`` (a :class:`~kidym.simulation.simulate.NumpySystem` or a
:class:`~kidym.simulation.compiled.CompiledSystem`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from kidym.kinematics import names
from kidym.model.display import check_sizes
from kidym.model.inertia import check_inertias
from kidym.model.model import Model
from kidym.model.programmed import check_coefficients
from kidym.model.virtual import check_alphas
from kidym.simulation import faults


def finite_number(value: object, what: str) -> float:
    """``float(value)``, or a ``ValueError`` naming ``what`` when it is not a finite number."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be a number, got {value!r}") from exc
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {number}")
    return number


def parameter_vector(model: Model, overrides: Mapping[str, float] | None = None) -> np.ndarray:
    """The parameter values of ``model`` in model order, with ``overrides`` applied.

    The runtime parameter vector of every engine; an unknown name is a ``KeyError``
    listing the model's parameters, a value that is not a finite number a
    ``ValueError`` naming the parameter, and values that give a body an impossible
    inertia (negative mass, a tensor not positive semidefinite or against the triangle
    inequality) or a virtual constraint an α that is not positive are a ``ValueError``
    naming the body or constraint, the parameters and their values; a size of
    ``ФОРМЫ`` that is not positive a ``ModelError`` located at it.
    """
    values = model.parameter_values
    for k, v in (overrides or {}).items():
        if k not in values:
            raise KeyError(f"`{k}` is not a parameter of model `{model.name}`; parameters: "
                           + ", ".join(values))
        values[k] = finite_number(v, f"parameter `{k}`")
    if overrides:
        check_inertias(model, values, changed=list(overrides))
        check_alphas(model, values)
        check_coefficients(model, values)
        check_sizes(model, values)
    return np.array([values[p] for p in values], dtype=float)


def canonical_initial(model: Model, initial: Mapping[str, float] | None
                      ) -> dict[str, float]:
    """``initial`` with the aliases of generated names (``omegax@Ball``, ``ωХBall``)
    written canonically (``ωXBall``), as the model itself accepts them."""
    bodies = [b.name for b in model.bodies]
    return {names.canonical(k, bodies): v for k, v in (initial or {}).items()}


def defaulted_states(state_names: Sequence[str], model: Model,
                     initial: Mapping[str, float] | None = None) -> list[str]:
    """States given an initial value neither by the model nor by ``initial``: they start at 0."""
    given = canonical_initial(model, initial)
    return [n for n in state_names if n not in model.initial and n not in given]


def given_states(model: Model, initial: Mapping[str, float] | None) -> set[str]:
    """Names of the states that the model or the call gives an initial value."""
    return set(model.initial) | set(model.initial_formulas) | set(
        canonical_initial(model, initial))


def initial_state(state_names: Sequence[str], model: Model,
                  initial: Mapping[str, float] | None,
                  parameters: Mapping[str, float] | None = None) -> np.ndarray:
    """``y0``: the model's initial values (formulas of parameters re-evaluated with
    ``parameters``), then ``initial``; states given neither start at 0.

    Raises
    ------
    KeyError
        A name of ``initial`` that is not a state (the message lists the state).
    ValueError
        An initial value that is not a finite number (given, or a formula of the
        model that evaluates to NaN or infinity), named; an initial quaternion that is
        not a unit one (:func:`kidym.simulation.faults.check_initial_quaternions`).
    """
    values = model.initial_values(parameters)
    for k, v in canonical_initial(model, initial).items():
        if k not in state_names:
            raise KeyError(f"`{k}` is not a state of model `{model.name}`; the state is "
                           + ", ".join(state_names))
        values[k] = finite_number(v, f"initial value of `{k}`")
    y0 = np.array([values.get(n, 0.0) for n in state_names], dtype=float)
    for n, v in zip(state_names, y0):
        finite_number(v, f"initial value of `{n}` (the formula of model `{model.name}`, with "
                   "the parameters given)")
    faults.check_initial_quaternions(state_names, model, y0)
    return y0


def quaternion_groups(system) -> dict[str, list[int]]:
    """State indices of the quaternion ``Q(λ0…λ3)`` of each body that has one.

    ``system`` is anything with ``state_names`` and ``equations`` (a NumPy or a
    compiled system).
    """
    return faults.quaternion_indices(system.state_names, system.equations.model)


def norm_drift(groups: dict[str, list[int]], y: np.ndarray) -> dict[str, float]:
    """``max_t | |Λ(t)| − 1 |`` per body (the rotation uses ``Λ/|Λ|``; this is numerics);
    ``y`` of shape (n_y, n_t)."""
    return {b: float(np.abs(np.sqrt((y[idx] ** 2).sum(axis=0)) - 1).max()) if y.size else 0.0
            for b, idx in groups.items()}
