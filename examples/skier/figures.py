"""The numbers and the figures of README.md: the skier–snowboarder of seed 004 (sections
7–8), its controls computed from programmed constraints, analogues of the paper's
Figs. 7–8 (the deviations from the constraints over time).

Run from the repository root: ``python3 examples/skier/figures.py`` (add ``--plot DIR``
to write ``skier_fig7.png`` and ``skier_fig8.png`` there).

* **Fig. 7 analogue** — the paper integrates by "a difference scheme of the first order"
  with constraint stabilisation. Here: the explicit Euler scheme with a fixed step on
  kidym's compiled right-hand side, started on the constraints, with the perturbation
  law (5.5) ``ÿ = h y + k ẏ`` at kidym's default ``h = −100, k = −20`` (stabilised) and
  at ``h = k = 0`` (the controls then only keep ``ÿ = 0``: nothing pulls a deviation
  back). The deviations of the scheme from the constraints are plotted over time.
* **Fig. 8 analogue** — a start off every constraint (the ski 0.05 rad off the track's
  heading, the link turned 0.1 rad from the ski, leaning back 0.07 rad, the legs 3 cm
  long, the body 2 cm short), integrated accurately in both engines: each deviation
  against the closed-form solution of ``ÿ = h y + k ẏ`` (independent of kidym,
  :func:`tests.oracles.two_link_arm.deviation`), and the link's tilt from the normal to
  the slope.
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
from kidym.simulation.compiled import CompiledSystem  # noqa: E402
from tests.oracles.two_link_arm import deviation  # noqa: E402

MODEL = ROOT / "examples" / "skier" / "skier.kdm"
MODEL2 = ROOT / "examples" / "skier" / "skier2.kdm"
CONSTRAINTS = ("ftrack", "f81", "f82", "fleg", "fbody")
CONSTRAINTS2 = ("ftrack", "f81", "f82", "fleg", "fknee", "f81b", "f82b", "fhip", "fneck")
#: the perturbed start of the Fig. 8 analogue (the model's start is on the constraints)
PERTURBED = {"phi0": 0.6, "phi1": 0.7, "psi1": 1.3, "xi11": 0.13, "xi12": 0.08}
#: the same for the two-link model: the trunk turned, leaning, its parts off too
PERTURBED2 = {**PERTURBED, "phi2": 0.5, "psi2": 1.9, "xi21": 0.07, "xi22": 0.12}


def euler(system: CompiledSystem, y0: np.ndarray, p: np.ndarray, dt: float, t1: float,
          every: int) -> tuple[np.ndarray, np.ndarray]:
    """The explicit Euler scheme ``y ← y + dt·f(t, y)``; every ``every``-th state kept."""
    n = round(t1 / dt)
    ts, ys = [0.0], [y0.copy()]
    y = y0.copy()
    c = system.constants(p)
    for i in range(n):
        y = y + dt * system.rhs(i * dt, y, p, c)
        if (i + 1) % every == 0:
            ts.append((i + 1) * dt)
            ys.append(y.copy())
    return np.array(ts), np.array(ys)


def fig7_runs(eq: kidym.Equations, dt: float = 2e-3, t1: float = 10.0) -> dict:
    """Euler runs from the model's start, stabilised and not: times and outputs."""
    system = CompiledSystem.build(eq)
    start = kidym.simulate(eq, engine="compiled", n_points=2)
    y0 = np.array([start[n][0] for n in system.state_names])
    runs = {}
    for label, (h, k) in (("stabilised", (-100.0, -20.0)), ("h = k = 0", (0.0, 0.0))):
        p = system.parameter_vector({"hh": h, "kk": k})
        t, Y = euler(system, y0, p, dt, t1, every=25)
        out = system.outputs_at(t, Y, p)
        runs[label] = (t, dict(zip(system.output_names, out.T)))
    return runs


