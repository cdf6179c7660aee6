"""Build time of big models: parts compiled in parallel vs one function per routine.

For the spatial n-link chain (``examples/chain/make_chain.py``), each build runs in a
fresh process with a fresh cache and reports: model file → first trajectory (parse,
derive, generate, compile, load, a 0.01 s run), the compiler's CPU time and peak
memory (of its processes), the cached start (a second process: parse, derive, the
cache index, load), and the right-hand side's cost per evaluation in a C loop
(``kidym_rhs_many`` over 1000 states). "one function" is the build before routines
were split (``SPLIT_ABOVE`` set beyond any model): the peer measured in the same
run. Usage::

    cd benchmarks && python3 build.py [--sizes 10 30 60 100] [--single-up-to 60]

A one-function build above ``--single-up-to`` links is skipped (it took minutes and
gigabytes at n = 60).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from _common import ROOT, machine


def one(n: int, parts: bool, cache: str) -> dict:
    """Build the n-link chain in this process; the measurements as a dict."""
    os.environ["KIDYM_CACHE_DIR"] = cache
    import numpy as np
    from make_chain import chain_text

    import kidym
    import kidym.codegen.emit as emit
    from kidym.simulate.compiled import CompiledSystem

    if not parts:
        emit.SPLIT_ABOVE = 10**9
    start = time.perf_counter()
    eq = kidym.derive(kidym.parse(chain_text(n)))
    derived = time.perf_counter()
    cs = CompiledSystem.build(eq)
    built = time.perf_counter()
    kidym.simulate(eq, engine="compiled", t_end=0.01, n_points=2)
    first = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    rng = np.random.default_rng(0)
    Y = np.ascontiguousarray(rng.uniform(-1, 1, (1000, cs.n_y)))
    T, Ydot = np.zeros(len(Y)), np.empty_like(Y)
    p = cs.parameter_vector()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        cs.lib.kidym_rhs_many(len(Y), T.ctypes.data, Y.ctypes.data, p.ctypes.data,
                              Ydot.ctypes.data)
        best = min(best, (time.perf_counter() - t0) / len(Y))
    return {"n": n, "parts": len(cs.code.parts), "derive_s": derived - start,
            "build_s": built - derived, "first_s": first - start,
            "compiler_cpu_s": children.ru_utime + children.ru_stime,
            "compiler_peak_mb": children.ru_maxrss / 1024,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rhs_us": best * 1e6}


def cached_start(n: int, cache: str) -> float:
    """Seconds from model text to a loaded library, with the library in ``cache``."""
    os.environ["KIDYM_CACHE_DIR"] = cache
    from make_chain import chain_text

    import kidym
    from kidym.simulate.compiled import CompiledSystem

    start = time.perf_counter()
    CompiledSystem.build(kidym.derive(kidym.parse(chain_text(n))))
    return time.perf_counter() - start


def _child(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'examples' / 'chain'}"}
    run = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         env=env, timeout=3600)
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return run.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 60, 100])
    ap.add_argument("--single-up-to", type=int, default=60)
    ap.add_argument("--one", nargs=3, metavar=("N", "MODE", "CACHE"), help=argparse.SUPPRESS)
    ap.add_argument("--cached", nargs=2, metavar=("N", "CACHE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        n, mode, cache = args.one
        print(json.dumps(one(int(n), mode == "parts", cache)))
        return
    if args.cached:
        print(json.dumps(cached_start(int(args.cached[0]), args.cached[1])))
        return
    print(machine())
    print(f"{'n':>4} {'build':<13}{'parts':>6}{'first run s':>12}{'compiler CPU s':>15}"
          f"{'compiler MB':>12}{'cached start s':>15}{'rhs µs':>9}")
    for n in args.sizes:
        rows = {}
        for mode in ("parts", "one function"):
            if mode == "one function" and n > args.single_up_to:
                print(f"{n:>4} {mode:<13}  (skipped: above --single-up-to)")
                continue
            with tempfile.TemporaryDirectory() as cache:
                r = json.loads(_child("--one", str(n), "parts" if mode == "parts" else "one",
                                      cache))
                r["cached_s"] = json.loads(_child("--cached", str(n), cache))
            rows[mode] = r
            print(f"{n:>4} {mode:<13}{r['parts']:>6}{r['first_s']:>12.1f}"
                  f"{r['compiler_cpu_s']:>15.1f}{r['compiler_peak_mb']:>12.0f}"
                  f"{r['cached_s']:>15.2f}{r['rhs_us']:>9.2f}", flush=True)
        if len(rows) == 2:
            a, b = rows["parts"], rows["one function"]
            print(f"{n:>4} ratio (one function / parts): first run "
                  f"{b['first_s'] / a['first_s']:.2f}x, compiler CPU "
                  f"{b['compiler_cpu_s'] / a['compiler_cpu_s']:.2f}x, rhs "
                  f"{a['rhs_us'] / b['rhs_us']:.2f}x slower with parts")


if __name__ == "__main__":
    main()
