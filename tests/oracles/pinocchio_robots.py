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
    """A URDF file loaded by Pinocchio, with kidym's coordinate order mapped onto it.

    Parameters
    ----------
    path : Path
        The URDF file.
    coordinates : dict of str to str
        Joint name → kidym coordinate name (the import's map).
    order : sequence of str
        kidym's coordinate names in the order of its state.
    floating : bool
        Load with a free-flyer root joint (kidym's ``x, y, z, l0…l3`` and speeds
        ``vx, vy, vz, ωX, ωY, ωZ`` of the base).
    """

    def __init__(self, path: Path, coordinates: dict[str, str], order, *,
                 floating: bool = False) -> None:
        import pinocchio as pin

        self.pin = pin
        self.model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
                      if floating else pin.buildModelFromUrdf(str(path)))
        self.data = self.model.createData()
        order = [str(c) for c in order]
        self.floating = floating
        self.n = len(order)
        # rows: Pinocchio's v; columns: kidym's speeds (same joints, other order)
        self.joint_map = []
        for jid in range(1, self.model.njoints):
            j = self.model.joints[jid]
            name = self.model.names[jid]
            if floating and jid == 1:
                continue
            self.joint_map.append((j.idx_q, j.nq, j.idx_v, order.index(coordinates[name])))
        self.order = order

    def state(self, qk: np.ndarray, wk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pinocchio's ``q`` for kidym's coordinates, and the matrix ``P`` with
        ``v = P w`` for kidym's speeds ``w``."""
        pin = self.pin
        q = pin.neutral(self.model)
        P = np.zeros((self.model.nv, len(wk)))
        if self.floating:
            k = {c: i for i, c in enumerate(self.order)}
            q[:3] = [qk[k[c]] for c in ("x", "y", "z")]
            l0, l1, l2, l3 = (qk[k[c]] for c in ("l0", "l1", "l2", "l3"))
            q[3:7] = np.array([l1, l2, l3, l0]) / np.linalg.norm([l0, l1, l2, l3])
        for iq, nq, iv, c in self.joint_map:
            if nq == 2:
                q[iq:iq + 2] = np.cos(qk[c]), np.sin(qk[c])
            else:
                q[iq] = qk[c]
            P[iv, c] = 1.0
        return q, P

    def dynamics(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
        """``M``, ``b`` and ``q̈`` of Pinocchio at ``q``, ``v`` with zero torques."""
        pin = self.pin
        M = pin.crba(self.model, self.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        zero = np.zeros(self.model.nv)
        b = pin.rnea(self.model, self.data, q, v, zero)
        a = pin.aba(self.model, self.data, q, v, zero)
        return M, b, a


def compare(system, robot: PinocchioRobot, *, n_states: int, seed: int = 0) -> Errors:
    """kidym's ``M``, ``−F`` and ``M⁻¹F`` against Pinocchio at random states.

    ``system`` is a :class:`~kidym.simulate.simulate.NumpySystem` or
    :class:`~kidym.simulate.compiled.CompiledSystem` of the imported model (fixed base:
    kidym's speeds are the joint rates, ``v = P w``).
    """
    rng = np.random.default_rng(seed)
    p = system.parameter_vector()
    n_q = robot.n
    worst = Errors(0.0, 0.0, 0.0, 0.0)
    for _ in range(n_states):
        qk = rng.uniform(-np.pi, np.pi, n_q)
        wk = rng.normal(0.0, 2.0, n_q)
        q, P = robot.state(qk, wk)
        v = P @ wk
        _, M, F = system.evaluate(0.0, np.concatenate([qk, wk]), p)[:3]
        M = np.asarray(M, float)
        F = np.asarray(F, float)
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
