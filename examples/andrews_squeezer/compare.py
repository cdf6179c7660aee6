"""The numbers of README.md: Andrews' squeezer in both engines against the published
reference solution at t = 0.03 s, method by method.

Run from the repository root: ``python3 examples/andrews_squeezer/compare.py``. The
reference and the published equations are in :mod:`tests.oracles.andrews`. Errors are
relative, ``max_i |y_i / y_ref,i − 1|`` over the seven positions, the seven speeds and
the six multipliers (kidym's ``λg`` are the negatives of the test set's ``λ``); the
test set scores a solver on the positions alone (its reference comes from an index-3
DAE code, less accurate in the other components).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import kidym  # noqa: E402
from kidym.simulation.compiled import CompiledSystem  # noqa: E402
from kidym.simulation.simulate import NumpySystem  # noqa: E402
from tests.oracles import andrews  # noqa: E402

MODEL = ROOT / "examples" / "andrews_squeezer" / "andrews_squeezer.kdm"
RUNS = [("numpy", m) for m in ("DOP853", "RK45", "LSODA", "BDF", "Radau")] + [
    ("compiled", m) for m in ("ERK8", "Fehlberg78", "ERK5", "Adams", "BDF")]


def final(r) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, speeds and (test-set-signed) multipliers at the last output."""
    q = np.array([r[n][-1] for n in andrews.COORDINATES])
    qd = np.array([r[f"{n}'t"][-1] for n in andrews.COORDINATES])
    lam = -np.array([r[f"λg{k}"][-1] for k in range(1, 7)])
    return q, qd, lam


def errors(q, qd, lam) -> tuple[float, float, float]:
    return (float(np.abs(q / andrews.Q_REF - 1).max()),
            float(np.abs(qd / andrews.QD_REF - 1).max()),
            float(np.abs(lam / andrews.LAMBDA_REF - 1).max()))


def main() -> None:
    eq = kidym.derive(kidym.load(MODEL))
    systems = {"numpy": NumpySystem.build(eq), "compiled": CompiledSystem.build(eq)}
    times = np.array([0.0, andrews.T_REF])
    print("relative error at t = 0.03 s against the published reference "
          "(atol = rtol*1e-2; wall: seconds of the integration)")
    print(f"{'engine':<10}{'method':<12}{'rtol':>7}{'positions':>11}{'speeds':>9}"
          f"{'λ':>9}{'nfev':>7}{'proj.':>6}{'wall':>8}")
    for engine, method in RUNS:
        for rtol in (1e-6, 1e-8, 1e-10, 1e-12):
            if method == "Radau" and rtol < 1e-10:
                continue   # 17 s at 1e-10 already
            start = time.perf_counter()
            r = kidym.simulate(systems[engine], method=method, rtol=rtol, atol=rtol * 1e-2,
                               t_eval=times, raise_on_failure=False)
            wall = time.perf_counter() - start
            if not r.success:
                print(f"{engine:<10}{method:<12}{rtol:7.0e}  failed: {r.message}")
                continue
            e = errors(*final(r))
            print(f"{engine:<10}{method:<12}{rtol:7.0e}{e[0]:11.1e}{e[1]:9.1e}{e[2]:9.1e}"
                  f"{r.nfev:7d}{r.stats['constraint_drift']['projections']:6d}{wall:8.3f}")
    # kidym against itself: two methods of the two engines at rtol 1e-13
    a = final(kidym.simulate(systems["numpy"], method="DOP853", rtol=1e-13, atol=1e-15,
                             t_eval=times))
    b = final(kidym.simulate(systems["compiled"], method="ERK8", rtol=1e-13, atol=1e-15,
                             t_eval=times))
    diff = [float(np.abs(x / y - 1).max()) for x, y in zip(a, b)]
    print("kidym's own runs at rtol 1e-13 (NumPy DOP853 vs compiled ERK8) differ by "
          f"{diff[0]:.1e} (positions), {diff[1]:.1e} (speeds), {diff[2]:.1e} (λ); "
          "from the reference by {:.1e}, {:.1e}, {:.1e}".format(*errors(*b)))


if __name__ == "__main__":
    os.environ.setdefault("KIDYM_CACHE_DIR", tempfile.mkdtemp(prefix="kidym-"))
    main()
