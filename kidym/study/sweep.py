"""``kidym.sweep``: a parameter study run on a plain loop, a thread pool or Dask.

The study (:mod:`kidym.study.design`) is turned into start states and parameter
vectors here, in the calling process; the runs go in chunks (:class:`~kidym.study.runs.Job`)
to an executor:

* ``"threads"`` (the default): a local thread pool. The compiled engine integrates in
  C and ``ctypes`` releases the GIL for the call, so the threads run in parallel;
* ``"dask"``: a Dask distributed cluster (``scheduler=`` an address or a
  ``distributed.Client``); each worker gets the library as :mod:`kidym.study.worker`
  describes;
* ``"loop"``: one run after the other in this thread (the reference of the benchmark).

Every run is recorded: a run whose parameters are impossible (a negative mass, a
display size of ``ФОРМЫ`` that is not positive: a study draws no bodies, yet the file
would not be accepted with them, so that run fails with the located message as its
reason and the others run) or whose integration fails keeps NaN from where it
stopped, status -1 and the reason. Every run that reaches its end goes through the
energy monitor as one run does (:func:`~kidym.simulation.energy_monitor.monitor_run`,
every executor): a run of a conservative model whose energy leaves its bound fails
alone, its values NaN after the first output time past the bound.

External inputs (``ВХОДЫ``) are bound per run by its preparation, as
:func:`kidym.simulate` binds them, and travel with the jobs: to a Dask worker they are
pickled (cloudpickle, as Dask sends a task), so tables always go and a callback goes
where it pickles — one that does not is an error naming the input before any run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kidym.eom.constraints import Stabilization
from kidym.errors import ModelError, RunInterrupted, SimulationError
from kidym.model.display import check_sizes
from kidym.model.model import Model
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.compiled_methods import analytic_jacobian
from kidym.simulation.energy_monitor import unmonitored_reason
from kidym.simulation.inputs import bind_inputs
from kidym.simulation.layout import finite_number
from kidym.simulation.spec import free_states, prepare_run
from kidym.simulation.watch import POLL_S, Watch, watching
from kidym.study.design import RESERVED, Study, from_model, grid
from kidym.study.runs import Job, JobOutput, run_job

#: The executors of :func:`sweep`.
EXECUTORS = ("threads", "dask", "loop")
_DASK_HINT = ("kidym sweep on a Dask cluster needs dask[distributed]: pip install "
              "'kidym[sweep]' (or pip install 'dask[distributed]' xarray)")


@dataclass(frozen=True, eq=False)
class SweepResult:
    """The runs of a study, stacked.

    Attributes
    ----------
    study : Study
    model_name : str
    t : ndarray, shape (n_t,)
    quantities : tuple of str
        States, outputs (and multipliers), in the order of ``values``' last axis.
    values : ndarray, shape (n_runs, n_t, n_quantities)
        NaN after a run stopped or failed.
    status : ndarray of int8, shape (n_runs,)
        0 reached the end, 1 stopped by a terminal event, -1 failed.
    reasons : list of str
        Per run: empty, or why it stopped or failed (time, state, what to try).
    nfev : ndarray of int, shape (n_runs,)
    wall_time_s : float
        The runs, from the first job sent to the last result (not the compilation).
    executor : str
        ``threads``, ``dask`` or ``loop``; ``workers`` how many ran at once.
    routes : dict of str to int
        How the Dask workers obtained the library (``{"cache": 8}``); ``{"here": n}``
        for the local executors.
    options : dict
        The integration settings (method, rtol, atol, …).
    busy_s : float
        The runs' own wall time summed over the jobs (where they ran): against
        ``wall_time_s × workers`` it shows the executor's overhead.
    interrupted : bool
        Ctrl-C stopped the study (:class:`~kidym.errors.RunInterrupted` carries this
        result): the runs it stopped end where they were (status -1, the reason says
        ``interrupted``), those not begun are NaN with the reason ``not run: …``.
    energy_ratio : ndarray, shape (n_runs,)
        The energy monitor's largest ``|E − E(0)| / bound`` per run (above 1: the run
        failed by it, its reason says so); NaN where it did not look (turned off, a
        model that exchanges work — ``options["energy_monitor"]`` says why —, a run
        that failed before its end).
    """

    study: Study
    model_name: str
    t: np.ndarray
    quantities: tuple[str, ...]
    values: np.ndarray
    status: np.ndarray
    reasons: list[str]
    nfev: np.ndarray
    wall_time_s: float
    executor: str
    workers: int
    routes: dict[str, int] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    busy_s: float = 0.0
    interrupted: bool = False
    energy_ratio: np.ndarray | None = None

    @property
    def failed(self) -> list[int]:
        """Indices of the runs that failed (``reasons`` says why)."""
        return [int(k) for k in np.flatnonzero(self.status < 0)]

    def __getitem__(self, name: str) -> np.ndarray:
        """``values[:, :, k]`` of quantity ``name``, shape (n_runs, n_t)."""
        return self.values[:, :, self.quantities.index(name)]

    def to_dataset(self):
        """The results as an :class:`xarray.Dataset` (needs xarray).

        Variables ``value`` (dims: the grid's names — or ``run`` for a random sample —,
        ``time``, ``quantity``), ``status``, ``reason`` and ``nfev`` (the run dims);
        coordinates: the varied names' values (along ``run`` for a sample), ``time`` and
        ``quantity``; attributes: the model, the study and the integration settings. A
        varied name that NetCDF's classic format cannot hold (non-Latin letters) is
        named by its ASCII identifier (``мас`` → ``mas``); its coordinate keeps the name
        in the attribute ``kidym_name`` (:func:`kidym.study.output.file_names`).
        """
        from kidym.study.output import dataset

        return dataset(self)

    def write(self, path: str | Path) -> Path:
        """Write the study as NetCDF (classic 64-bit format, SciPy's writer), laid out
        as :meth:`to_dataset` (``xarray.open_dataset`` of the file equals it; xarray is
        not needed to write), atomically: the file is the whole result or is not there."""
        from kidym.study.output import write_study

        return write_study(self, Path(path))


def sweep(model: Model | str | Path, *, vary: Mapping | Study | None = None,
          samples: int | None = None, seed: int = 0,
          parameters: Mapping[str, float] | None = None,
          initial: Mapping[str, float] | None = None, t_end: float | None = None,
          t_start: float | None = None, n_points: int = 201, method: str = "ERK8",
          rtol: float = 1e-9, atol: float = 1e-12, max_step: float = np.inf,
          executor: str | None = None, workers: int | None = None, scheduler=None,
          chunk_size: int | None = None, system: CompiledSystem | None = None,
          inputs: Mapping | Callable | Sequence[Mapping | Callable] | None = None,
          free: str | Sequence[str] | None = None,
          monitor_energy: bool = True) -> SweepResult:
    """Run a parameter study of ``model`` with the compiled engine.

    Parameters
    ----------
    model : Model or path
        The model (a path is read with :func:`kidym.load`).
    vary : mapping or Study, optional
        Name → the values of a grid axis, or (with ``samples``) name → ``(low,
        high)``; or a :class:`~kidym.study.design.Study`. Default: the model's
        ``ВАРЬИРОВАТЬ``. A name is a parameter or a state (its initial value).
    samples, seed : int, optional
        Draw ``samples`` random runs from the ranges of ``vary``
        (:func:`~kidym.study.design.random_sample`).
    parameters, initial : mapping, optional
        Fixed overrides for every run (as :func:`kidym.simulate`); the varied values
        win over them.
    free : str or sequence of str, optional
        Coordinates and speeds whose given initial values the consistent start may
        change, in every run (as :func:`kidym.simulate`'s ``free``); a run whose start
        would change another given value does not run (its reason says which).
    t_end, t_start, n_points, method, rtol, atol, max_step
        As :func:`kidym.simulate` with ``engine="compiled"``; every run shares the
        output times (``n_points`` of them, default 201).
    executor : {"threads", "dask", "loop"}, optional
        Default ``"dask"`` when ``scheduler`` is given, else ``"threads"``.
    workers : int, optional
        Threads of ``"threads"`` (default: all cores).
    scheduler : str or distributed.Client, optional
        The Dask scheduler's address (``tcp://host:8786``) or a client.
    chunk_size : int, optional
        Runs per task (default: about four tasks per Dask worker, sixteen per thread).
    system : CompiledSystem, optional
        The model's library, if already built.
    inputs : mapping or callable, or a sequence of them, optional
        The external inputs (``ВХОДЫ``) as :func:`kidym.simulate` takes them: one
        binding for every run, or one per run of the study (in its order). With
        ``"dask"`` they are pickled to the workers: tables always; a callback that
        cannot be pickled is a ``ValueError`` naming its input (it runs on threads).
    monitor_energy : bool
        The energy monitor on every run, as :func:`kidym.simulate`'s ``monitor_energy``
        (``kidym sweep --no-energy-monitor`` turns it off): a run of a conservative
        model whose energy leaves the bound its tolerances allow fails alone (status
        -1, the reason names the time and the balance), the others go on.
        ``options["energy_monitor"]`` says whether the runs were monitored (and why
        not), ``energy_ratio`` each run's largest ratio of the balance to its bound.

    Returns
    -------
    SweepResult

    Raises
    ------
    ValueError
        A varied name that is not a parameter nor a state, no study, a time span that
        differs between the runs without ``t_end``, a bad option.
    ImportError
        ``executor="dask"`` without dask[distributed] installed.
    RunInterrupted
        Ctrl-C stopped the study (every executor; on Dask the tasks running return their
        runs stopped where they were, the rest are cancelled): its ``.result`` is the
        :class:`SweepResult` so far, ``interrupted`` true. On a terminal a bar shows
        the runs done and the time left.
    CompileError
        If the model cannot be compiled.
    """
    from kidym.eom.stored import derived
    from kidym.simulation.spec import check_options

    executor = executor or ("dask" if scheduler is not None else "threads")
    if executor not in EXECUTORS:
        raise ValueError(f"executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if executor == "dask":
        require_dask()
    check_options(t_start=t_start, t_end=t_end, n_points=n_points, rtol=rtol, atol=atol,
                  max_step=max_step, t_eval=None)
    if isinstance(model, str | Path):
        from kidym.lang.files import load

        model = load(model)
    study = _study(model, vary, samples, seed)
    if system is None:
        # (the equations a run of the same model file uses: kidym.eom.stored)
        eq = derived(model)
        system = CompiledSystem.build(eq, jacobian=analytic_jacobian(eq, method))
    model = system.equations.model
    _check_names(model, system, study, parameters or {}, initial or {})
    freed = free_states(system, free)
    for what, given in (("parameter", parameters or {}), ("initial value of", initial or {})):
        for name, value in given.items():   # (a fixed value that is no number: every run's)
            finite_number(value, f"{what} `{name}`")
    quantities = recorded_quantities(system)
    per_run = isinstance(inputs, Sequence) and not isinstance(inputs, str)
    if per_run and len(inputs) != study.n_runs:
        raise ValueError(f"{len(inputs)} input bindings for a study of {study.n_runs} runs: "
                         "give one per run, in the study's order, or one for all")
    t0, t1, y0s, ps, setup_errors, bound = _starts(
        system, model, study, parameters or {}, initial or {}, t_start, t_end,
        list(inputs) if per_run else [inputs] * study.n_runs, freed)
    if executor == "dask" and model.inputs:
        _check_picklable(bound)
    times = np.linspace(t0, t1, n_points)
    todo = np.array([k for k in range(study.n_runs) if k not in setup_errors], dtype=int)
    options = {"method": method, "rtol": rtol, "atol": atol,
               "max_step": max_step if math.isfinite(max_step) else "inf",
               "t_start": t0, "t_end": t1}
    # (one decision for the study: the model's structure; kidym.simulate's rule)
    unmonitored = (unmonitored_reason(system.equations, method) if monitor_energy
                   else "turned off (monitor_energy=False)")
    options["energy_monitor"] = f"not monitored: {unmonitored}" if unmonitored else "on"
    n_slots = 1 if executor == "loop" else (workers or os.cpu_count() or 1)
    client = None
    if executor == "dask":
        client, owned = _client(scheduler)
        n_slots = max(1, sum(w.get("nthreads", 1) for w in
                             client.scheduler_info()["workers"].values()))
    # about four tasks per Dask worker (a task costs milliseconds there); sixteen per
    # thread of the pool, so that a thread slowed by the machine's other work does not
    # leave a long last chunk (a task costs microseconds here)
    per_slot = 4 if executor == "dask" else 16
    size = chunk_size or max(1, math.ceil(len(todo) / (per_slot * n_slots)))
    jobs = [Job(rows=todo[i:i + size], y0s=y0s[todo[i:i + size]], ps=ps[todo[i:i + size]],
                t0=t0, t1=t1, times=times, quantities=quantities, method=method, rtol=rtol,
                atol=atol, max_step=max_step,
                inputs=tuple(bound[k] for k in todo[i:i + size]) if model.inputs else (),
                monitor_energy=not unmonitored)
            for i in range(0, len(todo), size)]
    started = _time.perf_counter()
    watch = None
    try:
        # progress (runs done) on a terminal; Ctrl-C stops every run where it is
        with watching() as watch:
            watch.begin("sweep", 0, len(todo), counting=True)
            if executor == "dask":
                outs = _run_dask(client, system, jobs, watch)
            else:
                outs = _run_here(system, jobs, n_slots if executor == "threads" else 0, watch)
            watch.close()
    finally:
        if client is not None and owned:
            client.close()
    wall = _time.perf_counter() - started
    result = _assemble(study, model.name, times, quantities, outs, setup_errors, wall,
                       executor, n_slots, options)
    if watch is not None and watch.stopped:
        result = dataclasses.replace(result, interrupted=True)
        done = int(np.sum(result.status >= 0))
        raise RunInterrupted(f"interrupted (Ctrl-C): {done} of {study.n_runs} runs reached "
                             "their end; the study so far is kept (.result)", result=result)
    return result


def _run_here(system: CompiledSystem, jobs: list[Job], threads: int, watch: Watch
              ) -> list[JobOutput]:
    """The jobs in this process: one after the other (``threads`` 0) or on a pool of
    ``threads``, this thread redrawing the bar while it waits."""
    if not threads:
        return [run_job(system, j) for j in jobs]
    from concurrent.futures import ThreadPoolExecutor, wait

    def one(job: Job) -> JobOutput:
        with watching(watch=watch):   # (the pool's thread reads the same stop flag)
            return run_job(system, job)

    with ThreadPoolExecutor(max_workers=min(threads, max(len(jobs), 1))) as pool:
        futures = [pool.submit(one, j) for j in jobs]
        while wait(futures, timeout=POLL_S).not_done:
            watch.show()
    return [f.result() for f in futures]


def require_dask() -> None:
    """Raise an ``ImportError`` saying how to install dask[distributed] when it is not."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ImportError(_DASK_HINT) from exc


def _client(scheduler):
    from distributed import Client

    if scheduler is None:
        raise ValueError("executor 'dask' needs scheduler=: the address of a Dask scheduler "
                         "(tcp://host:8786) or a distributed.Client")
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout=30), True
    except OSError as exc:
        raise OSError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); start one "
                      "(`dask scheduler`, `dask worker ADDRESS`) or leave out --scheduler "
                      "to run on the local thread pool") from exc


