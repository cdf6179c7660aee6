"""Import robot description files (URDF, MJCF, SDF) into readable kidym model files.

``import_robot(path)`` reads the file (:mod:`kidym.robots.urdf`,
:mod:`kidym.robots.mjcf`, :mod:`kidym.robots.sdf`), merges the links
joined by fixed joints into composite bodies and applies the inertia policy
(:mod:`kidym.robots.composite`), and writes the model text
(:mod:`kidym.robots.writer`). See docs/robots.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kidym.errors import Diagnostic, ParseError

__all__ = ["ImportedRobot", "import_robot"]


@dataclass(frozen=True)
class ImportedRobot:
    """A robot file turned into a model file.

    Attributes
    ----------
    text : str
        The model (``.kdm``) text.
    coordinates : dict of str to str
        Joint name → coordinate name, in the order of the file's bodies.
    bodies : dict of str to str
        Link name → body name (only the links that carry a body; the others are
        merged into these, or form the fixed base).
    warnings : list of Diagnostic
        Located warnings (inertia policy), formatted by :meth:`format_warnings`.
    filename, source : str
        The robot file and its text, for formatting the warnings.
    floating : bool
        Whether the base is a free body.
    planar : dict of str to tuple of str
        Planar joint name → its coordinates ``x, y, th`` and pseudo-velocities
        ``vx, vy`` (the velocity in the plane in the moving axes, as Pinocchio's).
    loops : tuple of str
        The joints (or MJCF equalities) that close loops, in file order.
    loop_constraints : dict of str to tuple of str
        Each loop → the names of its constraints: ``coinX<k>, coinY<k>, coinZ<k>`` for
        the k-th item of the model's ``COINCIDE`` (a spatial loop), two ``EQUATIONS``
        ``<name>_u, <name>_v`` for a planar one (all joints of the loop revolute about
        parallel axes: the two in-plane components, docs/robots.md).
    balls : dict of str to tuple of str
        Ball joint (MJCF) → the quaternion ``l0 … l3`` (scalar first) of its body on the
        fixed frame: the body's turn, the placement's composed with the joint's; its
        speeds are the body's ``ωX, ωY, ωZ`` (body axes, MuJoCo's ``qvel``).
    """

    text: str
    coordinates: dict[str, str]
    bodies: dict[str, str]
    warnings: list[Diagnostic] = field(default_factory=list)
    filename: str = "<string>"
    source: str | None = None
    floating: bool = False
    planar: dict[str, tuple[str, ...]] = field(default_factory=dict)
    loops: tuple[str, ...] = ()
    balls: dict[str, tuple[str, ...]] = field(default_factory=dict)
    loop_constraints: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def format_warnings(self) -> list[str]:
        """Each warning as ``FILE:LINE:COL: warning: …`` with its caret line."""
        return [w.format(self.filename, self.source) for w in self.warnings]

    def write(self, path: str | Path) -> Path:
        """Write :attr:`text` to ``path`` whole or not at all."""
        from kidym.simulation.result import write_atomically

        return write_atomically(path, self.text)


def import_robot(path: str | Path, *, strict: bool = False, floating: bool = False,
                 mimic: str = "free", gravity: float = 9.81) -> ImportedRobot:
    """Read a robot description file and write it as a kidym model.

    Parameters
    ----------
    path : str or Path
        A URDF file (``.urdf``), an MJCF file (``.xml``, ``.mjcf``; read by MuJoCo's
        compiler, hinge and slide joints) or an SDF file (``.sdf``; the subset of a
        robot, :mod:`kidym.robots.sdf`).
    strict : bool, optional
        Make the inertia warnings errors (a link or composite body whose inertia tensor
        is not positive semidefinite or breaks the triangle inequality).
    floating : bool, optional
        Give the root link a free motion: position ``x, y, z`` and quaternion
        ``l0 … l3`` (scalar first), with the body-frame angular velocity and the
        body-frame velocity ``vx, vy, vz`` as pseudo-velocities (Pinocchio's
        free-flyer). Default: the root link is the fixed frame, unless the file makes
        it free (an MJCF free joint: then its linear velocity ``x't, y't, z't`` is in
        the fixed axes, as MuJoCo's).
    mimic : {"free", "follow"}, optional
        A mimic joint with its own coordinate (``"free"``, as Pinocchio loads it), or
        following the joint it mimics (``"follow"``).
    gravity : float, optional
        Along −z, m/s² (9.81 as in Pinocchio and MuJoCo).

    Returns
    -------
    ImportedRobot

    Raises
    ------
    ParseError
        With every located problem of the file (``FILE:LINE:COL: error: …``).
    ImportError
        When the reader of the format is not installed (``pip install 'kidym[robots]'``,
        ``'kidym[mjcf]'``).

    Examples
    --------
    >>> robot = kidym.import_robot("ur5.urdf")            # doctest: +SKIP
    >>> model = kidym.parse(robot.text)                   # doctest: +SKIP
    """
    from kidym.robots.composite import composite_bodies
    from kidym.robots.writer import write_model

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".urdf":
        from kidym.robots.urdf import read_urdf

        tree = read_urdf(path)
    elif suffix in (".xml", ".mjcf"):
        from kidym.robots.mjcf import read_mjcf

        tree = read_mjcf(path, strict=strict)
    elif suffix == ".sdf":
        from kidym.robots.sdf import read_sdf

        tree = read_sdf(path)
    else:
        raise ValueError(f"{path}: kidym imports URDF (.urdf), MJCF (.xml) and SDF (.sdf) "
                         f"files, not `{path.suffix}` files")
    tree, floating = _floating_joint_at_root(tree, floating)
    floating = floating or tree.free_root is not None
    bodies, diags = composite_bodies(tree, strict=strict, floating=floating)
    diags = [*tree.warnings, *diags]
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise ParseError(errors, filename=tree.filename, source=tree.source)
    if not bodies:
        raise ParseError([Diagnostic("the robot has no moving joint: nothing to simulate "
                                     "(import it with a floating base)",
                                     tree.links[tree.root].span)],
                         filename=tree.filename, source=tree.source)
    try:
        text, coords, names, planar, balls, loop_eqs = write_model(
            tree, bodies, mimic=mimic, gravity=gravity, source_name=path.name)
    except ValueError as exc:
        raise ParseError([Diagnostic(str(exc))], filename=tree.filename,
                         source=tree.source) from None
    diags += _dynamics_warnings(tree, coords, strict)
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise ParseError(errors, filename=tree.filename, source=tree.source)
    return ImportedRobot(text=text, coordinates=coords, bodies=names, warnings=diags,
                         filename=tree.filename, source=tree.source, floating=floating,
                         planar=planar, loops=tuple(loop.name for loop in tree.loops),
                         balls=balls, loop_constraints=loop_eqs)


def _floating_joint_at_root(tree, floating: bool):
    """A URDF whose massless root (``world``) carries the robot by a ``floating`` joint
    is read as the robot with a floating base (``--floating``): the joint's child is
    the root, its start pose the joint's origin."""
    import dataclasses

    import numpy as np

    from kidym.robots.tree import RobotTree

    children = tree.children(tree.root)
    if len(children) != 1 or children[0].type != "floating" \
            or tree.links[tree.root].inertia is not None:
        return tree, floating
    joint = children[0]
    if not np.allclose(joint.origin, np.eye(4), rtol=0, atol=0):
        return tree, floating   # (a start pose other than the identity: not imported)
    links = {k: v for k, v in tree.links.items() if k != tree.root}
    rest = tuple(j for j in tree.joints if j is not joint)
    new: RobotTree = dataclasses.replace(tree, links=links, joints=rest, root=joint.child)
    return new, True


def _dynamics_warnings(tree, coords: dict[str, str], strict: bool) -> list[Diagnostic]:
    """A warning (an error under ``strict``) per joint whose ``<dynamics>`` the model
    does not hold: Coulomb friction (no element of the language sticks), and damping
    of a joint without a coordinate of its own (planar, a mimic joint followed)."""
    severity = "error" if strict else "warning"
    out = []
    for j in tree.joints:
        if j.friction:
            out.append(Diagnostic(
                f"joint `{j.name}` has Coulomb friction {j.friction:g} (`<dynamics "
                "friction>`), which is not part of the model: no element of kidym holds a "
                "friction that sticks (add a force element on the joint's speed for a "
                "sliding one)", j.span, severity))
        if j.damping and j.type != "fixed" and j.name not in coords:
            out.append(Diagnostic(
                f"joint `{j.name}` has damping {j.damping:g} (`<dynamics damping>`), which "
                f"is not part of the model: the joint ({j.type}"
                f"{', a mimic joint followed' if j.mimic else ''}) has no coordinate of its "
                "own (add a dissipative element)", j.span, severity))
    return out
