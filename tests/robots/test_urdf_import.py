"""URDF import: the model text, names, inertia policy, located errors, a fuzz run.

The dynamics of what is written are checked against Pinocchio (independent of kidym)
on small inline robots that exercise what the real robots of
``test_urdf_pinocchio.py`` may not: joint axes not aligned with the frame axes, a
prismatic joint, fixed joints merged with products of inertia, a gimbal-lock origin,
a mimic joint followed.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

pytest.importorskip("yourdfpy", reason="the robots extra: pip install 'kidym[robots]'")

import kidym
from kidym.errors import ParseError
from kidym.robots import import_robot
from kidym.robots.composite import inertia_issue, nearest_admissible
from kidym.robots.writer import kidym_name
from kidym.simulation.simulate import NumpySystem


def _inertial(m, xyz="0 0 0", rpy="0 0 0", ixx=0.01, iyy=0.02, izz=0.025, ixy=0.0,
              ixz=0.0, iyz=0.0):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" '
            f'iyz="{iyz}"/></inertial>')


#: an arm with every feature of the importer that the real robots may not have
ARM = f"""<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="l1">{_inertial(1.2, "0.01 0.02 0.1", "0.3 -0.2 0.5", ixy=0.002, ixz=-0.001)}
    <visual><geometry><mesh filename="package://arm/l1#{{x}}.stl"/></geometry></visual></link>
  <link name="l2">{_inertial(0.8, "0.1 0 0.02", "0 0 0", iyz=0.003)}</link>
  <link name="tool">{_inertial(0.3, "0 0.05 0", "1.0 0.4 -0.7")}</link>
  <link name="slider">{_inertial(0.5, "0 0 -0.03")}</link>
  <link name="wheel">{_inertial(0.2, ixx=0.001, iyy=0.001, izz=0.0015)}</link>
  <link name="finger">{_inertial(0.1, "0 0 0.02")}</link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0.3 -0.5 0.8"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/>
  </joint>
  <joint name="elbow-1" type="continuous">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0.05 0" rpy="0 1.5707963267948966 0.4"/><axis xyz="0 -1 0"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="l2"/><child link="tool"/>
    <origin xyz="0.3 0 0.01" rpy="0.5 -0.3 1.2"/>
  </joint>
  <joint name="t" type="prismatic">
    <parent link="tool"/><child link="slider"/>
    <origin xyz="0 0.1 0" rpy="0 0 0"/><axis xyz="1 1 0"/>
    <limit lower="-0.1" upper="0.1" effort="20" velocity="0.5"/>
  </joint>
  <joint name="spin" type="revolute">
    <parent link="slider"/><child link="wheel"/>
    <origin xyz="0 0 -0.05" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="5" velocity="9"/>
  </joint>
  <joint name="finger_joint" type="revolute">
    <parent link="slider"/><child link="finger"/>
    <origin xyz="0.02 0 0" rpy="0 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="5" velocity="9"/>
    <mimic joint="spin" multiplier="-0.5" offset="0.1"/>
  </joint>