#: After Ctrl-C, how long the client waits for the Dask tasks to return their runs
#: stopped where they were before it cancels them (seconds; their runs then "not run").
DASK_GRACE_S = 0.25


def _run_dask(client, system: CompiledSystem, jobs: list[Job], watch: Watch
              ) -> list[JobOutput]:
    """Send the package once to every worker, then one task per job; a task that
    fails (a worker lost, an error on the worker) marks its runs failed.

    Ctrl-C (``watch`` stopped) sets the jobs' ``distributed.Event``: the tasks running
    stop their runs where they are and return them (partial, as a local run's), those
    not begun return at once with their runs not run; what has not returned within
    :data:`DASK_GRACE_S` is cancelled, its runs marked not run (a task still going on a
    worker sees its cancellation, :func:`kidym.study.worker.run_on_worker`). The event
    is cleared when the sweep ends, so that the scheduler keeps none of it."""
    import uuid

    from distributed import Event

    from kidym.study.runs import NOT_RUN
    from kidym.study.worker import package, run_on_worker

    stop = f"kidym-stop-{uuid.uuid4().hex}"
    jobs = [dataclasses.replace(j, stop=stop) for j in jobs]
    pkg = client.scatter(package(system), broadcast=True)
    futures = [client.submit(run_on_worker, pkg, j, pure=False) for j in jobs]
    counted: set[int] = set()
    event = None
    try:
        while not watch.stopped:
            for k, f in enumerate(futures):
                if k not in counted and f.done():
                    counted.add(k)
                    for _ in jobs[k].rows:
                        watch.ran()
            if len(counted) == len(futures):
                break
            watch.show()
            _time.sleep(POLL_S / 2)   # (Ctrl-C's handler sets the flag meanwhile)
        if watch.stopped:
            event = Event(stop, client=client)
            event.set()
            deadline = _time.perf_counter() + DASK_GRACE_S
            while (_time.perf_counter() < deadline
                   and not all(f.done() for f in futures)):
                _time.sleep(0.01)
            client.cancel([f for f in futures if not f.done()])
    except BaseException:   # (a second Ctrl-C): nothing left running on the cluster
        client.cancel(futures)
        raise
    finally:   # (a set event stays on the scheduler until cleared: one per stopped sweep)
        if event is not None:
            with contextlib.suppress(Exception):   # (the scheduler gone: nothing left)
                event.clear()
    outs = []
    for f, j in zip(futures, jobs):
        m = len(j.rows)
        if f.status == "cancelled" or (watch.stopped and not f.done()):
            why, route = NOT_RUN, "cancelled"
        else:
            try:
                outs.append(f.result())
                continue
            except Exception as exc:   # (the task's error, re-raised here by Dask)
                why = f"the Dask task of this run failed: {type(exc).__name__}: {exc}"
                route = "failed"
        outs.append(JobOutput(j.rows, np.full((m, len(j.times), len(j.quantities)), np.nan),
                              np.full(m, -1, dtype=np.int8), [why] * m,
                              np.zeros(m, dtype=np.int64), route))
    return outs


