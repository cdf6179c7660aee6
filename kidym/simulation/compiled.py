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
from kidym.eom.events import Event
from kidym.simulation import compiled_inputs
from kidym.simulation.compiled_calls import (
    F64,
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
    solver_tolerances,
)
from kidym.simulation.inputs import InputBinding
from kidym.simulation.layout import parameter_vector
from kidym.simulation.watch import call_watched

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
              stage: Callable[[str], AbstractContextManager] | None = None,
              code: CCode | None = None) -> CompiledSystem:
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
        not on a cached start) and ``"loading"``. ``code``: the C already generated
        from ``eq`` with these ``events``, ``fold`` and ``jacobian`` (``engine="auto"``
        generates it to estimate the build), compiled instead of generating it again;
        the cache key is that of ``eq`` either way.

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
            if code is None:
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

    def _constants_of(self, p: np.ndarray) -> np.ndarray:
        """:meth:`constants` of ``p``, kept per thread for the last ``p`` (the bridges
        of ``formulation="ali3"`` evaluate one state after another at one ``p``)."""
        key = p.tobytes()
        held = getattr(self._local, "constants", None)
        if held is None or held[0] != key:
            held = self._local.constants = (key, self.constants(p))
        return held[1]

    def evaluate(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F)`` at one state."""
        y = np.ascontiguousarray(y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        c = self._constants_of(p)
        try:
            n_f = self._local.n_forcing
        except AttributeError:   # (forcing_extended builds a list of every G entry)
            n_f = self._local.n_forcing = len(self.equations.forcing_extended)
        qdot, M, F = np.empty(self.code.n_q), np.empty((self.code.n_w,) * 2), np.empty(n_f)
        # (the arrays' addresses as integers, held alive by the names here: ``_ptr``'s
        # ``data_as`` costs most of a call on a small model)
        self.lib.kidym_eval(float(t), y.ctypes.data, p.ctypes.data, c.ctypes.data,
                            qdot.ctypes.data, M.ctypes.data, F.ctypes.data)
        return qdot, M, F

    def dynamics(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F)`` at one state (:meth:`evaluate`; the name both engines share)."""
        return self.evaluate(t, y, p)

    def dynamics_many(self, t: np.ndarray, Y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F)`` at the ``K`` states of ``Y`` (shape (K, n_y)) at the times
        ``t`` (shape (K,)), stacked: shapes (K, n_q), (K, n_w, n_w), (K, n_F); each row
        exactly :meth:`evaluate` of that row, in one loop of calls into C with the
        arrays' addresses taken once (the energy monitor's bound,
        :mod:`kidym.simulation.energy_monitor`, on every run of a study)."""
        t = np.asarray(t, dtype=float)
        Y = np.ascontiguousarray(Y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        n_q, n_w, K = self.code.n_q, self.code.n_w, len(t)
        if Y.shape != (K, n_q + n_w):
            raise ValueError(f"the states Y have shape {Y.shape}; this system needs shape "
                             f"({K}, {n_q + n_w}), one state a row")
        c = self._constants_of(p)
        try:
            n_f = self._local.n_forcing
        except AttributeError:   # (as evaluate: forcing_extended builds a list)
            n_f = self._local.n_forcing = len(self.equations.forcing_extended)
        qdot, M, F = np.empty((K, n_q)), np.empty((K, n_w, n_w)), np.empty((K, n_f))
        call, pa, ca = self.lib.kidym_eval, p.ctypes.data, c.ctypes.data
        ya, qa, ma, fa = Y.ctypes.data, qdot.ctypes.data, M.ctypes.data, F.ctypes.data
        sy, sq, sm, sf = Y.strides[0], qdot.strides[0], M.strides[0], F.strides[0]
        for k in range(K):
            call(float(t[k]), ya + k * sy, pa, ca, qa + k * sq, ma + k * sm, fa + k * sf)
        return qdot, M, F

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
        inner_rtol, inner_atol = solver_tolerances(method, rtol, atol)
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


#: The least bytes of C that the compiled engine generates per byte of the Python that
#: the NumPy engine generates from the same equations: :func:`compile_floor`'s ratio
#: (0.69-10 on the examples, least for the rolling ball's long outputs, 1.6 for the
#: biped; ``tests/simulation/test_compiled.py`` checks it on every example).
C_PER_PYTHON_BYTE = 0.6


def compile_floor(python_bytes: int) -> float:
    """Seconds the compile takes at least (a lower bound of :func:`compile_estimate`),
    from the size in bytes of the NumPy engine's generated Python of the same equations:
    known before any C is generated. The linear term over at least
    :data:`C_PER_PYTHON_BYTE` bytes of C per byte of Python, spread over all
    processors."""
    return (COMPILE_BASE_S + COMPILE_S_PER_BYTE * C_PER_PYTHON_BYTE * python_bytes
            / (os.cpu_count() or 1))

