"""Plots of a run (matplotlib's Agg backend, without pyplot): PNG by default, written
atomically, drawn in two processes where there are two cores.

What is drawn (:func:`figures`, written by :func:`plot_run`):

* ``coordinates``: the time histories of the coordinates, one panel per kind — angles
  (coordinates a body turns by, ``Rz(phi)``: unwrapped with :func:`numpy.unwrap`, in
  radians or, with ``degrees``, in degrees), lengths (``Sx(x)``), the rest; the
  components of a quaternion are not here but in ``quaternion``;
* ``quaternion``: the components of each quaternion (``КВАТЕРНИОН``, ``Q(…)``) and their
  norm drift ``|Λ|² − 1``;
* ``speeds``: the speeds — the rates of the coordinates (``phi't``, in °/time with
  ``degrees`` when ``phi`` is an angle) and the pseudo-velocities — one panel per kind;
* ``outputs`` (the model's outputs, angles unwrapped) and, for a model with
  constraints (``УРАВНЕНИЯ``), ``multipliers`` ``λf`` (the forces and torques the
  constraints exert; in a kinetostatics calculation, those the prescribed motion
  needs);
* the plots the model asks for (``ПОКАЗАТЬ``/``SHOW``: a time history, ``y(x)`` or a
  3-D curve ``z(x, y)``; ``СРАВНИТЬ``/``COMPARE`` and ``СОВМЕСТИТЬ``/``OVERLAY``:
  several curves on one plot), and any ``--plot`` request of the command line;
* phase portraits ``q̇(q)`` of the coordinates whose velocity is a state;
* the trajectories of the bodies' centres of mass in the horizontal, sagittal and
  frontal planes and in 3-D (seed 000, Fig. 3), from the model's kinematics
  (:mod:`kidym.report.poses`);
* ``energy``: the energy balance (:mod:`kidym.simulation.energy`) — ``E(t)`` against
  ``E(0) + W(t)`` (``W``: the work of what ``E = T + Π`` leaves out; for a conservative
  model ``W = 0``), and their difference ``E(t) − E(0) − W(t)``, which is zero on the
  exact motion.

Event times (``result.stats["events"]``) are marked on every time axis, one line
style and legend entry per event name. Axis labels carry the units known: radians
(degrees) for angles, the unit the model gives a name (``x = …, m;``), and with
``РАЗМЕРНОСТИ`` the chosen length and time units for lengths, times and rates.
Legends of more than :data:`LEGEND_INSIDE` lines go outside the axes, in columns.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from kidym.display import math_name
from kidym.eom.constraints import multiplier_name
from kidym.files import write_atomically
from kidym.model.model import Model, Plot
from kidym.report.cores import idle_core
from kidym.simulation.energy import energy_balance

if TYPE_CHECKING:
    from kidym.simulation.result import Result

if getattr(matplotlib.rcParams, "_get_backend_or_none", lambda: None)() is None:
    # for the pyplot of result_html (the figures here need no backend); a backend chosen
    # by the user (Jupyter's inline one, MPLBACKEND) is kept, so Result.plot shows there
    matplotlib.use("Agg")

AXIS = "XYZ"
FORMATS = ("png",)
#: legends with more entries than this go outside the axes, on the right
LEGEND_INSIDE = 6
#: entries per column of an outside legend
LEGEND_ROWS = 14
#: a panel of more curves than this has no legend (a legend of colours that repeat
#: names none of them, and its many texts take seconds to draw): its curves are
#: shaded along a colour map in the order of their names, and a colour bar beside
#: the panel names the first, the last and a few between
LEGEND_MAX = 20
#: the most phase portraits drawn: beyond, this many evenly spread over the
#: coordinates, the first and last among them (the title says how many of how many)
PHASE_MAX = 12
#: inches right of a panel for its colour bar and the names along it
COLORBAR_WIDTH = 1.5


def _save(fig: Figure, path: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    out = []
    for fmt in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=110)
        out.append(write_atomically(path.with_suffix("." + fmt), buf.getvalue()))
    return out


def units(model: Model) -> dict[str, str]:
    """Units the model gives its names (parameters and definitions)."""
    out = {p.name: p.unit for p in model.parameters if p.unit}
    out.update({d.name: d.unit for d in model.definitions if d.unit})
    out.update(model.units)
    return out


def label(name: str, model: Model) -> str:
    """Axis label: the name, and its unit when the model gives one."""
    u = units(model).get(name)
    return f"{name}, {u}" if u else name


# ------------------------------------------------------------------ what a name is
def _symbol_name(expr) -> str | None:
    text = str(expr)
    return text if re.fullmatch(r"[^\W\d][\w']*", text) else None


def angle_names(model: Model) -> set[str]:
    """Names that are angles: coordinates a body turns by (``Rz(phi)``) and the angles
    of ``КВАТЕРНИОН`` (``Ry(ψ)``)."""
    out: set[str] = set()
    for body in model.bodies:
        for tr in (*body.transforms, *body.central):
            if tr.kind == "R" and (n := _symbol_name(tr.args[0])) is not None:
                out.add(n)
    for quat in model.quaternions:
        for tr in quat.rotations:
            if (n := _symbol_name(tr.args[0])) is not None:
                out.add(n)
        out.update(quat.euler or ())
    return out


def length_names(model: Model) -> set[str]:
    """Coordinates a body is shifted by (``Sx(x)``)."""
    out: set[str] = set()
    for body in model.bodies:
        for tr in (*body.transforms, *body.central):
            if tr.kind == "S" and (n := _symbol_name(tr.args[0])) in model.coordinates:
                out.add(n)
    return out


def base_units(model: Model) -> tuple[str | None, str]:
    """``(length, time)`` units of the model: those its ``РАЗМЕРНОСТИ`` chooses; else the
    time in seconds (as the dimension check of :mod:`kidym.lang.units` takes it) and
    the length in metres with ``РАЗМЕРНОСТИ``, unknown (``None``) without."""
    if not model.source:
        return None, "s"
    from kidym.lang.parser import parse_statements

    parsed = parse_statements(model.source)
    for task in parsed.tasks:
        for stmt in task:
            if getattr(stmt, "key", None) == "UNITS" and getattr(stmt, "raw", None):
                found = dict(re.findall(r"([lt])\s*\(([^)]+)\)", stmt.raw))
                return found.get("l", "m"), found.get("t", "s")
    return None, "s"


@dataclass(frozen=True)
class Series:
    """One curve as drawn: ``values`` are the recorded ones, unwrapped and in degrees
    where the name is an angle (or the rate of one) and that was asked for."""

    name: str
    values: np.ndarray
    unit: str | None = None
    kind: str = "other"


@dataclass
class _Context:
    """What the figures of one run share."""

    result: Result
    model: Model
    degrees: bool = False
    angles: set[str] = field(default_factory=set)
    lengths: set[str] = field(default_factory=set)
    length_unit: str | None = None
    time_unit: str = "s"
    given: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, result: Result, model: Model, degrees: bool) -> _Context:
        length, time = base_units(model)
        return cls(result, model, degrees, angle_names(model), length_names(model),
                   length, time, units(model))

    @property
    def angle_unit(self) -> str:
        return "°" if self.degrees else "rad"

    def per_time(self, unit: str | None) -> str | None:
        return None if unit is None else f"{unit}/{self.time_unit}"

    def is_angular_velocity(self, name: str) -> bool:
        """Whether ``name`` is a generated angular velocity ``ωXBody`` of a body."""
        from kidym.kinematics.names import OMEGA

        bodies = {b.name for b in self.model.bodies}
        return name[:2] in OMEGA and name[2:] in bodies

    def series(self, name: str) -> Series:
        """The curve of ``name`` as plotted (:class:`Series`)."""
        v = np.asarray(self.result[name], float)
        base = name[:-2] if name.endswith("'t") else None
        if name in self.angles:
            v = np.unwrap(v)
            if self.degrees:
                v = np.degrees(v)
            return Series(name, v, self.angle_unit, "angle")
        if base is not None and base in self.angles:
            if self.degrees:
                v = np.degrees(v)
            return Series(name, v, self.per_time(self.angle_unit), "angular speed")
        if name in self.lengths:
            return Series(name, v, self.length_unit, "length")
        if self.is_angular_velocity(name):
            # ωXBody …: a projection of a body's angular velocity (a pseudo-velocity, an
            # output), an angular speed like the rates of the angles
            if self.degrees:
                v = np.degrees(v)
            return Series(name, v, self.per_time(self.angle_unit), "angular speed")
        if base is not None and base in self.lengths:
            return Series(name, v, self.per_time(self.length_unit), "linear speed")
        return Series(name, v, self.given.get(name), "other")


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
    """Vertical lines at the events: one collection (``gid`` ``event:NAME``), line style
    and legend entry per event name."""
    for k, (name, times) in enumerate(event_times(result).items()):
        style = _EVENT_STYLES[k % len(_EVENT_STYLES)]
        ax.vlines(times, 0, 1, transform=ax.get_xaxis_transform(), colors="0.4",
                  linewidth=0.8, linestyles=style, gid=f"event:{name}",
                  label=f"event {name} ({len(times)}×)")


def _legend(ax, n: int) -> None:
    """A legend that does not hide the curves: inside for a few entries, else outside
    on the right in columns of at most :data:`LEGEND_ROWS`."""
    if n <= LEGEND_INSIDE:
        ax.legend(loc="best", fontsize="small")
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
                  ncol=math.ceil(n / LEGEND_ROWS), borderaxespad=0.0)


def _colors(n: int):
    from matplotlib import colormaps

    return colormaps["tab20" if n > 10 else "tab10"].colors


def _new_figure(width: float, height: float) -> Figure:
    """A figure without a layout engine: margins are set in inches (:func:`_margins`),
    so that saving draws it once (a layout engine, or ``bbox_inches="tight"``, draws
    every figure twice to measure its texts)."""
    return Figure(figsize=(width, height))


def _margins(fig: Figure, *, left: float = 0.85, right: float = 0.25, top: float = 0.55,
             bottom: float = 0.55, hspace: float = 0.12, wspace: float = 0.3) -> None:
    """Fixed margins, in inches (``hspace``/``wspace``: fractions of a panel)."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=left / w, right=1 - right / w, top=1 - top / h,
                        bottom=bottom / h, hspace=hspace, wspace=wspace)


