"""The numbers of README.md: the slider-crank's driving torque in both engines, against
inverse dynamics by Lagrange's equation with the crank angle prescribed.

Run from the repository root: ``python3 examples/slider_crank/torque.py``. The closed
form is :class:`tests.oracles.closed_loops.DrivenSliderCrank` (SymPy, one coordinate,
explicit kinematics; nothing from kidym).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import kidym  # noqa: E402
from tests.oracles.closed_loops import DrivenSliderCrank, t  # noqa: E402

MODEL = ROOT / "examples" / "slider_crank" / "slider_crank.kdm"


def main() -> None:
    model = kidym.load(MODEL)
    p = model.parameter_values
    oracle = DrivenSliderCrank.build({k: p[k] for k in ("r", "l", "m1", "m2", "ms", "g", "c")},
                                     p["Om"] * t)
    eq = kidym.derive(model)
    print(f"{'engine':<10}{'method':<8}{'rtol':>7}{'max|λf3-τ|':>12}{'max|λf1-X|':>12}"
          f"{'min λf3':>10}{'max λf3':>10}{'mean λf3':>10}{'nfev':>7}")
    for engine, method in (("numpy", "DOP853"), ("compiled", "ERK8")):
        for rtol in (1e-6, 1e-9):
            r = kidym.simulate(eq, engine=engine, method=method, rtol=rtol, atol=rtol * 1e-3,
                               n_points=201)
            tau, X = oracle.torque(r.t), oracle.slider_force(r.t)
            mean = np.trapezoid(r["λf3"], r.t) / (r.t[-1] - r.t[0])
            print(f"{engine:<10}{method:<8}{rtol:7.0e}{np.abs(r['λf3'] - tau).max():12.1e}"
                  f"{np.abs(r['λf1'] - X).max():12.1e}{r['λf3'].min():10.4f}"
                  f"{r['λf3'].max():10.4f}{mean:10.5f}{r.nfev:7d}")
    # one revolution at constant speed: T and V come back, so the drive's work is the
    # load's, 2π·mean(τ) = ∫ c ṡ² dt (closed-form s(t), fine quadrature)
    tt = np.linspace(0.0, 2 * np.pi / p["Om"], 200001)
    sd = np.gradient(oracle.s(tt), tt, edge_order=2)
    print(f"closed form: mean torque = ∫ c ṡ² dt / 2π = "
          f"{np.trapezoid(p['c'] * sd ** 2, tt) / (2 * np.pi):.5f} N m; "
          f"peak torque {oracle.torque(tt).max():.4f} N m at q1 = "
          f"{np.degrees(p['Om'] * tt[np.argmax(oracle.torque(tt))]):.1f}°")


if __name__ == "__main__":
    import os

    os.environ.setdefault("KIDYM_CACHE_DIR", tempfile.mkdtemp(prefix="kidym-"))
    main()
