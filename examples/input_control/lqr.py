"""A cart-pole balanced by a Python LQR controller, then driven by the tabulated force.

1. The gain: ``kidym.linearize`` of ``examples/optimal_control/cart_pole.kdm`` (the force
   a parameter ``Fc``) about the upright pole gives ``A`` and ``B``; SciPy's Riccati
   solver gives ``K``.
2. ``cart_pole_driven.kdm`` declares the force an input (``INPUTS := F;``); a Python
   callback ``F = -K (s - s_up)`` drives it in both engines (in the compiled one through a
   C function pointer to Python).
3. The force that run applied, sampled at its output times, is written to ``force.csv``,
   as measured data would be, and applied as a table (linear interpolation) to the
   pole hanging at rest, in both engines: the table is interpolated in C in the compiled
   one and by NumPy in the other. (Applied open loop to the upright pole, an unstable
   equilibrium, the table's interpolation error would grow like ``e^{4.7 t}``: a
   table is no controller.)

The script exits with an error unless the pole ends upright within 1e-3 rad and the two
engines agree within 1e-6, with the controller and with the table.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import numpy as np
from scipy.linalg import solve_continuous_are

import kidym

HERE = Path(__file__).resolve().parent
UP = {"x": 0.0, "theta": math.pi, "x't": 0.0, "theta't": 0.0}


def gain() -> tuple[tuple[str, ...], np.ndarray]:
    """The LQR gain about the upright pole, and the order of its states."""
    eq = kidym.derive(kidym.load(HERE.parent / "optimal_control" / "cart_pole.kdm"))
    lin = kidym.linearize(eq, state=UP, inputs=["Fc"])
    A, B = np.asarray(lin.A, float), np.asarray(lin.B, float)
    Q, R = np.diag([10.0, 100.0, 1.0, 1.0]), np.array([[0.1]])
    P = solve_continuous_are(A, B, Q, R)
    return tuple(lin.states), np.linalg.solve(R, B.T @ P)[0]


def main() -> int:
    names, K = gain()

    def controller(t: float, s: dict) -> float:
        return -float(sum(k * (s[n] - UP[n]) for k, n in zip(K, names)))

    model = kidym.load(HERE / "cart_pole_driven.kdm")
    runs = {e: kidym.simulate(model, engine=e, rtol=1e-10, atol=1e-12,
                              inputs={"F": controller}) for e in ("numpy", "compiled")}
    r = runs["numpy"]
    force = np.array([controller(t, {n: r[n][k] for n in names}) for k, t in enumerate(r.t)])
    with open("force.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["t", "F"])
        w.writerows(zip(r.t.tolist(), force.tolist()))
    table = kidym.InputTable.read_csv("force.csv")
    hanging = {e: kidym.simulate(model, engine=e, rtol=1e-10, atol=1e-12,
                                 initial={"theta": 0.0}, inputs={"F": table})
               for e in ("numpy", "compiled")}
    end = abs(r["theta"][-1] - math.pi)

    def differ(pair: dict) -> float:
        return max(float(np.max(np.abs(pair["numpy"][n] - pair["compiled"][n])))
                   for n in names)

    engines, replayed = differ(runs), differ(hanging)
    swing = float(np.max(np.abs(hanging["numpy"]["theta"])))
    print(f"LQR gain K = [{', '.join(f'{k:.2f}' for k in K)}] on ({', '.join(names)})")
    print(f"largest force {np.max(np.abs(force)):.1f} N; the pole ends {end:.1e} rad from "
          "upright")
    print(f"numpy and compiled engines with the Python controller differ by {engines:.0e}")
    print(f"the tabulated force (force.csv, {force.size} rows) on the hanging pole: it "
          f"swings up to {swing:.2f} rad; the engines differ by {replayed:.0e}")
    ok = end < 1e-3 and engines < 1e-6 and replayed < 1e-6
    print("upright at the end, engines agree:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
