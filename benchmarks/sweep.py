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

The three results are compared (they must be identical arrays) and the Dask run's
result file is written with ``--out FILE`` (NetCDF). Wall times are the best of
``--repeat`` (the three executors take turns, so that a change in the machine's load
hits them alike); ratios are against the plain loop. ``busy s`` is the runs' own wall
time summed over the threads or workers: above the loop's, the runs themselves were
slowed (other processes on the cores, or the executor's own work).

Run: ``python benchmarks/sweep.py [--runs 1000] [--t-end 0.5] [--out FILE]``.
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
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    print(machine())
    print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    model = kidym.load(ROOT / "examples" / "biped" / "biped.kdm")
    n1 = max(1, round(math.sqrt(args.runs * 40 / 25)))
    n2 = max(1, round(args.runs / n1))
    study = grid({"bL": np.linspace(0.36, 0.48, n1), "qL": np.linspace(0.36, 0.48, n2)})
    from kidym.simulate.compiled import CompiledSystem

    system = CompiledSystem.build(kidym.derive(model))
    common = dict(vary=study, t_end=args.t_end, n_points=args.points, system=system)
    print(f"biped: {study.describe()}; t_end {args.t_end:g} s (the model's: "
          f"{model.t_end:g} s), {args.points} outputs, compiled ERK8 rtol 1e-9")

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


if __name__ == "__main__":
    main()
