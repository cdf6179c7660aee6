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
  products are the positive integrals, ``Jxy = −Ixy`` of the tensor);
* a **loop** closed by coinciding points is ``COINCIDE := A(x, y, z) = B(x, y, z);``,
  or, where all its joints turn about parallel axes (:func:`planar_loop`), the two
  in-plane components of the points' distance in its common ancestor's axes as
  ``EQUATIONS`` (the three components would have a Jacobian of rank 2).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

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


#: joint axes of a loop parallel to this angle (rad) make it planar
_PARALLEL = 1e-6


def _to_body(bodies: dict[str, CompositeBody], body: str | None, top: str | None
             ) -> tuple[list[CompositeBody], np.ndarray] | None:
    """The bodies from ``body`` up to (not including) its ancestor ``top`` and the
    transform ``top ← body`` at the zero pose; ``None`` where ``top`` is no ancestor."""
    path, T = [], np.eye(4)
    while body != top:
        if body is None:
            return None
        b = bodies[body]
        path.append(b)
        T = b.placement @ T
        body = b.parent
    return path, T


#: Characters a mesh's path may not hold in a model file (a quote ends the string, `#`
#: `{` `}` open comments, `;` ends the statement).
_NOT_IN_A_STRING = re.compile(r'["#{};\x00-\x1f\x7f-\x9f]')


def _mesh_file(tree: RobotTree, written: str) -> Path | None:
    """The file of a visual mesh: a path relative to the robot file's folder, absolute,
    ``file://…``, or ``package://PKG/…`` under a folder ``PKG`` above the robot file."""
    base = Path(tree.filename).absolute().parent
    if written.startswith("file://"):
        return Path(written[len("file://"):])
    if written.startswith("package://"):
        package, _, rest = written[len("package://"):].partition("/")
        for folder in (base, *base.parents):
            if folder.name == package:
                return folder / rest
        return None
    if "://" in written:
        return None
    return base / written


def mesh_shapes(tree: RobotTree, bodies: list[CompositeBody],
                body_names: dict[str, str]) -> list[str]:
    """``Body(mesh("…", s))`` items of ``SHAPES`` for the bodies whose visual geometry is
    one STL or OBJ mesh of the body's own link, placed at the link frame (the body frame,
    where ``SHAPES`` draws a mesh) with a uniform scale, a file that reads as a mesh, and
    the model's meshes within :data:`kidym.model.mesh.MAX_TRIANGLES` together. The others
    stay listed in comments only (a mesh placed off the link frame, of a merged link, of
    another type, not found)."""
    from kidym.model.mesh import MAX_TRIANGLES, SUFFIXES, MeshError, read_mesh

    out, triangles = [], 0
    for b in bodies:
        if sum(len(tree.links[n].meshes) for n in b.links) != 1:
            continue
        visuals = tree.links[b.links[0]].visuals
        if len(visuals) != 1:
            continue
        v = visuals[0]
        if not (np.allclose(v.origin, np.eye(4), rtol=0, atol=1e-12)
                and v.scale[0] > 0 and v.scale[0] == v.scale[1] == v.scale[2]):
            continue
        path = _mesh_file(tree, v.filename)
        if path is None or path.suffix.lower() not in SUFFIXES:
            continue
        path = path.absolute()
        if _NOT_IN_A_STRING.search(str(path)):
            continue
        try:
            mesh = read_mesh(path)
        except MeshError:
            continue
        if triangles + mesh.n_triangles > MAX_TRIANGLES:
            continue
        triangles += mesh.n_triangles
        scale = "" if v.scale[0] == 1.0 else f", {num(v.scale[0])}"
        out.append(f'{body_names[b.name]}(mesh("{path}"{scale}))')
    return out


