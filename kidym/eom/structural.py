"""Equations of motion by structural matrices (seed 000 eqs. (8)–(9), (14)–(17);
seed 003 eqs. (2), (4), (5)).

With ``W̃_R``, ``W̃_M`` the partial velocities and angular velocities of each body's
mass centre (body components, columns ``V_j``, ``Ω_j``) and ``W̃_P`` those of the
force elements' coordinates, the d'Alembert–Lagrange equations are ::

    U = Σ_b [ W̃_Rᵀ m (a⁰ + W̃_R ẇ) + W̃_Mᵀ (J (ε⁰ + W̃_M ẇ) + ω × J ω) ] − W̃_Pᵀ P = 0

so that ``M = ∂U/∂ẇ = Σ_b m W̃_RᵀW̃_R + W̃_MᵀJW̃_M (+ inertial elements)`` and
``F = −U|ẇ=0``. No energy is formed. Each body contributes two named 3-vectors,
``Q = m (Sᵀg − a⁰)`` and ``τ = J ε⁰ + ω × J ω``; ``M`` and ``F`` are short sums
over named quantities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from kidym.eom.composite import CompositeSums, composite_mf
from kidym.eom.principal import jacobi_eigen
from kidym.eom.system import SystemGraph
from kidym.eom.virtual import virtual_term
from kidym.errors import DerivationError, Diagnostic, ModelError
from kidym.kinematics import vectors as vx
from kidym.model.model import Element

Expr = se.Basic
ZERO = se.Integer(0)

INERTIA_ROUTES = ("full", "principal")
#: How the bodies' share of ``M`` and ``F`` is summed: ``"composite"`` (composite
#: bodies, :mod:`kidym.eom.composite`), ``"structural"`` (body by body), ``"auto"``
#: (composite, except on the principal-axes route).
FORMATIONS = ("auto", "composite", "structural")


@dataclass(frozen=True)
class Structural:
    """``M`` and ``F`` over named quantities, plus the energy for checking.

    Attributes
    ----------
    mass_matrix : list of list of Expr
        ``M``, shape (n_w, n_w), symmetric.
    forcing : list of Expr
        ``F``, shape (n_w,).
    kinetic_energy, potential_energy : Expr
        ``T`` and ``Π`` (gravity, elastic elements, constant forces, virtual
        potentials), outputs only.
    principal_moments : dict of str to ndarray
        For bodies turned to principal axes: their principal central moments.
    element_forces : list of Expr
        ``W̃_Pᵀ P``, the part of ``F`` due to the force elements ``P``, ``C``, ``D``
        (seed 000 eq. (16)) and the virtual potentials (seed 001), shape (n_w,).
    formation : {"composite", "structural"}
        How the bodies' share was summed.
    """

    mass_matrix: list[list[Expr]]
    forcing: list[Expr]
    kinetic_energy: Expr
    potential_energy: Expr
    principal_moments: dict[str, np.ndarray]
    element_forces: list[Expr] = field(default_factory=list)
    formation: str = "structural"


def _principal_axes(system: SystemGraph, name: str, tensor: se.Matrix
                    ) -> tuple[np.ndarray, np.ndarray]:
    values = {se.Symbol(k): v for k, v in system.model.parameter_values.items()}
    try:
        num = np.array([[float(system.graph.expand(system.resolve(tensor[i, j])).subs(values))
                         for j in range(3)] for i in range(3)])
    except (RuntimeError, TypeError, ValueError) as exc:
        raise DerivationError(
            f"body `{name}`: the principal-axes route needs a numeric inertia tensor; "
            "use inertia='full' for symbolic products of inertia") from exc
    return jacobi_eigen(num)


def _element_error(system: SystemGraph, el, message: str) -> ModelError:
    """A located error at the element's coordinate (the model is valid language)."""
    return ModelError([Diagnostic(message, el.span)], filename=system.model.filename,
                      source=system.model.source)


