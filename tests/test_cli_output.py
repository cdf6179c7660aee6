"""`kidym animate`, `--quiet`/`--verbose` and progress bars."""

import io
import json
import os
import re
import shutil

import pytest

from kidym.cli import main
from kidym.progress import NORMAL, QUIET, VERBOSE, Reporter
from tests.codegen.shared import kidym_cache  # noqa: F401  (the session's library cache)
from tests.fixtures import DOUBLE_PENDULUM


@pytest.fixture
def pendulum(tmp_path):
    path = tmp_path / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    return path


def _viewer_data(page) -> dict:
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script id="kidym-data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def test_animate_from_results_directory_alone(pendulum, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(pendulum), "--t-end", "1", "--points", "21", "--out", str(out),
                 "--no-plots", "-q"]) == 0
    pendulum.unlink()                     # the sidecar holds the model source
    assert main(["animate", str(out)]) == 0
    assert "animation:" in capsys.readouterr().out
    data = _viewer_data(out / "animation.html")
    assert [b["name"] for b in data["bodies"]] == ["Rod1", "Rod2"]
    assert len(data["t"]) == 21
    assert all(len(b["centre"]) == 3 * 21 and len(b["rotation"]) == 9 * 21
               for b in data["bodies"])
    assert data["up"] == [0.0, 1.0, 0.0]  # gravity (0, -g, 0)


def test_animate_without_results_is_a_clear_error(tmp_path, capsys):
    assert main(["animate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no results.csv" in err and "Traceback" not in err


def test_quiet_hides_notes_and_verbose_lists_stages(pendulum, tmp_path, capsys):
    assert main(["run", str(pendulum), "--t-end", "0.1", "--out", str(tmp_path / "a"),
                 "--no-plots", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["run", str(pendulum), "--t-end", "0.1", "--out", str(tmp_path / "b"),
                 "--verbose"]) == 0
    err = capsys.readouterr().err
    assert "no initial value" in err
    assert re.search(r"^plots: \d+\.\d+ s$", err, re.M)


def test_bars_only_on_a_terminal():
    piped = io.StringIO()
    rep = Reporter(NORMAL, stream=piped)
    bar = rep.bar("simulating", 0, 10)
    bar.update(5)
    bar.close()
    assert piped.getvalue() == ""
    tty = io.StringIO()
    rep = Reporter(NORMAL, stream=tty, tty=True)
    bar = rep.bar("simulating", 0, 10)
    bar._last_draw = -1.0
    bar.update(5)
    assert "50.0%" in tty.getvalue() and "ETA" in tty.getvalue()
    quiet = io.StringIO()
    rep = Reporter(QUIET, stream=quiet, tty=True)
    rep.bar("x", 0, 1).update(1)
    rep.note("hello")
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    with Reporter(VERBOSE, stream=loud).stage("derive"):
        pass
    assert loud.getvalue().startswith("derive: ")


def test_run_on_a_terminal_draws_the_simulation_bar(pendulum, tmp_path, monkeypatch):
    import kidym.cli

    screen = io.StringIO()
    monkeypatch.setattr(kidym.cli, "_reporter",
                        lambda args: Reporter(NORMAL, stream=screen, tty=True))
    assert main(["run", str(pendulum), "--t-end", "3", "--out", str(tmp_path / "o"),
                 "--no-plots", "--engine", "numpy"]) == 0
    drawn = screen.getvalue()
    assert "simulating [" in drawn and "ETA" in drawn


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_run_compiled_on_a_terminal_draws_the_compile_bar(pendulum, tmp_path, monkeypatch):
    import kidym.cli

    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path / "cache"))
    screen = io.StringIO()
    monkeypatch.setattr(kidym.cli, "_reporter",
                        lambda args: Reporter(NORMAL, stream=screen, tty=True))
    assert main(["run", str(pendulum), "--t-end", "1", "--engine", "compiled",
                 "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    assert "compiling [" in screen.getvalue()


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_the_printed_run_time_is_the_measured_one(pendulum, tmp_path, capsys):
    """A compiled loop of a few milliseconds printed as "in 0.00 s" (issue 29): the time
    printed is the one recorded in results.json, to the three digits shown."""
    out = tmp_path / "o"
    assert main(["run", str(pendulum), "--t-end", "1", "--engine", "compiled",
                 "--out", str(out), "--no-plots", "--no-integrals", "-q"]) == 0
    printed = re.search(r"evaluations in (\S+) s", capsys.readouterr().out)
    wall = json.loads((out / "results.json").read_text())["stats"]["wall_time_s"]
    assert wall > 0 and float(printed.group(1)) == pytest.approx(wall, rel=5e-3)
