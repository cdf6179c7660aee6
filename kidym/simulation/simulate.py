"""Time simulation of the Cauchy form ``q̇ = B w + β``, ``M ẇ = F``."""

from __future__ import annotations

import dataclasses
import time as _time
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from kidym.eom.constraints import drift as constraint_drift
from kidym.eom.equations import Equations
from kidym.eom.events import (
    ERROR_TEST_CUT,
    MAX_ERROR_TEST_FAILURES,
    RESET,
    SMALL_ERROR_TEST_FAILURES,
    STORM_HINT,
    TERMINAL,
    all_events,
    storm_detail,
    switch_hint,
)
from kidym.errors import SimulationError
from kidym.simulation import faults
from kidym.simulation.compiled_methods import scipy_tolerances
from kidym.simulation.constrained import measure, project
from kidym.simulation.events import EventFunctions, crossed
from kidym.simulation.finish import assemble
from kidym.simulation.inputs import INPUT_FAULT, pieces
from kidym.simulation.jacobian import STIFF_CHECK_ABOVE, JacobianFunction, stiffness
from kidym.simulation.layout import quaternion_groups
from kidym.simulation.minimal import run_minimal
from kidym.simulation.monitors import loop_passage
from kidym.simulation.numpy_system import METHODS, AbortError, NumpySystem
from kidym.simulation.passages import (
    CONTINUED,
    CONTINUED_WHY,
    continuable,
    continue_run,
    run_ali3,
)
from kidym.simulation.result import Result
from kidym.simulation.spec import RunOptions, RunSpec
from kidym.simulation.watch import current as current_watch

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

#: The implicit methods (Radau, BDF, LSODA) hide or spread the failed attempts that the
#: error-test rule counts (Radau and BDF do not let a step grow after a rejection, so a
#: switch costs a run of steps that fail once or twice each; LSODA's attempts stay in
#: its Fortran): what they all show is the size of the accepted steps. Their step size
#: has collapsed when :data:`TINY_STEPS` steps shorter than ``SHORT_STEP * rtol`` of the
#: span fall within ``SHORT_STEP_WINDOW`` of the span — a step resolving the time a
#: thousand times finer than the accuracy asked of the state, again and again: a force
#: that switches many times within a thousandth of the span (``-1e9*sign(x)``), whose
#: steps across each switch shrink to ``tol/|Δf|``. A switch that is rare on the span
#: (``-sign(x)`` over 20 s) gives a few such steps in a window, or none.
SHORT_STEP = 1e-3
SHORT_STEP_WINDOW = 1e-3


#: The message of a NumPy run stopped on request (Ctrl-C).
STOPPED = "stopped on request"

#: The start of the message of a NumPy run whose step failed its error test
#: :data:`~kidym.eom.events.MAX_ERROR_TEST_FAILURES` times.
ERROR_TEST = "the error test failed"
#: The start of the message of a NumPy run of an implicit method stopped by the
#: short-step rule (:data:`SHORT_STEP`).
SHORT_STEPS = "the steps kept shrinking far below the time scale:"


