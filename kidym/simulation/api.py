"""``kidym.simulate``: one run of a model, dispatched to an engine.

The dispatcher sits above the engines (:mod:`kidym.simulation.engine`): it checks the
options, derives the equations of a model, picks the engine (``auto``: compile when
it pays off), has the engine build its system, prepares the run once
(:func:`~kidym.simulation.spec.prepare_run`), has the engine integrate it and finishes
the result the same way for every engine (:func:`~kidym.simulation.finish.finish`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kidym.eom.constraints import Stabilization
from kidym.eom.equations import Equations
from kidym.eom.stored import derived
from kidym.errors import CompileError, RunInterrupted, SimulationError
from kidym.model.model import Model
from kidym.simulation import faults
from kidym.simulation.energy_monitor import monitor_run
from kidym.simulation.engine import Engine, engine_named, engine_of
from kidym.simulation.finish import finish, with_energy_balance
from kidym.simulation.minimal import Partitioning, formulation_of, require_minimal_form
from kidym.simulation.result import Result
from kidym.simulation.spec import (
    RunOptions,
    RunSpec,
    check_options,
    prepare_run,
    stabilization_of,
)
from kidym.simulation.watch import watching

if TYPE_CHECKING:
    from kidym.codegen.emit import CCode
    from kidym.simulation.choice import Choice

#: The NumPy method that ``auto`` runs for a compiled engine's method name.
NUMPY_METHOD = {"ERK8": "DOP853", "Fehlberg78": "DOP853", "ERK5": "RK45", "Adams": "LSODA"}

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
def simulate(system, *, t_end: float | None = None, t_start: float | None = None,
             initial: Mapping[str, float] | None = None,
             parameters: Mapping[str, float] | None = None,
             t_eval: Sequence[float] | None = None, n_points: int = 501,
             method: str = "DOP853", rtol: float = 1e-9, atol: float = 1e-12,
             max_step: float = np.inf, engine: str = "auto",
             raise_on_failure: bool = True, events: Sequence = (),
             quaternion_stabilization: float = 0.0,
             normalize_quaternions: bool = False,
             constraints: Stabilization | str = "projection",
             jacobian: str = "auto",
             formulation: str | Partitioning = "augmented",
             inputs: Mapping[object, object] | Callable | None = None,
             free: str | Sequence[str] | None = None,
             monitor_energy: bool = True) -> Result:
    """Integrate the equations of motion over time.

    Parameters
    ----------
    system : Model, Equations, NumpySystem or CompiledSystem
        What to simulate; a model is derived first; an engine's own system runs in it
        (a ``NumpySystem`` in NumPy unless ``engine="compiled"`` is asked for).
    t_end, t_start : float, optional
        Span; default the model's (``ВРЕМЯ``/``TIME`` or initial ``t(…)``).
    initial : mapping of str to float, optional
        Initial values by state name (``x``, ``x't``) overriding the model's; any
        state given nowhere starts at 0.
    free : str or sequence of str, optional
        For a model with constraints: coordinates and speeds whose *given* initial
        values the consistent start may change, as ``СВОБОДНЫЕ``/``FREE`` in the model
        declares (both count; a coordinate frees its speed too). Their given values
        are the start of the solve. A given value that the start would change and that
        neither declares free is a ``SimulationError`` naming it; a name that is not a
        coordinate or speed a ``KeyError``.
    inputs : mapping of str to callable or InputTable, or callable, optional
        Values of the model's external inputs (``ВХОДЫ := u;``), every one bound: a
        callable ``f(t, state) -> float`` (``state`` a dict of the state's names), an
        :class:`~kidym.simulation.inputs.InputTable` or a pair ``(times, values)`` (linear
        interpolation). One controller for several inputs: a key that is a tuple of names,
        ``{("u1", "u2"): f}``, or ``inputs=f`` alone for all of them in the order of
        ``ВХОДЫ``, ``f(t, state)`` returning their values as a sequence; see
        :mod:`kidym.simulation.inputs` and docs/guide.md.
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
        ``BDF``, ``Adams``; see ``docs/compiled.md``); ``auto`` (default): compiled
        when it pays off — the library is cached, or a probe of the run in NumPy over a
        short first slice, extrapolated, takes longer than generating and compiling
        the C — NumPy otherwise (a probe that reaches the end is the run; no C
        compiler, a NumPy-only method or option), saying why in
        ``result.stats["engine_choice"]`` (:mod:`kidym.simulation.choice`). The engines
        are looked up by name in :data:`kidym.simulation.engine.ENGINES`.
    raise_on_failure : bool
        Raise :class:`SimulationError` when integration fails (default), else return
        the partial result with ``success=False``.
    events : sequence of kidym.simulation.events.Event
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
        chain rule (:mod:`kidym.simulation.jacobian`; in C :mod:`kidym.codegen.jacobian_c`,
        a library built with ``jacobian=True``); ``fd`` — the integrator's own
        difference quotients; ``auto`` (default) — analytic where available (a compiled
        library passed in without it uses difference quotients).
        ``result.stats["jacobian"]`` says which was used.
    formulation : {"augmented", "minimal", "ali3"} or Partitioning
        For models with holonomic constraints: ``augmented`` (default) integrates all
        coordinates and speeds with ``M ẇ = F + Gᵀλ``, ``G ẇ = γ``; ``minimal`` only
        the independent coordinates and speeds, chosen by pivoting and re-chosen when
        the partition degrades (:mod:`kidym.simulation.minimal`; a
        :class:`~kidym.simulation.minimal.Partitioning` sets its condition limit). The
        minimal form runs in the NumPy engine (``engine="compiled"`` with it is a
        ``ValueError``, ``"auto"`` chooses NumPy and says so); it needs holonomic
        constraints on coordinates whose speeds are their rates, and no events.
        ``ali3`` steps as ``augmented`` away from singular positions of the loop and
        crosses them by the index-3 augmented Lagrangian with mass-orthogonal projections
        (Bayo & Ledesma; :mod:`kidym.simulation.passages`), in both engines, with the
        requirements of ``minimal``. An ``augmented`` run that reaches a singular
        position (:mod:`kidym.simulation.monitors`, or a singular augmented solve) goes
        on from its last sample before it with ``ali3`` where those requirements hold
        and the stabilization is projection
        (``stats["constraint_drift"]["formulation"]`` is then ``"augmented, then
        ali3"``, ``["formulation_choice"]`` says why); every other run that reaches
        one stops there with an error, and so does a run that starts at one.
    monitor_energy : bool
        The energy monitor (:mod:`kidym.simulation.energy_monitor`, both engines): a
        run of a conservative model (no explicit time, inputs, controls, dampers or
        non-potential forces) whose energy ``E − E(0)`` leaves the bound its tolerances
        allow (100 times the change of ``E`` that one step's allowed error can make)
        ends as a failure at the first output time past it, the result kept up to
        there. ``result.stats["energy_monitor"]`` says whether the run was monitored
        (and why not) and the largest ratio of the balance to its bound. ``False``
        turns the monitor off.

    Returns
    -------
    Result
        Arrays by name: coordinates, speeds, outputs and ``energy``.

    Raises
    ------
    SimulationError
        Singular mass matrix, a non-finite right-hand side, or integrator failure;
        the message names the time, the state and what to try.
    RunInterrupted
        Ctrl-C stopped the run (within a step, both engines; whatever
        ``raise_on_failure`` says): a ``KeyboardInterrupt`` whose ``.result`` is the
        partial result up to the time reached (:mod:`kidym.simulation.watch`). On a
        terminal a bar shows the model time reached and the time left.
    """
    if engine != "auto":
        engine_named(engine)   # (a name that is none: the error lists the valid names)
    check_options(t_start=t_start, t_end=t_end, n_points=n_points, rtol=rtol, atol=atol,
                  max_step=max_step, t_eval=t_eval, jacobian=jacobian)
    if isinstance(system, Model):
        system = derived(system)   # (stored in the cache when read from a file)
    eq = system if isinstance(system, Equations) else system.equations
    options = RunOptions(method=method, rtol=rtol, atol=atol, max_step=max_step,
                         raise_on_failure=raise_on_failure, events=tuple(events),
                         quaternion_stabilization=quaternion_stabilization,
                         normalize_quaternions=normalize_quaternions, jacobian=jacobian,
                         partitioning=formulation_of(formulation),
                         ali3=isinstance(formulation, str) and formulation == "ali3",
                         monitor_energy=bool(monitor_energy))
    if options.ali3:
        from kidym.simulation.passages import require_ali3

        owner = engine_of(system)
        require_ali3(eq, engine="compiled" if owner is not None and owner.name != "numpy"
                     else engine, events=options.events, constraints=constraints)
    prepare = functools.partial(prepare_run, parameters=parameters, initial=initial,
                                t_start=t_start, t_end=t_end, t_eval=t_eval,
                                n_points=n_points, constraints=stabilization_of(constraints),
                                inputs=inputs, free=free)
    chosen, why = _choose(system, eq, engine, options)
    spec = done = probed = own = None
    with watching() as watch:   # progress on a terminal; Ctrl-C stops the run (or probe)
        if chosen is None:   # auto, and only a probe decides
            chosen, why, spec, done, probed = _auto(system, eq, options, prepare)
            own = probed   # (the system of a probe that was the whole run)
        options = _options_for(chosen, options, engine)
        if done is not None and done.result is not None:   # the probe was the whole run
            result, error = done.result, done.error
        else:
            chosen.check(options, system)
            own, chosen, why, options = _system(
                chosen, system, eq, options, why, probed=probed,
                code=done.code if done is not None else None)
            spec = spec if spec is not None else prepare(own)
            watch.begin("simulating", spec.t0, spec.t1)
            result, error = chosen.run(own, spec, options)
            watch.close()
    if why:
        result.stats["engine_choice"] = why
    finish(result, eq.model, normalize_quaternions=normalize_quaternions)
    if error is None and options.monitor_energy:
        result, error = _monitor_energy(result, eq, own, spec, options)
    if error is not None:
        error.result = result
        if error.kind == faults.INTERRUPTED:
            raise RunInterrupted.of_run(error) from None
        if raise_on_failure:
            raise error
    return result


def _monitor_energy(result: Result, eq: Equations, system, spec: RunSpec,
                    options: RunOptions) -> tuple[Result, SimulationError | None]:
    """``(result, error)`` after the energy monitor
    (:mod:`kidym.simulation.energy_monitor`): the result cut at the first output time
    past the bound and its error, or ``result`` with its statistics and ``None``."""
    result, _check, error = monitor_run(result, eq, system, spec.p, rtol=options.rtol,
                                        atol=options.atol, method=options.method)
    if error is None:
        return result, None
    return with_energy_balance(result), error


def _choose(system, eq: Equations, engine: str, options: RunOptions
            ) -> tuple[Engine | None, str]:
    """The engine of this run and, for ``auto``, why it was chosen; ``None`` where only
    a probe of the run decides (:func:`_auto`)."""
    owner = engine_of(system)
    if options.partitioning is not None:
        require_minimal_form(eq)
        if options.events:
            raise ValueError("formulation='minimal' does not locate events (its restarts at "
                             "re-partitions are events of their own): use "
                             "formulation='augmented' for a run with events")
        if engine == "compiled" or (owner is not None and owner.name != "numpy"):
            raise ValueError("formulation='minimal' runs in the NumPy engine only: use "
                             "engine='numpy', or formulation='augmented' with the compiled "
                             "engine")
        if engine == "auto":
            return engine_named("numpy"), ("auto → numpy: formulation='minimal' runs in "
                                           "the NumPy engine only")
    if options.ali3 and engine == "auto":
        return engine_named("numpy"), ("auto → numpy: formulation='ali3' runs in the NumPy "
                                       "engine only")
    if owner is not None and (owner.name != "numpy" or engine == "auto"):
        return owner, ""   # a system built by an engine runs in it
    if engine != "auto":
        return engine_named(engine), ""
    from kidym.simulation.choice import forced

    choice = forced(eq, options)
    if choice is None:
        return None, ""
    return engine_named(choice.engine), f"auto → {choice.engine}: {choice.why}"


def _auto(system, eq: Equations, options: RunOptions, prepare
          ) -> tuple[Engine, str, RunSpec, Choice, object]:
    """``(engine, why, spec, choice, probed)`` of ``auto`` by a probe of the run in NumPy
    (:func:`kidym.simulation.choice.choose_engine`) on the NumPy system ``probed``: the
    run is prepared once, on that system, and that preparation serves the chosen
    engine (and the system, where NumPy is chosen)."""
    from kidym.simulation.choice import choose_engine

    numpy = engine_named("numpy")
    numpy_options = _options_for(numpy, options, "auto")
    numpy.check(numpy_options, system)
    ns = system if numpy.owns(system) else numpy.system(eq, numpy_options)
    spec = prepare(ns)
    choice = choose_engine(eq, options, lambda s: numpy.run(ns, s, numpy_options), spec,
                           python_bytes=len(ns.source.encode("utf-8")))
    return (engine_named(choice.engine), f"auto → {choice.engine}: {choice.why}", spec,
            choice, ns)


def _options_for(chosen: Engine, options: RunOptions, engine: str) -> RunOptions:
    """``auto`` running in NumPy runs the NumPy method of a compiled method's name."""
    if chosen.name == "numpy" and engine == "auto":
        return dataclasses.replace(options, method=NUMPY_METHOD.get(options.method,
                                                                    options.method))
    return options


def _system(chosen: Engine, system, eq: Equations, options: RunOptions, why: str, *,
            probed: object = None, code: CCode | None = None
            ) -> tuple[object, Engine, str, RunOptions]:
    """``(system, engine, why, options)``: ``system`` if it is the engine's own, else the
    NumPy system ``auto``'s probe ran (``probed``) where NumPy was chosen, else the one
    the engine builds (from ``code``, the C ``auto`` generated for its estimate, where
    given); under ``auto`` a model that does not compile runs in NumPy."""
    if chosen.owns(system):
        return system, chosen, why, options
    if probed is not None and chosen.owns(probed):
        return probed, chosen, why, options
    try:
        if code is not None:
            return chosen.system(eq, options, code=code), chosen, why, options
        return chosen.system(eq, options), chosen, why, options
    except CompileError as exc:
        if not why or exc.kind == "internal":
            raise
        numpy = engine_named("numpy")
        options = _options_for(numpy, options, "auto")
        numpy.check(options, system)
        why += f"; compiling failed, NumPy used instead ({exc})"
        if probed is None:
            probed = system if numpy.owns(system) else numpy.system(eq, options)
        return probed, numpy, why, options
