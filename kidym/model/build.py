"""Statements → validated, immutable :class:`~kidym.model.model.Model`, in passes.

Gives the parsed statements their meaning (SPEC §3, ``KIDYM_LANGUAGE.md`` §3):

* ``name = formula`` is a :class:`Parameter` when the formula is a number, else a
  :class:`Definition`; ``x't = formula`` is a :class:`VelocityDefinition`;
* ``E.c = formula`` is one :class:`Element` per coordinate;
* body records become :class:`Body` (transforms, central transforms, inertia);
* instructions set the coordinate order, pseudo-velocities, initial values, time
  span, outputs, gravity and calculation type.

Every name a formula uses that the file does not define is classified as in
KiDyM: listed in ``ПСЕВДОСКОРОСТИ`` → pseudo-velocity; used in a body's position
or as an element coordinate (directly or through definitions) or given a velocity
formula → generalized coordinate; otherwise it is a value the file forgot to
give, which is an error. All problems are collected and reported together.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from kidym.errors import Diagnostic
from kidym.lang.formulas import rational
from kidym.model import (
    coincide,
    display,
    free,
    inverse,
    programmed,
    scene,
    slips,
    virtual,
)
from kidym.model import events as model_events
from kidym.model import inputs as model_inputs
from kidym.model.model import (
    Body,
    Constraint,
    Definition,
    Element,
    Model,
    Parameter,
    VelocityDefinition,
)
from kidym.model.passes import bodies as bodies_pass
from kidym.model.passes import checks, classify, instructions, statements
from kidym.model.passes.workspace import (
    G_VALUE,
    INERTIA_LABEL,
    POSITIONAL,
    Builder,
    has_errors,
)

if TYPE_CHECKING:   # (the parser calls the builder)
    from kidym.lang.parser import ParsedSource


def build(b: Builder) -> tuple[Model | None, list[Diagnostic]]:
    """Run the passes over ``b`` in order and assemble the :class:`Model`."""
    statements.collect(b)
    bodies_pass.bodies(b)
    instructions.instruction_lists(b)
    statements.partials(b)   # after every formula is recorded: bodies and instructions use them
    b.broken = {n for n, v in b.variables.items() if v.expr is None}
    classify.classify(b)
    checks.check_derivatives(b)
    checks.check_velocities(b)
    checks.check_quaternion_names(b)
    checks.check_elements(b)
    def_order = checks.definition_order(b)
    body_order = bodies_pass.body_order(b)
    b.param_exprs = {n: v.expr for n, v in b.variables.items() if v.value is not None}
    uses_g = any(u.base == "g" for u in b.uses)
    if uses_g and "g" not in b.variables:
        b.param_exprs["g"] = rational(Fraction(str(G_VALUE)))
    checks.check_definition_values(b, def_order)
    for body, (rec, _c, _cc, inertia) in b.body_data.items():
        if inertia is None:
            continue
        n_errors = len(b.diags)
        for f in POSITIONAL:
            b.check_constant(getattr(inertia, f), f"{INERTIA_LABEL[f]} of body `{body}`",
                                rec.name.span)
        if len(b.diags) == n_errors:
            bodies_pass.check_inertia(b, body, rec, inertia)
    if b.gravity is not None:
        ins = b.instructions["GRAVITY"]
        for g in b.gravity:
            b.check_constant(g, f"`{ins.written}`", ins.name_span, allow_time=True)
    virtual_constraints = virtual.check_items(b, b.virtual_items)
    events = model_events.check_items(b, b.event_items)
    controls, programmed_constraints = programmed.check(b, b.control_names,
                                                        b.programmed_items)
    initial, t_init = instructions.initial(b)
    b.guess, b.limits = inverse.read(b)
    t0, t1, t_span = instructions.time_span(b)
    if t_init is not None:
        if t0 is not None and t0 != t_init:
            b.warn(f"the start time is given both by the time range ({t0:g}) and by the "
                      f"initial conditions ({t_init:g}); using {t_init:g}",
                      b.instructions["INITIAL"].name_span)
        t0 = t_init
    t_start = 0.0 if t0 is None else t0
    t_end = 10.0 if t1 is None else t1
    if t_end <= t_start:
        b.error(f"the time range must increase: start {t_start:g}, end {t_end:g}",
                   t_span)
    outputs = instructions.outputs(b)
    instructions.check_rolling(b)
    coincidences = coincide.check_items(b, b.coincide_items, b.instructions[
        "COINCIDE"].written if b.coincide_items else "")
    surfaces = (scene.check_items(b, b.scene_items,
                                  b.instructions["SCENE"].written)
                if b.scene_items else ())
    shapes = (display.check_items(b, b.shape_items, b.instructions["SHAPES"].written,
                                  set(b.body_data))
              if b.shape_items else ())
    free_states = (free.check(b, b.free_names, b.instructions["FREE"].written,
                              {*b.coordinates, *(f"{q}'t" for q in b.coordinates),
                               *(n.name for n in b.pseudo)})
                   if b.free_names else ())
    if has_errors(b.diags) or b.parsed.has_errors:
        return None, b.diags
    parameters = []
    if uses_g and "g" not in b.variables:
        parameters.append(Parameter("g", G_VALUE))
    for n, v in b.variables.items():
        if v.value is not None:
            parameters.append(Parameter(n, v.value, v.stmt.unit, v.stmt.span))
    definitions = [Definition(n, b.variables[n].expr, b.variables[n].stmt.unit,
                              b.variables[n].stmt.span) for n in def_order]
    bodies = []
    for name in body_order:
        rec, chain, central, inertia = b.body_data[name]
        assert inertia is not None
        bodies.append(Body(name, rec.base.name if rec.base else None, chain, central,
                           inertia, rec.span))
    checks.check_angular_velocity(b, bodies)
    coordinates = set(b.coordinates)
    for target, (stmt, _expr) in b.velocities.items():
        if target not in coordinates:  # `g't = …` (g has a value): found by the fuzzer
            b.error(f"`{target}'t = …`: `{target}` is not a coordinate (it has a value "
                       f"or is not used as a position), so it has no velocity to give; "
                       "a velocity formula is written for a coordinate", stmt.span)
    if has_errors(b.diags):
        return None, b.diags
    elements = [Element(label, b.classes[label[0]], coord, expr, node.span)
                for (label, coord), (_s, node, expr) in b.elements.items()]
    velocity_definitions = [VelocityDefinition(target, expr, stmt.span)
                            for target, (stmt, expr) in sorted(
                                b.velocities.items(), key=lambda kv: kv[1][0].start)]
    model = Model(
        name=b.name, source=b.parsed.source, parameters=tuple(parameters),
        definitions=tuple(definitions), bodies=tuple(bodies), elements=tuple(elements),
        coordinates=tuple(b.coordinates), pseudo_velocities=tuple(b.pseudo_names),
        velocity_definitions=tuple(velocity_definitions), gravity=b.gravity,
        initial=initial, initial_formulas=b.initial_formulas,
        span_formulas=b.span_formulas,
        t_start=t_start, t_end=t_end, outputs=tuple(outputs),
        plots=tuple(b.plots),
        quaternions=() if b.quaternion is None else (b.quaternion,),
        calculation=b.calculation, calculation_span=b.calculation_span,
        filename=b.filename, title=instructions.title(b),
        units=b.unit_names,
        angular_velocity={b: mode for b, (mode, _s) in b.angular_velocity.items()},
        constraints=tuple(Constraint(n.name, n.span) for n in b.constraint_names),
        rolling=tuple(b.rolling), coincidences=coincidences,
        virtual_constraints=virtual_constraints, events=events,
        variations=tuple(getattr(b, "variations", ())),
        sampling=getattr(b, "sampling", None),
        guess=b.guess, limits=b.limits, scene=surfaces, controls=controls,
        programmed=programmed_constraints, shapes=shapes, free=free_states,
        inputs=model_inputs.check(b, b.input_names))
    slips.unused_parameters(b, {*outputs, *(n for plot in b.plots
                                               for n in (*plot.curves, *plot.against))})
    slips.case_slips(b)
    slips.degrees_for_radians(b, initial, {
        str(tr.args[0]) for b in bodies for tr in (*b.transforms, *b.central)
        if tr.kind == "R" and str(tr.args[0]) in coordinates}, b.initial_spans)
    return model, b.diags


def build_model(parsed: ParsedSource, *, filename: str = "<string>",
                name: str = "model") -> tuple[Model | None, list[Diagnostic]]:
    """Give parsed statements their meaning and validate them.

    Parameters
    ----------
    parsed : ParsedSource
        The output of :func:`kidym.lang.parser.parse_statements`.
    filename, name : str
        Stored on the model.

    Returns
    -------
    model : Model or None
        ``None`` when any error was found (or the text had syntax errors, in which
        case only the checks local to each statement are run).
    diagnostics : list of Diagnostic
        Every model error and warning found.
    """
    return build(Builder(parsed, filename, name))
