"""The 3-D viewer in headless Chromium: screenshots of the rolling disc, the ball in its
bowl, the biped and a mode shape, measured against geometry computed here from closed
forms (a uniform disc's diameter and thickness, a ball's radius, the projection of a
turned cylinder), never against images the viewer drew before.

``KIDYM_SCREENSHOTS=DIR`` keeps a copy of every screenshot (tests/report/browser.py).
"""

import math

import numpy as np
import pytest
from matplotlib.colors import hex2color, rgb_to_hsv

from kidym.cli import main
from kidym.report.poses import POINT, THIN
from tests.fixtures import EXAMPLES
from tests.report.browser import (
    dump_dom,
    errors,
    extent,
    not_blank,
    requires_chromium,
    root_attributes,
    screenshot,
    silhouette,
)

pytestmark = [requires_chromium, pytest.mark.slow]

SIZE = (1000, 700)
#: the bodies alone, the view filling the window (no bar): the canvas is SIZE
ALONE = "hide=frames,trails,surfaces,grid,controls"
CANVAS = f"{SIZE[0]}x{SIZE[1]}"


def _attrs(page, fragment=""):
    attrs = root_attributes(dump_dom(page, fragment=fragment, size=SIZE))
    assert errors(attrs) == []
    assert attrs["data-renderer"] == "webgl"
    return attrs


def _projected(axis: np.ndarray, d: float, length: float, u: np.ndarray) -> float:
    """Extent along the unit screen direction ``u`` of a cylinder of diameter ``d`` and
    length ``length`` about the unit ``axis``, seen in parallel projection:
    ``length |a·u| + d √(1 − (a·u)²)``."""
    c = abs(float(axis @ u))
    return length * c + d * math.sqrt(max(0.0, 1 - c * c))


