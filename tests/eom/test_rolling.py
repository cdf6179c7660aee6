"""`КАЧЕНИЕ`: rolling without slipping generated from the contact (ball and disc on a
plane, ball inside and outside a sphere, ball on an implicit surface), against
closed-form mechanics and today's hand-written explicit rolling formulas (the rolling
disc example, seed 000's ball in a bowl, a ball on a plane written with
pseudo-velocities)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.errors import ParseError
from kidym.simulation.constrained import consistent_initial
from kidym.simulation.simulate import NumpySystem

ROOT = Path(__file__).parents[2]

BALL = """
m = 1; R = 0.1; g = 9.81; al = 0.3; W = 2;
Ball | Sx(x), Sy(y), Sz(z), Q(l0, l1, l2, l3) | m(m), Jx(2/5*m*R^2), Jy(2/5*m*R^2), Jz(2/5*m*R^2);
КАЧЕНИЕ := Ball(шар(R), плоскость(0));
ГРАВИТАЦИЯ := g*sin(al), 0, -g*cos(al);     # the plane tilted by al: gravity tilted #
Pm.ωZBall = 0.01*sin(W*t);                  # a spin moment: no effect on the centre #
НАЧАЛЬНЫЕ УСЛОВИЯ := z(0.1), l0(1), y't(0.5);
ВРЕМЯ := t(0, 1);
"""

DISC = """
m = 1;  r = 0.3;
Disc | Sx(x), Sy(y), Sz(z), Rz(psi), Rx(theta), Ry(phi)
     | m(m), Jx(m*r^2/4), Jy(m*r^2/2), Jz(m*r^2/4);
