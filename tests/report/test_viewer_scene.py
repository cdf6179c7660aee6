"""The viewer's scene, without a browser: solids sized from the inertia by the closed forms
of uniform solids, the surfaces a model implies or declares, mode shapes as motions."""

import math

import numpy as np
import pytest

import kidym
from kidym.analysis.modes import mode_motion, modes
from kidym.cli import main
from kidym.report.animation import animation_data, mode_poses
from kidym.report.poses import POINT, THIN, body_poses, shape_of
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES


def _shape(text: str, body: int = 0, size: float = 1.0):
    m = kidym.parse(text)
    return shape_of(m.bodies[body], m, m.parameter_values, size)


@pytest.mark.parametrize("axis", ["x", "y", "z"])
def test_cylinder_radius_and_length_from_its_moments(axis):
    # a uniform cylinder: J_axial = m r²/2, J_transverse = m (3 r² + L²)/12
    m, r, L = 2.5, 0.3, 0.45
    ja, jt = m * r**2 / 2, m * (3 * r**2 + L**2) / 12
    J = {a: (ja if a == axis else jt) for a in "xyz"}
    s = _shape(f"Can | Sx(x) | m({m}), Jx({J['x']!r}), Jy({J['y']!r}), Jz({J['z']!r});")
    assert s.kind == "cylinder" and s.rule == "cylinder"
    assert s.size[0] == pytest.approx(2 * r, rel=1e-9)
    assert s.size[1] == pytest.approx(L, rel=1e-9)
    assert s.size[2] == "xyz".index(axis)


def test_rolling_disc_is_a_thin_disc_not_a_box():
    """The rolling disc (Jx = Jz = m r²/4, Jy = m r²/2: L = 0) used to be drawn as a box."""
    model = kidym.load(EXAMPLES / "rolling_disc" / "rolling_disc.kdm")
    s = shape_of(model.bodies[0], model, model.parameter_values, 1.0)
    r = 0.3
    assert s.kind == "cylinder" and s.rule == "thin disc"
    assert s.size == pytest.approx((2 * r, THIN * 2 * r, 1.0))      # axis: body y


def test_rods_point_masses_spheres_and_boxes():
    rod = _shape("Rod | Rz(phi) | Sx(0.5), m(3), Jx(0), Jy(3*1.2^2/12), Jz(3*1.2^2/12);")
    assert rod.rule == "rod" and rod.size == pytest.approx((THIN * 1.2, 1.2, 0.0))
    dot = _shape("P | Sx(x) | m(2), Jx(0), Jy(0), Jz(0);", size=4.0)
    assert dot.rule == "point mass" and dot.size == pytest.approx((POINT * 4.0,) * 3)
    ball = _shape("B | Sx(x) | m(1), Jx(0.4*0.2^2), Jy(0.4*0.2^2), Jz(0.4*0.2^2);")
    assert ball.rule == "sphere" and ball.size == pytest.approx((0.4,) * 3)
    # the box of equal inertia, J_x = m (b² + c²)/12 …
    a, b, c, m = 0.1, 0.3, 0.7, 2.0
    box = _shape(f"K | Sx(x) | m({m}), Jx({m * (b*b + c*c) / 12!r}), "
                 f"Jy({m * (a*a + c*c) / 12!r}), Jz({m * (a*a + b*b) / 12!r});")
    assert box.rule == "box" and box.size == pytest.approx((a, b, c))
    # a plate: one edge 0, drawn THIN of the longest
    plate = _shape(f"P | Sx(x) | m({m}), Jx({m * c * c / 12!r}), Jy({m * (b*b + c*c) / 12!r}), "
                   f"Jz({m * b * b / 12!r});")
    assert plate.rule == "box" and plate.size == pytest.approx((b, THIN * c, c))


