"""A constant of a rolling surface or of a coincident point with no real value is a
located error (issue 27, the audit: ``sqrt(-1)`` in a ``КАЧЕНИЕ`` sphere centre reached
the generated code as ``I``, "internal error … a bug in kidym"; the same value as a
parameter was already a located error)."""

from __future__ import annotations

import pytest

from kidym.errors import ParseError
from kidym.lang import parse
from tests.fixtures import EXAMPLES

BOWL = (EXAMPLES / "ball" / "ball_rolling.kdm").read_text(encoding="utf-8")
COINCIDE = (EXAMPLES / "four_bar" / "four_bar_coincide.kdm").read_text(encoding="utf-8")


@pytest.mark.parametrize("value", ["sqrt(-1)", "(-8)^0.5", "log(-R)", "asin(2)"])
def test_a_complex_sphere_centre_is_a_located_error(value: str) -> None:
    text = BOWL.replace("сфера_всередині(R, 0, 0, R)", f"сфера_всередині(R, 0, 0, {value})")
    assert text != BOWL
    with pytest.raises(ParseError, match=r"the sphere centre of `Куля` in `КОЧЕННЯ` .*"
                       r"not a finite real number"):
        parse(text)


def test_a_complex_point_of_a_coincidence_is_a_located_error() -> None:
    text = COINCIDE.replace("Rocker(c, 0, 0)", "Rocker(c, (-8)^0.5, 0)")
    assert text != COINCIDE
    with pytest.raises(ParseError, match=r"the point of `Rocker` in .* is not a finite real "
                       r"number \(it evaluates to `I\*sqrt\(8\)`\)") as e:
        parse(text)
    assert ":24:" in e.value.render()


def test_real_constants_still_read() -> None:
    parse(BOWL.replace("сфера_всередині(R, 0, 0, R)", "сфера_всередині(R, 0, 0, sqrt(R^2))"))
