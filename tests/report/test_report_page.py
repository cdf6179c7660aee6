"""`kidym run --report --animate` pages, opened in headless Chromium."""

import re

import numpy as np
import pytest
from matplotlib.colors import hex2color, rgb_to_hsv

from kidym.cli import main
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES
from tests.report.browser import (
    dump_dom,
    errors,
    not_blank,
    requires_chromium,
    root_attributes,
    screenshot,
)

pytestmark = [requires_chromium, pytest.mark.slow]

BALL_LIKE = """
m = 1; r = 0.2; J = 0.4*m*r^2; g = 9.81;
Куля | Sx(xC), Sy(yC), Rz(φ) | m, J, J, J;
ГРАВИТАЦИЯ := 0, 0, -g;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), xC(0), yC(0), φ(0), xC't(1), yC't(0.5), φ't(2);
ВРЕМЯ := t(0, 1);
"""


@pytest.fixture(scope="module")
def pendulum_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("dp")
    model = root / "dp.kdm"
    model.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    out = root / "out"
    assert main(["run", str(model), "--t-end", "2", "--points", "41", "--initial",
                 "phi1=0.8", "--out", str(out), "--report", "--animate", "-q"]) == 0
    return out


def test_report_renders_math_and_plots_without_errors(pendulum_run, tmp_path):
    page = pendulum_run / "report.html"
    source = page.read_text(encoding="utf-8")
    assert "http://" not in source.replace("http://www.w3.org", "")  # nothing to fetch
    attrs = root_attributes(dump_dom(page))
    assert errors(attrs) == []
    n_math = source.count('class="math"')
    assert n_math >= 20                       # kinematic, 2 equations, 20 named quantities …
    assert int(attrs["data-math"]) == n_math  # every formula typeset by KaTeX
    assert attrs["data-math-failed"] == "0"
    assert int(attrs["data-plots"]) >= 5
    assert attrs["data-plots-loaded"] == attrs["data-plots"]
    img = screenshot(page, tmp_path / "report.png")
    assert not_blank(img)


def test_report_markdown_links_the_plots(pendulum_run):
    md = (pendulum_run / "report.md").read_text(encoding="utf-8")
    # CommonMark destinations, in <…> so that a name with spaces stays one link
    pngs = re.findall(r"!\[[^\]]*\]\(<([^>]+)>\)", md)
    assert pngs and len(pngs) == md.count("![")
    for png in pngs:
        assert (pendulum_run / png).is_file()
    assert "$$" in md and "## Initial conditions" in md


def _hue_pixels(img: np.ndarray, color: str) -> int:
    hsv = rgb_to_hsv(img)
    h = rgb_to_hsv(np.array(hex2color(color)))[0]
    dh = np.minimum(abs(hsv[..., 0] - h), 1 - abs(hsv[..., 0] - h))
    return int(((dh < 0.03) & (hsv[..., 1] > 0.45) & (hsv[..., 2] > 0.25)).sum())


def test_animation_shows_both_bodies_and_all_frames(pendulum_run, tmp_path):
    page = pendulum_run / "animation.html"
    attrs = root_attributes(dump_dom(page))
    assert errors(attrs) == []
    assert attrs["data-renderer"] == "webgl"
    assert attrs["data-bodies"] == "2"        # Rod1, Rod2
    assert attrs["data-frames"] == "41"       # --points 41
    assert attrs["data-visible"] == "2"
    img = screenshot(page, tmp_path / "anim.png")
    assert not_blank(img)
    # each rod is drawn in its own colour (palette: blue, orange)
    assert _hue_pixels(img, "#1f77b4") > 100
    assert _hue_pixels(img, "#ff7f0e") > 100


def test_report_with_cyrillic_names_typesets(tmp_path):
    model = tmp_path / "куля.kdm"
    model.write_text(BALL_LIKE, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(model), "--points", "21", "--out", str(out), "--report",
                 "-q"]) == 0
    attrs = root_attributes(dump_dom(out / "report.html"))
    assert errors(attrs) == []
    assert attrs["data-math-failed"] == "0" and int(attrs["data-math"]) > 5


def test_biped_animation_has_twelve_bodies(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(EXAMPLES / "biped" / "biped.kdm"), "--t-end", "0.2",
                 "--points", "11", "--out", str(out), "--animate", "--no-plots", "-q"]) == 0
    page = out / "animation.html"
    attrs = root_attributes(dump_dom(page))
    assert errors(attrs) == []
    assert attrs["data-bodies"] == "12" and attrs["data-frames"] == "11"
    assert attrs["data-visible"] == "12"
    assert not_blank(screenshot(page, tmp_path / "biped.png"))
