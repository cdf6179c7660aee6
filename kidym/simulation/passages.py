"""Closed loops through singular positions: ``formulation="ali3"`` (both engines).

Away from singular positions the run is the augmented formulation's (``M ẇ = F + Gᵀλ``,
``G ẇ = γ``): SciPy's solver stepped here (:func:`numpy_phase`), or the compiled loop
over windows of samples (:func:`compiled_phase`). Where a step (a sample) would end near
a singular position of the loop — the constraint Jacobian ``G`` close to losing rank,
``σ_ρ/σ_1 < NEAR`` times the largest ratio seen in the run (:mod:`kidym.simulation.monitors`;
relative, because a long chain of loops such as A02 with N = 40 is ill-conditioned
everywhere), inside a step as well, or the best-conditioned dependent block changing
sign within it — the step is rejected and the motion is carried across by the index-3
augmented Lagrangian formulation with mass-orthogonal projections of Bayo & Ledesma
(1996), "ALI3-P" (trapezoidal rule, fixed step), which needs no rank of ``G``: its
constraint forces are ``Gᵀ(λ + α Φ)``, and velocities and accelerations are projected
onto the constraints in the kinetic metric. Each Newton move of a step, and each
projection, solves the saddle-point system with the penalised matrix
``M + (h²/4) α GᵀG`` by its Schur complement in least squares (:func:`_saddle`), so
the multipliers come in one solve where ``G`` is regular and the penalty carries the
directions where it has lost rank — several at once (A02 with N ≥ 2 loses N) or
redundant rows. The bridge ends when the position is passed (the best block changed
sign, or the ratio was below the threshold) and the ratio is above it again; the state
is projected onto the constraints and the augmented run goes on.

The bridge follows the branch the motion is on because it integrates the penalised
dynamics (physical, stiff springs on the constraints) through the position, instead of
solving a singular system there. Its step is ``h = BRIDGE_FACTOR · rtol^{1/3}`` (the
trapezoidal rule's local error is ``O(h³)``, its global error ``O(h²) = O(rtol^{2/3})``;
bounded by ``max_step``), and outputs inside a bridge come from cubic Hermite
interpolation between its steps.

An augmented run that reaches a singular position (the monitor trips, or its solve
finds ``G`` singular) goes on from its last sample before it by :func:`continue_run`
where :func:`continuable` holds.

Requires holonomic constraints and speeds that are the coordinates' rates (as the minimal
form, :func:`kidym.simulation.minimal.require_minimal_form`); no events.
"""

from __future__ import annotations

import numpy as np

from kidym.eom.constraints import Stabilization, solve_augmented
from kidym.errors import SimulationError
from kidym.simulation import faults
from kidym.simulation.compiled_methods import scipy_tolerances
from kidym.simulation.constrained import project
from kidym.simulation.monitors import loop_passage, pivot_columns, singular_ratio

#: ``σ_ρ/σ_1`` of ``G`` below which the bridge carries the motion (relative to the
#: largest seen). The bridges set the run's accuracy (each leaves an energy error
#: ``O(h²)``, docs/theory.md "What sets the accuracy"): a shorter bridge is cheaper than
#: a shorter step for the same error (A02 N = 1, 20 s: 0.02 with ``h = 0.1 rtol^{1/3}``
#: about 8e-7 for 25 000 bridge evaluations, 0.05 with ``0.05 rtol^{1/3}`` 5e-7 for 125 000).
NEAR = 0.02
#: The bridge's step is ``BRIDGE_FACTOR · rtol^{1/3}`` seconds (0.2 before: A02 8e-6).
BRIDGE_FACTOR = 0.1
#: Penalty ``α h²/4`` relative to the mass matrix's scale over ``GᵀG``'s.
PENALTY = 1e2
#: Newton iterations of one bridge step.
MAX_NEWTON = 30
#: Relative cut-off of the saddle-point systems' Schur complement ``G A⁻¹ Gᵀ`` (its
#: eigenvalues scale as ``σ²`` of ``G``): of the bridge's Newton moves, of the projections.
NEWTON_RCOND = 1e-12
#: (The projections' cut-off is near √eps: ``G A⁻¹ Gᵀ`` squares ``G``'s condition, and at
#: A02's singular position with N = 40 — 40 ranks lost at once — the directions kept by
#: 1e-10 amplified the compiled evaluations' rounding into an energy error of 7e-5 in
#: one step; 1e-9: 4e-6, 1e-8: 4e-7, 1e-7: 8e-8, the NumPy engine's at 1e-10.)
PROJECTION_RCOND = 1e-7
#: Newton's step (relative) at which a bridge step has converged: its tangent leaves
#: out the forces' derivatives, so it converges linearly at a rate ~h², and below this
#: the penalty's rounding dominates.
NEWTON_TOL = 1e-11
#: The constraints' residual ``|Φ|`` a converged bridge step may leave (in the directions
#: where ``G`` has lost rank Newton's move is the penalty's; the bridge's end projects
#: onto the constraints).
SLOW_TOL = 1e-8