@pytest.fixture(scope="module")
def disc(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("disc")
    out = tmp / "out"
    assert main(["run", str(EXAMPLES / "rolling_disc" / "rolling_disc.kdm"), "--t-end", "1",
                 "--points", "11", "--out", str(out), "--animate", "--no-plots", "-q"]) == 0
    return out / "animation.html", tmp


@pytest.mark.parametrize("side", ["+x", "+y"])
def test_rolling_disc_silhouette_is_its_diameter_by_thickness(disc, side):
    """Seen edge-on from +x the disc (r = 0.3, leaning θ = 0.1 about x, heading ψ = 0) is
    a thin upright bar; from +y, along its axis, nearly round. Width and height in pixels
    are the closed-form projections of a cylinder d = 2r, thickness THIN·d."""
    page, tmp = disc
    span = 0.8                                                # metres from top to bottom
    frag = f"view={side}&ortho=1&fit=Disc&span={span}&frame=0&{ALONE}"
    attrs = _attrs(page, frag)
    assert attrs["data-shapes"] == "thin disc" and attrs["data-layers"] == ""
    img = screenshot(page, tmp / f"disc{side[1]}.png", SIZE, fragment=frag)
    w, h = extent(silhouette(img, CANVAS))
    scale = SIZE[1] / span                                    # pixels per metre
    theta, psi = 0.1, 0.0                                     # the model's initial values
    axis = np.array([-math.sin(psi) * math.cos(theta), math.cos(psi) * math.cos(theta),
                     math.sin(theta)])                        # body y: Rz(ψ) Rx(θ) e_y
    d = 0.6
    right = np.array([0.0, 1.0, 0.0]) if side == "+x" else np.array([-1.0, 0.0, 0.0])
    up = np.array([0.0, 0.0, 1.0])
    assert w == pytest.approx(scale * _projected(axis, d, THIN * d, right), abs=3)
    assert h == pytest.approx(scale * _projected(axis, d, THIN * d, up), abs=3)
    if side == "+x":
        assert h / w > 6                                       # a disc, not a box or ball


def test_rolling_disc_on_its_plane(disc):
    page, tmp = disc
    attrs = _attrs(page)
    assert attrs["data-surfaces"] == "1" and "surfaces" in attrs["data-layers"]
    shown = silhouette(screenshot(page, tmp / "disc.png", SIZE), attrs["data-canvas"])
    bare = silhouette(screenshot(page, tmp / "disc-bare.png", SIZE,
                                 fragment="hide=surfaces,grid"), attrs["data-canvas"])
    assert shown.mean() > 0.25 > 0.05 > bare.mean()          # the floor fills the view


@pytest.fixture(scope="module")
def ball(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ball")
    out = tmp / "out"
    assert main(["run", str(EXAMPLES / "ball" / "ball.kdm"), "--t-end", "4", "--points",
                 "41", "--out", str(out), "--animate", "--no-plots", "-q"]) == 0
    return out / "animation.html", tmp


def test_ball_is_a_sphere_of_its_radius(ball):
    """From above, the ball (J = 0.4 m r², r = 0.2) is a disc of diameter 2r on screen."""
    page, tmp = ball
    span = 0.6
    frag = f"view=+z&ortho=1&fit=Куля&span={span}&{ALONE}"
    attrs = _attrs(page, frag)
    assert attrs["data-shapes"] == "sphere"
    mask = silhouette(screenshot(page, tmp / "ball-top.png", SIZE, fragment=frag), CANVAS)
    w, h = extent(mask)
    scale = SIZE[1] / span
    assert w == pytest.approx(0.4 * scale, abs=3) and h == pytest.approx(0.4 * scale, abs=3)
    assert mask.sum() / (w * h) == pytest.approx(math.pi / 4, rel=0.03)   # round


def _hue_pixels(img: np.ndarray, color: str, saturation: float = 0.45) -> int:
    hsv = rgb_to_hsv(img)
    h = rgb_to_hsv(np.array(hex2color(color)))[0]
    dh = np.minimum(abs(hsv[..., 0] - h), 1 - abs(hsv[..., 0] - h))
    return int(((dh < 0.03) & (hsv[..., 1] > saturation) & (hsv[..., 2] > 0.25)).sum())


def test_ball_in_its_bowl(ball):
    page, tmp = ball
    attrs = _attrs(page)
    assert attrs["data-surfaces"] == "1" and attrs["data-visible"] == "1"
    img = screenshot(page, tmp / "ball.png", SIZE)
    bowl = silhouette(img, attrs["data-canvas"])
    bare = silhouette(screenshot(page, tmp / "ball-bare.png", SIZE,
                                 fragment="hide=surfaces,grid,frames,trails"),
                      attrs["data-canvas"])
    assert bowl.mean() > 0.15 and bare.mean() < 0.05 and bare.sum() > 200
    assert _hue_pixels(img, "#1f77b4") > 200                 # the ball itself


def test_point_mass_is_a_visible_ball_above_its_table(tmp_path):
    """The bouncing ball (m, 0, 0, 0: a point mass) dropped from H = 1 onto the table
    z = 0: the model's size is the drop, 1 m, so the ball is drawn 0.05 m across."""
    out = tmp_path / "out"
    assert main(["run", str(EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm"), "--t-end", "1",
                 "--points", "21", "--out", str(out), "--animate", "--no-plots", "-q"]) == 0
    page = out / "animation.html"
    span = 0.2
    frag = f"view=+x&ortho=1&fit=Мяч&span={span}&{ALONE}"
    attrs = _attrs(page, frag)
    assert attrs["data-shapes"] == "point mass" and attrs["data-surfaces"] == "1"
    mask = silhouette(screenshot(page, tmp_path / "point.png", SIZE, fragment=frag), CANVAS)
    w, h = extent(mask)
    size = 1.0                                   # z from H = 1 down to the table at 0
    assert w == pytest.approx(POINT * size * SIZE[1] / span, abs=3)
    assert h == pytest.approx(w, abs=2)
    shown = silhouette(screenshot(page, tmp_path / "bouncing.png", SIZE), CANVAS)
    assert shown.mean() > 0.2                    # the table under it


def test_biped_twelve_solids_in_view(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(EXAMPLES / "biped" / "biped.kdm"), "--t-end", "0.2",
                 "--points", "11", "--out", str(out), "--animate", "--no-plots", "-q"]) == 0
    page = out / "animation.html"
    attrs = _attrs(page)
    assert attrs["data-bodies"] == "12" and attrs["data-visible"] == "12"
    rules = attrs["data-shapes"].split(",")
    assert rules.count("cylinder") >= 2 and "box" in rules and "sphere" in rules
    img = screenshot(page, tmp_path / "biped.png", SIZE)
    assert not_blank(img)
    from kidym.report.poses import _PALETTE20

    seen = [c for c in _PALETTE20[::2] if _hue_pixels(img, c) > 30]
    assert len(seen) >= 4, seen


def test_mode_shape_page_swings_both_ways(tmp_path):
    """Half a period apart, mode 1 of the double pendulum is its own mirror image about
    the vertical through the pivot (x → −x: φ1 + π/2 and φ2 change sign)."""
    model = EXAMPLES / "double_pendulum" / "double_pendulum_modes.kdm"
    assert main(["modes", str(model), "--animate", "1", "--amplitude", "0.5",
                 "--out", str(tmp_path / "m")]) == 0
    page = tmp_path / "m" / "mode1.html"
    masks = []
    for k in (0, 30):
        frag = f"view=+z&ortho=1&frame={k}&{ALONE}"
        attrs = _attrs(page, frag)
        assert attrs["data-frames"] == "61" and attrs["data-frame"] == str(k)
        img = screenshot(page, tmp_path / f"mode1-{k}.png", SIZE, fragment=frag)
        masks.append(silhouette(img, CANVAS))
    a, b = masks
    w = a.shape[1]
    cols = np.flatnonzero(a.any(axis=0))
    assert cols.mean() < w / 2 - 20 or cols.mean() > w / 2 + 20   # it swings off centre
    mirror = b[:, ::-1]
    overlap = (a & mirror).sum() / (a | mirror).sum()
    assert overlap > 0.8
    assert (a & b).sum() / (a | b).sum() < 0.5                   # and the other way
