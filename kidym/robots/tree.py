"""The kinematic tree of a robot file, independent of its format.

A reader (:mod:`kidym.robots.urdf`) fills these frozen records; the tree is then
checked once (:func:`check_tree`) and handed to :mod:`kidym.robots.composite`.
Transforms are 4×4 homogeneous matrices, parent ← child.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kidym.errors import Diagnostic, Span

#: Joint types read from robot files; ``floating`` and ``planar`` move a body freely
#: (in space, in a plane), the others have one coordinate or none.
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


@dataclass(frozen=True)
class LinkInertia:
    """Mass, centre of mass and inertia tensor of one link.

    ``origin`` is link ← inertial frame; ``tensor`` the inertia about the centre of
    mass in the inertial frame's axes (the tensor itself: ``[[Ixx, Ixy, Ixz], …]``
    with ``Ixy = −∫ x y dm``), shape (3, 3).
    """

    mass: float
    origin: np.ndarray
    tensor: np.ndarray


@dataclass(frozen=True, eq=False)
class Visual:
    """A visual mesh of a link: its file as written, ``link frame ← mesh`` (``origin``,
    shape (4, 4)) and its scale along the mesh's axes."""

    filename: str
    origin: np.ndarray
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class RobotLink:
    """A link: its name, its inertia (``None`` for a massless link), where it is written,
    its visual meshes' files (``meshes``) and, where the reader knows them, where they sit
    (``visuals``: URDF)."""

    name: str
    inertia: LinkInertia | None
    span: Span | None = None
    meshes: tuple[str, ...] = ()
    visuals: tuple[Visual, ...] = ()


@dataclass(frozen=True)
class Mimic:
    """``q = multiplier · q_joint + offset``."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class RobotJoint:
    """A joint between ``parent`` and ``child`` links.

    ``origin`` is parent ← joint frame (the child's frame at zero motion); ``axis``
    a unit vector in the joint frame.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    mimic: Mimic | None = None
    span: Span | None = None
    #: viscous damping (N m s/rad, N s/m) and Coulomb friction (N m, N) of the file
    damping: float = 0.0
    friction: float = 0.0


@dataclass(frozen=True)
class LoopClosure:
    """A point of ``link_a`` that coincides with a point of ``link_b`` (each in its
    link's frame; ``link_b`` is ``None`` for the fixed frame): a loop closed by a ball
    joint (MJCF ``equality connect``)."""

    name: str
    link_a: str
    point_a: tuple[float, float, float]
    link_b: str | None
    point_b: tuple[float, float, float]
    span: Span | None = None


@dataclass(frozen=True)
class RobotTree:
    """A robot: its links and joints, the root link, and the file it came from."""

    name: str
    links: dict[str, RobotLink]
    joints: tuple[RobotJoint, ...]
    root: str
    filename: str = "<string>"
    source: str | None = None
    warnings: tuple[Diagnostic, ...] = field(default_factory=tuple)
    #: a root that the file itself makes free (MJCF's free joint): its start position
    #: and quaternion (scalar first); its linear velocity is then in the fixed axes
    free_root: tuple[tuple[float, float, float], tuple[float, float, float, float]] | None = None
    #: loops closed by coinciding points (become the model's ``COINCIDE``)
    loops: tuple[LoopClosure, ...] = ()

    def children(self, link: str) -> list[RobotJoint]:
        """The joints whose parent is ``link``, in file order."""
        return [j for j in self.joints if j.parent == link]

    def parent_joint(self, link: str) -> RobotJoint | None:
        """The joint whose child is ``link`` (``None`` for the root)."""
        return next((j for j in self.joints if j.child == link), None)


def find_root(links: dict[str, RobotLink], joints: list[RobotJoint]) -> tuple[str | None,
                                                                              list[Diagnostic]]:
    """The root link, and every structural problem: a joint naming a link that is not
    defined, a link with two parents, a cycle, no root or several roots."""
    problems: list[Diagnostic] = []
    parent_of: dict[str, RobotJoint] = {}
    for j in joints:
        for role, name in (("parent", j.parent), ("child", j.child)):
            if name not in links:
                near = closest(name, links)
                hint = f" (did you mean `{near}`?)" if near else ""
                problems.append(Diagnostic(
                    f"joint `{j.name}` has {role} link `{name}`, which is not defined{hint}",
                    j.span))
        if j.child in parent_of:
            problems.append(Diagnostic(
                f"link `{j.child}` is the child of two joints, `{parent_of[j.child].name}` and "
                f"`{j.name}`: a robot file describes a tree (close a loop with a constraint "
                "in the model file instead)", j.span))
        else:
            parent_of[j.child] = j
        if j.parent == j.child:
            problems.append(Diagnostic(f"joint `{j.name}` joins link `{j.child}` to itself",
                                       j.span))
    if problems:
        return None, problems
    for start in parent_of:
        seen = [start]
        link = start
        while link in parent_of:
            link = parent_of[link].parent
            if link == start:
                cyc = " → ".join([start, *seen[::-1]])
                return None, [Diagnostic(f"the joints form a cycle: {cyc} (each link may "
                                         "have one parent)", parent_of[start].span)]
            seen.append(link)
    roots = [name for name in links if name not in parent_of]
    if len(roots) != 1:
        named = ", ".join(f"`{r}`" for r in roots) or "none"
        return None, [Diagnostic(f"a robot needs exactly one root link (a link that is no "
                                 f"joint's child); found {len(roots)}: {named}",
                                 links[roots[1]].span if len(roots) > 1 else None)]
    return roots[0], []


def closest(name: str, names) -> str | None:
    """The name among ``names`` nearest to ``name`` (difflib), or ``None``."""
    import difflib

    near = difflib.get_close_matches(name, list(names), n=1)
    return near[0] if near else None