def _geometry(G: np.ndarray, rank: int) -> tuple[float, list[int], float]:
    """``(σ_ρ/σ_1, best columns, det of their block)`` of ``G``."""
    cols = pivot_columns(G, rank)
    return singular_ratio(G, rank), cols, float(np.linalg.det(G[:, cols]))


class _Bridge:
    """ALI3-P steps of one system (``q̇ = w``) at parameter vector ``p``."""

    def __init__(self, system, p: np.ndarray, tol: float) -> None:
        self.system, self.p, self.tol = system, p, tol
        self.n = system.equations.n_q
        self.evaluations = 0

    def block(self, t: float, q: np.ndarray, v: np.ndarray):
        self.evaluations += 1
        return self.system.constraint_block(float(t), np.concatenate([q, v]), self.p)

    def start(self, t: float, y: np.ndarray) -> tuple:
        """``(q, v, a, λ*)`` at a state of the augmented run."""
        q, v = y[:self.n].copy(), y[self.n:].copy()
        M, F, blk = self.block(t, q, v)
        a, lam = solve_augmented(M, F, blk, Stabilization(method="none"))
        return q, v, a, -lam

    def _penalty(self, M: np.ndarray, G: np.ndarray) -> float:
        gg = float(np.abs(G.T @ G).max(initial=0.0))
        return PENALTY * float(np.abs(np.diag(M)).max()) / gg if gg > 0 else 0.0

    def _project(self, M, G, target, rhs_const) -> np.ndarray:
        """``x`` nearest ``target`` in the metric ``M`` with ``G x = rhs_const``: the
        saddle-point system solved by :func:`_saddle` (least squares in the directions
        where ``G`` has lost rank, so redundant or degenerate rows leave ``x`` there)."""
        kappa = self._penalty(M, G)
        P = M + kappa * G.T @ G
        x, _z = _saddle(P, G, M @ target + kappa * G.T @ rhs_const, rhs_const,
                        PROJECTION_RCOND)
        return x

    def step(self, t: float, h: float, q, v, a, lam) -> tuple:
        """One ALI3-P step of the trapezoidal rule from ``t`` to ``t + h``.

        Newton's iteration on ``(q₁, λ)``: each move solves the step's saddle-point
        system with the penalised tangent ``M + (h²/4) α GᵀG`` (:func:`_saddle`), so
        the multipliers come in one solve where ``G`` is regular and the penalty
        carries the directions where it has lost rank (several at once: A02 with
        N ≥ 2; redundant rows) — the plain augmented Lagrangian update ``λ += αΦ``
        converges there at a rate ``1 − O(α σ²)``, too slow near the position.

        The unknown is the step's increment ``Δ = q₁ − q``, not ``q₁``: the rule's
        velocity ``2Δ/h − v`` and acceleration ``4Δ/h² − …`` from ``q₁ − q`` lost the
        digits of ``q`` (an angle of a crank that has turned ten times, ``|q| ≈ 60``,
        leaves ``Δ`` an error of ``1e-14``, ``4Δ/h²`` one of ``1e-5`` at ``h = 3e-5``):
        A02's energy changed 5 times more across a bridge at 10 turns than at the start."""
        tn = t + h
        delta = h * v + 0.5 * h * h * a
        converged, last_move = False, np.inf
        for _it in range(MAX_NEWTON):
            q1 = q + delta
            v1 = 2.0 / h * delta - v
            a1 = 4.0 / (h * h) * delta - 4.0 / h * v - a
            M, F, blk = self.block(tn, q1, v1)
            G, phi = blk.G, blk.phi
            alpha = 4.0 / (h * h) * self._penalty(M, G)
            R = M @ a1 - F + G.T @ (lam + alpha * phi)
            T = M + (h * h / 4.0) * alpha * G.T @ G
            dq, z = _saddle(T, G, -(h * h / 4.0) * R, -phi, NEWTON_RCOND)
            delta = delta + dq
            q1 = q + delta
            lam = lam + 4.0 / (h * h) * z
            scale = 1.0 + np.abs(q1).max()
            move = float(np.abs(dq).max())
            if np.abs(phi).max(initial=0.0) <= SLOW_TOL and (
                    move <= NEWTON_TOL * scale
                    # at rounding: the moves stopped shrinking (the Schur complement of
                    # a loop that has lost many ranks amplifies the solve's rounding)
                    or (move <= SLOW_TOL * scale and move >= 0.5 * last_move)):
                converged = True
                break
            last_move = move
        if not converged:
            raise SimulationError(
                "the index-3 augmented Lagrangian step across a singular position did not "
                "converge", time=tn, state=dict(zip(self.system.state_names,
                                                    np.concatenate([q1, v]).tolist())),
                hint="reduce max_step (the bridge's step is bounded by it)",
                kind=faults.CONSTRAINTS)
        v1 = 2.0 / h * delta - v
        a1 = 4.0 / (h * h) * delta - 4.0 / h * v - a
        M, _F, blk = self.block(tn, q1, v1)
        g = blk.c - blk.G @ v1
        v1 = self._project(M, blk.G, v1, -g)
        M, _F, blk = self.block(tn, q1, v1)
        a1 = self._project(M, blk.G, a1, blk.gamma)
        return q1, v1, a1, lam, blk.G