def _by_kind(series: Sequence[Series]) -> dict[tuple, list[Series]]:
    """Series grouped one physical kind per axis: by kind and unit; a quantity of no
    known kind or unit (an output ``F = …`` beside ``x``) has an axis of its own."""
    groups: dict[tuple, list[Series]] = {}
    for s in series:
        key = (s.kind, s.unit) if s.kind != "other" or s.unit else (s.kind, None, s.name)
        groups.setdefault(key, []).append(s)
    return groups


#: the y label of a panel of several quantities of one kind
_KIND_WORDS = {"other": "", "angle": "angle", "length": "length",
               "angular speed": "angular speed", "linear speed": "speed",
               "coordinate": "coordinates", "speed": "speeds"}


def _panel_label(group: Sequence[Series]) -> str:
    """``angle, rad`` for a panel of several quantities of one kind; the name and unit
    (``ẋ, m/s``) for a panel of one."""
    what, unit = _KIND_WORDS[group[0].kind], group[0].unit
    if len(group) == 1:
        name = math_name(group[0].name)
        return f"{name}, {unit}" if unit else name
    return ", ".join(x for x in (what, unit) if x)


def _panels(ctx: _Context, names: Sequence[str], title: str, *, stem: str) -> Figure:
    """Time histories of ``names``, one panel per kind of quantity (angles, lengths,
    speeds of each, each other unit; a quantity of unknown kind alone), sharing the time
    axis."""
    series = [ctx.series(n) for n in names]
    groups = _by_kind(series)
    events = len(event_times(ctx.result))
    n_legend = max((len(g) for g in groups.values() if len(g) <= LEGEND_MAX),
                   default=0) + events
    legend = 1.7 * math.ceil(n_legend / LEGEND_ROWS) if n_legend > LEGEND_INSIDE else 0.0
    if any(len(g) > LEGEND_MAX for g in groups.values()):
        legend = max(legend, COLORBAR_WIDTH)
    fig = _new_figure(8.0 + legend, 1.1 + 2.9 * len(groups))
    _margins(fig, right=0.25 + legend)
    axes = fig.subplots(len(groups), 1, sharex=True, squeeze=False)[:, 0]
    colors = _colors(len(series))
    k = 0
    for ax, group in zip(axes, groups.values()):
        if len(group) > LEGEND_MAX:
            _shaded(ax, ctx.result.t, group)
        else:
            for s in group:
                ax.plot(ctx.result.t, s.values, label=math_name(s.name),
                        color=colors[k % len(colors)], gid=s.name)
                k += 1
        ax.set_ylabel(_panel_label(group))
        ax.grid(True, alpha=0.3)
        _mark_events(ax, ctx.result)
        if len(group) <= LEGEND_MAX:
            _legend(ax, len(group) + events)
        elif events:   # the events' entries only
            ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel(f"t, {ctx.time_unit}")
    fig.suptitle(f"{ctx.model.name}: {title}")
    fig.set_label(stem)
    return fig


