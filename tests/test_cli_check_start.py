"""``kidym check`` of a constrained model whose constraints cannot be evaluated at the
start (issue 27, the audit: a ZeroDivisionError or OverflowError traceback one token
away from the four-bar example). The message names the start and what to check."""

from __future__ import annotations

import pytest

from kidym.cli import main
from tests.fixtures import EXAMPLES

FOUR_BAR = (EXAMPLES / "four_bar" / "four_bar.kdm").read_text(encoding="utf-8")


@pytest.mark.parametrize(("old", "new", "why"), [
    ("f1 = a*cos(q1)", "f1 = 1/(q1 - 1) + a*cos(q1)", "a division by zero"),
    ("q1't(6)", "q1't(1e300)", "a number beyond ±1.8e308"),
    ("f1 = a*cos(q1)", "f1 = sqrt(q1 - 2) + a*cos(q1)", "a function outside its domain"),
])
def test_constraints_without_a_value_at_the_start_are_a_clear_error(
        tmp_path, capsys, old: str, new: str, why: str) -> None:
    text = FOUR_BAR.replace(old, new, 1)
    assert text != FOUR_BAR
    path = tmp_path / "four_bar.kdm"
    path.write_text(text, encoding="utf-8")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kidym: error: the equations of the constraints cannot be "
                          "evaluated at the start (t = 0, q1 = 1, q2 = -0.5, q3 = 1.5"), err
    assert why in err and "check the initial values" in err
    assert "Traceback" not in err
