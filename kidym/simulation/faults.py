"""Runtime faults of a simulation: what went wrong, where, and what to try.

Both engines end a failed run the same way. The engine reports what it saw — a
right-hand side that is not finite or a singular mass matrix at some stage, a
step size that collapsed, events that accumulate — as a :class:`Fault` at the
time and state where it happened (the solver's own time, not the last output
time); :func:`diagnose` then names the cause from that state, in this order:

1. a body's quaternion has (nearly) vanished (:data:`QUATERNION`);
2. the mass matrix is (nearly) singular there (:data:`SINGULAR`): its smallest
   eigenvalue, scaled by its diagonal at the start, is below
   :data:`SINGULAR_RATIO` of the largest at the start — a kinematic singularity
   (an angle sequence at gimbal lock) or a vanishing mass or moment;
3. the motion blows up (:data:`BLOW_UP`): a state is not finite or has grown
   :data:`BLOW_UP_FACTOR` times beyond the largest initial value (at least 1);
4. otherwise what the engine saw: :data:`NON_FINITE`, :data:`STEP_COLLAPSE`,
   :data:`EVENT_STORM` or :data:`INTEGRATOR`.

The result is a :class:`~kidym.errors.SimulationError` carrying the time, the
state by name, the kind and a hint; the engines attach the partial result up to
the fault to it (``error.result``, marked ``result.partial``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kidym.eom.events import STIFF_METHODS, STORM_HINT, ZENO_RUN, ZENO_TOLERANCE
from kidym.errors import SimulationError

#: Kinds of runtime fault (``SimulationError.kind``, ``result.failure["kind"]``).
NON_FINITE = "non-finite"
BLOW_UP = "blow-up"
SINGULAR = "singular-mass-matrix"
STEP_COLLAPSE = "step-size-collapse"
EVENT_STORM = "event-storm"
QUATERNION = "quaternion-norm-collapse"
INTEGRATOR = "integrator-failure"
#: the constraints' Jacobian lost rank (dependent constraints, a locking position) or
#: the state could not be projected back onto them
CONSTRAINTS = "constraint-failure"
#: stopped on request (Ctrl-C, :mod:`kidym.simulation.watch`): nothing failed
INTERRUPTED = "interrupted"
#: the energy of a conservative run moved more than its tolerances allow
#: (:mod:`kidym.simulation.energy_monitor`)
ENERGY = "energy-balance"
KINDS = (NON_FINITE, BLOW_UP, SINGULAR, STEP_COLLAPSE, EVENT_STORM, QUATERNION, INTEGRATOR,
         CONSTRAINTS, INTERRUPTED, ENERGY)

#: A quaternion whose norm falls below this has collapsed (the rotation is ``Λ/|Λ|``).
QUATERNION_COLLAPSE = 1e-3
#: Smallest eigenvalue of the diagonally scaled mass matrix, relative to the largest
#: at the start, below which the mass matrix is called (nearly) singular.
SINGULAR_RATIO = 1e-8
#: Growth of the state beyond its initial scale that is called a blow-up.
BLOW_UP_FACTOR = 1e6

#: What to try when the constraint Jacobian loses rank during a run.
LOCKING_HINT = ("the mechanism passes a singular (dead-centre, locking or branching) "
                "position here, where its loop's constraints stop being independent: check "
                "the dimensions and the initial position, or end the run before it (t_end)")

HINTS = {
    NON_FINITE: "look for a formula undefined at this state (sqrt or log of a negative, "
                "division by zero) or a force singular at this time; shorten t_end",
    BLOW_UP: "a force grows with the motion without bound (a spring of the wrong sign, "
             "a force like x^2) or is singular at this time: check the forces near this "
             "state, or end the run earlier (t_end)",
    SINGULAR: "look for a zero mass or moment of inertia about an axis that a speed "
              "turns, or a kinematic singularity of the coordinates at this state (an "
              "angle sequence at gimbal lock: use a quaternion, QUATERNION := Q(l0, l1, "
              "l2, l3), …; a coordinate whose motion folds here); a coordinate that "
              "carries no mass, or two whose motions move the same (massless telescopic "
              "parts in line: docs/language.md §2.4d)",
    STEP_COLLAPSE: "the system may be stiff or discontinuous here: try a stiff method "
                   "(method='BDF', both engines, or 'Radau' in the NumPy engine; kidym "
                   "run --method BDF), a smaller max_step, looser rtol/atol, or check the "
                   "model for a force that is discontinuous or singular at this time",
    QUATERNION: "a body's quaternion must not vanish: give it a non-zero initial value "
                "(e.g. l0 = 1, l1 = l2 = l3 = 0) and check the resets that set it; "
                "against slow drift use quaternion_stabilization or tighter rtol/atol",
    INTEGRATOR: "use a stiff method (method='BDF', or 'Radau' in the NumPy engine), "
                "loosen rtol/atol, or check the model near this state",
}
#: The hint of a collapsed step in a run of a stiff method (``{method}``), which is not
#: told to try one.
STIFF_STEP_COLLAPSE = ("the system may be discontinuous here ({method} is already a stiff "
                       "method): try a smaller max_step, looser rtol/atol, or check the "
                       "model for a force that is discontinuous or singular at this time")


@dataclass(frozen=True)
class Fault:
    """What an engine saw when it stopped, before :func:`diagnose` names the cause.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`: what the engine observed.
    detail : str
        The engine's words (the formula error, the SUNDIALS flag, the events).
    t : float
        Where it happened: the stage time of a failed evaluation, else the solver's time.
    y : ndarray, shape (n_y,)
        The state there.
    hint : str
        What to try, when the engine knows better than :data:`HINTS`.
    """

    kind: str
    detail: str
    t: float
    y: np.ndarray
    hint: str = ""


def quaternion_indices(state_names: Sequence[str], model) -> dict[str, list[int]]:
    """State indices of the quaternion ``Q(λ0…λ3)`` of each body of ``model`` that has one."""
    index = {n: i for i, n in enumerate(state_names)}
    groups: dict[str, list[int]] = {}
    for body in model.bodies:
        for tr in body.transforms:
            if tr.kind == "Q" and all(str(a) in index for a in tr.args):
                groups[body.name] = [index[str(a)] for a in tr.args]
    return groups


#: How far from 1 the norm of an initial quaternion may be (values written with six
#: digits, 0.707107, are within 1e-6).
QUATERNION_NORM_TOLERANCE = 1e-6


def check_initial_quaternions(state_names: Sequence[str], model, y0: np.ndarray) -> None:
    """Raise ``ValueError`` if a body's initial quaternion is not a unit quaternion.

    A rotation is a unit quaternion; a run from ``|Λ| = 2`` is not the motion of any
    rotation the user meant (it was accepted with a hint to tighten tolerances). Not
    normalised silently: the values given are wrong, and the message says how to fix
    them. A zero quaternion is left to the run's own fault (:data:`QUATERNION`).
    """
    for body, idx in quaternion_indices(state_names, model).items():
        values = np.asarray(y0, float)[list(idx)]
        norm = float(np.sqrt(np.sum(values**2)))
        if norm > 0 and abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
            given = ", ".join(f"{state_names[i]} = {v:.6g}" for i, v in zip(idx, values))
            unit = ", ".join(f"{state_names[i]} = {v / norm:.6g}" for i, v in zip(idx, values))
            raise ValueError(f"the initial quaternion of body `{body}` ({given}) has norm "
                             f"{norm:.6g}; a rotation is a unit quaternion (norm 1): give "
                             f"{unit}")


def _scaled_eigenvalues(M: np.ndarray, scale: np.ndarray) -> np.ndarray:
    S = M / np.sqrt(np.outer(scale, scale))
    return np.linalg.eigvalsh(0.5 * (S + S.T))


def singularity(M: np.ndarray, M0: np.ndarray) -> float:
    """Smallest eigenvalue of ``M`` over the largest of ``M0``, both scaled by ``diag(M0)``.

    Near 0 (or negative) where ``M`` is (nearly) singular; about 1 for a well-scaled
    mass matrix that has not changed since the start. Zero diagonal entries of ``M0``
    scale by 1.
    """
    M, M0 = np.atleast_2d(M), np.atleast_2d(M0)
    d = np.abs(np.diag(M0)).astype(float)
    d[~(d > 0) | ~np.isfinite(d)] = 1.0
    top = float(_scaled_eigenvalues(M0, d).max())
    low = float(_scaled_eigenvalues(M, d).min())
    return low / top if top > 0 else low


def interrupted(t: float, state: Mapping[str, float]) -> SimulationError:
    """The error of a run stopped on request (Ctrl-C) at model time ``t``: its partial
    result is kept, as a failed run's (``kind`` :data:`INTERRUPTED`)."""
    return SimulationError("interrupted (Ctrl-C)", time=t, state=dict(state),
                           kind=INTERRUPTED,
                           hint="the results up to this time are kept; run again to go on")


def diagnose(fault: Fault, *, state_names: Sequence[str], t0: float, y0: np.ndarray,
             mass: Callable[[float, np.ndarray], np.ndarray] | None = None,
             groups: Mapping[str, Sequence[int]] | None = None,
             method: str = "", speed_names: Sequence[str] = (),
             constrained: bool = False) -> SimulationError:
    """The :class:`SimulationError` for ``fault``: its cause named from the state.

    Parameters
    ----------
    fault : Fault
        What the engine saw, where.
    state_names : sequence of str
        Names of ``y``.
    t0, y0 : float and ndarray
        The start (the scale of the mass matrix and of the state).
    mass : callable, optional
        ``mass(t, y) -> M``; may raise or return non-finite values (then not used).
    groups : mapping of str to index lists, optional
        Quaternion state indices by body (:func:`quaternion_indices`).
    method : str
        The integration method, named in an integrator failure.
    speed_names : sequence of str
        Names of the rows of ``M`` (the independent speeds): a singular mass matrix
        names the motion of the speeds that moves no mass (:func:`massless_motion`).
    constrained : bool
        Whether the model has constraints: a singular augmented system whose mass
        matrix is regular there is the constraint Jacobian's loss of rank (a loop at a
        singular position), not a mass that vanished.

    Returns
    -------
    SimulationError
        With ``time``, ``state``, ``kind`` and ``hint``.
    """
    y = np.asarray(fault.y, dtype=float)
    state = dict(zip(state_names, y.tolist()))

    def error(kind: str, message: str, hint: str = "") -> SimulationError:
        if not hint and kind == STEP_COLLAPSE and method in STIFF_METHODS:
            hint = STIFF_STEP_COLLAPSE.format(method=method)
        return SimulationError(message, time=float(fault.t), state=state, kind=kind,
                               hint=hint or HINTS.get(kind, ""))

    if fault.kind == INTERRUPTED:
        return interrupted(float(fault.t), state)
    if fault.kind in (EVENT_STORM, CONSTRAINTS):
        return error(fault.kind, fault.detail, fault.hint)
    non_finite = _non_finite(fault, state, y, t0, None, speed_names)
    if non_finite is not None:
        return error(NON_FINITE, *non_finite)
    for body, idx in (groups or {}).items():
        norm = float(np.sqrt(np.sum(y[list(idx)] ** 2)))
        if not norm >= QUATERNION_COLLAPSE:
            names = ", ".join(state_names[i] for i in idx)
            return error(QUATERNION, f"the quaternion of body `{body}` has collapsed "
                                     f"(|Λ| = {norm:.3g}, from {names})")
    non_finite = _non_finite(fault, state, y, t0, mass, speed_names)
    if non_finite is not None:
        return error(NON_FINITE, *non_finite)
    if fault.kind == SINGULAR and constrained and _regular(mass, fault.t, y, t0, y0):
        from kidym.eom.constraints import LOST_RANK

        return error(CONSTRAINTS, LOST_RANK, LOCKING_HINT)
    if fault.kind == SINGULAR:
        return error(SINGULAR, "the mass matrix is singular"
                     + _massless_note(mass, fault.t, y, speed_names),
                     _null_speeds_hint(mass, fault.t, y, state_names))
    ratio = _singularity_at(mass, fault.t, y, t0, y0)
    if ratio is not None and ratio < SINGULAR_RATIO:
        return error(SINGULAR, f"the mass matrix is nearly singular (its smallest "
                               f"eigenvalue is {max(ratio, 0.0):.2g} of its scale at the "
                               "start)" + _massless_note(mass, fault.t, y, speed_names),
                     _null_speeds_hint(mass, fault.t, y, state_names))
    scale = max(1.0, float(np.max(np.abs(y0), initial=0.0)))
    big = [i for i, v in enumerate(y) if not abs(v) <= BLOW_UP_FACTOR * scale]
    if big:
        i = max(big, key=lambda k: abs(y[k]) if np.isfinite(y[k]) else np.inf)
        return error(BLOW_UP, f"the motion blows up ({state_names[i]} = {y[i]:.3g}, while "
                              f"the initial state is within ±{scale:.3g})")
    if fault.kind == NON_FINITE:
        return error(NON_FINITE, fault.detail or "the right-hand side is not finite")
    if fault.kind == STEP_COLLAPSE:
        return error(STEP_COLLAPSE, f"the step size collapsed ({fault.detail})", fault.hint)
    return error(INTEGRATOR, f"the integrator{f' ({method})' if method else ''} failed: "
                             f"{fault.detail}")


def _non_finite(fault: Fault, state: Mapping[str, float], y: np.ndarray, t0: float,
                mass, speed_names: Sequence[str]) -> tuple[str, str] | None:
    """``(message, hint)`` when the state, or the mass matrix at it, holds NaN or
    infinity: which values, and where they come from (a NaN initial value made the
    compiled engine report a singular mass matrix, a parameter of 1e308 an infinite
    one; both were blamed on zero masses or gimbal lock)."""
    bad = [f"{n} = {v}" for n, v in state.items() if not np.isfinite(v)]
    if bad:
        shown = ", ".join(bad[:6]) + (f", … ({len(bad)} values)" if len(bad) > 6 else "")
        if float(fault.t) == float(t0):
            return (f"the initial state is not finite ({shown})",
                    "give finite initial values (--initial, INITIAL) and parameters (--set)")
        return (f"non-finite values were produced ({shown})", HINTS[NON_FINITE])
    if mass is None:
        return None
    try:
        with np.errstate(all="ignore"):
            M = np.atleast_2d(np.asarray(mass(fault.t, y), float))
    except (SimulationError, ArithmeticError, ValueError, TypeError):
        return None
    if np.all(np.isfinite(M)):
        return None
    names = list(speed_names) if len(speed_names) == M.shape[0] else [
        str(k) for k in range(M.shape[0])]
    entries = [f"M[{names[i]}, {names[j]}] = {M[i, j]}"
               for i, j in zip(*np.nonzero(~np.isfinite(M))) if i <= j]
    shown = ", ".join(entries[:4]) + (", …" if len(entries) > 4 else "")
    return (f"the mass matrix has non-finite entries at this state ({shown})",
            "a parameter or an initial value too large for floating point (beyond about "
            "1e154 squared overflows: a length of 1e308), or a formula of the inertia "
            "undefined here: check --set, --initial and the bodies' records")


def null_speeds(M: np.ndarray, speed_names: Sequence[str], *,
                tolerance: float = 1e-12) -> list[str]:
    """The speeds along which ``M`` has no inertia: those taking part in the null
    vectors of ``M`` (eigenvalues below ``tolerance`` of the largest).

    Parameters
    ----------
    M : ndarray, shape (n_w, n_w)
        A mass matrix.
    speed_names : sequence of str
        Names of the speeds, in the order of ``M``.
    tolerance : float
        Relative size of an eigenvalue taken as zero.

    Returns
    -------
    list of str
        In the order of ``speed_names``; empty when ``M`` has no null vector (or is
        not a finite square matrix of that size).
    """
    M = np.asarray(M, dtype=float)
    if M.shape != (len(speed_names),) * 2 or not M.size or not np.all(np.isfinite(M)):
        return []
    values, vectors = np.linalg.eigh((M + M.T) / 2)
    scale = float(np.max(np.abs(values)))
    null = vectors[:, np.abs(values) <= tolerance * scale] if scale > 0 else vectors
    if not null.size:
        return []
    weight = np.sqrt(np.sum(null**2, axis=1))
    return [name for name, w in zip(speed_names, weight) if w > 1e-6]


def _null_speeds_hint(mass, t: float, y: np.ndarray, state_names: Sequence[str]) -> str:
    """The hint of a singular mass matrix that names the speeds without inertia
    (the generic hint where ``M`` cannot be evaluated or none is found)."""
    if mass is None or not np.all(np.isfinite(y)):
        return HINTS[SINGULAR]
    try:
        M = np.asarray(mass(t, y), float)
    except (SimulationError, ArithmeticError, ValueError):
        return HINTS[SINGULAR]
    n_w = M.shape[0] if M.ndim == 2 else 0
    names = null_speeds(M, list(state_names)[len(state_names) - n_w:]) if n_w else []
    if not names:
        return HINTS[SINGULAR]
    shown = ", ".join(names[:6]) + (f", … ({len(names)} speeds)" if len(names) > 6 else "")
    return (f"no inertia along the speeds {shown}: a body that only they move has a zero "
            "mass or moment about that axis here. Give it one, or write the limit model "
            "without these speeds (a massless part: its coordinate follows from the "
            "others or drops out); or a kinematic singularity of the coordinates at this "
            "state (an angle sequence at gimbal lock: use a quaternion)")


def massless_motion(M: np.ndarray, names: Sequence[str]) -> list[tuple[str, float]]:
    """The motion of the speeds that moves (nearly) no mass: ``M``'s null direction.

    The eigenvector of the smallest eigenvalue of ``M`` scaled by its diagonal (zero
    diagonal entries scale by 1), back in the speeds and normalised to a largest
    component of 1; the components above 1e-3 of it, largest first, with the speeds'
    names. A coordinate that carries no mass is the motion of its speed alone; two
    massless telescopic parts in line (seed 004's links) are ``ξ' = −η'``.
    """
    M = np.atleast_2d(np.asarray(M, float))
    d = np.abs(np.diag(M)).copy()
    d[~(d > 0) | ~np.isfinite(d)] = 1.0
    s = 1.0 / np.sqrt(d)
    _, vecs = np.linalg.eigh(0.5 * (M + M.T) * np.outer(s, s))
    v = vecs[:, 0] * s
    # normalised by its first largest component in the speeds' order, the components
    # largest first and equal ones in that order: equal magnitudes (ξ' = −η') come out
    # the same whichever the rounding made a hair larger
    mag = np.abs(v)
    first = int(np.flatnonzero(mag >= mag.max() * (1.0 - 1e-6))[0])
    v = v / v[first]
    order = sorted(range(len(v)), key=lambda k: (-round(float(abs(v[k])), 6), k))
    return [(names[k], float(v[k])) for k in order if abs(v[k]) > 1e-3]


def _massless_note(mass, t: float, y: np.ndarray, names: Sequence[str]) -> str:
    """``: no mass moves with …`` naming :func:`massless_motion`, or ``""``."""
    if mass is None or not names or not np.all(np.isfinite(y)):
        return ""
    try:
        M = np.asarray(mass(t, y), float)
    except (SimulationError, ArithmeticError, ValueError):
        return ""
    if M.shape != (len(names), len(names)) or not np.all(np.isfinite(M)):
        return ""
    values = np.abs(np.linalg.eigvalsh(0.5 * (M + M.T)))
    if np.sum(values <= 1e-12 * values.max(initial=0.0)) > 1:
        return ""   # more than one massless motion: the hint names the speeds they take
    motion = massless_motion(M, names)
    if len(motion) == 1:
        return f": at this state no mass moves with the speed {motion[0][0]}"
    terms = " ".join(f"{'-' if c < 0 else '+'} {abs(c):.3g}*{n}" for n, c in motion[:6])
    terms = terms[2:] if terms.startswith("+ ") else terms
    more = ", …" if len(motion) > 6 else ""
    return f": at this state the motion {terms}{more} of the speeds moves no mass"


def _regular(mass, t: float, y: np.ndarray, t0: float, y0: np.ndarray) -> bool:
    """Whether the mass matrix at ``(t, y)`` is positive definite and not nearly
    singular (:data:`SINGULAR_RATIO`)."""
    ratio = _singularity_at(mass, t, y, t0, y0)
    return ratio is not None and ratio >= SINGULAR_RATIO


def _singularity_at(mass, t: float, y: np.ndarray, t0: float, y0: np.ndarray) -> float | None:
    """:func:`singularity` of the mass matrix at ``(t, y)``, or ``None`` where either
    mass matrix cannot be evaluated."""
    if mass is None or not np.all(np.isfinite(y)):
        return None
    try:
        M, M0 = np.asarray(mass(t, y), float), np.asarray(mass(t0, y0), float)
    except (SimulationError, ArithmeticError, ValueError):
        return None
    if not (M.size and np.all(np.isfinite(M)) and np.all(np.isfinite(M0))):
        return None
    return singularity(M, M0)


# --------------------------------------------------------------- event accumulation
# (ZENO_RUN and ZENO_TOLERANCE: kidym.eom.events, the one definition both engines use)


class ZenoWatch:
    """Watches event instants for accumulation (Zeno behaviour: a bouncing ball at rest).

    The same test runs in the compiled driver (``driver.c``, ``kd_zeno``): after
    :data:`ZENO_RUN` intervals in a row, each shorter than the one before, with
    ratio ``r`` of the last two, the remaining time to the accumulation point
    ``d·r/(1-r)`` is estimated; below :data:`ZENO_TOLERANCE` of the time scale the
    events accumulate.

    Parameters
    ----------
    span : float
        ``t_end - t_start``.
    """

    def __init__(self, span: float) -> None:
        self.span = float(span)
        self.last: list[float] = []      # the last two distinct instants
        self.run = 0                     # intervals in a row, each shorter than before
        self.run_start = 0.0             # first instant of that run
        self.run_events = 0              # events at the instants of the run

    def add(self, t: float, n_events: int = 1) -> float | None:
        """Record ``n_events`` events at instant ``t``; the accumulation time when they
        accumulate, else ``None``."""
        if self.last and t <= self.last[-1]:
            self.run_events += n_events
            return None
        t_inf = None
        if len(self.last) == 2:
            d1, d2 = self.last[1] - self.last[0], t - self.last[1]
            if d2 < d1:
                self.run += 1
                r = d2 / d1
                remaining = d2 * r / (1.0 - r)
                scale = max(self.span, abs(t))
                if self.run >= ZENO_RUN and remaining < ZENO_TOLERANCE * scale:
                    t_inf = t + remaining
            else:
                self.run = 0
        if self.run == 0:
            self.run_start, self.run_events = (self.last[-1], 0) if self.last else (t, 0)
        self.run_events += n_events
        self.last = [*self.last[-1:], t]
        return t_inf


def zeno_fault(names: Sequence[str], t: float, y: np.ndarray, *, count: int,
               window_start: float, t_inf: float) -> Fault:
    """The :data:`EVENT_STORM` fault of accumulating events (both engines)."""
    which = ", ".join(dict.fromkeys(names))
    detail = (f"events ({which}) fire {count} times in {t - window_start:.3g} time units, "
              f"ever closer (an event storm, Zeno behaviour): they accumulate at "
              f"t ≈ {t_inf:.9g}")
    hint = ("the motion has infinitely many events before that time (a bouncing ball "
            "coming to rest): stop the run there with a terminal event (e.g. on the "
            "rebound speed falling below a threshold), or model the resting contact; "
            + STORM_HINT)
    return Fault(EVENT_STORM, detail, t, y, hint)
