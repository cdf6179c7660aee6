"""Plots of the kinematics calculation: one PNG per plot the model asks for.

``ПОКАЗАТЬ := v`` → a time history; ``y(x)`` → a hodograph; ``z(x, y)`` → a 3-D
curve; ``СРАВНИТЬ := ХУ(x, y)`` / ``СОВМЕСТИТЬ := V(vx, vy)`` → several curves against
time on one plot. Files are written atomically.

The figures are :class:`matplotlib.figure.Figure` objects drawn by the Agg canvas, not
pyplot's: no backend is chosen, so a Python session (Jupyter's inline backend,
``MPLBACKEND``) keeps its own.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from kidym.display import math_name
from kidym.model.model import Model
from kidym.simulation.result import write_atomically

if TYPE_CHECKING:   # (the result's module calls this one to draw it)
    from kidym.calc.kinematics import KinematicsResult

_UNSAFE = re.compile(r"[^\w.-]+")


def _save(fig, path: Path) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return write_atomically(path, buf.getvalue())


def file_name(index: int, title: str) -> str:
    """``03_y(x)`` → ``03_y_x.png``: a safe, ordered file name for a plot."""
    safe = _UNSAFE.sub("_", title.replace("'", "_")).strip("_") or "plot"
    return f"{index:02d}_{safe[:60]}.png"


def _units(model: Model) -> dict[str, str]:
    out = {p.name: p.unit for p in model.parameters if p.unit}
    out.update({d.name: d.unit for d in model.definitions if d.unit})
    out.update(model.units)
    return out


def _label(names: list[str], units: dict[str, str]) -> str:
    """``v, m/s`` for one name; ``vx, vy, m/s`` for several of one unit (rates as ẋ)."""
    shown = ", ".join(math_name(n) for n in names)
    found = {units.get(n) for n in names}
    return f"{shown}, {found.pop()}" if len(found) == 1 and None not in found else shown


def kinematics_figures(result: KinematicsResult, model: Model) -> list[tuple[str, object]]:
    """The figures of ``model.plots`` drawn from ``result``, each with its file name."""
    out: list[tuple[str, object]] = []
    heading = model.title or model.name
    units = _units(model)
    for k, plot in enumerate(model.plots, start=1):
        if len(plot.against) == 2:
            fig = Figure(figsize=(6, 5))
            ax = fig.add_subplot(projection="3d")
            x, y = (result[n] for n in plot.against)
            ax.plot(x, y, result[plot.curves[0]])
            ax.set_xlabel(_label([plot.against[0]], units))
            ax.set_ylabel(_label([plot.against[1]], units))
            ax.set_zlabel(_label([plot.curves[0]], units))
        else:
            fig = Figure(figsize=(7, 4.5))
            ax = fig.subplots()
            xname = plot.against[0] if plot.against else "t"
            for c in plot.curves:
                ax.plot(result[xname], result[c], label=math_name(c))
            ax.set_xlabel(_label([xname], units))
            ax.set_ylabel(_label(list(plot.curves), units))   # every panel has one
            if len(plot.curves) > 1:
                ax.legend(loc="best")
            if plot.against:
                ax.set_aspect("equal", adjustable="datalim")
            ax.grid(True, alpha=0.3)
        ax.set_title(f"{heading}: {plot.title}")
        out.append((file_name(k, plot.title), fig))
    return out


def plot_kinematics(result: KinematicsResult, model: Model, out: str | Path) -> list[Path]:
    """Draw every plot of ``model.plots`` from ``result`` into ``out``; return the files."""
    out = Path(out)
    return [_save(fig, out / name) for name, fig in kinematics_figures(result, model)]
