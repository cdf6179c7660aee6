"""Initial values and time spans written as formulas of parameters follow changed parameters."""

import json

import numpy as np
import pytest

import kidym
from kidym.cli import main
from tests.codegen.shared import kidym_cache  # noqa: F401

# a spring-mass x'' = -(k/m) x, started at x = A, x' = Om*A; the span is two periods
# and the start time a formula too (time-dependent drive: the force F0*sin(Om*t))
OSC = ("m = 1; k = 4; A = 0.5; Om = 2; F0 = 0.3; T0 = 0.25; "
       "Cart | Sx(x) | m, 0, 0, 0; Pf.x = -k*x + F0*sin(Om*t); "
       "INITIAL := x(A), x't(Om*A), t(T0); TIME := t(0, 4*pi/Om);")


def _start(r, name):
    return r[name][0]


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_simulate_parameters_reevaluate_initial_formulas(engine):
    model = kidym.parse(OSC)
    r = kidym.simulate(model, parameters={"Om": 3.0, "A": 0.2, "T0": 0.5}, engine=engine)
    assert r.t[0] == pytest.approx(0.5)
    assert r.t[-1] == pytest.approx(4 * np.pi / 3)
    assert _start(r, "x") == pytest.approx(0.2)
    assert _start(r, "x't") == pytest.approx(0.6)
    # an explicit initial value still wins over the model's formula
    r = kidym.simulate(model, parameters={"Om": 3.0}, initial={"x't": 7.0}, engine=engine)
    assert _start(r, "x't") == pytest.approx(7.0)


def test_batch_runs_reevaluate_initial_formulas():
    model = kidym.parse(OSC)
    b = kidym.simulate_batch(model, parameters=[{"Om": 2.0}, {"Om": 5.0}, {"A": 1.0}],
                             t_start=0.25, t_end=1.0, n_points=5)
    np.testing.assert_allclose(b.values["x't"][:, 0], [1.0, 2.5, 2.0])
    np.testing.assert_allclose(b.values["x"][:, 0], [0.5, 0.5, 1.0])
    with pytest.raises(ValueError, match=r"time span .* formula of parameters"):
        kidym.simulate_batch(model, parameters=[{"Om": 2.0}, {"Om": 5.0}])


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_cli_set_reevaluates_initial_formulas(tmp_path, engine):
    path = tmp_path / "osc.kdm"
    path.write_text(OSC, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--set", "Om=3", "--engine", engine,
                 "--no-plots", "--quiet"]) == 0
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert meta["parameters"]["Om"] == 3.0
    assert meta["initial_conditions"]["x't"] == pytest.approx(1.5)
    assert meta["initial_conditions"]["x"] == pytest.approx(0.5)
