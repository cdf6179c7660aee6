"""Controls determined by programmed constraints (seed 004 (5.1)–(5.6)).

A model lists controls ``u`` (``НЕИЗВЕСТНЫЕ := u1, u2;``) that enter the force
characteristics, and programmed constraints (``ПРОГРАММНЫЕ СВЯЗИ := f1, g1;``) that the
controls must hold: holonomic ``f(q, t) = 0`` and first-order ``g(q, v, t) = 0``.
Writing ``y = f``, ``z = ḟ`` (``z = g`` for a first-order one), the deviations obey the
perturbation law (5.5) with the model's coefficients,

    ÿ = h y + k ẏ       (holonomic),        ż = k z       (first order),

asymptotically stable for ``h < 0``, ``k < 0``. The layer formed here, over the named
quantities of the equations' graph:

* the forces split as ``F(q, w, t, u) = F⁰(q, w, t) + H(q, w, t) u`` with
  ``H = ∂F/∂u`` (n_w × S) — an error unless ``F`` is linear in ``u`` and ``M``,
  ``q̇`` and the energy are free of it;
* for each constraint ``ρ`` the Jacobian row ``G_ρ = ∂c_ρ/∂w`` (``c = ḟ`` or ``g``) and
  the target ``b_ρ = γ_ρ + h_ρ y_ρ + k_ρ z_ρ`` with ``γ = −(dc/dt)|ẇ=0``
  (:func:`kidym.eom.constraints.form_constraints`, the layer of ``УРАВНЕНИЯ``), so that
  (5.5) is ``G ẇ = b``.

With ``ẇ = M⁻¹(F⁰ + H u)`` that is the linear system of (5.6)

    Γ u = b − G M⁻¹F⁰,        Γ = G M⁻¹ H   (r × S; the paper's ``g^{ρs} = ∂g^ρ/∂v·b^s``,
                                              ``b^s = M⁻¹H_s``)

solved by :func:`solve_controls` with the least-norm solution ``u = Γᵀ(ΓΓᵀ)⁻¹(…)``
— (5.6) with ``δ_sl`` the identity and its arbitrary ``u⁰`` taken as 0 — computed
without forming ``ΓΓᵀ``, whose condition number is Γ's squared: from the QR
factorisation ``Γᵀ = Q R``, ``u = Q R⁻ᵀ(…)``; the unique solution when ``S = r``, then
found from ``Γ u = …`` itself (LU). A ``Γ`` of rank below ``r`` means a constraint the controls
cannot reach: :class:`ControlSolveError` names it. Both engines evaluate ``[F⁰, b, G,
H]`` (:attr:`Equations.forcing_extended`) and solve the same system (the C routine in
:mod:`kidym.codegen.controls_c`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.constraints import form_constraints
from kidym.errors import DerivationError, Diagnostic, ModelError

Expr = se.Basic


@dataclass(frozen=True)
class ControlEquations:
    """The controls' layer of a model's equations (see the module docstring).

    Attributes
    ----------
    names : tuple of str
        The programmed constraints, in the order of ``ПРОГРАММНЫЕ СВЯЗИ``.
    controls : tuple of symengine.Symbol
        ``u``, shape (S,).
    first_order : tuple of bool
        Per constraint: ``g(q, v, t)`` (True) or ``f(q, t)`` (False).
    target : tuple of Expr
        ``b = γ + h y + k z``, shape (r,).
    jacobian : tuple of tuple of Expr
        ``G = ∂c/∂w``, shape (r, n_w).
    inputs : tuple of tuple of Expr
        ``H = ∂F/∂u``, shape (n_w, S).
    deviations : dict of str to Expr
        The deviations recorded as outputs: ``f`` and ``f't`` (``y``, ``z``) of a
        holonomic constraint, ``g`` (``z``) of a first-order one.
    """

    names: tuple[str, ...]
    controls: tuple[se.Symbol, ...]
    first_order: tuple[bool, ...]
    target: tuple[Expr, ...]
    jacobian: tuple[tuple[Expr, ...], ...]
    inputs: tuple[tuple[Expr, ...], ...]
    deviations: dict[str, Expr]

    @property
    def r(self) -> int:
        """Number of programmed constraints."""
        return len(self.names)

    @property
    def s(self) -> int:
        """Number of controls."""
        return len(self.controls)

    @property
    def control_names(self) -> tuple[str, ...]:
        """Output names of the controls (as written in ``НЕИЗВЕСТНЫЕ``)."""
        return tuple(str(u) for u in self.controls)

    def roots(self) -> list[Expr]:
        """What follows ``F⁰`` in the extended force vector: ``b, G, H`` (:func:`split`)."""
        return [*self.target, *(g for row in self.jacobian for g in row),
                *(x for row in self.inputs for x in row)]


def _zeroed(graph, expr: Expr, inputs: frozenset, memo: dict) -> Expr:
    """``expr`` at ``u = 0``: named quantities that depend on a control are copied with
    it set to zero (named ``X|u=0``), the rest kept."""
    expr = se.sympify(expr)
    subs: dict = {}
    for s in expr.free_symbols:
        if s in inputs:
            subs[s] = se.Integer(0)
        elif s in graph and inputs & graph.dependencies(s):
            if s not in memo:
                memo[s] = graph.define(f"{s}|u=0", _zeroed(graph, graph.formula(s), inputs, memo))
            subs[s] = memo[s]
    return expr.xreplace(subs) if subs else expr


def without_controls(system, exprs: list[Expr]) -> list[Expr]:
    """``exprs`` at ``u = 0`` (through the named quantities)."""
    memo: dict = {}
    inputs = frozenset(system.controls)
    return [_zeroed(system.graph, e, inputs, memo) for e in exprs]


def form_controls(system, model, mass_matrix: list[list[Expr]], forcing: list[Expr],
                  checked: list[tuple[str, Expr]]) -> tuple[list[Expr], ControlEquations]:
    """Split ``F = F⁰ + H u`` and form the programmed constraints' rows.

    Parameters
    ----------
    system : kidym.eom.system.SystemGraph
        The (final) system; its graph tracks the controls.
    model : kidym.model.Model
        The model (``controls``, ``programmed``).
    mass_matrix, forcing : list
        ``M`` and ``F`` over named quantities (``F`` with the controls in it).
    checked : list of Expr
        Further expressions that must be free of the controls (``q̇``, the energy, the
        outputs), as ``(label, expr)`` pairs.

    Returns
    -------
    (list of Expr, ControlEquations)
        ``F⁰`` and the layer.

    Raises
    ------
    DerivationError
        If a control enters ``M``, ``q̇``, the energy or an output, or ``F`` is not
        linear in the controls.
    """
    graph = system.graph
    controls = system.controls
    inputs = frozenset(controls)

    def uses(e: Expr) -> list[str]:
        return sorted(str(u) for u in inputs & graph.dependencies(e))

    for row in mass_matrix:
        for e in row:
            if uses(e):
                raise DerivationError(
                    f"control `{uses(e)[0]}` enters the mass matrix (an inertial element's "
                    "characteristic); controls enter force characteristics only")
    for label, e in checked:
        if uses(e):
            raise DerivationError(
                f"control `{uses(e)[0]}` enters {label}; a control is known only as the "
                "solution of its constraints at each instant: it may enter force "
                "characteristics (P, D elements), and is shown by its own name")
    H = []
    for i, f in enumerate(forcing):
        row = []
        for u in controls:
            d = graph.diff(f, u)
            if uses(d):
                raise DerivationError(
                    f"the forces are not linear in control `{u}` (its coefficient in the "
                    f"equation of speed `{system.speeds[i]}` depends on `{uses(d)[0]}`); seed "
                    "004's controls enter linearly, F = F⁰ + H u")
            row.append(d)
        H.append(tuple(row))
    F0 = without_controls(system, forcing)
    names = [pc.name for pc in model.programmed]
    layer = form_constraints(system, names, linear=False)
    target, deviations = [], {}
    for pc, phi, c, gam in zip(model.programmed, layer.position, layer.velocity, layer.gamma):
        h, k = system.resolve(pc.h), system.resolve(pc.k)
        if pc.first_order:
            target.append(graph.define(f"b{pc.name}", gam + k * c))
            deviations[pc.name] = c
        else:
            target.append(graph.define(f"b{pc.name}", gam + h * phi + k * c))
            deviations[pc.name] = phi
            deviations[f"{pc.name}'t"] = c
    for row in layer.jacobian:
        for e in row:
            if uses(e):
                raise DerivationError("a programmed constraint uses a control; it is a "
                                      "formula of the coordinates, speeds and time")
    return F0, ControlEquations(
        names=tuple(names), controls=controls,
        first_order=tuple(pc.first_order for pc in model.programmed),
        target=tuple(target), jacobian=layer.jacobian, inputs=tuple(H),
        deviations=deviations)


# ----------------------------------------------------------------- numerics
@dataclass(frozen=True)
class ControlBlock:
    """The controls' block of an extended force vector, split (:func:`split`)."""

    target: np.ndarray
    G: np.ndarray
    H: np.ndarray


