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
``BDF`` (analytic Jacobian); NumPy ``DOP853``, ``RK45``, ``LSODA``, ``Radau``, ``BDF``;
and ``default``: ``kidym.simulate(eq, rtol=…, atol=…)`` with nothing else given (the
default engine ``auto`` and method). Error: ``max |y − y_ref| / (1 + |y_ref|)`` over
the states at the last time (over the positions for ``andrews``); ``err/rtol`` is that
over the requested ``rtol``. Time: wall seconds of the whole ``kidym.simulate`` call on
the derived equations (libraries already built and cached), best of ``--repeat``;
``/best`` is that over the fastest method whose error is within 10× rtol. A NumPy run
whose first run takes longer than ``--budget`` seconds is not repeated, and one that
would take longer is skipped (``-``, estimated from a short run).

A second table: the default call ``kidym.simulate(eq)`` on Andrews' squeezer, the skier,
the biped and the 8-link chain (each over its own span, default tolerances) against
``engine="compiled"`` and ``engine="numpy"``, in a fresh library cache (``cold``: the
first default call, probe and build included).

Run: ``python benchmarks/work_precision.py [--rtols 1e-6 1e-9] [--quick]``
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
        start = time.perf_counter()
        try:
            kidym.simulate(eq, **{**args, "t_end": t_end / 10})
        except kidym.SimulationError as exc:
            return None, math.nan, f"failed: {exc.message[:40]}"
        if (time.perf_counter() - start) * 10 > budget:
            return None, math.nan, f"> {budget:g} s"
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            result = kidym.simulate(eq, **args)
        except kidym.SimulationError as exc:
            return None, math.nan, f"failed: {exc.message[:40]}"
        best = min(best, time.perf_counter() - start)
        if best > budget:
            break
    return result, best, ""


def table(rtols: list[float], quick: bool, repeat: int, budget: float,
          out=sys.stdout) -> list[dict]:
    """Print the work-precision table; return its rows as dicts."""
    rows = []
    print(f"{'model':<12}{'rtol':>7}  {'engine':<9}{'method':<11}{'error':>9}"
          f"{'err/rtol':>9}{'wall [s]':>10}{'/best':>7}  note", file=out)
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
                ratio = "-" if math.isnan(g["ratio"]) else f"{g['ratio']:.2f}"
                print(f"{name:<12}{rtol:7.0e}  {g['engine']:<9}{g['method']:<11}{err:>9}"
                      f"{over:>9}{wall:>10}{ratio:>7}  {g['note'][:90]}", file=out, flush=True)
            rows += got
    return rows


#: The example models of the engine table: (name, file under examples/).
EXAMPLES = (("andrews", "andrews_squeezer/andrews_squeezer.kdm"),
            ("skier", "skier/skier.kdm"), ("biped", "biped/biped.kdm"),
            ("chain(8)", None))


def engines(quick: bool, out=sys.stdout) -> None:
    """The default call against each engine on the examples, at the default tolerances
    and the model's span: ``cold`` is the first default call in a fresh cache (the probe,
    and generating and compiling the C where it chooses to), ``cached`` a second one;
    ``compiled`` and ``numpy`` the engines named (the library cached); ``/best`` the
    default cached over the faster engine."""
    import os
    import tempfile

    print(f"{'model':<10}{'default cold':>13}{'cached':>9}{'compiled':>10}{'numpy':>9}"
          f"{'/best':>7}  default's choice (cold)", file=out)
    with tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("KIDYM_CACHE_DIR")
        os.environ["KIDYM_CACHE_DIR"] = cache
        try:
            for name, path in EXAMPLES[:1] if quick else EXAMPLES:
                model = (kidym.parse(chain_text(8)) if path is None
                         else kidym.load(ROOT / "examples" / path))
                eq = kidym.derive(model)
                start = time.perf_counter()
                cold = kidym.simulate(eq)
                cold_s = time.perf_counter() - start
                walls = {}
                for key, kw in (("cached", {}), ("compiled", {"engine": "compiled"}),
                                ("numpy", {"engine": "numpy"})):
                    best = math.inf
                    for _ in range(1 if key == "numpy" or quick else 3):
                        start = time.perf_counter()
                        kidym.simulate(eq, **kw)
                        best = min(best, time.perf_counter() - start)
                    walls[key] = best
                ratio = walls["cached"] / min(walls["compiled"], walls["numpy"])
                why = cold.stats.get("engine_choice", "")
                print(f"{name:<10}{cold_s:13.3f}{walls['cached']:9.3f}"
                      f"{walls['compiled']:10.3f}{walls['numpy']:9.3f}{ratio:7.2f}  "
                      f"{why[:110]}", file=out, flush=True)
        finally:
            if old is None:
                del os.environ["KIDYM_CACHE_DIR"]
            else:
                os.environ["KIDYM_CACHE_DIR"] = old


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-6, 1e-9])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds: a NumPy run estimated longer is skipped")
    ap.add_argument("--quick", action="store_true",
                    help="one α, three methods (a check that the script runs)")
    args = ap.parse_args(argv)
    print(machine())
    print(f"error at the last time vs the reference; atol = rtol*1e-3; wall: whole "
          f"simulate() call, best of {args.repeat}; /best: over the fastest method within "
          f"{MEETS:g}x rtol")
    table(args.rtols, args.quick, args.repeat, args.budget)
    print("\nthe default call vs the engines on the examples (wall seconds of the whole "
          "simulate() call, the model's span, default rtol; cold: a fresh cache)")
    engines(args.quick)


if __name__ == "__main__":
    main()
