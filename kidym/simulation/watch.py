"""Watching runs: progress with an estimate of the time left, and a stop on Ctrl-C.

Within :func:`watching`, the runs of the thread are watched through a :class:`Watch`:

* the engines report the model time reached — the compiled loop writes it into a cell
  of two doubles at every evaluation of the right-hand side (``kidym_watch`` in
  ``kidym/codegen/driver.c``: one store and one load per evaluation), the NumPy engine
  at every step — and a bar on standard error shows it with the time left, on a
  terminal only (:mod:`kidym.progress`; nothing is drawn when standard error is piped
  or captured);
* in the main thread, Ctrl-C (SIGINT) no longer raises ``KeyboardInterrupt`` wherever
  Python happens to be: it sets the cell's stop flag, which the compiled loop reads at
  its next evaluation and the NumPy engine before its next step, so that the run stops
  within an evaluation or a step and returns what it computed up to then. A second
  Ctrl-C raises ``KeyboardInterrupt`` at once. A handler the program installed itself
  is left alone (then nothing changes).

A thread inside a C call cannot run Python's signal handler, so in the main thread
one watcher thread per process (:class:`_Watcher`) reads the signals from the pipe of
``signal.set_wakeup_fd`` (written by Python's C-level handler whatever the main thread
does), sets the stop flag and redraws the bar; runs of other threads (the sweep's
pool) read the flag their starter sets. Where the wake-up descriptor is taken (an
event loop), a compiled run of the main thread integrates in a helper thread instead
while the main thread waits in slices of :data:`POLL_S` seconds.

What a stopped run becomes is the dispatcher's business: ``kidym.simulate`` raises
:class:`kidym.errors.RunInterrupted` carrying the partial result.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import numpy as np

from kidym.progress import Bar, Reporter

#: How often a bar is redrawn (seconds); without the watcher thread (an event loop reads
#: the signals) also the longest delay before Ctrl-C reaches a compiled run.
POLL_S = 0.1
#: Runs shorter than this (seconds of wall time) draw no bar (0: drawn from the start,
#: as the NumPy engine's bar always was; a compiled run's first redraw comes after
#: :data:`POLL_S`, so the shortest draw none).
QUIET_FOR = 0.0

T = TypeVar("T")


class Watch:
    """What a run and its watcher share.

    Attributes
    ----------
    cell : ndarray, shape (2,)
        ``[model time reached, stop requested]``, read and written by the compiled loop
        without the GIL (its address is fixed for the watch's life).
    reporter : Reporter
        Where bars go (:class:`kidym.progress.Reporter`).
    """

    def __init__(self, reporter: Reporter) -> None:
        self.cell = np.zeros(2)
        self.reporter = reporter
        self._bar: Bar | None = None
        self._started = 0.0
        self._drawn = False
        self._runs = 0          # runs done (a sweep's bar counts them)
        self._counting = False
        self._lock = threading.Lock()
        #: whether the process's watcher thread serves it (Ctrl-C, redraws)
        self.served = False

    @property
    def drawing(self) -> bool:
        """Whether a bar is to be drawn (a terminal, not ``--quiet``)."""
        return self._bar is not None

    @property
    def stopped(self) -> bool:
        """Whether a stop was asked (Ctrl-C)."""
        return bool(self.cell[1] != 0.0)

    def stop(self) -> None:
        """Ask the watched runs to stop."""
        self.cell[1] = 1.0

    def begin(self, label: str, t0: float, t1: float, *, counting: bool = False) -> None:
        """A run over ``t0 … t1`` starts: its bar (drawn after :data:`QUIET_FOR`).
        ``counting``: the bar counts runs done (:meth:`ran`) from ``t0`` to ``t1`` instead
        of the model time reached."""
        self.close()
        self.cell[0] = t0
        self._runs, self._counting = int(t0), counting
        self._started = time.perf_counter()
        self._bar = self.reporter.bar(label, t0, t1) if self.reporter.bars else None
        if self.served:
            _watcher().serve(self)   # (its pace: redraws only where there is a bar)

    def reached(self, t: float) -> None:
        """The run has reached model time ``t`` (the NumPy engine, at each step)."""
        self.cell[0] = t
        if self._bar is not None:
            self.show()

    def ran(self) -> None:
        """One more run is done (a sweep; any thread)."""
        with self._lock:
            self._runs += 1

    def show(self) -> None:
        """Redraw the bar (at most ten times a second)."""
        if self._bar is not None and time.perf_counter() - self._started >= QUIET_FOR:
            with self._lock:   # (the watcher thread and the run's thread may both draw)
                if self._bar is not None:
                    self._bar.update(float(self._runs if self._counting else self.cell[0]))
                    self._drawn = True

    def close(self) -> None:
        """Clear the bar (if one was drawn)."""
        with self._lock:
            if self._bar is not None and self._drawn:
                self._bar.close()
            self._bar, self._drawn = None, False


_LOCAL = threading.local()


class _Watcher:
    """One thread per process that serves the main thread's watch: Python's C-level
    signal handler writes each signal's number into a pipe (``signal.set_wakeup_fd``)
    even while the main thread is inside a C call; this thread reads it, sets the stop
    flag at once, and redraws the bar every :data:`POLL_S` while a watch is active. The
    main thread's compiled runs then call C directly (no thread per run)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)
        self.active: Watch | None = None
        threading.Thread(target=self._serve, name="kidym-watch", daemon=True).start()

    def _serve(self) -> None:
        while True:
            # redraws at POLL_S where there is a bar; else asleep until a signal comes
            # (a thread woken on a busy machine costs the run a slice of a core)
            timeout = POLL_S if self.active is not None and self.active.drawing else None
            ready, _, _ = select.select([self.read_fd], [], [], timeout)
            w = self.active
            if ready:
                data = os.read(self.read_fd, 512)
                if w is not None and signal.SIGINT in data:
                    w.stop()
            if w is not None:
                w.show()

    def serve(self, w: Watch | None) -> None:
        """Serve ``w`` (``None``: nothing); wakes the thread to change its pace."""
        self.active = w
        try:
            os.write(self.write_fd, b"\0")
        except BlockingIOError:   # (the pipe is full: the thread is awake anyway)
            pass


_WATCHER: list[_Watcher] = []


def _watcher() -> _Watcher:
    if not _WATCHER:
        _WATCHER.append(_Watcher())
    return _WATCHER[0]


def current() -> Watch | None:
    """The watch of this thread's runs, or ``None``."""
    return getattr(_LOCAL, "watch", None)


@contextmanager
def watching(reporter: Reporter | None = None, *, watch: Watch | None = None
             ) -> Iterator[Watch]:
    """Watch the runs of this thread (see the module's text).

    Nested calls reuse the outer watch (the command line's, with its ``--quiet``).

    Parameters
    ----------
    reporter : Reporter, optional
        Where bars go; default standard error, bars on a terminal only.
    watch : Watch, optional
        A watch shared with other threads (the sweep's pool: one stop flag for all).
    """
    outer = current()
    if outer is not None and watch is None:
        yield outer
        return
    w = watch or Watch(reporter or Reporter())
    _LOCAL.watch = w
    handler = None
    wakeup = None
    served_here = False
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signals = [0]

        def handler(signum, frame):
            signals[0] += 1
            if signals[0] > 1:
                raise KeyboardInterrupt   # the second Ctrl-C: at once
            w.stop()

        signal.signal(signal.SIGINT, handler)
        if os.name == "posix":   # (select on a pipe; elsewhere the helper-thread route)
            watcher = _watcher()
            wakeup = signal.set_wakeup_fd(watcher.write_fd, warn_on_full_buffer=False)
            if wakeup == -1:   # (else an event loop reads the signals: leave it so)
                watcher.serve(w)
                w.served = served_here = True
            else:
                signal.set_wakeup_fd(wakeup)
                wakeup = None
    try:
        yield w
    finally:
        if served_here:
            _watcher().serve(None)
            signal.set_wakeup_fd(wakeup)
            w.served = False
        if handler is not None and signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        _LOCAL.watch = outer
        if watch is None:
            w.close()


def call_watched(call: Callable[[], T], attach: Callable[[object], None]) -> T:
    """``call()`` — a C integration that releases the GIL — watched by :func:`current`.

    ``attach(address)`` names the watch's cell to the library for the calling thread
    (``attach(None)`` forgets it). The call is direct where the process's watcher
    thread serves the watch or another thread started this one; else (the main thread,
    its signals read by an event loop) the call runs in a helper thread while this one
    waits, redraws the bar and lets Ctrl-C set the stop flag.
    """
    w = current()
    if w is None:
        return call()
    address = w.cell.ctypes.data

    def attached() -> T:
        attach(address)
        try:
            return call()
        finally:
            attach(None)

    if w.served or threading.current_thread() is not threading.main_thread():
        return attached()   # (the watcher thread or the pool's starter reads Ctrl-C)
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = attached()
        except BaseException as exc:   # (re-raised in the caller's thread)
            box["error"] = exc

    helper = threading.Thread(target=target, name="kidym-run", daemon=True)
    helper.start()
    while helper.is_alive():
        helper.join(POLL_S)
        w.show()
    if "error" in box:
        raise box["error"]   # type: ignore[misc]
    return box["value"]   # type: ignore[return-value]
