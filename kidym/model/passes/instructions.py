"""Pass 3 of the model builder: the instructions.

The instruction lists (coordinates, pseudo-velocities, constraints, rolling,
coinciding points, virtual constraints, controls, events, scene, gravity,
calculation, quaternions, angular velocity, titles) are read into the workspace; the
initial values, the time span and the outputs and plots are read after the names are
classified. The readers of the larger instructions are modules of their own
(:mod:`kidym.model.virtual`, :mod:`kidym.model.events`, …), called from here.
"""

from __future__ import annotations

import dataclasses

import symengine as se

from kidym.errors import Span
from kidym.kinematics.names import MULTIPLIER_PREFIX
from kidym.lang import ast, keywords
from kidym.lang.formulas import (
    FUNCTIONS,
    suggest,
)
from kidym.model import (
    coincide,
    display,
    free,
    inverse,
    programmed,
    scene,
    variations,
    virtual,
)
from kidym.model import events as model_events
from kidym.model import inputs as model_inputs
from kidym.model.model import (
    TIME,
    Plot,
    QuaternionInstruction,
    Rolling,
    SceneSurface,
    Transform,
)
from kidym.model.passes.workspace import (
    ANGULAR_VELOCITY_ITEM,
    ANGULAR_VELOCITY_WORDS,
    ROLLING_SHAPES,
    ROLLING_SURFACES,
    SPHERE_WITHOUT_SIDE,
    Builder,
    Expr,
    is_literal,
    split_derivative,
)


def instruction_lists(b: Builder) -> None:
    b.listed_coordinates: list[ast.Name] | None = None
    b.pseudo: list[ast.Name] = []
    b.constraint_names: list[ast.Name] = []
    b.rolling: list[Rolling] = []
    b.coincide_items: list = []
    b.virtual_items: list[virtual.VirtualItem] = []
    b.control_names: list[ast.Name] = []
    b.input_names: list[ast.Name] = []
    b.programmed_items: list[programmed.ProgrammedItem] = []
    b.event_items: list[model_events.EventItem] = []
    b.scene_items: list[SceneSurface] = []
    b.shape_items: list[display.DisplayShape] = []
    b.free_names: list[ast.Name] = []
    b.gravity: tuple[Expr, Expr, Expr] | None = None
    b.calculation: str | None = None
    b.calculation_span: Span | None = None
    b.quaternion: QuaternionInstruction | None = None
    b.angular_velocity: dict[str, tuple[str, Span | None]] = {}
    b.titles: dict[str, str] = {}
    for key, ins in b.instructions.items():
        if key not in keywords.IMPLEMENTED:
            unsupported(b, ins.written, key, ins.name_span)
        elif key in ("CODING", "WITHDRAW", "MULTIPLY", "BODIES", "UNITS"):
            pass  # applied while reading (kidym.lang.tasks) or in collect()
        elif ins.bare and key != "END":
            b.error(f"instruction `{ins.written}` needs a list: `{ins.written} := …;`",
                       ins.name_span)
        elif key == "COORDINATES":
            b.listed_coordinates = name_list(b, ins, "a coordinate name")
        elif key == "PSEUDOVELOCITIES":
            b.pseudo = name_list(b, ins, "a pseudo-velocity name")
        elif key == "ROLLING":
            rolling_of(b, ins)
        elif key == "COINCIDE":
            b.coincide_items = coincide.read_items(b, ins)
        elif key == "IK_EQUATIONS":
            b.constraint_names = name_list(b,
                ins, "the name of a defined quantity that must vanish")
        elif key in inverse.KEYS:
            inverse.convert_values(b, ins)
        elif key in virtual.KINDS:
            b.virtual_items += virtual.read_items(b, ins)
        elif key == "EVENTS":
            b.event_items = model_events.read_items(b, ins)
        elif key == "UNKNOWNS":
            b.control_names = name_list(b, ins, "a control name")
        elif key == "PROGRAMMED_CONSTRAINTS":
            b.programmed_items = programmed.read_items(b, ins)
        elif key == "INPUTS":
            b.input_names = model_inputs.read(b, ins)
        elif key == "SCENE":
            b.scene_items = scene.read_items(b, ins)
        elif key == "SHAPES":
            b.shape_items = display.read_items(b, ins)
        elif key == "FREE":
            b.free_names = free.read(b, ins)
        elif key == "GRAVITY":
            gravity_of(b, ins)
        elif key == "CALCULATION":
            calculation_of(b, ins)
        elif key == "QUATERNION":
            quaternion_of(b, ins)
        elif key == "ANGULAR_VELOCITY":
            angular_velocity_of(b, ins)
        elif key in ("TASK", "AUTHOR", "VARIANT"):
            if ins.raw:
                b.titles[key] = ins.raw
        elif key in ("INITIAL", "TIME", "VARY"):
            for node, label in value_items(ins):
                b.formula(node, "value", label)