def require_ali3(eq, *, engine: str, events, constraints) -> None:
    """Raise ``ValueError`` unless ``eq`` can run with ``formulation="ali3"``: holonomic
    constraints, speeds that are the coordinates' rates, the NumPy engine (or ``auto``),
    no events, projection (the bridge's own) as the stabilization."""
    from kidym.simulation.minimal import require_minimal_form

    try:
        require_minimal_form(eq)
    except ValueError as exc:
        raise ValueError(str(exc).replace("formulation='minimal'", "formulation='ali3'")
                         ) from exc
    del engine   # (both engines run it)
    if events:
        raise ValueError("formulation='ali3' does not locate events: use "
                         "formulation='augmented' for a run with events")
    method = constraints if isinstance(constraints, str) else constraints.method
    if method != "projection":
        raise ValueError(f"formulation='ali3' projects onto the constraints itself; "
                         f"constraints={method!r} is for the augmented route: leave it at "
                         "'projection'")


def _saddle(A: np.ndarray, G: np.ndarray, b1: np.ndarray, b2: np.ndarray,
            rcond: float) -> tuple[np.ndarray, np.ndarray]:
    """``(x, z)`` of ``A x + Gᵀ z = b1``, ``G x = b2`` with ``A`` symmetric positive
    definite: ``z`` from the Schur complement ``G A⁻¹ Gᵀ`` by least squares (cut-off
    ``rcond`` relative to its largest singular value), so rows of ``G`` that are
    dependent, or nearly so at a singular position, leave ``z`` its least-norm value."""
    if G.shape[0] == 0:
        return np.linalg.solve(A, b1), np.zeros(0)
    rhs = np.linalg.solve(A, np.column_stack([b1, G.T]))
    Ab1, AGt = rhs[:, 0], rhs[:, 1:]
    S = G @ AGt
    z = np.linalg.lstsq(S, G @ Ab1 - b2, rcond=rcond)[0]
    return Ab1 - AGt @ z, z