def _element_structure(system: SystemGraph, el, p: Expr
                       ) -> tuple[Expr, dict[se.Symbol, Expr], bool]:
    """``ṗ``, its partials ``W̃_P = ∂ṗ/∂w`` (seed 000 eq. (16)) and whether ``p`` is a velocity.

    An element coordinate free of the speeds is a structure ``p(q, t)``: ``ṗ`` is its
    time derivative. An angular-velocity projection ``ωZBody``, a speed ``x't``, or a
    definition that depends on the speeds is the *differential structure* ``ṗ`` itself
    (SPEC §2): it must be linear in the speeds, ``ṗ = W̃_P w + β`` (``W̃_P`` may be zero,
    e.g. for a projection that only a prescribed rotation turns). A definition of a
    velocity that holds no speed at all is still taken as a structure ``p(q, t)``.

    Raises
    ------
    ModelError
        A located error when ``ṗ`` is not linear in the speeds.
    """
    g = system.graph
    # a velocity is a differential structure even where it holds no speed: ωYBody of a
    # body turned by a prescribed Ry(f(t)) and then Rz(q) is f'(t) cos q (not a p(q, t))
    differential = (system.angular_velocity_axis(el.coordinate) is not None
                    or el.coordinate.endswith("'t")
                    or any(g.depends_on(p, w) for w in system.speeds))
    pdot = p if differential else g.dt(p)
    Wp = {w: g.diff(pdot, w) for w in system.speeds if g.depends_on(pdot, w)}
    if differential:
        nonlinear = [str(w) for w in system.speeds
                     if any(g.depends_on(a, w) for a in Wp.values())]
        if nonlinear:
            raise _element_error(
                system, el, f"element `{el.name}.{el.coordinate}`: `{el.coordinate}` depends "
                f"on the speeds, so it is taken as the differential structure ṗ, which must be "
                f"linear in the speeds; it is not linear in `{nonlinear[0]}`")
    return pdot, Wp, differential


def _rotor_gyroscopic(system: SystemGraph, el, pdot: Expr) -> dict[se.Symbol, Expr]:
    """Gyroscopic part of an inertial element on a velocity, per speed (without ``c``).

    On an angular-velocity projection ``ω_k = ωXBody…`` an inertial element ``c`` is a
    rotor turning with the body: kinetic energy ``½ c ω_k²``, the central tensor
    ``c e_k e_kᵀ``. Its inertia torque ``c ε_k e_k + ω × (c ω_k e_k)`` gives, besides
    ``c W̃_Pᵀ (ε⁰_k + W̃_P ẇ)``, the term ``c ω_k Ω_jᵀ (ω × e_k)`` for every speed
    ``w_j`` (zero when the central axes are kept parallel to the fixed axes). On a
    speed ``x't`` of a position ``x`` the element is the one on ``x``: nothing more.

    Raises
    ------
    ModelError
        A located error for any other velocity: its inertia has no meaning.
    """
    g = system.graph
    found = system.angular_velocity_axis(el.coordinate)
    if found is None:
        base = el.coordinate[:-2] if el.coordinate.endswith("'t") else None
        if base is not None and not any(g.depends_on(system.lookup(base), w)
                                        for w in system.speeds):
            return {}
        raise _element_error(
            system, el, f"inertial element `{el.name}.{el.coordinate}`: `{el.coordinate}` is "
            "a velocity but neither an angular-velocity projection `ωXBody`/`ωYBody`/`ωZBody` "
            "nor the rate `x't` of a position; write the element on one of those")
    body, k = found
    spec = system.quaternions.get(body)
    if spec is not None and spec.fixed_axes:
        return {}
    c = system.bodies[body].centre
    e = [se.Integer(int(i == k)) for i in range(3)]
    torque = vx.scale(pdot, vx.cross(c.omega, e))
    return {w: vx.dot(om, torque) for w, om in c.Omega.items()}


