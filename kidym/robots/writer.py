"""Write composite bodies as a readable kidym model file (``.kdm``).

Each body is one record ``Child~Parent | placement, joint motion | centre of mass,
inertia;`` (docs/language.md §2.4):

* the **placement** (the joint's origin, with the fixed joints merged in) is written
  ``Sx, Sy, Sz`` then ``Rz(yaw), Ry(pitch), Rx(roll)`` — URDF's fixed-axis roll, pitch,
  yaw, R = Rz·Ry·Rx — with the angles as numeric literals, i.e. in **degrees**
  (the language's degrees rule);
* the **joint motion** about or along the unit axis ``a`` of the joint frame is
  ``Rx(q)``/``Ry(q)``/``Rz(q)`` (``Sx(q)`` … for a prismatic joint), with ``-q`` for a
  negative axis; about any other axis it is ``Rz(φ), Ry(θ), Rz(q), Ry(-θ), Rz(-φ)``,
  where ``Rz(φ)·Ry(θ)`` turns z onto ``a`` (θ = angle between z and ``a``, φ the
  azimuth of ``a``): a turn by ``q`` about ``a``;
* the **inertia** is the composite body's, about its centre of mass and in the body
  axes: ``Sx, Sy, Sz`` to the centre, then ``m, Jx, Jy, Jz, Jxy, Jyz, Jxz`` (kidym's
  products are the positive integrals, ``Jxy = −Ixy`` of the tensor).
"""

from __future__ import annotations

import math
import re

import numpy as np

from kidym.kinematics.names import generated_names
from kidym.robots.composite import CompositeBody, link_frames
from kidym.robots.tree import RobotJoint, RobotTree

_VALID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: names the language gives a meaning of its own (constants, time, functions, transforms)
RESERVED = frozenset({
    "t", "g", "pi", "exp", "inf", "_inf", "w",
    "sqrt", "sin", "cos", "tg", "arcsin", "arctg", "arccos", "ln", "sh", "ch", "arsh", "abs",
    "rand", "ceil", "floor", "ipl", "spln", "summ", "intg", "root", "rest", "diff",
    "Rx", "Ry", "Rz", "Sx", "Sy", "Sz", "Q", "m", "Jx", "Jy", "Jz", "Jxy", "Jyz", "Jxz",
    "Jyx", "Jzy", "Jzx", "J",
})
FLOATING = ("x", "y", "z", "l0", "l1", "l2", "l3", "vx", "vy", "vz")


def kidym_name(raw: str, used: set[str]) -> str:
    """A kidym name for ``raw`` that is not in ``used`` (which it is added to).

    ``raw`` itself where it is a plain name (ASCII letters, digits, ``_``, not starting
    with a digit) that the language does not reserve; otherwise every other character
    becomes ``_``, a leading digit gets the prefix ``j_`` and a reserved name the suffix
    ``_``. A name taken already gets ``_2``, ``_3`` ….
    """
    name = raw if _VALID.match(raw) else re.sub(r"[^A-Za-z0-9_]", "_", raw)
    if not name or name[0].isdigit():
        name = "j_" + name
    if name in RESERVED:
        name += "_"
    base, k = name, 2
    while name in used:
        name, k = f"{base}_{k}", k + 1
    used.add(name)
    return name


def comment_text(text: str) -> str:
    """``text`` safe inside a ``# … #`` comment (no ``#``, braces or line breaks)."""
    return re.sub(r"[#{}\r\n\t]", "_", text)


def num(x: float) -> str:
    """``x`` as short as it reads back to within 4 units in the last place: 15
    significant digits hide the rounding of the sums (``-0.2``, not
    ``-0.20000000000000004``); ``-0`` is written ``0``."""
    x = float(x)
    short = f"{x:.15g}"
    if abs(float(short) - x) <= 4 * math.ulp(x):
        x = float(short)
    if x == 0.0:
        return "0"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def rpy(R: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw with ``R = Rz(yaw)·Ry(pitch)·Rx(roll)``."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if math.hypot(R[0, 0], R[1, 0]) < 1e-12:      # gimbal lock: yaw taken as 0
        return math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0
    return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])


