"""Batch runs: many initial conditions, parameter sets or inputs of one model at once.

The runs go to a thread pool, one compiled integration per task; ``ctypes``
releases the GIL for the foreign call, so they run in parallel on all cores. Each run
is prepared as one run is (:func:`~kidym.simulation.spec.prepare_run`) and integrated
as :func:`kidym.simulate` integrates it in the compiled engine
(:func:`~kidym.simulation.compiled_runs.run_compiled`), its external inputs bound to
the library for its own thread; each run that reaches its end then goes through the
energy monitor as one run does (:func:`~kidym.simulation.energy_monitor.monitor_run`).
"""

from __future__ import annotations

import os
import time as _time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from kidym.eom.constraints import Stabilization
from kidym.eom.equations import Equations
from kidym.eom.stored import derived
from kidym.errors import RunInterrupted
from kidym.model.model import Model
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.compiled_methods import analytic_jacobian
from kidym.simulation.compiled_runs import run_compiled
from kidym.simulation.energy_monitor import monitor_run, unmonitored_reason
from kidym.simulation.finish import finish, with_energy_balance
from kidym.simulation.inputs import InputBinding
from kidym.simulation.result import Result
from kidym.simulation.spec import output_times, prepare_run, run_span
from kidym.simulation.watch import POLL_S, Watch, watching


