"""A process that draws a run's plots, forked before the run; and the parsing of
``--plot`` (no matplotlib here: the command's process never imports it).

Importing matplotlib takes half a second, as long as the rest of a cached compiled run
of a small model. ``kidym run`` therefore forks this process as soon as the model is
read, where a core is idle (:func:`idle_core`): it imports :mod:`kidym.report.plots`
(matplotlib) while the command derives, simulates and writes the results, then
receives the result, pickled through a pipe, and draws the plots
(:func:`kidym.report.plots.plot_run`, which may fork a second drawer in turn). The
model is not sent: the process was forked after reading it and holds the same one.

Nothing is lost where this does not work: a result that does not pickle, or a worker
that dies, leaves the plots to the command's own process (:meth:`PlotWorker.draw`
returns ``None``); an error of the drawing itself (a ``KeyError`` for a quantity the
run did not record) is raised in the command as it would be there.

``kidym sweep`` forks one the same way for its summary plots (:meth:`PlotWorker.call`
of :func:`kidym.study.output.summary_plots`): matplotlib is imported while the model
is derived and the runs go, and the plots are drawn while the study's file is
written.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from kidym.model.model import Plot
from kidym.report.cores import idle_core


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


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class PlotWorker:
    """The forked drawing process of one run (see the module docstring).

    Use :meth:`start`, then :meth:`draw` once, and :meth:`close` in every case (it
    ends a worker that was given nothing to draw).
    """

    def __init__(self, pid: int, job: int, reply: int, model) -> None:
        self.pid = pid
        self._job: int | None = job
        self._reply: int | None = reply
        self.model = model

    @classmethod
    def start(cls, model) -> PlotWorker | None:
        """Fork a worker for the plots of ``model``; ``None`` where no core is idle or
        the fork fails (the command draws them itself)."""
        if not idle_core():
            return None
        try:
            job_r, job_w = os.pipe()
            reply_r, reply_w = os.pipe()
        except OSError:
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            for fd in (job_r, job_w, reply_r, reply_w):
                os.close(fd)
            return None
        if pid == 0:  # pragma: no cover (the child; tested through its effects)
            code = 1
            try:
                os.close(job_w)
                os.close(reply_r)
                code = _serve(job_r, reply_w, model)
            finally:
                os._exit(code)
        os.close(job_r)
        os.close(reply_w)
        return cls(pid, job_w, reply_r, model)

    def draw(self, result, model, out: str | Path, **options) -> list[Path] | None:
        """:func:`kidym.report.plots.plot_run` of ``result`` in the worker.

        Returns
        -------
        list of Path or None
            The files written; ``None`` where the worker could not draw them (the
            caller draws them itself).
        """
        if model is not self.model:
            self.close()
            return None
        return self._send((None, (result, str(out)), options))

    def call(self, function: Callable[..., list[Path]], *args, **kwargs
             ) -> list[Path] | None:
        """``function(*args, **kwargs)`` in the worker, for another drawing than a
        run's (``kidym sweep``'s summary plots): a module-level function, sent by name
        with its pickled arguments.

        Returns
        -------
        list of Path or None
            What it returns (the files written); ``None`` where the worker could not
            call it (the caller calls it itself).
        """
        answer = self.start_call(function, *args, **kwargs)
        return None if answer is None else answer()

    def start_call(self, function: Callable[..., list[Path]], *args, **kwargs
                   ) -> Callable[[], list[Path] | None] | None:
        """:meth:`call` without waiting: ``answer()`` waits for what :meth:`call`
        returns; ``None`` where the worker could not take the call."""
        return self._answer if self._submit((function, args, kwargs)) else None

    def _send(self, job: tuple) -> list[Path] | None:
        """Send ``job`` (``(function or None, args, kwargs)``), wait for the answer."""
        return self._answer() if self._submit(job) else None

    def _submit(self, job: tuple) -> bool:
        """Send ``job`` to the worker; ``False`` (and the worker ended) where it cannot."""
        if self._job is None:
            self.close()
            return False
        try:
            data = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:   # a result that does not pickle: drawn by the caller
            self.close()
            return False
        try:
            _write_all(self._job, data)
        except OSError:
            self.close()
            return False
        os.close(self._job)
        self._job = None
        return True

    def _answer(self) -> list[Path] | None:
        """The worker's answer to the job sent (the worker then ends); ``None`` where
        it died; its error raised here."""
        if self._reply is None:
            return None
        reply = _read_all(self._reply)
        self.close()
        try:
            status, value = pickle.loads(reply)
        except Exception:   # the worker died: drawn by the caller
            return None
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        """End the worker (waits for it); harmless when already closed."""
        for name in ("_job", "_reply"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        if self.pid:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0


def _serve(job: int, reply: int, model) -> int:  # pragma: no cover (in the child)
    """The worker: import matplotlib, wait for the job, draw, answer."""
    from kidym.report.plots import plot_run

    data = _read_all(job)
    if not data:   # the command ended without plots
        return 0
    function, args, kwargs = pickle.loads(data)
    try:
        if function is None:   # a run's plots (the model: this process's own)
            result, out = args
            answer = ("ok", plot_run(result, model, out, **kwargs))
        else:
            answer = ("ok", function(*args, **kwargs))
    except Exception as exc:   # raised again by the command
        answer = ("error", exc)
    try:
        payload = pickle.dumps(answer)
    except Exception:
        payload = pickle.dumps(("error", RuntimeError(f"drawing the plots failed: "
                                                      f"{answer[1]}")))
    _write_all(reply, payload)
    return 0


def draw_plots(worker: PlotWorker | None, result, model, out: str | Path, *,
               requests: Sequence = (), poses=None, formats: Sequence[str] = ("png",),
               degrees: bool = False) -> list[Path]:
    """The plots of a run (:func:`kidym.report.plots.plot_run`): by ``worker`` where
    there is one and it can, else in this process."""
    options = dict(requests=list(requests), poses=poses, formats=tuple(formats),
                   degrees=degrees)
    if worker is not None:
        paths = worker.draw(result, model, out, **options)
        if paths is not None:
            return paths
    from kidym.report.plots import plot_run

    return plot_run(result, model, out, **options)
