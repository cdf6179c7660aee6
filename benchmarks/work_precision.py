"""Work and precision: every kidym method, and the default call, against a reference.

Models (each over its own span):

* ``chain(8)``: the spatial 8-link chain of ``examples/chain/make_chain.py`` (16
  states, 5 s), not stiff; reference: a compiled ``Fehlberg78`` run at rtol 1e-13;
* ``andrews``: Andrews' squeezer (``examples/andrews_squeezer``, 0.03 s); reference:
  the Test Set for IVP Solvers' published positions at t = 0.03 s
  (``tests/oracles/andrews.py``; the test set scores the positions only);
* ``vc α=…``: seed 001's test 1 (``examples/virtual_constraints/test1_circle.kdm``, the
  mass on a circle held by two virtual potentials) at α = 1e4, 1e5, 1e6 over 1 s: the
  vibration across ``f = 0`` has the period ``~1/√α``; reference: a compiled
  ``Fehlberg78`` run at rtol 1e-13 of the same α (the distance to the rigid motion,
  which shrinks with α, is not the integrator's error).

Every method of both engines runs at the requested ``rtol`` (``atol = rtol·1e-3``):
compiled ``ERK8`` (DOP853's coefficients), ``Fehlberg78``, ``ERK5``, ``Adams``,
``BDF`` (analytic Jacobian; CVODE is asked for ``rtol × 1e-2`` for ``BDF`` and
``rtol × 1e-1`` for ``Adams``, ``BDF_TOL_FACTOR`` and ``ADAMS_TOL_FACTOR`` in
``kidym/simulation/compiled_methods.py``); NumPy ``DOP853``, ``RK45``, ``LSODA``,
``Radau``, ``BDF``;
and ``default``: ``kidym.simulate(eq, rtol=…, atol=…)`` with nothing else given (the
default engine ``auto`` and method). Error: ``max |y − y_ref| / (1 + |y_ref|)`` over
the states at the last time (over the positions for ``andrews``); ``err/rtol`` is that
over the requested ``rtol``. Time: wall seconds of the whole ``kidym.simulate`` call on
the derived equations (libraries already built and cached; NumPy on its system, built
once), best of ``--repeat`` runs, more for short ones (up to 30, until 0.3 s are spent);
``/best`` is that over the fastest method whose error is within 10× rtol. A NumPy run
whose first run takes longer than ``--budget`` seconds is not repeated, and one that
would take longer is skipped (``-``, estimated from a short run).

A second table: the default call ``kidym.simulate(eq)`` on Andrews' squeezer, the skier,
the biped and the 8-link chain (each over its own span, default tolerances) against
``engine="numpy"`` and ``engine="compiled"``, wall seconds of the whole call on the
derived equations: first each in a fresh library cache (the default's probe, and the
build of the C where it or ``compiled`` builds, included; ``/best``: the default over
the faster of the two), then with the library cached (best of 5; ``/best`` over the
faster of NumPy and the cached compiled run). A small run in each engine comes first,
so that what the process pays once (imports) is in none of the columns (it was in the
default's, which ran first; ``benchmarks/cli.py`` measures the commands whole).

``--numpy-factor``: instead, SciPy's ``DOP853`` in the NumPy engine handed the
requested ``rtol`` (as before issue 28) and ``rtol × DOP853_TOL_FACTOR`` (the default
now) at ``rtol`` 1e-6 and 1e-9: the error over ``rtol`` and the evaluations of each —
the data behind ``DOP853_TOL_FACTOR`` (``docs/compiled.md``).

``--scan``: instead, the compiled ``ERK8``'s, ``Fehlberg78``'s, ``BDF``'s and ``Adams``'
error (and its ratio to ``τ``) and steps on each model with the solver handed ``τ`` =
1e-5 … 1e-11: the data behind the default's tolerance rule and CVODE's factors
(``docs/compiled.md``).

Run: ``python benchmarks/work_precision.py [--rtols 1e-6 1e-8 1e-9 1e-10] [--quick]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from _common import ROOT, machine
from make_chain import chain_text

import kidym
from kidym.simulation.simulate import NumpySystem
from tests.oracles import andrews

COMPILED = ("ERK8", "Fehlberg78", "ERK5", "Adams", "BDF")
NUMPY = ("DOP853", "RK45", "LSODA", "Radau", "BDF")
#: A method's error at most this times rtol counts as meeting the tolerance.
MEETS = 10.0


def models(quick: bool) -> list[tuple[str, kidym.Equations, float]]:
    """``(name, equations, t_end)`` of the benchmark's models."""
    out = []
    vc = (ROOT / "examples" / "virtual_constraints" / "test1_circle.kdm").read_text()
    out.append(("chain(8)", kidym.derive(kidym.parse(chain_text(8))), 5.0))
    out.append(("andrews", kidym.derive(kidym.load(
        ROOT / "examples" / "andrews_squeezer" / "andrews_squeezer.kdm")), andrews.T_REF))
    for alpha in ((1e4,) if quick else (1e4, 1e5, 1e6)):
        text = vc.replace("alpha = 1000;", f"alpha = {alpha:g};")
        out.append((f"vc α={alpha:.0e}", kidym.derive(kidym.parse(text)), 1.0))
    return out


