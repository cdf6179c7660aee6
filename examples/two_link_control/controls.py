"""The numbers and the figure of README.md: the two-link arm steered along a circle by
controls computed from programmed constraints (seed 004 (5.1)–(5.6)), in both engines.

Run from the repository root: ``python3 examples/two_link_control/controls.py`` (add
``--plot FILE.png`` for the figure). The oracles are in
:mod:`tests.oracles.two_link_arm` (SymPy ``LagrangesMethod`` and closed-form inverse
kinematics; the closed-form solution of ``ÿ = h y + k ẏ``; nothing from kidym).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import kidym  # noqa: E402
from tests.oracles.two_link_arm import ArmOracle, deviation  # noqa: E402

MODEL = ROOT / "examples" / "two_link_control" / "two_link_control.kdm"


def main(plot: str | None = None) -> None:
    model = kidym.load(MODEL)
    oracle = ArmOracle(model.parameter_values)
    eq = kidym.derive(model)
    y0 = oracle.state(np.array([0.0]))[:, 0]
    exact_start = dict(zip(("q1", "q2", "q1't", "q2't"), y0))
    print("started on the path (one revolution, 201 output times):")
    print(f"{'engine':<10}{'method':<8}{'rtol':>7}{'max|fx|,|fy|':>14}{'max|u-τ|':>11}"
          f"{'max|τ|':>9}{'nfev':>7}")
    for engine, method in (("numpy", "DOP853"), ("compiled", "ERK8")):
        for rtol in (1e-6, 1e-10):
            r = kidym.simulate(eq, engine=engine, method=method, rtol=rtol, atol=rtol * 1e-3,
                               n_points=201, initial=exact_start)
            tau = oracle.torques(r.t)
            dev = max(np.abs(r["fx"]).max(), np.abs(r["fy"]).max())
            err = np.abs(np.vstack([r["u1"], r["u2"]]) - tau).max()
            print(f"{engine:<10}{method:<8}{rtol:7.0e}{dev:14.1e}{err:11.1e}"
                  f"{np.abs(tau).max():9.3f}{r.nfev:7d}")
    print("started off the path (the model's q1 = 0.1, q2 = 1.5 at rest):")
    print(f"{'engine':<10}{'fx(0)':>9}{'fy(0)':>9}{'max|fx-y(t)|':>14}{'max|fy-y(t)|':>14}"
          f"{'|fx|,|fy| at t=1':>18}")
    runs = {}
    for engine in ("numpy", "compiled"):
        r = kidym.simulate(eq, engine=engine, rtol=1e-10, atol=1e-13, n_points=401)
        runs[engine] = r
        errs = [np.abs(r[n] - deviation(-100.0, -20.0, r[n][0], r[n + "'t"][0], r.t)).max()
                for n in ("fx", "fy")]
        k = np.argmin(np.abs(r.t - 1.0))
        print(f"{engine:<10}{r['fx'][0]:9.4f}{r['fy'][0]:9.4f}{errs[0]:14.1e}{errs[1]:14.1e}"
              f"{max(abs(r['fx'][k]), abs(r['fy'][k])):18.1e}")
    if plot:
        _plot(runs["numpy"], oracle, model.parameter_values, plot)


def _plot(r, oracle: ArmOracle, v: dict[str, float], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    s = np.linspace(0, 2 * np.pi, 200)
    ax[0].plot(v["a"] + v["r"] * np.cos(s), v["b"] + v["r"] * np.sin(s), "k:",
               label="programmed path")
    ax[0].plot(r["xE"], r["yE"], label="end effector")
    ax[0].set_aspect("equal")
    ax[0].set_xlabel("x, m")
    ax[0].set_ylabel("y, m")
    ax[0].legend(fontsize=8)
    for n in ("fx", "fy"):
        ax[1].plot(r.t, r[n], label=f"{n} (kidym)")
        ax[1].plot(r.t, deviation(-100.0, -20.0, r[n][0], r[n + "'t"][0], r.t), "k:",
                   lw=1)
    ax[1].set_xlim(0, 1.2)
    ax[1].set_xlabel("t, s")
    ax[1].set_title("deviations; dotted: (y0 + (ẏ0 + 10 y0) t) e^(-10 t)", fontsize=9)
    ax[1].legend(fontsize=8)
    ax[2].plot(r.t, r["u1"], label="u1 (shoulder)")
    ax[2].plot(r.t, r["u2"], label="u2 (elbow)")
    ax[2].plot(r.t, oracle.torques(r.t)[0], "k:", lw=1, label="inverse dynamics on the path")
    ax[2].plot(r.t, oracle.torques(r.t)[1], "k:", lw=1)
    ax[2].set_xlabel("t, s")
    ax[2].set_ylabel("N m")
    ax[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    import os

    os.environ.setdefault("KIDYM_CACHE_DIR", tempfile.mkdtemp(prefix="kidym-"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", help="write the figure to this PNG file")
    main(parser.parse_args().plot)
