"""The compiled engine: generated C, a cached shared library, the time loop in C.

:class:`CompiledSystem` is the numeric workspace of one model on the compiled
path (the analogue of :class:`~kidym.simulate.simulate.NumpySystem`): the library
built by :func:`kidym.codegen.build` from :func:`kidym.codegen.generate_c`, loaded
with :mod:`ctypes`, and its layout. :func:`simulate_compiled` integrates with the
C driver on SUNDIALS (no Python call per step); :func:`simulate_batch` runs many
initial conditions or parameter sets at once on all cores (``ctypes`` releases
the GIL during the foreign call, so threads run truly in parallel).
"""

from __future__ import annotations

import ctypes
import functools
import os
import time as _time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kidym.codegen.build import BASE_FLAGS, build, build_flags
from kidym.codegen.emit import CCode, generate_c
from kidym.eom.constraints import Stabilization, solve_augmented, split
from kidym.eom.equations import Equations
from kidym.errors import SimulationError
from kidym.simulate import faults
from kidym.simulate.events import STORM_HINT, Event, states_after
from kidym.simulate.result import Result

#: Integration methods of the compiled engine (name → driver code, description).
COMPILED_METHODS: dict[str, tuple[int, str]] = {
    "ERK8": (4, "ARKODE explicit Runge-Kutta of order 8, Hairer's DOP853 coefficients with "
                "their 5th-order error estimate"),
    "Fehlberg78": (2, "ARKODE explicit Runge-Kutta 7(8), Fehlberg 13-7-8"),
    "ERK5": (3, "ARKODE explicit Runge-Kutta 4(5), Dormand-Prince 7-4-5"),
    "BDF": (0, "CVODE variable-order BDF (stiff), dense Newton"),
    "Adams": (1, "CVODE variable-order Adams-Moulton (non-stiff), fixed-point iteration"),
}
#: Jacobians of the Newton iteration of ``BDF`` (``jacobian=``; see
#: :meth:`CompiledSystem.integrate`).
JACOBIAN_CHOICES = ("auto", "analytic", "fd")
#: ``solve_ivp`` method names accepted by the compiled engine, and what they run.
METHOD_ALIASES = {"DOP853": "ERK8", "RK45": "ERK5"}

_UNDEFINED_HINT = ("look for a formula undefined at this state (sqrt or log of a negative, "
                   "division by zero), or a blow-up; shorten t_end or tighten rtol")
_NOT_FINITE = "the right-hand side is not finite (NaN or infinity; a formula cannot be evaluated)"
#: SUNDIALS failures in which the step size has shrunk to nothing, and what they mean.
_STEP_COLLAPSE_FLAGS = {
    "ERR_FAILURE": "the error test failed repeatedly or at the smallest step",
    "CONV_FAILURE": "the corrector failed to converge repeatedly or at the smallest step",
    "TOO_MUCH_WORK": "the largest number of steps was taken before the next output time",
}

_D = ctypes.POINTER(ctypes.c_double)
_I = ctypes.POINTER(ctypes.c_int)
_L = ctypes.POINTER(ctypes.c_long)


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return a.ctypes.data_as(_D)


#: How the ARKODE methods produce the state at the output times (``output_mode``).
OUTPUT_MODES = {"hermite": 0, "step": 1, "extension": 2}

#: Embedding orders of ARKODE's built-in tables (the initial step uses them).
_EMBEDDING_ORDER = {"Fehlberg78": 7, "ERK5": 4}


@functools.cache
def _dop853():
    """SciPy's module of DOP853's coefficients (``scipy/integrate/_ivp/
    dop853_coefficients.py``, NumPy only), loaded from its file: importing it by name
    would import ``scipy.integrate`` first, half a second of a cached compiled run."""
    import importlib.util

    spec = importlib.util.find_spec("scipy")   # (finds the package, imports nothing)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("SciPy is not installed (kidym needs it)")
    for root in spec.submodule_search_locations:
        path = Path(root) / "integrate" / "_ivp" / "dop853_coefficients.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("_kidym_dop853_coefficients", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    from scipy.integrate._ivp import dop853_coefficients  # (another layout)

    return dop853_coefficients