def _study(model: Model, vary, samples, seed) -> Study:
    if isinstance(vary, Study):
        return vary
    if vary:
        if samples is not None:
            from kidym.study.design import random_sample

            return random_sample(dict(vary), samples, seed=seed)
        return grid(dict(vary))
    study = from_model(model)
    if study is None:
        raise ValueError(f"model `{model.name}` varies no parameter (ВАРЬИРОВАТЬ := name, "
                         "start, end, count;): give what to vary (kidym sweep --vary "
                         "NAME=START:STOP:COUNT)")
    return study


def _check_names(model: Model, system: CompiledSystem, study: Study, parameters: Mapping,
                 initial: Mapping) -> None:
    from kidym.lang.formulas import suggest
    from kidym.simulation.layout import canonical_initial

    params = model.parameter_values
    states = system.state_names
    for name in study.names:
        if name in RESERVED:
            raise ValueError(f"`{name}` cannot be varied: it names a dimension of the "
                             f"results ({', '.join(RESERVED)})")
        if name not in params and canonical_initial(model, {name: 0}).popitem()[0] not in states:
            raise ValueError(f"`{name}` is not a parameter nor a state of model "
                             f"`{model.name}`{suggest(name, [*params, *states])}; parameters:"
                             f" {', '.join(params)}; states: {', '.join(states)}")
    for name in parameters:
        if name not in params:
            raise KeyError(f"`{name}` is not a parameter of model `{model.name}`; parameters:"
                           f" {', '.join(params)}")
    for name in canonical_initial(model, initial):
        if name not in states:
            raise KeyError(f"`{name}` is not a state of model `{model.name}`; the state is "
                           f"{', '.join(states)}")


