"""From a :class:`~kidym.model.Model` to named kinematic quantities in one graph.

Resolves the model's names (definitions, generated body quantities, ``X't``
velocities) into graph expressions on demand, in dependency order, and builds
every body's kinematics along the body tree.
"""

from __future__ import annotations

import symengine as se

from kidym.errors import DerivationError, Diagnostic, ModelError
from kidym.kinematics import names
from kidym.kinematics.bodies import (
    BodyBuilder,
    BodyKinematics,
    Frame,
    QuaternionSpec,
    fixed_frame,
    split_quaternion,
)
from kidym.model.model import TIME, Model
from kidym.symbolic.graph import Graph

Expr = se.Basic


def speed_name(coordinate: str) -> str:
    """KiDyM name of a coordinate's velocity: ``x`` → ``x't``."""
    return f"{coordinate}'t"


#: Choices of ``angular_velocity`` for quaternion bodies (see :func:`quaternion_specs`).
ANGULAR_VELOCITY = ("auto", "body", "fixed")


def _isotropic(body) -> bool:
    i = body.inertia
    return not i.has_products and i.jx == i.jy == i.jz


def quaternion_specs(model: Model, angular_velocity: str | dict[str, str] = "auto", *,
                     holonomic: bool = False) -> dict[str, QuaternionSpec]:
    """The quaternion bodies of ``model`` and how their angular velocity is given.

    Parameters
    ----------
    angular_velocity : {"auto", "body", "fixed"} or dict of body name to one of them
        ``"body"``: the pseudo-velocities ``ωXBody, ωYBody, ωZBody`` are projections on
        the body's axes and ``Λ̇ = ½ Λ∘ω`` (seed 000 eq. (19)); ``"fixed"``: they are
        projections on the fixed axes and ``Λ̇ = ½ ω∘Λ`` (eq. (23)) — allowed for a body
        with isotropic central inertia, whose central axes are then parallel to the
        fixed ones, as seed 000 takes them for the ball — and whose centre is the
        quaternion's centre of rotation (nothing after ``Q(…)`` in the record);
        ``"auto"``: what the model file chooses (``УГЛОВАЯ СКОРОСТЬ := …;``, by body or
        for all), else ``"fixed"`` for such bodies and ``"body"`` otherwise (e.g. a top
        with ``Jx = Jy = Jz`` whose centre of mass is off its fixed point). A choice
        given here other than ``"auto"`` overrides the file's.
    holonomic : bool
        First stage of the two-stage algorithm: the speeds are ``λ̇``.
    """
    specs: dict[str, QuaternionSpec] = {}
    coords = set(model.coordinates)
    for body in model.bodies:
        if not any(tr.kind == "Q" for tr in (*body.transforms, *body.central)):
            continue
        _pre, q, _post = split_quaternion(body)
        comps = tuple(se.Symbol(str(x)) for x in q.args)
        bad = [str(x) for x in q.args if not x.is_Symbol or str(x) not in coords]
        if bad:
            raise DerivationError(f"body `{body.name}`: the components of Q(…) must be "
                                  f"generalized coordinates; `{'`, `'.join(bad)}` is not")
        choice = (angular_velocity.get(body.name, "auto") if isinstance(angular_velocity, dict)
                  else angular_velocity)
        if choice not in ANGULAR_VELOCITY:
            raise ValueError(f"angular_velocity must be one of {ANGULAR_VELOCITY}, "
                             f"got {choice!r} for body `{body.name}`")
        if choice == "auto":   # the model file's `УГЛОВАЯ СКОРОСТЬ := …;`, if any
            written = model.angular_velocity
            choice = written.get(body.name, written.get("*", "auto"))
        if choice == "auto":
            choice = "fixed" if _isotropic(body) and not (_post or body.central) else "body"
        if choice == "fixed" and not _isotropic(body):
            raise DerivationError(
                f"body `{body.name}`: fixed-frame angular velocity needs isotropic central "
                "inertia (Jx = Jy = Jz, no products); use `УГЛОВАЯ СКОРОСТЬ := body;` "
                "(ANGULAR VELOCITY) or angular_velocity='body'")
        omega = tuple(se.Symbol(p + body.name) for p in names.OMEGA)
        specs[body.name] = QuaternionSpec(
            components=comps, omega=omega,  # type: ignore[arg-type]
            mode="holonomic" if holonomic else choice, fixed_axes=choice == "fixed")
    return specs