def _shaded(ax, t: np.ndarray, group: Sequence[Series]) -> None:
    """The curves of a panel of more than :data:`LEGEND_MAX`: coloured along a colour
    map in their order, with a colour bar right of the panel that names a few of them
    (no legend)."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    cmap, n = colormaps["viridis"], len(group)
    for k, s in enumerate(group):
        ax.plot(t, s.values, color=cmap(k / (n - 1)), lw=0.8, gid=s.name)
    fig = ax.get_figure()
    width = fig.get_size_inches()[0]
    box = ax.get_position()
    cax = fig.add_axes((1.0 - (COLORBAR_WIDTH - 0.1) / width, box.y0, 0.12 / width,
                        box.height))
    bar = fig.colorbar(ScalarMappable(Normalize(0, n - 1), cmap), cax=cax)
    ticks = sorted({round(x) for x in np.linspace(0, n - 1, min(n, 5))})
    bar.set_ticks(ticks, labels=[math_name(group[k].name) for k in ticks])
    bar.set_label(f"{n} curves, in order")


def _time_plot(result: Result, model: Model, names: Sequence[str], title: str,
               ylabel: str | None = None, *, degrees: bool = False) -> Figure:
    """One panel per kind of the time histories of ``names`` (see :func:`_panels`)."""
    fig = _panels(_Context.of(result, model, degrees), names, title, stem=title)
    if ylabel is not None:
        fig.axes[0].set_ylabel(ylabel)
    return fig


def _slug(text: str) -> str:
    keep = "".join(c if (c.isalnum() or c in "-_") else "_" for c in text)
    return keep.strip("_") or "plot"


def _check_request(result: Result, request: Plot) -> None:
    for n in (*request.curves, *request.against):
        result[n]  # raises a KeyError naming the missing quantity


def _axis_label(s: Series) -> str:
    name = math_name(s.name)
    return f"{name}, {s.unit}" if s.unit else name


def _request(ctx: _Context, request: Plot, *, stem: str) -> Figure:
    title = request.title or ", ".join(request.curves)
    if not request.against:
        return _panels(ctx, request.curves, title, stem=stem)
    curves = [ctx.series(n) for n in request.curves]
    if len(request.against) == 1:
        x = ctx.series(request.against[0])
        fig = _new_figure(6.5, 5)
        _margins(fig)
        ax = fig.subplots()
        for s in curves:
            ax.plot(x.values, s.values, label=s.name, gid=s.name)
        ax.set_xlabel(_axis_label(x))
        one_kind = len({(c.kind, c.unit) for c in curves}) == 1 and curves[0].kind != "other"
        ax.set_ylabel(_axis_label(curves[0]) if len(curves) == 1
                      else _panel_label(curves) if one_kind
                      else ", ".join(math_name(c.name) for c in curves))
        ax.grid(True, alpha=0.3)
        if len(curves) > 1:
            _legend(ax, len(curves))
    else:
        x, y = (ctx.series(n) for n in request.against[:2])
        fig = _new_figure(6.5, 5.5)
        _margins(fig, left=0.3, right=0.3, bottom=0.3)
        ax = fig.add_subplot(projection="3d")
        for s in curves:
            ax.plot(x.values, y.values, s.values, label=s.name, gid=s.name)
        ax.set_xlabel(_axis_label(x))
        ax.set_ylabel(_axis_label(y))
        ax.set_zlabel(_axis_label(curves[0]))
    fig.suptitle(f"{ctx.model.name}: {title}")
    fig.set_label(stem)
    return fig


def _phase(ctx: _Context) -> Figure | None:
    names = ctx.result.state_names
    pairs = [(q, f"{q}'t") for q in names if f"{q}'t" in names]
    if not pairs:
        return None
    total = len(pairs)
    if total > PHASE_MAX:   # evenly spread, the first and the last among them
        pairs = [pairs[round(x)] for x in np.linspace(0, total - 1, PHASE_MAX)]
    n = len(pairs)
    cols = min(n, 3)
    rows = -(-n // cols)
    fig = _new_figure(3.7 * cols, 0.6 + 3.2 * rows)
    _margins(fig, left=0.8, bottom=0.6, hspace=0.35, wspace=0.45)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, (q, w) in zip(axes.flat, pairs):
        x, v = ctx.series(q), ctx.series(w)
        ax.plot(x.values, v.values, lw=0.9, gid=q)
        ax.plot(x.values[:1], v.values[:1], "o", ms=4, color="C3")
        ax.locator_params(axis="x", nbins=4)   # narrow panels: labels like −0.075 apart
        # (left: clear of an offset text, which matplotlib puts at the right end)
        ax.set_xlabel(_axis_label(x), loc="left")
        ax.set_ylabel(_axis_label(v))
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"{ctx.model.name}: phase portraits"
                 + (f" ({n} of {total} coordinates)" if n < total else ""))
    fig.set_label("phase")
    return fig


def projection_planes(up: int) -> list[tuple[str, int, int]]:
    """``(name, horizontal axis, vertical axis)`` of the horizontal, sagittal and frontal
    planes when axis ``up`` is vertical (``z`` up: x–y, x–z, y–z as in seed 000 Fig. 3)."""
    a, b = (up + 1) % 3, (up + 2) % 3
    return [("horizontal", a, b), ("sagittal", a, up), ("frontal", b, up)]


def _trajectories(poses, ctx: _Context) -> Figure:
    planes = projection_planes(poses.up)
    n = len(poses.bodies)
    legend = 0.3 * math.ceil(min(n, 16) / 8) + 0.2 if n <= 16 else 0.0
    fig = _new_figure(13, 4.4 + legend)
    _margins(fig, left=0.7, bottom=0.6 + legend, wspace=0.4)
    colors = poses.colors()
    unit = f", {ctx.length_unit}" if ctx.length_unit else ""
    for k, (name, i, j) in enumerate(planes):
        ax = fig.add_subplot(1, 4, k + 1)
        for b, body in enumerate(poses.bodies):
            ax.plot(poses.centre[b, :, i], poses.centre[b, :, j], color=colors[b], lw=0.9,
                    label=body)
            ax.plot(poses.centre[b, :1, i], poses.centre[b, :1, j], "o", ms=3, color=colors[b])
        ax.set_xlabel(AXIS[i] + unit)
        ax.set_ylabel(AXIS[j] + unit)
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
                   fontsize="small")
    fig.suptitle(f"{ctx.model.name}: trajectories of the centres of mass")
    fig.set_label("trajectories")
    return fig


def _quaternion_components(model: Model) -> list[tuple[str, ...]]:
    """The component names of each quaternion: of ``КВАТЕРНИОН`` and of the ``Q(…)`` of
    the body records."""
    out = [tuple(q.quaternion) for q in model.quaternions]
    for body in model.bodies:
        for tr in body.transforms:
            names = tuple(str(a) for a in tr.args)
            if tr.kind == "Q" and names not in out:
                out.append(names)
    return out


def _quaternions(ctx: _Context) -> Figure | None:
    """The components of each quaternion, and below them the norm drifts ``|Λ|² − 1``."""
    quats = [c for c in _quaternion_components(ctx.model)
             if all(n in ctx.result.values for n in c)]
    if not quats:
        return None
    fig = _new_figure(8.0, 1.1 + 2.9 * (len(quats) + 1))
    _margins(fig, left=0.95)
    axes = fig.subplots(len(quats) + 1, 1, sharex=True, squeeze=False)[:, 0]
    t = ctx.result.t
    for ax, comps in zip(axes, quats):
        for c in comps:
            ax.plot(t, ctx.result[c], label=c, gid=c)
        ax.set_ylabel("quaternion component")
        ax.grid(True, alpha=0.3)
        _mark_events(ax, ctx.result)
        _legend(ax, 4 + len(event_times(ctx.result)))
    ax = axes[-1]
    for comps in quats:
        norm2 = sum(np.asarray(ctx.result[c], float) ** 2 for c in comps)
        ax.plot(t, norm2 - 1, label=f"|{', '.join(comps)}|² − 1", gid="norm:" + comps[0])
    ax.set_ylabel("|Λ|² − 1")
    ax.grid(True, alpha=0.3)
    _mark_events(ax, ctx.result)
    _legend(ax, len(quats) + len(event_times(ctx.result)))
    ax.set_xlabel(f"t, {ctx.time_unit}")
    fig.suptitle(f"{ctx.model.name}: quaternion components and norm drift")
    fig.set_label("quaternion")
    return fig


def _energy(ctx: _Context) -> Figure | None:
    """The energy balance: ``E`` against ``E(0) + W`` above, ``E − E(0) − W`` below."""
    balance = energy_balance(ctx.result)
    if balance is None:
        return None
    t = ctx.result.t
    energy = np.asarray(ctx.result["energy"], float)
    fig = _new_figure(8, 6.8)
    # the title, the line under it, then the top panel's offset text (1e-11+6.5)
    _margins(fig, left=0.95, top=0.95, hspace=0.18)
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(t, energy, label="E(t) = T + Π", gid="E")
    top.plot(t, energy - balance.balance, "--", label="E(0) + W(t)", gid="E0+W")
    top.set_ylabel("energy")
    bottom.plot(t, balance.balance, color="C3", label="E(t) − E(0) − W(t)", gid="balance")
    bottom.set_ylabel("E − E(0) − W")
    bottom.set_xlabel(f"t, {ctx.time_unit}")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
        _mark_events(ax, ctx.result)
        _legend(ax, 2 + len(event_times(ctx.result)))
    what = ("conservative: W = 0" if not np.any(balance.work)
            else "W: the work of what E = T + Π leaves out")
    height = fig.get_size_inches()[1]
    fig.suptitle(f"{ctx.model.name}: energy balance", y=1 - 0.12 / height, va="top")
    fig.text(0.5, 1 - 0.42 / height, f"{what}; max |E − E(0) − W| = {balance.max_abs:.3g}"
             if balance.available else f"energy balance not available: {balance.unavailable}",
             ha="center", va="top", fontsize="small", gid="subtitle")
    fig.set_label("energy")
    return fig


def figures(result: Result, model: Model, *, requests: Sequence[Plot] = (), poses=None,
            degrees: bool = False) -> list[tuple[str, Figure]]:
    """The figures of a run, each with its file stem (see the module docstring).

    Parameters
    ----------
    result, model, requests, poses
        As for :func:`plot_run`.
    degrees : bool
        Angles in degrees (and the rates of angle coordinates in degrees per time
        unit) instead of radians.

    Returns
    -------
    list of (str, matplotlib.figure.Figure)

    Raises
    ------
    KeyError
        A request names a quantity the run did not record.
    """
    requests = (*model.plots, *requests)
    for request in requests:
        _check_request(result, request)
    ctx = _Context.of(result, model, degrees)
    quaternion = {n for c in _quaternion_components(model) for n in c}
    coordinates = set(model.coordinates)
    groups = {
        "coordinates": [n for n in result.state_names
                        if n in coordinates and n not in quaternion],
        "speeds": [n for n in result.state_names if n not in coordinates],
        "outputs": [n for n in model.outputs if n in result.values],
        "multipliers": [multiplier_name(n) for n in (
            *(c.name for c in model.constraints),
            *(x for c in model.coincidences for x in c.constraint_names()))
            if multiplier_name(n) in result.values],
    }
    out: list[tuple[str, Figure]] = []
    for title, names in groups.items():
        if names:
            out.append((title, _panels(ctx, names, title, stem=title)))
    fig = _quaternions(ctx)
    if fig is not None:
        out.append(("quaternion", fig))
    for k, request in enumerate(requests, start=1):
        stem = f"plot{k}_{_slug(request.title or request.curves[0])}"
        out.append((stem, _request(ctx, request, stem=stem)))
    fig = _phase(ctx)
    if fig is not None:
        out.append(("phase", fig))
    if poses is not None and len(poses.bodies):
        out.append(("trajectories", _trajectories(poses, ctx)))
    fig = _energy(ctx)
    if fig is not None:
        out.append(("energy", fig))
    return out


def _render(figs: Sequence[tuple[str, Figure]], out: Path,
            formats: Sequence[str]) -> list[Path]:
    written: list[Path] = []
    for stem, fig in figs:
        written += _save(fig, out / stem, formats)
    return written


#: relative drawing cost of a figure, by stem (3-D axes and many panels cost most)
def _cost(stem: str, fig: Figure) -> float:
    return sum(3.0 if ax.name == "3d" else 1.0 for ax in fig.axes if ax.get_visible())


def _render_parallel(figs: list[tuple[str, Figure]], out: Path, formats: Sequence[str],
                     jobs: int) -> list[Path]:
    """Draw ``figs`` in ``jobs`` processes (``os.fork``: the figures are already built,
    nothing is pickled). A child that fails leaves its share to this process."""
    shares: list[list[tuple[str, Figure]]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for stem, fig in sorted(figs, key=lambda sf: -_cost(*sf)):
        k = load.index(min(load))
        shares[k].append((stem, fig))
        load[k] += _cost(stem, fig)
    children = []
    for share in shares[1:]:
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            code = 1
            try:
                _render(share, out, formats)
                code = 0
            finally:
                os._exit(code)
        children.append((pid, share))
    _render(shares[0], out, formats)
    for pid, share in children:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            _render(share, out, formats)   # again here, to raise its error
    return [out / f"{stem}.{fmt}" for stem, _ in figs for fmt in formats]


def plot_run(result: Result, model: Model, out: str | Path, *,
             requests: Sequence[Plot] = (), poses=None,
             formats: Sequence[str] = FORMATS, degrees: bool = False,
             jobs: int | None = None) -> list[Path]:
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
    formats : sequence of {"png", "svg", "pdf"}
        File formats of every plot.
    degrees : bool
        Angles in degrees instead of radians (:func:`figures`).
    jobs : int, optional
        Processes drawing the figures; default 2 where there are two cores or more,
        one of them idle (load average below cores − 1) and ``fork`` available, else 1:
        on a busy machine a second process only waits for a core.

    Returns
    -------
    list of Path
        The files written (each plot in every format, in the order of ``formats``).
    """
    out = Path(out)
    figs = figures(result, model, requests=requests, poses=poses, degrees=degrees)
    if jobs is None:
        jobs = 2 if idle_core() else 1
    jobs = max(1, min(jobs, len(figs)))
    if jobs == 1:
        return _render(figs, out, formats)
    return _render_parallel(figs, out, formats, jobs)


