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
from kidym.simulation.simulate import NumpySystem

mujoco = pytest.importorskip("mujoco", reason="the mjcf extra: pip install 'kidym[mjcf]'")


@pytest.fixture(autouse=True)
def _mujoco_log_in_tmp(tmp_path, monkeypatch):
    """MuJoCo writes its warnings to MUJOCO_LOG.TXT in the working directory."""
    monkeypatch.chdir(tmp_path)

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
        from kidym.simulation.compiled import CompiledSystem

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


def test_mjcf_joint_damping_is_an_element_and_extras_are_named_in_a_warning(tmp_path):
    """The joint's damping is ``Ddamp.elbow = 0.3;``: −F equals MuJoCo's
    ``qfrc_bias − qfrc_passive`` (its damping force) with the armature switched off."""
    path = _write(tmp_path, ARM.replace("DAMPING", 'damping="0.3" armature="0.01"'))
    robot = import_robot(path)
    assert "Ddamp.elbow = 0.3;" in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    ns = NumpySystem.build(eq)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.dof_armature[:] = 0.0
    d = mujoco.MjData(m)
    P = np.zeros((m.nv, eq.n_w))
    coords = [str(c) for c in eq.coordinates]
    for j in range(m.njnt):
        P[m.jnt_dofadr[j], coords.index(robot.coordinates[m.joint(j).name])] = 1.0
    rng = np.random.default_rng(12)
    p = ns.parameter_vector()
    for _ in range(20):
        qk, wk = rng.uniform(-np.pi, np.pi, eq.n_w), rng.normal(0.0, 2.0, eq.n_w)
        d.qpos[:], d.qvel[:] = P @ qk, P @ wk
        mujoco.mj_forward(m, d)
        assert d.qfrc_passive.any()
        F = np.asarray(ns.evaluate(0.0, np.concatenate([qk, wk]), p)[2], float)
        ref = d.qfrc_bias - d.qfrc_passive
        assert np.abs(-P @ F - ref).max() <= 1e-12 * np.abs(ref).max()
    shown = "\n".join(robot.format_warnings())
    assert "warning: body `fore`: the joints' armature are not part of the model" in shown
    line = next(i for i, s in enumerate(ARM.splitlines(), 1) if 'name="fore"' in s)
    assert f"{path}:{line}:" in shown


def test_mjcf_free_joint_damping_is_named_in_a_warning_and_an_error_when_strict(tmp_path):
    """The floating root moves freely in the model: MuJoCo's damping of a free joint
    (a passive force on the base, ``qfrc_passive``) is not part of it, so a warning at
    the joint names it, an error under ``strict`` (as armature is)."""
    text = ARM.replace(" DAMPING", "").replace(
        '<geom type="box" size="0.1 0.1 0.05" mass="3"/>',
        '<joint name="float" type="free" damping="0.5"/>'
        '<geom type="box" size="0.1 0.1 0.05" mass="3"/>')
    path = _write(tmp_path, text)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qvel[:6] = 1.0
    mujoco.mj_forward(m, d)
    assert d.qfrc_passive[:6].any()         # MuJoCo does damp the base
    robot = import_robot(path)
    assert robot.floating
    shown = "\n".join(robot.format_warnings())
    line = next(i for i, s in enumerate(text.splitlines(), 1) if 'name="float"' in s)
    assert (f"{path}:{line}:" in shown and "warning: the free joint `float` of the floating "
            "root `base` has damping, which is not part of the model" in shown), shown
    with pytest.raises(ParseError, match=r"error: the free joint `float` .* has damping"):
        import_robot(path, strict=True)
    armature = ARM.replace("DAMPING", 'armature="0.01"')
    import_robot(_write(tmp_path, armature, "armature.xml"))
    with pytest.raises(ParseError, match=r"error: body `fore`: the joints' armature"):
        import_robot(_write(tmp_path, armature, "armature.xml"), strict=True)


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


FOUR_BAR = """<mujoco model="four_bar">
  <worldbody>
    <body name="crank">
      <joint name="q1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.02" fromto="0 0 0 0.2 0 0" mass="1"/>
      <body name="coupler" pos="0.2 0 0" euler="0 -53.13010235415598 0">
        <joint name="q2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" size="0.02" fromto="0 0 0 0.5 0 0" mass="2"/>
      </body>
    </body>
    <body name="rocker" pos="0.8 0 0" euler="0 -126.86989764584402 0">
      <joint name="q3" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.02" fromto="0 0 0 0.5 0 0" mass="1.5"/>
    </body>
  </worldbody>
  <equality>
    <connect name="close" body1="coupler" body2="rocker" anchor="0.5 0 0"/>
  </equality>
</mujoco>
"""


