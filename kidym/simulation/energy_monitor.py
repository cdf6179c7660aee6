"""The energy monitor: a conservative run whose energy moves more than its tolerances
allow ends as a failure.

A run that leaves its motion — a closed loop that jumps to another branch at a singular
position, an integrator whose error estimate misses what happens within a step —
usually changes the energy ``E = T + Π`` by more than the requested tolerances explain.
The energy balance (:mod:`kidym.simulation.energy`) measures ``B(t) = E(t) − E(0) − W(t)``;
this module turns it into a monitor, one rule (:func:`monitor_run`) applied by
:func:`kidym.simulate` to the finished result of either engine (after
:func:`~kidym.simulation.finish.finish`), and by :func:`kidym.simulate_batch` and
:func:`kidym.sweep` (every executor, Dask's workers included) to each of their runs
that reaches its end: a run that trips fails alone, as it fails alone.

**Which runs.** Only runs whose work ``W`` is zero by the model's structure
(:func:`unmonitored_reason`): no explicit time, no external inputs (``ВХОДЫ``), no
controls (``НЕИЗВЕСТНЫЕ``), no damper, and every force element elastic with a constant
characteristic or a constant force on a position — the elements whose potential ``E``
includes. There ``B = E − E(0)`` (restarting after each reset of the state) needs no
quadrature. A model that exchanges work is not monitored: ``W`` is integrated over the
output times, and its quadrature error depends on how well the output times resolve
the power, not on the tolerances — an output grid that aliases a fast vibration
(``examples/virtual_constraints/test3_cycloid.kdm`` at 501 samples) gives a balance of
the order of the energy itself on a correct run. ``result.stats["energy_monitor"]``
says which case a run is, and why.

**The bound.** Each step of the integrator keeps its error in the state component ``y_i``
below ``rtol |y_i| + atol``. Such an error changes ``E`` by at most about

    ``δE = Σ_i |M w|_i (rtol |w_i| + atol) + Σ_j |F_j| (rtol |q_j| + atol)``

(``M w = ∂T/∂w``, the momenta; ``F``, the generalized forces, ``−∂Π/∂q`` up to velocity
terms), evaluated from the state at :data:`SAMPLES` output times at most
(:func:`tolerance_energy`). The run fails at the first output time ``t_k`` where

    ``|B(t_k)| > MARGIN · max_{j ≤ k} δE_j + ROUNDING · max_{j ≤ k} max(|E_j|, T_j)``

(the rounding term for tolerances near the precision of doubles; ``rtol`` at least
:data:`ALI3_RTOL` for a run that crossed singular positions by ``formulation="ali3"``).
:data:`MARGIN` is chosen from measurement: ``benchmarks/energy_monitor.py`` runs every
example and the tests' models in both engines at the default tolerances and at rtol
1e-6 … 1e-10 and prints the largest ``|B| / δE``; docs/output.md ("The energy monitor") states it.

**What it cannot see.** A branch jump that keeps the energy (the parallelogram four-bar
with a spring jumps with a clean balance, issue 27) is the passage monitor's
(:mod:`kidym.simulation.monitors`); a long run at a loose tolerance whose energy drifts by more
than ``MARGIN · δE`` is failed, as it should be: its energy is wrong by more
than it asked for. ``monitor_energy=False`` (``kidym run --no-energy-monitor``,
``kidym sweep --no-energy-monitor``) turns the monitor off.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.errors import SimulationError
from kidym.model.model import TIME
from kidym.simulation import faults
from kidym.simulation.energy import balance_unavailable, reset_starts
from kidym.simulation.result import Result

#: ``|B|`` may reach this many times the energy change one step's allowed error can make.
MARGIN = 100.0
#: Relative rounding floor of the bound (tolerances near the precision of doubles).
ROUNDING = 1e-11
#: A run that passed singular positions by ``formulation="ali3"`` (asked, or continued
#: into) is bounded as at this ``rtol`` at least: the bridges across the positions have
#: an accuracy of their own that ``rtol`` does not set (docs/benchmarks.md, "Closed loops
#: through singular positions": errors of 1e-7 … 1e-5 at rtol 1e-10): IFToMM A02's
#: energy after them moved more than ``MARGIN · δE`` of rtol 1e-12 on its branch.
ALI3_RTOL = 1e-10
#: Output times at which ``δE`` is evaluated at most (evenly strided, and the last;
#: between them the bound holds the running maximum): one evaluation of the equations
#: each, a small part of a run's cost.
SAMPLES = 101

HINT = ("the energy of this conservative model moved more than the tolerances allow: "
        "the run may have left its motion (a closed loop jumping to another branch at a "
        "singular position, an integrator whose error estimate missed a fast change). "
        "Look at the motion up to this time; tighten rtol/atol or limit max_step; for a "
        "loop through singular positions use formulation='ali3'; monitor_energy=False "
        "(kidym run --no-energy-monitor) turns this check off")


@dataclass(frozen=True)
class EnergyCheck:
    """What the energy monitor found in one run.

    Attributes
    ----------
    reason : str
        Why the run is not monitored, ``""`` where it is.
    ratio : float
        ``max |B| / bound`` over the samples checked (NaN when not monitored).
    k : int or None
        The first output index where ``|B|`` exceeds the bound.
    balance, bound : float
        ``B`` and the bound there (or at the largest ratio when none exceeds it).
    """

    reason: str
    ratio: float = float("nan")
    k: int | None = None
    balance: float = float("nan")
    bound: float = float("nan")

    def stats(self) -> dict:
        """The entry ``result.stats["energy_monitor"]``."""
        if self.reason:
            return {"monitored": False, "reason": self.reason}
        return {"monitored": True, "ratio": self.ratio, "margin": MARGIN,
                "tripped": self.k is not None}


#: Methods whose error test does not hold the requested tolerance on an undamped
#: vibration (docs/benchmarks.md, "Work and precision": the multistep methods miss it by
#: tens to thousands of times on seed 001's virtual constraints, SciPy's BDF and LSODA also
#: on smooth models at tight tolerances): their runs are not monitored, since a bound
#: derived from rtol would fail correct runs of theirs.
UNHELD_METHODS = frozenset({"BDF", "LSODA", "Adams"})

#: SymEngine functions that step (``floor``, ``ceil``, ``%``): an energy through them
#: jumps where the motion does not (the forces take their derivative, 0 between steps).
#: (``sign`` and conditionals are not listed: they build continuous potentials too — a
#: one-sided wall, ``abs`` — and a potential whose conditional jumps is failed rightly.)
_JUMPS = frozenset({"floor", "ceiling", "Mod"})


def unmonitored_reason(eq, method: str | None = None) -> str:
    """Why runs of ``eq`` (:class:`~kidym.eom.equations.Equations`) are not monitored,
    ``""`` where its work ``W`` is zero by its structure: no external inputs, no
    controls, no explicit time, and every element inertial (``J``), elastic (``C``)
    with a constant characteristic, or a constant force (``P``) on a coordinate or on a
    named position (no velocity) — the elements whose potential ``E`` includes."""
    if method in UNHELD_METHODS:
        return (f"the method {method} does not hold the requested tolerance on vibrations "
                "(docs/benchmarks.md, Work and precision)")
    if eq.inputs:
        return "the model has external inputs (ВХОДЫ): they do work"
    if eq.controls is not None:
        return "the model has controls (НЕИЗВЕСТНЫЕ): they do work"
    graph = eq.graph
    if any(graph.depends_on(x, TIME) for x in [*eq.roots(), eq.energy_named]):
        return "the model depends on time explicitly: its forces or motions do work"
    moving = _moves_with_time(eq.model)
    if moving:
        return (f"the body {moving} moves by a law of time (a rheonomic transform): what "
                "drives it does work")
    jumps = _jumping_function(graph, eq.energy_named)
    if jumps:
        return (f"the energy goes through `{jumps}`, a function that steps: it jumps where "
                "the motion does not")
    for el in eq.model.elements:
        label = f"`{el.name}.{el.coordinate}`"
        if el.kind == "D":
            return f"the damper {label} does work"
        if el.kind == "J":
            continue
        if not graph.is_constant(se.sympify(el.characteristic)):
            return f"the element {label} has a characteristic that is not constant"
        if el.kind == "P" and not _position(eq, el.coordinate):
            return (f"the force {label} is not known to have a potential (its coordinate "
                    "is a velocity, or a name the equations do not keep)")
    return ""


def _moves_with_time(model) -> str:
    """The name of a body one of whose transforms depends on time (directly or through
    the model's definitions), ``""`` where none does. (Its time may cancel from the
    equations, as a hoop turning at a constant rate about the vertical: the energy still
    changes by the work of what turns it.)"""
    defs = {d.name: d.expr for d in model.definitions}
    seen: dict[str, bool] = {}

    def timed(expr) -> bool:
        for s in se.sympify(expr).free_symbols:
            if s == TIME:
                return True
            name = str(s)
            if name in defs and name not in seen:
                seen[name] = False   # (a cycle reads as no time)
                seen[name] = timed(defs[name])
            if seen.get(name):
                return True
        return False

    for body in model.bodies:
        if any(timed(a) for tr in body.transforms for a in tr.args):
            return f"`{body.name}`"
    return ""


def _jumping_function(graph, energy) -> str:
    """A function that steps (:data:`_JUMPS`) in a formula that ``energy`` needs, ``""``
    where there is none."""
    for s in [*graph.needed([energy]), energy]:
        try:
            formula = graph.formula(s) if s is not energy else energy
        except (KeyError, ValueError):
            continue
        if formula is None:
            continue
        for f in se.sympify(formula).atoms(se.Function):
            if type(f).__name__ in _JUMPS:
                return str(f)
    return ""


def _position(eq, name: str) -> bool:
    """Whether ``name`` is a coordinate, or a named quantity of ``eq``'s graph that
    depends on no speed."""
    symbol = se.Symbol(name)
    if symbol in eq.coordinates:
        return True
    graph = eq.graph
    try:
        formula = graph.formula(symbol)
    except (KeyError, ValueError):
        return False
    return formula is not None and not any(graph.depends_on(symbol, w) for w in eq.speeds)


def tolerance_energy(system, eq, t: np.ndarray, values: dict, p: np.ndarray,
                     rtol: float, atol: float) -> tuple[np.ndarray, np.ndarray]:
    """``(δE, T)`` at the output times ``t``: the change of ``E`` that an error of
    ``rtol |y_i| + atol`` in every state component can make, and the kinetic energy
    ``½ wᵀ M w`` (both NaN where the system cannot be evaluated). The equations are
    evaluated at :data:`SAMPLES` of the times at most, in one call of the system's
    ``dynamics_many`` where it has one (the compiled engine's), else state by state."""
    names_q = [str(q) for q in eq.coordinates]
    names_w = [str(w) for w in eq.speeds]
    n_q, n_w = len(names_q), len(names_w)
    q_all = np.array([values[n] for n in names_q], float).reshape(n_q, len(t))
    w_all = np.array([values[n] for n in names_w], float).reshape(n_w, len(t))
    delta = np.full(len(t), np.nan)
    kinetic = np.full(len(t), np.nan)
    step = max(1, -(-len(t) // SAMPLES))
    ks = np.array(sorted({*range(0, len(t), step), len(t) - 1}), dtype=int)
    Q, W = q_all[:, ks].T, w_all[:, ks].T                  # (K, n_q), (K, n_w)
    M, F = _dynamics_at(system, np.asarray(t, float)[ks], np.hstack([Q, W]), p, n_w)
    momenta = np.einsum("kij,kj->ki", M, W)
    dq = rtol * np.abs(Q) + atol
    force = (np.sum(np.abs(F) * dq, axis=1) if n_q == n_w
             else np.sum(np.abs(F), axis=1) * np.max(dq, axis=1, initial=0.0))
    delta[ks] = np.sum(np.abs(momenta) * (rtol * np.abs(W) + atol), axis=1) + force
    kinetic[ks] = 0.5 * np.sum(W * momenta, axis=1)
    return delta, kinetic


def _dynamics_at(system, t: np.ndarray, Y: np.ndarray, p: np.ndarray, n_w: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(M, F[:n_w])`` at the states of ``Y`` (rows), shapes (K, n_w, n_w), (K, n_w);
    NaN at a state where the system cannot be evaluated."""
    many = getattr(system, "dynamics_many", None)
    if many is not None:
        _qdot, M, F = many(t, Y, p)
        return M, F[:, :n_w]
    M = np.full((len(t), n_w, n_w), np.nan)
    F = np.full((len(t), n_w), np.nan)
    for k in range(len(t)):
        try:
            _qdot, Mk, Fk = system.dynamics(float(t[k]), Y[k], p)
        except (SimulationError, ArithmeticError, ValueError):
            continue
        M[k] = np.asarray(Mk, float)
        F[k] = np.asarray(Fk, float)[:n_w]
    return M, F


def _running(x: np.ndarray) -> np.ndarray:
    """Running maximum of ``x``, NaN entries taking the value before them (0 at first)."""
    filled = np.where(np.isfinite(x), x, 0.0)
    return np.maximum.accumulate(filled) if filled.size else filled


def check_energy(result: Result, eq, system, p: np.ndarray, *, rtol: float,
                 atol: float, reason: str | None = None,
                 method: str | None = None) -> EnergyCheck:
    """Apply the monitor's rule (module docstring) to a finished ``result``;
    ``reason``: :func:`unmonitored_reason` of ``eq`` where the caller has it already
    (the runs of a batch or a study share it)."""
    unavailable = balance_unavailable(result)   # (W = 0: no quadrature of the work)
    if unavailable is None:
        return EnergyCheck("the run records no energy balance (a model with its own "
                           "`energy` output)")
    if unavailable:
        return EnergyCheck(f"no energy balance: {unavailable}")
    reason = unmonitored_reason(eq, method) if reason is None else reason
    if reason:
        return EnergyCheck(reason)
    missing = [str(x) for x in (*eq.coordinates, *eq.speeds) if str(x) not in result.values]
    if missing:
        return EnergyCheck(f"the run does not record {', '.join(missing)}")
    t = np.asarray(result.t, float)
    energy = np.asarray(result.values["energy"], float)
    drift = np.empty_like(energy)   # W = 0: B = E − E(start), between resets
    starts = reset_starts(result)
    for a, b in zip(starts, [*starts[1:], t.size]):
        drift[a:b] = energy[a:b] - energy[a]
    if "ali3" in str((result.stats.get("constraint_drift") or {}).get("formulation", "")):
        rtol = max(rtol, ALI3_RTOL)   # the bridges' accuracy is their own
    delta, kinetic = tolerance_energy(system, eq, t, result.values, p, rtol, atol)
    if not np.any(np.isfinite(delta)):
        return EnergyCheck("the equations could not be evaluated at the output times")
    scale = _running(np.fmax(np.abs(energy), np.where(np.isfinite(kinetic), kinetic, 0.0)))
    bound = MARGIN * _running(delta) + ROUNDING * scale
    B = np.abs(drift)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(bound > 0, B / bound, np.where(B > 0, np.inf, 0.0))
    over = np.flatnonzero(ratios > 1.0)
    k = int(over[0]) if over.size else None
    at = k if k is not None else int(np.argmax(ratios))
    return EnergyCheck("", ratio=float(np.max(ratios)), k=k,
                       balance=float(drift[at]), bound=float(bound[at]))


def energy_failure(result: Result, check: EnergyCheck) -> tuple[Result, SimulationError]:
    """``(result up to the first excess, its error)`` for a check that tripped."""
    k = check.k
    assert k is not None
    t = np.asarray(result.t, float)
    state = {n: float(result.values[n][k]) for n in result.state_names}
    error = SimulationError(
        f"the energy left its bound at t = {t[k]:.10g}: E - E(0) = "
        f"{check.balance:.3g} where the tolerances allow {check.bound:.3g} (the energy of a "
        "conservative model must stay constant to within the integrator's error)",
        time=float(t[k]), state=state, hint=HINT, kind=faults.ENERGY)
    stats = dict(result.stats)
    events = stats.get("events")
    if isinstance(events, dict) and "t" in events:
        times = np.asarray(events["t"], float)
        keep = times <= t[k]
        stats["events"] = {key: (np.asarray(v)[keep] if np.shape(v)[:1] == times.shape
                                 else v) for key, v in events.items()}
    cut = dataclasses.replace(
        result, t=t[:k + 1], values={n: np.asarray(v)[:k + 1] for n, v in result.values.items()},
        success=False, status=-1, message=str(error), stats=stats,
        failure=error.to_dict())
    return cut, error


def monitor_run(result: Result, eq, system, p: np.ndarray, *, rtol: float, atol: float,
                reason: str | None = None, method: str | None = None
                ) -> tuple[Result, EnergyCheck, SimulationError | None]:
    """The monitor applied to one finished run that reached its end, as every entry
    point applies it (:func:`kidym.simulate`, :func:`kidym.simulate_batch`,
    :func:`kidym.sweep`): ``(result, check, error)`` — ``result`` with
    ``stats["energy_monitor"]`` and ``error`` ``None``, or, where the check tripped,
    the result cut at the first output time past the bound and its error."""
    check = check_energy(result, eq, system, p, rtol=rtol, atol=atol, reason=reason,
                         method=method)
    result.stats["energy_monitor"] = check.stats()
    if check.k is None:
        return result, check, None
    cut, error = energy_failure(result, check)
    return cut, check, error
