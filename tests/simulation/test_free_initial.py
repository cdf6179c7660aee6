"""Given initial values are the user's: the start on the constraints changes one only
where the model declares it free (`СВОБОДНЫЕ`/`ВІЛЬНІ`/`FREE`, kidym.model.free);
otherwise it is an error naming it. Both engines (one preparation, `prepare_run`), and
a time-dependent loop. The oracle for the solved start: the constraint formulas
evaluated by hand (NumPy) at the values the run starts from."""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.errors import ParseError, SimulationError

A, B, C, D = 0.2, 0.6, 0.5, 0.55
FOUR_BAR = f"""a = {A}; b = {B}; c = {C}; d = {D}; g = 9.81; v = 0;
Crank         | Rz(q1)        | Sx(a/2), m(1), Jx(0), Jy(a^2/12), Jz(a^2/12);
Coupler~Crank | Sx(a), Rz(q2) | Sx(b/2), m(2), Jx(0), Jy(b^2/6), Jz(b^2/6);
Rocker        | Sx(d + v*t), Rz(q3) | Sx(c/2), m(1.5), Jx(0), Jy(c^2/8), Jz(c^2/8);
f1 = a*cos(q1) + b*cos(q1 + q2) - d - v*t - c*cos(q3);
f2 = a*sin(q1) + b*sin(q1 + q2) - c*sin(q3);
EQUATIONS := f1, f2;
GRAVITY := 0, -g, 0;
INITIAL := t(0), q1(1), q2(-0.5), q3(1.5), q1't(6);
TIME := t(0, 0.05);
"""


def _closes(r, v: float = 0.0) -> None:
    q1, q2, q3 = (r[n][0] for n in ("q1", "q2", "q3"))
    f1 = A * np.cos(q1) + B * np.cos(q1 + q2) - D - C * np.cos(q3)
    f2 = A * np.sin(q1) + B * np.sin(q1 + q2) - C * np.sin(q3)
    assert abs(f1) < 1e-9 and abs(f2) < 1e-9
    assert r["q1"][0] == 1.0 and r["q1't"][0] == 6.0   # the given, not free, untouched


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_given_value_the_start_would_change_is_an_error_naming_it(engine):
    m = kidym.parse(FOUR_BAR)
    with pytest.raises(SimulationError, match=r"closing them would change q2 -0\.5 → "
                       r"-0\.42\d+, q3 1\.5 → 1\.44\d+") as info:
        kidym.simulate(m, engine=engine)
    assert "СВОБОДНЫЕ := q2, q3;" in info.value.hint


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("keyword", ["СВОБОДНЫЕ", "ВІЛЬНІ", "FREE"])
def test_declared_free_values_are_solved_from_the_given_guesses(engine, keyword):
    if engine == "compiled" and keyword != "FREE":
        pytest.skip("the keyword is read before the engine: one compiled run suffices")
    m = kidym.parse(FOUR_BAR + f"{keyword} := q2, q3;")
    assert m.free == ("q2", "q3")
    r = kidym.simulate(m, engine=engine)
    _closes(r)
    assert set(r.stats["initial_adjusted"]) >= {"q2", "q3"}


def test_values_not_given_are_solved_without_a_declaration():
    m = kidym.parse(FOUR_BAR.replace("q2(-0.5), q3(1.5), ", "q2(-0.5), "))
    with pytest.raises(SimulationError, match=r"would change q2 -0\.5"):
        kidym.simulate(m, engine="numpy")   # q2 given, q3 not: q2 still may not change
    m = kidym.parse(FOUR_BAR.replace("q2(-0.5), q3(1.5), ", "q2(-0.5), ") + "FREE := q2;")
    _closes(kidym.simulate(m, engine="numpy"))


def test_a_call_overriding_a_value_gives_it_too():
    m = kidym.parse(FOUR_BAR + "FREE := q2, q3;")
    with pytest.raises(SimulationError, match=r"would change .*q1't 0\.1 → "):
        kidym.simulate(m, engine="numpy", initial={"q1't": 0.1, "q2't": 1.0, "q3't": 1.0,
                                                    "q1": 1.0})


def test_time_dependent_loop():
    """The rocker's pivot moves (`d + v t`): the start at t = 0 closes as before."""
    m = kidym.parse(FOUR_BAR.replace("v = 0;", "v = 0.1;") + "FREE := q2, q3;")
    r = kidym.simulate(m, engine="numpy")
    _closes(r)