def value_items(ins: ast.Instruction) -> list[tuple[ast.Expr, str]]:
    """The value formulas of an ``INITIAL``/``TIME``/``VARY`` list, with labels."""
    out: list[tuple[ast.Expr, str]] = []
    for i, item in enumerate(ins.items):
        if isinstance(item, ast.NamedItem):
            out.append((item.value, f"value of `{item.name.name}` in `{ins.written}`"))
        elif isinstance(item, ast.Call) and (item.func.name not in FUNCTIONS or (
                ins.key == "INITIAL" and len(item.args) == 1)):
            # in INITIAL `th(0.3)` is a value of `th` even where `th` names a function
            out.extend((a, f"value of `{item.func.name}` in `{ins.written}`")
                       for a in item.args)
        elif ins.key == "VARY" and i > 0 and not isinstance(item, ast.BasedItem):
            out.append((item, f"a value in `{ins.written}`"))
    return out


def name_list(b: Builder, ins: ast.Instruction, what: str) -> list[ast.Name]:
    """:meth:`Builder.name_list` (the instruction readers outside the passes call it)."""
    return b.name_list(ins, what)


def gravity_of(b: Builder, ins: ast.Instruction) -> None:
    items = ins.items
    if len(items) not in (1, 3) or any(isinstance(i, ast.NamedItem | ast.BasedItem)
                                       for i in items):
        b.error(f"`{ins.written}` takes one value `g` (gravity along −z) or three "
                   f"components of the gravity acceleration, got {len(items)} item"
                   f"{'s' if len(items) != 1 else ''}", ins.name_span)
        return
    exprs = [b.formula(i, "gravity", f"`{ins.written}`") for i in items]  # type: ignore[arg-type]
    if any(e is None for e in exprs):
        return
    if len(exprs) == 1:
        b.gravity = (se.Integer(0), se.Integer(0), -exprs[0])
    else:
        b.gravity = (exprs[0], exprs[1], exprs[2])


def angular_velocity_of(b: Builder, ins: ast.Instruction) -> None:
    """``УГЛОВАЯ СКОРОСТЬ := fixed;`` or ``:= Ball(fixed), Top(body);`` (raw text)."""
    modes = ", ".join(f"`{w}`" for w in ANGULAR_VELOCITY_WORDS)
    for piece in (ins.raw or "").split(","):
        found = ANGULAR_VELOCITY_ITEM.fullmatch(piece.strip())
        word = (found.group("mode") or found.group("mode2")).lower() if found else ""
        if not found or word not in ANGULAR_VELOCITY_WORDS:
            b.error(f"`{ins.written}` expects `body`, `fixed` or `auto`, for every "
                       f"quaternion body or as `Body(mode)`; got `{piece.strip()}` "
                       f"(modes: {modes})", ins.raw_span)
            continue
        body = b.rename(found.group("body")) if found.group("body") else "*"
        if body in b.angular_velocity:
            b.error(f"`{ins.written}` gives the angular velocity of "
                       f"{'every body' if body == '*' else f'`{body}`'} twice",
                       ins.raw_span)
            continue
        b.angular_velocity[body] = (ANGULAR_VELOCITY_WORDS[word], ins.raw_span)


