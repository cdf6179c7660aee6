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
from kidym.robots import import_robot
from kidym.simulation.simulate import NumpySystem
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
    from kidym.simulation.compiled import CompiledSystem

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


def _cassie_points(ref: DrakeRobot, loops) -> list[tuple[str, str, np.ndarray, str,
                                                          np.ndarray]]:
    """Each closing joint: its centre (its pose, in the child link) in both links, read
    from the file and placed in the parent by Drake's kinematics at the file's pose."""
    from lxml import etree

    joints = {j.get("name"): j for j in etree.parse(str(CASSIE)).getroot().iter("joint")}
    zero = np.zeros(ref.n_w)
    ref.set_state(zero, zero)
    points = []
    for name in loops:
        el = joints[name]
        parent, child = el.findtext("parent").strip(), el.findtext("child").strip()
        in_child = np.array([float(v) for v in el.findtext("pose").split()[:3]])
        x, _, _ = ref.point(child, in_child)
        X = ref.plant.EvalBodyPoseInWorld(ref.context, ref.plant.GetBodyByName(parent))
        points.append((name, child, in_child, parent, X.inverse().multiply(x)))
    return points


#: the planar loops' common ancestor (the tarsus) and kidym's plane axes in it: the
#: joints' axes are its z axis (to 7.4e-8 rad on the right), the plane its x, y
_PLANAR = {"left-plantar-foot-joint": "left-tarsus", "right-plantar-foot-joint": "right-tarsus"}


def _drake_loops(ref: DrakeRobot, points) -> tuple[np.ndarray, ...]:
    """Drake's closure of the loops in kidym's form, at the state set in ``ref``: for a
    spatial loop the fixed-axis components of the points' distance, for a planar one
    its x, y components in the tarsus axes (the points measured and expressed in the
    tarsus frame: ``CalcJacobianTranslationalVelocity`` and
    ``CalcBiasTranslationalAcceleration`` with the tarsus as measuring frame); value,
    Jacobian ``∂Φ̇/∂v`` and ``γ = −J̇ v``."""
    phi, J, gamma = [], [], []
    for name, child, pc, parent, pp in points:
        top = _PLANAR.get(name)
        rows = slice(0, 3) if top is None else slice(0, 2)
        xa, Ja, ba = ref.point(child, pc, top)
        xb, Jb, bb = ref.point(parent, pp, top)
        phi.append((xa - xb)[rows])
        J.append((Ja - Jb)[rows])
        gamma.append(-(ba - bb)[rows])
    return np.concatenate(phi), np.vstack(J), np.concatenate(gamma)


@needs_cassie
@pytest.mark.parametrize("engine", ["numpy", pytest.param("compiled", marks=[
    pytest.mark.compiled, pytest.mark.slow])])
def test_cassie_loops_equal_drake(engine):
    """Cassie on a fixed pelvis: 22 joints, 4 loops closed by ball joints. The two
    plantar four-bars are planar (10 constraints, full rank), the achilles loops
    spatial (COINCIDE)."""
    robot = import_robot(CASSIE)
    eq = kidym.derive(kidym.parse(robot.text))
    n, m = eq.n_w, eq.m
    assert (n, m) == (22, 10) and len(robot.loops) == 4
    planar = {name for name, rows in robot.loop_constraints.items() if len(rows) == 2}
    assert planar == set(_PLANAR)
    # kidym's constraints in the order of Drake's rows below (EQUATIONS, then COINCIDE)
    order = [*(r for name in robot.loops if name in planar
               for r in robot.loop_constraints[name]),
             *(r for name in robot.loops if name not in planar
               for r in robot.loop_constraints[name])]
    assert eq.constraints.names == tuple(order)
    loops = [name for name in robot.loops if name in planar] + \
        [name for name in robot.loops if name not in planar]
    ref = DrakeRobot(CASSIE, robot.coordinates, eq.coordinates, eq.speeds,
                     cut=set(robot.loops), root_link="pelvis")
    assert ref.damping.any() and robot.text.count("Ddamp.") == np.count_nonzero(ref.damping)
    system = _system(eq, engine)
    _check_tree(system, ref, n, n_states=30, seed=3)
    points = _cassie_points(ref, loops)
    p = system.parameter_vector()
    zero = np.zeros(n)
    _, _, block0 = system.constraint_block(0.0, np.concatenate([zero, zero]), p)
    assert np.abs(block0.phi).max() <= 1e-12
    rng = np.random.default_rng(5)
    P = ref.P
    for _ in range(30):
        qk, wk = rng.uniform(-0.5, 0.5, n), rng.normal(0.0, 2.0, n)
        ref.set_state(qk, wk)
        M, b = ref.dynamics()
        phi, J, gamma = _drake_loops(ref, points)
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


