"""Random valid kidym models and their independent SymPy ``KanesMethod`` equations.

A Hypothesis strategy, :func:`models`, draws a small random multibody system as plain data
(:class:`RandomModel`): a tree of 1–3 bodies whose records are random chains of elementary
transforms (``Rx/Ry/Rz`` rotations and ``Sx/Sy/Sz`` shifts, by coordinates, scaled
coordinates, constants, degree literals and prescribed motions ``A*sin(W*t)``), random
central transforms, diagonal or full inertia tensors, gravity in any direction, and force
elements of the classes ``J``, ``D``, ``C``, ``P`` on generalized coordinates, on
angular-velocity projections ``ωXBody…``, on mass-centre coordinates ``XCBody…`` and on
pseudo-velocities. Besides the holonomic trees it draws

* **quaternion bodies** ``Body | [shifts,] Q(l0, l1, l2, l3) [, shifts] | …;`` on the fixed
  frame (bodies may hang on them), whose speeds are the angular-velocity projections
  ``ωXBody, ωYBody, ωZBody``: on the body axes (``Λ̇ = ½ Λ∘ω``) or, for a body with
  isotropic inertia centred at the quaternion's centre, on the fixed axes
  (``Λ̇ = ½ ω∘Λ``), chosen by kidym's documented rule or by ``ANGULAR VELOCITY``;
* **velocity formulas** ``x't = …`` (dependent speeds, velocity constraints): linear
  combinations, with constant or coordinate-dependent coefficients, of independent speeds
  ``q't``, pseudo-velocities ``v1, v2`` (``PSEUDOVELOCITIES``), the ``ω`` of quaternion
  bodies and other dependent rates, optionally with a rheonomic term ``A*sin(W*t)``;
* **velocity projections as pseudo-velocities**: a body ``Sa(x), Sb(y), Rc(θ), …`` whose
  origin velocity is written on its own axes, ``x't = v1*cos(θ) − v2*sin(θ)``,
  ``y't = v1*sin(θ) + v2*cos(θ)`` (without ``v2``: a knife edge, non-holonomic).

The same description is rendered two ways, independently:

* :meth:`RandomModel.text` writes the ``.kdm`` source that kidym parses;
* :func:`oracle` rebuilds the system with SymPy's ``KanesMethod`` from frames, points,
  rigid bodies and particles, with the quaternion kinematic equations as ``kd_eqs`` and
  the velocity formulas as ``velocity_constraints`` on ``u_dependent``. Nothing here
  imports :mod:`kidym`.

Conventions of the oracle, from the mechanics (docs/language.md §2.2–2.4, docs/theory.md):

* an element on a generalized coordinate ``x`` has the structure ``p = x``: it is modelled
  as a point moving along a fixed line with abscissa ``x`` (a particle of mass ``c`` for
  ``J``; the force ``−c x``, ``−c ẋ`` or ``P`` along the line for ``C``, ``D``, ``P``), so
  that a dependent ``ẋ`` enters through the constraints like any other velocity;
* an element on ``ωXBody`` acts about the body's central x axis (about the fixed x axis
  for a quaternion body whose ``ω`` are fixed-axis projections): ``P`` is a moment
  ``P e_x``, ``D`` a moment ``−c (ω·e_x) e_x``, ``J`` a massless rotor of axial inertia
  ``c`` fixed in the body;
* an element on ``XCBody`` (the mass centre's fixed-frame x) acts on the mass centre along
  the fixed x axis: ``P e_x``, ``−c XC e_x``, ``−c (v_C·e_x) e_x``; ``J`` is a particle of
  mass ``c`` whose position is ``XC e_x``;
* an element on a pseudo-velocity ``v`` has the differential structure ``ṗ = v``: it adds
  ``P`` resp. ``−c v`` to the generalized force of the speed ``v``;
* the central tensor is ``[[Jx, −Jxy, −Jxz], [−Jxy, Jy, −Jyz], [−Jxz, −Jyz, Jz]]``;
* a rotation angle written as a plain numeric literal is in degrees;
* ``Q(λ0, λ1, λ2, λ3)`` turns the body by ``S v = Λ∘v∘Λ̄ / |Λ|²`` (``λ0`` scalar,
  Hamilton product);
* the independent speeds are, in this order, ``q't`` of every coordinate with neither a
  velocity formula nor a quaternion role, the listed pseudo-velocities, then the ``ω`` of
  quaternion bodies not listed (docs/theory.md § Pseudo-velocities). ``M`` and ``F`` are
  those of ``M ẇ = F`` in these speeds: KanesMethod's equations with the dependent
  accelerations eliminated through the differentiated constraints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import symengine as se
import sympy as sp
from hypothesis import strategies as st
from sympy.physics.mechanics import (
    KanesMethod,
    Particle,
    Point,
    ReferenceFrame,
    RigidBody,
    dynamicsymbols,
    inertia,
    msubs,
)

from .sympy_mechanics import Oracle

__all__ = ["Arg", "RandomBody", "RandomElement", "RandomModel", "RandomOracle", "Term",
           "VelocityFormula", "models", "oracle"]

AXES = ("x", "y", "z")

#: Kinds of transform arguments: ``coord`` (``q1``), ``scaled`` (``k1*q1``), ``const``
#: (a parameter), ``degrees`` (a numeric literal; degrees in rotations), ``prescribed``
#: (``A1*sin(W1*t)``) and ``coord+prescribed`` (``q1 + A1*sin(W1*t)``).
ARG_KINDS = ("coord", "scaled", "const", "degrees", "prescribed", "coord+prescribed")


@dataclass(frozen=True)
class Arg:
    """The argument of one elementary transform.

    Parameters
    ----------
    kind : str
        One of :data:`ARG_KINDS`.
    coord : str or None
        The coordinate (kinds ``coord``, ``scaled``, ``coord+prescribed``).
    names : tuple of str
        Parameters used: the scale (``scaled``), the constant (``const``), or the
        amplitude and circular frequency (``prescribed``, ``coord+prescribed``).
    literal : int
        The numeric literal of kind ``degrees``.
    """

    kind: str
    coord: str | None = None
    names: tuple[str, ...] = ()
    literal: int = 0

    def kdm(self) -> str:
        """Return the formula in kidym's language."""
        if self.kind == "coord":
            return str(self.coord)
        if self.kind == "scaled":
            return f"{self.names[0]}*{self.coord}"
        if self.kind == "const":
            return self.names[0]
        if self.kind == "degrees":
            return str(self.literal)
        wave = f"{self.names[0]}*sin({self.names[1]}*t)"
        return wave if self.kind == "prescribed" else f"{self.coord} + {wave}"

    def sympy(self, rotation: bool, q: dict[str, sp.Expr], p: dict[str, sp.Symbol]) -> sp.Expr:
        """Return the value as a SymPy expression (radians for a rotation).

        Parameters
        ----------
        rotation : bool
            Whether the transform is a rotation (a numeric literal is then in degrees).
        q : dict of str to sympy.Expr
            Coordinates as ``dynamicsymbols``.
        p : dict of str to sympy.Symbol
            Parameters.
        """
        t = dynamicsymbols._t
        if self.kind == "coord":
            return q[str(self.coord)]
        if self.kind == "scaled":
            return p[self.names[0]] * q[str(self.coord)]
        if self.kind == "const":
            return p[self.names[0]]
        if self.kind == "degrees":
            return sp.Integer(self.literal) * (sp.pi / 180 if rotation else 1)
        wave = p[self.names[0]] * sp.sin(p[self.names[1]] * t)
        return wave if self.kind == "prescribed" else q[str(self.coord)] + wave


