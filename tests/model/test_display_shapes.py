"""`ФОРМЫ`/`ФОРМИ`/`SHAPES`: display solids of bodies (kidym.model.display), read with
located errors; display only — the equations are those of the model without it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import kidym
from kidym.errors import ModelError, ParseError

BASE = """l = 0.8;
Cart | Sx(x) | m(1), Jx(0), Jy(0), Jz(0);
Pole~Cart | Rz(th) | Sy(-l/2), m(0.3), Jz(0.3*l^2/12);
"""


@pytest.mark.parametrize("keyword", ["SHAPES", "ФОРМЫ", "ФОРМИ"])
def test_the_shapes_are_read_in_every_language(keyword):
    m = kidym.parse(BASE + f"{keyword} := Cart(брус(0.3, 0.15, 0.1)), "
                    "Pole(капсула(0.04, l, y));")
    assert [(s.body, s.kind, s.axis) for s in m.shapes] == [("Cart", "box", 2),
                                                            ("Pole", "capsule", 1)]
    plain = kidym.derive(kidym.parse(BASE))
    shaped = kidym.derive(m)
    assert shaped.mass_matrix == plain.mass_matrix and shaped.forcing == plain.forcing


@pytest.mark.parametrize("item, message", [
    ("Cart(box(0.3, 0.15))", r"4:16: error: `SHAPES`: a box takes three edges"),
    ("Pole(capsule(0.04, l, w))", r"4:33: error: `SHAPES`: the axis of a capsule is `x`, "
                                  "`y` or `z`; got `w`"),
    ("Rod(sphere(1))", r"4:11: error: `SHAPES`: `Rod` is not a body \(bodies: Cart, Pole\)"),
    ("Cart(cone(1))", r"4:16: error: `SHAPES`: unknown shape `cone`; the shapes are box, "
                      "cylinder, sphere, capsule"),
    ("Pole(sphere(x))", r"4:11: error: a size of `Pole` in `SHAPES` depends on coordinate "
                        "`x`"),
    ("Pole(sphere(1)), Pole(box(1, 1, 1))", r"error: `SHAPES`: body `Pole` is given a "
                                            "shape twice"),
    ("Cart(box(0.3, 0, 1))", r"4:11: error: `SHAPES`: a size of `Cart` must be positive; "
                             "got 0"),
    ("Pole(sphere(l - 1))", r"4:11: error: `SHAPES`: a size of `Pole` must be positive; "
                            "got -0.2"),
    ("Pole(sphere(sqrt(-1)))", r"4:11: error: a size of `Pole` in `SHAPES` is not a finite "
                               "real number"),
    ("3", r"4:11: error: `SHAPES` names how bodies are drawn: `Body\(box\(a, b, c\)\)`"),
])
def test_located_errors(item, message):
    with pytest.raises(ParseError, match=message):
        kidym.parse(BASE + f"SHAPES := {item};")


# --- a size made non-positive by a run's parameters: the same located error at the
# preparation of the run from every entry point (kidym.model.display.check_sizes) -----
SIZED = BASE + "w = l/4; GRAVITY := 0, -9.81, 0; INITIAL := th(0.3);\n" \
               "ФОРМЫ := Cart(box(0.3, 0.15, w)), Pole(capsule(0.04, l, y));\n"
SIZE_ERROR = (r"model\.kdm:5:10: error: `ФОРМЫ`: a size of `Cart` is -0\.05 with the "
              r"parameters of the run \(l = -0\.2\); it must be a positive number")


@pytest.fixture
def sized(tmp_path):
    path = tmp_path / "model.kdm"
    path.write_text(SIZED)
    return path


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_size_made_negative_by_parameters_is_an_error_of_the_run(sized, engine):
    model = kidym.load(sized)
    with pytest.raises(ModelError, match=SIZE_ERROR) as info:
        kidym.simulate(model, t_end=0.1, parameters={"l": -0.2}, engine=engine)
    assert "5:35: error: `ФОРМЫ`: a size of `Pole` is -0.2" in str(info.value)
    # the model's own values run (the check does not refuse what the file allows)
    assert kidym.simulate(model, t_end=0.1, parameters={"l": 0.5}, engine=engine).success


def test_a_size_made_negative_in_a_compiled_batch(sized):
    model = kidym.load(sized)
    with pytest.raises(ModelError, match=SIZE_ERROR):
        kidym.simulate_batch(model, t_end=0.1, parameters=[{"l": 0.5}, {"l": -0.2}])


def test_a_size_made_negative_fails_that_run_of_a_sweep_alone(sized, capsys, tmp_path):
    """A study draws no bodies, but a point of it that the file would refuse is an error:
    that run's, with the located message as its reason; the others run, each the same
    run done alone (issue 29)."""
    from kidym.cli import main

    model = kidym.load(sized)
    r = kidym.sweep(model, vary={"l": [0.5, -0.2, 0.8]}, t_end=0.1, n_points=5)
    assert r.status.tolist() == [0, -1, 0]
    assert re.search(SIZE_ERROR, r.reasons[1]), r.reasons[1]
    assert "\n" not in r.reasons[1]   # one line: FILE:LINE:COL: error: …
    alone = kidym.simulate(model, engine="compiled", t_end=0.1, n_points=5,
                           parameters={"l": 0.8})
    np.testing.assert_array_equal(r["th"][2], alone["th"])
    assert np.isnan(r["th"][1]).all()
    assert main(["sweep", str(sized), "--vary", "l=-0.2:0.5:2", "--t-end", "0.1",
                 "--points", "3", "--no-plots", "--out", str(tmp_path / "study")]) == 0
    out = capsys.readouterr().out
    assert "1 failed" in out and re.search(SIZE_ERROR, out), out


def test_a_size_made_negative_by_set(sized, capsys, tmp_path):
    from kidym.cli import main

    assert main(["run", str(sized), "--set", "l=-0.2", "--t-end", "0.1", "--engine",
                 "numpy", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert re.search(SIZE_ERROR, err), err
    assert not (tmp_path / "out" / "results.csv").exists()
