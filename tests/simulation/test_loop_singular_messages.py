"""At a loop's singular position both engines say the constraint Jacobian lost rank
(issue 27, item 3: the compiled engine said "the mass matrix is singular … moves no
mass" and hinted at zero masses and gimbal lock, every body having mass), and SciPy's
``LinAlgWarning`` does not reach the user from the augmented solve."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kidym
from kidym.eom.constraints import (
    LOST_RANK,
    Block,
    ConstraintSolveError,
    Stabilization,
    solve_augmented,
)
from kidym.simulation import faults
from kidym.simulation.simulate import NumpySystem

#: A four-bar of unit rods on ground pivots 1 apart: all links in line at q = 0, where
#: the two loop equations' Jacobian loses rank (every body has mass).
KITE = """
m = 1; l = 1; g = 9.81;
Crank | Rz(q1) | Sx(l/2), m(m), Jz(m*l^2/12);
Coupler~Crank | Sx(l), Rz(q2) | Sx(l/2), m(m), Jz(m*l^2/12);
Rocker | Sx(1), Rz(q3) | Sx(l/2), m(m), Jz(m*l^2/12);
СОВПАДЕНИЕ := Coupler(l, 0, 0) = Rocker(l, 0, 0);
GRAVITY := 0, -g, 0;
INITIAL := t(0), q1(1), q2(-1), q3(1);
TIME := t(0, 3);
"""


@pytest.fixture(scope="module")
def kite():
    eq = kidym.derive(kidym.parse(KITE))
    system = NumpySystem.build(eq)
    return eq, system, system.parameter_vector()


def _diagnose(kite, constrained: bool):
    eq, system, p = kite
    names = system.state_names
    y = np.array([0.0, 0.0, 0.0, -4.5, 4.5, -4.5])   # all in line, moving
    y0 = np.array([1.0, -1.0, 1.0, 0.0, 0.0, 0.0])
    # the independent check: G has rank 1 < 2 here, M is regular
    _M, _F, block = system.constraint_block(0.5, y, p)
    assert np.linalg.matrix_rank(block.G, tol=1e-9) < block.G.shape[0]
    fault = faults.Fault(faults.SINGULAR, "the mass matrix is singular", 0.5, y)
    return faults.diagnose(
        fault, state_names=names, t0=0.0, y0=y0,
        mass=lambda t, yy: system.rhs_function(float(t), list(yy), p.tolist())[1],
        speed_names=[str(w) for w in eq.speeds], constrained=constrained)


def test_a_singular_augmented_system_of_a_loop_is_a_loss_of_rank(kite) -> None:
    error = _diagnose(kite, constrained=True)
    assert error.kind == faults.CONSTRAINTS
    assert LOST_RANK in str(error) and "moves no mass" not in str(error)
    assert "gimbal" not in error.hint and "singular (dead-centre" in error.hint
    assert error.time == 0.5


def test_without_constraints_it_is_still_the_mass_matrix(kite) -> None:
    """The rule is about the loop: the same fault of a model without constraints keeps
    naming the mass matrix."""
    assert _diagnose(kite, constrained=False).kind == faults.SINGULAR


def test_the_numpy_engine_says_the_same(kite) -> None:
    # (Baumgarte's stabilization: a run with projection would go on across the position
    # with formulation='ali3', kidym.simulation.passages.continue_run)
    eq, _system, _p = kite
    with pytest.raises(kidym.SimulationError,
                       match=r"constraint Jacobian (has lost|loses) rank"):
        kidym.simulate(eq, engine="numpy", t_end=1.0, constraints="baumgarte")


def test_an_ill_conditioned_solve_gives_kidym_s_error_not_scipy_s_warning() -> None:
    M = np.eye(3)
    G = np.array([[1.0, 0.0, 0.0], [1.0, 1e-9, 0.0]])
    block = Block(np.zeros(2), np.zeros(2), np.zeros(2), G)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # a LinAlgWarning would fail here
        with pytest.raises(ConstraintSolveError, match="lost rank"):
            solve_augmented(M, np.ones(3), block, Stabilization())
