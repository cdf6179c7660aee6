"""One assembly of a :class:`~kidym.simulation.result.Result` for every engine, and what
is added to every run's result once it is assembled (quaternion norm drift and
normalisation, the energy balance)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kidym.errors import SimulationError
from kidym.model.model import Model
from kidym.simulation import faults
from kidym.simulation.energy import energy_balance
from kidym.simulation.layout import norm_drift
from kidym.simulation.result import Result


def assemble(model: Model, *, t: np.ndarray, Y: np.ndarray, state_names: Sequence[str],
             output_names: Sequence[str], outputs: np.ndarray, success: bool, status: int,
             message: str, nfev: int, p: np.ndarray, stats: dict,
             error: SimulationError | None) -> Result:
    """The :class:`Result` of one run from an engine's arrays.

    Parameters
    ----------
    model : Model
        Whose parameters ``p`` are (in model order).
    t : ndarray, shape (n_t,)
        Output times.
    Y : ndarray, shape (n_y, n_t)
        States at the output times.
    state_names, output_names : sequence of str
        Names of the rows of ``Y`` and of the columns of ``outputs``.
    outputs : ndarray, shape (n_t, n_out)
        Recorded outputs; one named like a state is not recorded twice.
    success, status, message, nfev
        The integrator's outcome (status 0 reached the end, 1 stopped by an event,
        -1 failed).
    stats : dict
        The engine's statistics.
    error : SimulationError or None
        Why a failed run failed (its dictionary is ``failure``).
    """
    values = {n: np.array(Y[i], dtype=float) for i, n in enumerate(state_names)}
    for i, n in enumerate(output_names):
        if n not in values:
            values[n] = outputs[:, i]
    return Result(t=np.asarray(t, float), values=values, state_names=tuple(state_names),
                  success=bool(success), status=int(status), message=str(message),
                  nfev=int(nfev), parameters=dict(zip(model.parameter_values, p.tolist())),
                  stats=stats, failure=error.to_dict() if error is not None else None)


def finish(result: Result, model: Model, *, normalize_quaternions: bool = False) -> Result:
    """``result`` with what every run records: the drift of each body quaternion's norm
    (``stats["quaternion_norm_drift"]``, measured first), the quaternions normalised
    if asked, and the energy balance (``stats["energy_balance"]``)."""
    groups = faults.quaternion_indices(result.state_names, model)
    if groups:
        y = np.array([result.values[n] for n in result.state_names]).reshape(
            len(result.state_names), len(result.t))
        result.stats["quaternion_norm_drift"] = norm_drift(groups, y)
        if normalize_quaternions and y.size:
            for idx in groups.values():
                norm = np.sqrt((y[idx] ** 2).sum(axis=0))
                for i in idx:
                    result.values[result.state_names[i]] = y[i] / norm
    return with_energy_balance(result)


def with_energy_balance(result: Result) -> Result:
    """``result`` with ``stats["energy_balance"]`` (:mod:`kidym.simulation.energy`)."""
    balance = energy_balance(result)
    if balance is not None and not balance.available:
        result.stats["energy_balance"] = {"max_abs": None, "scale": None, "relative": None,
                                          "unavailable": balance.unavailable}
    elif balance is not None:
        result.stats["energy_balance"] = {"max_abs": balance.max_abs, "scale": balance.scale,
                                          "relative": balance.relative}
    return result