#: One transform: ``(kind, axis, argument)``, kind ``"R"`` or ``"S"``.
Transform = tuple[str, str, Arg]


def _chain_kdm(transforms: tuple[Transform, ...]) -> list[str]:
    return [f"{k}{a}({v.kdm()})" for k, a, v in transforms]


@dataclass(frozen=True)
class RandomBody:
    """One body record ``Name[~Base] | transforms | central transforms, inertia;``.

    A quaternion body has ``quaternion`` (its four components): its record is
    ``transforms`` (shifts), ``Q(…)``, ``post`` (shifts); ``omega_axes`` says whether its
    pseudo-velocities ``ω`` are projections on the body axes or on the fixed axes.
    """

    name: str
    base: str | None
    transforms: tuple[Transform, ...]
    central: tuple[Transform, ...]
    mass: str
    moments: tuple[str, str, str]
    products: tuple[str, str, str] | None  # Jxy, Jyz, Jxz or None (diagonal)
    quaternion: tuple[str, str, str, str] | None = None
    post: tuple[Transform, ...] = ()
    omega_axes: str | None = None  # "body" or "fixed" for a quaternion body

    @property
    def omega(self) -> tuple[str, str, str]:
        """The names ``ωXBody, ωYBody, ωZBody``."""
        return tuple(f"ω{a}{self.name}" for a in "XYZ")  # type: ignore[return-value]

    def kdm(self) -> str:
        """Return the body record."""
        head = self.name if self.base is None else f"{self.name}~{self.base}"
        chain = _chain_kdm(self.transforms)
        if self.quaternion is not None:
            chain += [f"Q({', '.join(self.quaternion)})", *_chain_kdm(self.post)]
        central = _chain_kdm(self.central)
        items = [f"m({self.mass})"] + [f"J{a}({n})" for a, n in zip(AXES, self.moments)]
        if self.products is not None:
            items += [f"J{a}({n})" for a, n in zip(("xy", "yz", "xz"), self.products)]
        return f"{head} | {', '.join(chain)} | {', '.join(central + items)};"


@dataclass(frozen=True)
class Term:
    """One term ``coefficient * speed`` of a velocity formula.

    ``form`` is ``"k"`` (the parameter ``scale``), ``"cos"``/``"sin"``/``"-sin"``
    (``scale*cos(angle)``…, or without a scale when ``scale`` is None); ``speed`` is the
    name of a speed: ``q2't``, a pseudo-velocity ``v1`` or ``ωXBody``.
    """

    form: str
    scale: str | None
    angle: str | None
    speed: str

    def kdm(self) -> str:
        """Return the term (with its sign) as kidym text."""
        factors = [] if self.scale is None else [self.scale]
        if self.form != "k":
            factors.append(f"{self.form.lstrip('-')}({self.angle})")
        text = "*".join([*factors, self.speed])
        return f"- {text}" if self.form.startswith("-") else f"+ {text}"

    def coefficient(self, q: dict[str, sp.Expr], p: dict[str, sp.Symbol]) -> sp.Expr:
        """Return the coefficient as a SymPy expression."""
        c = sp.S.One if self.scale is None else p[self.scale]
        if self.form == "k":
            return c
        trig = sp.cos if self.form == "cos" else sp.sin
        return (-c if self.form.startswith("-") else c) * trig(q[str(self.angle)])


@dataclass(frozen=True)
class VelocityFormula:
    """A velocity formula ``x't = Σ terms [+ A*sin(W*t)];`` (``x't`` a dependent speed)."""

    coordinate: str
    terms: tuple[Term, ...]
    wave: tuple[str, str] | None = None

    def kdm(self) -> str:
        """Return the statement."""
        parts = [term.kdm() for term in self.terms]
        if self.wave is not None:
            parts.append(f"+ {self.wave[0]}*sin({self.wave[1]}*t)")
        text = " ".join(parts)
        text = text[2:] if text.startswith("+ ") else "-" + text[2:]
        return f"{self.coordinate}'t = {text};"