def test_biped_bodies_by_closed_form():
    """Thighs (Jbx = Jby = 0.10, Jbz = 0.02, m 7): cylinders about z; feet (three
    different moments): boxes; the small links (three equal): spheres."""
    model = kidym.load(EXAMPLES / "biped" / "biped.kdm")
    vals = model.parameter_values
    shapes = {b.name: shape_of(b, model, vals, 1.0) for b in model.bodies}
    thigh = shapes["BdL"]
    r = math.sqrt(2 * 0.02 / 7)
    assert thigh.rule == "cylinder" and thigh.size[2] == 2
    assert thigh.size[:2] == pytest.approx((2 * r, math.sqrt(12 * 0.10 / 7 - 3 * r * r)))
    assert shapes["GsL"].rule == "sphere"
    assert shapes["GsL"].size[0] == pytest.approx(2 * math.sqrt(2.5 * 0.0005 / 0.5))
    foot = shapes["StL"]
    assert foot.rule == "box"
    Jx, Jy, Jz, m = 0.002, 0.006, 0.007, 1.0
    assert foot.size == pytest.approx(tuple(
        math.sqrt(6 * (J2 + J3 - J1) / m) for J1, J2, J3 in
        ((Jx, Jy, Jz), (Jy, Jz, Jx), (Jz, Jx, Jy))))


def test_surfaces_rolled_on_and_declared():
    ball = kidym.load(EXAMPLES / "ball" / "ball_rolling.kdm")       # КОЧЕННЯ: the bowl
    r = kidym.simulate(ball, t_end=0.2, n_points=5)
    data = animation_data(body_poses(ball, r), ball)
    (bowl,) = data["surfaces"]
    assert bowl["kind"] == "sphere_inside" and bowl["radius"] == 3 and bowl["source"] == "Куля"
    assert bowl["centre"] == [0, 0, 3] * 5
    seed = kidym.load(EXAMPLES / "ball" / "ball.kdm")                # СЦЕНА: the same bowl
    (declared,) = seed.scene
    assert declared.kind == "sphere_inside"
    disc = kidym.load(EXAMPLES / "rolling_disc" / "rolling_disc.kdm")
    assert [s.kind for s in disc.scene] == ["plane"]


MOVING = ("m = 1; v = 0.5; B | Sx(x), Sz(z) | m, 1, 1, 1; GRAVITY := 9.81;\n"
          "СЦЕНА := плоскость(v*t - 1), sphere_outside(2, 0, 0, -3);\n")


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_moving_plane_is_drawn_where_it_is(engine):
    """Display only: both engines run the model; the plane z = v t − 1 at each time."""
    m = kidym.parse(MOVING)
    r = kidym.simulate(m, t_end=1, n_points=5, engine=engine)
    np.testing.assert_allclose(r["z"], -9.81 * r.t**2 / 2, atol=1e-8)
    data = animation_data(body_poses(m, r), m)
    plane, sphere = data["surfaces"]
    assert plane["height"] == pytest.approx(0.5 * r.t - 1)
    assert sphere["kind"] == "sphere_outside" and sphere["radius"] == 2


def test_scene_survives_fmt():
    from kidym.lang.fmt import format_source

    def surfaces(text):
        return [(s.kind, str(s.height), str(s.radius), tuple(map(str, s.centre)))
                for s in kidym.parse(text).scene]

    for lang in ("ru", "uk", "en"):
        assert surfaces(format_source(MOVING, language=lang)) == surfaces(MOVING)


@pytest.mark.parametrize("text, message", [
    ("СЦЕНА := сфера(1);", "say from which side"),
    ("SCENE := plane(x);", "plane height in `SCENE` depends on coordinate `x`"),
    ("SCENE := sphere_inside(x, 0, 0, 0);", "sphere radius in `SCENE` depends on"),
    ("SCENE := surface(f);", "planes and spheres only"),
    ("SCENE := cone(1);", "lists surfaces to draw"),
    ("SCENE := plane(1, 2);", "lists surfaces to draw"),
    ("SCENE := plane(nosuch);", "nosuch"),
])
def test_scene_errors_are_located(text, message):
    with pytest.raises(ValueError, match=message) as err:
        kidym.parse("m = 1; B | Sx(x) | m, 1, 1, 1;\n" + text)
    assert "<string>:2:" in str(err.value)


