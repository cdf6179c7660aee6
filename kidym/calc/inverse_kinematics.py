"""The inverse kinematics calculation (``РАСЧЕТ := ОБРАТНАЯ ЗАДАЧА КИНЕМАТИКИ``).

The model lists in ``УРАВНЕНИЯ := f1, …`` formulas of the coordinates ``q`` and time
that must vanish — targets of named points and frames written with the generated
names (``f1 = XOLink2 + l2*S11Link2 - xt;``). At every time of the grid of ``ВРЕМЯ``
kidym solves ``f(q, t) = 0`` by a **damped Newton (Levenberg–Marquardt) iteration on
the analytic Jacobian** ``J = ∂f/∂q`` (named partial derivatives through the graph,
:meth:`kidym.symbolic.graph.Graph.diff`), starting from the previous time's solution
(continuation; at the first time from ``НАЧАЛЬНОЕ ПОЛОЖЕНИЕ``, else the initial values,
else 0):

    ``δ = −Jᵀ (J Jᵀ + μ I)⁻¹ f``,    ``q ← clip(q + δ, lo, hi)``

with ``μ`` lowered (÷3) after a step that reduces ``|f|`` and raised (×4) after one that
does not (the step is then refused). The form ``Jᵀ(JJᵀ + μI)⁻¹`` equals the usual
``(JᵀJ + μI)⁻¹Jᵀ`` and with **fewer equations than coordinates** (a redundant
system) it is the damped **least-norm** step: of all the coordinate changes that
reduce the residual, the smallest. Continuation from the previous solution then keeps
the motion smooth and on the branch it started on (elbow up or down).

**Limits** (``ОГРАНИЧЕНИЯ := q(lo, hi)``) are kept by projection: every iterate is
clipped into the box. A target that can only be reached outside the limits leaves a
residual, and the calculation fails there with the time, the residual and the
coordinates. Convergence: ``max |f| ≤ tol`` (default 1e-12, scaled by
``1 + max |f|`` at the start of the first solve). ``q't`` and the outputs' ``'t`` use
central differences of the solutions (``numpy.gradient``, second order), as KiDyM did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import symengine as se
import sympy

from kidym.calc.kinematics import KinematicsError, KinematicsResult, requested
from kidym.eom.system import SystemGraph
from kidym.model.model import TIME, Model


class InverseKinematicsError(KinematicsError):
    """The equations have no solution at a time (names the time, residual and state)."""


@dataclass(frozen=True)
class IKProblem:
    """``f(q, t)``, ``J(q, t)`` and the outputs as NumPy functions.

    Attributes
    ----------
    coordinates : tuple of str
    equations : tuple of str
        The names listed in ``УРАВНЕНИЯ``.
    outputs : tuple of str
    """

    coordinates: tuple[str, ...]
    equations: tuple[str, ...]
    outputs: tuple[str, ...]
    residual: object
    jacobian: object
    output_function: object
    lower: np.ndarray
    upper: np.ndarray


def _function(exprs: list, args: list):
    # the arguments get our names (`a0`, `a1` …): no model text reaches generated code
    sym = [sympy.Symbol(f"a{i}") for i in range(len(args))]
    subs = dict(zip(args, sym))
    return sympy.lambdify(sym, [sympy.sympify(e.xreplace(subs)) for e in exprs],
                          modules="numpy")


def formulate(model: Model, parameters: Mapping[str, float] | None = None) -> IKProblem:
    """The equations, their analytic Jacobian and the outputs of ``model``.

    Raises
    ------
    KinematicsError
        An equation uses a velocity, an output an acceleration, or a name is unknown.
    """
    system = SystemGraph(model, holonomic=True)
    g = system.graph
    q = list(system.coordinates)
    w = list(system.speeds)
    values = dict(model.parameter_values)
    values.update(parameters or {})
    psubs = {se.Symbol(k): se.Float(v) for k, v in values.items()}
    f = []
    for c in model.constraints:
        expr = system.lookup(c.name)
        if any(g.depends_on(expr, s) for s in w):
            raise KinematicsError(f"equation `{c.name}` uses a velocity; the inverse "
                                  "kinematics calculation solves formulas of the coordinates "
                                  "and time")
        f.append(expr)
    jac = [g.diff(e, s) for e in f for s in q]
    names = [n for n in requested(model)]
    outs = []
    for n in names:
        expr = system.lookup(n)
        if system.uses_accelerations([expr]):
            raise KinematicsError(f"`{n}` uses accelerations, which the inverse kinematics "
                                  "calculation does not compute (it differentiates positions "
                                  "once)")
        outs.append(expr)

    def ready(exprs):
        return [g.expand(e).xreplace(psubs) for e in exprs]

    args = [TIME, *q]
    lo = np.array([model.limits.get(str(s), (-np.inf, np.inf))[0] for s in q])
    hi = np.array([model.limits.get(str(s), (-np.inf, np.inf))[1] for s in q])
    return IKProblem(tuple(map(str, q)), tuple(c.name for c in model.constraints),
                     tuple(names), _function(ready(f), args), _function(ready(jac), args),
                     _function(ready(outs), [TIME, *q, *w]) if outs else None, lo, hi)


def solve_at(problem: IKProblem, t: float, q0: np.ndarray, *, tol: float = 1e-10,
             max_iter: int = 100) -> tuple[np.ndarray, float, int]:
    """``q`` with ``f(q, t) = 0`` from ``q0`` (damped Newton, limits by projection).

    Returns
    -------
    q : ndarray, shape (n,)
    residual : float
        ``max |f(q, t)|``.
    iterations : int

    Raises
    ------
    InverseKinematicsError
        No convergence in ``max_iter`` iterations (or a formula has no value).
    """
    m, n = len(problem.equations), len(problem.coordinates)
    q = np.clip(np.asarray(q0, float), problem.lower, problem.upper)

    def residual(x):
        return np.asarray(problem.residual(t, *x), float).reshape(m)

    r = residual(q)
    mu = 1e-6
    it = 0
    while it < max_iter and np.all(np.isfinite(r)) and np.max(np.abs(r)) > tol:
        it += 1
        J = np.asarray(problem.jacobian(t, *q), float).reshape(m, n)
        scale = max(1.0, float(np.max(np.abs(J @ J.T))))
        while True:
            A = J @ J.T + mu * scale * np.eye(m)
            try:
                step = -J.T @ np.linalg.solve(A, r)
            except np.linalg.LinAlgError:
                step = -J.T @ np.linalg.lstsq(A, r, rcond=None)[0]
            trial = np.clip(q + step, problem.lower, problem.upper)
            rt = residual(trial)
            if np.all(np.isfinite(rt)) and np.linalg.norm(rt) < np.linalg.norm(r):
                q, r = trial, rt
                mu = max(mu / 3, 1e-15)
                break
            mu *= 4
            if mu > 1e12:
                break
        if mu > 1e12:
            break
    res = float(np.max(np.abs(r))) if np.all(np.isfinite(r)) else float("inf")
    if not res <= tol:
        state = ", ".join(f"{c} = {v:.6g}" for c, v in zip(problem.coordinates, q))
        worst = problem.equations[int(np.argmax(np.abs(r)))] if np.all(np.isfinite(r)) \
            else "a formula without a value"
        limited = [c for c, v, a, b in zip(problem.coordinates, q, problem.lower,
                                            problem.upper) if v <= a or v >= b]
        hint = (f"; {', '.join(limited)} at a limit (`ОГРАНИЧЕНИЯ`): the target may lie "
                "beyond the limits" if limited else
                "; the target may be out of reach, or the start far from a solution: give "
                "`НАЧАЛЬНОЕ ПОЛОЖЕНИЕ` closer to it, or more time points")
        raise InverseKinematicsError(
            f"the inverse kinematics has no solution at t = {t:.6g}: after {it} damped "
            f"Newton iterations max |f| = {res:.3g} (largest: `{worst}`), at {state}{hint}")
    return q, res, it


@dataclass(frozen=True, eq=False)
class IKResult(KinematicsResult):
    """The solutions over the time grid: coordinates, their ``'t`` and the outputs.

    Attributes (beyond :class:`KinematicsResult`)
    -------------------------------------------
    residuals : ndarray, shape (n,)
        ``max |f|`` at each time.
    iterations : ndarray of int, shape (n,)
        Newton iterations at each time.
    tolerance : float
        The ``max |f|`` every time met.
    """

    residuals: np.ndarray = None  # type: ignore[assignment]
    iterations: np.ndarray = None  # type: ignore[assignment]
    tolerance: float = 0.0


def start_values(model: Model) -> np.ndarray:
    """The first guess: ``НАЧАЛЬНОЕ ПОЛОЖЕНИЕ``, else ``НАЧАЛЬНЫЕ УСЛОВИЯ``, else 0."""
    init = model.initial_values()
    return np.array([model.guess.get(c, init.get(c, 0.0)) for c in model.coordinates],
                    float)


def inverse_kinematics(model: Model, *, n_points: int = 501, t_end: float | None = None,
                       parameters: Mapping[str, float] | None = None,
                       tol: float = 1e-12) -> IKResult:
    """Solve ``УРАВНЕНИЯ`` of ``model`` for its coordinates over the time grid.

    Parameters
    ----------
    model : Model
        ``РАСЧЕТ := ОБРАТНАЯ ЗАДАЧА КИНЕМАТИКИ`` with ``УРАВНЕНИЯ``.
    n_points : int
        Evenly spaced times over the model's range (both ends included).
    t_end : float, optional
        Another end time.
    parameters : mapping of str to float, optional
        Changed parameter values.
    tol : float
        ``max |f|`` accepted, times ``1 + max |f|`` at the first start.

    Returns
    -------
    IKResult
        Columns: the coordinates, their ``'t`` (central differences), then what
        ``ПОКАЗАТЬ`` asks for.

    Raises
    ------
    InverseKinematicsError
        At the first time with no solution (its time, residual and coordinates).
    """
    if not model.constraints:
        raise KinematicsError(f"model `{model.name}` lists no equations (`УРАВНЕНИЯ`)")
    if n_points < 2:
        raise KinematicsError(f"n_points must be at least 2, got {n_points}")
    unknown = sorted(set(parameters or {}) - set(model.parameter_values))
    if unknown:
        raise KinematicsError(f"`{unknown[0]}` is not a parameter of model `{model.name}`")
    problem = formulate(model, parameters)
    t0, t1 = model.time_span(parameters)
    t1 = t1 if t_end is None else float(t_end)
    if not t1 > t0:
        raise KinematicsError(f"the time range must increase: start {t0:g}, end {t1:g}")
    t = np.linspace(t0, t1, n_points)
    q = start_values(model)
    r0 = np.asarray(problem.residual(t[0], *q), float)
    tol = tol * (1 + float(np.max(np.abs(r0)))) if np.all(np.isfinite(r0)) else tol
    qs = np.empty((n_points, q.size))
    res = np.empty(n_points)
    its = np.empty(n_points, int)
    for k, tk in enumerate(t):
        q, res[k], its[k] = solve_at(problem, float(tk), q, tol=tol)
        qs[k] = q
    rates = np.gradient(qs, t, axis=0, edge_order=2)
    values: dict[str, np.ndarray] = {}
    for j, c in enumerate(problem.coordinates):
        values[c] = qs[:, j]
        values[c + "'t"] = rates[:, j]
    if problem.output_function is not None:
        outs = np.array([np.asarray(problem.output_function(tk, *qs[k], *rates[k]), float)
                         for k, tk in enumerate(t)])
        for j, n in enumerate(problem.outputs):
            values[n] = outs[:, j]
    names = tuple(dict.fromkeys([*problem.coordinates,
                                 *(c + "'t" for c in problem.coordinates),
                                 *problem.outputs]))
    values = {n: values[n] for n in names if n != TIME.name}
    return IKResult(t, values, tuple(n for n in names if n != TIME.name), model.name,
                    residuals=res, iterations=its, tolerance=tol)


