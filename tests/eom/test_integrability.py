"""Integrability of velocity equations: known verdicts of classical mechanics."""

from __future__ import annotations

from pathlib import Path

import pytest

from kidym import derive, load, parse
from kidym.cli import main
from kidym.eom.integrability import check_integrability
from tests.lang.fixtures import BALL

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: A wheel rolling on a straight line: x't = r*phi't integrates to x = r*phi.
WHEEL_ON_LINE = """\
m = 1; r = 0.5;
Wheel | Sx(x), Ry(phi) | m(m), Jx(1), Jy(1), Jz(1);
x't = r*phi't;
"""

#: Seed 000's second case: every velocity through pseudo-velocities, none lost.
ALL_PSEUDO = """\
m = 1;
Point | Sx(q1), Sy(q2) | m(m), Jx(1), Jy(1), Jz(1);
PSEUDOVELOCITIES := w1, w2;
q1't = w1 + w2;  q2't = w1 - w2;
"""

FREE_BODY = "Body | Q(l0, l1, l2, l3) | m(1), Jx(1), Jy(2), Jz(3);\n"


def test_rolling_disc_is_nonholonomic_by_both_criteria():
    v = check_integrability(derive(load(EXAMPLES / "rolling_disc/rolling_disc.kdm")))
    assert not v.holonomic and v.constraints == 2
    assert set(v.witness) == {"psi't", "phi't"}
    assert v.mixed_derivatives is False


def test_sleigh_and_ball_are_nonholonomic():
    sleigh = check_integrability(derive(load(EXAMPLES / "chaplygin_sleigh/chaplygin_sleigh.kdm")))
    assert not sleigh.holonomic and set(sleigh.witness) == {"theta't", "v"}
    assert sleigh.mixed_derivatives is None  # pseudo-velocity: Frobenius only
    ball = check_integrability(derive(parse(BALL)))
    assert not ball.holonomic and ball.constraints == 3


@pytest.mark.parametrize("text", [WHEEL_ON_LINE, FREE_BODY])
def test_integrable_velocity_equations(text):
    v = check_integrability(derive(parse(text)))
    assert v.holonomic and v.witness is None and v.constraints == 1
    if text is WHEEL_ON_LINE:
        assert v.mixed_derivatives is True


def test_all_pseudo_velocities_lose_no_freedom():
    eq = derive(parse(ALL_PSEUDO))
    assert eq.n_w == eq.n_q == 2
    assert check_integrability(eq).constraints == 0


def test_check_reports_the_verdict_and_witness(capsys):
    assert main(["check", str(EXAMPLES / "rolling_disc/rolling_disc.kdm")]) == 0
    out = capsys.readouterr().out
    assert "integrability: non-holonomic" in out and "psi't" in out and "phi't" in out


def test_check_names_the_quaternion_convention(capsys):
    # seed 000 eq. (23): the ball's ω are fixed-frame projections, Λ̇ = ½ ω∘Λ;
    # a general free body uses body-frame projections (eq. (19)).
    assert main(["check", str(EXAMPLES / "ball/ball.kdm")]) == 0
    assert "ωZКуля are fixed-frame projections" in capsys.readouterr().out
    assert main(["check", str(EXAMPLES / "free_body/free_body.kdm")]) == 0
    assert "ωZBody are body-frame projections" in capsys.readouterr().out