def test_mjcf_loop_closed_by_connect_equals_mujoco(tmp_path):
    """A four-bar whose loop is an ``equality connect``: written as ``COINCIDE`` (the
    component along the hinge axes vanishes identically: two constraints). At 100
    random states kidym's M and −F equal MuJoCo's ``mj_fullM`` and ``qfrc_bias``, its
    constraint Jacobian G and γ equal the connect's ``J = J_A − J_B`` (``mj_jac`` of the
    two points) and ``−J̇ v`` (``mj_jacDot``), and its accelerations equal the solution
    of ``[M Jᵀ; J 0]`` from MuJoCo's pieces (1e-12 relative)."""
    path = _write(tmp_path, FOUR_BAR, "four_bar.xml")
    robot = import_robot(path)
    assert "COINCIDE := coupler(0.5, 0, 0) = rocker(0.5, 0, " in robot.text
    eq = kidym.derive(kidym.parse(robot.text))
    assert eq.constraints is not None and eq.constraints.names == ("coinX1", "coinZ1")
    ns = NumpySystem.build(eq)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    coords = [str(c) for c in eq.coordinates]
    P = np.zeros((m.nv, eq.n_w))
    for j in range(m.njnt):
        P[m.jnt_dofadr[j], coords.index(robot.coordinates[m.joint(j).name])] = 1.0
    n, k = eq.n_w, 2
    a_id, b_id = m.body("coupler").id, m.body("rocker").id
    rng = np.random.default_rng(8)
    p = ns.parameter_vector()
    for _ in range(100):
        qk, wk = rng.uniform(-np.pi, np.pi, n), rng.normal(0.0, 2.0, n)
        d.qpos[:], d.qvel[:] = P @ qk, P @ wk
        mujoco.mj_forward(m, d)
        M = np.zeros((n, n))
        mujoco.mj_fullM(m, d, M)
        J, Jd = np.zeros((3, n)), np.zeros((3, n))
        for body, anchor, sign in ((a_id, m.eq_data[0, 0:3], 1.0),
                                   (b_id, m.eq_data[0, 3:6], -1.0)):
            point = d.xpos[body] + d.xmat[body].reshape(3, 3) @ anchor
            jp, jdp = np.zeros((3, n)), np.zeros((3, n))
            mujoco.mj_jac(m, d, jp, None, point, body)
            mujoco.mj_jacDot(m, d, jdp, None, point, body)
            J += sign * jp
            Jd += sign * jdp
        assert np.abs(J[1]).max() == 0.0          # along the hinge axes
        J, gamma_ref = J[[0, 2]], -(Jd @ d.qvel)[[0, 2]]
        y = np.concatenate([qk, wk])
        _, Mk, Fx = ns.evaluate(0.0, y, p)[:3]
        Mk, Fx = np.asarray(Mk, float), np.asarray(Fx, float)
        F, gamma, G = Fx[:n], Fx[n:n + k], Fx[n + 3 * k:].reshape(k, n)
        assert np.abs(P @ Mk @ P.T - M).max() <= 1e-12 * np.abs(M).max()
        assert np.abs(-P @ F - d.qfrc_bias).max() <= 1e-12 * np.abs(d.qfrc_bias).max()
        assert np.abs(G @ P.T - J).max() <= 1e-12 * np.abs(J).max()
        assert np.abs(gamma - gamma_ref).max() <= 1e-12 * max(np.abs(gamma_ref).max(), 1.0)
        kkt = np.block([[M, J.T], [J, np.zeros((k, k))]])
        ref = np.linalg.solve(kkt, np.concatenate([-d.qfrc_bias, gamma_ref]))[:n]
        got = P @ ns.rhs(0.0, y, p)[n:2 * n]
        cond = np.linalg.cond(kkt)
        assert np.abs(got - ref).max() <= 1e-12 * cond * np.abs(ref).max()


