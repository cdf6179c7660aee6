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


#: x = a*sin(th) + b*phi differentiated: two speeds, integrable (brackets in the span).
DERIVED_FROM_HOLONOMIC = """\
m = 1; a = 0.4; b = 0.3;
Cart | Sx(x), Rz(th), Ry(phi) | m(m), Jx(1), Jy(1), Jz(1);
x't = a*cos(th)*th't + b*phi't;
"""

#: Time-dependent coefficients: x't = cos(t)*phi't is not integrable ([X, ∂t] = sin t ∂x).
TIME_TWISTED = """\
m = 1;
Cart | Sx(x), Ry(phi) | m(m), Jx(1), Jy(1), Jz(1);
x't = cos(t)*phi't;
"""

#: x't = r*phi't + sin(t) integrates to x = r*phi − cos(t) + C.
TIME_DRIFT = """\
m = 1; r = 0.5;
Cart | Sx(x), Ry(phi) | m(m), Jx(1), Jy(1), Jz(1);
x't = r*phi't + sin(t);
"""


def _chain(n: int, constraint: str, twist: str = "psi") -> str:
    """A rolling disc whose constraint goes through ``n`` definitions, each using the
    previous one twice: the expanded form has about 2^n terms, the named one n."""
    lines = ["m = 1; r = 0.3; e = 0.01;", "d0 = theta;"]
    lines += [f"d{k} = sin(d{k - 1}) + cos(d{k - 1})*{twist}/2;" for k in range(1, n + 1)]
    lines += ["Disc | Sx(x), Sy(y), Rz(psi), Rx(theta), Sz(r), Ry(phi) | m(m), "
              "Jx(m*r^2/4), Jy(m*r^2/2), Jz(m*r^2/4);",
              constraint.format(d=f"d{n}"), "GRAVITY := 0, 0, -g;"]
    return "\n".join(lines)


def test_derivative_of_a_holonomic_constraint_is_integrable():
    v = check_integrability(derive(parse(DERIVED_FROM_HOLONOMIC)))
    assert v.holonomic is True and v.witness is None and v.method == "symbolic"
    assert v.mixed_derivatives is True


@pytest.mark.parametrize(("text", "holonomic"), [(TIME_TWISTED, False), (TIME_DRIFT, True)])
def test_time_dependent_velocity_equations(text, holonomic):
    v = check_integrability(derive(parse(text)))
    assert v.holonomic is holonomic
    if not holonomic:
        assert set(v.witness) == {"phi't", "t"} and v.method == "numeric witness"


def test_long_chain_of_definitions_is_decided_on_the_named_quantities():
    """Non-holonomic rolling through 40 nested definitions (2^40 terms expanded, which
    the SymPy-only test never finished): a random state is a witness."""
    text = _chain(40, "x't = r*phi't*cos(psi + e*{d});\ny't = r*phi't*sin(psi + e*{d});")
    v = check_integrability(derive(parse(text)))
    assert v.holonomic is False and v.method == "numeric witness"
    assert set(v.witness) == {"theta't", "phi't"} or "phi't" in v.witness


def test_undecided_when_the_symbolic_confirmation_is_out_of_budget():
    """Integrable numerically (exact: x = r*phi + e*∫d40(θ)dθ, the chain in θ alone) but
    too big to confirm in SymPy within the budget: undecided, with the reason — not a
    guess."""
    text = _chain(40, "x't = r*phi't + e*{d}*theta't;", twist="theta")
    eq = derive(parse(text))
    v = check_integrability(eq, budget=0.5)
    assert v.holonomic is None and "did not finish within 0.5 s" in v.reason
    assert "random states" in v.reason and v.describe().startswith("undecided")
    small = check_integrability(derive(parse(DERIVED_FROM_HOLONOMIC)), budget=0)
    assert small.holonomic is None and "not attempted" in small.reason


def test_huge_exponents_near_the_double_limit_do_not_overflow():
    # X_v = ∂x + y^N ∂z, X_w = ∂y: [X_w, X_v] = N y^(N-1) ∂z leaves the span (N = 1e300)
    eq = derive(parse("Body | Sx(x), Sy(y), Sz(z) | m(1);\nPSEUDOVELOCITIES := v, w;\n"
                      "x't = v;\ny't = w;\nz't = v*y^1e300;"))
    v = check_integrability(eq)
    assert not v.holonomic and v.constraints == 1