class SystemGraph:
    """The model's quantities as named expressions of one :class:`Graph`.

    Attributes
    ----------
    graph : Graph
        The DAG holding every named quantity.
    coordinates, speeds : tuple of Symbol
        ``q`` and the independent speeds ``w``.
    qdot : tuple of Expr
        ``q̇ = B w + β`` row by row.
    bodies : dict of str to BodyKinematics
        Every body's kinematics, in model order.
    """

    def __init__(self, model: Model, *, holonomic: bool = False,
                 angular_velocity: str | dict[str, str] = "auto") -> None:
        rates, dependent = self._declare(model, holonomic, angular_velocity,
                                         placeholder_rates=False)
        if dependent:
            rates.update(self._dependent_rates(dependent, angular_velocity))
        self.qdot = tuple(rates[q] for q in model.coordinates)
        for body in model.bodies:
            self._body(body.name)

    @classmethod
    def with_placeholder_rates(cls, model: Model, *,
                               angular_velocity: str | dict[str, str] = "auto"
                               ) -> SystemGraph:
        """The model's names in a graph where every dependent rate ``x't`` (of a velocity
        formula ``x't = …``) stays a symbol of its own, and no body is built up front.

        Resolving a velocity formula here and expanding it shows which dependent rates
        it truly needs (:meth:`_dependent_rates` orders the formulas by them); generated
        body names resolve as in any system.
        """
        system = cls.__new__(cls)
        rates, _ = system._declare(model, False, angular_velocity, placeholder_rates=True)
        system.qdot = tuple(rates[q] for q in model.coordinates)
        return system

    def _declare(self, model: Model, holonomic: bool, angular_velocity,
                 *, placeholder_rates: bool) -> tuple[dict[str, Expr], dict]:
        """The graph, its symbols and the rates that need no velocity formula (all of
        them, placeholders for the dependent ones, with ``placeholder_rates``); returns
        those rates and the velocity formulas by coordinate."""
        self.model = model
        self.holonomic = holonomic
        self.parameters = {p.name: se.Symbol(p.name) for p in model.parameters}
        self.coordinates = tuple(se.Symbol(q) for q in model.coordinates)
        self.quaternions = quaternion_specs(model, angular_velocity, holonomic=holonomic)
        quaternion_rates: dict[str, Expr] = {}
        extra: list[str] = []
        for spec in self.quaternions.values():
            for lam, rate in zip(spec.components, spec.rates()):
                quaternion_rates[str(lam)] = rate
            extra += [str(w) for w in spec.omega if str(w) not in model.pseudo_velocities]
        dependent = {v.coordinate: v for v in model.velocity_definitions}
        clash = sorted(set(dependent) & set(quaternion_rates))
        if clash:
            raise DerivationError(f"`{clash[0]}` is a quaternion component: its rate comes "
                                  "from the quaternion kinematics and cannot be given")
        if holonomic:
            dependent, quaternion_rates = {}, {}
            independent = list(model.coordinates)
            pseudo: tuple[str, ...] = ()
        else:
            independent = [q for q in model.coordinates
                           if q not in dependent and q not in quaternion_rates]
            pseudo = (*model.pseudo_velocities, *extra)
        self.speeds = tuple(se.Symbol(speed_name(q)) for q in independent) + tuple(
            se.Symbol(w) for w in pseudo)
        #: the controls ``u`` of ``НЕИЗВЕСТНЫЕ`` (:mod:`kidym.eom.controls`)
        self.controls = tuple(se.Symbol(u) for u in model.controls)
        #: the external inputs of ``ВХОДЫ``, leaves like the controls (values given at run
        #: time, :mod:`kidym.simulation.inputs`)
        self.inputs = tuple(se.Symbol(u) for u in model.inputs)
        self.graph = Graph(TIME, self.coordinates, self.speeds, (*self.controls, *self.inputs))
        # ẇ: symbols of the accelerations, bound by the engines to M⁻¹F where an output
        # needs them (never in the equations themselves, see `uses_accelerations`)
        self.accelerations = tuple(se.Symbol(self.graph.fresh(f"{w}'t")) for w in self.speeds)
        for a in self.accelerations:
            self.graph.reserve(str(a))
        for name in (*model.parameters_names(), *(d.name for d in model.definitions)):
            self.graph.reserve(name)
        self._definitions = {d.name: d for d in model.definitions}
        self._owner = {n: b.name for b in model.bodies for n in names.generated_names(b.name)}
        self._angles: dict[str, tuple[int, int, str]] = {}
        self._angle_S: dict[tuple[int, bool], list[Expr]] = {}
        for k, ins in enumerate(model.quaternions):
            axes = "".join(tr.axis for tr in ins.rotations)
            for i, tr in enumerate(ins.rotations):
                if tr.args[0].is_Symbol:
                    self._angles.setdefault(str(tr.args[0]), (k, i, axes))
            for i, e in enumerate(ins.euler or ()):
                self._angles.setdefault(e, (k, i, "zxz"))
        self.env: dict[str, Expr] = {}
        self._resolving: list[str] = []
        self.bodies: dict[str, BodyKinematics] = {}
        self._builder = BodyBuilder(self.graph, self.resolve, self.quaternions)
        #: while the velocity formulas are resolved: the same model with a placeholder
        #: ``x't`` for every dependent rate (see :meth:`_dependent_rates`)
        self._scratch: SystemGraph | None = None
        self._placeholders: dict[se.Symbol, Expr] = {}
        rates: dict[str, Expr] = {}
        for q, sym in zip(model.coordinates, self.coordinates):
            if q in quaternion_rates:
                rates[q] = quaternion_rates[q]
            elif q not in dependent or placeholder_rates:
                rates[q] = se.Symbol(speed_name(q))
            else:
                continue
            self.graph.set_coordinate_rate(sym, rates[q])
        return rates, dependent

    def _dependent_rates(self, dependent: dict, angular_velocity) -> dict[str, Expr]:
        """Resolve the velocity formulas ``x't = …`` in dependency order; set the rates.

        A formula may use the rates of coordinates listed later (``y't = 2*x't``) and
        generated body names (``S11Body``, ``XOBody``, ``ωZBody``), also of a body whose
        record holds the coordinate itself. The graph needs every rate before any
        derivative is taken, so the formulas are first resolved in a copy of the model
        where each dependent rate is a placeholder symbol ``x't``: the placeholders left
        in a formula, fully expanded, are the rates it truly needs. They are then
        resolved in that order here; generated names and derivatives of definitions take
        their expanded values from the copy (the bodies are built afterwards).

        Raises
        ------
        ModelError
            Located at a velocity formula that needs its own rate (a cycle).
        """
        scratch = SystemGraph.with_placeholder_rates(self.model,
                                                     angular_velocity=angular_velocity)
        needs: dict[str, list[str]] = {}
        for q, v in dependent.items():
            expanded = scratch.graph.expand(scratch.resolve(v.expr))
            needs[q] = [str(s)[:-2] for s in expanded.free_symbols
                        if str(s).endswith("'t") and str(s)[:-2] in dependent]
        rates: dict[str, Expr] = {}
        self._scratch = scratch
        try:
            for q in _dependency_order(needs, list(dependent), self._velocity_cycle):
                rate = self.resolve(dependent[q].expr)
                self.graph.set_coordinate_rate(se.Symbol(q), rate)
                self._placeholders[se.Symbol(speed_name(q))] = rate
                rates[q] = rate
        finally:
            self._scratch = None
        return rates

    def _velocity_cycle(self, cycle: list[str]) -> ModelError:
        v = next(v for v in self.model.velocity_definitions if v.coordinate == cycle[0])
        path = " → ".join(f"`{speed_name(q)}`" for q in [*cycle, cycle[0]])
        return ModelError([Diagnostic(
            f"velocity formula of `{cycle[0]}` needs its own value: {path} (through the "
            "formulas and the generated body names they use); give one of these velocities "
            "without the others", v.span)], filename=self.model.filename,
            source=self.model.source)

    def _from_scratch(self, name: str) -> Expr:
        """While the rates are resolved: ``name`` expanded in the placeholder copy."""
        assert self._scratch is not None
        value = self._scratch.graph.expand(self._scratch.lookup(name))
        return value.xreplace(self._placeholders) if self._placeholders else value

    # ---------------------------------------------------------------- names
    def resolve(self, expr: Expr) -> Expr:
        """A model formula with every model name replaced by its graph expression."""
        expr = se.sympify(expr)
        subs = {}
        for s in expr.free_symbols:
            name = str(s)
            if s == TIME or name in self.parameters or self.graph.is_state(s):
                continue
            subs[s] = self.lookup(name)
        return expr.xreplace(subs) if subs else expr

    def lookup(self, name: str) -> Expr:
        """The graph expression of a model name (definition, generated, ``X't``)."""
        if name in self.env:
            return self.env[name]
        if name in self.parameters:
            return self.parameters[name]
        sym = se.Symbol(name)
        if self.graph.is_state(sym):
            return sym
        if self._scratch is not None and (
                name in self._owner
                or (name.endswith("'t") and se.Symbol(name[:-2]) not in self.coordinates)):
            return self._from_scratch(name)  # bodies and derivatives wait for the rates
        if name in self._resolving:
            cycle = " → ".join([*self._resolving[self._resolving.index(name):], name])
            raise DerivationError(f"`{name}` depends on itself: {cycle}")
        self._resolving.append(name)
        try:
            if name in self._definitions:
                self.graph.release(name)
                value = self.graph.define(name, self.resolve(self._definitions[name].expr),
                                          keep=True)
            elif name in self._owner:
                self._body(self._owner[name])
                value = self.env[name]
            elif name in self._angles:
                value = self._angle(name)
            elif name.endswith("'t"):
                value = self.time_derivative(self.lookup(name[:-2]), name)
            else:
                raise DerivationError(f"`{name}` is not defined in model `{self.model.name}`")
        finally:
            self._resolving.pop()
        self.env[name] = value
        return value

    def angular_velocity_axis(self, name: str) -> tuple[str, int] | None:
        """``(body, k)`` when ``name`` is the generated projection ``ωXBody`` (k = 0, 1, 2).

        ``None`` for every other name (aliases are canonical in the model already).
        """
        body = self._owner.get(name)
        if body is None:
            return None
        prefix = name[:-len(body)]
        return (body, names.OMEGA.index(prefix)) if prefix in names.OMEGA else None

    def uses_accelerations(self, exprs: list[Expr]) -> bool:
        """Whether ``exprs`` (or a named quantity they use) contain an acceleration ``ẇ``."""
        return self.graph.mentions(exprs, set(self.accelerations))

    def time_derivative(self, expr: Expr, name: str) -> Expr:
        """The whole time derivative of ``expr``: ``dt`` (``ẇ = 0``) plus ``Σ ∂/∂w · ẇ``.

        The accelerations ``ẇ`` stay symbols (:attr:`accelerations`): the engines give
        them their values ``M⁻¹F`` where an output needs them.
        """
        if self.uses_accelerations([expr]):
            raise DerivationError(f"`{name}`: a derivative of an acceleration is not available "
                                  "(the accelerations come from solving M ẇ = F, they are not "
                                  "formulas of the state)")
        value = self.graph.dt(expr)
        for w, a in zip(self.speeds, self.accelerations):
            if self.graph.depends_on(expr, w):
                value += self.graph.diff(expr, w) * a
        return value

    def _angle(self, name: str) -> Expr:
        """An angle of a ``КВАТЕРНИОН`` sequence through its quaternion (inverse formulas).

        ``Q = P∘R_a(α)∘R_b(β)∘R_c(γ)``: the angles are functions of ``P̄∘Q`` given by
        :func:`kidym.kinematics.quaternions.angle_formulas` (principal branch);
        ``E(ψ, θ, φ)`` are the classical ``z-x-z`` Euler angles of ``Q``.
        """
        from kidym.kinematics import quaternions as qt

        k, i, axes = self._angles[name]
        ins = self.model.quaternions[k]
        if axes not in qt.SEQUENCES:
            raise DerivationError(
                f"`{name}`: the angles of a quaternion are found for a sequence of three "
                f"turns ({', '.join(qt.SEQUENCES)}), got `{axes}`")
        euler = axes == "zxz" and bool(ins.euler) and name in ins.euler
        key = (k, euler)
        if key not in self._angle_S:
            lam = [self.lookup(c) for c in ins.quaternion]
            if ins.prior is not None and not euler:
                lam = qt.hamilton(qt.conjugate([self.lookup(c) for c in ins.prior]), lam)
            tag = ("E" if euler else "") + (f"{k}" if len(self.model.quaternions) > 1 else "")
            self._angle_S[key] = [self.graph.define(f"l{n}Q{tag}", x) for n, x in enumerate(lam)]
        formulas = qt.angle_formulas(self._angle_S[key], axes)
        self.graph.release(name)
        return self.graph.define(name, formulas[i], keep=True)

    # --------------------------------------------------------------- bodies
    def _body(self, name: str) -> BodyKinematics:
        if name in self.bodies:
            return self.bodies[name]
        body = self.model.body(name)
        if body.base is None:
            gravity = self.model.gravity
            base: Frame = fixed_frame(None if gravity is None
                                      else [self.resolve(x) for x in gravity])
        else:
            base = self._body(body.base).frame
        kin = self._builder.body(body, base)
        self.bodies[name] = kin
        self.env.update(kin.generated)
        return kin

    @property
    def steps(self):
        """Every elementary step of the chains (:class:`~kidym.kinematics.bodies.Step`)."""
        return self._builder.steps


def _dependency_order(needs: dict[str, list[str]], order: list[str], cycle_error) -> list[str]:
    """``order`` rearranged so that every item follows the items it ``needs``.

    ``cycle_error(cycle)`` makes the exception raised for a cycle (a list of items).
    """
    done: list[str] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(item: str, path: list[str]) -> None:
        if state.get(item) == 2:
            return
        if state.get(item) == 1:
            raise cycle_error(path[path.index(item):-1])
        state[item] = 1
        for other in sorted(set(needs.get(item, ())), key=order.index):
            visit(other, [*path, other])
        state[item] = 2
        done.append(item)

    for item in order:
        visit(item, [item])
    return done