def planar_loop(tree: RobotTree, bodies: list[CompositeBody], loop
                ) -> tuple[str | None, np.ndarray, np.ndarray, np.ndarray] | None:
    """The planar form of a loop closure, or ``None`` where ``COINCIDE`` serves.

    A loop is planar where every joint between the closing point's two bodies and
    their nearest common ancestor ``C`` is revolute (or continuous) and all their axes
    are parallel (to :data:`_PARALLEL` rad) in ``C``'s axes: then the loop moves in
    planes normal to that axis ``n``, the component of the two points' distance along
    ``n`` is constant, and only the two in-plane components are constraints (the
    3-component ``COINCIDE`` would have a Jacobian of rank 2). ``None`` for a spatial
    loop, and for a planar one on the fixed frame whose joints' axes are exactly one of
    its axes (``COINCIDE`` drops the identically zero component itself).

    Returns
    -------
    ancestor : str or None
        ``C`` (composite body name; ``None`` for the fixed frame).
    e1, e2 : ndarray
        Unit vectors in ``C``'s axes spanning the plane of the loop.
    normal : ndarray
        ``n``.
    """
    by_name = {b.name: b for b in bodies}
    frames = link_frames(tree, bodies)
    ends = [frames[link][0] if link is not None else None
            for link in (loop.link_a, loop.link_b)]
    chain_a = []
    body = ends[0]
    while body is not None:
        chain_a.append(body)
        body = by_name[body].parent
    chain_a.append(None)
    top = next(b for b in chain_a if _to_body(by_name, ends[1], b) is not None)
    axes = []
    for end in ends:
        path, T = _to_body(by_name, end, top)
        for b in path:
            if b.joint is None or b.joint.type not in ("revolute", "continuous"):
                return None
            # the joint's axis in the frame of `top`: the frames above b, b's placement
            up = _to_body(by_name, b.parent, top)[1]
            axes.append(up[:3, :3] @ b.placement[:3, :3] @ np.asarray(b.joint.axis, float))
    if not axes:
        return None
    n = axes[0] / np.linalg.norm(axes[0])
    if any(np.linalg.norm(np.cross(n, a / np.linalg.norm(a))) > _PARALLEL for a in axes):
        return None
    if top is None and any(all(not np.cross(a, e).any() for a in axes) for e in np.eye(3)):
        # a loop on the fixed frame in one of its coordinate planes: COINCIDE drops the
        # component along the normal itself (identically zero, language §2.4e)
        return None
    # the distance of the points along n is constant: a loop that is not closed along
    # n keeps COINCIDE, whose run then says it cannot close
    pts = []
    for link, point in ((loop.link_a, loop.point_a), (loop.link_b, loop.point_b)):
        body, p = _point(tree, bodies, link, point)
        T = _to_body(by_name, body, top)[1]
        pts.append(T[:3, :3] @ p + T[:3, 3])
    size = max(float(np.linalg.norm(b.placement[:3, 3])) for b in by_name.values()) or 1.0
    if abs(float(n @ (pts[0] - pts[1]))) > 1e-9 * size:
        return None
    k = int(np.argmax(np.abs(n)))
    if np.linalg.norm(np.cross(n, np.eye(3)[k])) <= _PARALLEL:
        # the axis is one of C's: the plane is spanned by the other two
        e1, e2 = np.eye(3)[(k + 1) % 3], np.eye(3)[(k + 2) % 3]
    else:
        e1 = np.cross(n, np.eye(3)[int(np.argmin(np.abs(n)))])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)
    return top, e1, e2, n


def _point(tree: RobotTree, bodies: list[CompositeBody], link: str | None,
           point) -> tuple[str | None, np.ndarray]:
    """The body (``None``: the fixed frame) carrying a link's point and the point in the
    body's frame."""
    body, T = link_frames(tree, bodies)[link] if link is not None else (None, np.eye(4))
    return body, T[:3, :3] @ np.asarray(point, float) + T[:3, 3]


def _coincide(tree: RobotTree, bodies: list[CompositeBody], body_names: dict[str, str],
              loops: list) -> str:
    """``COINCIDE := A(x, y, z) = B(x, y, z), …;`` of the (spatial) loop closures, each
    point moved into the frame of the body its link was merged into."""
    items, names = [], []
    for loop in loops:
        sides = []
        for link, point in ((loop.link_a, loop.point_a), (loop.link_b, loop.point_b)):
            body, p = _point(tree, bodies, link, point)
            where = body_names[body] if body is not None else "GROUND"
            sides.append(f"{where}({', '.join(num(v) for v in p)})")
        items.append(" = ".join(sides))
        names.append(comment_text(loop.name))
    return ("# loops closed (coinciding points): " + ", ".join(names) + " #\n"
            + "COINCIDE := " + ", ".join(items) + ";")