def continuable(eq, *, events, stabilization) -> bool:
    """Whether an augmented run of ``eq`` that the monitor stops at a singular position
    (:mod:`kidym.simulation.monitors`) goes on with ``formulation="ali3"`` from its last
    sample before the passage: what :func:`require_ali3` asks (holonomic constraints,
    ``q̇ = w``, no events, projection)."""
    try:
        require_ali3(eq, engine="auto", events=events, constraints=stabilization)
    except ValueError:
        return False
    return True


def continue_run(system, p: np.ndarray, t_from: float, y_from: np.ndarray, t1: float,
                 times: np.ndarray, **run) -> tuple:
    """:func:`run_ali3` from the last sample ``(t_from, y_from)`` of an augmented run
    before a passage (``run``: its keywords, ``reference`` the run's start); the samples
    after ``t_from`` only, and ``stats`` with ``continued_from`` (that time)."""
    rest = np.asarray(times, float)
    rest = np.concatenate([[t_from], rest[rest > t_from]])
    ok, status, message, nfev, t, y, stats, fault = run_ali3(
        system, p, t_from, t1, np.asarray(y_from, float), rest, **run)
    stats = {"continued_from": float(t_from), **stats}
    return ok, status, message, nfev, t[1:], y[:, 1:], stats, fault


#: ``stats["constraint_drift"]["formulation"]`` of a run continued by :func:`continue_run`.
CONTINUED = "augmented, then ali3"
#: Why (``stats["constraint_drift"]["formulation_choice"]``).
CONTINUED_WHY = ("the augmented run reached a singular position of the loop at "
                 "t = {t:.10g} (the constraint Jacobian lost rank); it went on from its "
                 "last sample before it with formulation='ali3', which passes such "
                 "positions on the branch the motion is on")


def _hermite(s: float, h: float, x0, d0, x1, d1) -> np.ndarray:
    h00 = 2 * s**3 - 3 * s**2 + 1
    h10 = s**3 - 2 * s**2 + s
    h01 = -2 * s**3 + 3 * s**2
    h11 = s**3 - s**2
    return h00 * x0 + h10 * h * d0 + h01 * x1 + h11 * h * d1


