"""Plots (PNG and SVG) and the body positions they and the animation use."""

import xml.etree.ElementTree as ET

import matplotlib.image
import numpy as np
import pytest

import kidym
from kidym.report.plots import _time_plot, event_times, plot_run, projection_planes
from kidym.report.poses import body_poses, shape_of
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES


def test_centres_of_mass_follow_closed_form():
    """Rod centres of the double pendulum: l1/2·(cos φ1, sin φ1) and l1·e1 + l2/2·e12."""
    model = kidym.parse(DOUBLE_PENDULUM)
    r = kidym.simulate(model, t_end=1, n_points=11, initial={"phi1": 0.4, "phi2": -0.3})
    P = body_poses(model, r)
    p1, p2 = r["phi1"], r["phi2"]
    l1, l2 = 1.1, 0.9
    np.testing.assert_allclose(P.centre[0, :, 0], l1 / 2 * np.cos(p1), atol=1e-12)
    np.testing.assert_allclose(P.centre[0, :, 1], l1 / 2 * np.sin(p1), atol=1e-12)
    np.testing.assert_allclose(P.centre[1, :, 0],
                               l1 * np.cos(p1) + l2 / 2 * np.cos(p1 + p2), atol=1e-12)
    np.testing.assert_allclose(P.origin[1, :, 1], l1 * np.sin(p1), atol=1e-12)
    # S of rod 2 is the turn by φ1 + φ2 about z
    np.testing.assert_allclose(P.rotation[1, :, 0, 0], np.cos(p1 + p2), atol=1e-12)
    np.testing.assert_allclose(P.rotation[1, :, 1, 0], np.sin(p1 + p2), atol=1e-12)
    assert P.up == 1  # gravity along -y


def test_shapes_match_inertia_of_uniform_solids():
    m = kidym.parse("m = 2; r = 0.3; a = 0.2; b = 0.4; c = 0.6;"
                    "Ball | Sx(x) | m, 0.4*m*r^2, 0.4*m*r^2, 0.4*m*r^2;"
                    "Brick | Sy(y) | m, m*(b^2+c^2)/12, m*(a^2+c^2)/12, m*(a^2+b^2)/12;")
    vals = m.parameter_values
    ball = shape_of(m.bodies[0], m, vals, 1.0)
    brick = shape_of(m.bodies[1], m, vals, 1.0)
    assert ball.kind == "sphere" and ball.size[0] == pytest.approx(0.6)
    assert brick.kind == "box" and brick.size == pytest.approx((0.2, 0.4, 0.6))


def test_projection_planes_of_seed_fig3():
    # z up (seed 000, Fig. 3): horizontal x–y, sagittal x–z, frontal y–z
    assert projection_planes(2) == [("horizontal", 0, 1), ("sagittal", 0, 2),
                                    ("frontal", 1, 2)]


def test_plot_run_writes_png_and_svg_for_model_and_cli_plots(tmp_path):
    model = kidym.load(EXAMPLES / "wing_nut" / "wing_nut.kdm")
    r = kidym.simulate(model, t_end=2, n_points=50)
    from kidym.report.plots import parse_plot_option

    files = plot_run(r, model, tmp_path, requests=[parse_plot_option("ωYNut(ωXNut)")],
                     poses=body_poses(model, r))
    names = {f.name for f in files}
    for stem in ("coordinates", "speeds", "outputs", "phase", "trajectories", "energy",
                 "plot1_ωXNut", "plot4_ωYNut_ωXNut"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names
    for f in files:
        if f.suffix == ".png":
            assert matplotlib.image.imread(f).shape[0] > 100
        else:
            assert ET.parse(f).getroot().tag.endswith("svg")


def test_unknown_plot_quantity_is_named(tmp_path):
    model = kidym.parse(DOUBLE_PENDULUM)
    r = kidym.simulate(model, t_end=0.1, n_points=3)
    from kidym.report.plots import parse_plot_option

    with pytest.raises(KeyError, match="no quantity `psi`"):
        plot_run(r, model, tmp_path, requests=[parse_plot_option("psi")])


def test_events_are_marked_and_units_labelled():
    model = kidym.parse("m = 1, kg; L = 2, m; Rod | Rz(phi) | Sx(L/2), m, 0, 1, 1;"
                        "GRAVITY := 0, -9.81, 0;")
    r = kidym.simulate(model, t_end=1, n_points=11)
    r.stats["events"] = {"contact": [0.25, 0.5]}
    assert event_times(r) == {"contact": [0.25, 0.5]}
    fig = _time_plot(r, model, ["phi"], "phi")
    xs = sorted(line.get_xdata()[0] for line in fig.axes[0].lines[1:])
    assert xs == [0.25, 0.5]
    from kidym.report.plots import label

    assert label("L", model) == "L, m"
