"""Text that overlaps in a figure, measured with matplotlib's renderer (issue 29):
titles, axis labels, the tick labels drawn, offset texts and legends, pairwise."""

from __future__ import annotations

import itertools

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: overlaps narrower or lower than this (pixels at the figure's dpi) are not counted
TOLERANCE_PX = 0.5


def _drawn_ticks(axis) -> list:
    lo, hi = sorted(axis.get_view_interval())
    eps = 1e-9 * abs(hi - lo)
    return [label for tick in axis.get_major_ticks() + axis.get_minor_ticks()
            if lo - eps <= tick.get_loc() <= hi + eps for label in (tick.label1, tick.label2)]


def texts(fig: Figure) -> list[tuple[str, object]]:
    """``(what, window extent)`` of every visible text of ``fig`` once drawn (3-D axes:
    their titles only; matplotlib places their tick labels)."""
    renderer = fig.canvas.get_renderer()
    out = [(f"figure text {t.get_text()!r}", t.get_window_extent(renderer))
           for t in fig.texts if t.get_visible() and t.get_text()]
    out += [("figure legend", leg.get_window_extent(renderer)) for leg in fig.legends]
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        items = [ax.title, ax._left_title, ax._right_title]
        if ax.name != "3d":
            items += [ax.xaxis.label, ax.yaxis.label, ax.xaxis.get_offset_text(),
                      ax.yaxis.get_offset_text(), *_drawn_ticks(ax.xaxis),
                      *_drawn_ticks(ax.yaxis)]
        out += [(f"axes {k} {t.get_text()!r}", t.get_window_extent(renderer))
                for t in items if t.get_visible() and t.get_text()]
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            out.append((f"axes {k} legend", legend.get_window_extent(renderer)))
    return out


def overlapping(fig: Figure) -> list[tuple[str, str]]:
    """The pairs of texts of ``fig`` that overlap once it is drawn."""
    FigureCanvasAgg(fig).draw()
    bad = []
    for (a, box_a), (b, box_b) in itertools.combinations(texts(fig), 2):
        w = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        h = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if w > TOLERANCE_PX and h > TOLERANCE_PX:
            bad.append((a, b))
    return bad


def unlabelled(fig: Figure) -> list[str]:
    """The 2-D panels of ``fig`` drawn without a y label."""
    return [f"axes {k}" for k, ax in enumerate(fig.axes)
            if ax.get_visible() and ax.name != "3d" and not ax.get_ylabel()]
