"""The plot worker of ``kidym run`` (:mod:`kidym.report.plot_worker`): what it draws is
what the command's process draws; what it cannot draw is drawn there; an error of the
drawing reaches the command. (That the command's process then never imports matplotlib
is in ``tests/test_imports.py``.)"""

from __future__ import annotations

import os

import pytest

import kidym
from kidym.model.model import Plot
from kidym.report import plot_worker
from kidym.report.plot_worker import PlotWorker, draw_plots
from tests.codegen.shared import kidym_cache  # noqa: F401 (the sweep's library)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SOURCE = "m = 1; c = 4; Jm.x = m; Cs.x = c; НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), x(0.5), x't(0);"


@pytest.fixture
def idle(monkeypatch):
    monkeypatch.setattr(plot_worker, "idle_core", lambda: True)


def _run():
    model = kidym.parse(SOURCE, name="spring")
    return model, kidym.simulate(model, t_end=2.0, n_points=101)


def test_the_worker_draws_the_same_files(idle, tmp_path):
    model, result = _run()
    worker = PlotWorker.start(model)
    assert worker is not None
    here = draw_plots(None, result, model, tmp_path / "here", formats=("png", "svg"))
    there = worker.draw(result, model, tmp_path / "there", formats=("png", "svg"))
    assert there is not None and [p.name for p in there] == [p.name for p in here]
    for a, b in zip(here, there):
        if a.suffix == ".png":   # (an SVG names its clip paths at random)
            assert a.read_bytes() == b.read_bytes()
        assert b.is_file()
    worker.close()
    worker.close()   # harmless again


def test_an_error_of_the_drawing_reaches_the_command(idle, tmp_path):
    model, result = _run()
    worker = PlotWorker.start(model)
    with pytest.raises(KeyError, match="nosuch"):
        draw_plots(worker, result, model, tmp_path,
                   requests=[Plot(curves=("nosuch",))])
    assert worker.pid == 0   # ended and waited for


def test_what_the_worker_cannot_take_is_drawn_here(idle, tmp_path):
    model, result = _run()
    result.stats["callback"] = lambda: None   # does not pickle
    worker = PlotWorker.start(model)
    assert worker.draw(result, model, tmp_path) is None and worker.pid == 0
    worker = PlotWorker.start(model)
    assert draw_plots(worker, result, model, tmp_path)   # drawn in this process
    other = kidym.parse(SOURCE, name="spring")   # another model than the worker's
    worker = PlotWorker.start(model)
    assert worker.draw(result, other, tmp_path) is None and worker.pid == 0


def test_a_worker_given_nothing_ends(idle):
    model, _ = _run()
    worker = PlotWorker.start(model)
    pid = worker.pid
    worker.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)


def test_no_worker_on_a_busy_machine(monkeypatch):
    monkeypatch.setattr(plot_worker, "idle_core", lambda: False)
    assert PlotWorker.start(None) is None


def test_a_sweeps_summary_plots_drawn_by_the_worker_are_the_ones_drawn_here(idle, tmp_path):
    # kidym sweep's worker (PlotWorker.call of summary_plots), started before the runs
    from kidym.study.output import summary_plots

    model = kidym.parse(SOURCE, name="spring")
    worker = PlotWorker.start(model)
    study = kidym.sweep(model, vary={"c": [2.0, 4.0, 8.0], "m": [1.0, 2.0]}, t_end=1.0,
                        n_points=5, executor="loop")
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    here = summary_plots(study, "x", "final", tmp_path / "here")
    answer = worker.start_call(summary_plots, study, "x", "final", tmp_path / "there")
    there = answer()
    assert there is not None and [p.name for p in there] == [p.name for p in here]
    assert [p.read_bytes() for p in there] == [p.read_bytes() for p in here]
    assert worker.pid == 0   # ended and waited for