def run_ali3(system, p: np.ndarray, t0: float, t1: float, y0: np.ndarray, times: np.ndarray,
             *, method, rtol: float, atol: float, max_step: float, tol: float,
             phase=None, reference: tuple | None = None) -> tuple:
    """Integrate from the consistent state ``y0`` (see the module docstring).

    ``phase`` is the augmented run between bridges: :func:`numpy_phase` (SciPy's solver
    stepped here, the default) or :func:`compiled_phase` (the compiled engine's loop over
    windows of fine samples).

    Returns ``(ok, status, message, nfev, t, y, stats, fault)`` as
    :func:`kidym.simulation.minimal.run_minimal`: ``stats`` holds the bridges (their
    start and end times) and the bridge's step. ``reference``: a state ``(t, y)``
    whose ``σ_ρ/σ_1`` the ratios are measured against as well (the start of a run
    continued from near a singular position, :func:`continue_run`).
    """
    phase = numpy_phase if phase is None else phase
    bridge = _Bridge(system, p, max(tol, 1e-14))
    h_bridge = min(BRIDGE_FACTOR * rtol ** (1.0 / 3.0), max_step)
    G0 = system.constraint_block(t0, y0, p)[2].G
    s0 = np.linalg.svd(G0, compute_uv=False)
    rank = int(np.sum(s0 > 1e-10 * s0[0])) if s0.size and s0[0] > 0 else 0
    start = times <= t0
    out_t = list(times[start])
    out_y = [np.asarray(y0, float)] * int(start.sum())
    pending = list(times[~start][::-1])
    t, y = t0, np.asarray(y0, float)
    nfev = 0
    bridges: list[tuple[float, float]] = []
    ok, status, message, fault = True, 0, "reached the end", None

    def emit(t_new: float, value) -> None:
        while pending and pending[-1] <= t_new:
            tk = pending.pop()
            out_t.append(tk)
            out_y.append(value(tk))

    def jacobian(tt: float, yy: np.ndarray) -> np.ndarray:
        return system.constraint_block(tt, yy, p)[2].G

    def geometry(tt: float, yy: np.ndarray, G: np.ndarray | None = None) -> tuple:
        return _geometry(jacobian(tt, yy) if G is None else G, rank)

    # ``σ_ρ/σ_1`` is measured against the largest seen in the run: a long chain of loops
    # (A02 with N = 40) is ill-conditioned everywhere, not only near its singular positions
    watch = _Watch(geometry, geometry(t0, y0)[0], jacobian, rank)
    if reference is not None:
        watch.seen(geometry(*reference)[0])
    try:
        while t < t1 and fault is None:
            r, _cols, _det = geometry(t, y)
            if r >= watch.near:
                t, y, near, evals, fault = phase(
                    system, p, t, y, t1, watch, emit, pending=pending, method=method,
                    rtol=rtol, atol=atol, max_step=max_step)
                nfev += evals
                if not near or fault is not None:
                    continue
            # the bridge: ALI3-P steps until the position is passed and G is regular
            tb0 = t
            y = project(system, t, y, p, tol)   # (a NumPy step's dense state is not on Φ = 0)
            q, v, a, lam = bridge.start(t, y)
            _r, cols, det = geometry(t, y)
            crossed = False
            while t < t1:
                h = min(h_bridge, t1 - t)
                q1, v1, a1, lam, G = bridge.step(t, h, q, v, a, lam)
                tn = t + h
                qa, va, aa = q, v, a

                def value(tk, t=t, qa=qa, va=va, aa=aa, q1=q1, v1=v1, a1=a1, h=h):
                    s = (tk - t) / h
                    return np.concatenate([_hermite(s, h, qa, va, q1, v1),
                                           _hermite(s, h, va, aa, v1, a1)])

                emit(tn, value)
                t, q, v, a = tn, q1, v1, a1
                y = np.concatenate([q, v])
                r = watch.ratio(G)   # (G of the step's end, as its last evaluation's)
                # past the position: the best block flipped (one rank lost) or ``r``
                # was below NEAR (several ranks lost: the block's determinant vanishes
                # to an even order and need not change sign)
                # (or past the interval where the monitor's rule saw a passage: the
                # motion may have passed the position between two bridge steps)
                crossed = (crossed or r < watch.near
                           or det * float(np.linalg.det(G[:, cols])) <= 0
                           or (watch.until is not None and t >= watch.until))
                if crossed and r >= watch.near:
                    break
            bridges.append((tb0, t))
            watch.until = None
            if t < t1:
                y = project(system, t, y, p, tol)
    except SimulationError as exc:
        y_bad = np.array([exc.state[k] for k in system.state_names], dtype=float)
        fault = faults.Fault(exc.kind or faults.NON_FINITE, exc.reason, exc.time, y_bad,
                             exc.hint or "")
    if fault is None:
        # the monitor's rule on the samples of the augmented phases, as on any run: a
        # jump to another branch that the phase's own checks let through is a failure
        keep, fault = _phase_passage(system, p, out_t, out_y, bridges, watch.reference,
                                     _phase_refine(phase, system, p, method=method,
                                                   rtol=rtol, atol=atol,
                                                   max_step=max_step))
        out_t, out_y = out_t[:keep], out_y[:keep]
    if fault is not None:
        ok, status, message = False, -1, fault.detail
    stats = {"bridges": bridges, "bridge_step": h_bridge, "near": NEAR,
             "bridge_evaluations": bridge.evaluations}
    y_out = np.array(out_y, dtype=float).T.reshape(len(y0), len(out_t))
    return ok, status, message, nfev, np.array(out_t, dtype=float), y_out, stats, fault


