"""Plots fit for a paper (issue 29): no two texts of a figure overlap (titles, labels,
tick labels, offset texts, legends, measured by matplotlib's renderer), and every panel
has a y label — for the plots of every example model, run briefly."""

from __future__ import annotations

import pytest

import kidym
from kidym.report.plots import figures
from kidym.report.poses import body_poses
from tests.fixtures import EXAMPLES
from tests.report.text_overlap import overlapping, unlabelled

CALCULATIONS = {p: kidym.load(p).calculation for p in sorted(EXAMPLES.glob("*/*.kdm"))}
#: the examples with a time history (statics and free vibrations draw no run plots)
RUNS = [p for p, c in CALCULATIONS.items() if c in (None, "DYNAMICS", "KINETOSTATICS")]
#: the examples of the kinematics calculations, drawn by kidym.calc.plots
KINEMATICS = [p for p, c in CALCULATIONS.items() if c in ("KINEMATICS", "INVERSE_KINEMATICS")]
#: a few that exercise every kind of figure, fast
QUICK = ("double_pendulum", "skier2", "bouncing_ball", "ball")


def check_plots(path) -> None:
    model = kidym.load(path)
    t_end = model.t_start + min(model.t_end - model.t_start, 0.5)
    # a model driven from outside (ВХОДЫ) runs with its inputs held at 0: the plots' text
    # is what is checked here
    r = kidym.simulate(model, t_end=t_end, n_points=51, raise_on_failure=False,
                       inputs={u: (lambda t, s: 0.0) for u in model.inputs})
    figs = figures(r, model, poses=body_poses(model, r))
    assert figs
    for stem, fig in figs:
        assert overlapping(fig) == [], f"{path.name}: {stem}"
        assert unlabelled(fig) == [], f"{path.name}: {stem}"


@pytest.mark.parametrize("path", [p for p in RUNS if p.stem in QUICK], ids=lambda p: p.stem)
def test_no_text_overlaps_in_the_plots_of_these_examples(path):
    check_plots(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in RUNS if p.stem not in QUICK],
                         ids=lambda p: p.stem)
def test_no_text_overlaps_in_the_plots_of_every_example(path):
    check_plots(path)


@pytest.mark.parametrize("path", KINEMATICS, ids=lambda p: p.stem)
def test_no_text_overlaps_in_the_kinematics_plots(path):
    import matplotlib.pyplot as plt

    from kidym.calc.inverse_kinematics import inverse_kinematics
    from kidym.calc.kinematics import kinematics
    from kidym.calc.plots import kinematics_figures

    for model in kidym.lang.load_tasks(path):
        result = (kinematics(model, n_points=51) if model.calculation == "KINEMATICS"
                  else inverse_kinematics(model, n_points=21))
        for name, fig in kinematics_figures(result, model):
            assert overlapping(fig) == [], f"{path.name}: {name}"
            assert unlabelled(fig) == [], f"{path.name}: {name}"
    plt.close("all")


def test_the_checker_sees_an_overlap():
    """The measure itself: two titles drawn on one spot overlap, apart they do not."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.set_ylabel("y")
    fig.suptitle("a title", y=0.5)
    ax.set_title("another", y=0.45)
    assert ("figure text 'a title'", "axes 0 'another'") in overlapping(fig)
    ax.set_title("another", y=1.0)
    assert overlapping(fig) == []
    fig.add_subplot(2, 1, 2)
    assert unlabelled(fig) == ["axes 1"]
