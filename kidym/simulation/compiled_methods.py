"""The compiled engine's integration methods: names, the ``ERK8`` tables (Hairer's
DOP853 coefficients, read from SciPy's coefficient file without importing
``scipy.integrate``), ARKODE's options and the ``ERK8`` tolerance mapping."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from kidym.eom.equations import Equations
from kidym.simulation.spec import RunOptions

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



def wants_jacobian(eq: Equations, options: RunOptions) -> bool:
    """Whether the compiled library of a run carries the analytic Jacobian
    (:func:`analytic_jacobian` of the run's method and ``jacobian`` option)."""
    return analytic_jacobian(eq, options.method, options.jacobian)


def analytic_jacobian(eq: Equations, method: str, jacobian: str = "auto") -> bool:
    """Whether a compiled library for ``method`` carries the analytic Jacobian: ``BDF``'s
    Newton matrix, unless ``jacobian="fd"`` or the model has controls (whose solve is
    not differentiated) or external inputs (whose derivatives are unknown). The
    library's cache key and its C depend on it: a run's build, ``auto``'s estimate and
    cache lookup, a batch and a study ask this one function."""
    return (METHOD_ALIASES.get(method, method) == "BDF" and jacobian != "fd"
            and eq.controls is None and not eq.inputs)


#: How the ARKODE methods produce the state at the output times (``output_mode``).
OUTPUT_MODES = {"hermite": 0, "step": 1, "extension": 2}

#: Embedding orders of ARKODE's built-in tables (the initial step uses them).
EMBEDDING_ORDER = {"Fehlberg78": 7, "ERK5": 4}


@functools.cache
def dop853_coefficients():
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
def erk8_table() -> np.ndarray:
    """``{s, q, p}`` and ``c, A, b, d`` of ``ERK8`` (see :func:`arkode_options`)."""
    dop = dop853_coefficients()

    s = dop.N_STAGES + 1
    A = np.zeros((s, s))
    A[:s - 1, :s - 1] = dop.A[:s - 1, :s - 1]
    A[s - 1, :s - 1] = dop.B
    c = np.r_[dop.C[:s - 1], 1.0]
    b = np.r_[dop.B, 0.0]
    d = b - dop.E5[:s]
    return np.concatenate([[s, 8.0, 5.0], c, A.ravel(), b, d])


@functools.cache
def erk8_extension() -> np.ndarray:
    """DOP853's continuous extension in the driver's layout (``driver.c``).

    Read from SciPy like the table: the three extra stages (``C[13:]``,
    ``A[13:, :16]``) and the 4 × 16 matrix ``D`` of the degree-7 polynomial, over the
    13 stages of :func:`erk8_table` (the last is ``f`` at the new solution) and the
    three extra ones.
    """
    dop = dop853_coefficients()

    n_all = dop.N_STAGES_EXTENDED
    s = dop.N_STAGES + 1
    ne = n_all - s
    return np.concatenate([[ne], dop.C[s:n_all], dop.A[s:n_all, :n_all].ravel(),
                           dop.D.ravel()])


def arkode_options(method: str, output_mode: str) -> np.ndarray | None:
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
    (``tests/simulation/test_compiled.py`` checks the order). With
    ``output_mode="extension"`` DOP853's continuous extension follows
    (:func:`erk8_extension`). ``None`` for CVODE's methods (``output_mode`` empty, see
    :func:`output_mode_of`).
    """
    if not output_mode:
        return None
    head = np.array([0.0, 0.0, float(EMBEDDING_ORDER.get(method, 0)),
                     float(OUTPUT_MODES[output_mode])])
    if method != "ERK8":
        return head
    table = erk8_table()
    head[:3] = table[:3]
    parts = [head, table[3:]]
    if output_mode == "extension":
        parts.append(erk8_extension())
    return np.concatenate(parts)


def output_mode_of(method: str, output_mode: str) -> str:
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
#: 1 (issue 28): ARKODE holds the ``rtol`` asked for. With 0.8 (``rtol^0.8``, looser) the
#: error of seed 001's virtual constraints (α = 1e4…1e6, a fast vibration over hundreds of
#: periods) was 48-144 × rtol at rtol 1e-6 and 90 × at 1e-9 (α = 1e6); with 1 it is at
#: most about 1.4 × rtol on every model of ``benchmarks/work_precision.py``, for 1.5-2 ×
#: the evaluations on smooth models. Not looser at tight ``rtol`` either, though ERK8 is
#: 1e-4…1e-1 × rtol on the chain and Andrews there: on seed 001 at α = 1e6 its error is
#: 1-1.4 × ARKODE's tolerance at every τ from 1e-6 to 1e-10 (``work_precision.py
#: --scan``), so handing ARKODE ``S·rtol`` puts that error at ``S·rtol``, and coming
#: within 2 × of ``Fehlberg78``'s steps on Andrews at rtol 1e-10 needs ``S`` ≈ 10 (issue 28).
ERK8_TOL_EXPONENT = 1.0


def erk8_tolerances(rtol: float, atol: float) -> tuple[float, float]:
    """ARKODE's tolerances for ``ERK8``, so that the delivered error follows ``rtol``.

    ARKODE holds the 5th-order error estimate (``∝ h⁶``) below its tolerance ``τ``,
    while the error of the 8th-order step goes like ``h⁹ ∝ τ^1.5``; DOP853's own
    estimate (5th and 3rd order combined, of order 7), which SciPy uses, is not
    linear and ARKODE 6.4 takes no other. Since issue 28 ``τ = rtol``
    (:data:`ERK8_TOL_EXPONENT`): the error falls like ``rtol^1.5`` and meets the
    tolerance asked for on the work-precision models. Before: ``τ = rtol^(2/3)`` made
    the error scale like ``rtol`` but with a constant that depends on the problem:
    1e-8 at rtol 1e-12 on a pendulum swinging from 2 rad (2.5e-9, 1250 × rtol ×
    amplitude; SciPy 6e-11); ``τ = rtol^0.8`` was at or below SciPy's DOP853 at every
    rtol from 1e-6 to 1e-12 on the examples (``docs/compiled.md``), but 48-144 × rtol
    on seed 001's virtual constraints. The method and its cost at a given *achieved*
    error are unchanged. ``atol`` is scaled by the same factor ``τ/rtol``.
    """
    inner = rtol ** ERK8_TOL_EXPONENT if rtol > 0 else rtol
    return inner, atol * (inner / rtol if rtol > 0 else 1.0)


#: Factor on the tolerances handed to CVODE for ``BDF`` (issue 28). CVODE holds each
#: step's local error estimate below ``rtol``; the global error that accumulates over
#: the run was 15-100 × ``rtol`` on the 8-link chain and Andrews' squeezer
#: (``benchmarks/work_precision.py``, ``rtol`` 1e-6…1e-12, analytic Jacobian; worst:
#: Andrews at 1e-9, 97 ×). CVODE is therefore asked for ``rtol × 1e-2``: the error is
#: then at most about ``rtol`` there, for 2-2.3 × the steps. Not enough on an undamped
#: fast vibration (seed 001's virtual constraints, α = 1e4…1e6): BDF's phase error
#: grows with the number of periods, 20-400 × ``rtol`` even so; ``ERK8`` (the
#: default) holds the tolerance there.
BDF_TOL_FACTOR = 1e-2
#: The same for CVODE's ``Adams``: its global error was 2-30 × ``rtol`` on the chain and
#: Andrews (worst: the chain at 1e-8), so CVODE is asked for ``rtol × 1e-1``; on the
#: virtual constraints it misses by hundreds of times even so.
ADAMS_TOL_FACTOR = 1e-1
#: The smallest ``rtol`` handed to CVODE: tighter asks are ignored by CVODE's own
#: floor (its unit roundoff times 100) and make it fail with ``CV_TOO_MUCH_ACC``.
CVODE_MIN_RTOL = 1e-14
#: Factor on the tolerances handed to SciPy's ``DOP853`` by the NumPy engine (issue 28;
#: :func:`scipy_tolerances`). SciPy holds DOP853's local error estimate below ``rtol``;
#: on seed 001's virtual constraints (an undamped fast vibration, α = 1e4…1e6, 1 s) the
#: error at the end was up to 140 × ``rtol`` (α = 1e5 at rtol 1e-6; α = 1e6: 72 × at
#: 1e-6, 38 × at 1e-9), against a compiled Fehlberg78 reference at rtol 1e-13. Handed
#: ``rtol × 1e-1`` it was still 12 × and 8.3 × at α = 1e6; handed ``rtol × 1e-2`` at most
#: about 1.5 × ``rtol`` on those models, the 8-link chain and Andrews' squeezer (rtol
#: 1e-6 and 1e-9), for 1.3-2 × the evaluations (``100^(1/8) ≈ 1.8`` for an eighth-order
#: method; ``python benchmarks/work_precision.py --numpy-factor``). ``atol`` is handed as
#: asked (unlike CVODE's): scaled too, it put a component crossing zero below the
#: rounding of DOP853's stages — seed 001's test 5 (the sphere, α = 5e4) at rtol 1e-10
#: and the default atol 1e-12, handed atol 1e-14, failed the error test 8 times in one
#: step at t = 0.77 s; handed 1e-12 it ran to the end within 3e-11 of the reference.
DOP853_TOL_FACTOR = 1e-2
#: The smallest ``rtol`` handed to SciPy: SciPy raises tighter asks to ``100 × eps``
#: with a warning.
SCIPY_MIN_RTOL = 100 * float(np.finfo(float).eps)


def solver_tolerances(method: str, rtol: float, atol: float) -> tuple[float, float]:
    """The tolerances handed to SUNDIALS for ``method`` at the requested ones.

    ``ERK8``: :func:`erk8_tolerances`; ``BDF`` and ``Adams``: ``rtol`` ×
    :data:`BDF_TOL_FACTOR` or :data:`ADAMS_TOL_FACTOR` (not below
    :data:`CVODE_MIN_RTOL`, nor above ``rtol``), ``atol`` by the same factor; the other
    methods: as asked.
    """
    if method == "ERK8":
        return erk8_tolerances(rtol, atol)
    factor = {"BDF": BDF_TOL_FACTOR, "Adams": ADAMS_TOL_FACTOR}.get(method)
    if factor is not None and rtol > 0:
        inner = min(rtol, max(rtol * factor, CVODE_MIN_RTOL))
        return inner, atol * inner / rtol
    return rtol, atol


def scipy_tolerances(method: str | type, rtol: float, atol: float) -> tuple[float, float]:
    """The tolerances the NumPy engine hands to SciPy's solver ``method`` (a name, or a
    solver class derived from SciPy's) at the requested ones.

    ``DOP853`` (the default): ``rtol`` × :data:`DOP853_TOL_FACTOR` (not below
    :data:`SCIPY_MIN_RTOL`, nor above ``rtol``), so that the delivered error is about
    ``rtol``, and ``atol`` as asked; the other SciPy methods: both as asked.
    """
    names = ({method} if isinstance(method, str)
             else {cls.__name__ for cls in getattr(method, "__mro__", ())})
    if "DOP853" in names and rtol > 0:
        return min(rtol, max(rtol * DOP853_TOL_FACTOR, SCIPY_MIN_RTOL)), atol
    return rtol, atol