@dataclass(frozen=True)
class RandomElement:
    """A force element ``<cls><label>.<target> = <characteristic>``.

    Parameters
    ----------
    cls : str
        ``J``, ``D``, ``C`` or ``P``.
    target : str
        A coordinate (``q1``), a pseudo-velocity (``v1``), an angular-velocity projection
        (``ωZB2``) or a mass-centre coordinate (``XCB1``).
    body, axis : str or None
        For a body quantity, its body and axis.
    value : tuple of str
        The characteristic: ``(c,)`` a parameter, ``("wave", A, W)`` for ``A*sin(W*t)``,
        ``("sin", k, qj)`` for ``k*sin(qj)``.
    on : str
        What the target is: ``"q"``, ``"v"`` (pseudo-velocity), ``"ω"`` or ``"XC"``.
    """

    cls: str
    label: str
    target: str
    body: str | None
    axis: str | None
    value: tuple[str, ...]
    on: str = "q"

    def characteristic(self) -> str:
        """Return the characteristic's formula."""
        if self.value[0] == "wave":
            return f"{self.value[1]}*sin({self.value[2]}*t)"
        if self.value[0] == "sin":
            return f"{self.value[1]}*sin({self.value[2]})"
        return self.value[0]

    def kdm(self) -> str:
        """Return the element statement."""
        return f"{self.cls}{self.label}.{self.target} = {self.characteristic()};"

    def sympy(self, q: dict[str, sp.Expr], p: dict[str, sp.Symbol]) -> sp.Expr:
        """Return the characteristic as a SymPy expression."""
        if self.value[0] == "wave":
            return p[self.value[1]] * sp.sin(p[self.value[2]] * dynamicsymbols._t)
        if self.value[0] == "sin":
            return p[self.value[1]] * sp.sin(q[self.value[2]])
        return p[self.value[0]]


@dataclass(frozen=True)
class RandomModel:
    """A random model: coordinates, bodies, elements, gravity and parameter values.

    ``coordinates`` are all of them in the ``COORDINATES`` order (quaternion components
    included); ``pseudo_velocities`` the ``PSEUDOVELOCITIES`` list; ``velocity_formulas``
    the ``x't = …`` statements; ``angular_velocity`` the ``ANGULAR VELOCITY`` choices
    ``(body, "body" | "fixed")`` written in the file.
    """

    coordinates: tuple[str, ...]
    bodies: tuple[RandomBody, ...]
    elements: tuple[RandomElement, ...]
    gravity: tuple[str, str, str] | None
    parameters: tuple[tuple[str, float], ...]
    pseudo_velocities: tuple[str, ...] = ()
    velocity_formulas: tuple[VelocityFormula, ...] = ()
    angular_velocity: tuple[tuple[str, str], ...] = ()

    @property
    def parameter_values(self) -> dict[str, float]:
        """Parameter values by name."""
        return dict(self.parameters)

    @property
    def quaternion_components(self) -> tuple[str, ...]:
        """The coordinates that are components of a quaternion."""
        return tuple(c for b in self.bodies if b.quaternion for c in b.quaternion)

    @property
    def dependent(self) -> tuple[str, ...]:
        """The coordinates with a velocity formula."""
        return tuple(f.coordinate for f in self.velocity_formulas)

    def speeds(self) -> tuple[str, ...]:
        """The independent speeds in kidym's documented order (docs/theory.md)."""
        plain = [f"{q}'t" for q in self.coordinates
                 if q not in self.dependent and q not in self.quaternion_components]
        omega = [w for b in self.bodies if b.quaternion for w in b.omega
                 if w not in self.pseudo_velocities]
        return (*plain, *self.pseudo_velocities, *omega)

    def text(self) -> str:
        """Return the model in kidym's language."""
        lines = [" ".join(f"{n} = {v!r};" for n, v in self.parameters)]
        lines.append("COORDINATES := " + ", ".join(self.coordinates) + ";")
        lines += [b.kdm() for b in self.bodies]
        if self.angular_velocity:
            lines.append("ANGULAR VELOCITY := "
                         + ", ".join(f"{b}({m})" for b, m in self.angular_velocity) + ";")
        if self.pseudo_velocities:
            lines.append("PSEUDOVELOCITIES := " + ", ".join(self.pseudo_velocities) + ";")
        lines += [f.kdm() for f in self.velocity_formulas]
        if self.gravity is not None:
            lines.append("GRAVITY := " + ", ".join(self.gravity) + ";")
        lines += [e.kdm() for e in self.elements]
        return "\n".join(lines) + "\n"

    def classes(self) -> set[str]:
        """Return the model classes this model covers (for coverage reports)."""
        tags = {f"bodies={len(self.bodies)}", f"coordinates={len(self.coordinates)}",
                f"speeds={len(self.speeds())}"}
        bases = [b.base for b in self.bodies]
        if any(b is not None for b in bases):
            tags.add("chain")
        if len(bases) != len(set(bases)):
            tags.add("two bodies on one base")
        quaternion_bodies = {b.name for b in self.bodies if b.quaternion}
        for b in self.bodies:
            for k, a, v in b.transforms:
                tags.add(f"{k}{a}({v.kind})")
            for _k, _a, v in b.post:
                tags.add(f"S after Q({v.kind})")
            for k, _a, v in b.central:
                tags.add(f"central {k}({v.kind})")
            tags.add("full inertia" if b.products is not None else "diagonal inertia")
            if b.quaternion:
                tags.add(f"quaternion body ({b.omega_axes} ω)")
                if any(k == "S" for k, _, _ in b.transforms):
                    tags.add("quaternion body with shifts before Q")
                if b.post or b.central:
                    tags.add("quaternion body off its centre")
            if b.base in quaternion_bodies:
                tags.add("body on a quaternion body")
        if self.angular_velocity:
            tags.add("ANGULAR VELOCITY written")
        tags.add("gravity" if self.gravity is not None else "no gravity")
        for e in self.elements:
            where = e.on
            if e.on == "q" and e.target in self.dependent:
                where = "dependent q"
            elif e.on == "ω" and e.body in quaternion_bodies:
                where = "ω of a quaternion body"
            tags.add(f"{e.cls} on {where} ({e.value[0] if len(e.value) > 1 else 'const'})")
        pseudo = [v for v in self.pseudo_velocities if not v.startswith("ω")]
        if pseudo:
            tags.add(f"pseudo-velocities={len(pseudo)}")
        if any(v.startswith("ω") for v in self.pseudo_velocities):
            tags.add("ω listed as pseudo-velocities")
        if self.velocity_formulas:
            tags.add(f"velocity formulas={len(self.velocity_formulas)}")
            tags.add("non-holonomic speeds" if len(self.speeds()) < len(self.coordinates)
                     - len(quaternion_bodies) else "holonomic change of speeds")
        for f in self.velocity_formulas:
            for term in f.terms:
                kind = ("dependent rate" if term.speed[:-2] in self.dependent
                        else "ω" if term.speed.startswith("ω")
                        else "q't" if term.speed.endswith("'t") else "pseudo-velocity")
                tags.add(f"velocity formula: {term.form} × {kind}")
            if f.wave is not None:
                tags.add("velocity formula: rheonomic term")
        if self._projection():
            tags.add("velocity projections as pseudo-velocities")
        if self._time_dependent():
            tags.add("time-dependent")
        if self.is_conservative():
            tags.add("conservative")
        return tags

    def _projection(self) -> bool:
        return any(term.scale is None for f in self.velocity_formulas for term in f.terms)

    def _time_dependent(self) -> bool:
        transforms = [v for b in self.bodies for _, _, v in (*b.transforms, *b.post)]
        return (any("prescribed" in v.kind for v in transforms)
                or any(e.value[0] == "wave" for e in self.elements)
                or any(f.wave is not None for f in self.velocity_formulas))

    def is_conservative(self) -> bool:
        """Whether energy is conserved: no time dependence, only ``J`` and ``C`` elements.

        The velocity constraints are then homogeneous and scleronomic (ideal, no work).
        """
        return not self._time_dependent() and all(e.cls in ("J", "C") for e in self.elements)


