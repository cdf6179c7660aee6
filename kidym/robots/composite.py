"""Merge links joined by fixed joints into composite bodies; the inertia policy.

A *composite body* is a link whose parent joint moves (or the root link) together
with every link reached from it through fixed joints. Its frame is that link's
frame; its mass, centre of mass and central inertia tensor are summed over its links
by the parallel-axis theorem (Steiner). Pinocchio merges fixed joints the same way.

Inertia policy (docs/robots.md): every link whose own inertia is not physically
possible (a tensor that is not positive semidefinite or whose principal moments break
the triangle inequality) is named in a warning; the *composite* bodies are what the
model file holds, and a composite that is still impossible is replaced by the nearest
admissible tensor (negative principal moments raised to 0, the largest lowered to
the sum of the other two) with a warning giving both. Under ``strict`` each of these
warnings is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kidym.errors import Diagnostic
from kidym.robots.tree import RobotJoint, RobotTree

#: relative tolerance of the inertia checks: kidym's own (kidym.model.inertia)
_REL_TOL = 1e-12


@dataclass(frozen=True)
class CompositeBody:
    """One rigid body of the model.

    ``joint`` is the moving joint that carries it (``None`` for the root);
    ``placement`` is parent body ← joint frame (the joint's origin composed with the
    fixed joints between the parent body's frame and the joint's parent link);
    ``com`` (shape (3,)) and ``tensor`` (central, shape (3, 3), tensor entries) are in
    the body frame; ``links`` the links merged, the first being the body's own.
    """

    name: str
    parent: str | None
    joint: RobotJoint | None
    placement: np.ndarray
    mass: float
    com: np.ndarray
    tensor: np.ndarray
    links: tuple[str, ...]
    repaired_from: np.ndarray | None = None
    #: body frame ← link frame of each merged link
    frames: tuple[tuple[str, np.ndarray], ...] = ()


def inertia_issue(tensor: np.ndarray) -> str | None:
    """What is physically impossible about a central inertia tensor, or ``None``."""
    scale = float(np.abs(tensor).max()) if tensor.size else 0.0
    if scale == 0.0:
        return None
    tol = _REL_TOL * scale
    lam = np.linalg.eigvalsh(0.5 * (tensor + tensor.T))
    shown = ", ".join(f"{v:.6g}" for v in lam)
    if lam[0] < -tol:
        return f"not positive semidefinite (principal moments {shown})"
    if lam[2] > lam[0] + lam[1] + tol:
        return f"against the triangle inequality (principal moments {shown})"
    return None


def nearest_admissible(tensor: np.ndarray) -> np.ndarray:
    """The tensor with negative principal moments raised to 0 and the largest lowered
    to the sum of the other two (same principal axes)."""
    lam, vec = np.linalg.eigh(0.5 * (tensor + tensor.T))
    lam = np.maximum(lam, 0.0)
    lam[2] = min(lam[2], lam[0] + lam[1])
    out = vec @ np.diag(lam) @ vec.T
    return 0.5 * (out + out.T)


def composite_bodies(tree: RobotTree, *, strict: bool = False,
                     floating: bool = False) -> tuple[list[CompositeBody], list[Diagnostic]]:
    """The composite bodies of ``tree`` in depth-first order, and the warnings.

    Parameters
    ----------
    tree : RobotTree
        A checked tree.
    strict : bool
        Report the inertia warnings as errors (severity ``"error"``).
    floating : bool
        Whether the root body moves (a floating base): then it is a body too.

    Returns
    -------
    bodies : list of CompositeBody
        Parents before children; the root body first when ``floating``.
    diagnostics : list of Diagnostic
    """
    severity = "error" if strict else "warning"
    diags: list[Diagnostic] = []
    for link in tree.links.values():
        if link.inertia is not None:
            issue = inertia_issue(link.inertia.tensor)
            if issue:
                diags.append(Diagnostic(f"link `{link.name}` (mass {link.inertia.mass:.6g}): "
                                        f"its inertia tensor is {issue}", link.span, severity))

    bodies: list[CompositeBody] = []

    def walk(body_link: str, parent: str | None, joint: RobotJoint | None,
             placement: np.ndarray) -> None:
        # the links of this body: body_link and those hung on it by fixed joints
        members: list[tuple[str, np.ndarray]] = []
        moving: list[tuple[RobotJoint, np.ndarray]] = []
        stack = [(body_link, np.eye(4))]
        while stack:
            link, T = stack.pop(0)
            members.append((link, T))
            for j in tree.children(link):
                if j.type == "fixed":
                    stack.append((j.child, T @ j.origin))
                else:
                    moving.append((j, T @ j.origin))
        mass, com, tensor = _sum_inertia(tree, members)
        numbers = [mass, *com, *tensor.ravel(), *placement.ravel(),
                   *(x for _, T in moving for x in T.ravel())]
        if not all(np.isfinite(numbers)):
            diags.append(Diagnostic(
                f"body `{body_link}` (links {', '.join(f'`{n}`' for n, _ in members)}): its "
                "placement, centre of mass or inertia is not a finite number (a value of "
                "the file too large?)", tree.links[body_link].span))
            return
        repaired = None
        issue = inertia_issue(tensor)
        if issue and (parent is not None or joint is not None or floating):
            names = ", ".join(f"`{n}`" for n, _ in members)
            fixed = nearest_admissible(tensor)
            diags.append(Diagnostic(
                f"body `{body_link}` (links {names}, mass {mass:.6g}): its inertia tensor is "
                f"{issue}; the model file holds the nearest admissible tensor (principal "
                f"moments {', '.join(f'{v:.6g}' for v in np.linalg.eigvalsh(fixed))})",
                tree.links[body_link].span, severity))
            repaired, tensor = tensor, fixed
        if joint is not None or floating:
            bodies.append(CompositeBody(body_link, parent, joint, placement, mass, com, tensor,
                                        tuple(n for n, _ in members), repaired,
                                        tuple(members)))
            here: str | None = body_link
        else:
            here = None     # the fixed base: the fixed frame of the model
        for j, T in moving:
            walk(j.child, here, j, T)

    with np.errstate(all="ignore"):    # overflow is reported per body, below
        walk(tree.root, None, None, np.eye(4))
    return bodies, diags


def link_frames(tree: RobotTree, bodies: list[CompositeBody]
                ) -> dict[str, tuple[str | None, np.ndarray]]:
    """Each link's body (``None`` for the fixed frame of a fixed base) and the
    transform body ← link (fixed frame ← link)."""
    out: dict[str, tuple[str | None, np.ndarray]] = {}
    for b in bodies:
        for link, T in b.frames:
            out[link] = (b.name, T)
    stack = [(tree.root, np.eye(4))]
    while stack:            # the fixed base and what is fixed to it
        link, T = stack.pop()
        if link in out:
            continue
        out[link] = (None, T)
        stack += [(j.child, T @ j.origin) for j in tree.children(link) if j.type == "fixed"]
    return out


def _sum_inertia(tree: RobotTree, members: list[tuple[str, np.ndarray]]
                 ) -> tuple[float, np.ndarray, np.ndarray]:
    parts = []
    for name, T in members:
        inertia = tree.links[name].inertia
        if inertia is None or (inertia.mass == 0.0 and not inertia.tensor.any()):
            continue
        F = T @ inertia.origin
        R = F[:3, :3]
        parts.append((inertia.mass, F[:3, 3], R @ inertia.tensor @ R.T))
    mass = float(sum(m for m, _, _ in parts))
    if mass > 0:
        com = sum(m * c for m, c, _ in parts) / mass
    else:
        com = np.zeros(3)
    tensor = np.zeros((3, 3))
    for m, c, J in parts:
        d = c - com
        tensor += J + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, np.asarray(com, float), 0.5 * (tensor + tensor.T)
