"""Running the rows of a study on one compiled library: the unit of work of every
executor (the plain loop, the thread pool, a Dask task).

Everything here is picklable and needs nothing but the library: a :class:`Job` carries
the start states and parameter vectors of its runs, :func:`run_job` integrates them
one by one and returns a :class:`JobOutput` of plain arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from kidym.eom.constraints import Stabilization
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.compiled_runs import simulate_compiled
from kidym.simulation.energy_monitor import monitor_run
from kidym.simulation.inputs import InputBinding
from kidym.simulation.watch import current as current_watch

#: The reason recorded for a run of a study that Ctrl-C kept from starting.
NOT_RUN = "not run: the study was interrupted (Ctrl-C)"


@dataclass(frozen=True, eq=False)
class Job:
    """Runs of one study, to be integrated with the same library.

    Attributes
    ----------
    rows : ndarray of int, shape (m,)
        The runs' indices in the study.
    y0s : ndarray, shape (m, n_y)
        Start states (consistent with the constraints, if any).
    ps : ndarray, shape (m, n_p)
        Parameter vectors.
    t0, t1 : float
        The span.
    times : ndarray, shape (n_t,)
        Output times.
    quantities : tuple of str
        What is recorded, in order.
    method, rtol, atol, max_step
        As :func:`kidym.simulate` with ``engine="compiled"``.
    inputs : tuple of InputBinding or None, shape (m,)
        Each run's external inputs (``ВХОДЫ``) as its preparation bound them; empty for
        a model without inputs. Pickled with the job for a Dask worker: tables always,
        callbacks where (cloud)pickle can (:func:`kidym.study.sweep.sweep` checks first).
    stop : str
        On a Dask worker: the name of the ``distributed.Event`` whose setting stops the
        job's runs where they are (Ctrl-C on the client, :mod:`kidym.study.worker`);
        empty elsewhere.
    monitor_energy : bool
        Apply the energy monitor to every run that reaches its end
        (:func:`~kidym.simulation.energy_monitor.monitor_run`, as :func:`kidym.simulate`
        does): set by the client where the switch is on and the model is conservative
        by its structure (:func:`~kidym.simulation.energy_monitor.unmonitored_reason`,
        decided once for the study).
    """

    rows: np.ndarray
    y0s: np.ndarray
    ps: np.ndarray
    t0: float
    t1: float
    times: np.ndarray
    quantities: tuple[str, ...]
    method: str = "ERK8"
    rtol: float = 1e-9
    atol: float = 1e-12
    max_step: float = np.inf
    inputs: tuple[InputBinding | None, ...] = ()
    stop: str = ""
    monitor_energy: bool = False


@dataclass(frozen=True, eq=False)
class JobOutput:
    """The results of a :class:`Job`.

    Attributes
    ----------
    rows : ndarray of int, shape (m,)
    values : ndarray, shape (m, n_t, n_quantities)
        NaN where a run stopped or failed before that time.
    status : ndarray of int8, shape (m,)
        0 reached the end, 1 stopped by a terminal event, -1 failed.
    reasons : list of str
        Empty for a run that reached the end; else what happened (time, state, hint).
    nfev : ndarray of int, shape (m,)
    route : str
        How the library was obtained where the job ran (``"here"``, or on a Dask worker
        ``"cache"``, ``"shipped"``, ``"built"``).
    busy_s : float
        Wall seconds spent in :func:`run_job` (where it ran).
    energy_ratio : ndarray, shape (m,)
        The energy monitor's largest ``|E − E(0)| / bound`` of each run (above 1: the
        run failed by it); NaN where it did not look (off, a run that failed before,
        a balance not available).
    """

    rows: np.ndarray
    values: np.ndarray
    status: np.ndarray
    reasons: list[str]
    nfev: np.ndarray
    route: str = "here"
    busy_s: float = 0.0
    energy_ratio: np.ndarray | None = None


def run_job(system: CompiledSystem, job: Job, *, route: str = "here") -> JobOutput:
    """Integrate the runs of ``job`` one after the other (a failure is recorded, never
    raised)."""
    started = time.perf_counter()
    m = len(job.rows)
    values = np.full((m, len(job.times), len(job.quantities)), np.nan)
    status = np.zeros(m, dtype=np.int8)
    nfev = np.zeros(m, dtype=np.int64)
    ratio = np.full(m, np.nan)
    reasons: list[str] = []
    stab = Stabilization()
    watch = current_watch()
    for i in range(m):
        if watch is not None and watch.stopped:   # Ctrl-C: the runs not begun are not run
            status[i:] = -1
            reasons += [NOT_RUN] * (m - i)
            break
        r = simulate_compiled(system, t0=job.t0, t1=job.t1, y0=job.y0s[i], p=job.ps[i],
                              times=job.times, method=job.method, rtol=job.rtol,
                              atol=job.atol, max_step=job.max_step, raise_on_failure=False,
                              constraints=stab, inputs=job.inputs[i] if job.inputs else None)
        if job.monitor_energy and not r.partial:   # (as kidym.simulate: one rule)
            r, check, _error = monitor_run(r, system.equations, system, job.ps[i],
                                           rtol=job.rtol, atol=job.atol, reason="")
            ratio[i] = check.ratio
        n = len(r.t)
        for j, q in enumerate(job.quantities):
            if q in r.values:
                values[i, :n, j] = r.values[q]
        status[i] = -1 if r.partial else (0 if r.status == 0 else 1)
        nfev[i] = r.nfev
        reasons.append("" if status[i] == 0 else r.message)
        if watch is not None:
            watch.ran()
    return JobOutput(np.asarray(job.rows), values, status, reasons, nfev, route,
                     time.perf_counter() - started, ratio)
