"""Plots of a run (matplotlib, non-interactive backend): PNG and SVG, written atomically.

What is drawn (:func:`plot_run`):

* time histories of the coordinates, the speeds and the model's outputs, and, for a
  model with constraints (``УРАВНЕНИЯ``), of their multipliers ``λf`` (``multipliers``:
  the forces and torques the constraints exert; in a kinetostatics calculation, those
  the prescribed motion needs);
* the plots the model asks for (``ПОКАЗАТЬ``/``SHOW``: a time history, ``y(x)`` or a
  3-D curve ``z(x, y)``; ``СРАВНИТЬ``/``COMPARE`` and ``СОВМЕСТИТЬ``/``OVERLAY``:
  several curves on one plot), and any ``--plot`` request of the command line;
* phase portraits ``q̇(q)`` of the coordinates whose velocity is a state;
* the trajectories of the bodies' centres of mass in the horizontal, sagittal and
  frontal planes and in 3-D (seed 000, Fig. 3), from the model's kinematics
  (:mod:`kidym.report.poses`);
* the energy balance ``E(t) − E(0) − W(t)`` (``W``: the work of what ``E = T + Π``
  leaves out, :mod:`kidym.simulate.energy`) and, for quaternion coordinates, the norm drift
  ``|Λ|² − 1``.

Event times (``result.stats["events"]``: a list of times, or a mapping of event
names to lists) are marked on every time axis. Axis labels carry the units the
model gives (``x = …, m;``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from kidym.eom.constraints import multiplier_name
from kidym.model.model import Model, Plot
from kidym.simulate.energy import energy_balance
from kidym.simulate.result import Result, write_atomically

AXIS = "XYZ"
FORMATS = ("png", "svg")


def _save(fig, path: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    out = []
    for fmt in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight")
        out.append(write_atomically(path.with_suffix("." + fmt), buf.getvalue()))
    plt.close(fig)
    return out


def units(model: Model) -> dict[str, str]:
    """Units the model gives its names (parameters and definitions)."""
    out = {p.name: p.unit for p in model.parameters if p.unit}
    out.update({d.name: d.unit for d in model.definitions if d.unit})
    return out


def label(name: str, model: Model) -> str:
    """Axis label: the name, and its unit when the model gives one."""
    u = units(model).get(name)
    return f"{name}, {u}" if u else name


def event_times(result: Result) -> dict[str, list[float]]:
    """Event times by event name, from ``result.stats["events"]`` (``{"t", "name", …}``
    as both engines record them); empty without events."""
    ev = result.stats.get("events") or getattr(result, "events", None)
    if ev is None or not len(ev):
        return {}
    if isinstance(ev, dict) and "t" in ev and "name" in ev:
        out: dict[str, list[float]] = {}
        for t, name in zip(np.atleast_1d(ev["t"]), ev["name"]):
            out.setdefault(str(name), []).append(float(t))
        return out
    if isinstance(ev, dict):
        return {str(k): [float(x) for x in np.atleast_1d(v)] for k, v in ev.items()}
    return {"event": [float(x) for x in np.atleast_1d(ev)]}


#: Line styles of the event markers, one per event name in turn.
_EVENT_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1)))


def _mark_events(ax, result: Result) -> None:
    """A vertical line at every event, one style and one legend entry per event name."""
    for k, (name, times) in enumerate(event_times(result).items()):
        style = _EVENT_STYLES[k % len(_EVENT_STYLES)]
        for j, t in enumerate(times):
            ax.axvline(t, color="0.4", lw=0.8, ls=style,
                       label=f"event {name} ({len(times)}×)" if j == 0 else None)


def _time_plot(result: Result, model: Model, names: Sequence[str], title: str,
               ylabel: str | None = None):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    colors = plt.get_cmap("tab20" if len(names) > 10 else "tab10").colors
    for k, n in enumerate(names):
        ax.plot(result.t, result[n], label=n, color=colors[k % len(colors)])
    ax.set_xlabel("t")
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    elif len(names) == 1:
        ax.set_ylabel(label(names[0], model))
    ax.set_title(f"{model.name}: {title}")
    ax.grid(True, alpha=0.3)
    _mark_events(ax, result)
    ax.legend(loc="best", fontsize="small", ncol=max(1, len(names) // 8))
    return fig


def _slug(text: str) -> str:
    keep = "".join(c if (c.isalnum() or c in "-_") else "_" for c in text)
    return keep.strip("_") or "plot"


def plot_request(result: Result, model: Model, request: Plot):
    """The figure for one model plot instruction; ``KeyError`` names an unknown quantity."""
    for n in (*request.curves, *request.against):
        result[n]  # raises a KeyError naming the missing quantity
    title = request.title or ", ".join(request.curves)
    if not request.against:
        return _time_plot(result, model, request.curves, title)
    if len(request.against) == 1:
        x = request.against[0]
        fig, ax = plt.subplots(figsize=(6.5, 5))
        for n in request.curves:
            ax.plot(result[x], result[n], label=n)
        ax.set_xlabel(label(x, model))
        ax.set_ylabel(label(request.curves[0], model) if len(request.curves) == 1 else "")
        ax.set_title(f"{model.name}: {title}")
        ax.grid(True, alpha=0.3)
        if len(request.curves) > 1:
            ax.legend(fontsize="small")
        return fig
    x, y = request.against[:2]
    fig = plt.figure(figsize=(6.5, 5.5))
    ax = fig.add_subplot(projection="3d")
    for n in request.curves:
        ax.plot(result[x], result[y], result[n], label=n)
    ax.set_xlabel(label(x, model))
    ax.set_ylabel(label(y, model))
    ax.set_zlabel(label(request.curves[0], model))
    ax.set_title(f"{model.name}: {title}")
    return fig


def parse_plot_option(text: str) -> Plot:
    """A ``--plot`` value: ``a,b`` (time histories), ``y(x)`` or ``z(x,y)``."""
    text = text.strip()
    if text.endswith(")") and "(" in text:
        head, _, args = text[:-1].partition("(")
        against = tuple(a.strip() for a in args.split(",") if a.strip())
        return Plot(curves=tuple(c.strip() for c in head.split(",") if c.strip()),
                    against=against, kind="show", title=text)
    return Plot(curves=tuple(c.strip() for c in text.split(",") if c.strip()), kind="show",
                title=text)


def _phase(result: Result, model: Model):
    pairs = [(q, f"{q}'t") for q in result.state_names if f"{q}'t" in result.state_names]
    if not pairs:
        return None
    n = len(pairs)
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
    for ax, (q, w) in zip(axes.flat, pairs):
        ax.plot(result[q], result[w], lw=0.9)
        ax.plot(result[q][:1], result[w][:1], "o", ms=4, color="C3")
        ax.set_xlabel(label(q, model))
        ax.set_ylabel(w)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"{model.name}: phase portraits")
    fig.tight_layout()
    return fig


def projection_planes(up: int) -> list[tuple[str, int, int]]:
    """``(name, horizontal axis, vertical axis)`` of the horizontal, sagittal and frontal
    planes when axis ``up`` is vertical (``z`` up: x–y, x–z, y–z as in seed 000 Fig. 3)."""
    a, b = (up + 1) % 3, (up + 2) % 3
    return [("horizontal", a, b), ("sagittal", a, up), ("frontal", b, up)]


def _trajectories(poses, model: Model):
    planes = projection_planes(poses.up)
    fig = plt.figure(figsize=(13, 3.9))
    colors = poses.colors()
    for k, (name, i, j) in enumerate(planes):
        ax = fig.add_subplot(1, 4, k + 1)
        for b, body in enumerate(poses.bodies):
            ax.plot(poses.centre[b, :, i], poses.centre[b, :, j], color=colors[b], lw=0.9,
                    label=body)
            ax.plot(poses.centre[b, :1, i], poses.centre[b, :1, j], "o", ms=3, color=colors[b])
        ax.set_xlabel(AXIS[i])
        ax.set_ylabel(AXIS[j])
        ax.set_title(name)
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(True, alpha=0.3)
    ax3 = fig.add_subplot(1, 4, 4, projection="3d")
    for b, body in enumerate(poses.bodies):
        c = poses.centre[b]
        ax3.plot(c[:, 0], c[:, 1], c[:, 2], color=colors[b], lw=0.9, label=body)
    ax3.set_xlabel("X")
    ax3.set_ylabel("Y")
    ax3.set_zlabel("Z")
    ax3.set_title("3-D")
    handles, labels = fig.axes[0].get_legend_handles_labels()
    if len(poses.bodies) <= 16:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8),
                   fontsize="small", bbox_to_anchor=(0.5, -0.16))
    fig.suptitle(f"{model.name}: trajectories of the centres of mass")
    fig.tight_layout()
    return fig


def _drift(result: Result, model: Model):
    series: list[tuple[str, np.ndarray]] = []
    balance = energy_balance(result)
    if balance is not None:
        series.append(("E(t) − E(0) − W(t)", balance.balance))
    for quat in model.quaternions:
        comps = quat.quaternion
        if all(c in result.values for c in comps):
            norm2 = sum(result[c] ** 2 for c in comps)
            series.append((f"|{', '.join(comps)}|² − 1", norm2 - 1))
    if not series:
        return None
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 3.0 * len(series)), squeeze=False)
    for ax, (name, values) in zip(axes.flat, series):
        ax.plot(result.t, values)
        ax.set_ylabel(name)
        ax.set_xlabel("t")
        ax.grid(True, alpha=0.3)
        _mark_events(ax, result)
    axes.flat[0].set_title(f"{model.name}: balance of conserved quantities")
    fig.tight_layout()
    return fig


def plot_run(result: Result, model: Model, out: str | Path, *,
             requests: Sequence[Plot] = (), poses=None,
             formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write the plots of a run into ``out`` (see the module docstring for the list).

    Parameters
    ----------
    result : Result
        The run.
    model : Model
        Its model (names, units, plot instructions, quaternions).
    out : path
        Directory for the files.
    requests : sequence of Plot
        Plots asked for on the command line, besides the model's own.
    poses : Poses, optional
        Body positions (:func:`kidym.report.poses.body_poses`) for the trajectories.
    formats : sequence of {"png", "svg"}
        File formats of every plot.

    Returns
    -------
    list of Path
        The files written (each plot in every format, PNG first).
    """
    out = Path(out)
    written: list[Path] = []
    n_q = len(model.coordinates)
    groups = {
        "coordinates": [n for n in result.state_names if not n.endswith("'t")]
        or list(result.state_names[:n_q]),
        "speeds": list(result.state_names[n_q:]),
        "outputs": [n for n in model.outputs if n in result.values],
        "multipliers": [multiplier_name(n) for n in (
            *(c.name for c in model.constraints),
            *(x for c in model.coincidences for x in c.constraint_names()))
            if multiplier_name(n) in result.values],
    }
    for title, names in groups.items():
        if names:
            written += _save(_time_plot(result, model, names, title), out / title, formats)
    for k, request in enumerate((*model.plots, *requests), start=1):
        fig = plot_request(result, model, request)
        written += _save(fig, out / f"plot{k}_{_slug(request.title or request.curves[0])}",
                         formats)
    fig = _phase(result, model)
    if fig is not None:
        written += _save(fig, out / "phase", formats)
    if poses is not None and len(poses.bodies):
        written += _save(_trajectories(poses, model), out / "trajectories", formats)
    fig = _drift(result, model)
    if fig is not None:
        written += _save(fig, out / "energy", formats)
    return written
