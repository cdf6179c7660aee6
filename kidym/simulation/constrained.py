"""Runs of models with holonomic constraints: consistent start, projection, drift.

Shared by both engines through one small interface: ``system.constraint_block(t, y, p)``
gives ``(M, F, Block)`` (:mod:`kidym.eom.constraints`) and ``system.rates(t, y, p)``
gives ``q̇`` at a state. ``B = ∂q̇/∂w`` is taken from ``q̇`` itself (it is linear in
``w``), so positions move only along the directions the speeds can move them
(``Δq = B δ``): for ``B = I`` this is plain Newton on the coordinates, and a quaternion
coordinate moves as its body's angular speeds move it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kidym.eom.constraints import choose_dependent, describe_dependence, drift, rank
from kidym.errors import SimulationError

#: Newton iterations allowed for a consistent start or a projection.
MAX_NEWTON = 50


def _rate_matrix(system, t: float, y: np.ndarray, p: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(B, β)`` at ``y``: ``q̇ = B w + β`` (``q̇`` is linear in ``w``)."""
    n_q, n_w = system.equations.n_q, system.equations.n_w
    z = y.copy()
    z[n_q:] = 0.0
    beta = np.asarray(system.rates(t, z, p), float)
    B = np.empty((n_q, n_w))
    for j in range(n_w):
        z[n_q:] = 0.0
        z[n_q + j] = 1.0
        B[:, j] = np.asarray(system.rates(t, z, p), float) - beta
    return B, beta


def _newton_positions(system, t: float, y: np.ndarray, p: np.ndarray,
                      columns: Sequence[int] | None, tol: float,
                      max_steps: int = MAX_NEWTON) -> tuple[np.ndarray, float, int]:
    """Solve ``Φ(q) = 0`` moving ``q`` by ``B δ`` (δ on ``columns`` of ``w``, or least
    norm over all); returns ``(y, |Φ|, iterations)``."""
    n_q = system.equations.n_q
    y = y.copy()
    res = np.inf
    for it in range(max_steps + 1):
        _M, _F, block = system.constraint_block(t, y, p)
        res = float(np.abs(block.phi).max(initial=0.0))
        if not np.isfinite(res):
            return y, res, it
        if res <= tol:
            return y, res, it
        if it == max_steps:
            break
        B, _beta = _rate_matrix(system, t, y, p)
        G = block.G
        if columns is None:
            delta = -np.linalg.lstsq(G, block.phi, rcond=None)[0]
        else:
            # only the holonomic rows move positions (a velocity constraint's Φ is 0 and
            # must not hold the move: a rolling ball is put on its surface, not rolled
            # there); on the first of `columns` (in their order of preference) that
            # they need
            hol = _holonomic_rows(system)
            Gh = G[hol][:, list(columns)]
            try:
                pick = [columns[k] for k in choose_dependent(Gh, [[k] for k in
                                                                 range(len(columns))])]
                delta = np.zeros(G.shape[1])
                delta[pick] = -np.linalg.solve(G[hol][:, pick], block.phi[hol])
            except (ValueError, np.linalg.LinAlgError):
                return y, res, it
        y[:n_q] += B @ delta
    return y, res, max_steps


#: Newton steps the consistent start may take past its tolerance, while |Φ| falls.
POLISH_STEPS = 3


def _to_rounding(system, t: float, y: np.ndarray, p: np.ndarray,
                 columns: Sequence[int] | None, res: float) -> np.ndarray:
    """``y`` (with ``|Φ| = res`` within the tolerance) after further Newton steps while
    they lower ``|Φ|``: the tolerance stops Newton one quadratic step short of rounding
    (|Φ| of 1e-13 where the next step gives 1e-17)."""
    for _ in range(POLISH_STEPS):
        if res == 0.0:
            break
        y2, res2, _its = _newton_positions(system, t, y, p, columns, -1.0, max_steps=1)
        if not res2 < res:
            break
        y, res = y2, res2
    return y


def _holonomic_rows(system) -> list[int]:
    """Indices of the constraints ``Φ(q, t) = 0`` (the others are velocity constraints)."""
    cons = system.equations.constraints
    flags = cons.holonomic or (True,) * cons.m
    return [i for i, h in enumerate(flags) if h]


