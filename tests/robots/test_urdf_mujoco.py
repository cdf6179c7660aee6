"""Robots imported from URDF against MuJoCo, a second reference (issue 30).

MuJoCo compiles the same URDF files itself (``tests/oracles/pinocchio_robots.py``,
``MujocoRobot``: meshes dropped, joint damping, armature and limits off). At random
states kidym's M, −F and M⁻¹F equal ``mj_fullM``, ``qfrc_bias`` and ``qacc`` to 1e-12
(M, b relative to their largest entry; q̈ times cond(M)). MuJoCo refuses the robots
whose links carry impossible inertias; kidym imports them with a warning per link
(the inertia policy, docs/robots.md).
"""

from __future__ import annotations

import pytest

import kidym
from kidym.robots import import_robot
from kidym.simulation.simulate import NumpySystem
from tests.oracles.pinocchio_robots import ROBOTS, MujocoRobot, compare_mujoco, robots_dir

pytest.importorskip("yourdfpy", reason="the robots extra: pip install 'kidym[robots]'")
pytest.importorskip("mujoco", reason="the robots-test extra (MuJoCo)")
pytest.importorskip("lxml", reason="the robots extra")


@pytest.fixture(autouse=True)
def _mujoco_log_in_tmp(tmp_path, monkeypatch):
    """MuJoCo writes its warnings to MUJOCO_LOG.TXT in the working directory."""
    monkeypatch.chdir(tmp_path)

try:
    ROBOTS_DIR = robots_dir()
except Exception:  # the wheel is not installed
    ROBOTS_DIR = None
needs_data = pytest.mark.skipif(ROBOTS_DIR is None or not ROBOTS_DIR.is_dir(),
                                reason="example-robot-data is not installed (robots-test)")

FAST = ("ur5", "panda")
#: MuJoCo's compiler refuses these: a link's inertia has a negative eigenvalue
REFUSED = ("anymal_b", "hyq", "go1", "icub_reduced")
SLOW = tuple(r for r in ROBOTS if r not in FAST + REFUSED)


def _check(name: str) -> None:
    path = ROBOTS_DIR / ROBOTS[name]
    robot = import_robot(path)
    eq = kidym.derive(kidym.parse(robot.text, name=name))
    ref = MujocoRobot(path, robot.coordinates, eq.coordinates, eq.speeds)
    err = compare_mujoco(NumpySystem.build(eq), ref, n_states=100, seed=3)
    assert err.M < 1e-12 and err.b < 1e-12 and err.qdd < 1e-12, err


@needs_data
@pytest.mark.parametrize("name", FAST)
def test_fast_robots_equal_mujoco(name):
    _check(name)


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_robots_equal_mujoco(name):
    _check(name)


@needs_data
@pytest.mark.parametrize("name", REFUSED)
def test_robots_mujoco_refuses_are_imported_with_a_warning_per_link(name):
    path = ROBOTS_DIR / ROBOTS[name]
    robot = import_robot(path)
    eq = kidym.derive(kidym.parse(robot.text, name=name))
    with pytest.raises(ValueError, match="inertia must have positive eigenvalues"):
        MujocoRobot(path, robot.coordinates, eq.coordinates, eq.speeds)
    shown = "\n".join(robot.format_warnings())
    assert "warning: link `" in shown and "its inertia tensor is" in shown
    with pytest.raises(kidym.ParseError, match="error: link `"):
        import_robot(path, strict=True)