def _phase_passage(system, p: np.ndarray, ts: list, Ys: list, bridges: list,
                   largest: float, refine) -> tuple:
    """``(samples kept, fault)``: the first passage that :func:`loop_passage` finds in
    the samples between bridges (intervals that no bridge overlaps), the samples up to
    the one before it; or all samples and None."""
    n = len(ts)
    free = [not any(a < ts[k + 1] and ts[k] < b for a, b in bridges) for k in range(n - 1)]
    k = 0
    while k < n - 1:
        if not free[k]:
            k += 1
            continue
        j = k
        while j < n - 1 and free[j]:
            j += 1
        passage = loop_passage(system, np.array(ts[k:j + 1], float),
                               np.array(Ys[k:j + 1], float), p, refine=refine,
                               edges=True, largest=largest)
        if passage is not None:
            i = k + passage.k
            error = passage.error(system.state_names, Ys[i],
                                  system.equations.constraints.names)
            return i + 1, faults.Fault(faults.CONSTRAINTS, error.reason, error.time,
                                       np.array(Ys[i], float), error.hint or "")
        k = j
    return n, None


def _phase_refine(phase, system, p: np.ndarray, *, method, rtol: float, atol: float,
                  max_step: float):
    """The monitor's ``refine``: the augmented run of ``phase``'s engine again."""
    if phase is compiled_phase:
        return _refine(system, p, method=method, rtol=rtol, atol=atol, max_step=max_step)

    solver_rtol, solver_atol = scipy_tolerances(method, rtol, atol)

    def refine(ta: float, tb: float, ya: np.ndarray, times: np.ndarray) -> tuple:
        from scipy.integrate import solve_ivp

        sol = solve_ivp(_rhs(system, p), (ta, tb), ya, method=method, t_eval=times,
                        rtol=solver_rtol, atol=solver_atol, max_step=max_step)
        return sol.t, sol.y.T
    return refine


class _Watch:
    """``σ_ρ/σ_1`` against :data:`NEAR` times the largest seen: ``near`` is the
    threshold, :meth:`seen` raises it with an accepted state's ratio."""

    def __init__(self, geometry, r0: float, jacobian, rank: int) -> None:
        self.geometry, self.reference = geometry, r0
        #: ``G`` at a state (one evaluation), and its rank at the start.
        self.jacobian, self.rank = jacobian, rank
        #: The end of an interval where the monitor's rule saw a passage (a bridge
        #: carries the motion at least to it), or None.
        self.until: float | None = None

    @property
    def near(self) -> float:
        return NEAR * self.reference

    def seen(self, r: float) -> None:
        self.reference = max(self.reference, r)

    def ratio(self, G: np.ndarray) -> float:
        """``σ_ρ/σ_1`` of ``G``."""
        return singular_ratio(G, self.rank)


