"""The cost of watching a run (progress and Ctrl-C, ``kidym/simulation/watch.py``).

A watched compiled run pays, at every evaluation of the right-hand side, one store (the
model time reached) and one load (the stop flag) of a cell the C loop shares with
Python; per run, the set-up of :func:`~kidym.simulation.watch.watching` (the SIGINT
handler, ``signal.set_wakeup_fd`` and waking the process's watcher thread, which
sleeps until a signal comes unless a bar is drawn). ``kidym.simulate`` and
``kidym run`` watch every run; ``system.integrate`` outside ``watching`` does not.

Measured in the same process as CPU time, interleaved, best of ``--repeat``:

* ``long``: a run of many evaluations (the driven oscillator ``x'' = -4x + sin t`` —
  the cheapest right-hand side, where the per-evaluation cost weighs most — and the
  biped), watched / unwatched wall time;
* ``short``: a run of a few evaluations, the fixed cost per run in microseconds.

Run: ``python benchmarks/watch.py [--repeat 7]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _common import ROOT, machine

import kidym
from kidym.progress import Reporter
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.spec import prepare_run
from kidym.simulation.watch import watching

DRIVEN = ("m = 1; k = 4; F0 = 1; W = 1;\nB | Sx(x) | m, 0, 0, 0;\nCs.x = k;\n"
          "Pf.x = F0*sin(W*t);\nINITIAL := x(0), x't(0);\nTIME := t(0, 20);\n")


def timed(system: CompiledSystem, t1: float, watched: bool) -> tuple[float, int]:
    """CPU seconds of this process (every thread: the watcher's too) and evaluations of
    one run over ``0 … t1``. CPU time, not wall: on a shared machine wall time counts
    waiting for a core, which swamps differences of a few per cent."""
    spec = prepare_run(system, t_end=t1, n_points=11)
    start = time.process_time()
    if watched:
        with watching(Reporter(tty=False)):
            raw = system.integrate(spec.y0, spec.p, spec.times, t0=spec.t0)
    else:
        raw = system.integrate(spec.y0, spec.p, spec.times, t0=spec.t0)
    return time.process_time() - start, raw["nfev"]


def compare(label: str, system: CompiledSystem, t1: float, repeat: int) -> str:
    best = {False: np.inf, True: np.inf}
    nfev = 0
    for _ in range(repeat):
        for watched in (False, True):   # interleaved: the machine's load hits both
            wall, nfev = timed(system, t1, watched)
            best[watched] = min(best[watched], wall)
    per_eval = (best[True] - best[False]) / max(nfev, 1) * 1e9
    return (f"{label:<34}{nfev:>10}{best[False] * 1e3:>12.3f}{best[True] * 1e3:>12.3f}"
            f"{best[True] / best[False]:>9.3f}{per_eval:>14.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(machine())
    print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    driven = CompiledSystem.build(kidym.derive(kidym.parse(DRIVEN)))
    biped = CompiledSystem.build(kidym.derive(kidym.load(ROOT / "examples" / "biped"
                                                        / "biped.kdm")))
    print(f"CPU time, best of {args.repeat} interleaved")
    print(f"{'run':<34}{'nfev':>10}{'plain ms':>12}{'watched ms':>12}{'ratio':>9}"
          f"{'ns/eval more':>14}")
    print(compare("driven oscillator, t = 0…2000", driven, 2000.0, args.repeat))
    print(compare("biped, t = 0…0.5", biped, 0.5, args.repeat))
    print(compare("driven oscillator, t = 0…0.01 (short)", driven, 0.01, args.repeat * 3))
    short = {False: np.inf, True: np.inf}
    for _ in range(args.repeat * 20):
        for watched in (False, True):
            short[watched] = min(short[watched], timed(driven, 0.01, watched)[0])
    print(f"fixed cost of a watched run (watching(): handler, wake-up descriptor): "
          f"{(short[True] - short[False]) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
