"""Surfaces drawn by the 3-D viewer: ``СЦЕНА := плоскость(h), сфера_внутри(R0, cx, cy, cz);``.

The viewer (:mod:`kidym.report.animation`) draws the surfaces a model implies — those a
body rolls on (``КАЧЕНИЕ``: a plane, the inside or the outside of a sphere) — and those
the model declares for display with ``СЦЕНА`` (``ОТОЧЕННЯ``, ``SCENE``), for a model
whose contact is written by hand (seed 000's ball with its constraint (20), the rolling
disc with its ``x't = …`` formulas). The items use the surface spellings of
``КАЧЕНИЕ`` (docs/language.md §2.4b) and mean the same surfaces: ``плоскость(h)`` the
plane ``z = h`` of the fixed axes, ``сфера_внутри(R0[, cx, cy, cz])`` a bowl (drawn
open, its lower part), ``сфера_снаружи(R0[, cx, cy, cz])`` a whole sphere. Heights and
centres are formulas of parameters and ``t`` (a moving surface is drawn moving), radii
of parameters. Display only: nothing of the equations changes.
"""

from __future__ import annotations

import symengine as se

from kidym.lang import ast
from kidym.model.model import SceneSurface

#: Spellings of the drawable surfaces (lower case) → kind; those of ``КАЧЕНИЕ``.
SURFACES = {"плоскость": "plane", "площина": "plane", "plane": "plane",
            "сфера_внутри": "sphere_inside", "сфера_всередині": "sphere_inside",
            "sphere_inside": "sphere_inside",
            "сфера_снаружи": "sphere_outside", "сфера_зовні": "sphere_outside",
            "sphere_outside": "sphere_outside"}
_IMPLICIT = {"поверхность", "поверхня", "surface"}
_NO_SIDE = {"сфера", "sphere"}


def read_items(b, ins: ast.Instruction) -> list[SceneSurface]:
    """The surfaces of one ``СЦЕНА`` instruction; located errors for anything else.

    Parameters
    ----------
    b : kidym.model.build._Builder
        The builder (``error``, ``formula``, ``text``).
    ins : ast.Instruction
        The ``СЦЕНА`` instruction.
    """
    usage = (f"`{ins.written}` lists surfaces to draw: `плоскость(h)` (the plane z = h), "
             "`сфера_внутри(R0[, cx, cy, cz])` (a bowl) or `сфера_снаружи(R0[, cx, cy, cz])`")
    out: list[SceneSurface] = []
    for item in ins.items:
        if not isinstance(item, ast.Call):
            b.error(f"{usage}; got `{b.text(item)}`", item.span)
            continue
        word = item.func.name.lower()
        kind = SURFACES.get(word)
        if word in _NO_SIDE:
            b.error(f"`{ins.written}`: say from which side the sphere is seen: `сфера_внутри` "
                    "(`сфера_всередині`, `sphere_inside`: a bowl) or `сфера_снаружи` "
                    "(`сфера_зовні`, `sphere_outside`)", item.func.span)
            continue
        if word in _IMPLICIT:
            b.error(f"`{ins.written}`: the viewer draws planes and spheres only, not an "
                    f"implicit surface `{item.func.name}(…)`", item.func.span)
            continue
        if kind is None or not (len(item.args) == 1
                                or (kind != "plane" and len(item.args) == 4)):
            b.error(f"{usage}; got `{b.text(item)}`", item.span)
            continue
        what = ("plane height",) if kind == "plane" else (
            "sphere radius", "sphere centre x", "sphere centre y", "sphere centre z")
        parts = [b.formula(a, "value", f"{w} in `{ins.written}`")
                 for a, w in zip(item.args, what)]
        if any(p is None for p in parts):
            continue
        if kind == "plane":
            out.append(SceneSurface(kind, height=parts[0], span=item.span))
        else:
            out.append(SceneSurface(kind, radius=parts[0],
                                    centre=tuple(parts[1:]) or (se.Integer(0),) * 3,
                                    span=item.span))
    return out


def check_items(b, items: list[SceneSurface], written: str) -> tuple[SceneSurface, ...]:
    """Radii of parameters, heights and centres of parameters and ``t`` (located errors)."""
    for s in items:
        b.check_constant(s.height, f"the plane height in `{written}`", s.span, allow_time=True)
        b.check_constant(s.radius, f"the sphere radius in `{written}`", s.span)
        for c in s.centre:
            b.check_constant(c, f"the sphere centre in `{written}`", s.span, allow_time=True)
    return tuple(items)


def implied_surfaces(model) -> tuple[SceneSurface, ...]:
    """The surfaces ``model`` shows: those its bodies roll on (``КАЧЕНИЕ``; an implicit
    ``поверхность(f)`` is not drawn), then those of ``СЦЕНА``; each once."""
    out: list[SceneSurface] = []
    for r in model.rolling:
        if r.surface == "plane":
            out.append(SceneSurface("plane", height=r.height, source=r.body))
        elif r.surface in ("sphere_inside", "sphere_outside"):
            out.append(SceneSurface(r.surface, radius=r.sphere_radius, centre=r.centre,
                                    source=r.body))
    out += model.scene
    seen, unique = set(), []
    for s in out:
        key = (s.kind, str(s.height), str(s.radius), tuple(map(str, s.centre)))
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return tuple(unique)