def split(extended: np.ndarray, n_w: int, r: int, s: int) -> tuple[np.ndarray, ControlBlock]:
    """``(F⁰, ControlBlock)`` from ``[F⁰, b, G, H]`` as the engines return it."""
    e = np.asarray(extended, dtype=float)
    k = n_w
    b = e[k:k + r]
    G = e[k + r:k + r + r * n_w].reshape(r, n_w)
    k += r + r * n_w
    H = e[k:k + n_w * s].reshape(n_w, s)
    return e[:n_w], ControlBlock(b, G, H)


class ControlSolveError(np.linalg.LinAlgError):
    """The controls cannot hold the programmed constraints (or ``M`` is singular).

    Attributes
    ----------
    unreachable : tuple of int
        Indices of the constraints the controls cannot reach.
    """

    def __init__(self, message: str, unreachable: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.unreachable = unreachable


#: Relative size below which a row of ``Γ`` counts as dependent on the rows before it.
RANK_TOLERANCE = 1e-10


def unreachable_rows(gamma: np.ndarray, scale: np.ndarray) -> tuple[int, ...]:
    """Rows of ``Γ`` (r × S) that are zero or combinations of the rows before them.

    ``scale[ρ]`` is the size row ``ρ`` would have if the controls reached it (``|G_ρ|·
    |M⁻¹H|``); a row's part outside the span of the earlier independent rows is compared
    with it.
    """
    basis: list[np.ndarray] = []
    out = []
    for i, row in enumerate(gamma):
        rest = row.astype(float).copy()
        for e in basis:
            rest -= (rest @ e) * e
        norm = float(np.linalg.norm(rest))
        if not norm > RANK_TOLERANCE * max(float(scale[i]), 1e-300) or not np.isfinite(norm):
            out.append(i)
            continue
        basis.append(rest / norm)
    return tuple(out)


def solve_controls(M: np.ndarray, F0: np.ndarray, block: ControlBlock
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``(ẇ, u)``: ``M ẇ = F⁰ + H u`` with ``G ẇ = b``, ``u`` of least norm (eq. (5.6)).

    Raises
    ------
    ControlSolveError
        If ``M`` is singular, or ``Γ = G M⁻¹ H`` has rank below ``r`` (its
        ``unreachable`` names the rows).
    """
    from scipy import linalg  # SciPy is loaded by the runs that need it

    try:
        cf = linalg.cho_factor(M)
    except linalg.LinAlgError as exc:
        raise ControlSolveError("the mass matrix is singular") from exc
    x0 = linalg.cho_solve(cf, F0)
    X = linalg.cho_solve(cf, block.H) if block.H.size else np.zeros((len(F0), 0))
    gamma = block.G @ X
    scale = np.linalg.norm(block.G, axis=1) * max(float(np.linalg.norm(X)), 1e-300)
    bad = unreachable_rows(gamma, scale)
    if bad:
        raise ControlSolveError("the controls cannot reach a programmed constraint", bad)
    rhs = block.target - block.G @ x0
    if gamma.shape[0] == gamma.shape[1]:
        # as many controls as constraints: Γ u = rhs itself (LU), not the normal
        # equations, which square Γ's condition number (1e-10 lost at cond Γ ~ 1e3)
        u = linalg.solve(gamma, rhs)
    else:
        # more controls: least norm through Γᵀ = Q R (Householder, Q: S × r with
        # orthonormal columns), so Γ = Rᵀ Qᵀ and u = Q R⁻ᵀ rhs is the solution in the span
        # of Γ's rows; cond R = cond Γ, where the normal equations Γ Γᵀ ν = rhs,
        # u = Γᵀ ν work with cond Γ² (7e-4 of u lost at cond Γ ~ 2e6, all of it at 2e8)
        q, rt = np.linalg.qr(gamma.T)
        u = q @ linalg.solve_triangular(rt, rhs, trans="T")
    return x0 + X @ u, u


def reach_error(model, bad: tuple[int, ...], t: float, state: dict[str, float]) -> ModelError:
    """A located error at each programmed constraint the controls cannot reach."""
    shown = ", ".join(f"{k} = {v:.6g}" for k, v in list(state.items())[:8])
    controls = ", ".join(f"`{u}`" for u in model.controls)
    diags = []
    for i in bad:
        pc = model.programmed[i]
        diags.append(Diagnostic(
            f"the controls {controls} cannot reach programmed constraint `{pc.name}` at t = "
            f"{t:g} ({shown}): G M⁻¹ H has no row for it independent of the constraints "
            "before it, so no control changes its acceleration that way; use a control "
            "that acts on the coordinates it constrains, or remove the constraint",
            pc.span))
    return ModelError(diags, filename=model.filename, source=model.source)
