"""A URDF link's visual mesh (STL or OBJ, at the link frame, uniform scale) becomes a
`SHAPES` mesh of its body; the viewer draws it in the body frame, which is the link
frame: checked against Pinocchio's placement of the link's frame, and the embedded
numbers against the file read here with `struct`. Other visuals stay comments."""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from kidym.report.animation import animation_html
from kidym.report.poses import body_poses
from kidym.robots import import_robot
from tests.model.test_display_meshes import (
    FACETS,
    TETRAHEDRON,
    decoded,
    embedded,
    own_stl_corners,
    write_binary_stl,
)

URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0.2 0 0"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
    <visual><geometry><mesh filename="meshes/arm.stl" scale="0.5 0.5 0.5"/></geometry>
    </visual>
  </link>
  <link name="hand">
    <inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial>
    <visual><origin xyz="0.1 0 0"/>
      <geometry><mesh filename="meshes/hand.obj"/></geometry></visual>
  </link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0.3 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="arm"/><child link="hand"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
</robot>
"""


@pytest.fixture
def robot(tmp_path):
    (tmp_path / "meshes").mkdir()
    write_binary_stl(tmp_path / "meshes" / "arm.stl", TETRAHEDRON, FACETS)
    (tmp_path / "meshes" / "hand.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    return path


def test_a_visual_mesh_at_the_link_frame_is_drawn_there(robot, tmp_path):
    pin = pytest.importorskip("pinocchio", reason="the robots-test extra (Pinocchio)")
    pytest.importorskip("yourdfpy", reason="the robots extra (yourdfpy)")
    imported = import_robot(robot)
    arm = imported.bodies["arm"]
    shapes = [line for line in imported.text.splitlines() if line.startswith("SHAPES")]
    assert shapes == [f'SHAPES := {arm}(mesh("{tmp_path / "meshes" / "arm.stl"}", 0.5));']
    assert "meshes/hand.obj" in imported.text   # (placed off its link frame: a comment)
    model_path = imported.write(tmp_path / "arm.kdm")
    model = kidym.load(model_path)
    result = kidym.simulate(model, t_end=0.3, n_points=7, engine="numpy",
                            initial={imported.coordinates["j1"] + "'t": 2.0,
                                     imported.coordinates["j2"]: 0.4})
    poses = body_poses(model, result)
    k = poses.bodies.index(arm)
    # the link frame by Pinocchio, at the states of the run
    pm = pin.buildModelFromUrdf(str(robot))
    data = pm.createData()
    frame = pm.getFrameId("arm")
    for i in range(result.t.size):
        q = np.array([result[imported.coordinates[j]][i] for j in ("j1", "j2")])
        pin.framesForwardKinematics(pm, data, q)
        placement = data.oMf[frame]
        np.testing.assert_allclose(poses.origin[k, i], placement.translation, atol=1e-12)
        np.testing.assert_allclose(poses.rotation[k, i], placement.rotation, atol=1e-12)
    page = embedded(animation_html(poses, model))
    body = page["bodies"][k]
    assert body["shape"] == "mesh" and body["scale"] == 0.5
    # the page draws a mesh with `frame` and `origin`, the body frame's
    np.testing.assert_allclose(np.reshape(body["frame"], (-1, 3, 3)), poses.rotation[k],
                               atol=1e-6)
    vertices = decoded(page["meshes"][body["mesh"]]["vertices"], "<f4").reshape(-1, 3)
    np.testing.assert_array_equal(vertices, own_stl_corners(tmp_path / "meshes" / "arm.stl"))


def test_a_mesh_that_cannot_be_drawn_stays_a_comment(robot, tmp_path):
    pytest.importorskip("yourdfpy", reason="the robots extra (yourdfpy)")
    (tmp_path / "meshes" / "arm.stl").unlink()
    imported = import_robot(robot)
    assert "SHAPES" not in imported.text and "meshes/arm.stl" in imported.text
    kidym.parse(imported.text)   # and the model reads