def assemble(system: SystemGraph, *, inertia: str = "full", formation: str = "auto",
             elements: Sequence[Element] | None = None) -> Structural:
    """Form ``M`` and ``F`` of the holonomic-or-not system in the graph's speeds.

    Parameters
    ----------
    system : SystemGraph
        Kinematics of the model.
    inertia : {"full", "principal"}
        ``"full"``: Euler equations with the full central tensor (seed 003 eq. (4));
        ``"principal"``: bodies with products of inertia are turned by a constant
        ``V`` to principal central axes found by Jacobi rotations (eq. (5)).
    formation : {"auto", "composite", "structural"}
        ``"structural"``: ``M`` and ``F`` summed body by body over the partial
        velocities of every body (seed 000 eqs. (14)–(16)); ``"composite"``: by
        composite bodies (:mod:`kidym.eom.composite`), with the full tensors;
        ``"auto"``: composite unless ``inertia="principal"``. Both give the same
        equations.
    elements : sequence of Element, optional
        The force and inertial elements to include (default: all of the model's).

    Raises
    ------
    DerivationError
        ``formation="composite"`` with ``inertia="principal"``.
    """
    if inertia not in INERTIA_ROUTES:
        raise ValueError(f"inertia must be one of {INERTIA_ROUTES}, got {inertia!r}")
    if formation not in FORMATIONS:
        raise ValueError(f"formation must be one of {FORMATIONS}, got {formation!r}")
    Qs: dict[str, list[Expr]] = {}
    taus: dict[str, list[Expr]] = {}
    composite = None
    if formation != "structural":
        if inertia == "principal":
            if formation == "composite":
                raise DerivationError("composite formation sums the full central tensors: "
                                      "use inertia='full' (or formation='structural')")
        else:
            composite = CompositeSums(system, Qs, taus)
    g = system.graph
    speeds = system.speeds
    index = {w: i for i, w in enumerate(speeds)}
    n = len(speeds)
    M = [[ZERO] * n for _ in range(n)]
    F = [ZERO] * n
    P = [ZERO] * n
    T = ZERO
    PI = ZERO
    moments: dict[str, np.ndarray] = {}
    gravity = None
    if system.model.gravity is not None:
        gravity = [system.resolve(x) for x in system.model.gravity]

    for name, kin in system.bodies.items():
        c = kin.centre
        m = system.resolve(kin.body.inertia.mass)
        tensor = kin.body.inertia.tensor()
        omega, Omega, eps = c.omega, c.Omega, c.eps
        if inertia == "principal" and kin.body.inertia.has_products:
            pm, V = _principal_axes(system, name, tensor)
            moments[name] = pm
            Vt = [[se.Float(float(V[j][i])) for j in range(3)] for i in range(3)]
            omega = [g.define(f"ωP{a}{name}", x) for a, x in zip("XYZ", vx.matvec(Vt, omega))]
            Omega = {w: [g.define(f"ωP{a}{name}'{w}", x)
                         for a, x in zip("XYZ", vx.matvec(Vt, om))] for w, om in Omega.items()}
            eps = [g.define(f"εP{a}{name}", x) for a, x in zip("XYZ", vx.matvec(Vt, eps))]
            J = [[se.Float(float(pm[i])) if i == j else ZERO for j in range(3)]
                 for i in range(3)]
        else:
            J = [[system.resolve(tensor[i, j]) for j in range(3)] for i in range(3)]

        def jmul(x: list[Expr], J: list[list[Expr]] = J) -> list[Expr]:
            return vx.matvec(J, x)

        Jomega = jmul(omega)
        tau = [g.define(f"τ{a}{name}", x)
               for a, x in zip("XYZ", vx.add(jmul(eps), vx.gyroscopic(J, omega)))]
        # with a gravity the kinematics carry a⁰ − Sᵀg (SystemGraph gives the fixed
        # frame the acceleration −g), so Q = m (Sᵀg − a⁰) either way
        assert (gravity is None) == (c.acc_g is None), name
        lin = vx.scale(-m, c.acc if c.acc_g is None else c.acc_g)
        if gravity is not None:
            PI -= m * vx.dot(gravity, kin.position)
        Q = [g.define(f"Q{a}{name}", x) for a, x in zip("XYZ", lin)]
        Qs[name], taus[name] = Q, tau
        T += (m * vx.dot(c.v, c.v) + vx.dot(omega, Jomega)) / 2
        if composite is not None:
            continue
        JOmega = {w: [g.define(f"JΩ{a}{name}'{w}", x) for a, x in zip("XYZ", jmul(om))]
                  for w, om in Omega.items()}
        for w, Vw in c.V.items():
            F[index[w]] += vx.dot(Vw, Q)
        for w, Om in Omega.items():
            F[index[w]] -= vx.dot(Om, tau)
        for w1 in speeds:
            i = index[w1]
            for w2 in speeds[i:]:
                j = index[w2]
                term = ZERO
                if w1 in c.V and w2 in c.V:
                    term += m * vx.dot(c.V[w1], c.V[w2])
                if w1 in Omega and w2 in JOmega:
                    term += vx.dot(Omega[w1], JOmega[w2])
                if term != 0:
                    M[i][j] += term

    if composite is not None:
        Mb, Fb = composite_mf(composite)
        for i in range(n):
            F[i] += Fb[i]
            for j in range(i, n):
                M[i][j] += Mb[i][j]

    T, PI = _add_elements(system, system.model.elements if elements is None else elements,
                          index, M, F, P, T, PI)
    # virtual potentials (seed 001): a force −∂V/∂f along the structure f, V in Π
    g = system.graph
    for vc in system.model.virtual_constraints:
        term = virtual_term(system, vc)
        fdot = g.dt(term.structure)
        for w in system.speeds:
            if g.depends_on(fdot, w):
                a = g.diff(fdot, w)
                F[index[w]] += a * term.force
                P[index[w]] += a * term.force
        PI += term.potential
    for i in range(n):
        for j in range(i):
            M[i][j] = M[j][i]
    return Structural(mass_matrix=M, forcing=F, kinetic_energy=T, potential_energy=PI,
                      principal_moments=moments, element_forces=P,
                      formation="structural" if composite is None else "composite")