</robot>
"""


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return path


def _pinocchio():
    return pytest.importorskip("pinocchio", reason="the robots-test extra (Pinocchio)")


def test_arm_text_reads_back_with_the_joint_names(arm):
    robot = import_robot(arm)
    model = kidym.parse(robot.text)
    eq = kidym.derive(model)
    # `elbow-1` is not a kidym name and `t` is time: both renamed, the map says how
    assert robot.coordinates == {"shoulder": "shoulder", "elbow-1": "elbow_1", "t": "t_",
                                 "spin": "spin", "finger_joint": "finger_joint"}
    assert [str(c) for c in eq.coordinates] == list(robot.coordinates.values())
    # the tool is merged into l2; the base is the fixed frame
    assert set(robot.bodies) == {"l1", "l2", "slider", "wheel", "finger"}
    assert "# renamed (not kidym names, or taken): elbow-1 -> elbow_1, t -> t_ #" in robot.text
    assert "limits -2 .. 2 rad, effort 50 N m, velocity 3 rad/s" in robot.text
    # meshes are referenced, the comment kept closed (`#`, braces replaced)
    assert "# visual meshes: package://arm/l1__x_.stl #" in robot.text
    assert robot.warnings == []


def _equal_pinocchio(path, robot, eq, n_states=100, J=None, offset=None):
    """kidym's M, b, q̈ against Pinocchio's; with a mimic joint followed, Pinocchio's
    configuration is ``q_pin = J q + offset`` (constant J): M = Jᵀ M_pin J, F = −Jᵀ b_pin."""
    pin = _pinocchio()
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    assert pm.nq == pm.nv + 1      # the continuous elbow: cos, sin
    ns = NumpySystem.build(eq)
    p = ns.parameter_vector()
    coords = [str(c) for c in eq.coordinates]
    names = list(robot.coordinates.items())
    n = len(coords)
    if J is None:
        J = np.zeros((pm.nv, n))
        for joint, c in names:
            J[pm.joints[pm.getJointId(joint)].idx_v, coords.index(c)] = 1.0
        offset = np.zeros(pm.nv)
    rng = np.random.default_rng(7)
    for _ in range(n_states):
        qk, wk = rng.uniform(-np.pi, np.pi, n), rng.normal(0, 2, n)
        angles, v = J @ qk + offset, J @ wk
        q = pin.neutral(pm)
        for jid in range(1, pm.njoints):
            j = pm.joints[jid]
            a = angles[j.idx_v]
            if j.nq == 2:
                q[j.idx_q:j.idx_q + 2] = np.cos(a), np.sin(a)
            else:
                q[j.idx_q] = a
        _, M, F, _ = ns.evaluate(0.0, np.concatenate([qk, wk]), p)
        Mp = pin.crba(pm, pd, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        bp = pin.rnea(pm, pd, q, v, np.zeros(pm.nv))
        M_ref, F_ref = J.T @ Mp @ J, -J.T @ bp
        assert np.abs(M - M_ref).max() <= 1e-12 * np.abs(M_ref).max()
        assert np.abs(F - F_ref).max() <= 1e-12 * np.abs(F_ref).max()
        if J.shape[0] == J.shape[1]:
            ap = pin.aba(pm, pd, q, v, np.zeros(pm.nv))
            ak = J @ np.linalg.solve(M, F)
            assert np.abs(ak - ap).max() <= 1e-12 * np.linalg.cond(Mp) * np.abs(ap).max()


def test_unaligned_axes_prismatic_fixed_joints_equal_pinocchio(arm):
    robot = import_robot(arm)
    _equal_pinocchio(arm, robot, kidym.derive(kidym.parse(robot.text)))


def test_joint_damping_is_an_element_and_equals_pinocchio_with_damping(tmp_path):
    """``<dynamics damping>`` becomes ``Ddamp.q = c;`` (the force −c·q̇); held to Pinocchio
    with its ``model.damping`` added by hand (``rnea + D v``, ``aba(q, v, −D v)``).
    Coulomb friction is no element: a warning names the joint (an error when strict)."""
    from tests.oracles.pinocchio_robots import PinocchioRobot, compare

    _pinocchio()
    text = ARM.replace('<limit lower="-2" upper="2" effort="50" velocity="3"/>',
                       '<limit lower="-2" upper="2" effort="50" velocity="3"/>'
                       '<dynamics damping="0.3" friction="0.5"/>')
    text = text.replace('<axis xyz="1 1 0"/>', '<axis xyz="1 1 0"/><dynamics damping="2"/>')
    text = text.replace('<mimic joint="spin"', '<dynamics damping="0.1"/><mimic joint="spin"')
    path = tmp_path / "damped.urdf"
    path.write_text(text)
    robot = import_robot(path)
    assert "Ddamp.shoulder = 0.3;" in robot.text and "Ddamp.t_ = 2;" in robot.text
    assert "Ddamp.finger_joint = 0.1;" in robot.text
    [w] = robot.format_warnings()
    line = _line_of(text, 'name="shoulder"')
    assert "joint `shoulder` has Coulomb friction 0.5 (`<dynamics friction>`), which is " \
           "not part of the model" in w and f":{line}:" in w
    eq = kidym.derive(kidym.parse(robot.text))
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds)
    assert np.abs(ref.model.damping).max() == 2.0     # Pinocchio read them too
    err = compare(NumpySystem.build(eq), ref, n_states=100, seed=3)
    assert err.M < 1e-12 and err.b < 1e-12 and err.qdd < 1e-12, err
    with pytest.raises(ParseError, match="Coulomb friction"):
        import_robot(path, strict=True)
    # a mimic joint followed has no coordinate: its damping is named, not dropped
    followed = import_robot(path, mimic="follow")
    assert any("joint `finger_joint` has damping 0.1" in w and "mimic joint followed" in w
               for w in followed.format_warnings())
    bad = tmp_path / "bad.urdf"
    bad.write_text(text.replace('damping="2"', 'damping="-2"'))
    with pytest.raises(ParseError, match=r"joint `t` has a negative damping \(-2\)"):
        import_robot(bad)


def test_a_floating_joint_from_a_massless_world_is_the_floating_base(tmp_path):
    """``world --floating--> base``: read as ``--floating`` (Pinocchio makes the joint a
    free-flyer too); M, b, q̈ equal Pinocchio's at 100 states."""
    _pinocchio()
    from tests.oracles.pinocchio_robots import PinocchioRobot, compare

    text = ARM.replace('<link name="base"/>', f"""<link name="world"/>
  <link name="base">{_inertial(2.0, "0.01 0 0.02", ixx=0.02, iyy=0.03, izz=0.04)}</link>
  <joint name="float" type="floating"><parent link="world"/><child link="base"/></joint>""")
    path = tmp_path / "floating.urdf"
    path.write_text(text)
    robot = import_robot(path)
    assert robot.floating and next(iter(robot.bodies)) == "base"
    eq = kidym.derive(kidym.parse(robot.text))
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds, base="base",
                         free_in_file=True)
    assert ref.model.nv == eq.n_w == 6 + 5
    err = compare(NumpySystem.build(eq), ref, n_states=100, seed=5)
    assert err.M < 1e-12 and err.b < 1e-12 and err.qdd < 1e-12, err


