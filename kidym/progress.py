"""Progress bars and stage logs for long derivations and simulations.

On a terminal a long step shows a bar with the fraction done, the elapsed time and
an estimate of the time left, redrawn in place on standard error; when standard
error is not a terminal (piped, captured, CI logs) nothing is drawn. ``--quiet``
silences the bars and the notes; ``--verbose`` adds one line per finished stage
with its wall time, also when piped.

Examples
--------
>>> from kidym.progress import Reporter
>>> rep = Reporter(verbosity=0)                 # quiet
>>> with rep.stage("derive"):
...     pass
>>> bar = rep.bar("simulate", 0.0, 10.0)
>>> bar.update(5.0); bar.close()
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

QUIET, NORMAL, VERBOSE = 0, 1, 2


def seconds(value: float) -> str:
    """A wall time for a message, with three significant digits: a compiled run's loop
    of a few milliseconds is ``0.00423 s``, not ``0.00 s``."""
    return f"{value:.3g} s"


def _clock(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:4.1f}s"
    m, s = divmod(int(seconds), 60)
    return f"{m}:{s:02d}"


class Bar:
    """A progress bar over a numeric span (e.g. simulated time ``t0 … t1``).

    Drawn at most ten times a second; the estimate of the time left assumes the
    rate so far holds.
    """

    def __init__(self, label: str, start: float, end: float, *, stream: TextIO,
                 enabled: bool, width: int = 30) -> None:
        self.label, self.start, self.end = label, float(start), float(end)
        self.stream, self.enabled, self.width = stream, enabled, width
        self.t0 = time.perf_counter()
        self._last_draw = 0.0
        self.fraction = 0.0

    def update(self, value: float) -> None:
        """Report progress: ``value`` between ``start`` and ``end``."""
        span = self.end - self.start
        frac = 1.0 if span <= 0 else (float(value) - self.start) / span
        self.fraction = min(max(frac, self.fraction), 1.0)
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last_draw < 0.1 and self.fraction < 1.0:
            return
        self._last_draw = now
        self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.t0
        f = self.fraction
        eta = elapsed * (1 - f) / f if f > 1e-9 else float("nan")
        filled = round(self.width * f)
        left = f"ETA {_clock(eta)}" if eta == eta else "ETA  ?"
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{100 * f:5.1f}%  {_clock(elapsed)}  {left} ")
        self.stream.flush()

    def close(self) -> None:
        """Finish the bar (clears its line)."""
        if self.enabled:
            self.stream.write("\r" + " " * (len(self.label) + self.width + 40) + "\r")
            self.stream.flush()


class Reporter:
    """Where progress and stage notes go, and how much of them.

    Parameters
    ----------
    verbosity : {0, 1, 2}
        Quiet, normal (bars on a terminal) or verbose (a line per stage too).
    stream : text stream, optional
        Default ``sys.stderr``.
    tty : bool, optional
        Whether to draw bars; default: whether ``stream`` is a terminal.
    """

    def __init__(self, verbosity: int = NORMAL, *, stream: TextIO | None = None,
                 tty: bool | None = None) -> None:
        self.verbosity = verbosity
        self.stream = stream if stream is not None else sys.stderr
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty and isatty())
        self.tty = tty
        self.timings: list[tuple[str, float]] = []

    @property
    def bars(self) -> bool:
        """Whether bars are drawn."""
        return self.tty and self.verbosity >= NORMAL

    def note(self, message: str) -> None:
        """A note for the user (hidden by ``--quiet``)."""
        if self.verbosity >= NORMAL:
            print(message, file=self.stream)

    def detail(self, message: str) -> None:
        """A line shown only with ``--verbose``."""
        if self.verbosity >= VERBOSE:
            print(message, file=self.stream)

    @contextmanager
    def stage(self, label: str) -> Iterator[None]:
        """Time a stage; ``--verbose`` prints ``label: 0.12 s``; a terminal shows a spinner."""
        t0 = time.perf_counter()
        if self.bars:
            self.stream.write(f"\r{label} …")
            self.stream.flush()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            self.timings.append((label, dt))
            if self.bars:
                self.stream.write("\r" + " " * (len(label) + 3) + "\r")
                self.stream.flush()
            self.detail(f"{label}: {dt:.3f} s")

    def bar(self, label: str, start: float, end: float) -> Bar:
        """A :class:`Bar` that draws only when bars are on."""
        return Bar(label, start, end, stream=self.stream, enabled=self.bars)
