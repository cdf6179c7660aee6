"""Domain exceptions and source diagnostics.

Every user-facing problem is one of these classes; each subclasses the builtin
that matches its nature so that callers may catch either.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Span:
    """A location in a model source: 1-based line and column, and the end column."""

    line: int
    column: int
    end_column: int | None = None


@dataclass(frozen=True)
class Diagnostic:
    """One located problem in a model source.

    Parameters
    ----------
    message : str
        What is wrong, what was expected, and a suggested fix where one exists.
    span : Span or None
        Where it is; ``None`` for problems of the model as a whole.
    severity : {"error", "warning"}
        Errors stop the pipeline; warnings are reported and the work goes on.
    """

    message: str
    span: Span | None = None
    severity: str = "error"

    def format(self, filename: str, source: str | None) -> str:
        """Render as ``FILE:LINE:COL: severity: message`` plus the line and a caret."""
        if self.span is None:
            return f"{filename}: {self.severity}: {self.message}"
        head = f"{filename}:{self.span.line}:{self.span.column}: {self.severity}: {self.message}"
        if not source:
            return head
        lines = source.splitlines()
        if not 1 <= self.span.line <= len(lines):
            return head
        from kidym.terminal import placeholder  # one character for one: the caret fits

        text = placeholder(lines[self.span.line - 1].expandtabs(1))
        width = 1
        if self.span.end_column and self.span.end_column > self.span.column:
            width = self.span.end_column - self.span.column
        caret = " " * (self.span.column - 1) + "^" + "~" * (width - 1)
        return f"{head}\n    {text}\n    {caret}"


class ParseError(ValueError):
    """The model text is not valid KiDyM language; carries all located diagnostics.

    Attributes
    ----------
    filename, source : str
        Where the text came from and the text itself.
    diagnostics : list of Diagnostic
        Every error (and warning) found in the file, in source order.
    """

    def __init__(self, diagnostics: list[Diagnostic], *, filename: str = "<string>",
                 source: str | None = None) -> None:
        self.diagnostics = list(diagnostics)
        self.filename = filename
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        """All diagnostics, each formatted with its caret line."""
        return "\n".join(d.format(self.filename, self.source) for d in self.diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        """Only the diagnostics of severity ``error``."""
        return [d for d in self.diagnostics if d.severity == "error"]


class ModelError(ParseError):
    """The text parses but does not describe a valid mechanical model.

    Same attributes as :class:`ParseError` (it is one: a located problem of the
    model source); raised by validation, which collects every problem first.
    """


class DerivationError(ValueError):
    """The equations of motion cannot be formed (e.g. a structural inconsistency)."""


class CompileError(RuntimeError):
    """The C compiler is missing or failed; carries the command and its output.

    Attributes
    ----------
    kind : str
        ``"toolchain"`` when the compiler or SUNDIALS is missing or does not work (the
        user's set-up: install them), ``"internal"`` when a working compiler rejected
        kidym's own generated C (a bug in kidym, to be reported).
    """

    def __init__(self, message: str, *, command: list[str] | None = None,
                 output: str = "", kind: str = "toolchain") -> None:
        self.command = command or []
        self.output = output
        self.kind = kind
        text = message
        if command:
            text += "\ncommand: " + " ".join(command)
        if output:
            text += "\n" + output
        super().__init__(text)


class SimulationError(RuntimeError):
    """Integration failed; names the time, the state and what to try.

    Attributes
    ----------
    message : str
        What failed (without the time, state and hint).
    time : float
        Model time at which the failure happened (the solver's own time, or the
        stage time of a failed evaluation; not the last output time).
    state : dict of str to float
        The state there, by name.
    kind : str
        What failed (``kidym.simulation.faults.KINDS``: ``"blow-up"``,
        ``"singular-mass-matrix"``, ``"step-size-collapse"``, ``"event-storm"``, …);
        empty where not classified.
    hint : str
        What to try.
    result : Result or None
        The partial result up to the failure (``result.partial`` is true), where the
        engine kept one.
    """

    def __init__(self, message: str, *, time: float, state: dict[str, float],
                 hint: str = "", kind: str = "") -> None:
        self.message = message
        self.time = time
        self.state = dict(state)
        self.hint = hint
        self.kind = kind
        self.reason = message
        self.result = None
        shown = ", ".join(f"{k}={v:.6g}" for k, v in list(self.state.items())[:12])
        if len(self.state) > 12:
            shown += ", …"
        text = f"{message} at t = {time:.9g}\n  state: {shown}"
        if hint:
            text += f"\n  try: {hint}"
        super().__init__(text)

    def to_dict(self) -> dict:
        """``kind``, ``time``, ``state``, ``message`` (without time and state) and
        ``hint``: the ``failure`` record of a partial result."""
        return {"kind": self.kind, "time": float(self.time), "message": self.reason,
                "state": {k: float(v) for k, v in self.state.items()}, "hint": self.hint}


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (SIGINT), with what it computed up to then.

    ``kidym.simulate`` raises it whatever ``raise_on_failure`` says (Ctrl-C stops a
    script as it always does; a ``KeyboardInterrupt`` handler catches it), within about
    0.1 s of the key in both engines (:mod:`kidym.simulation.watch`).

    ``kidym.sweep`` raises it too, with the runs done (and those stopped, marked
    ``-1`` with the reason ``interrupted …``) in a :class:`~kidym.SweepResult` whose
    ``interrupted`` is true.

    Attributes
    ----------
    result : Result or SweepResult
        The partial result up to the model time reached: ``result.partial`` is true,
        ``result.failure["kind"]`` is ``"interrupted"`` and ``result.failure["time"]``
        the time reached.
    time : float or None
        The model time reached (``None`` for a sweep).
    """

    def __init__(self, message: str, *, result: object = None,
                 time: float | None = None) -> None:
        super().__init__(message)
        self.result = result
        self.time = time

    @classmethod
    def of_run(cls, error: SimulationError) -> RunInterrupted:
        """The interruption of one run, from its engine's error (kind ``interrupted``)."""
        return cls(f"interrupted (Ctrl-C) at t = {error.time:.9g}; the results up to this "
                   "time are kept (.result)", result=error.result, time=error.time)


def source_name(path: str | Path | None) -> str:
    """Display name of a source for diagnostics."""
    return "<string>" if path is None else str(path)
