"""Equilibrium (``РАСЧЕТ := СТАТИКА``): ``F(q, 0, t₀) + Gᵀλ = 0``, ``Φ(q, t₀) = 0``.

With every speed zero, ``M ẇ = F + Gᵀλ`` has ``ẇ = 0`` exactly when the generalized
forces balance the constraint reactions. The unknowns are the coordinates ``q`` and
the multipliers ``λ`` of ``УРАВНЕНИЯ``; the equations are the balance (``n_w``) and the
holonomic constraints (``Φ = 0``). Newton's method on their analytic Jacobian
(``∂F/∂q + Σ λ_i ∂G_i/∂q``, ``Gᵀ``, ``Φ_q``, all named partial derivatives of
:mod:`kidym.analysis.derivatives`) starts from the model's initial values; each step is
the least-change (minimum-norm) solution of the linearised equations, so where the
equilibrium is not isolated — a cyclic coordinate, the position of a rolling body, a
quaternion's norm — those coordinates keep their initial values. A step that does not
reduce the residual is halved (up to 30 times).

The stiffness ``K = −∂(F + Gᵀλ)/∂q · B`` (``B = ∂q̇/∂w``; ``B = I`` for generalized
velocities) on the admissible displacements ``G δπ = 0`` decides stability for potential
forces (Lagrange–Dirichlet): positive definite — stable; a negative eigenvalue —
unstable; semidefinite — not decided at second order.

A model whose equations depend on time is solved with time frozen at ``t₀`` (the
model's start time, or ``t``): the equilibrium of the system as it is at that instant;
the report says so.

A model with controls of programmed constraints (``НЕИЗВЕСТНЫЕ``, seed 004) is in
equilibrium as a closed loop: ``F⁰(q, 0) + H(q, 0) u(q) = 0`` with the controls ``u(q)``
solved from the constraints at every guess (:func:`kidym.analysis.linearize.
closed_loop_point`, whose exact derivatives give the Jacobian ``∂F⁰/∂q + ∂H/∂q u + H
∂u/∂q``); the equilibrium controls ``u*`` are reported (the holding torques of an arm at
a programmed posture). The closed loop's forces are not potential, so its stability is
decided by the eigenvalues of the linearised ``A`` (:func:`kidym.analysis.linearize.
linearize` at ``(q*, 0)``), not by the stiffness: every ``Re s < 0`` — stable
(asymptotically), one ``Re s > 0`` — unstable, the largest on the imaginary axis (an
undamped zero dynamics, a pendulum left free by the constraints) — not decided.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from kidym.analysis.derivatives import StateDerivatives
from kidym.analysis.linearize import operating_point
from kidym.deprecation import renamed_keyword
from kidym.eom.equations import Equations

#: Relative tolerance of the balance (scaled by the generalized forces' size).
RTOL = 1e-11
#: Real parts within this much of ``max |s|`` count as 0 in the closed loop's verdict
#: (the tolerance of :mod:`kidym.analysis.modes`, 1e-8 of ``‖A‖``).
CLOSED_LOOP_TOL = 1e-8


@dataclass(frozen=True)
class Equilibrium:
    """The result of :func:`equilibrium`.

    Attributes
    ----------
    coordinates : dict of str to float
        ``q*`` by name.
    multipliers : dict of str to float
        ``λ*`` of the constraints (the reactions along them), by output name ``λf1``.
    residual : float
        ``max |F + Gᵀλ|, |Φ|`` at ``q*``.
    scale : float
        The size of the generalized forces the residual is measured against.
    iterations : int
    success : bool
    message : str
    t : float
        The time the equilibrium is for.
    time_dependent : bool
        Whether the equations depend on time (the equilibrium is then at frozen ``t``).
    stiffness : ndarray, shape (k, k)
        ``K`` on the admissible displacements (``k = n_w − m``).
    stiffness_eigenvalues : ndarray, shape (k,)
        Eigenvalues of its symmetric part, ascending.
    symmetric : bool
        Whether ``K`` is symmetric (potential forces); otherwise its definiteness does
        not decide stability.
    stability : {"stable", "unstable", "undecided"}
    parameters : dict of str to float
    controls : dict of str to float
        With controls of programmed constraints: ``u*`` by name (empty otherwise).
    eigenvalues : ndarray or None
        With controls: the eigenvalues of the closed loop's linearised ``A`` at the
        equilibrium, which decide ``stability`` (None otherwise).
    """

    coordinates: dict[str, float]
    multipliers: dict[str, float]
    residual: float
    scale: float
    iterations: int
    success: bool
    message: str
    t: float
    time_dependent: bool
    stiffness: np.ndarray
    stiffness_eigenvalues: np.ndarray
    symmetric: bool
    stability: str
    parameters: dict[str, float]
    controls: dict[str, float] = field(default_factory=dict)
    eigenvalues: np.ndarray | None = None

    def __repr__(self) -> str:
        q = ", ".join(f"{k}={v:.6g}" for k, v in list(self.coordinates.items())[:6])
        more = ", …" if len(self.coordinates) > 6 else ""
        return (f"Equilibrium(success={self.success}, {q}{more}, "
                f"stability={self.stability!r}, residual={self.residual:.3g})")

    def _repr_html_(self) -> str:
        """Jupyter: the equilibrium, its reactions and stability (:meth:`describe`)."""
        from kidym.display import summary

        return summary("kidym Equilibrium", [("success", str(self.success)),
                                             ("stability", self.stability)],
                       text=self.describe())

    def describe(self) -> str:
        """A few lines for the terminal."""
        lines = [("equilibrium found" if self.success else "no equilibrium found")
                 + f" in {self.iterations} Newton iteration"
                 + ("s" if self.iterations != 1 else "")
                 + (f" (residual below {RTOL:g} of the forces, {self.scale:.3g})" if self.success
                    else f" (residual {self.residual:.3g}, forces of size {self.scale:.3g})")]
        if not self.success:
            lines.append(self.message)
        if self.time_dependent:
            lines.append(f"note: the equations depend on time; this is the equilibrium of "
                         f"the system frozen at t = {self.t:g}")
        for k, v in self.coordinates.items():
            lines.append(f"  {k} = {(0.0 if abs(v) < 1e-12 else v):.10g}")
        for k, v in self.multipliers.items():
            lines.append(f"  {k} = {(0.0 if abs(v) < 1e-12 * self.scale else v):.10g}"
                         "  (reaction)")
        for k, v in self.controls.items():
            lines.append(f"  {k} = {(0.0 if abs(v) < 1e-12 * self.scale else v):.10g}"
                         "  (control)")
        if self.eigenvalues is not None:
            lines += self._closed_loop_lines()
            return "\n".join(lines)
        tiny = 1e-9 * max(self.scale, float(np.abs(self.stiffness).max(initial=0.0)))
        ev = ", ".join(f"{(0.0 if abs(v) <= tiny else v):.6g}"
                       for v in self.stiffness_eigenvalues)
        lines.append(f"stiffness on the admissible displacements: eigenvalues {ev or '(none)'}"
                     + ("" if self.symmetric else " (of its symmetric part; K is not "
                        "symmetric: circulatory forces)"))
        lines.append("stability: " + {
            "stable": "stable (K positive definite: Lagrange–Dirichlet, potential forces)",
            "unstable": "unstable (K has a negative eigenvalue)",
            "undecided": "not decided by the stiffness (K semidefinite: neutral directions,"
                         " or circulatory forces); see `РАСЧЕТ := СВОБОДНЫЕ КОЛЕБАНИЯ`",
        }[self.stability])
        return "\n".join(lines)

    def _closed_loop_lines(self) -> list[str]:
        ev = self.eigenvalues
        tol = CLOSED_LOOP_TOL * max(1.0, float(np.abs(ev).max(initial=0.0)))
        top = float(ev.real.max()) if ev.size else 0.0
        top = 0.0 if abs(top) <= tol else top
        return [
            "closed loop (the controls hold the programmed constraints): its forces are not "
            "potential,",
            f"so the eigenvalues of the linearised A decide stability, not the stiffness "
            f"({ev.size} eigenvalues, max Re s = {top:.6g})",
            "stability: " + {
                "stable": "stable (every eigenvalue of A has Re s < 0: asymptotically)",
                "unstable": "unstable (an eigenvalue of A has Re s > 0)",
                "undecided": "not decided by the linear terms (the largest Re s is 0: an "
                             "undamped motion the constraints leave free); see `РАСЧЕТ := "
                             "СВОБОДНЫЕ КОЛЕБАНИЯ`"}[self.stability]]

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"coordinates": self.coordinates, "multipliers": self.multipliers,
                "controls": self.controls,
                "eigenvalues": (None if self.eigenvalues is None
                                else [[s.real, s.imag] for s in self.eigenvalues]),
                "residual": self.residual, "scale": self.scale,
                "iterations": self.iterations, "success": self.success,
                "message": self.message, "t": self.t,
                "time_dependent": self.time_dependent,
                "stiffness": self.stiffness.tolist(),
                "stiffness_eigenvalues": self.stiffness_eigenvalues.tolist(),
                "symmetric": self.symmetric, "stability": self.stability,
                "parameters": self.parameters}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)


def _pieces(eq: Equations, der: StateDerivatives, t: float, y: np.ndarray, p: np.ndarray,
            lam: np.ndarray):
    """Residual ``[F + Gᵀλ; Φ_hol]`` and its Jacobian by ``[q; λ]`` at ``(q, w = 0)``;
    with controls ``F⁰ + H u(q)`` and ``∂F⁰/∂q + ∂H/∂q u + H ∂u/∂q`` (and, in place of
    ``G``, the controls ``u``)."""
    n_q, n_w, m = eq.n_q, eq.n_w, eq.m
    if eq.controls is not None:
        from kidym.analysis.linearize import closed_loop_point
        from kidym.eom.controls import ControlSolveError, split
        pt = der(t, y, p, mass=True)        # (exact ∂u/∂q away from ẇ = 0 too)
        try:
            _wdot, u, dx = closed_loop_point(eq, pt)
        except (ControlSolveError, ValueError):   # no controls here: not a step to take
            nan = np.full(n_w, np.nan)
            return nan, np.full((n_w, n_q), np.nan), pt, nan
        F0, block = split(pt.F, n_w, eq.controls.r, eq.controls.s)
        k = n_w + eq.controls.r * (1 + n_w)
        dH = pt.dF[:n_q, k:].reshape(n_q, n_w, eq.controls.s)
        R = F0 + block.H @ u
        J = pt.dF[:n_q, :n_w].T + np.einsum("kws,s->wk", dH, u) + block.H @ dx[n_w:, :n_q]
        return R, J, pt, u
    pt = der(t, y, p)
    F = pt.F[:n_w]
    dFq = pt.dF[:n_q, :n_w].T                          # (n_w, n_q)
    if m == 0:
        return F, dFq, pt, np.zeros((0, n_w))
    G = pt.F[n_w + 3 * m:].reshape(m, n_w)
    dG = pt.dF[:n_q, n_w + 3 * m:].reshape(n_q, m, n_w)
    hol = [i for i, h in enumerate(eq.constraints.holonomic) if h]
    phi = pt.F[n_w + m:n_w + 2 * m][hol]
    dphi = pt.dF[:n_q, n_w + m:n_w + 2 * m][:, hol].T  # (m_h, n_q)
    R = np.concatenate([F + G.T @ lam, phi])
    top = np.hstack([dFq + np.einsum("kiw,i->wk", dG, lam), G.T])
    bottom = np.hstack([dphi, np.zeros((len(hol), m))])
    return R, np.vstack([top, bottom]), pt, G


@renamed_keyword("initial", "state")
@renamed_keyword("params", "parameters")
def equilibrium(equations: Equations, *, state: Mapping[str, float] | None = None,
                parameters: Mapping[str, float] | None = None, t: float | None = None,
                max_iterations: int = 50, rtol: float = RTOL,
                derivatives: StateDerivatives | None = None,
                raise_on_failure: bool = True) -> Equilibrium:
    """Find the equilibrium nearest the initial values (see the module docstring).

    Parameters
    ----------
    equations : Equations
        From :func:`kidym.derive`.
    state : mapping of str to float, optional
        The operating point Newton starts from, by coordinate name (default: the
        model's initial values); ``initial=`` is its old name (deprecated).
    parameters : mapping of str to float, optional
        Parameter values (overrides); ``params=`` is its old name (deprecated).
    t : float, optional
        The time (default: the model's start time).
    max_iterations : int
    rtol : float
        The balance is reached when ``max|F + Gᵀλ|, |Φ| ≤ rtol · max(1, scale)``, scale
        the largest generalized force term at the guess.
    derivatives : StateDerivatives, optional
        Reuse formed derivatives (no inputs).
    raise_on_failure : bool
        Raise ``ValueError`` when Newton does not converge (default), or return the
        result with ``success=False``.

    Returns
    -------
    Equilibrium

    Examples
    --------
    >>> import kidym
    >>> eq = kidym.derive(kidym.parse('''
    ...     m = 1; c = 100; g = 9.81;
    ...     Block | Sy(y) | m(m), Jx(0), Jy(0), Jz(0);
    ...     Cspring.y = c;
    ...     GRAVITY := 0, -g, 0;
    ... '''))
    >>> round(kidym.equilibrium(eq).coordinates["y"], 6)     # −m g / c
    -0.0981
    """
    eq = equations
    der = derivatives if derivatives is not None else StateDerivatives.build(eq)
    t0, y, p = operating_point(eq, state, parameters, t)
    n_q, n_w, m = eq.n_q, eq.n_w, eq.m
    y[n_q:] = 0.0
    lam = np.zeros(m)
    R, J, pt, G = _pieces(eq, der, t0, y, p, lam)
    scale = max(1.0, float(np.abs(R).max(initial=0.0)), float(np.abs(J).max(initial=0.0)))
    if m:   # start λ at the least-squares balance of F at the guess
        lam = -np.linalg.lstsq(G.T, pt.F[:n_w], rcond=None)[0]
        R, J, pt, G = _pieces(eq, der, t0, y, p, lam)
    tol = rtol * scale
    it, message, success = 0, "", False
    norm = float(np.abs(R).max(initial=0.0))
    while True:
        if not np.all(np.isfinite(R)) or not np.all(np.isfinite(J)):
            message = ("the equations cannot be evaluated at the current guess"
                       + (" (or the controls cannot reach a programmed constraint there: "
                          "G M⁻¹ H loses rank)" if eq.controls is not None else "")
                       + "; give initial values nearer the equilibrium")
            break
        if norm <= tol:
            success = True
            break
        if it >= max_iterations:
            message = (f"Newton's method did not converge in {max_iterations} iterations "
                       f"(residual {norm:.3g}); give initial values nearer the equilibrium "
                       "or check that the loads can be balanced")
            break
        step = np.linalg.lstsq(J, -R, rcond=None)[0]
        it += 1
        a = 1.0
        for _ in range(30):
            y_new = y.copy()
            y_new[:n_q] += a * step[:n_q]
            lam_new = lam + a * step[n_q:]
            R_new, J_new, pt_new, G_new = _pieces(eq, der, t0, y_new, p, lam_new)
            n_new = float(np.abs(R_new).max(initial=0.0))
            if np.isfinite(n_new) and n_new < norm:
                break
            a /= 2
        else:
            message = (f"Newton's method stalled at residual {norm:.3g} (no step reduces it): "
                       "the loads may have no equilibrium near the guess")
            break
        y, lam, R, J, pt, G, norm = y_new, lam_new, R_new, J_new, pt_new, G_new, n_new
    names = [str(q) for q in eq.coordinates]
    controls, eigenvalues = {}, None
    if eq.controls is not None:
        K, ev, symmetric, _ = _stiffness(eq, pt, lam, scale, J)
        controls = dict(zip(eq.controls.control_names, map(float, G)))
        stability, eigenvalues = _closed_loop_stability(eq, der, t0, y, p, success)
    else:
        K, ev, symmetric, stability = _stiffness(eq, pt, lam, scale)
    result = Equilibrium(
        coordinates=dict(zip(names, map(float, y[:n_q]))),
        multipliers=(dict(zip(eq.constraints.multiplier_names, map(float, lam)))
                     if eq.constraints is not None else {}),
        residual=norm, scale=scale, iterations=it, success=success,
        message=message or "converged", t=t0,
        time_dependent=bool(eq.graph.mentions(eq.roots(), {eq.graph.time})),
        stiffness=K, stiffness_eigenvalues=ev, symmetric=symmetric, stability=stability,
        parameters={q.name: float(v) for q, v in zip(eq.model.parameters, p)},
        controls=controls, eigenvalues=eigenvalues)
    if not success and raise_on_failure:
        raise ValueError(f"statics of model `{eq.model.name}`: {message}")
    return result


def _closed_loop_stability(eq: Equations, der: StateDerivatives, t: float, y: np.ndarray,
                           p: np.ndarray, success: bool) -> tuple[str, np.ndarray | None]:
    """The verdict of a closed loop with controls from the eigenvalues of its ``A`` at
    ``(q*, 0)`` (``"undecided"``, no eigenvalues, where no equilibrium was found)."""
    if not success:
        return "undecided", None
    from scipy import linalg

    from kidym.analysis.linearize import linearize
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    lin = linearize(eq, dict(zip(names, map(float, y))), parameters=dict(
        zip((q.name for q in eq.model.parameters), map(float, p))), t=t, derivatives=der)
    ev = linalg.eigvals(lin.A)
    tol = CLOSED_LOOP_TOL * max(1.0, float(np.abs(lin.A).max(initial=0.0)))
    top = float(ev.real.max()) if ev.size else 0.0
    verdict = "unstable" if top > tol else ("stable" if top < -tol else "undecided")
    return verdict, ev[np.lexsort((ev.imag, -ev.real))]


def _stiffness(eq: Equations, pt, lam: np.ndarray, scale: float,
               closed_loop: np.ndarray | None = None):
    """``K`` on the admissible displacements, its symmetric part's eigenvalues, the
    verdict; ``closed_loop``: ``∂(F⁰ + H u)/∂q`` of a model with controls."""
    from scipy import linalg
    n_q, n_w, m = eq.n_q, eq.n_w, eq.m
    Bw = pt.dqdot[n_q:n_q + n_w, :].T                  # ∂q̇/∂w, (n_q, n_w)
    dFq = pt.dF[:n_q, :n_w].T if closed_loop is None else closed_loop
    if m:
        dG = pt.dF[:n_q, n_w + 3 * m:].reshape(n_q, m, n_w)
        dFq = dFq + np.einsum("kiw,i->wk", dG, lam)
        G = pt.F[n_w + 3 * m:].reshape(m, n_w)
        N = linalg.null_space(G)
    else:
        N = np.eye(n_w)
    K = -(N.T @ dFq @ Bw @ N)
    sym = (K + K.T) / 2
    ev = np.linalg.eigvalsh(sym) if K.size else np.zeros(0)
    tol = 1e-9 * max(scale, float(np.abs(K).max(initial=0.0)))
    symmetric = bool(np.abs(K - K.T).max(initial=0.0) <= tol)
    if ev.size and ev[0] < -tol:
        stability = "unstable" if symmetric else "undecided"
    elif ev.size and symmetric and ev[0] > tol:
        stability = "stable"
    else:
        stability = "undecided"
    return K, ev, symmetric, stability