def _velocity_correction(system, t: float, y: np.ndarray, p: np.ndarray,
                         columns: Sequence[int] | None) -> np.ndarray:
    """``w`` with ``G w + g = 0``: solved for ``columns`` (others kept), or the least
    change in the kinetic metric ``M`` (``Δw = −M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹ c``)."""
    n_q = system.equations.n_q
    y = y.copy()
    M, _F, block = system.constraint_block(t, y, p)
    if columns is None:
        MinvGt = np.linalg.solve(M, block.G.T)
        y[n_q:] -= MinvGt @ np.linalg.solve(block.G @ MinvGt, block.c)
    else:
        cols = list(columns)
        y[n_q + np.array(cols)] -= np.linalg.solve(block.G[:, cols], block.c)
    return y


#: How far (relative) the coordinates are moved to see the rank of ``G`` nearby.
NEARBY = 1e-4


def _singular_start(system, t0: float, y0: np.ndarray, p: np.ndarray,
                    r: int) -> SimulationError | None:
    """The error of a start at a singular position of a loop — ``G`` of rank ``r`` there
    and of a higher rank at positions nearby (redundant constraints have the lower rank
    everywhere) — or None. There branches of the motion meet, and from such a start no
    formulation can tell which one the motion follows (issue 27: a parallelogram
    released with its links in line)."""
    eq = system.equations
    n_q = eq.n_q
    y0 = np.asarray(y0, float)
    step = NEARBY * (1.0 + np.abs(y0[:n_q]))
    nearby = 0
    for sign in (1.0, -1.0):   # (deterministic directions)
        y = y0.copy()
        y[:n_q] += sign * step * np.cos(1.0 + np.arange(n_q))
        try:
            nearby = max(nearby, rank(system.constraint_block(t0, y, p)[2].G))
        except (SimulationError, ArithmeticError, ValueError):
            continue
    if nearby <= r:
        return None
    names = eq.constraints.names
    at_rest = not np.any(np.abs(y0[n_q:]) > 0)
    return SimulationError(
        f"the loop starts at a singular position: the Jacobian of the constraints "
        f"{', '.join(names)} has rank {r} there and {nearby} at positions nearby, so "
        f"{eq.n_w - r} motions keep the constraints to first order where {eq.n_w - nearby} "
        f"{'does' if eq.n_w - nearby == 1 else 'do'} elsewhere: branches of the motion "
        "meet here (links in line: a dead centre, or "
        "a parallelogram that can go on as a parallelogram, an anti-parallelogram or a "
        "kite), and " + ("at rest " if at_rest else "")
        + "no formulation can tell which one the motion follows",
        time=t0, state=dict(zip(system.state_names, y0.tolist())),
        hint="start a little off the position (a coordinate moved from it picks the "
             "branch), or with a speed along the branch the motion should follow and "
             "formulation='ali3' from a position just before it")


