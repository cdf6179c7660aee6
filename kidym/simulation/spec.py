"""The specification of one run, prepared once for every entry point.

:func:`prepare_run` is the one place where a run is set up — its time span and output
times, the parameter vector, the initial state, the checks on them (finite values, a
model's inertias and coefficients, the controls reaching the programmed constraints)
and the consistent start of a model with constraints. :func:`kidym.simulate` (either
engine), :func:`kidym.simulate_batch`, :func:`kidym.sweep` and ``kidym run`` all call
it, so that the same bad input gives the same error from each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kidym.eom.constraints import Stabilization
from kidym.eom.controls import ControlSolveError, reach_error, solve_controls
from kidym.eom.controls import split as split_controls
from kidym.errors import SimulationError
from kidym.model.free import is_free
from kidym.model.model import Model
from kidym.simulation.constrained import consistent_initial
from kidym.simulation.inputs import InputBinding, bind_inputs, bound_system
from kidym.simulation.layout import canonical_initial, given_states, initial_state


@dataclass(frozen=True, eq=False)
class RunSpec:
    """What one run starts from, checked: the same for every engine.

    Attributes
    ----------
    t0, t1 : float
        The span, ``t1 > t0``.
    times : ndarray, shape (n_t,)
        Output times.
    p : ndarray, shape (n_p,)
        Parameter values in model order.
    y0 : ndarray, shape (n_y,)
        The start state (on the constraints, for a model with constraints).
    stabilization : Stabilization
        How the constraints' drift is held down.
    adjusted : dict
        Initial values the consistent start changed, ``name → (given, solved)``.
    parameters, initial : dict
        The overrides the run was given (for messages and labels).
    inputs : InputBinding or None
        The external inputs of ``ВХОДЫ``, checked (:mod:`kidym.simulation.inputs`).
    """

    t0: float
    t1: float
    times: np.ndarray
    p: np.ndarray
    y0: np.ndarray
    stabilization: Stabilization = field(default_factory=Stabilization)
    adjusted: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    initial: dict = field(default_factory=dict)
    inputs: InputBinding | None = None


#: The Jacobians of the implicit methods (``simulate(..., jacobian=…)``).
JACOBIAN_CHOICES = ("auto", "analytic", "fd")


@dataclass(frozen=True)
class RunOptions:
    """How a run is integrated (the engine-facing options of :func:`kidym.simulate`).

    ``partitioning`` is the minimal form's :class:`~kidym.simulation.minimal.Partitioning`
    (None: the augmented form); ``ali3`` the augmented Lagrangian crossing of singular
    positions (:mod:`kidym.simulation.passages`); ``monitor_energy`` the energy monitor
    (:mod:`kidym.simulation.energy_monitor`); the rest as :func:`kidym.simulate`.
    """

    method: str = "DOP853"
    rtol: float = 1e-9
    atol: float = 1e-12
    max_step: float = math.inf
    raise_on_failure: bool = True
    events: tuple = ()
    quaternion_stabilization: float = 0.0
    normalize_quaternions: bool = False
    jacobian: str = "auto"
    partitioning: object = None
    ali3: bool = False
    monitor_energy: bool = True


def check_options(*, t_start: float | None, t_end: float | None, n_points: int,
                  rtol: float, atol: float, max_step: float,
                  t_eval: Sequence[float] | None, jacobian: str = "auto") -> None:
    """Raise ``ValueError`` naming the first run option that cannot work.

    A span must be finite (``t_end=inf`` ran forever), at least two output points
    (one gave an empty run, zero an ``IndexError``), ``rtol > 0``, ``atol ≥ 0`` and
    ``max_step > 0``; output times finite; ``jacobian`` one of :data:`JACOBIAN_CHOICES`.
    """
    if jacobian not in JACOBIAN_CHOICES:
        raise ValueError(f"jacobian must be one of {JACOBIAN_CHOICES}, got {jacobian!r}")
    for name, value in (("t_start", t_start), ("t_end", t_end)):
        if value is not None and not math.isfinite(float(value)):
            raise ValueError(f"{name} must be a finite time, got {value}")
    if t_eval is None and (int(n_points) != n_points or n_points < 2):
        raise ValueError(f"n_points must be a whole number of at least 2 (the start and the "
                         f"end of the run), got {n_points}")
    if not (math.isfinite(rtol) and rtol > 0):
        raise ValueError(f"rtol must be a positive number, got {rtol}")
    if not (math.isfinite(atol) and atol >= 0):
        raise ValueError(f"atol must be zero or a positive number, got {atol}")
    if not max_step > 0:
        raise ValueError(f"max_step must be positive, got {max_step}")
    if t_eval is not None:
        times = np.asarray(t_eval, dtype=float)
        if times.ndim != 1 or not times.size or not np.all(np.isfinite(times)):
            raise ValueError("t_eval must be a non-empty sequence of finite times")


def stabilization_of(constraints: Stabilization | str) -> Stabilization:
    """A :class:`Stabilization` from ``constraints=`` (one, or the name of a method)."""
    if isinstance(constraints, Stabilization):
        return constraints
    return Stabilization(method=constraints)


def run_span(model: Model, parameters: Mapping[str, float] | None,
             t_start: float | None, t_end: float | None) -> tuple[float, float]:
    """``(t0, t1)``: the model's span (``ВРЕМЯ``) with ``t_start``/``t_end`` applied;
    ``ValueError`` unless ``t1 > t0``."""
    span = model.time_span(parameters)
    t0 = span[0] if t_start is None else float(t_start)
    t1 = span[1] if t_end is None else float(t_end)
    if not t1 > t0:
        raise ValueError(f"t_end ({t1}) must be greater than t_start ({t0})")
    return t0, t1


def output_times(t0: float, t1: float, t_eval: Sequence[float] | None,
                 n_points: int) -> np.ndarray:
    """``t_eval``, or ``n_points`` evenly spaced times from ``t0`` to ``t1``."""
    return np.linspace(t0, t1, n_points) if t_eval is None else np.asarray(t_eval, float)


def check_reachable(system, t0: float, y0: np.ndarray, p: np.ndarray) -> None:
    """Raise a located :class:`~kidym.errors.ModelError` at each programmed constraint the
    controls cannot reach at the start (``Γ = G M⁻¹ H`` of rank below ``r``); works with
    either engine (anything with ``equations``, ``state_names`` and ``dynamics``)."""
    eq = system.equations
    _qdot, M, F = system.dynamics(t0, y0, p)
    F0, block = split_controls(np.asarray(F, float), eq.n_w, eq.controls.r, eq.controls.s)
    try:
        solve_controls(np.asarray(M, float), F0, block)
    except ControlSolveError as exc:
        if exc.unreachable:
            raise reach_error(eq.model, exc.unreachable, t0,
                              dict(zip(system.state_names, np.asarray(y0, float)))) from exc


#: Calculations whose initial values are the start of a search for an equilibrium, not the
#: state a motion starts from: the consistent start may change them.
SEARCHES = ("STATICS", "FREE_VIBRATIONS")


def free_states(system, free: str | Sequence[str] | None) -> tuple[str, ...]:
    """The states whose given initial values the call declares free (``free=`` of
    :func:`kidym.simulate`, ``--free`` of ``kidym run``): coordinates or speeds of the
    model, written as ``initial=`` takes them (a coordinate frees its speed too).

    Raises
    ------
    KeyError
        A name that is not a coordinate or speed of the model, with the list of them.
    """
    if free is None:
        return ()
    names = (free,) if isinstance(free, str) else tuple(free)
    model = system.equations.model
    states = list(system.state_names)
    out = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"`free` lists names of coordinates and speeds; got {name!r}")
        canonical = next(iter(canonical_initial(model, {name: 0.0})))
        if canonical not in states:
            raise KeyError(f"`free`: `{name}` is not a coordinate or speed of model "
                           f"`{model.name}`, whose given initial values the start may "
                           f"solve; the states: {', '.join(states)}")
        out.append(canonical)
    return tuple(out)


def overwritten_error(system, t0: float, y0, given: set[str],
                      adjusted: Mapping[str, tuple[float, float]],
                      free: tuple[str, ...] = ()) -> None:
    """Raise when the consistent start changed an initial value that was given (by the
    model or the call) and is not declared free (``СВОБОДНЫЕ``, :mod:`kidym.model.free`,
    or ``free``, the call's).

    Raises
    ------
    SimulationError
        Naming each such value, what it would have become, and how to declare it.
    """
    model = system.equations.model
    if model.calculation in SEARCHES:
        return
    bad = [n for n in adjusted if n in given and not is_free(n, (*model.free, *free))]
    if not bad:
        return
    cons = system.equations.constraints
    changes = ", ".join(f"{n} {adjusted[n][0]:.6g} → {adjusted[n][1]:.6g}" for n in bad)
    coords = sorted({n[:-2] if n.endswith("'t") else n for n in bad})
    raise SimulationError(
        f"the given initial values do not satisfy the constraints {', '.join(cons.names)}: "
        f"closing them would change {changes}", time=t0,
        state=dict(zip(system.state_names, np.asarray(y0, float))),
        hint=f"declare which initial values the start may solve: `СВОБОДНЫЕ := "
             f"{', '.join(coords)};` (`FREE`; in Python `free=` of the call, `--free "
             f"{','.join(coords)}` of `kidym run`; the given values are then the start "
             "of the solve and pick the assembly branch), or leave them out of "
             "`НАЧАЛЬНЫЕ УСЛОВИЯ`, or give values that close the constraints",
    )


def prepare_run(system, *, parameters: Mapping[str, float] | None = None,
                initial: Mapping[str, float] | None = None,
                t_start: float | None = None, t_end: float | None = None,
                t_eval: Sequence[float] | None = None, n_points: int = 501,
                constraints: Stabilization | str = "projection",
                inputs: Mapping[object, object] | Callable | None = None,
                free: str | Sequence[str] | None = None) -> RunSpec:
    """Set up one run of ``system`` (either engine's): the one preparation of a run.

    Parameters
    ----------
    system : NumpySystem or CompiledSystem
        Anything with ``equations``, ``state_names``, ``parameter_vector`` and
        ``dynamics(t, y, p)``.
    parameters, initial : mapping of str to float, optional
        Overrides of the model's parameter and initial values.
    t_start, t_end, t_eval, n_points
        The span and output times, as :func:`kidym.simulate`.
    constraints : Stabilization or str
        For a model with constraints: the stabilization, whose tolerance sets that of
        the consistent start.
    inputs : mapping or callable, optional
        The values of the model's external inputs (:func:`kidym.simulation.inputs.bind_inputs`:
        tables, callbacks, one callback for several).
    free : str or sequence of str, optional
        Coordinates and speeds whose given initial values the consistent start may
        change, beside those the model declares (``СВОБОДНЫЕ``, :mod:`kidym.model.free`;
        a coordinate frees its speed too).

    Returns
    -------
    RunSpec

    Raises
    ------
    KeyError
        A parameter or state that the model does not have (in ``free`` too).
    ValueError
        A span that is empty, a value that is not a finite number, impossible inertias.
    ModelError
        Controls that cannot reach a programmed constraint at the start (located at it).
    SimulationError
        No consistent start on the constraints.
    """
    eq = system.equations
    model = eq.model
    t0, t1 = run_span(model, parameters, t_start, t_end)
    p = system.parameter_vector(parameters)
    y0 = initial_state(system.state_names, model, initial, parameters)
    freed = free_states(system, free)
    times = output_times(t0, t1, t_eval, n_points)
    stab = stabilization_of(constraints)
    binding = bind_inputs(model, system.state_names, inputs, t0, t1)
    if binding is not None:
        binding.values(t0, y0)      # a callback that fails at once fails here, named
    adjusted: dict = {}
    with bound_system(system, binding) as system:
        if eq.constraints is not None:
            given = given_states(model, initial)
            y0_given = y0
            y0, adjusted = consistent_initial(system, t0, y0, p, given, stab.tolerance * 1e-3)
            overwritten_error(system, t0, y0_given, given, adjusted, freed)
        if eq.controls is not None:
            check_reachable(system, t0, y0, p)
    return RunSpec(t0=t0, t1=t1, times=times, p=p, y0=y0, stabilization=stab,
                   adjusted=adjusted, parameters=dict(parameters or {}),
                   initial=dict(initial or {}), inputs=binding)