def _sum(terms: list[tuple[float, str]]) -> str:
    """``c1*name1 + c2*name2 …`` (``name`` empty: the number alone), zero terms left
    out."""
    out = []
    for c, name in terms:
        if c == 0.0:
            continue
        mag = num(abs(c))
        body = name if mag == "1" and name else (f"{mag}*{name}" if name else mag)
        out.append(("- " if c < 0 else "+ ") + body)
    text = " ".join(out) or "0"
    return text[2:] if text.startswith("+ ") else "-" + text[2:] if text.startswith("- ") \
        else text


def _planar_equations(tree: RobotTree, bodies: list[CompositeBody],
                      body_names: dict[str, str], loop, form, names: tuple[str, str]
                      ) -> list[str]:
    """The two in-plane components of a planar loop's closure (:func:`planar_loop`) as
    formulas of the generated names ``XO…``, ``S…`` (language §4.3): the distance of
    the two points along ``e1``, ``e2`` of the common ancestor's axes."""
    top, e1, e2, n = form
    d = []          # fixed-axis components of point A − point B
    for i, c in enumerate("XYZ"):
        terms: list[tuple[float, str]] = []
        for sign, link, point in ((1.0, loop.link_a, loop.point_a),
                                  (-1.0, loop.link_b, loop.point_b)):
            body, p = _point(tree, bodies, link, point)
            if body is None:
                terms.append((sign * p[i], ""))
                continue
            b = body_names[body]
            terms.append((sign, f"{c}O{b}"))
            terms += [(sign * p[j], f"S{i + 1}{j + 1}{b}") for j in range(3)]
        d.append(_sum(terms))
    where = body_names[top] if top is not None else "the fixed frame"
    lines = [f"# loop {comment_text(loop.name)}: planar (its joints' axes are parallel to "
             f"({', '.join(num(round(float(v), 12)) for v in n)}) in the axes of {where}), "
             "closed by the two components of the points' distance in its plane #"]
    for name, e in zip(names, (e1, e2)):
        parts = []
        for i in range(3):
            # the fixed-axis component i of the unit vector e of the ancestor's axes
            w = (_sum([(float(e[m]), f"S{i + 1}{m + 1}{body_names[top]}") for m in range(3)])
                 if top is not None else _sum([(float(e[i]), "")]))
            if w != "0" and d[i] != "0":
                parts.append(f"{w if ' ' not in w else f'({w})'}*({d[i]})")
        lines.append(f"{name} = {' + '.join(parts) or '0'};")
    return lines


def write_model(tree: RobotTree, bodies: list[CompositeBody], *, mimic: str = "free",
                source_name: str = "", gravity: float = 9.81
                ) -> tuple[str, dict[str, str], dict[str, str], dict[str, tuple],
                           dict[str, tuple], dict[str, tuple[str, ...]]]:
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
    # planar loops: two equations each; spatial ones: COINCIDE (coinX<k> … in order)
    planar_forms = {loop.name: form for loop in tree.loops
                    if (form := planar_loop(tree, bodies, loop)) is not None}
    loop_constraints: dict[str, tuple[str, ...]] = {}
    k = 0
    for loop in tree.loops:
        if loop.name in planar_forms:
            loop_constraints[loop.name] = tuple(kidym_name(f"{loop.name}_{c}", used)
                                                for c in ("u", "v"))
        else:
            k += 1
            loop_constraints[loop.name] = tuple(f"coin{a}{k}" for a in "XYZ")
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
    spatial = [loop for loop in tree.loops if loop.name not in planar_forms]
    if planar_forms:
        names = [n for loop in tree.loops if loop.name in planar_forms
                 for n in loop_constraints[loop.name]]
        for loop in tree.loops:
            if loop.name in planar_forms:
                lines += _planar_equations(tree, bodies, body_names, loop,
                                           planar_forms[loop.name],
                                           loop_constraints[loop.name])
        lines.append(f"EQUATIONS := {', '.join(names)};")
    if spatial:
        lines.append(_coincide(tree, bodies, body_names, spatial))
    shapes = mesh_shapes(tree, bodies, body_names)
    if shapes:
        lines.append("# the visual meshes drawn (in the link frames; the files by their full "
                     "path) #")
        lines.append(f"SHAPES := {', '.join(shapes)};")
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
    return "\n".join(lines) + "\n", coords, body_names, planar, balls, loop_constraints
