"""``ВАРЬИРОВАТЬ`` / ``ВАРІЮВАТИ`` / ``VARY``: the time range and the parameter study.

The forms (docs/language.md §5.11)::

    ВАРЬИРОВАТЬ := t, 0, 10, 0.01;              time range, step (KiDyM's form)
    ВАРЬИРОВАТЬ := l2, 0.5, 2, 16;              16 values of l2 from 0.5 to 2
    ВАРЬИРОВАТЬ := t(0, 2), l2(0.5, 2, 16), m1(1, 3, 5);     a 16 × 5 grid
    ВАРЬИРОВАТЬ := СЛУЧАЙНО(200, 7), l2(0.5, 2), phi(0, 0.3); 200 random runs, seed 7

A varied name is a parameter or a state whose initial value is varied. A free
function over the model builder (:mod:`kidym.model.build`), like
:mod:`kidym.model.events`: :func:`read` is called when the time range is read, after
the names are classified.
"""

from __future__ import annotations

import math

import numpy as np

from kidym.lang import ast, keywords
from kidym.lang.formulas import suggest
from kidym.model.model import Sampling, Variation

_TIME = "t"
_USAGE = ("write `t, t_start, t_end[, step]` (the time range), `name, start, end, count` "
          "(a grid of one parameter or initial value) or a list of items `t(t_start, "
          "t_end)`, `name(start, end, count)`, and for a random sample `СЛУЧАЙНО(n[, seed])` "
          "with `name(low, high)`")


def read(b, ins: ast.Instruction) -> tuple[float | None, float | None]:
    """The time range of a ``VARY`` list (``None, None`` if it gives none); the
    variations go to ``b.variations`` and ``b.sampling``, problems to located errors."""
    b.variations, b.sampling = [], None
    items = ins.items
    if any(isinstance(i, ast.NamedItem | ast.BasedItem) for i in items) or not items:
        b.error(f"`{ins.written}`: {_USAGE}", ins.name_span)
        return None, None
    first = items[0]
    if isinstance(first, ast.Name):         # the flat form: one varied name
        if not 3 <= len(items) <= 4:
            b.error(f"`{ins.written}` takes `t, t_start, t_end[, step]` or `name, start, end, "
                    f"count`, got {len(items)} items", ins.name_span)
            return None, None
        if first.name == _TIME:
            return _time(b, first, items[1:])
        if len(items) != 4:
            b.error(f"`{ins.written} := {first.name}, …`: a varied parameter or initial value "
                    "needs `name, start, end, count` (the number of values; time alone "
                    "takes `t, t_start, t_end`)", first.span)
            return None, None
        _grid(b, ins, first, items[1:])
        _check_names(b, ins)
        return None, None
    t0 = t1 = None
    random_items = [i for i in items if isinstance(i, ast.Call)
                    and keywords.normalize(i.func.name) in keywords.VARY_RANDOM]
    for item in items:
        if not isinstance(item, ast.Call):
            b.error(f"`{ins.written}`: `{b.text(item)}` is not an item of a list; {_USAGE}",
                    item.span)
            continue
        if item in random_items:
            if item is not random_items[0]:
                b.error(f"`{ins.written}`: `{item.func.name}` is given twice", item.span)
            else:
                b.sampling = _sampling(b, item)
        elif item.func.name == _TIME:
            t0, t1 = _time(b, item.func, item.args)
        elif len(item.args) == 3:
            _grid(b, ins, item.func, item.args)
        elif len(item.args) == 2 and random_items:
            _range(b, item)
        elif len(item.args) == 2:
            b.error(f"`{b.text(item)}`: two values are the range of a random sample; add "
                    f"`СЛУЧАЙНО(n[, seed])` to the list, or give a grid `{item.func.name}"
                    "(start, end, count)`", item.span)
        else:
            b.error(f"`{b.text(item)}`: a varied name takes `(start, end, count)` (a grid) or "
                    f"`(low, high)` (with `СЛУЧАЙНО`), got {len(item.args)} values", item.span)
    kinds = {v.kind for v in b.variations}
    if random_items and "grid" in kinds:
        b.error(f"`{ins.written}`: a random sample (`СЛУЧАЙНО`) takes ranges `name(low, high)`"
                ", not grids `name(start, end, count)`; run a grid and a sample apart",
                random_items[0].span)
    written_ranges = [i for i in items if isinstance(i, ast.Call) and len(i.args) == 2
                      and i not in random_items and i.func.name != _TIME]
    if random_items and not written_ranges and "grid" not in kinds:
        b.error(f"`{ins.written}`: `СЛУЧАЙНО` needs at least one range `name(low, high)`",
                random_items[0].span)
    _check_names(b, ins)
    return t0, t1


