"""SDF import: the reader's frames and poses, loops, located errors, a fuzz run.

The dynamics of what is written are checked against Drake in ``test_sdf_drake.py``;
here, what needs no reference: which bodies, coordinates and loops a file gives, the
inertia defaults of SDFormat (taken, with a warning), and every problem of a broken
file located in it (``FILE:LINE:COL: error: …``), never a traceback.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import kidym
from kidym.errors import ParseError
from kidym.robots import import_robot
from tests.robots.fuzzing import check, mutants

# what SDFormat has and URDF has not: frames, poses relative to other frames, a model
# pose, a joint frame off the child's origin, axes expressed in another frame,
# quaternion and degree rotations; a fixed joint merged with products of inertia
ARM = """<?xml version="1.0"?>
<sdf version="1.9">
  <model name="arm">
    <pose>0.1 -0.2 0.3 0.2 -0.1 0.4</pose>
    <frame name="mount" attached_to="base">
      <pose relative_to="base">0 0.05 0.2 0 0 0.5</pose>
    </frame>
    <link name="base">
      <inertial><mass>3</mass><inertia><ixx>0.03</ixx><iyy>0.04</iyy><izz>0.05</izz>
      </inertia></inertial>
    </link>
    <joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
    <link name="upper">
      <pose relative_to="mount">0.1 0 0.05 0.3 0.2 0.1</pose>
      <inertial>
        <pose>0.2 0.01 0 0.1 0.2 0.3</pose>
        <mass>1.5</mass>
        <inertia><ixx>0.002</ixx><ixy>0.0001</ixy><ixz>-0.0002</ixz><iyy>0.02</iyy>
          <iyz>0.0003</iyz><izz>0.021</izz></inertia>
      </inertial>
    </link>
    <joint name="shoulder" type="revolute">
      <parent>base</parent><child>upper</child>
      <pose>0.02 0 -0.01 0 0 0</pose>
      <axis><xyz expressed_in="__model__">0 1 0</xyz></axis>
    </joint>
    <link name="fore">
      <pose relative_to="upper" rotation_format="quat_xyzw">0.4 0.05 0 0.1 0.1 0.7 0.7</pose>
      <inertial><pose>0.15 0 0 0 0 0</pose><mass>0.7</mass>
        <inertia><ixx>0.001</ixx><iyy>0.006</iyy><izz>0.0065</izz></inertia></inertial>
    </link>
    <joint name="elbow" type="revolute">
      <parent>upper</parent><child>fore</child>
      <axis><xyz>0.2 0.5 0.8</xyz><dynamics><damping>0</damping></dynamics></axis>
    </joint>
    <link name="tool">
      <pose relative_to="fore" degrees="true">0.3 0 0 90 0 15</pose>
      <inertial><pose>0.02 0.01 0 0 0 0</pose><mass>0.2</mass>
        <inertia><ixx>0.0002</ixx><iyy>0.0002</iyy><izz>0.0002</izz></inertia></inertial>
    </link>
    <joint name="tool_fix" type="fixed"><parent>fore</parent><child>tool</child></joint>
    <link name="slider">
      <pose relative_to="tool">0 0 0.05 0 0 0</pose>
      <inertial><mass>0.3</mass><inertia><ixx>0.0001</ixx><ixy>0.00002</ixy><iyy>0.0002</iyy>
        <izz>0.0003</izz></inertia></inertial>
    </link>
    <joint name="slide" type="prismatic">
      <parent>tool</parent><child>slider</child>
      <axis><xyz>0.6 0 0.8</xyz></axis>
    </joint>
  </model>
