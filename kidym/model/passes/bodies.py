"""Pass 2 of the model builder: body records into transform chains and inertia.

Each body record's transforms (``Rz(phi)``, ``Sx(l)``, ``Q(…)``) and its tail (central
transforms, inertia items) are read into :class:`~kidym.model.model.Transform` chains
and an :class:`~kidym.model.model.Inertia`; the bodies are ordered base first and
their inertia checked (positive masses, a tensor that can be an inertia).
"""

from __future__ import annotations

import symengine as se

from kidym.errors import Span
from kidym.lang import ast
from kidym.lang.formulas import (
    FUNCTIONS,
    suggest,
)
from kidym.model.inertia import full_tensor, inertia_problem
from kidym.model.model import (
    Inertia,
    Transform,
)
from kidym.model.passes.workspace import (
    INERTIA_ITEMS,
    INERTIA_LABEL,
    POSITIONAL,
    TRANSFORMS,
    Builder,
    Expr,
    cycles,
    is_literal,
    literal_float,
    not_a_float,
    substitute,
    topological,
)


def bodies(b: Builder) -> None:
    b.body_data: dict[str, tuple[ast.BodyRecord, tuple[Transform, ...],
                                    tuple[Transform, ...], Inertia | None]] = {}
    b.inertia_spans: dict[str, dict[str, Span]] = {}
    for rec in b.body_records:
        body = rec.name.name
        chain = tuple(t for t in (transform(b, i, body) for i in rec.transforms)
                      if t is not None)
        central, inertia = tail(b, rec)
        b.body_data[body] = (rec, chain, central, inertia)


def transform(b: Builder, item: ast.Expr, body: str) -> Transform | None:
    if not isinstance(item, ast.Call) or item.func.name not in TRANSFORMS:
        what = f"`{b.text(item)}`"
        hint = ""
        if isinstance(item, ast.Call):
            hint = suggest(item.func.name, TRANSFORMS)
        b.error(f"expected a transform `Rx(…)`, `Ry(…)`, `Rz(…)`, `Sx(…)`, `Sy(…)`, "
                   f"`Sz(…)` or `Q(λ0, λ1, λ2, λ3)` in body `{body}`, got {what}{hint}",
                   item.span)
        return None
    kind, axis, arity = TRANSFORMS[item.func.name]
    where = f"transform `{item.func.name}` of body `{body}`"
    if len(item.args) != arity:
        for a in item.args:
            b.record(a, "position", where)
        b.error(f"transform `{item.func.name}` of body `{body}` takes {arity} "
                   f"argument{'s' if arity > 1 else ''}, got {len(item.args)}", item.span)
        return None
    args = []
    for a in item.args:
        expr = b.formula(a, "position", where)
        if expr is None:
            return None
        if kind == "R" and is_literal(a):
            expr = expr * se.pi / 180
        args.append(expr)
    return Transform(kind, axis, tuple(args), item.span)


