"""Drake as the reference for robots imported from SDF files (issue 30).

Drake's ``MultibodyPlant`` parses SDF with libsdformat (its own frame semantics,
independent of kidym's reader) and gives the mass matrix (``CalcMassMatrix``), the
bias ``C v`` (``CalcBiasTerm``), the gravity forces (``CalcGravityGeneralizedForces``, ``τ_g``)
and the joints' damping ``D`` as Drake reads it: kidym's ``M`` and
``F = −(C v − τ_g + D v)``. Drake does not close kinematic loops:
the file is given to it with its loop-closing ball joints cut (removed from the XML) and
the root link welded to the world, and the loops are checked on Drake's kinematics
(``CalcPointsPositions``, ``CalcJacobianTranslationalVelocity``,
``CalcBiasTranslationalAcceleration``) of the two points of each closing joint.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def cut_file(path: Path, cut: set[str], root_link: str | None) -> str:
    """The SDF text without the joints named in ``cut`` (and without visuals,
    collisions and plugins), the root link welded to the world when given."""
    from lxml import etree

    root = etree.parse(str(path)).getroot()
    model = root.find("model")
    for j in list(model.findall("joint")):
        if j.get("name") in cut:
            model.remove(j)
    for el in list(model.iter("visual", "collision", "plugin", "sensor")):
        el.getparent().remove(el)
    if root_link is not None:
        weld = etree.SubElement(model, "joint", name="kidym_test_weld", type="fixed")
        etree.SubElement(weld, "parent").text = "world"
        etree.SubElement(weld, "child").text = root_link
    return etree.tostring(root).decode()


class DrakeRobot:
    """An SDF file loaded by Drake, kidym's state mapped onto it by joint names.

    Parameters
    ----------
    path : Path
        The SDF file.
    coordinates : dict of str to str
        Joint name → kidym coordinate name (the import's map).
    order, speeds : sequence
        kidym's coordinates and speeds in the order of its state.
    cut : set of str
        The loop-closing joints to remove.
    root_link : str or None
        Weld this link to the world (kidym's fixed base).
    """

    def __init__(self, path: Path, coordinates: dict[str, str], order, speeds, *,
                 cut: set[str] = frozenset(), root_link: str | None = None) -> None:
        import logging

        from pydrake.multibody.parsing import Parser
        from pydrake.multibody.plant import MultibodyPlant

        logging.getLogger("drake").setLevel(logging.ERROR)   # unsupported tags: plugins
        plant = MultibodyPlant(0.0)
        Parser(plant).AddModelsFromString(cut_file(path, set(cut), root_link), "sdf")
        plant.Finalize()
        self.plant = plant
        self.context = plant.CreateDefaultContext()
        order = [str(c) for c in order]
        speeds = [str(w) for w in speeds]
        self.n_q, self.n_w = len(order), len(speeds)
        self.Pq = np.zeros((plant.num_positions(), self.n_q))
        self.P = np.zeros((plant.num_velocities(), self.n_w))
        for name, c in coordinates.items():
            joint = plant.GetJointByName(name)
            self.Pq[joint.position_start(), order.index(c)] = 1.0
            self.P[joint.velocity_start(), speeds.index(c + "'t")] = 1.0
        assert (self.Pq.sum(axis=1) == 1).all() and (self.P.sum(axis=1) == 1).all()
        # the joints' damping, as Drake read it from the file (`<dynamics><damping>`)
        self.damping = np.zeros(plant.num_velocities())
        for index in plant.GetJointIndices():
            joint = plant.get_joint(index)
            if joint.num_velocities() == 1:
                self.damping[joint.velocity_start()] = joint.default_damping_vector()[0]

    def set_state(self, qk: np.ndarray, wk: np.ndarray) -> None:
        """Drake's ``q``, ``v`` for kidym's coordinates and speeds."""
        self.plant.SetPositions(self.context, self.Pq @ qk)
        self.plant.SetVelocities(self.context, self.P @ wk)

    def dynamics(self) -> tuple[np.ndarray, np.ndarray]:
        """``M`` and ``b = C v − τ_g + D v`` at the state set (D: the joints' damping,
        which ``CalcBiasTerm`` leaves out)."""
        M = self.plant.CalcMassMatrix(self.context)
        v = self.plant.GetVelocities(self.context)
        b = self.plant.CalcBiasTerm(self.context) \
            - self.plant.CalcGravityGeneralizedForces(self.context) + self.damping * v
        return M, b

    def point(self, link: str, p: np.ndarray, measured_in: str | None = None
              ) -> tuple[np.ndarray, ...]:
        """Position, translational Jacobian (``∂ṗ/∂v``) and bias acceleration ``J̇ v``
        of the point ``p`` of ``link``, measured and expressed in the frame of the body
        ``measured_in`` (default: the world)."""
        from pydrake.multibody.tree import JacobianWrtVariable

        plant, ctx = self.plant, self.context
        frame = plant.GetBodyByName(link).body_frame()
        world = plant.world_frame() if measured_in is None else \
            plant.GetBodyByName(measured_in).body_frame()
        p = np.asarray(p, float).reshape(3, 1)
        x = plant.CalcPointsPositions(ctx, frame, p, world)[:, 0]
        J = plant.CalcJacobianTranslationalVelocity(ctx, JacobianWrtVariable.kV, frame, p,
                                                    world, world)
        Jdv = plant.CalcBiasTranslationalAcceleration(ctx, JacobianWrtVariable.kV, frame, p,
                                                      world, world)[:, 0]
        return x, J, Jdv