def plot_result(result: Result, names: Sequence[str] | str | None = None, ax=None, *,
                model: Model | None = None, degrees: bool = False) -> list:
    """:meth:`Result.plot <kidym.simulation.result.Result.plot>`: time histories, one
    panel per physical kind, into ``ax`` or a new pyplot figure.

    Returns
    -------
    list of matplotlib.axes.Axes

    Raises
    ------
    KeyError
        A name the run did not record.
    ValueError
        ``ax`` given for quantities of several kinds.
    """
    names = (list(result.state_names) if names is None
             else [names] if isinstance(names, str) else list(names))
    for n in names:
        result[n]   # a KeyError naming what the run has
    if model is not None:
        ctx = _Context.of(result, model, degrees)
        series = [ctx.series(n) for n in names]
        time_unit: str | None = ctx.time_unit
    else:
        # (a pseudo-velocity is told from a coordinate by the model only)
        series = [Series(n, np.asarray(result[n], float), None,
                         "other" if n not in result.state_names
                         else "speed" if n.endswith("'t") else "coordinate") for n in names]
        time_unit = None
    groups = list(_by_kind(series).values())
    if ax is not None:
        if len(groups) > 1:
            raise ValueError(
                "one axes takes quantities of one kind; these are of " + str(len(groups))
                + ": " + "; ".join(", ".join(s.name for s in g) for g in groups)
                + " (pass names= of one kind, or no ax= for a panel per kind)")
        axes = [ax]
    else:
        import matplotlib.pyplot as plt

        _, grid = plt.subplots(len(groups), 1, sharex=True, squeeze=False,
                                 figsize=(8, 1.0 + 2.4 * len(groups)), layout="constrained")
        axes = list(grid[:, 0])
    n_events = len(event_times(result))
    for axis, group in zip(axes, groups):
        for s in group:
            axis.plot(result.t, s.values, label=math_name(s.name), gid=s.name)
        axis.set_ylabel(_panel_label(group))
        axis.grid(True, alpha=0.3)
        _mark_events(axis, result)
        if len(group) > 1 or n_events:
            _legend(axis, len(group) + n_events)
    axes[-1].set_xlabel(f"t, {time_unit}" if time_unit else "t")
    return axes