def quaternion_of(b: Builder, ins: ast.Instruction) -> None:
    """``КВАТЕРНИОН : [P(…),] Q(…), Ry(ψ), … [, E(…)];`` as written (no semantics)."""
    parts: dict[str, tuple[str, ...]] = {}
    rotations: list[Transform] = []
    ok = True
    b.quaternion_names: dict[str, Span] = {}
    for item in ins.items:
        head = item.func.name if isinstance(item, ast.Call) else None
        if head in ("P", "Q", "E"):
            assert isinstance(item, ast.Call)
            if head in parts:
                b.error(f"`{head}(…)` is given twice in `{ins.written}`", item.span)
                ok = False
                continue
            if any(not isinstance(a, ast.Name) for a in item.args) or (
                    head != "E" and len(item.args) != 4):
                need = "names" if head == "E" else "four names"
                b.error(f"`{head}(…)` in `{ins.written}` takes {need}, got "
                           f"`{b.text(item)}`", item.span)
                ok = False
                continue
            parts[head] = tuple(b.rename(a.name) for a in item.args)  # type: ignore[union-attr]
            for a in item.args:
                b.quaternion_names.setdefault(b.rename(a.name), a.span)  # type: ignore[union-attr]
        elif head in ("Rx", "Ry", "Rz"):
            assert isinstance(item, ast.Call)
            if len(item.args) != 1:
                b.error(f"rotation `{head}` in `{ins.written}` takes one angle, got "
                           f"{len(item.args)}", item.span)
                ok = False
                continue
            arg = item.args[0]
            if isinstance(arg, ast.Name):
                angle: Expr = se.Symbol(b.rename(arg.name))
            elif is_literal(arg):
                angle = b.convert(arg) * se.pi / 180
            else:
                b.error(f"rotation `{head}` in `{ins.written}` takes an angle name or a "
                           f"number of degrees, got `{b.text(arg)}`", arg.span)
                ok = False
                continue
            rotations.append(Transform("R", head[1], (angle,), item.span))
        else:
            b.error(f"`{ins.written}` lists `P(…)`, `Q(λ0, λ1, λ2, λ3)`, rotations "
                       f"`Rx/Ry/Rz(…)` and `E(…)`; got `{b.text(item)}`", item.span)
            ok = False
    if ok and "Q" not in parts:
        b.error(f"`{ins.written}` needs the quaternion `Q(λ0, λ1, λ2, λ3)`", ins.name_span)
        ok = False
    if ok:
        q, p = parts["Q"], parts.get("P")
        b.quaternion = QuaternionInstruction(
            (q[0], q[1], q[2], q[3]), tuple(rotations),
            None if p is None else (p[0], p[1], p[2], p[3]), parts.get("E"), ins.span)


def quaternion_angle_names(b: Builder) -> set[str]:
    """Names the ``КВАТЕРНИОН`` operator defines: its rotation angles and ``E(…)``
    (their formulas through the quaternion are formed by :mod:`kidym.eom`)."""
    q = getattr(b, "quaternion", None)
    if q is None:
        return set()
    names = {str(tr.args[0]) for tr in q.rotations if tr.args[0].is_Symbol}
    return names | set(q.euler or ())