def rotation_quaternion(R: np.ndarray) -> tuple[float, float, float, float]:
    """The unit quaternion ``(w, x, y, z)`` of the rotation matrix ``R``, ``w ≥ 0``
    (Shepperd's method: the largest of the four squares first)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    squares = [1 + tr, 1 + R[0, 0] - R[1, 1] - R[2, 2], 1 - R[0, 0] + R[1, 1] - R[2, 2],
               1 - R[0, 0] - R[1, 1] + R[2, 2]]
    k = int(np.argmax(squares))
    r = math.sqrt(squares[k])
    if k == 0:
        q = (r / 2, (R[2, 1] - R[1, 2]) / (2 * r), (R[0, 2] - R[2, 0]) / (2 * r),
             (R[1, 0] - R[0, 1]) / (2 * r))
    elif k == 1:
        q = ((R[2, 1] - R[1, 2]) / (2 * r), r / 2, (R[0, 1] + R[1, 0]) / (2 * r),
             (R[0, 2] + R[2, 0]) / (2 * r))
    elif k == 2:
        q = ((R[0, 2] - R[2, 0]) / (2 * r), (R[0, 1] + R[1, 0]) / (2 * r), r / 2,
             (R[1, 2] + R[2, 1]) / (2 * r))
    else:
        q = ((R[1, 0] - R[0, 1]) / (2 * r), (R[0, 2] + R[2, 0]) / (2 * r),
             (R[1, 2] + R[2, 1]) / (2 * r), r / 2)
    q = np.asarray(q) / np.linalg.norm(q)
    if q[0] < 0:
        q = -q
    return tuple(float(v) for v in q)


def _placement(T: np.ndarray) -> list[str]:
    items = [f"S{a}({num(v)})" for a, v in zip("xyz", T[:3, 3]) if v != 0.0]
    roll, pitch, yaw = rpy(T[:3, :3])
    for axis, angle in (("z", yaw), ("y", pitch), ("x", roll)):
        if abs(angle) > 1e-15:
            items.append(f"R{axis}({num(math.degrees(angle))})")
    return items


def _motion(joint: RobotJoint, q: str) -> list[str]:
    kind = "S" if joint.type == "prismatic" else "R"
    a = joint.axis
    for k, axis in enumerate("xyz"):
        if abs(a[k]) == 1.0 and not any(a[i] for i in range(3) if i != k):
            return [f"{kind}{axis}({q if a[k] > 0 else '-' + _wrap(q)})"]
    theta = math.degrees(math.atan2(math.hypot(a[0], a[1]), a[2]))
    phi = math.degrees(math.atan2(a[1], a[0]))
    turn = [f"Rz({num(phi)})"] if phi else []
    back = [f"Rz({num(-phi)})"] if phi else []
    return [*turn, f"Ry({num(theta)})", f"{kind}z({q})", f"Ry({num(-theta)})", *back]


def _planar_motion(joint: RobotJoint, x: str, y: str, th: str) -> list[str]:
    """In the plane normal to the axis: ``Sx(x), Sy(y), Rz(th)``, between the turn of z
    onto the axis and back where the axis is not z."""
    a = joint.axis
    motion = [f"Sx({x})", f"Sy({y})", f"Rz({th})"]
    if a[2] == 1.0 and not a[0] and not a[1]:
        return motion
    theta = math.degrees(math.atan2(math.hypot(a[0], a[1]), a[2]))
    phi = math.degrees(math.atan2(a[1], a[0]))
    turn = [f"Rz({num(phi)})"] if phi else []
    back = [f"Rz({num(-phi)})"] if phi else []
    return [*turn, f"Ry({num(theta)})", *motion, f"Ry({num(-theta)})", *back]


def _wrap(q: str) -> str:
    return q if _VALID.match(q) else f"({q})"


def _inertia(body: CompositeBody) -> list[str]:
    items = [f"S{a}({num(v)})" for a, v in zip("xyz", body.com) if v != 0.0]
    J = body.tensor
    items.append(f"m({num(body.mass)})")
    items += [f"Jx({num(J[0, 0])})", f"Jy({num(J[1, 1])})", f"Jz({num(J[2, 2])})"]
    for name, (i, j) in (("Jxy", (0, 1)), ("Jyz", (1, 2)), ("Jxz", (0, 2))):
        if J[i, j] != 0.0:
            items.append(f"{name}({num(-J[i, j])})")
    return items


def _limits(joint: RobotJoint) -> str:
    if joint.type == "planar":
        return "planar"
    unit = "m" if joint.type == "prismatic" else "rad"
    parts = [joint.type]
    if joint.lower is not None and joint.upper is not None and joint.type != "continuous":
        parts.append(f"limits {num(joint.lower)} .. {num(joint.upper)} {unit}")
    if joint.effort is not None:
        parts.append(f"effort {num(joint.effort)} {'N' if unit == 'm' else 'N m'}")
    if joint.velocity is not None:
        parts.append(f"velocity {num(joint.velocity)} {unit}/s")
    return ", ".join(parts)


def _coincide(tree: RobotTree, bodies: list[CompositeBody], body_names: dict[str, str]) -> str:
    """``COINCIDE := A(x, y, z) = B(x, y, z), …;`` of the tree's loop closures, each
    point moved into the frame of the body its link was merged into."""
    frames = link_frames(tree, bodies)
    items, names = [], []
    for loop in tree.loops:
        sides = []
        for link, point in ((loop.link_a, loop.point_a), (loop.link_b, loop.point_b)):
            body, T = frames[link] if link is not None else (None, np.eye(4))
            p = T[:3, :3] @ np.asarray(point, float) + T[:3, 3]
            where = body_names[body] if body is not None else "GROUND"
            sides.append(f"{where}({', '.join(num(v) for v in p)})")
        items.append(" = ".join(sides))
        names.append(comment_text(loop.name))
    return ("# loops closed (coinciding points): " + ", ".join(names) + " #\n"
            + "COINCIDE := " + ", ".join(items) + ";")


def write_model(tree: RobotTree, bodies: list[CompositeBody], *, mimic: str = "free",
                source_name: str = "", gravity: float = 9.81
                ) -> tuple[str, dict[str, str], dict[str, str], dict[str, tuple]]:
    """The model text, the joint → coordinate and link → body name maps, and each planar
    joint's coordinates and pseudo-velocities ``(x, y, th, vx, vy)``.

    Parameters
    ----------
    tree, bodies
        The robot and its composite bodies (:func:`~kidym.robots.composite.composite_bodies`).
    mimic : {"free", "follow"}
        ``"free"``: a mimic joint has a coordinate of its own (as Pinocchio loads it);
        ``"follow"``: its motion is ``multiplier · q + offset`` of the joint it mimics
        (the coupling is kept exactly and the joint is no degree of freedom).
    source_name : str
        Shown in the header comment.
    gravity : float
        Gravity acceleration along −z, m/s².
    """
    if mimic not in ("free", "follow"):
        raise ValueError(f"mimic must be 'free' or 'follow', got {mimic!r}")
    used: set[str] = set(RESERVED)
    floating = any(b.joint is None for b in bodies)
    if floating:
        used.update(FLOATING)
    # the names kidym generates for the loops' constraints (language §2.4e)
    used.update(f"coin{a}{k}" for k in range(1, len(tree.loops) + 1) for a in "XYZ")
    body_names = {b.name: kidym_name(b.name, used) for b in bodies}
    for b in body_names.values():
        used.update(generated_names(b))
    coords: dict[str, str] = {}
    planar: dict[str, tuple[str, str, str, str, str]] = {}
    balls: dict[str, tuple[str, str, str, str]] = {}
    for b in bodies:
        if b.joint is not None and b.joint.type in ("revolute", "continuous", "prismatic"):
            if not (mimic == "follow" and b.joint.mimic is not None):
                coords[b.joint.name] = kidym_name(b.joint.name, used)
        elif b.joint is not None and b.joint.type == "planar":
            planar[b.joint.name] = tuple(kidym_name(f"{b.joint.name}_{part}", used)
                                         for part in ("x", "y", "th", "vx", "vy"))
        elif b.joint is not None and b.joint.type == "ball":
            if b.parent is not None:
                raise ValueError(f"joint `{b.joint.name}` is a ball joint of a moving body, "
                                 "which is not imported yet (kidym turns a body by a "
                                 "quaternion on the fixed frame only)")
            balls[b.joint.name] = tuple(kidym_name(f"{b.joint.name}_l{k}", used)
                                        for k in range(4))
    joints = {j.name: j for j in tree.joints}

    def coordinate_of(joint: RobotJoint, depth: int = 0) -> str:
        if mimic == "follow" and joint.mimic is not None:
            if depth > len(joints):
                raise ValueError(f"the mimic joints of `{joint.name}` form a cycle")
            lead = joints[joint.mimic.joint]
            if lead.type not in ("revolute", "continuous", "prismatic"):
                raise ValueError(f"joint `{joint.name}` mimics joint `{lead.name}`, which "
                                 f"has no coordinate (type {lead.type})")
            q = _wrap(coordinate_of(lead, depth + 1))
            expr = q if joint.mimic.multiplier == 1.0 else f"{num(joint.mimic.multiplier)}*{q}"
            if joint.mimic.offset:
                expr += f" + {num(joint.mimic.offset)}" if joint.mimic.offset > 0 else \
                    f" - {num(-joint.mimic.offset)}"
            return expr
        return coords[joint.name]

    lines = [f"# {comment_text(tree.name)}: imported by `kidym import` from "
             f"{comment_text(source_name or tree.filename)}.",
             "  Each body is a link, with the links fixed to it merged in (mass, centre of",
             "  mass, inertia about the centre of mass in the body axes); each coordinate is",
             "  the joint of the same name, in rad or m. Angles written as plain numbers are",
             "  in degrees (the language's degrees rule). Gravity along -z. #", ""]
    renamed = [(j, c) for j, c in coords.items() if j != c]
    renamed += [(lk, b) for lk, b in body_names.items() if lk != b]
    if renamed:
        lines.append("# renamed (not kidym names, or taken): "
                     + ", ".join(f"{comment_text(a)} -> {b}" for a, b in renamed) + " #")
    lines += ["CALCULATION := DYNAMICS;", "", f"g = {num(gravity)};", ""]
    for b in bodies:
        name = body_names[b.name]
        head = name if b.parent is None else f"{name}~{body_names[b.parent]}"
        if b.joint is None:
            chain = ["Sx(x)", "Sy(y)", "Sz(z)", "Q(l0, l1, l2, l3)"]
            axes = "; velocities x't, y't, z't in the fixed axes" if tree.free_root else ""
            lines.append(f"# {name}: the floating base (position, quaternion){axes} #")
        else:
            j = b.joint
            chain = _placement(b.placement)
            note = f"joint {comment_text(j.name)}: {_limits(j)}"
            if j.type == "fixed":
                pass
            elif j.type == "planar":
                x, y, th, _, _ = planar[j.name]
                chain += _planar_motion(j, x, y, th)
                note += f"; coordinates {x}, {y}, {th}"
            elif j.type == "ball":
                # the quaternion of the body on the fixed frame (the placement's turn,
                # then the joint's): its start is the placement's turn
                chain = [f"S{a}({num(v)})" for a, v in zip("xyz", b.placement[:3, 3])
                         if v != 0.0]
                chain.append(f"Q({', '.join(balls[j.name])})")
                note += ("; quaternion " + ", ".join(balls[j.name])
                         + f" (the body's turn on the fixed frame), angular velocity "
                           f"ωX{name}, ωY{name}, ωZ{name} in the body axes")
            elif j.type in ("revolute", "continuous", "prismatic"):
                chain += _motion(j, coordinate_of(j))
                if j.mimic is not None:
                    how = "followed" if mimic == "follow" else "freed: own coordinate"
                    note += (f"; mimics {comment_text(j.mimic.joint)} x "
                             f"{num(j.mimic.multiplier)} + {num(j.mimic.offset)} ({how})")
            else:
                raise ValueError(f"joint `{j.name}`: {j.type} joints below the root are not "
                                 "imported yet")
            if j.friction:
                note += (f"; Coulomb friction {num(j.friction)} of the file not modelled "
                         "(see the import's warnings)")
            lines.append(f"# {note} #")
        if len(b.links) > 1:
            lines.append("# merged links: " + ", ".join(comment_text(n) for n in b.links)
                         + " #")
        meshes = [mesh for link in b.links for mesh in tree.links[link].meshes]
        if meshes:
            lines.append("# visual meshes: " + ", ".join(comment_text(x) for x in meshes) + " #")
        if b.repaired_from is not None:
            lines.append("# inertia replaced by the nearest admissible tensor (see the "
                         "import's warnings) #")
        lines.append(f"{head} | {', '.join(chain) or 'Sx(0)'} | {', '.join(_inertia(b))};")
    lines.append("")
    if floating and tree.free_root is None and not planar:
        lines.append("PSEUDOVELOCITIES := vx, vy, vz;")
    if floating and tree.free_root is None:
        lines.append("# the base's velocity in its own axes (as Pinocchio's free-flyer) #")
        base = body_names[bodies[0].name]
        for k, c in enumerate("xyz", 1):
            lines.append(f"{c}'t = S{k}1{base}*vx + S{k}2{base}*vy + S{k}3{base}*vz;")
    if planar:
        base_v = ["vx", "vy", "vz"] if floating and tree.free_root is None else []
        lines.append("PSEUDOVELOCITIES := " + ", ".join(
            [*base_v, *(f"{vx}, {vy}" for _, _, _, vx, vy in planar.values())]) + ";")
        lines.append("# planar joints: the velocity in the plane in the moving axes "
                     "(as Pinocchio's) #")
        for x, y, th, vx, vy in planar.values():
            lines.append(f"{x}'t = cos({th})*{vx} - sin({th})*{vy};")
            lines.append(f"{y}'t = sin({th})*{vx} + cos({th})*{vy};")
    turned = [body_names[b.name] for b in bodies
              if b.joint is None or b.joint.type == "ball"]
    if turned:
        # body axes always: kidym would take the fixed axes for a base of equal moments
        # about its origin (language §2.4), Pinocchio's and MuJoCo's are the body's
        lines.append(f"ANGULAR VELOCITY := {', '.join(f'{n}(body)' for n in turned)};")
    damped = [(b.joint, coords[b.joint.name]) for b in bodies if b.joint is not None
              and b.joint.damping and b.joint.name in coords]
    if damped:
        lines.append("# joint damping of the file (<dynamics damping>): the force -c*q't on "
                     "each joint's coordinate #")
        lines += [f"Ddamp.{q} = {num(j.damping)};" for j, q in damped]
    if tree.loops:
        lines.append(_coincide(tree, bodies, body_names))
    lines.append("GRAVITY := 0, 0, -g;")
    start = []
    for b in bodies:
        if b.joint is not None and b.joint.type == "ball":
            start += [f"{c}({num(v)})" for c, v in
                      zip(balls[b.joint.name], rotation_quaternion(b.placement[:3, :3]))]
    if floating and tree.free_root is None:
        lines.append(f"INITIAL := t(0), {', '.join(['l0(1)', *start])};")
    elif floating:
        pos, quat = tree.free_root
        start = [f"{c}({num(v)})" for c, v in zip("xyz", pos)] + \
            [f"l{k}({num(v)})" for k, v in enumerate(quat)] + start
        lines.append("# the start of the free root: its position and quaternion in the file #")
        lines.append(f"INITIAL := t(0), {', '.join(start)};")
    elif start:
        lines.append(f"INITIAL := t(0), {', '.join(start)};")
    lines.append("TIME := t(0, 1);")
    return "\n".join(lines) + "\n", coords, body_names, planar, balls
