"""What an external input's Python callback costs per right-hand-side evaluation.

The cart-pole of ``examples/input_control`` is balanced by a linear state feedback
``F = -K (s - s_up)`` given three ways, in each engine, over the same span and tolerance:

* ``formula``: the feedback written into the model (``Pf.x = -k1*x - …``): no input;
* ``callback``: the model's input ``F`` bound to a Python function of ``(t, state)``
  (in the compiled engine called from the C loop through a C function pointer);
* ``table``: ``F`` bound to a table of the force the formula run applied (interpolated in
  Python or in C; the run restarts at its breakpoints).

The runs with the formula and the callback take the same steps (the same motion), so
``(wall(callback) − wall(formula)) / evaluations`` is the cost of one callback call from
that engine, printed in µs, together with the ratio of the wall times (best of 5 runs).

Run: ``python benchmarks/input_callbacks.py``
"""

from __future__ import annotations

import math

import numpy as np
from _common import ROOT, best_time, machine

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

BUILD = {"numpy": NumpySystem.build, "compiled": CompiledSystem.build}

K = (-10.0, 76.81, -11.86, 16.06)      # the example's LQR gain (examples/input_control)
NAMES = ("x", "theta", "x't", "theta't")
UP = (0.0, math.pi, 0.0, 0.0)


def models() -> tuple:
    text = (ROOT / "examples" / "input_control" / "cart_pole_driven.kdm").read_text("utf-8")
    driven = kidym.parse(text, name="driven")
    law = " ".join(f"- ({k!r})*({n} - ({u!r}))" for k, n, u in zip(K, NAMES, UP))
    formula = kidym.parse(text.replace("INPUTS := F;", "").replace("Pf.x = F;",
                                                                    f"Pf.x = {law};"),
                          name="formula")
    return driven, formula


def controller(t: float, s: dict) -> float:
    return -(K[0] * s["x"] + K[1] * (s["theta"] - math.pi) + K[2] * s["x't"]
             + K[3] * s["theta't"])


def main() -> None:
    print(machine())
    driven, formula = models()
    opts = {"rtol": 1e-10, "atol": 1e-12}
    print("| engine | formula (s) | callback (s) | table (s) | evaluations | callback − "
          "formula per evaluation (µs) | callback / formula |")
    print("|---|---|---|---|---|---|---|")
    for engine in BUILD:
        # derived and built once: the runs time the integration alone
        form, drv = (BUILD[engine](kidym.derive(m)) for m in (formula, driven))
        ref = kidym.simulate(form, **opts)
        force = np.array([controller(t, {n: ref[n][k] for n in NAMES})
                          for k, t in enumerate(ref.t)])
        table = kidym.InputTable(ref.t, force)
        runs = {"formula": lambda form=form: kidym.simulate(form, **opts),
                "callback": lambda drv=drv: kidym.simulate(drv, **opts,
                                                           inputs={"F": controller}),
                "table": lambda drv=drv, table=table: kidym.simulate(drv, **opts,
                                                                     inputs={"F": table})}
        cb = runs["callback"]()
        assert np.max(np.abs(cb["theta"] - ref["theta"])) < 1e-6, "not the same motion"
        wall = {k: best_time(f, repeat=5) for k, f in runs.items()}
        per = (wall["callback"] - wall["formula"]) / cb.nfev * 1e6
        print(f"| {engine} | {wall['formula']:.3g} | {wall['callback']:.3g} | "
              f"{wall['table']:.3g} | {cb.nfev} | {per:.2g} | "
              f"{wall['callback'] / wall['formula']:.2g} |")


if __name__ == "__main__":
    main()
