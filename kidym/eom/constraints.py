"""Constraints: holonomic ``Φ(q, t) = 0`` and velocity ``A(q, t)·w + a = 0``; their
Jacobians, ``γ``, the augmented system.

A model closes kinematic loops with ``УРАВНЕНИЯ := f1, f2;`` (the names of defined
quantities that must vanish). The constraint layer forms, over the named quantities of
the equations' graph (chain rule through names, nothing expanded):

* ``Φ`` — the constraint functions themselves (the user's names);
* ``Φ_q = ∂Φ/∂q`` (m × n_q) — for the projection of positions;
* ``c = Φ̇ = G w + g`` — the velocity constraints along ``q̇ = B w + β``, named
  ``f1't``;
* ``G = ∂c/∂w = Φ_q B`` (m × n_w) — the constraint Jacobian in the speeds;
* ``γ = −(dc/dt)|_{ẇ=0}`` — so that ``G ẇ = γ`` is the acceleration-level constraint
  (for ``B = I``: ``γ = −(Φ_q q̇)_q q̇ − 2Φ_qt q̇ − Φ_tt``).

A listed formula that depends on the speeds is a *velocity constraint* taken as it is
written, ``c = A(q, t)·w + a(q, t)`` (non-holonomic rolling, a knife edge): its ``G`` is
``∂c/∂w`` and its ``Φ`` entry 0.

The equations of motion are then the augmented system

    M ẇ = F + Gᵀλ,    G ẇ = γ − 2α c − β² Φ     (α = β = 0 unless Baumgarte is asked)

solved by the range-space method (:func:`solve_augmented`): ``λ`` from the Schur
complement ``G M⁻¹ Gᵀ``. ``Gᵀλ`` is the generalized constraint force: for a constraint
written as a difference of positions along an axis, ``λ`` is the force along it.
The numeric helpers here are shared by both engines (the compiled engine's C does the
same solve, :mod:`kidym.codegen.emit`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.errors import DerivationError, Diagnostic, ModelError
from kidym.kinematics.names import MULTIPLIER_PREFIX
from kidym.model.model import Model

Expr = se.Basic



def multiplier_name(constraint: str) -> str:
    """The output name of the Lagrange multiplier of ``constraint`` (``λf1``)."""
    return MULTIPLIER_PREFIX + constraint


@dataclass(frozen=True)
class ConstraintEquations:
    """The constraint layer of a model's equations (see the module docstring).

    Attributes
    ----------
    names : tuple of str
        The constraints' names, in the order of ``УРАВНЕНИЯ``.
    position : tuple of Expr
        ``Φ``, shape (m,).
    jacobian_q : tuple of tuple of Expr
        ``Φ_q``, shape (m, n_q).
    velocity : tuple of Expr
        ``c = Φ̇ = G w + g``, shape (m,).
    jacobian : tuple of tuple of Expr
        ``G = ∂c/∂w``, shape (m, n_w).
    gamma : tuple of Expr
        ``γ = −(dc/dt)|ẇ=0``, shape (m,).
    holonomic : tuple of bool
        Per constraint: ``Φ(q, t) = 0`` (True), or a velocity constraint written as it
        is, ``c = A(q, t)·w + a(q, t) = 0`` (False: non-holonomic, or holonomic written
        at the velocity level; its ``Φ`` entry is 0 and only ``c`` is held).
    """

    names: tuple[str, ...]
    position: tuple[Expr, ...]
    jacobian_q: tuple[tuple[Expr, ...], ...]
    velocity: tuple[Expr, ...]
    jacobian: tuple[tuple[Expr, ...], ...]
    gamma: tuple[Expr, ...]
    holonomic: tuple[bool, ...] = ()

    @property
    def m(self) -> int:
        """Number of constraints."""
        return len(self.names)

    @property
    def multiplier_names(self) -> tuple[str, ...]:
        """Output names of the multipliers, ``λf1`` …"""
        return tuple(multiplier_name(n) for n in self.names)

    def roots(self) -> list[Expr]:
        """What the right-hand side needs, in the order of :func:`split`: ``γ, Φ, c, G``."""
        return [*self.gamma, *self.position, *self.velocity,
                *(g for row in self.jacobian for g in row)]


def rolling_constraints(system, rolling) -> list[tuple[str, Expr]]:
    """The constraints of bodies rolling without slipping on a surface.

    With ``O`` the body frame's origin (the shape's centre), ``S`` its rotation, ``ω``
    its angular velocity in fixed axes, ``P`` the contact point and ``n`` the unit
    normal of the surface at ``P`` pointing to the ball's side:

    * ball of radius ``R`` on the plane ``z = h``: ``n = e_z``, contact
      ``Z_O − R − h = 0``;
    * ball outside the sphere of radius ``R0`` about ``C``: ``d = |O − C|``,
      ``n = (O − C)/d``, contact ``d − (R0 + R) = 0``; inside it: ``n = (C − O)/d``,
      contact ``(R0 − R) − d = 0``;
    * ball on the implicit surface ``f(O) = 0`` of its centre (``f`` positive on the
      ball's side): ``n = ∇f/|∇f|`` at ``O``, contact ``f/|∇f| = 0`` (the contact point
      ``P = O − R n`` lies on the surface offset from ``f = 0`` by ``R``);

    for these ``P − O = −R n``; the contact's gradient is ``n`` on the surface, so its
    multiplier is the normal force;

    * disc of radius ``r`` with axis ``a`` (a body axis, ``S`` column) on the plane:
      ``P − O = r d``, ``d = (a_z a_x, a_z a_y, a_z² − 1)/s``, ``s = √(1 − a_z²)``
      (the lowest point of the rim); contact ``Z_O − r s − h = 0``;

    and no slip, ``u = v_P − v_s = v_O + ω × (P − O) − v_s = 0``, ``v_s`` the velocity
    of the surface's material point (``Ċ`` for a sphere whose centre moves with ``t``;
    the x, y components of a plane moving along z are 0). Its component along ``n`` is
    the rate of the contact condition, so two rows are kept: the x and y components of
    the tangential part ``u − n (n·u)`` (for the plane and the disc, of ``u``). They are
    independent of each other and of the contact while ``n_z ≠ 0`` (the normal not
    horizontal). Being tangent, the contact force is
    ``λrollZ n + λrollX (e_x − n_x n) + λrollY (e_y − n_y n)``: ``λrollZ`` is the
    normal force. Returns ``(name, formula)`` pairs named by
    :meth:`kidym.model.model.Rolling.constraint_names`.
    """
    graph = system.graph
    zero = se.Integer(0)
    out: list[tuple[str, Expr]] = []
    for r in rolling:
        kin = system._body(r.body)
        frame = kin.frame
        S, O = frame.S, frame.origin
        R = system.resolve(r.radius)
        w = [sum((S[i][j] * frame.omega[j] for j in range(3)), zero) for i in range(3)]
        v = [graph.dt(o) for o in O]
        vs = [zero, zero, zero]
        normal = None
        if r.shape == "disc":
            h = system.resolve(r.height)
            k = "xyz".index(r.axis)
            a = [S[i][k] for i in range(3)]
            s = graph.define(f"s{r.body}", se.sqrt(a[0] ** 2 + a[1] ** 2))
            arm = [R * a[2] * a[0] / s, R * a[2] * a[1] / s, -R * s]
            contact = O[2] - R * s - h
        else:
            normal, contact = _ball_contact(system, r, O, R)
            arm = [-R * c for c in normal]
            if r.surface.startswith("sphere"):
                vs = [graph.dt(system.resolve(c)) for c in r.centre]
        vp = [v[0] + w[1] * arm[2] - w[2] * arm[1] - vs[0],
              v[1] + w[2] * arm[0] - w[0] * arm[2] - vs[1],
              v[2] + w[0] * arm[1] - w[1] * arm[0] - vs[2]]
        if normal is not None and r.surface != "plane":
            # the tangential part v_P − n (n·v_P): the friction rows are then tangent,
            # so the contact's multiplier is the whole normal force
            along = graph.define(f"vn{r.body}",
                                 sum((a * b for a, b in zip(normal, vp)), zero))
            vp = [vp[0] - normal[0] * along, vp[1] - normal[1] * along]
        nz, nx, ny = r.constraint_names()
        out += [(nz, contact), (nx, vp[0]), (ny, vp[1])]
    return out


def coincidence_constraints(system, coincidences) -> list[tuple[str, Expr]]:
    """The loop closures of ``СОВПАДЕНИЕ``: point ``P`` of body ``A`` coincides with point
    ``Q`` of body ``B`` (or of the fixed frame).

    With ``O`` a body frame's origin and ``S`` its rotation (fixed ← body), a point given
    in the body's axes is ``P = O + S p`` in fixed axes (a point of the fixed frame is
    ``p`` itself, which may move with ``t``). The constraints are the components of
    ``P_A − P_B`` along the fixed x, y, z, named ``coinX<k>``, ``coinY<k>``,
    ``coinZ<k>`` (:meth:`kidym.model.model.Coincidence.constraint_names`). A component
    that is **identically zero** — it depends on no coordinate and no time, and its
    formula with every named quantity substituted simplifies to 0, as the z component of
    a loop that moves in the xy plane — is dropped: it constrains nothing and would make
    the constraint Jacobian lose rank. The choice is symbolic, so it does not depend on
    the state or the parameter values. Since ``∂(P_A − P_B)/∂q`` is the difference of the
    two points' Jacobians, ``λcoinX<k>`` … are the fixed-axis components of the force
    that ``B`` exerts on ``A`` at the point (``A`` being the left side).

    Raises
    ------
    ModelError
        At the item, for a component that is constant or a function of time only but
        not identically zero (the points can never coincide along that axis).
    """
    zero = se.Integer(0)
    graph = system.graph
    out: list[tuple[str, Expr]] = []
    for c in coincidences:
        ends = []
        for body, point in ((c.body_a, c.point_a), (c.body_b, c.point_b)):
            p = [zero] * 3 if point is None else [system.resolve(x) for x in point]
            if body is None:
                ends.append(p)
                continue
            frame = system._body(body).frame
            ends.append([frame.origin[i] + sum((frame.S[i][j] * p[j] for j in range(3)), zero)
                         for i in range(3)])
        for axis, name, a, b in zip("xyz", c.constraint_names(), *ends):
            diff = a - b
            deps = graph.dependencies(diff)
            if any(q in deps for q in system.coordinates):
                out.append((name, diff))
                continue
            value = se.expand(graph.expand(diff))
            if value == 0:
                continue
            model = system.model
            when = " and time" if deps else ""
            raise ModelError([Diagnostic(
                f"`{c.text}`: the {axis} components of the two points differ by "
                f"`{value}`, a function of parameters{when} only that no coordinate "
                "changes, so they can never coincide along fixed "
                f"{axis}; a component kidym drops must be identically 0 (check the "
                "points' coordinates and the bodies' offsets along that axis)", c.span)],
                filename=model.filename, source=model.source)
    return out


def _ball_contact(system, r, O: list[Expr], R: Expr) -> tuple[list[Expr], Expr]:
    """``(n, contact)`` of a ball (see :func:`rolling_constraints`)."""
    graph = system.graph
    if r.surface == "plane":
        return [se.Integer(0), se.Integer(0), se.Integer(1)], O[2] - R - system.resolve(r.height)
    if r.surface.startswith("sphere"):
        R0 = system.resolve(r.sphere_radius)
        C = [system.resolve(c) for c in r.centre]
        rel = [graph.define(f"{x}{r.body}", o - c)
               for x, o, c in zip(("dX", "dY", "dZ"), O, C)]
        d = graph.define(f"d{r.body}", se.sqrt(sum((x ** 2 for x in rel), se.Integer(0))))
        if r.surface == "sphere_outside":
            return [x / d for x in rel], d - (R0 + R)
        return [-x / d for x in rel], (R0 - R) - d
    # an implicit surface f(O) = 0 of the centre
    names = [se.Symbol(n) for n in r.centre_names()]
    f = r.function
    # the centre names resolve to the body's origin O
    value = system.resolve(f)
    grad = [graph.define(f"{x}{r.body}", system.resolve(f.diff(n)))
            for x, n in zip(("fX", "fY", "fZ"), names)]
    norm = graph.define(f"nf{r.body}", se.sqrt(sum((g ** 2 for g in grad), se.Integer(0))))
    return [g / norm for g in grad], value / norm


def form_constraints(system, names: Sequence[str],
                     generated: Sequence[tuple[str, Expr]] = (), *,
                     linear: bool = True) -> ConstraintEquations:
    """Form the constraint layer for ``names`` over ``system``'s graph.

    Parameters
    ----------
    system : kidym.eom.system.SystemGraph
        The (final) system: coordinates, independent speeds, ``q̇ = B w + β``.
    names : sequence of str
        Defined quantities of the model that must vanish.
    generated : sequence of (str, Expr)
        Constraints kidym wrote (:func:`rolling_constraints`), after ``names``.
    linear : bool
        Whether a constraint that uses a speed must be linear in the speeds (those of
        ``УРАВНЕНИЯ``, held by multipliers); the programmed constraints of seed 004,
        held by controls, may be any ``g(q, v, t)`` (:mod:`kidym.eom.controls`).

    Raises
    ------
    DerivationError
        If a constraint depends on a speed (it is then not holonomic) or on no
        coordinate (it constrains nothing).
    """
    graph = system.graph
    zero = se.Integer(0)
    position, jac_q, velocity, jac, gamma, holonomic = [], [], [], [], [], []
    items = [(n, None) for n in names] + list(generated)
    for name, formula in items:
        phi = (system.lookup(name) if formula is None
               else graph.define(name, formula, keep=True, exact_name=True))
        deps = graph.dependencies(phi)
        if system.uses_accelerations([phi]):
            raise DerivationError(
                f"constraint `{name}` uses an acceleration; `УРАВНЕНИЯ` lists formulas of "
                "the coordinates and time (holonomic) or linear in the speeds (velocity "
                "constraints)")
        if any(w in deps for w in system.speeds):
            # a velocity constraint A(q, t)·w + a(q, t) = 0, written as it is
            row = tuple(graph.diff(phi, w) for w in system.speeds)
            if linear and any(w in graph.dependencies(g) for g in row
                              for w in system.speeds):
                raise DerivationError(
                    f"constraint `{name}` is not linear in the speeds; a velocity "
                    "constraint must be A(q, t)·q't + a(q, t) = 0")
            position.append(zero)
            jac_q.append(tuple(zero for _ in system.coordinates))
            velocity.append(phi)
            jac.append(row)
            gamma.append(graph.define(f"γ{name}", -graph.dt(phi)))
            holonomic.append(False)
            continue
        if not any(q in deps for q in system.coordinates):
            raise DerivationError(
                f"constraint `{name}` depends on no coordinate and no speed, so it "
                "constrains nothing (it is a constant or a function of time only)")
        c = graph.define(f"{name}'t", graph.dt(phi))
        position.append(phi)
        jac_q.append(tuple(graph.diff(phi, q) for q in system.coordinates))
        velocity.append(c)
        jac.append(tuple(graph.diff(c, w) for w in system.speeds))
        gamma.append(graph.define(f"γ{name}", -graph.dt(c)))
        holonomic.append(True)
    return ConstraintEquations(names=tuple(n for n, _ in items), position=tuple(position),
                               jacobian_q=tuple(jac_q), velocity=tuple(velocity),
                               jacobian=tuple(jac), gamma=tuple(gamma),
                               holonomic=tuple(holonomic))


def require_prescribed_motion(model: Model, speeds: Sequence[se.Symbol],
                              constraints: ConstraintEquations | None) -> None:
    """Check a kinetostatics model (``РАСЧЕТ := КИНЕТОСТАТИКА``): its constraints must
    prescribe the motion, leaving no degree of freedom (``m = n_w``).

    Kinetostatics asks for the forces that make a given motion happen. In kidym the motion
    is given by constraints, rheonomic ones for the drives (``f3 = q1 - Om*t``); with as
    many constraints as speeds it follows from them alone, and their multipliers ``λ``
    are the forces and torques needed (the drive's torque for ``f3``).

    Parameters
    ----------
    model : Model
        The model (its calculation type's place, for the error).
    speeds : sequence of Symbol
        The independent speeds ``w`` of the equations, shape (n_w,).
    constraints : ConstraintEquations or None
        The constraint layer (``None``: no ``УРАВНЕНИЯ``).

    Raises
    ------
    ModelError
        At the calculation type, naming the speeds and constraints, if ``m ≠ n_w``.
    """
    n_w = len(speeds)
    m = 0 if constraints is None else constraints.m
    if m == n_w:
        return
    names = ", ".join(constraints.names) if constraints is not None else ""
    have = (f"the model has {n_w} speed{'s' if n_w != 1 else ''} ("
            + ", ".join(map(str, speeds)) + f") and {m} constraint{'s' if m != 1 else ''}"
            + (f" ({names})" if names else ""))
    if m < n_w:
        free = n_w - m
        message = (f"the kinetostatics calculation needs the motion prescribed, with no degree "
                   f"of freedom left, but {have}: {free} degree{'s' if free != 1 else ''} of "
                   f"freedom {'are' if free != 1 else 'is'} free; add a driving constraint for "
                   "each, a formula of a coordinate and time listed in `УРАВНЕНИЯ` "
                   "(`f3 = q1 - Om*t;`), or compute the motion with `РАСЧЕТ := ДИНАМИКА;`")
    else:
        message = (f"the kinetostatics calculation needs as many constraints as speeds, but "
                   f"{have}: some repeat others or contradict them; remove the extra ones")
    raise ModelError([Diagnostic(message, model.calculation_span)],
                     filename=model.filename, source=model.source)


# ----------------------------------------------------------------- numerics
@dataclass(frozen=True)
class Stabilization:
    """How constraint drift is held down.

    Attributes
    ----------
    method : {"projection", "baumgarte", "none"}
        ``projection`` (default): at every output time where ``|Φ|`` or ``|c|``
        exceeds ``tolerance``, positions are projected onto ``Φ = 0`` (Gauss–Newton,
        least change) and speeds onto ``G w + g = 0`` (least change in the kinetic
        metric ``M``), and the integration restarts there. ``baumgarte``: the
        acceleration constraint becomes ``G ẇ = γ − 2α c − β² Φ``. ``none``: neither
        (the drift is still measured and reported).
    alpha, beta : float
        Baumgarte's coefficients [1/s].
    tolerance : float
        Drift that triggers a projection (``max |Φ_i|``, ``max |c_i|``).
    """

    method: str = "projection"
    alpha: float = 0.0
    beta: float = 0.0
    tolerance: float = 1e-9

    METHODS = ("projection", "baumgarte", "none")

    def __post_init__(self) -> None:
        if self.method not in self.METHODS:
            raise ValueError(f"constraint stabilization must be one of {self.METHODS}, "
                             f"got {self.method!r}")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"Baumgarte's {name} must be a number >= 0, got {v}")
        if self.method == "baumgarte" and self.alpha == 0 and self.beta == 0:
            object.__setattr__(self, "alpha", 10.0)
            object.__setattr__(self, "beta", 10.0)
        if not (np.isfinite(self.tolerance) and self.tolerance > 0):
            raise ValueError(f"the drift tolerance must be positive, got {self.tolerance}")

    @property
    def coefficients(self) -> tuple[float, float]:
        """``(2α, β²)`` as they enter ``γ`` (zero unless Baumgarte)."""
        if self.method != "baumgarte":
            return 0.0, 0.0
        return 2.0 * self.alpha, self.beta ** 2


@dataclass(frozen=True)
class Block:
    """The constraint block of an extended force vector, split (:func:`split`)."""

    gamma: np.ndarray
    phi: np.ndarray
    c: np.ndarray
    G: np.ndarray


def split(extended: np.ndarray, n_w: int, m: int) -> tuple[np.ndarray, Block]:
    """``(F, Block)`` from ``[F, γ, Φ, c, G]`` as the engines return it."""
    e = np.asarray(extended, dtype=float)
    F = e[:n_w]
    k = n_w
    gamma, phi, c = e[k:k + m], e[k + m:k + 2 * m], e[k + 2 * m:k + 3 * m]
    G = e[k + 3 * m:k + 3 * m + m * n_w].reshape(m, n_w)
    return F, Block(gamma, phi, c, G)


#: Why the augmented system has no solution when ``M`` has one (both engines say it).
LOST_RANK = ("the constraint Jacobian has lost rank (G M⁻¹ Gᵀ is singular): the constraints "
             "are dependent here, or the mechanism is at a locking position")


class ConstraintSolveError(np.linalg.LinAlgError):
    """``M`` or ``G M⁻¹ Gᵀ`` is singular: which one is in the message."""


def solve_augmented(M: np.ndarray, F: np.ndarray, block: Block,
                    stab: Stabilization) -> tuple[np.ndarray, np.ndarray]:
    """``(ẇ, λ)`` of ``M ẇ = F + Gᵀλ``, ``G ẇ = γ − 2α c − β² Φ``.

    Range-space method: Cholesky of ``M``, then of ``S = G M⁻¹ Gᵀ``. A singular ``S``
    means dependent constraints (or a configuration where the loop locks).
    """
    from scipy import linalg  # SciPy is loaded by the runs that need it

    try:
        cf = linalg.cho_factor(M)
    except linalg.LinAlgError as exc:
        raise ConstraintSolveError("the mass matrix is singular") from exc
    a, b = stab.coefficients
    rhs = block.gamma - a * block.c - b * block.phi
    MinvF = linalg.cho_solve(cf, F)
    MinvGt = linalg.cho_solve(cf, block.G.T)
    S = block.G @ MinvGt
    try:
        # an ill-conditioned S is judged below (_ill_conditioned), in kidym's words:
        # SciPy's LinAlgWarning would reach the user as a bare warning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", linalg.LinAlgWarning)
            lam = linalg.solve(S, rhs - block.G @ MinvF, assume_a="pos")
    except (linalg.LinAlgError, ValueError) as exc:
        raise ConstraintSolveError(LOST_RANK) from exc
    if not np.all(np.isfinite(lam)) or _ill_conditioned(S):
        raise ConstraintSolveError(LOST_RANK)
    return MinvF + MinvGt @ lam, lam


def _ill_conditioned(S: np.ndarray) -> bool:
    if S.size == 0:
        return False
    d = np.abs(np.diag(S)).max()
    return bool(d == 0 or np.linalg.cond(S) > 1e14)


def drift(block: Block) -> tuple[float, float]:
    """``(max |Φ_i|, max |c_i|)``."""
    return (float(np.abs(block.phi).max(initial=0.0)),
            float(np.abs(block.c).max(initial=0.0)))


def choose_dependent(J: np.ndarray, tiers: Sequence[Sequence[int]]) -> list[int]:
    """Columns of ``J`` (m × n) to solve for: ``m`` independent ones, taken tier by tier
    (``tiers``: lists of column indices, most preferred first; columns in no tier come
    last), within a tier by column-pivoted QR of what the chosen ones leave.

    Raises ``ValueError`` when ``J`` has rank below ``m`` (redundant constraints).
    """
    from scipy import linalg  # SciPy is loaded by the runs that need it

    m, n = J.shape
    listed = [j for tier in tiers for j in tier]
    pools = [list(t) for t in tiers] + [[j for j in range(n) if j not in listed]]
    scale = max(1.0, float(np.abs(J).max(initial=0.0)))
    chosen: list[int] = []
    for pool in pools:
        if len(chosen) == m:
            break
        cand = [j for j in pool if j not in chosen]
        if not cand:
            continue
        # project out the columns already chosen, pivot on what remains
        R = J[:, cand]
        if chosen:
            A = J[:, chosen]
            R = R - A @ np.linalg.lstsq(A, R, rcond=None)[0]
        _q, r, piv = linalg.qr(R, pivoting=True, mode="economic")
        for k in range(min(m - len(chosen), r.shape[0], r.shape[1])):
            if abs(r[k, k]) > 1e-10 * scale:
                chosen.append(cand[piv[k]])
    if len(chosen) < m:
        raise ValueError(f"rank {len(chosen)} < {m}")
    return chosen


def dependence(G: np.ndarray, names: Sequence[str]) -> tuple[list[str], dict[str, dict]]:
    """Which rows of a constraint Jacobian ``G`` are dependent, and on what.

    The rows are taken in order; a row is kept when it raises the rank of those kept.

    Returns
    -------
    tuple
        ``(vanishing, combinations)``: the names of the rows that are zero (the
        constraint does not depend on the speeds: the model's coordinates already hold
        it), and for each other dependent row its coefficients on the kept rows,
        ``{name: {kept name: coefficient}}`` (coefficients below 1e-9 dropped).
    """
    scale = max(1.0, float(np.abs(G).max(initial=0.0)))
    kept: list[int] = []
    vanishing: list[str] = []
    combinations: dict[str, dict] = {}
    for i, row in enumerate(G):
        if np.abs(row).max(initial=0.0) <= 1e-10 * scale:
            vanishing.append(names[i])
        elif rank(G[[*kept, i]]) > len(kept):
            kept.append(i)
        else:
            coef = np.linalg.lstsq(G[kept].T, row, rcond=None)[0]
            combinations[names[i]] = {names[k]: float(c) for k, c in zip(kept, coef)
                                      if abs(c) > 1e-9}
    return vanishing, combinations


def describe_dependence(G: np.ndarray, names: Sequence[str]) -> str:
    """:func:`dependence` in words: ``rollZA does not depend on the speeds; rollYB =
    −1·rollYA``."""
    vanishing, combinations = dependence(G, names)
    parts = []
    if vanishing:
        parts.append(", ".join(vanishing) + (" does" if len(vanishing) == 1 else " do")
                     + " not depend on the speeds (the model's coordinates already hold "
                     + ("it" if len(vanishing) == 1 else "them") + ")")
    for name, coef in combinations.items():
        parts.append(f"{name} = " + " + ".join(f"{c:.4g}·{k}" for k, c in coef.items())
                     .replace("+ -", "− "))
    return "; ".join(parts)


def rank(J: np.ndarray) -> int:
    """Numerical rank of ``J`` (SVD, relative tolerance 1e-10)."""
    if not J.size:
        return 0
    s = np.linalg.svd(J, compute_uv=False)
    return int((s > 1e-10 * max(1.0, s[0])).sum())