def test_floating_base_of_equal_moments_keeps_body_axes(tmp_path):
    """A base with Jx = Jy = Jz about its origin: kidym would project its angular
    velocity on the fixed axes by default (language §2.4); the import asks for the body
    axes, Pinocchio's free-flyer's."""
    _pinocchio()
    from tests.oracles.pinocchio_robots import PinocchioRobot, compare

    text = ARM.replace('<link name="base"/>',
                       f'<link name="base">{_inertial(2.0, ixx=0.03, iyy=0.03, izz=0.03)}'
                       '</link>')
    path = tmp_path / "round.urdf"
    path.write_text(text)
    robot = import_robot(path, floating=True)
    assert "ANGULAR VELOCITY := base(body);" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds, base="base")
    err = compare(NumpySystem.build(eq), ref, n_states=100, seed=9)
    assert err.M < 1e-12 and err.b < 1e-12 and err.qdd < 1e-12, err


@pytest.mark.parametrize("floating", [False, True])
def test_planar_joint_equals_pinocchio(tmp_path, floating):
    """A planar joint (normal z): coordinates ``t_x, t_y, t_th`` and the velocity in the
    plane in the moving axes as pseudo-velocities ``t_vx, t_vy`` — Pinocchio's
    ``JointModelPlanar`` (q = x, y, cos θ, sin θ). With a floating base too."""
    _pinocchio()
    from tests.oracles.pinocchio_robots import PinocchioRobot, compare

    text = ARM.replace('name="t" type="prismatic"', 'name="t" type="planar"').replace(
        '<axis xyz="1 1 0"/>', '<axis xyz="0 0 1"/>')
    if floating:    # (a massless base would turn with the shoulder: M singular)
        text = text.replace('<link name="base"/>',
                            f'<link name="base">{_inertial(2.0, ixx=0.02, iyy=0.03, izz=0.04)}'
                            '</link>')
    path = tmp_path / "planar.urdf"
    path.write_text(text)
    robot = import_robot(path, floating=floating)
    assert robot.planar == {"t": ("t_x", "t_y", "t_th", "t_vx", "t_vy")}
    assert "t_x't = cos(t_th)*t_vx - sin(t_th)*t_vy;" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds,
                         base="base" if floating else None, planar=robot.planar)
    assert ref.model.nv == eq.n_w
    err = compare(NumpySystem.build(eq), ref, n_states=100, seed=6)
    assert err.M < 1e-12 and err.b < 1e-12 and err.qdd < 1e-12, err


