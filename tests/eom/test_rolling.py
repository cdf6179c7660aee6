"""`КАЧЕНИЕ`: rolling without slipping generated from the contact (ball and disc on a
plane), against closed-form mechanics and today's hand-written rolling disc."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.errors import ParseError
from kidym.simulate.constrained import consistent_initial
from kidym.simulate.simulate import NumpySystem

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
        from kidym.simulate.compiled import CompiledSystem
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
        for k in ("psi't", "theta't", "phi't"):
            assert a[k] == pytest.approx(b[k], rel=1e-10, abs=1e-10), (k, a[k], b[k])


@pytest.mark.parametrize(("item", "message"), [
    ("Bal(шар(R), плоскость(0))", "`Bal` is not a body"),
    ("Ball(куб(R), плоскость(0))", "unknown rolling shape `куб`"),
    ("Ball(шар(R), сфера(1))", "unknown surface `сфера`"),
    ("Ball(диск(R, w), плоскость(0))", "the axis of disc `Ball` is `x`, `y` or `z`"),
    ("Ball(шар(x), плоскость(0))", "radius of `Ball`"),
    ("Ball", "lists `Body"),
])
def test_bad_rolling_items_are_located_errors(item: str, message: str) -> None:
    text = BALL.replace("Ball(шар(R), плоскость(0))", item)
    with pytest.raises(ParseError, match=message):
        kidym.parse(text)