def consistent_initial(system, t0: float, y0: np.ndarray, p: np.ndarray,
                       given: set[str], tol: float) -> tuple[np.ndarray, dict[str, tuple]]:
    """Initial values that satisfy ``Φ = 0`` and ``Φ̇ = 0``, changing the dependent ones.

    The dependent speeds (and with them the coordinates they move) are chosen by
    column-pivoted QR of ``G`` at ``y0``: first among those whose coordinate and speed
    have no initial value (``given``: names with one in the model or in the call), then
    whose coordinate has none, then whose speed has none, then the rest. Positions by
    Newton on ``Φ = 0`` (the given values are its start, so they pick the assembly
    branch) to rounding (:func:`_to_rounding`), then the dependent speeds from
    ``G w = −g``.

    Returns
    -------
    tuple
        ``(y, changes)``; ``changes`` maps each changed state name to ``(old, new)``.

    Raises
    ------
    SimulationError
        Redundant constraints (rank of ``G`` below their number at the start), or no
        closed configuration near the given values (Newton's residual named).
    """
    eq = system.equations
    names = system.state_names
    n_q = eq.n_q
    cons = eq.constraints
    y0 = np.asarray(y0, float)
    _M, _F, block = system.constraint_block(t0, y0, p)
    r = rank(block.G)
    if r < cons.m:
        singular = _singular_start(system, t0, y0, p, r)
        if singular is not None:
            raise singular
        raise SimulationError(
            f"the constraints {', '.join(cons.names)} are not independent at the start: the "
            f"rank of their Jacobian is {r}, not {cons.m}: "
            + describe_dependence(block.G, cons.names), time=t0,
            state=dict(zip(names, y0)), hint=_dependence_hint(eq.model, cons.names))
    speed_names = names[n_q:]
    pos_free = [_base(w) not in given for w in speed_names]
    vel_free = [w not in given for w in speed_names]
    tiers = [[j for j in range(len(speed_names)) if pos_free[j] and vel_free[j]],
             [j for j in range(len(speed_names)) if pos_free[j] and not vel_free[j]],
             [j for j in range(len(speed_names)) if vel_free[j] and not pos_free[j]]]
    columns = choose_dependent(block.G, tiers)
    y, res, its = _newton_positions(system, t0, y0, p, columns, tol)
    if not res <= tol:
        values = dict(zip(cons.names, system.constraint_block(t0, y, p)[2].phi))
        raise SimulationError(
            "the initial values do not satisfy the constraints and no closed configuration "
            f"was found near them (Newton on {', '.join(_base(speed_names[j]) for j in columns)}"
            f" stopped after {its} steps at |Φ| = {res:.3g}: "
            + ", ".join(f"{k} = {v:.3g}" for k, v in values.items()) + ")",
            time=t0, state=dict(zip(names, y0)),
            hint="give initial values of the coordinates closer to an assembled position "
                 "of the mechanism (they pick its assembly branch)")
    y = _to_rounding(system, t0, y, p, columns, res)
    y = _velocity_correction(system, t0, y, p, columns)
    changes = {names[i]: (float(y0[i]), float(y[i])) for i in range(len(y))
               if abs(y[i] - y0[i]) > 1e-12 * max(1.0, abs(y0[i]))}
    return y, changes


def _dependence_hint(model, names) -> str:
    """What to do about dependent constraints; for `КАЧЕНИЕ` of bodies carried by another
    (wheels on a chassis), how to write their rolling instead."""
    carried = [r.body for r in model.rolling if model.body(r.body).base is not None]
    hint = ("remove the constraints that repeat others (a planar loop closes with two "
            "equations, not three), or start away from a singular configuration")
    if carried:
        hint = (f"{', '.join(carried)} roll{'s' if len(carried) == 1 else ''} on a body "
                "that carries them: КАЧЕНИЕ writes three constraints per contact, and the "
                "carrier's coordinates (a chassis kept upright, at a fixed height) already "
                "hold some of them, or two wheels on one axle repeat the same one. Write the "
                "no-slip conditions as velocity formulas of the carrier instead "
                "(`x't = r/2*(phiL't + phiR't)*cos(psi);` …, docs/language.md §2.2), or "
                "give the carrier the coordinates the contacts constrain (its height and "
                "tilts); otherwise " + hint)
    return hint


def _base(speed: str) -> str:
    return speed[:-2] if speed.endswith("'t") else speed


def project(system, t: float, y: np.ndarray, p: np.ndarray, tol: float) -> np.ndarray:
    """``y`` projected onto ``Φ = 0`` (least change along ``B``) and ``G w + g = 0``
    (least change in the kinetic metric)."""
    y2, res, _its = _newton_positions(system, t, y, p, None, tol * 1e-3)
    if not res <= tol:
        return y  # the caller sees the drift and reports it
    return _velocity_correction(system, t, y2, p, None)


def measure(system, t: np.ndarray, Y: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    """``(max |Φ|, max |c|)`` over the recorded states (columns of ``Y``)."""
    pos = vel = 0.0
    for k in range(t.size):
        _M, _F, block = system.constraint_block(float(t[k]), Y[:, k], p)
        a, b = drift(block)
        pos, vel = max(pos, a), max(vel, b)
    return pos, vel
