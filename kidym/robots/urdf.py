"""Read a URDF file into a :class:`~kidym.robots.tree.RobotTree`.

The robot is parsed by `yourdfpy` (the ``robots`` extra). Before that, one pass over
the XML elements (lxml, which yourdfpy uses too) checks what yourdfpy would accept
silently or fail on with a bare traceback — a missing attribute that it fills with a
default (an inertia ``ixx`` of 1), a number that is not one, an unknown joint type —
and locates each problem in the file (``FILE:LINE:COL: error: …``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kidym.errors import Diagnostic, ParseError, Span
from kidym.robots.tree import (
    JOINT_TYPES,
    LinkInertia,
    Mimic,
    RobotJoint,
    RobotLink,
    RobotTree,
    _closest,
    find_root,
)

_MOVING = ("revolute", "continuous", "prismatic", "planar")
_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
#: (element path, attribute, count of numbers, required)
_NUMBERS = {
    "origin": (("xyz", 3, False), ("rpy", 3, False)),
    "axis": (("xyz", 3, True),),
    "mass": (("value", 1, True),),
    "inertia": tuple((a, 1, True) for a in _INERTIA),
    "limit": (("lower", 1, False), ("upper", 1, False), ("effort", 1, False),
              ("velocity", 1, False)),
    "mimic": (("multiplier", 1, False), ("offset", 1, False)),
}


def _span(text_lines: list[str], line: int | None, needle: str | None = None) -> Span | None:
    if not line:
        return None
    col = 1
    if 1 <= line <= len(text_lines):
        src = text_lines[line - 1]
        at = src.find(needle) if needle else -1
        if at < 0:
            at = len(src) - len(src.lstrip())
        col = at + 1
        return Span(line, col, col + len(needle) if needle and at >= 0 else None)
    return Span(line, col)


def _check_xml(root, lines: list[str]) -> list[Diagnostic]:
    """Located problems of the XML that yourdfpy would not report clearly."""
    out: list[Diagnostic] = []

    def err(el, msg, needle=None):
        out.append(Diagnostic(msg, _span(lines, el.sourceline, needle)))

    if root.tag != "robot":
        err(root, f"a URDF file starts with `<robot>`, not `<{root.tag}>`", f"<{root.tag}")
        return out
    seen: dict[tuple[str, str], int] = {}
    for el in root:
        if el.tag not in ("link", "joint"):
            continue
        name = el.get("name")
        if not name:
            err(el, f"a `<{el.tag}>` needs a `name`", f"<{el.tag}")
            continue
        if (el.tag, name) in seen:
            err(el, f"{el.tag} `{name}` is defined twice (first on line "
                    f"{seen[(el.tag, name)]})", f'"{name}"')
        seen.setdefault((el.tag, name), el.sourceline)
        if el.tag == "joint":
            jtype = el.get("type")
            if jtype not in JOINT_TYPES:
                near = _closest(jtype or "", JOINT_TYPES)
                hint = f"did you mean `{near}`? " if near else ""
                err(el, f"joint `{name}` has type `{jtype}`, which is not a URDF joint type "
                        f"({hint}expected one of {', '.join(JOINT_TYPES)})",
                    f'"{jtype}"' if jtype else "<joint")
            for part in ("parent", "child"):
                sub = el.find(part)
                if sub is None or not sub.get("link"):
                    err(sub if sub is not None else el,
                        f"joint `{name}` needs `<{part} link=\"…\"/>`",
                        f"<{part}" if sub is not None else "<joint")
        for sub in el.iter():
            for attr, count, required in _NUMBERS.get(sub.tag, ()):
                value = sub.get(attr)
                if value is None:
                    if required:
                        err(sub, f"`<{sub.tag}>` of {el.tag} `{name}` needs `{attr}`",
                            f"<{sub.tag}")
                    continue
                words = value.split()
                try:
                    nums = [float(w) for w in words]
                except ValueError:
                    nums = None
                if nums is None or len(nums) != count or not all(map(math.isfinite, nums)):
                    what = "a finite number" if count == 1 else f"{count} finite numbers"
                    err(sub, f"`{attr}` of `<{sub.tag}>` in {el.tag} `{name}` must be {what}, "
                             f"got `{value}`", f'{attr}="')
                elif sub.tag == "axis" and not any(nums) and el.get("type") in _MOVING:
                    err(sub, f"the axis of joint `{name}` is the zero vector", f'{attr}="')
                elif sub.tag == "mass" and nums[0] < 0:
                    err(sub, f"link `{name}` has a negative mass ({value})", f'{attr}="')
    return out


def read_urdf(path: str | Path) -> RobotTree:
    """Read a URDF file.

    Parameters
    ----------
    path : str or Path
        The ``.urdf`` file.

    Returns
    -------
    RobotTree
        Its links (with their inertia) and joints, the root link found.

    Raises
    ------
    ParseError
        With every located problem of the file: XML syntax, a missing or non-numeric
        attribute, an unknown joint type, a joint naming a link that is not defined,
        a cycle, no single root.
    ImportError
        When `yourdfpy` is not installed (``pip install 'kidym[robots]'``).
    """
    from lxml import etree

    path = Path(path)
    filename = str(path)
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    try:
        root = etree.fromstring(data, etree.XMLParser(remove_comments=True))
    except etree.XMLSyntaxError as exc:
        line, col = (exc.position if exc.position else (exc.lineno or 1, 1))
        raise ParseError([Diagnostic(f"not well-formed XML: {exc.msg}",
                                     Span(max(line, 1), max(col, 1)))],
                         filename=filename, source=text) from None
    problems = _check_xml(root, lines)
    if problems:
        raise ParseError(problems, filename=filename, source=text)
    try:
        import yourdfpy
    except ImportError as exc:
        raise ImportError("reading URDF files needs yourdfpy: pip install "
                          "'kidym[robots]'") from exc
    try:
        robot = yourdfpy.URDF.load(filename, build_scene_graph=False, load_meshes=False,
                                   build_collision_scene_graph=False,
                                   load_collision_meshes=False).robot
    except Exception as exc:  # yourdfpy's own checks, reported as an error of the file
        raise ParseError([Diagnostic(f"yourdfpy cannot read the robot: {exc}")],
                         filename=filename, source=text) from exc
    spans = {(el.tag, el.get("name")): _span(lines, el.sourceline, f'"{el.get("name")}"')
             for el in root if el.tag in ("link", "joint")}
    links = {lk.name: _link(lk, spans.get(("link", lk.name))) for lk in robot.links}
    joints = [_joint(j, spans.get(("joint", j.name))) for j in robot.joints]
    problems = []
    names = {j.name for j in joints}
    for j in joints:
        if j.mimic is not None and j.mimic.joint not in names:
            problems.append(Diagnostic(f"joint `{j.name}` mimics joint `{j.mimic.joint}`, "
                                       "which is not defined", j.span))
        if j.lower is not None and j.upper is not None and j.lower > j.upper:
            problems.append(Diagnostic(f"joint `{j.name}` has lower limit {j.lower} above "
                                       f"its upper limit {j.upper}", j.span))
    root_link, structural = find_root(links, joints)
    problems += structural
    if problems:
        raise ParseError(problems, filename=filename, source=text)
    return RobotTree(name=robot.name, links=links, joints=tuple(joints), root=root_link,
                     filename=filename, source=text)


def _link(lk, span: Span | None) -> RobotLink:
    meshes = tuple(v.geometry.mesh.filename for v in lk.visuals
                   if v.geometry is not None and v.geometry.mesh is not None)
    inertial = lk.inertial
    if inertial is None or inertial.mass is None:
        return RobotLink(lk.name, None, span, meshes)
    origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
    tensor = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia,
                                                                           float)
    return RobotLink(lk.name, LinkInertia(float(inertial.mass), origin, tensor), span, meshes)


def _joint(j, span: Span | None) -> RobotJoint:
    origin = np.eye(4) if j.origin is None else np.asarray(j.origin, float)
    axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, float)
    big = np.abs(axis).max()
    if big > 0:     # scaled first: `1e300 0 0` is the x axis too
        axis = axis / big
        axis = axis / np.linalg.norm(axis)
    else:
        axis = np.array([1.0, 0.0, 0.0])  # (a fixed joint's: it has none)
    lim = j.limit
    mimic = None
    if j.mimic is not None:
        mimic = Mimic(j.mimic.joint,
                      1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier),
                      0.0 if j.mimic.offset is None else float(j.mimic.offset))

    def num(x):
        return None if x is None else float(x)

    return RobotJoint(name=j.name, type=j.type, parent=j.parent, child=j.child,
                      origin=origin, axis=axis,
                      lower=num(lim.lower) if lim else None,
                      upper=num(lim.upper) if lim else None,
                      effort=num(lim.effort) if lim else None,
                      velocity=num(lim.velocity) if lim else None,
                      mimic=mimic, span=span)
