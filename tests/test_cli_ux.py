"""Small things of issue 18: what a user meets at the command line and in reports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kidym
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES

ROOT = Path(__file__).resolve().parents[1]


def _kidym(*args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kidym", *args], cwd=cwd, env=env,
                          text=True, timeout=300, **kw)


def test_closed_stdout_pipe_exits_quietly(tmp_path):
    """`kidym check … | true`: the reader is gone before kidym writes."""
    read, write = os.pipe()
    os.close(read)
    try:
        out = _kidym("check", str(EXAMPLES / "biped" / "biped.kdm"), cwd=tmp_path,
                     stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert out.returncode == 141
    assert out.stderr == ""


def test_unknown_plot_name_fails_before_anything_is_written(tmp_path):
    model = tmp_path / "dp.kdm"
    model.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    out = _kidym("run", str(model), "--out", "o", "--plot", "phi1,nosuch", cwd=tmp_path,
                 capture_output=True)
    assert out.returncode == 1
    assert "--plot phi1,nosuch: no quantity `nosuch`" in out.stderr
    assert not (tmp_path / "o").exists()


def test_plot_format_is_checked_and_used(tmp_path):
    model = tmp_path / "dp.kdm"
    model.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    bad = _kidym("run", str(model), "--out", "o", "--plot-format", "png,gif", cwd=tmp_path,
                 capture_output=True)
    assert bad.returncode == 1 and "--plot-format" in bad.stderr
    assert not (tmp_path / "o").exists()
    ok = _kidym("run", str(model), "--out", "o", "--t-end", "0.5", "--points", "11",
                "--plot-format", "pdf", "--report", cwd=tmp_path, capture_output=True)
    assert ok.returncode == 0, ok.stderr
    files = {p.suffix for p in (tmp_path / "o").iterdir()}
    assert ".pdf" in files and ".png" not in files and ".svg" not in files
    pdf = next((tmp_path / "o").glob("coordinates.pdf")).read_bytes()
    assert pdf.startswith(b"%PDF")
    assert "coordinates.pdf" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")


def test_verbose_times_every_stage(tmp_path):
    model = tmp_path / "dp.kdm"
    model.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    out = _kidym("run", str(model), "--out", "o", "--t-end", "0.5", "--points", "11",
                 "--no-plots", "-v", cwd=tmp_path, capture_output=True)
    assert out.returncode == 0, out.stderr
    stages = [line.split(":")[0] for line in out.stderr.splitlines() if line.endswith(" s")]
    assert stages[:3] == ["model", "equations", "simulation"]
    assert "results" in stages


def test_engine_given_a_system_gives_a_short_message():
    from kidym.simulation.simulate import NumpySystem

    model = kidym.parse(DOUBLE_PENDULUM)
    system = NumpySystem.build(kidym.derive(model))
    assert len(repr(system)) > 1000          # what the old message held
    with pytest.raises(ValueError, match=r"got a NumpySystem .*pass it as the first") as exc:
        kidym.simulate(model, engine=system)
    assert len(str(exc.value)) < 300


def test_report_outcome_does_not_repeat_itself():
    from kidym.report.html import run_rows

    result = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=0.1, n_points=3)
    assert dict(run_rows(result))["outcome"] == "reached the end"


def test_ball_report_names_its_weight_element():
    from kidym.report.html import gravity_text

    text = gravity_text(kidym.load(EXAMPLES / "ball" / "ball.kdm"))
    assert "weight as an element" in text and "Pg.zC" in text


@pytest.mark.parametrize("name, shown", [("double_pendulum", r"double\_pendulum"),
                                         ("*a*[b](c)", r"\*a\*\[b\]\(c\)")])
def test_markdown_model_name_is_literal(name, shown):
    from kidym.report.html import markdown_code, markdown_text

    assert markdown_text(name) == shown
    assert markdown_code("a`b") == "``a`b``"
