"""Every task of a multi-task dynamics file is checked, derived and run (issue 27,
item 5: ``check``, ``run`` and ``equations`` did task 1 only and said nothing of the
others). The oracle of each task is the same model written as a file of one task."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import kidym
from kidym.cli import main

TASK1 = """m = 1; l = 1; g = 9.81;
Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
GRAVITY := 0, -g, 0;
INITIAL := t(0), phi(-1.2);
TIME := t(0, 1);
"""
TWO_TASKS = TASK1 + "КОНЕЦ;\nl = 2;\nКОНЕЦ;\n"


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "two.kdm"
    p.write_text(TWO_TASKS, encoding="utf-8")
    return p


def test_check_reports_every_task(path, capsys) -> None:
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "model two_1: OK" in out and "model two_2: OK" in out
    assert "l=1" in out and "l=2" in out


def test_equations_print_every_task_and_json_says_why_not(path, capsys) -> None:
    assert main(["equations", str(path)]) == 0
    out = capsys.readouterr().out
    assert "=== task 1 of 2: two_1 ===" in out and "=== task 2 of 2: two_2 ===" in out
    assert main(["equations", str(path), "--format", "json"]) == 1
    assert "holds 2 tasks (two_1, two_2): --format json" in capsys.readouterr().err


def _column(csv_path, name) -> np.ndarray:
    with open(csv_path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return np.array([float(r[name]) for r in rows])


def test_run_runs_every_task_into_a_folder_of_its_own(path, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-plots", "--points", "11"]) == 0
    for name, length in (("two_1", "1"), ("two_2", "2")):
        phi = _column(out / name / "results.csv", "phi")
        one = TASK1.replace("l = 1;", f"l = {length};")
        want = kidym.simulate(kidym.parse(one), n_points=11)["phi"]
        # both runs at the default rtol 1e-9: the same motion within far less than 1e-6
        assert np.max(np.abs(phi - want)) < 1e-6, name
    assert "task 2 of 2: two_2" in capsys.readouterr().out


def test_tasks_of_different_calculations_are_an_error(tmp_path, capsys) -> None:
    p = tmp_path / "mixed.kdm"
    p.write_text(TASK1 + "КОНЕЦ;\nРАСЧЕТ := СТАТИКА;\nКОНЕЦ;\n", encoding="utf-8")
    assert main(["check", str(p)]) == 1
    assert "have different calculations (mixed_1: DYNAMICS, mixed_2: STATICS)" in \
        capsys.readouterr().err
