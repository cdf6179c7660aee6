"""Build time of big models: the recursion, the dense solve in parts, one function.

For the spatial n-link chain (``examples/chain/make_chain.py``) each build runs in a
fresh process with a fresh cache, from the model text to the first trajectory:

* ``derive``: parse and derive; ``C gen``: the equations' cache key and the C source
  (``generate_c``); ``compile``: the compiler runs (``kidym.codegen.build``) and
  loading the library; ``run``: a first 0.01 s simulation; ``total s`` their sum;
  ``wall s`` the whole process's wall time (interpreter start and imports included);
* peak memory, sampled every 20 ms from ``/proc``: of the whole build (this process
  and every compiler process running at that moment, added up), and of the largest
  compiler process alone (``cc1``);
* the cached start: a second process on the same cache, from the model file to the
  first trajectory (``kidym.simulate(kidym.load(path), engine="compiled")``, 0.01 s;
  the models and equations read back from the cache, :mod:`kidym.eom.stored`), in
  the process (``cached s``, imports included) and its whole wall time (``c. wall``);
  for kidym's build, the wall time of a second ``kidym run FILE --engine compiled``
  (``c. run``, its 1000 points written; "-" for the peers, which no option selects);
* the right-hand side's cost per evaluation (``kidym_rhs_many``, q̇ and the solve of
  ``M ẇ = F`` included, over 200 random states), the builds loaded in one process
  and timed alternately in 301 rounds of 20, the median, with their largest
  difference.

"kidym" is the build as kidym makes it: from ``RECURSIVE_FROM`` speeds on an open
tree, ``kidym_rhs`` by the articulated-body recursion and ``kidym_eval`` by composite
bodies and Newton–Euler (:mod:`kidym.codegen.aba_c`), no formed ``M``, ``F`` in the
C; below, the dense solve. "dense" is the dense solve of the formed ``M`` at every
size, a routine of more than ``SPLIT_ABOVE`` statements in parts of
``PART_STATEMENTS`` (``docs/compiled.md``; the ``parts`` column counts them), as
kidym built every model before the recursion; "one function" is the dense build with
no routine split, as kidym built before the parts: the peers measured in the same
run. Usage::

    python3 benchmarks/build.py [--sizes 10 30 60 100] [--dense-up-to 60]
                                [--single-up-to 30]

A dense build above ``--dense-up-to`` and a one-function build above
``--single-up-to`` links are skipped and said so (the 60-link chain's one-function
build took more than 10 minutes and 2.8 GB in one compiler process on the
development machine).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, machine

#: Rounds of :data:`BATCH` evaluations per library in :func:`rhs_costs`: short rounds,
#: so that most are not preempted on a shared machine (a preempted round of 200
#: evaluations showed as 2-4x the cost), and the median of many.
ROUNDS, BATCH = 301, 20


class PeakMemory(threading.Thread):
    """Resident memory of this process and its descendants, sampled from ``/proc``.

    ``total`` is the largest sum over the processes alive at one sample, ``largest``
    the largest single descendant (a compiler process). Zero where ``/proc`` is absent.
    """

    def __init__(self, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.interval, self.total, self.largest = interval, 0, 0
        self.page = os.sysconf("SC_PAGE_SIZE")
        self._done = threading.Event()

    def _rss(self, pid: int) -> int:
        try:
            return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * self.page
        except (OSError, IndexError, ValueError):
            return 0

    @staticmethod
    def _comm(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return ""

    def sample(self) -> None:
        parent: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    stat = Path(entry.path, "stat").read_text()
                except OSError:
                    continue
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        mine, grew = {os.getpid()}, True
        while grew:
            new = {p for p, pp in parent.items() if pp in mine} - mine
            mine |= new
            grew = bool(new)
        # a child between fork and exec shares this process's pages: not counted twice
        me = self._comm(os.getpid())
        sizes = {p: self._rss(p) for p in mine
                 if p == os.getpid() or self._comm(p) != me}
        self.total = max(self.total, sum(sizes.values()))
        self.largest = max([self.largest, *(v for p, v in sizes.items() if p != os.getpid())])

    def run(self) -> None:
        while not self._done.is_set():
            if os.path.isdir("/proc"):
                self.sample()
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _mode(mode: str) -> None:
    """Set the generator up as ``mode`` builds: ``kidym`` as kidym does, ``dense`` the
    dense solve of the formed ``M`` (as kidym built every model before the recursion,
    routines split in parts), ``one`` the dense solve with every routine one function."""
    emitter = importlib.import_module("kidym.codegen.emitter")
    if mode in ("dense", "one"):
        importlib.import_module("kidym.codegen.aba_c").RECURSIVE_FROM = 10**9
    if mode == "one":
        emitter.SPLIT_ABOVE = 10**9
        importlib.import_module("kidym.codegen.build").COMPILE_TIMEOUT = 3600


def one(n: int, mode: str, cache: str) -> dict:
    """Build the n-link chain in this process as ``mode`` (:func:`_mode`); the
    measurements as a dict."""
    os.environ["KIDYM_CACHE_DIR"] = cache
    from make_chain import chain_text

    import kidym
    from kidym.codegen import index
    from kidym.eom.stored import derived as derive_stored
    from kidym.simulation.compiled import CompiledSystem

    # (``kidym.codegen.build`` is also the name of the function the package exports)
    build_module = importlib.import_module("kidym.codegen.build")
    _mode(mode)
    path = _model_file(n, cache)
    path.write_text(chain_text(n), encoding="utf-8")
    memory = PeakMemory()
    memory.start()
    start = time.perf_counter()
    # as `kidym run` and kidym.simulate(kidym.load(path)): the models and equations are
    # stored in the cache by the file's text (kidym.eom.stored)
    eq = derive_stored(kidym.load(path))
    derived = time.perf_counter()
    key = index.equations_key(eq, flags=build_module.build_flags())
    code = kidym.codegen.generate_c(eq)
    generated = time.perf_counter()
    index.remember(key, code, build_module.build(code))
    cs = CompiledSystem.build(eq)
    built = time.perf_counter()
    kidym.simulate(cs, engine="compiled", t_end=0.01, n_points=2)
    first = time.perf_counter()
    memory.stop()
    return {"n": n, "parts": len(code.parts),
            "derive_s": derived - start, "generate_s": generated - derived,
            "compile_s": built - generated, "run_s": first - built, "first_s": first - start,
            "peak_mb": max(memory.total,
                           resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) / 2**20,
            "compiler_mb": memory.largest / 2**20, "library": str(cs.path)}


def _model_file(n: int, cache: str) -> Path:
    """The n-link chain's model file, beside the cache folder of a build."""
    return Path(cache).parent / f"chain{n}.kdm"


