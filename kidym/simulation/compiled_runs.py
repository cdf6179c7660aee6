"""The compiled engine's runs: a :class:`~kidym.simulation.compiled.CompiledSystem`
integrated by its library's loop (``run_compiled``: the restarts at the inputs' breakpoints,
the passage check of a loop and its continuation by ``formulation="ali3"``, the
failure reports), the result assembled from what the loop returns (``to_result``,
``with_constraints``), the stiffness hint, and the engine registered for
:func:`kidym.simulate` (``ENGINE``). The system itself — building, loading and calling
the library — is :mod:`kidym.simulation.compiled`.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import time as _time

import numpy as np

from kidym.codegen.emit import CCode
from kidym.eom.constraints import Stabilization
from kidym.eom.equations import Equations
from kidym.eom.events import MAX_ERROR_TEST_FAILURES, STORM_HINT, storm_detail, switch_hint
from kidym.errors import SimulationError
from kidym.simulation import compiled_inputs, faults
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.compiled_calls import NOT_FINITE
from kidym.simulation.compiled_methods import COMPILED_METHODS, METHOD_ALIASES, wants_jacobian
from kidym.simulation.events import states_after
from kidym.simulation.finish import assemble
from kidym.simulation.inputs import InputBinding, pieces
from kidym.simulation.result import Result
from kidym.simulation.spec import RunOptions, RunSpec

#: SUNDIALS failures in which the step size has shrunk to nothing, and what they mean.
_STEP_COLLAPSE_FLAGS = {
    "ERR_FAILURE": f"the error test failed {MAX_ERROR_TEST_FAILURES} times in one step "
                   "(MAX_ERROR_TEST_FAILURES) or at the smallest step",
    "CONV_FAILURE": "the corrector failed to converge repeatedly or at the smallest step",
    "TOO_MUCH_WORK": "the largest number of steps was taken before the next output time",
}


def _fault(system: CompiledSystem, raw: dict) -> faults.Fault:
    """What the driver saw when it stopped with a negative status (``driver.c``)."""
    status, t, y = raw["status"], raw["fail_t"], np.array(raw["fail_y"], dtype=float)
    if status == -108:
        return faults.Fault(faults.INTERRUPTED, raw["message"], t, y)
    if status == -201:
        return faults.Fault(faults.SINGULAR, "the mass matrix is singular", t, y)
    if status == -202:
        return faults.Fault(faults.NON_FINITE, NOT_FINITE, t, y)
    if status == -203:
        return faults.Fault(faults.STEP_COLLAPSE, "the right-hand side was evaluated 10000 "
                            "times in a row within 16 ulps of t: the steps no longer "
                            "advance the time", t, y)
    if status == -106:
        return faults.Fault(
            faults.CONSTRAINTS, "the state could not be projected back onto the constraints "
            "(Newton did not converge, or the constraint Jacobian lost rank)", t, y,
            "the mechanism may pass a dead-centre (locking) position here; tighten "
            "rtol/atol, or use constraints='baumgarte'")
    if status == -104:  # message "event <k>"
        name = system.event_names[int(raw["message"].split()[-1])]
        return faults.Fault(faults.EVENT_STORM, storm_detail(name), t, y, STORM_HINT)
    if status == -105:  # message "<events in the run> <its first instant> <t_inf>"
        count, start, t_inf = raw["message"].split()
        names = [system.event_names[k] for tt, k in zip(raw["events_t"], raw["events_k"])
                 if tt > float(start)] or [system.event_names[k] for k in raw["events_k"][-1:]]
        return faults.zeno_fault(names, t, y, count=int(count), window_start=float(start),
                                 t_inf=float(t_inf))
    flag = raw["message"]
    for key, meaning in _STEP_COLLAPSE_FLAGS.items():
        if key in flag:
            return faults.Fault(faults.STEP_COLLAPSE, f"{flag}: {meaning}", t, y,
                                switch_hint(raw["method"]) if key == "ERR_FAILURE" else "")
    return faults.Fault(faults.INTEGRATOR, f"{flag} (status {status})", t, y)


def _control_fault(system: CompiledSystem, fault: faults.Fault, p: np.ndarray
                   ) -> faults.Fault:
    """The C solve of the controls failed (``kd_controlled``, reported as a singular
    matrix): name the programmed constraints the controls cannot reach there, as the
    NumPy engine does (:func:`kidym.eom.controls.solve_controls`)."""
    from kidym.eom.controls import ControlSolveError, solve_controls
    from kidym.eom.controls import split as split_controls

    ctl = system.equations.controls
    try:
        _qdot, M, F = system.evaluate(fault.t, fault.y, p)
        solve_controls(M, *split_controls(F, system.code.n_w, ctl.r, ctl.s))
    except ControlSolveError as exc:
        if not exc.unreachable:
            return fault
        names = ", ".join(f"`{ctl.names[i]}`" for i in exc.unreachable)
        return faults.Fault(
            faults.CONSTRAINTS, f"the controls cannot reach a programmed constraint ({names})",
            fault.t, fault.y,
            "the controls of `НЕИЗВЕСТНЫЕ` no longer change the acceleration of the "
            "programmed constraint named here independently of the others (a singular "
            "configuration of the mechanism, or a path that leaves the workspace); change "
            "the path or the controls")
    except (SimulationError, ValueError, np.linalg.LinAlgError):
        return fault
    return fault


def _failure(system: CompiledSystem, raw: dict, p: np.ndarray) -> SimulationError:
    """The :class:`SimulationError` of a failed run, its cause named by
    :func:`kidym.simulation.faults.diagnose`."""
    fault = _fault(system, raw)
    if raw["status"] == -201 and system.equations.controls is not None:
        fault = _control_fault(system, fault, p)
    elif raw["status"] == -201 and system.equations.constraints is not None:
        from kidym.simulation.monitors import augmented_fault

        try:
            fault = augmented_fault(fault, system.evaluate(fault.t, fault.y, p)[1])
        except (ValueError, np.linalg.LinAlgError):
            pass
    return faults.diagnose(
        fault, state_names=system.state_names, t0=raw["t0"], y0=raw["y0"],
        mass=lambda t, y: system.evaluate(t, y, p)[1],
        groups=faults.quaternion_indices(system.state_names, system.equations.model),
        method=raw["method"], speed_names=[str(w) for w in system.equations.speeds],
        constrained=system.equations.constraints is not None)


def to_result(system: CompiledSystem, raw: dict, p: np.ndarray, *, rtol: float, atol: float,
              max_step: float, extra: dict | None = None,
              error: SimulationError | None = None) -> Result:
    """A :class:`Result` from the raw output of :meth:`CompiledSystem.integrate`.

    A failed run (negative status) gives the partial result up to the failure, with
    ``failure`` from ``error`` (computed here when not given).
    """
    t, Y = raw["t"], raw["y"]
    if raw["status"] == 1 and raw["events_t"].size and (not t.size
                                                         or t[-1] < raw["events_t"][-1]):
        # a terminal event: the results end at it, its row kept (as the NumPy engine's)
        t = np.append(t, raw["events_t"][-1])
        Y = np.vstack([Y, raw["events_y"][-1]])
    outs = system.outputs_at(t, Y, p)
    status = raw["status"]
    events = {"t": raw["events_t"].copy(),
              "name": [system.event_names[k] for k in raw["events_k"]],
              "state": raw["events_y"].copy(),
              # (status -105: the run stopped on accumulating events before their resets)
              "state_after": states_after(
                  raw["events_t"], raw["events_k"], raw["events_y"],
                  system.code.event_actions, lambda k, tk, yk: system.reset_at(k, tk, yk, p),
                  last_applied=status != -105)}
    stats = {"engine": "compiled", "method": raw["method"],
             "integrator": COMPILED_METHODS[raw["method"]][1], "rtol": rtol, "atol": atol,
             "wall_time_s": raw["wall_time_s"], "max_step": max_step, "nsteps": raw["nsteps"],
             "events": events, "library": str(system.path),
             "build_time_s": system.build_time_s, **(extra or {})}
    if raw["method"] == "ERK8":
        stats["arkode_tolerances"] = raw["arkode_tolerances"]
    elif raw["method"] in ("BDF", "Adams"):
        # CVODE is asked for tighter tolerances (compiled_methods.BDF_TOL_FACTOR, …)
        stats["cvode_tolerances"] = raw["arkode_tolerances"]
    if raw.get("jacobian"):
        # BDF's Newton matrix: the analytic Jacobian or CVODE's difference quotients
        # (their evaluations of f are part of nfev, and counted apart here)
        stats["jacobian"] = raw["jacobian"]
        stats["njev"] = raw["njev"]
        stats["nfev_jacobian"] = raw["nfev_jacobian"]
    if raw["output_mode"]:
        stats["output_mode"] = raw["output_mode"]
        stats["extension_fallbacks"] = raw["extension_fallbacks"]
    message = raw["message"] or ("reached the end" if status == 0 else "")
    if status < 0 and error is None:
        error = _failure(system, raw, p)
    if error is not None:
        message = str(error)
    return assemble(system.equations.model, t=t, Y=Y.T, state_names=system.state_names,
                    output_names=system.output_names, outputs=outs,
                    success=status in (0, 1), status=0 if status == 0 else (
                        1 if status == 1 else -1),
                    message=message, nfev=raw["nfev"], p=p, stats=stats, error=error)


def _passage_check(system: CompiledSystem, raw: dict, p: np.ndarray, *, method: str,
                   rtol: float, atol: float, max_step: float) -> tuple:
    """``(raw, error)``: the run's samples up to a passage through a singular position of
    the loop and its error (:mod:`kidym.simulation.monitors`, the NumPy engine's rule; an
    interval whose samples are too coarse to decide is integrated again, finer), or
    ``raw`` and None."""
    from kidym.simulation.monitors import loop_passage

    def refine(ta: float, tb: float, ya: np.ndarray, times: np.ndarray) -> tuple:
        sub = system.integrate(ya, p, times, t0=ta, method=method, rtol=rtol, atol=atol,
                               max_step=max_step)
        return sub["t"], sub["y"]

    passage = loop_passage(system, raw["t"], raw["y"], p, refine=refine)
    if passage is None:
        return raw, None
    k = passage.k
    error = passage.error(system.state_names, raw["y"][k],
                          system.equations.constraints.names)
    keep = raw["events_t"] <= raw["t"][k]
    return dict(raw, t=raw["t"][:k + 1], y=raw["y"][:k + 1], status=-107,
                events_t=raw["events_t"][keep], events_k=raw["events_k"][keep],
                events_y=raw["events_y"][keep]), error


def _continued(system: CompiledSystem, raw: dict, p: np.ndarray, *, t1: float,
               times: np.ndarray, stab: Stabilization, method: str, rtol: float,
               atol: float, max_step: float) -> tuple | None:
    """``(raw, error, stats)``: a run cut at a passage through a singular position
    (``raw``, its last sample before it) continued with ``formulation="ali3"``
    (:func:`kidym.simulation.passages.continue_run`), or None where that formulation
    does not apply (events, velocity constraints, speeds other than rates)."""
    from kidym.simulation.passages import CONTINUED_WHY, compiled_phase, continuable, continue_run

    if system.event_names or not len(raw["t"]) or not continuable(
            system.equations, events=(), stabilization=stab):
        return None
    t_from, passage_t = float(raw["t"][-1]), float(raw["t"][-1])
    started = _time.perf_counter()
    ok, _status, message, nfev, t_more, y_more, stats, fault = continue_run(
        system, p, t_from, raw["y"][-1], t1, times, method=method, rtol=rtol, atol=atol,
        max_step=max_step, tol=min(stab.tolerance * 1e-3, 1e-15), phase=compiled_phase,
        reference=(raw["t0"], raw["y0"]))
    stats["formulation_choice"] = CONTINUED_WHY.format(t=passage_t)
    raw = dict(raw, t=np.concatenate([raw["t"], t_more]),
               y=np.concatenate([raw["y"], np.ascontiguousarray(y_more.T)]),
               status=0 if ok else -1, message="" if ok else message,
               nfev=raw["nfev"] + nfev,
               wall_time_s=raw["wall_time_s"] + _time.perf_counter() - started)
    error = None
    if fault is not None:
        raw.update(fail_t=fault.t, fail_y=fault.y)
        error = faults.diagnose(
            fault, state_names=system.state_names, t0=raw["t0"], y0=raw["y0"],
            mass=lambda t, y: system.evaluate(t, y, p)[1],
            groups=faults.quaternion_indices(system.state_names, system.equations.model),
            method=method, speed_names=[str(w) for w in system.equations.speeds],
            constrained=True)
    return raw, error, stats


def run_compiled(system: CompiledSystem, *, t0: float, t1: float, y0: np.ndarray,
                 p: np.ndarray, times: np.ndarray, method: str = "ERK8",
                 rtol: float = 1e-9, atol: float = 1e-12, max_step: float = np.inf,
                 extra: dict | None = None, constraints: Stabilization | None = None,
                 jacobian: str = "auto", inputs: InputBinding | None = None,
                 breaks: np.ndarray | None = None) -> tuple[Result, SimulationError | None]:
    """Integrate with the compiled loop: the result (partial, for a failed run) and the
    error that stopped it, or ``None``.

    ``inputs``: the run's external inputs, bound to the library for this thread while it
    runs (:mod:`kidym.simulation.compiled_inputs`); a callback's exception is the error.
    The loop restarts at the breakpoints of their tables (``breaks``, :func:`_integrate`).

    With holonomic constraints, ``y0`` must be consistent already
    (:func:`kidym.simulation.spec.prepare_run`); ``constraints`` is the stabilization
    (default projection), and the result gets the multipliers ``λf`` and
    ``stats["constraint_drift"]`` as the NumPy engine's does.
    """
    if inputs is not None:
        with compiled_inputs.bound(system.lib, inputs) as held:
            result, error = run_compiled(system, t0=t0, t1=t1, y0=y0, p=p, times=times,
                                         method=method, rtol=rtol, atol=atol,
                                         max_step=max_step, extra=extra,
                                         constraints=constraints, jacobian=jacobian,
                                         breaks=inputs.breakpoints(t0, t1))
        if held.interrupt is not None:   # Ctrl-C in a callback: the run stopped, raise it
            raise held.interrupt
        if held.error is not None:   # the callback's own error, not the NaN it left
            return dataclasses.replace(result, message=str(held.error),
                                       failure=held.error.to_dict()), held.error
        return result, error
    cons = system.equations.constraints
    stab = constraints if constraints is not None else Stabilization()
    if cons is not None:
        system.set_stabilization(stab)
    raw = _integrate(system, y0, p, times, t0=t0, t1=t1, method=method, rtol=rtol,
                     atol=atol, max_step=max_step, jacobian=jacobian, breaks=breaks)
    error = _failure(system, raw, p) if raw["status"] < 0 else None
    ali3_stats: dict = {}
    if cons is not None and raw["status"] != -108:
        # a passage through a singular position is the first cause of a failure too
        raw_kept, passage = _passage_check(system, raw, p, method=method, rtol=rtol,
                                           atol=atol, max_step=max_step)
        if passage is not None:
            raw, error = raw_kept, passage
        if error is not None and error.kind == faults.CONSTRAINTS:
            # a loop at a singular position (the monitor, or a singular augmented
            # solve): go on across it with the formulation that passes it
            continued = _continued(system, raw, p, t1=t1, times=times, stab=stab,
                                   method=method, rtol=rtol, atol=atol, max_step=max_step)
            if continued is not None:
                raw, error, ali3_stats = continued
    result = to_result(system, raw, p, rtol=rtol, atol=atol, max_step=max_step, extra=extra,
                       error=error)
    result = with_constraints(system, raw, p, stab, result)
    if ali3_stats:
        from kidym.simulation.passages import CONTINUED

        result.stats["constraint_drift"].update({"formulation": CONTINUED, **ali3_stats})
    elif "constraint_drift" in result.stats:   # (the same key as the NumPy engine's)
        result.stats["constraint_drift"].setdefault("formulation", "augmented")
    if error is None and not ali3_stats:
        stiff = stiffness_check(system, raw, p)
        if stiff is not None:
            result.stats["stiffness"] = stiff
    return result, error


#: Counts of the raw output that add up over the pieces of a restarted run.
_SUMMED = ("nfev", "nsteps", "extension_fallbacks", "projections", "njev", "nfev_jacobian")


def _integrate(system: CompiledSystem, y0: np.ndarray, p: np.ndarray, times: np.ndarray, *,
               t0: float, t1: float, breaks: np.ndarray | None, **options) -> dict:
    """:meth:`CompiledSystem.integrate`, restarted at ``breaks`` (the input tables'
    breakpoints, :func:`kidym.simulation.inputs.pieces`) so that no step straddles a kink
    or a jump (while a piece runs, the library evaluates the tables on its segment,
    ``kidym_input_window``): the pieces' outputs, events and counts joined into one raw
    output; it stops at the first piece that did not reach its end."""
    if breaks is None or not breaks.size:
        return system.integrate(y0, p, times, t0=t0, **options)
    joined: dict = {}
    window = system.lib.kidym_input_window
    window.argtypes, window.restype = [ctypes.c_double], None
    for a, _b, asked, kept in pieces(t0, t1, breaks, np.asarray(times, float)):
        window(a)
        try:
            raw = system.integrate(y0, p, asked, t0=a, **options)
        finally:
            window(math.nan)
        reached = raw["status"] == 0 and len(raw["t"]) > kept
        keep = kept if reached else min(kept, len(raw["t"]))
        piece = {**raw, "t": raw["t"][:keep], "y": raw["y"][:keep]}
        if not joined:
            joined = piece
        else:
            for key in ("t", "y", "events_t", "events_k", "events_y"):
                joined[key] = np.concatenate([joined[key], piece[key]])
            for key in _SUMMED:
                joined[key] += piece[key]
            joined.update({k: piece[k] for k in ("status", "message", "fail_t", "fail_y")})
            joined["wall_time_s"] += piece["wall_time_s"]
        if not reached:
            break
        y0 = raw["y"][-1]
    return joined


def simulate_compiled(system: CompiledSystem, *, raise_on_failure: bool = True,
                      **run) -> Result:
    """:func:`run_compiled`, raising the error of a failed run (unless
    ``raise_on_failure=False``: then its partial result is returned).

    Raises
    ------
    SimulationError
        Singular mass matrix, a non-finite right-hand side, or integrator failure, with
        the time and state where it happened.
    """
    result, error = run_compiled(system, **run)
    if error is not None:
        error.result = result
        if raise_on_failure:
            raise error
    return result


class CompiledEngine:
    """The compiled engine: generated C, a cached shared library, the integration loop
    on SUNDIALS (the :class:`~kidym.simulation.engine.Engine` named ``compiled``)."""

    name = "compiled"

    def owns(self, system: object) -> bool:
        return isinstance(system, CompiledSystem)

    def check(self, options: RunOptions, system: object) -> None:
        if options.quaternion_stabilization:
            raise ValueError("quaternion_stabilization is applied by the NumPy engine only: "
                             "use engine='numpy', or normalize_quaternions=True")
        if options.events and self.owns(system):
            raise ValueError("pass the events to CompiledSystem.build (they are compiled in)")

    def system(self, eq: Equations, options: RunOptions, *, code: CCode | None = None
               ) -> CompiledSystem:
        """The compiled system of ``eq`` for these options; ``code``: its C where the
        caller has generated it (``auto``'s estimate), not generated again."""
        # BDF's Newton matrix: the analytic Jacobian goes into the library
        return CompiledSystem.build(eq, events=options.events,
                                    jacobian=wants_jacobian(eq, options), code=code)

    def run(self, system: CompiledSystem, spec: RunSpec, options: RunOptions
            ) -> tuple[Result, SimulationError | None]:
        extra = ({"initial_adjusted": spec.adjusted}
                 if system.equations.constraints is not None else {})
        if options.ali3 and spec.inputs is not None:
            # (the bridges evaluate the library: its inputs bound for this thread)
            with compiled_inputs.bound(system.lib, spec.inputs) as held:
                result, error = run_compiled_ali3(system, spec, options, extra)
            if held.interrupt is not None:
                raise held.interrupt
            return result, held.error or error
        if options.ali3:
            return run_compiled_ali3(system, spec, options, extra)
        return run_compiled(system, t0=spec.t0, t1=spec.t1, y0=spec.y0, p=spec.p,
                            times=spec.times, method=options.method, rtol=options.rtol,
                            atol=options.atol, max_step=options.max_step, extra=extra,
                            constraints=spec.stabilization, jacobian=options.jacobian,
                            inputs=spec.inputs)


def run_compiled_ali3(system: CompiledSystem, spec: RunSpec, options: RunOptions,
                      extra: dict) -> tuple[Result, SimulationError | None]:
    """``formulation="ali3"`` in the compiled engine: the augmented run in the compiled
    loop between singular positions, the bridges across them by the index-3 augmented
    Lagrangian over the library's evaluations (:func:`kidym.simulation.passages.run_ali3`
    with :func:`~kidym.simulation.passages.compiled_phase`)."""
    from kidym.simulation.passages import compiled_phase, run_ali3

    stab = spec.stabilization
    system.set_stabilization(stab)
    method = METHOD_ALIASES.get(options.method, options.method)
    started = _time.perf_counter()
    ok, _status, message, nfev, t_out, y_out, stats, fault = run_ali3(
        system, spec.p, spec.t0, spec.t1, spec.y0, spec.times, method=method,
        rtol=options.rtol, atol=options.atol, max_step=options.max_step,
        tol=min(stab.tolerance * 1e-3, 1e-15), phase=compiled_phase)
    wall = _time.perf_counter() - started
    Y = np.ascontiguousarray(y_out.T)
    raw = {"status": 0 if ok else -1, "message": "" if ok else message, "t": t_out,
           "y": Y, "nfev": nfev, "nsteps": 0, "events_t": np.empty(0),
           "events_k": np.empty(0, dtype=np.intc), "events_y": np.empty((0, system.n_y)),
           "fail_t": spec.t0 if fault is None else fault.t,
           "fail_y": spec.y0 if fault is None else fault.y, "wall_time_s": wall,
           "method": method, "output_mode": "", "extension_fallbacks": 0,
           "projections": 0, "arkode_tolerances": (options.rtol, options.atol),
           "t0": spec.t0, "y0": spec.y0, "jacobian": ""}
    error = None
    if fault is not None:
        error = faults.diagnose(
            fault, state_names=system.state_names, t0=spec.t0, y0=spec.y0,
            mass=lambda t, y: system.evaluate(t, y, spec.p)[1],
            groups=faults.quaternion_indices(system.state_names, system.equations.model),
            method=method, speed_names=[str(w) for w in system.equations.speeds],
            constrained=True)
    result = to_result(system, raw, spec.p, rtol=options.rtol, atol=options.atol,
                       max_step=options.max_step, extra=extra, error=error)
    result = with_constraints(system, raw, spec.p, stab, result)
    result.stats["constraint_drift"].update(
        {"stabilization": "ali3", "formulation": "ali3", **stats})
    return result, error


#: The compiled engine (:data:`kidym.simulation.engine.ENGINES`).
ENGINE = CompiledEngine()


#: The explicit methods of the compiled engine, whose steps stability may hold down.
EXPLICIT_METHODS = ("ERK8", "Fehlberg78", "ERK5")


def central_jacobian(system: CompiledSystem, t: float, y: np.ndarray,
                     p: np.ndarray) -> np.ndarray:
    """``∂ẏ/∂y`` by central differences of the compiled right-hand side (the stiffness
    check of a library built without the analytic Jacobian; ``2 n_y`` evaluations)."""
    c = system.constants(p)
    J = np.empty((y.size, y.size))
    for k in range(y.size):
        h = 1e-6 * max(1.0, abs(y[k]))
        e = np.zeros(y.size)
        e[k] = h
        J[:, k] = (system.rhs(t, y + e, p, c) - system.rhs(t, y - e, p, c)) / (2 * h)
    return J


def stiffness_check(system: CompiledSystem, raw: dict, p: np.ndarray) -> dict | None:
    """After a long explicit run (more than ``STIFF_CHECK_ABOVE`` evaluations): were
    its steps held down by stability? ``ρ h > 2``, with ``ρ`` the spectral radius of
    ``∂ẏ/∂y`` at the last output (the library's analytic Jacobian, else central
    differences of its right-hand side) and ``h`` the mean step, says so and names
    ``BDF`` — the test of the NumPy engine (:func:`kidym.simulation.simulate.run_numpy`)."""
    from kidym.simulation.jacobian import STIFF_CHECK_ABOVE, stiffness

    method = raw["method"]
    if method not in EXPLICIT_METHODS or raw["nfev"] < STIFF_CHECK_ABOVE or not raw["nsteps"]:
        return None
    t_last = float(raw["t"][-1]) if len(raw["t"]) else raw["t0"]
    y_last = raw["y"][-1] if len(raw["t"]) else raw["y0"]
    h = max(t_last - raw["t0"], 1e-300) / raw["nsteps"]
    try:
        J = (system.jacobian(t_last, y_last, p) if system.has_jacobian
             else central_jacobian(system, t_last, np.asarray(y_last, float), p))
    except (SimulationError, np.linalg.LinAlgError, ValueError):
        return None
    rho = stiffness(J)
    if not (rho * h > 2.0):
        return None
    return {"spectral_radius": rho, "mean_step": h, "method": method,
            "jacobian": "analytic" if system.has_jacobian else "central differences",
            "hint": f"the motion is stiff (largest eigenvalue of the Jacobian |λ| = {rho:.3g} "
                    f"1/s at t = {t_last:.6g}; the {method} steps averaged {h:.3g} s, held "
                    "down by stability): use method='BDF' (CVODE, with the analytic "
                    "Jacobian; kidym run --method BDF)"}


def with_constraints(system: CompiledSystem, raw: dict, p: np.ndarray, stab: Stabilization,
                      result: Result) -> Result:
    """``result`` with the multipliers ``λf`` and the constraint drift (a model with
    constraints; unchanged otherwise)."""
    cons = system.equations.constraints
    if system.equations.controls is not None:
        u = system.controls_at(raw["t"], raw["y"], p)
        for i, name in enumerate(system.equations.controls.control_names):
            result.values[name] = u[:, i]
    if cons is None:
        return result
    from kidym.simulation.constrained import measure

    lam = system.multipliers_at(raw["t"], raw["y"], p, stab)
    for i, name in enumerate(cons.multiplier_names):
        result.values[name] = lam[:, i]
    pos, vel = measure(system, raw["t"], raw["y"].T, p)
    result.stats["constraint_drift"] = {
        "position": pos, "velocity": vel, "stabilization": stab.method,
        "projections": raw["projections"], "tolerance": stab.tolerance,
        **({"alpha": stab.alpha, "beta": stab.beta} if stab.method == "baumgarte"
           else {})}
    return result