@functools.cache
def _erk8_table() -> np.ndarray:
    """``{s, q, p}`` and ``c, A, b, d`` of ``ERK8`` (see :func:`_arkode_options`)."""
    dop = _dop853()

    s = dop.N_STAGES + 1
    A = np.zeros((s, s))
    A[:s - 1, :s - 1] = dop.A[:s - 1, :s - 1]
    A[s - 1, :s - 1] = dop.B
    c = np.r_[dop.C[:s - 1], 1.0]
    b = np.r_[dop.B, 0.0]
    d = b - dop.E5[:s]
    return np.concatenate([[s, 8.0, 5.0], c, A.ravel(), b, d])


@functools.cache
def _erk8_extension() -> np.ndarray:
    """DOP853's continuous extension in the driver's layout (``driver.c``).

    Read from SciPy like the table: the three extra stages (``C[13:]``,
    ``A[13:, :16]``) and the 4 × 16 matrix ``D`` of the degree-7 polynomial, over the
    13 stages of :func:`_erk8_table` (the last is ``f`` at the new solution) and the
    three extra ones.
    """
    dop = _dop853()

    n_all = dop.N_STAGES_EXTENDED
    s = dop.N_STAGES + 1
    ne = n_all - s
    return np.concatenate([[ne], dop.C[s:n_all], dop.A[s:n_all, :n_all].ravel(),
                           dop.D.ravel()])


def _arkode_options(method: str, output_mode: str) -> np.ndarray | None:
    """The driver's ``table`` argument (layout in ``driver.c``) for an ARKODE method.

    ``ERK8`` is Hairer's DOP853 formula run by ARKODE: SUNDIALS 6.4 (Debian 12) has
    no economical 8th-order pair, while Fehlberg 7(8) needs 2.4-3 times the
    evaluations of DOP853 for the same error (``docs/benchmarks.md``). The
    coefficients are read from SciPy (``scipy.integrate._ivp.dop853_coefficients``),
    never copied: the 12 stages, the 8th-order weights, and the 5th-order embedding
    ``b - E5`` for the error estimate. A 13th stage, ``f`` at the new solution
    (``A[12] = b``, ``c = 1``), completes the table as in SciPy, where it is the
    first stage of the next step: with the 12 stages alone the run under ARKODE 6.4
    converged at first order (measured), with it at the method's order
    (``tests/simulate/test_compiled.py`` checks the order). With
    ``output_mode="extension"`` DOP853's continuous extension follows
    (:func:`_erk8_extension`). ``None`` for CVODE's methods (``output_mode`` empty, see
    :func:`_output_mode`).
    """
    if not output_mode:
        return None
    head = np.array([0.0, 0.0, float(_EMBEDDING_ORDER.get(method, 0)),
                     float(OUTPUT_MODES[output_mode])])
    if method != "ERK8":
        return head
    table = _erk8_table()
    head[:3] = table[:3]
    parts = [head, table[3:]]
    if output_mode == "extension":
        parts.append(_erk8_extension())
    return np.concatenate(parts)


def _output_mode(method: str, output_mode: str) -> str:
    """The effective output mode of an ARKODE method (``"auto"`` resolved); ``""`` for
    CVODE's methods, which interpolate with their own history."""
    if COMPILED_METHODS[method][0] not in (2, 3, 4):
        return ""
    if output_mode == "auto":
        return "extension" if method == "ERK8" else "step"
    if output_mode not in OUTPUT_MODES:
        raise ValueError(f"output_mode {output_mode!r}: choose one of auto, "
                         + ", ".join(OUTPUT_MODES))
    if output_mode == "extension" and method != "ERK8":
        raise ValueError(f"method {method!r} has no continuous extension; output_mode "
                         "'extension' needs ERK8 (use 'step' or 'hermite')")
    return output_mode


#: Exponent of the tolerance handed to ARKODE for ``ERK8``: ``rtol**ERK8_TOL_EXPONENT``.
ERK8_TOL_EXPONENT = 0.8