def calculation_of(b: Builder, ins: ast.Instruction) -> None:
    lang = keywords.language_of(ins.written)   # the types listed in the model's words
    if not ins.raw:
        b.error(f"`{ins.written}` needs a calculation type, e.g. `{ins.written} := "
                   f"{keywords.calculation_in('DYNAMICS', lang)};`", ins.name_span)
        return
    key = keywords.lookup_calculation(ins.raw)
    if key is None:
        near = keywords.closest_calculation(ins.raw)
        hint = f" (did you mean `{near}`?)" if near else ""
        known = ", ".join(keywords.calculation_in(k, lang) for k in keywords.CALCULATIONS)
        b.error(f"unknown calculation type `{ins.raw}`{hint}; expected one of: {known}",
                   ins.raw_span)
        return
    if key not in keywords.SUPPORTED_CALCULATIONS:
        known = ", ".join(keywords.calculation_in(k, lang) for k in keywords.CALCULATIONS
                          if k in keywords.SUPPORTED_CALCULATIONS)
        b.error(f"calculation `{ins.raw}` is recognised but not supported yet (kidym "
                   f"does: {known}); running another calculation instead would give "
                   "other results than asked", ins.raw_span)
        return
    b.calculation = key
    b.calculation_span = ins.raw_span


def unsupported(b: Builder, written: str, key: str, span: Span | None) -> None:
    """An instruction kidym does not implement: a warning where it only changes how
    results are presented, an error where ignoring it would change the results."""
    if key in keywords.PRESENTATION_ONLY:
        b.warn(f"instruction `{written}` is recognised but not supported yet; ignored "
                  "(it changes only how results are shown)", span)
    else:
        b.error(f"instruction `{written}` is recognised but not supported yet; it would "
                   "change the results, so the model cannot run without it: remove it "
                   "or rewrite it with the supported instructions (docs/language.md §5)",
                   span)


def title(b: Builder) -> str | None:
    parts = [b.titles[k] for k in ("TASK", "AUTHOR", "VARIANT") if k in b.titles]
    return " — ".join(parts) if parts else None