def _watched(method: str) -> type:
    """SciPy's solver class ``method``, watched: its last instance is ``.last`` (the
    solver's own time and state when it fails); an abort in the right-hand side
    (:class:`AbortError`) fails the step instead of escaping, so that ``solve_ivp``
    returns the outputs up to the last accepted step; :data:`TINY_STEPS` steps in a
    row shorter than 10 ulps of ``t`` fail as a collapsed step size, and so does a
    step of an explicit Runge-Kutta method whose error test failed
    :data:`~kidym.eom.events.MAX_ERROR_TEST_FAILURES` times while it was cut as far as
    ARKODE cuts a step in as many failures (:data:`~kidym.eom.events.ERROR_TEST_CUT`;
    the compiled engine's rule, SUNDIALS' ``mxnef``; an attempt costs the method's
    ``n_stages`` evaluations). The implicit methods (Radau, BDF, LSODA) mix error-test and
    Newton failures in their evaluation count, or hide them: their step size has
    collapsed when :data:`TINY_STEPS` steps shorter than :data:`SHORT_STEP` ``* rtol`` of
    the span fall within :data:`SHORT_STEP_WINDOW` of the span."""
    import scipy.integrate

    base = getattr(scipy.integrate, method)
    # SciPy's RK23, RK45, DOP853: n_stages evaluations per attempt of a step
    stages = base.n_stages if method in _STAGES else 0
    # the cut of a step that failed MAX_ERROR_TEST_FAILURES times in ARKODE, at least
    deepest = ERROR_TEST_CUT ** (MAX_ERROR_TEST_FAILURES - SMALL_ERROR_TEST_FAILURES)

    class Watched(base):  # type: ignore[misc, valid-type]
        last = None
        #: whether the rules of a switching force apply, the error-test rule (explicit
        #: methods) or the short-step rule (implicit ones): not in the formulations that
        #: pass a loop's singular positions, whose own checks name what happens there
        error_tests = bool(stages) or method in IMPLICIT_METHODS
        #: the span of the run (a run restarted at events or output times makes a solver
        #: per stretch); None: the solver's own
        span: float | None = None

        def __init__(self, fun, t0, y0, t_bound, *args, **kwargs) -> None:
            super().__init__(fun, t0, y0, t_bound, *args, **kwargs)
            self.tiny = 0
            span = self.span if self.span is not None else abs(float(t_bound) - float(t0))
            # the short-step rule of the implicit methods: its step, its window, its count
            self.short = SHORT_STEP * float(np.max(kwargs.get("rtol", 1e-3))) * span
            self.window = SHORT_STEP_WINDOW * span
            self.shorts, self.shorts_from = 0, float(t0)
            type(self).last = self

        def _short_step(self, t: float) -> str | None:
            """The short-step rule after a step from ``t``: the message of a collapse."""
            if abs(self.t - t) >= self.short:
                return None
            if self.shorts == 0 or abs(self.t - self.shorts_from) > self.window:
                self.shorts, self.shorts_from = 0, t
            self.shorts += 1
            if self.shorts < TINY_STEPS:
                return None
            return (f"{SHORT_STEPS} {self.shorts} steps shorter than {self.short:.3g} "
                    f"(SHORT_STEP = {SHORT_STEP:g} times rtol times the span) within "
                    f"{abs(self.t - self.shorts_from):.3g} of the time (SHORT_STEP_WINDOW = "
                    f"{SHORT_STEP_WINDOW:g} of the span)")

        def step(self):
            t = self.t
            watch = current_watch()
            if watch is not None:
                if watch.stopped:   # Ctrl-C: the outputs up to the last step are kept
                    self.status = "failed"
                    return STOPPED
                watch.reached(t)
            y, nfev = self.y, self.nfev
            # the first try of the step (SciPy's RK: h_abs within the bounds, to t_bound)
            first = (min(max(self.h_abs, 10 * abs(np.spacing(t))), self.max_step,
                         abs(self.t_bound - t)) if self.error_tests and stages else 0.0)
            try:
                message = super().step()
            except AbortError:
                self.status = "failed"
                return "the right-hand side failed"
            failed = (self.nfev - nfev) // stages - 1 if self.error_tests and stages else 0
            if (self.status == "running" and failed >= MAX_ERROR_TEST_FAILURES
                    and abs(self.t - t) <= deepest * first):
                # where the compiled engine stops: the start of the step it cannot take
                self.t, self.y, self.status = t, y, "failed"
                return (f"{ERROR_TEST} {failed} times in one step (the limit is "
                        f"{MAX_ERROR_TEST_FAILURES}, MAX_ERROR_TEST_FAILURES)")
            if self.status == "running" and self.error_tests and not stages:
                short = self._short_step(t)
                if short is not None:
                    self.status = "failed"
                    return short
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

    The run stops with a fault when events accumulate (:class:`~kidym.simulation.faults.
    ZenoWatch`, as the compiled driver), when the resets leave the state at rest on an
    event surface (its function still exactly zero a small step later: an event storm,
    the compiled driver's rule, :func:`kidym.eom.events.storm_detail`), or an event
    function or reset cannot be evaluated; events recurring
    :data:`MAX_EVENTS_AT_ONE_TIME` times at one instant otherwise stop it too (a
    guard of this loop against recurrences the rule above does not see).

    Returns
    -------
    tuple
        ``(success, status, message, nfev, t, y, events, fault)``; ``events`` as the
        compiled engine's ``result.stats["events"]``; ``fault`` the
        :class:`~kidym.simulation.faults.Fault` that stopped the run, or ``None``.
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
    reset_applied = False   # whether their resets changed the state
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
                stuck = [k for k in range(len(g0)) if g0[k] == 0.0 and ahead[k] == 0.0]
                if reset_applied and stuck:
                    # the resets left the state at rest on an event surface: it would
                    # recur at once, again and again — the compiled driver's rule (-104)
                    fault = faults.Fault(faults.EVENT_STORM, storm_detail(evf.names[stuck[0]]),
                                         t, y, STORM_HINT)
                    break
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
                ts.append(np.array([te]))   # the results end at the event, its row kept
                ys.append(ye[:, None])
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
            reset_applied = any(evf.actions[k] == RESET for k in due)
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
    except AbortError:   # the right-hand side failed outside a step (``fun`` above)
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


def run_numpy(system: NumpySystem, spec: RunSpec, options: RunOptions
              ) -> tuple[Result, SimulationError | None]:
    """Integrate a prepared run with SciPy's ``solve_ivp`` (the NumPy engine's run).

    Returns the result (partial, for a failed run) and the error that stopped it, or
    ``None``; :func:`kidym.simulate` finishes the result and raises the error.
    """
    method, rtol, atol, max_step = options.method, options.rtol, options.atol, \
        options.max_step
    partitioning, jacobian = options.partitioning, options.jacobian
    ali3 = options.ali3
    # what SciPy's solver is asked for (DOP853: tighter, DOP853_TOL_FACTOR); the rest of
    # the run (projections, the step-collapse rules, the bridges of ali3, the energy
    # monitor) keeps the requested rtol. The minimal form (formulation="minimal") is
    # handed the requested tolerances: the factor was measured on the augmented route,
    # and near a singular position the minimal form's recovery of the dependent
    # coordinates can land on the other branch at some tolerances (the four-bar of
    # tests/simulation/test_singular_passages.py at rtol 1.1e-12 already did so before)
    solver_rtol, solver_atol = scipy_tolerances(method, rtol, atol)
    quaternion_stabilization = options.quaternion_stabilization
    model = system.equations.model
    stab = spec.stabilization
    if partitioning is not None and stab.method == "baumgarte":
        raise ValueError("constraints='baumgarte' stabilizes the augmented route; the "
                         "minimal form (formulation='minimal') holds Φ = 0 and Φ't = 0 at "
                         "every evaluation: leave constraints at 'projection'")
    t0, t1, times, p, y0, adjusted = (spec.t0, spec.t1, spec.times, spec.p, spec.y0,
                                      spec.adjusted)
    if system.equations.constraints is not None:
        system = dataclasses.replace(system, stabilization=stab)
    system = system.with_inputs(spec.inputs)
    failure: SimulationError | None = None
    groups = quaternion_groups(system)

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
            raise AbortError from exc

    run_events = all_events(system.equations, options.events)
    evf = EventFunctions.build(system.equations, run_events) if run_events else None
    if evf is not None and spec.inputs is not None:
        evf = dataclasses.replace(evf, inputs=spec.inputs)
    recorded: dict = {}
    solver = _watched(method)
    # the minimal form and ali3 stop or pass a loop's singular positions by their own
    # checks; an error test failing there is theirs to name
    solver.error_tests = solver.error_tests and not ali3 and partitioning is None
    solver.span = abs(t1 - t0)
    fault: faults.Fault | None = None
    started = _time.perf_counter()
    # implicit methods get the analytic Jacobian (kidym.simulation.jacobian); with external
    # inputs (whose derivatives by the state are unknown) SciPy's finite differences
    jac = None
    if (method in IMPLICIT_METHODS and jacobian != "fd" and partitioning is None
            and spec.inputs is None):
        jfun = analytic_jacobian(system.equations)

        def jac(t: float, y: np.ndarray) -> np.ndarray:
            return jfun(t, y, p, system.stabilization)

    def segment(ta: float, tb: float, ya: np.ndarray, seg_times: np.ndarray) -> tuple:
        if evf is None:
            from scipy.integrate import solve_ivp  # (a compiled run does without SciPy)

            sol = solve_ivp(fun, (ta, tb), ya, method=solver, t_eval=seg_times,
                            rtol=solver_rtol, atol=solver_atol, max_step=max_step,
                            **({"jac": jac} if jac is not None else {}))
            return sol.success, sol.status, sol.message, sol.nfev, sol.t, sol.y, {}, None
        return _solve_with_events(
            fun, evf, p, ta, tb, ya, seg_times, state_names=system.state_names,
            method=solver, rtol=solver_rtol, atol=solver_atol, max_step=max_step, jac=jac)

    if spec.inputs is not None and spec.inputs.breakpoints(t0, t1).size:
        segment = _restarting(segment, spec.inputs.breakpoints(t0, t1), spec.inputs.window)
    projections = 0
    minimal_stats: dict = {}
    continued = False
    try:
        if ali3:
            (ok, status, message, nfev, t_out, y_out, minimal_stats, fault) = run_ali3(
                system, p, t0, t1, y0, times, method=solver, rtol=rtol, atol=atol,
                max_step=max_step, tol=min(stab.tolerance * 1e-3, 1e-15))
        elif partitioning is not None:
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
    except AbortError:   # at the start: the solver's first evaluations failed
        ok, status, message, nfev = False, -1, "the right-hand side failed", 0
        start = times[times <= t0]
        t_out, y_out = start, np.repeat(y0[:, None], start.size, axis=1)
    if not ok and not len(t_out):
        # the first step failed (SciPy then returns lists, not arrays): the start
        start = times[times <= t0]
        t_out, y_out = start, np.repeat(y0[:, None], start.size, axis=1)
    wall = _time.perf_counter() - started
    error = None
    watch = current_watch()
    stopped = watch is not None and watch.stopped   # Ctrl-C: no passage check, no diagnosis
    if system.equations.constraints is not None and not ali3 and not stopped:
        # a passage through a singular position is the first cause of a failure too
        def refine(ta: float, tb: float, ya: np.ndarray, seg_times: np.ndarray) -> tuple:
            from scipy.integrate import solve_ivp

            sol = solve_ivp(lambda tt, yy: system.rhs(tt, yy, p), (ta, tb), ya,
                            method=method, t_eval=seg_times, rtol=solver_rtol,
                            atol=solver_atol, max_step=max_step)
            return sol.t, sol.y.T

        t_out, y_out, error = _passage_check(system, t_out, y_out, p, refine)
        if error is not None:
            ok, status, message = False, -1, str(error)
    if not ok and error is None:
        if stopped:   # Ctrl-C, whichever route was running
            last = solver.last
            t_last, y_last = ((float(last.t), np.asarray(last.y, dtype=float))
                              if last is not None else
                              (float(t_out[-1]), y_out[:, -1]) if len(t_out) else (t0, y0))
            fault = faults.Fault(faults.INTERRUPTED, STOPPED, t_last, y_last)
        if fault is None:
            fault = _numpy_fault(failure, solver.last, str(message), system.state_names,
                                 method)
        if failure is not None and failure.kind == INPUT_FAULT:   # the callback's own error
            error = failure
        else:
            error = faults.diagnose(
                fault, state_names=system.state_names, t0=t0, y0=y0, groups=groups,
                mass=lambda t, y: system.dynamics(t, y, p)[1],
                method=method, speed_names=[str(w) for w in system.equations.speeds])
        status, message = -1, str(error)
    if (error is not None and error.kind == faults.CONSTRAINTS and partitioning is None
        and not ali3 and len(t_out) and continuable(
            system.equations, events=run_events, stabilization=stab)):
        # a loop at a singular position (the monitor, or a singular augmented solve): go on
        # across it with the formulation that passes it
        solver.error_tests = False
        (ok, status, message, more, t_more, y_more, minimal_stats, fault
         ) = continue_run(system, p, float(t_out[-1]), y_out[:, -1], t1, times,
                          method=solver, rtol=rtol, atol=atol, max_step=max_step,
                          tol=min(stab.tolerance * 1e-3, 1e-15), reference=(t0, y0))
        minimal_stats["formulation_choice"] = CONTINUED_WHY.format(t=error.time)
        nfev += more
        t_out = np.concatenate([t_out, t_more])
        y_out = np.concatenate([y_out, y_more], axis=1)
        continued, error = True, None
        wall = _time.perf_counter() - started
        if fault is not None:
            error = faults.diagnose(
                fault, state_names=system.state_names, t0=t0, y0=y0, groups=groups,
                mass=lambda t, y: system.rhs_function(
                    float(t), np.asarray(y, float).tolist(), p.tolist())[1],
                method=method, speed_names=[str(w) for w in system.equations.speeds])
            status, message = -1, str(error)
    stiff = (_stiffness_check(system, p, method, t0, t1, nfev, t_out, y_out, y0)
             if method not in IMPLICIT_METHODS and error is None and not continued
             else None)
    constraint_stats: dict = {} if stiff is None else {"stiffness": stiff}
    if system.equations.constraints is not None:
        pos, vel = measure(system, t_out, y_out, p)
        constraint_stats.update({"constraint_drift": {
            "position": pos, "velocity": vel,
            "stabilization": ("ali3" if ali3 else stab.method if partitioning is None
                              else "minimal"),
            "projections": projections, "tolerance": stab.tolerance,
            "formulation": ("ali3" if ali3 else CONTINUED if continued
                            else "augmented" if partitioning is None else "minimal"),
            **minimal_stats,
            **({"alpha": stab.alpha, "beta": stab.beta} if stab.method == "baumgarte"
               else {})},
            "initial_adjusted": adjusted})
    outs = _outputs(system, t_out, y_out, p, partial=error is not None)
    stats = {"engine": "numpy", "method": method, "rtol": rtol, "atol": atol,
             "scipy_tolerances": ((rtol, atol) if partitioning is not None
                                  else (solver_rtol, solver_atol)),
             "wall_time_s": wall, "max_step": max_step,
             **({"events": recorded} if evf is not None else {}),
             **({"jacobian": "fd" if jac is None else "analytic"}
                if method in IMPLICIT_METHODS else {}),
             **constraint_stats}
    return assemble(model, t=t_out, Y=y_out, state_names=system.state_names,
                    output_names=system.output_names, outputs=outs, success=ok,
                    status=status, message=message, nfev=nfev, p=p, stats=stats,
                    error=error), error


def _restarting(segment: Callable[..., tuple], breaks: np.ndarray,
                window: list) -> Callable[..., tuple]:
    """``segment(ta, tb, ya, times)`` integrated piece by piece between the input tables'
    ``breaks`` (:func:`kidym.simulation.inputs.pieces`): a step never straddles a kink of
    a linear table or a jump of a held one, where the error estimate of a smooth method
    is wrong, and each piece starts afresh. Stops at the first piece that did not reach
    its end (a failure or a terminal event). While a piece runs, ``window`` holds its start
    (:attr:`kidym.simulation.inputs.InputBinding.window`): the tables are evaluated on the
    piece's own segment, extended past its end."""
    def run(ta: float, tb: float, ya: np.ndarray, times: np.ndarray) -> tuple:
        ts, ys, nfev, events = [], [], 0, {}
        result: tuple = ()
        for a, b, asked, kept in pieces(ta, tb, breaks, np.asarray(times, float)):
            window[0] = a
            try:
                result = segment(a, b, ya, asked)
            finally:
                window[0] = None
            ok, status, _message, n, t_out, y_out, recorded, _fault = result
            nfev += n
            reached = ok and status == 0 and t_out.size > kept and t_out[-1] == b
            keep = kept if reached else min(kept, t_out.size)
            ts.append(t_out[:keep])
            ys.append(y_out[:, :keep])
            for key, value in (recorded or {}).items():
                events[key] = (value if key not in events else list(events[key]) + list(value)
                               if isinstance(value, list) else np.concatenate([events[key],
                                                                               value]))
            if not reached or b == tb:
                break
            ya = y_out[:, -1]
        ok, status, message, _n, _t, _y, _r, fault = result
        return (ok, status, message, nfev, np.concatenate(ts),
                np.concatenate(ys, axis=1), events, fault)

    return run


def _passage_check(system, t: np.ndarray, y: np.ndarray, p: np.ndarray,
                   refine=None) -> tuple:
    """``(t, y, error)``: the samples up to a passage through a singular position of
    the loop and its error (:mod:`kidym.simulation.monitors`; ``refine`` integrates an
    interval again where the samples are too coarse to decide), or all and None."""
    passage = loop_passage(system, t, y.T, p, refine=refine)
    if passage is None:
        return t, y, None
    keep = slice(0, passage.k + 1)
    error = passage.error(system.state_names, y[:, passage.k],
                          system.equations.constraints.names)
    return t[keep], y[:, keep], error


class NumpyEngine:
    """The reference engine: SciPy's ``solve_ivp`` over the generated Python (the
    :class:`~kidym.simulation.engine.Engine` named ``numpy``)."""

    name = "numpy"

    def owns(self, system: object) -> bool:
        return isinstance(system, NumpySystem)

    def check(self, options: RunOptions, system: object) -> None:
        if options.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {options.method!r}")
        if options.quaternion_stabilization < 0:
            raise ValueError("quaternion_stabilization must be >= 0, got "
                             f"{options.quaternion_stabilization}")

    def system(self, eq: Equations, options: RunOptions) -> NumpySystem:
        return NumpySystem.build(eq)

    def run(self, system: NumpySystem, spec: RunSpec, options: RunOptions
            ) -> tuple[Result, SimulationError | None]:
        return run_numpy(system, spec, options)


#: The NumPy engine (:data:`kidym.simulation.engine.ENGINES`).
ENGINE = NumpyEngine()


#: SciPy methods that use a Jacobian (given the analytic one, kidym.simulation.jacobian).
IMPLICIT_METHODS = ("Radau", "BDF", "LSODA")
#: Right-hand-side evaluations per step of the explicit methods.
_STAGES = {"DOP853": 12, "RK45": 6, "RK23": 3}

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
        # (with external inputs: their values at that state, held fixed — the Jacobian
        # of the open loop, which is what the step size of a hint is about)
        pv = np.asarray(system._p(t_last, y_last, p), float)
        rho = stiffness(analytic_jacobian(system.equations)(t_last, y_last, pv,
                                                             system.stabilization))
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, OverflowError,
            SimulationError):
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
        except AbortError:   # the restarted solver's first evaluations failed
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
                 state_names: Sequence[str], method: str) -> faults.Fault:
    """The fault of a failed ``solve_ivp`` run of ``method``: the right-hand side's own
    error where it failed (at its stage time and state), else the solver's time and
    state at its last accepted step, where it could not go on."""
    if failure is not None:
        y = np.array([failure.state[n] for n in state_names], dtype=float)
        return faults.Fault(failure.kind or faults.NON_FINITE, failure.reason,
                            float(failure.time), y, failure.hint)
    switch = message.startswith((ERROR_TEST, SHORT_STEPS))
    kind = (faults.STEP_COLLAPSE if "step size" in message or switch
            else faults.INTEGRATOR)
    hint = switch_hint(method) if switch else ""
    if message.startswith(SHORT_STEPS):   # the steps shrink so at a singular force too
        hint += ("; a force singular at this time (such as 1/(t - t*)) shrinks the steps "
                 "the same way: check the model there")
    assert solver is not None   # it failed in a step: it was made
    return faults.Fault(kind, message.rstrip("."), float(solver.t),
                        np.asarray(solver.y, dtype=float), hint)
