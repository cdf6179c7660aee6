"""Physical admissibility of mass and inertia (kidym.model.inertia)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kidym.lang import parse
from kidym.model.inertia import check_inertias, inertia_problem


def _rotated(moments: tuple[float, float, float], angle: float) -> list[float]:
    """(m, Jx, Jy, Jz, Jxy, Jyz, Jxz) of a body with principal ``moments`` turned about z."""
    c, s = np.cos(angle), np.sin(angle)
    r = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    t = r @ np.diag(moments) @ r.T
    return [1.0, t[0, 0], t[1, 1], t[2, 2], -t[0, 1], -t[1, 2], -t[0, 2]]


@pytest.mark.parametrize("moments", [(13, 10, 5), (1, 1, 2), (0, 1, 1), (0, 0, 0)])
def test_real_bodies_pass_in_any_orientation(moments: tuple[float, float, float]) -> None:
    for angle in (0.0, 0.3, 1.2):
        assert inertia_problem(_rotated(moments, angle)) is None


@pytest.mark.parametrize(("moments", "match"), [
    ((1, 1, 3), "triangle"), ((-1, 2, 2), "negative|positive semidefinite")])
def test_impossible_bodies_fail_in_any_orientation(moments: tuple[float, float, float],
                                                   match: str) -> None:
    for angle in (0.0, 0.3, 1.2):
        problem = inertia_problem(_rotated(moments, angle))
        assert problem is not None
        assert re.search(match, problem.message)


def test_negative_mass_and_incomplete_tensors() -> None:
    assert inertia_problem([-1, 1, 1, 1, 0, 0, 0]).field == "mass"
    # a planar model's Jz alone: only negative values count
    assert inertia_problem([1, 0, 0, 5, 0, 0, 0], complete=False) is None
    assert inertia_problem([1, 0, 0, -5, 0, 0, 0], complete=False).field == "jz"
    assert inertia_problem([1, 0, 0, 5, 0, 0, 0]).field == "jz"


def test_run_time_check_survives_values_that_make_a_formula_undefined() -> None:
    # floor of a floating infinity is a hardware fault in SymEngine: values go in exact
    model = parse("z = 1; c = 2; k = c % z;\nRod | Rz(phi) | m(1), Jx(c), Jy(c), Jz(c*k);")
    check_inertias(model, {"z": 0.0, "c": 2.0}, changed=["z"])
    with pytest.raises(ValueError, match=r"body `Rod`: the moment of inertia `Jx` is negative "
                                         r"\(Jx = -1\), with parameters c = -1, z = 1"):
        check_inertias(model, {"z": 1.0, "c": -1.0}, changed=["c"])
