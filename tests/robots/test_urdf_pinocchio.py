"""Robots imported from URDF files against Pinocchio (issue 30).

At random states, kidym's mass matrix M and bias forces b = −F equal Pinocchio's
``crba`` and ``rnea(q, v, 0)`` to 1e-12 relative to their largest entry, and kidym's
accelerations M⁻¹F equal ``aba`` to 1e-12·cond(M) relative to their largest entry
(Pinocchio agrees with itself, ABA against M⁻¹(τ − b), only to that: issue 30).
The robots are the real ones of the ``example-robot-data`` wheel.
"""

from __future__ import annotations

import pytest

pytest.importorskip("yourdfpy", reason="the robots extra: pip install 'kidym[robots]'")
pytest.importorskip("pinocchio", reason="the robots-test extra (Pinocchio)")

import kidym
from kidym.robots import import_robot
from kidym.simulation.simulate import NumpySystem
from tests.oracles.pinocchio_robots import ROBOTS, PinocchioRobot, compare, robots_dir

try:
    ROBOTS_DIR = robots_dir()
except Exception:  # the wheel is not installed
    ROBOTS_DIR = None
needs_data = pytest.mark.skipif(ROBOTS_DIR is None or not ROBOTS_DIR.is_dir(),
                                reason="example-robot-data is not installed (robots-test)")

FAST = ("double_pendulum_continuous", "ur5", "panda", "z1")
SLOW = tuple(r for r in ROBOTS if r not in FAST)
TOL = 1e-12


def _check(name: str, n_states: int, engine: str = "numpy", floating: bool = False):
    path = ROBOTS_DIR / ROBOTS[name]
    robot = import_robot(path, floating=floating)
    eq = kidym.derive(kidym.parse(robot.text, name=name))
    if engine == "numpy":
        system = NumpySystem.build(eq)
    else:
        from kidym.simulation.compiled import CompiledSystem

        system = CompiledSystem.build(eq)
    base = next(iter(robot.bodies.values())) if floating else None
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds, base=base)
    assert ref.model.nv == eq.n_w, (ref.model.nv, eq.n_w)
    err = compare(system, ref, n_states=n_states, seed=1)
    assert err.M < TOL and err.b < TOL and err.qdd < TOL, err


@needs_data
@pytest.mark.parametrize("name", FAST)
def test_fast_robots_equal_pinocchio(name):
    _check(name, n_states=100)


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_robots_equal_pinocchio(name):
    _check(name, n_states=100)


@needs_data
def test_compiled_engine_equals_pinocchio():
    pytest.importorskip("kidym.simulation.compiled")
    _check("ur5", n_states=100, engine="compiled")


@needs_data
@pytest.mark.parametrize("name", ["solo12", pytest.param("anymal_b", marks=pytest.mark.slow),
                                  pytest.param("talos_reduced", marks=pytest.mark.slow)])
def test_floating_base_equals_pinocchio_free_flyer(name):
    _check(name, n_states=100, floating=True)


@needs_data
@pytest.mark.parametrize("engine", ["numpy", pytest.param("compiled", marks=pytest.mark.slow)])
def test_floating_quadruped_centre_of_mass_falls_at_g(engine):
    """Solo12 thrown with its legs moving, no contact: by the momentum theorem its
    centre of mass (Pinocchio's ``centerOfMass`` of kidym's states) moves on the
    parabola ``c0 + v0 t − g t²/2 e_z`` whatever the legs do."""
    import numpy as np

    path = ROBOTS_DIR / ROBOTS["solo12"]
    robot = import_robot(path, floating=True)
    eq = kidym.derive(kidym.parse(robot.text))
    base = next(iter(robot.bodies.values()))
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds, base=base)
    rng = np.random.default_rng(4)
    lam = rng.normal(size=4)
    lam /= np.linalg.norm(lam)
    initial = {"z": 0.4, **dict(zip(("l0", "l1", "l2", "l3"), lam)),
               "vx": 0.3, "vy": -0.2, "vz": 1.0, f"ωX{base}": 0.5, f"ωY{base}": -0.7,
               f"ωZ{base}": 0.2}
    initial.update({f"{c}'t": float(v) for c, v in
                    zip(robot.coordinates.values(), rng.normal(0, 2, 12))})
    times = np.linspace(0.0, 0.3, 7)
    res = kidym.simulate(eq, t_end=0.3, t_eval=times, initial=initial, rtol=1e-11,
                         atol=1e-12, engine=engine)
    pin = ref.pin
    names = [str(c) for c in eq.coordinates]
    speeds = [str(w) for w in eq.speeds]
    coms = []
    for k in range(len(times)):
        qk = np.array([res[n][k] for n in names])
        wk = np.array([res[n][k] for n in speeds])
        q, v = ref.configuration(qk), ref.P @ wk
        pin.centerOfMass(ref.model, ref.data, q, v)
        coms.append((ref.data.com[0].copy(), ref.data.vcom[0].copy()))
    c0, v0 = coms[0]
    for t, (c, _) in zip(times, coms):
        expected = c0 + v0 * t - 0.5 * 9.81 * t**2 * np.array([0.0, 0.0, 1.0])
        # (rtol 1e-11 over positions of about 1 m and 0.3 s: 1e-8 leaves a margin of 1000)
        assert np.abs(c - expected).max() < 1e-8, (t, c - expected)
