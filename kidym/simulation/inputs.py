"""External inputs of a run: the names of ``ВХОДЫ`` bound to Python callbacks or tables.

A model declares ``ВХОДЫ := u;`` (``INPUTS``) and uses ``u`` in force characteristics;
a run binds every declared name::

    kidym.simulate(model, inputs={"u": lambda t, state: -k * state["x"]})
    kidym.simulate(model, inputs={"u": kidym.InputTable(t, values)})

Both engines evaluate the equations with the input values *after* the parameters in
their parameter vector: the NumPy engine appends them on every evaluation
(:meth:`InputBinding.extend`), the compiled one reads them from a thread-local array
that the generated routines fill through ``kidym_input_values`` — tables interpolated in
C from arrays, callbacks through a C function pointer to Python
(:mod:`kidym.simulation.compiled_inputs`). No text of a table or callback reaches
generated code.

Choices (docs/guide.md, "External inputs"):

* a table is interpolated linearly (``"linear"``) or held from each breakpoint to the
  next (``"previous"``, zero-order hold); its times must cover the run's span: the
  values beyond its ends are those of its ends (the integrators' trial points past the
  end of the span see them), and a span the table does not cover is an error;
* a callback gets ``(t, state)``, ``state`` a dict of the state's names, and returns a
  finite number; an exception in it stops the run with a
  :class:`~kidym.errors.SimulationError` naming the time, the state and the input;
* one callback may give several inputs at once, as a controller gives its vector
  ``u(t, q, w)``: ``inputs={("u1", "u2"): f}`` or ``inputs=f`` for all the model's inputs
  in the order of ``ВХОДЫ``; ``f(t, state)`` returns a sequence of that many finite
  numbers, is called once per evaluation (in C: one call from the loop fills every
  slot), and a sequence of another length is an error naming the inputs and the time;
* an input declared and not bound, or bound and not declared, is an error before the run.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kidym.errors import SimulationError

#: The ``kind`` of a :class:`SimulationError` raised by an input's callback.
INPUT_FAULT = "input"

#: Interpolations of a table, in the order of their C codes (``kidym_inputs.c``).
INTERPOLATIONS = ("linear", "previous")


@dataclass(frozen=True, eq=False)
class InputTable:
    """An input given as a table of values over time.

    Parameters
    ----------
    t : array_like, shape (n,)
        Strictly increasing finite times, ``n ≥ 2``.
    values : array_like, shape (n,)
        Finite values at those times.
    interpolation : {"linear", "previous"}
        Linear between breakpoints, or each value held until the next time
        (zero-order hold).

    Raises
    ------
    ValueError
        Times not strictly increasing, fewer than two rows, shapes that differ, a value
        that is not finite, an unknown interpolation.

    Examples
    --------
    >>> InputTable([0.0, 1.0, 2.0], [0.0, 2.0, 2.0])(0.5)
    1.0
    """

    t: np.ndarray
    values: np.ndarray
    interpolation: str = "linear"
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        where = f" ({self.source})" if self.source else ""
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation of an input table must be one of "
                             f"{INTERPOLATIONS}, got {self.interpolation!r}")
        try:
            t = np.array(self.t, dtype=float)
            v = np.array(self.values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"an input table{where} needs numbers: {exc}") from exc
        if t.ndim != 1 or v.ndim != 1 or t.shape != v.shape:
            raise ValueError(f"an input table{where} needs times and values of the same "
                             f"length, one value per time; got shapes {t.shape} and "
                             f"{v.shape}")
        if t.size < 2:
            raise ValueError(f"an input table{where} needs at least two rows, got {t.size}")
        for name, a in (("time", t), ("value", v)):
            bad = np.flatnonzero(~np.isfinite(a))
            if bad.size:
                raise ValueError(f"an input table{where} has a {name} that is not a finite "
                                 f"number in row {bad[0] + 1}: {a[bad[0]]}")
        steps = np.flatnonzero(np.diff(t) <= 0)
        if steps.size:
            k = steps[0]
            raise ValueError(f"the times of an input table{where} must increase strictly; "
                             f"row {k + 2} (t = {t[k + 1]:g}) does not come after row "
                             f"{k + 1} (t = {t[k]:g})")
        t.setflags(write=False)
        v.setflags(write=False)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "values", v)

    def __call__(self, t: float, piece: float | None = None) -> float:
        """The value at time ``t`` (the end values beyond the ends).

        ``piece``: the start of the piece between breakpoints that a restarted run
        integrates; the segment that holds it is used for every ``t``, extended, so that
        no step sees the kink or jump at the piece's end (the C side is the same,
        :mod:`kidym.codegen.inputs_c`).
        """
        x = t if piece is None else piece
        k = int(np.searchsorted(self.t, x, side="right")) - 1
        if self.interpolation == "previous":
            return float(self.values[min(max(k, 0), self.t.size - 1)])
        if piece is None and not t > self.t[0]:
            return float(self.values[0])
        k = min(max(k, 0), self.t.size - 1)
        if k == self.t.size - 1:
            return float(self.values[k])
        t0, t1, v0, v1 = self.t[k], self.t[k + 1], self.values[k], self.values[k + 1]
        return float(v0 + (v1 - v0) * ((t - t0) / (t1 - t0)))

    @classmethod
    def read_csv(cls, path: str | Path, *, interpolation: str = "linear") -> InputTable:
        """A table from a CSV file of two columns, time and value (a first line that is
        not numbers is a header); ``ValueError`` naming the file and row otherwise."""
        path = Path(path)
        rows: list[tuple[float, float]] = []
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                for n, row in enumerate(csv.reader(fh), start=1):
                    if not row or all(not c.strip() for c in row):
                        continue
                    if len(row) != 2:
                        raise ValueError(f"{path}:{n}: an input table has two columns, time "
                                         f"and value; got {len(row)}")
                    try:
                        rows.append((float(row[0]), float(row[1])))
                    except ValueError:
                        if n == 1 and not rows:
                            continue    # a header
                        raise ValueError(f"{path}:{n}: not a number: {','.join(row)!r}"
                                         ) from None
        except OSError as exc:
            raise ValueError(f"cannot read the input table {path}: {exc.strerror}") from exc
        a = np.array(rows, dtype=float).reshape(-1, 2)
        return cls(a[:, 0], a[:, 1], interpolation, source=str(path))


@dataclass(frozen=True, eq=False)
class VectorInput:
    """One callback giving the inputs ``names`` at once: ``fn(t, state)`` returns a
    sequence of ``len(names)`` finite numbers, in that order."""

    fn: Callable[[float, Mapping[str, float]], Sequence[float]]
    names: tuple[str, ...]


Source = InputTable | VectorInput | Callable[[float, Mapping[str, float]], float]


@dataclass(frozen=True, eq=False)
class InputBinding:
    """The inputs of one run, in the model's order: a table or a callback each."""

    names: tuple[str, ...]
    sources: tuple[Source, ...]
    state_names: tuple[str, ...]
    #: the start of the piece a run restarted at the breakpoints integrates (or None)
    window: list = field(default_factory=lambda: [None], compare=False, repr=False)

    @property
    def callbacks(self) -> tuple[int, ...]:
        """Indices of the inputs given by callbacks."""
        return tuple(k for k, s in enumerate(self.sources) if not isinstance(s, InputTable))

    @functools.cached_property
    def calls(self) -> tuple[tuple[tuple[int, ...], Source], ...]:
        """The callbacks, each once: ``(indices of the inputs it gives, source)``."""
        seen: dict[int, tuple[list[int], Source]] = {}
        for k in self.callbacks:
            src = self.sources[k]
            seen.setdefault(id(src), ([], src))[0].append(k)
        return tuple((tuple(ks), src) for ks, src in seen.values())

    def called(self, t: float, state: dict[str, float]) -> list[tuple[int, float]]:
        """``(index, value)`` of every input given by a callback at ``(t, state)``, each
        callback called once; a :class:`SimulationError` for a callback that raises or
        returns what is not its number (or its sequence of numbers)."""
        out: list[tuple[int, float]] = []
        for ks, src in self.calls:
            if isinstance(src, VectorInput):
                out += zip(ks, call_vector_input(src, t, state))
            else:
                out.append((ks[0], call_input(self.names[ks[0]], src, t, state)))
        return out

    def values(self, t: float, y: Sequence[float]) -> list[float]:
        """The inputs at ``(t, y)`` (``y`` the state, longer is cut); a callback that
        raises or returns anything but a finite number is a :class:`SimulationError`."""
        out = [src(t, self.window[0]) if isinstance(src, InputTable) else math.nan
               for src in self.sources]
        if self.calls:
            state = dict(zip(self.state_names, (float(v) for v in y)))
            for k, v in self.called(float(t), state):
                out[k] = v
        return out

    def breakpoints(self, t0: float, t1: float) -> np.ndarray:
        """The tables' times strictly inside ``(t0, t1)``, sorted: where the integration
        restarts (:func:`pieces`), so that no step straddles a kink or a jump."""
        inner = [src.t[(src.t > t0) & (src.t < t1)] for src in self.sources
                 if isinstance(src, InputTable)]
        return np.unique(np.concatenate(inner)) if inner else np.empty(0)

    def extend(self, t: float, y: Sequence[float], p: list[float]) -> list[float]:
        """``p`` with the inputs at ``(t, y)`` appended (the NumPy engine's vector)."""
        return [*p, *self.values(t, y)]


