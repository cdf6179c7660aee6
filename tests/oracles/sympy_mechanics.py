"""Independent reference equations of motion built with :mod:`sympy.physics.mechanics`.

This module is the *oracle* that kidym's own analytic derivation is tested against. It
deliberately does not import anything from :mod:`kidym`: every system is rebuilt here from
scratch with SymPy's ``KanesMethod``.

Conventions (identical to kidym's)
----------------------------------
* ``Rx(a)``, ``Ry(a)``, ``Rz(a)``: the child frame is the current frame rotated by ``a`` about
  the current frame's x/y/z axis (right-hand rule), i.e. ``B.orient_axis(A, A.x, a)``.
* ``Sx(d)``, ``Sy(d)``, ``Sz(d)``: the origin is shifted by ``d`` along the current frame's
  x/y/z axis, orientation unchanged.  Transforms apply left to right.
* Gravity is a fixed-frame acceleration applied to every mass centre.
* Generalized speeds are the coordinate derivatives, ``u_i = q_i'``; the equations read
  ``M(q) u' = F(q, u)`` with ``M`` = ``KanesMethod.mass_matrix`` and
  ``F`` = ``KanesMethod.forcing`` (gravity and velocity terms on the right-hand side).
* The returned expressions use plain symbols: ``q(t) -> Symbol("q")`` and
  ``q'(t), u(t) -> Symbol("q't")``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import sympy as sp
from sympy.physics.mechanics import (
    KanesMethod,
    Point,
    ReferenceFrame,
    RigidBody,
    dynamicsymbols,
    inertia,
)
from sympy.physics.vector import Vector

__all__ = ["BodySpec", "Oracle", "build", "chain", "double_pendulum", "moments_on_body_axes"]

#: One elementary transform: ``(kind, axis, value)`` with ``kind`` in ``{"R", "S"}`` and
#: ``axis`` in ``{"x", "y", "z"}``, e.g. ``("R", "z", phi1)`` for ``Rz(phi1)``.
Transform = tuple[str, str, sp.Expr]


@dataclass(frozen=True)
class BodySpec:
    """Description of one rigid body in kidym's record notation.

    Parameters
    ----------
    name : str
        Body name.
    base : str or None
        Name of the base body (``None`` for the fixed frame ``N``).
    transforms : sequence of Transform
        ``T1, T2, ...`` taking the base body frame to this body's frame.
    central : sequence of Transform
        ``C1, C2, ...`` taking the body frame to the central (mass-centre) frame.
    mass : sympy.Expr
        Body mass.
    inertia : tuple of sympy.Expr
        Central moments ``(Jx, Jy, Jz)`` about the central frame axes.
    products : tuple of sympy.Expr, optional
        Off-diagonal *tensor entries* ``(Ixy, Iyz, Izx)`` of the central tensor (as in
        :func:`sympy.physics.mechanics.inertia`; kidym's ``Jxy`` is ``-Ixy``). Zero by
        default: the central axes are principal.
    """

    name: str
    base: str | None
    transforms: tuple[Transform, ...]
    central: tuple[Transform, ...]
    mass: sp.Expr
    inertia: tuple[sp.Expr, sp.Expr, sp.Expr]
    products: tuple[sp.Expr, sp.Expr, sp.Expr] = (sp.S.Zero, sp.S.Zero, sp.S.Zero)


@dataclass(frozen=True)
class Oracle:
    """Reference equations of motion ``M(q) u' = F(q, u)`` with ``u = q'``.

    Attributes
    ----------
    coordinates : tuple of sympy.Symbol
        Generalized coordinates ``q`` (plain symbols).
    speeds : tuple of sympy.Symbol
        Generalized speeds ``u = q'``, named ``"<q>'t"``.
    parameters : tuple of sympy.Symbol
        Model parameters.
    mass_matrix : sympy.Matrix
        ``n x n`` mass matrix ``M(q)``.
    forcing : sympy.Matrix
        ``n x 1`` right-hand side ``F(q, u)`` (gravity plus velocity terms, i.e. the
        *negative* of the Coriolis/centrifugal and gravity generalized forces on the
        left-hand side of Lagrange's equations).
    kinetic_energy : sympy.Expr
        Kinetic energy ``T(q, u)``.
    potential_energy : sympy.Expr
        Gravitational potential energy ``V(q)`` (zero at the fixed-frame origin).
    """

    coordinates: tuple[sp.Symbol, ...]
    speeds: tuple[sp.Symbol, ...]
    parameters: tuple[sp.Symbol, ...]
    mass_matrix: sp.Matrix
    forcing: sp.Matrix
    kinetic_energy: sp.Expr
    potential_energy: sp.Expr

    @property
    def arguments(self) -> tuple[sp.Symbol, ...]:
        """Return the positional argument order of the numeric functions.

        Returns
        -------
        tuple of sympy.Symbol
            ``coordinates + speeds + parameters``.
        """
        return self.coordinates + self.speeds + self.parameters

    @cached_property
    def _numeric(self) -> Callable[..., Any]:
        return sp.lambdify(self.arguments, [self.mass_matrix, self.forcing], modules="numpy")

    @cached_property
    def _numeric_energy(self) -> Callable[..., Any]:
        return sp.lambdify(
            self.arguments, [self.kinetic_energy, self.potential_energy], modules="numpy"
        )

    def _argument_values(self, values: dict[str, float]) -> list[float]:
        missing = [s.name for s in self.arguments if s.name not in values]
        if missing:
            raise KeyError(f"missing values for {missing}")
        return [float(values[s.name]) for s in self.arguments]

    def evaluate(self, values: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate the mass matrix and forcing numerically.

        Parameters
        ----------
        values : dict of str to float
            Value of every coordinate, speed and parameter, keyed by symbol name
            (e.g. ``{"phi1": 0.1, "phi1't": 0.2, "m1": 1.0, ...}``). Extra keys are ignored.

        Returns
        -------
        M : numpy.ndarray
            ``(n, n)`` mass matrix.
        F : numpy.ndarray
            ``(n,)`` forcing vector.
        """
        m, f = self._numeric(*self._argument_values(values))
        n = len(self.coordinates)
        return (
            np.asarray(m, dtype=float).reshape(n, n),
            np.asarray(f, dtype=float).reshape(n),
        )

    def energy(self, values: dict[str, float]) -> tuple[float, float]:
        """Evaluate kinetic and potential energy numerically.

        Parameters
        ----------
        values : dict of str to float
            As for :meth:`evaluate`.

        Returns
        -------
        T : float
            Kinetic energy.
        V : float
            Potential energy.
        """
        t, v = self._numeric_energy(*self._argument_values(values))
        return float(t), float(v)


def _apply(
    transforms: Sequence[Transform],
    frame: ReferenceFrame,
    point: Point,
    fixed: ReferenceFrame,
    tag: str,
) -> tuple[ReferenceFrame, Point]:
    """Apply elementary transforms to a (frame, point) pair, setting their kinematics."""
    for i, (kind, axis, value) in enumerate(transforms):
        direction: Vector = getattr(frame, axis)
        if kind == "R":
            child = ReferenceFrame(f"{tag}_F{i}")
            child.orient_axis(frame, direction, value)
            frame = child
        elif kind == "S":
            offset = value * direction
            child_point = point.locatenew(f"{tag}_P{i}", offset)
            child_point.set_vel(fixed, point.vel(fixed) + offset.dt(fixed))
            point = child_point
        else:
            raise ValueError(f"unknown transform kind {kind!r}")
    return frame, point


def build(
    bodies: Sequence[BodySpec],
    coordinates: Sequence[sp.Function],
    parameters: Sequence[sp.Symbol],
    gravity: tuple[sp.Expr, sp.Expr, sp.Expr],
    *,
    extras: Callable[..., tuple[list, list]] | None = None,
) -> Oracle:
    """Build reference equations of motion with ``KanesMethod``.

    Parameters
    ----------
    bodies : sequence of BodySpec
        Bodies, each listed after its base body.
    coordinates : sequence of sympy.Function
        Generalized coordinates as ``dynamicsymbols``.
    parameters : sequence of sympy.Symbol
        Model parameters (reported in the oracle in this order).
    gravity : tuple of sympy.Expr
        Gravity acceleration components in the fixed frame ``N``.
    extras : callable, optional
        ``extras(central, qdot_to_u, fixed)`` returns ``(rigid_bodies, loads)`` added to
        the system: ``central`` maps each body name to its central ``(frame, point)``,
        ``qdot_to_u`` replaces ``q'`` by ``u`` (for velocity-dependent loads), ``fixed``
        is the fixed frame ``N``.

    Returns
    -------
    Oracle
        Mass matrix, forcing and energies in plain symbols.
    """
    t = dynamicsymbols._t
    fixed = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(fixed, 0)

    q = list(coordinates)
    u = [dynamicsymbols(f"u_{qi.func.__name__}") for qi in q]
    kd = [ui - qi.diff(t) for qi, ui in zip(q, u, strict=True)]
    g_vec = gravity[0] * fixed.x + gravity[1] * fixed.y + gravity[2] * fixed.z

    placed: dict[str | None, tuple[ReferenceFrame, Point]] = {None: (fixed, origin)}
    rigid: list[RigidBody] = []
    loads: list[tuple[Point, Vector]] = []
    potential: sp.Expr = sp.S.Zero
    central: dict[str, tuple[ReferenceFrame, Point]] = {}
    for spec in bodies:
        frame, point = placed[spec.base]
        frame, point = _apply(spec.transforms, frame, point, fixed, spec.name)
        placed[spec.name] = (frame, point)
        cframe, cpoint = _apply(spec.central, frame, point, fixed, f"{spec.name}_c")
        body = RigidBody(
            spec.name,
            cpoint,
            cframe,
            spec.mass,
            (inertia(cframe, *spec.inertia, *spec.products), cpoint),
        )
        rigid.append(body)
        loads.append((cpoint, spec.mass * g_vec))
        potential -= spec.mass * g_vec.dot(cpoint.pos_from(origin))
        central[spec.name] = (cframe, cpoint)
    if extras is not None:
        more_bodies, more_loads = extras(central, {qi.diff(t): ui for qi, ui in zip(q, u)},
                                         fixed)
        rigid += more_bodies
        loads += more_loads

    kane = KanesMethod(fixed, q_ind=q, u_ind=u, kd_eqs=kd)
    kane.kanes_equations(rigid, loads)
    kinetic = sum((b.kinetic_energy(fixed) for b in rigid), sp.S.Zero)

    q_sym = tuple(sp.Symbol(qi.func.__name__) for qi in q)
    u_sym = tuple(sp.Symbol(f"{qi.func.__name__}'t") for qi in q)
    rule: dict[sp.Basic, sp.Basic] = {}
    for qi, ui, qs, us in zip(q, u, q_sym, u_sym, strict=True):
        rule[qi.diff(t)] = us
        rule[ui] = us
        rule[qi] = qs

    def plain(expr: Any) -> Any:
        # xreplace matches top-down, so Derivative(q(t), t) is replaced before q(t).
        return expr.xreplace(rule)

    return Oracle(
        coordinates=q_sym,
        speeds=u_sym,
        parameters=tuple(parameters),
        mass_matrix=sp.Matrix(plain(kane.mass_matrix)),
        forcing=sp.Matrix(plain(kane.forcing)),
        kinetic_energy=plain(kinetic),
        potential_energy=plain(potential),
    )


def double_pendulum() -> Oracle:
    """Planar double pendulum of two uniform rods.

    ``Rod1 | Rz(phi1) | Sx(l1/2), m1, 0, m1*l1^2/12, m1*l1^2/12;``
    ``Rod2~Rod1 | Sx(l1), Rz(phi2) | Sx(l2/2), m2, 0, m2*l2^2/12, m2*l2^2/12;``
    gravity ``(0, -g, 0)``.

    Returns
    -------
    Oracle
        Coordinates ``(phi1, phi2)``, parameters ``(m1, m2, l1, l2, g)``.
    """
    phi1, phi2 = dynamicsymbols("phi1 phi2")
    m1, m2, l1, l2, g = sp.symbols("m1 m2 l1 l2 g")
    bodies = [
        BodySpec(
            "Rod1",
            None,
            (("R", "z", phi1),),
            (("S", "x", l1 / 2),),
            m1,
            (sp.S.Zero, m1 * l1**2 / 12, m1 * l1**2 / 12),
        ),
        BodySpec(
            "Rod2",
            "Rod1",
            (("S", "x", l1), ("R", "z", phi2)),
            (("S", "x", l2 / 2),),
            m2,
            (sp.S.Zero, m2 * l2**2 / 12, m2 * l2**2 / 12),
        ),
    ]
    return build(bodies, [phi1, phi2], [m1, m2, l1, l2, g], (sp.S.Zero, -g, sp.S.Zero))


def chain(n: int) -> Oracle:
    """Spatial ``n``-link chain with alternating x/y hinge axes.

    Link 1: ``L1 | Rx(q1) | Sz(-l/2), m, Jx, Jy, Jz;``; link ``k > 1``:
    ``Lk~L(k-1) | Sz(-l), R<axis>(qk) | Sz(-l/2), m, Jx, Jy, Jz;`` with axis ``x`` for odd
    ``k`` and ``y`` for even ``k``; gravity ``(0, 0, -g)``.

    Parameters
    ----------
    n : int
        Number of links (``n >= 1``).

    Returns
    -------
    Oracle
        Coordinates ``(q1, ..., qn)``, parameters ``(m, l, Jx, Jy, Jz, g)``.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    q = [dynamicsymbols(f"q{k}") for k in range(1, n + 1)]
    m, l, jx, jy, jz, g = sp.symbols("m l Jx Jy Jz g")
    bodies = []
    for k in range(1, n + 1):
        axis = "x" if k % 2 == 1 else "y"
        rotation: Transform = ("R", axis, q[k - 1])
        transforms = (rotation,) if k == 1 else (("S", "z", -l), rotation)
        bodies.append(
            BodySpec(
                f"L{k}",
                None if k == 1 else f"L{k - 1}",
                transforms,
                (("S", "z", -l / 2),),
                m,
                (jx, jy, jz),
            )
        )
    return build(bodies, q, [m, l, jx, jy, jz, g], (sp.S.Zero, sp.S.Zero, -g))


def moments_on_body_axes() -> Oracle:
    """A spatial two-link chain with a moment, a damper and a rotor on body axes.

    ``B1 | Rz(q1) | Sx(l/2), m, Jx, Jy, Jz;``
    ``B2~B1 | Sx(l), Ry(q2), Rx(q3) | Sz(l/2), m, Jx, Jy, Jz;`` gravity ``(0, 0, -g)``;
    on ``B2``: the moment ``M0 sin(W t)`` about its z axis, a damping moment
    ``−b ω_y`` about its y axis, and a rotor of inertia ``Jr`` about its z axis
    (a massless rigid body with central tensor ``Jr e_z e_zᵀ`` turning with ``B2``).
    None of these body axes is a joint axis. The forcing depends on ``t``, which is
    the last parameter.

    Returns
    -------
    Oracle
        Coordinates ``(q1, q2, q3)``, parameters ``(m, l, Jx, Jy, Jz, g, M0, W, b, Jr, t)``.
    """
    q1, q2, q3 = dynamicsymbols("q1 q2 q3")
    m, l, jx, jy, jz, g, m0, w, b, jr = sp.symbols("m l Jx Jy Jz g M0 W b Jr")
    t = dynamicsymbols._t
    bodies = [
        BodySpec("B1", None, (("R", "z", q1),), (("S", "x", l / 2),), m, (jx, jy, jz)),
        BodySpec("B2", "B1", (("S", "x", l), ("R", "y", q2), ("R", "x", q3)),
                 (("S", "z", l / 2),), m, (jx, jy, jz)),
    ]

    def extras(central, qdot_to_u, fixed):
        frame, point = central["B2"]
        omega = frame.ang_vel_in(fixed).subs(qdot_to_u)
        moment = m0 * sp.sin(w * t) * frame.z - b * omega.dot(frame.y) * frame.y
        rotor = RigidBody("rotor", point, frame, sp.S.Zero,
                          (jr * frame.z.outer(frame.z), point))
        return [rotor], [(frame, moment)]

    return build(bodies, [q1, q2, q3], [m, l, jx, jy, jz, g, m0, w, b, jr, t],
                 (sp.S.Zero, sp.S.Zero, -g), extras=extras)