def rolling_of(b: Builder, ins: ast.Instruction) -> None:
    """``КАЧЕНИЕ := Ball(шар(R), плоскость(h)), Wheel(диск(r, y), плоскость(0));``,
    ``Ball(шар(R), сфера_внутри(R0, cx, cy, cz))``, ``Ball(шар(R), поверхность(h))``."""
    usage = (f"`{ins.written}` lists `Body(shape, surface)`: shape `шар(R)` or "
             "`диск(r, axis)` (axis x, y or z), surface `плоскость(h)`, "
             "`сфера_внутри(R0[, cx, cy, cz])`, `сфера_снаружи(R0[, cx, cy, cz])` or "
             "`поверхность(f)`")
    seen: set[str] = set()
    for item in ins.items:
        ok = (isinstance(item, ast.Call) and len(item.args) == 2
              and all(isinstance(a, ast.Call) for a in item.args))
        if not ok:
            b.error(f"{usage}; got `{b.text(item)}`", item.span)
            continue
        body = b.rename(item.func.name)
        shape_node, surface_node = item.args
        shape = ROLLING_SHAPES.get(shape_node.func.name.lower())
        surface = ROLLING_SURFACES.get(surface_node.func.name.lower())
        if body not in b.body_data:
            b.error(f"`{ins.written}`: `{body}` is not a body"
                       f"{suggest(body, sorted(b.body_data))}", item.func.span)
            continue
        if body in seen:
            b.error(f"`{ins.written}` gives body `{body}` twice", item.func.span)
            continue
        seen.add(body)
        if shape is None:
            b.error(f"`{ins.written}`: unknown rolling shape `{shape_node.func.name}`; "
                       "kidym knows " + ", ".join(f"`{w}`" for w in ROLLING_SHAPES),
                       shape_node.func.span)
            continue
        if surface_node.func.name.lower() in SPHERE_WITHOUT_SIDE:
            b.error(f"`{ins.written}`: say on which side of the sphere `{body}` rolls: "
                       "`сфера_внутри` (`сфера_всередині`, `sphere_inside`) or "
                       "`сфера_снаружи` (`сфера_зовні`, `sphere_outside`)",
                       surface_node.func.span)
            continue
        if surface is None:
            b.error(f"`{ins.written}`: unknown surface `{surface_node.func.name}`; "
                       "kidym knows " + ", ".join(f"`{w}`" for w in ROLLING_SURFACES),
                       surface_node.func.span)
            continue
        if shape == "disc" and surface != "plane":
            b.error(f"`{ins.written}`: a disc rolls on a plane only; `{body}` rolls on "
                       f"`{surface_node.func.name}` (a ball, `шар(R)`, rolls on spheres "
                       "and implicit surfaces)", surface_node.func.span)
            continue
        want = 1 if shape == "ball" else 2
        n_surface = len(surface_node.args)
        if len(shape_node.args) != want or not (
                n_surface == 1 or (surface.startswith("sphere") and n_surface == 4)):
            b.error(f"{usage}; got `{b.text(item)}`", item.span)
            continue
        axis = None
        if shape == "disc":
            ax = shape_node.args[1]
            axis = ax.name.lower() if isinstance(ax, ast.Name) else ""
            if axis not in ("x", "y", "z"):
                b.error(f"`{ins.written}`: the axis of disc `{body}` is `x`, `y` or `z` "
                           f"(a body axis), got `{b.text(ax)}`", ax.span)
                continue
        radius = b.formula(shape_node.args[0], "value", f"radius of `{body}` in "
                              f"`{ins.written}`")
        if radius is None:
            continue
        if surface == "plane":
            height = b.formula(surface_node.args[0], "value",
                                  f"plane height of `{body}` in `{ins.written}`")
            if height is not None:
                b.rolling.append(Rolling(body, shape, radius, surface, height, axis,
                                            item.span))
        elif surface == "surface":
            fn = surface_node.args[0]
            if not isinstance(fn, ast.Name):
                b.error(f"`{ins.written}`: `{surface_node.func.name}` takes the name of "
                           "a defined formula of the centre `XO{body}`, `YO{body}`, "
                           f"`ZO{body}`, got `{b.text(fn)}`".replace("{body}", body),
                           fn.span)
                continue
            name = b.rename(fn.name)
            b.record(fn, "value", f"surface of `{body}` in `{ins.written}`")
            b.rolling.append(Rolling(body, shape, radius, surface, None, axis,
                                        item.span, function_name=name))
        else:
            parts = [b.formula(a, "value", f"{what} of `{body}` in `{ins.written}`")
                     for a, what in zip(surface_node.args,
                                        ("sphere radius", "sphere centre x",
                                         "sphere centre y", "sphere centre z"))]
            if any(p is None for p in parts):
                continue
            centre = tuple(parts[1:]) or (se.Integer(0),) * 3
            b.rolling.append(Rolling(body, shape, radius, surface, None, axis,
                                        item.span, sphere_radius=parts[0],
                                        centre=centre))


def check_rolling(b: Builder) -> None:
    """Radius and sphere radius constant, plane height and sphere centre formulas of
    parameters and time, a surface function a definition of the centre; generated
    names free."""
    if not b.rolling:
        return
    written = b.instructions["ROLLING"].written
    taken = b.params | b.defs | set(b.coordinates)
    for k, r in enumerate(b.rolling):
        b.check_constant(r.radius, f"the radius of `{r.body}` in `{written}`", r.span,
                            value=True)
        b.check_constant(r.height, f"the plane height of `{r.body}` in `{written}`",
                            r.span, allow_time=True, value=True)
        b.check_constant(r.sphere_radius, f"the sphere radius of `{r.body}` in "
                            f"`{written}`", r.span, value=True)
        for c in r.centre:
            b.check_constant(c, f"the sphere centre of `{r.body}` in `{written}`",
                                r.span, allow_time=True, value=True)
        if r.function_name is not None:
            b.rolling[k] = dataclasses.replace(
                r, function=surface_function(b, r, written))
        for name in r.constraint_names():
            if name in taken:
                b.error(f"`{written}` names the rolling constraints of `{r.body}` "
                           f"`{name}`, but `{name}` is a name of the model: rename it",
                           r.span)