def tail(b: Builder, rec: ast.BodyRecord) -> tuple[tuple[Transform, ...], Inertia | None]:
    body = rec.name.name
    central: list[Transform] = []
    items = list(rec.tail)
    while items and isinstance(items[0], ast.Call) and items[0].func.name in TRANSFORMS:
        t = transform(b, items.pop(0), body)
        if t is not None:
            central.append(t)
    named: dict[str, tuple[ast.Call, Expr | None]] = {}
    positional: list[ast.Expr] = []
    ok = True
    for item in items:
        if isinstance(item, ast.Call) and item.func.name in TRANSFORMS:
            if TRANSFORMS[item.func.name][0] != "S":
                b.error(f"rotation `{b.text(item)}` in body `{body}` must come before "
                           "the inertia items (central transforms lead the third "
                           "section)", item.span)
                ok = False
                continue
            t = transform(b, item, body)  # older centre-of-mass offset
            if t is not None:
                central.append(t)
            continue
        if isinstance(item, ast.Call) and item.func.name not in FUNCTIONS:
            fname = item.func.name
            if fname not in INERTIA_ITEMS:
                b.error(f"unknown inertia item `{fname}` in body `{body}`"
                           f"{suggest(fname, [*INERTIA_ITEMS, *TRANSFORMS])}; expected "
                           "m(…), Jx(…), Jy(…), Jz(…), Jxy(…), Jyz(…), Jxz(…)", item.func.span)
                ok = False
                continue
            field_name = INERTIA_ITEMS[fname]
            if len(item.args) != 1:
                b.error(f"inertia item `{fname}` of body `{body}` takes 1 value, got "
                           f"{len(item.args)}", item.span)
                ok = False
                continue
            if field_name in named:
                b.error(f"inertia item `{fname}` of body `{body}` is given twice",
                           item.span)
                ok = False
                continue
            expr = b.formula(item.args[0], "inertia",
                                f"{INERTIA_LABEL[field_name]} of body `{body}`")
            named[field_name] = (item, expr)
            b.inertia_spans.setdefault(body, {})[field_name] = item.span
            ok = ok and expr is not None
        else:
            positional.append(item)
    if named and positional:
        b.error(f"body `{body}` mixes named inertia items (`m(…)`, `Jx(…)` …) with plain "
                   f"values (`{b.text(positional[0])}`); use one form", positional[0].span)
        return tuple(central), None
    values: dict[str, Expr | None] = {k: v[1] for k, v in named.items()}
    if positional:
        if len(positional) not in (1, 4, 7):
            b.error(f"body `{body}`: plain inertia values are `m`, `m, Jx, Jy, Jz` or "
                       f"`m, Jx, Jy, Jz, Jxy, Jyz, Jxz` (1, 4 or 7 values), got "
                       f"{len(positional)}", positional[0].span)
            return tuple(central), None
        for field_name, node in zip(POSITIONAL, positional, strict=False):
            b.inertia_spans.setdefault(body, {})[field_name] = node.span
            values[field_name] = b.formula(node, "inertia",
                                              f"{INERTIA_LABEL[field_name]} of body `{body}`")
    if "mass" not in values:
        b.error(f"body `{body}` has no mass: add `m(…)` (or a plain value) to its third "
                   "section", rec.name.span)
        return tuple(central), None
    if not ok or any(v is None for v in values.values()):
        return tuple(central), None
    zero = se.Integer(0)
    return tuple(central), Inertia(**{f: values.get(f, zero) for f in POSITIONAL})


def body_order(b: Builder) -> list[str]:
    names = [r.name.name for r in b.body_records]
    graph: dict[str, list[str]] = {}
    for rec in b.body_records:
        deps: list[str] = []
        if rec.base is not None:
            base = rec.base.name
            if base not in b.body_data and base in b.unsure:
                pass
            elif base not in b.body_data:
                b.error(f"body `{rec.name.name}` refers to base `{base}`, which is not "
                           f"defined{suggest(base, names)}", rec.base.span)
            else:
                deps.append(base)
        graph[rec.name.name] = deps
    start = {r.name.name: r.start for r in b.body_records}
    for cycle in cycles(graph, key=lambda n: start[n]):
        path = " → ".join(f"`{n}`" for n in [*cycle, cycle[0]])
        rec = b.body_data[cycle[0]][0]
        b.error(f"bodies form a cycle of bases: {path}; one of them must be built on "
                   "the fixed frame or another body", rec.base.span if rec.base else None)
    return topological(graph, key=lambda n: start[n])


def check_inertia(b: Builder, body: str, rec: ast.BodyRecord, inertia: Inertia) -> None:
    """Error at the record if the body's (constant) inertia is physically impossible.

    Runs on the numbers the parameters have in the file (``m ≥ 0``, tensor positive
    semidefinite, triangle inequalities: :func:`kidym.model.inertia.inertia_problem`);
    run-time overrides are checked by :func:`kidym.model.inertia.check_inertias`.
    """
    subs = {se.Symbol(n): v for n, v in b.param_exprs.items()}
    numbers = []
    for f in POSITIONAL:
        expanded = b.expand(getattr(inertia, f))
        expr = None if expanded is None else substitute(expanded, subs)
        if expr is not None and expr.free_symbols:
            return   # reported (a missing or broken name)
        v = None if expr is None else literal_float(expr)
        if v is None:
            why = ("is undefined with the parameter values of the file (a division by "
                   "zero?)" if expr is None else not_a_float(expr))
            b.error(f"{INERTIA_LABEL[f]} of body `{body}` {why}",
                       b.inertia_spans.get(body, {}).get(f, rec.name.span))
            return
        numbers.append(v)
    problem = inertia_problem(numbers, complete=full_tensor(inertia))
    if problem is not None:
        span = b.inertia_spans.get(body, {}).get(problem.field, rec.name.span)
        b.error(f"body `{body}`: {problem.message}; a real body cannot have this "
                   "inertia", span)
