"""What a run reports when a value is not finite or a quaternion is not a unit one
(issue 27, the audit): ``--initial phi=nan`` (compiled) and ``--set l=1e308`` were
blamed on "zero mass / gimbal lock"; an initial quaternion of norm 2 ran (exit 0) with
a hint to tighten the tolerances. The expected values are the inputs themselves (which
value is not finite, which entry overflows: ``m l²/12`` with ``l = 1e308``)."""

from __future__ import annotations

import math

import pytest

import kidym
from kidym.cli import main
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import EXAMPLES

PENDULUM = str(EXAMPLES / "double_pendulum" / "double_pendulum.kdm")
FREE_BODY = str(EXAMPLES / "free_body" / "free_body.kdm")

pytestmark = pytest.mark.usefixtures("kidym_cache")


@pytest.mark.parametrize("engine", ["compiled", "numpy"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_non_finite_initial_value_is_named_before_the_run(tmp_path, capsys, value,
                                                           engine) -> None:
    """Refused by the one preparation of a run (kidym.simulation.spec.prepare_run) in
    either engine, naming the state and the value — not a fault of the run."""
    status = main(["run", PENDULUM, "--engine", engine, "--initial", f"phi1={value}",
                   "--out", str(tmp_path / "o"), "--no-plots"])
    err = capsys.readouterr().err
    assert status == 1
    assert f"initial value of `phi1` must be a finite number, got {value}" in err
    assert "gimbal" not in err and "mass" not in err


def test_an_overflowing_parameter_names_the_mass_matrix_entry(tmp_path, capsys) -> None:
    assert not math.isfinite(1.0 * 1e308 * 1e308 / 12)   # m1*l1^2/12 with l1 = 1e308
    status = main(["run", PENDULUM, "--engine", "compiled", "--set", "l1=1e308",
                   "--out", str(tmp_path / "o"), "--no-plots"])
    err = capsys.readouterr().err
    assert status == 2
    assert "the mass matrix has non-finite entries at this state (M[phi1't, phi1't] = inf" \
        in err
    assert "gimbal" not in err


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_an_initial_quaternion_of_norm_two_is_an_error(engine) -> None:
    model = kidym.load(FREE_BODY)
    with pytest.raises(ValueError, match=r"the initial quaternion of body `Body` \(l0 = 2, "
                       r"l1 = 0, l2 = 0, l3 = 0\) has norm 2; a rotation is a unit "
                       r"quaternion \(norm 1\): give l0 = 1, l1 = 0, l2 = 0, l3 = 0"):
        kidym.simulate(model, initial={"l0": 2.0, "l1": 0.0, "l2": 0.0, "l3": 0.0},
                       t_end=0.1, engine=engine)


def test_a_unit_quaternion_written_with_six_digits_runs() -> None:
    model = kidym.load(FREE_BODY)
    result = kidym.simulate(model, initial={"l0": 0.707107, "l1": 0.707107, "l2": 0.0,
                                            "l3": 0.0}, t_end=0.1, engine="numpy")
    assert result.success


#: A body falling freely from x = 1 through a force undefined below x = 0 (the sqrt
#: term is 1e-9 of the weight): the run must fail there and report the time and the
#: state of the failed evaluation together — the exact free fall at that time.
FALL = """m = 1; g = 9.81;
B | Sx(x) | m(m);
Pf.x = -m*g - 1e-9*sqrt(x);
INITIAL := t(0), x(1);
TIME := t(0, 1);
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_the_fault_time_and_state_belong_together(engine) -> None:
    """The compiled engine reported the failed stage's time with the last accepted
    state (t = 0.2028 with x = 0.194 where x was already below 0)."""
    with pytest.raises(kidym.SimulationError) as e:
        kidym.simulate(kidym.parse(FALL), engine=engine)
    t, x, v = e.value.time, e.value.state["x"], e.value.state["x't"]
    assert x < 0                                  # where sqrt(x) fails
    # x = 1 - g t²/2, ẋ = -g t: the sqrt term changes them by under 1e-9 before x < 0
    assert abs(x - (1 - 9.81 * t * t / 2)) < 1e-6
    assert abs(v + 9.81 * t) < 1e-6
