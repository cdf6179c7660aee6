"""Kinematics of rigid bodies from their transform chains, as named quantities.

For every elementary transform the frame's state is carried forward recursively,
as a symbolic Newton–Euler pass would (SPEC §2, "Staying compact"):

* ``S`` (fixed ← frame) and the origin position in the fixed frame,
* the angular velocity ``ω`` and the origin velocity ``v`` in *frame* components,
* their partial derivatives by each independent speed, ``Ω_j = ∂ω/∂w_j`` and
  ``V_j = ∂v/∂w_j`` — the columns of the structural matrices ``W̃_M``, ``W̃_R``
  (seed 000 eqs. (14)–(15), in body components),
* the velocity-product parts of the accelerations, ``ε⁰`` and ``a⁰``, so that
  ``ε = Σ Ω_j ẇ_j + ε⁰`` and ``a = Σ V_j ẇ_j + a⁰``.

Every component is a named quantity of the :class:`~kidym.symbolic.Graph`.
Rotation about an axis ``e`` by ``θ`` (child components, ``R`` parent ← child)::

    ω' = Rᵀω + e θ̇      Ω'_j = RᵀΩ_j + e ∂θ̇/∂w_j     ε⁰' = Rᵀε⁰ + (Rᵀω)×e θ̇ + e θ̈⁰

Shift by ``d`` (same orientation)::

    v' = v + ω×d + ḋ     V'_j = V_j + Ω_j×d + ∂ḋ/∂w_j
    a⁰' = a⁰ + ε⁰×d + ω×(ω×d) + 2ω×ḋ + d̈⁰
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import symengine as se

from kidym.errors import DerivationError
from kidym.kinematics import names
from kidym.kinematics import quaternions as qt
from kidym.kinematics import vectors as vx
from kidym.kinematics.rotations import AXES, axis_rotation, unit
from kidym.model.model import Body, Transform
from kidym.symbolic.graph import Graph

Expr = se.Basic
ZERO = se.Integer(0)


@dataclass(frozen=True)
class Frame:
    """Kinematic state of one frame (see module docstring for the symbols)."""

    S: list[list[Expr]]
    origin: list[Expr]
    omega: list[Expr]
    Omega: dict[se.Symbol, list[Expr]]
    eps: list[Expr]
    v: list[Expr]
    V: dict[se.Symbol, list[Expr]]
    acc: list[Expr]
    #: ``a⁰ − Sᵀg`` where a gravity ``g`` is given (``None`` otherwise): carried from
    #: ``−g`` at the fixed frame by the same steps as ``a⁰``, it puts gravity into
    #: the bodies' ``Q = −m (a⁰ − Sᵀg)`` without turning ``g`` down every chain.
    acc_g: list[Expr] | None = None


def fixed_frame(gravity: list[Expr] | None = None) -> Frame:
    """The fixed (inertial) frame; with ``gravity``, its ``acc_g = −g``."""
    one = se.Integer(1)
    eye = [[one if i == j else ZERO for j in range(3)] for i in range(3)]
    z = [ZERO, ZERO, ZERO]
    acc_g = None if gravity is None else [-x for x in gravity]
    return Frame(S=eye, origin=list(z), omega=list(z), Omega={}, eps=list(z), v=list(z), V={},
                 acc=list(z), acc_g=acc_g)


@dataclass(frozen=True, eq=False)
class Step:
    """One elementary step of a transform chain, kept for recursive (composite) sums.

    Attributes
    ----------
    parent, child : Frame
        The frames before and after the step.
    R : list of list of Expr or None
        A turn: ``parent ← child`` components, the origin kept.
    d : list of Expr or None
        A shift: the child origin is ``parent origin + d`` (parent components, which
        are also the child's: the orientation is kept).
    entering : dict of Symbol to (3-vector, 3-vector)
        The speeds that the step's own relative motion depends on, each with the
        increment ``(ΔΩ, ΔV)`` it adds at the step (child components) to the rigid
        transport of its partial angular velocity and origin velocity.
    label : str
        The child frame's label.
    """

    parent: Frame
    child: Frame
    R: list[list[Expr]] | None
    d: list[Expr] | None
    entering: dict
    label: str


@dataclass(frozen=True)
class QuaternionSpec:
    """A body whose record holds ``Q(λ0, λ1, λ2, λ3)``.

    Attributes
    ----------
    components : tuple of Symbol
        ``λ0 … λ3`` (coordinates).
    omega : tuple of Symbol
        The pseudo-velocities ``ωXBody, ωYBody, ωZBody`` (unused in holonomic mode).
    mode : {"body", "fixed", "holonomic"}
        How the angular velocity is represented. ``"body"``: pseudo-velocities are
        body-frame projections, ``Λ̇ = ½ Λ∘ω`` (seed 000 (19)); ``"fixed"``:
        fixed-frame projections, ``Λ̇ = ½ ω∘Λ`` (eq. (23)), for bodies with isotropic
        central inertia, whose central axes are then taken parallel to the fixed axes
        (seed 000's ball); ``"holonomic"``: no pseudo-velocities, the speeds are ``λ̇``
        and ``ω = 2 vec(Λ̄∘Λ̇)/|Λ|²`` (the first stage of the two-stage algorithm).
    fixed_axes : bool
        Whether ``ω`` are fixed-frame projections (``"fixed"``; in holonomic mode,
        whether the central axes are kept parallel to the fixed axes).
    """

    components: tuple[se.Symbol, se.Symbol, se.Symbol, se.Symbol]
    omega: tuple[se.Symbol, se.Symbol, se.Symbol]
    mode: str
    fixed_axes: bool

    def rates(self) -> list[Expr]:
        """``Λ̇`` in the pseudo-velocities (modes ``"body"``, ``"fixed"``)."""
        if self.fixed_axes:
            return qt.rate_fixed(self.components, self.omega)
        return qt.rate_body(self.components, self.omega)


def split_quaternion(body: Body) -> tuple[tuple[Transform, ...], Transform,
                                           tuple[Transform, ...]]:
    """Shifts before ``Q(…)``, the ``Q`` transform, shifts after it.

    Raises
    ------
    DerivationError
        Unless the record is ``[shifts,] Q(…) [, shifts]`` on the fixed frame.
    """
    where = [k for k, tr in enumerate(body.transforms) if tr.kind == "Q"]
    if any(tr.kind == "Q" for tr in body.central):
        raise DerivationError(f"body `{body.name}`: Q(…) belongs in the second section of the "
                              "record (base → body), not among the central transforms")
    if len(where) != 1:
        raise DerivationError(f"body `{body.name}`: at most one Q(…) per record")
    k = where[0]
    others = body.transforms[:k] + body.transforms[k + 1:]
    if body.base is not None or any(tr.kind != "S" for tr in others) or any(
            tr.kind == "R" for tr in body.central):
        raise DerivationError(
            f"body `{body.name}`: a quaternion body is supported as `[Sx, Sy, Sz,] "
            "Q(λ0, λ1, λ2, λ3) [, shifts]` on the fixed frame, without other rotations "
            "(its angular velocity is then the quaternion's)")
    return body.transforms[:k], body.transforms[k], body.transforms[k + 1:]


@dataclass(frozen=True)
class BodyKinematics:
    """Kinematics of one body, all in named quantities.

    Attributes
    ----------
    frame : Frame
        The body frame (end of the record's second section).
    centre : Frame
        The central frame (end of the third section's transforms); its ``v``, ``V``,
        ``acc`` are the mass-centre velocity, partial velocities and acceleration
        remainder, its ``omega``, ``Omega``, ``eps`` the body's angular ones, all in
        central-frame components.
    position : list of Expr
        Mass-centre position ``XC, YC, ZC`` in the fixed frame.
    """

    body: Body
    frame: Frame
    centre: Frame
    position: list[Expr]
    generated: dict[str, Expr] = field(default_factory=dict)


class BodyBuilder:
    """Carries frames through transform chains inside one :class:`Graph`.

    Parameters
    ----------
    graph : Graph
        Where named quantities go.
    resolve : callable
        Maps a model formula to a graph expression (substitutes definitions).
    """

    def __init__(self, graph: Graph, resolve,
                 quaternions: dict[str, QuaternionSpec] | None = None) -> None:
        self.graph = graph
        self.resolve = resolve
        self.quaternions = dict(quaternions or {})
        self._trig: dict[Expr, tuple[Expr, Expr]] = {}
        #: every elementary step taken, in order (see :class:`Step`)
        self.steps: list[Step] = []

    def _step(self, parent: Frame, child: Frame, label: str, *, R=None, d=None,
              entering=None) -> Frame:
        self.steps.append(Step(parent, child, R, d, dict(entering or {}), label))
        return child

    # -------------------------------------------------------------- naming
    def _vec(self, label: str, comps: list[Expr], tags: tuple[str, str, str]) -> list[Expr]:
        return [self.graph.define(f"{tag}{label}", c) for tag, c in zip(tags, comps)]

    def _name(self, f: Frame, label: str) -> Frame:
        g = self.graph
        S = [[g.define(f"S{i + 1}{j + 1}{label}", f.S[i][j]) for j in range(3)] for i in range(3)]
        xyz = ("X", "Y", "Z")
        return Frame(
            S=S,
            origin=self._vec(label, f.origin, ("XO", "YO", "ZO")),
            omega=self._vec(label, f.omega, ("ωX", "ωY", "ωZ")),
            Omega={w: self._vec(f"{label}'{w}", c, ("ωX", "ωY", "ωZ"))
                   for w, c in f.Omega.items() if not vx.is_zero(c)},
            eps=self._vec(label, f.eps, ("εX", "εY", "εZ")),
            v=self._vec(label, f.v, tuple(f"v{a}" for a in xyz)),
            V={w: self._vec(f"{label}'{w}", c, tuple(f"v{a}" for a in xyz))
               for w, c in f.V.items() if not vx.is_zero(c)},
            acc=self._vec(label, f.acc, tuple(f"a{a}" for a in xyz)),
            acc_g=None if f.acc_g is None else self._vec(label, f.acc_g,
                                                         tuple(f"ag{a}" for a in xyz)),
        )

    def _trig_of(self, angle: Expr, label: str) -> tuple[Expr, Expr]:
        """``cos`` and ``sin`` of an angle, computed once per distinct angle."""
        if angle not in self._trig:
            c, s = se.cos(angle), se.sin(angle)
            if not (c.is_Number and s.is_Number):
                tag = str(angle) if angle.is_Symbol else label
                c = self.graph.define(f"cos{tag}", c)
                s = self.graph.define(f"sin{tag}", s)
            self._trig[angle] = (c, s)
        return self._trig[angle]

    # --------------------------------------------------------- elementary steps
    def _speed_partials(self, rate: Expr) -> dict[se.Symbol, Expr]:
        g = self.graph
        deps = g.dependencies(rate)
        return {w: g.diff(rate, w) for w in g.speeds if w in deps}

    def shift(self, f: Frame, d: list[Expr], label: str) -> Frame:
        """Translate the frame origin by ``d`` (frame components)."""
        if vx.is_zero(d):
            return f
        g = self.graph
        for x in d:
            if any(w in g.dependencies(x) for w in g.speeds):
                raise DerivationError(f"a shift of `{label}` depends on a speed; shifts must be "
                                      "functions of coordinates and time")
        dd = [g.dt(x) for x in d]
        ddd = [g.dt(x) for x in dd]
        partials = [self._speed_partials(x) for x in dd]
        V = {w: list(c) for w, c in f.V.items()}
        for w, om in f.Omega.items():
            V[w] = vx.add(V.get(w, [ZERO] * 3), vx.cross(om, d))
        for i, p in enumerate(partials):
            for w, val in p.items():
                V.setdefault(w, [ZERO] * 3)
                V[w][i] = V[w][i] + val
        wxd = vx.cross(f.omega, d)
        inc = vx.add(vx.cross(f.eps, d), vx.cross(f.omega, wxd))
        inc = vx.add(vx.add(inc, vx.scale(2, vx.cross(f.omega, dd))), ddd)
        new = replace(f, origin=vx.add(f.origin, vx.matvec(f.S, d)),
                      v=vx.add(vx.add(f.v, wxd), dd), V=V, acc=vx.add(f.acc, inc),
                      acc_g=None if f.acc_g is None else vx.add(f.acc_g, inc))
        entering: dict[se.Symbol, tuple[list[Expr], list[Expr]]] = {}
        for i, p in enumerate(partials):
            for w, val in p.items():
                entering.setdefault(w, ([ZERO] * 3, [ZERO] * 3))[1][i] = val
        return self._step(f, self._name(new, label), label, d=d, entering=entering)

    def rotate(self, f: Frame, R: list[list[Expr]], axis: str | None, angle: Expr | None,
               label: str) -> Frame:
        """Turn the frame by the constant-or-angle rotation ``R`` (parent ← child).

        ``axis``/``angle`` give the relative angular velocity ``e θ̇``; for a rotation
        whose relative angular velocity is given otherwise (quaternions) pass
        ``None`` and add it with :meth:`add_relative_rate`.
        """
        g = self.graph

        def tm(x: list[Expr]) -> list[Expr]:  # parent → child components
            return vx.tmatvec(R, x)

        omega_p = tm(f.omega)
        omega = list(omega_p)
        Omega = {w: tm(c) for w, c in f.Omega.items()}
        eps = tm(f.eps)
        entering: dict[se.Symbol, tuple[list[Expr], list[Expr]]] = {}
        if angle is not None and not g.is_constant(angle):
            k = AXES[axis]
            rate = g.dt(angle)
            rate_named = g.define(f"{label}'t", rate)
            omega[k] = omega[k] + rate_named
            for w, val in self._speed_partials(rate).items():
                Omega.setdefault(w, [ZERO] * 3)
                Omega[w][k] = Omega[w][k] + val
                entering[w] = (vx.scale(val, unit(axis)), [ZERO] * 3)
            e = unit(axis)
            eps = vx.add(eps, vx.scale(rate_named, vx.cross(omega_p, e)))
            eps[k] = eps[k] + g.dt(rate_named)
        new = Frame(S=vx.matmul(f.S, R), origin=f.origin, omega=omega, Omega=Omega, eps=eps,
                    v=tm(f.v), V={w: tm(c) for w, c in f.V.items()}, acc=tm(f.acc),
                    acc_g=None if f.acc_g is None else tm(f.acc_g))
        return self._step(f, self._name(new, label), label, R=R, entering=entering)

    # ------------------------------------------------------------------ chains
    def chain(self, start: Frame, transforms: tuple[Transform, ...], body: str,
              final_label: str, step_prefix: str) -> Frame:
        """Apply a record's transforms; the frame they end in is named ``final_label``.

        Consecutive shifts are merged into one step; every rotation is a step.
        Intermediate frames are labelled ``<prefix><body>#k``.
        """
        steps: list[tuple[str, object]] = []
        pending = [ZERO, ZERO, ZERO]
        for tr in transforms:
            if tr.kind == "S":
                pending[AXES[tr.axis]] += self.resolve(tr.args[0])
                continue
            if not vx.is_zero(pending):
                steps.append(("S", pending))
                pending = [ZERO, ZERO, ZERO]
            if tr.kind != "R":
                raise DerivationError(
                    f"body `{body}`: quaternion transforms Q(…) are not supported yet")
            steps.append(("R", tr))
        if not vx.is_zero(pending):
            steps.append(("S", pending))
        f = start
        for k, (kind, item) in enumerate(steps, start=1):
            label = final_label if k == len(steps) else f"{step_prefix}{body}#{k}"
            if kind == "S":
                f = self.shift(f, item, label)
            else:
                angle = self.resolve(item.args[0])
                c, s = self._trig_of(angle, label)
                f = self.rotate(f, axis_rotation(item.axis, c, s), item.axis, angle, label)
        return f

    def quaternion(self, f: Frame, spec: QuaternionSpec, label: str) -> Frame:
        """Turn the (non-rotating) frame ``f`` by ``S(Λ)``; ``ω`` from the quaternion.

        Modes ``"body"``/``"fixed"``: ``ω`` (body components) is ``w`` resp. ``Sᵀw`` and
        ``ε⁰ = 0`` exactly (``d(Sᵀw)/dt|ẇ=0 = −[ω]×Sᵀw = 0``). Holonomic mode:
        ``ω = 2 vec(Λ̄∘Λ̇)/|Λ|²`` with ``Λ̇`` the speeds, ``ε⁰`` by the chain rule.
        """
        g = self.graph
        lam = spec.components
        norm = g.define(f"n{label}", sum(x * x for x in lam))
        R = [[g.define(f"S{i + 1}{j + 1}{label}", x / norm) for j, x in enumerate(row)]
             for i, row in enumerate(qt.quadratic_matrix(lam))]
        zero3 = [ZERO, ZERO, ZERO]
        if spec.mode == "holonomic":
            dlam = [g.dt(x) for x in lam]
            vec = qt.hamilton(qt.conjugate(lam), dlam)[1:]
            omega = [g.define(f"ω{a}{label}", 2 * x / norm) for a, x in zip("XYZ", vec)]
            Omega = {w: [g.diff(x, w) for x in omega] for w in g.speeds
                     if any(g.depends_on(x, w) for x in omega)}
            eps = [g.dt(x) for x in omega]
        elif spec.mode == "body":
            omega = list(spec.omega)
            Omega = {w: [se.Integer(int(i == k)) for i in range(3)]
                     for k, w in enumerate(spec.omega)}
            eps = list(zero3)
        else:
            omega = vx.tmatvec(R, list(spec.omega))
            Omega = {w: [R[k][i] for i in range(3)] for k, w in enumerate(spec.omega)}
            eps = list(zero3)
        if not vx.is_zero(f.omega) or f.Omega:
            raise DerivationError(f"`{label}`: Q(…) must turn a non-rotating frame")

        def tm(x: list[Expr]) -> list[Expr]:
            return vx.tmatvec(R, x)

        new = Frame(S=vx.matmul(f.S, R), origin=f.origin, omega=omega, Omega=Omega, eps=eps,
                    v=tm(f.v), V={w: tm(c) for w, c in f.V.items()}, acc=tm(f.acc),
                    acc_g=None if f.acc_g is None else tm(f.acc_g))
        # the frame turned is non-rotating: all of ω is the step's own
        child = self._name(new, label)
        return self._step(f, child, label, R=R,
                          entering={w: (om, [ZERO] * 3) for w, om in child.Omega.items()})

    def _fixed_axes_centre(self, f: Frame, spec: QuaternionSpec, label: str) -> Frame:
        """Central frame parallel to the fixed axes turning with ``ω`` (isotropic bodies)."""
        g = self.graph
        if spec.mode == "holonomic":
            lam = spec.components
            norm = sum(x * x for x in lam)
            dlam = [g.dt(x) for x in lam]
            vec = qt.hamilton(dlam, qt.conjugate(lam))[1:]
            omega = [2 * x / norm for x in vec]
            Omega = {w: [g.diff(x, w) for x in omega] for w in g.speeds
                     if any(g.depends_on(x, w) for x in omega)}
            eps = [g.dt(g.define(f"ω{a}{label}#λ", x)) for a, x in zip("XYZ", omega)]
        else:
            omega = list(spec.omega)
            Omega = {w: [se.Integer(int(i == k)) for i in range(3)]
                     for k, w in enumerate(spec.omega)}
            eps = [ZERO, ZERO, ZERO]
        one = se.Integer(1)
        eye = [[one if i == j else ZERO for j in range(3)] for i in range(3)]
        child = self._name(replace(f, omega=omega, Omega=Omega, eps=eps), label)
        return self._step(f, child, label, R=eye,
                          entering={w: (om, [ZERO] * 3) for w, om in child.Omega.items()})

    def _quaternion_body(self, body: Body, base: Frame,
                         spec: QuaternionSpec) -> tuple[Frame, Frame]:
        pre, _q, post = split_quaternion(body)
        start = self.chain(base, pre, body.name, f"{body.name}#0", "")
        label = body.name if not post else f"{body.name}#q"
        frame = self.quaternion(start, spec, label)
        if post:
            frame = self.chain(frame, post, body.name, body.name, "")
        if spec.fixed_axes:
            if post or body.central:
                raise DerivationError(
                    f"body `{body.name}`: with fixed-frame angular velocity its centre must be "
                    "the quaternion's centre of rotation (no shifts after Q, no central "
                    "transforms); use `УГЛОВАЯ СКОРОСТЬ := body;` (ANGULAR VELOCITY)")
            return frame, self._fixed_axes_centre(start, spec, "C" + body.name)
        return frame, self.chain(frame, body.central, body.name, "C" + body.name, "C")

    def body(self, body: Body, base: Frame) -> BodyKinematics:
        """Kinematics of ``body`` whose record starts in frame ``base``."""
        spec = self.quaternions.get(body.name)
        if spec is not None:
            frame, centre = self._quaternion_body(body, base, spec)
        else:
            frame = self.chain(base, body.transforms, body.name, body.name, "")
            centre = self.chain(frame, body.central, body.name, "C" + body.name, "C")
        generated: dict[str, Expr] = {}
        for i in range(3):
            for j in range(3):
                generated[f"S{i + 1}{j + 1}{body.name}"] = frame.S[i][j]
        for k, tag in enumerate(names.ORIGIN):
            generated[tag + body.name] = frame.origin[k]
        for k, tag in enumerate(names.CENTRE):
            generated[tag + body.name] = centre.origin[k]
        for k, tag in enumerate(names.OMEGA):
            generated[tag + body.name] = centre.omega[k]
        # a fixed-axes centre (isotropic Q body) turns with ω but keeps the fixed axes:
        # d(v)/dt is not acc − ω×v there, so its rate is left to the chain rule
        self._register(centre, turning_axes=spec is None or not spec.fixed_axes)
        if frame is not centre:
            self._register(frame)
        return BodyKinematics(body=body, frame=frame, centre=centre,
                              position=list(centre.origin), generated=generated)

    def _register(self, f: Frame, *, turning_axes: bool = True) -> None:
        """Tell the graph the rates and partials the recursion already knows.

        ``turning_axes``: the frame's axes turn with its ``ω``, so the rate of its
        velocity components is ``acc − ω×v``; otherwise that rate is not declared.
        """
        g = self.graph
        fixed_v = vx.matvec(f.S, f.v)
        for k in range(3):
            rates = [(f.origin[k], fixed_v[k]), (f.omega[k], f.eps[k])]
            if turning_axes:
                rates.append((f.v[k], f.acc[k] - vx.cross(f.omega, f.v)[k]))
            for sym, rate in rates:
                if sym.is_Symbol and sym in g:
                    g.set_rate(sym, rate)
            for comps, partials in ((f.omega, f.Omega), (f.v, f.V)):
                if comps[k].is_Symbol and comps[k] in g:
                    for w in g.speeds:
                        part = partials.get(w)
                        g.set_partial(comps[k], w, part[k] if part is not None else ZERO)

