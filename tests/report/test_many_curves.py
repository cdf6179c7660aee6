"""Plots of a model of many coordinates (issue 28: the 60-link chain's plots took
seconds each): a panel of more than ``LEGEND_MAX`` curves has a colour bar naming a few
of them instead of a legend, and at most ``PHASE_MAX`` phase portraits are drawn, the
first and last coordinates among them. Checked on independent oscillators (body ``k``
at ``x_k``, a closed-form motion) with the text-overlap measure of the example plots.
"""

from __future__ import annotations

import numpy as np

import kidym
from kidym.display import math_name
from kidym.report.plots import LEGEND_MAX, PHASE_MAX, figures
from kidym.report.poses import body_poses
from tests.report.text_overlap import overlapping, unlabelled

N = LEGEND_MAX + 4


def _sliders() -> kidym.Model:
    bodies = " ".join(f"B{k} | Sx(x{k}) | m, 0, 0, 0; Pf.x{k} = -{k}*x{k};"
                      for k in range(1, N + 1))
    start = ", ".join(f"x{k}(1)" for k in range(1, N + 1))
    return kidym.parse(f"m = 1; {bodies} INITIAL := t(0), {start};")


def test_many_curves_get_a_colour_bar_and_a_dozen_phase_portraits():
    model = _sliders()
    r = kidym.simulate(model, t_end=1.0, n_points=21, engine="numpy")
    for k in (1, N):   # x_k = cos(√k t)
        np.testing.assert_allclose(r[f"x{k}"], np.cos(np.sqrt(k) * r.t), atol=1e-7)
    poses = body_poses(model, r)
    np.testing.assert_array_equal(poses.centre[N - 1, :, 0], r[f"x{N}"])
    figs = dict(figures(r, model, poses=poses))
    for stem, names in (("coordinates", [f"x{k}" for k in range(1, N + 1)]),
                        ("speeds", [f"x{k}'t" for k in range(1, N + 1)])):
        fig = figs[stem]
        panel, bar = fig.axes
        assert panel.get_legend() is None
        assert [line.get_gid() for line in panel.get_lines()] == names
        labels = [t.get_text() for t in bar.get_yticklabels()]
        assert labels[0] == math_name(names[0])
        assert labels[-1] == math_name(names[-1])
        assert overlapping(fig) == [] and unlabelled(fig) == [], stem
    phase = figs["phase"]
    drawn = [ax.get_lines()[0].get_gid() for ax in phase.axes if ax.get_visible()]
    assert len(drawn) == PHASE_MAX and drawn[0] == "x1" and drawn[-1] == f"x{N}"
    assert f"({PHASE_MAX} of {N} coordinates)" in phase.get_suptitle()
    assert overlapping(phase) == [] and unlabelled(phase) == []
