"""The three motions of seed 002, section 5: massive rollers against the limit B = 0.

``python3 examples/omni_vehicle/motions.py`` runs motion 1 (turning on the spot,
``nu = (0, 0, 1)``), 2 (straight along the first wheel's axis, ``(1, 0, 0)``) and 3
(both, ``(1, 0, 1)``) on the compiled engine, for the vehicle with massive rollers
(``omni_3_5.kdm``) and its inertialess limit (``omni_3_5_inertialess.kdm``), prints
what the README quotes and writes ``plots/motion{1,2,3}.png``.

Printed per motion: the events (roller changes) and the largest distance of ``chi``
from ``±pi/n`` at them; the largest drift of the linear integrals (3.7)
``nu_s + sin(chi_i + kappa_j) nu3/Lam`` and of the energy between the events; what
the paper's text says happens, measured.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import kidym

HERE = Path(__file__).resolve().parent
N, n = 3, 5
#: the paper's motions: initial (nu1, nu2, nu3) and the span we run
MOTIONS = {1: ((0.0, 0.0, 1.0), 1000.0), 2: ((1.0, 0.0, 0.0), 60.0),
           3: ((1.0, 0.0, 1.0), 200.0)}
RUN = {"engine": "compiled", "rtol": 1e-10, "atol": 1e-12}


def load_models():
    """Equations of the vehicle with massive rollers and of the inertialess limit."""
    return (kidym.derive(kidym.load(HERE / f"omni_{N}_{n}.kdm")),
            kidym.derive(kidym.load(HERE / f"omni_{N}_{n}_inertialess.kdm")))


def run(eq, nu, t_end: float, n_points: int = 4001):
    """A run from the rest position with pseudo-velocities ``nu``."""
    initial = dict(zip(("nu1", "nu2", "nu3"), nu))
    return kidym.simulate(eq, t_end=t_end, initial=initial, n_points=n_points, **RUN)


def parameters(result) -> dict[str, float]:
    return {k: float(v) for k, v in result.parameters.items()}


def contact_speed(result, i: int) -> np.ndarray:
    """Spin of the contact roller of wheel ``i``, the constraint (2.1)."""
    p, v = parameters(result), result.values
    a = 2 * math.pi * (i - 1) / N
    rho = p["l"] * np.cos(v[f"chi{i}"]) - p["l"] * math.cos(math.pi / (n - 1))
    return p["R"] / rho * (v["nu1"] * math.cos(a) + v["nu2"] * math.sin(a))


def shifts(result, i: int) -> np.ndarray:
    """At each output time, how far the labels of wheel ``i`` have turned: +1 per
    forward change, -1 per backward one (roller ``p`` carries the label
    ``(p - 1 + shift) mod n + 1``)."""
    ev = result.stats.get("events") or {"t": [], "name": []}
    step = np.array([1 if name == f"Forward{i}" else -1 if name == f"Back{i}" else 0
                     for name in ev["name"]], dtype=int)
    times = np.asarray(ev["t"], float)
    count = np.searchsorted(times, result.t, side="left")
    return np.concatenate([[0], np.cumsum(step)])[count]


def roller_speeds(result, i: int) -> np.ndarray:
    """Spin of the physical rollers 1..n of wheel ``i`` over time, shape (n, n_t)."""
    labels = np.stack([contact_speed(result, i)]
                      + [result.values[f"phi{i}_{j}'t"] for j in range(2, n + 1)])
    s = shifts(result, i)
    cols = np.arange(len(result.t))
    return np.stack([labels[(p + s) % n, cols] for p in range(n)])


def integrals_37(result) -> np.ndarray:
    """The linear integrals (3.7) of every free roller label, shape (N (n - 1), n_t)."""
    p, v = parameters(result), result.values
    return np.stack([v[f"phi{i}_{j}'t"]
                     + np.sin(v[f"chi{i}"] + 2 * math.pi * (j - 1) / n) * v["nu3"] / p["Lam"]
                     for i in range(1, N + 1) for j in range(2, n + 1)])


def drift_between_events(result, values: np.ndarray) -> float:
    """``max |I(t) − I(t_k)|``, ``t_k`` the last event before ``t`` (outputs at an
    event instant are left out: there the state is either side of the reset)."""
    ev = np.asarray((result.stats.get("events") or {"t": []})["t"], float)
    t = result.t
    seg = np.searchsorted(ev, t, side="left")
    at_event = np.isin(t, ev)
    worst = 0.0
    for k in np.unique(seg):
        sel = (seg == k) & ~at_event
        if sel.sum() > 1:
            block = values[..., sel]
            worst = max(worst, float(np.max(np.abs(block - block[..., :1]))))
    return worst


def event_error(result) -> float:
    """Largest ``| |chi_i| − pi/n |`` of the wheel whose roller changes, before the reset."""
    ev = result.stats.get("events")
    if not ev or not len(ev["t"]):
        return 0.0
    names = list(result.state_names)
    worst = 0.0
    for name, state in zip(ev["name"], ev["state"]):
        i = int(name[-1])
        chi = state[names.index(f"chi{i}")]
        worst = max(worst, abs(abs(chi) - math.pi / n))
    return worst


def below(x: float) -> str:
    """``x`` as the power of ten above it: rounding noise, printed so that it does not
    change from machine to machine (it does in its digits)."""
    return "0" if x == 0 else f"1e{math.ceil(math.log10(x)):d}"


def report(k: int, full, limit) -> None:
    """The lines the README quotes for motion ``k``."""
    ev = full.stats["events"]
    T = full.values["energy"]
    print(f"motion {k}: t = 0 … {full.t[-1]:g}, {len(ev['t'])} roller changes, "
          f"|chi - pi/n| at them < {below(event_error(full))}")
    print(f"  (3.7) drift between changes < {below(drift_between_events(full, integrals_37(full)))}"
          f", energy drift between changes < {below(drift_between_events(full, T) / T[0])} of T(0)")
    nu1, nu2, nu3 = (full.values[f"nu{j}"] for j in (1, 2, 3))
    v = np.hypot(nu1, nu2)
    if k == 1:
        first = ev["t"][0]
        back = [t for t, name, s in zip(ev["t"], ev["name"], shifts(full, 1)[
            np.searchsorted(full.t, ev["t"])]) if name.endswith("1")]
        print(f"  first change at t = {first:.3f}; roller 1 of wheel 1 back in contact at "
              f"t = {back[n - 1]:.2f}; nu3(t_end)/nu3(0) - 1 = {nu3[-1] - 1:.1e}; "
              f"max |v| < {below(np.max(v))}; T(t_end)/T(0) - 1 = {T[-1] / T[0] - 1:.1e}")
    elif k == 2:
        print(f"  max |nu3| < {below(np.max(np.abs(nu3)))}; nu1/nu1(0) - 1 at t_end "
              f"{nu1[-1] - 1:.1e}; T/T(0) - 1: max {np.max(T / T[0] - 1):.1e}, at t_end "
              f"{T[-1] / T[0] - 1:.1e}; max |chi1| < {below(np.max(np.abs(full.values['chi1'])))}")
    else:
        tail = full.t > 0.9 * full.t[-1]
        print(f"  nu3: {nu3[0]:g} -> {nu3[-1]:.4f} (spread over the last 10 %: "
              f"{np.ptp(nu3[tail]):.1e}); v: {v[0]:g} -> {v[-1]:.1e}; "
              f"T/T(0): max {np.max(T / T[0]):.2f}, at t_end - 1 {T[-1] / T[0] - 1:.2e}")
    lv = np.hypot(limit.values["nu1"], limit.values["nu2"])
    lnu3, lT = limit.values["nu3"], limit.values["energy"]
    print(f"  B = 0 limit: nu3, v and T change by less than {below(np.ptp(lnu3))}, "
          f"{below(np.ptp(lv))}, {below(np.ptp(lT) / lT[0])} of T(0)")
    if k == 2:
        p = parameters(full)
        rho = p["l"] * (math.cos(math.pi / n) - math.cos(math.pi / (n - 1)))
        spin = p["R"] * math.cos(2 * math.pi / N) / rho
        rise = 2 * (n - 1) * 0.5 * p["B"] * spin**2 / T[0]
        print(f"  estimate of the rise: rho at a change {rho:.2e}, spin kept by a leaving "
              f"roller of a rear wheel {abs(spin):.1f}, "
              f"{2 * (n - 1)} free rear rollers x B spin^2/2 = {rise:.2f} T(0)")


def plot(k: int, full, limit, path: Path) -> None:
    """Two panels: pseudo-velocities and energy (massive vs B = 0); the roller spins
    of wheel 1 (motions 1, 3) or 2 (motion 2); motion 3 adds the path of S."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 3 if k == 3 else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2))
    t, lt = full.t, limit.t
    ax = axes[0]
    nu1, nu2, nu3 = (full.values[f"nu{j}"] for j in (1, 2, 3))
    T = full.values["energy"]
    if k == 1:
        ax.plot(t, nu3 - 1, label="ν3 − 1, massive rollers")
        ax.plot(lt, limit.values["nu3"] - 1, "--", label="ν3 − 1, B = 0")
        ax.plot(t, T / T[0] - 1, label="T/T(0) − 1")
    elif k == 2:
        ax.plot(t, nu1 - 1, label="ν1/ν1(0) − 1 (curve 1)")
        ax.plot(t, T / T[0] - 1, label="T/T(0) − 1 (curve 2)")
        ax.plot(lt, limit.values["nu1"] - 1, "--", label="ν1/ν1(0) − 1, B = 0")
    else:
        ax.plot(t, nu3, label="ν3 (curve 1)")
        ax.plot(t, np.hypot(nu1, nu2), label="v = √(ν1² + ν2²) (curve 2)")
        ax.plot(t, T / T[0], label="T/T(0) (curve 3)")
        ax.plot(lt, limit.values["nu3"], "--", label="ν3, B = 0")
        ax.plot(lt, np.hypot(limit.values["nu1"], limit.values["nu2"]), "--",
                label="v, B = 0")
    ax.set_xlabel("t")
    ax.set_title(f"motion {k}: massive rollers vs B = 0")
    ax.legend(fontsize=8)
    wheel = 2 if k == 2 else 1
    window = t <= {1: 20.0, 2: 6.0, 3: 20.0}[k]
    spins = roller_speeds(full, wheel)
    ax = axes[1]
    for p in range(n):
        ax.plot(t[window], spins[p, window], lw=0.9, label=f"roller {p + 1}")
    ax.set_xlabel("t")
    ax.set_title(f"spins φ̇ of the rollers of wheel {wheel}")
    ax.legend(fontsize=8)
    if k == 3:
        ax = axes[2]
        ax.plot(full.values["x"], full.values["y"], label="S, massive rollers")
        ax.plot(limit.values["x"], limit.values["y"], "--", label="S, B = 0 (a circle)")
        ax.set_aspect("equal")
        ax.set_title("path of S")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    full_eq, limit_eq = load_models()
    (HERE / "plots").mkdir(exist_ok=True)
    for k, (nu, t_end) in MOTIONS.items():
        full, limit = run(full_eq, nu, t_end), run(limit_eq, nu, t_end)
        report(k, full, limit)
        plot(k, full, limit, HERE / "plots" / f"motion{k}.png")


if __name__ == "__main__":
    main()