def _erk8_tolerances(rtol: float, atol: float) -> tuple[float, float]:
    """ARKODE's tolerances for ``ERK8``, so that the delivered error follows ``rtol``.

    ARKODE holds the 5th-order error estimate (``∝ h⁶``) below its tolerance ``τ``,
    while the error of the 8th-order step goes like ``h⁹ ∝ τ^1.5``; DOP853's own
    estimate (5th and 3rd order combined, of order 7), which SciPy uses, is not
    linear and ARKODE 6.4 takes no other. ``τ = rtol^(2/3)`` makes the error scale
    like ``rtol`` but with a constant that depends on the problem: 1e-8 at rtol 1e-12
    on a pendulum swinging from 2 rad (2.5e-9, 1250 × rtol × amplitude; SciPy
    6e-11). ``τ = rtol^0.8`` makes the error fall like ``rtol^1.2``: measured on a
    closed form and the examples, at or below SciPy's DOP853 at every rtol from 1e-6
    to 1e-12 and within 20 × rtol × scale (``docs/compiled.md``). The method and
    its cost at a given *achieved* error are unchanged. ``atol`` is scaled by the
    same factor ``τ/rtol``.
    """
    inner = rtol ** ERK8_TOL_EXPONENT if rtol > 0 else rtol
    return inner, atol * (inner / rtol if rtol > 0 else 1.0)


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

    @classmethod
    def build(cls, eq: Equations, *, events: Sequence[Event] = (),
              fold: bool | Mapping[str, float] = False, flags: tuple[str, ...] = BASE_FLAGS,
              extra_flags: tuple[str, ...] = (), native: bool = True,
              progress: Callable[[int, int], None] | None = None,
              jacobian: bool = False) -> CompiledSystem:
        """Generate, compile (or reuse from the cache) and load the library of ``eq``.

        ``flags``, ``extra_flags``, ``native`` (tune for this processor) and ``progress``
        (``progress(done, total)`` as compiler runs finish) are those of
        :func:`kidym.codegen.build`. ``jacobian=True`` adds the analytic Jacobian
        (:mod:`kidym.codegen.jacobian_c`), which ``BDF`` then uses; a model with
        controls (``НЕИЗВЕСТНЫЕ``) gets none (its solve is not differentiated), and
        ``BDF`` forms the Jacobian by difference quotients.

        Raises
        ------
        CompileError
            If the C compiler is missing or fails.
        """
        from kidym.codegen import index

        start = _time.perf_counter()
        jacobian = jacobian and eq.controls is None
        key = index.equations_key(eq, events=events, fold=fold,
                                  flags=build_flags(flags, extra_flags, native),
                                  jacobian=jacobian)
        hit = index.lookup(key)
        if hit is not None:    # generating the C again is most of a cached start
            code, path = hit
        else:
            code = generate_c(eq, events=events, fold=fold, jacobian=jacobian)
            path = build(code, flags=flags, extra_flags=extra_flags, native=native,
                         progress=progress)
            index.remember(key, code, path)
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
        from kidym.simulate.simulate import parameter_vector

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
        qdot, M, F = np.empty(self.code.n_q), np.empty((self.code.n_w,) * 2), np.empty(
            len(self.equations.forcing_extended))
        self.lib.kidym_eval(float(t), _ptr(y), _ptr(p), _ptr(c), _ptr(qdot), _ptr(M), _ptr(F))
        return qdot, M, F

    # the interface of kidym.simulate.constrained (as NumpySystem's)
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

    def set_stabilization(self, stab: Stabilization) -> None:
        """Write ``stab`` into the library (its ``kidym_stabilization``)."""
        a, b = stab.coefficients
        tol = stab.tolerance if stab.method == "projection" else 0.0
        arr = (ctypes.c_double * 3).in_dll(self.lib, "kidym_stabilization")
        arr[0], arr[1], arr[2] = a, b, tol

    def rhs(self, t: float, y: np.ndarray, p: np.ndarray,
            c: np.ndarray | None = None) -> np.ndarray:
        """``ẏ = [q̇, M⁻¹F]``; raises :class:`SimulationError` on singular ``M`` or NaN."""
        y = np.ascontiguousarray(y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        c = self.constants(p) if c is None else c
        ydot = np.empty(self.n_y)
        status = self.lib.kidym_rhs(float(t), _ptr(y), _ptr(p), _ptr(c), _ptr(ydot))
        if status:
            raise _rhs_error(status, float(t), dict(zip(self.state_names, y)))
        return ydot

    def jacobian(self, t: float, y: np.ndarray, p: np.ndarray,
                 stab: Stabilization | None = None) -> np.ndarray:
        """The analytic Jacobian ``∂ẏ/∂y`` at one state, shape (n_y, n_y).

        With constraints, ``stab`` (default: the one last written into the library by
        :meth:`set_stabilization`) gives the Baumgarte terms of ``ẇ``.

        Raises
        ------
        ValueError
            If the library was built without the Jacobian.
        SimulationError
            Singular mass matrix (or constraint Jacobian) or a non-finite result.
        """
        if not self.has_jacobian:
            raise ValueError("this library has no analytic Jacobian: build it with "
                             "CompiledSystem.build(eq, jacobian=True)")
        if stab is not None:
            self.set_stabilization(stab)
        y = np.ascontiguousarray(y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        J = np.empty((self.n_y, self.n_y))
        status = self.lib.kidym_jac(float(t), _ptr(y), _ptr(p), _ptr(self.constants(p)),
                                    _ptr(J))
        if status:
            raise _rhs_error(status if status != 3 else 2, float(t),
                             dict(zip(self.state_names, y)))
        return J

    def outputs_at(self, t: np.ndarray, Y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Outputs at states ``Y`` (shape (n_t, n_y)), shape (n_t, n_out)."""
        t = np.ascontiguousarray(t, dtype=float)
        Y = np.ascontiguousarray(Y, dtype=float)
        p = np.ascontiguousarray(p, dtype=float)
        out = np.empty((len(t), len(self.output_names)))
        if len(t) and len(self.output_names):
            self.lib.kidym_outputs_many(len(t), _ptr(t), _ptr(Y), _ptr(p), _ptr(out))
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
        mode = _output_mode(method, output_mode)
        table = _arkode_options(method, mode)
        inner_rtol, inner_atol = (_erk8_tolerances(rtol, atol) if method == "ERK8"
                                  else (rtol, atol))
        started = _time.perf_counter()
        status = self.lib.kidym_simulate(
            _ptr(p), float(t0), _ptr(y0), len(times), _ptr(times),
            COMPILED_METHODS[method][0], float(inner_rtol), float(inner_atol),
            float(max_step) if np.isfinite(max_step) else 0.0, int(max_steps), _ptr(y_out),
            max_events, _ptr(ev_t), ev_k.ctypes.data_as(_I), _ptr(ev_y),
            stats.ctypes.data_as(_L), _ptr(fail_t), _ptr(fail_y), msg, len(msg),
            None if table is None else _ptr(table), int(use_jacobian == "analytic"))
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


def _rhs_error(status: int, t: float, state: dict[str, float]) -> SimulationError:
    if status == 1:
        return SimulationError("the mass matrix is singular", time=t, state=state,
                               hint=faults.HINTS[faults.SINGULAR], kind=faults.SINGULAR)
    return SimulationError(_NOT_FINITE, time=t, state=state, hint=_UNDEFINED_HINT,
                           kind=faults.NON_FINITE)


def _fault(system: CompiledSystem, raw: dict) -> faults.Fault:
    """What the driver saw when it stopped with a negative status (``driver.c``)."""
    status, t, y = raw["status"], raw["fail_t"], np.array(raw["fail_y"], dtype=float)
    if status == -201:
        return faults.Fault(faults.SINGULAR, "the mass matrix is singular", t, y)
    if status == -202:
        return faults.Fault(faults.NON_FINITE, _NOT_FINITE, t, y)
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
        return faults.Fault(
            faults.EVENT_STORM,
            f"event `{name}` is left at zero by a reset with the state at rest on its "
            "surface: it would recur at once, again and again (an event storm)", t, y,
            STORM_HINT)
    if status == -105:  # message "<events in the run> <its first instant> <t_inf>"
        count, start, t_inf = raw["message"].split()
        names = [system.event_names[k] for tt, k in zip(raw["events_t"], raw["events_k"])
                 if tt > float(start)] or [system.event_names[k] for k in raw["events_k"][-1:]]
        return faults.zeno_fault(names, t, y, count=int(count), window_start=float(start),
                                 t_inf=float(t_inf))
    flag = raw["message"]
    for key, meaning in _STEP_COLLAPSE_FLAGS.items():
        if key in flag:
            return faults.Fault(faults.STEP_COLLAPSE, f"{flag}: {meaning}", t, y)
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
    :func:`kidym.simulate.faults.diagnose`."""
    fault = _fault(system, raw)
    if raw["status"] == -201 and system.equations.controls is not None:
        fault = _control_fault(system, fault, p)
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
    values = {n: Y[:, i].copy() for i, n in enumerate(system.state_names)}
    outs = system.outputs_at(t, Y, p)
    for i, n in enumerate(system.output_names):
        if n not in values:
            values[n] = outs[:, i]
    status = raw["status"]
    events = {"t": raw["events_t"].copy(),
              "name": [system.event_names[k] for k in raw["events_k"]],
              "state": raw["events_y"].copy(),
              # (status -105: the run stopped on accumulating events before their resets)
              "state_after": states_after(
                  raw["events_t"], raw["events_k"], raw["events_y"],
                  system.code.event_actions, lambda k, tk, yk: system.reset_at(k, tk, yk, p),
                  last_applied=status != -105)}
    model = system.equations.model
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
    return Result(t=t, values=values, state_names=system.state_names,
                  success=status in (0, 1), status=0 if status == 0 else (1 if status == 1
                                                                          else -1),
                  message=message, nfev=raw["nfev"],
                  parameters=dict(zip(model.parameter_values, p.tolist())), stats=stats,
                  failure=error.to_dict() if error is not None else None)


def simulate_compiled(system: CompiledSystem, *, t0: float, t1: float, y0: np.ndarray,
                      p: np.ndarray, times: np.ndarray, method: str = "ERK8",
                      rtol: float = 1e-9, atol: float = 1e-12, max_step: float = np.inf,
                      raise_on_failure: bool = True, extra: dict | None = None,
                      constraints: Stabilization | None = None,
                      jacobian: str = "auto") -> Result:
    """Integrate with the compiled loop; see :func:`kidym.simulate` (``engine="compiled"``).

    With holonomic constraints, ``y0`` must be consistent already
    (:func:`kidym.simulate.constrained.consistent_initial`); ``constraints`` is the
    stabilization (default projection), and the result gets the multipliers ``λf`` and
    ``stats["constraint_drift"]`` as the NumPy engine's does.

    Raises
    ------
    SimulationError
        Singular mass matrix, a non-finite right-hand side, or integrator failure, with
        the time and state where it happened.
    """
    cons = system.equations.constraints
    stab = constraints if constraints is not None else Stabilization()
    if cons is not None:
        system.set_stabilization(stab)
    raw = system.integrate(y0, p, times, t0=t0, method=method, rtol=rtol, atol=atol,
                           max_step=max_step, jacobian=jacobian)
    error = _failure(system, raw, p) if raw["status"] < 0 else None
    result = to_result(system, raw, p, rtol=rtol, atol=atol, max_step=max_step, extra=extra,
                       error=error)
    result = _with_constraints(system, raw, p, stab, result)
    if error is None:
        stiff = stiffness_check(system, raw, p)
        if stiff is not None:
            result.stats["stiffness"] = stiff
    if error is not None:
        error.result = result
        if raise_on_failure:
            raise error
    return result


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
    ``BDF`` — the test of the NumPy engine (:func:`kidym.simulate.simulate.simulate`)."""
    from kidym.simulate.jacobian import stiffness
    from kidym.simulate.simulate import STIFF_CHECK_ABOVE

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


def _with_constraints(system: CompiledSystem, raw: dict, p: np.ndarray, stab: Stabilization,
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
    from kidym.simulate.constrained import measure

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


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Many runs of one model, stacked.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Output times (common to all runs).
    y : ndarray, shape (n_runs, n_y, n_t)
        States; NaN after a run stopped or failed.
    values : dict of str to ndarray, each shape (n_runs, n_t)
        Every recorded quantity by name.
    success : ndarray of bool, shape (n_runs,)
    messages : list of str
        Per run; a failed run's names the run and what it was given (``run 2
        (parameters l=0.5): the motion blows up … at t = …``).
    results : list of Result
        The individual runs; a failed run's is its partial result (``partial``,
        ``failure``), the others are complete.
    wall_time_s : float
        Wall time of the whole batch.
    """

    t: np.ndarray
    y: np.ndarray
    values: dict[str, np.ndarray]
    success: np.ndarray
    messages: list[str]
    results: list[Result]
    wall_time_s: float

    def __getitem__(self, name: str) -> np.ndarray:
        return self.t if name == "t" else self.values[name]

    @property
    def failed(self) -> list[int]:
        """Indices of the runs that failed (their messages say where and why)."""
        return [k for k, r in enumerate(self.results) if r.partial]


def run_batch(system: CompiledSystem, *, t0: float, times: np.ndarray,
                   y0s: np.ndarray, ps: np.ndarray, method: str = "ERK8",
                   rtol: float = 1e-9, atol: float = 1e-12, max_step: float = np.inf,
                   workers: int | None = None,
                   labels: Sequence[str] | None = None) -> BatchResult:
    """Run ``len(y0s)`` simulations in parallel threads (the GIL is released in C).

    A run that fails does not stop the others: its partial result and its message,
    which names the run (``labels[k]``, what it was given), are in the batch.
    """
    n = len(y0s)
    workers = workers or os.cpu_count() or 1
    started = _time.perf_counter()
    stab = Stabilization()   # (constraints: projection, one setting for every run)
    if system.equations.constraints is not None:
        system.set_stabilization(stab)

    def one(k: int) -> Result:
        raw = system.integrate(y0s[k], ps[k], times, t0=t0, method=method, rtol=rtol,
                               atol=atol, max_step=max_step)
        result = to_result(system, raw, ps[k], rtol=rtol, atol=atol, max_step=max_step)
        return _with_constraints(system, raw, ps[k], stab, result)

    with ThreadPoolExecutor(max_workers=min(workers, max(n, 1))) as pool:
        results = list(pool.map(one, range(n)))
    wall = _time.perf_counter() - started
    names = list(results[0].values) if results else []
    values = {}
    for name in names:
        arr = np.full((n, len(times)), np.nan)
        for k, r in enumerate(results):
            arr[k, :len(r.t)] = r.values[name]
        values[name] = arr
    y = np.stack([values[s] for s in system.state_names], axis=1) if n else np.empty((0,))
    return BatchResult(t=np.asarray(times, float), y=y, values=values,
                       success=np.array([r.success for r in results]),
                       messages=[_batch_message(k, r, labels) for k, r in enumerate(results)],
                       results=results,
                       wall_time_s=wall)


def _batch_message(k: int, result: Result, labels: Sequence[str] | None) -> str:
    if not result.partial:
        return result.message
    given = f" ({labels[k]})" if labels and labels[k] else ""
    return f"run {k}{given}: {result.message}"


# ------------------------------------------------------------------ engine choice
#: Assumed right-hand-side evaluations per unit of model time when ``auto`` estimates
#: the length of a NumPy run (a DOP853 run at rtol 1e-9 of the example models takes
#: 300-3000 per second of model time).
EVALS_PER_TIME_UNIT = 1000.0
#: Compile-time model of ``auto``: seconds = base + a·bytes + b·bytes² of C source per
#: translation unit, the units spread over the processors (:func:`compile_estimate`;
#: gcc -O2 on the development machine, driver included: 0.2 s for 7 kB, 0.9-1.3 s
#: for the biped's 92 kB, 2.9 s for 156 kB, 32-49 s for 843 kB).
COMPILE_BASE_S = 0.35
COMPILE_S_PER_BYTE = 1.0e-5
COMPILE_S_PER_BYTE2 = 4.0e-11
_NUMPY_METHOD = {"ERK8": "DOP853", "ERK5": "RK45", "Adams": "LSODA"}


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


def choose_engine(eq: Equations, code: CCode | None, *, duration: float,
                  flags: tuple[str, ...] = BASE_FLAGS,
                  events: Sequence[Event] = ()) -> tuple[str, str]:
    """``("compiled" | "numpy", reason)``: whether compiling pays off for this run.

    The analogue of seed 003's criterion (speed-up grows with the size of the
    generated code): compile when the library is cached, or when the estimated
    compile time is below the estimated NumPy run time (one measured NumPy
    evaluation times :data:`EVALS_PER_TIME_UNIT` per unit of model time). ``code``
    (the generated C) is generated here when not given and the library is not in
    the cache.
    """
    from kidym.codegen import index
    from kidym.codegen.build import library_path
    from kidym.simulate.simulate import NumpySystem

    if index.lookup(index.equations_key(eq, events=events, flags=build_flags(flags))):
        return "compiled", "the compiled library is in the cache"
    if code is None:
        code = generate_c(eq, events=events)
    if library_path(code, build_flags(flags)).exists():
        return "compiled", "the compiled library is in the cache"
    size = sum(len(x.encode("utf-8")) for x in code.sources)
    compile_s = compile_estimate(code)
    ns = NumpySystem.build(eq)
    p = ns.parameter_vector()
    y = np.full(len(ns.state_names), 0.1)
    start = _time.perf_counter()
    for _ in range(20):
        try:
            ns.rhs(0.0, y, p)
        except SimulationError:
            break
    per_eval = (_time.perf_counter() - start) / 20
    numpy_s = per_eval * EVALS_PER_TIME_UNIT * max(duration, 0.0)
    if numpy_s > compile_s:
        return "compiled", (f"estimated NumPy run {numpy_s:.2g} s > compile {compile_s:.2g} s "
                            f"({size // 1024} kB of C)")
    return "numpy", (f"estimated NumPy run {numpy_s:.2g} s <= compile {compile_s:.2g} s "
                     f"({size // 1024} kB of C)")


def simulate_with_engine(system, *, engine: str, events: Sequence[Event], t_end, t_start,
                         initial, parameters, t_eval, n_points: int, method: str,
                         rtol: float, atol: float, max_step: float,
                         raise_on_failure: bool,
                         constraints: Stabilization | str = "projection",
                         jacobian: str = "auto") -> Result:
    """The ``engine="compiled" | "auto"`` branch of :func:`kidym.simulate`."""
    from kidym.errors import CompileError
    from kidym.simulate.simulate import _initial_state, simulate

    if isinstance(system, CompiledSystem):
        compiled, eq = system, system.equations
    elif isinstance(system, Equations):
        compiled, eq = None, system
    elif hasattr(system, "equations"):  # a NumpySystem
        compiled, eq = None, system.equations
    else:
        raise TypeError(f"cannot simulate a {type(system).__name__}")
    model = eq.model
    span = model.time_span(parameters)
    t0 = span[0] if t_start is None else float(t_start)
    t1 = span[1] if t_end is None else float(t_end)
    if not t1 > t0:
        raise ValueError(f"t_end ({t1}) must be greater than t_start ({t0})")
    extra: dict = {}
    if compiled is None:
        if engine == "auto":
            choice, why = choose_engine(eq, None, duration=t1 - t0, events=events)
            extra["engine_choice"] = f"auto → {choice}: {why}"
            if choice == "numpy":
                result = simulate(eq, t_end=t1, t_start=t0, initial=initial,
                                  parameters=parameters, t_eval=t_eval, n_points=n_points,
                                  method=_NUMPY_METHOD.get(method, method), rtol=rtol,
                                  atol=atol, max_step=max_step, engine="numpy",
                                  raise_on_failure=raise_on_failure, events=events,
                                  constraints=constraints, jacobian=jacobian)
                result.stats.update(extra)
                return result
        try:
            # BDF's Newton matrix: the analytic Jacobian goes into the library
            compiled = CompiledSystem.build(
                eq, events=events,
                jacobian=(METHOD_ALIASES.get(method, method) == "BDF" and jacobian != "fd"
                          and eq.controls is None))
        except CompileError as exc:
            if engine != "auto" or exc.kind == "internal":
                raise
            extra["engine_choice"] += f"; compiling failed, NumPy used instead ({exc})"
            result = simulate(eq, t_end=t1, t_start=t0, initial=initial,
                              parameters=parameters, t_eval=t_eval, n_points=n_points,
                              method=_NUMPY_METHOD.get(method, method), rtol=rtol, atol=atol,
                              max_step=max_step, engine="numpy",
                              raise_on_failure=raise_on_failure, events=events,
                              constraints=constraints, jacobian=jacobian)
            result.stats.update(extra)
            return result
    elif events:
        raise ValueError("pass the events to CompiledSystem.build (they are compiled in)")
    p = compiled.parameter_vector(parameters)
    y0 = _initial_state(compiled, model, initial, parameters)
    times = np.linspace(t0, t1, n_points) if t_eval is None else np.asarray(t_eval, float)
    stab = constraints if isinstance(constraints, Stabilization) else Stabilization(
        method=constraints)
    if eq.constraints is not None:
        from kidym.simulate.constrained import consistent_initial, given_states
        from kidym.simulate.simulate import canonical_initial

        y0, adjusted = consistent_initial(
            compiled, t0, y0, p, given_states(model, initial, canonical_initial),
            stab.tolerance * 1e-3)
        extra["initial_adjusted"] = adjusted
    if eq.controls is not None:
        from kidym.simulate.simulate import check_reachable

        check_reachable(compiled, t0, y0, p)
    return simulate_compiled(compiled, t0=t0, t1=t1, y0=y0, p=p, times=times, method=method,
                             rtol=rtol, atol=atol, max_step=max_step,
                             raise_on_failure=raise_on_failure, extra=extra,
                             constraints=stab, jacobian=jacobian)