</sdf>
"""


def _line_of(text: str, needle: str) -> int:
    return next(i for i, s in enumerate(text.splitlines(), 1) if needle in s)


def _import(tmp_path, text: str):
    path = tmp_path / "robot.sdf"
    path.write_text(text)
    return import_robot(path)


def _error(tmp_path, text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        _import(tmp_path, text)
    return info.value


def test_arm_bodies_coordinates_and_names(tmp_path):
    robot = _import(tmp_path, ARM)
    assert robot.coordinates == {"shoulder": "shoulder", "elbow": "elbow", "slide": "slide"}
    # the shoulder turns about an axis through its joint frame, off the child's origin:
    # a massless link there carries the turn, the child is fixed to it
    assert list(robot.bodies) == ["upper_shoulder", "fore", "slider"]
    assert "# merged links: upper_shoulder, upper #" in robot.text
    assert "# merged links: fore, tool #" in robot.text
    assert robot.loops == () and not robot.floating
    eq = kidym.derive(kidym.parse(robot.text))
    assert [str(c) for c in eq.coordinates] == ["shoulder", "elbow", "slide"]


FOUR_BAR = """<sdf version="1.7">
  <model name="four_bar">
    <link name="ground"/>
    <link name="crank"><pose>0 0 0 0 0 0</pose>
      <inertial><pose>0.1 0 0 0 0 0</pose><mass>1</mass>
        <inertia><ixx>0.001</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>
    <link name="coupler"><pose>0.2 0 0 0 0 0</pose>
      <inertial><pose>0.25 0 0 0 0 0</pose><mass>1</mass>
        <inertia><ixx>0.001</ixx><iyy>0.02</iyy><izz>0.02</izz></inertia></inertial></link>
    <link name="rocker"><pose>0.6 0 0 0 0 0</pose>
      <inertial><pose>0 0.15 0 0 0 0</pose><mass>1</mass>
        <inertia><ixx>0.01</ixx><iyy>0.001</iyy><izz>0.01</izz></inertia></inertial></link>
    <joint name="fix" type="fixed"><parent>world</parent><child>ground</child></joint>
    <joint name="j1" type="revolute"><parent>ground</parent><child>crank</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="j2" type="revolute"><parent>crank</parent><child>coupler</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="j3" type="revolute"><parent>ground</parent><child>rocker</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="close" type="ball"><parent>coupler</parent><child>rocker</child>
      <pose>0 0.3 0 0 0 0</pose></joint>
  </model>