def final_error(name: str, eq: kidym.Equations, r: kidym.Result, ref: np.ndarray) -> float:
    """The error of ``r`` at its last time against ``ref`` (module docstring)."""
    if name == "andrews":
        y = np.array([r[c][-1] for c in andrews.COORDINATES])
    else:
        y = r.y[:, -1]
    return float((np.abs(y - ref) / (1.0 + np.abs(ref))).max())


def reference(name: str, eq: kidym.Equations, t_end: float) -> np.ndarray:
    if name == "andrews":
        return andrews.Q_REF.copy()
    r = kidym.simulate(eq, engine="compiled", method="Fehlberg78", rtol=1e-13, atol=1e-16,
                       t_end=t_end, n_points=2)
    return r.y[:, -1]


def timed(eq: kidym.Equations, t_end: float, rtol: float, repeat: int, budget: float,
          **kw) -> tuple[kidym.Result | None, float, str]:
    """``(result, best wall seconds, note)`` of ``kidym.simulate(eq, **kw)``."""
    args = dict(t_end=t_end, n_points=2, rtol=rtol, atol=rtol * 1e-3, **kw)
    if kw.get("engine") == "numpy":   # a short run first: skip one that takes too long
        eq = NumpySystem.build(eq)   # (generating the Python once, not per run)
        start = time.perf_counter()
        try:
            kidym.simulate(eq, **{**args, "t_end": t_end / 10})
        except kidym.SimulationError as exc:
            return None, math.nan, f"failed: {exc.message[:40]}"
        if (time.perf_counter() - start) * 10 > budget:
            return None, math.nan, f"> {budget:g} s"
    best, result, spent, count = math.inf, None, 0.0, 0
    # at least `repeat` runs, and short runs again until 0.3 s are spent (at most 30):
    # a millisecond run's best of three is the machine's noise on a shared machine
    while count < repeat or (spent < 0.3 and count < 30):
        start = time.perf_counter()
        try:
            result = kidym.simulate(eq, **args)
        except kidym.SimulationError as exc:
            return None, math.nan, f"failed: {exc.message[:40]}"
        wall = time.perf_counter() - start
        best, spent, count = min(best, wall), spent + wall, count + 1
        if best > budget:
            break
    return result, best, ""


def table(rtols: list[float], quick: bool, repeat: int, budget: float,
          out=sys.stdout) -> list[dict]:
    """Print the work-precision table; return its rows as dicts."""
    rows = []
    print(f"{'model':<12}{'rtol':>7}  {'engine':<9}{'method':<11}{'error':>9}"
          f"{'err/rtol':>9}{'wall [s]':>10}{'/best':>9}  note", file=out)
    for name, eq, t_end in models(quick):
        ref = reference(name, eq, t_end)
        for rtol in rtols:
            runs = [("compiled", m) for m in COMPILED] + [("numpy", m) for m in NUMPY]
            if quick:
                runs = [("compiled", "ERK8"), ("compiled", "BDF"), ("numpy", "DOP853")]
            got = []
            for engine, method in [*runs, ("default", "")]:
                kw = {} if engine == "default" else {"engine": engine, "method": method}
                r, wall, note = timed(eq, t_end, rtol, repeat, budget, **kw)
                err = final_error(name, eq, r, ref) if r is not None else math.nan
                if engine == "default" and r is not None:
                    choice = r.stats.get("engine_choice", "")
                    method = r.stats["method"]
                    note = f"{r.stats['engine']}: {choice}"
                got.append(dict(model=name, rtol=rtol, engine=engine, method=method,
                                error=err, wall=wall, note=note))
            meeting = [g["wall"] for g in got[:-1] if g["error"] <= MEETS * rtol]
            best = min(meeting) if meeting else math.nan
            for g in got:
                g["ratio"] = g["wall"] / best
                err = "-" if math.isnan(g["error"]) else f"{g['error']:.1e}"
                over = "-" if math.isnan(g["error"]) else f"{g['error'] / rtol:.2g}"
                wall = "-" if math.isnan(g["wall"]) else f"{g['wall']:.4f}"
                ratio = "-" if math.isnan(g["ratio"]) else f"{g['ratio']:.3g}"
                print(f"{name:<12}{rtol:7.0e}  {g['engine']:<9}{g['method']:<11}{err:>9}"
                      f"{over:>9}{wall:>10}{ratio:>9}  {g['note']}", file=out, flush=True)
            rows += got
    return rows