def element_terms(system: SystemGraph, elements: Sequence[Element]) -> Structural:
    """The share of ``elements`` alone in ``M``, ``F``, ``T`` and ``Π`` (no bodies).

    The two-stage route adds with it, after the projection, the elements that use a
    pseudo-velocity: the holonomic system of the first stage has no such speed.
    """
    n = len(system.speeds)
    M = [[ZERO] * n for _ in range(n)]
    F = [ZERO] * n
    P = [ZERO] * n
    index = {w: i for i, w in enumerate(system.speeds)}
    T, PI = _add_elements(system, elements, index, M, F, P, ZERO, ZERO)
    for i in range(n):
        for j in range(i):
            M[i][j] = M[j][i]
    return Structural(mass_matrix=M, forcing=F, kinetic_energy=T, potential_energy=PI,
                      principal_moments={}, element_forces=P)


def _add_elements(system: SystemGraph, elements: Sequence[Element],
                  index: dict[se.Symbol, int], M: list[list[Expr]], F: list[Expr],
                  P: list[Expr], T: Expr, PI: Expr) -> tuple[Expr, Expr]:
    """Add the elements' terms to ``M`` (upper triangle), ``F`` and ``P``; return ``T, Π``."""
    g = system.graph
    for el in elements:
        p = system.lookup(el.coordinate)
        pdot, Wp, differential = _element_structure(system, el, p)
        value = system.resolve(el.characteristic)
        if el.kind == "J":
            if not g.is_constant(value):
                raise DerivationError(f"inertial element `{el.name}.{el.coordinate}`: its "
                                      "characteristic must be constant")
            # velocity part of p̈: (dW̃_P/dt)·w + β̇
            prem = g.dt(pdot if differential else g.define(f"{el.coordinate}'t", pdot))
            gyro = _rotor_gyroscopic(system, el, pdot) if differential else {}
            for w1, a in Wp.items():
                F[index[w1]] -= a * value * prem
                for w2, b in Wp.items():
                    if index[w2] >= index[w1]:
                        M[index[w1]][index[w2]] += value * a * b
            for w1, x in gyro.items():
                F[index[w1]] -= value * x
            T += value * pdot**2 / 2
            continue
        if el.kind == "P":
            force = value
            if g.is_constant(value) and not differential:
                PI -= value * p
        elif el.kind == "C":
            if differential:
                raise _element_error(system, el, f"elastic element `{el.name}."
                                     f"{el.coordinate}` needs a coordinate p(q, t), but "
                                     f"`{el.coordinate}` depends on the speeds (a velocity); "
                                     "an elastic force −c·p acts on a position")
            force = -value * p
            if g.is_constant(value):
                PI += value * p**2 / 2
        elif el.kind == "D":
            force = -value * pdot
        else:
            raise DerivationError(f"element `{el.name}`: unknown class `{el.kind}`")
        for w, a in Wp.items():
            F[index[w]] += a * force
            P[index[w]] += a * force
    return T, PI
