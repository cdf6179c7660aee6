"""Random valid kidym models and their independent SymPy ``KanesMethod`` equations.

A Hypothesis strategy, :func:`models`, draws a small random multibody system as plain data
(:class:`RandomModel`): a tree of 1–3 bodies whose records are random chains of elementary
transforms (``Rx/Ry/Rz`` rotations and ``Sx/Sy/Sz`` shifts, by coordinates, scaled
coordinates, constants, degree literals and prescribed motions ``A*sin(W*t)``), random
central transforms, diagonal or full inertia tensors, gravity in any direction, and force
elements of the classes ``J``, ``D``, ``C``, ``P`` on generalized coordinates and ``P``,
``D`` on angular-velocity projections ``ωXBody…`` and mass-centre coordinates
``XCBody…``.

The same description is rendered two ways, independently:

* :meth:`RandomModel.text` writes the ``.kdm`` source that kidym parses;
* :func:`oracle` rebuilds the system with SymPy's ``KanesMethod`` through
  :func:`tests.oracles.sympy_mechanics.build` (frames, points and rigid bodies from the
  transform list; loads from the elements). Nothing here imports :mod:`kidym`.

Conventions of the oracle, from the mechanics (docs/language.md §2.3–2.4):

* an element on a generalized coordinate ``q_k`` has the structure ``p = q_k``, so its
  partial velocity is the unit vector ``e_k``: ``J`` adds ``c`` to ``M[k, k]``, ``C`` adds
  ``−c q_k``, ``D`` adds ``−c q̇_k`` and ``P`` adds its value to ``F[k]``;
* an element on ``ωXBody`` acts through the body's central x axis: ``P`` is a moment
  ``P e_x`` on the central frame, ``D`` a moment ``−c (ω·e_x) e_x``;
* an element on ``XCBody`` (the mass centre's fixed-frame x) is a force on the mass
  centre along the fixed x axis: ``P e_x`` or ``−c (v_C·e_x) e_x``;
* the central tensor is ``[[Jx, −Jxy, −Jxz], [−Jxy, Jy, −Jyz], [−Jxz, −Jyz, Jz]]``;
* a rotation angle written as a plain numeric literal is in degrees.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sympy as sp
from hypothesis import strategies as st
from sympy.physics.mechanics import dynamicsymbols

from .sympy_mechanics import BodySpec, Oracle, build

__all__ = ["Arg", "RandomBody", "RandomElement", "RandomModel", "models", "oracle"]

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


@dataclass(frozen=True)
class RandomBody:
    """One body record ``Name[~Base] | transforms | central transforms, inertia;``."""

    name: str
    base: str | None
    transforms: tuple[Transform, ...]
    central: tuple[Transform, ...]
    mass: str
    moments: tuple[str, str, str]
    products: tuple[str, str, str] | None  # Jxy, Jyz, Jxz or None (diagonal)

    def kdm(self) -> str:
        """Return the body record."""
        head = self.name if self.base is None else f"{self.name}~{self.base}"
        chain = ", ".join(f"{k}{a}({v.kdm()})" for k, a, v in self.transforms)
        central = [f"{k}{a}({v.kdm()})" for k, a, v in self.central]
        items = [f"m({self.mass})"] + [f"J{a}({n})" for a, n in zip(AXES, self.moments)]
        if self.products is not None:
            items += [f"J{a}({n})" for a, n in zip(("xy", "yz", "xz"), self.products)]
        return f"{head} | {chain} | {', '.join(central + items)};"


@dataclass(frozen=True)
class RandomElement:
    """A force element ``<cls><label>.<target> = <characteristic>``.

    Parameters
    ----------
    cls : str
        ``J``, ``D``, ``C`` or ``P``.
    target : str
        A coordinate (``q1``) or an angular-velocity projection (``ωZB2``).
    body, axis : str or None
        For an angular-velocity projection, its body and axis.
    value : tuple of str
        The characteristic: ``(c,)`` a parameter, ``("wave", A, W)`` for ``A*sin(W*t)``,
        ``("sin", k, qj)`` for ``k*sin(qj)``.
    """

    cls: str
    label: str
    target: str
    body: str | None
    axis: str | None
    value: tuple[str, ...]

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
    """A random model: coordinates, bodies, elements, gravity and parameter values."""

    coordinates: tuple[str, ...]
    bodies: tuple[RandomBody, ...]
    elements: tuple[RandomElement, ...]
    gravity: tuple[str, str, str] | None
    parameters: tuple[tuple[str, float], ...]

    @property
    def parameter_values(self) -> dict[str, float]:
        """Parameter values by name."""
        return dict(self.parameters)

    def text(self) -> str:
        """Return the model in kidym's language."""
        lines = [" ".join(f"{n} = {v!r};" for n, v in self.parameters)]
        lines.append("COORDINATES := " + ", ".join(self.coordinates) + ";")
        lines += [b.kdm() for b in self.bodies]
        if self.gravity is not None:
            lines.append("GRAVITY := " + ", ".join(self.gravity) + ";")
        lines += [e.kdm() for e in self.elements]
        return "\n".join(lines) + "\n"

    def classes(self) -> set[str]:
        """Return the model classes this model covers (for coverage reports)."""
        tags = {f"bodies={len(self.bodies)}", f"coordinates={len(self.coordinates)}"}
        bases = [b.base for b in self.bodies]
        if any(b is not None for b in bases):
            tags.add("chain")
        if len(bases) != len(set(bases)):
            tags.add("two bodies on one base")
        for b in self.bodies:
            for k, a, v in b.transforms:
                tags.add(f"{k}{a}({v.kind})")
            for k, _a, v in b.central:
                tags.add(f"central {k}({v.kind})")
            tags.add("full inertia" if b.products is not None else "diagonal inertia")
        tags.add("gravity" if self.gravity is not None else "no gravity")
        for e in self.elements:
            where = "q" if e.body is None else "ω" if e.target[0] == "ω" else "XC"
            tags.add(f"{e.cls} on {where} ({e.value[0] if len(e.value) > 1 else 'const'})")
        if any("prescribed" in v.kind for b in self.bodies for _, _, v in b.transforms) or any(
                e.value[0] == "wave" for e in self.elements):
            tags.add("time-dependent")
        return tags

    def is_conservative(self) -> bool:
        """Whether energy is conserved: no time dependence and no dampers or forces."""
        return "time-dependent" not in self.classes() and all(
            e.cls in ("J", "C") for e in self.elements)


