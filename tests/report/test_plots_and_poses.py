"""Plots (PNG and SVG) and the body positions they and the animation use."""

import xml.etree.ElementTree as ET

import matplotlib.image
import numpy as np
import pytest

import kidym
from kidym.report.plot_worker import parse_plot_option
from kidym.report.plots import (
    _time_plot,
    event_times,
    figures,
    plot_run,
    projection_planes,
)
from kidym.report.poses import body_poses, shape_of
from kidym.simulation.energy import energy_balance
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
    files = plot_run(r, model, tmp_path, requests=[parse_plot_option("ωYNut(ωXNut)")],
                     poses=body_poses(model, r), formats=("png", "svg"))
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
    with pytest.raises(KeyError, match="no quantity `psi`"):
        plot_run(r, model, tmp_path, requests=[parse_plot_option("psi")])


def test_events_are_marked_and_units_labelled():
    model = kidym.parse("m = 1, kg; L = 2, m; Rod | Rz(phi) | Sx(L/2), m, 0, 1, 1;"
                        "GRAVITY := 0, -9.81, 0;")
    r = kidym.simulate(model, t_end=1, n_points=11)
    r.stats["events"] = {"contact": [0.25, 0.5]}
    assert event_times(r) == {"contact": [0.25, 0.5]}
    fig = _time_plot(r, model, ["phi"], "phi")
    assert sorted(event_marks(fig.axes[0])["contact"]) == [0.25, 0.5]
    from kidym.report.plots import label

    assert label("L", model) == "L, m"


# ------------------------------------------------------------------ readable plots (#18)
def event_marks(ax) -> dict[str, list[float]]:
    """The times of the event markers of an axes, by event name."""
    out: dict[str, list[float]] = {}
    for coll in ax.collections:
        gid = coll.get_gid() or ""
        if gid.startswith("event:"):
            out[gid[6:]] = [float(seg[0][0]) for seg in coll.get_segments()]
    return out


def curves(fig) -> dict[str, tuple[int, np.ndarray]]:
    """``{name: (panel index, y data)}`` of the named curves of a figure."""
    return {line.get_gid(): (k, np.asarray(line.get_ydata(), float))
            for k, ax in enumerate(fig.axes) for line in ax.lines if line.get_gid()}


def by_stem(figs) -> dict:
    return dict(figs)


def test_coordinates_speeds_and_quaternion_go_to_their_own_figures():
    """The ball: coordinates xC, yC; its quaternion apart; the pseudo-velocities ω are
    speeds (they used to be drawn with the coordinates)."""
    model = kidym.load(EXAMPLES / "ball" / "ball.kdm")
    r = kidym.simulate(model, t_end=0.5, n_points=21)
    figs = by_stem(figures(r, model))
    assert set(curves(figs["coordinates"])) == {"xC", "yC"}
    assert set(curves(figs["speeds"])) == {"ωXКуля", "ωYКуля", "ωZКуля"}
    quat = curves(figs["quaternion"])
    assert {"λ0", "λ1", "λ2", "λ3"} <= set(quat)
    norm = quat["norm:λ0"][1]
    np.testing.assert_allclose(norm, sum(r[c] ** 2 for c in ("λ0", "λ1", "λ2", "λ3")) - 1)
    # lengths and angles of a mixed model on separate panels, each with its kind
    model = kidym.parse("m = 1; L = 2; Cart | Sx(x) | m, 0, 0, 0;"
                        "Rod~Cart | Rz(phi) | Sx(L/2), m, 0, 1, 1; GRAVITY := 0, -9.81, 0;")
    r = kidym.simulate(model, t_end=0.2, n_points=5)
    fig = by_stem(figures(r, model))["coordinates"]
    panels = curves(fig)
    assert panels["x"][0] != panels["phi"][0]
    assert fig.axes[panels["phi"][0]].get_ylabel() == "phi, rad"   # alone: its name
    speeds = by_stem(figures(r, model))["speeds"]
    assert (speeds.axes[curves(speeds)["phi't"][0]].get_ylabel()
            == r"$\overset{\bullet}{\mathregular{phi}}$, rad/s")


