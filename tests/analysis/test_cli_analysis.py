"""``kidym run`` on statics and free-vibrations models, ``kidym modes``, ``kidym linearize``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from kidym.cli import main

ROOT = Path(__file__).parents[2]

STATICS = """РАСЧЕТ := СТАТИКА;
m = 2; l = 1.5; H = 4; g = 9.81;
Bob | Sx(x), Sy(y) | m(m), Jx(0), Jy(0), Jz(0);
f1 = x^2 + y^2 - l^2;
УРАВНЕНИЯ := f1;
Ph.x = H;
GRAVITY := 0, -g, 0;
INITIAL := t(0), x(0.1), y(-1.4);
"""


def test_run_statics_writes_results(tmp_path, capsys) -> None:
    model = tmp_path / "bob.kdm"
    model.write_text(STATICS, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(model), "--out", str(out), "--engine", "compiled"]) == 0
    text = capsys.readouterr()
    assert "equilibrium found" in text.out and "λf1" in text.out
    assert "no use for the compiled engine" in text.err
    with (out / "results.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["t", "x", "y", "x't", "y't", "λf1"]
    x, y = float(rows[1][1]), float(rows[1][2])
    assert np.arctan2(x, -y) == pytest.approx(np.arctan2(4, 2 * 9.81), rel=1e-12)
    data = json.loads((out / "equilibrium.json").read_text(encoding="utf-8"))
    assert data["stability"] == "stable" and data["success"]


def test_time_history_options_are_refused(tmp_path, capsys) -> None:
    model = tmp_path / "bob.kdm"
    model.write_text(STATICS, encoding="utf-8")
    assert main(["run", str(model), "--out", str(tmp_path / "o"), "--report"]) == 1
    assert "--report apply to time histories; a statics run has none" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_check_names_the_calculation(tmp_path, capsys) -> None:
    model = tmp_path / "bob.kdm"
    model.write_text(STATICS, encoding="utf-8")
    assert main(["check", str(model)]) == 0
    assert "calculation: statics" in capsys.readouterr().out


def test_run_free_vibrations(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["run", str(ROOT / "examples/double_pendulum/double_pendulum_modes.kdm"),
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "free vibrations of double_pendulum_modes" in text
    assert "stability (linear): marginal" in text
    data = json.loads((out / "modes.json").read_text(encoding="utf-8"))
    assert len(data["modes"]) == 2
    with np.load(out / "linearization.npz") as z:
        assert z["A"].shape == (4, 4)
        assert list(z["states"]) == ["phi1", "phi2", "phi1't", "phi2't"]


def test_modes_vary(tmp_path, capsys) -> None:
    out = tmp_path / "disc"
    assert main(["modes", str(ROOT / "examples/rolling_disc/rolling_disc.kdm"),
                 "--state", "theta=0", "--state", "psi't=0", "--set", "g=9.81",
                 "--vary", "phi't=2:5:7", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    b = float(text.split("stability boundaries: phi't = ")[1].split()[0])
    assert b == pytest.approx(np.sqrt(9.81 / 0.9), rel=1e-9)
    assert (out / "continuation.png").exists() and (out / "continuation.csv").exists()
    assert main(["modes", str(ROOT / "examples/rolling_disc/rolling_disc.kdm"),
                 "--vary", "phi't=2:5"]) == 1
    assert "--vary expects NAME=START:STOP:COUNT" in capsys.readouterr().err


def test_linearize_formats(tmp_path, capsys) -> None:
    model = str(ROOT / "examples/double_pendulum/double_pendulum.kdm")
    npz = tmp_path / "a.npz"
    assert main(["linearize", model, "--state", "phi1=-1.5707963267948966",
                 "--state", "phi2=0", "--format", "json", "--npz", str(npz)]) == 0
    data = json.loads(capsys.readouterr().out)
    with np.load(npz) as z:
        np.testing.assert_array_equal(z["A"], np.array(data["A"]))
    assert main(["linearize", model, "--format", "latex"]) == 0
    assert "\\begin{pmatrix}" in capsys.readouterr().out
    assert main(["linearize", model, "--state", "nope=1"]) == 1
    assert "`nope` is not a state" in capsys.readouterr().err
