"""Plots of the kinematics calculation: one PNG per plot the model asks for.

``ПОКАЗАТЬ := v`` → a time history; ``y(x)`` → a hodograph; ``z(x, y)`` → a 3-D
curve; ``СРАВНИТЬ := ХУ(x, y)`` / ``СОВМЕСТИТЬ := V(vx, vy)`` → several curves against
time on one plot. Files are written atomically.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from kidym.model.model import Model
from kidym.simulate.result import write_atomically

if TYPE_CHECKING:   # (the result's module calls this one to draw it)
    from kidym.calc.kinematics import KinematicsResult

_UNSAFE = re.compile(r"[^\w.-]+")


def _save(fig, path: Path) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return write_atomically(path, buf.getvalue())


def file_name(index: int, title: str) -> str:
    """``03_y(x)`` → ``03_y_x.png``: a safe, ordered file name for a plot."""
    safe = _UNSAFE.sub("_", title.replace("'", "_")).strip("_") or "plot"
    return f"{index:02d}_{safe[:60]}.png"


def plot_kinematics(result: KinematicsResult, model: Model, out: str | Path) -> list[Path]:
    """Draw every plot of ``model.plots`` from ``result`` into ``out``; return the files."""
    out = Path(out)
    written: list[Path] = []
    heading = model.title or model.name
    for k, plot in enumerate(model.plots, start=1):
        if len(plot.against) == 2:
            fig = plt.figure(figsize=(6, 5))
            ax = fig.add_subplot(projection="3d")
            x, y = (result[n] for n in plot.against)
            ax.plot(x, y, result[plot.curves[0]])
            ax.set_xlabel(plot.against[0])
            ax.set_ylabel(plot.against[1])
            ax.set_zlabel(plot.curves[0])
        else:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            xname = plot.against[0] if plot.against else "t"
            for c in plot.curves:
                ax.plot(result[xname], result[c], label=c)
            ax.set_xlabel(xname)
            if len(plot.curves) > 1:
                ax.legend(loc="best")
            else:
                ax.set_ylabel(plot.curves[0])
            if plot.against:
                ax.set_aspect("equal", adjustable="datalim")
            ax.grid(True, alpha=0.3)
        ax.set_title(f"{heading}: {plot.title}")
        written.append(_save(fig, out / file_name(k, plot.title)))
    return written