def call_input(name: str, fn: Callable, t: float, state: dict[str, float]) -> float:
    """``fn(t, state)`` as a finite float; a :class:`SimulationError` naming the input
    and the time for an exception or a value that is not a finite number."""
    try:
        v = fn(t, state)
    except Exception as exc:   # any fault of user code stops the run, named
        err = SimulationError(f"the callback of input `{name}` raised "
                              f"{type(exc).__name__}: {exc}", time=t, state=state,
                              hint=_scalar_hint(name), kind=INPUT_FAULT)
        raise err from exc
    try:
        value = v if type(v) is float else float(np.asarray(v, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise SimulationError(f"the callback of input `{name}` returned {v!r}, not one "
                              "number", time=t, state=state, hint=_scalar_hint(name),
                              kind=INPUT_FAULT) from None
    if not math.isfinite(value):
        raise SimulationError(f"the callback of input `{name}` returned {value}", time=t,
                              state=state, hint=_scalar_hint(name), kind=INPUT_FAULT)
    return value


def _scalar_hint(name: str) -> str:
    """The hint of an error of the callback of input ``name`` (built only on an error:
    :func:`call_input` runs at every evaluation)."""
    return (f"the callback bound to input `{name}` is called with (t, state), state a "
            "dict of the state's names; it returns a finite number")


def call_vector_input(src: VectorInput, t: float, state: dict[str, float]) -> list[float]:
    """``src.fn(t, state)`` as ``len(src.names)`` finite floats; a
    :class:`SimulationError` naming the inputs and the time otherwise."""
    try:
        v = src.fn(t, state)
    except Exception as exc:   # any fault of user code stops the run, named
        names, hint = _vector_words(src)
        err = SimulationError(f"the callback of the inputs {names} raised "
                              f"{type(exc).__name__}: {exc}", time=t, state=state, hint=hint,
                              kind=INPUT_FAULT)
        raise err from exc
    n = len(src.names)
    if type(v) in (list, tuple) and len(v) == n and all(type(x) is float for x in v):
        values = list(v)   # (the common case without NumPy: called at every evaluation)
    else:
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            a = None
        if a is None or a.shape != (n,):
            names, hint = _vector_words(src)
            got = f"shape {a.shape}" if a is not None else repr(v)
            raise SimulationError(f"the callback of the inputs {names} returned {got}, not "
                                  f"{n} numbers (one per input)", time=t, state=state,
                                  hint=hint, kind=INPUT_FAULT)
        values = a.tolist()
    if not all(map(math.isfinite, values)):
        k = next(i for i, x in enumerate(values) if not math.isfinite(x))
        names, hint = _vector_words(src)
        raise SimulationError(f"the callback of the inputs {names} returned {values[k]} for "
                              f"`{src.names[k]}`", time=t, state=state, hint=hint,
                              kind=INPUT_FAULT)
    return values


def _vector_words(src: VectorInput) -> tuple[str, str]:
    """The names of a vector callback's inputs and the hint of its errors."""
    names = ", ".join(f"`{n}`" for n in src.names)
    return names, (f"the callback bound to the inputs {names} is called with (t, state), "
                   f"state a dict of the state's names; it returns {len(src.names)} finite "
                   "numbers, in that order")


def _by_name(model, inputs) -> dict[str, object]:
    """``inputs`` as name → source: a callable for all the inputs becomes a
    :class:`VectorInput` of them, a tuple of names its own; a name given twice is an
    error."""
    if inputs is None:
        return {}
    if callable(inputs) and not isinstance(inputs, Mapping):
        if not model.inputs:
            raise ValueError(f"inputs= is a callback, but model `{model.name}` has no "
                             "inputs (`INPUTS := u;` declares one)")
        inputs = {tuple(model.inputs): inputs}
    if not isinstance(inputs, Mapping):
        raise ValueError(f"inputs= is a mapping of input names to sources, or one callable "
                         f"f(t, state) returning the vector of all inputs; got a "
                         f"{type(inputs).__name__}")
    out: dict[str, object] = {}
    for key, src in inputs.items():
        if isinstance(key, tuple):
            if not key or not all(isinstance(n, str) for n in key):
                raise ValueError(f"inputs= key {key!r}: a tuple of input names")
            if not callable(src) or isinstance(src, InputTable):
                raise ValueError(f"the inputs {key} share one source, so it is a callable "
                                 f"f(t, state) returning {len(key)} numbers; got a "
                                 f"{type(src).__name__}")
            names, src = key, VectorInput(src, key)
        else:
            names = (key,)
        for n in names:
            if n in out:
                raise ValueError(f"input `{n}` is bound twice in inputs=")
            out[n] = src
    return out


def bind_inputs(model, state_names: Sequence[str],
                inputs: Mapping[object, object] | Callable | None,
                t0: float, t1: float) -> InputBinding | None:
    """Check ``inputs`` against the model's ``ВХОДЫ`` and the span; ``None`` without inputs.

    A value is an :class:`InputTable`, a pair ``(t, values)`` (a linear table) or a
    callable ``f(t, state) -> float``; a key that is a tuple of names binds them to one
    callable returning their values in that order, and ``inputs`` a callable alone binds
    every input of the model, in the order of ``ВХОДЫ``, to it.

    Raises
    ------
    ValueError
        An input declared and not bound, a name bound that the model does not declare,
        or twice, a table that does not cover ``[t0, t1]`` or is not a table, a value of
        another type.
    """
    declared = tuple(model.inputs)
    given = _by_name(model, inputs)
    extra = [k for k in given if k not in declared]
    if extra:
        listed = ", ".join(f"`{n}`" for n in declared) or "none"
        raise ValueError(f"`{extra[0]}` is not an input of model `{model.name}` (its "
                         f"`ВХОДЫ`/`INPUTS`: {listed}); declare it with `INPUTS := "
                         f"{extra[0]};` or remove it from inputs=")
    missing = [n for n in declared if n not in given]
    if missing:
        raise ValueError(f"input `{missing[0]}` of model `{model.name}` is not bound: give "
                         f"it a value at run time, inputs={{'{missing[0]}': f}} with f(t, "
                         "state) -> float, or a table InputTable(t, values) (`--input "
                         f"{missing[0]}=FILE.csv` of `kidym run` and `kidym sweep`)")
    if not declared:
        return None
    sources: list[Source] = []
    for name in declared:
        src = given[name]
        if isinstance(src, tuple) and len(src) == 2:
            src = InputTable(*src, source=f"input `{name}`")
        if isinstance(src, VectorInput):
            pass
        elif isinstance(src, InputTable):
            if src.t[0] > t0 or src.t[-1] < t1:
                raise ValueError(_uncovered(name, src, t0, t1))
        elif not callable(src):
            raise ValueError(f"input `{name}` is bound to a {type(src).__name__}; give a "
                             "callable f(t, state) -> float, an InputTable or a pair "
                             "(times, values)")
        sources.append(src)
    return InputBinding(declared, tuple(sources), tuple(state_names))


def _uncovered(name: str, table: InputTable, t0: float, t1: float) -> str:
    """Why ``table`` does not cover the run's span ``[t0, t1]`` and what to do, in words
    of no entry point (the run's end is ``t_end=`` in Python, ``--t-end`` on the command
    line, ``ВРЕМЯ`` in the model)."""
    fixes = []
    if table.t[0] > t0:
        fixes.append(f"the run starts at t = {t0:g}: begin the table by then or start the "
                     f"run at t = {table.t[0]:g} or later")
    if table.t[-1] < t1:
        fixes.append(f"the run ends at t = {t1:g}: extend the table to it or end the run "
                     f"by t = {table.t[-1]:g}")
    return (f"the table of input `{name}` covers t = {table.t[0]:g} … {table.t[-1]:g}, not "
            f"the run's span {t0:g} … {t1:g}; " + "; ".join(fixes))


def pieces(ta: float, tb: float, breaks: np.ndarray, times: np.ndarray
           ) -> list[tuple[float, float, np.ndarray, int]]:
    """``[ta, tb]`` cut at the ``breaks`` inside it: ``(a, b, asked, kept)`` per piece —
    the output times to ask of its integration (those in ``[a, b)``, the last piece's
    in ``[a, b]``, each earlier piece's followed by ``b``, whose state starts the next)
    and how many of them are the run's own."""
    inner = breaks[(breaks > ta) & (breaks < tb)]
    edges = [ta, *inner.tolist(), tb]
    out = []
    for k, (a, b) in enumerate(itertools.pairwise(edges)):
        last = k == len(edges) - 2
        own = times[(times >= a) & ((times <= b) if last else (times < b))]
        out.append((a, b, own if last else np.append(own, b), own.size))
    return out


@contextlib.contextmanager
def bound_system(system, binding: InputBinding | None) -> Iterator:
    """``system`` evaluating the inputs of ``binding`` while the block runs (the system
    itself without inputs): the NumPy system's copy that appends them, or the compiled
    one with the binding handed to its library for this thread (``system.bound``)."""
    if binding is None:
        yield system
        return
    with system.bound(binding) as inner:
        yield inner