</sdf>
"""


def test_ball_joint_closing_a_loop_is_coincide(tmp_path):
    """The closing joint's centre, in the child (its pose) and in the parent (where the
    file puts it): (0, 0.3, 0) of the rocker is (0.4, 0.3, 0) of the coupler. The file's
    pose is a consistent state (the constraints vanish, found by kidym's consistency
    check of a run's start)."""
    robot = _import(tmp_path, FOUR_BAR)
    assert robot.loops == ("close",)
    assert "COINCIDE := rocker(0, 0.3, 0) = coupler(0.4, 0.3, 0);" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    # planar: the z rows vanish identically
    assert eq.constraints.names == ("coinX1", "coinY1")
    res = kidym.simulate(eq, t_end=0.2, rtol=1e-10, atol=1e-12)
    assert res.success


@pytest.mark.parametrize("change, needle, message", [
    (("<child>crank</child>", "<child>crnk</child>"), "<child>crnk",
     r"joint `j1` has child link `crnk`, which is not defined \(did you mean `crank`\?\)"),
    (('name="j2" type="revolute"', 'name="j2" type="revolve"'), 'name="j2"',
     r"joint `j2` has type `revolve`.*did you mean `revolute`"),
    (('name="j2" type="revolute"', 'name="j2" type="gearbox"'), 'name="j2"',
     r"joint `j2` is a gearbox joint, which is not imported yet"),
    (('name="close" type="ball"', 'name="close" type="revolute"'), 'name="close"',
     r"joint `close` closes a loop \(link `rocker` has a parent joint already\) and is "
     r"a revolute joint: only ball joints close loops"),
    (("<pose>0.2 0 0 0 0 0</pose>", "<pose>0.2 0 0 0 0</pose>"), "<pose>0.2 0 0 0 0<",
     r"the pose of link `coupler` must be 6 finite numbers, got `0.2 0 0 0 0 0`".replace(
         " 0 0 0 0 0`", " 0 0 0 0`")),
    (("<mass>1</mass>", "<mass>heavy</mass>"), "<mass>heavy",
     r"`<mass>` of link `crank` must be 1 finite number, got `heavy`"),
    (('<link name="coupler"><pose>0.2', '<link name="coupler"><pose relative_to="rocker">0.2'),
     '<link name="coupler">', None),
    (('<link name="coupler"><pose>0.2', '<link name="coupler"><pose relative_to="rockr">0.2'),
     '<link name="coupler">', r"frame `rockr` is not defined in the model \(did you mean "
                              r"`rocker`\?\)"),
    (('<model name="four_bar">', '<model name="four_bar"><model name="inner"/>'),
     '<model name="four_bar">', r"a nested model is not imported yet"),
    (('<sdf version="1.7">', '<sdf>'), "<sdf", r"needs a `version`"),
    (('<joint name="j3" type="revolute"><parent>ground</parent><child>rocker</child>',
      '<joint name="j3" type="revolute"><parent>rocker</parent><child>ground</child>'),
     'name="j3"', r"joint `j3` closes a loop \(link `ground` has a parent joint already\)"),
])
def test_broken_files_are_located(tmp_path, change, needle, message):
    text = FOUR_BAR.replace(*change)
    assert text != FOUR_BAR
    if message is None:         # a pose relative to a frame whose pose is relative to it
        text = text.replace('<link name="rocker"><pose>', '<link name="rocker"><pose '
                                                          'relative_to="coupler">')
        message = r"the poses are relative to each other in a cycle: coupler → rocker → coupler"
        needle = '<link name="'
    err = _error(tmp_path, text)
    rendered = err.render()
    assert "Traceback" not in rendered
    assert any(re.search(message, d.message) for d in err.diagnostics), rendered
    if needle is not None:
        located = next(d for d in err.diagnostics if re.search(message, d.message))
        assert located.span is not None
        lines = text.splitlines()
        assert needle in lines[located.span.line - 1] or needle.startswith("<sdf"), rendered


def test_world_file_and_non_unit_quaternion_and_defaults(tmp_path):
    err = _error(tmp_path, '<sdf version="1.7">\n<world name="w"><model name="m"/></world>'
                           '\n</sdf>')
    assert "an SDF world is not imported" in err.render() and err.diagnostics[0].span.line == 2
    text = FOUR_BAR.replace("<pose>0.2 0 0 0 0 0</pose>",
                            '<pose rotation_format="quat_xyzw">0.2 0 0 0 0 0.3 0.9</pose>')
    err = _error(tmp_path, text)
    assert "has a quaternion of norm 0.948683: write a unit quaternion" in err.render()
    # a link without <inertial>: SDFormat's 1 kg and unit moments, with a warning
    text = FOUR_BAR.replace("""<link name="rocker"><pose>0.6 0 0 0 0 0</pose>
      <inertial><pose>0 0.15 0 0 0 0</pose><mass>1</mass>
        <inertia><ixx>0.01</ixx><iyy>0.001</iyy><izz>0.01</izz></inertia></inertial></link>""",
                            '<link name="rocker"><pose>0.6 0 0 0 0 0</pose></link>')
    robot = _import(tmp_path, text)
    [w] = [w for w in robot.format_warnings() if "rocker" in w]
    assert "link `rocker` leaves its whole inertial (mass 1 kg, unit moments) to " \
           "SDFormat's default" in w
    assert "rocker | Sx(0.6), Rz(j3) | m(1), Jx(1), Jy(1), Jz(1);" in robot.text


def test_fuzz_mutated_sdf_files(tmp_path, monkeypatch):
    """Mutated SDF files: each a model or a located error, never a traceback."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "mutant.sdf"
    outcomes = {"model": 0, "error": 0}
    for k, seed_text in enumerate((ARM, FOUR_BAR)):
        for text in mutants(seed_text, 100, seed=20 + k):
            path.write_text(text)
            outcome = check(path)
            assert not outcome.startswith("finding"), (outcome, text)
            outcomes[outcome] += 1
    assert outcomes["model"] > 20 and outcomes["error"] > 20, outcomes


def test_tilted_planar_loop_gets_the_planar_form(tmp_path):
    """The four-bar with the whole model turned by 40° about x: its plane is no
    coordinate plane of the fixed axes, so COINCIDE's three components would be
    dependent (rank 2); the import writes the two in-plane components instead. Second
    route: the motion of the joints is the untilted four-bar's (written with COINCIDE,
    language §2.4e) under the in-plane part of gravity, g·sin 40° along −y."""
    tilt = math.radians(40.0)
    tilted = FOUR_BAR.replace('<model name="four_bar">',
                              f'<model name="four_bar"><pose>0 0 0 {tilt!r} 0 0</pose>')
    robot = _import(tmp_path, tilted)
    assert robot.loop_constraints == {"close": ("close_u", "close_v")}
    assert "COINCIDE" not in robot.text and "EQUATIONS := close_u, close_v;" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    assert eq.constraints.names == ("close_u", "close_v")
    flat = _import(tmp_path, FOUR_BAR).text.replace(
        "GRAVITY := 0, 0, -g;", f"GRAVITY := 0, {-9.81 * math.sin(tilt)!r}, 0;")
    assert "COINCIDE := rocker(0, 0.3, 0) = coupler(0.4, 0.3, 0);" in flat
    opts = dict(t_end=0.5, n_points=51, rtol=1e-10, atol=1e-12)
    a = kidym.simulate(eq, **opts)
    b = kidym.simulate(kidym.derive(kidym.parse(flat)), **opts)
    assert a.success and b.success
    for q in ("j1", "j2", "j3"):
        assert np.ptp(b[q]) > 0.1            # the loop moves
        assert np.abs(a[q] - b[q]).max() <= 1e-7, q   # 10³ rtol


def test_spatial_loop_keeps_coincide(tmp_path):
    """A loop whose joint axes are not parallel (the rocker's turned to (0, 1, 1)) is
    spatial: the import keeps the three components of COINCIDE."""
    spatial = FOUR_BAR.replace(
        '<child>rocker</child>\n      <axis><xyz>0 0 1</xyz>',
        '<child>rocker</child>\n      <axis><xyz>0 1 1</xyz>')
    assert spatial != FOUR_BAR
    robot = _import(tmp_path, spatial)
    assert robot.loop_constraints == {"close": ("coinX1", "coinY1", "coinZ1")}
    assert "COINCIDE := rocker(0, 0.3, 0) = coupler(0.4, 0.3, 0);" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    assert eq.constraints.names == ("coinX1", "coinY1", "coinZ1")


@pytest.mark.parametrize("role, change", [
    ("child", ("<child>crank</child>", "<child>crnk</child>")),
    ("parent", ("<parent>crank</parent>", "<parent>crnk</parent>"))])
def test_undefined_link_caret_is_on_its_name(tmp_path, role, change):
    """The caret of a joint's undefined parent or child link is under the name itself
    (not the `>` before it)."""
    text = FOUR_BAR.replace(*change)
    err = _error(tmp_path, text)
    d = next(d for d in err.diagnostics if f"{role} link `crnk`" in d.message)
    line = text.splitlines()[d.span.line - 1]
    assert line[d.span.column - 1:].startswith("crnk<"), (line, d.span)
    caret = err.render().splitlines()
    at = next(i for i, s in enumerate(caret) if s.rstrip().endswith(line.strip()))
    assert caret[at + 1].index("^") == caret[at].index("crnk"), err.render()