def recorded_quantities(system: CompiledSystem) -> tuple[str, ...]:
    """What a study records of each run: the states, the outputs, the multipliers."""
    out = list(system.state_names)
    out += [n for n in system.output_names if n not in out]
    cons = system.equations.constraints
    if cons is not None:
        out += list(cons.multiplier_names)
    return tuple(out)


def _check_picklable(bound: list) -> None:
    """A ``ValueError`` naming the first input whose callback cannot be sent to a Dask
    worker (pickled as Dask pickles a task: cloudpickle)."""
    import cloudpickle

    seen: set[int] = set()
    for binding in bound:
        if binding is None:
            continue
        for ks, src in binding.calls:
            if id(src) in seen:
                continue
            seen.add(id(src))
            try:
                cloudpickle.dumps(src)
            except Exception as exc:   # (pickling fails with any type of error)
                names = ", ".join(f"`{binding.names[k]}`" for k in ks)
                raise ValueError(
                    f"the callback of input {names} cannot be sent to the Dask workers: "
                    f"it does not pickle ({type(exc).__name__}: {exc}); give the input as "
                    "a table (InputTable), make the callback picklable (a function of a "
                    "module, holding no open file, lock or library), or run the study on "
                    "threads (executor='threads')") from exc


def _starts(system: CompiledSystem, model: Model, study: Study, parameters: Mapping,
            initial: Mapping, t_start, t_end, inputs: list, free: tuple[str, ...] = ()):
    """``t0, t1``, the start states and parameter vectors of every run, the runs that
    cannot start (index → reason: impossible parameters, no consistent start) and
    every run's bound inputs (``None`` without)."""
    params = set(model.parameter_values)
    n_y, n_p = len(system.state_names), len(model.parameter_values)
    y0s = np.full((study.n_runs, n_y), np.nan)
    ps = np.full((study.n_runs, n_p), np.nan)
    errors: dict[int, str] = {}
    bound: list = [None] * study.n_runs
    spans = set()
    per_run = []
    for k, row in enumerate(study.table):
        pp = {**parameters, **{n: float(v) for n, v in zip(study.names, row) if n in params}}
        ic = {**initial, **{n: float(v) for n, v in zip(study.names, row) if n not in params}}
        per_run.append((pp, ic))
        try:
            spans.add(model.time_span(pp))
        except (ValueError, ZeroDivisionError) as exc:
            errors[k] = f"the time span cannot be evaluated: {exc}"
    if len(spans) > 1 and (t_start is None or t_end is None):
        raise ValueError(f"the time span of model `{model.name}` is a formula of parameters "
                         "that differ between the runs, and a study shares one time grid: "
                         "give t_start and t_end (--t-end)")
    span = spans.pop() if spans else (model.t_start, model.t_end)
    t0 = span[0] if t_start is None else float(t_start)
    t1 = span[1] if t_end is None else float(t_end)
    if not t1 > t0:
        raise ValueError(f"t_end ({t1}) must be greater than t_start ({t0})")
    for k, (pp, ic) in enumerate(per_run):
        if k in errors:
            continue
        # inputs bound wrong (missing, unknown, a table short of the span) are the
        # study's error, not a run's
        bind_inputs(model, system.state_names, inputs[k], t0, t1)
        try:   # a display size this run's parameters make non-positive: its reason
            check_sizes(model, {**model.parameter_values, **pp})
        except ModelError as exc:
            errors[k] = "the run cannot start: " + "; ".join(
                d.format(exc.filename, None) for d in exc.errors)
            continue
        try:   # each run prepared as one run is
            spec = prepare_run(system, parameters=pp, initial=ic, t_start=t0, t_end=t1,
                               n_points=2, constraints=Stabilization(), inputs=inputs[k],
                               free=free)
        except ModelError:   # (the model's, not the run's: as kidym.simulate says it;
            raise            # a display size, a run's own, is checked above)
        except (ValueError, SimulationError, ZeroDivisionError, np.linalg.LinAlgError) as exc:
            errors[k] = f"the run cannot start: {exc}"
            continue
        y0, p = spec.y0, spec.p
        y0s[k], ps[k] = y0, p
        bound[k] = spec.inputs
    return t0, t1, y0s, ps, errors, bound


def _assemble(study: Study, model_name: str, times: np.ndarray, quantities: tuple[str, ...],
              outs: list[JobOutput], setup_errors: dict[int, str], wall: float,
              executor: str, workers: int, options: dict) -> SweepResult:
    n = study.n_runs
    values = np.full((n, len(times), len(quantities)), np.nan)
    status = np.full(n, -1, dtype=np.int8)
    nfev = np.zeros(n, dtype=np.int64)
    ratio = np.full(n, np.nan)
    reasons = ["the run was not done"] * n
    routes: dict[str, int] = {}
    for k, why in setup_errors.items():
        reasons[k] = why
    for o in outs:
        values[o.rows] = o.values
        status[o.rows] = o.status
        nfev[o.rows] = o.nfev
        if o.energy_ratio is not None:
            ratio[o.rows] = o.energy_ratio
        for k, why in zip(o.rows, o.reasons):
            reasons[int(k)] = why
        routes[o.route] = routes.get(o.route, 0) + len(o.rows)
    return SweepResult(study, model_name, np.asarray(times, float), quantities, values,
                       status, reasons, nfev, wall, executor, workers, routes, options,
                       sum(o.busy_s for o in outs), energy_ratio=ratio)
