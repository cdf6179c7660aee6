"""``kidym export``: what it writes, and its errors (clear, nothing written)."""

from __future__ import annotations

import importlib.util

import pytest

from kidym.cli import main
from tests.fixtures import EXAMPLES

PENDULUM = EXAMPLES / "double_pendulum" / "double_pendulum.kdm"


def test_c_library_directory(tmp_path, capsys):
    out = tmp_path / "lib"
    assert main(["export", str(PENDULUM), "--c-library", str(out)]) == 0
    assert {p.name for p in out.iterdir()} >= {"model.h", "model.c", "model.json"}
    assert "model.c" in capsys.readouterr().out
    # exported again: the same bytes
    first = (out / "model.c").read_bytes()
    assert main(["export", str(PENDULUM), "--c-library", str(out)]) == 0
    assert (out / "model.c").read_bytes() == first


def test_c_library_with_a_prefix(tmp_path):
    assert main(["export", str(PENDULUM), "--c-library", str(tmp_path / "l"),
                 "--prefix", "dp"]) == 0
    header = (tmp_path / "l" / "dp.h").read_text("utf-8")
    assert "int dp_rhs(double t" in header and "#define DP_NX 4" in header


@pytest.mark.parametrize("argv, message", [
    (["--c-library", "{tmp}/l", "-o", "{tmp}/x.fmu"], "-o is for --fmu"),
    (["--c-library", "{tmp}/l", "--input", "g"], "--input is for --fmu"),
    (["--c-library", "{tmp}/l", "--prefix", "Bad-Name"], "C library prefix"),
    (["--fmu", "-o", "{tmp}/x.zip"], "ends in .fmu"),
    (["--fmu", "-o", "{tmp}/x.fmu", "--prefix", "dp"], "--prefix names the files"),
])
def test_errors_are_clear_and_write_nothing(tmp_path, capsys, argv, message):
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(["export", str(PENDULUM), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kidym: error: ") and message in err
    assert not (tmp_path / "l").exists()


def test_a_foreign_directory_is_refused(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep me")
    assert main(["export", str(PENDULUM), "--c-library", str(tmp_path)]) == 1
    assert "kidym: error:" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "keep me"


@pytest.mark.skipif(importlib.util.find_spec("kidym.export.casadi") is not None,
                    reason="the CasADi export is there: its own tests cover --casadi")
def test_casadi_without_its_module_says_so(tmp_path, capsys):
    assert main(["export", str(PENDULUM), "--casadi", "-o", str(tmp_path / "f.casadi")]) == 1
    assert "no CasADi export" in capsys.readouterr().err


def test_fmu_file(tmp_path, capsys):
    import zipfile

    out = tmp_path / "dp.fmu"
    assert main(["export", str(PENDULUM), "--fmu", "-o", str(out)]) == 0
    assert "FMI 3.0 Model Exchange and Co-Simulation" in capsys.readouterr().out
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
    assert {"modelDescription.xml", "sources/buildDescription.xml", "sources/model.c",
            "sources/fmu.c"} <= names
    assert any(n.startswith("binaries/") and n.endswith(".so") for n in names)


def test_fmu_input_that_is_no_parameter(tmp_path, capsys):
    out = tmp_path / "dp.fmu"
    assert main(["export", str(PENDULUM), "--fmu", "-o", str(out), "--input", "nope"]) == 1
    assert "not a parameter" in capsys.readouterr().err
    assert not out.exists()
