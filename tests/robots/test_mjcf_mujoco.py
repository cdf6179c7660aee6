"""MJCF import against MuJoCo itself (issue 30).

An inline arm with what MJCF allows and URDF does not — two hinges in one body with
anchors off the body origin, an inertia turned by ``iquat`` (from geoms), body
orientations by quaternion and Euler angles, welded bodies, a slide joint along an
oblique axis — read by MuJoCo's compiler, written as a model, and at 100 random
states held to MuJoCo's ``mj_forward`` (constraints off): kidym's M equals
``mj_fullM`` and −F equals ``qfrc_bias`` to 1e-12 relative to their largest entry,
M⁻¹F equals ``qacc`` to 1e-12·cond(M).
"""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from kidym.errors import ParseError
from kidym.robots import import_robot
from kidym.simulate.simulate import NumpySystem

mujoco = pytest.importorskip("mujoco", reason="the mjcf extra: pip install 'kidym[mjcf]'")

ARM = """<mujoco model="arm">
  <worldbody>
    <body name="base" pos="0 0 0.5" quat="0.9 0.1 0.2 0.3">
      <geom type="box" size="0.1 0.1 0.05" mass="3"/>
      <body name="upper" pos="0.1 0 0.1" euler="10 20 30">
        <joint name="shoulder_y" type="hinge" axis="0 1 0" pos="0 0 0.05"/>
        <joint name="shoulder_x" type="hinge" axis="1 0.3 0" pos="0.02 0 0"/>
        <geom type="capsule" size="0.04" fromto="0 0 0 0.4 0.05 0" mass="1.5"/>
        <body name="fore" pos="0.4 0.05 0">
          <joint name="elbow" type="hinge" axis="0.2 0.5 0.8" DAMPING/>
          <geom type="box" size="0.15 0.03 0.02" pos="0.15 0 0" euler="0 0 15" mass="0.7"/>
          <body name="tool" pos="0.3 0 0" quat="0.7 0.7 0 0">
            <geom type="sphere" size="0.05" pos="0.02 0.01 0" mass="0.2"/>
            <body name="slider" pos="0 0 0.05">
              <joint name="slide" type="slide" axis="0.6 0 0.8"/>
              <geom type="box" size="0.02 0.03 0.04" mass="0.3"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _write(tmp_path, text: str, name: str = "arm.xml"):
    path = tmp_path / name
    path.write_text(text)
    return path


FREE = ARM.replace(" DAMPING", "").replace(
    '<geom type="box" size="0.1 0.1 0.05" mass="3"/>',
    '<freejoint name="float"/><geom type="box" size="0.1 0.1 0.05" mass="3"/>')


@pytest.mark.parametrize("engine, free", [
    ("numpy", False), ("numpy", True), pytest.param("compiled", False, marks=pytest.mark.slow),
    pytest.param("compiled", True, marks=pytest.mark.slow)])
def test_mjcf_arm_equals_mujoco(tmp_path, engine, free):
    """Fixed on the world, or free (MuJoCo's free joint: ``qpos`` position and
    quaternion ``w, x, y, z``; ``qvel`` the linear velocity in the fixed axes and the
    angular one in the body's, kidym's ``x't, y't, z't`` and ``ωX, ωY, ωZ``)."""
    path = _write(tmp_path, FREE if free else ARM.replace(" DAMPING", ""))
    robot = import_robot(path)
    assert robot.warnings == [] and robot.floating == free
    eq = kidym.derive(kidym.parse(robot.text))
    if engine == "numpy":
        system = NumpySystem.build(eq)
    else:
        from kidym.simulate.compiled import CompiledSystem

        system = CompiledSystem.build(eq)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    d = mujoco.MjData(m)
    coords = [str(c) for c in eq.coordinates]
    speeds = [str(w) for w in eq.speeds]
    Pq = np.zeros((m.nq, eq.n_q))             # MuJoCo's qpos = Pq q
    P = np.zeros((m.nv, eq.n_w))              # MuJoCo's v = P w
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            for k, c in enumerate(("x", "y", "z", "l0", "l1", "l2", "l3")):
                Pq[m.jnt_qposadr[j] + k, coords.index(c)] = 1.0
            for k, w in enumerate(("x't", "y't", "z't", "ωXbase", "ωYbase", "ωZbase")):
                P[m.jnt_dofadr[j] + k, speeds.index(w)] = 1.0
            continue
        c = robot.coordinates[m.joint(j).name]
        Pq[m.jnt_qposadr[j], coords.index(c)] = 1.0
        P[m.jnt_dofadr[j], speeds.index(c + "'t")] = 1.0
    rng = np.random.default_rng(2)
    p = system.parameter_vector()
    for _ in range(100):
        qk, wk = rng.uniform(-np.pi, np.pi, eq.n_q), rng.normal(0.0, 2.0, eq.n_w)
        if free:
            lam = [coords.index(c) for c in ("l0", "l1", "l2", "l3")]
            qk[lam] /= np.linalg.norm(qk[lam])
        d.qpos[:], d.qvel[:] = Pq @ qk, P @ wk
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        _, Mk, F = system.evaluate(0.0, np.concatenate([qk, wk]), p)[:3]
        Mk, F = np.asarray(Mk, float), np.asarray(F, float)[:eq.n_w]
        assert np.abs(P @ Mk @ P.T - M).max() <= 1e-12 * np.abs(M).max()
        assert np.abs(-P @ F - d.qfrc_bias).max() <= 1e-12 * np.abs(d.qfrc_bias).max()
        ak = P @ np.linalg.solve(Mk, F)
        assert np.abs(ak - d.qacc).max() <= 1e-12 * np.linalg.cond(M) * np.abs(d.qacc).max()


def test_mjcf_joint_extras_are_named_in_a_warning(tmp_path):
    path = _write(tmp_path, ARM.replace("DAMPING", 'damping="0.3" armature="0.01"'))
    robot = import_robot(path)
    shown = "\n".join(robot.format_warnings())
    assert "warning: body `fore`: the joints' armature, damping are not part of the model" \
        in shown
    line = next(i for i, s in enumerate(ARM.splitlines(), 1) if 'name="fore"' in s)
    assert f"{path}:{line}:" in shown


def test_mjcf_errors_are_located(tmp_path):
    text = ARM.replace(" DAMPING", "").replace('type="slide"', 'type="slid"')
    with pytest.raises(ParseError, match=r"arm.xml:\d+:1: error: MuJoCo: XML Error: invalid "
                                         r"keyword: 'slid'") as info:
        import_robot(_write(tmp_path, text))
    line = next(i for i, s in enumerate(text.splitlines(), 1) if 'type="slid"' in s)
    assert info.value.diagnostics[0].span.line == line
    two = ARM.replace(" DAMPING", "").replace(
        "  </worldbody>", '    <body name="ball"><joint name="roll" type="hinge"/>'
        '<geom size="0.1"/></body>\n  </worldbody>').replace(
        '<geom type="box" size="0.1 0.1 0.05" mass="3"/>',
        '<freejoint name="float"/><geom type="box" size="0.1 0.1 0.05" mass="3"/>')
    with pytest.raises(ParseError, match=r"body `ball` moves beside the free body `base`"):
        import_robot(_write(tmp_path, two))


def test_fuzz_mutated_mjcf_gives_a_model_or_a_clear_error(tmp_path):
    """Mutated MJCF files: a model kidym reads, or a ParseError/ValueError with a
    message, never another exception."""
    import random
    import re

    rng = random.Random(5)
    base = ARM.replace(" DAMPING", "")
    numbers = list(re.finditer(r'"(-?[0-9.]+(?: -?[0-9.]+)*)"', base))
    path = tmp_path / "mutant.xml"
    outcomes = {"model": 0, "error": 0}
    for _ in range(60):
        kind = rng.randrange(3)
        if kind == 0:
            a = rng.randrange(len(base))
            text = base[:a] + base[a + rng.randrange(1, 30):]
        elif kind == 1:
            mt = rng.choice(numbers)
            bad = rng.choice(["x", "1e999", "", "nan", "0 0 0", "-1"])
            text = base[:mt.start(1)] + bad + base[mt.end(1):]
        else:
            text = base.replace(f'type="{rng.choice(["hinge", "slide"])}"',
                                f'type="{rng.choice(["ball", "free", "hinge", "x"])}"', 1)
        path.write_text(text)
        try:
            robot = import_robot(path)
        except (ParseError, ValueError) as exc:
            assert str(exc)
            outcomes["error"] += 1
            continue
        try:
            kidym.parse(robot.text)
        except ParseError as exc:
            assert "error:" in exc.render()
        outcomes["model"] += 1
    assert outcomes["model"] > 5 and outcomes["error"] > 5, outcomes