def test_located_error_and_kidym_check(tmp_path, capsys):
    with pytest.raises(ParseError, match=r"11:13: error: `FREE` lists coordinates and speeds "
                                         r"whose initial values the start may solve; `q4` is "
                                         r"neither"):
        kidym.parse(FOUR_BAR + "FREE := q2, q4;")
    path = tmp_path / "fb.kdm"
    path.write_text(FOUR_BAR, encoding="utf-8")
    assert main(["check", str(path)]) == 2   # (a start that cannot be: status 2, as a run)
    assert "closing them would change q2" in capsys.readouterr().err
    path.write_text(FOUR_BAR + "FREE := q2, q3;", encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert "is solved from them: q2 -0.5 → -0.42" in capsys.readouterr().out


# --- `free=` of the Python API and `--free` of `kidym run`: the call's counterpart of
# `СВОБОДНЫЕ`, through the same preparation (kidym.simulation.spec.prepare_run) --------
@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_free_of_the_call_frees_as_the_model_does(engine):
    m = kidym.parse(FOUR_BAR)
    r = kidym.simulate(m, engine=engine, free=("q2", "q3"))
    _closes(r)
    assert set(r.stats["initial_adjusted"]) >= {"q2", "q3"}
    # one name alone, and together with the model's declaration
    with pytest.raises(SimulationError, match=r"would change q3 1\.5 → 1\.44"):
        kidym.simulate(m, engine=engine, free="q2")
    _closes(kidym.simulate(kidym.parse(FOUR_BAR + "FREE := q3;"), engine=engine, free="q2"))


def test_free_of_the_call_on_a_time_dependent_loop():
    m = kidym.parse(FOUR_BAR.replace("v = 0;", "v = 0.1;"))
    _closes(kidym.simulate(m, engine="numpy", free=["q2", "q3"]))


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_free_names_what_is_not_a_state(engine):
    m = kidym.parse(FOUR_BAR)
    with pytest.raises(KeyError, match=r"`free`: `q4` is not a coordinate or speed of model "
                                       r"`model`.*the states: q1, q2, q3, q1't, q2't, q3't"):
        kidym.simulate(m, engine=engine, free=("q2", "q4"))


def test_free_in_a_compiled_batch_and_sweep():
    m = kidym.parse(FOUR_BAR)
    batch = kidym.simulate_batch(m, initial=[{"q1": 1.0}, {"q1": 1.05}], t_end=0.05,
                                 free=("q2", "q3"))
    for k in range(2):
        _closes_batch(batch, k)
    with pytest.raises(SimulationError, match=r"would change q2 -0\.5"):
        kidym.simulate_batch(m, initial=[{"q1": 1.0}], t_end=0.05)
    study = kidym.sweep(m, vary={"q1": [1.0, 1.05]}, t_end=0.05, free=("q2", "q3"))
    assert (study.status == 0).all()
    with pytest.raises(KeyError, match=r"`free`: `q9` is not a coordinate or speed"):
        kidym.sweep(m, vary={"q1": [1.0]}, t_end=0.05, free="q9")


def _closes_batch(batch, k: int) -> None:
    q1, q2, q3 = (batch.values[n][k][0] for n in ("q1", "q2", "q3"))
    assert abs(A * np.cos(q1) + B * np.cos(q1 + q2) - D - C * np.cos(q3)) < 1e-9
    assert abs(A * np.sin(q1) + B * np.sin(q1 + q2) - C * np.sin(q3)) < 1e-9


def test_free_of_kidym_run(tmp_path, capsys):
    path = tmp_path / "fb.kdm"
    path.write_text(FOUR_BAR, encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", str(path), "--engine", "numpy", "--no-plots", "--out", str(out)]
    assert main(args) == 2
    assert "--free q2,q3" in capsys.readouterr().err
    assert main([*args, "--free", "q2", "--free", "q3", "--force"]) == 0
    rows = np.genfromtxt(out / "results.csv", delimiter=",", names=True)
    q1, q2, q3 = rows["q1"][0], rows["q2"][0], rows["q3"][0]
    assert abs(A * np.sin(q1) + B * np.sin(q1 + q2) - C * np.sin(q3)) < 1e-9
    assert main([*args, "--free", "q2,nope", "--force"]) != 0
    assert "`free`: `nope` is not a coordinate or speed" in capsys.readouterr().err