BALL = """<mujoco model="ball_arm">
  <worldbody>
    <body name="stand" pos="0 0 1" euler="0 0 20">
      <geom type="box" size="0.05 0.05 0.05" mass="2"/>
      <body name="arm" pos="0.1 0 -0.05" quat="0.9 0.3 0.2 -0.1">
        <joint name="shoulder" type="ball" pos="0 0 0.04"/>
        <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0.05 -0.1" mass="1.2"/>
        <body name="hand" pos="0.3 0.05 -0.1">
          <joint name="wrist" type="hinge" axis="0.3 0.4 0.5" pos="0.01 0 0"/>
          <geom type="box" size="0.08 0.02 0.01" pos="0.05 0 0" euler="10 0 5" mass="0.4"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


@pytest.mark.parametrize("engine", ["numpy", pytest.param("compiled", marks=[
    pytest.mark.compiled, pytest.mark.slow])])
def test_mjcf_ball_joint_equals_mujoco(tmp_path, engine):
    """A ball joint (anchor off the body's origin) of a body on a welded stand, with a
    hinge below it. kidym turns the body by a quaternion ``λ`` on the fixed frame: the
    placement's turn ``q_b`` (the stand's and the body's) composed with the joint's,
    ``λ = q_b ∘ q_ball``, so MuJoCo's ``qpos`` is ``q_b⁻¹ ∘ λ``; the speeds are the
    body's angular velocity in its axes, both MuJoCo's ``qvel`` and kidym's ``ωX, ωY,
    ωZ``. At 100 random states M, −F and M⁻¹F equal ``mj_fullM``, ``qfrc_bias`` and
    ``qacc``; the file's pose is the model's start (``q_ball = 1``)."""
    path = _write(tmp_path, BALL, "ball.xml")
    robot = import_robot(path)
    lam_names = robot.balls["shoulder"]
    assert robot.coordinates == {"wrist": "wrist"} and robot.warnings == []
    eq = kidym.derive(kidym.parse(robot.text))
    if engine == "numpy":
        system = NumpySystem.build(eq)
    else:
        from kidym.simulation.compiled import CompiledSystem

        system = CompiledSystem.build(eq)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    coords = [str(c) for c in eq.coordinates]
    speeds = [str(w) for w in eq.speeds]
    omega = [w for w in speeds if w.startswith("ωX") or w.startswith("ωY")
             or w.startswith("ωZ")]
    assert len(omega) == 3
    P = np.zeros((m.nv, eq.n_w))
    for k, w in enumerate(omega):
        P[m.jnt_dofadr[0] + k, speeds.index(w)] = 1.0
    P[m.jnt_dofadr[1], speeds.index("wrist't")] = 1.0
    # the placement's turn: the stand's and the arm's (MuJoCo's body frame at qpos0)
    mujoco.mj_resetData(m, d)
    mujoco.mj_kinematics(m, d)
    qb = np.zeros(4)
    mujoco.mju_mat2Quat(qb, d.xmat[m.body("arm").id])
    import re

    initial = next(s for s in robot.text.splitlines() if s.startswith("INITIAL :="))
    start = [float(re.search(rf"\b{n}\(([^)]+)\)", initial).group(1)) for n in lam_names]
    assert np.abs(np.asarray(start) - (qb if qb[0] >= 0 else -qb)).max() <= 1e-14
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT     # the geoms touch
    qb_inv = qb * np.array([1.0, -1.0, -1.0, -1.0])
    rng = np.random.default_rng(13)
    p = system.parameter_vector()
    for _ in range(100):
        qk = rng.uniform(-np.pi, np.pi, eq.n_q)
        lam = rng.normal(size=4)
        lam /= np.linalg.norm(lam)
        for name, v in zip(lam_names, lam):
            qk[coords.index(name)] = v
        wk = rng.normal(0.0, 2.0, eq.n_w)
        d.qpos[m.jnt_qposadr[0]:m.jnt_qposadr[0] + 4] = _quat_mul(qb_inv, lam)
        d.qpos[m.jnt_qposadr[1]] = qk[coords.index("wrist")]
        d.qvel[:] = P @ wk
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        y = np.concatenate([qk, wk])
        _, Mk, F = system.evaluate(0.0, y, p)[:3]
        Mk, F = np.asarray(Mk, float), np.asarray(F, float)[:eq.n_w]
        assert np.abs(P @ Mk @ P.T - M).max() <= 1e-12 * np.abs(M).max()
        assert np.abs(-P @ F - d.qfrc_bias).max() <= 1e-12 * np.abs(d.qfrc_bias).max()
        ak = P @ np.linalg.solve(Mk, F)
        assert np.abs(ak - d.qacc).max() <= 1e-12 * np.linalg.cond(M) * np.abs(d.qacc).max()
