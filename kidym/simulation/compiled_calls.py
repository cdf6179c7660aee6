"""The thin Python calls into a compiled library (:meth:`CompiledSystem.rhs` and kin).

A ctypes call costs well under a microsecond; what made the old call path cost about
12 µs was around it: the constants computed again on every call, and a ctypes pointer
built for each array (``ndarray.ctypes`` alone costs microseconds). :class:`Calls`
does that work once per system and thread: buffers with fixed addresses for ``y``,
``p``, the constants and the results, the constants computed again only when the
parameter values change (compared byte for byte, so a vector changed in place is
seen), and the library's functions with their ``argtypes`` looked up once. A call
then copies ``y`` into its buffer, calls C with fixed addresses and copies the result
out.

The buffers belong to one thread (:class:`CompiledSystem` keeps one :class:`Calls`
per thread), so threads may call the same system at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kidym.errors import SimulationError
from kidym.simulation import faults

if TYPE_CHECKING:
    from kidym.simulation.compiled import CompiledSystem

F64 = np.dtype(np.float64)


def _as_vector(a: object, n: int, what: str, names: tuple[str, ...]) -> np.ndarray:
    """``a`` as a float64 array of shape ``(n,)``, or a clear :class:`ValueError`."""
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be an array of {n} numbers; {exc}") from None
    if arr.shape != (n,):
        listed = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
        raise ValueError(f"{what} has shape {arr.shape}; this system needs shape ({n},)"
                         + (f" ({listed})" if listed else ""))
    return arr


def time_of(t: object) -> float:
    """``t`` as a float (a NumPy scalar or 0-d array), or a clear :class:`ValueError`."""
    try:
        return float(t)    # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"the time t must be a number, not {type(t).__name__}") from None


def check_out(out: object, shape: tuple[int, ...]) -> np.ndarray:
    """``out`` if it is a writable float64 array of ``shape``, else a ValueError."""
    if not isinstance(out, np.ndarray) or out.dtype != F64 or out.shape != shape:
        got = (f"a {out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray)
               else type(out).__name__)
        raise ValueError(f"out= must be a float64 array of shape {shape}, not {got}")
    if not out.flags.writeable:
        raise ValueError("out= must be writable")
    return out


#: What a failed evaluation of the right-hand side says, and what to try.
UNDEFINED_HINT = ("look for a formula undefined at this state (sqrt or log of a negative, "
                  "division by zero), or a blow-up; shorten t_end or tighten rtol")
NOT_FINITE = "the right-hand side is not finite (NaN or infinity; a formula cannot be evaluated)"


def rhs_error(status: int, t: float, state: dict[str, float]) -> SimulationError:
    if status == 1:
        return SimulationError("the mass matrix is singular", time=t, state=state,
                               hint=faults.HINTS[faults.SINGULAR], kind=faults.SINGULAR)
    return SimulationError(NOT_FINITE, time=t, state=state, hint=UNDEFINED_HINT,
                           kind=faults.NON_FINITE)


class Calls:
    """Per-thread buffers and bound functions of one :class:`CompiledSystem`."""

    __slots__ = ("J", "Ja", "bad", "bada", "c", "ca", "f", "fa", "fn_batch", "fn_constants",
                 "fn_jac", "fn_rhs", "key", "n", "n_p", "names", "p", "pa", "pnames", "pshape",
                 "y", "ya", "yshape")

    def __init__(self, system: CompiledSystem) -> None:
        code = system.code
        self.n = system.n_y
        self.n_p = len(code.parameter_names)
        self.names = system.state_names
        self.yshape, self.pshape = (self.n,), (self.n_p,)
        self.pnames = tuple(code.parameter_names)
        self.y = np.zeros(self.n)
        self.p = np.zeros(max(self.n_p, 1))
        self.c = np.zeros(max(code.n_constants, 1))
        self.f = np.zeros(self.n)
        self.bad = np.zeros(1, dtype=np.intc)
        self.ya, self.pa, self.ca, self.fa = (a.ctypes.data for a in
                                              (self.y, self.p, self.c, self.f))
        self.bada = self.bad.ctypes.data
        self.J = np.zeros((self.n, self.n)) if code.jacobian else None
        self.Ja = self.J.ctypes.data if self.J is not None else 0
        self.key: bytes | None = None   # the bytes of the p the constants are for
        lib = system.lib
        self.fn_rhs = lib.kidym_rhs
        self.fn_constants = lib.kidym_constants
        self.fn_jac = lib.kidym_jac
        self.fn_batch = lib.kidym_rhs_batch

    def load_p(self, p: object) -> None:
        """Make the buffers hold ``p`` and its constants (computed again only when the
        values of ``p`` changed since the last call)."""
        if type(p) is np.ndarray and p.dtype is F64 and p.shape == (self.n_p,):
            key = p.tobytes()
        else:
            p = _as_vector(p, self.n_p, "the parameter vector p", self.pnames)
            key = p.tobytes()
        if key != self.key:
            if self.n_p:
                self.p[:] = p
            self.fn_constants(self.pa, self.ca)
            self.key = key

    def load_y(self, y: object) -> None:
        """Copy the state ``y`` into its buffer (shape checked)."""
        if type(y) is np.ndarray and y.dtype is F64 and y.shape == self.yshape:
            self.y[...] = y
        else:
            self.y[:] = _as_vector(y, self.n, "the state y", self.names)

    def failure(self, status: int, t: float, y: np.ndarray, where: str = "") -> SimulationError:
        """The error of a failed evaluation (status 1: singular, else not finite)."""
        err = rhs_error(status, t, dict(zip(self.names, map(float, y))))
        if not where:
            return err
        return SimulationError(f"{where}: {err.message}", time=err.time, state=err.state,
                               hint=err.hint, kind=err.kind)
