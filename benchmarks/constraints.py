"""Models with constraints: kidym's compiled loop vs SciPy + NumPy at equal accuracy.

The four-bar linkage (``examples/four_bar``, 2 loop constraints, 1 degree of freedom,
10 s) and Andrews' squeezing mechanism (``examples/andrews_squeezer``, 6 constraints,
1 degree of freedom, 0.03 s), each integrated over its own span with 101 outputs, the
constraints held by projection at the output times (the default) in both engines:

* ``scipy+np``: ``kidym.simulate`` with the NumPy engine — SciPy ``solve_ivp``
  (DOP853) on kidym's generated NumPy right-hand side, which solves the augmented
  system ``M ẇ = F + Gᵀλ``, ``G ẇ = γ`` with LAPACK;
* ``compiled``: kidym's C loop on SUNDIALS (the augmented solve in C), at *equal
  accuracy*: the fastest of ``ERK8``, ``Fehlberg78`` and ``Adams`` at rtol = (1e-4 …
  30) × the given one (the factors of ``benchmarks/simulate.py``, four per decade,
  taken two decades further down: the NumPy engine restarts SciPy at every output
  time, which makes its runs here more accurate than their rtol says) whose error is at
  most SciPy's; ``ERK8 only`` is the ratio with the default method alone.

The error of a run is the largest over all 101 outputs and all states of
``|y − y_ref| / (1 + |y_ref|)`` (Andrews' speeds reach 10³ where its angles are 10⁻¹:
an absolute error would see the speeds only) against a reference run (compiled
``Fehlberg78``, rtol 1e-14, steps ending on the outputs), as ``benchmarks/simulate.py``
measures. Wall times: best of two (SciPy) and of five (compiled) runs.

``--minimal`` prints instead, for the four-bar, the NumPy engine's two routes for
closed loops side by side at the same rtol: the augmented one (the default) and the
minimal form by coordinate partitioning (``formulation="minimal"``), their errors
against the same reference, wall times (best of two), right-hand-side evaluations
(of the ODE each integrates) and calls of the generated function.

Run: ``python benchmarks/constraints.py [--rtols 1e-6 1e-9] [--minimal]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import ROOT, machine
from simulate import FACTORS as SIMULATE_FACTORS

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

#: rtol factors of the compiled runs: benchmarks/simulate.py's, down to 1e-4
FACTORS = (*SIMULATE_FACTORS, *(round(10 ** (k / 4), 6) for k in range(-9, -17, -1)))
MODELS = ("four_bar/four_bar.kdm", "andrews_squeezer/andrews_squeezer.kdm")


def error(y: np.ndarray, ref: np.ndarray) -> float:
    """``max |y − y_ref| / (1 + |y_ref|)`` over all states and outputs."""
    return float((np.abs(y - ref) / (1.0 + np.abs(ref))).max())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-6, 1e-9])
    ap.add_argument("--minimal", action="store_true",
                    help="the four-bar: augmented route vs minimal form (NumPy engine)")
    args = ap.parse_args(argv)
    print(machine())
    if args.minimal:
        routes(args.rtols)
        return
    print("SciPy DOP853 at rtol (atol = rtol*1e-3); compiled at equal accuracy; wall seconds "
          "of the integration; err = max over outputs of |y - y_ref|/(1 + |y_ref|)")
    print(f"{'model':<18}{'span':>6}{'rtol':>7}{'compiled':>10}{'err':>9}{'scipy+np':>10}"
          f"{'err':>9}{'np/comp':>9}{'ERK8 only':>10}{'nfev c/np':>14}{'proj c/np':>11}"
          "  compiled with")
    for rel in MODELS:
        model = kidym.load(ROOT / "examples" / rel)
        eq = kidym.derive(model)
        cs, ns = CompiledSystem.build(eq), NumpySystem.build(eq)
        kw = dict(t_end=model.t_end, n_points=101)
        ref = kidym.simulate(cs, method="Fehlberg78", rtol=1e-14, atol=1e-16, **kw).y
        for rtol in args.rtols:
            atol = rtol * 1e-3
            t_np = float("inf")
            for _ in range(2):
                start = time.perf_counter()
                rn = kidym.simulate(ns, rtol=rtol, atol=atol, **kw)
                t_np = min(t_np, time.perf_counter() - start)
            err_n = error(rn.y, ref)
            best, best_erk8, choice, rc, err_c = (float("inf"), float("inf"), "", None,
                                                  float("nan"))
            for method in ("ERK8", "Fehlberg78", "Adams"):
                for factor in FACTORS:
                    r = kidym.simulate(cs, method=method, rtol=rtol * factor, atol=atol, **kw)
                    err = error(r.y, ref)
                    if err > err_n:
                        continue
                    wall = min(kidym.simulate(cs, method=method, rtol=rtol * factor,
                                              atol=atol, **kw).stats["wall_time_s"]
                               for _ in range(5))
                    if method == "ERK8":
                        best_erk8 = min(best_erk8, wall)
                    if wall < best:
                        best, choice, rc, err_c = wall, f"{method} {rtol * factor:.2g}", r, err
            name = rel.split("/")[0]
            if rc is None:
                print(f"{name:<18} no compiled setting reached SciPy's error {err_n:.1e}")
                continue
            proj = (f"{rc.stats['constraint_drift']['projections']}/"
                    f"{rn.stats['constraint_drift']['projections']}")
            erk8 = f"{t_np / best_erk8:9.0f}x" if np.isfinite(best_erk8) else f"{'-':>10}"
            print(f"{name:<18}{model.t_end:6.2f}{rtol:7.0e}{best:10.4f}{err_c:9.1e}"
                  f"{t_np:10.3f}{err_n:9.1e}{t_np / best:8.0f}x{erk8}"
                  f"{rc.nfev:>8}/{rn.nfev:<6}{proj:>10}  {choice}", flush=True)


def routes(rtols: list[float]) -> None:
    """The four-bar in the NumPy engine: augmented route vs minimal form."""
    model = kidym.load(ROOT / "examples" / MODELS[0])
    eq = kidym.derive(model)
    ns = NumpySystem.build(eq)
    kw = dict(t_end=model.t_end, n_points=101)
    ref = kidym.simulate(CompiledSystem.build(eq), method="Fehlberg78", rtol=1e-14,
                         atol=1e-16, **kw).y
    print("four_bar, 10 s, 101 outputs, NumPy engine, DOP853 at rtol (atol = rtol*1e-3); "
          "wall seconds (best of two); err = max over outputs of |y - y_ref|/(1 + |y_ref|)")
    print(f"{'rtol':>7}{'augmented':>11}{'err':>9}{'minimal':>9}{'err':>9}{'min/aug':>9}"
          f"{'nfev a/m':>14}{'calls a/m':>15}{'re-partitions':>15}")
    for rtol in rtols:
        runs = {}
        for form in ("augmented", "minimal"):
            best, r = float("inf"), None
            for _ in range(2):
                start = time.perf_counter()
                r = kidym.simulate(ns, rtol=rtol, atol=rtol * 1e-3, formulation=form, **kw)
                best = min(best, time.perf_counter() - start)
            runs[form] = (best, r)
        (ta, ra), (tm, rm) = runs["augmented"], runs["minimal"]
        d = rm.stats["constraint_drift"]
        print(f"{rtol:7.0e}{ta:11.3f}{error(ra.y, ref):9.1e}{tm:9.3f}{error(rm.y, ref):9.1e}"
              f"{tm / ta:8.1f}x{ra.nfev:>7}/{rm.nfev:<6}{ra.nfev:>7}/{d['evaluations']:<7}"
              f"{d['repartitions']:>15}", flush=True)


if __name__ == "__main__":
    main()
