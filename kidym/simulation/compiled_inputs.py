"""External inputs in the compiled engine: a binding handed to the library per thread.

:func:`bound` hands the generated library (:mod:`kidym.codegen.inputs_c`) the tables as
arrays and the callbacks as one C function pointer to Python (``ctypes.CFUNCTYPE``), for
the calling thread and for the duration of a ``with`` block; the library's loop runs in
that thread (``ctypes`` calls do), so concurrent runs on one library each see their own
binding. One call from C fills every callback's slots, a callback giving several
inputs called once (:meth:`~kidym.simulation.inputs.InputBinding.called`). An exception
in a callback is kept, the callback returns 1, its slots get NaN and the run stops as
not finite; :attr:`Bound.error` is then the callback's own
:class:`~kidym.errors.SimulationError`, naming the input and the time, which the engine
raises instead. The cost of a callback is a C → Python transition and the dict of the
state per call (``benchmarks/input_callbacks.py``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kidym.errors import SimulationError
from kidym.simulation.inputs import INTERPOLATIONS, InputBinding, InputTable

#: ``int callback(double t, const double *y, double *u)``: 0 ok, 1 failed.
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                            ctypes.POINTER(ctypes.c_double))
#: The kind of a callback in ``kidym_bind_inputs`` (after the interpolations).
CALLBACK_KIND = len(INTERPOLATIONS)


@dataclass
class Bound:
    """What one binding holds alive, and the first error of its callbacks."""

    keep: list = field(default_factory=list)
    error: SimulationError | None = None
    #: a KeyboardInterrupt (or SystemExit) raised in a callback, raised again after the run
    interrupt: BaseException | None = None


def _callback(binding: InputBinding, holder: Bound) -> CALLBACK:
    names, n_y = binding.state_names, len(binding.state_names)

    def call(t: float, y, u) -> int:
        try:
            state = dict(zip(names, y[:n_y]))
            for k, v in binding.called(t, state):   # (each callback once: a vector
                u[k] = v                            # callback fills all its slots)
            return 0
        except SimulationError as exc:   # (call_input turns any Exception into one)
            if holder.error is None:
                holder.error = exc
            return 1
        except BaseException as exc:   # never let anything unwind through C: Ctrl-C
            if holder.interrupt is None:   # is raised again once the loop has stopped
                holder.interrupt = exc
            return 1

    return CALLBACK(call)


@contextmanager
def bound(lib: ctypes.CDLL, binding: InputBinding) -> Iterator[Bound]:
    """Bind ``binding`` in ``lib`` for this thread while the block runs."""
    n = len(binding.names)
    holder = Bound()
    kinds = (ctypes.c_int * n)()
    lengths = (ctypes.c_int * n)()
    times = (ctypes.POINTER(ctypes.c_double) * n)()
    values = (ctypes.POINTER(ctypes.c_double) * n)()
    for k, src in enumerate(binding.sources):
        if isinstance(src, InputTable):
            kinds[k] = INTERPOLATIONS.index(src.interpolation)
            lengths[k] = src.t.size
            ta = (ctypes.c_double * src.t.size)(*src.t)
            va = (ctypes.c_double * src.t.size)(*src.values)
            holder.keep += [ta, va]
            times[k] = ctypes.cast(ta, ctypes.POINTER(ctypes.c_double))
            values[k] = ctypes.cast(va, ctypes.POINTER(ctypes.c_double))
        else:
            kinds[k] = CALLBACK_KIND
    cb = _callback(binding, holder) if binding.callbacks else CALLBACK()
    holder.keep += [kinds, lengths, times, values, cb]
    fn = lib.kidym_bind_inputs
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p] * 4 + [CALLBACK]
    fn(kinds, lengths, times, values, cb)
    try:
        yield holder
    finally:
        fn(None, None, None, None, CALLBACK())
