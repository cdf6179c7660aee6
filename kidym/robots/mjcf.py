"""Read an MJCF file (MuJoCo) into a :class:`~kidym.robots.tree.RobotTree`.

MuJoCo's own compiler reads the file (``mujoco.MjModel.from_xml_path``, the ``mjcf``
extra): defaults, ``childclass``, inertias from geoms, ``<include>`` are all resolved
by it, and kidym reads the compiled tree. A body without joints is welded to its
parent (a fixed joint); a body with several joints gets one massless link per joint
(``Body_joint``). A hinge turns about its axis through its anchor ``jnt_pos``, written
as a shift to the anchor, the turn by ``q − qpos0`` and the shift back (a fixed joint
to the body). A free joint of a body of the world makes it the floating root (its linear
velocity in the fixed axes, as MuJoCo's ``qvel``); a ball joint of a body on the fixed
frame turns it by a quaternion (the body's turn on the fixed frame: its placement's
composed with the joint's; speeds the body-axis angular velocity, MuJoCo's ``qvel``), a
ball joint below a moving body is not imported yet; an ``equality connect`` of two
bodies closes a loop (the model's ``COINCIDE``), other equalities are not imported yet;
a joint's damping is a dissipative element of the model; MuJoCo's armature, springs and
joint friction are not part of the model (a warning names them).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from kidym.errors import Diagnostic, ParseError, Span
from kidym.robots.tree import LinkInertia, LoopClosure, RobotJoint, RobotLink, RobotTree

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _frame(pos=(0.0, 0.0, 0.0), R=None) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = pos
    if R is not None:
        T[:3, :3] = R
    return T


def read_mjcf(path: str | Path, *, strict: bool = False) -> RobotTree:
    """Read an MJCF file with MuJoCo's compiler.

    Parameters
    ----------
    path : str or Path
    strict : bool
        Report what the model leaves out (armature, friction loss, stiffness, a ball
        joint's damping, a free joint's damping) as errors, not warnings.

    Raises
    ------
    ParseError
        MuJoCo's error, located at the line it names; a free or ball joint.
    ImportError
        When `mujoco` is not installed (``pip install 'kidym[mjcf]'``).
    """
    try:
        import mujoco
    except ImportError as exc:
        raise ImportError("reading MJCF files needs MuJoCo: pip install 'kidym[mjcf]'") from exc
    path = Path(path)
    filename = str(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        m = mujoco.MjModel.from_xml_path(filename)
    except ValueError as exc:
        msg = str(exc).strip()
        line = re.search(r"\bline (\d+)", msg)
        first = msg.splitlines()[0] if msg else "MuJoCo cannot read the file"
        raise ParseError([Diagnostic(f"MuJoCo: {first}",
                                     Span(int(line.group(1)), 1) if line else None)],
                         filename=filename, source=text) from None
    lines = text.splitlines()

    def span_of(kind: str, name: str) -> Span | None:
        for i, s in enumerate(lines, 1):
            at = s.find(f'name="{name}"')
            if at >= 0 and f"<{kind}" in s:
                return Span(i, at + 7, at + 7 + len(name))
        return None

    def body_name(b: int) -> str:
        return m.body(b).name or f"body{b}"

    links: dict[str, RobotLink] = {"world": RobotLink("world", None)}
    joints: list[RobotJoint] = []
    warnings: list[Diagnostic] = []
    severity = "error" if strict else "warning"
    free = [b for b in range(1, m.nbody) if m.body_jntnum[b] == 1
            and m.jnt_type[m.body_jntadr[b]] == _FREE and m.body_parentid[b] == 0]
    free_root = None
    root = "world"
    if free:
        b = free[0]
        moving = [body_name(c) for c in range(1, m.nbody) if m.body_rootid[c] != b
                  and m.body_jntnum[c] > 0]
        if len(free) > 1 or moving:
            other = body_name(free[1]) if len(free) > 1 else moving[0]
            raise ParseError([Diagnostic(
                f"body `{other}` moves beside the free body `{body_name(b)}`: kidym imports "
                "one robot, with one free root body", span_of("body", other))],
                filename=filename, source=text)
        root = body_name(b)
        free_root = (tuple(float(v) for v in m.body_pos[b]),
                     tuple(float(v) for v in m.body_quat[b] / np.linalg.norm(m.body_quat[b])))
        del links["world"]
    for b in range(1, m.nbody):
        name = body_name(b)
        if free_root is not None and m.body_rootid[b] != free[0]:
            continue            # welded to the world: part of the fixed frame
        if free_root is not None and b == free[0]:
            links[name] = RobotLink(name, _inertia(m, b), span_of("body", name))
            j = int(m.body_jntadr[b])
            dof = slice(int(m.jnt_dofadr[j]), int(m.jnt_dofadr[j]) + 6)
            left = [what for what, arr in (("damping", m.dof_damping),
                                           ("armature", m.dof_armature),
                                           ("frictionloss", m.dof_frictionloss))
                    if arr[dof].any()]
            if m.jnt_stiffness[j]:
                left.append("stiffness")
            if left:
                jname = m.joint(j).name
                where = (span_of("freejoint", jname) or span_of("joint", jname)) if jname \
                    else None
                warnings.append(Diagnostic(
                    f"the free joint{f' `{jname}`' if jname else ''} of the floating root "
                    f"`{name}` has {', '.join(left)}, which is not part of the model (the "
                    "base moves freely; add a force on it as an element)",
                    where or links[name].span, severity))
            continue
        parent = "world" if m.body_parentid[b] == 0 else body_name(m.body_parentid[b])
        placement = _frame(m.body_pos[b], _quat_matrix(m.body_quat[b]))
        links[name] = RobotLink(name, _inertia(m, b), span_of("body", name))
        first, count = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        if count == 0:
            joints.append(RobotJoint(f"{name}_weld", "fixed", parent, name, placement,
                                     np.array([1.0, 0.0, 0.0])))
            continue
        here, origin = parent, placement
        for k, j in enumerate(range(first, first + count)):
            jname = m.joint(j).name or f"joint{j}"
            span = span_of("joint", jname)
            jtype = int(m.jnt_type[j])
            if jtype == _FREE or (jtype == _BALL and (count > 1 or _moves(m, b))):
                kind = "free" if jtype == _FREE else "ball"
                why = (" on a moving body or beside another joint (kidym turns a body by "
                       "a quaternion on the fixed frame only)" if jtype == _BALL
                       else " (only on a body of the world)")
                raise ParseError([Diagnostic(f"joint `{jname}` is a {kind} joint, which is not "
                                             f"imported from MJCF yet{why}", span)],
                                 filename=filename, source=text)
            if jtype != _BALL and m.qpos0[m.jnt_qposadr[j]] != 0.0:
                raise ParseError([Diagnostic(f"joint `{jname}` has a reference position "
                                             "(`ref`), which is not imported yet", span)],
                                 filename=filename, source=text)
            anchor = np.asarray(m.jnt_pos[j], float)
            last = k == count - 1
            child = name if last and not anchor.any() else f"{name}_{jname}"
            if child != name:
                links[child] = RobotLink(child, None, span)
            kind = {_HINGE: "revolute", _SLIDE: "prismatic", _BALL: "ball"}[jtype]
            joints.append(RobotJoint(jname, kind, here, child, origin @ _frame(anchor),
                                     np.asarray(m.jnt_axis[j], float), span=span,
                                     damping=0.0 if jtype == _BALL
                                     else float(m.dof_damping[m.jnt_dofadr[j]])))
            here, origin = child, _frame(-anchor)
            if last and child != name:
                joints.append(RobotJoint(f"{name}_anchor", "fixed", child, name, origin,
                                         np.array([1.0, 0.0, 0.0])))
        dof = list(range(m.body_dofadr[b], m.body_dofadr[b] + m.body_dofnum[b]))
        extras = [what for what, arr in (("armature", m.dof_armature),
                  ("frictionloss", m.dof_frictionloss)) if arr[dof].any()]
        if m.jnt_type[first] == _BALL and m.dof_damping[dof].any():
            extras.append("damping (of a ball joint)")
        if m.jnt_stiffness[first:first + count].any():
            extras.append("stiffness")
        if extras:
            warnings.append(Diagnostic(f"body `{name}`: the joints' {', '.join(extras)} "
                                       "are not part of the model (add them as elements)",
                                       links[name].span, severity))
    loops = []
    for e in range(m.neq):
        ename = m.eq(e).name or f"equality{e}"
        span = span_of("connect", ename) if m.eq(e).name else None
        if int(m.eq_type[e]) != mujoco.mjtEq.mjEQ_CONNECT or \
                int(m.eq_objtype[e]) != mujoco.mjtObj.mjOBJ_BODY:
            raise ParseError([Diagnostic(f"equality `{ename}` is not a `connect` of two "
                                         "bodies, the only equality imported yet", span)],
                             filename=filename, source=text)
        a, b = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        if a == 0:                  # written with the world first: keep the body first
            a, b = b, a
            pa, pb = m.eq_data[e, 3:6], m.eq_data[e, 0:3]
        else:
            pa, pb = m.eq_data[e, 0:3], m.eq_data[e, 3:6]
        loops.append(LoopClosure(ename, body_name(a), tuple(float(v) for v in pa),
                                 None if b == 0 else body_name(b),
                                 tuple(float(v) for v in pb), span))
    return RobotTree(name=path.stem, links=links, joints=tuple(joints), root=root,
                     filename=filename, source=text, warnings=tuple(warnings),
                     free_root=free_root, loops=tuple(loops))


def _moves(m, b: int) -> bool:
    """Whether a body above ``b`` has a joint (``b`` is not on the fixed frame)."""
    b = int(m.body_parentid[b])
    while b != 0:
        if m.body_jntnum[b] > 0:
            return True
        b = int(m.body_parentid[b])
    return False


def _inertia(m, b: int) -> LinkInertia | None:
    if not (m.body_mass[b] > 0 or m.body_inertia[b].any()):
        return None
    R = _quat_matrix(m.body_iquat[b])
    return LinkInertia(float(m.body_mass[b]), _frame(m.body_ipos[b]),
                       R @ np.diag(m.body_inertia[b]) @ R.T)
