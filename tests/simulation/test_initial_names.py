"""Initial values by the names the model accepts: a coordinate named like a function
(`th`), and the aliases of generated names (`omegax@Ball`, `ωХBall`) in INITIAL,
``simulate(initial=…)``, ``simulate_batch`` and ``kidym run --initial``."""

import json

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.errors import ModelError
from tests.codegen.shared import kidym_cache  # noqa: F401

ENGINES = ["numpy", "compiled"]

# a rod turned by `th` on a support driven in x (time-dependent); `th` is also tanh
ROD = ("m = 1; l = 1; g = 9.81; Rod | Sx(0.1*sin(2*t)), Rz(th) | Sx(l/2), m, 0, 0.1, 0.1; "
       "GRAVITY := 0, -g, 0; INITIAL := th(0.3), th't(-0.2);")
# a free body with a quaternion: its pseudo-velocities are ωXBall, ωYBall, ωZBall;
# an inclined force that depends on t keeps it time-dependent
BALL = ("Ball | Q(q0, q1, q2, q3) | m(1), Jx(2), Jy(3), Jz(4); "
        "INITIAL := q0(1), omegax@Ball(0.5), ωУBall(-0.3); TIME := t(0, 1);")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_coordinate_named_like_a_function_takes_an_initial_value(engine):
    model = kidym.parse(ROD)
    assert dict(model.initial) == {"th": 0.3, "th't": -0.2}
    r = kidym.simulate(model, t_end=0.5, engine=engine)
    assert r["th"][0] == 0.3 and r["th't"][0] == -0.2


def test_a_function_that_is_no_state_is_a_located_error():
    text = "m = 1; Rod | Rz(phi) | Sx(1), m, 0, 0, 1; INITIAL := th(0.3);"
    with pytest.raises(ModelError, match=r"`th` is a function here, because the model has no "
                                         r"coordinate") as e:
        kidym.parse(text)
    assert "1:54" in str(e.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_aliases_of_generated_names_in_initial(engine):
    model = kidym.parse(BALL)
    assert model.initial["ωXBall"] == 0.5 and model.initial["ωYBall"] == -0.3
    canonical = kidym.simulate(model, initial={"ωZBall": 0.25, "ωXBall": 0.7}, engine=engine)
    for alias in ({"omegaz@Ball": 0.25, "omegax@Ball": 0.7}, {"ωZBall": 0.25, "ωХBall": 0.7}):
        r = kidym.simulate(model, initial=alias, engine=engine)
        assert r["ωXBall"][0] == 0.7 and r["ωZBall"][0] == 0.25
        np.testing.assert_allclose(r.y, canonical.y, rtol=1e-12, atol=1e-14)
    b = kidym.simulate_batch(model, initial=[{"omegaz@Ball": 0.25, "omegax@Ball": 0.7}],
                             n_points=5)
    np.testing.assert_allclose(b.values["ωZBall"][0, 0], 0.25)


def test_aliases_in_cli_initial(tmp_path, capsys):
    path = tmp_path / "ball.kdm"
    path.write_text(BALL, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--initial", "omegaz@Ball=0.25",
                 "--initial", "q1=0", "--initial", "q2=0", "--initial", "q3=0",
                 "--no-plots"]) == 0
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert meta["initial_conditions"]["ωZBall"] == 0.25
    assert "ωZBall" not in capsys.readouterr().err    # not reported as defaulted to 0


def test_a_parameter_named_like_a_function_is_named_as_a_parameter():
    text = "th = 2; Rod | Rz(phi) | Sx(1), th, 0, 0, 1; INITIAL := th(0.3);"
    with pytest.raises(ModelError, match=r"`th` is a parameter, not a coordinate or speed"):
        kidym.parse(text)
