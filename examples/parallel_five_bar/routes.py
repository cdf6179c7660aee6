"""The five-bar parallel mechanism through both routes for closed loops.

Usage (from the repository root): ``python3 examples/parallel_five_bar/routes.py``.
Runs the example over its span with the augmented route (the default) and with the
minimal form — its independent coordinates chosen by pivoting, and the motor angles
``q1, q3`` — and prints for each the partitions it went through, the largest
difference from the augmented run (coordinates, speeds, tool point and multipliers,
relative to ``max(1, |value|)``) and the constraint drift; then how close the distal
links came to being in line (``|sin(q3 + q4 − q1 − q2)|``, 0 at the parallel
singularity).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import kidym
from kidym.simulation.minimal import Partitioning

MODEL = Path(__file__).with_name("parallel_five_bar.kdm")
OPTIONS = dict(rtol=1e-11, atol=1e-13, n_points=401, engine="numpy")


def difference(a: kidym.Result, b: kidym.Result) -> float:
    """Largest ``|a − b| / max(1, |b|)`` over states, tool point and multipliers."""
    names = [*b.state_names, "xE", "yE", "λf1", "λf2"]
    return max(float(np.abs(a[n] - b[n]).max() / max(1.0, np.abs(b[n]).max()))
               for n in names)


def main() -> None:
    """Run the routes and print the table."""
    model = kidym.load(MODEL)
    aug = kidym.simulate(model, **OPTIONS)
    print(f"five-bar, t = 0 … {model.t_end:g} s, DOP853 rtol = 1e-11, 401 output times")
    print(f"{'route':<28}{'max diff':>10}{'max |Φ|':>11}  partitions (from t)")
    d = aug.stats["constraint_drift"]
    print(f"{'augmented':<28}{0.0:>10.1e}{d['position']:>11.2e}  -")
    for label, form in (("minimal, by pivoting", "minimal"),
                        ("minimal, motor angles", Partitioning(independent=("q1", "q3")))):
        r = kidym.simulate(model, formulation=form, **OPTIONS)
        d = r.stats["constraint_drift"]
        parts = "; ".join(f"{','.join(p['independent'])} ({p['t']:.3f})"
                          for p in d["partitions"])
        print(f"{label:<28}{difference(r, aug):>10.1e}{d['position']:>11.2e}  {parts}")
    angle = aug["q3"] + aug["q4"] - aug["q1"] - aug["q2"]
    k = int(np.abs(np.sin(angle)).argmin())
    print(f"distal links most nearly in line at t = {aug.t[k]:.3f}: "
          f"|sin(q3 + q4 - q1 - q2)| = {abs(np.sin(angle[k])):.2e}")


if __name__ == "__main__":
    main()
