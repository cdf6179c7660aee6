"""kidym's figures leave a Python session's matplotlib backend alone (issue 28).

A Jupyter user's inline backend (or ``MPLBACKEND``) must survive the functions that
write figures to files — the kinematics calculation's plots, a continuation's plot, a
sweep's summary plots: they draw on :class:`matplotlib.figure.Figure` with the Agg
canvas and never call ``matplotlib.use``. Checked in a fresh process whose backend is
matplotlib's ``template`` (a backend no kidym code would choose), against the backend
read back at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.codegen.shared import kidym_cache  # noqa: F401 (the sweep's library)

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from pathlib import Path

import pytest
import matplotlib
import numpy as np
import kidym
from kidym.calc.kinematics import run_kinematics
from kidym.lang import load_tasks
from kidym.study.output import summary_plots

out = Path(sys.argv[1])
[model] = load_tasks(Path("examples/kinematics/point.kdm"))[:1]
assert len(run_kinematics(model, out / "kin", n_points=20)) > 1
disc = kidym.derive(kidym.load("examples/rolling_disc/rolling_disc.kdm"))
c = kidym.continuation(disc, "phi't", np.linspace(2.0, 5.0, 3),
                       state={"theta": 0.0, "psi't": 0.0, "theta't": 0.0})
c.plot(out / "c.png")
osc = kidym.parse("m = 1; k = 2; Slider | Sx(xb) | m, 0, 0, 0; Pf.xb = -k*xb;"
                  "INITIAL := t(0), xb(1);")
study = kidym.sweep(osc, vary={"k": [1.0, 2.0, 3.0]}, t_end=1.0, n_points=5,
                    executor="loop")
(out / "sweep").mkdir()
assert summary_plots(study, "xb", "final", out / "sweep")
print(matplotlib.get_backend())
"""


@pytest.mark.slow
def test_figures_written_to_files_keep_the_sessions_backend(tmp_path):
    env = {**os.environ, "MPLBACKEND": "template",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "template"
