"""The minimal form of a model with holonomic constraints, by coordinate partitioning.

With ``m`` holonomic constraints ``Φ(q, t) = 0`` on ``n`` coordinates whose speeds are
their rates (``q̇ = w``), the coordinates are split, by column-pivoted QR of the
constraint Jacobian ``G = Φ_q`` at the current state, into ``m`` *dependent* ones
(the pivots: ``G_D``, the columns they take, is as well conditioned as the greedy
choice makes it) and ``f = n − m`` *independent* ones ``u`` with speeds ``v``. The ODE
integrated is in ``z = [u, v]`` only (Wehage and Haug's generalized coordinate
partitioning). At every right-hand-side evaluation:

1. the dependent coordinates are recovered by Newton on ``Φ(q_D; u, t) = 0`` (started
   from the last solution), the dependent speeds from ``Φ̇ = G w + g = 0``:
   ``w_D = −G_D⁻¹ (G_I v + g)``;
2. the speeds are ``w = R v + r`` with the *partition matrix*
   ``R = [I; −G_D⁻¹ G_I]`` (rows in the order of the coordinates; ``G R = 0``: its
   columns span the null space of ``G``), and the accelerations ``ẇ = R v̇ + s`` with
   ``s_I = 0``, ``s_D = G_D⁻¹ γ`` (from ``G ẇ = γ``);
3. the equations ``M ẇ = F + Gᵀλ`` are projected by ``Rᵀ``, which removes the
   multipliers (``Rᵀ Gᵀ = 0``) — the analogue for closed loops of seed 000's second
   stage ``U = Bᵀ U_hol`` (eq. (17)), with ``R`` in the role of ``B``:

       Rᵀ M R v̇ = Rᵀ (F − M s).

The partition degrades as the mechanism approaches a position where the chosen
dependent coordinates cannot follow the independent ones (``G_D`` singular: the
four-bar's rocker angle taken as independent at the rocker's reversal). The condition
number of ``G_D`` is watched as an event of the integration; where it exceeds
:attr:`Partitioning.condition` the run stops there, chooses a new partition at that
state and restarts (``result.stats["constraint_drift"]["repartitions"]``).

The multipliers, the outputs and the drift are computed on the full state, by the
same functions as the augmented route.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from kidym.eom.constraints import choose_dependent
from kidym.errors import SimulationError
from kidym.simulation import faults
from kidym.simulation.monitors import PASSAGE_RATIO, singular_ratio

#: The routes for a model with constraints (``kidym.simulate(…, formulation=…)``).
FORMULATIONS = ("augmented", "minimal", "ali3")
#: Newton iterations allowed per recovery of the dependent coordinates.
MAX_NEWTON = 20


class DegradedError(Exception):
    """Inside a step: the dependent coordinates cannot be recovered (Newton failed), or
    ``G_D`` is far past the condition limit. The step is abandoned and the run goes on
    from the last accepted state with a new partition (or a shorter step)."""

    def __init__(self, t: float, y: np.ndarray, detail: str) -> None:
        super().__init__(detail)
        self.t, self.y, self.detail = t, y, detail


#: Inside a step, ``G_D`` conditioned worse than this many times the limit abandons it.
HARD_FACTOR = 100.0
#: Abandoned steps in a row (each restarting shorter) before the run fails.
MAX_RETRIES = 12


@dataclass(frozen=True)
class Partitioning:
    """Options of the minimal route (``formulation=Partitioning(…)``).

    Attributes
    ----------
    condition : float
        Largest condition number (2-norm) of the dependent block ``G_D`` of the
        constraint Jacobian before the partition is chosen anew (default 100: Newton on
        the dependent coordinates and the solve for their speeds then lose at most two
        digits). After a re-partition at a state where no choice does better, the limit
        of that stretch is twice the condition there.
    independent : tuple of str
        Coordinates to start with as the independent ones (``n − m`` names; default:
        chosen by pivoting). Where they degrade, the partition is chosen by pivoting.
    """

    condition: float = 100.0
    independent: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (np.isfinite(self.condition) and self.condition > 1):
            raise ValueError(f"the partition's condition limit must be a number > 1, got "
                             f"{self.condition}")
        object.__setattr__(self, "independent", tuple(self.independent))


def formulation_of(value) -> Partitioning | None:
    """``None`` for the augmented route, the :class:`Partitioning` of the minimal one.

    Raises ``ValueError`` naming the valid values for anything else.
    """
    if isinstance(value, Partitioning):
        return value
    if value == "minimal":
        return Partitioning()
    if value in ("augmented", "ali3"):   # ali3: kidym.simulation.passages
        return None
    raise ValueError(f"formulation must be one of {FORMULATIONS} (or a "
                     f"kidym.simulation.minimal.Partitioning), got {value!r}")


def require_minimal_form(eq) -> None:
    """Raise ``ValueError`` unless ``eq`` can be run in the minimal form: holonomic
    constraints only, at least one degree of freedom, and speeds that are the rates of
    the coordinates (``q̇ = w``)."""
    cons = eq.constraints
    if cons is None:
        raise ValueError("formulation='minimal' partitions the coordinates of a model with "
                         "holonomic constraints (УРАВНЕНИЯ); this model has none: use the "
                         "default formulation='augmented'")
    if not all(cons.holonomic):
        names = [n for n, h in zip(cons.names, cons.holonomic) if not h]
        raise ValueError("formulation='minimal' needs holonomic constraints Φ(q, t) = 0; "
                         f"{', '.join(names)} constrain{'s' if len(names) == 1 else ''} the "
                         "velocities: use formulation='augmented'")
    if eq.n_q != eq.n_w or any(se.expand(x - w) != 0 for x, w in zip(eq.qdot, eq.speeds)):
        raise ValueError("formulation='minimal' needs the speeds to be the rates of the "
                         "coordinates (no pseudo-velocities, quaternions or velocity "
                         "formulas x't = …): use formulation='augmented'")
    if eq.n_w - cons.m < 1:
        raise ValueError(f"formulation='minimal' needs a degree of freedom, but the "
                         f"{cons.m} constraints leave none of the {eq.n_w} speeds (the "
                         "motion is prescribed): use formulation='augmented'")


@dataclass
class Partition:
    """The current split: ``dependent`` and ``independent`` coordinate indices, and the
    condition limit of ``G_D`` for this stretch."""

    dependent: list[int]
    independent: list[int]
    limit: float


@dataclass
class ReducedSystem:
    """The workspace of a minimal-form run over a system with ``constraint_block``.

    ``system.constraint_block(t, y, p) -> (M, F, Block)`` (both engines have it) is the
    only evaluation used.
    """

    system: object
    p: np.ndarray
    tol: float
    partition: Partition
    #: the last full state recovered (the next Newton start)
    last: np.ndarray
    evaluations: int = 0
    history: list = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.system.equations.n_q

    def reduced(self, y: np.ndarray) -> np.ndarray:
        """``z = [u, v]`` of the full state ``y = [q, w]``."""
        ind = self.partition.independent
        return np.concatenate([y[ind], y[self.n + np.array(ind)]])

    def _block(self, t: float, y: np.ndarray):
        self.evaluations += 1
        try:
            return self.system.constraint_block(t, y, self.p)
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            raise self._error(t, y, f"a formula cannot be evaluated ({exc})",
                              faults.NON_FINITE) from exc

    def _error(self, t: float, y: np.ndarray, what: str, kind: str) -> SimulationError:
        names = self.system.state_names
        return SimulationError(what, time=float(t), state=dict(zip(names, y)), kind=kind,
                               hint=self.hint())

    def hint(self) -> str:
        """What to try when the minimal form fails."""
        names = self.system.state_names
        dep = ", ".join(names[j] for j in self.partition.dependent)
        return (f"the minimal form solved for {dep}; lower the partition's condition limit "
                "(Partitioning(condition=…)) or max_step so that it re-partitions sooner, "
                "or use formulation='augmented'")

    def full(self, t: float, z: np.ndarray) -> tuple[np.ndarray, tuple]:
        """The full state ``y = [q, w]`` on the constraints for ``z``, and ``(M, F,
        Block)`` there."""
        n, part = self.n, self.partition
        dep, ind = part.dependent, part.independent
        f = len(ind)
        y = self.last.copy()
        y[ind] = z[:f]
        y[n + np.array(ind)] = z[f:]
        res_old = np.inf
        for _it in range(MAX_NEWTON + 1):
            M, F, block = self._block(t, y)
            res = float(np.abs(block.phi).max(initial=0.0))
            if not np.isfinite(res):
                break
            # converged, or at the floor of rounding (Newton stalls there)
            if res <= self.tol or (res < 1e-10 and res > 0.5 * res_old):
                break
            GD = block.G[:, dep]
            try:
                y[dep] -= np.linalg.solve(GD, block.phi)
            except np.linalg.LinAlgError:
                res = np.inf
                break
            res_old = res
        else:
            res = np.inf
        if not res <= max(self.tol, 1e-10):
            raise DegradedError(t, y, "the dependent coordinates could not be recovered "
                                f"from the constraints (Newton stopped at |Φ| = {res:.3g})")
        # the speeds: c = G w + g is linear in w; correct the dependent ones
        GD = block.G[:, dep]
        y[n + np.array(dep)] -= np.linalg.solve(GD, block.c)
        M, F, block = self._block(t, y)
        self.last = y
        return y, (M, F, block)

    def condition_of(self, block) -> float:
        """Condition number (2-norm) of ``G_D``."""
        return float(np.linalg.cond(block.G[:, self.partition.dependent]))

    def accelerations(self, M: np.ndarray, F: np.ndarray, block) -> np.ndarray:
        """``v̇`` of ``Rᵀ M R v̇ = Rᵀ (F − M s)`` (module docstring)."""
        dep, ind = self.partition.dependent, self.partition.independent
        G = block.G
        # one solve with G_D for both G_D⁻¹ G_I and G_D⁻¹ γ (NumPy: small matrices)
        X = np.linalg.solve(G[:, dep], np.column_stack([G[:, ind], block.gamma]))
        R = np.zeros((self.n, len(ind)))
        R[ind, np.arange(len(ind))] = 1.0
        R[dep] = -X[:, :-1]
        s = np.zeros(self.n)
        s[dep] = X[:, -1]
        return np.linalg.solve(R.T @ M @ R, R.T @ (F - M @ s))

    def rhs(self, t: float, z: np.ndarray) -> np.ndarray:
        """``ż = [v, v̇]``; :class:`DegradedError` where the partition has failed."""
        y, (M, F, block) = self.full(t, z)
        cond = self.condition_of(block)
        if not cond <= HARD_FACTOR * self.partition.limit:
            raise DegradedError(t, y, f"the dependent block of the constraint Jacobian has "
                                f"condition {cond:.3g}")
        f = len(self.partition.independent)
        try:
            vdot = self.accelerations(M, F, block)
        except np.linalg.LinAlgError as exc:
            raise self._error(t, y, "the reduced mass matrix Rᵀ M R is singular",
                              faults.SINGULAR) from exc
        out = np.concatenate([z[f:], vdot])
        if not np.all(np.isfinite(out)):
            raise self._error(t, y, "the right-hand side of the minimal form is not finite",
                              faults.NON_FINITE)
        return out

    def repartition(self, t: float, y: np.ndarray, limit: float,
                    independent: Sequence[str] = ()) -> None:
        """Choose the partition at the full state ``y``: ``independent`` (coordinate
        names) if given, else by column-pivoted QR of ``G``."""
        _M, _F, block = self._block(t, y)
        n = self.n
        names = self.system.state_names
        if independent:
            ind = self._named(independent, block.G)
            dep = [j for j in range(n) if j not in ind]
        else:
            try:
                dep = sorted(choose_dependent(block.G, []))
            except ValueError as exc:   # every partition singular: rank of G below m
                raise singular_position(self.system, t, y, str(exc)) from exc
            ind = [j for j in range(n) if j not in dep]
        cond = float(np.linalg.cond(block.G[:, dep]))
        self.partition = Partition(dep, ind, max(limit, 2.0 * cond))
        self.last = y.copy()
        self.history.append({"t": float(t), "independent": [names[j] for j in ind],
                             "condition": cond})


    def _named(self, independent: Sequence[str], G: np.ndarray) -> list[int]:
        """Indices of the coordinates named ``independent``; ``ValueError`` unless they
        are ``n − m`` coordinates whose complement ``G_D`` is regular."""
        coords = list(self.system.state_names[:self.n])
        unknown = [x for x in independent if x not in coords]
        if unknown:
            raise ValueError(f"independent coordinates {', '.join(unknown)} are not "
                             f"coordinates of the model; its coordinates: {', '.join(coords)}")
        f = self.n - G.shape[0]
        if len(set(independent)) != f:
            raise ValueError(f"the model has {f} degree{'s' if f != 1 else ''} of freedom: "
                             f"name {f} independent coordinate{'s' if f != 1 else ''}, not "
                             f"{len(set(independent))} ({', '.join(independent)})")
        ind = sorted(coords.index(x) for x in set(independent))
        dep = [j for j in range(self.n) if j not in ind]
        if np.linalg.cond(G[:, dep]) > 1e12:
            raise ValueError(f"{', '.join(independent)} cannot be the independent coordinates "
                             "at the start: the constraints do not determine the others "
                             "from them there (their block of the constraint Jacobian is "
                             "singular); name others, or let pivoting choose")
        return ind


def singular_position(system, t: float, y: np.ndarray, detail: str) -> SimulationError:
    """The minimal form's error at a singular position of the loop, where the
    constraint Jacobian loses rank and no partition determines the dependent
    coordinates (issue 27: it used to be a bare ``ValueError`` or a hang)."""
    names = ", ".join(f"`{n}`" for n in system.equations.constraints.names)
    return SimulationError(
        f"the constraint Jacobian loses rank ({detail}; constraints {names}): the loop is "
        "at a singular position, where no choice of independent coordinates determines "
        "the others", time=float(t),
        state=dict(zip(system.state_names, np.asarray(y, float).tolist())),
        hint="formulation='ali3' passes singular positions of a loop on the branch the "
             "motion is on (docs/theory.md, \"Singular positions of a loop\")",
        kind=faults.CONSTRAINTS)


def run_minimal(system, p: np.ndarray, t0: float, t1: float, y0: np.ndarray,
                times: np.ndarray, *, options: Partitioning, tol: float, method,
                rtol: float, atol: float, max_step: float) -> tuple:
    """Integrate the minimal form from the consistent state ``y0``.

    SciPy's solver (``method``: a name or a solver class) is stepped here, so that the
    partition can be checked after every accepted step: where ``G_D``'s condition has
    passed the limit, the run restarts from that state with a new partition. A step
    whose stages fail (:class:`DegradedError`: beyond a fold of the dependent block,
    Newton finds no solution) is abandoned; the run restarts from the last accepted
    state with the partition pivoting chooses there, or, if that is the same one, with a
    step a tenth as long.

    Returns ``(ok, status, message, nfev, t, y, stats, fault)``: ``y`` the full states
    at the output times (on the constraints; recovered by continuation along the steps,
    so Newton never starts far from its solution), ``stats`` the partitions,
    re-partitions and evaluations of the generated function, ``fault`` (a
    :class:`~kidym.simulation.faults.Fault`) what stopped a failed run (``None``
    otherwise); a failed run keeps the outputs before it.
    """
    import scipy.integrate  # (loaded by the runs that need it)

    solver_class = getattr(scipy.integrate, method) if isinstance(method, str) else method
    y0 = np.asarray(y0, float)
    red = ReducedSystem(system, p, tol, Partition([], [], 0.0), y0)
    red.repartition(t0, y0, options.condition, options.independent)
    start = times <= t0
    out_t = list(times[start])
    out_y = [y0] * int(start.sum())
    pending = list(times[~start][::-1])       # the next output time last
    t, y = t0, y0                             # the last accepted state, full
    nfev, retries, first_step = 0, 0, None
    ok, status, message, fault = True, 0, "reached the end", None

    def failed(kind: str, detail: str, tt: float, yy: np.ndarray, hint: str = "") -> None:
        nonlocal ok, status, message, fault
        ok, status, message = False, -1, detail
        fault = faults.Fault(kind, detail, float(tt), np.asarray(yy, float), hint)

    rank = np.linalg.matrix_rank(red._block(t0, y0)[2].G)
    try:
        while t < t1 and fault is None:
            red.last = y.copy()
            solver = solver_class(red.rhs, t, red.reduced(y), t1, rtol=rtol, atol=atol,
                                  max_step=max_step,
                                  **({"first_step": first_step} if first_step else {}))
            first_step = None
            while solver.status == "running":
                try:
                    message_ = solver.step()
                    if solver.status == "failed":
                        kind = (faults.STEP_COLLAPSE if "step size" in str(message_)
                                else faults.INTEGRATOR)
                        failed(kind, str(message_).rstrip("."), solver.t,
                               red.full(solver.t, solver.y)[0])
                        nfev += solver.nfev
                        break
                    # outputs in (t, t_new], then the step's end: continuation from y
                    dense = solver.dense_output()
                    red.last = y.copy()
                    new_t = [tk for tk in reversed(pending) if tk <= solver.t]
                    new_y = [red.full(float(tk), dense(tk))[0] for tk in new_t]
                    y_new, (_M, _F, block) = red.full(solver.t, solver.y)
                    ratio = singular_ratio(block.G, rank)
                    if ratio < PASSAGE_RATIO:
                        raise singular_position(system, solver.t, y_new,
                                                f"σ_min/σ_max = {ratio:.2g}")
                except DegradedError as exc:
                    # abandon the step: go on from the last accepted state (t, y)
                    nfev += solver.nfev
                    retries += 1
                    if retries > MAX_RETRIES:
                        failed(faults.CONSTRAINTS, exc.detail, exc.t, exc.y,
                               red.hint())
                        break
                    old = red.partition.dependent
                    red.repartition(t, y, options.condition)
                    if red.partition.dependent == old:
                        red.history.pop()
                        h = solver.h_abs if solver.h_abs else t1 - t
                        first_step = min(max(h / 10, 1e-12 * max(1.0, abs(t))), t1 - t)
                    break
                except SimulationError as exc:
                    y_bad = np.array([exc.state[n] for n in system.state_names], dtype=float)
                    failed(exc.kind or faults.NON_FINITE, exc.reason, exc.time, y_bad,
                           exc.hint or "")
                    break
                retries = 0
                del pending[len(pending) - len(new_t):]
                out_t += new_t
                out_y += new_y
                t, y = float(solver.t), y_new
                if red.condition_of(block) > red.partition.limit:
                    nfev += solver.nfev
                    red.repartition(t, y, options.condition)
                    break
            else:
                nfev += solver.nfev
    except SimulationError as exc:   # a singular position met at a re-partition
        failed(exc.kind or faults.CONSTRAINTS, exc.reason, exc.time,
               np.array([exc.state[n] for n in system.state_names], dtype=float),
               exc.hint or "")
    stats = {"partitions": red.history, "repartitions": len(red.history) - 1,
             "evaluations": red.evaluations, "condition_limit": options.condition}
    y_out = np.array(out_y, dtype=float).T.reshape(len(y0), len(out_t))
    return ok, status, message, nfev, np.array(out_t, dtype=float), y_out, stats, fault


def minimal_accelerations(system, t: float, y: np.ndarray, p: np.ndarray,
                          dependent: Sequence[int] | None = None) -> np.ndarray:
    """``ẇ`` of the minimal form at a consistent state ``y`` (the full speeds' rates,
    ``R v̇ + s``), for the partition ``dependent`` (default: chosen by pivoting there).
    What the tests compare with the augmented route."""
    y = np.asarray(y, float)
    red = ReducedSystem(system, p, 1e-14, Partition([], [], 0.0), y)
    red.repartition(t, y, 100.0)
    if dependent is not None:
        dep = sorted(dependent)
        red.partition = Partition(dep, [j for j in range(red.n) if j not in dep], 1e300)
    M, F, block = red._block(t, y)
    vdot = red.accelerations(M, F, block)
    dep, ind = red.partition.dependent, red.partition.independent
    wdot = np.zeros(red.n)
    wdot[ind] = vdot
    GD = block.G[:, dep]
    wdot[dep] = np.linalg.solve(GD, block.gamma - block.G[:, ind] @ vdot)
    return wdot