def surface_function(b: Builder, r: Rolling, written: str) -> Expr | None:
    """The expanded formula of ``поверхность(f)``: of the body's centre names and
    parameters only (``None``, reported, otherwise)."""
    name = r.function_name
    centre = r.centre_names()
    how = (f"`{name}` = 0 is the surface of the centre of `{r.body}`: a formula of "
           f"`{centre[0]}`, `{centre[1]}`, `{centre[2]}` and parameters, positive on the "
           "ball's side")
    if name not in b.defs or b.variables[name].expr is None:
        b.error(f"`{written}`: `{name}` is not a defined formula; {how}", r.span)
        return None
    expanded = b.expand(se.Symbol(name))
    if expanded is None:
        b.error(f"`{written}`: `{name}` cannot be formed with its definitions "
                   "substituted", r.span)
        return None
    params = b.params | {"g"}
    bad = sorted(s.name for s in expanded.free_symbols
                 if s.name not in params and s.name not in centre)
    if bad:
        b.error(f"`{written}`: the surface `{name}` of `{r.body}` uses "
                   + ", ".join(f"`{b}`" for b in bad) + f"; {how}", r.span)
        return None
    if not any(s.name in centre for s in expanded.free_symbols):
        b.error(f"`{written}`: the surface `{name}` of `{r.body}` does not use the "
                   f"centre; {how}", r.span)
        return None
    return expanded


def initial(b: Builder) -> tuple[dict[str, float], float | None]:
    ins = b.instructions.get("INITIAL")
    values: dict[str, float] = {}
    t_start = None
    b.initial_formulas: dict[str, se.Basic] = {}
    b.initial_spans: dict[str, Span] = {}
    if ins is None:
        return values, t_start
    allowed = b.speeds_allowed()
    dependent = {f"{q}'t" for q in b.velocities}
    for item in ins.items:
        if isinstance(item, ast.Call) and len(item.args) == 1 and (
                item.func.name not in FUNCTIONS
                or b.rename(item.func.name) in allowed
                or item.func.name in b.params or item.func.name in b.defs):
            # `th(0.3)`: the model's own coordinate `th` wins over the function `th`
            name_node, value_node = item.func, item.args[0]
        elif isinstance(item, ast.Call) and len(item.args) == 1:
            b.error(f"`{b.text(item)}` in `{ins.written}`: `{item.func.name}` is a "
                       "function here, because the model has no coordinate, speed or "
                       f"pseudo-velocity called `{item.func.name}`; items are "
                       f"`name(value)` or `name = value`{suggest(item.func.name, allowed)}",
                       item.span)
            continue
        elif isinstance(item, ast.NamedItem):
            name_node, value_node = item.name, item.value
        else:
            b.error(f"`{ins.written}` items are `name(value)` or `name = value`, got "
                       f"`{b.text(item)}`", item.span)
            continue
        name = b.rename(name_node.name)
        span = name_node.span
        if name == TIME.name:
            t_start = b.value(value_node, "initial time",
                                 formula=(b.initial_formulas, TIME.name))
            continue
        if name in dependent:
            b.error(f"`{name}` is a dependent speed, given by its velocity formula "
                       f"`{name} = …`: it takes no initial value (it follows from the "
                       "coordinates and the independent speeds; give those instead)", span)
            continue
        if name not in allowed:
            base, _ = split_derivative(name)
            if name in b.params:
                b.error(f"`{name}` is a parameter, not a coordinate or speed: change its "
                           f"value with `{name} = …;`", span)
            elif name in b.defs or name in b.owner_of_generated:
                b.error(f"`{name}` is given by a formula; only coordinates, their "
                           "speeds and pseudo-velocities take initial values", span)
            elif base not in b.missing:
                b.error(f"initial value for `{name}`, which is not a coordinate, speed or "
                           f"pseudo-velocity{suggest(name, allowed)}", span)
            continue
        b.initial_formulas.pop(name, None)
        v = b.value(value_node, f"initial value of `{name}`",
                       formula=(b.initial_formulas, name))
        if v is None:
            continue
        if name in values:
            b.warn(f"initial value of `{name}` is given twice (the last one wins)", span)
        values[name] = v
        b.initial_spans[name] = value_node.span
    return values, t_start


