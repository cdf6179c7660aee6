"""The inverse kinematics calculation (issue 17, item 5).

Oracles: the closed-form inverse kinematics of a planar two-link arm (both elbow
branches), the pseudo-inverse (minimum-norm) solution of a linear redundant system, and
an independent forward kinematics of the biped's leg written here with NumPy rotation
matrices.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import kidym
from kidym.calc.inverse_kinematics import InverseKinematicsError, inverse_kinematics
from kidym.cli import main
from kidym.errors import ParseError
from tests.fixtures import EXAMPLES

L1, L2 = 1.0, 0.7

ARM = """
CALCULATION := INVERSE KINEMATICS;
l1 = 1; l2 = 0.7; m = 1;
Link1 | Rz(q1) | Sx(l1/2), m, 0, m*l1^2/12, m*l1^2/12;
Link2~Link1 | Sx(l1), Rz(q2) | Sx(l2/2), m, 0, m*l2^2/12, m*l2^2/12;
xt = 1.2 + 0.3*cos(t);  yt = 0.5 + 0.3*sin(t);
f1 = XOLink2 + l2*S11Link2 - xt;
f2 = YOLink2 + l2*S21Link2 - yt;
EQUATIONS := f1, f2;
TIME := t(0, 6.283);
SHOW := q1, q2, XOLink2;
"""


def _closed_form(t, elbow):
    x, y = 1.2 + 0.3 * np.cos(t), 0.5 + 0.3 * np.sin(t)
    q2 = elbow * np.arccos((x**2 + y**2 - L1**2 - L2**2) / (2 * L1 * L2))
    q1 = np.arctan2(y, x) - np.arctan2(L2 * np.sin(q2), L1 + L2 * np.cos(q2))
    return q1, q2


@pytest.mark.parametrize(("guess", "elbow"), [("q1(0.2), q2(1)", 1),
                                               ("q1(1), q2(-1)", -1)],
                         ids=["elbow-up", "elbow-down"])
def test_two_link_arm_against_closed_form(guess, elbow):
    model = kidym.parse(ARM + f"INITIAL GUESS := {guess};")
    r = inverse_kinematics(model, n_points=201)
    q1, q2 = _closed_form(r.t, elbow)
    np.testing.assert_allclose(r["q2"], q2, atol=1e-10)
    np.testing.assert_allclose(np.angle(np.exp(1j * (r["q1"] - q1))), 0, atol=1e-10)
    assert np.max(r.residuals) < 1e-11
    # the elbow position is an output, by the arm's geometry
    np.testing.assert_allclose(r["XOLink2"], L1 * np.cos(r["q1"]), atol=1e-12)
    # q't by differences of the solutions: compared with the derivative of the closed form
    h = 1e-6
    dq2 = (_closed_form(r.t + h, elbow)[1] - _closed_form(r.t - h, elbow)[1]) / (2 * h)
    np.testing.assert_allclose(r["q2't"], dq2, atol=2e-3)


def test_limits_are_respected():
    """With the elbow-down start but ``q2 ≥ 0`` the solution keeps the limit: it is the
    elbow-up branch."""
    model = kidym.parse(ARM + "INITIAL GUESS := q1(1), q2(-1);\nLIMITS := q2(0, 3);")
    assert dict(model.limits) == {"q2": (0.0, 3.0)}
    r = inverse_kinematics(model, n_points=51)
    assert np.min(r["q2"]) >= 0
    np.testing.assert_allclose(r["q2"], _closed_form(r.t, 1)[1], atol=1e-10)


def test_target_beyond_limits_is_a_clear_error():
    model = kidym.parse(ARM + "INITIAL GUESS := q1(0.2), q2(0.4);\nLIMITS := q2(0, 0.5);")
    with pytest.raises(InverseKinematicsError,
                       match=r"no solution at t = 0: .* max \|f\| = .*q2 at a limit"):
        inverse_kinematics(model, n_points=11)


def test_target_out_of_reach_names_time_and_residual():
    # the target circle leaves the reach l1 + l2 = 1.7 at t ≈ 0 (|(2.0, 0.5)| > 1.7)
    text = ARM.replace("1.2 + 0.3*cos(t)", "1.2 + 0.8*cos(t)")
    model = kidym.parse(text + "INITIAL GUESS := q1(0.2), q2(1); TIME := t(1, 7.283);")
    with pytest.raises(InverseKinematicsError, match=r"no solution at t = [\d.]+: after \d+ "
                       r"damped Newton iterations max \|f\| = [\d.e+-]+ \(largest: `f\d`\)"
                       r".*out of reach"):
        inverse_kinematics(model, n_points=101)


LINEAR = """
CALCULATION := INVERSE KINEMATICS;
B | Sx(q1), Sy(q2), Sz(q3) | 1;
f1 = XOB + 2*YOB - t;
f2 = ZOB - YOB - 0.5*t + 0.2;
EQUATIONS := f1, f2;
TIME := t(0, 1);
"""


def test_redundant_system_takes_least_norm_steps():
    """Two equations, three coordinates, linear: from q = 0 the least-norm steps give
    the minimum-norm solution ``pinv(A) b(t)`` at every time."""
    r = inverse_kinematics(kidym.parse(LINEAR), n_points=11)
    A = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 1.0]])
    expected = np.array([np.linalg.pinv(A) @ np.array([t, 0.5 * t - 0.2]) for t in r.t])
    got = np.column_stack([r["q1"], r["q2"], r["q3"]])
    np.testing.assert_allclose(got, expected, atol=1e-12)


def _rot(axis, a):
    c, s = np.cos(a), np.sin(a)
    return {"x": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


def _left_foot(q):
    """The left foot frame's origin and rotation by the records of ``biped.kdm``,
    chained here with NumPy (right-handed rotations, fixed ← body)."""
    teta, alfa, gamma, beta, nu, eps = q
    steps = [("S", [0, 0.10, 0]), ("R", "y", 0.0), ("R", "z", teta), ("S", [0, 0, -0.05]),
             ("R", "x", alfa), ("S", [0, 0, -0.05]), ("S", [0, 0, 0]), ("R", "y", -gamma),
             ("S", [0, 0, -0.42]), ("R", "y", beta), ("S", [0, 0, 0]), ("S", [0, 0, -0.42]),
             ("R", "y", -nu), ("S", [0, 0, -0.05]), ("R", "x", eps)]
    R, p = np.eye(3), np.zeros(3)
    for s in steps:
        if s[0] == "S":
            p = p + R @ np.array(s[1], float)
        else:
            R = R @ _rot(s[1], s[2])
    return p, R


def test_biped_foot_target_example():
    model = kidym.load(EXAMPLES / "biped" / "biped_ik.kdm")
    r = inverse_kinematics(model, n_points=41)
    left = ["tetaSL", "alfaSL", "gammaSL", "betaSL", "nuSL", "epsilonSL"]
    for k, t in enumerate(r.t):
        p, R = _left_foot([r[n][k] for n in left])
        target = [0.1 * np.sin(np.pi * t), 0.1, -0.88 + 0.05 * (1 - np.cos(2 * np.pi * t))]
        np.testing.assert_allclose(p, target, atol=1e-10)
        np.testing.assert_allclose(R, np.eye(3), atol=1e-10)   # the foot stays flat
    assert np.max(r.residuals) < 1e-10


def test_cli_check_and_run(tmp_path, capsys):
    path = tmp_path / "arm.kdm"
    path.write_text(ARM + "INITIAL GUESS := q1(0.2), q2(1);\nLIMITS := q2(0, 3);\n",
                    encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "calculation: inverse kinematics" in out and "0 <= q2 <= 3" in out
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--points", "21"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"inverse kinematics from t = 0 to 6.283, 21 points, converged at every "
                     r"point \(max \|f\| <= [\d.]+e-12\); damped Newton", out)
    header = (tmp_path / "o" / "results.csv").read_text().splitlines()[0]
    assert header == "t,q1,q2,q1't,q2't,XOLink2"
    assert (tmp_path / "o" / "02_q2.png").exists()


@pytest.mark.parametrize(("extra", "message", "line"), [
    ("f3 = q1 - t; EQUATIONS := f1, f2, f3;",
     r"lists 3 equations for 2 coordinates \(q1, q2\)", 11),
    ("LIMITS := q2't(-1, 1);", r"velocity limits .* are not supported", 12),
    ("LIMITS := q2(1, 0);", r"the limits of `q2` must increase", 12),
    ("INITIAL GUESS := q3(1);", r"`q3` in `INITIAL GUESS` is not a coordinate", 12),
    ("f3 = q1't - 1; f4 = f3 + q2; EQUATIONS := f1, f4;",
     r"equation `f4` uses `q1't`, a velocity", 11),
])
def test_located_errors(extra, message, line):
    text = ARM.replace("EQUATIONS := f1, f2;\n", "") if "EQUATIONS" in extra else ARM
    with pytest.raises(ParseError, match=message) as exc:
        kidym.parse(text + extra, filename="arm.kdm")
    assert f"arm.kdm:{line}:" in exc.value.render()


def test_guess_and_limits_belong_to_inverse_kinematics():
    text = ARM.replace("CALCULATION := INVERSE KINEMATICS;", "CALCULATION := DYNAMICS;")
    with pytest.raises(ParseError, match=r"`LIMITS` belongs to the inverse kinematics"):
        kidym.parse(text.replace("EQUATIONS := f1, f2;", "") + "LIMITS := q2(0, 3);")


def test_inverse_kinematics_needs_equations():
    with pytest.raises(ParseError, match=r"solves `УРАВНЕНИЯ := f1, …;`"):
        kidym.parse(ARM.replace("EQUATIONS := f1, f2;", ""))


ARM3 = """
CALCULATION := INVERSE KINEMATICS;
m = 1;
L1 | Rz(q1) | Sx(0.3), m, 0, 0.03, 0.03;
L2~L1 | Sx(0.6), Rz(q2) | Sx(0.25), m, 0, 0.02, 0.02;
L3~L2 | Sx(0.5), Rz(q3) | Sx(0.2), m, 0, 0.01, 0.01;
f1 = XOL3 + 0.4*S11L3 - (0.9 + 0.2*cos(t));
f2 = YOL3 + 0.4*S21L3 - (0.4 + 0.2*sin(t));
EQUATIONS := f1, f2;
INITIAL GUESS := q1(0.3), q2(0.6), q3(0.6);
TIME := t(0, 6.283);
"""


def test_redundant_arm_reaches_and_moves_least():
    """A planar three-link arm (lengths 0.6, 0.5, 0.4) on a circle: two equations,
    three angles. The tip by the closed-form forward kinematics is on the target, and
    each step's change of the angles is (to first order in the time step) orthogonal
    to the null space of the Jacobian: the least-norm motion."""
    r = inverse_kinematics(kidym.parse(ARM3), n_points=401)
    q = np.column_stack([r["q1"], r["q2"], r["q3"]])
    a = np.cumsum(q, axis=1)
    lengths = np.array([0.6, 0.5, 0.4])
    tip = np.column_stack([(lengths * np.cos(a)).sum(1), (lengths * np.sin(a)).sum(1)])
    target = np.column_stack([0.9 + 0.2 * np.cos(r.t), 0.4 + 0.2 * np.sin(r.t)])
    np.testing.assert_allclose(tip, target, atol=1e-11)
    for k in range(1, len(r.t)):
        # J by hand: ∂tip/∂q_j = Σ_{i ≥ j} l_i (−sin a_i, cos a_i)
        J = np.array([[-(lengths[j:] * np.sin(a[k, j:])).sum() for j in range(3)],
                      [(lengths[j:] * np.cos(a[k, j:])).sum() for j in range(3)]])
        null = np.linalg.svd(J)[2][-1]
        dq = q[k] - q[k - 1]
        assert abs(null @ dq) <= 0.05 * np.linalg.norm(dq)


@pytest.mark.parametrize("extra", [["--report"], ["--animate"], ["--engine", "compiled"],
                                   ["--method", "BDF"]])
def test_options_that_do_not_apply_are_errors(tmp_path, extra):
    path = tmp_path / "arm.kdm"
    path.write_text(ARM + "INITIAL GUESS := q1(0.2), q2(1);\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=f"{extra[0]} does not apply to the inverse "
                                         "kinematics calculation"):
        main(["run", str(path), "--out", str(tmp_path / "o"), *extra])
    assert not (tmp_path / "o").exists()