def test_mimic_joint_followed_equals_pinocchio_with_the_coupling(arm):
    robot = import_robot(arm, mimic="follow")
    assert "finger_joint" not in robot.coordinates
    assert "Rx(-0.5*spin + 0.1)" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    pin = _pinocchio()
    pm = pin.buildModelFromUrdf(str(arm))
    coords = [str(c) for c in eq.coordinates]
    J = np.zeros((pm.nv, len(coords)))
    offset = np.zeros(pm.nv)
    for joint, c in robot.coordinates.items():
        J[pm.joints[pm.getJointId(joint)].idx_v, coords.index(c)] = 1.0
    finger = pm.joints[pm.getJointId("finger_joint")].idx_v
    J[finger, coords.index("spin")] = -0.5
    offset[finger] = 0.1
    _equal_pinocchio(arm, robot, eq, n_states=50, J=J, offset=offset)


def test_names_of_the_floating_base_are_kept_free(tmp_path):
    """A link called `x` and a joint called `l0` do not take the floating base's
    coordinates: they are renamed, and the model reads back."""
    path = tmp_path / "names.urdf"
    path.write_text(ARM.replace('"l1"', '"x"').replace('name="spin"', 'name="l0"')
                    .replace('joint="spin"', 'joint="l0"'))
    robot = import_robot(path, floating=True)
    assert robot.bodies["x"] == "x_2" and robot.coordinates["l0"] == "l0_2"
    eq = kidym.derive(kidym.parse(robot.text))
    assert {"x", "l0", "l0_2"} <= {str(c) for c in eq.coordinates}
    assert eq.n_w == 6 + 5


def test_names_are_valid_distinct_and_documented():
    used: set[str] = set()
    got = [kidym_name(n, used) for n in ("a-b", "a_b", "a_b", "2nd", "sin", "g", "ok")]
    assert got == ["a_b", "a_b_2", "a_b_3", "j_2nd", "sin_", "g_", "ok"]
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in got)


# ------------------------------------------------------------------ inertia policy
def test_impossible_link_inertia_is_a_warning_by_name_and_an_error_when_strict(tmp_path):
    bad = _inertial(2.0, ixx=0.01, iyy=0.01, izz=0.05)         # izz > ixx + iyy
    good = _inertial(0.2, ixx=0.001, iyy=0.001, izz=0.0015)
    text = ARM.replace(f'<link name="wheel">{good}</link>', f'<link name="wheel">{bad}</link>')
    assert text != ARM
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    robot = import_robot(path)
    shown = "\n".join(robot.format_warnings())
    assert "warning: link `wheel` (mass 2)" in shown and "triangle inequality" in shown
    line = _line_of(text, '<link name="wheel"')
    assert f"{path}:{line}:" in shown
    # the model file holds an admissible tensor, which kidym accepts
    kidym.parse(robot.text)
    with pytest.raises(ParseError, match=r"error: link `wheel` .*triangle inequality"):
        import_robot(path, strict=True)