def time_span(b: Builder) -> tuple[float | None, float | None, Span | None]:
    t0 = t1 = None
    b.span_formulas: dict[str, se.Basic] = {}
    where: Span | None = None
    for key in ("TIME", "VARY"):
        ins = b.instructions.get(key)
        if ins is None:
            continue
        where = ins.name_span
        items = ins.items
        if key == "TIME":
            if len(items) != 1 or not isinstance(items[0], ast.Call) or \
                    items[0].func.name != TIME.name or len(items[0].args) != 2:
                b.error(f"`{ins.written}` takes `t(t_start, t_end)`, got "
                           f"`{ins.written} := {', '.join(b.text(i) for i in items)}`",
                           ins.name_span)
                continue
            t0 = b.value(items[0].args[0], "start time",
                            formula=(b.span_formulas, "t_start"))
            t1 = b.value(items[0].args[1], "end time",
                            formula=(b.span_formulas, "t_end"))
        else:   # the time range and the parameter study (kidym.model.variations)
            v0, v1 = variations.read(b, ins)
            if v0 is not None or v1 is not None:
                t0, t1 = v0, v1
    return t0, t1, where


def outputs(b: Builder) -> list[str]:
    b.plots: list[Plot] = []
    out: list[str] = []
    ins = b.instructions.get("SHOW")
    if ins is not None:
        show(b, ins, out)
    for rep in sorted(b.repeated, key=lambda r: r.start):
        if rep.key in ("COMPARE", "COMBINE"):
            compare(b, rep, out)
        else:
            unsupported(b, rep.written, rep.key, rep.name_span)
    return out


def multiplier_names(b: Builder) -> set[str]:
    """``λf`` for every constraint ``f`` of ``УРАВНЕНИЯ``, and the controls of
    ``НЕИЗВЕСТНЫЕ`` (outputs of the run, results of its solve)."""
    return {MULTIPLIER_PREFIX + n for n in [*(c.name for c in b.constraint_names),
                                            *(x for r in b.rolling
                                              for x in r.constraint_names()),
                                            *(x for c, _n in b.coincide_items
                                              for x in c.constraint_names())]} | {
        n.name for n in b.control_names}


def known_output(b: Builder, node: ast.Name, ins: ast.Instruction) -> str | None:
    """Canonical name of an output ``node`` lists, or ``None`` (reported)."""
    name = b.rename(node.name)
    if name == TIME.name:
        return name
    base, order = split_derivative(name)
    known = (b.params | b.defs | set(b.owner_of_generated) | set(b.coordinates)
             | set(b.pseudo_names))
    if "g" in b.variables or any(u.base == "g" for u in b.uses):
        known.add("g")
    if base in known and order <= 2 and not (order and base in b.params):
        return name
    multipliers = multiplier_names(b)
    if name in multipliers:
        return name   # the multiplier of a constraint (kidym.eom.constraints)
    if name in {n.name for n in b.input_names}:
        return name   # an external input's value (kidym.model.inputs)
    known |= multipliers
    if base not in b.unsure:
        b.error(f"`{ins.written}` lists `{node.name}`, which is not defined in the "
                   f"model{suggest(name, sorted(known))}", node.span)
    return None


