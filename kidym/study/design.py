"""The runs of a parameter study: a full grid or a random sample of named values.

A :class:`Study` is the table of the values each run gives to the varied names
(parameters, or states whose initial value is varied). It comes from the model's
``ВАРЬИРОВАТЬ`` (:func:`from_model`), from the command line's ``--vary``
(:func:`parse_vary`) or from the Python API (:func:`grid`, :func:`random_sample`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kidym.model.model import Model

#: Names a study cannot vary: they are the dimensions and variables of its dataset.
RESERVED = ("run", "time", "quantity", "value", "status", "reason", "nfev")


@dataclass(frozen=True, eq=False)
class Study:
    """The varied names and the value of each in every run.

    Attributes
    ----------
    names : tuple of str
        The varied names, in the order given.
    kind : {"grid", "random"}
        ``grid``: every combination of the axes (the first name varies slowest);
        ``random``: independent uniform samples.
    axes : tuple of ndarray
        ``grid``: the values of each name, shape (n_k,). ``random``: the bounds
        ``[low, high]`` of each name.
    table : ndarray, shape (n_runs, n_names)
        Row ``k`` holds the values of run ``k``.
    seed : int or None
        The seed of a random sample.
    """

    names: tuple[str, ...]
    kind: str
    axes: tuple[np.ndarray, ...]
    table: np.ndarray
    seed: int | None = None

    @property
    def n_runs(self) -> int:
        return len(self.table)

    @property
    def shape(self) -> tuple[int, ...]:
        """The grid's shape (``n_1, n_2, …``), or ``(n_runs,)`` for a sample."""
        return tuple(len(a) for a in self.axes) if self.kind == "grid" else (self.n_runs,)

    def describe(self) -> str:
        """One line: ``grid 16 × 5 = 80 runs: l2 0.5…2, m1 1…3`` (``grid of 16 runs: …``
        for one name)."""
        ranges = ", ".join(f"{n} {a.min():g}…{a.max():g}" for n, a in zip(self.names, self.axes))
        if self.kind == "grid":
            if len(self.shape) == 1:
                return f"grid of {self.n_runs} runs: {ranges}"
            dims = " × ".join(str(n) for n in self.shape)
            return f"grid {dims} = {self.n_runs} runs: {ranges}"
        return f"random sample of {self.n_runs} runs (seed {self.seed}): {ranges}"


#: Most runs one study may hold (a grid's product of counts, or ``--samples``): more
#: would exhaust memory in its table before any run, and days of runs anyway.
MAX_RUNS = 1_000_000


def _too_many(what: str, n: int) -> ValueError:
    return ValueError(f"{what} is {n}; a study holds at most {MAX_RUNS} runs (split it, or "
                      "vary fewer values)")


def grid(values: Mapping[str, Sequence[float]]) -> Study:
    """The full grid of ``values`` (name → the values of that axis).

    Raises
    ------
    ValueError
        If there is no name, or an axis is empty or not finite.
    """
    if not values:
        raise ValueError("a parameter study needs at least one varied name")
    axes = []
    for name, v in values.items():
        a = np.atleast_1d(np.asarray(v, dtype=float))
        if a.ndim != 1 or not a.size or not np.all(np.isfinite(a)):
            raise ValueError(f"the values of `{name}` must be a non-empty list of finite "
                             f"numbers, got {v!r}")
        axes.append(a)
    runs = math.prod(a.size for a in axes)
    if runs > MAX_RUNS:
        raise _too_many("the number of runs of the grid (" + " × ".join(
            str(a.size) for a in axes) + ")", runs)
    table = np.array(list(itertools.product(*axes)), dtype=float).reshape(-1, len(axes))
    return Study(tuple(values), "grid", tuple(axes), table)


