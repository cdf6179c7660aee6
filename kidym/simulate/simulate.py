"""Time simulation of the Cauchy form ``q̇ = B w + β``, ``M ẇ = F``."""

from __future__ import annotations

import dataclasses
import functools
import math
import time as _time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kidym.eom.constraints import (
    ConstraintSolveError,
    Stabilization,
    solve_augmented,
    split,
)
from kidym.eom.constraints import drift as constraint_drift
from kidym.eom.controls import ControlSolveError, reach_error, solve_controls
from kidym.eom.controls import split as split_controls
from kidym.eom.equations import Equations, derive
from kidym.errors import SimulationError
from kidym.kinematics import names
from kidym.model.inertia import check_inertias
from kidym.model.model import Model
from kidym.model.programmed import check_coefficients
from kidym.model.virtual import check_alphas
from kidym.simulate import faults
from kidym.simulate.constrained import consistent_initial, given_states, measure, project
from kidym.simulate.energy import POWER, energy_balance
from kidym.simulate.events import (
    RESET,
    STORM_HINT,
    TERMINAL,
    EventFunctions,
    all_events,
    crossed,
)
from kidym.simulate.jacobian import JacobianFunction, stiffness
from kidym.simulate.minimal import (
    Partitioning,
    formulation_of,
    require_minimal_form,
    run_minimal,
)
from kidym.simulate.numpy_engine import generate_python, needs_accelerations, tolerant
from kidym.simulate.result import Result

ENGINES = ("numpy", "compiled", "auto")
#: Projection at the output times (see :class:`Stabilization`).
DEFAULT_STABILIZATION = Stabilization()
METHODS = ("DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA")


_UNDEFINED_HINT = ("look for a formula undefined at this state (sqrt or log of a negative, "
                   "division by zero), or a blow-up; shorten t_end or tighten rtol")


class _AbortError(Exception):
    """Raised inside the right-hand side to stop the integrator with a diagnosis."""


def parameter_vector(model: Model, overrides: Mapping[str, float] | None = None) -> np.ndarray:
    """The parameter values of ``model`` in model order, with ``overrides`` applied.

    The runtime parameter vector of every engine; an unknown name is a ``KeyError``
    listing the model's parameters, and values that give a body an impossible inertia
    (negative mass, a tensor not positive semidefinite or against the triangle
    inequality) or a virtual constraint an α that is not positive are a ``ValueError``
    naming the body or constraint, the parameters and their values.
    """
    values = model.parameter_values
    for k, v in (overrides or {}).items():
        if k not in values:
            raise KeyError(f"`{k}` is not a parameter of model `{model.name}`; parameters: "
                           + ", ".join(values))
        values[k] = float(v)
    if overrides:
        check_inertias(model, values, changed=list(overrides))
        check_alphas(model, values)
        check_coefficients(model, values)
    return np.array([values[p] for p in values], dtype=float)

