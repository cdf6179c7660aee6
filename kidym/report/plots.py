"""Plots of a run (matplotlib, non-interactive backend): PNG files, written atomically."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from kidym.model.model import Model
from kidym.simulate.result import Result, write_atomically


def _save(fig, path: Path) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return write_atomically(path, buf.getvalue())


def plot_run(result: Result, model: Model, out: str | Path) -> list[Path]:
    """Time histories of the coordinates, the speeds and the energy.

    Returns
    -------
    list of Path
        The PNG files written into ``out``.
    """
    out = Path(out)
    written = []
    groups = {
        "coordinates": [n for n in result.state_names if not n.endswith("'t")]
        or list(result.state_names[: len(model.coordinates)]),
        "speeds": list(result.state_names[len(model.coordinates):]),
    }
    for title, names in groups.items():
        if not names:
            continue
        fig, ax = plt.subplots(figsize=(8, 4.5))
        colors = plt.get_cmap("tab20" if len(names) > 10 else "tab10").colors
        for k, n in enumerate(names):
            ax.plot(result.t, result[n], label=n, color=colors[k % len(colors)])
        ax.set_xlabel("t")
        ax.set_title(f"{model.name}: {title}")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small", ncol=max(1, len(names) // 8))
        written.append(_save(fig, out / f"{title}.png"))
    if "energy" in result.values:
        fig, ax = plt.subplots(figsize=(8, 3.5))
        e = result["energy"]
        ax.plot(result.t, e - e[0])
        ax.set_xlabel("t")
        ax.set_ylabel("E(t) − E(0)")
        ax.set_title(f"{model.name}: energy drift (T + Π)")
        ax.grid(True, alpha=0.3)
        written.append(_save(fig, out / "energy.png"))
    return written
