"""A parameter study of the biped (issue 18): a local Dask cluster vs the local thread
pool vs a plain loop, wall time side by side.

The study: ``examples/biped/biped.kdm`` over its thigh and shin lengths ``bL`` and
``qL`` (0.36…0.48 m each, a 40 × 25 grid = 1 000 runs), the compiled engine
(``ERK8``, rtol 1e-9), 51 output times. Each run is **shortened to ``t_end`` = 0.5 s**
(the model's is 2 s) to keep the benchmark short; the legs swing freely under gravity.

* ``loop``: one run after the other in this process (:func:`kidym.sweep`,
  ``executor="loop"``);
* ``threads``: the local thread pool (one thread per core; the C integration releases
  the GIL);
* ``dask``: a ``distributed.LocalCluster`` of worker processes (one thread each, one per
  core). Its start and the workers' first loading of the model (each derives the
  equations and takes the library from the shared cache) are timed apart, by a first
  sweep of two runs per worker; the timed sweeps are the next ones.

First, ``kidym.sweep`` (threads) against ``kidym.simulate_batch`` on the identical runs
(the same library, parameters, output times and threads; issue 28: a sweep within 1.2×
of the batch per run): whole calls, interleaved, best of ``--repeat``, wall and CPU
time (every thread's; on a shared machine wall time counts waiting for a core), the
ratio sweep/batch, and whether the states agree exactly. With ``--monitor``, then the
cost of the energy monitor (issue 27; every run of a sweep goes through it, the biped
is conservative): the same study on the plain loop with ``monitor_energy`` on and off,
interleaved, best of ``--repeat`` (at least 3), wall and CPU µs per run, their
difference and the largest ratio of a run's energy balance to its bound. ``--no-dask``
stops there.

The three results are compared (they must be identical arrays) and the Dask run's
result file is written with ``--out FILE`` (NetCDF). Wall times are the best of
``--repeat`` (the three executors take turns, so that a change in the machine's load
hits them alike); ratios are against the plain loop. ``busy s`` is the runs' own wall
time summed over the threads or workers: above the loop's, the runs themselves were
slowed (other processes on the cores, or the executor's own work).

Run: ``python benchmarks/sweep.py [--runs 1000] [--t-end 0.5] [--no-dask] [--monitor]
[--out FILE]``.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import time

import numpy as np
from _common import ROOT, machine

import kidym
from kidym.study.design import grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="runs (a grid near this size)")
    ap.add_argument("--t-end", type=float, default=0.5, help="end time of each run (0.5 s)")
    ap.add_argument("--points", type=int, default=51, help="output times per run (51)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="threads of the pool and Dask worker processes (all cores)")
    ap.add_argument("--repeat", type=int, default=1, help="timed repetitions (best of)")
    ap.add_argument("--out", default=None, help="write the Dask run's result here (NetCDF)")
    ap.add_argument("--no-dask", action="store_true",
                    help="only the sweep against simulate_batch (and --monitor)")
    ap.add_argument("--monitor", action="store_true",
                    help="the energy monitor's cost per run: on against off, plain loop")
    args = ap.parse_args()

    print(machine())
    print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    model = kidym.load(ROOT / "examples" / "biped" / "biped.kdm")
    n1 = max(1, round(math.sqrt(args.runs * 40 / 25)))
    n2 = max(1, round(args.runs / n1))
    study = grid({"bL": np.linspace(0.36, 0.48, n1), "qL": np.linspace(0.36, 0.48, n2)})
    from kidym.simulation.compiled import CompiledSystem

    system = CompiledSystem.build(kidym.derive(model))
    common = dict(vary=study, t_end=args.t_end, n_points=args.points, system=system)
    print(f"biped: {study.describe()}; t_end {args.t_end:g} s (the model's: "
          f"{model.t_end:g} s), {args.points} outputs, compiled ERK8 rtol 1e-9")

    versus_batch(model, system, study, args)
    if args.monitor:
        monitor_cost(model, system, study, args)
    if args.no_dask:
        return
    from distributed import Client, LocalCluster

    kinds = {"loop": dict(executor="loop"), "threads": dict(executor="threads",
                                                             workers=args.workers)}
    started = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        ready = time.perf_counter() - started
        first = time.perf_counter()
        # every worker loads the model (derives it, takes the library) and runs once
        warm = grid({"bL": study.axes[0][:2 * args.workers], "qL": study.axes[1][:1]})
        kidym.sweep(model, vary=warm, t_end=args.t_end, n_points=args.points, system=system,
                    scheduler=client, chunk_size=1)
        loading = time.perf_counter() - first
        kinds["dask"] = dict(scheduler=client)
        results: dict = {}
        for _ in range(args.repeat):   # interleaved: a change of the machine's load hits all
            for name, kw in kinds.items():
                r = kidym.sweep(model, **common, **kw)
                if name not in results or r.wall_time_s < results[name].wall_time_s:
                    results[name] = r
    print(f"Dask LocalCluster: {args.workers} worker processes × 1 thread, started in "
          f"{ready:.1f} s; the workers' first loading of the model {loading:.1f} s "
          f"(library from: {', '.join(results['dask'].routes)})")
    base = results["loop"].wall_time_s
    print(f"{'executor':<10}{'slots':>6}{'runs':>7}{'failed':>8}{'wall s':>9}"
          f"{'runs/s':>9}{'busy s':>9}{'loop/this':>11}")
    for name, r in results.items():
        print(f"{name:<10}{r.workers:>6}{r.study.n_runs:>7}{len(r.failed):>8}"
              f"{r.wall_time_s:>9.2f}{r.study.n_runs / r.wall_time_s:>9.0f}{r.busy_s:>9.2f}"
              f"{base / r.wall_time_s:>11.2f}")
    same = all(np.array_equal(r.values, results["loop"].values, equal_nan=True)
               for r in results.values())
    print(f"identical results (loop, threads, dask): {'yes' if same else 'NO'}")
    if args.out:
        print(f"result: {results['dask'].write(args.out)}")


def versus_batch(model, system, study, args) -> None:
    """``kidym.sweep`` (threads) against ``kidym.simulate_batch`` on the same runs."""
    names = list(study.names)
    parameters = [dict(zip(names, map(float, row))) for row in study.table]
    common = dict(t_end=args.t_end, n_points=args.points, workers=args.workers)
    best = {"sweep": (np.inf, np.inf), "batch": (np.inf, np.inf)}
    out = {}
    for _ in range(max(args.repeat, 3)):   # interleaved: a change of load hits both
        for name in best:
            wall, cpu = time.perf_counter(), time.process_time()
            if name == "sweep":
                out[name] = kidym.sweep(model, vary=study, system=system, **common)
            else:
                out[name] = kidym.simulate_batch(system, parameters=parameters, **common)
            took = (time.perf_counter() - wall, time.process_time() - cpu)
            best[name] = tuple(min(a, b) for a, b in zip(best[name], took))
    n = study.n_runs
    states = list(system.state_names)
    same = all(np.array_equal(out["sweep"][q], out["batch"].values[q], equal_nan=True)
               for q in states)
    print(f"sweep against simulate_batch, the same {n} runs on {args.workers} threads "
          f"(best of {max(args.repeat, 3)}, whole calls):")
    print(f"{'':<8}{'wall s':>9}{'cpu s':>9}{'wall µs/run':>13}{'cpu µs/run':>12}")
    for name, (wall, cpu) in best.items():
        print(f"{name:<8}{wall:>9.3f}{cpu:>9.3f}{wall / n * 1e6:>13.0f}{cpu / n * 1e6:>12.0f}")
    (ws, cs), (wb, cb) = best["sweep"], best["batch"]
    print(f"sweep/batch: wall {ws / wb:.2f}, cpu {cs / cb:.2f} (target ≤ 1.2); identical "
          f"states: {'yes' if same else 'NO'}")


def monitor_cost(model, system, study, args) -> None:
    """The energy monitor's cost per run: the study on the plain loop, on and off."""
    best = {True: (np.inf, np.inf), False: (np.inf, np.inf)}
    out = {}
    for _ in range(max(args.repeat, 3)):   # interleaved: a change of load hits both
        for on in best:
            wall, cpu = time.perf_counter(), time.process_time()
            out[on] = kidym.sweep(model, vary=study, system=system, t_end=args.t_end,
                                  n_points=args.points, executor="loop", monitor_energy=on)
            took = (time.perf_counter() - wall, time.process_time() - cpu)
            best[on] = tuple(min(a, b) for a, b in zip(best[on], took))
    n = study.n_runs
    print(f"the energy monitor on the plain loop, {n} runs (best of {max(args.repeat, 3)}, "
          f"whole calls): {out[True].options['energy_monitor']}")
    print(f"{'monitor':<8}{'wall s':>9}{'cpu s':>9}{'wall µs/run':>13}{'cpu µs/run':>12}"
          f"{'failed':>8}")
    for on, (wall, cpu) in best.items():
        print(f"{'on' if on else 'off':<8}{wall:>9.3f}{cpu:>9.3f}{wall / n * 1e6:>13.0f}"
              f"{cpu / n * 1e6:>12.0f}{len(out[on].failed):>8}")
    (w1, c1), (w0, c0) = best[True], best[False]
    print(f"the monitor's cost: wall {(w1 - w0) / n * 1e6:.0f} µs/run ({w1 / w0:.2f}×), cpu "
          f"{(c1 - c0) / n * 1e6:.0f} µs/run ({c1 / c0:.2f}×); largest |B|/bound "
          f"{np.nanmax(out[True].energy_ratio):.2g}")


if __name__ == "__main__":
    main()