#: The example models of the engine table: (name, file under examples/).
EXAMPLES = (("andrews", "andrews_squeezer/andrews_squeezer.kdm"),
            ("skier", "skier/skier.kdm"), ("biped", "biped/biped.kdm"),
            ("chain(8)", None))


def _fresh_cache():
    """A context: ``KIDYM_CACHE_DIR`` pointed at a new empty directory, then restored."""
    import contextlib
    import os
    import tempfile

    @contextlib.contextmanager
    def fresh():
        old = os.environ.get("KIDYM_CACHE_DIR")
        with tempfile.TemporaryDirectory() as cache:
            os.environ["KIDYM_CACHE_DIR"] = cache
            try:
                yield
            finally:
                if old is None:
                    del os.environ["KIDYM_CACHE_DIR"]
                else:
                    os.environ["KIDYM_CACHE_DIR"] = old

    return fresh()


def _wall(eq: kidym.Equations, **kw) -> tuple[float, kidym.Result]:
    """``(wall seconds, result)`` of ``kidym.simulate(eq, **kw)``."""
    start = time.perf_counter()
    out = kidym.simulate(eq, **kw)
    return time.perf_counter() - start, out


def _warm_up() -> None:
    """One small run in each engine (a fresh library cache) before anything is timed:
    what a process pays once (importing SciPy's integrators, loading SUNDIALS) is then
    charged to none of the columns, instead of to whichever call comes first."""
    pendulum = kidym.parse("m = 1; l = 1; Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, "
                           "m*l^2/12; GRAVITY := 0, -g, 0; g = 9.81;")
    with _fresh_cache():
        for engine in ("numpy", "compiled", "auto"):
            kidym.simulate(pendulum, t_end=0.1, initial={"phi": 0.1}, engine=engine)


def engines(quick: bool, out=sys.stdout) -> None:
    """The default call against each engine on the examples (see the module docstring)."""
    _warm_up()
    print(f"{'model':<10}{'default':>9}{'numpy':>8}{'compiled':>10}{'/best':>7}"
          f"{'cached: default':>17}{'compiled':>10}{'/best':>7}  the default's choice (cold)",
          file=out)
    for name, path in EXAMPLES[:1] if quick else EXAMPLES:
        model = (kidym.parse(chain_text(8)) if path is None
                 else kidym.load(ROOT / "examples" / path))
        eq = kidym.derive(model)
        with _fresh_cache():
            cold, r = _wall(eq)
            numpy, _ = _wall(eq, engine="numpy")
        with _fresh_cache():
            compiled, _ = _wall(eq, engine="compiled")
            again = min(_wall(eq)[0] for _ in range(5))
            cached = min(_wall(eq, engine="compiled")[0] for _ in range(5))
        why = r.stats.get("engine_choice", "")
        print(f"{name:<10}{cold:9.3f}{numpy:8.3f}{compiled:10.3f}"
              f"{cold / min(numpy, compiled):7.2f}{again:17.4f}{cached:10.4f}"
              f"{again / min(numpy, cached):7.2f}  {why}", file=out, flush=True)