def main(plot: str | None = None) -> None:
    model = kidym.load(MODEL)
    v = model.parameter_values
    eq = kidym.derive(model)
    tilt_set = np.pi / 2 - np.arcsin(v["lc"] / (v["L"] + v["l1"]))
    print(f"the link's set tilt from the normal: acos(lc/(L + l1)) = "
          f"{np.degrees(tilt_set):.3f} deg")
    runs7 = fig7_runs(eq)
    print("Fig. 7 analogue: explicit Euler, dt = 2 ms, 10 s, started on the constraints")
    print(f"{'law':<12}{'max|ftrack|':>12}{'max|ey|':>10}{'ey(10 s)':>10}{'tilt, deg':>16}")
    for label, (_t, o) in runs7.items():
        tilt = np.degrees(o["tilt"])
        print(f"{label:<12}{np.abs(o['ftrack']).max():12.1e}"
              f"{np.abs(o['ey']).max():10.1e}{o['ey'][-1]:10.1e}"
              f"{tilt.min():8.3f}{tilt.max():8.3f}")
    print("Fig. 8 analogue: perturbed start, rtol 1e-10, 201 output times")
    print(f"{'engine':<10}" + "".join(f"{n + '(0)':>10}" for n in CONSTRAINTS)
          + f"{'max|f-y(t)|':>13}{'max tilt':>10}{'tilt(10 s)':>11}")
    runs8 = {}
    for engine in ("numpy", "compiled"):
        r = kidym.simulate(eq, engine=engine, initial=PERTURBED, rtol=1e-10, atol=1e-12,
                           n_points=201)
        runs8[engine] = r
        err = max(np.abs(r[n] - deviation(-100.0, -20.0, r[n][0], r[n + "'t"][0], r.t)).max()
                  for n in CONSTRAINTS)
        print(f"{engine:<10}" + "".join(f"{r[n][0]:10.4f}" for n in CONSTRAINTS)
              + f"{err:13.1e}{np.degrees(r['tilt']).max():10.3f}"
              f"{np.degrees(r['tilt'][-1]):11.3f}")
    a, b = runs8["numpy"], runs8["compiled"]
    diff = max(np.abs(a[n] - b[n]).max() for n in ("x", "y", "v", "phi0", "psi1", "M0"))
    print(f"numpy vs compiled, largest difference of x, y, v, phi0, psi1, M0: {diff:.1e}")
    r2, diff2 = two_links()
    v2 = kidym.load(MODEL2).parameter_values
    tilt2_set = np.arcsin(v2["lc2"] / (v2["L2"] + v2["l2"])) - np.pi / 2
    err2 = max(np.abs(r2[n] - deviation(-100.0, -20.0, r2[n][0], r2[n + "'t"][0], r2.t)).max()
               for n in CONSTRAINTS2)
    late = r2.t >= 2.0
    print("two links (skier2.kdm), perturbed start, compiled, rtol 1e-10, 10 s:")
    print(f"  max|f-y(t)| of the 9 deviations {err2:.1e}; the trunk's tilt from the normal "
          f"{np.degrees(r2['tilt2'][0]):.3f} deg at t = 0, within "
          f"[{np.degrees(r2['tilt2']).min():.3f}, {np.degrees(r2['tilt2']).max():.3f}] deg, "
          f"set {np.degrees(tilt2_set):.3f} deg, off it by "
          f"{np.abs(r2['tilt2'][late] - tilt2_set).max():.1e} rad after 2 s")
    print(f"  numpy vs compiled, largest difference of x, y, v, the angles, xi21: {diff2:.1e}")
    if plot:
        _plot(runs7, runs8["numpy"], tilt_set, v, Path(plot))
        _plot2(r2, tilt2_set, Path(plot))


def two_links() -> tuple:
    """The two-link model from its perturbed start: the compiled run (10 s) and the
    largest difference of its coordinates from the NumPy run."""
    eq = kidym.derive(kidym.load(MODEL2))
    opts = {"initial": PERTURBED2, "rtol": 1e-10, "atol": 1e-12, "n_points": 201}
    r = kidym.simulate(eq, engine="compiled", **opts)
    a = kidym.simulate(eq, engine="numpy", **opts)
    names = ("x", "y", "v", "phi0", "phi1", "psi1", "phi2", "psi2", "xi21")
    return r, max(np.abs(a[n] - r[n]).max() for n in names)


def _plot2(r, tilt2_set: float, folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    for n in CONSTRAINTS2:
        ax[0].plot(r.t, r[n], label=n)
    ax[0].set_xlim(0, 1.5)
    ax[0].set_xlabel("t, s")
    ax[0].set_title("two links: the nine deviations", fontsize=9)
    ax[0].legend(fontsize=7, ncol=2)
    ax[1].plot(r.t, np.degrees(r["tilt1"]), label="legs (link 1), forward")
    ax[1].plot(r.t, np.degrees(r["tilt2"]), label="trunk (link 2), back")
    ax[1].axhline(np.degrees(tilt2_set), color="k", ls=":", lw=1)
    ax[1].set_xlabel("t, s")
    ax[1].set_ylabel("tilt from the normal, deg")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "skier2_fig8.png", dpi=80)


def _plot(runs7: dict, r, tilt_set: float, v: dict[str, float], folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(14, 3.8))
    for (label, (t, o)), style in zip(runs7.items(), ("-", "--")):
        ax[0].semilogy(t[1:], np.abs(o["ftrack"][1:]), style, label=f"|ftrack|, {label}")
        ax[1].plot(t, o["ey"] * 1e3, style, label=label)
    ax[0].set_xlabel("t, s")
    ax[0].set_title("deviation from the track heading (7.5), Euler 2 ms", fontsize=9)
    ax[0].legend(fontsize=7)
    ax[1].set_xlabel("t, s")
    ax[1].set_ylabel("mm")
    ax[1].set_title("distance from the track y - A sin(kx)", fontsize=9)
    ax[1].legend(fontsize=8)
    t, o = runs7["stabilised"]
    ax[2].plot(o["x"], o["y"], label="ski (stabilised run)")
    ax[2].set_xlabel("x (downhill), m")
    ax[2].set_ylabel("y, m")
    ax[2].set_title("the ski's track", fontsize=9)
    fig.tight_layout()
    fig.savefig(folder / "skier_fig7.png", dpi=80)

    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    for n in CONSTRAINTS:
        ax[0].plot(r.t, r[n], label=n)
        ax[0].plot(r.t, deviation(-100.0, -20.0, r[n][0], r[n + "'t"][0], r.t), "k:", lw=1)
    ax[0].set_xlim(0, 1.5)
    ax[0].set_xlabel("t, s")
    ax[0].set_title("deviations; dotted: (y0 + (ẏ0 + 10 y0) t) e^(-10 t)", fontsize=9)
    ax[0].legend(fontsize=8)
    ax[1].plot(r.t, np.degrees(r["tilt"]), label="tilt of the link from the normal")
    ax[1].axhline(np.degrees(tilt_set), color="k", ls=":", lw=1,
                  label="acos(lc/(L + l1))")
    ax[1].set_xlabel("t, s")
    ax[1].set_ylabel("deg")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "skier_fig8.png", dpi=80)


if __name__ == "__main__":
    import os

    os.environ.setdefault("KIDYM_CACHE_DIR", tempfile.mkdtemp(prefix="kidym-"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", help="write skier_fig7.png and skier_fig8.png here")
    main(parser.parse_args().plot)
