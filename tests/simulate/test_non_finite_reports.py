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


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_non_finite_initial_value_is_named_by_the_compiled_engine(tmp_path, capsys,
                                                                    value) -> None:
    status = main(["run", PENDULUM, "--engine", "compiled", "--initial", f"phi1={value}",
                   "--out", str(tmp_path / "o"), "--no-plots"])
    err = capsys.readouterr().err
    assert status == 2
    assert f"the initial state is not finite (phi1 = {value})" in err
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