# ----------------------------------------------------------------------------- strategy

def _value(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False).map(lambda x: round(x, 3))


@st.composite
def models(draw: st.DrawFn, *, max_bodies: int = 3, max_coordinates: int = 3,
           time_dependent: bool = True, omega_elements: bool = True,
           element_classes: tuple[str, ...] = ("J", "D", "C", "P")) -> RandomModel:
    """Draw a random valid model.

    Parameters
    ----------
    max_bodies, max_coordinates : int
        Size limits (at least 1 of each is drawn).
    time_dependent : bool
        Whether prescribed motions and time-dependent forces may be drawn.
    omega_elements : bool
        Whether ``D`` and ``P`` elements on body quantities may be drawn: on
        angular-velocity projections ``ωXBody…`` and on mass-centre coordinates
        ``XCBody…``.
    element_classes : tuple of str
        The classes of elements on coordinates drawn (``D`` and ``P`` also on ``ω``).

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

    def transform(kind: str | None = None, coord: str | None = None) -> Transform:
        rotation = draw(st.booleans())
        kind = kind or draw(st.sampled_from(kinds))
        return ("R" if rotation else "S", draw(st.sampled_from(AXES)),
                arg(kind, rotation, coord))

    chains: list[list[Transform]] = [
        [transform() for _ in range(draw(st.integers(0, 3)))] for _ in range(n_b)]
    # every coordinate must enter some body: give the unused ones a transform
    used = {v.coord for c in chains for _, _, v in c}
    for q in coords:
        if q not in used:
            where = chains[draw(st.integers(0, n_b - 1))]
            where.insert(draw(st.integers(0, len(where))), transform("coord", q))
    for c in chains:
        if not c:
            c.append(transform("const"))

    bodies = []
    for i, c in enumerate(chains):
        base = draw(st.sampled_from([None] + [f"B{j + 1}" for j in range(i)]))
        central: list[Transform] = []
        if draw(st.booleans()):
            central.append(("R", draw(st.sampled_from(AXES)), arg("const", True)))
        central += [("S", draw(st.sampled_from(AXES)), arg("const", False))
                    for _ in range(draw(st.integers(0, 2)))]
        mass = param("m", 0.5, 2.0)
        # a real body: moments in [1, 1.5] and products within ±0.05 keep the tensor
        # positive and its principal moments (within 0.1 of the diagonal) in the
        # triangle inequality, which kidym checks
        moments = (param("Jx", 1.0, 1.5), param("Jy", 1.0, 1.5), param("Jz", 1.0, 1.5))
        products = None
        if draw(st.booleans()):
            products = (param("Jxy", -0.05, 0.05), param("Jyz", -0.05, 0.05),
                        param("Jxz", -0.05, 0.05))
        bodies.append(RandomBody(f"B{i + 1}", base, tuple(c), tuple(central), mass, moments,
                                 products))

    gravity = None
    if draw(st.booleans()):
        gravity = (param("gx", -10.0, 10.0), param("gy", -10.0, 10.0),
                   param("gz", -10.0, 10.0))

    elements: list[RandomElement] = []
    on_omega_classes = tuple(c for c in element_classes if c in ("D", "P"))
    for k in range(draw(st.integers(0, 3 if element_classes else 0))):
        on_body = omega_elements and bool(on_omega_classes) and draw(st.booleans())
        cls = draw(st.sampled_from(on_omega_classes if on_body else element_classes))
        if on_body:  # ωXBody… (a moment) or XCBody… (a force on the mass centre)
            body = draw(st.sampled_from([b.name for b in bodies]))
            axis = draw(st.sampled_from(("X", "Y", "Z")))
            quantity = draw(st.sampled_from(("ω{}", "{}C")))
            target, where = quantity.format(axis) + body, (body, axis.lower())
        else:
            target, where = draw(st.sampled_from(coords)), (None, None)
        value: tuple[str, ...]
        forms = ("const", "wave", "sin") if time_dependent else ("const", "sin")
        form = draw(st.sampled_from(forms if cls == "P" else ("const",)))
        if form == "wave" and time_dependent:
            value = ("wave", param("A", -2.0, 2.0), param("W", 0.5, 3.0))
        elif form == "sin":
            value = ("sin", param("f", -2.0, 2.0), draw(st.sampled_from(coords)))
        else:
            low = -2.0 if cls == "P" else 0.1
            value = (param("c", low, 2.0),)
        elements.append(RandomElement(cls, f"e{k + 1}", target, *where, value))

    return RandomModel(coords, tuple(bodies), tuple(elements), gravity,
                       tuple(params.items()))


# ------------------------------------------------------------------------------- oracle

def oracle(model: RandomModel) -> Oracle:
    """Build the reference equations of ``model`` with SymPy's ``KanesMethod``.

    Parameters
    ----------
    model : RandomModel
        The random description (not its text: nothing is parsed).

    Returns
    -------
    Oracle
        ``M(q, t) u' = F(q, u, t)`` with ``u = q'``; parameters in the model's order,
        then ``t``. The energies include ``c u_k²/2`` of the ``J`` elements and
        ``c q_k²/2`` of the ``C`` elements on coordinates.
    """
    t = dynamicsymbols._t
    q = {name: dynamicsymbols(name) for name in model.coordinates}
    p = {name: sp.Symbol(name) for name, _ in model.parameters}

    def chain(transforms: tuple[Transform, ...]) -> tuple:
        return tuple((k, a, v.sympy(k == "R", q, p)) for k, a, v in transforms)

    specs = []
    for b in model.bodies:
        products = (sp.S.Zero,) * 3
        if b.products is not None:
            jxy, jyz, jxz = (p[n] for n in b.products)
            products = (-jxy, -jyz, -jxz)  # sympy's inertia(): ixy, iyz, izx tensor entries
        specs.append(BodySpec(b.name, b.base, chain(b.transforms), chain(b.central),
                              p[b.mass], tuple(p[n] for n in b.moments), products))
    # bases before the bodies built on them
    ordered: list[BodySpec] = []
    placed: set[str | None] = {None}
    while len(ordered) < len(specs):
        for s in specs:
            if s.name not in placed and s.base in placed:
                ordered.append(s)
                placed.add(s.name)

    def extras(central, qdot_to_u, fixed):
        loads = []
        for e in model.elements:
            if e.body is None:
                continue
            frame, point = central[e.body]
            if not e.target.startswith("ω"):  # XCBody…: a force along a fixed axis
                axis = getattr(fixed, str(e.axis))
                if e.cls == "P":
                    force = e.sympy(q, p) * axis
                else:  # D: −c·ṗ along the axis, ṗ the velocity of the centre along it
                    force = -e.sympy(q, p) * point.vel(fixed).subs(qdot_to_u).dot(axis) * axis
                loads.append((point, force))
                continue
            axis = getattr(frame, str(e.axis))
            if e.cls == "P":
                moment = e.sympy(q, p) * axis
            else:  # D: damping moment −c·(ω·e)·e
                omega = frame.ang_vel_in(fixed).subs(qdot_to_u)
                moment = -e.sympy(q, p) * omega.dot(axis) * axis
            loads.append((frame, moment))
        return [], loads

    gravity = (sp.S.Zero,) * 3 if model.gravity is None else tuple(
        p[n] for n in model.gravity)
    ref = build(ordered, list(q.values()), [*p.values(), t], gravity, extras=extras)

    # elements on generalized coordinates: structure p = q_k, partial velocity e_k
    mass, forcing = ref.mass_matrix.copy(), ref.forcing.copy()
    kinetic, potential = ref.kinetic_energy, ref.potential_energy
    plain_q = dict(zip(model.coordinates, ref.coordinates))
    rule = {q[n]: plain_q[n] for n in model.coordinates}
    for e in model.elements:
        if e.body is not None:
            continue
        k = model.coordinates.index(e.target)
        value = e.sympy(q, p).xreplace(rule)
        if e.cls == "J":
            mass[k, k] += value
            kinetic += value * ref.speeds[k] ** 2 / 2
        elif e.cls == "C":
            forcing[k] -= value * ref.coordinates[k]
            potential += value * ref.coordinates[k] ** 2 / 2
        elif e.cls == "D":
            forcing[k] -= value * ref.speeds[k]
        else:
            forcing[k] += value
    return dataclasses.replace(ref, mass_matrix=mass, forcing=forcing, kinetic_energy=kinetic,
                               potential_energy=potential)