def test_nearest_admissible_tensor():
    rng = np.random.default_rng(3)
    for _ in range(200):
        A = rng.normal(size=(3, 3))
        T = A + A.T
        fixed = nearest_admissible(T)
        assert inertia_issue(fixed) is None
        if inertia_issue(T) is None:
            np.testing.assert_allclose(fixed, T, atol=1e-14 * np.abs(T).max())


def test_composite_inertia_by_parallel_axes(tmp_path):
    """Two point masses fixed to one link: the composite body is their sum about
    the common centre (closed form: m1 m2 / (m1 + m2) d² about the transverse axes)."""
    text = f"""<robot name="pair">
  <link name="base"/>
  <link name="a">{_inertial(1.0, ixx=0, iyy=0, izz=0)}</link>
  <link name="b">{_inertial(3.0, ixx=0, iyy=0, izz=0)}</link>
  <joint name="q" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="f" type="fixed"><parent link="a"/><child link="b"/>
    <origin xyz="0.4 0 0"/></joint>
</robot>"""
    path = tmp_path / "pair.urdf"
    path.write_text(text)
    robot = import_robot(path)
    m = kidym.parse(robot.text)
    body = m.bodies[0]
    assert body.name == "a"
    values = {k: float(getattr(body.inertia, k)) for k in ("mass", "jx", "jy", "jz")}
    assert values["mass"] == pytest.approx(4.0, rel=1e-15)
    assert values["jx"] == 0.0
    assert values["jy"] == pytest.approx(0.75 * 0.4**2, rel=1e-14)
    assert values["jz"] == pytest.approx(0.75 * 0.4**2, rel=1e-14)
    com = re.search(r"\| Sx\(([0-9.e-]+)\), m\(4\)", robot.text)
    assert com and float(com.group(1)) == pytest.approx(0.3, rel=1e-15), robot.text


# ------------------------------------------------------------------ located errors
def _error(tmp_path, text: str) -> ParseError:
    path = tmp_path / "broken.urdf"
    path.write_text(text)
    with pytest.raises(ParseError) as info:
        import_robot(path)
    return info.value


def _line_of(text: str, needle: str) -> int:
    return next(i for i, s in enumerate(text.splitlines(), 1) if needle in s)


@pytest.mark.parametrize("old, new, message, needle", [
    ('<parent link="l1"/><child link="l2"/>', '<parent link="l_1"/><child link="l2"/>',
     r"joint `elbow-1` has parent link `l_1`, which is not defined \(did you mean `l1`\?\)",
     '<joint name="elbow-1"'),
    ('name="elbow-1" type="continuous"', 'name="elbow-1" type="continous"',
     r"joint `elbow-1` has type `continous`, which is not a URDF joint type \(did you mean "
     r"`continuous`\?", '<joint name="elbow-1"'),
    ('<origin xyz="0.4 0.05 0"', '<origin xyz="0.4 0,05 0"',
     r"`xyz` of `<origin>` in joint `elbow-1` must be 3 finite numbers, got `0.4 0,05 0`",
     '<origin xyz="0.4 0,05 0"'),
    ('<mass value="0.8"/>', '<mass value="nan"/>',
     r"`value` of `<mass>` in link `l2` must be a finite number", '<link name="l2">'),
    ('<mass value="0.8"/>', '<mass value="-0.8"/>', r"link `l2` has a negative mass",
     '<link name="l2">'),
    ('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>', r"the axis of joint `spin` is the zero "
     r"vector", '<axis xyz="0 0 0"/>'),
    ('<link name="wheel">', '<link name="slider">', r"link `slider` is defined twice",
     '<link name="wheel">'),
    ('<mimic joint="spin"', '<mimic joint="spinn"', r"joint `finger_joint` mimics joint "
     r"`spinn`, which is not defined", '<joint name="finger_joint"'),
])
def test_broken_file_errors_are_located(tmp_path, old, new, message, needle):
    assert old in ARM
    text = ARM.replace(old, new, 1)
    err = _error(tmp_path, text)
    assert re.search(message, err.render()), err.render()
    d = err.diagnostics[0]
    # (the line of the needle; the renamed duplicate is found in the file before)
    line = _line_of(text if needle in text else ARM, needle)
    assert d.span is not None and d.span.line == line, (d, needle)
    assert err.render().startswith(f"{err.filename}:{d.span.line}:{d.span.column}: error: ")
    assert "^" in err.render()


