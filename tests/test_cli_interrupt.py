"""Ctrl-C on the command line (issue 29, item 4): SIGINT to a compiled ``kidym run`` and
to a ``kidym sweep`` ends the process with status 130 within half a second, one line
on standard error and no traceback, the results up to then on disk, whole and marked
partial.

The runs would take about half a minute (a span of 1e6 s of a driven oscillator, about
3e4 model seconds per wall second compiled): without the stop, the bound fails. The
signal is sent once the runs begin (``kidym run --verbose`` prints its last build stage,
``loading: …``, before its run; ``kidym sweep`` its study) and a little more time has
passed.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.compiled]

ROOT = Path(__file__).resolve().parents[1]
DRIVEN = ("m = 1; k = 4; F0 = 1; W = 1;\nB | Sx(x) | m, 0, 0, 0;\nCs.x = k;\n"
          "Pf.x = F0*sin(W*t);\nINITIAL := x(0), x't(0);\nTIME := t(0, 1e6);\n")
#: Wall seconds from SIGINT to the process's end: a functional "it stops" bound (the
#: C loop reads the stop flag at every evaluation), with the results' writing in it.
EXIT_WITHIN_S = 0.5


def _interrupt(args: list[str], cwd: Path, marker: tuple[str, str], after: float = 0.5
               ) -> tuple[int, float, str]:
    """Start ``kidym ARGS``, send SIGINT ``after`` seconds after ``marker`` (stream, line
    start) shows that the runs begin; the exit status, the seconds from the signal to
    the exit, and standard error."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kidym", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
    ready = threading.Event()

    def read(name: str) -> None:
        for line in getattr(proc, name):
            lines[name].append(line)
            if name == marker[0] and line.startswith(marker[1]):
                ready.set()
        ready.set()

    readers = [threading.Thread(target=read, args=(n,), daemon=True) for n in lines]
    for r in readers:
        r.start()
    assert ready.wait(120), "kidym did not start its runs"
    time.sleep(after)
    assert proc.poll() is None, "".join(lines["stderr"])   # still running: long runs
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    took = time.perf_counter() - sent
    for r in readers:
        r.join(5)
    return proc.returncode, took, "".join(lines["stderr"])


def test_sigint_stops_a_compiled_run_and_keeps_its_results(tmp_path):
    model = tmp_path / "driven.kdm"
    model.write_text(DRIVEN, encoding="utf-8")
    out = tmp_path / "out"
    rc, took, err = _interrupt(["run", str(model), "--engine", "compiled", "--points",
                                "100001", "--no-plots", "--out", str(out), "--verbose"],
                               tmp_path, ("stderr", "loading:"))
    assert rc == 130, err
    assert took < EXIT_WITHIN_S, err
    assert "Traceback" not in err
    assert err.count("interrupted") == 1 and "marked partial" in err
    side = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert side["partial"] and side["failure"]["kind"] == "interrupted"
    with (out / "results.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    t_last = float(rows[-1][0])
    assert len(rows) > 2 and 0 < t_last <= side["failure"]["time"] < 1e6


def test_sigint_stops_a_sweep_and_keeps_the_study_so_far(tmp_path):
    xr = pytest.importorskip("xarray")
    model = tmp_path / "driven.kdm"
    model.write_text(DRIVEN, encoding="utf-8")
    out = tmp_path / "sweep"
    rc, took, err = _interrupt(["sweep", str(model), "--vary", "k=4:16:4", "--workers", "2",
                                "--no-plots", "--out", str(out)],
                               tmp_path, ("stdout", "grid of 4 runs"))
    assert rc == 130, err
    assert took < EXIT_WITHIN_S, err
    assert "Traceback" not in err and "marked partial" in err
    with xr.open_dataset(out / "sweep.nc") as ds:
        assert ds.attrs["partial"] == 1
        assert (ds["status"].values == -1).all()
        reasons = [str(r) for r in ds["reason"].values]
    assert any(r.startswith("interrupted (Ctrl-C) at t = ") for r in reasons)
    with (out / "runs.csv").open(encoding="utf-8") as fh:
        assert len(list(csv.reader(fh))) == 1 + 4


def test_sigint_stops_a_sweep_on_dask_and_keeps_the_study_so_far(tmp_path):
    """The same on a Dask cluster of processes (this test's): the tasks running stop their
    runs where they are and return them, the rest are cancelled; 130 within the bound.
    The signal comes 3 s after the study is said, once the workers have read the model
    and begun (the runs take about half a minute each)."""
    xr = pytest.importorskip("xarray")
    distributed = pytest.importorskip("distributed", reason="kidym[sweep] (Dask) missing")
    model = tmp_path / "driven.kdm"
    model.write_text(DRIVEN, encoding="utf-8")
    out = tmp_path / "sweep"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        rc, took, err = _interrupt(["sweep", str(model), "--vary", "k=4:16:4", "--no-plots",
                                    "--out", str(out), "--scheduler",
                                    cluster.scheduler_address],
                                   tmp_path, ("stdout", "grid of 4 runs"), after=3.0)
        # the workers' runs stopped too: each worker's one thread is free at once for a
        # task of ours (a run left going would hold it for half a minute)
        with distributed.Client(cluster) as client:
            for address in client.scheduler_info()["workers"]:
                assert client.submit(abs, -1, workers=[address], pure=False).result(
                    timeout=5) == 1
    assert rc == 130, err
    assert took < EXIT_WITHIN_S, err
    assert "Traceback" not in err and err.count("interrupted") == 1 and "marked partial" in err
    with xr.open_dataset(out / "sweep.nc") as ds:
        assert ds.attrs["partial"] == 1
        assert (ds["status"].values == -1).all()
        reasons = [str(r) for r in ds["reason"].values]
    assert any(r.startswith("interrupted (Ctrl-C) at t = ") for r in reasons), reasons
    assert all(r.startswith(("interrupted (Ctrl-C) at t = ", "not run: the study was "
                             "interrupted")) for r in reasons), reasons
