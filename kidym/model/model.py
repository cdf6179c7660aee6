"""The validated, immutable mechanical model (SPEC §2).

A :class:`Model` is what the parser (or the Python API) produces and every later
stage consumes. Formulas are SymEngine expressions over :class:`symengine.Symbol`
named exactly as in the model text; ``t`` is time. Nothing here derives anything:
kinematics and equations of motion live in :mod:`kidym.kinematics` and
:mod:`kidym.eom`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import symengine as se

from kidym.errors import Span

Expr = se.Basic
_ZERO = se.Integer(0)

#: The symbol of time in every model.
TIME = se.Symbol("t")

#: Element class letters (KiDyM ``КОДИРОВКА`` default ``JDCP``): inertial,
#: dissipative, elastic and force elements.
ELEMENT_KINDS = {"J": "inertial", "D": "dissipative", "C": "elastic", "P": "force"}


@dataclass(frozen=True)
class Transform:
    """One elementary transform of a body record.

    Parameters
    ----------
    kind : {"R", "S", "Q"}
        Rotation about an axis, shift along an axis, or a quaternion rotation.
    axis : {"x", "y", "z"} or None
        The axis of ``R``/``S``; ``None`` for ``Q``.
    args : tuple of Expr
        One angle (radians) or distance; four quaternion components for ``Q``.
        A rotation written with a plain numeric literal (``Rx(90)``) is in degrees,
        as in the original KiDyM; the parser has already converted it to radians.
    span : Span or None
        Source location, for messages.
    """

    kind: str
    axis: str | None
    args: tuple[Expr, ...]
    span: Span | None = None

    def __post_init__(self) -> None:
        assert self.kind in ("R", "S", "Q"), self.kind
        assert (self.axis is None) == (self.kind == "Q")


@dataclass(frozen=True)
class Inertia:
    """Mass and central inertia tensor of a body in its central frame.

    The tensor is ``[[Jx, -Jxy, -Jxz], [-Jxy, Jy, -Jyz], [-Jxz, -Jyz, Jz]]``:
    products of inertia are the positive integrals ``Jxy = ∫ x y dm`` (seed 003,
    eq. (4)).
    """

    mass: Expr
    jx: Expr
    jy: Expr
    jz: Expr
    jxy: Expr = _ZERO
    jyz: Expr = _ZERO
    jxz: Expr = _ZERO

    @property
    def has_products(self) -> bool:
        """Whether any product of inertia is not identically zero."""
        return any(p != 0 for p in (self.jxy, self.jyz, self.jxz))

    def tensor(self) -> se.Matrix:
        """The 3×3 central inertia tensor as a SymEngine matrix."""
        return se.Matrix([[self.jx, -self.jxy, -self.jxz],
                          [-self.jxy, self.jy, -self.jyz],
                          [-self.jxz, -self.jyz, self.jz]])


@dataclass(frozen=True)
class Body:
    """A rigid-body record ``Name[~Base] | transforms | [central transforms,] inertia;``.

    Parameters
    ----------
    name : str
        Body name; generated quantities are suffixed with it (``S11Name``, ``ωXName``).
    base : str or None
        Body in whose frame ``transforms`` start; ``None`` means the fixed frame.
    transforms : tuple of Transform
        From the base frame to the body frame (record forms (1) and (6) of seed 003).
    central : tuple of Transform
        From the body frame to its central (centre-of-mass) frame (form (6));
        empty in form (1), where the body frame is the central frame.
    inertia : Inertia
        Mass and central tensor.
    """

    name: str
    base: str | None
    transforms: tuple[Transform, ...]
    central: tuple[Transform, ...]
    inertia: Inertia
    span: Span | None = None


@dataclass(frozen=True)
class Element:
    """A force or inertial element ``<class><label>.<coordinate> = <characteristic>``.

    Parameters
    ----------
    name : str
        Full element name as written, e.g. ``P1`` or ``Cspring``.
    kind : {"J", "D", "C", "P"}
        Inertial (adds ``c·p̈`` to the inertia forces), dissipative (force
        ``−c·ṗ``), elastic (force ``−c·p``) or force (force ``c``).
    coordinate : str
        Name of the variable whose formula is the element's structure ``p(q, t)``, or
        a velocity (``ωZBody``, ``x't``): then it is the differential structure ``ṗ``.
    characteristic : Expr
        The value ``c``.
    """

    name: str
    kind: str
    coordinate: str
    characteristic: Expr
    span: Span | None = None


@dataclass(frozen=True)
class Definition:
    """A named formula ``name = formula;`` that is not a plain parameter value.

    Dependent coordinates (``zC = R - sqrt(...)``), derived constants
    (``a = r/(R-r)``) and any named expression. Substituted through the chain rule.
    """

    name: str
    expr: Expr
    unit: str | None = None
    span: Span | None = None


@dataclass(frozen=True)
class Parameter:
    """A parameter with a numeric value (``m = 1;``), changeable at run time."""

    name: str
    value: float
    unit: str | None = None
    span: Span | None = None


@dataclass(frozen=True)
class VelocityDefinition:
    """A velocity given by a formula, ``xC't = …;``: a dependent velocity."""

    coordinate: str
    expr: Expr
    span: Span | None = None


@dataclass(frozen=True)
class Constraint:
    """A holonomic constraint ``name = 0`` (``УРАВНЕНИЯ := name, …;``).

    ``name`` is a defined quantity, a formula of the coordinates (and time) that must
    vanish along the motion: ``f1 = a*cos(q1) + b*cos(q1+q2) - d - c*cos(q3);``.
    """

    name: str
    span: Span | None = None


@dataclass(frozen=True)
class Rolling:
    """``КАЧЕНИЕ := Body(шар(R), плоскость(h));``: a body rolls without slipping.

    The body's frame origin (the end of its record's second section) is the centre of
    its rolling shape: a ball of radius ``radius``, or a disc of radius ``radius`` whose
    axis is the body axis ``axis``. kidym generates the contact condition (holonomic)
    and the no-slip conditions ``v_P = 0`` of the contact point (velocity constraints),
    see :func:`kidym.eom.constraints.rolling_constraints`.

    Attributes
    ----------
    surface : {"plane", "sphere_inside", "sphere_outside", "surface"}
        The plane ``z = height``; the sphere of radius ``sphere_radius`` about
        ``centre`` with the ball inside or outside it; or the implicit surface
        ``function = 0`` of the ball's centre (a defined formula, expanded, over the
        body's generated centre names ``XO<Body>``, ``YO<Body>``, ``ZO<Body>``).
    height : Expr or None
        The plane's height (a formula of parameters and ``t``).
    sphere_radius : Expr or None
        The sphere's radius ``R0``.
    centre : tuple of Expr
        The sphere's centre, shape (3,) (formulas of parameters and ``t``).
    function : Expr or None
        The implicit surface of the centre, ``h(XO, YO, ZO) = 0``, positive on the
        ball's side.
    function_name : str or None
        The name of that definition, as written.
    """

    body: str
    shape: str
    radius: Expr
    surface: str
    height: Expr | None
    axis: str | None = None
    span: Span | None = None
    sphere_radius: Expr | None = None
    centre: tuple[Expr, ...] = ()
    function: Expr | None = None
    function_name: str | None = None

    def constraint_names(self) -> tuple[str, str, str]:
        """Names of the generated constraints: contact, no slip along x, along y."""
        return (f"rollZ{self.body}", f"rollX{self.body}", f"rollY{self.body}")

    def centre_names(self) -> tuple[str, str, str]:
        """The body's generated names of its frame origin in fixed axes (the centre)."""
        return (f"XO{self.body}", f"YO{self.body}", f"ZO{self.body}")


@dataclass(frozen=True)
class ProgrammedConstraint:
    """A programmed constraint held by the controls (seed 004 (5.1)–(5.6);
    ``ПРОГРАММНЫЕ СВЯЗИ := f1(h, k), g1(k);``).

    Attributes
    ----------
    name : str
        A defined quantity: ``f(q, t)`` (holonomic) or ``g(q, v, t)`` (first order, it
        uses a speed).
    first_order : bool
        Whether it uses a speed (``g``); its deviation then obeys ``ż = k z`` instead of
        ``ÿ = h y + k ẏ`` (eq. (5.5)).
    h, k : Expr
        The coefficients of the perturbation law, formulas of parameters only (over
        parameter names); ``h`` is 0 for a first-order constraint.
    span : Span or None
        The item in the instruction.
    """

    name: str
    first_order: bool
    h: Expr
    k: Expr
    span: Span | None = None


@dataclass(frozen=True)
class Coincidence:
    """``СОВПАДЕНИЕ := A(xa, ya, za) = B(xb, yb, zb);``: two points that coincide.

    A point is given in the frame of its body (the end of the record's second
    section, whose origin is ``XO<Body>``…): ``P = O + S p``. ``body`` ``None`` is the
    fixed frame (``ЗЕМЛЯ`` / ``GROUND``); ``point`` ``None`` is the body's origin. kidym
    writes the holonomic constraints ``P_A − P_B = 0`` in fixed axes, one per component
    that is not identically zero, see :func:`kidym.eom.constraints.coincidence_constraints`.

    Attributes
    ----------
    index : int
        1-based position of the item in the list: the constraints are named
        ``coinX<index>``, ``coinY<index>``, ``coinZ<index>``.
    body_a, body_b : str or None
        The bodies (``None``: the fixed frame).
    point_a, point_b : tuple of Expr or None
        The points in their bodies' axes, shape (3,): formulas of parameters (a point of
        the fixed frame may also move with ``t``); ``None`` for the origin.
    text : str
        The item as written, for messages.
    """

    index: int
    body_a: str | None
    point_a: tuple[Expr, ...] | None
    body_b: str | None
    point_b: tuple[Expr, ...] | None
    text: str = ""
    span: Span | None = None

    def constraint_names(self) -> tuple[str, str, str]:
        """Names of the generated constraints, components along the fixed x, y, z."""
        return (f"coinX{self.index}", f"coinY{self.index}", f"coinZ{self.index}")


@dataclass(frozen=True)
class SceneSurface:
    """A surface drawn by the viewer.

    Attributes
    ----------
    kind : {"plane", "sphere_inside", "sphere_outside"}
        The plane ``z = height`` of the fixed axes, or the sphere of radius ``radius``
        about ``centre`` seen from inside (a bowl) or outside.
    height : Expr or None
        The plane's height (parameters and ``t``).
    radius : Expr or None
        The sphere's radius (parameters).
    centre : tuple of Expr
        The sphere's centre, shape (3,) (parameters and ``t``).
    source : str
        ``"SCENE"`` (declared for display) or the body that rolls on it (``КАЧЕНИЕ``).
    """

    kind: str
    height: Expr | None = None
    radius: Expr | None = None
    centre: tuple[Expr, ...] = ()
    source: str = "SCENE"
    span: Span | None = None


@dataclass(frozen=True)
class VirtualConstraint:
    """A constraint held by a virtual potential (seed 001; ``ВИРТУАЛЬНЫЕ СВЯЗИ``,
    ``ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ``).

    Attributes
    ----------
    name : str
        A defined quantity ``f(q, t)``, a formula of the coordinates and time.
    kind : {"equality", "bound"}
        ``"equality"``: the motion is held near ``f = 0`` by ``V = 1/δ(f) − 1/δ(0)``
        (seed 001 eq. (5)); ``"bound"``: ``f > 0`` is the allowed side of a bounding
        surface, ``V = ½ (1 − sign f) (1/δ(f) − 1/δ(0))`` (eq. (7)).
    alpha : Expr
        The approximation parameter ``α > 0``, a formula of parameters only (over
        parameter names).
    approximation : {"polynomial", "exponential"}
        The delta approximation (eq. (12) or (13)); see :mod:`kidym.eom.virtual`.
    """

    name: str
    kind: str
    alpha: Expr
    approximation: str = "polynomial"
    span: Span | None = None


@dataclass(frozen=True)
class Variation:
    """One varied name of a parameter study (``ВАРЬИРОВАТЬ``, docs/language.md §5.11).

    Attributes
    ----------
    name : str
        A parameter, or a state whose initial value is varied (coordinate, speed
        ``q't``, pseudo-velocity).
    values : tuple of float
        The grid values (``kind == "grid"``), or the bounds ``(low, high)`` of a
        uniform random sample (``kind == "random"``).
    kind : {"grid", "random"}
    """

    name: str
    values: tuple[float, ...]
    kind: str = "grid"
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Sampling:
    """``СЛУЧАЙНО(samples, seed)``: how many random runs, from which seed."""

    samples: int
    seed: int = 0


@dataclass(frozen=True)
class ModelEvent:
    """An event of ``СОБЫТИЯ`` / ``EVENTS`` (seed 002's hybrid motion).

    Attributes
    ----------
    name : str
        The event's label (in the results and on the plots).
    function : Expr
        ``g(q, w, t)`` over model names: the event happens where it crosses zero.
    direction : {-1, 0, 1}
        Crossings from positive to negative (-1, ``ВНИЗ``), negative to positive (+1,
        ``ВВЕРХ``) or both (0, ``ОБА``).
    stop : bool
        The run ends at the event (``СТОП``).
    resets : tuple of (str, Expr)
        New values of states (coordinates, independent speeds), as formulas of the
        state just before the event; applied together (every formula sees the state
        before the event).
    """

    name: str
    function: Expr
    direction: int = 0
    stop: bool = False
    resets: tuple[tuple[str, Expr], ...] = ()
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Plot:
    """One plot a model asks for (``ПОКАЗАТЬ``, ``СРАВНИТЬ``, ``СОВМЕСТИТЬ``).

    Attributes
    ----------
    curves : tuple of str
        The plotted quantities (one for ``ПОКАЗАТЬ``, several on one plot otherwise).
    against : tuple of str
        Empty for a time history; one name for a hodograph ``y(x)``; two names for a
        3-D curve ``z(x, y)``.
    kind : str
        ``"show"`` (``ПОКАЗАТЬ``), ``"compare"`` (``СРАВНИТЬ``) or ``"overlay"``
        (``СОВМЕСТИТЬ``).
    title : str
        The title: the written item (``yC(xC)``) or the list's name (``ХУ`` in
        ``СРАВНИТЬ := ХУ(x, y)``).
    """

    curves: tuple[str, ...]
    against: tuple[str, ...] = ()
    kind: str = "show"
    title: str = ""
    span: Span | None = None


@dataclass(frozen=True)
class QuaternionInstruction:
    """The ``КВАТЕРНИОН : [P(p0…p3),] Q(λ0…λ3), Ry(ψ), Rx(θ), Rz(φ) [, E(…)];`` operator.

    As parsed: what the names mean (the quaternion of the rotation sequence, the
    angles as functions of the quaternion) is decided by the equation builder.

    Attributes
    ----------
    quaternion : tuple of str
        The four component names of ``Q(…)``.
    rotations : tuple of Transform
        The elementary rotations, in the order written (kind ``"R"``). A rotation by a
        plain name (``Ry(ψ)``) names an angle; a numeric literal is in degrees and is
        already converted to radians, as in body records.
    prior : tuple of str or None
        The four component names of ``P(…)``, a quaternion the sequence starts from.
    euler : tuple of str or None
        The names given by ``E(…)``.
    """

    quaternion: tuple[str, str, str, str]
    rotations: tuple[Transform, ...]
    prior: tuple[str, str, str, str] | None = None
    euler: tuple[str, ...] | None = None
    span: Span | None = None


@dataclass(frozen=True)
class Model:
    """A validated, immutable mechanical model.

    Attributes
    ----------
    name : str
        Model name (file stem, or ``"model"``).
    source : str or None
        The model text it came from.
    parameters : tuple of Parameter
        Named numeric values (runtime vector of the generated code).
    definitions : tuple of Definition
        Named formulas in dependency order.
    bodies : tuple of Body
        Rigid bodies, bases before the bodies built on them.
    elements : tuple of Element
        Force and inertial elements.
    coordinates : tuple of str
        Generalized coordinates ``q`` in state order.
    pseudo_velocities : tuple of str
        User-listed independent pseudo-velocities (empty: ``w = q̇``).
    velocity_definitions : tuple of VelocityDefinition
        Dependent velocities ``x't = formula``.
    gravity : tuple of Expr or None
        Fixed-frame gravity acceleration applied to every body, or ``None``.
    initial : Mapping of str to float
        Initial values by name (coordinates and speeds ``q't``); missing ones are 0.
    initial_formulas : Mapping of str to Expr
        The initial values written as formulas of parameters (``phi't(Om)``), over
        parameter names; :meth:`initial_values` re-evaluates them for changed
        parameters. ``t`` for a start time given in ``INITIAL``.
    span_formulas : Mapping of str to Expr
        ``t_start``/``t_end`` of ``TIME``/``VARY`` written as formulas of parameters
        (see :meth:`time_span`).
    t_start, t_end : float
        Integration span.
    outputs : tuple of str
        Names of expressions to record besides the state.
    plots : tuple of Plot
        The plots the model asks for, in the order written.
    quaternions : tuple of QuaternionInstruction
        The ``КВАТЕРНИОН`` operators of the file, as parsed.
    calculation : str or None
        The requested calculation type (``DYNAMICS``, ``KINEMATICS`` …), canonical
        English spelling.
    calculation_span : Span or None
        Where the calculation type is written (for errors that depend on it, such as a
        kinetostatics model whose constraints leave a degree of freedom free).
    filename : str
        Where the source came from, for messages.
    title : str or None
        The task's title (``РАБОТА := …;``, with ``ВЫПОЛНИЛ``/``ВАРИАНТ`` appended).
    units : Mapping of str to str
        Unit of each parameter and definition that has one, in the model's base
        units after ``РАЗМЕРНОСТИ`` conversion (``{"x": "m"}``); see docs/language.md.
    angular_velocity : Mapping of str to str
        ``УГЛОВАЯ СКОРОСТЬ := …;``: how the ``ω`` of a quaternion body is projected,
        ``"body"`` or ``"fixed"`` (or ``"auto"``) by body name; the key ``"*"`` holds a
        choice for every quaternion body. Empty: ``"auto"``
        (:func:`kidym.eom.system.quaternion_specs`).
    constraints : tuple of Constraint
        Holonomic constraints ``f(q, t) = 0`` (``УРАВНЕНИЯ := f1, f2;``), closing
        kinematic loops; see :mod:`kidym.eom.constraints`.
    rolling : tuple of Rolling
        Bodies rolling without slipping (``КАЧЕНИЕ``); their generated constraints
        follow ``constraints``.
    coincidences : tuple of Coincidence
        Loop closures written as coinciding points (``СОВПАДЕНИЕ``); their generated
        constraints follow those of ``rolling``.
    virtual_constraints : tuple of VirtualConstraint
        Constraints and bounding surfaces held by virtual potentials (seed 001;
        ``ВИРТУАЛЬНЫЕ СВЯЗИ``, ``ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ``); see
        :mod:`kidym.eom.virtual`.
    guess : Mapping of str to float
        ``НАЧАЛЬНОЕ ПОЛОЖЕНИЕ``: the start of the inverse kinematics solution by
        coordinate (:mod:`kidym.model.inverse`).
    limits : Mapping of str to (float, float)
        ``ОГРАНИЧЕНИЯ``: joint limits ``(lo, hi)`` by coordinate (inverse kinematics).
    events : tuple of ModelEvent
        Zero crossings with a stop or state resets (``СОБЫТИЯ``); see
        :mod:`kidym.model.events` and :mod:`kidym.simulation.events`.
    controls : tuple of str
        ``НЕИЗВЕСТНЫЕ``: the controls ``u``, unknown inputs that enter force
        characteristics linearly and are determined by :attr:`programmed`.
    programmed : tuple of ProgrammedConstraint
        ``ПРОГРАММНЫЕ СВЯЗИ``: the constraints the controls hold (seed 004); see
        :mod:`kidym.eom.controls`.
    inputs : tuple of str
        ``ВХОДЫ``: external inputs, names bound at run time to a Python callback or a
        table (``kidym.simulate(..., inputs=…)``, :mod:`kidym.model.inputs`).
    variations : tuple of Variation
        The parameter study of ``ВАРЬИРОВАТЬ`` (empty: none); run by
        :func:`kidym.sweep` and ``kidym sweep``, not by :func:`kidym.simulate`.
    sampling : Sampling or None
        ``СЛУЧАЙНО(n, seed)``: the study is a random sample (its variations are ranges).
    scene : tuple of SceneSurface
        Surfaces declared for display (``СЦЕНА``, :mod:`kidym.model.scene`); the viewer
        adds those of ``rolling``.
    shapes : tuple of DisplayShape
        Solids declared for display (``ФОРМЫ``, :mod:`kidym.model.display`); a body not
        listed is drawn from its inertia.
    free : tuple of str
        States whose given initial values the consistent start on the constraints may
        change (``СВОБОДНЫЕ``, :mod:`kidym.model.free`).
    """

    name: str
    source: str | None
    parameters: tuple[Parameter, ...]
    definitions: tuple[Definition, ...]
    bodies: tuple[Body, ...]
    elements: tuple[Element, ...]
    coordinates: tuple[str, ...]
    pseudo_velocities: tuple[str, ...] = ()
    velocity_definitions: tuple[VelocityDefinition, ...] = ()
    gravity: tuple[Expr, Expr, Expr] | None = None
    initial: Mapping[str, float] = field(default_factory=dict)
    initial_formulas: Mapping[str, Expr] = field(default_factory=dict)
    span_formulas: Mapping[str, Expr] = field(default_factory=dict)
    t_start: float = 0.0
    t_end: float = 10.0
    outputs: tuple[str, ...] = ()
    plots: tuple[Plot, ...] = ()
    quaternions: tuple[QuaternionInstruction, ...] = ()
    calculation: str | None = None
    calculation_span: Span | None = None
    filename: str = "<string>"
    title: str | None = None
    units: Mapping[str, str] = field(default_factory=dict)
    angular_velocity: Mapping[str, str] = field(default_factory=dict)
    constraints: tuple[Constraint, ...] = ()
    rolling: tuple[Rolling, ...] = ()
    coincidences: tuple[Coincidence, ...] = ()
    virtual_constraints: tuple[VirtualConstraint, ...] = ()
    guess: Mapping[str, float] = field(default_factory=dict)
    limits: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    events: tuple[ModelEvent, ...] = ()
    variations: tuple[Variation, ...] = ()
    sampling: Sampling | None = None
    scene: tuple[SceneSurface, ...] = ()
    controls: tuple[str, ...] = ()
    programmed: tuple[ProgrammedConstraint, ...] = ()
    inputs: tuple[str, ...] = ()
    shapes: tuple = ()
    free: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "initial", MappingProxyType(dict(self.initial)))
        object.__setattr__(self, "initial_formulas",
                           MappingProxyType(dict(self.initial_formulas)))
        object.__setattr__(self, "span_formulas", MappingProxyType(dict(self.span_formulas)))
        object.__setattr__(self, "units", MappingProxyType(dict(self.units)))
        object.__setattr__(self, "guess", MappingProxyType(dict(self.guess)))
        object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))
        object.__setattr__(self, "angular_velocity",
                           MappingProxyType(dict(self.angular_velocity)))

    # Lookups -----------------------------------------------------------------
    def parameters_names(self) -> tuple[str, ...]:
        """Names of the parameters, in model order."""
        return tuple(p.name for p in self.parameters)

    @property
    def parameter_values(self) -> dict[str, float]:
        """Parameter values by name."""
        return {p.name: p.value for p in self.parameters}

    def initial_values(self, parameters: Mapping[str, float] | None = None
                       ) -> dict[str, float]:
        """Initial values of the states, those written as formulas of parameters
        evaluated with ``parameters`` (overrides of :attr:`parameter_values`).

        Parameters
        ----------
        parameters : mapping of str to float, optional
            Changed parameter values (``--set``); names that are not parameters are
            ignored here (the engines reject them).

        Returns
        -------
        dict of str to float
            Like :attr:`initial`, with ``t`` absent.
        """
        values = dict(self.initial)
        if not parameters or not self.initial_formulas:
            return values
        subs = self._parameter_symbols(parameters)
        for name, expr in self.initial_formulas.items():
            if name in values:
                values[name] = float(se.sympify(expr).xreplace(subs).evalf())
        return values

    def _parameter_symbols(self, parameters: Mapping[str, float]) -> dict:
        params = self.parameter_values
        params.update({k: float(v) for k, v in parameters.items() if k in params})
        return {se.Symbol(k): v for k, v in params.items()}

    def time_span(self, parameters: Mapping[str, float] | None = None
                  ) -> tuple[float, float]:
        """``(t_start, t_end)``, re-evaluated with ``parameters`` where the model gives
        them as formulas of parameters (``TIME := t(0, 2*pi/W);``, ``INITIAL := t(T0);``)."""
        t0, t1 = self.t_start, self.t_end
        if not parameters or not (self.initial_formulas or self.span_formulas):
            return t0, t1
        subs = self._parameter_symbols(parameters)
        start = self.initial_formulas.get("t", self.span_formulas.get("t_start"))
        if start is not None:
            t0 = float(se.sympify(start).xreplace(subs).evalf())
        if "t_end" in self.span_formulas:
            t1 = float(se.sympify(self.span_formulas["t_end"]).xreplace(subs).evalf())
        return t0, t1

    def body(self, name: str) -> Body:
        """The body called ``name``; ``KeyError`` if there is none."""
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(name)

    def definition(self, name: str) -> Definition | None:
        """The definition of ``name``, or ``None``."""
        for d in self.definitions:
            if d.name == name:
                return d
        return None

    # Display -----------------------------------------------------------------
    def _counts(self) -> list[tuple[str, str]]:
        from kidym import display

        params = [f"{p.name} = {p.value:g}" + (f" {p.unit}" if p.unit else "")
                  for p in self.parameters]
        rows = [("file", self.filename), ("calculation", self.calculation or "DYNAMICS"),
                ("bodies", display.names(b.name for b in self.bodies)),
                ("coordinates", display.names(self.coordinates)),
                ("pseudo-velocities", display.names(self.pseudo_velocities)),
                ("parameters", display.names(params)),
                ("constraints", str(len(self.constraints) + len(self.rolling)
                                    + len(self.coincidences))),
                ("events", display.names(e.name for e in self.events)),
                ("time", f"{self.t_start:g} … {self.t_end:g}")]
        return [(k, v) for k, v in rows if v not in ("", "0")]

    def __repr__(self) -> str:
        from kidym.display import short_list

        return (f"Model({self.name!r}, bodies={short_list([b.name for b in self.bodies])}, "
                f"coordinates={short_list(self.coordinates)}, "
                f"parameters={len(self.parameters)})")

    def _repr_html_(self) -> str:
        """Jupyter: the model's summary (bodies, coordinates, parameters …), escaped."""
        from kidym.display import summary

        title = f"kidym Model {self.name}" + (f" — {self.title}" if self.title else "")
        return summary(title, self._counts())
