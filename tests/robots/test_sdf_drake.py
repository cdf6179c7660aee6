"""SDF import against Drake (issue 30).

Drake's ``MultibodyPlant`` reads the same SDF files with libsdformat, so its frames,
poses and axes are resolved independently of kidym's reader. At random states kidym's
mass matrix M and bias forces b = −F equal Drake's ``CalcMassMatrix`` and
``CalcBiasTerm − CalcGravityGeneralizedForces`` to 1e-12 relative to their largest
entry (with the joints' damping as Drake reads it added). Cassie
(``example-robot-data``, ``cassie_v2.sdf``) closes four loops with ball joints: kidym's
``COINCIDE`` constraints vanish at the file's pose, and their value,
Jacobian and ``γ = −J̇ v`` equal Drake's points, ``CalcJacobianTranslationalVelocity``
and ``CalcBiasTranslationalAcceleration`` on the tree with the loops cut; kidym's
constrained accelerations equal the solution of ``[M Jᵀ; J 0]`` from Drake's pieces.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="the robots-test extra (Drake)")

import kidym
from kidym.errors import SimulationError
from kidym.robots import import_robot
from kidym.simulate.simulate import NumpySystem
from tests.oracles.drake_robots import DrakeRobot
from tests.robots.test_sdf_import import ARM

TOL = 1e-12


def _cassie() -> Path | None:
    try:
        from tests.oracles.pinocchio_robots import robots_dir

        path = robots_dir() / "cassie_description/robots/cassie_v2.sdf"
    except Exception:   # the wheel is not installed
        return None
    return path if path.is_file() else None


CASSIE = _cassie()
needs_cassie = pytest.mark.skipif(CASSIE is None, reason="example-robot-data is not "
                                                         "installed (robots-test)")


def _system(eq, engine: str):
    if engine == "numpy":
        return NumpySystem.build(eq)
    from kidym.simulate.compiled import CompiledSystem

    return CompiledSystem.build(eq)


def _check_tree(system, ref: DrakeRobot, n: int, n_states: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = system.parameter_vector()
    P = ref.P
    for _ in range(n_states):
        qk, wk = rng.uniform(-np.pi, np.pi, n), rng.normal(0.0, 2.0, n)
        ref.set_state(qk, wk)
        M, b = ref.dynamics()
        _, Mk, F = system.evaluate(0.0, np.concatenate([qk, wk]), p)[:3]
        Mk, F = np.asarray(Mk, float), np.asarray(F, float)[:n]
        assert np.abs(P @ Mk @ P.T - M).max() <= TOL * np.abs(M).max()
        assert np.abs(-P @ F - b).max() <= TOL * np.abs(b).max()


@pytest.mark.parametrize("engine", ["numpy", pytest.param("compiled", marks=[
    pytest.mark.compiled, pytest.mark.slow])])
def test_sdf_arm_equals_drake(tmp_path, engine):
    path = tmp_path / "arm.sdf"
    path.write_text(ARM)
    robot = import_robot(path)
    assert robot.warnings == []
    # the joint frame of `shoulder` is off the child's origin: a massless link there
    assert "upper_shoulder" in robot.bodies
    eq = kidym.derive(kidym.parse(robot.text))
    ref = DrakeRobot(path, robot.coordinates, eq.coordinates, eq.speeds)
    _check_tree(_system(eq, engine), ref, eq.n_w, n_states=100, seed=2)


@needs_cassie
@pytest.mark.parametrize("engine", ["numpy", pytest.param("compiled", marks=[
    pytest.mark.compiled, pytest.mark.slow])])
def test_cassie_loops_equal_drake(engine):
    """Cassie on a fixed pelvis: 22 joints, 4 loops closed by ball joints (12
    constraints)."""
    from lxml import etree

    robot = import_robot(CASSIE)
    eq = kidym.derive(kidym.parse(robot.text))
    n, m = eq.n_w, eq.m
    assert (n, m) == (22, 12) and len(robot.loops) == 4
    assert eq.constraints.names == tuple(f"coin{a}{k}" for k in range(1, 5) for a in "XYZ")
    ref = DrakeRobot(CASSIE, robot.coordinates, eq.coordinates, eq.speeds,
                     cut=set(robot.loops), root_link="pelvis")
    assert ref.damping.any() and robot.text.count("Ddamp.") == np.count_nonzero(ref.damping)
    system = _system(eq, engine)
    _check_tree(system, ref, n, n_states=30, seed=3)
    # each closing joint: its centre (its pose, in the child link) in both links, read
    # from the file and placed in the parent by Drake's kinematics at the file's pose
    joints = {j.get("name"): j for j in etree.parse(str(CASSIE)).getroot().iter("joint")}
    zero = np.zeros(n)
    ref.set_state(zero, zero)
    points = []
    for name in robot.loops:
        el = joints[name]
        parent, child = el.findtext("parent").strip(), el.findtext("child").strip()
        in_child = np.array([float(v) for v in el.findtext("pose").split()[:3]])
        x, _, _ = ref.point(child, in_child)
        X = ref.plant.EvalBodyPoseInWorld(ref.context, ref.plant.GetBodyByName(parent))
        points.append((child, in_child, parent, X.inverse().multiply(x)))
    p = system.parameter_vector()
    # the file's pose is a consistent state: kidym's constraints vanish there
    _, _, block0 = system.constraint_block(0.0, np.concatenate([zero, zero]), p)
    assert np.abs(block0.phi).max() <= 1e-12
    # the plantar rods close planar four-bars with ball joints: Drake's Jacobian of each
    # has rank 2 of 3 there (axes parallel), so the 12 constraints have rank 10, and a
    # run from that pose stops and says so (no silent success)
    ranks = []
    for child, pc, parent, pp in points:
        s = np.linalg.svd(ref.point(child, pc)[1] - ref.point(parent, pp)[1],
                          compute_uv=False)
        ranks.append(int((s > 1e-9 * s[0]).sum()))
    assert ranks == [3 if "pitch" in name else 2 for name in robot.loops], ranks
    with pytest.raises(SimulationError, match=r"the rank of their Jacobian is 10, not 12"):
        kidym.simulate(system, t_end=0.01)
    rng = np.random.default_rng(5)
    P = ref.P
    for _ in range(30):
        qk, wk = rng.uniform(-0.5, 0.5, n), rng.normal(0.0, 2.0, n)
        ref.set_state(qk, wk)
        M, b = ref.dynamics()
        phi, J, Jdv = [], [], []
        for child, pc, parent, pp in points:
            xa, Ja, Ja_dv = ref.point(child, pc)
            xb, Jb, Jb_dv = ref.point(parent, pp)
            phi.append(xa - xb)
            J.append(Ja - Jb)
            Jdv.append(Ja_dv - Jb_dv)
        phi, J, gamma = np.concatenate(phi), np.vstack(J), -np.concatenate(Jdv)
        y = np.concatenate([qk, wk])
        _, _, block = system.constraint_block(0.0, y, p)
        assert np.abs(block.phi - phi).max() <= TOL * np.abs(phi).max()
        assert np.abs(block.G @ P.T - J).max() <= TOL * np.abs(J).max()
        assert np.abs(block.gamma - gamma).max() <= TOL * np.abs(gamma).max()
        kkt = np.block([[M, J.T], [J, np.zeros((m, m))]])
        expected = np.linalg.solve(kkt, np.concatenate([-b, gamma]))[:n]
        got = P @ system.rhs(0.0, y, p)[n:2 * n]
        cond = np.linalg.cond(kkt)
        assert np.abs(got - expected).max() <= TOL * cond * np.abs(expected).max()
