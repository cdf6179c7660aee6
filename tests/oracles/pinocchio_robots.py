"""Pinocchio as the reference for robots imported from URDF files (issue 30).

The robots are the URDF files of the ``example-robot-data`` wheel (test extra
``robots-test``). kidym's coordinates are matched to Pinocchio's joints by the joint
names (:attr:`kidym.robots.ImportedRobot.coordinates`); a continuous joint is one
angle in kidym and ``(cos, sin)`` in Pinocchio (nq = 2, nv = 1).

Pinocchio's ``crba`` gives M (upper triangle), ``rnea(q, v, 0)`` the bias forces b
(Coriolis, centrifugal and gravity: ``M q̈ + b = τ``), ``aba(q, v, 0)`` the
accelerations; kidym's are ``M``, ``F = −b`` and ``M⁻¹ F``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: name → path in example-robot-data's robots/ folder; the test set of issue 30
ROBOTS = {
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "double_pendulum_continuous":
        "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "bolt": "bolt_description/robots/bolt.urdf",
    "anymal_b": "anymal_b_simple_description/robots/anymal.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "go1": "go1_description/urdf/go1.urdf",
    "talos_reduced": "talos_data/robots/talos_reduced.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "icub_reduced": "icub_description/robots/icub_reduced.urdf",
}


def robots_dir() -> Path:
    """The ``robots`` folder of the installed ``example-robot-data`` wheel."""
    from importlib.metadata import distribution

    return Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))


@dataclass(frozen=True)
class Errors:
    """Largest errors over the states: ``M`` and ``b`` relative to their largest
    entry, ``qdd`` relative to its largest entry divided by cond(M)."""

    M: float
    b: float
    qdd: float
    cond: float


class PinocchioRobot:
    """A URDF file loaded by Pinocchio, with kidym's state mapped onto it.

    Parameters
    ----------
    path : Path
        The URDF file.
    coordinates : dict of str to str
        Joint name → kidym coordinate name (the import's map).
    order, speeds : sequence
        kidym's coordinates and speeds, in the order of its state.
    base : str or None
        The floating base body's name: Pinocchio gets a free-flyer root joint, whose
        ``q`` is kidym's ``x, y, z`` and quaternion ``l1, l2, l3, l0`` (Pinocchio puts
        the scalar last), and whose ``v`` is kidym's ``vx, vy, vz`` and ``ωX, ωY, ωZ``
        of the base (both body-frame).
    free_in_file : bool
        The file's root joint is a URDF ``floating`` joint: Pinocchio makes it the
        free-flyer itself.
    planar : dict, optional
        Planar joint → kidym's ``(x, y, th, vx, vy)`` (:attr:`ImportedRobot.planar`).
    """

    def __init__(self, path: Path, coordinates: dict[str, str], order, speeds, *,
                 base: str | None = None, free_in_file: bool = False,
                 planar: dict | None = None) -> None:
        import pinocchio as pin

        self.pin = pin
        # (a file whose root joint is `floating` gives Pinocchio its free-flyer itself)
        self.model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
                      if base and not free_in_file else pin.buildModelFromUrdf(str(path)))
        self.data = self.model.createData()
        self.order = [str(c) for c in order]
        speeds = [str(w) for w in speeds]
        self.base = base
        self.n_q, self.n_w = len(self.order), len(speeds)
        # Pinocchio's v = P w, kidym's speeds w (same joints, another order)
        self.P = np.zeros((self.model.nv, self.n_w))
        self.joint_map = []
        for jid in range(1, self.model.njoints):
            j = self.model.joints[jid]
            if base and jid == 1:
                for k, w in enumerate(("vx", "vy", "vz", f"ωX{base}", f"ωY{base}",
                                       f"ωZ{base}")):
                    self.P[j.idx_v + k, speeds.index(w)] = 1.0
                continue
            if planar and self.model.names[jid] in planar:
                # Pinocchio's planar joint: q = x, y, cos θ, sin θ; v = vx, vy (moving
                # axes), θ̇ — kidym's pseudo-velocities and the angle's rate
                x, y, th, vx, vy = planar[self.model.names[jid]]
                self.joint_map.append((j.idx_q, 4, tuple(self.order.index(c)
                                                         for c in (x, y, th))))
                for k, w in enumerate((vx, vy, th + "'t")):
                    self.P[j.idx_v + k, speeds.index(w)] = 1.0
                continue
            c = coordinates[self.model.names[jid]]
            self.joint_map.append((j.idx_q, j.nq, self.order.index(c)))
            self.P[j.idx_v, speeds.index(c + "'t")] = 1.0

    def random_state(self, rng: np.random.Generator) -> np.ndarray:
        """A kidym state ``[q, w]``: angles in (−π, π), speeds of a few rad/s, a unit
        quaternion for a floating base."""
        q = rng.uniform(-np.pi, np.pi, self.n_q)
        if self.base:
            k = [self.order.index(c) for c in ("l0", "l1", "l2", "l3")]
            lam = rng.normal(size=4)
            q[k] = lam / np.linalg.norm(lam)
        return np.concatenate([q, rng.normal(0.0, 2.0, self.n_w)])

    def configuration(self, qk: np.ndarray) -> np.ndarray:
        """Pinocchio's ``q`` for kidym's coordinates."""
        q = self.pin.neutral(self.model)
        if self.base:
            k = {c: i for i, c in enumerate(self.order)}
            q[:3] = [qk[k[c]] for c in ("x", "y", "z")]
            lam = np.array([qk[k[c]] for c in ("l1", "l2", "l3", "l0")])
            q[3:7] = lam / np.linalg.norm(lam)
        for iq, nq, c in self.joint_map:
            if nq == 4:
                x, y, th = (qk[k] for k in c)
                q[iq:iq + 4] = x, y, np.cos(th), np.sin(th)
            elif nq == 2:
                q[iq:iq + 2] = np.cos(qk[c]), np.sin(qk[c])
            else:
                q[iq] = qk[c]
        return q

    def dynamics(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
        """``M``, ``b`` and ``q̈`` of Pinocchio at ``q``, ``v`` with zero torques.

        The joints' damping D (``model.damping``, read by Pinocchio from the URDF's
        ``<dynamics damping>``) is added by hand, as Pinocchio's algorithms leave it
        out: ``b = rnea(q, v, 0) + D v``, ``q̈ = aba(q, v, −D v)``.
        """
        pin = self.pin
        M = pin.crba(self.model, self.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        zero = np.zeros(self.model.nv)
        damping = np.asarray(self.model.damping, float) * v
        b = pin.rnea(self.model, self.data, q, v, zero) + damping
        a = pin.aba(self.model, self.data, q, v, -damping)
        return M, b, a


def compare(system, robot: PinocchioRobot, *, n_states: int, seed: int = 0) -> Errors:
    """kidym's ``M``, ``−F`` and ``M⁻¹F`` against Pinocchio at random states.

    ``system`` is a :class:`~kidym.simulation.simulate.NumpySystem` or
    :class:`~kidym.simulation.compiled.CompiledSystem` of the imported model. The speeds
    are mapped by ``v = P w`` with a constant permutation ``P``, so ``M = Pᵀ M_pin P``,
    ``F = −Pᵀ b_pin`` and ``P ẇ = v̇``.
    """
    rng = np.random.default_rng(seed)
    p = system.parameter_vector()
    P = robot.P
    worst = Errors(0.0, 0.0, 0.0, 0.0)
    for _ in range(n_states):
        y = robot.random_state(rng)
        qk, wk = y[:robot.n_q], y[robot.n_q:]
        q, v = robot.configuration(qk), P @ wk
        _, M, F = system.evaluate(0.0, y, p)[:3]
        M = np.asarray(M, float)
        F = np.asarray(F, float)[:robot.n_w]
        Mp, bp, ap = robot.dynamics(q, v)
        Mk = P @ M @ P.T
        bk = -P @ F
        ak = P @ np.linalg.solve(M, F)
        cond = float(np.linalg.cond(Mp))
        e = Errors(float(np.abs(Mk - Mp).max() / np.abs(Mp).max()),
                   float(np.abs(bk - bp).max() / np.abs(bp).max()),
                   float(np.abs(ak - ap).max() / np.abs(ap).max() / cond), cond)
        worst = Errors(*(max(a, b) for a, b in zip(
            (worst.M, worst.b, worst.qdd, worst.cond), (e.M, e.b, e.qdd, e.cond))))
    return worst


class MujocoRobot:
    """The same URDF file compiled by MuJoCo (fixed base), a second reference.

    MuJoCo reads URDF itself; the visual and collision elements are removed first
    (their meshes are not needed and their ``package://`` paths would not resolve),
    static bodies are kept apart (``fusestatic="false"``: MuJoCo welds them itself) and
    the joints' armature and limits are switched off (constraints disabled), so that
    ``mj_forward`` gives the rigid-body dynamics with the joints' damping (MuJoCo reads
    the URDF's ``<dynamics damping>`` itself): ``M`` (``mj_fullM``), the bias
    ``qfrc_bias − qfrc_passive`` and ``qacc``. MuJoCo refuses files
    with impossible inertias (``ValueError``).
    """

    def __init__(self, path: Path, coordinates: dict[str, str], order, speeds) -> None:
        import tempfile

        import mujoco
        from lxml import etree

        self.mujoco = mujoco
        root = etree.parse(str(path)).getroot()
        for tag in ("visual", "collision", "transmission", "gazebo"):
            for el in list(root.iter(tag)):
                el.getparent().remove(el)
        extension = etree.SubElement(root, "mujoco")
        etree.SubElement(extension, "compiler", fusestatic="false", discardvisual="true")
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "robot.urdf"
            copy.write_bytes(etree.tostring(root))
            self.model = mujoco.MjModel.from_xml_path(str(copy))
        m = self.model
        m.dof_armature[:] = 0.0
        m.dof_frictionloss[:] = 0.0
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
        self.data = mujoco.MjData(m)
        order = [str(c) for c in order]
        speeds = [str(w) for w in speeds]
        self.n_q, self.n_w = len(order), len(speeds)
        self.Pq = np.zeros((m.nq, self.n_q))
        self.P = np.zeros((m.nv, self.n_w))
        for j in range(m.njnt):
            c = coordinates[m.joint(j).name]
            self.Pq[m.jnt_qposadr[j], order.index(c)] = 1.0
            self.P[m.jnt_dofadr[j], speeds.index(c + "'t")] = 1.0

    def dynamics(self, qk: np.ndarray, wk: np.ndarray) -> tuple[np.ndarray, ...]:
        """``M``, ``qfrc_bias`` and ``qacc`` of MuJoCo at kidym's state."""
        mj, m, d = self.mujoco, self.model, self.data
        d.qpos[:], d.qvel[:] = self.Pq @ qk, self.P @ wk
        mj.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mj.mj_fullM(m, d, M)
        # the joints' damping (MuJoCo reads the URDF's too) is its passive force
        return M, d.qfrc_bias - d.qfrc_passive, d.qacc.copy()


def compare_mujoco(system, robot: MujocoRobot, *, n_states: int, seed: int = 0) -> Errors:
    """kidym's ``M``, ``−F`` and ``M⁻¹F`` against MuJoCo at random states (as
    :func:`compare`)."""
    rng = np.random.default_rng(seed)
    p = system.parameter_vector()
    P = robot.P
    worst = Errors(0.0, 0.0, 0.0, 0.0)
    for _ in range(n_states):
        qk = rng.uniform(-np.pi, np.pi, robot.n_q)
        wk = rng.normal(0.0, 2.0, robot.n_w)
        _, M, F = system.evaluate(0.0, np.concatenate([qk, wk]), p)[:3]
        M = np.asarray(M, float)
        F = np.asarray(F, float)[:robot.n_w]
        Mr, br, ar = robot.dynamics(qk, wk)
        cond = float(np.linalg.cond(Mr))
        ak = P @ np.linalg.solve(M, F)
        e = Errors(float(np.abs(P @ M @ P.T - Mr).max() / np.abs(Mr).max()),
                   float(np.abs(-P @ F - br).max() / np.abs(br).max()),
                   float(np.abs(ak - ar).max() / np.abs(ar).max() / cond), cond)
        worst = Errors(*(max(a, b) for a, b in zip(
            (worst.M, worst.b, worst.qdd, worst.cond), (e.M, e.b, e.qdd, e.cond))))
    return worst