def numpy_phase(system, p, t, y, t1, watch, emit, *, pending, method, rtol, atol,
                max_step) -> tuple:
    """The augmented run in SciPy's ``method``, stepped until a step would end near a
    singular position (the step is rejected). Returns ``(t, y, near, nfev, fault)``."""
    import scipy.integrate  # (loaded by the runs that need it)

    del pending
    solver_class = getattr(scipy.integrate, method) if isinstance(method, str) else method
    _r, cols, det = watch.geometry(t, y)
    # SciPy's DOP853 is asked for tighter tolerances (DOP853_TOL_FACTOR); the bridges
    # and the checks inside a step keep the requested rtol
    solver_rtol, solver_atol = scipy_tolerances(solver_class, rtol, atol)
    solver = solver_class(_rhs(system, p), t, y, t1, rtol=solver_rtol, atol=solver_atol,
                          max_step=max_step)
    near, fault = False, None
    while solver.status == "running":
        msg = solver.step()
        if solver.status == "failed":
            fault = faults.Fault(faults.INTEGRATOR, str(msg).rstrip("."), solver.t,
                                 solver.y)
            break
        G_new = watch.jacobian(solver.t, solver.y)
        r_new = watch.ratio(G_new)
        dense = solver.dense_output()
        # a step may leap over a position where several ranks are lost (no sign change
        # of the best block, ``r`` regular at both ends): ``r`` inside it, too, at
        # points no farther apart than the compiled phase's samples, and the monitor's
        # rule on them (A02 with N = 2 at rtol 1e-7 stepped across θ = -π unseen)
        h_bridge = min(BRIDGE_FACTOR * rtol ** (1.0 / 3.0), max_step)
        points = np.linspace(t, solver.t, max(STEP_CHECKS, int(np.ceil(
            (solver.t - t) / (CHECK_FACTOR * h_bridge)))) + 2)
        states = np.array([y, *(dense(tk) for tk in points[1:-1]), solver.y], float)
        inside = min(watch.ratio(watch.jacobian(tk, yk)) for tk, yk in
                     zip(points[1:-1], states[1:-1], strict=True))
        passage = None
        if not (min(r_new, inside) < watch.near
                or det * float(np.linalg.det(G_new[:, cols])) <= 0):
            passage = loop_passage(system, points, states, p, edges=True,
                                   largest=watch.reference, refine=_phase_refine(
                                       numpy_phase, system, p, method=method, rtol=rtol,
                                       atol=atol, max_step=max_step))
        if (passage is not None or min(r_new, inside) < watch.near
                or det * float(np.linalg.det(G_new[:, cols])) <= 0):
            # reject the step: bridge from the last of its dense states (a bridge step
            # apart) before the position, not from its start — a long step would leave
            # a long bridge, whose trapezoidal error grows with its length
            t_ok = _last_regular(system, p, watch, t, float(solver.t), dense, cols, det,
                                 h_bridge)
            if passage is not None:
                t_ok = min(t_ok, float(points[passage.k]))
                watch.until = float(points[passage.k + 1])
            if t_ok > t:
                emit(t_ok, dense)
                t, y = t_ok, np.asarray(dense(t_ok), float)
            near = True
            break
        emit(solver.t, dense)
        t, y = float(solver.t), np.array(solver.y)
        watch.seen(r_new)
        _r, cols, det = watch.geometry(t, y, G_new)
    return t, y, near, solver.nfev, fault


def _last_regular(system, p, watch, ta: float, tb: float, dense, cols: list[int],
                  det: float, spacing: float) -> float:
    """The last time of the step ``[ta, tb]`` (points ``spacing`` apart, its dense
    output) up to which no point is near a singular position or flips the best block."""
    t_ok = ta
    for tk in np.linspace(ta, tb, max(int(np.ceil((tb - ta) / spacing)), 1) + 1)[1:-1]:
        yk = dense(tk)
        G = watch.jacobian(tk, yk)
        r_k = watch.ratio(G)
        if r_k < watch.near or det * float(np.linalg.det(G[:, cols])) <= 0:
            break
        t_ok = float(tk)
    return t_ok


#: Points inside each step of the NumPy phase where ``σ_ρ/σ_1`` is checked.
STEP_CHECKS = 4
#: Samples of the compiled phase per second of motion scale: one every ``CHECK_FACTOR``
#: bridge steps; a window holds ``WINDOW_SAMPLES`` of them (the run after a passage
#: that the window's end leaves over is integrated in vain, so windows are short).
CHECK_FACTOR = 20
WINDOW_SAMPLES = 200
#: Steps of the compiled phase's loop between two of its samples (``max_steps`` of
#: :meth:`~kidym.simulation.compiled.CompiledSystem.integrate`, per output interval):
#: away from singular positions a step spans several samples.
PHASE_MAX_STEPS = 50
UNLIMITED_STEPS = 10_000_000


