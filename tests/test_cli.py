"""The `kidym` command: check, equations, run (SPEC §4)."""

import csv
import json

import numpy as np
import pytest
import sympy

from kidym import terminal
from kidym.cli import main
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES
from tests.oracles import sympy_mechanics as oracles


@pytest.fixture
def pendulum(tmp_path):
    path = tmp_path / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM, encoding="utf-8")
    return path


def test_check_prints_summary(pendulum, capsys):
    assert main(["check", str(pendulum)]) == 0
    out = capsys.readouterr().out
    assert "coordinates (2): phi1, phi2" in out
    assert "degrees of freedom: 2" in out
    assert "holonomic" in out


def test_check_reports_all_errors_with_caret(tmp_path, capsys):
    bad = tmp_path / "bad.kdm"
    bad.write_text("m = 1;\nA | Rz(q) | m, 1, 1, 1;\ny = 2 * * 3;\nx = (1 + ;\n",
                   encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and f"{bad}:4:" in err   # both syntax errors, one run
    assert "^" in err and "2 errors" in err
    assert "Traceback" not in err


def test_model_text_reaches_the_terminal_escaped(tmp_path, capsys):
    """An escape sequence in a model (title, a line with an error) is shown, not obeyed."""
    bad = tmp_path / "bad.kdm"
    bad.write_text("m = 1;\nx = 2 * * 3; # \x1b[2J\x1b[H #\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and f"{bad}:2:9: error" in err
    line, caret = err.splitlines()[1:3]
    assert line[len(caret) - 1] == "*"  # the caret still points at the second `*`
    shown = terminal.escape("Title \x1b[2J\x07 \u202etxt.exe\n")
    assert shown == "Title \\x1b[2J\\x07 \\u202etxt.exe\n"


def test_check_reports_all_model_errors(tmp_path, capsys):
    bad = tmp_path / "bad.kdm"
    bad.write_text("m = 1;\nHip | Rz(q) | m, 1, 1, 1;\nB~Hp | Rz(r) | m, 1, 1, 1;\n"
                   "C~Hiq | Rz(s) | m, 1, 1, 1;\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and f"{bad}:4:" in err
    assert "Hip" in err and "Traceback" not in err


def test_equations_json_is_sympifiable_and_equals_kanes_method(pendulum, capsys):
    assert main(["equations", str(pendulum), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = {ident: sympy.Symbol(name) for ident, name in doc["symbols"].items()}
    local = {ident: sympy.Symbol(ident) for ident in doc["symbols"]}
    M = sympy.Matrix([[sympy.sympify(x, locals=local) for x in row]
                      for row in doc["mass_matrix_expanded"]]).xreplace(
        {local[k]: v for k, v in names.items()})
    F = sympy.Matrix([sympy.sympify(x, locals=local) for x in doc["forcing_expanded"]]).xreplace(
        {local[k]: v for k, v in names.items()})
    ref = oracles.double_pendulum()
    rng = np.random.default_rng(4)
    for _ in range(4):
        vals = {s: rng.uniform(-2, 2) for s in (*ref.coordinates, *ref.speeds)}
        vals.update({sympy.Symbol(k): v for k, v in
                     zip(["m1", "m2", "l1", "l2", "g"], [1.3, 0.7, 1.1, 0.9, 9.81])})
        M_ref, F_ref = ref.evaluate({str(k): v for k, v in vals.items()})
        np.testing.assert_allclose(np.array(M.subs(vals), dtype=float), M_ref, rtol=1e-12)
        np.testing.assert_allclose(np.array(F.subs(vals), dtype=float).ravel(), F_ref,
                                   rtol=1e-12)
    # the structural form substitutes to the same thing
    inter = {sympy.Symbol(k): sympy.sympify(v, locals=local) for k, v in doc["intermediates"]}
    m00 = sympy.sympify(doc["mass_matrix"][0][0], locals=local)
    for _ in range(len(inter)):
        m00 = m00.xreplace(inter)
    assert sympy.simplify(m00.xreplace({local[k]: v for k, v in names.items()}) - M[0, 0]) == 0


def test_equations_text_keeps_unicode_names(tmp_path, capsys):
    path = tmp_path / "u.kdm"
    path.write_text("m = 1; Куля | Rz(φ) | Sx(1), m, 0, 0, 0; GRAVITY := 0, -g, 0;",
                    encoding="utf-8")
    assert main(["equations", str(path)]) == 0
    out = capsys.readouterr().out
    assert "φ't" in out and "Куля" in out


def test_run_writes_csv_with_model_names(pendulum, tmp_path, capsys):
    out_dir = tmp_path / "out"
    code = main(["run", str(pendulum), "--t-end", "1", "--set", "m2=2",
                 "--initial", "phi1=0.3", "--out", str(out_dir), "--points", "11"])
    assert code == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "no initial value given for phi2, phi1't, phi2't; taken as 0" in captured.err
    assert str(out_dir / "results.csv") in printed
    with open(out_dir / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:5] == ["t", "phi1", "phi2", "phi1't", "phi2't"]
    assert "energy" in rows[0]
    assert len(rows) == 12 and float(rows[1][1]) == pytest.approx(0.3)
    assert float(rows[-1][0]) == pytest.approx(1.0)
    assert (out_dir / "coordinates.png").stat().st_size > 1000
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]  # no temp files left


def test_run_unknown_parameter_is_a_clear_error(pendulum, capsys):
    assert main(["run", str(pendulum), "--set", "mass=2", "--out", "/tmp/never"]) == 1
    err = capsys.readouterr().err
    assert "`mass` is not a parameter" in err and "m1" in err


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*/*.kdm")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_example_checks(path, capsys):
    assert main(["check", str(path)]) == 0, path


def test_run_kinematics_writes_one_folder_per_task(tmp_path) -> None:
    from kidym.cli import main

    out = tmp_path / "point"
    assert main(["run", str(EXAMPLES / "kinematics" / "point.kdm"), "--out", str(out),
                 "--points", "21"]) == 0
    for k in (1, 2):
        lines = (out / f"task{k}" / "results.csv").read_text().splitlines()
        assert len(lines) == 22
        assert len(list((out / f"task{k}").glob("*.png"))) == 8


def test_check_kinematics_summarises_every_task(capsys) -> None:
    from kidym.cli import main

    assert main(["check", str(EXAMPLES / "kinematics" / "point.kdm")]) == 0
    out = capsys.readouterr().out
    assert "model point_1: OK" in out and "model point_2: OK" in out
    assert "t from 0 to 6" in out