# ----------------------------------------------------------------------------- strategy

def _value(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False).map(lambda x: round(x, 3))


#: Cyclic axis triples ``(a, b, c)``: shifts along ``a``, ``b``, then a turn about ``c``.
CYCLIC = (("x", "y", "z"), ("y", "z", "x"), ("z", "x", "y"))


@st.composite
def models(draw: st.DrawFn, *, max_bodies: int = 3, max_coordinates: int = 3,
           time_dependent: bool = True, omega_elements: bool = True,
           element_classes: tuple[str, ...] = ("J", "D", "C", "P"),
           quaternions: bool = True, velocity_formulas: bool = True,
           require: tuple[str, ...] = ()) -> RandomModel:
    """Draw a random valid model.

    Parameters
    ----------
    max_bodies, max_coordinates : int
        Size limits (at least 1 of each is drawn; ``max_coordinates`` counts the
        coordinates other than quaternion components).
    time_dependent : bool
        Whether prescribed motions, time-dependent forces and rheonomic velocity
        formulas may be drawn.
    omega_elements : bool
        Whether elements on body quantities may be drawn: on angular-velocity
        projections ``ωXBody…`` and on mass-centre coordinates ``XCBody…``.
    element_classes : tuple of str
        The classes of elements drawn (``C`` never on a velocity, ``J`` never on a
        pseudo-velocity).
    quaternions : bool
        Whether bodies may be quaternion bodies.
    velocity_formulas : bool
        Whether velocity formulas ``x't = …`` and pseudo-velocities may be drawn.
    require : tuple of str
        Classes every model has: ``"quaternion"`` (the first body is a quaternion
        body), ``"velocity formulas"``.

    Returns
    -------
    RandomModel
    """
    params: dict[str, float] = {}

    def param(prefix: str, low: float, high: float) -> str:
        name = f"{prefix}{sum(1 for n in params if n.rstrip('0123456789') == prefix) + 1}"
        params[name] = draw(_value(low, high))
        return name

    n_q = draw(st.integers(1, max_coordinates))
    n_b = draw(st.integers(1, max_bodies))
    coords = tuple(f"q{k}" for k in range(1, n_q + 1))
    kinds = [k for k in ARG_KINDS if time_dependent or "prescribed" not in k]

    def arg(kind: str, rotation: bool, coord: str | None = None) -> Arg:
        if kind in ("coord", "scaled", "coord+prescribed") and coord is None:
            coord = draw(st.sampled_from(coords))
        if kind == "coord":
            return Arg(kind, coord)
        if kind == "scaled":
            return Arg(kind, coord, (param("k", -2.0, 2.0),))
        if kind == "const":
            return Arg(kind, None, (param("a" if rotation else "d", -1.5, 1.5),))
        if kind == "degrees":
            return Arg(kind, literal=draw(st.integers(-180, 180)))
        wave = (param("A", -0.8, 0.8), param("W", 0.5, 3.0))
        return Arg(kind, coord if kind == "coord+prescribed" else None, wave)

    def transform(kind: str | None = None, coord: str | None = None,
                  shift: bool = False) -> Transform:
        rotation = not shift and draw(st.booleans())
        kind = kind or draw(st.sampled_from(kinds))
        return ("R" if rotation else "S", draw(st.sampled_from(AXES)),
                arg(kind, rotation, coord))

    # a body whose origin velocity is written on its own axes: Sa(q1), Sb(q2), Rc(q3)
    formulas_now = "velocity formulas" in require or (velocity_formulas
                                                      and draw(st.integers(0, 1)) == 0)
    projection = formulas_now and n_q >= 3 and draw(st.integers(0, 2)) == 0
    bases: list[str | None] = []
    is_quaternion: list[bool] = []
    for i in range(n_b):
        first_q = i == 0 and "quaternion" in require
        base = None if (projection or first_q) and i == 0 else draw(
            st.sampled_from([None] + [f"B{j + 1}" for j in range(i)]))
        bases.append(base)
        is_quaternion.append(first_q or (quaternions and base is None and not (
            projection and i == 0) and draw(st.integers(0, 2)) == 0))

    # Q bodies: shifts before Q(…) (on the fixed frame) and, off-centre, after it
    omega_axes: list[str | None] = []
    for i in range(n_b):
        omega_axes.append(draw(st.sampled_from(("body", "fixed"))) if is_quaternion[i]
                          else None)
    chains: list[list[Transform]] = []
    posts: list[list[Transform]] = []
    for i in range(n_b):
        if is_quaternion[i]:
            chains.append([transform(shift=True) for _ in range(draw(st.integers(0, 2)))])
            posts.append([] if omega_axes[i] == "fixed" else
                         [transform(draw(st.sampled_from(("const", "coord"))), shift=True)
                          for _ in range(draw(st.integers(0, 1)))])
        elif projection and i == 0:
            a, b, c = draw(st.sampled_from(CYCLIC))
            chains.append([("S", a, Arg("coord", "q1")), ("S", b, Arg("coord", "q2")),
                           ("R", c, Arg("coord", "q3"))]
                          + [transform() for _ in range(draw(st.integers(0, 1)))])
            posts.append([])
        else:
            chains.append([transform() for _ in range(draw(st.integers(0, 3)))])
            posts.append([])
    # every coordinate must enter some body: give the unused ones a transform
    used = {v.coord for c in chains + posts for _, _, v in c}
    for q in coords:
        if q not in used:
            i = draw(st.integers(0, n_b - 1))
            where = chains[i]
            where.insert(draw(st.integers(0, len(where))),
                         transform("coord", q, shift=is_quaternion[i]))
    for i, c in enumerate(chains):
        if not c and not is_quaternion[i]:
            c.append(transform("const"))

    bodies = []
    written_modes: list[tuple[str, str]] = []
    n_quaternions = 0
    for i, c in enumerate(chains):
        name = f"B{i + 1}"
        central: list[Transform] = []
        isotropic = False
        if is_quaternion[i]:
            isotropic = omega_axes[i] == "fixed" or draw(st.booleans())
            if omega_axes[i] == "body":
                central += [("S", draw(st.sampled_from(AXES)), arg("const", False))
                            for _ in range(draw(st.integers(0, 1)))]
        else:
            if draw(st.booleans()):
                central.append(("R", draw(st.sampled_from(AXES)), arg("const", True)))
            central += [("S", draw(st.sampled_from(AXES)), arg("const", False))
                        for _ in range(draw(st.integers(0, 2)))]
        mass = param("m", 0.5, 2.0)
        # a real body: moments in [1, 1.5] and products within ±0.05 keep the tensor
        # positive and its principal moments (within 0.1 of the diagonal) in the
        # triangle inequality, which kidym checks
        products = None
        if isotropic:  # one parameter for the three moments: kidym sees Jx = Jy = Jz
            j = param("Jx", 1.0, 1.5)
            moments = (j, j, j)
        else:
            moments = (param("Jx", 1.0, 1.5), param("Jy", 1.0, 1.5), param("Jz", 1.0, 1.5))
            if draw(st.booleans()):
                products = (param("Jxy", -0.05, 0.05), param("Jyz", -0.05, 0.05),
                            param("Jxz", -0.05, 0.05))
        quaternion = None
        if is_quaternion[i]:
            n_quaternions += 1
            quaternion = tuple(f"l{n_quaternions}{k}" for k in range(4))
            # kidym's rule: fixed axes for an isotropic body centred at Q's centre
            # (a "body" one that the rule would make "fixed" is written in the file)
            auto = "fixed" if isotropic and not posts[i] and not central else "body"
            if auto != omega_axes[i] or draw(st.integers(0, 3)) == 0:
                written_modes.append((name, str(omega_axes[i])))
        bodies.append(RandomBody(name, bases[i], tuple(c), tuple(central), mass, moments,
                                 products, quaternion, tuple(posts[i]), omega_axes[i]))

    all_coords = coords + tuple(x for b in bodies if b.quaternion for x in b.quaternion)
    omega_names = [w for b in bodies if b.quaternion for w in b.omega]

    # velocity formulas and pseudo-velocities
    formulas: list[VelocityFormula] = []
    pseudo: list[str] = []
    if projection:
        pseudo = ["v1"] + (["v2"] if draw(st.booleans()) else [])
        cos3, sin3 = ("cos", None, "q3"), ("sin", None, "q3")
        terms1 = [Term(*cos3, "v1")]
        terms2 = [Term(*sin3, "v1")]
        if "v2" in pseudo:
            terms1.append(Term("-sin", None, "q3", "v2"))
            terms2.append(Term(*cos3, "v2"))
        formulas = [VelocityFormula("q1", tuple(terms1)), VelocityFormula("q2", tuple(terms2))]
    elif formulas_now:
        n_dep = draw(st.integers(1, min(2, n_q)))
        dependent = draw(st.permutations(coords))[:n_dep]
        independent = [f"{q}'t" for q in coords if q not in dependent]
        n_pseudo = draw(st.integers(0, 2))
        if not independent and not omega_names:
            n_pseudo = max(n_pseudo, 1)
        pseudo = [f"v{k}" for k in range(1, n_pseudo + 1)]
        pool = independent + pseudo + omega_names
        drawn: list[tuple[str, list[Term], tuple[str, str] | None]] = []
        for x in dependent:
            choices = pool + [f"{y}'t" for y, _, _ in drawn]
            terms = []
            for _ in range(draw(st.integers(1, 2))):
                form = draw(st.sampled_from(("k", "cos", "sin")))
                angle = None if form == "k" else draw(st.sampled_from(coords))
                terms.append(Term(form, param("k", -1.5, 1.5), angle,
                                  draw(st.sampled_from(choices))))
            wave = None
            if time_dependent and draw(st.integers(0, 3)) == 0:
                wave = (param("A", -0.8, 0.8), param("W", 0.5, 3.0))
            drawn.append((x, terms, wave))
        used_speeds = {term.speed for _, terms, _ in drawn for term in terms}
        for v in pseudo:  # every pseudo-velocity enters some formula
            if v not in used_speeds:
                _, terms, _ = drawn[draw(st.integers(0, len(drawn) - 1))]
                terms.append(Term("k", param("k", -1.5, 1.5), None, v))
        formulas = [VelocityFormula(x, tuple(terms), wave) for x, terms, wave in drawn]
    if omega_names and draw(st.integers(0, 3)) == 0:  # list one Q body's ω too
        listed = [w for b in bodies if b.quaternion for w in b.omega][:3]
        pseudo = listed + pseudo if draw(st.booleans()) else pseudo + listed

    gravity = None
    if draw(st.booleans()):
        gravity = (param("gx", -10.0, 10.0), param("gy", -10.0, 10.0),
                   param("gz", -10.0, 10.0))

    elements: list[RandomElement] = []
    plain_pseudo = [v for v in pseudo if not v.startswith("ω")]
    targets = ["q"]
    if omega_elements:
        targets += ["ω", "XC"]
    if plain_pseudo:
        targets.append("v")
    allowed = {"q": ("J", "D", "C", "P"), "XC": ("J", "D", "C", "P"), "ω": ("J", "D", "P"),
               "v": ("D", "P")}
    for k in range(draw(st.integers(0, 3 if element_classes else 0))):
        on = draw(st.sampled_from(targets))
        classes = [c for c in element_classes if c in allowed[on]]
        if not classes:
            continue
        cls = draw(st.sampled_from(classes))
        where: tuple[str | None, str | None] = (None, None)
        if on in ("ω", "XC"):
            candidates = [b for b in bodies
                          if not (on == "ω" and cls == "J" and b.omega_axes == "fixed")]
            if not candidates:
                continue
            body = draw(st.sampled_from([b.name for b in candidates]))
            axis = draw(st.sampled_from(("X", "Y", "Z")))
            target = f"ω{axis}{body}" if on == "ω" else f"{axis}C{body}"
            where = (body, axis.lower())
        elif on == "v":
            target = draw(st.sampled_from(plain_pseudo))
        else:
            target = draw(st.sampled_from(coords))
        value: tuple[str, ...]
        forms = ("const", "wave", "sin") if time_dependent else ("const", "sin")
        form = draw(st.sampled_from(forms if cls == "P" else ("const",)))
        if form == "wave":
            value = ("wave", param("A", -2.0, 2.0), param("W", 0.5, 3.0))
        elif form == "sin":
            value = ("sin", param("f", -2.0, 2.0), draw(st.sampled_from(coords)))
        else:
            low = -2.0 if cls == "P" else 0.1
            value = (param("c", low, 2.0),)
        elements.append(RandomElement(cls, f"e{k + 1}", target, *where, value, on))

    return RandomModel(all_coords, tuple(bodies), tuple(elements), gravity,
                       tuple(params.items()), tuple(pseudo), tuple(formulas),
                       tuple(written_modes))