def scan(quick: bool, out=sys.stdout) -> None:
    """What the solver's own tolerance ``τ`` buys: the error (and its ratio to ``τ``) and
    the steps of the compiled ``ERK8``, ``Fehlberg78``, ``BDF`` and ``Adams`` on each
    model, the solver handed ``τ`` = 1e-5 … 1e-11 (``atol = τ·1e-3``; ``BDF`` and
    ``Adams`` are asked for ``τ`` over their factor, so that CVODE gets ``τ``) — the data
    behind the default's tolerance rule and CVODE's factors (``docs/compiled.md``,
    "Which method meets the tolerance")."""
    from kidym.simulation.compiled_methods import ADAMS_TOL_FACTOR, BDF_TOL_FACTOR

    factors = {"BDF": BDF_TOL_FACTOR, "Adams": ADAMS_TOL_FACTOR}
    methods = ("ERK8", "Fehlberg78", "BDF", "Adams")
    print(f"{'model':<12}{'tau':>7}" + "".join(f"  {m:>10}{'/tau':>8}{'steps':>7}"
                                                for m in methods), file=out)
    for name, eq, t_end in models(quick):
        ref = reference(name, eq, t_end)
        for tau in (10.0 ** -e for e in ((6, 9) if quick else range(5, 12))):
            cells = []
            for method in methods:
                rtol = tau / factors.get(method, 1.0)
                r = kidym.simulate(eq, engine="compiled", method=method, rtol=rtol,
                                   atol=rtol * 1e-3, t_end=t_end, n_points=2)
                handed = r.stats.get("arkode_tolerances",
                                     r.stats.get("cvode_tolerances", (rtol,)))[0]
                err = final_error(name, eq, r, ref)
                cells.append(f"{err:10.1e}{err / handed:8.2g}{r.stats['nsteps']:7d}")
            print(f"{name:<12}{tau:7.0e}  " + "  ".join(cells), file=out, flush=True)


def numpy_factor(quick: bool, rtols: list[float], out=sys.stdout) -> None:
    """What ``DOP853_TOL_FACTOR`` buys in the NumPy engine: SciPy's ``DOP853`` handed the
    requested ``rtol`` (asked for ``rtol / DOP853_TOL_FACTOR``, as before issue 28) and
    handed ``rtol × DOP853_TOL_FACTOR`` (asked for ``rtol``, the default now): the error
    over ``rtol`` and the right-hand-side evaluations of each (``atol = rtol·1e-3``,
    handed as asked)."""
    from kidym.simulation.compiled_methods import DOP853_TOL_FACTOR

    print(f"NumPy DOP853 handed rtol (before) and rtol*{DOP853_TOL_FACTOR:g} (now); "
          "err/rtol, evaluations", file=out)
    print(f"{'model':<12}{'rtol':>7}{'before':>10}{'nfev':>8}{'now':>10}{'nfev':>8}"
          f"{'ratio':>7}", file=out)
    for name, eq, t_end in models(quick):
        ref = reference(name, eq, t_end)
        system = NumpySystem.build(eq)
        for rtol in rtols:
            cells = []
            for asked in (rtol / DOP853_TOL_FACTOR, rtol):
                r = kidym.simulate(system, engine="numpy", method="DOP853", rtol=asked,
                                   atol=rtol * 1e-3, t_end=t_end, n_points=2)
                cells.append((final_error(name, eq, r, ref) / rtol, r.nfev))
            (e0, n0), (e1, n1) = cells
            print(f"{name:<12}{rtol:7.0e}{e0:10.3g}{n0:8d}{e1:10.3g}{n1:8d}{n1 / n0:7.2f}",
                  file=out, flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-6, 1e-8, 1e-9, 1e-10])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds: a NumPy run estimated longer is skipped")
    ap.add_argument("--quick", action="store_true",
                    help="one α, three methods (a check that the script runs)")
    ap.add_argument("--scan", action="store_true",
                    help="instead: the compiled methods' error and steps against the "
                         "tolerance handed to the solver")
    ap.add_argument("--numpy-factor", action="store_true",
                    help="instead: NumPy DOP853 handed rtol and rtol*DOP853_TOL_FACTOR")
    args = ap.parse_args(argv)
    print(machine())
    if args.scan:
        scan(args.quick)
        return
    if args.numpy_factor:
        numpy_factor(args.quick, args.rtols[:1] if args.quick else [1e-6, 1e-9])
        return
    print(f"error at the last time vs the reference; atol = rtol*1e-3; wall: whole "
          f"simulate() call, best of >= {args.repeat}; /best: over the fastest method within "
          f"{MEETS:g}x rtol")
    table(args.rtols, args.quick, args.repeat, args.budget)
    print("\nthe default call vs the engines on the examples (wall seconds of the whole "
          "simulate() call, the model's span, default rtol): in a fresh cache, then cached")
    engines(args.quick)


if __name__ == "__main__":
    main()