def test_numbers_too_large_for_the_sums_are_an_error(tmp_path):
    text = ARM.replace('<origin xyz="0.3 0 0.01" rpy="0.5 -0.3 1.2"/>',
                       '<origin xyz="1e200 0 0.01" rpy="0.5 -0.3 1.2"/>')
    assert text != ARM
    err = _error(tmp_path, text)
    assert re.search(r"error: body `l2` \(links `l2`, `tool`\): its placement, centre of mass "
                     r"or inertia is not a finite number", err.render()), err.render()


def test_an_axis_of_huge_numbers_is_still_its_direction(tmp_path, arm):
    huge = tmp_path / "huge" / "arm.urdf"
    huge.parent.mkdir()
    huge.write_text(ARM.replace('<axis xyz="0 -1 0"/>', '<axis xyz="0 -1e300 0"/>'))
    assert import_robot(huge).text == import_robot(arm).text


def test_cycle_and_two_parents_are_located(tmp_path):
    cycle = ARM.replace('<parent link="base"/><child link="l1"/>',
                        '<parent link="slider"/><child link="l1"/>')
    err = _error(tmp_path, cycle)
    assert re.search(r"error: the joints form a cycle: l1 → l2 → tool → slider → l1 ", err.render())
    two = ARM.replace('<parent link="slider"/><child link="finger"/>',
                      '<parent link="slider"/><child link="wheel"/>')
    err = _error(tmp_path, two)
    assert "link `wheel` is the child of two joints, `spin` and `finger_joint`" in err.render()
    assert err.diagnostics[0].span.line == _line_of(two, '<joint name="finger_joint"')


def test_an_empty_robot_is_located(tmp_path):
    err = _error(tmp_path, '<?xml version="1.0"?>\n<!-- generated -->\n<robot>\n</robot>\n')
    assert [(d.span.line, d.message) for d in err.diagnostics] == [
        (3, "a URDF `<robot>` needs a `name`"),
        (3, "the robot has no `<link>`: nothing to import (a file still to be generated by "
            "xacro?)")]


def test_not_xml_is_located(tmp_path):
    err = _error(tmp_path, ARM.replace("</link>\n  <link name=\"l2\">", "\n  <link name=\"l2\">"))
    assert "not well-formed XML" in err.render()
    assert err.diagnostics[0].span.line > 1


def test_other_formats_say_so(tmp_path):
    path = tmp_path / "robot.step"
    path.write_text("<sdf/>")
    with pytest.raises(ValueError, match=r"kidym imports URDF \(.urdf\), MJCF \(.xml\) and "
                                         r"SDF \(.sdf\) files, not `.step` files"):
        import_robot(path)


# ------------------------------------------------------------------ fuzz
_TYPES = ["fixed", "planar", "floating", "ball", "revolute", "prismatic", "continuous"]