@dataclass(frozen=True)
class NumpySystem:
    """The numeric workspace of one model: generated function and its layout.

    Attributes
    ----------
    equations : Equations
        What it evaluates.
    state_names : tuple of str
        ``y = [q, w]`` names.
    output_names : tuple of str
        Recorded outputs (model outputs, then ``energy``).
    function : callable
        ``f(t, y, p) -> (q̇, M, F, outputs)``, for output times.
    source : str
        Its generated Python source.
    rhs_function : callable
        ``f(t, y, p) -> (q̇, M, F)``: the right-hand side alone, without the outputs.
    accelerations : bool
        Whether ``function`` takes ``y = [q, w, ẇ]`` (an output uses the accelerations).
    """

    equations: Equations
    state_names: tuple[str, ...]
    output_names: tuple[str, ...]
    function: object
    source: str
    rhs_function: object
    accelerations: bool = False
    stabilization: Stabilization = DEFAULT_STABILIZATION

    @classmethod
    def build(cls, eq: Equations) -> NumpySystem:
        """Generate the Python evaluation of ``eq``."""
        eq.require_motion()
        outputs = dict(eq.outputs_named)
        if "energy" not in outputs:   # (a model's own `energy` has its own `energy't`)
            outputs["energy"] = eq.energy_named
            outputs.setdefault(POWER, eq.power_named)   # for the energy balance
        fn = generate_python(eq, outputs)
        # the right-hand side alone: outputs are evaluated at output times only
        bare = generate_python(eq)
        names = tuple(str(s) for s in (*eq.coordinates, *eq.speeds))
        multipliers = eq.constraints.multiplier_names if eq.constraints is not None else ()
        if eq.controls is not None:   # the controls, solved with ẇ
            multipliers = (*multipliers, *eq.controls.control_names)
        return cls(eq, names, (*outputs, *multipliers), fn.function, fn.source,
                   bare.function, needs_accelerations(eq, outputs))

    def parameter_vector(self, overrides: Mapping[str, float] | None = None) -> np.ndarray:
        """Parameter values in model order, with ``overrides`` applied."""
        return parameter_vector(self.equations.model, overrides)

    def evaluate(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F, outputs)`` at one state; a math domain fault is a SimulationError.

        Outputs that use the accelerations get ``ẇ = M⁻¹F`` at that state.
        """
        y = np.asarray(y, float)
        if self.accelerations and y.size == len(self.state_names):
            y = np.concatenate([y, self.rhs(t, y, p)[self.equations.n_q:]])
        try:
            return self.function(float(t), y.tolist(), p.tolist())
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            raise SimulationError(
                f"a formula cannot be evaluated ({exc})", time=float(t),
                state=dict(zip(self.state_names, y)),
                hint=_UNDEFINED_HINT, kind=faults.NON_FINITE) from exc

    def rhs(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``ẏ = [q̇, M⁻¹F]``; raises :class:`SimulationError` on singular ``M`` or NaN."""
        try:
            qdot, M, F = self.rhs_function(float(t), y.tolist(), p.tolist())
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            raise SimulationError(
                f"a formula cannot be evaluated ({exc})", time=float(t),
                state=dict(zip(self.state_names, y)), hint=_UNDEFINED_HINT,
                kind=faults.NON_FINITE) from exc
        wdot, _lam = self._solve(t, y, M, F)
        ydot = np.concatenate([qdot, wdot])
        if not np.all(np.isfinite(ydot)):
            bad = [n for n, v in zip(self.state_names, ydot) if not np.isfinite(v)]
            raise SimulationError(
                "the right-hand side is not finite (NaN or infinity in the rates of "
                + ", ".join(bad) + ")", time=t, state=dict(zip(self.state_names, y)),
                hint=_UNDEFINED_HINT, kind=faults.NON_FINITE)
        return ydot

    def rates(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``q̇ = B w + β`` at one state."""
        return np.asarray(self.rhs_function(float(t), np.asarray(y, float).tolist(),
                                            p.tolist())[0], float)

    def _solve(self, t: float, y: np.ndarray, M: np.ndarray, F: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(ẇ, λ)``: ``M ẇ = F``, or with constraints the augmented system; with
        controls ``(ẇ, u)`` (:func:`kidym.eom.controls.solve_controls`)."""
        eq = self.equations
        try:
            if eq.controls is not None:
                F0, cblock = split_controls(F, eq.n_w, eq.controls.r, eq.controls.s)
                return solve_controls(np.asarray(M, float), F0, cblock)
            if eq.constraints is None:
                return np.linalg.solve(M, F), np.empty(0)
            Fw, block = split(F, eq.n_w, eq.m)
            return solve_augmented(M, Fw, block, self.stabilization)
        except ControlSolveError as exc:
            names = ", ".join(f"`{eq.controls.names[i]}`" for i in exc.unreachable)
            raise SimulationError(
                str(exc) + (f" ({names})" if names else ""), time=t,
                state=dict(zip(self.state_names, y)),
                hint="the controls of `НЕИЗВЕСТНЫЕ` no longer change the acceleration of the "
                     "programmed constraint named here independently of the others (a "
                     "singular configuration of the mechanism, e.g. a stretched arm, or a "
                     "path that leaves the workspace); change the path or the controls",
                kind=faults.CONSTRAINTS) from exc
        except ConstraintSolveError as exc:
            raise SimulationError(
                str(exc), time=t, state=dict(zip(self.state_names, y)),
                hint="check masses and moments of inertia, and whether the constraints of "
                     "`УРАВНЕНИЯ` are independent (two of them saying the same thing) or the "
                     "loop reaches a dead-centre position here; a body of `КАЧЕНИЕ` meets a "
                     "surface whose normal is horizontal here (its no-slip rows are the x "
                     "and y components: turn the fixed axes so that z follows the normal)",
                kind=faults.SINGULAR if "mass matrix" in str(exc) else faults.CONSTRAINTS
            ) from exc
        except np.linalg.LinAlgError as exc:
            raise SimulationError(
                "the mass matrix is singular", time=t, state=dict(zip(self.state_names, y)),
                hint=faults.HINTS[faults.SINGULAR], kind=faults.SINGULAR) from exc

    def constraint_block(self, t: float, y: np.ndarray, p: np.ndarray):
        """``(M, F, Block)`` at one state (a model with constraints)."""
        eq = self.equations
        _qdot, M, F = self.rhs_function(float(t), np.asarray(y, float).tolist(), p.tolist())
        Fw, block = split(F, eq.n_w, eq.m)
        return np.asarray(M, float), Fw, block

    def outputs(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Output values at one state (accelerations, where used, from ``ẇ = M⁻¹F``;
        with constraints, the multipliers ``λ`` last; with controls, the controls ``u``)."""
        out = self.evaluate(t, y, p)[3]
        if self.equations.constraints is None and self.equations.controls is None:
            return out
        y = np.asarray(y, float)[:len(self.state_names)]
        _qdot, M, F = self.rhs_function(float(t), y.tolist(), p.tolist())
        _w, lam = self._solve(t, y, np.asarray(M, float), np.asarray(F, float))
        return np.concatenate([np.asarray(out, float), lam])


    def outputs_tolerant(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """:meth:`outputs` where they cannot all be evaluated (the state where a run
        failed): each output evaluated as the compiled engine does, NaN (or ±inf) only
        where its own formula fails; accelerations and multipliers NaN if ``ẇ`` cannot
        be solved for."""
        n_out = len(self.output_names)
        y = np.asarray(y, float)[:len(self.state_names)]
        if self.accelerations:
            try:
                wdot = self.rhs(t, y, p)[self.equations.n_q:]
            except (SimulationError, np.linalg.LinAlgError):
                wdot = np.full(self.equations.n_w, np.nan)
            y = np.concatenate([y, wdot])
        fn = tolerant(self.source)
        with np.errstate(all="ignore"):
            try:
                out = np.asarray(fn(np.float64(t), list(y.astype(np.float64)),
                                    list(np.asarray(p, np.float64)))[3], float)
            except (ZeroDivisionError, ValueError, OverflowError, TypeError):
                return np.full(n_out, np.nan)
        return np.concatenate([out, np.full(n_out - out.size, np.nan)])


def check_reachable(system, t0: float, y0: np.ndarray, p: np.ndarray) -> None:
    """Raise a located :class:`~kidym.errors.ModelError` at each programmed constraint the
    controls cannot reach at the start (``Γ = G M⁻¹ H`` of rank below ``r``); works with
    either engine (a ``NumpySystem`` or a ``CompiledSystem``)."""
    eq = system.equations
    if isinstance(system, NumpySystem):
        _qdot, M, F = system.rhs_function(float(t0), np.asarray(y0, float).tolist(),
                                          p.tolist())
    else:
        _qdot, M, F = system.evaluate(t0, y0, p)
    F0, block = split_controls(np.asarray(F, float), eq.n_w, eq.controls.r, eq.controls.s)
    try:
        solve_controls(np.asarray(M, float), F0, block)
    except ControlSolveError as exc:
        if exc.unreachable:
            raise reach_error(eq.model, exc.unreachable, t0,
                              dict(zip(system.state_names, np.asarray(y0, float)))) from exc


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


def _initial_state(system: NumpySystem, model: Model,
                   initial: Mapping[str, float] | None,
                   parameters: Mapping[str, float] | None = None) -> np.ndarray:
    """``y0``: the model's initial values (formulas of parameters re-evaluated with
    ``parameters``), then ``initial``; states given neither start at 0."""
    values = model.initial_values(parameters)
    for k, v in canonical_initial(model, initial).items():
        if k not in system.state_names:
            raise KeyError(f"`{k}` is not a state of model `{model.name}`; the state is "
                           + ", ".join(system.state_names))
        values[k] = float(v)
    y0 = np.array([values.get(n, 0.0) for n in system.state_names], dtype=float)
    faults.check_initial_quaternions(system.state_names, model, y0)
    return y0


def quaternion_groups(system: NumpySystem) -> dict[str, list[int]]:
    """State indices of the quaternion ``Q(λ0…λ3)`` of each body that has one.

    ``system`` is anything with ``state_names`` and ``equations`` (a NumPy or a
    compiled system).
    """
    return _groups(system.state_names, system.equations.model)


def _groups(state_names: Sequence[str], model: Model) -> dict[str, list[int]]:
    return faults.quaternion_indices(state_names, model)


def _norm_drift(groups: dict[str, list[int]], y: np.ndarray) -> dict[str, float]:
    """``max_t | |Λ(t)| − 1 |`` per body (the rotation uses ``Λ/|Λ|``; this is numerics)."""
    return {b: float(np.abs(np.sqrt((y[idx] ** 2).sum(axis=0)) - 1).max()) if y.size else 0.0
            for b, idx in groups.items()}


def engine_error(engine: object) -> str:
    """The message for an ``engine`` that is not a name: says what was passed by its type
    (a compiled system's repr holds its whole C source) and how to pass a system."""
    got = repr(engine) if isinstance(engine, str) else f"a {type(engine).__name__}"
    if len(got) > 80:
        got = got[:77] + "..."
    hint = ""
    if not isinstance(engine, str) and hasattr(engine, "equations"):
        hint = (f" (a {type(engine).__name__} is the system itself: pass it as the first "
                "argument, `simulate(system, ...)`)")
    return f"engine must be one of {', '.join(ENGINES)}, got {got}{hint}"


def check_options(*, t_start: float | None, t_end: float | None, n_points: int,
                  rtol: float, atol: float, max_step: float,
                  t_eval: Sequence[float] | None) -> None:
    """Raise ``ValueError`` naming the first run option that cannot work.

    A span must be finite (``t_end=inf`` ran forever), at least two output points
    (one gave an empty run, zero an ``IndexError``), ``rtol > 0``, ``atol ≥ 0`` and
    ``max_step > 0``; output times finite.
    """
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


#: Events due at one time, again and again without the time advancing, before the run is
#: stopped as an event storm.
MAX_EVENTS_AT_ONE_TIME = 100


class _EventFaultError(Exception):
    """An event function or reset cannot be evaluated: stops the run with its fault."""

    def __init__(self, fault: faults.Fault) -> None:
        super().__init__(fault.detail)
        self.fault = fault


def _checked(call: Callable[..., np.ndarray], what: str) -> Callable[..., np.ndarray]:
    """``call(..., t, y, p)`` with a formula fault turned into :class:`_EventFaultError`."""
    def run(*args) -> np.ndarray:
        try:
            return call(*args)
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            t, y = args[-3], args[-2]
            raise _EventFaultError(faults.Fault(
                faults.NON_FINITE, f"{what} cannot be evaluated ({exc})", float(t),
                np.array(y, dtype=float))) from exc
    return run


#: Steps in a row shorter than 10 ulps of ``t`` after which a NumPy-engine run has a
#: collapsed step size (SciPy's Runge-Kutta methods stop at the first; LSODA goes on
#: with such steps indefinitely).
TINY_STEPS = 100


def _watched(method: str) -> type:
    """SciPy's solver class ``method``, watched: its last instance is ``.last`` (the
    solver's own time and state when it fails); an abort in the right-hand side
    (:class:`_AbortError`) fails the step instead of escaping, so that ``solve_ivp``
    returns the outputs up to the last accepted step; :data:`TINY_STEPS` steps in a
    row shorter than 10 ulps of ``t`` fail as a collapsed step size."""
    import scipy.integrate

    base = getattr(scipy.integrate, method)

    class Watched(base):  # type: ignore[misc, valid-type]
        last = None

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.tiny = 0
            type(self).last = self

        def step(self):
            t = self.t
            try:
                message = super().step()
            except _AbortError:
                self.status = "failed"
                return "the right-hand side failed"
            if self.status == "running":
                self.tiny = self.tiny + 1 if abs(self.t - t) < 10 * abs(np.spacing(t)) else 0
                if self.tiny >= TINY_STEPS:
                    self.status = "failed"
                    return (f"{self.tiny} steps in a row were shorter than 10 ulps of t: "
                            "the step size is less than spacing between numbers")
            return message

    return Watched


def _solve_with_events(fun, evf: EventFunctions, p: np.ndarray, t0: float, t1: float,
                       y0: np.ndarray, times: np.ndarray, *, state_names: Sequence[str],
                       method: str | type, rtol: float, atol: float,
                       max_step: float, jac=None) -> tuple:
    """``solve_ivp`` from event to event: locate, record, reset, restart.

    Every event stops ``solve_ivp`` (its root is found on the dense output). All
    events due at that time are then handled together: the located one and every
    other whose function has crossed zero in its direction since the segment began,
    by ``te + δ`` (``δ`` = 100 ulps of the time scale, ARKODE's root tolerance):
    its root lies within the root finder's tolerance, else it would have been found
    first, and after a restart it could be missed (its function starting on the far
    side of zero). They are recorded with the state before any reset; a terminal
    one among them ends the run (no reset is applied); otherwise their resets are
    applied one after the other in the order of the events and the integration
    restarts. Output times at or after an event show the state after its reset.

    The run stops with a fault when events accumulate (:class:`~kidym.simulate.faults.
    ZenoWatch`, as the compiled driver), recur :data:`MAX_EVENTS_AT_ONE_TIME` times
    at one instant, or an event function or reset cannot be evaluated.

    Returns
    -------
    tuple
        ``(success, status, message, nfev, t, y, events, fault)``; ``events`` as the
        compiled engine's ``result.stats["events"]``; ``fault`` the
        :class:`~kidym.simulate.faults.Fault` that stopped the run, or ``None``.
    """
    t, y = t0, np.asarray(y0, dtype=float)
    ts: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    ev_t: list[float] = []
    ev_k: list[int] = []
    ev_y: list[np.ndarray] = []
    ev_after: list[np.ndarray] = []   # the state the events of an instant left
    nfev, status, message, ok = 0, 0, "reached the end", True
    fault: faults.Fault | None = None
    repeats = 0
    due: list[int] = []   # the events handled at the last instant
    zeno = faults.ZenoWatch(t1 - t0)
    values = _checked(evf.values, "an event function")
    reset = _checked(evf.reset, "an event's reset")

    def watch(k: int, t_start: float, g_start: float):
        def g(tt: float, yy: np.ndarray) -> float:
            return g_start if tt == t_start else float(values(tt, yy, p)[k])
        g.terminal = True  # type: ignore[attr-defined]
        g.direction = evf.directions[k]  # type: ignore[attr-defined]
        return g

    try:
        while True:
            g0 = values(t, y, p)
            handled = np.zeros(len(g0), dtype=bool)
            handled[list(due)] = True
            if np.any(g0 == 0.0) or handled.any():
                # a function exactly zero at the start (a reset onto the event surface)
                # counts with the sign it takes just after (CVODE and ARKODE mask it until
                # it leaves zero): no root at the start, and its next crossing is seen.
                # So does that of an event just handled: its root, located within the
                # root finder's tolerance, may lie a few ulps short of the surface, and a
                # reset that does not move the state off it (a mode switch, a record)
                # would find it again at once, again and again
                dt = 1e-8 * max(1.0, abs(t))
                ahead = values(t + dt, y + dt * fun(t, y), p)
                g0 = np.where((g0 == 0.0) | handled, ahead, g0)
            seg_times = times[(times >= t) & (times <= t1)]
            if t >= t1:
                ts.append(seg_times)
                ys.append(np.repeat(y[:, None], seg_times.size, axis=1))
                break
            from scipy.integrate import solve_ivp  # (a compiled run does without SciPy)

            sol = solve_ivp(fun, (t, t1), y, method=method, t_eval=seg_times, rtol=rtol,
                            atol=atol, max_step=max_step, dense_output=True,
                            **({"jac": jac} if jac is not None else {}),
                            events=[watch(k, t, g0[k]) for k in range(len(g0))])
            nfev += sol.nfev
            sol_t = np.asarray(sol.t, dtype=float)
            sol_y = np.asarray(sol.y, dtype=float).reshape(len(y), sol_t.size)
            if sol.status != 1:
                ts.append(sol_t)
                ys.append(sol_y)
                ok, status, message = sol.success, sol.status, sol.message
                break
            i = next(i for i, te in enumerate(sol.t_events) if te.size)
            te, ye = float(sol.t_events[i][0]), np.array(sol.y_events[i][0], dtype=float)
            keep = sol_t < te
            ts.append(sol_t[keep])
            ys.append(sol_y[:, keep])
            # due with it: crossed by te + δ, δ the root finders' time tolerance (ARKODE's)
            tn = te + 100 * np.finfo(float).eps * max(abs(te), te - t)
            g1 = values(tn, np.asarray(sol.sol(tn), dtype=float), p)
            due = [k for k in range(len(evf.names))
                   if k == i or crossed(evf.directions[k], g0[k], g1[k])]
            for k in due:
                ev_t.append(te)
                ev_k.append(k)
                ev_y.append(ye)
            if any(evf.actions[k] == TERMINAL for k in due):
                ev_after += [ye] * len(due)
                status, message = 1, f"stopped by a terminal event at t = {te!r}"
                break
            t_inf = zeno.add(te, len(due))
            if t_inf is not None:
                ev_after += [ye] * len(due)   # stopped before the resets
                names_in_run = [evf.names[k] for tt, k in zip(ev_t, ev_k)
                                if tt > zeno.run_start]
                fault = faults.zeno_fault(names_in_run, te, ye, count=zeno.run_events,
                                          window_start=zeno.run_start, t_inf=t_inf)
                break
            for k in due:
                if evf.actions[k] == RESET:
                    ye = reset(k, te, ye, p)
            ev_after += [ye] * len(due)
            repeats = repeats + 1 if te == t else 0
            if repeats > MAX_EVENTS_AT_ONE_TIME:
                fault = faults.Fault(
                    faults.EVENT_STORM,
                    f"events ({', '.join(evf.names[k] for k in due)}) recur at the same "
                    f"time without the motion advancing (an event storm, {repeats} times)",
                    te, ye, STORM_HINT)
                break
            t, y = te, ye
    except _EventFaultError as exc:
        fault = exc.fault
    except _AbortError:   # the right-hand side failed outside a step (``fun`` above)
        ok, status, message = False, -1, "the right-hand side failed"
    if fault is not None:
        ok, status = False, -1
    n_y = len(y0)
    ev_after += ev_y[len(ev_after):]   # a reset that failed changed nothing
    events = {"t": np.array(ev_t), "name": [evf.names[k] for k in ev_k],
              "state": np.array(ev_y).reshape(len(ev_y), n_y),
              "state_after": np.array(ev_after).reshape(len(ev_after), n_y)}
    t_out = np.concatenate(ts) if ts else np.empty(0)
    y_out = np.concatenate(ys, axis=1) if ys else np.empty((n_y, 0))
    return ok, status, message, nfev, t_out, y_out, events, fault


#: Added to a failure of a run with virtual potentials and no step limit.
STIFF_POTENTIAL_HINT = (
    "the model's virtual potentials (ВИРТУАЛЬНЫЕ СВЯЗИ, ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ) are "
    "stiff: a step that jumps deep across f = 0 overflows them; limit the step to a "
    "fraction of their vibration period ~ 1/√α (max_step=…, `kidym run --max-step`; "
    "examples/virtual_constraints uses 0.05/√α, and 0.2/α for exponential walls)")


def _model_of(system) -> Model | None:
    if isinstance(system, Model):
        return system
    eq = system if isinstance(system, Equations) else getattr(system, "equations", None)
    return eq.model if isinstance(eq, Equations) else None


def _hint_stiff_potentials(run):
    """A failed run of a model with virtual potentials and no ``max_step``: the error
    says that they are stiff and how to limit the step (:data:`STIFF_POTENTIAL_HINT`)."""

    @functools.wraps(run)
    def wrapper(system, **options):
        try:
            return run(system, **options)
        except SimulationError as exc:
            model = _model_of(system)
            if (model is None or not model.virtual_constraints
                    or math.isfinite(options.get("max_step", math.inf))):
                raise
            hint = f"{exc.hint}; or {STIFF_POTENTIAL_HINT}" if exc.hint else \
                STIFF_POTENTIAL_HINT
            error = SimulationError(exc.message, time=exc.time, state=exc.state,
                                    hint=hint, kind=exc.kind)
            error.result = exc.result
            raise error from exc

    return wrapper


@_hint_stiff_potentials
def simulate(system: Model | Equations | NumpySystem, *, t_end: float | None = None,
             t_start: float | None = None, initial: Mapping[str, float] | None = None,
             parameters: Mapping[str, float] | None = None,
             t_eval: Sequence[float] | None = None, n_points: int = 501,
             method: str = "DOP853", rtol: float = 1e-9, atol: float = 1e-12,
             max_step: float = np.inf, engine: str = "numpy",
             raise_on_failure: bool = True, events: Sequence = (),
             quaternion_stabilization: float = 0.0,
             normalize_quaternions: bool = False,
             constraints: Stabilization | str = "projection",
             jacobian: str = "auto",
             formulation: str | Partitioning = "augmented") -> Result:
    """Integrate the equations of motion over time.

    Parameters
    ----------
    system : Model, Equations or NumpySystem
        What to simulate; a model is derived first.
    t_end, t_start : float, optional
        Span; default the model's (``ВРЕМЯ``/``TIME`` or initial ``t(…)``).
    initial : mapping of str to float, optional
        Initial values by state name (``x``, ``x't``) overriding the model's; any
        state given nowhere starts at 0.
    parameters : mapping of str to float, optional
        Parameter values overriding the model's.
    t_eval : sequence of float, optional
        Output times (dense output); default ``n_points`` evenly spaced times.
    method : str
        A SciPy ``solve_ivp`` method (``DOP853``, ``RK45``, ``Radau``, ``BDF``, …).
    rtol, atol : float
        Relative and absolute error tolerances of the adaptive step control.
    max_step : float
        Largest step allowed.
    engine : {"numpy", "compiled", "auto"}
        ``numpy``: SciPy ``solve_ivp`` over the generated Python right-hand side;
        ``compiled``: generated C, cached shared library, the whole loop in C on
        SUNDIALS (``method`` ``DOP853``/``ERK8``, ``Fehlberg78``, ``RK45``/``ERK5``,
        ``BDF``, ``Adams``; see ``docs/compiled.md``); ``auto``: compiled when it pays off
        (cached, or compile time below the expected NumPy run time), saying why in
        ``result.stats["engine_choice"]``.
    raise_on_failure : bool
        Raise :class:`SimulationError` when integration fails (default), else return
        the partial result with ``success=False``.
    events : sequence of kidym.simulate.events.Event
        Zero crossings to locate, with optional terminal stop or state reset (both
        engines; events due at the same time are all handled, see
        ``docs/compiled.md``, "Events and reset maps").
    quaternion_stabilization : float
        ``k ≥ 0`` [1/s]: adds ``−k (|Λ|² − 1) Λ`` to each body quaternion's rate, which
        pulls the norm back to 1 without changing the motion (the rotation matrix is
        ``S(Λ/|Λ|)``). The drift ``max |(|Λ| − 1)|`` is always measured and stored in
        ``result.stats["quaternion_norm_drift"]`` (by body).
    normalize_quaternions : bool
        Return ``Λ/|Λ|`` in the results (after measuring the drift).
    constraints : Stabilization or {"projection", "baumgarte", "none"}
        For models with holonomic constraints (``УРАВНЕНИЯ``): how their drift is held
        down (:class:`kidym.eom.constraints.Stabilization`; default projection at the
        output times where it exceeds 1e-9). The dependent initial values are solved
        for first (``result.stats["initial_adjusted"]`` lists what changed); the drift
        ``max |Φ|`` and ``max |Φ̇|`` over the run is in
        ``result.stats["constraint_drift"]``, the multipliers ``λf`` are outputs.
    jacobian : {"auto", "analytic", "fd"}
        The Jacobian of the implicit methods (NumPy: ``Radau``, ``BDF``, ``LSODA``;
        compiled: ``BDF``): ``analytic`` — formed from the named quantities by the
        chain rule (:mod:`kidym.simulate.jacobian`; in C :mod:`kidym.codegen.jacobian_c`,
        a library built with ``jacobian=True``); ``fd`` — the integrator's own
        difference quotients; ``auto`` (default) — analytic where available (a compiled
        library passed in without it uses difference quotients).
        ``result.stats["jacobian"]`` says which was used.
    formulation : {"augmented", "minimal"} or Partitioning
        For models with holonomic constraints: ``augmented`` (default) integrates all
        coordinates and speeds with ``M ẇ = F + Gᵀλ``, ``G ẇ = γ``; ``minimal`` only
        the independent coordinates and speeds, chosen by pivoting and re-chosen when
        the partition degrades (:mod:`kidym.simulate.minimal`; a
        :class:`~kidym.simulate.minimal.Partitioning` sets its condition limit). The
        minimal form runs in the NumPy engine (``engine="compiled"`` with it is a
        ``ValueError``, ``"auto"`` chooses NumPy and says so); it needs holonomic
        constraints on coordinates whose speeds are their rates, and no events.

    Returns
    -------
    Result
        Arrays by name: coordinates, speeds, outputs and ``energy``.

    Raises
    ------
    SimulationError
        Singular mass matrix, a non-finite right-hand side, or integrator failure;
        the message names the time, the state and what to try.
    """
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(engine_error(engine))
    if jacobian not in JACOBIAN_CHOICES:
        raise ValueError(f"jacobian must be one of {JACOBIAN_CHOICES}, got {jacobian!r}")
    check_options(t_start=t_start, t_end=t_end, n_points=n_points, rtol=rtol, atol=atol,
                  max_step=max_step, t_eval=t_eval)
    if isinstance(system, Model):
        system = derive(system)
    partitioning = formulation_of(formulation)
    if partitioning is not None:
        eq_ = system if isinstance(system, Equations) else system.equations  # type: ignore[union-attr]
        require_minimal_form(eq_)
        if events:
            raise ValueError("formulation='minimal' does not locate events (its restarts at "
                             "re-partitions are events of their own): use "
                             "formulation='augmented' for a run with events")
        if engine == "compiled" or not isinstance(system, (Equations, NumpySystem)):
            raise ValueError("formulation='minimal' runs in the NumPy engine only: use "
                             "engine='numpy', or formulation='augmented' with the compiled "
                             "engine")
        if engine == "auto":
            result = simulate(system, t_end=t_end, t_start=t_start, initial=initial,
                              parameters=parameters, t_eval=t_eval, n_points=n_points,
                              method=method, rtol=rtol, atol=atol, max_step=max_step,
                              engine="numpy", raise_on_failure=raise_on_failure,
                              quaternion_stabilization=quaternion_stabilization,
                              normalize_quaternions=normalize_quaternions,
                              constraints=constraints, formulation=partitioning)
            result.stats["engine_choice"] = ("auto → numpy: formulation='minimal' runs in "
                                             "the NumPy engine only")
            return result
    if engine != "numpy" or not isinstance(system, (Equations, NumpySystem)):
        from kidym.simulate.compiled import simulate_with_engine

        if quaternion_stabilization:
            raise ValueError("quaternion_stabilization is applied by the NumPy engine only: "
                             "use engine='numpy', or normalize_quaternions=True")
        try:
            result = simulate_with_engine(
                system, engine=engine, events=events, t_end=t_end, t_start=t_start,
                initial=initial, parameters=parameters, t_eval=t_eval, n_points=n_points,
                method=method, rtol=rtol, atol=atol, max_step=max_step,
                raise_on_failure=raise_on_failure, constraints=constraints,
                jacobian=jacobian)
        except SimulationError as exc:
            # the partial result of a failed run records its balance as NumPy's does
            if getattr(exc, "result", None) is not None:
                _with_energy_balance(exc.result)
            raise
        eq = system if isinstance(system, Equations) else system.equations  # type: ignore[union-attr]
        groups = _groups(result.state_names, eq.model)
        if groups:
            y = np.array([result.values[n] for n in result.state_names])
            result.stats["quaternion_norm_drift"] = _norm_drift(groups, y)
            if normalize_quaternions and y.size:
                for idx in groups.values():
                    norm = np.sqrt((y[idx] ** 2).sum(axis=0))
                    for i in idx:
                        result.values[result.state_names[i]] = y[i] / norm
        return _with_energy_balance(result)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(system, Equations):
        system = NumpySystem.build(system)
    model = system.equations.model
    span = model.time_span(parameters)
    t0 = span[0] if t_start is None else float(t_start)
    t1 = span[1] if t_end is None else float(t_end)
    if not t1 > t0:
        raise ValueError(f"t_end ({t1}) must be greater than t_start ({t0})")
    p = system.parameter_vector(parameters)
    y0 = _initial_state(system, model, initial, parameters)
    times = np.linspace(t0, t1, n_points) if t_eval is None else np.asarray(t_eval, float)
    stab = constraints if isinstance(constraints, Stabilization) else Stabilization(
        method=constraints)
    adjusted: dict = {}
    if partitioning is not None and stab.method == "baumgarte":
        raise ValueError("constraints='baumgarte' stabilizes the augmented route; the "
                         "minimal form (formulation='minimal') holds Φ = 0 and Φ't = 0 at "
                         "every evaluation: leave constraints at 'projection'")
    if system.equations.constraints is not None:
        system = dataclasses.replace(system, stabilization=stab)
        y0, adjusted = consistent_initial(
            system, t0, y0, p, given_states(model, initial, canonical_initial),
            stab.tolerance * 1e-3)
    if system.equations.controls is not None:
        check_reachable(system, t0, y0, p)
    failure: SimulationError | None = None
    groups = quaternion_groups(system)
    if quaternion_stabilization < 0:
        raise ValueError(f"quaternion_stabilization must be >= 0, got {quaternion_stabilization}")

    def fun(t: float, y: np.ndarray) -> np.ndarray:
        nonlocal failure
        try:
            ydot = system.rhs(t, y, p)
            if quaternion_stabilization:
                for idx in groups.values():
                    lam = y[idx]
                    ydot[idx] -= quaternion_stabilization * (lam @ lam - 1.0) * lam
            return ydot
        except SimulationError as exc:
            failure = exc
            raise _AbortError from exc

    run_events = all_events(system.equations, events)
    evf = EventFunctions.build(system.equations, run_events) if run_events else None
    recorded: dict = {}
    solver = _watched(method)
    fault: faults.Fault | None = None
    started = _time.perf_counter()
    # implicit methods get the analytic Jacobian (kidym.simulate.jacobian)
    jac = None
    if method in IMPLICIT_METHODS and jacobian != "fd" and partitioning is None:
        jfun = analytic_jacobian(system.equations)

        def jac(t: float, y: np.ndarray) -> np.ndarray:
            return jfun(t, y, p, system.stabilization)

    def segment(ta: float, tb: float, ya: np.ndarray, seg_times: np.ndarray) -> tuple:
        if evf is None:
            from scipy.integrate import solve_ivp  # (a compiled run does without SciPy)

            sol = solve_ivp(fun, (ta, tb), ya, method=solver, t_eval=seg_times,
                            rtol=rtol, atol=atol, max_step=max_step,
                            **({"jac": jac} if jac is not None else {}))
            return sol.success, sol.status, sol.message, sol.nfev, sol.t, sol.y, {}, None
        return _solve_with_events(
            fun, evf, p, ta, tb, ya, seg_times, state_names=system.state_names,
            method=solver, rtol=rtol, atol=atol, max_step=max_step, jac=jac)

    projections = 0
    minimal_stats: dict = {}
    try:
        if partitioning is not None:
            (ok, status, message, nfev, t_out, y_out, minimal_stats, fault) = run_minimal(
                system, p, t0, t1, y0, times, options=partitioning,
                tol=min(stab.tolerance * 1e-3, 1e-15), method=solver, rtol=rtol, atol=atol,
                max_step=max_step)
        elif system.equations.constraints is not None and stab.method == "projection":
            (ok, status, message, nfev, t_out, y_out, recorded, fault, projections
             ) = _projected_run(system, segment, p, t0, t1, y0, times, stab.tolerance)
        else:
            ok, status, message, nfev, t_out, y_out, recorded, fault = segment(
                t0, t1, y0, times)
    except _AbortError:   # at the start: the solver's first evaluations failed
        ok, status, message, nfev = False, -1, "the right-hand side failed", 0
        start = times[times <= t0]
        t_out, y_out = start, np.repeat(y0[:, None], start.size, axis=1)
    wall = _time.perf_counter() - started
    error = None
    if not ok:
        if fault is None:
            fault = _numpy_fault(failure, solver.last, str(message), system.state_names)
        error = faults.diagnose(
            fault, state_names=system.state_names, t0=t0, y0=y0, groups=groups,
            mass=lambda t, y: system.rhs_function(float(t), np.asarray(y, float).tolist(),
                                                 p.tolist())[1],
            method=method, speed_names=[str(w) for w in system.equations.speeds])
        status, message = -1, str(error)
    stiff = (_stiffness_check(system, p, method, t0, t1, nfev, t_out, y_out, y0)
             if method not in IMPLICIT_METHODS and error is None else None)
    constraint_stats: dict = {} if stiff is None else {"stiffness": stiff}
    if system.equations.constraints is not None:
        pos, vel = measure(system, t_out, y_out, p)
        constraint_stats.update({"constraint_drift": {
            "position": pos, "velocity": vel,
            "stabilization": stab.method if partitioning is None else "minimal",
            "projections": projections, "tolerance": stab.tolerance,
            "formulation": "augmented" if partitioning is None else "minimal",
            **minimal_stats,
            **({"alpha": stab.alpha, "beta": stab.beta} if stab.method == "baumgarte"
               else {})},
            "initial_adjusted": adjusted})
    drift = _norm_drift(groups, y_out)
    if normalize_quaternions and y_out.size:
        y_out = y_out.copy()
        for idx in groups.values():
            y_out[idx] /= np.sqrt((y_out[idx] ** 2).sum(axis=0))
    values = {n: y_out[i] for i, n in enumerate(system.state_names)}
    outs = _outputs(system, t_out, y_out, p, partial=error is not None)
    for i, n in enumerate(system.output_names):
        if n not in values:
            values[n] = outs[:, i]
    result = _with_energy_balance(Result(
        t=t_out, values=values, state_names=system.state_names, success=bool(ok),
        status=int(status), message=str(message), nfev=int(nfev),
        parameters=dict(zip(model.parameter_values, p.tolist())),
        stats={"engine": engine, "method": method, "rtol": rtol, "atol": atol,
               "wall_time_s": wall, "max_step": max_step,
               **({"events": recorded} if evf is not None else {}),
               **({"jacobian": "fd" if jac is None else "analytic"}
                  if method in IMPLICIT_METHODS else {}),
               **({"quaternion_norm_drift": drift} if groups else {}),
               **constraint_stats},
        failure=error.to_dict() if error is not None else None))
    if error is not None:
        error.result = result
        if raise_on_failure:
            raise error
    return result


#: The Jacobians of the implicit methods (``simulate(..., jacobian=…)``).
JACOBIAN_CHOICES = ("auto", "analytic", "fd")
#: SciPy methods that use a Jacobian (given the analytic one, kidym.simulate.jacobian).
IMPLICIT_METHODS = ("Radau", "BDF", "LSODA")
#: Right-hand-side evaluations per step of the explicit methods.
_STAGES = {"DOP853": 12, "RK45": 6, "RK23": 3}
#: An explicit run this long is checked for stiffness (the Jacobian costs little then).
STIFF_CHECK_ABOVE = 20_000

_JACOBIANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def analytic_jacobian(eq: Equations) -> JacobianFunction:
    """The analytic Jacobian of ``eq``'s right-hand side (built once per equations)."""
    if eq not in _JACOBIANS:
        _JACOBIANS[eq] = JacobianFunction.build(eq)
    return _JACOBIANS[eq]


def _stiffness_check(system: NumpySystem, p: np.ndarray, method: str, t0: float, t1: float,
                     nfev: int, t_out: np.ndarray, y_out: np.ndarray,
                     y0: np.ndarray) -> dict | None:
    """After a long explicit run: is it stiff? ``ρ h > 2`` with ``ρ`` the spectral radius
    of the analytic Jacobian (at the last state) and ``h`` the mean step means the
    steps were held down by stability, not accuracy: say which method to use."""
    if nfev < STIFF_CHECK_ABOVE or method not in _STAGES:
        return None
    t_last = float(t_out[-1]) if t_out.size else t0
    y_last = y_out[:, -1] if t_out.size else y0
    steps = max(1.0, nfev / _STAGES[method])
    h = max(t_last - t0, 1e-300) / steps
    try:
        rho = stiffness(analytic_jacobian(system.equations)(t_last, y_last, p,
                                                             system.stabilization))
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if not (rho * h > 2.0):
        return None
    return {"spectral_radius": rho, "mean_step": h, "method": method,
            "hint": f"the motion is stiff (largest eigenvalue of the Jacobian |λ| = {rho:.3g} "
                    f"1/s at t = {t_last:.6g}; the {method} steps averaged {h:.3g} s, held "
                    "down by stability): use method='Radau' or 'BDF' (with the analytic "
                    "Jacobian), or the compiled engine's 'BDF'"}


def _projected_run(system: NumpySystem, segment, p: np.ndarray, t0: float, t1: float,
                   y0: np.ndarray, times: np.ndarray, tol: float) -> tuple:
    """Integrate from output time to output time; where the constraint drift exceeds
    ``tol`` there, project the state onto the constraints and restart from it.

    ``segment(ta, tb, ya, seg_times)`` integrates one stretch (events included) and
    returns ``(ok, status, message, nfev, t, y, events, fault)``.
    """
    stops = np.unique(np.concatenate([times[(times > t0) & (times < t1)], [t1]]))
    ts = [times[times <= t0]]
    ys = [np.repeat(y0[:, None], ts[0].size, axis=1)]
    events: dict = {}
    nfev, projections = 0, 0
    t, y = t0, y0
    ok, status, message = True, 0, "reached the end"
    fault = None
    for tb in stops:
        seg_times = times[(times > t) & (times <= tb)]
        try:
            ok, status, message, n, st, sy, ev, fault = segment(t, float(tb), y, seg_times)
        except _AbortError:   # the restarted solver's first evaluations failed
            ok, status, message = False, -1, "the right-hand side failed"
            break
        nfev += n
        for k, v in ev.items():
            events[k] = v if k not in events else (
                np.concatenate([events[k], v]) if isinstance(v, np.ndarray) else events[k] + v)
        st, sy = np.asarray(st, float), np.asarray(sy, float).reshape(len(y0), -1)
        if not ok or status != 0 or st.size == 0 or st[-1] < tb:
            ts.append(st)
            ys.append(sy)
            break
        y_end = sy[:, -1]
        _M, _F, block = system.constraint_block(tb, y_end, p)
        if max(constraint_drift(block)) > tol:
            y_end = project(system, float(tb), y_end, p, tol)
            sy = sy.copy()
            sy[:, -1] = y_end
            projections += 1
        ts.append(st)
        ys.append(sy)
        t, y = float(tb), y_end
    t_out = np.concatenate(ts)
    y_out = np.concatenate(ys, axis=1)
    return ok, status, message, nfev, t_out, y_out, events, fault, projections


def _outputs(system: NumpySystem, t: np.ndarray, y: np.ndarray, p: np.ndarray, *,
             partial: bool) -> np.ndarray:
    """Outputs at the output times, shape (n_t, n_out); in a partial result a row whose
    outputs cannot be evaluated (the state where the run failed) holds NaN in the
    outputs that cannot, as the compiled engine's (:meth:`NumpySystem.outputs_tolerant`)."""
    rows = []
    for k, tk in enumerate(t):
        try:
            rows.append(system.outputs(tk, y[:, k], p))
        except SimulationError:
            if not partial:
                raise
            rows.append(system.outputs_tolerant(tk, y[:, k], p))
    return np.array(rows, dtype=float).reshape(len(t), len(system.output_names))


def _numpy_fault(failure: SimulationError | None, solver, message: str,
                 state_names: Sequence[str]) -> faults.Fault:
    """The fault of a failed ``solve_ivp`` run: the right-hand side's own error where it
    failed (at its stage time and state), else the solver's time and state at its last
    accepted step, where it could not go on."""
    if failure is not None:
        y = np.array([failure.state[n] for n in state_names], dtype=float)
        return faults.Fault(failure.kind or faults.NON_FINITE, failure.reason,
                            float(failure.time), y, failure.hint)
    kind = faults.STEP_COLLAPSE if "step size" in message else faults.INTEGRATOR
    assert solver is not None   # it failed in a step: it was made
    return faults.Fault(kind, message.rstrip("."), float(solver.t),
                        np.asarray(solver.y, dtype=float))


def _with_energy_balance(result: Result) -> Result:
    """``result`` with ``stats["energy_balance"]`` (:mod:`kidym.simulate.energy`)."""
    balance = energy_balance(result)
    if balance is not None and not balance.available:
        result.stats["energy_balance"] = {"max_abs": None, "scale": None, "relative": None,
                                          "unavailable": balance.unavailable}
    elif balance is not None:
        result.stats["energy_balance"] = {"max_abs": balance.max_abs, "scale": balance.scale,
                                          "relative": balance.relative}
    return result