def _double_pendulum_modes():
    """Closed form: hanging uniform rods, absolute angles θ1 = φ1, θ2 = φ1 + φ2:
    M = [[m1 l1²/3 + m2 l1², m2 l1 l2/2], [m2 l1 l2/2, m2 l2²/3]],
    K = diag((m1/2 + m2) g l1, m2 g l2/2); K v = ω² M v."""
    m1, m2, l1, l2, g = 1.3, 0.7, 1.1, 0.9, 9.81
    M = np.array([[m1 * l1**2 / 3 + m2 * l1**2, m2 * l1 * l2 / 2],
                  [m2 * l1 * l2 / 2, m2 * l2**2 / 3]])
    K = np.diag([(m1 / 2 + m2) * g * l1, m2 * g * l2 / 2])
    w2, V = np.linalg.eig(np.linalg.solve(M, K))
    order = np.argsort(w2)
    return np.sqrt(w2[order]), V[:, order]


def test_mode_motion_is_the_closed_form_mode():
    model = kidym.parse(DOUBLE_PENDULUM + "INITIAL := phi1(-1.4), phi2(0.1);")
    md = modes(kidym.derive(model))
    omega, V = _double_pendulum_modes()
    found = sorted(m.damped_frequency for m in md.modes)
    np.testing.assert_allclose(found, omega, rtol=1e-9)
    for k in (1, 2):
        j = int(np.argmin(abs(omega - md.modes[k - 1].damped_frequency)))
        tau, y = mode_motion(md, k, 0.1, n_points=41)
        assert tau[-1] == pytest.approx(2 * np.pi / omega[j], rel=1e-9)
        d1, d2 = y["phi1"] + np.pi / 2, y["phi2"]        # about the hanging equilibrium
        # relative angles: φ1 = θ1, φ2 = θ2 − θ1
        np.testing.assert_allclose(d2 * V[0, j], d1 * (V[1, j] - V[0, j]), atol=1e-10)
        assert max(abs(d1).max(), abs(d2).max()) == pytest.approx(0.1, rel=1e-9)
        np.testing.assert_allclose(d1, d1[0] * np.cos(omega[j] * tau), atol=1e-10)


def test_mode_animation_moves_the_bodies_as_the_mode():
    model = kidym.parse(DOUBLE_PENDULUM + "INITIAL := phi1(-1.4), phi2(0.1);")
    md = modes(kidym.derive(model))
    poses, eps = mode_poses(model, md, 1)
    _tau, y = mode_motion(md, 1, eps, n_points=61)
    # centre of rod 1: l1/2 (cos φ1, sin φ1); frozen at the operating point's time
    np.testing.assert_allclose(poses.centre[0, :, 0], 0.55 * np.cos(y["phi1"]), atol=1e-12)
    np.testing.assert_allclose(poses.centre[0, :, 1], 0.55 * np.sin(y["phi1"]), atol=1e-12)
    # the automatic amplitude: a body point moves by 15 % of the model's size, hanging
    # (centres at 0.55 and 1.1 + 0.45 below the pivot: size 1.55), unless ε is capped
    moved = max(np.abs(poses.centre - poses.centre[:, :1]).max(),
                np.abs(poses.origin - poses.origin[:, :1]).max())
    assert eps == 0.5 or moved == pytest.approx(0.15 * 1.55, rel=0.05)


def test_modes_animate_cli(tmp_path, capsys):
    model = EXAMPLES / "double_pendulum" / "double_pendulum_modes.kdm"
    assert main(["modes", str(model), "--animate", "2", "--out", str(tmp_path / "m")]) == 0
    page = (tmp_path / "m" / "mode2.html").read_text(encoding="utf-8")
    assert "mode 2, ω = 7.18867 rad/s" in page
    assert main(["modes", str(model), "--animate", "3", "--out", str(tmp_path / "n")]) == 1
    assert "there is no mode 3: the modes are 1 … 2" in capsys.readouterr().err
    assert not (tmp_path / "n").exists()


