"""The compiled engine: generated C, a cached shared library, the time loop in C.

:class:`CompiledSystem` is the numeric workspace of one model on the compiled
path (the analogue of :class:`~kidym.simulation.simulate.NumpySystem`): the library
built by :func:`kidym.codegen.build` from :func:`kidym.codegen.generate_c`, loaded
with :mod:`ctypes`, and its layout. :func:`simulate_compiled` integrates with the
C driver on SUNDIALS (no Python call per step); :func:`simulate_batch` runs many
initial conditions or parameter sets at once on all cores (``ctypes`` releases
the GIL during the foreign call, so threads run truly in parallel).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import threading
import time as _time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kidym.codegen.build import BASE_FLAGS, build, build_flags
from kidym.codegen.emit import CCode, generate_c
from kidym.eom.constraints import Stabilization, solve_augmented, split
from kidym.eom.equations import Equations
from kidym.eom.events import (
    MAX_ERROR_TEST_FAILURES,
    STORM_HINT,
    SWITCH_HINT,
    Event,
    storm_detail,
)
from kidym.errors import SimulationError
from kidym.simulation import compiled_inputs, faults
from kidym.simulation.compiled_calls import (
    F64,
    NOT_FINITE,
    Calls,
    check_out,
    time_of,
)
from kidym.simulation.compiled_methods import (  # noqa: F401 (the engine's method names)
    COMPILED_METHODS,
    ERK8_TOL_EXPONENT,
    JACOBIAN_CHOICES,
    METHOD_ALIASES,
    OUTPUT_MODES,
    arkode_options,
    erk8_tolerances,
    output_mode_of,
)
from kidym.simulation.events import states_after
from kidym.simulation.finish import assemble
from kidym.simulation.inputs import InputBinding, pieces
from kidym.simulation.layout import parameter_vector
from kidym.simulation.result import Result
from kidym.simulation.spec import RunOptions, RunSpec
from kidym.simulation.watch import call_watched

#: SUNDIALS failures in which the step size has shrunk to nothing, and what they mean.
_STEP_COLLAPSE_FLAGS = {
    "ERR_FAILURE": f"the error test failed {MAX_ERROR_TEST_FAILURES} times in one step "
                   "(MAX_ERROR_TEST_FAILURES) or at the smallest step",
    "CONV_FAILURE": "the corrector failed to converge repeatedly or at the smallest step",
    "TOO_MUCH_WORK": "the largest number of steps was taken before the next output time",
}

_D = ctypes.POINTER(ctypes.c_double)
_I = ctypes.POINTER(ctypes.c_int)
_L = ctypes.POINTER(ctypes.c_long)


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return a.ctypes.data_as(_D)


def _load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    d, i, vp = ctypes.c_double, ctypes.c_int, ctypes.c_void_p
    lib.kidym_constants.argtypes = [vp, vp]
    lib.kidym_constants.restype = None
    lib.kidym_eval.argtypes = [d, vp, vp, vp, vp, vp, vp]
    lib.kidym_eval.restype = None
    lib.kidym_rhs.argtypes = [d, vp, vp, vp, vp]
    lib.kidym_rhs.restype = i
    lib.kidym_outputs_many.argtypes = [i, vp, vp, vp, vp]
    lib.kidym_outputs_many.restype = None
    lib.kidym_rhs_many.argtypes = [i, vp, vp, vp, vp]
    lib.kidym_rhs_many.restype = i
    lib.kidym_events.argtypes = [d, vp, vp, vp, vp]
    lib.kidym_events.restype = None
    lib.kidym_reset.argtypes = [i, d, vp, vp, vp, vp]
    lib.kidym_reset.restype = None
    lib.kidym_simulate.argtypes = [vp, d, vp, i, vp, i, d, d, d, ctypes.c_long, vp, i, vp, vp,
                                   vp, vp, vp, vp, ctypes.c_char_p, i, vp, i]
    lib.kidym_simulate.restype = i
    lib.kidym_jac.argtypes = [d, vp, vp, vp, vp]
    lib.kidym_jac.restype = i
    lib.kidym_rhs_batch.argtypes = [i, d, vp, vp, vp, vp, vp]
    lib.kidym_rhs_batch.restype = i
    lib.kidym_watch.argtypes = [vp]
    lib.kidym_watch.restype = None
    return lib


@dataclass(frozen=True, eq=False)
class CompiledSystem:
    """A model's compiled library and its layout.

    Attributes
    ----------
    equations : Equations
        What it evaluates.
    code : CCode
        The generated source (and operation counts).
    path : Path
        The shared library in the cache.
    state_names, output_names, event_names : tuple of str
        Layouts of ``y``, the outputs and the events.
    build_time_s : float
        Seconds spent generating, compiling (or finding in the cache) and loading.
    """

    equations: Equations
    code: CCode
    path: Path
    lib: ctypes.CDLL = field(repr=False)
    build_time_s: float = 0.0
    #: per thread, the buffers and bound functions of the thin calls (compiled_calls)
    _local: threading.local = field(default_factory=threading.local, init=False,
                                    repr=False, compare=False)

    @classmethod
    def build(cls, eq: Equations, *, events: Sequence[Event] = (),
              fold: bool | Mapping[str, float] = False, flags: tuple[str, ...] = BASE_FLAGS,
              extra_flags: tuple[str, ...] = (), native: bool | None = None,
              progress: Callable[[int, int], None] | None = None,
              jacobian: bool = False,
              stage: Callable[[str], AbstractContextManager] | None = None
              ) -> CompiledSystem:
        """Generate, compile (or reuse from the cache) and load the library of ``eq``.

        ``flags``, ``extra_flags``, ``native`` (tune for this processor; ``None``: as
        ``KIDYM_NATIVE`` says, portable by default) and ``progress``
        (``progress(done, total)`` as compiler runs finish) are those of
        :func:`kidym.codegen.build`. ``jacobian=True`` adds the analytic Jacobian
        (:mod:`kidym.codegen.jacobian_c`), which ``BDF`` then uses; a model with
        controls (``НЕИЗВЕСТНЫЕ``) gets none (its solve is not differentiated), and
        ``BDF`` forms the Jacobian by difference quotients. ``stage(label)``, a
        context manager such as :meth:`kidym.progress.Reporter.stage`, wraps each stage
        of the build: ``"cache key"``, ``"generating C"``, ``"compiling"`` (these two
        not on a cached start) and ``"loading"``.

        Raises
        ------
        CompileError
            If the C compiler is missing or fails.
        """
        from kidym.codegen import index

        start = _time.perf_counter()
        stage = stage or (lambda label: nullcontext())
        jacobian = jacobian and eq.controls is None
        with stage("cache key"):
            key = index.equations_key(eq, events=events, fold=fold,
                                      flags=build_flags(flags, extra_flags, native),
                                      jacobian=jacobian)
            hit = index.lookup(key)
        if hit is not None:    # generating the C again is most of a cached start
            code, path = hit
        else:
            with stage("generating C"):
                code = generate_c(eq, events=events, fold=fold, jacobian=jacobian)
            with stage("compiling"):
                path = build(code, flags=flags, extra_flags=extra_flags, native=native,
                             progress=progress)
            index.remember(key, code, path)
        with stage("loading"):
            return cls.from_library(eq, code, path, started=start)

    @classmethod
    def from_library(cls, eq: Equations, code: CCode, path: Path, *,
                     started: float | None = None) -> CompiledSystem:
        """Load the library at ``path``, built from ``code`` (the C of ``eq``): a library
        shipped from another process (``kidym sweep`` on Dask) or found in the cache.

        Raises
        ------
        ValueError
            If the library's layout is not that of ``code``.
        """
        start = _time.perf_counter() if started is None else started
        lib = _load(path)
        layout = (ctypes.c_int * 7).in_dll(lib, "kidym_layout")
        expected = (code.n_q, code.n_w, code.n_q + code.n_w, len(code.parameter_names),
                    code.n_constants, len(code.output_names), len(code.event_names))
        if tuple(layout) != expected:
            raise ValueError(f"the library {path} has the layout {tuple(layout)}, not the "
                             f"{expected} of the code of model `{code.model_name}`")
        return cls(eq, code, path, lib, _time.perf_counter() - start)

    @property
    def state_names(self) -> tuple[str, ...]:
        return self.code.state_names

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.code.output_names

    @property
    def event_names(self) -> tuple[str, ...]:
        return self.code.event_names

    @property
    def n_y(self) -> int:
        return self.code.n_q + self.code.n_w

    @property
    def has_jacobian(self) -> bool:
        """Whether the library computes the analytic Jacobian (built with
        ``jacobian=True``)."""
        return self.code.jacobian

    # ------------------------------------------------------------ numbers
    def parameter_vector(self, overrides: Mapping[str, float] | None = None) -> np.ndarray:
        """Parameter values in model order, with ``overrides`` applied."""
        vector = parameter_vector(self.equations.model, overrides)
        if self.code.folded and overrides:
            raise ValueError("this library has the parameter values folded into its code; "
                             "build it with fold=False to change parameters at run time")
        return vector

    def constants(self, p: np.ndarray) -> np.ndarray:
        """The hoisted parameter-only quantities for parameter vector ``p``."""
        p = np.ascontiguousarray(p, dtype=float)
        c = np.zeros(max(self.code.n_constants, 1))
        self.lib.kidym_constants(_ptr(p), _ptr(c))
        return c

    def evaluate(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F)`` at one state."""
        y = np.ascontiguousarray(y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        c = self.constants(p)
        try:
            n_f = self._local.n_forcing
        except AttributeError:   # (forcing_extended builds a list of every G entry)
            n_f = self._local.n_forcing = len(self.equations.forcing_extended)
        qdot, M, F = np.empty(self.code.n_q), np.empty((self.code.n_w,) * 2), np.empty(n_f)
        self.lib.kidym_eval(float(t), _ptr(y), _ptr(p), _ptr(c), _ptr(qdot), _ptr(M), _ptr(F))
        return qdot, M, F

    def dynamics(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F)`` at one state (:meth:`evaluate`; the name both engines share)."""
        return self.evaluate(t, y, p)

    # the interface of kidym.simulation.constrained (as NumpySystem's)
    def rates(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``q̇ = B w + β`` at one state."""
        return self.evaluate(t, y, p)[0]

    def constraint_block(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(M, F, Block)`` at one state (a model with constraints)."""
        _qdot, M, F = self.evaluate(t, y, p)
        Fw, block = split(F, self.code.n_w, self.equations.m)
        return M, Fw, block

    def multipliers_at(self, t: np.ndarray, Y: np.ndarray, p: np.ndarray,
                       stab: Stabilization) -> np.ndarray:
        """``λ`` at states ``Y`` (shape (n_t, n_y)), shape (n_t, m)."""
        out = np.empty((len(t), self.equations.m))
        for k in range(len(t)):
            M, F, block = self.constraint_block(float(t[k]), Y[k], p)
            try:
                out[k] = solve_augmented(M, F, block, stab)[1]
            except np.linalg.LinAlgError:
                out[k] = np.nan
        return out

    def controls_at(self, t: np.ndarray, Y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The controls ``u`` at states ``Y`` (shape (n_t, n_y)), shape (n_t, S); NaN
        where they cannot be solved (:func:`kidym.eom.controls.solve_controls`)."""
        from kidym.eom.controls import ControlSolveError, solve_controls
        from kidym.eom.controls import split as split_controls

        ctl = self.equations.controls
        out = np.empty((len(t), ctl.s))
        for k in range(len(t)):
            _qdot, M, F = self.evaluate(float(t[k]), Y[k], p)
            F0, block = split_controls(F, self.code.n_w, ctl.r, ctl.s)
            try:
                out[k] = solve_controls(M, F0, block)[1]
            except ControlSolveError:
                out[k] = np.nan
        return out

    @contextlib.contextmanager
    def bound(self, binding: InputBinding) -> Iterator[CompiledSystem]:
        """This system with the external inputs of ``binding`` handed to its library for
        this thread while the block runs (:mod:`kidym.simulation.compiled_inputs`)."""
        with compiled_inputs.bound(self.lib, binding):
            yield self

    def set_stabilization(self, stab: Stabilization) -> None:
        """Write ``stab`` into the library (its ``kidym_stabilization``)."""
        a, b = stab.coefficients
        tol = stab.tolerance if stab.method == "projection" else 0.0
        arr = (ctypes.c_double * 3).in_dll(self.lib, "kidym_stabilization")
        arr[0], arr[1], arr[2] = a, b, tol

    def _calls(self) -> Calls:
        try:
            return self._local.calls
        except AttributeError:
            calls = self._local.calls = Calls(self)
            return calls

    def rhs(self, t: float, y: np.ndarray, p: np.ndarray, c: np.ndarray | None = None, *,
            out: np.ndarray | None = None) -> np.ndarray:
        """``ẏ = [q̇, M⁻¹F]`` at one state: a new array, or ``out`` filled and returned.

        The thin call (:mod:`kidym.simulation.compiled_calls`): the constants of ``p`` are
        kept between calls and computed again when the values of ``p`` change; ``c``
        (the constants of :meth:`constants`) overrides them.

        Raises
        ------
        ValueError
            If ``y``, ``p`` or ``out`` has the wrong shape.
        SimulationError
            Singular mass matrix or a non-finite result.
        """
        try:
            k = self._local.calls
        except AttributeError:
            k = self._calls()
        # (the checks of load_p and load_y inlined for the common case: the call is the
        # cost of a few attribute lookups, one copy of y and one of the result)
        if (type(p) is not np.ndarray or p.dtype is not F64 or p.shape != k.pshape
                or p.tobytes() != k.key):
            k.load_p(p)
        if type(y) is np.ndarray and y.dtype is F64 and y.shape == k.yshape:
            k.y[...] = y
        else:
            k.load_y(y)
        if c is None:
            try:
                status = k.fn_rhs(t, k.ya, k.pa, k.ca, k.fa)
            except ctypes.ArgumentError:   # t not a Python float or int
                status = k.fn_rhs(time_of(t), k.ya, k.pa, k.ca, k.fa)
        else:
            c = np.ascontiguousarray(c, dtype=float)
            if c.shape != k.c.shape:
                raise ValueError(f"the constants c have shape {c.shape}, not {k.c.shape}")
            status = k.fn_rhs(time_of(t), k.ya, k.pa, c.ctypes.data, k.fa)
        if status:
            raise k.failure(status, float(t), k.y)
        if out is None:
            return k.f.copy()
        check_out(out, (k.n,))[...] = k.f
        return out

    def rhs_batch(self, t: float, Y: np.ndarray, p: np.ndarray, *,
                  out: np.ndarray | None = None) -> np.ndarray:
        """``ẏ`` at the ``K`` states of ``Y`` (shape (K, n_y)) at time ``t``, shape
        (K, n_y), in one call into C (the library's ``kidym_rhs_batch``); each row is
        exactly :meth:`rhs` of that row.

        Raises
        ------
        ValueError
            If ``Y``, ``p`` or ``out`` has the wrong shape.
        SimulationError
            At the first row whose mass matrix is singular or whose result is not finite.
        """
        k = self._calls()
        k.load_p(p)
        Y = np.ascontiguousarray(Y, dtype=float)
        if Y.ndim != 2 or Y.shape[1] != k.n:
            raise ValueError(f"the states Y have shape {Y.shape}; this system needs shape "
                             f"(K, {k.n}), one state a row")
        ydot = np.empty(Y.shape) if out is None else check_out(out, Y.shape)
        if not ydot.flags.c_contiguous:
            raise ValueError("out= must be C-contiguous")
        if len(Y):
            status = k.fn_batch(len(Y), time_of(t), Y.ctypes.data, k.pa, k.ca, ydot.ctypes.data,
                                k.bada)
            if status:
                row = int(k.bad[0])
                raise k.failure(status, float(t), Y[row], f"row {row} of Y")
        return ydot

    def jacobian(self, t: float, y: np.ndarray, p: np.ndarray,
                 stab: Stabilization | None = None, *,
                 out: np.ndarray | None = None) -> np.ndarray:
        """The analytic Jacobian ``∂ẏ/∂y`` at one state, shape (n_y, n_y): a new array,
        or ``out`` filled and returned.

        With constraints, ``stab`` (default: the one last written into the library by
        :meth:`set_stabilization`) gives the Baumgarte terms of ``ẇ``.

        Raises
        ------
        ValueError
            If the library was built without the Jacobian, or a shape is wrong.
        SimulationError
            Singular mass matrix (or constraint Jacobian) or a non-finite result.
        """
        if not self.has_jacobian:
            raise ValueError("this library has no analytic Jacobian: build it with "
                             "CompiledSystem.build(eq, jacobian=True)")
        if stab is not None:
            self.set_stabilization(stab)
        k = self._calls()
        k.load_p(p)
        k.load_y(y)
        status = k.fn_jac(time_of(t), k.ya, k.pa, k.ca, k.Ja)
        if status:
            raise k.failure(status if status != 3 else 2, float(t), k.y)
        if out is None:
            return k.J.copy()
        check_out(out, k.J.shape)[...] = k.J
        return out

    def outputs_at(self, t: np.ndarray, Y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Outputs at states ``Y`` (shape (n_t, n_y)) at times ``t`` (shape (n_t,)),
        shape (n_t, n_out).

        Raises
        ------
        ValueError
            If ``t``, ``Y`` or ``p`` has the wrong shape.
        """
        k = self._calls()
        k.load_p(p)
        t = np.ascontiguousarray(t, dtype=float)
        Y = np.ascontiguousarray(Y, dtype=float)
        if t.ndim != 1 or Y.shape != (len(t), k.n):
            raise ValueError(f"the times t (shape {t.shape}) and states Y (shape {Y.shape}) "
                             f"do not fit: they need shapes (n_t,) and (n_t, {k.n})")
        out = np.empty((len(t), len(self.output_names)))
        if len(t) and len(self.output_names):
            self.lib.kidym_outputs_many(len(t), t.ctypes.data, Y.ctypes.data, k.pa,
                                        out.ctypes.data)
        return out

    def events_at(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Event function values at one state."""
        y = np.ascontiguousarray(y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        g = np.empty(max(len(self.event_names), 1))
        self.lib.kidym_events(float(t), _ptr(y), _ptr(p), _ptr(self.constants(p)), _ptr(g))
        return g[:len(self.event_names)]

    def reset_at(self, k: int, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The state after the reset of event ``k`` (the library's ``kidym_reset``)."""
        y = np.ascontiguousarray(y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        ynew = np.empty(self.n_y)
        self.lib.kidym_reset(int(k), float(t), _ptr(y), _ptr(p), _ptr(self.constants(p)),
                             _ptr(ynew))
        return ynew

    # ---------------------------------------------------------- integration
    def integrate(self, y0: np.ndarray, p: np.ndarray, times: np.ndarray, *, t0: float,
                  method: str = "ERK8", rtol: float = 1e-9, atol: float = 1e-12,
                  max_step: float = np.inf, max_steps: int = 10_000_000,
                  max_events: int = 10_000, output_mode: str = "auto",
                  jacobian: str = "auto") -> dict:
        """Run the C driver once; raw arrays and status (see :func:`simulate_compiled`).

        ``jacobian`` (``BDF``): ``"analytic"`` (the library's, :attr:`has_jacobian`),
        ``"fd"`` (CVODE's difference quotients) or ``"auto"`` (analytic where the
        library has it); the raw output's ``"jacobian"`` says which was used.

        ``output_mode`` (ARKODE methods) says how the state at the output times is
        obtained: ``"extension"`` from the method's continuous extension (``ERK8``:
        DOP853's, of order 7, three extra evaluations in each step that holds an
        output), ``"step"`` by ending steps on every output time (the outputs have
        the accuracy of the steps, at the cost of shorter steps where outputs are
        dense), ``"hermite"`` from ARKODE's Hermite interpolant (degree at most 5,
        far less accurate than an 8th-order step). ``"auto"``: ``"extension"`` for
        ``ERK8``, ``"step"`` for the other ARKODE methods.
        """
        method = METHOD_ALIASES.get(method, method)
        if method not in COMPILED_METHODS:
            raise ValueError(f"method {method!r} is not available in the compiled engine; "
                             "choose one of " + ", ".join([*COMPILED_METHODS, *METHOD_ALIASES]))
        use_jacobian = self._jacobian_choice(method, jacobian)
        ny = self.n_y
        y0 = np.ascontiguousarray(y0, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        times = np.ascontiguousarray(times, dtype=float)
        if times.size and (np.any(np.diff(times) < 0) or times[0] < t0):
            raise ValueError("output times must be increasing and not before t_start")
        y_out = np.full((len(times), ny), np.nan)
        ev_t = np.empty(max_events)
        ev_k = np.empty(max_events, dtype=np.intc)
        ev_y = np.empty((max_events, ny))
        stats = np.zeros(8, dtype=np.int_)
        fail_t = np.zeros(1)
        fail_y = np.zeros(ny)
        msg = ctypes.create_string_buffer(512)
        mode = output_mode_of(method, output_mode)
        table = arkode_options(method, mode)
        inner_rtol, inner_atol = (erk8_tolerances(rtol, atol) if method == "ERK8"
                                  else (rtol, atol))
        started = _time.perf_counter()
        status = call_watched(lambda: self.lib.kidym_simulate(
            _ptr(p), float(t0), _ptr(y0), len(times), _ptr(times),
            COMPILED_METHODS[method][0], float(inner_rtol), float(inner_atol),
            float(max_step) if np.isfinite(max_step) else 0.0, int(max_steps), _ptr(y_out),
            max_events, _ptr(ev_t), ev_k.ctypes.data_as(_I), _ptr(ev_y),
            stats.ctypes.data_as(_L), _ptr(fail_t), _ptr(fail_y), msg, len(msg),
            None if table is None else _ptr(table), int(use_jacobian == "analytic")),
            self.lib.kidym_watch)
        wall = _time.perf_counter() - started
        n_done, n_ev = int(stats[2]), min(int(stats[3]), max_events)
        return {"status": int(status), "message": msg.value.decode("utf-8", "replace"),
                "t": times[:n_done], "y": y_out[:n_done], "nfev": int(stats[0]),
                "nsteps": int(stats[1]), "events_t": ev_t[:n_ev], "events_k": ev_k[:n_ev],
                "events_y": ev_y[:n_ev], "fail_t": float(fail_t[0]), "fail_y": fail_y,
                "wall_time_s": wall, "method": method, "output_mode": mode,
                "extension_fallbacks": int(stats[4]), "projections": int(stats[5]),
                "arkode_tolerances": (inner_rtol, inner_atol), "t0": float(t0),
                "y0": y0.copy(), "jacobian": use_jacobian, "njev": int(stats[6]),
                "nfev_jacobian": int(stats[7])}

    def _jacobian_choice(self, method: str, jacobian: str) -> str:
        """``"analytic"`` or ``"fd"`` for ``BDF``, ``""`` for the methods without a
        Newton iteration; see :meth:`integrate`."""
        if jacobian not in JACOBIAN_CHOICES:
            raise ValueError(f"jacobian must be one of {JACOBIAN_CHOICES}, got {jacobian!r}")
        if method != "BDF":
            return ""
        if jacobian == "analytic" and self.equations.controls is not None:
            raise ValueError("jacobian='analytic': the compiled engine has no analytic "
                             "Jacobian for a model with controls (`НЕИЗВЕСТНЫЕ`; CVODE's "
                             "BDF forms it by difference quotients): use jacobian='fd' or "
                             "'auto', or the NumPy engine, whose Radau and BDF have the "
                             "closed loop's analytic Jacobian")
        if jacobian == "analytic" and not self.has_jacobian:
            raise ValueError("jacobian='analytic': this library was built without the "
                             "analytic Jacobian; build it with CompiledSystem.build(eq, "
                             "jacobian=True), or use jacobian='fd'")
        if jacobian == "auto":
            return "analytic" if self.has_jacobian else "fd"
        return jacobian


def _fault(system: CompiledSystem, raw: dict) -> faults.Fault:
    """What the driver saw when it stopped with a negative status (``driver.c``)."""
    status, t, y = raw["status"], raw["fail_t"], np.array(raw["fail_y"], dtype=float)
    if status == -108:
        return faults.Fault(faults.INTERRUPTED, raw["message"], t, y)
    if status == -201:
        return faults.Fault(faults.SINGULAR, "the mass matrix is singular", t, y)
    if status == -202:
        return faults.Fault(faults.NON_FINITE, NOT_FINITE, t, y)
    if status == -203:
        return faults.Fault(faults.STEP_COLLAPSE, "the right-hand side was evaluated 10000 "
                            "times in a row within 16 ulps of t: the steps no longer "
                            "advance the time", t, y)
    if status == -106:
        return faults.Fault(
            faults.CONSTRAINTS, "the state could not be projected back onto the constraints "
            "(Newton did not converge, or the constraint Jacobian lost rank)", t, y,
            "the mechanism may pass a dead-centre (locking) position here; tighten "
            "rtol/atol, or use constraints='baumgarte'")
    if status == -104:  # message "event <k>"
        name = system.event_names[int(raw["message"].split()[-1])]
        return faults.Fault(faults.EVENT_STORM, storm_detail(name), t, y, STORM_HINT)
    if status == -105:  # message "<events in the run> <its first instant> <t_inf>"
        count, start, t_inf = raw["message"].split()
        names = [system.event_names[k] for tt, k in zip(raw["events_t"], raw["events_k"])
                 if tt > float(start)] or [system.event_names[k] for k in raw["events_k"][-1:]]
        return faults.zeno_fault(names, t, y, count=int(count), window_start=float(start),
                                 t_inf=float(t_inf))
    flag = raw["message"]
    for key, meaning in _STEP_COLLAPSE_FLAGS.items():
        if key in flag:
            return faults.Fault(faults.STEP_COLLAPSE, f"{flag}: {meaning}", t, y,
                                SWITCH_HINT if key == "ERR_FAILURE" else "")
    return faults.Fault(faults.INTEGRATOR, f"{flag} (status {status})", t, y)


def _control_fault(system: CompiledSystem, fault: faults.Fault, p: np.ndarray
                   ) -> faults.Fault:
    """The C solve of the controls failed (``kd_controlled``, reported as a singular
    matrix): name the programmed constraints the controls cannot reach there, as the
    NumPy engine does (:func:`kidym.eom.controls.solve_controls`)."""
    from kidym.eom.controls import ControlSolveError, solve_controls
    from kidym.eom.controls import split as split_controls

    ctl = system.equations.controls
    try:
        _qdot, M, F = system.evaluate(fault.t, fault.y, p)
        solve_controls(M, *split_controls(F, system.code.n_w, ctl.r, ctl.s))
    except ControlSolveError as exc:
        if not exc.unreachable:
            return fault
        names = ", ".join(f"`{ctl.names[i]}`" for i in exc.unreachable)
        return faults.Fault(
            faults.CONSTRAINTS, f"the controls cannot reach a programmed constraint ({names})",
            fault.t, fault.y,
            "the controls of `НЕИЗВЕСТНЫЕ` no longer change the acceleration of the "
            "programmed constraint named here independently of the others (a singular "
            "configuration of the mechanism, or a path that leaves the workspace); change "
            "the path or the controls")
    except (SimulationError, ValueError, np.linalg.LinAlgError):
        return fault
    return fault


def _failure(system: CompiledSystem, raw: dict, p: np.ndarray) -> SimulationError:
    """The :class:`SimulationError` of a failed run, its cause named by
    :func:`kidym.simulation.faults.diagnose`."""
    fault = _fault(system, raw)
    if raw["status"] == -201 and system.equations.controls is not None:
        fault = _control_fault(system, fault, p)
    elif raw["status"] == -201 and system.equations.constraints is not None:
        from kidym.simulation.monitors import augmented_fault

        try:
            fault = augmented_fault(fault, system.evaluate(fault.t, fault.y, p)[1])
        except (ValueError, np.linalg.LinAlgError):
            pass
    return faults.diagnose(
        fault, state_names=system.state_names, t0=raw["t0"], y0=raw["y0"],
        mass=lambda t, y: system.evaluate(t, y, p)[1],
        groups=faults.quaternion_indices(system.state_names, system.equations.model),
        method=raw["method"], speed_names=[str(w) for w in system.equations.speeds],
        constrained=system.equations.constraints is not None)


def to_result(system: CompiledSystem, raw: dict, p: np.ndarray, *, rtol: float, atol: float,
              max_step: float, extra: dict | None = None,
              error: SimulationError | None = None) -> Result:
    """A :class:`Result` from the raw output of :meth:`CompiledSystem.integrate`.

    A failed run (negative status) gives the partial result up to the failure, with
    ``failure`` from ``error`` (computed here when not given).
    """
    t, Y = raw["t"], raw["y"]
    if raw["status"] == 1 and raw["events_t"].size and (not t.size
                                                         or t[-1] < raw["events_t"][-1]):
        # a terminal event: the results end at it, its row kept (as the NumPy engine's)
        t = np.append(t, raw["events_t"][-1])
        Y = np.vstack([Y, raw["events_y"][-1]])
    outs = system.outputs_at(t, Y, p)
    status = raw["status"]
    events = {"t": raw["events_t"].copy(),
              "name": [system.event_names[k] for k in raw["events_k"]],
              "state": raw["events_y"].copy(),
              # (status -105: the run stopped on accumulating events before their resets)
              "state_after": states_after(
                  raw["events_t"], raw["events_k"], raw["events_y"],
                  system.code.event_actions, lambda k, tk, yk: system.reset_at(k, tk, yk, p),
                  last_applied=status != -105)}
    stats = {"engine": "compiled", "method": raw["method"],
             "integrator": COMPILED_METHODS[raw["method"]][1], "rtol": rtol, "atol": atol,
             "wall_time_s": raw["wall_time_s"], "max_step": max_step, "nsteps": raw["nsteps"],
             "events": events, "library": str(system.path),
             "build_time_s": system.build_time_s, **(extra or {})}
    if raw["method"] == "ERK8":
        stats["arkode_tolerances"] = raw["arkode_tolerances"]
    if raw.get("jacobian"):
        # BDF's Newton matrix: the analytic Jacobian or CVODE's difference quotients
        # (their evaluations of f are part of nfev, and counted apart here)
        stats["jacobian"] = raw["jacobian"]
        stats["njev"] = raw["njev"]
        stats["nfev_jacobian"] = raw["nfev_jacobian"]
    if raw["output_mode"]:
        stats["output_mode"] = raw["output_mode"]
        stats["extension_fallbacks"] = raw["extension_fallbacks"]
    message = raw["message"] or ("reached the end" if status == 0 else "")
    if status < 0 and error is None:
        error = _failure(system, raw, p)
    if error is not None:
        message = str(error)
    return assemble(system.equations.model, t=t, Y=Y.T, state_names=system.state_names,
                    output_names=system.output_names, outputs=outs,
                    success=status in (0, 1), status=0 if status == 0 else (
                        1 if status == 1 else -1),
                    message=message, nfev=raw["nfev"], p=p, stats=stats, error=error)


def _passage_check(system: CompiledSystem, raw: dict, p: np.ndarray, *, method: str,
                   rtol: float, atol: float, max_step: float) -> tuple:
    """``(raw, error)``: the run's samples up to a passage through a singular position of
    the loop and its error (:mod:`kidym.simulation.monitors`, the NumPy engine's rule; an
    interval whose samples are too coarse to decide is integrated again, finer), or
    ``raw`` and None."""
    from kidym.simulation.monitors import loop_passage

    def refine(ta: float, tb: float, ya: np.ndarray, times: np.ndarray) -> tuple:
        sub = system.integrate(ya, p, times, t0=ta, method=method, rtol=rtol, atol=atol,
                               max_step=max_step)
        return sub["t"], sub["y"]

    passage = loop_passage(system, raw["t"], raw["y"], p, refine=refine)
    if passage is None:
        return raw, None
    k = passage.k
    error = passage.error(system.state_names, raw["y"][k],
                          system.equations.constraints.names)
    keep = raw["events_t"] <= raw["t"][k]
    return dict(raw, t=raw["t"][:k + 1], y=raw["y"][:k + 1], status=-107,
                events_t=raw["events_t"][keep], events_k=raw["events_k"][keep],
                events_y=raw["events_y"][keep]), error


def _continued(system: CompiledSystem, raw: dict, p: np.ndarray, *, t1: float,
               times: np.ndarray, stab: Stabilization, method: str, rtol: float,
               atol: float, max_step: float) -> tuple | None:
    """``(raw, error, stats)``: a run cut at a passage through a singular position
    (``raw``, its last sample before it) continued with ``formulation="ali3"``
    (:func:`kidym.simulation.passages.continue_run`), or None where that formulation
    does not apply (events, velocity constraints, speeds other than rates)."""
    from kidym.simulation.passages import CONTINUED_WHY, compiled_phase, continuable, continue_run

    if system.event_names or not len(raw["t"]) or not continuable(
            system.equations, events=(), stabilization=stab):
        return None
    t_from, passage_t = float(raw["t"][-1]), float(raw["t"][-1])
    started = _time.perf_counter()
    ok, _status, message, nfev, t_more, y_more, stats, fault = continue_run(
        system, p, t_from, raw["y"][-1], t1, times, method=method, rtol=rtol, atol=atol,
        max_step=max_step, tol=min(stab.tolerance * 1e-3, 1e-15), phase=compiled_phase,
        reference=(raw["t0"], raw["y0"]))
    stats["formulation_choice"] = CONTINUED_WHY.format(t=passage_t)
    raw = dict(raw, t=np.concatenate([raw["t"], t_more]),
               y=np.concatenate([raw["y"], np.ascontiguousarray(y_more.T)]),
               status=0 if ok else -1, message="" if ok else message,
               nfev=raw["nfev"] + nfev,
               wall_time_s=raw["wall_time_s"] + _time.perf_counter() - started)
    error = None
    if fault is not None:
        raw.update(fail_t=fault.t, fail_y=fault.y)
        error = faults.diagnose(
            fault, state_names=system.state_names, t0=raw["t0"], y0=raw["y0"],
            mass=lambda t, y: system.evaluate(t, y, p)[1],
            groups=faults.quaternion_indices(system.state_names, system.equations.model),
            method=method, speed_names=[str(w) for w in system.equations.speeds],
            constrained=True)
    return raw, error, stats


def run_compiled(system: CompiledSystem, *, t0: float, t1: float, y0: np.ndarray,
                 p: np.ndarray, times: np.ndarray, method: str = "ERK8",
                 rtol: float = 1e-9, atol: float = 1e-12, max_step: float = np.inf,
                 extra: dict | None = None, constraints: Stabilization | None = None,
                 jacobian: str = "auto", inputs: InputBinding | None = None,
                 breaks: np.ndarray | None = None) -> tuple[Result, SimulationError | None]:
    """Integrate with the compiled loop: the result (partial, for a failed run) and the
    error that stopped it, or ``None``.

    ``inputs``: the run's external inputs, bound to the library for this thread while it
    runs (:mod:`kidym.simulation.compiled_inputs`); a callback's exception is the error.
    The loop restarts at the breakpoints of their tables (``breaks``, :func:`_integrate`).

    With holonomic constraints, ``y0`` must be consistent already
    (:func:`kidym.simulation.spec.prepare_run`); ``constraints`` is the stabilization
    (default projection), and the result gets the multipliers ``λf`` and
    ``stats["constraint_drift"]`` as the NumPy engine's does.
    """
    if inputs is not None:
        with compiled_inputs.bound(system.lib, inputs) as held:
            result, error = run_compiled(system, t0=t0, t1=t1, y0=y0, p=p, times=times,
                                         method=method, rtol=rtol, atol=atol,
                                         max_step=max_step, extra=extra,
                                         constraints=constraints, jacobian=jacobian,
                                         breaks=inputs.breakpoints(t0, t1))
        if held.interrupt is not None:   # Ctrl-C in a callback: the run stopped, raise it
            raise held.interrupt
        if held.error is not None:   # the callback's own error, not the NaN it left
            return result, held.error
        return result, error
    cons = system.equations.constraints
    stab = constraints if constraints is not None else Stabilization()
    if cons is not None:
        system.set_stabilization(stab)
    raw = _integrate(system, y0, p, times, t0=t0, t1=t1, method=method, rtol=rtol,
                     atol=atol, max_step=max_step, jacobian=jacobian, breaks=breaks)
    error = _failure(system, raw, p) if raw["status"] < 0 else None
    ali3_stats: dict = {}
    if cons is not None and raw["status"] != -108:
        # a passage through a singular position is the first cause of a failure too
        raw_kept, passage = _passage_check(system, raw, p, method=method, rtol=rtol,
                                           atol=atol, max_step=max_step)
        if passage is not None:
            raw, error = raw_kept, passage
        if error is not None and error.kind == faults.CONSTRAINTS:
            # a loop at a singular position (the monitor, or a singular augmented
            # solve): go on across it with the formulation that passes it
            continued = _continued(system, raw, p, t1=t1, times=times, stab=stab,
                                   method=method, rtol=rtol, atol=atol, max_step=max_step)
            if continued is not None:
                raw, error, ali3_stats = continued
    result = to_result(system, raw, p, rtol=rtol, atol=atol, max_step=max_step, extra=extra,
                       error=error)
    result = with_constraints(system, raw, p, stab, result)
    if ali3_stats:
        from kidym.simulation.passages import CONTINUED

        result.stats["constraint_drift"].update({"formulation": CONTINUED, **ali3_stats})
    elif "constraint_drift" in result.stats:   # (the same key as the NumPy engine's)
        result.stats["constraint_drift"].setdefault("formulation", "augmented")
    if error is None and not ali3_stats:
        stiff = stiffness_check(system, raw, p)
        if stiff is not None:
            result.stats["stiffness"] = stiff
    return result, error


#: Counts of the raw output that add up over the pieces of a restarted run.
_SUMMED = ("nfev", "nsteps", "extension_fallbacks", "projections", "njev", "nfev_jacobian")


def _integrate(system: CompiledSystem, y0: np.ndarray, p: np.ndarray, times: np.ndarray, *,
               t0: float, t1: float, breaks: np.ndarray | None, **options) -> dict:
    """:meth:`CompiledSystem.integrate`, restarted at ``breaks`` (the input tables'
    breakpoints, :func:`kidym.simulation.inputs.pieces`) so that no step straddles a kink
    or a jump (while a piece runs, the library evaluates the tables on its segment,
    ``kidym_input_window``): the pieces' outputs, events and counts joined into one raw
    output; it stops at the first piece that did not reach its end."""
    if breaks is None or not breaks.size:
        return system.integrate(y0, p, times, t0=t0, **options)
    joined: dict = {}
    window = system.lib.kidym_input_window
    window.argtypes, window.restype = [ctypes.c_double], None
    for a, _b, asked, kept in pieces(t0, t1, breaks, np.asarray(times, float)):
        window(a)
        try:
            raw = system.integrate(y0, p, asked, t0=a, **options)
        finally:
            window(math.nan)
        reached = raw["status"] == 0 and len(raw["t"]) > kept
        keep = kept if reached else min(kept, len(raw["t"]))
        piece = {**raw, "t": raw["t"][:keep], "y": raw["y"][:keep]}
        if not joined:
            joined = piece
        else:
            for key in ("t", "y", "events_t", "events_k", "events_y"):
                joined[key] = np.concatenate([joined[key], piece[key]])
            for key in _SUMMED:
                joined[key] += piece[key]
            joined.update({k: piece[k] for k in ("status", "message", "fail_t", "fail_y")})
            joined["wall_time_s"] += piece["wall_time_s"]
        if not reached:
            break
        y0 = raw["y"][-1]
    return joined


def simulate_compiled(system: CompiledSystem, *, raise_on_failure: bool = True,
                      **run) -> Result:
    """:func:`run_compiled`, raising the error of a failed run (unless
    ``raise_on_failure=False``: then its partial result is returned).

    Raises
    ------
    SimulationError
        Singular mass matrix, a non-finite right-hand side, or integrator failure, with
        the time and state where it happened.
    """
    result, error = run_compiled(system, **run)
    if error is not None:
        error.result = result
        if raise_on_failure:
            raise error
    return result


class CompiledEngine:
    """The compiled engine: generated C, a cached shared library, the integration loop
    on SUNDIALS (the :class:`~kidym.simulation.engine.Engine` named ``compiled``)."""

    name = "compiled"

    def owns(self, system: object) -> bool:
        return isinstance(system, CompiledSystem)

    def check(self, options: RunOptions, system: object) -> None:
        if options.quaternion_stabilization:
            raise ValueError("quaternion_stabilization is applied by the NumPy engine only: "
                             "use engine='numpy', or normalize_quaternions=True")
        if options.events and self.owns(system):
            raise ValueError("pass the events to CompiledSystem.build (they are compiled in)")

    def system(self, eq: Equations, options: RunOptions) -> CompiledSystem:
        # BDF's Newton matrix: the analytic Jacobian goes into the library
        return CompiledSystem.build(
            eq, events=options.events,
            jacobian=(METHOD_ALIASES.get(options.method, options.method) == "BDF"
                      and options.jacobian != "fd" and eq.controls is None
                      and not eq.inputs))

    def run(self, system: CompiledSystem, spec: RunSpec, options: RunOptions
            ) -> tuple[Result, SimulationError | None]:
        extra = ({"initial_adjusted": spec.adjusted}
                 if system.equations.constraints is not None else {})
        if options.ali3 and spec.inputs is not None:
            # (the bridges evaluate the library: its inputs bound for this thread)
            with compiled_inputs.bound(system.lib, spec.inputs) as held:
                result, error = run_compiled_ali3(system, spec, options, extra)
            if held.interrupt is not None:
                raise held.interrupt
            return result, held.error or error
        if options.ali3:
            return run_compiled_ali3(system, spec, options, extra)
        return run_compiled(system, t0=spec.t0, t1=spec.t1, y0=spec.y0, p=spec.p,
                            times=spec.times, method=options.method, rtol=options.rtol,
                            atol=options.atol, max_step=options.max_step, extra=extra,
                            constraints=spec.stabilization, jacobian=options.jacobian,
                            inputs=spec.inputs)


def run_compiled_ali3(system: CompiledSystem, spec: RunSpec, options: RunOptions,
                      extra: dict) -> tuple[Result, SimulationError | None]:
    """``formulation="ali3"`` in the compiled engine: the augmented run in the compiled
    loop between singular positions, the bridges across them by the index-3 augmented
    Lagrangian over the library's evaluations (:func:`kidym.simulation.passages.run_ali3`
    with :func:`~kidym.simulation.passages.compiled_phase`)."""
    from kidym.simulation.passages import compiled_phase, run_ali3

    stab = spec.stabilization
    system.set_stabilization(stab)
    method = METHOD_ALIASES.get(options.method, options.method)
    started = _time.perf_counter()
    ok, _status, message, nfev, t_out, y_out, stats, fault = run_ali3(
        system, spec.p, spec.t0, spec.t1, spec.y0, spec.times, method=method,
        rtol=options.rtol, atol=options.atol, max_step=options.max_step,
        tol=min(stab.tolerance * 1e-3, 1e-15), phase=compiled_phase)
    wall = _time.perf_counter() - started
    Y = np.ascontiguousarray(y_out.T)
    raw = {"status": 0 if ok else -1, "message": "" if ok else message, "t": t_out,
           "y": Y, "nfev": nfev, "nsteps": 0, "events_t": np.empty(0),
           "events_k": np.empty(0, dtype=np.intc), "events_y": np.empty((0, system.n_y)),
           "fail_t": spec.t0 if fault is None else fault.t,
           "fail_y": spec.y0 if fault is None else fault.y, "wall_time_s": wall,
           "method": method, "output_mode": "", "extension_fallbacks": 0,
           "projections": 0, "arkode_tolerances": (options.rtol, options.atol),
           "t0": spec.t0, "y0": spec.y0, "jacobian": ""}
    error = None
    if fault is not None:
        error = faults.diagnose(
            fault, state_names=system.state_names, t0=spec.t0, y0=spec.y0,
            mass=lambda t, y: system.evaluate(t, y, spec.p)[1],
            groups=faults.quaternion_indices(system.state_names, system.equations.model),
            method=method, speed_names=[str(w) for w in system.equations.speeds],
            constrained=True)
    result = to_result(system, raw, spec.p, rtol=options.rtol, atol=options.atol,
                       max_step=options.max_step, extra=extra, error=error)
    result = with_constraints(system, raw, spec.p, stab, result)
    result.stats["constraint_drift"].update(
        {"stabilization": "ali3", "formulation": "ali3", **stats})
    return result, error


#: The compiled engine (:data:`kidym.simulation.engine.ENGINES`).
ENGINE = CompiledEngine()


#: The explicit methods of the compiled engine, whose steps stability may hold down.
EXPLICIT_METHODS = ("ERK8", "Fehlberg78", "ERK5")


def central_jacobian(system: CompiledSystem, t: float, y: np.ndarray,
                     p: np.ndarray) -> np.ndarray:
    """``∂ẏ/∂y`` by central differences of the compiled right-hand side (the stiffness
    check of a library built without the analytic Jacobian; ``2 n_y`` evaluations)."""
    c = system.constants(p)
    J = np.empty((y.size, y.size))
    for k in range(y.size):
        h = 1e-6 * max(1.0, abs(y[k]))
        e = np.zeros(y.size)
        e[k] = h
        J[:, k] = (system.rhs(t, y + e, p, c) - system.rhs(t, y - e, p, c)) / (2 * h)
    return J


def stiffness_check(system: CompiledSystem, raw: dict, p: np.ndarray) -> dict | None:
    """After a long explicit run (more than ``STIFF_CHECK_ABOVE`` evaluations): were
    its steps held down by stability? ``ρ h > 2``, with ``ρ`` the spectral radius of
    ``∂ẏ/∂y`` at the last output (the library's analytic Jacobian, else central
    differences of its right-hand side) and ``h`` the mean step, says so and names
    ``BDF`` — the test of the NumPy engine (:func:`kidym.simulation.simulate.run_numpy`)."""
    from kidym.simulation.jacobian import STIFF_CHECK_ABOVE, stiffness

    method = raw["method"]
    if method not in EXPLICIT_METHODS or raw["nfev"] < STIFF_CHECK_ABOVE or not raw["nsteps"]:
        return None
    t_last = float(raw["t"][-1]) if len(raw["t"]) else raw["t0"]
    y_last = raw["y"][-1] if len(raw["t"]) else raw["y0"]
    h = max(t_last - raw["t0"], 1e-300) / raw["nsteps"]
    try:
        J = (system.jacobian(t_last, y_last, p) if system.has_jacobian
             else central_jacobian(system, t_last, np.asarray(y_last, float), p))
    except (SimulationError, np.linalg.LinAlgError, ValueError):
        return None
    rho = stiffness(J)
    if not (rho * h > 2.0):
        return None
    return {"spectral_radius": rho, "mean_step": h, "method": method,
            "jacobian": "analytic" if system.has_jacobian else "central differences",
            "hint": f"the motion is stiff (largest eigenvalue of the Jacobian |λ| = {rho:.3g} "
                    f"1/s at t = {t_last:.6g}; the {method} steps averaged {h:.3g} s, held "
                    "down by stability): use method='BDF' (CVODE, with the analytic "
                    "Jacobian; kidym run --method BDF)"}


def with_constraints(system: CompiledSystem, raw: dict, p: np.ndarray, stab: Stabilization,
                      result: Result) -> Result:
    """``result`` with the multipliers ``λf`` and the constraint drift (a model with
    constraints; unchanged otherwise)."""
    cons = system.equations.constraints
    if system.equations.controls is not None:
        u = system.controls_at(raw["t"], raw["y"], p)
        for i, name in enumerate(system.equations.controls.control_names):
            result.values[name] = u[:, i]
    if cons is None:
        return result
    from kidym.simulation.constrained import measure

    lam = system.multipliers_at(raw["t"], raw["y"], p, stab)
    for i, name in enumerate(cons.multiplier_names):
        result.values[name] = lam[:, i]
    pos, vel = measure(system, raw["t"], raw["y"].T, p)
    result.stats["constraint_drift"] = {
        "position": pos, "velocity": vel, "stabilization": stab.method,
        "projections": raw["projections"], "tolerance": stab.tolerance,
        **({"alpha": stab.alpha, "beta": stab.beta} if stab.method == "baumgarte"
           else {})}
    return result


# ------------------------------------------------------------------ compile time
#: Compile-time model of ``auto``: seconds = base + a·bytes + b·bytes² of C source per
#: translation unit, the units spread over the processors (:func:`compile_estimate`;
#: gcc -O2 on the development machine, driver included: 0.2 s for 7 kB, 0.9-1.3 s
#: for the biped's 92 kB, 2.9 s for 156 kB, 32-49 s for 843 kB).
COMPILE_BASE_S = 0.35
COMPILE_S_PER_BYTE = 1.0e-5
COMPILE_S_PER_BYTE2 = 4.0e-11


def compile_estimate(code: CCode) -> float:
    """Seconds the compiler is expected to take on ``code``: each translation unit by
    its size (quadratic: one big function costs more than its parts), the units run
    as many at once as there are processors (:func:`kidym.codegen.build`).

    For a big model's parts it is an upper bound: 30 s for the 60-link chain's 123
    units on 2 cores, which take about 12 s of CPU (1 100 s when all 5 MB were taken
    as one unit).
    """
    costs = [COMPILE_S_PER_BYTE * b + COMPILE_S_PER_BYTE2 * b * b
             for b in (len(x.encode("utf-8")) for x in code.sources)]
    workers = min(os.cpu_count() or 1, len(costs))
    return COMPILE_BASE_S + max(max(costs), sum(costs) / workers)
