"""What the 3-D viewer draws for a body: ``ФОРМЫ := Cart(box(0.3, 0.1, 0.1)), …;``.

Without this instruction a body is drawn as the uniform solid of its inertia
(:func:`kidym.report.poses.shape_of`). ``ФОРМЫ`` (``ФОРМИ``, ``SHAPES``) names, body by
body, a solid in the body's central frame instead:

``box(a, b, c)``        edges along the central x, y, z axes (``брус``, ``бокс``);
``cylinder(d, h[, ax])`` diameter, length, axis ``x``, ``y`` or ``z`` (default ``z``;
                        ``цилиндр``, ``циліндр``);
``sphere(d)``           diameter (``шар``, ``сфера``, ``куля``);
``capsule(d, h[, ax])`` a cylinder with round ends, ``h`` overall (``капсула``);
``mesh("file"[, s])``   the triangles of an STL or OBJ file (:mod:`kidym.model.mesh`),
                        its path relative to the model file's folder, its coordinates
                        multiplied by ``s`` (default 1) in the body frame — the frame
                        the record's transforms end in, not the central frame — as CAD
                        parts and robot descriptions give them (``сетка``, ``сітка``).

Sizes are formulas of parameters (lengths in the model's units). Display only:
nothing of the equations changes, and nothing of it reaches generated code. A mesh
file is read when the model is (``kidym check`` reports what is wrong with it, at the
file name); a model kept in the cache is read again when a mesh file changed
(:func:`kidym.model.mesh.meshes_unchanged`).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import symengine as se

from kidym.errors import Diagnostic, ModelError, Span
from kidym.lang import ast
from kidym.model.mesh import MAX_TRIANGLES, Mesh, MeshError, read_mesh

#: Whether a parse reads the mesh files of ``ФОРМЫ`` (display only): a Dask worker, which
#: runs the model and draws nothing, parses without them (:func:`meshes_not_read`).
_READ_MESHES: contextvars.ContextVar[bool] = contextvars.ContextVar("kidym_read_meshes",
                                                                    default=True)


@contextlib.contextmanager
def meshes_not_read() -> Iterator[None]:
    """Parse without reading mesh files: a ``mesh(…)`` shape keeps its file name and
    scale, with no triangles (``DisplayShape.mesh`` is ``None``). For a process that runs
    a model and never draws it (a sweep's Dask worker, whose folder or machine may not
    hold the files)."""
    token = _READ_MESHES.set(False)
    try:
        yield
    finally:
        _READ_MESHES.reset(token)

#: spelling (lower case) → (kind, number of sizes, whether an axis may follow)
KINDS = {"box": ("box", 3, False), "брус": ("box", 3, False), "бокс": ("box", 3, False),
         "cylinder": ("cylinder", 2, True), "цилиндр": ("cylinder", 2, True),
         "циліндр": ("cylinder", 2, True),
         "sphere": ("sphere", 1, False), "шар": ("sphere", 1, False),
         "сфера": ("sphere", 1, False), "куля": ("sphere", 1, False),
         "capsule": ("capsule", 2, True), "капсула": ("capsule", 2, True),
         "mesh": ("mesh", 1, False), "сетка": ("mesh", 1, False),
         "сітка": ("mesh", 1, False)}

#: axis names (Latin and the Cyrillic look-alikes of the seeds' names)
AXES = {"x": 0, "y": 1, "z": 2, "х": 0, "у": 1}


@dataclass(frozen=True)
class DisplayShape:
    """A body's declared display solid (``ФОРМЫ``).

    Attributes
    ----------
    body : str
        The body.
    kind : {"box", "cylinder", "sphere", "capsule", "mesh"}
        The solid.
    sizes : tuple of Expr
        Box: three edges; cylinder, capsule: diameter and length; sphere: diameter;
        mesh: the scale of its coordinates.
    axis : int
        Axis of a cylinder or capsule in the central frame (0, 1, 2).
    mesh : Mesh or None
        A mesh's triangles, in the body frame.
    file : str
        A mesh's file as written.
    written : str
        The instruction's name as the file spells it (for messages).
    """

    body: str
    kind: str
    sizes: tuple
    axis: int = 2
    span: Span | None = None
    mesh: Mesh | None = None
    file: str = ""
    written: str = "SHAPES"


def _usage(written: str) -> str:
    return (f"`{written}` names how bodies are drawn: `Body(box(a, b, c))`, "
            "`Body(cylinder(d, h[, x|y|z]))`, `Body(sphere(d))` or "
            "`Body(capsule(d, h[, x|y|z]))` or `Body(mesh(\"file.stl\"[, scale]))`")


def read_items(b, ins: ast.Instruction) -> list[DisplayShape]:
    """The shapes of one ``ФОРМЫ`` instruction; located errors for anything else.

    Parameters
    ----------
    b : kidym.model.build._Builder
        The builder (``error``, ``formula``, ``text``).
    ins : ast.Instruction
        The instruction.
    """
    out: list[DisplayShape] = []
    for item in ins.items:
        if not (isinstance(item, ast.Call) and len(item.args) == 1
                and isinstance(item.args[0], ast.Call)):
            b.error(f"{_usage(ins.written)}; got `{b.text(item)}`", item.span)
            continue
        solid = item.args[0]
        word = solid.func.name.lower()
        if word not in KINDS:
            b.error(f"`{ins.written}`: unknown shape `{solid.func.name}`; the shapes are "
                    "box, cylinder, sphere, capsule, mesh", solid.func.span)
            continue
        kind, n, with_axis = KINDS[word]
        args = list(solid.args)
        mesh, file = None, ""
        if kind == "mesh":
            if not (args and isinstance(args[0], ast.Text)):
                b.error(f"`{ins.written}`: a mesh takes its file name in quotes and an "
                        f"optional scale, `mesh(\"part.stl\"[, s])`; got `{b.text(solid)}`",
                        solid.span)
                continue
            text = args.pop(0)
            file = text.value
            try:
                mesh = read_mesh(_mesh_path(b.filename, file)) if _READ_MESHES.get() else None
            except MeshError as e:
                b.error(f"`{ins.written}`: mesh file `{file}` of `{item.func.name}`: {e}",
                        text.span)
                continue
            if not args:
                args = [ast.Number(text="1", value=Fraction(1), span=text.span, start=text.start,
                                   end=text.end)]
        elif any(isinstance(a, ast.Text) for a in args):
            b.error(f"`{ins.written}`: a quoted file name is read by `mesh` only; a "
                    f"{kind}'s sizes are formulas", solid.span)
            continue
        axis = 2
        if with_axis and len(args) == n + 1:
            last = args.pop()
            if not (isinstance(last, ast.Name) and last.name.lower() in AXES):
                b.error(f"`{ins.written}`: the axis of a {kind} is `x`, `y` or `z`; got "
                        f"`{b.text(last)}`", last.span)
                continue
            axis = AXES[last.name.lower()]
        if len(args) != n:
            sizes = ("a file and an optional scale" if kind == "mesh" else
                     {3: "three edges", 2: "a diameter and a length", 1: "a diameter"}[n])
            b.error(f"`{ins.written}`: a {kind} takes {sizes}"
                    f"{' and an optional axis' if with_axis else ''}; got "
                    f"`{b.text(solid)}`", solid.span)
            continue
        sizes = [b.formula(a, "value", f"a size in `{ins.written}`") for a in args]
        if any(s is None for s in sizes):
            continue
        out.append(DisplayShape(b.rename(item.func.name), kind, tuple(sizes), axis,
                                item.span, mesh, file))
    return out


def _mesh_path(filename: str, file: str) -> Path:
    """``file`` relative to the folder of the model file ``filename`` (the current
    folder for a model given as text)."""
    base = Path.cwd() if filename.startswith("<") else Path(filename).parent
    return (base / file).absolute()


def _value(b, expr) -> float | None:
    """The number a formula of parameters has with their values in the file (``None``
    where it has none: ``sqrt(-1)``, ``1/0``)."""
    expanded = b.expand(expr)
    if expanded is None:
        return None
    subs = {se.Symbol(n): v for n, v in b.param_exprs.items()}
    try:
        value = float(expanded.xreplace(subs))
    except (RuntimeError, TypeError, ValueError, ZeroDivisionError):
        return None
    return value if math.isfinite(value) else None


def check_items(b, items: list[DisplayShape], written: str,
                bodies: set[str]) -> tuple[DisplayShape, ...]:
    """Bodies that exist, each once; sizes of parameters; the meshes' triangles together
    at most ``MAX_TRIANGLES`` (located errors)."""
    seen: set[str] = set()
    triangles: dict[str, int] = {}
    out = []
    for s in items:
        if s.mesh is not None:
            before = sum(triangles.values())
            triangles[s.mesh.digest] = s.mesh.n_triangles
            if before <= MAX_TRIANGLES < sum(triangles.values()):
                b.error(f"`{written}`: the meshes hold {sum(triangles.values())} triangles "
                        f"with `{s.file}`; a model's meshes hold at most {MAX_TRIANGLES} "
                        "together (simplify them)", s.span)
        if s.body not in bodies:
            known = ", ".join(sorted(bodies)) or "none"
            b.error(f"`{written}`: `{s.body}` is not a body (bodies: {known})", s.span)
        elif s.body in seen:
            b.error(f"`{written}`: body `{s.body}` is given a shape twice", s.span)
        seen.add(s.body)
        for x in s.sizes:
            reported = len(b.diags)
            if not b.check_constant(x, f"a size of `{s.body}` in `{written}`", s.span,
                                    value=True) or len(b.diags) > reported:
                continue
            value = _value(b, x)
            what = "the scale" if s.kind == "mesh" else "a size"
            if value is None:
                b.error(f"`{written}`: {what} of `{s.body}` is not a finite real number "
                        "with the parameter values of the file", s.span)
            elif not value > 0:
                b.error(f"`{written}`: {what} of `{s.body}` must be positive; got {value:g}",
                        s.span)
        # the sizes over parameters alone, checked again with a run's values (check_sizes)
        expanded = tuple(b.expand(x) for x in s.sizes)
        out.append(replace(s, written=written, sizes=expanded)
                   if all(e is not None for e in expanded) else s)
    return tuple(out)


def check_sizes(model, values: dict[str, float]) -> None:
    """Raise a located error where a size of ``ФОРМЫ`` is not a positive number with
    ``values`` (the parameters of a run, its overrides applied: ``--set``, the
    ``parameters=`` of the Python API, a sweep's point), as the file's values are when
    the model is read.

    Raises
    ------
    ModelError
        At each such shape, naming the size, its value and the parameters it uses.
    """
    diags = []
    for s in model.shapes:
        for x in s.sizes:
            used = sorted(str(n) for n in x.free_symbols)
            subs = {se.Symbol(n): values[n] for n in used if n in values}
            try:
                value = float(x.xreplace(subs))
            except (RuntimeError, TypeError, ValueError, ZeroDivisionError):
                value = math.nan
            if math.isfinite(value) and value > 0:
                continue
            shown = ", ".join(f"{n} = {values.get(n, math.nan):g}" for n in used)
            what = "the scale" if s.kind == "mesh" else "a size"
            diags.append(Diagnostic(
                f"`{s.written}`: {what} of `{s.body}` is {value:g} with the parameters of "
                f"the run ({shown}); it must be a positive number (give parameters that "
                "keep the shape, or another size)", s.span))
            break
    if diags:
        raise ModelError(diags, filename=model.filename, source=model.source)
