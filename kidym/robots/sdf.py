"""Read an SDF file (SDFormat, Gazebo) into a :class:`~kidym.robots.tree.RobotTree`.

No maintained Python reader of SDFormat installs here (``python-sdformat`` 0.4.0 dates
from 2022; Drake and Gazebo's bindings are heavy), so the subset that describes a
robot's dynamics is read with lxml, each problem located in the file:

* one ``<model>`` of an ``<sdf>`` file (versions 1.4 to 1.11), its ``<link>``,
  ``<joint>`` and ``<frame>`` elements; nested models, ``<include>`` and worlds are
  errors (not imported yet);
* poses ``x y z roll pitch yaw`` (or ``rotation_format="quat_xyzw"``,
  ``degrees="true"``), relative to the frame named by ``relative_to`` (or the
  ``frame`` attribute of SDF 1.5–1.6) or to the default frame of the element: the
  model frame for a link or a frame, the child link for a joint, the link for its
  inertial;
* a joint's ``<axis><xyz>`` in the joint frame, or in the model frame under
  ``<use_parent_model_frame>`` (and in SDF 1.4), or in the frame named by
  ``expressed_in``; its ``<limit>`` kept as a comment, its ``<dynamics>``
  ``damping`` as a dissipative element;
* revolute, continuous, prismatic and fixed joints form the tree; a link that a second
  joint reaches closes a loop: a **ball** joint there makes the joint's centre
  coincide in both links (the model's ``COINCIDE``, or the two in-plane components of
  a planar loop such as Cassie's plantar four-bars: ``writer.planar_loop``); any other
  closing joint, and gearbox, screw, universal and revolute2 joints, are errors;
* an inertia left out takes SDFormat's default (mass 1 kg, unit moments, as Gazebo
  and Drake take it), with a warning naming the link.

A joint whose parent is ``world`` fixes or moves the robot on the fixed frame; without
one, the root link's frame is the fixed frame (as for a URDF file).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kidym.errors import Diagnostic, ParseError, Span
from kidym.robots.tree import (
    LinkInertia,
    LoopClosure,
    RobotJoint,
    RobotLink,
    RobotTree,
    closest,
    find_root,
)

_TREE_TYPES = ("revolute", "continuous", "prismatic", "fixed")
_NOT_YET = ("gearbox", "screw", "universal", "revolute2")
_MODEL = "__model__"


class _ProblemsError(Exception):
    """Raised inside the reader with the problems found so far."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics)
        self.diagnostics = diagnostics


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _quat_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _inverse(T: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


class _Reader:
    """One SDF file: its lines for locating problems, and the parsing helpers."""

    def __init__(self, filename: str, text: str) -> None:
        self.filename = filename
        self.text = text
        self.lines = text.splitlines()
        self.problems: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []

    def span(self, el, needle: str | None = None, strip: int = 0) -> Span | None:
        """Where ``el`` is: at ``needle`` on its line (without ``strip`` characters at
        each end of it: ``>name<`` finds a tag's text, the caret is under the name)."""
        line = getattr(el, "sourceline", None)
        if not line:
            return None
        if 1 <= line <= len(self.lines):
            src = self.lines[line - 1]
            at = src.find(needle) if needle else -1
            if at < 0:
                at = len(src) - len(src.lstrip())
                return Span(line, at + 1)
            return Span(line, at + 1 + strip, at + 1 + len(needle) - strip)
        return Span(line, 1)

    def error(self, el, message: str, needle: str | None = None, strip: int = 0) -> None:
        self.problems.append(Diagnostic(message, self.span(el, needle, strip)))

    def numbers(self, el, count: int | tuple[int, ...], what: str) -> list[float] | None:
        """The whitespace-separated finite numbers of ``el``'s text, or ``None`` with a
        located error."""
        counts = (count,) if isinstance(count, int) else count
        words = (el.text or "").split()
        try:
            nums = [float(w) for w in words]
        except ValueError:
            nums = None
        if nums is None or len(nums) not in counts or not all(map(math.isfinite, nums)):
            need = " or ".join(str(c) for c in counts)
            self.error(el, f"{what} must be {need} finite number{'s' if counts != (1,) else ''}"
                           f", got `{' '.join(words)[:60]}`")
            return None
        return nums

    def number(self, parent, tag: str, what: str) -> float | None:
        el = parent.find(tag)
        if el is None:
            return None
        nums = self.numbers(el, 1, f"`<{tag}>` of {what}")
        return None if nums is None else nums[0]


def _pose(reader: _Reader, el, what: str) -> tuple[np.ndarray, str | None]:
    """An element's ``<pose>``: the transform and the frame it is relative to
    (``None``: the element's default frame)."""
    pose = el.find("pose")
    if pose is None:
        return np.eye(4), None
    relative = pose.get("relative_to") or pose.get("frame") or None
    quat = pose.get("rotation_format", "euler_rpy") == "quat_xyzw"
    if pose.get("rotation_format", "euler_rpy") not in ("euler_rpy", "quat_xyzw"):
        reader.error(pose, f"the pose of {what} has rotation_format "
                           f"`{pose.get('rotation_format')}` (euler_rpy or quat_xyzw)")
        return np.eye(4), relative
    nums = reader.numbers(pose, 7 if quat else 6, f"the pose of {what}")
    if nums is None:
        return np.eye(4), relative
    T = np.eye(4)
    T[:3, 3] = nums[:3]
    if quat:
        norm = math.sqrt(sum(v * v for v in nums[3:]))
        if abs(norm - 1.0) > 1e-6:   # (readers differ on what such a rotation means)
            reader.error(pose, f"the pose of {what} has a quaternion of norm {norm:.6g}: "
                               "write a unit quaternion (qx qy qz qw)")
            return np.eye(4), relative
        T[:3, :3] = _quat_matrix(*nums[3:])
    else:
        angles = nums[3:]
        if pose.get("degrees", "false").strip().lower() in ("true", "1"):
            angles = [math.radians(a) for a in angles]
        T[:3, :3] = _rpy_matrix(*angles)
    return T, relative


def read_sdf(path: str | Path) -> RobotTree:
    """Read an SDF file.

    Parameters
    ----------
    path : str or Path
        The ``.sdf`` file.

    Returns
    -------
    RobotTree
        Its links and joints (the tree), the loops closed by ball joints, the root.

    Raises
    ------
    ParseError
        With every located problem of the file: XML syntax, a missing or non-numeric
        value, an unknown frame, a joint type not imported, a loop not closed by a ball
        joint, a cycle of frames or joints.
    ImportError
        When lxml is not installed (``pip install 'kidym[robots]'``).
    """
    try:
        from lxml import etree
    except ImportError as exc:
        raise ImportError("reading SDF files needs lxml: pip install 'kidym[robots]'") from exc

    path = Path(path)
    filename = str(path)
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    reader = _Reader(filename, text)
    try:
        root = etree.fromstring(data, etree.XMLParser(remove_comments=True,
                                                      resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        line, col = (exc.position if exc.position else (exc.lineno or 1, 1))
        raise ParseError([Diagnostic(f"not well-formed XML: {exc.msg}",
                                     Span(max(line, 1), max(col, 1)))],
                         filename=filename, source=text) from None
    try:
        tree = _read(reader, root)
    except _ProblemsError as exc:
        raise ParseError(exc.diagnostics, filename=filename, source=text) from None
    if reader.problems:
        raise ParseError(reader.problems, filename=filename, source=text)
    return tree


def _version(reader: _Reader, root) -> tuple[int, int]:
    raw = root.get("version")
    if raw is None:
        raise _ProblemsError([Diagnostic("an SDF file's `<sdf>` needs a `version` (e.g. 1.7)",
                                    reader.span(root))])
    try:
        major, minor = (int(p) for p in raw.strip().split(".")[:2])
    except ValueError:
        raise _ProblemsError([Diagnostic(f"the SDF version `{raw}` is not a number like 1.7",
                                    reader.span(root, raw))]) from None
    return major, minor


def _model_element(reader: _Reader, root):
    if not isinstance(root.tag, str) or root.tag != "sdf":
        raise _ProblemsError([Diagnostic(f"an SDF file starts with `<sdf>`, not `<{root.tag}>`",
                                    reader.span(root))])
    if root.find("world") is not None:
        raise _ProblemsError([Diagnostic("an SDF world is not imported: import the file of its "
                                    "robot's `<model>`", reader.span(root.find("world")))])
    models = root.findall("model")
    if len(models) != 1:
        raise _ProblemsError([Diagnostic(f"an SDF robot file holds one `<model>`, this one "
                                    f"{len(models)}", reader.span(models[1] if models
                                                                   else root))])
    model = models[0]
    for tag in ("model", "include"):
        inner = model.find(tag)
        if inner is not None:
            what = "a nested model" if tag == "model" else "an `<include>`"
            raise _ProblemsError([Diagnostic(f"{what} is not imported yet: write its links "
                                             "and joints into the model", reader.span(inner))])
    return model


def _read(reader: _Reader, root) -> RobotTree:
    version = _version(reader, root)
    model = _model_element(reader, root)
    name = model.get("name")
    if not name:
        raise _ProblemsError([Diagnostic("an SDF `<model>` needs a `name`", reader.span(model))])
    elements: dict[str, tuple[str, object]] = {}    # name → (kind, element)
    for el in model:
        if not isinstance(el.tag, str) or el.tag not in ("link", "joint", "frame"):
            continue
        ename = el.get("name")
        if not ename:
            reader.error(el, f"an SDF `<{el.tag}>` needs a `name`")
            continue
        if ename in elements or ename in (_MODEL, "world"):
            reader.error(el, f"the name `{ename}` is given twice in model `{name}` (links, "
                             "joints and frames share one set of names)", f'"{ename}"')
            continue
        elements[ename] = (el.tag, el)
    if reader.problems:
        raise _ProblemsError(reader.problems)
    model_pose, _ = _pose(reader, model, f"model `{name}`")
    frames = _Frames(reader, elements, model_pose)
    links = {n: _link(reader, frames, n, el) for n, (k, el) in elements.items() if k == "link"}
    if not links:
        raise _ProblemsError([Diagnostic(f"model `{name}` has no `<link>`", reader.span(model))])
    joints, loops = _joints(reader, frames, elements, links, version)
    if reader.problems:
        raise _ProblemsError(reader.problems)
    if any(j.parent == "world" for j in joints):
        links = {"world": RobotLink("world", None), **links}
    root_link, structural = find_root(links, joints)
    if structural:
        raise _ProblemsError(structural)
    return RobotTree(name=name, links=links, joints=tuple(joints), root=root_link,
                     filename=reader.filename, source=reader.text,
                     warnings=tuple(reader.warnings), loops=tuple(loops))


class _Frames:
    """The pose of every named frame in the model frame (links, joints, frames,
    ``__model__``, ``world``), resolved once, cycles and unknown names located."""

    def __init__(self, reader: _Reader, elements: dict, model_pose: np.ndarray) -> None:
        self.reader = reader
        self.elements = elements
        self.cache: dict[str, np.ndarray] = {_MODEL: np.eye(4), "world": _inverse(model_pose)}
        self.visiting: list[str] = []

    def default_of(self, name: str) -> str:
        kind, el = self.elements[name]
        if kind == "joint":
            child = (el.findtext("child") or "").strip()
            return child or _MODEL
        if kind == "frame":
            return el.get("attached_to") or _MODEL
        return _MODEL

    def pose(self, name: str, where=None) -> np.ndarray:
        """``__model__ ← name``."""
        if name in self.cache:
            return self.cache[name]
        if name not in self.elements:
            near = closest(name, [*self.elements, _MODEL])
            hint = f" (did you mean `{near}`?)" if near else ""
            raise _ProblemsError([Diagnostic(f"frame `{name}` is not defined in the model{hint}",
                                        self.reader.span(where, name) if where is not None
                                        else None)])
        if name in self.visiting:
            cyc = " → ".join([*self.visiting[self.visiting.index(name):], name])
            kind, el = self.elements[name]
            raise _ProblemsError([Diagnostic(f"the poses are relative to each other in a cycle: "
                                        f"{cyc}", self.reader.span(el))])
        self.visiting.append(name)
        kind, el = self.elements[name]
        T, relative = _pose(self.reader, el, f"{kind} `{name}`")
        base = relative or self.default_of(name)
        pose_el = el.find("pose")
        if base == name:
            raise _ProblemsError([Diagnostic(f"the pose of {kind} `{name}` is relative to itself",
                                        self.reader.span(pose_el))])
        out = self.pose(base, pose_el if relative else el) @ T
        self.visiting.pop()
        self.cache[name] = out
        return out


def _link(reader: _Reader, frames: _Frames, name: str, el) -> RobotLink:
    span = reader.span(el, f'"{name}"')
    meshes = tuple((uri.text or "").strip() for uri in el.iterfind("visual/geometry/mesh/uri"))
    inertial = el.find("inertial")
    defaulted = []
    mass = 1.0
    tensor = np.eye(3)
    origin = np.eye(4)
    what = f"link `{name}`"
    if inertial is None:
        defaulted.append("its whole inertial (mass 1 kg, unit moments)")
    else:
        origin, relative = _pose(reader, inertial, f"the inertial of {what}")
        if relative:
            origin = _inverse(frames.pose(name)) @ frames.pose(relative, inertial.find("pose")) \
                @ origin
        m = reader.number(inertial, "mass", what)
        if inertial.find("mass") is None:
            defaulted.append("its mass (1 kg)")
        elif m is not None:
            if m < 0:
                reader.error(inertial.find("mass"), f"{what} has a negative mass ({m})")
            mass = m
        block = inertial.find("inertia")
        if block is None:
            defaulted.append("its moments of inertia (1 kg m^2, no products)")
        else:
            vals = {}
            for key, default in (("ixx", 1.0), ("iyy", 1.0), ("izz", 1.0), ("ixy", 0.0),
                                 ("ixz", 0.0), ("iyz", 0.0)):
                v = reader.number(block, key, f"the inertia of {what}")
                if block.find(key) is None and default:
                    defaulted.append(f"{key} (1 kg m^2)")
                vals[key] = default if v is None else v
            tensor = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                               [vals["ixy"], vals["iyy"], vals["iyz"]],
                               [vals["ixz"], vals["iyz"], vals["izz"]]])
    if defaulted:
        reader.warnings.append(Diagnostic(
            f"{what} leaves {', '.join(defaulted)} to SDFormat's default: the model takes "
            "it, as Gazebo and Drake do (write the link's `<inertial>` to be sure)", span,
            "warning"))
    return RobotLink(name, LinkInertia(mass, origin, tensor), span, meshes)


def _axis(reader: _Reader, frames: _Frames, el, name: str, jtype: str,
          version: tuple[int, int]) -> tuple[np.ndarray, dict]:
    """The unit axis in the joint frame, and the limits and dynamics read."""
    axis_el = el.find("axis")
    extra: dict = {}
    if axis_el is None or axis_el.find("xyz") is None:
        if jtype in ("revolute", "continuous", "prismatic"):
            reader.warnings.append(Diagnostic(f"joint `{name}` has no `<axis><xyz>`: the "
                                              "SDFormat default, z, is taken",
                                              reader.span(el, f'"{name}"'), "warning"))
        return np.array([0.0, 0.0, 1.0]), extra
    xyz = axis_el.find("xyz")
    nums = reader.numbers(xyz, 3, f"the axis of joint `{name}`")
    if nums is None:
        return np.array([0.0, 0.0, 1.0]), extra
    a = np.asarray(nums, float)
    big = np.abs(a).max()
    if big == 0:
        if jtype != "fixed":
            reader.error(xyz, f"the axis of joint `{name}` is the zero vector")
        return np.array([0.0, 0.0, 1.0]), extra
    a = a / big
    a = a / np.linalg.norm(a)
    flag = (axis_el.findtext("use_parent_model_frame") or "").strip().lower()
    expressed = xyz.get("expressed_in")
    if expressed:
        R = frames.pose(name)[:3, :3].T @ frames.pose(expressed, xyz)[:3, :3]
        a = R @ a
    elif flag in ("1", "true") or version < (1, 5):
        a = frames.pose(name)[:3, :3].T @ a
    limit = axis_el.find("limit")
    if limit is not None:
        for key in ("lower", "upper", "effort", "velocity"):
            v = reader.number(limit, key, f"the limits of joint `{name}`")
            if v is not None and abs(v) < 1e15:     # (SDFormat writes no limit as ±1e16)
                extra[key] = v
    dynamics = axis_el.find("dynamics")
    if dynamics is not None:
        for key in ("damping", "friction"):
            v = reader.number(dynamics, key, f"the dynamics of joint `{name}`")
            if v is not None:
                if v < 0:
                    reader.error(dynamics.find(key), f"joint `{name}` has a negative {key} "
                                                     f"({v})")
                extra[key] = v
    return a, extra


def _joints(reader: _Reader, frames: _Frames, elements: dict, links: dict,
            version: tuple[int, int]) -> tuple[list[RobotJoint], list[LoopClosure]]:
    raw = []
    for name, (kind, el) in elements.items():
        if kind != "joint":
            continue
        jtype = el.get("type")
        span = reader.span(el, f'"{name}"')
        if jtype in _NOT_YET:
            reader.error(el, f"joint `{name}` is a {jtype} joint, which is not imported yet",
                         f'"{jtype}"')
            continue
        if jtype not in (*_TREE_TYPES, "ball"):
            near = closest(jtype or "", (*_TREE_TYPES, "ball"))
            hint = f" (did you mean `{near}`?)" if near else ""
            reader.error(el, f"joint `{name}` has type `{jtype}`: SDF joints are revolute, "
                             f"continuous, prismatic, fixed or ball here{hint}")
            continue
        ends = {}
        for role in ("parent", "child"):
            sub = el.find(role)
            value = (sub.text or "").strip() if sub is not None else ""
            if not value:
                reader.error(el, f"joint `{name}` needs a `<{role}>` link")
            elif value not in links and not (role == "parent" and value == "world"):
                near = closest(value, links)
                hint = f" (did you mean `{near}`?)" if near else ""
                what = "a frame, not a link" if value in elements else "not defined"
                reader.error(sub, f"joint `{name}` has {role} link `{value}`, which is "
                                  f"{what}{hint}", f">{value}<", strip=1)
            ends[role] = value
        if reader.problems:
            continue
        raw.append((name, jtype, ends["parent"], ends["child"], el, span))
    if reader.problems:
        return [], []
    # the tree: joints other than ball joints first, in file order; a joint that reaches
    # a link that has its parent already closes a loop
    has_parent: set[str] = set()
    tree, closing = [], []
    for item in sorted(raw, key=lambda r: r[1] == "ball"):
        if item[3] in has_parent:
            closing.append(item)
        else:
            tree.append(item)
            has_parent.add(item[3])
    joints: list[RobotJoint] = []
    for name, jtype, parent, child, el, span in tree:
        if jtype == "ball":
            reader.error(el, f"joint `{name}` is a ball joint of the tree, which is not "
                             "imported yet (a ball joint that closes a loop is)", f'"{name}"')
            continue
        joints.extend(_tree_joint(reader, frames, name, jtype, parent, child, el, span,
                                  version, links))
    loops = []
    for name, jtype, parent, child, el, span in closing:
        if jtype != "ball":
            reader.error(el, f"joint `{name}` closes a loop (link `{child}` has a parent "
                             f"joint already) and is a {jtype} joint: only ball joints "
                             "close loops (the model's COINCIDE)", f'"{name}"')
            continue
        X_MJ = frames.pose(name)
        in_child = _inverse(frames.pose(child)) @ X_MJ
        in_parent = _inverse(frames.pose(parent)) @ X_MJ
        loops.append(LoopClosure(name, child, tuple(float(v) for v in in_child[:3, 3]),
                                 None if parent == "world" else parent,
                                 tuple(float(v) for v in in_parent[:3, 3]), span))
    return joints, loops


def _tree_joint(reader: _Reader, frames: _Frames, name: str, jtype: str, parent: str,
                child: str, el, span, version, links: dict) -> list[RobotJoint]:
    """The joint as one tree joint (parent ← child frame at zero motion, the axis in the
    child frame), or, for a turn about an axis off the child's origin, a joint to a
    massless link ``child_joint`` at the joint frame and a fixed joint on to the child."""
    X_MP, X_MC, X_MJ = frames.pose(parent), frames.pose(child), frames.pose(name)
    axis, extra = _axis(reader, frames, el, name, jtype, version)
    T, relative = _pose(reader, el, f"joint `{name}`")
    if relative in (None, child):   # (exactly, where the pose is on the child)
        X_MJ = X_MC @ T
        X_JC = _inverse(T)
    else:
        X_JC = _inverse(X_MJ) @ X_MC
    X_PC = _inverse(X_MP) @ X_MC
    kwargs = dict(lower=extra.get("lower"), upper=extra.get("upper"),
                  effort=extra.get("effort"), velocity=extra.get("velocity"),
                  damping=extra.get("damping", 0.0), friction=extra.get("friction", 0.0),
                  span=span)
    if kwargs["lower"] is not None and kwargs["upper"] is not None \
            and kwargs["lower"] > kwargs["upper"]:
        reader.error(el, f"joint `{name}` has lower limit {kwargs['lower']} above its upper "
                         f"limit {kwargs['upper']}", f'"{name}"')
    if jtype == "fixed":
        return [RobotJoint(name, "fixed", parent, child, X_PC, np.array([1.0, 0.0, 0.0]),
                           span=span)]
    in_child = X_JC[:3, :3].T @ axis
    if jtype == "prismatic" or np.allclose(X_JC[:3, 3], 0.0, rtol=0, atol=0):
        return [RobotJoint(name, jtype, parent, child, X_PC, in_child, **kwargs)]
    middle = f"{child}_{name}"
    while middle in links:
        middle += "_"
    links[middle] = RobotLink(middle, None, span)
    return [RobotJoint(name, jtype, parent, middle, _inverse(X_MP) @ X_MJ, axis, **kwargs),
            RobotJoint(f"{middle}_to_child", "fixed", middle, child, X_JC,
                       np.array([1.0, 0.0, 0.0]))]