def cached_start(n: int, mode: str, cache: str) -> float:
    """Seconds from the model file to the first trajectory with the cache of :func:`one`
    (``mode`` as there: the cache index is keyed on the generator's sizes): imports,
    ``kidym.load``, and ``kidym.simulate`` of 0.01 s on the compiled engine."""
    start = time.perf_counter()
    os.environ["KIDYM_CACHE_DIR"] = cache
    import kidym

    _mode(mode)
    kidym.simulate(kidym.load(_model_file(n, cache)), engine="compiled", t_end=0.01,
                   n_points=2)
    return time.perf_counter() - start


def cli_start(n: int, cache: str) -> float:
    """Wall seconds of a second ``kidym run FILE --engine compiled`` (0.01 s, no plots,
    its 1000 points written), the library, models and equations in ``cache``."""
    out = Path(cache).parent / "run"
    env = {**os.environ, "KIDYM_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kidym", "run", str(_model_file(n, cache)),
                    "--engine", "compiled", "--t-end", "0.01", "--no-plots", "-q", "--force",
                    "--out", str(out)], check=True, env=env, capture_output=True,
                   timeout=600)
    return time.perf_counter() - start


def rhs_costs(libraries: list[str]) -> dict:
    """µs per right-hand side of each library (alternated, median over :data:`ROUNDS`)
    and the largest relative difference of their results from the first one's."""
    import ctypes

    import numpy as np

    libs = []
    for path in libraries:
        lib = ctypes.CDLL(path)
        lib.kidym_rhs_many.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 4
        lib.kidym_rhs_many.restype = ctypes.c_int
        libs.append(lib)
    layout = tuple((ctypes.c_int * 7).in_dll(libs[0], "kidym_layout"))
    n_y, n_p = layout[2], layout[3]
    rng = np.random.default_rng(0)
    Y = np.ascontiguousarray(rng.uniform(-1, 1, (200, n_y)))
    T = np.zeros(len(Y))
    p = rng.uniform(0.5, 1.5, max(n_p, 1))
    results = []
    for lib in libs:
        out = np.empty_like(Y)
        lib.kidym_rhs_many(len(Y), T.ctypes.data, Y.ctypes.data, p.ctypes.data,
                           out.ctypes.data)
        results.append(out)
    times: list[list[float]] = [[] for _ in libs]
    out = np.empty_like(Y)
    for r in range(ROUNDS):
        y = Y[(r * BATCH) % (len(Y) - BATCH):]
        for k, lib in enumerate(libs):
            t0 = time.perf_counter()
            lib.kidym_rhs_many(BATCH, T.ctypes.data, y.ctypes.data, p.ctypes.data,
                               out.ctypes.data)
            times[k].append((time.perf_counter() - t0) / BATCH * 1e6)
    scale = 1 + np.abs(results[0])
    return {"rhs_us": [statistics.median(t) for t in times],
            "difference": max(float(np.max(np.abs(r - results[0]) / scale))
                              for r in results)}