def _time(b, name: ast.Name, args) -> tuple[float | None, float | None]:
    if len(args) not in (2, 3):
        b.error("time `t` is varied as `t, t_start, t_end[, step]` or `t(t_start, t_end"
                f"[, step])`, got {len(args)} values", name.span)
        return None, None
    t0 = b.value(args[0], "start time", formula=(b.span_formulas, "t_start"))
    t1 = b.value(args[1], "end time", formula=(b.span_formulas, "t_end"))
    if len(args) == 3:
        b.value(args[2], "time step")
    return t0, t1


def _grid(b, ins: ast.Instruction, name: ast.Name, args) -> None:
    start = b.value(args[0], f"start of `{name.name}`")
    end = b.value(args[1], f"end of `{name.name}`")
    count = b.value(args[2], f"number of values of `{name.name}`")
    if count is not None and (not math.isfinite(count) or count != int(count) or count < 1):
        b.error(f"the number of values of `{name.name}` must be a whole number of at least 1, "
                f"got {count:g} (the grid is `start, end, count`: {name.name}(0.5, 2, 16) "
                "gives 16 values)", args[2].span)
        return
    if None in (start, end, count):
        return
    n = int(count)
    values = tuple(float(x) for x in np.linspace(start, end, n))   # as `--vary` does
    b.variations.append(Variation(b.rename(name.name), values, "grid", name.span))


def _range(b, item: ast.Call) -> None:
    name = item.func.name
    low = b.value(item.args[0], f"lower bound of `{name}`")
    high = b.value(item.args[1], f"upper bound of `{name}`")
    if low is None or high is None:
        return
    if not low < high:
        b.error(f"the range of `{name}` must increase: low {low:g}, high {high:g}", item.span)
        return
    b.variations.append(Variation(b.rename(name), (low, high), "random", item.func.span))


def _sampling(b, item: ast.Call) -> Sampling | None:
    if len(item.args) not in (1, 2):
        b.error(f"`{item.func.name}(n[, seed])` takes the number of runs and an optional "
                f"seed, got {len(item.args)} values", item.span)
        return None
    numbers = [b.value(a, f"`{item.func.name}` value") for a in item.args]
    if None in numbers:
        return None
    for what, v, least in zip(("number of runs", "seed"), numbers, (1, 0)):
        if v != int(v) or v < least:
            b.error(f"the {what} of `{item.func.name}` must be a whole number of at least "
                    f"{least}, got {v:g}", item.span)
            return None
    return Sampling(int(numbers[0]), int(numbers[1]) if len(numbers) == 2 else 0)


def _check_names(b, ins: ast.Instruction) -> None:
    """Each varied name once, a parameter or a state that takes an initial value; a
    study only where the calculation integrates the motion."""
    allowed = b.speeds_allowed()
    dependent = {f"{q}'t" for q in b.velocities}
    seen: set[str] = set()
    kept = []
    for v in b.variations:
        if v.name in seen:
            b.error(f"`{v.name}` is varied twice in `{ins.written}`", v.span)
        elif v.name in b.params or v.name in allowed:
            kept.append(v)
        elif v.name in dependent:
            b.error(f"`{v.name}` is a dependent speed, given by its velocity formula; vary "
                    "the coordinates and independent speeds it follows from", v.span)
        elif v.name in b.defs:
            b.error(f"`{v.name}` is given by a formula; vary the parameters it uses (only "
                    "parameters and the initial values of states can be varied)", v.span)
        else:
            b.error(f"`{v.name}` cannot be varied: it is not a parameter nor a state of the "
                    f"model{suggest(v.name, sorted(b.params | set(allowed)))}", v.span)
        seen.add(v.name)
    b.variations = kept
    if kept and b.calculation not in (None, "DYNAMICS"):
        b.error(f"`{ins.written}` of parameters or initial values is a study of the motion: "
                "it needs `РАСЧЕТ := ДИНАМИКА` (vary only `t` here)", ins.name_span)