@pytest.fixture(scope="module")
def cassie_run():
    """Cassie on its fixed pelvis, falling under gravity from the file's pose for 0.1 s
    (NumPy engine): the model, its system, Drake on the cut tree, the loops' points."""
    robot = import_robot(CASSIE)
    eq = kidym.derive(kidym.parse(robot.text))
    system = NumpySystem.build(eq)
    result = kidym.simulate(system, t_end=0.1, n_points=11)
    ref = DrakeRobot(CASSIE, robot.coordinates, eq.coordinates, eq.speeds,
                     cut=set(robot.loops), root_link="pelvis")
    return robot, eq, system, result, ref, _cassie_points(ref, robot.loops)


#: the detector's parallel tolerance (rad) times Cassie's longest loop link (m): how far
#: from the plane the planar form may let a loop's points part
_OUT_OF_PLANE = 1e-6 * 0.5


@needs_cassie
@pytest.mark.slow
def test_cassie_runs_with_its_loops_closed(cassie_run):
    """Along the run (consistent states): every loop's two points meet in Drake's
    kinematics (all three components); each planar loop's two rows span the row space
    of Drake's 3-row Jacobian of the points' distance (rank 2); the accelerations equal
    the solution of Drake's ``[M Jᵀ; J 0]`` with the 12 rows of the four loops reduced
    to their row space (rank 10)."""
    robot, eq, system, result, ref, points = cassie_run
    n = eq.n_w
    assert result.success and result.t[-1] == pytest.approx(0.1)
    drift = result.stats["constraint_drift"]
    assert drift["position"] <= drift["tolerance"] and drift["velocity"] <= drift["tolerance"]
    Y, p, P = result.y, system.parameter_vector(), ref.P
    # the legs move: the heel springs and the achilles rods turn by ~0.4–0.5 rad
    assert np.abs(Y[:n, -1]).max() > 0.1
    rows = {name: [eq.constraints.names.index(r) for r in robot.loop_constraints[name]]
            for name in robot.loops}
    for k in range(Y.shape[1]):
        y = Y[:, k]
        ref.set_state(y[:n], y[n:])
        J, gamma = [], []
        _, _, block = system.constraint_block(float(result.t[k]), y, p)
        G = block.G @ P.T
        for name, child, pc, parent, pp in points:
            xa, Ja, ba = ref.point(child, pc)
            xb, Jb, bb = ref.point(parent, pp)
            assert np.abs(xa - xb).max() <= drift["tolerance"] + _OUT_OF_PLANE, name
            J3 = Ja - Jb
            J.append(J3)
            gamma.append(-(ba - bb))
            if name in _PLANAR:
                _, s, Vt = np.linalg.svd(J3)
                assert s[2] <= 1e-6 * s[0], (name, s)      # rank 2
                G2 = G[rows[name]]
                assert G2.shape == (2, n) and np.linalg.matrix_rank(G2) == 2
                # kidym's rows lie in Drake's 2-D row space (so both span it)
                assert np.abs(G2 - G2 @ Vt[:2].T @ Vt[:2]).max() <= 1e-6 * np.abs(G2).max()
        J, gamma = np.vstack(J), np.concatenate(gamma)
        U, s, Vt = np.linalg.svd(J)
        r = int((s > 1e-6 * s[0]).sum())
        assert r == 10 == eq.m
        Jr, gr = Vt[:r], (U[:, :r].T @ gamma) / s[:r]
        M, b = ref.dynamics()
        kkt = np.block([[M, Jr.T], [Jr, np.zeros((r, r))]])
        expected = np.linalg.solve(kkt, np.concatenate([-b, gr]))[:n]
        got = P @ system.rhs(float(result.t[k]), y, p)[n:2 * n]
        assert np.abs(got - expected).max() <= TOL * np.linalg.cond(kkt) * \
            np.abs(expected).max()


@needs_cassie
@pytest.mark.slow
@pytest.mark.compiled
def test_cassie_runs_the_same_in_both_engines(cassie_run):
    """The compiled engine's run equals the NumPy engine's: both integrate to rtol 1e-9,
    so they agree to 1e-6 of each state's scale (10³ rtol, a margin for the error's
    growth over the run)."""
    from kidym.simulation.compiled import CompiledSystem

    _, eq, _, result, _, _ = cassie_run
    other = kidym.simulate(CompiledSystem.build(eq), t_end=0.1, n_points=11)
    assert other.success
    drift = other.stats["constraint_drift"]
    assert drift["position"] <= drift["tolerance"]
    a, b = result.y, other.y
    scale = np.maximum(1.0, np.abs(a).max(axis=1, keepdims=True))
    assert np.all(np.abs(a - b) <= 1e-6 * scale)
