"""Linearisation ``δẋ = A δx + B δu`` about an equilibrium or a steady motion.

The state is ``y = [q, w]`` (coordinates, independent speeds) with ``q̇ = B(q, t) w + β``
and ``M ẇ = F`` — for a model with pseudo-velocities or velocity formulas (the rolling
disc's ``x't = r*phi't*cos(psi)``) these are already the reduced non-holonomic equations,
so ``x = y``. With ``УРАВНЕНИЯ`` the state also carries dependent coordinates and speeds:
the linearised constraints ``δΦ = Φ_q δq = 0``, ``δc = c_q δq + c_w δw = 0`` give the
dependent states (chosen by pivoting their Jacobian, speeds first) as ``δy_dep = D δx``,
and ``A`` is the Jacobian of the reduced equations ``ẋ = f_ind(x, h(x))``:
``δy = T δx``, ``T = [I; D]``, ``A = (A_y T)[independent]``.

``A_y`` itself is exact: ``∂ẇ/∂y_k = A⁻¹(∂b/∂y_k − ∂A/∂y_k·x)`` over the named partial
derivatives of :class:`~kidym.analysis.derivatives.StateDerivatives` (the chain rule,
nothing expanded, nothing differenced). ``B`` is the same with the inputs — parameters
named as inputs — in place of the states.

With controls of programmed constraints (``НЕИЗВЕСТНЫЕ``, seed 004) ``A`` is the closed
loop's: the controls are solved at every state, and that solve is differentiated
exactly (:func:`closed_loop_point`); the controls at the point and their derivatives
(the feedback gain ``∂u/∂x``) are part of the result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kidym.analysis.consistent import consistent_point, solved_text
from kidym.analysis.derivatives import Point, StateDerivatives
from kidym.analysis.linear_form import SymbolicLinearization, symbolic_form
from kidym.deprecation import renamed_keyword
from kidym.eom.constraints import choose_dependent
from kidym.eom.equations import Equations


def operating_point(eq: Equations, state: Mapping[str, float] | None = None,
                    parameters: Mapping[str, float] | None = None,
                    t: float | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """``(t, y, p)``: the model's initial values and start time, ``state`` and ``parameters``
    applied (states given neither way are 0).

    Raises
    ------
    KeyError
        A name in ``state`` that is not a state (the message lists the states).
    ValueError
        A coefficient of a programmed constraint above 0 with ``parameters``.
    """
    from kidym.simulation.layout import canonical_initial, parameter_vector

    model = eq.model
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    values = model.initial_values(parameters)
    for k, v in canonical_initial(model, state).items():
        if k not in names:
            raise KeyError(f"`{k}` is not a state of model `{model.name}`; the state is "
                           + ", ".join(names))
        values[k] = float(v)
    y = np.array([values.get(n, 0.0) for n in names], dtype=float)
    t0 = model.time_span(parameters)[0] if t is None else float(t)
    p = parameter_vector(model, parameters)
    if eq.controls is not None:     # the laws (5.5) of the closed loop, as for runs
        from kidym.model.programmed import check_coefficients
        check_coefficients(model, {q.name: float(v) for q, v in zip(model.parameters, p)})
    return t0, y, p


def given_names(eq: Equations, state: Mapping[str, float] | None) -> set[str]:
    """The states that ``state`` gives, by their canonical names."""
    from kidym.simulation.layout import canonical_initial

    return set(canonical_initial(eq.model, state))


def solve_point(eq: Equations, pt: Point) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ẇ, λ, ∂[ẇ; λ]/∂bases)`` at ``pt`` (exact constraints, no Baumgarte terms); for
    a model with controls ``(ẇ, u, ∂[ẇ; u]/∂bases)`` of the closed loop
    (:func:`closed_loop_point`)."""
    from scipy import linalg
    if eq.controls is not None:
        return closed_loop_point(eq, pt)
    n_w, m = eq.n_w, eq.m
    n_b = pt.dM.shape[0]
    if m == 0:
        A, dA, rhs, db = pt.M, pt.dM, pt.F[:n_w], pt.dF[:, :n_w]
    else:
        F = pt.F
        G = F[n_w + 3 * m:].reshape(m, n_w)
        A = np.block([[pt.M, -G.T], [G, np.zeros((m, m))]])
        rhs = np.concatenate([F[:n_w], F[n_w:n_w + m]])
        dG = pt.dF[:, n_w + 3 * m:].reshape(n_b, m, n_w)
        dA = np.zeros((n_b, n_w + m, n_w + m))
        dA[:, :n_w, :n_w] = pt.dM
        dA[:, :n_w, n_w:] = -np.transpose(dG, (0, 2, 1))
        dA[:, n_w:, :n_w] = dG
        db = np.concatenate([pt.dF[:, :n_w], pt.dF[:, n_w:n_w + m]], axis=1)
    try:
        lu = linalg.lu_factor(A, check_finite=True)
    except ValueError as exc:
        raise ValueError("the equations cannot be evaluated at this state (a value is not "
                         "finite)") from exc
    if np.any(np.abs(np.diag(lu[0])) < 1e-14 * max(1.0, np.abs(A).max())):
        raise np.linalg.LinAlgError(
            "the mass matrix (or, with constraints, the augmented matrix [M −Gᵀ; G 0]) is "
            "singular at this state: the constraints lock, repeat each other, or a body "
            "has no inertia in some direction")
    x = linalg.lu_solve(lu, rhs)
    cols = db - np.einsum("kij,j->ki", dA, x)
    dx = linalg.lu_solve(lu, cols.T)
    return x[:n_w], x[n_w:], dx