# ------------------------------------------------------------------------------- oracle

@dataclass(frozen=True)
class RandomOracle(Oracle):
    """:class:`Oracle` with the kinematic equations ``q̇ = B(q, t) w + β(q, t)``.

    ``speeds`` are the independent speeds ``w`` (named as in kidym), ``qdot`` the rates of
    all coordinates in them; the energies are functions of ``q``, ``w`` and ``t``.
    ``intermediates`` are named quantities ``(symbol, formula)`` that the expressions use
    (the entries of quaternion bodies' ``S`` and their rates), evaluated first, in order.
    """

    qdot: sp.Matrix
    intermediates: tuple[tuple[sp.Symbol, sp.Expr], ...] = ()

    @property
    def arguments(self) -> tuple[sp.Symbol, ...]:
        """``coordinates + speeds + parameters`` and then the intermediates."""
        return (*self.coordinates, *self.speeds, *self.parameters,
                *(s for s, _ in self.intermediates))

    @cached_property
    def _numeric_intermediates(self) -> Callable[..., Any]:
        return numeric_function((*self.coordinates, *self.speeds, *self.parameters),
                                [x for _, x in self.intermediates])

    @cached_property
    def _numeric(self) -> Callable[..., Any]:
        n = len(self.speeds)
        flat = numeric_function(self.arguments, [*self.mass_matrix, *self.forcing])

        def evaluate(*args: float) -> tuple[np.ndarray, np.ndarray]:
            values = np.asarray(flat(*args), dtype=float).reshape(-1)
            return values[:n * n], values[n * n:]

        return evaluate

    def _argument_values(self, values: dict[str, float]) -> list[float]:
        given = (*self.coordinates, *self.speeds, *self.parameters)
        missing = [s.name for s in given if s.name not in values]
        if missing:
            raise KeyError(f"missing values for {missing}")
        numbers = [float(values[s.name]) for s in given]
        if self.intermediates:
            numbers += [float(x) for x in self._numeric_intermediates(*numbers)]
        return numbers

    @cached_property
    def _numeric_rates(self) -> Callable[..., Any]:
        return numeric_function(self.arguments, list(self.qdot))

    def evaluate(self, values: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """``M`` of shape (n_w, n_w) and ``F`` of shape (n_w,) at ``values``."""
        m, f = self._numeric(*self._argument_values(values))
        n = len(self.speeds)
        return (np.asarray(m, dtype=float).reshape(n, n),
                np.asarray(f, dtype=float).reshape(n))

    def rates(self, values: dict[str, float]) -> np.ndarray:
        """``q̇`` of shape (n_q,) at ``values`` (coordinates, speeds, parameters, ``t``)."""
        return np.asarray(self._numeric_rates(*self._argument_values(values)),
                          dtype=float).reshape(-1)


def numeric_function(arguments: Sequence[sp.Symbol],
                     expressions: list[sp.Expr]) -> Callable[..., Any]:
    """A numeric function ``f(*arguments) -> values`` of SymPy ``expressions``.

    SymEngine's ``Lambdify`` (lambda back end) evaluates the oracle's SymPy expressions:
    SymPy's ``lambdify`` spends seconds printing big ``KanesMethod`` matrices as Python
    source, a quarter of a random model's check. Only the *evaluation* is SymEngine's;
    the expressions are built by SymPy, independently of kidym. Expressions SymEngine
    cannot take fall back to ``sympy.lambdify``.
    """
    if not expressions:
        return lambda *args: []
    try:
        function = se.Lambdify(list(arguments), expressions, backend="lambda")
    except (RuntimeError, TypeError, NotImplementedError, se.SympifyError):
        return sp.lambdify(arguments, expressions, modules="numpy")
    return lambda *args: np.asarray(function(np.asarray(args, dtype=float))).reshape(-1)


def hamilton(a: tuple, b: tuple) -> tuple:
    """The Hamilton product ``(a0, a)∘(b0, b) = (a0 b0 − a·b, a0 b + b0 a + a×b)``."""
    a0, a1, a2, a3 = a
    b0, b1, b2, b3 = b
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


def quaternion_matrix(lam: tuple) -> sp.Matrix:
    """``S`` with ``S v = Λ∘v∘Λ̄ / |Λ|²`` (child components to parent components)."""
    conjugate = (lam[0], -lam[1], -lam[2], -lam[3])
    norm = sum(x**2 for x in lam)
    columns = []
    for j in range(3):
        e = [sp.S.Zero] * 4
        e[j + 1] = sp.S.One
        columns.append([sp.expand(x) / norm for x in hamilton(hamilton(lam, e), conjugate)[1:]])
    return sp.Matrix(3, 3, lambda i, j: columns[j][i])


def oracle(model: RandomModel) -> RandomOracle:
    """Build the reference equations of ``model`` with SymPy's ``KanesMethod``.

    Parameters
    ----------
    model : RandomModel
        The random description (not its text: nothing is parsed).

    Returns
    -------
    RandomOracle
        ``M(q, t) ẇ = F(q, w, t)`` in the independent speeds ``w`` and ``q̇ = B w + β``;
        parameters in the model's order, then ``t``. The energies include the ``J``
        elements' kinetic energy and the ``C`` elements' potential energy.
    """
    t = dynamicsymbols._t
    q = {name: dynamicsymbols(name) for name in model.coordinates}
    p = {name: sp.Symbol(name) for name, _ in model.parameters}
    speed_names = model.speeds()
    w = {name: dynamicsymbols(f"w{i}") for i, name in enumerate(speed_names)}
    dependent = {x: dynamicsymbols(f"ud_{x}") for x in model.dependent}
    fixed = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(fixed, 0)

    # kinematic equations: q̇ = u, ẋ = u_x (dependent), Λ̇ = ½ Λ∘ω or ½ ω∘Λ
    rate: dict[str, sp.Expr] = {}
    for name in model.coordinates:
        if name in dependent:
            rate[name] = dependent[name]
        elif f"{name}'t" in w:
            rate[name] = w[f"{name}'t"]
    for b in model.bodies:
        if b.quaternion is None:
            continue
        lam = tuple(q[c] for c in b.quaternion)
        omega = (sp.S.Zero, *(w[n] for n in b.omega))
        half = hamilton(lam, omega) if b.omega_axes == "body" else hamilton(omega, lam)
        rate.update({c: x / 2 for c, x in zip(b.quaternion, half)})
    kd = [q[n].diff(t) - rate[n] for n in model.coordinates]
    qdot_to_u = {q[n].diff(t): rate[n] for n in model.coordinates}

    def speed(name: str) -> sp.Expr:
        return dependent[name[:-2]] if name[:-2] in dependent else w[name]

    constraints = []
    for f in model.velocity_formulas:
        value = sum((term.coefficient(q, p) * speed(term.speed) for term in f.terms),
                    sp.S.Zero)
        if f.wave is not None:
            value += p[f.wave[0]] * sp.sin(p[f.wave[1]] * t)
        constraints.append(dependent[f.coordinate] - value)

    def apply(transforms, frame, point, tag):
        for i, (kind, axis, arg) in enumerate(transforms):
            value = arg.sympy(kind == "R", q, p)
            direction = getattr(frame, axis)
            if kind == "R":
                child = ReferenceFrame(f"{tag}_F{i}")
                child.orient_axis(frame, direction, value)
                frame = child
            else:
                offset = value * direction
                child_point = point.locatenew(f"{tag}_P{i}", offset)
                child_point.set_vel(fixed, point.vel(fixed) + offset.dt(fixed))
                point = child_point
        return frame, point

    placed: dict[str | None, tuple[ReferenceFrame, Point]] = {None: (fixed, origin)}
    central: dict[str, tuple[ReferenceFrame, Point, ReferenceFrame]] = {}
    bodies: list = []
    loads: list = []
    g = [sp.S.Zero] * 3 if model.gravity is None else [p[n] for n in model.gravity]
    g_vec = g[0] * fixed.x + g[1] * fixed.y + g[2] * fixed.z
    potential = sp.S.Zero
    dcm_entries: dict[sp.Basic, sp.Expr] = {}  # S_ij(t) and their rates → symbols
    exact_entries: dict[sp.Symbol, sp.Expr] = {}  # those symbols → formulas
    pending = list(model.bodies)
    while pending:  # bases before the bodies built on them
        b = next(b for b in pending if b.base in placed)
        pending.remove(b)
        frame, point = apply(b.transforms, *placed[b.base], b.name)
        axes = None
        if b.quaternion is not None:
            # Kane's algebra runs with opaque entries S_ij(t) (the rational entries of
            # S(Λ) made it ~10 times slower); they are put in at the end
            entries = sp.Matrix([[dynamicsymbols(f"S{i + 1}{j + 1}_{b.name}") for j in range(3)]
                                 for i in range(3)])
            exact = quaternion_matrix(tuple(q[c] for c in b.quaternion))
            for s_ij, value in zip(entries, exact):
                name = s_ij.func.__name__
                dcm_entries[s_ij.diff(t)] = sp.Symbol(f"{name}'t")
                dcm_entries[s_ij] = sp.Symbol(name)
                exact_entries[sp.Symbol(name)] = value
                exact_entries[sp.Symbol(f"{name}'t")] = value.diff(t).xreplace(qdot_to_u)
            turned = ReferenceFrame(f"{b.name}_Q")
            turned.orient_explicit(fixed, entries)
            axes = turned if b.omega_axes == "body" else fixed
            wx, wy, wz = (w[n] for n in b.omega)
            turned.set_ang_vel(fixed, wx * axes.x + wy * axes.y + wz * axes.z)
            frame, point = apply(b.post, turned, point, f"{b.name}_q")
        placed[b.name] = (frame, point)
        cframe, cpoint = apply(b.central, frame, point, f"{b.name}_c")
        central[b.name] = (cframe, cpoint, axes or cframe)
        products = (sp.S.Zero,) * 3 if b.products is None else tuple(-p[n] for n in b.products)
        bodies.append(RigidBody(b.name, cpoint, cframe, p[b.mass],
                                (inertia(cframe, *(p[n] for n in b.moments), *products),
                                 cpoint)))
        loads.append((cpoint, p[b.mass] * g_vec))
        potential -= p[b.mass] * g_vec.dot(cpoint.pos_from(origin))

    speed_forces: dict[str, sp.Expr] = {}  # elements on pseudo-velocities
    for e in model.elements:
        value = e.sympy(q, p)
        if e.on == "v":
            force = value if e.cls == "P" else -value * w[e.target]
            speed_forces[e.target] = speed_forces.get(e.target, sp.S.Zero) + force
            continue
        if e.on == "ω":
            cframe, cpoint, axes = central[str(e.body)]
            axis = getattr(axes, str(e.axis))
            if e.cls == "J":  # a rotor of axial inertia c fixed in the body
                bodies.append(RigidBody(f"rotor_{e.label}", cpoint, cframe, sp.S.Zero,
                                        (value * axis.outer(axis), cpoint)))
            elif e.cls == "P":
                loads.append((cframe, value * axis))
            else:
                omega = msubs(cframe.ang_vel_in(fixed), qdot_to_u)
                loads.append((cframe, -value * omega.dot(axis) * axis))
            continue
        if e.on == "XC":  # along a fixed axis through the mass centre
            _, cpoint, _ = central[str(e.body)]
            axis = getattr(fixed, str(e.axis))
            position = cpoint.pos_from(origin).dot(axis)
            velocity = msubs(cpoint.vel(fixed).dot(axis), qdot_to_u)
            at = cpoint
        else:  # a point moving along a fixed line with abscissa x
            axis = fixed.x
            position, velocity = q[e.target], rate[e.target]
            at = origin.locatenew(f"E_{e.label}", position * axis)
            at.set_vel(fixed, velocity * axis)
        if e.cls == "J":  # a particle of mass c at the abscissa of the structure
            particle = origin.locatenew(f"J_{e.label}", position * axis)
            particle.set_vel(fixed, velocity * axis)
            bodies.append(Particle(f"J_{e.label}", particle, value))
        elif e.cls == "C":
            loads.append((at, -value * position * axis))
            potential += value * position**2 / 2
        elif e.cls == "D":
            loads.append((at, -value * velocity * axis))
        else:
            loads.append((at, value * axis))

    independent = list(w.values())
    kane = KanesMethod(fixed, q_ind=list(q.values()), u_ind=independent,
                       u_dependent=list(dependent.values()), kd_eqs=kd,
                       velocity_constraints=constraints or None)
    kane.kanes_equations(bodies, loads)
    mass, forcing = kane.mass_matrix, kane.forcing
    n = len(independent)
    if dependent:  # eliminate the dependent accelerations: K u̇_d = −k u̇_i + forcing_d
        mm, k_dep = mass[:n, :], mass[n:, n:].inv()
        mass = mm[:, :n] - mm[:, n:] * k_dep * kane.mass_matrix[n:, :n]
        forcing = forcing[:n, :] - mm[:, n:] * k_dep * kane.forcing[n:, :]
        solution = sp.solve(constraints, list(dependent.values()), dict=True)[0]
    else:
        solution = {}
    forcing = sp.Matrix(forcing)
    for name, force in speed_forces.items():
        forcing[speed_names.index(name)] += force
    kinetic = sum((body.kinetic_energy(fixed) for body in bodies), sp.S.Zero)
    qdot = sp.Matrix([rate[n] for n in model.coordinates])

    rule: dict[sp.Basic, sp.Basic] = {q[n]: sp.Symbol(n) for n in model.coordinates}
    rule.update({w[n]: sp.Symbol(n) for n in speed_names})

    def plain(expr):
        # xreplace matches top-down: Derivative(q(t), t) is replaced before q(t)
        expr = expr.xreplace(dcm_entries).xreplace(qdot_to_u)
        return expr.xreplace(solution).xreplace(rule)

    return RandomOracle(
        coordinates=tuple(sp.Symbol(n) for n in model.coordinates),
        speeds=tuple(sp.Symbol(n) for n in speed_names),
        parameters=(*p.values(), t),
        mass_matrix=sp.Matrix(plain(sp.Matrix(mass))),
        forcing=sp.Matrix(plain(forcing)),
        kinetic_energy=plain(kinetic),
        potential_energy=plain(potential),
        qdot=sp.Matrix(plain(qdot)),
        intermediates=tuple((s, plain(x)) for s, x in exact_entries.items()))