def simulate_batch(system: Model | Equations | CompiledSystem, *,
                   initial: Sequence[Mapping[str, float]] | None = None,
                   parameters: Sequence[Mapping[str, float]] | None = None,
                   t_end: float | None = None, t_start: float | None = None,
                   t_eval: Sequence[float] | None = None, n_points: int = 501,
                   method: str = "ERK8", rtol: float = 1e-9, atol: float = 1e-12,
                   max_step: float = np.inf, workers: int | None = None,
                   inputs: Mapping | Callable | Sequence[Mapping | Callable] | None = None,
                   free: str | Sequence[str] | None = None,
                   monitor_energy: bool = True) -> BatchResult:
    """Simulate one model for many initial conditions, parameter sets and/or inputs.

    Parameters
    ----------
    system : Model, Equations or CompiledSystem
        The model (compiled on first use, then taken from the cache).
    initial : sequence of mappings, optional
        Initial values per run (overriding the model's), by state name.
    parameters : sequence of mappings, optional
        Parameter overrides per run. If both ``initial`` and ``parameters`` are
        given they must have the same length (run k uses entry k of each); a
        missing one means the model's values for every run.
    inputs : mapping or callable, or a sequence of them, optional
        The external inputs (``ВХОДЫ``) as :func:`kidym.simulate` takes them (tables,
        callbacks, one callback for several): one binding shared by every run, or a
        list of one per run (of the length of the other lists, when given). Each run's
        callbacks are called in its own thread.
    free : str or sequence of str, optional
        Coordinates and speeds whose given initial values the consistent start may
        change, in every run (as :func:`kidym.simulate`'s ``free``).
    t_end, t_start, t_eval, n_points, method, rtol, atol, max_step
        As in :func:`kidym.simulate` with ``engine="compiled"``.
    workers : int, optional
        Threads (default: all cores).
    monitor_energy : bool
        The energy monitor on every run, as :func:`kidym.simulate`'s
        ``monitor_energy``: a run of a conservative model whose energy leaves the bound
        its tolerances allow fails alone (kind ``energy``, kept up to the first output
        time past the bound, NaN after it in the stacked arrays); each run's
        ``results[k].stats["energy_monitor"]`` says whether it was monitored and its
        ratio. ``False`` turns it off.

    Returns
    -------
    BatchResult
        ``y`` of shape (n_runs, n_y, n_t), ``values[name]`` of shape (n_runs, n_t),
        ``success`` per run and the individual results. A run that fails does not
        raise: the others are complete, its partial result is kept (NaN after the
        failure in the stacked arrays), ``failed`` lists it and its message names
        its parameters and initial values, the time, the state and what to try.

    Raises
    ------
    ValueError
        If the lists differ in length or are both empty.
    RunInterrupted
        Ctrl-C stopped the batch: every run stops where it is (one not begun, at its
        start); ``.result`` is the :class:`BatchResult` so far, the runs stopped partial
        with the failure kind ``interrupted``. On a terminal a bar shows the runs done.
    CompileError
        If the model cannot be compiled.
    """
    from kidym.simulation.spec import check_options

    check_options(t_start=t_start, t_end=t_end, n_points=n_points, rtol=rtol, atol=atol,
                  max_step=max_step, t_eval=t_eval)
    if isinstance(system, Model):
        system = derived(system)   # (as kidym.simulate: stored by its file's text)
    if isinstance(system, Equations):
        # BDF's Newton matrix: with the analytic Jacobian (docs/compiled.md) where a
        # single run of the method would have it
        system = CompiledSystem.build(system, jacobian=analytic_jacobian(system, method))
    initial = list(initial or [])
    parameters = list(parameters or [])
    per_run = isinstance(inputs, Sequence) and not isinstance(inputs, str)
    lists = {"initial conditions": initial, "parameter sets": parameters,
             "input bindings": list(inputs) if per_run else []}
    given = {what: len(v) for what, v in lists.items() if v}
    n = max(given.values(), default=0)
    if n == 0:
        raise ValueError("give a list of initial conditions, parameter sets and/or input "
                         "bindings")
    if len(set(given.values())) > 1:
        said = " but ".join(f"{k} {what}" for what, k in given.items())
        raise ValueError(f"{said}: give lists of equal length (run k uses entry k of each)")
    model = system.equations.model
    initial = initial or [{}] * n
    parameters = parameters or [{}] * n
    bindings = list(inputs) if per_run else [inputs] * n
    spans = {model.time_span(pp): pp for pp in parameters}
    if len(spans) > 1 and (t_start is None or t_end is None) and t_eval is None:
        raise ValueError(f"the time span of model `{model.name}` is a formula of parameters "
                         "that differ between the runs, and a batch shares one time grid: "
                         "give t_start and t_end (or t_eval)")
    t0, t1 = run_span(model, next(iter(spans.values())), t_start, t_end)
    times = output_times(t0, t1, t_eval, n_points)
    # each run prepared as one run is (initial values written as formulas of parameters
    # follow its parameters; with constraints, its dependent values solved)
    specs = [prepare_run(system, parameters=pp, initial=ic, t_start=t0, t_end=t1,
                         t_eval=times, constraints=Stabilization(), inputs=uu, free=free)
             for ic, pp, uu in zip(initial, parameters, bindings)]
    y0s = np.array([s.y0 for s in specs])
    ps = np.array([s.p for s in specs])
    labels = ["; ".join(f"{what} " + ", ".join(f"{k}={v:g}" for k, v in given.items())
                        for what, given in (("parameters", pp), ("initial", ic)) if given)
              for ic, pp in zip(initial, parameters)]
    return run_batch(system, t0=t0, times=times, y0s=y0s, ps=ps, method=method, rtol=rtol,
                     atol=atol, max_step=max_step, workers=workers, labels=labels, t1=t1,
                     inputs=[s.inputs for s in specs], monitor_energy=monitor_energy)


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Many runs of one model, stacked.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Output times (common to all runs).
    y : ndarray, shape (n_runs, n_y, n_t)
        States; NaN after a run stopped or failed.
    values : dict of str to ndarray, each shape (n_runs, n_t)
        Every recorded quantity by name.
    success : ndarray of bool, shape (n_runs,)
    messages : list of str
        Per run; a failed run's names the run and what it was given (``run 2
        (parameters l=0.5): the motion blows up … at t = …``).
    results : list of Result
        The individual runs; a failed run's is its partial result (``partial``,
        ``failure``), the others are complete.
    wall_time_s : float
        Wall time of the whole batch.
    """

    t: np.ndarray
    y: np.ndarray
    values: dict[str, np.ndarray]
    success: np.ndarray
    messages: list[str]
    results: list[Result]
    wall_time_s: float

    def __getitem__(self, name: str) -> np.ndarray:
        return self.t if name == "t" else self.values[name]

    @property
    def failed(self) -> list[int]:
        """Indices of the runs that failed (their messages say where and why)."""
        return [k for k, r in enumerate(self.results) if r.partial]


def run_batch(system: CompiledSystem, *, t0: float, times: np.ndarray,
                   y0s: np.ndarray, ps: np.ndarray, method: str = "ERK8",
                   rtol: float = 1e-9, atol: float = 1e-12, max_step: float = np.inf,
                   workers: int | None = None,
                   labels: Sequence[str] | None = None, t1: float | None = None,
                   inputs: Sequence[InputBinding | None] | None = None,
                   monitor_energy: bool = True) -> BatchResult:
    """Run ``len(y0s)`` simulations in parallel threads (the GIL is released in C).

    A run that fails does not stop the others: its partial result and its message,
    which names the run (``labels[k]``, what it was given), are in the batch.
    ``inputs``: each run's bound external inputs (:attr:`RunSpec.inputs`), or None.
    Each result is finished as :func:`kidym.simulate` finishes it
    (:func:`~kidym.simulation.finish.finish`) and, with ``monitor_energy``, goes
    through the energy monitor.
    """
    n = len(y0s)
    workers = workers or os.cpu_count() or 1
    started = _time.perf_counter()
    stab = Stabilization()   # (constraints: projection, one setting for every run)
    if system.equations.constraints is not None:
        system.set_stabilization(stab)

    t1 = float(times[-1]) if t1 is None else float(t1)
    bindings = list(inputs) if inputs is not None else [None] * n
    eq = system.equations
    reason = unmonitored_reason(eq, method) if monitor_energy else ""   # (once for every run)

    def one(k: int, watch: Watch) -> Result:
        with watching(watch=watch):   # (Ctrl-C: the run stops where it is)
            # (as kidym.simulate runs it; its inputs bound for this thread)
            result, error = run_compiled(system, t0=t0, t1=t1, y0=y0s[k], p=ps[k],
                                         times=times, method=method, rtol=rtol, atol=atol,
                                         max_step=max_step, constraints=stab,
                                         inputs=bindings[k])
        finish(result, eq.model)
        if error is None and monitor_energy:   # (as kidym.simulate: one rule)
            result, _check, error = monitor_run(result, eq, system, ps[k], rtol=rtol,
                                                atol=atol, reason=reason)
            if error is not None:
                result = with_energy_balance(result)
        watch.ran()
        return result

    # progress (runs done) on a terminal; Ctrl-C stops every run where it is, and those
    # not begun stop at their start
    with watching() as watch, ThreadPoolExecutor(max_workers=min(workers, max(n, 1))) as pool:
        watch.begin("batch", 0, n, counting=True)
        futures = [pool.submit(one, k, watch) for k in range(n)]
        while wait(futures, timeout=POLL_S).not_done:
            watch.show()
        watch.close()
    results = [f.result() for f in futures]
    wall = _time.perf_counter() - started
    names = list(results[0].values) if results else []
    values = {}
    for name in names:
        arr = np.full((n, len(times)), np.nan)
        for k, r in enumerate(results):
            arr[k, :len(r.t)] = r.values[name]
        values[name] = arr
    y = np.stack([values[s] for s in system.state_names], axis=1) if n else np.empty((0,))
    batch = BatchResult(t=np.asarray(times, float), y=y, values=values,
                       success=np.array([r.success for r in results]),
                       messages=[_batch_message(k, r, labels) for k, r in enumerate(results)],
                       results=results,
                       wall_time_s=wall)
    if watch.stopped:
        done = sum(r.failure is None for r in results)
        raise RunInterrupted(f"interrupted (Ctrl-C): {done} of {n} runs reached their end; "
                             "the batch so far is kept (.result; the runs stopped are "
                             "partial, failure kind 'interrupted')", result=batch)
    return batch


def _batch_message(k: int, result: Result, labels: Sequence[str] | None) -> str:
    if not result.partial:
        return result.message
    given = f" ({labels[k]})" if labels and labels[k] else ""
    return f"run {k}{given}: {result.message}"
