"""Result files: CSV, NPZ, Parquet and the JSON sidecar, atomic."""

import csv
import hashlib
import html
import importlib.util
import json
import os

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.simulation.result import load_results
from tests.fixtures import DOUBLE_PENDULUM

HAVE_PYARROW = importlib.util.find_spec("pyarrow") is not None


@pytest.fixture
def run_dir(tmp_path):
    path = tmp_path / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    out = tmp_path / "out"
    formats = "csv,npz,parquet" if HAVE_PYARROW else "csv,npz"
    assert main(["run", str(path), "--t-end", "0.5", "--points", "6", "--set", "m2=2",
                 "--initial", "phi1=0.3", "--initial", "phi2't=0.1", "--out", str(out),
                 "--format", formats, "--no-plots", "-q"]) == 0
    return path, out


def test_sidecar_records_hash_parameters_and_initial_conditions(run_dir):
    _, out = run_dir
    side = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert side["model_sha256"] == hashlib.sha256(DOUBLE_PENDULUM.encode()).hexdigest()
    assert side["model_source"] == DOUBLE_PENDULUM
    assert side["parameters"] == {"m1": 1.3, "m2": 2.0, "l1": 1.1, "l2": 0.9, "g": 9.81}
    assert side["initial_conditions"] == {"phi1": 0.3, "phi2": 0.0, "phi1't": 0.0,
                                          "phi2't": 0.1}
    assert side["files"] == ["results.csv", "results.npz"] + (["results.parquet"]
                                                             if HAVE_PYARROW else [])
    assert side["success"] is True and side["nfev"] > 0


def test_npz_parquet_and_csv_hold_the_same_table(run_dir):
    _, out = run_dir
    with open(out / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, table = rows[0], np.array(rows[1:], dtype=float)
    with np.load(out / "results.npz") as npz:
        for k, name in enumerate(header):
            np.testing.assert_array_equal(npz[name], table[:, k])
    pq = pytest.importorskip("pyarrow.parquet")
    pt = pq.read_table(out / "results.parquet")
    assert pt.column_names == header
    for k, name in enumerate(header):
        np.testing.assert_array_equal(pt.column(name).to_numpy(), table[:, k])


def test_load_results_round_trip(run_dir):
    _, out = run_dir
    result, side = load_results(out)
    assert side["model"] == "dp"
    assert result.state_names == ("phi1", "phi2", "phi1't", "phi2't")
    assert result.t.size == 6 and result.parameters["m2"] == 2.0
    np.testing.assert_array_equal(result["phi1"][:1], [0.3])


def test_parquet_without_pyarrow_is_a_clear_error(monkeypatch, tmp_path):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow")
        return real(name, *args, **kwargs)

    r = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=0.1, n_points=3)
    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"pip install 'kidym\[parquet\]'"):
        r.write(tmp_path, formats=("csv", "parquet"))
    assert not (tmp_path / "results.csv").exists()   # nothing half-written


def test_writes_are_atomic(monkeypatch, tmp_path):
    r = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=0.1, n_points=3)
    r.write(tmp_path)
    before = (tmp_path / "results.csv").read_text()

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    r2 = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=0.2, n_points=5)
    with pytest.raises(OSError, match="disk full"):
        r2.write(tmp_path)
    assert (tmp_path / "results.csv").read_text() == before     # old file intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv", "results.json"]


def test_unknown_format_is_an_error(tmp_path, capsys):
    path = tmp_path / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    assert main(["run", str(path), "--t-end", "0.1", "--out", str(tmp_path / "o"),
                 "--format", "csv,xlsx", "--no-plots"]) == 1
    assert "unknown result format xlsx" in capsys.readouterr().err


def test_jupyter_views():
    model = kidym.parse(DOUBLE_PENDULUM)
    r = kidym.simulate(model, t_end=0.5, n_points=20)
    page = r._repr_html_()
    assert "<table>" in page and "phi2't" in html.unescape(page)
    assert "data:image/png;base64," in page
    assert page.count("<tr>") == 1 + 5 + 1 + 5        # header, head, ellipsis, tail
    tex = kidym.derive(model)._repr_latex_()
    assert tex.startswith("$$") and tex.count("&= 0") == 2   # one equation per speed


def _two_runs():
    model = kidym.parse(DOUBLE_PENDULUM + "INITIAL := t(0), phi1(0.5);")
    return (kidym.simulate(model, t_end=1.0, n_points=5),
            kidym.simulate(model, t_end=3.0, n_points=7))


@pytest.mark.parametrize("swapped", ["results.csv", "results.npz"])
def test_files_of_two_runs_are_refused_not_mixed(tmp_path, capsys, swapped):
    """A run stopped between two files: one file is new, the sidecar is the old run's."""
    first, second = _two_runs()
    first.write(tmp_path / "a", formats=("csv", "npz"))
    second.write(tmp_path / "b", formats=("csv", "npz"))
    (tmp_path / "a" / swapped).write_bytes((tmp_path / "b" / swapped).read_bytes())
    with pytest.raises(ValueError, match=rf"records run \w{{8}} \(t = 0.0 … 1.0\), but "
                                         rf"{swapped} is not the file of that run"):
        load_results(tmp_path / "a")
    assert main(["animate", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert "the result files do not belong together" in err and "Traceback" not in err
    assert not (tmp_path / "a" / "animation.html").exists()


def test_a_format_not_written_again_is_not_left_from_the_last_run(tmp_path):
    first, second = _two_runs()
    first.write(tmp_path, formats=("csv", "npz"))
    second.write(tmp_path)                                # csv only this time
    assert not (tmp_path / "results.npz").exists()
    result, side = load_results(tmp_path)
    assert result.t[-1] == 3.0 and result.t.size == 7 and side["t_end"] == 3.0
    # and a results file the sidecar does not list is refused
    (tmp_path / "results.npz").write_bytes(first.to_npz())
    with pytest.raises(ValueError, match=r"results\.npz is not a file of that run"):
        load_results(tmp_path)


def test_the_sidecar_records_each_file_and_the_run(tmp_path):
    first, _ = _two_runs()
    written = first.write(tmp_path, formats=("csv", "npz"), run_id="0123abcd" * 4)
    side = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert side["run_id"] == "0123abcd" * 4
    assert side["sha256"] == {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                              for p in written[:-1]}