def compiled_phase(system, p, t, y, t1, watch, emit, *, pending, method, rtol, atol,
                   max_step) -> tuple:
    """The augmented run in the compiled engine's loop (:meth:`CompiledSystem.integrate`,
    projection as its stabilization), over windows of samples ``CHECK_FACTOR`` bridge
    steps apart and the output times, cut at the first sample near a singular position
    (or where the best block flips, or the loop failed): the run goes on from the sample
    before it. Returns ``(t, y, near, nfev, fault)``.

    A window's steps between two samples are limited to :data:`PHASE_MAX_STEPS`: the
    augmented run's steps shrink as it nears the position, and without the limit the
    loop integrated each window that held a passage through it to the window's end in
    vain (A02 with N = 1: 4.7 million evaluations over 20 s, about 0.04 million with
    the limit). A window cut by the limit goes on from its last sample (the whole
    window again, unlimited, where the cut left no sample)."""
    spacing = CHECK_FACTOR * min(BRIDGE_FACTOR * rtol ** (1.0 / 3.0), max_step)
    nfev = 0
    budget = PHASE_MAX_STEPS
    while t < t1:
        tw = min(t1, t + WINDOW_SAMPLES * spacing)
        grid = np.linspace(t, tw, max(int(np.ceil((tw - t) / spacing)), 1) + 1)
        wanted = [tk for tk in pending if t < tk <= tw]
        grid = np.union1d(grid, wanted)
        raw = system.integrate(y, p, grid, t0=t, method=method, rtol=rtol, atol=atol,
                               max_step=max_step, max_steps=budget)
        nfev += raw["nfev"]
        ts, Ys = raw["t"], raw["y"]
        _r, cols, det = watch.geometry(t, y)
        last = 0
        cut = (raw["status"] < 0 and budget == PHASE_MAX_STEPS
               and "TOO_MUCH_WORK" in raw["message"])
        near = (raw["status"] < 0 or len(ts) < len(grid)) and not cut
        for k in range(1, len(ts)):
            G = watch.jacobian(ts[k], Ys[k])
            r_k = watch.ratio(G)
            if r_k < watch.near or det * float(np.linalg.det(G[:, cols])) <= 0:
                near = True
                break
            watch.seen(r_k)
            last = k
        # the monitor's rule on the samples (:func:`loop_passage`): the loop may jump to
        # another branch between two samples without coming near a sample's threshold
        # or flipping the best block (the spring four-bar onto the branch with its crank
        # held at 0); the bridge goes on from the sample before such an interval
        passage = loop_passage(system, ts[:last + 1], Ys[:last + 1], p,
                               refine=_refine(system, p, method=method, rtol=rtol,
                                              atol=atol, max_step=max_step),
                               edges=True, largest=watch.reference)
        if passage is not None:
            last, near = passage.k, True
            watch.until = passage.t_after   # (the bridge carries the motion past it)
        emit(ts[last], _samples(ts[:last + 1], Ys[:last + 1]))
        t, y = float(ts[last]), np.array(Ys[last])
        if near:
            return t, y, True, nfev, None
        budget = UNLIMITED_STEPS if cut and last == 0 else PHASE_MAX_STEPS
    return t, y, False, nfev, None


def _refine(system, p: np.ndarray, **options):
    """The compiled loop from a state with finer output times (the monitor's ``refine``)."""
    def refine(ta: float, tb: float, ya: np.ndarray, times: np.ndarray) -> tuple:
        del tb
        sub = system.integrate(ya, p, times, t0=ta, **options)
        return sub["t"], sub["y"]
    return refine


def _samples(ts: np.ndarray, Ys: np.ndarray):
    """The state at one of the times ``ts`` (the output times are among them)."""
    def value(tk: float) -> np.ndarray:
        return np.array(Ys[int(np.argmin(np.abs(ts - tk)))])
    return value


def _rhs(system, p: np.ndarray):
    def fun(t: float, y: np.ndarray) -> np.ndarray:
        return system.rhs(t, y, p)
    return fun
