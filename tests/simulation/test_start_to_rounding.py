"""The consistent start closes a loop to rounding (issue 27, item 6: Newton stopped at
|Φ| ≤ 1e-12, one quadratic step short of it). Oracle: the four-bar's loop equations
written out here in NumPy, at the start the run reports."""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from tests.fixtures import EXAMPLES

A, B, C, D = 0.2, 0.6, 0.5, 0.55   # examples/four_bar/four_bar.kdm
#: |Φ| of a closed loop at rounding: a few ulps of the sum of the lengths it adds
ROUNDING = 8 * np.finfo(float).eps * (A + B + C + D)


@pytest.fixture(scope="module")
def four_bar():
    return kidym.derive(kidym.load(EXAMPLES / "four_bar" / "four_bar.kdm"))


# initial rocker angles from which Newton's last step before its tolerance left |Φ|
# near 1e-12 (seen on x86-64); any start must end at rounding
@pytest.mark.parametrize("q3", [1.5325814536340852, 1.3671679197994988, 1.5395989974937343,
                                1.3581453634085214, 1.5, 1.4])
def test_the_start_is_closed_to_rounding(four_bar, q3: float) -> None:
    result = kidym.simulate(four_bar, initial={"q3": q3}, t_end=1e-3, n_points=2,
                            engine="numpy")
    q1, q2, q3 = (result[n][0] for n in ("q1", "q2", "q3"))
    f1 = A * np.cos(q1) + B * np.cos(q1 + q2) - D - C * np.cos(q3)
    f2 = A * np.sin(q1) + B * np.sin(q1 + q2) - C * np.sin(q3)
    assert max(abs(f1), abs(f2)) <= ROUNDING