def _mutants(text: str, n: int, seed: int):
    rng = random.Random(seed)
    numbers = list(re.finditer(r'"(-?[0-9.]+(?: -?[0-9.]+)*)"', text))
    names = list(re.finditer(r'(?:link|name|joint)="([^"]+)"', text))
    for _ in range(n):
        kind = rng.randrange(6)
        if kind == 0:                                   # cut a piece out
            a = rng.randrange(len(text))
            yield text[:a] + text[a + rng.randrange(1, 40):]
        elif kind == 1:                                 # a bad number
            m = rng.choice(numbers)
            bad = rng.choice(["x", "1e999", "", "1 2", "-", "0x1", "inf", "1,5", "NaN"])
            yield text[:m.start(1)] + bad + text[m.end(1):]
        elif kind == 2:                                 # a name changed
            m = rng.choice(names)
            new = rng.choice(["", "l1", "base", "slider", "x y", "#{}", "t", "é", "shoulder"])
            yield text[:m.start(1)] + new + text[m.end(1):]
        elif kind == 3:                                 # a line repeated or dropped
            lines = text.splitlines()
            i = rng.randrange(len(lines))
            lines[i:i + 1] = [] if rng.random() < 0.5 else [lines[i], lines[i]]
            yield "\n".join(lines)
        elif kind == 4:                                 # a joint type changed
            yield re.sub(r'type="(\w+)"', lambda m: f'type="{rng.choice(_TYPES)}"'
                         if rng.random() < 0.3 else m.group(0), text)
        else:                                           # an axis or origin changed
            m = rng.choice(numbers)
            vals = " ".join(str(rng.choice([0, 1, -1, 1e-300, 1e300, 0.5]))
                            for _ in m.group(1).split())
            yield text[:m.start(1)] + vals + text[m.end(1):]


def test_fuzz_mutated_urdfs_give_a_model_or_a_clear_error(tmp_path):
    """Mutated robot files: each gives a model that kidym reads, or a ParseError /
    ValueError with a message — never another exception (a traceback)."""
    path = tmp_path / "mutant.urdf"
    outcomes = {"model": 0, "error": 0}
    for text in _mutants(ARM, 150, seed=11):
        path.write_text(text)
        try:
            robot = import_robot(path)
        except ParseError as exc:
            assert exc.diagnostics and "error:" in exc.render()
            outcomes["error"] += 1
            continue
        except ValueError as exc:
            assert str(exc)
            outcomes["error"] += 1
            continue
        try:
            kidym.parse(robot.text)
        except ParseError as exc:        # a model kidym refuses: say where, cleanly
            assert "error:" in exc.render()
        outcomes["model"] += 1
    assert outcomes["model"] > 10 and outcomes["error"] > 10, outcomes


# ------------------------------------------------------------------ command line
def test_command_writes_the_model_and_reports_errors(tmp_path, arm, capsys):
    from kidym.cli import main

    out = tmp_path / "arm.kdm"
    assert main(["import", str(arm), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert out.read_text() == import_robot(arm).text
    assert main(["import", str(arm)]) == 0                  # to standard output
    assert capsys.readouterr().out == out.read_text()
    broken = tmp_path / "broken.urdf"
    broken.write_text(ARM.replace('type="continuous"', 'type="hinge"'))
    assert main(["import", str(broken), "-o", str(tmp_path / "broken.kdm")]) == 1
    err = capsys.readouterr().err
    line = _line_of(ARM, '<joint name="elbow-1"')
    assert f"{broken}:{line}:" in err and "type `hinge`" in err
    assert "Traceback" not in err
    assert not (tmp_path / "broken.kdm").exists()


@pytest.mark.slow
def test_fuzz_mutated_real_robot_files(tmp_path):
    """The same mutations of the real robots of ``example-robot-data`` (ten each)."""
    from tests.oracles.pinocchio_robots import ROBOTS, robots_dir

    try:
        folder = robots_dir()
    except Exception:
        pytest.skip("example-robot-data is not installed (robots-test)")
    path = tmp_path / "mutant.urdf"
    for k, rel in enumerate(sorted(set(ROBOTS.values()))):
        for text in _mutants((folder / rel).read_text(), 10, seed=100 + k):
            path.write_text(text)
            try:
                robot = import_robot(path)
            except ParseError as exc:
                assert exc.diagnostics and "error:" in exc.render()
                continue
            except ValueError as exc:
                assert str(exc)
                continue
            try:
                kidym.parse(robot.text)
            except ParseError as exc:
                assert "error:" in exc.render()
