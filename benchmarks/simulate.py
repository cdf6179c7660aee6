"""A full simulation at equal tolerances: kidym's compiled loop vs SciPy + NumPy vs PyDy.

Each model is integrated over the same span with the same ``rtol``/``atol`` by

* ``compiled``: kidym's C integration loop on SUNDIALS, cached library; at *equal
  accuracy*: of ARKODE with the DOP853 formula (``ERK8``, the default), ARKODE
  Fehlberg 7(8) and CVODE Adams at rtol = (0.01 … 30) × the given one (four steps
  per decade), the fastest setting whose error is at most the SciPy run's;
* ``scipy+numpy``: SciPy ``solve_ivp`` (DOP853) calling kidym's NumPy right-hand side;
* ``pydy``: SciPy ``solve_ivp`` (DOP853) calling PyDy's Cython right-hand side of
  the same chain from SymPy ``KanesMethod`` (chains up to ``--pydy-max`` links).

The error of a run is the largest error over all its 101 outputs against a reference
run (compiled ``Fehlberg78``, rtol 1e-14, steps ending on the outputs: independent of
``ERK8``'s formula and of its tolerance mapping), printed beside each time so that
equal accuracy can be checked; the outputs between steps count, not only the final
state. The column ``ERK8 only`` is the ratio with the default method alone at equal
accuracy.

A second table gives, per model and ``rtol`` (``--accuracy-rtols``, ``atol`` =
``rtol``·1e-3), the error of every compiled method beside SciPy's DOP853 on the
NumPy right-hand side (``err/evaluations``): what a user asking for ``rtol`` gets.

Run: ``python benchmarks/simulate.py [--chains 3 5 10] [--rtol 1e-9]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import ROOT, machine, optional
from make_chain import chain_text
from scipy.integrate import solve_ivp

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

#: rtol factors tried for the compiled run at equal accuracy: four per decade, so
#: that "equal" is matched to within a factor 1.8 in rtol rather than 3
FACTORS = tuple(round(10 ** (k / 4), 3) for k in range(6, -9, -1))


def cases(chains: list[int]) -> list[tuple[str, str]]:
    out = [(f"chain{n}", chain_text(n)) for n in chains]
    for path in ("double_pendulum/double_pendulum.kdm", "biped/biped.kdm"):
        p = ROOT / "examples" / path
        out.append((p.stem, p.read_text(encoding="utf-8")))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, nargs="+", default=[3, 5, 10])
    ap.add_argument("--pydy-max", type=int, default=5)
    ap.add_argument("--rtol", type=float, default=1e-9)
    ap.add_argument("--atol", type=float, default=1e-12)
    ap.add_argument("--t-end", type=float, default=None,
                    help="span (default: each model's own)")
    ap.add_argument("--accuracy-rtols", type=float, nargs="*",
                    default=[1e-6, 1e-8, 1e-10, 1e-12],
                    help="rtol values of the accuracy table (none: skip it)")
    args = ap.parse_args(argv)
    pydy = optional("pydy") if optional("Cython") else None
    print(machine())
    if pydy is None:
        print("note: pydy/Cython not installed: the PyDy column is skipped")
    print(f"rtol={args.rtol:g}, atol={args.atol:g}; wall seconds of the integration; "
          "err = max over the outputs of |y - y_ref|")
    print(f"{'model':<16}{'span':>6}{'compiled':>10}{'err':>9}{'scipy+np':>10}{'err':>9}"
          f"{'pydy':>9}{'err':>9}{'np/comp':>9}{'pydy/comp':>10}{'ERK8 only':>10}"
          f"{'nfev c/np':>14} compiled with")
    accuracy: list[str] = []
    for name, text in cases(args.chains):
        model = kidym.parse(text)
        eq = kidym.derive(model)
        cs = CompiledSystem.build(eq)
        ns = NumpySystem.build(eq)
        t1 = args.t_end if args.t_end else model.t_end
        kw = dict(t_end=t1, n_points=101)
        ref = kidym.simulate(cs, method="Fehlberg78", rtol=1e-14, atol=1e-16, **kw).y
        t_np = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            rn = kidym.simulate(ns, rtol=args.rtol, atol=args.atol, **kw)
            t_np = min(t_np, time.perf_counter() - start)
        err_n = np.abs(rn.y - ref).max()
        # equal accuracy: the fastest compiled setting whose error is at most NumPy's
        best, choice, rc, err_c = float("inf"), "", None, float("nan")
        best_erk8 = float("inf")
        for method in ("ERK8", "Fehlberg78", "Adams"):
            for factor in FACTORS:
                rtol = args.rtol * factor
                r = kidym.simulate(cs, method=method, rtol=rtol, atol=args.atol, **kw)
                err = np.abs(r.y - ref).max()
                if err > err_n:
                    continue
                wall = min(kidym.simulate(cs, method=method, rtol=rtol, atol=args.atol,
                                          **kw).stats["wall_time_s"] for _ in range(5))
                if method == "ERK8":
                    best_erk8 = min(best_erk8, wall)
                if wall < best:
                    best, choice, rc, err_c = wall, f"{method} {rtol:.2g}", r, err
        if rc is None:
            print(f"{name:<16} no compiled setting reached NumPy's error {err_n:.1e}")
            continue
        t_py = err_p = float("nan")
        if pydy is not None and name.startswith("chain") and int(name[5:]) <= args.pydy_max:
            from rhs import pydy_chain

            f, consts = pydy_chain(int(name[5:]))
            y0 = np.ascontiguousarray(rc.y[:, 0])

            def fun(t, x, f=f, c=consts):
                # a copy: PyDy's function returns the same buffer on every call, and
                # SciPy keeps the last derivative (f_old) for its dense output
                return f(np.ascontiguousarray(x), t, c).copy()

            start = time.perf_counter()
            sol = solve_ivp(fun, (0.0, t1), y0, method="DOP853", rtol=args.rtol,
                            atol=args.atol, t_eval=rc.t)
            t_py = time.perf_counter() - start
            err_p = np.abs(sol.y - ref).max()

        def fmt(x: float, spec: str, w: int) -> str:
            return f"{'-':>{w}}" if np.isnan(x) else f"{x:{w}{spec}}"

        print(f"{name:<16}{t1:6.1f}{best:10.4f}{err_c:9.1e}{t_np:10.3f}{err_n:9.1e}"
              f"{fmt(t_py, '.3f', 9)}{fmt(err_p, '.1e', 9)}{t_np / best:8.0f}x"
              f"{fmt(t_py / best, '.0f', 9)}x{fmt(t_np / best_erk8, '.0f', 9)}x"
              f"{rc.nfev:>8}/{rn.nfev:<6} {choice}", flush=True)
        for rtol in args.accuracy_rtols:
            cells = []
            for method in ("ERK8", "Fehlberg78", "ERK5", "Adams", "BDF"):
                r = kidym.simulate(cs, method=method, rtol=rtol, atol=rtol * 1e-3,
                                   raise_on_failure=False, **kw)
                err = np.abs(r.y - ref).max() if r.success else float("nan")
                cells.append(f"{err:8.1e}/{r.nfev:<6}")
            r = kidym.simulate(ns, rtol=rtol, atol=rtol * 1e-3, **kw)
            cells.append(f"{np.abs(r.y - ref).max():8.1e}/{r.nfev:<6}")
            accuracy.append(f"{name:<16}{rtol:8.0e} " + " ".join(cells))
    if accuracy:
        print("\naccuracy at the rtol asked for (atol = rtol*1e-3): max error over the "
              "outputs / right-hand-side evaluations")
        print(f"{'model':<16}{'rtol':>8} " + " ".join(
            f"{m:<15}" for m in ("ERK8", "Fehlberg78", "ERK5", "Adams", "BDF",
                                 "scipy DOP853")))
        print("\n".join(accuracy))
    # start-up of a run from a cached library: parse + derive + generate + hash + dlopen
    text = (ROOT / "examples" / "biped" / "biped.kdm").read_text(encoding="utf-8")
    start = time.perf_counter()
    eq = kidym.derive(kidym.parse(text))
    t_derive = time.perf_counter() - start
    start = time.perf_counter()
    CompiledSystem.build(eq)
    t_load = time.perf_counter() - start
    print(f"cached start of the biped: parse+derive {t_derive:.3f} s, generate C + find in "
          f"cache + load {t_load:.3f} s, total {t_derive + t_load:.3f} s")


if __name__ == "__main__":
    main()