def compare(b: Builder, ins: ast.Instruction, out: list[str]) -> None:
    """``СРАВНИТЬ := ХУ(x, y);`` (up to 5 curves), ``СОВМЕСТИТЬ := V(vx, vy);`` (2)."""
    kind, limits = ("compare", (1, 5)) if ins.key == "COMPARE" else ("overlay", (2, 2))
    for item in ins.items:
        if isinstance(item, ast.Call) and all(isinstance(a, ast.Name) for a in item.args):
            title, names = item.func.name, list(item.args)
        elif isinstance(item, ast.Name) and len(ins.items) > 1:
            title, names = None, [i for i in ins.items if isinstance(i, ast.Name)]
        else:
            b.error(f"`{ins.written}` takes `Title(y1, y2, …)`, got "
                       f"`{b.text(item)}`", item.span)
            continue
        lo, hi = limits
        if not lo <= len(names) <= hi:
            need = "exactly 2" if lo == hi else f"1 to {hi}"
            b.error(f"`{ins.written}` puts {need} curves on one plot, got {len(names)} "
                       f"in `{b.text(item)}`", item.span)
            continue
        curves = [known_output(b, n, ins) for n in names]  # type: ignore[arg-type]
        if any(c is None for c in curves):
            continue
        for c in curves:
            if c != TIME.name and c not in out:
                out.append(c)  # type: ignore[arg-type]
        b.plots.append(Plot(tuple(curves), (), kind,  # type: ignore[arg-type]
                               title or ", ".join(curves), ins.span))  # type: ignore[arg-type]
        if title is None:
            break


def show(b: Builder, ins: ast.Instruction, out: list[str]) -> None:
    base_known = (b.params | b.defs | set(b.owner_of_generated)
                  | set(b.coordinates) | set(b.pseudo_names) | {"g"}
                  | quaternion_angle_names(b))
    if "g" not in b.variables and not any(u.base == "g" for u in b.uses):
        base_known.discard("g")

    # (and the external inputs: their values, recorded like the multipliers)
    multipliers = multiplier_names(b) | {n.name for n in b.input_names}

    def add(node: ast.Name) -> None:
        name = b.rename(node.name)
        if name == TIME.name:
            return
        if name in multipliers:   # the multiplier of a constraint
            if name not in out:
                out.append(name)
            return
        base, order = split_derivative(name)
        ok = base in base_known and order <= 2 and not (order and base in b.params)
        if not ok and base in b.unsure:
            return
        if not ok:
            hint = suggest(name, sorted(base_known))
            b.error(f"`{ins.written}` lists `{node.name}`, which is not defined in the "
                       f"model{hint}", node.span)
            return
        if name not in out:
            out.append(name)

    def plotted(node: ast.Name) -> bool:
        name = b.rename(node.name)
        return name == TIME.name or name in out

    for item in ins.items:
        if isinstance(item, ast.Name):
            add(item)
            if plotted(item):
                b.plots.append(Plot((b.rename(item.name),), (), "show",
                                       b.text(item), item.span))
        elif isinstance(item, ast.Call) and all(isinstance(a, ast.Name) for a in item.args):
            add(item.func)
            for a in item.args:
                add(a)  # type: ignore[arg-type]
            args: list[ast.Name] = list(item.args)  # type: ignore[arg-type]
            if plotted(item.func) and all(plotted(a) for a in args):
                if len(args) > 2:
                    b.error(f"`{ins.written}` plots `y(x)` or `z(x, y)`, got "
                               f"{len(args)} arguments in `{b.text(item)}`", item.span)
                b.plots.append(Plot(
                    (b.rename(item.func.name),),
                    tuple(n for n in (b.rename(a.name) for a in args) if n != TIME.name),
                    "show", b.text(item), item.span))
        else:
            b.error(f"`{ins.written}` lists names or `y(x)` pairs, got "
                       f"`{b.text(item)}`", item.span)
    return out