КАЧЕНИЕ := Disc(диск(r, y), плоскость(0));
ГРАВИТАЦИЯ := 0, 0, -g;
НАЧАЛЬНЫЕ УСЛОВИЯ := z(0.3), theta(0.1), psi't(0.5), phi't(8);
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A private library cache for this module's compiled builds."""
    path = tmp_path_factory.mktemp("kidym-cache")
    old = os.environ.get("KIDYM_CACHE_DIR")
    os.environ["KIDYM_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("KIDYM_CACHE_DIR", None)
    else:
        os.environ["KIDYM_CACHE_DIR"] = old


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_ball_rolls_down_a_slope_at_five_sevenths_g_sin(engine: str, cache) -> None:
    """Closed form: a uniform ball rolling on a plane of slope α: ẍ = (5/7) g sin α,
    ÿ = 0, normal force m g cos α; rolling: ẋ = R ω_y, ẏ = −R ω_x."""
    g, al, R = 9.81, 0.3, 0.1
    r = kidym.simulate(kidym.parse(BALL), engine=engine)
    assert r.stats["initial_adjusted"] == {"ωXBall": (0.0, -5.0)}
    t = r.t
    assert np.abs(r["x"] - 0.5 * 5 / 7 * g * np.sin(al) * t ** 2).max() < 1e-9
    assert np.abs(r["y"] - 0.5 * t).max() < 1e-9
    assert np.abs(r["z"] - R).max() < 1e-12
    assert np.abs(r["λrollZBall"] - g * np.cos(al)).max() < 1e-9
    assert np.abs(r["x't"] - R * r["ωYBall"]).max() < 1e-9
    assert np.abs(r["y't"] + R * r["ωXBall"]).max() < 1e-9


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_the_generated_disc_has_the_hand_written_examples_equations(engine: str, cache) -> None:
    """examples/rolling_disc writes rolling by hand in contact-point coordinates; the
    generated constraints on a free disc give the same ψ̈, θ̈, φ̈ at random states."""
    gen_eq = kidym.derive(kidym.parse(DISC))
    if engine == "numpy":
        gen = NumpySystem.build(gen_eq)
    else:
        from kidym.simulation.compiled import CompiledSystem
        gen = CompiledSystem.build(gen_eq)
    example = ROOT / "examples" / "rolling_disc" / "rolling_disc.kdm"
    ex = NumpySystem.build(kidym.derive(kidym.load(example)))
    pg, pe = gen.parameter_vector(), ex.parameter_vector()
    rng = np.random.default_rng(1)
    for _ in range(4):
        psi, th, ph = rng.uniform(-3, 3), rng.uniform(-1.2, 1.2), rng.uniform(-3, 3)
        rates = dict(zip(("psi't", "theta't", "phi't"), rng.uniform(-3, 3, 3)))
        angles = {"psi": psi, "theta": th, "phi": ph, **rates}
        start = {"x": 0.1, "y": -0.2, "z": 0.25, "x't": 0.0, "y't": 0.0, "z't": 0.0, **angles}
        y0 = np.array([start[n] for n in gen.state_names])
        given = set(angles) | {"x", "y"}
        y, _changed = consistent_initial(gen, 0.0, y0, pg, given, 1e-13)
        a = dict(zip(gen.state_names, gen.rhs(0.0, y, pg)))
        b = dict(zip(ex.state_names, ex.rhs(0.0, np.array(
            [{"x": 0.0, "y": 0.0, **angles}[n] for n in ex.state_names]), pe)))
        got = np.array([a[k] for k in ("psi't", "theta't", "phi't")])
        want = np.array([b[k] for k in ("psi't", "theta't", "phi't")])
        assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max(), (got, want)


@pytest.mark.parametrize(("item", "message"), [
    ("Bal(шар(R), плоскость(0))", "`Bal` is not a body"),
    ("Ball(куб(R), плоскость(0))", "unknown rolling shape `куб`"),
    ("Ball(шар(R), куб(1))", "unknown surface `куб`"),
    ("Ball(шар(R), сфера(1))", "say on which side of the sphere `Ball` rolls"),
    ("Ball(шар(R), sphere(1, 0, 0, 0))", "say on which side of the sphere"),
    ("Ball(шар(R), сфера_внутри(1, 0))", "lists `Body"),
    ("Ball(шар(R), сфера_снаружи(x))", "sphere radius of `Ball`"),
    ("Ball(шар(R), сфера_внутри(1, x, 0, 0))", "sphere centre of `Ball`"),
    ("Ball(шар(R), плоскость(x))", "plane height of `Ball`"),
    ("Ball(диск(R, y), сфера_внутри(1))", "a disc rolls on a plane only"),
    ("Ball(шар(R), поверхность(1 + al))", "takes the name of a defined formula"),
    ("Ball(шар(R), поверхность(nope))", "`nope` is not a defined formula"),
    ("Ball(шар(R), поверхность(W))", "`W` is not a defined formula"),
    ("Ball(шар(R), поверхность(fx))", "the surface `fx` of `Ball` uses `x`"),
    ("Ball(шар(R), поверхность(ft))", "the surface `ft` of `Ball` uses `t`"),
    ("Ball(шар(R), поверхность(fc))", "the surface `fc` of `Ball` does not use the centre"),
    ("Ball(диск(R, w), плоскость(0))", "the axis of disc `Ball` is `x`, `y` or `z`"),
    ("Ball(шар(x), плоскость(0))", "radius of `Ball`"),
    ("Ball", "lists `Body"),
])
def test_bad_rolling_items_are_located_errors(item: str, message: str) -> None:
    text = BALL.replace("Ball(шар(R), плоскость(0))", item) + (
        "fx = x^2 + ZOBall; ft = ZOBall - t; fc = 2*al;")
    with pytest.raises(ParseError, match=message):
        kidym.parse(text)


# ------------------------------------------------------------------ balls on spheres
def _system(eq, engine: str):
    if engine == "numpy":
        return NumpySystem.build(eq)
    from kidym.simulation.compiled import CompiledSystem
    return CompiledSystem.build(eq)


#: seed 000's ball in a spherical bowl (examples/ball/ball.kdm: bowl radius R, centre
#: (0, 0, R), ball radius r), its rolling generated: inside the sphere, or (`BOWL_F`)
#: on the implicit surface of its centre, positive on the ball's side.
BOWL = """
R = 3; r = 0.2; m = 1; J = 0.4*m*r^2;
Куля | Sx(x), Sy(y), Sz(z), Q(l0, l1, l2, l3) | m(m), Jx(J), Jy(J), Jz(J);
КАЧЕНИЕ := Куля(куля(r), сфера_внутри(R, 0, 0, R));
ГРАВИТАЦИЯ := 0, 0, -g;
НАЧАЛЬНЫЕ УСЛОВИЯ := x(1.5), z(0.5), l0(1);
СВОБОДНЫЕ := z;  # a guess: the contact gives z #
"""
BOWL_F = BOWL.replace("сфера_внутри(R, 0, 0, R)", "поверхность(f)") + (
    "f = (R - r)^2 - XOКуля^2 - YOКуля^2 - (ZOКуля - R)^2;")


def _bowl_states(ex, pe, n: int, seed: int):
    """Random states of examples/ball (xC, yC, Λ, ω fixed-frame) and the generated
    model's state built from the example's own formulas: zC by (20), ẋC, ẏC by (22)
    (the example's right-hand side), żC their rate by (20)."""
    R, r = 3.0, 0.2
    rng = np.random.default_rng(seed)
    for _ in range(n):
        rho, th = rng.uniform(0.0, 2.2), rng.uniform(0.0, 2 * np.pi)
        xC, yC = rho * np.cos(th), rho * np.sin(th)
        lam = rng.normal(size=4)
        lam /= np.linalg.norm(lam)
        w = rng.uniform(-3, 3, 3)
        ye = np.array([xC, yC, *lam, *w])
        de = ex.rhs(0.0, ye, pe)
        root = np.sqrt((R - r) ** 2 - xC ** 2 - yC ** 2)
        zd = (xC * de[0] + yC * de[1]) / root
        yg = np.array([xC, yC, R - root, *lam, de[0], de[1], zd, *w])
        yield ye, de, yg


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("text", [BOWL, BOWL_F], ids=["sphere_inside", "surface"])
def test_the_generated_ball_in_a_bowl_has_seed_000s_equations(text: str, engine: str,
                                                              cache) -> None:
    """examples/ball/ball.kdm writes the ball in the bowl with pseudo-velocities and the
    explicit rolling formulas (20), (22); the ball with coordinates and generated
    rolling (inside the sphere, or on the implicit surface of its centre) gives the same
    ω̇ and Λ̇ at random consistent states, to 1e-12 relative."""
    gen = _system(kidym.derive(kidym.parse(text)), engine)
    ex = NumpySystem.build(kidym.derive(kidym.load(ROOT / "examples" / "ball" / "ball.kdm")))
    assert gen.state_names[7:] == ("x't", "y't", "z't", "ωXКуля", "ωYКуля", "ωZКуля")
    assert ex.state_names[2:] == ("λ0", "λ1", "λ2", "λ3", "ωXКуля", "ωYКуля", "ωZКуля")
    pg, pe = gen.parameter_vector(), ex.parameter_vector()
    assert list(pg) == list(pe)                       # g, R, r, m
    for _ye, de, yg in _bowl_states(ex, pe, 6, seed=7):
        _M, _F, block = gen.constraint_block(0.0, yg, pg)
        assert np.abs(block.phi).max() < 1e-14 and np.abs(block.c).max() < 1e-14
        dg = gen.rhs(0.0, yg, pg)
        for got, want in ((dg[10:13], de[6:9]), (dg[3:7], de[2:6])):   # ω̇, Λ̇
            assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max(), (got, want)


#: A ball on the plane z = 0 written by hand as examples/ball writes the bowl: the
#: centre at height R in the record, fixed-frame angular velocity components as
#: pseudo-velocities, rolling solved into ẋ = R ω_y, ẏ = −R ω_x.
BALL_BY_HAND = """
m = 1; R = 0.1; g = 9.81; al = 0.3; W = 2;
Ball | Sx(x), Sy(y), Sz(R), Q(l0, l1, l2, l3) | m(m), Jx(2/5*m*R^2), Jy(2/5*m*R^2), Jz(2/5*m*R^2);
ПСЕВДОСКОРОСТИ := ωXBall, ωYBall, ωZBall;
x't = R*ωYBall;
y't = -R*ωXBall;
ГРАВИТАЦИЯ := g*sin(al), 0, -g*cos(al);
Pm.ωZBall = 0.01*sin(W*t);
НАЧАЛЬНЫЕ УСЛОВИЯ := l0(1);
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_the_generated_ball_on_a_plane_has_the_hand_written_equations(engine: str,
                                                                      cache) -> None:
    """The ball of `BALL` (generated rolling, a time-dependent spin moment) against
    the same ball with the rolling written by hand: ω̇, Λ̇ at random states and times
    to 1e-12 relative."""
    gen = _system(kidym.derive(kidym.parse(BALL)), engine)
    ex = NumpySystem.build(kidym.derive(kidym.parse(BALL_BY_HAND)))
    assert ex.state_names == ("x", "y", "l0", "l1", "l2", "l3", "ωXBall", "ωYBall", "ωZBall")
    pg, pe = gen.parameter_vector(), ex.parameter_vector()
    rng = np.random.default_rng(11)
    for _ in range(6):
        t = rng.uniform(0, 3)
        x, y = rng.uniform(-1, 1, 2)
        lam = rng.normal(size=4)
        lam /= np.linalg.norm(lam)
        w = rng.uniform(-5, 5, 3)
        ye = np.array([x, y, *lam, *w])
        de = ex.rhs(t, ye, pe)
        yg = np.array([x, y, 0.1, *lam, de[0], de[1], 0.0, *w])
        dg = gen.rhs(t, yg, pg)
        for got, want in ((dg[10:13], de[6:9]), (dg[3:7], de[2:6])):
            assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max(), (got, want)


def _crossings(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Times where ``x`` changes sign, by cubic interpolation over 4 samples."""
    out = []
    for k in np.nonzero(np.sign(x[1:]) != np.sign(x[:-1]))[0]:
        i = min(max(k - 1, 0), len(t) - 4)
        c = np.polyfit(t[i:i + 4] - t[k], x[i:i + 4], 3)
        roots = [z.real for z in np.roots(c) if abs(z.imag) < 1e-12
                 and -1e-12 <= z.real <= t[k + 1] - t[k] + 1e-12]
        out.append(t[k] + roots[0])
    return np.array(out)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_ball_at_the_bottom_of_a_sphere_swings_with_the_closed_form_period(
        engine: str, cache) -> None:
    """Closed form: small rolling oscillations of a uniform ball of radius r at the
    bottom of a sphere of radius R: T = 2π √(7 (R − r) / (5 g)); likewise for a ball
    whose centre moves on the paraboloid z = k ρ²/2 (curvature k = 1/(R − r)), given as
    an implicit surface."""
    R, r, g = 3.0, 0.2, 9.8062
    period = 2 * np.pi * np.sqrt(7 * (R - r) / (5 * g))
    para = BOWL.replace("сфера_внутри(R, 0, 0, R)", "поверхность(f)") + (
        "f = ZOКуля - r - (XOКуля^2 + YOКуля^2)/(2*(R - r));")
    for text in (BOWL, para):
        model = kidym.parse(text)
        res = kidym.simulate(model, engine=engine, t_end=1.3 * period,
                             initial={"x": 0.003, "y": 0.0, "z": 0.2},
                             t_eval=np.linspace(0, 1.3 * period, 131))
        zeros = _crossings(res.t, res["x"])      # at T/4, 3T/4, 5T/4
        assert len(zeros) == 3
        # amplitude 0.003/2.8: the period's nonlinear shift ~ θ²/16 ≈ 7e-8
        assert (zeros[2] - zeros[0]) == pytest.approx(period, rel=1e-6)
        assert zeros[0] == pytest.approx(period / 4, rel=1e-6)
        assert np.abs(res["y"]).max() < 1e-12


#: A ball on top of a sphere: rolling starts from rest slightly off the top.
ON_TOP = """
m = 2; r = 0.2; R0 = 1; g = 9.81;
Ball | Sx(x), Sy(y), Sz(z), Q(l0, l1, l2, l3) | m(m), Jx(2/5*m*r^2), Jy(2/5*m*r^2), Jz(2/5*m*r^2);
КАЧЕНИЕ := Ball(шар(r), sphere_outside(R0, 0, 0, -R0));
ГРАВИТАЦИЯ := 0, 0, -g;
НАЧАЛЬНЫЕ УСЛОВИЯ := x(0.12), z(0.2), l0(1);
СВОБОДНЫЕ := z;  # a guess: the contact gives z #
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_ball_on_a_sphere_leaves_it_where_the_normal_force_vanishes(engine: str,
                                                                      cache) -> None:
    """Closed form for a uniform ball rolling on the outside of a sphere, its centre at
    angle θ from the top on the circle of radius ρ = R0 + r: the normal force
    N = m g cos θ − m ρ θ̇² and ρ θ̈ = (5/7) g sin θ; started from rest at θ0 the energy
    gives ρ θ̇² = (10/7) g (cos θ0 − cos θ), so N = 0 (the ball leaves) at
    cos θ = (10/17) cos θ0."""
    m, r, R0, g = 2.0, 0.2, 1.0, 9.81
    rho = R0 + r
    # to t = 1.4 (θ about 81°): the ball leaves at about t = 1.22 and reaches the
    # equator, where the rolling rows lose rank (an error, not a motion), at about 1.45
    res = kidym.simulate(kidym.parse(ON_TOP), engine=engine, t_end=1.4,
                         t_eval=np.linspace(0, 1.4, 281))
    # the bounds: the run's default tolerance (rtol 1e-9) relative to each quantity's
    # scale, times a margin of 50 for the global error the local one accumulates over
    # the run and for the processor's rounding (measured: 2.6 rtol on one processor,
    # below 1 on another — the step sequence differs in the last digits)
    bound = 50 * 1e-9
    x, z = res["x"], res["z"] + R0
    theta = np.arctan2(x, z)
    th0 = theta[0]
    assert np.hypot(x, z).max() - rho < bound * rho
    # at every output: the normal force and, from x't, θ̇ (the motion stays in xz)
    thdot = (res["x't"] * z - res["z't"] * x) / rho ** 2
    normal = m * g * np.cos(theta) - m * rho * thdot ** 2
    assert np.abs(res["λrollZBall"] - normal).max() < bound * m * g
    # the energy identity ρ θ̇² = (10/7) g (cos θ0 − cos θ), on the scale (10/7) g
    energy = 10 / 7 * g * (np.cos(th0) - np.cos(theta))
    assert np.abs(rho * thdot ** 2 - energy).max() < bound * 10 / 7 * g
    # the normal force changes sign once: there the ball leaves the sphere
    leave = _crossings(res.t, res["λrollZBall"])
    assert len(leave) == 1
    k = np.searchsorted(res.t, leave[0]) - 2
    th_leave = np.polyval(np.polyfit(res.t[k:k + 4] - leave[0], theta[k:k + 4], 3), 0.0)
    assert np.cos(th_leave) == pytest.approx(10 / 17 * np.cos(th0), abs=1e-6)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_sphere_moving_uniformly_carries_the_ball_along(engine: str, cache) -> None:
    """A time-dependent model: the bowl's centre moves at constant velocity V. By
    Galilean invariance the motion relative to it is that in the fixed bowl (no slip is
    relative to the moving surface: the ball starts at the bowl's velocity plus its
    rolling), so x(t) − V t equals the fixed bowl's x(t)."""
    V = 0.7
    moving = BOWL.replace("сфера_внутри(R, 0, 0, R)", "sphere_inside(R, V*t, 0, R)") + (
        f"V = {V};")
    start = {"x": 0.8, "y": 0.3, "z": 0.2, "ωXКуля": 1.0, "ωYКуля": -0.5, "ωZКуля": 2.0}
    t_eval = np.linspace(0, 2, 201)
    fixed = kidym.simulate(kidym.parse(BOWL), engine=engine, t_end=2, initial=start,
                           t_eval=t_eval)
    mov = kidym.simulate(kidym.parse(moving), engine=engine, t_end=2, initial=start,
                         t_eval=t_eval)
    assert mov.stats["initial_adjusted"]["x't"][1] == pytest.approx(
        fixed.stats["initial_adjusted"]["x't"][1] + V, abs=1e-12)
    assert np.abs(mov["x"] - V * mov.t - fixed["x"]).max() < 1e-7
    assert np.abs(mov["y"] - fixed["y"]).max() < 1e-7
    assert np.abs(mov["z"] - fixed["z"]).max() < 1e-7
    assert np.abs(mov["λrollZКуля"] - fixed["λrollZКуля"]).max() < 1e-6


def test_a_ball_reaching_a_spheres_equator_is_a_clear_runtime_error() -> None:
    """The no-slip rows are the x and y components of the tangential slip; where the
    normal turns horizontal (the ball round the sphere's equator, held by the bilateral
    contact) they lose rank: the run stops there, naming the time and the cause."""
    from kidym.errors import SimulationError
    with pytest.raises(SimulationError, match=r"(?s)lost rank.*t = 1\.44.*normal is horizontal"):
        kidym.simulate(kidym.parse(ON_TOP), t_end=3, t_eval=np.linspace(0, 3, 61),
                       engine="numpy")   # (the NumPy engine's wording)


def test_the_start_puts_the_ball_on_its_surface_without_rolling_it_there() -> None:
    """Given x, y, the orientation and ω, the consistent start moves only the centre's
    height onto the bowl (the contact condition; the no-slip rows, velocity constraints,
    must not hold that move), then solves the centre's velocity from no slip:
    zC = R − √((R − r)² − x²) and ẋ = r/(R − r)·ω_y (R − zC) by seed 000's (20), (22)."""
    from kidym.simulation.constrained import consistent_initial
    sys_ = NumpySystem.build(kidym.derive(kidym.parse(BOWL)))
    y0 = np.zeros(len(sys_.state_names))
    start = {"x": 1.5, "l0": 1.0, "ωYКуля": 2.0}
    for k, v in start.items():
        y0[sys_.state_names.index(k)] = v
    y, changed = consistent_initial(sys_, 0.0, y0, sys_.parameter_vector(),
                                    set(start), 1e-13)
    assert set(changed) == {"z", "x't", "z't"}
    R, r = 3.0, 0.2
    z = R - np.sqrt((R - r) ** 2 - 1.5 ** 2)
    got = dict(zip(sys_.state_names, y))
    assert got["z"] == pytest.approx(z, abs=1e-13)
    assert got["x't"] == pytest.approx(r / (R - r) * 2.0 * (R - z), rel=1e-13)