def _child(*args: str) -> tuple[str, float]:
    """The last line a child process printed and its wall time (interpreter start and
    imports included)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'examples' / 'chain'}"}
    start = time.perf_counter()
    run = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         env=env, timeout=4 * 3600)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return run.stdout.strip().splitlines()[-1], wall


HEAD = (f"{'n':>4} {'build':<13}{'parts':>6}{'derive':>8}{'C gen':>8}{'compile':>9}"
        f"{'run':>6}{'total s':>9}{'wall s':>8}{'peak MB':>9}{'cc1 MB':>8}{'cached s':>9}"
        f"{'c. wall':>8}{'c. run':>8}{'rhs µs':>8}")


def _row(n: int, mode: str, r: dict) -> str:
    cli = f"{r['cli_s']:>8.2f}" if "cli_s" in r else f"{'-':>8}"
    return (f"{n:>4} {mode:<13}{r['parts']:>6}{r['derive_s']:>8.1f}{r['generate_s']:>8.1f}"
            f"{r['compile_s']:>9.1f}{r['run_s']:>6.2f}{r['first_s']:>9.1f}"
            f"{r['wall_s']:>8.1f}{r['peak_mb']:>9.0f}{r['compiler_mb']:>8.0f}"
            f"{r['cached_s']:>9.2f}{r['cached_wall_s']:>8.2f}{cli}{r['rhs_us']:>8.2f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 60, 100])
    ap.add_argument("--dense-up-to", type=int, default=60,
                    help="build the dense peer only up to this many links")
    ap.add_argument("--single-up-to", type=int, default=30,
                    help="build the one-function peer only up to this many links")
    ap.add_argument("--one", nargs=3, metavar=("N", "MODE", "CACHE"), help=argparse.SUPPRESS)
    ap.add_argument("--cached", nargs=3, metavar=("N", "MODE", "CACHE"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--rhs", nargs="+", metavar="LIBRARY", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        n, mode, cache = args.one
        print(json.dumps(one(int(n), mode, cache)))
        return
    if args.cached:
        n, mode, cache = args.cached
        print(json.dumps(cached_start(int(n), mode, cache)))
        return
    if args.rhs:
        print(json.dumps(rhs_costs(args.rhs)))
        return
    print(machine())
    print(f"{time.strftime('%Y-%m-%d')}; seconds from the model file; peak MB: the build's "
          "processes together; cc1 MB: the largest compiler process")
    print(HEAD)
    for n in args.sizes:
        rows = {}
        with tempfile.TemporaryDirectory() as tmp:
            for mode in ("kidym", "dense", "one function"):
                if mode == "dense" and n > args.dense_up_to:
                    print(f"{n:>4} {mode:<13}  skipped: above --dense-up-to "
                          f"{args.dense_up_to}", flush=True)
                    continue
                if mode == "one function" and n > args.single_up_to:
                    print(f"{n:>4} {mode:<13}  skipped: above --single-up-to "
                          f"{args.single_up_to} (minutes and gigabytes in one compiler "
                          "process)", flush=True)
                    continue
                cache = os.path.join(tmp, mode.replace(" ", "-"))
                how = {"kidym": "kidym", "dense": "dense"}.get(mode, "one")
                line, wall = _child("--one", str(n), how, cache)
                r = json.loads(line)
                r["wall_s"] = wall
                line, wall = _child("--cached", str(n), how, cache)
                r["cached_s"], r["cached_wall_s"] = json.loads(line), wall
                if mode == "kidym":
                    r["cli_s"] = cli_start(n, cache)
                rows[mode] = r
            costs = json.loads(_child("--rhs", *(r["library"] for r in rows.values()))[0])
        for (mode, r), us in zip(rows.items(), costs["rhs_us"]):
            r["rhs_us"] = us
            print(_row(n, mode, r), flush=True)
        for peer in ("dense", "one function"):
            if peer not in rows:
                continue
            a, b = rows["kidym"], rows[peer]
            print(f"{n:>4} kidym / {peer}: rhs {a['rhs_us'] / b['rhs_us']:.2f}x, "
                  f"model to first trajectory {a['first_s'] / b['first_s']:.2f}x, peak "
                  f"memory {a['peak_mb'] / b['peak_mb']:.2f}x; results differ by at most "
                  f"{costs['difference']:.1e} (relative)", flush=True)


if __name__ == "__main__":
    main()