def needs_mass_derivatives(eq: Equations, wdot: np.ndarray, scale: float) -> bool:
    """Whether ``∂M/∂y`` enters the derivatives of the solve at a point with ``ẇ``:
    where ``ẇ ≠ 0`` (as ``∂M/∂y · ẇ``), and with controls solved by least norm
    (``S > r``: ``Γ = G M⁻¹ H`` itself is differentiated)."""
    if eq.controls is not None and eq.controls.s > eq.controls.r:
        return True
    return bool(np.abs(wdot).max(initial=0.0) > 1e-12 * max(1.0, scale))


def closed_loop_point(eq: Equations, pt: Point) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ẇ, u, ∂[ẇ; u]/∂bases)`` of a model whose controls hold programmed constraints.

    ``M ẇ = F⁰ + H u`` with ``u`` from ``Γ u = r`` (:func:`kidym.eom.controls.
    solve_controls`: ``a = M⁻¹F⁰``, ``B_m = M⁻¹H``, ``Γ = G B_m``, ``r = b − G a``; LU
    for ``S = r``, least norm ``u = Γᵀν``, ``ΓΓᵀν = r`` for ``S > r``, through
    ``Γᵀ = QR``), differentiated exactly by every base ``k``::

        ∂a = M⁻¹(∂F⁰ − ∂M a)          ∂B_m = M⁻¹(∂H − ∂M B_m)
        ∂Γ = ∂G B_m + G ∂B_m          ∂r = ∂b − ∂G a − G ∂a
        ∂u = Γ⁻¹(∂r − ∂Γ u)                                  (S = r)
        ∂u = ∂Γᵀν + Γᵀ(ΓΓᵀ)⁻¹(∂r − (∂Γ Γᵀ + Γ ∂Γᵀ)ν)        (S > r)
        ∂ẇ = ∂a + ∂B_m u + B_m ∂u

    ``pt.dM`` must hold ``∂M`` where :func:`needs_mass_derivatives` says so (at ``ẇ =
    0`` with ``S = r`` its terms cancel).

    Raises
    ------
    kidym.eom.controls.ControlSolveError
        Singular ``M``, or a programmed constraint the controls cannot reach here (the
        message names it).
    """
    from scipy import linalg

    from kidym.eom.controls import ControlSolveError, solve_controls, split
    ctl = eq.controls
    n_w, r, s = eq.n_w, ctl.r, ctl.s
    if not (np.all(np.isfinite(pt.F)) and np.all(np.isfinite(pt.M))):
        raise ValueError("the equations cannot be evaluated at this state (a value is not "
                         "finite)")
    F0, block = split(pt.F, n_w, r, s)
    try:
        wdot, u = solve_controls(pt.M, F0, block)
    except ControlSolveError as exc:
        if exc.unreachable:
            names = ", ".join(f"`{ctl.names[i]}`" for i in exc.unreachable)
            raise ControlSolveError(
                f"the controls {', '.join(f'`{c}`' for c in ctl.control_names)} cannot "
                f"reach programmed constraint {names} at this state (G M⁻¹ H has lost "
                "rank): a singular configuration of the mechanism", exc.unreachable) from exc
        raise
    n_b = pt.dF.shape[0]
    G, H, b = block.G, block.H, block.target
    k = n_w + r
    dF0, db = pt.dF[:, :n_w], pt.dF[:, n_w:k]
    dG = pt.dF[:, k:k + r * n_w].reshape(n_b, r, n_w)
    dH = pt.dF[:, k + r * n_w:].reshape(n_b, n_w, s)
    cf = linalg.cho_factor(pt.M)
    a = linalg.cho_solve(cf, F0)
    Bm = linalg.cho_solve(cf, H)

    def minv(x: np.ndarray) -> np.ndarray:      # M⁻¹ along axis 1 of (n_b, n_w, …)
        flat = np.moveaxis(x, 1, 0).reshape(n_w, -1)
        return np.moveaxis(linalg.cho_solve(cf, flat).reshape((n_w, n_b, *x.shape[2:])),
                           0, 1)

    da = minv(dF0 - np.einsum("kij,j->ki", pt.dM, a))
    dBm = minv(dH - np.einsum("kij,js->kis", pt.dM, Bm))
    gamma = G @ Bm
    dgamma = np.einsum("kiw,ws->kis", dG, Bm) + np.einsum("iw,kws->kis", G, dBm)
    rhs = b - G @ a
    dr = db - np.einsum("kiw,w->ki", dG, a) - da @ G.T
    if s == r:
        du = linalg.solve(gamma, (dr - np.einsum("kis,s->ki", dgamma, u)).T).T
    else:
        # Γᵀ = Q R (as solve_controls): ΓΓᵀ = RᵀR and Γᵀ(ΓΓᵀ)⁻¹ = Q R⁻ᵀ, no normal
        # equations formed (they would square Γ's condition number)
        Q, R = np.linalg.qr(gamma.T)
        z = linalg.solve_triangular(R, rhs, trans="T")
        nu = linalg.solve_triangular(R, z)
        dgg = np.einsum("kis,js->kij", dgamma, gamma)
        dgg = dgg + np.transpose(dgg, (0, 2, 1))
        dz = linalg.solve_triangular(R, (dr - np.einsum("kij,j->ki", dgg, nu)).T, trans="T")
        du = np.einsum("kis,i->ks", dgamma, nu) + (Q @ dz).T
    dwdot = da + np.einsum("kws,s->kw", dBm, u) + du @ Bm.T
    return wdot, u, np.vstack([dwdot.T, du.T])


def constraint_rows(eq: Equations, pt: Point) -> np.ndarray:
    """The linearised constraints at ``pt`` as rows over ``δy``: ``Φ_q`` of the holonomic
    ones, then ``∂c/∂y`` of all; shape (m_h + m, n_y)."""
    n_q, n_w, m = eq.n_q, eq.n_w, eq.m
    n_y = n_q + n_w
    if m == 0:
        return np.zeros((0, n_y))
    rows = []
    for i, hol in enumerate(eq.constraints.holonomic):
        if hol:
            r = np.zeros(n_y)
            r[:n_q] = pt.dF[:n_q, n_w + m + i]
            rows.append(r)
    for i in range(m):
        rows.append(pt.dF[:n_y, n_w + 2 * m + i])
    return np.array(rows)


@dataclass(frozen=True)
class Linearization:
    """``δẋ = A δx + B δu`` about one state (see the module docstring).

    Attributes
    ----------
    states : tuple of str
        The independent states ``x`` (all of ``q, w`` without ``УРАВНЕНИЯ``).
    inputs : tuple of str
        The inputs ``u`` (parameters named as inputs).
    A : ndarray, shape (n_x, n_x)
    B : ndarray, shape (n_x, n_u)
    t : float
        Time of the operating point.
    point : dict of str to float
        The operating point: every state ``q, w`` by name.
    parameters : dict of str to float
        Parameter values used.
    wdot : ndarray, shape (n_w,)
        ``ẇ`` at the point (zero at an equilibrium or a steady motion).
    multipliers : dict of str to float
        ``λ`` of the constraints at the point.
    dependent : tuple of str
        States that follow the independent ones: ``δy_dep = D δx``.
    D : ndarray, shape (n_dep, n_x)
    A_full : ndarray, shape (n_y, n_y)
        ``∂ẏ/∂y`` over all states before the reduction (equal to ``A`` without
        constraints).
    controls : dict of str to float
        With controls of programmed constraints (``НЕИЗВЕСТНЫЕ``): ``u`` at the point,
        by name; ``A`` is then the closed loop's (the controls solved at every state).
    control_gain : ndarray, shape (S, n_x)
        ``∂u/∂x``: the feedback gain by which the controls hold the programmed
        constraints near the point (``δu = control_gain δx + control_input_gain δp``).
    control_input_gain : ndarray, shape (S, n_u)
        ``∂u`` by the inputs.
    solved : dict of str to (float, float)
        With constraints: the states set from them because the given point was off
        them (:mod:`kidym.analysis.consistent`), each as ``(value before, value set)``;
        empty where the point was on them. ``point`` holds the values set.
    """

    states: tuple[str, ...]
    inputs: tuple[str, ...]
    A: np.ndarray
    B: np.ndarray
    t: float
    point: dict[str, float]
    parameters: dict[str, float]
    wdot: np.ndarray
    multipliers: dict[str, float]
    dependent: tuple[str, ...]
    D: np.ndarray
    A_full: np.ndarray
    controls: dict[str, float] = field(default_factory=dict)
    control_gain: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    control_input_gain: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    solved: dict[str, tuple[float, float]] = field(default_factory=dict)
    _symbolic: object = field(default=None, repr=False, compare=False)

    @property
    def stationary(self) -> bool:
        """Whether ``ẇ ≈ 0`` at the point (an equilibrium or a steady motion)."""
        scale = max(1.0, float(np.abs(self.A).max(initial=0.0)))
        return bool(np.abs(self.wdot).max(initial=0.0) <= 1e-8 * scale)

    # ------------------------------------------------------------- display
    def __repr__(self) -> str:
        from kidym.display import short_list

        return (f"Linearization(states={short_list(self.states)}, "
                f"inputs={short_list(self.inputs)}, t={self.t:g}, "
                f"stationary={self.stationary}, A={self.A.shape}, B={self.B.shape})")

    def _repr_html_(self) -> str:
        """Jupyter: the point and ``A``, ``B`` with their names (:meth:`to_text`)."""
        from kidym.display import summary

        return summary("kidym Linearization δẋ = A δx + B δu", [
            ("states", ", ".join(self.states)), ("inputs", ", ".join(self.inputs) or "—"),
            ("t", f"{self.t:g}"), ("stationary", str(self.stationary))],
            text=self.to_text())

    # --------------------------------------------------------------- symbolic
    def symbolic(self) -> SymbolicLinearization:
        """The linearised equations in mechanical form, as SymPy matrices in the
        parameters (:mod:`kidym.analysis.linear_form`):

        ``δq̇ = Q_q δq + Q_w δw``,  ``M δẇ + C δw + K δq = E δu``, with ``M`` the mass
        matrix, ``K = −∂(F − M ẇ)/∂q``, ``C = −∂F/∂w`` (damping and gyroscopic terms),
        ``E = ∂(F − M ẇ)/∂u``, ``Q_q = ∂q̇/∂q``, ``Q_w = ∂q̇/∂w``. With ``УРАВНЕНИЯ``
        (``КАЧЕНИЕ``, ``СОВПАДЕНИЕ``) the descriptor form of the augmented equations:
        ``M δẇ + C δw + K δq − Gᵀ δλ = E δu`` (``F`` is ``F + Gᵀλ`` in ``K, C, E``, the
        multipliers at the point as symbols named ``λ…``),
        ``G δẇ + C_c δw + K_c δq = E_c δu`` (``G ẇ = γ`` linearised), and the admissible
        ``δy``: ``Φ_q δq = 0``, ``c_q δq + c_w δw = 0``. The states and the time are
        replaced by their values at the point, ``ẇ`` too where the point is not
        stationary; the named quantities are substituted (the expanded form: small
        models).

        Returns
        -------
        SymbolicLinearization
            A mapping from the matrix names (``"M"``, ``"K"``, …) to SymPy matrices,
            with their row and column names, the multipliers' values, and
            ``to_text()``, ``to_latex()``, ``to_json()``.
        """
        if self._symbolic is None:
            raise ValueError("this Linearization was not made by `linearize`, so it has no "
                             "symbolic form")
        wdot = np.zeros_like(self.wdot) if self.stationary else self.wdot
        return self._symbolic(wdot)

    # ----------------------------------------------------------------- output
    def to_dict(self, symbolic: bool = False) -> dict:
        """JSON-ready: names, matrices (lists of rows), the point; with ``symbolic``
        also the mechanical form (:meth:`symbolic`, ``SymbolicLinearization.to_dict``)
        under ``"symbolic"``."""
        out = {"states": list(self.states), "inputs": list(self.inputs),
                "A": self.A.tolist(), "B": self.B.tolist(), "t": self.t,
                "point": self.point, "parameters": self.parameters,
                "wdot": self.wdot.tolist(), "multipliers": self.multipliers,
                "dependent": list(self.dependent), "D": self.D.tolist(),
                "stationary": self.stationary,
                "solved": {k: list(v) for k, v in self.solved.items()},
                **({"controls": self.controls, "control_gain": self.control_gain.tolist(),
                    "control_input_gain": self.control_input_gain.tolist()}
                   if self.controls else {})}
        if symbolic:
            out["symbolic"] = self.symbolic().to_dict()
        return out

    def to_json(self, symbolic: bool = False) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(symbolic), indent=1, ensure_ascii=False)

    def to_text(self, digits: int = 6) -> str:
        """``A`` and ``B`` with their row and column names, as plain text."""
        lines = [f"linearisation at t = {self.t:g}: " + ", ".join(
            f"{k} = {v:.{digits}g}" for k, v in self.point.items())]
        if self.solved:
            lines.append(solved_text(self.solved, digits))
        if not self.stationary:
            lines.append("note: ẇ ≠ 0 here (" + ", ".join(f"{v:.3g}" for v in self.wdot)
                         + "): not an equilibrium or a steady motion; A holds for this "
                         "instant only")
        lines.append("x = (" + ", ".join(self.states) + ")"
                     + (", u = (" + ", ".join(self.inputs) + ")" if self.inputs else ""))
        lines.append("A =")
        lines += _matrix_text(self.A, self.states, self.states, digits)
        if self.inputs:
            lines.append("B =")
            lines += _matrix_text(self.B, self.states, self.inputs, digits)
        if self.dependent:
            lines.append("dependent states δy = D δx: " + ", ".join(self.dependent))
        if self.controls:
            names = tuple(self.controls)
            lines.append("closed loop: the controls hold the programmed constraints at every "
                         "state; at the point " + ", ".join(
                             f"{k} = {v:.{digits}g}" for k, v in self.controls.items()))
            lines.append("δu = K δx" + (" + K_u δu" if self.inputs else "")
                         + ", the feedback gain K = ∂u/∂x =")
            lines += _matrix_text(self.control_gain, names, self.states, digits)
            if self.inputs:
                lines.append("K_u =")
                lines += _matrix_text(self.control_input_gain, names, self.inputs, digits)
        return "\n".join(lines)

    def to_latex(self, digits: int = 6) -> str:
        """``\\dot{\\delta x} = A \\delta x + B \\delta u`` with the numbers (LaTeX)."""
        def mat(a: np.ndarray) -> str:
            rows = [" & ".join(_num(v, digits) for v in row) for row in a]
            return "\\begin{pmatrix}" + " \\\\ ".join(rows) + "\\end{pmatrix}"
        from kidym.report.names import latex_name

        x = "\\\\ ".join(latex_name(s) for s in self.states)
        out = (f"\\delta\\dot{{x}} = {mat(self.A)}\\,\\delta x"
               + (f" + {mat(self.B)}\\,\\delta u" if self.inputs else "")
               + f",\\quad x = \\begin{{pmatrix}}{x}\\end{{pmatrix}}")
        if self.inputs:
            out += (",\\quad u = \\begin{pmatrix}"
                    + "\\\\ ".join(latex_name(s) for s in self.inputs) + "\\end{pmatrix}")
        return out

    def save_npz(self, path: str | Path) -> Path:
        """Write ``A``, ``B``, ``D``, ``A_full`` and the names to a NumPy ``.npz`` file."""
        path = Path(path)
        np.savez(path, A=self.A, B=self.B, D=self.D, A_full=self.A_full,
                 states=np.array(self.states, dtype=str),
                 inputs=np.array(self.inputs, dtype=str),
                 dependent=np.array(self.dependent, dtype=str),
                 point=np.array([self.point[k] for k in self.point]),
                 point_names=np.array(list(self.point), dtype=str), t=self.t,
                 controls=np.array(list(self.controls.values()), dtype=float),
                 control_names=np.array(list(self.controls), dtype=str),
                 control_gain=self.control_gain,
                 control_input_gain=self.control_input_gain)
        return path


def _num(v: float, digits: int) -> str:
    return "0" if v == 0 else f"{v:.{digits}g}".replace("e", "\\times10^{") + (
        "}" if "e" in f"{v:.{digits}g}" else "")


def _matrix_text(a: np.ndarray, rows: Sequence[str], cols: Sequence[str],
                 digits: int) -> list[str]:
    w = max([len(c) for c in cols] + [digits + 7])
    rw = max([len(r) for r in rows] + [1])
    # rounding noise (an entry below 1e-12 of the largest: a cancellation) is printed as 0
    a = np.where(np.abs(a) <= 1e-12 * float(np.abs(a).max(initial=0.0)), 0.0, a)
    out = [" " * (rw + 2) + " ".join(c.rjust(w) for c in cols)]
    for r, row in zip(rows, a):
        out.append(f"  {r.ljust(rw)}" + " ".join(f"{v:{w}.{digits}g}" for v in row))
    return out


@renamed_keyword("params", "parameters")
def linearize(equations: Equations, state: Mapping[str, float] | None = None, *,
              parameters: Mapping[str, float] | None = None, inputs: Sequence[str] = (),
              t: float | None = None,
              derivatives: StateDerivatives | None = None,
              guess: Mapping[str, float] | None = None) -> Linearization:
    """Linearise the equations of motion about a state (analytically).

    With constraints (``УРАВНЕНИЯ``, ``КАЧЕНИЕ``, ``СОВПАДЕНИЕ``) the point is first put
    on them: the dependent states are solved from the given ones and reported in
    :attr:`Linearization.solved` (:mod:`kidym.analysis.consistent`).

    Parameters
    ----------
    equations : Equations
        From :func:`kidym.derive`.
    state : mapping of str to float, optional
        The operating point by state name (``{"theta": 0, "phi't": 8}``); states not
        given take the model's initial values (0 where it has none). With constraints,
        the given states are kept as they are; give the independent ones.
    parameters : mapping of str to float, optional
        Parameter values (overrides of the model's); ``params=`` is its old name
        (deprecated).
    inputs : sequence of str
        Parameters taken as the inputs ``u`` of ``B`` (``["M0"]``).
    t : float, optional
        Time of the point (default: the model's start time).
    derivatives : StateDerivatives, optional
        Reuse formed derivatives (parameter studies); must have the same ``inputs``.
    guess : mapping of str to float, optional
        Values of states not in ``state`` that replace the model's initial values: not
        given, so the constraints may change them (a continuation's previous point, an
        equilibrium's coordinates); ``state`` wins where both name a state.

    Returns
    -------
    Linearization

    Raises
    ------
    KeyError
        An unknown state or input name.
    kidym.errors.ModelError
        With constraints, a point where they hold only if a given state changes, or
        not at all nearby: located at the violated constraints, naming them.
    numpy.linalg.LinAlgError
        A singular mass or augmented matrix at the point, or constraints whose Jacobian
        has lost rank there.

    Examples
    --------
    >>> import kidym
    >>> eq = kidym.derive(kidym.parse('''
    ...     m = 1; l = 1; g = 9.81;
    ...     Bob | Rz(phi) | Sx(l), m, 0, 0, 0;
    ...     GRAVITY := 0, -g, 0;
    ... '''))
    >>> lin = kidym.linearize(eq, {"phi": -3.141592653589793 / 2})
    >>> round(float(lin.A[1, 0]), 6)        # δφ̈ = −(g/l) δφ
    -9.81
    """
    eq = equations
    inputs = tuple(inputs)
    der = derivatives if derivatives is not None else StateDerivatives.build(eq, inputs)
    if der.inputs != inputs:
        raise ValueError(f"the derivatives were formed for inputs {der.inputs}, not {inputs}")
    t0, y, p = operating_point(eq, {**(guess or {}), **(state or {})}, parameters, t)
    y, solved = consistent_point(eq, der, t0, y, p, given_names(eq, state))
    pt = der(t0, y, p)
    wdot, lam, dx = solve_point(eq, pt)
    # ∂M/∂y · ẇ: only away from ẇ = 0 (at an equilibrium ẇ is rounding noise, ~1e-16),
    # or with controls of least norm
    if needs_mass_derivatives(eq, wdot, float(np.abs(dx).max(initial=0.0))):
        pt = der(t0, y, p, mass=True)
        wdot, lam, dx = solve_point(eq, pt)
    n_q, n_w = eq.n_q, eq.n_w
    n_y = n_q + n_w
    J = np.empty((n_y, n_y + len(inputs)))
    J[:n_q, :] = pt.dqdot.T
    J[n_q:, :] = dx[:n_w, :]
    A_full, B_full = J[:, :n_y], J[:, n_y:]
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    C = constraint_rows(eq, pt)
    if C.shape[0]:
        try:
            dep = choose_dependent(C, [list(range(n_q, n_y)), list(range(n_q))])
        except ValueError as exc:
            raise np.linalg.LinAlgError(
                "the constraints' Jacobian has lost rank at this state (they repeat each "
                "other, or the mechanism is at a locking position)") from exc
        ind = [i for i in range(n_y) if i not in dep]
        D = -np.linalg.solve(C[:, dep], C[:, ind])
        T = np.zeros((n_y, len(ind)))
        T[ind, np.arange(len(ind))] = 1.0
        T[dep, :] = D
        A, B = (A_full @ T)[ind], B_full[ind]
    else:
        dep, ind, D = [], list(range(n_y)), np.zeros((0, n_y))
        A, B = A_full, B_full
    pvals = {q.name: float(v) for q, v in zip(eq.model.parameters, p)}
    mult = (dict(zip(eq.constraints.multiplier_names, map(float, lam)))
            if eq.constraints is not None else {})
    symbolic = lambda wd: symbolic_form(der, t0, y, wd, lam)  # noqa: E731
    controls, gain, gain_u = {}, np.zeros((0, len(ind))), np.zeros((0, len(inputs)))
    if eq.controls is not None:     # (no УРАВНЕНИЯ beside controls: x = y)
        controls = dict(zip(eq.controls.control_names, map(float, lam)))
        gain, gain_u = dx[n_w:, :n_y], dx[n_w:, n_y:]
        symbolic = _no_symbolic_controls
    return Linearization(states=tuple(names[i] for i in ind), inputs=inputs, A=A, B=B,
                         t=t0, point=dict(zip(names, map(float, y))), parameters=pvals,
                         wdot=wdot, multipliers=mult,
                         dependent=tuple(names[i] for i in dep), D=D, A_full=A_full,
                         controls=controls, control_gain=gain, control_input_gain=gain_u,
                         solved=solved, _symbolic=symbolic)


def _no_symbolic_controls(_wdot: np.ndarray) -> None:
    raise ValueError("the symbolic form is not given for a model with controls of "
                     "programmed constraints (its closed loop holds the solve of Γ u = r, "
                     "not expanded); use the numeric A, B and control_gain")
