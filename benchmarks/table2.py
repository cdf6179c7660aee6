"""The analogue of seed 003 Table 2: interpreted vs compiled run of three models.

The seed's KiDyM integrated the double pendulum, the wing nut and the biped by
evaluating its formula trees (3.6 s, 37.3 s, 130 s), and with a generated C++ DLL
(3.27 s, 25.13 s, 48.59 s): speed-ups 1.10, 1.48, 2.67, because its Runge-Kutta
loop stayed in the interpreter. Here "interpreted" is kidym's NumPy engine (SciPy
``solve_ivp`` DOP853 over generated Python) and "compiled" is the generated C with
the whole loop in C (ARKODE running the DOP853 formula, ``method="ERK8"``); same
``rtol``/``atol``, each model's own span and initial conditions, 101 outputs. Both
times are of the integration alone (best of 3), the workspaces built beforehand;
the ``err`` columns are the largest error over all outputs against a reference run
(compiled, rtol 1e-13). "speed-up" is at the same ``rtol``; "at equal error" takes
the fastest compiled run, of rtol × (0.1 … 30), whose error is at most the
interpreted run's (the column shows that rtol). The compile column is a cold build
into an empty cache.

Run: ``python benchmarks/table2.py [--rtol 1e-9] [--atol 1e-12]``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from _common import ROOT, machine

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

#: rtol factors tried for the compiled run at equal accuracy (1.0 = the same rtol),
#: four per decade from 30 down to 0.01
FACTORS = tuple(round(10 ** (k / 4), 3) for k in range(6, -9, -1))

SEED = {"double_pendulum": (3.6, 5, 0.47, 59.4, 3.27, 1.10),
        "wing_nut": (37.3, 11.4, 0.41, 63.0, 25.13, 1.48),
        "biped": (130.0, 81.3, 0.80, 77.3, 48.59, 2.67)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtol", type=float, default=1e-9)
    ap.add_argument("--atol", type=float, default=1e-12)
    args = ap.parse_args(argv)
    print(machine())
    print(f"rtol={args.rtol:g}, atol={args.atol:g}; seed 003 Table 2 values in brackets")
    print(f"{'model':<16}{'span':>5}{'interp. s':>16}{'err':>9}{'C kB':>13}{'compile s':>15}"
          f"{'.so kB':>14}{'compiled s':>18}{'err':>9}{'speed-up':>18}"
          f"{'at equal error':>20}")
    for name in SEED:
        path = next((ROOT / "examples").rglob(f"{name}.kdm"))
        model = kidym.load(path)
        eq = kidym.derive(model)
        with tempfile.TemporaryDirectory() as cache:
            old = os.environ.get("KIDYM_CACHE_DIR")
            os.environ["KIDYM_CACHE_DIR"] = cache
            try:
                start = time.perf_counter()
                cs = CompiledSystem.build(eq)
                t_build = time.perf_counter() - start
                so_kb = cs.path.stat().st_size / 1024
                ref = kidym.simulate(cs, rtol=1e-13, atol=1e-14, n_points=101).y
                runs = {}   # rtol factor -> (best wall time, error over all outputs)
                for factor in FACTORS:
                    best = float("inf")
                    for _ in range(3):
                        r = kidym.simulate(cs, rtol=args.rtol * factor, atol=args.atol,
                                           n_points=101)
                        best = min(best, r.stats["wall_time_s"])
                    runs[factor] = (best, np.abs(r.y - ref).max())
            finally:
                if old is None:
                    os.environ.pop("KIDYM_CACHE_DIR")
                else:
                    os.environ["KIDYM_CACHE_DIR"] = old
        ns = NumpySystem.build(eq)
        t_interp = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            rn = kidym.simulate(ns, rtol=args.rtol, atol=args.atol, n_points=101)
            t_interp = min(t_interp, time.perf_counter() - start)
        err_n = np.abs(rn.y - ref).max()
        best, err_c = runs[1.0]
        equal = [(w, f) for f, (w, e) in runs.items() if e <= err_n]
        eq_text = (f"{t_interp / min(equal)[0]:7.0f}x @{args.rtol * min(equal)[1]:.2g}"
                   if equal else "      - (none as accurate)")
        c_kb = len(cs.code.source.encode("utf-8")) / 1024
        s = SEED[name]
        print(f"{name:<16}{model.t_end - model.t_start:5.0f}{t_interp:9.3f} [{s[0]:5.1f}]"
              f"{err_n:9.1e}{c_kb:6.1f} [{s[1]:4.1f}]{t_build:7.2f} [{s[2]:4.2f}]"
              f"{so_kb:6.1f} [{s[3]:4.1f}]{best:9.4f} [{s[4]:5.2f}]{err_c:9.1e}"
              f"{t_interp / best:9.0f}x [{s[5]:4.2f}]{eq_text}", flush=True)


if __name__ == "__main__":
    main()
