"""The equations of motion in Cauchy form, ``q̇ = B w + β``, ``M ẇ = F``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import symengine as se

from kidym.eom.constraints import (
    ConstraintEquations,
    coincidence_constraints,
    form_constraints,
    multiplier_name,
    require_prescribed_motion,
    rolling_constraints,
)
from kidym.eom.controls import ControlEquations, form_controls, without_controls
from kidym.eom.structural import (
    FORMATIONS,
    INERTIA_ROUTES,
    Structural,
    assemble,
    element_terms,
)
from kidym.eom.system import SystemGraph
from kidym.eom.two_stage import project
from kidym.errors import DerivationError, Diagnostic, ModelError
from kidym.model.model import Model, ModelEvent
from kidym.symbolic.graph import Graph

if TYPE_CHECKING:  # SymPy is loaded when a SymPy form is asked for (0.3-0.8 s)
    import sympy

Expr = se.Basic


def _to_sympy(expr: Expr) -> sympy.Expr:
    import sympy

    return sympy.sympify(expr)


@dataclass(frozen=True, eq=False)
class Equations:
    """Equations of motion of a model, in named (structural) and expanded forms.

    The working form is *structural*: ``mass_matrix_named``, ``forcing_named`` and
    ``qdot`` are short expressions over the named quantities of ``graph`` (listed
    in dependency order by :meth:`intermediates`). The SymPy properties
    ``mass_matrix``, ``forcing``, ``B`` and ``beta`` substitute every name — the
    swollen form, for small models, tests and printing on request.

    Attributes
    ----------
    model : Model
        The model they were derived from.
    graph : Graph
        The named quantities.
    coordinates : tuple of symengine.Symbol
        ``q``, shape (n_q,).
    speeds : tuple of symengine.Symbol
        ``w``, shape (n_w,).
    qdot : tuple of Expr
        ``B w + β``, shape (n_q,).
    mass_matrix_named : list of list of Expr
        ``M``, shape (n_w, n_w).
    forcing_named : list of Expr
        ``F``, shape (n_w,).
    energy_named : Expr
        ``T + Π`` (an output for checking; not used to form the equations).
    outputs_named : dict of str to Expr
        The model's requested outputs.
    inertia : {"full", "principal"}
        Which inertia route formed them.
    holonomic : Equations or None
        Stage 1 of the two-stage algorithm (seed 000): the equations ``U_hol`` of the
        holonomic system in generalized coordinates (speeds ``q̇`` of all
        coordinates, ``B = I``), before the ``Bᵀ`` projection. ``None`` when the model
        has no pseudo-velocities, velocity formulas or quaternion bodies.
    route : {"direct", "two-stage"}
        How ``M``, ``F`` were formed: structural matrices taken with respect to ``w``
        directly (seed 000 eqs. (14)–(16)), or ``U = Bᵀ U_hol`` (eq. (17)).
    pseudo_forces_named : list of Expr
        ``Π = Bᵀ W_Pᵀ P`` (eq. (16)): the force elements' share of ``F``, shape (n_w,).
    formation : {"composite", "structural"}
        How the bodies' share of ``M`` and ``F`` was summed (of ``U_hol`` on the
        two-stage route): by composite bodies or body by body (see :func:`derive`).
    accelerations : tuple of symengine.Symbol
        Symbols of ``ẇ``, shape (n_w,), named ``w't`` (``phi't't``). Only outputs use
        them (an output ``phi't't`` or ``XCBob't't`` is ``dt|ẇ=0 + Σ ∂/∂w·ẇ``); the
        engines give them their values ``M⁻¹F`` at the output times.
    constraints : ConstraintEquations or None
        The holonomic constraints ``Φ(q, t) = 0`` of ``УРАВНЕНИЯ`` (closed loops) and
        what the augmented system ``M ẇ = F + Gᵀλ``, ``G ẇ = γ`` needs
        (:mod:`kidym.eom.constraints`); ``None`` without constraints.
    events_named : tuple of ModelEvent
        The model's events (``СОБЫТИЯ``) with their condition and reset formulas over
        the graph's named quantities (as ``outputs_named``).
    controls : ControlEquations or None
        The controls ``u`` of ``НЕИЗВЕСТНЫЕ`` and the programmed constraints that
        determine them (seed 004, :mod:`kidym.eom.controls`): ``forcing_named`` is then
        ``F⁰ = F|u=0`` and the equations are ``M ẇ = F⁰ + H u`` with ``G ẇ = b``;
        ``None`` without controls.
    """

    model: Model
    graph: Graph
    coordinates: tuple[se.Symbol, ...]
    speeds: tuple[se.Symbol, ...]
    qdot: tuple[Expr, ...]
    mass_matrix_named: list[list[Expr]]
    forcing_named: list[Expr]
    kinetic_energy_named: Expr
    potential_energy_named: Expr
    outputs_named: dict[str, Expr]
    inertia: str
    principal_moments: dict[str, np.ndarray] = field(default_factory=dict)
    holonomic: Equations | None = None
    route: str = "direct"
    pseudo_forces_named: list[Expr] = field(default_factory=list)
    formation: str = "structural"
    accelerations: tuple[se.Symbol, ...] = ()
    constraints: ConstraintEquations | None = None
    events_named: tuple[ModelEvent, ...] = ()
    controls: ControlEquations | None = None

    @property
    def m(self) -> int:
        """Number of holonomic constraints ``Φ = 0`` (0 without ``УРАВНЕНИЯ``)."""
        return 0 if self.constraints is None else self.constraints.m

    @property
    def n_dof(self) -> int:
        """Degrees of freedom ``n_w − m`` (independent constraints assumed: their rank is
        checked at the initial state when a run starts)."""
        return self.n_w - self.m

    @property
    def n_q(self) -> int:
        """Number of coordinates."""
        return len(self.coordinates)

    @property
    def n_w(self) -> int:
        """Number of independent speeds."""
        return len(self.speeds)

    def require_motion(self) -> None:
        """Raise ``ValueError`` unless there is something to integrate (``n_w > 0``).

        A model with no independent speed has no equations of motion; integrating or
        compiling it failed with an ``IndexError`` or ``max()`` of nothing.
        """
        if self.n_w == 0:
            raise ValueError(
                f"model `{self.model.name}` has no degrees of freedom (no independent "
                "speeds), so there are no equations of motion to integrate: give a "
                "coordinate (a name without a value in a body's transforms), or for "
                "prescribed motion compute it with `РАСЧЕТ := КИНЕМАТИКА`")

    @property
    def parameters(self) -> tuple[se.Symbol, ...]:
        """Parameter symbols in model order."""
        return tuple(se.Symbol(p.name) for p in self.model.parameters)

    @property
    def inputs(self) -> tuple[se.Symbol, ...]:
        """The external inputs of ``ВХОДЫ`` in model order (values given at run time,
        after the parameters in the engines' parameter vector: :mod:`kidym.simulation.inputs`)."""
        return tuple(se.Symbol(u) for u in self.model.inputs)

    @property
    def energy_named(self) -> Expr:
        """``T + Π`` over named quantities."""
        return self.kinetic_energy_named + self.potential_energy_named

    def roots(self) -> list[Expr]:
        """Every expression the right-hand side needs: ``q̇``, ``M`` (upper), ``F`` and,
        with constraints, ``γ, Φ, c, G`` (:meth:`ConstraintEquations.roots`)."""
        upper = [self.mass_matrix_named[i][j] for i in range(self.n_w)
                 for j in range(i, self.n_w)]
        extra = self.constraints.roots() if self.constraints is not None else []
        if self.controls is not None:
            extra = [*extra, *self.controls.roots()]
        return [*self.qdot, *upper, *self.forcing_named, *extra]

    @property
    def forcing_extended(self) -> list[Expr]:
        """``F`` followed by the constraint block ``γ, Φ, c, G`` (just ``F`` without
        constraints), or with controls ``F⁰`` followed by ``b, G, H``
        (:meth:`ControlEquations.roots`): what both engines evaluate in place of ``F``."""
        extra = self.constraints.roots() if self.constraints is not None else []
        if self.controls is not None:
            extra = [*extra, *self.controls.roots()]
        return [*self.forcing_named, *extra]

    def uses_accelerations(self, exprs: list[Expr]) -> bool:
        """Whether ``exprs`` (or a named quantity they use) contain an acceleration ``ẇ``."""
        return self.graph.mentions(exprs, set(self.accelerations))

    def intermediates(self, roots: list[Expr] | None = None) -> list[tuple[se.Symbol, Expr]]:
        """Named quantities needed by ``roots`` (default: the right-hand side), in order."""
        needed = self.graph.needed(self.roots() if roots is None else roots)
        return [(s, self.graph.formula(s)) for s in needed]

    # ---------------------------------------------------------- SymPy views
    def _expand_matrix(self, rows: list[list[Expr]]) -> sympy.Matrix:
        import sympy

        return sympy.Matrix([[_to_sympy(self.graph.expand(x)) for x in row] for row in rows])

    @cached_property
    def power_named(self) -> Expr:
        """``dE/dt`` along the motion: ``∂E/∂t + ∂E/∂q·q̇ + ∂E/∂w·ẇ`` (``ẇ`` as
        :attr:`accelerations`, ``E = T + Π``).

        The power of everything ``E`` leaves out — non-potential elements (forces with a
        characteristic that is not constant, dampers), forces and gravity that change
        with time, prescribed motions (``Sx(A*sin(w*t))``): its integral ``W(t)`` makes
        ``E(t) − E(0) − W(t)`` zero on the exact motion of every model
        (:mod:`kidym.simulation.energy`). Formed on request; the named quantities it needs
        are added to :attr:`graph`.
        """
        energy = self.energy_named
        value = self.graph.dt(energy)
        for w, a in zip(self.speeds, self.accelerations):
            if self.graph.depends_on(energy, w):
                value += self.graph.diff(energy, w) * a
        return value

    @cached_property
    def mass_matrix(self) -> sympy.Matrix:
        """``M(q, t)`` with every name substituted, shape (n_w, n_w)."""
        return self._expand_matrix(self.mass_matrix_named)

    @cached_property
    def forcing(self) -> sympy.Matrix:
        """``F(q, w, t)`` with every name substituted, shape (n_w, 1)."""
        return self._expand_matrix([[x] for x in self.forcing_named])

    @cached_property
    def B(self) -> sympy.Matrix:
        """``B = ∂q̇/∂w``, shape (n_q, n_w)."""
        return self._expand_matrix([[self.graph.diff(x, w) for w in self.speeds]
                                    for x in self.qdot])

    @cached_property
    def beta(self) -> sympy.Matrix:
        """``β = q̇|_{w=0}``, shape (n_q, 1)."""
        zero = {w: 0 for w in self.speeds}
        return self._expand_matrix([[self.graph.expand(x).xreplace(zero)] for x in self.qdot])

    @cached_property
    def pseudo_forces(self) -> sympy.Matrix:
        """``Π = Bᵀ W_Pᵀ P`` with every name substituted, shape (n_w, 1)."""
        return self._expand_matrix([[x] for x in self.pseudo_forces_named])

    @cached_property
    def energy(self) -> sympy.Expr:
        """Total mechanical energy ``T + Π`` with every name substituted."""
        return _to_sympy(self.graph.expand(self.energy_named))

    def __repr__(self) -> str:
        return (f"Equations(model={self.model.name!r}, n_q={self.n_q}, n_w={self.n_w}, "
                f"named={len(self.graph)})")

    def _repr_latex_(self) -> str:
        """Jupyter: the equations of motion per speed, typeset (:mod:`kidym.report.latex`)."""
        from kidym.report.latex import repr_latex

        return repr_latex(self)


ROUTES = ("auto", "direct", "two-stage")


def _has_velocity_equations(model: Model) -> bool:
    return bool(model.pseudo_velocities or model.velocity_definitions or any(
        tr.kind == "Q" for b in model.bodies for tr in b.transforms))


def derive(model: Model, *, inertia: str = "full", route: str = "auto",
           angular_velocity: str | dict[str, str] = "auto", formation: str = "auto"
           ) -> Equations:
    """Form the equations of motion of ``model`` analytically.

    Parameters
    ----------
    model : Model
        A validated model.
    inertia : {"full", "principal"}
        Inertia route: the full central tensor in the Euler equations (seed 003
        eq. (4)), or a constant turn to principal axes by Jacobi rotations (eq. (5)).
    route : {"auto", "direct", "two-stage"}
        ``"two-stage"``: seed 000's algorithm — the holonomic equations ``U_hol`` in
        generalized coordinates first (kept as ``Equations.holonomic``), then
        ``U = Bᵀ U_hol`` with ``B = ∂q̇/∂w``; ``"direct"``: structural matrices with
        respect to ``w`` (eqs. (14)–(16)). ``"auto"``: two-stage when the model has
        velocity equations (pseudo-velocities, ``x't = …`` formulas, quaternions),
        direct otherwise (there ``B = I`` and both coincide).
    angular_velocity : {"auto", "body", "fixed"} or dict of body name to one of them
        For bodies with ``Q(…)``: whether ``ωXBody, ωYBody, ωZBody`` are body-frame
        (``Λ̇ = ½ Λ∘ω``) or fixed-frame (``Λ̇ = ½ ω∘Λ``) projections; ``"auto"`` takes
        fixed-frame ones for isotropic bodies (seed 000's ball), body-frame otherwise.
        See :func:`kidym.eom.system.quaternion_specs`.
    formation : {"auto", "composite", "structural"}
        How the bodies' share of ``M`` and ``F`` is summed. ``"structural"``: body by
        body over every body's partial velocities, ``Σ m W̃_RᵀW̃_R + W̃_MᵀJW̃_M``
        (seed 000 eqs. (14)–(16), seed 003 eq. (2)); ``"composite"``: by composite
        bodies, ``M_ij`` and ``F_j`` from the composite inertia and wrench of the
        bodies below the steps where speed ``j`` enters (:mod:`kidym.eom.composite`;
        O(n²) instead of O(n³) products for an n-link chain), with the full central
        tensors. ``"auto"``: composite, structural with ``inertia="principal"``.
        Both give the same equations.

    Returns
    -------
    Equations
        ``q̇ = B w + β`` and ``M ẇ = F`` (seed 000 eq. (18)) over named quantities.

    Raises
    ------
    DerivationError
        If the model's formulas cannot be resolved (e.g. a quantity defined through
        itself) or an unsupported construct is met.
    """
    if inertia not in INERTIA_ROUTES:
        raise ValueError(f"inertia must be one of {INERTIA_ROUTES}, got {inertia!r}")
    if formation not in FORMATIONS:
        raise ValueError(f"formation must be one of {FORMATIONS}, got {formation!r}")
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    staged = _has_velocity_equations(model)
    if route == "auto":
        route = "two-stage" if staged else "direct"
    system = SystemGraph(model, angular_velocity=angular_velocity)
    holonomic = None
    # elements that use a pseudo-velocity have no holonomic counterpart: the two-stage
    # route adds them after the projection, in the final speeds
    later = [el for el in model.elements if _uses_pseudo_velocities(model, el)]
    if staged:
        hsys = SystemGraph(model, holonomic=True, angular_velocity=angular_velocity)
        hst = assemble(hsys, inertia=inertia, formation=formation,
                       elements=[el for el in model.elements if el not in later])
        holonomic = Equations(
            model=model, graph=hsys.graph, coordinates=hsys.coordinates, speeds=hsys.speeds,
            qdot=hsys.qdot, mass_matrix_named=hst.mass_matrix, forcing_named=hst.forcing,
            kinetic_energy_named=hst.kinetic_energy, potential_energy_named=hst.potential_energy,
            outputs_named={}, inertia=inertia, principal_moments=hst.principal_moments,
            pseudo_forces_named=hst.element_forces, formation=hst.formation,
            accelerations=hsys.accelerations)
    for eqs in (holonomic,) if holonomic is not None else ():
        _no_accelerations(eqs)
    if route == "two-stage" and holonomic is not None:
        pr = project(hsys, hst, system)
        M, F, Pi = pr.mass_matrix, pr.forcing, pr.pseudo_forces
        T, V, moments = pr.kinetic_energy, pr.potential_energy, hst.principal_moments
        used = hst.formation
        if later:
            extra = element_terms(system, later)
            M = [[a + b for a, b in zip(r, s)] for r, s in zip(M, extra.mass_matrix)]
            F = [a + b for a, b in zip(F, extra.forcing)]
            Pi = [a + b for a, b in zip(Pi, extra.element_forces)]
            T, V = T + extra.kinetic_energy, V + extra.potential_energy
    else:
        st: Structural = assemble(system, inertia=inertia, formation=formation)
        M, F, Pi = st.mass_matrix, st.forcing, st.element_forces
        used = st.formation
        T, V, moments = st.kinetic_energy, st.potential_energy, st.principal_moments
        route = "direct"
    generated = [*rolling_constraints(system, model.rolling),
                 *coincidence_constraints(system, model.coincidences)]
    constraints = (form_constraints(system, [c.name for c in model.constraints], generated)
                   if model.constraints or generated else None)
    if model.calculation == "KINETOSTATICS":
        require_prescribed_motion(model, system.speeds, constraints)
    multipliers = set(constraints.multiplier_names) if constraints is not None else set()
    _no_dropped_multipliers(model, multipliers)
    # (the multipliers λf are results of the augmented solve, recorded by the engines;
    # so are the controls)
    multipliers |= set(model.controls)
    outputs = {name: system.lookup(name) for name in model.outputs
               if name not in multipliers}
    events = tuple(dataclasses.replace(
        ev, function=system.resolve(ev.function),
        resets=tuple((n, system.resolve(v)) for n, v in ev.resets)) for ev in model.events)
    controls = None
    if model.programmed:
        checked = ([("the kinematic equations", e) for e in system.qdot]
                   + [("the energy (a potential of an elastic element)", T + V)]
                   + [(f"output `{n}`", e) for n, e in outputs.items()]
                   + [(f"event `{ev.name}`", e) for ev in events
                      for e in (ev.function, *(v for _n, v in ev.resets))])
        F, controls = form_controls(system, model, M, F, checked)
        Pi = without_controls(system, Pi)
        outputs = {**outputs, **{n: e for n, e in controls.deviations.items()
                                 if n not in outputs}}
    final = Equations(model=model, graph=system.graph, coordinates=system.coordinates,
                     speeds=system.speeds, qdot=system.qdot,
                     mass_matrix_named=M, forcing_named=F,
                     kinetic_energy_named=T, potential_energy_named=V, outputs_named=outputs,
                     inertia=inertia, principal_moments=moments, holonomic=holonomic,
                     route=route, pseudo_forces_named=Pi, formation=used,
                     accelerations=system.accelerations, constraints=constraints,
                     events_named=events, controls=controls)
    _no_accelerations(final)
    return final


def _no_dropped_multipliers(model: Model, multipliers: set[str]) -> None:
    """An output ``λcoinZ1`` of a component of ``СОВПАДЕНИЕ`` that was dropped
    (identically zero) is a located error, not a missing name."""
    for c in model.coincidences:
        for name in c.constraint_names():
            if multiplier_name(name) in model.outputs and multiplier_name(name) not in multipliers:
                raise ModelError([Diagnostic(
                    f"`{multiplier_name(name)}` is asked for as an output, but the component "
                    f"`{name}` of `{c.text}` is identically zero (the loop does not leave "
                    "that plane), so kidym writes no constraint and no multiplier for it",
                    c.span)], filename=model.filename, source=model.source)


def _uses_pseudo_velocities(model: Model, element) -> bool:
    """Whether ``element``'s coordinate or characteristic uses a listed pseudo-velocity,
    directly or through definitions (``Pd.x = -c*v;``, ``Dv.v = c;``)."""
    pseudo = set(model.pseudo_velocities)
    if not pseudo:
        return False
    formulas = {d.name: d.expr for d in model.definitions}
    todo = [element.coordinate, *(str(s) for s in element.characteristic.free_symbols)]
    seen: set[str] = set()
    while todo:
        base = todo.pop().split("'")[0]  # x't → x
        if base in pseudo:
            return True
        if base in formulas and base not in seen:
            seen.add(base)
            todo += [str(s) for s in formulas[base].free_symbols]
    return False


def _no_accelerations(eq: Equations) -> None:
    """Raise unless ``q̇``, ``M``, ``F`` and the energy are free of accelerations ``ẇ``."""
    if eq.uses_accelerations([*eq.roots(), eq.energy_named]):
        raise DerivationError(
            f"model `{eq.model.name}`: the equations of motion use an acceleration (a second "
            "derivative `x't't` of a coordinate, or a derivative of a velocity) in a force, "
            "definition or velocity formula; accelerations are results of M ẇ = F and can only "
            "be shown (SHOW := …), not used to form the equations")