def test_angles_are_unwrapped_and_in_degrees_on_request():
    """The free body's Krylov angles (atan2 of the quaternion) jump by 2π; the plot shows
    numpy.unwrap of them, times 180/π with ``degrees``."""
    model = kidym.load(EXAMPLES / "free_body" / "free_body.kdm")
    r = kidym.simulate(model, t_end=10, n_points=401)
    assert max(np.max(np.abs(np.diff(r[a]))) for a in ("psi", "phi")) > np.pi  # wraps
    for degrees in (False, True):
        figs = by_stem(figures(r, model, degrees=degrees))
        drawn = curves(figs["outputs"])
        for a in ("psi", "theta", "phi"):
            want = np.unwrap(r[a]) * (180 / np.pi if degrees else 1)
            np.testing.assert_allclose(drawn[a][1], want, rtol=1e-12, atol=1e-12)
        (ax,) = {figs["outputs"].axes[drawn[a][0]] for a in ("psi", "theta", "phi")}
        assert ax.get_ylabel() == ("angle, °" if degrees else "angle, rad")
    # a coordinate and its rate: degrees and degrees per second
    model = kidym.parse(DOUBLE_PENDULUM)
    r = kidym.simulate(model, t_end=1, n_points=11, initial={"phi1": 0.4, "phi2": -0.3})
    figs = by_stem(figures(r, model, degrees=True))
    np.testing.assert_allclose(curves(figs["coordinates"])["phi1"][1],
                               r["phi1"] * 180 / np.pi)
    fig = figs["speeds"]
    k, v = curves(fig)["phi2't"]
    np.testing.assert_allclose(v, r["phi2't"] * 180 / np.pi)
    assert fig.axes[k].get_ylabel() == "angular speed, °/s"


def test_event_times_are_marked_on_every_time_axis():
    model = kidym.load(EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm")
    r = kidym.simulate(model, t_end=2)
    times = [float(t) for t in r.stats["events"]["t"]]
    assert len(times) >= 2
    figs = by_stem(figures(r, model))
    for stem in ("coordinates", "speeds", "energy", "plot1_zT"):
        for ax in figs[stem].axes:
            assert event_marks(ax) == {"Удар": pytest.approx(times, abs=0)}, stem


def test_energy_figure_is_the_balance_of_a_non_conservative_run():
    """A damped oscillator: E falls, E(0) + W falls with it, and the balance panel is
    their difference (its maximum is the run's energy_balance)."""
    model = kidym.parse("m = 1; c = 4; k = 0.5; Block | Sx(x) | m, 0, 0, 0;"
                        "Cs.x = c; Dk.x't = k; INITIAL := x(1), x't(0);")
    r = kidym.simulate(model, t_end=4, n_points=201)
    fig = by_stem(figures(r, model))["energy"]
    drawn = curves(fig)
    e = drawn["E"][1]
    np.testing.assert_allclose(e, r["energy"])
    assert e[-1] < 0.5 * e[0]   # it is not conserved
    np.testing.assert_allclose(drawn["E0+W"][1] + drawn["balance"][1], e, atol=1e-12)
    assert np.max(np.abs(drawn["balance"][1])) == pytest.approx(energy_balance(r).max_abs)
    assert np.max(np.abs(drawn["balance"][1])) < 1e-6 * e[0]
    [subtitle] = [t for t in fig.texts if t.get_gid() == "subtitle"]
    assert "energy balance" in fig.get_suptitle() and "work" in subtitle.get_text()


def test_a_legend_of_many_lines_is_outside_the_axes_in_columns():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    model = kidym.load(EXAMPLES / "chain" / "chain10.kdm")
    r = kidym.simulate(model, t_end=0.05, n_points=5)
    fig = by_stem(figures(r, model))["coordinates"]
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert len(legend.get_texts()) == 10
    box, frame = legend.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= frame.x1                         # beside the curves, not over them
    assert box.x1 <= fig.bbox.x1 and box.y0 >= 0      # and inside the picture


def test_units_of_the_model_on_the_axes(tmp_path):
    """With РАЗМЕРНОСТИ the chosen length and time units label lengths, their rates and t."""
    model = kidym.parse("РАЗМЕРНОСТИ := m(кг), l(см), t(с); m = 1, кг; c = 2;"
                        "Block | Sx(x) | m, 0, 0, 0; Cs.x = c; INITIAL := x(1), x't(0);")
    r = kidym.simulate(model, t_end=1, n_points=11)
    figs = by_stem(figures(r, model))
    assert figs["coordinates"].axes[0].get_ylabel() == "x, см"
    assert figs["speeds"].axes[0].get_ylabel() == r"$\dot{\mathregular{x}}$, см/с"
    assert figs["coordinates"].axes[-1].get_xlabel() == "t, с"


def test_figures_drawn_in_two_processes_are_the_ones_drawn_in_one(tmp_path):
    model = kidym.parse(DOUBLE_PENDULUM)
    r = kidym.simulate(model, t_end=1, n_points=21, initial={"phi1": 0.4, "phi2": -0.3})
    poses = body_poses(model, r)
    one = plot_run(r, model, tmp_path / "one", poses=poses, jobs=1)
    two = plot_run(r, model, tmp_path / "two", poses=poses, jobs=2)
    assert [f.name for f in one] == [f.name for f in two]
    assert {f.name for f in one} == {"coordinates.png", "speeds.png", "phase.png",
                                     "trajectories.png", "energy.png"}
    for a, b in zip(one, two):
        assert a.read_bytes() == b.read_bytes(), a.name
