"""From a :class:`~kidym.model.Model` to named kinematic quantities in one graph.

Resolves the model's names (definitions, generated body quantities, ``X't``
velocities) into graph expressions on demand, in dependency order, and builds
every body's kinematics along the body tree.
"""

from __future__ import annotations

import symengine as se

from kidym.errors import DerivationError
from kidym.kinematics import names
from kidym.kinematics.bodies import BodyBuilder, BodyKinematics, Frame, fixed_frame
from kidym.model.model import TIME, Model
from kidym.symbolic.graph import Graph

Expr = se.Basic


def speed_name(coordinate: str) -> str:
    """KiDyM name of a coordinate's velocity: ``x`` → ``x't``."""
    return f"{coordinate}'t"


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

    def __init__(self, model: Model) -> None:
        self.model = model
        self.parameters = {p.name: se.Symbol(p.name) for p in model.parameters}
        self.coordinates = tuple(se.Symbol(q) for q in model.coordinates)
        dependent = {v.coordinate: v for v in model.velocity_definitions}
        independent = [q for q in model.coordinates if q not in dependent]
        self.speeds = tuple(se.Symbol(speed_name(q)) for q in independent) + tuple(
            se.Symbol(w) for w in model.pseudo_velocities)
        self.graph = Graph(TIME, self.coordinates, self.speeds)
        for name in (*model.parameters_names(), *(d.name for d in model.definitions)):
            self.graph.reserve(name)
        self._definitions = {d.name: d for d in model.definitions}
        self._owner = {n: b.name for b in model.bodies for n in names.generated_names(b.name)}
        self.env: dict[str, Expr] = {}
        self._resolving: list[str] = []
        self.bodies: dict[str, BodyKinematics] = {}
        self._builder = BodyBuilder(self.graph, self.resolve)
        qdot = []
        for q, sym in zip(model.coordinates, self.coordinates):
            if q in dependent:
                rate = self.resolve(dependent[q].expr)
            else:
                rate = se.Symbol(speed_name(q))
            self.graph.set_coordinate_rate(sym, rate)
            qdot.append(rate)
        self.qdot = tuple(qdot)
        for body in model.bodies:
            self._body(body.name)

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
        if name in self._resolving:
            cycle = " → ".join([*self._resolving[self._resolving.index(name):], name])
            raise DerivationError(f"`{name}` depends on itself: {cycle}")
        self._resolving.append(name)
        try:
            if name in self._definitions:
                value = self.graph.define(name, self.resolve(self._definitions[name].expr),
                                          keep=True)
            elif name in self._owner:
                self._body(self._owner[name])
                value = self.env[name]
            elif name.endswith("'t"):
                value = self.graph.dt(self.lookup(name[:-2]))
            else:
                raise DerivationError(f"`{name}` is not defined in model `{self.model.name}`")
        finally:
            self._resolving.pop()
        self.env[name] = value
        return value

    # --------------------------------------------------------------- bodies
    def _body(self, name: str) -> BodyKinematics:
        if name in self.bodies:
            return self.bodies[name]
        body = self.model.body(name)
        base: Frame = fixed_frame() if body.base is None else self._body(body.base).frame
        kin = self._builder.body(body, base)
        self.bodies[name] = kin
        self.env.update(kin.generated)
        return kin
