"""One preparation of a run (:func:`kidym.simulation.spec.prepare_run`) for every entry
point: the same bad input gives the same error from ``kidym.simulate`` (both engines),
``kidym.simulate_batch``, ``kidym sweep`` and ``kidym run``.

The oracle is the model text itself: the error is located at the line and column of
the programmed constraint that the controls cannot reach, found here by searching the
text; the bad values are named as given.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.errors import ModelError
from kidym.simulation.layout import initial_state, parameter_vector
from tests.codegen.shared import kidym_cache  # noqa: F401

EXAMPLE = Path(__file__).parents[2] / "examples" / "two_link_control" / "two_link_control.kdm"
TEXT = EXAMPLE.read_text(encoding="utf-8")
# both torques at the shoulder: nothing moves the elbow, `fy` cannot be held
UNREACHABLE = TEXT.replace("Pelbow.q2 = u2;", "Pelbow.q1 = u2;")
PENDULUM = """l = 1; m = 2; g = 9.81;
Rod | Rz(phi) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
GRAVITY := 0, -g, 0;
INITIAL := phi(0.3);
TIME := t(0, 1);
"""


def located(path: Path) -> str:
    """``FILE:LINE:COL: error: the controls … cannot reach programmed constraint `fy``."""
    line = next(i for i, s in enumerate(UNREACHABLE.splitlines(), 1) if "ПРОГРАММНЫЕ" in s)
    col = UNREACHABLE.splitlines()[line - 1].index("fy") + 1
    return (rf"{re.escape(str(path))}:{line}:{col}: error: the controls `u1`, `u2` cannot "
            r"reach programmed constraint `fy` at t = 0")


def _simulate(path: Path, engine: str) -> str:
    with pytest.raises(ModelError) as info:
        kidym.simulate(kidym.load(path), engine=engine, n_points=3)
    return str(info.value)


def _batch(path: Path) -> str:
    with pytest.raises(ModelError) as info:
        kidym.simulate_batch(kidym.load(path), parameters=[{"r": 0.3}, {"r": 0.2}],
                             n_points=3)
    return str(info.value)


def _cli(args: list[str], capsys) -> str:
    assert main(args) == 1
    return capsys.readouterr().err


ENTRY_POINTS = {
    "simulate-numpy": lambda path, tmp, capsys: _simulate(path, "numpy"),
    "simulate-compiled": lambda path, tmp, capsys: _simulate(path, "compiled"),
    "simulate_batch": lambda path, tmp, capsys: _batch(path),
    "kidym sweep": lambda path, tmp, capsys: _cli(
        ["sweep", str(path), "--vary", "r=0.2:0.3:2", "--points", "3", "--no-plots",
         "--out", str(tmp / "sweep")], capsys),
    "kidym run": lambda path, tmp, capsys: _cli(
        ["run", str(path), "--points", "3", "--out", str(tmp / "run")], capsys),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_the_same_bad_model_gives_the_same_located_error(entry, tmp_path, capsys,
                                                         kidym_cache) -> None:  # noqa: F811
    path = tmp_path / "arm.kdm"
    path.write_text(UNREACHABLE, encoding="utf-8")
    shown = ENTRY_POINTS[entry](path, tmp_path, capsys)
    assert re.search(located(path), shown), shown
    assert "^" in shown   # the caret under the constraint
    assert not (tmp_path / "run").exists() and not (tmp_path / "sweep").exists()


BAD_NUMBERS = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_a_parameter_that_is_not_finite_is_named(value: float) -> None:
    model = kidym.parse(PENDULUM)
    with pytest.raises(ValueError, match=rf"parameter `m` must be a finite number, got "
                                         rf"{re.escape(str(value))}"):
        parameter_vector(model, {"m": value})


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_an_initial_value_that_is_not_finite_is_named(value: float) -> None:
    model = kidym.parse(PENDULUM)
    with pytest.raises(ValueError, match=rf"initial value of `phi't` must be a finite "
                                         rf"number, got {re.escape(str(value))}"):
        initial_state(("phi", "phi't"), model, {"phi't": value})


def test_a_model_formula_that_a_parameter_makes_infinite_is_named() -> None:
    model = kidym.parse(PENDULUM.replace("phi(0.3)", "phi(1/(l - 2))"))
    assert initial_state(("phi", "phi't"), model, None, {"l": 1.0})[0] == -1.0
    with pytest.raises(ValueError, match=r"initial value of `phi` \(the formula of model .*"
                                         r"with the parameters given\) must be a finite "
                                         r"number, got inf"):
        initial_state(("phi", "phi't"), model, None, {"l": 2.0})


NAN_RUNS = {
    "simulate-numpy": lambda m, kw, tmp: kidym.simulate(m, engine="numpy", n_points=3, **kw),
    "simulate-compiled": lambda m, kw, tmp: kidym.simulate(m, engine="compiled", n_points=3,
                                                           **kw),
    "simulate_batch": lambda m, kw, tmp: kidym.simulate_batch(
        m, **{k: [v, v] for k, v in kw.items()}, n_points=3),
    "sweep": lambda m, kw, tmp: kidym.sweep(m, vary={"l": [1.0, 2.0]}, n_points=3,
                                            executor="loop", **kw),
}


@pytest.mark.parametrize("entry", NAN_RUNS)
@pytest.mark.parametrize(("keyword", "name"), [("parameters", "parameter `m`"),
                                               ("initial", "initial value of `phi`")])
def test_every_entry_point_refuses_nan(entry, keyword, name, tmp_path,
                                       kidym_cache) -> None:  # noqa: F811
    model = kidym.parse(PENDULUM)
    given = {"m": np.nan} if keyword == "parameters" else {"phi": np.nan}
    with pytest.raises(ValueError, match=rf"{re.escape(name)} must be a finite number, "
                                         "got nan"):
        NAN_RUNS[entry](model, {keyword: given}, tmp_path)


@pytest.mark.parametrize("option", ["--set", "--initial"])
def test_kidym_run_refuses_nan(option, tmp_path, capsys) -> None:
    path = tmp_path / "pendulum.kdm"
    path.write_text(PENDULUM, encoding="utf-8")
    given = "m=nan" if option == "--set" else "phi=nan"
    assert main(["run", str(path), option, given, "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "must be a finite number, got nan" in err, err
    assert not (tmp_path / "o").exists()