def random_sample(ranges: Mapping[str, tuple[float, float]], samples: int, *,
                  seed: int = 0) -> Study:
    """``samples`` runs, each name uniform in its ``(low, high)``.

    The draw is ``numpy.random.default_rng(seed).random((samples, n_names))`` scaled
    column by column to the ranges in the order given, so a seed gives the same runs
    on every machine.

    Raises
    ------
    ValueError
        If there is no name, ``samples < 1``, or a range does not increase.
    """
    if not ranges:
        raise ValueError("a random sample needs at least one range NAME=LOW:HIGH")
    if int(samples) != samples or samples < 1:
        raise ValueError(f"the number of samples must be a whole number of at least 1, "
                         f"got {samples}")
    if samples > MAX_RUNS:
        raise _too_many("the number of samples", int(samples))
    bounds = []
    for name, r in ranges.items():
        lo, hi = (float(x) for x in r)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"the range of `{name}` must be finite and increase, got {r!r}")
        bounds.append(np.array([lo, hi]))
    u = np.random.default_rng(int(seed)).random((int(samples), len(bounds)))
    lows = np.array([b[0] for b in bounds])
    highs = np.array([b[1] for b in bounds])
    return Study(tuple(ranges), "random", tuple(bounds), lows + (highs - lows) * u, int(seed))


def from_model(model: Model) -> Study | None:
    """The study of the model's ``ВАРЬИРОВАТЬ`` (``None`` if it varies nothing but ``t``)."""
    if not model.variations:
        return None
    if model.sampling is not None:
        return random_sample({v.name: v.values for v in model.variations},
                             model.sampling.samples, seed=model.sampling.seed)
    return grid({v.name: v.values for v in model.variations})


def parse_vary(text: str) -> tuple[str, np.ndarray, bool]:
    """``--vary`` of the command line: ``(name, values, is_range)``.

    ``NAME=START:STOP:COUNT`` is a grid axis of ``COUNT`` values, ``NAME=V1,V2,…``
    the values listed, ``NAME=LOW:HIGH`` a range for ``--samples``.

    Raises
    ------
    ValueError
        Naming the option and what was expected.
    """
    name, sep, spec = text.partition("=")
    name = name.strip()
    usage = (f"--vary expects NAME=START:STOP:COUNT, NAME=V1,V2,… or (with --samples) "
             f"NAME=LOW:HIGH, got `{text}`")
    if not sep or not name or not spec.strip():
        raise ValueError(usage)
    try:
        if ":" in spec:
            parts = [p.strip() for p in spec.split(":")]
            if len(parts) == 2:
                return name, np.array([float(parts[0]), float(parts[1])]), True
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), parts[2]
            n = int(count)
            if n < 1:
                raise ValueError
            if n > MAX_RUNS:
                raise _too_many(f"--vary {name}: the count", n)
            return name, np.linspace(start, stop, n), False
        return name, np.array([float(p) for p in spec.split(",")]), False
    except ValueError as e:
        if "at most" in str(e):
            raise
        raise ValueError(usage) from None


def from_options(vary: Sequence[str], *, samples: int | None = None,
                 seed: int = 0) -> Study:
    """The study of ``--vary`` options (and ``--samples``/``--seed``).

    Raises
    ------
    ValueError
        A malformed option, a name given twice, ranges without ``--samples`` or grids
        with it.
    """
    parsed = [parse_vary(v) for v in vary]
    names = [p[0] for p in parsed]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"--vary {twice[0]} is given twice")
    if samples is not None:
        grids = [n for n, _v, is_range in parsed if not is_range]
        if grids:
            raise ValueError(f"--samples draws from ranges NAME=LOW:HIGH; --vary {grids[0]} "
                             "is a grid (START:STOP:COUNT or a list)")
        return random_sample({n: tuple(v) for n, v, _r in parsed}, samples, seed=seed)
    ranges = [n for n, _v, is_range in parsed if is_range]
    if ranges:
        raise ValueError(f"--vary {ranges[0]}=LOW:HIGH is a range: give --samples N to draw "
                         "N random runs, or START:STOP:COUNT for a grid")
    return grid({n: v for n, v, _r in parsed})