def test_run_of_free_vibrations_animates_every_vibration_mode(tmp_path):
    model = EXAMPLES / "double_pendulum" / "double_pendulum_modes.kdm"
    out = tmp_path / "o"
    assert main(["run", str(model), "--out", str(out), "--animate", "-q"]) == 0
    assert sorted(p.name for p in out.glob("mode*.html")) == ["mode1.html", "mode2.html"]
    assert main(["modes", str(model), "--animate", "1", "--vary", "g=9:10:3",
                 "--out", str(tmp_path / "v")]) == 1


def test_a_planar_rod_with_only_jz_is_drawn_as_the_rod_of_its_moment():
    """`m, Jz` (docs/language.md allows it): a uniform rod of length L about its centre has
    Jz = m L²/12, so L = √(12 Jz/m); it lies toward its joint (`Sy(-l/2)`: along y), and
    a crank without a central shift lies toward its child's joint (`Sx(r)`: along x)."""
    m, L = 0.3, 0.4
    pole = _shape(f"Pole | Rz(th) | Sy(-{L / 2}), m({m}), Jz({m * L * L / 12!r});")
    assert pole.rule == "planar rod" and pole.kind == "cylinder"
    assert pole.size == pytest.approx((THIN * L, L, 1.0))
    text = (f"Crank | Rz(q1) | m({m}), Jz({m * L * L / 12!r});\n"
            f"Rod~Crank | Sx({L}), Rz(q2) | Sx(0.2), m(1), Jz(1*0.4^2/12);")
    crank = _shape(text)
    assert crank.size == pytest.approx((THIN * L, L, 0.0))


def test_declared_shapes_and_rolling_bodies(tmp_path):
    text = """l = 0.8; r = 0.1;
Cart | Sx(x) | m(1), Jx(0), Jy(0), Jz(0);
Pole~Cart | Rz(th) | Sy(-l/2), m(0.3), Jz(0.3*l^2/12);
Bob~Pole | Sy(-l) | m(0.1), Jx(0), Jy(0), Jz(0);
Hub~Cart | Sz(0.2) | m(0.1), Jx(0), Jy(0), Jz(0);
SHAPES := Cart(box(0.3, 0.15, 0.1)), Pole(capsule(0.04, l, y)), Bob(sphere(2*r)),
          Hub(cylinder(0.05, 0.02, x));
"""
    m = kidym.parse(text)
    from kidym.report.poses import declared_shape
    vals = m.parameter_values
    got = {b.name: declared_shape(b, m, vals) for b in m.bodies}
    assert got["Cart"].kind == "box" and got["Cart"].size == pytest.approx((0.3, 0.15, 0.1))
    assert got["Pole"].kind == "capsule" and got["Pole"].size == pytest.approx((0.04, 0.8, 1))
    assert got["Bob"].kind == "sphere" and got["Bob"].size == pytest.approx((0.2,) * 3)
    assert got["Hub"].kind == "cylinder" and got["Hub"].size == pytest.approx((0.05, 0.02, 0))
    # the bicycle's wheels: discs of diameter 2r of `КАЧЕНИЕ`, about their axis y
    bike = kidym.load(EXAMPLES / "bicycle" / "bicycle.kdm")
    vals = bike.parameter_values
    wheels = {b.name: declared_shape(b, bike, vals) for b in bike.bodies
              if b.name.startswith("Wheel")}
    assert wheels["WheelR"].rule == "rolling"
    assert wheels["WheelR"].size == pytest.approx((2 * vals["rR"], THIN * 2 * vals["rR"], 1))
    assert wheels["WheelF"].size == pytest.approx((2 * vals["rF"], THIN * 2 * vals["rF"], 1))
    # every shape reaches the viewer's data
    res = kidym.simulate(m, t_end=0.05, engine="numpy")
    data = animation_data(body_poses(m, res), m)
    kinds = sorted(b["shape"] for b in data["bodies"])
    assert kinds == ["box", "capsule", "cylinder", "sphere"]
